//! The HTML page of `klf report`: one self-contained file (inline CSS and
//! SVG, no script, no external resource) that a browser opens offline.

use std::fmt::Write;

use super::svg::{epoch_colour, partition_svg};
use crate::format::text::human_time;
use crate::model::diff::DiffFinding;
use crate::model::loss::{bounds_words, NOT_CAPTURED_WEAKENS};
use crate::model::report::{NothingLost, PartitionReport, Report};
use crate::model::timeline::PartitionIncident;
use crate::render::explain::{epoch_leaders, loss_story, story};
use crate::render::text::markup;
use crate::render::timeline::{
    entry_time, isr_change_line, isr_verdict_code, source_text, ASSUMED_MARK,
};

const CSS: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:24px;color:#212529;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:2px solid #dee2e6;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.meta{color:#495057;margin:0 0 16px}
table{border-collapse:collapse;margin:6px 0 12px}
th,td{border:1px solid #ced4da;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f1f3f5}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.loss td{background:#fff5f5}
.loss{color:#c92a2a;font-weight:600}
.warn{color:#e8590c}
p.verdict{font-size:16px;margin:4px 0 10px}
table.overview th{font-weight:normal;background:#f8f9fa}
pre.story{background:#f8f9fa;border:1px solid #dee2e6;padding:8px 10px;white-space:pre-wrap;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
svg.timeline{display:block;max-width:100%;height:auto;border:1px solid #dee2e6;background:#fff}
svg.timeline text{font:12px system-ui,sans-serif;fill:#212529}
svg.timeline .panel-title{font-weight:600}
svg.timeline .lane-label{font-weight:600;font-size:13px}
svg.timeline .lane-sub{font-size:11.5px;fill:#495057}
svg.timeline .lane-sub.loss{fill:#c92a2a;font-weight:600}
svg.timeline .epoch-label{fill:#fff;font-weight:600;font-size:12px}
svg.timeline .hw-label{fill:#1c7ed6;font-size:11px;text-anchor:middle}
svg.timeline .leo-label{font-size:11px}
svg.timeline .cut-label{font-size:11.5px;font-weight:600}
svg.timeline .election-label{font-size:11.5px}
svg.timeline .tick{font-size:10.5px;text-anchor:middle;fill:#495057}
svg.timeline .axis-title{font-size:11px;fill:#495057}
svg.timeline .time-tick{font-size:10.5px;text-anchor:start;fill:#495057}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin:8px 0 16px;font-size:13px}
.legend span{display:inline-flex;align-items:center;gap:6px}
ul.findings{margin:4px 0 10px;padding-left:20px}
"#;

/// The longest list of partitions that lose nothing shown open when
/// nothing else heads the page.
const OPEN_LIST: usize = 100;

/// Renders the whole page.
pub fn render(report: &Report) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        h,
        "<title>klf report: {}</title>",
        markup(&report.inputs.join(" "))
    );
    let _ = writeln!(h, "<style>{CSS}</style>\n</head>\n<body>");
    h.push_str("<h1>Kafka replica post-mortem</h1>\n");
    let _ = writeln!(
        h,
        "<p class=\"meta\">klf {} report over {}. Offsets are drawn as half-open ranges [start, end).</p>",
        env!("CARGO_PKG_VERSION"),
        report
            .inputs
            .iter()
            .map(|i| format!("<code>{}</code>", markup(i)))
            .collect::<Vec<_>>()
            .join(", "),
    );
    overview(&mut h, report);
    // The partitions that lose data (or whose loss is not known whole),
    // worst first: their table, then each drawn.
    let headlined = report.headlined();
    let quiet = report.nothing_lost();
    summary(&mut h, &headlined);
    if !headlined.is_empty() || !quiet.drawn.is_empty() {
        legend(&mut h);
    }
    for (i, p) in &headlined {
        partition(&mut h, p, *i);
    }
    // The rest folded into one list, and those whose replicas differ drawn
    // after it (a bounded number).
    nothing_lost(&mut h, &quiet, headlined.is_empty());
    if !quiet.drawn.is_empty() {
        let _ = writeln!(
            h,
            "<h2 id=\"differing\">Partitions that lose nothing but whose replicas differ</h2>\n<p>{}</p>",
            if quiet.drawn.len() < quiet.differing {
                format!(
                    "{} of {} drawn (those whose truncations cut the most records, then those with the most findings); the others are in the list above. <code>klf report --topic T --partition P</code> draws any one.",
                    quiet.drawn.len(),
                    quiet.differing
                )
            } else {
                "Their truncations cut records the reference keeps (fetched again), or a finding was made; nothing is lost.".to_string()
            }
        );
    }
    for (i, p) in &quiet.drawn {
        partition(&mut h, p, *i);
    }
    if !report.zones.is_empty() && report.partitions.iter().any(|p| p.incident.is_some()) {
        h.push_str("<h2 id=\"log-times\">The nodes' log times</h2>\n<p>Kafka writes its nodes' local time and no zone; the incident timelines read each node's times with this offset from UTC.</p>\n<ul class=\"findings\">\n");
        for z in &report.zones {
            let _ = writeln!(
                h,
                "<li data-kind=\"zone\" data-node=\"{}\" data-utc-offset=\"{}\">node {}: {}</li>",
                z.node,
                markup(&z.utc_offset),
                z.node,
                markup(&z.text)
            );
        }
        h.push_str("</ul>\n");
    }
    if !report.problems.is_empty() {
        h.push_str(
            "<h2 id=\"problems\">Problems met while reading</h2>\n<ul class=\"findings\">\n",
        );
        for p in &report.problems {
            let _ = writeln!(h, "<li>{}</li>", markup(p));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn swatch(fill: &str) -> String {
    format!(
        r#"<svg width="28" height="14" aria-hidden="true"><rect x="0" y="1" width="28" height="12" fill="{fill}"/></svg>"#
    )
}

fn legend(h: &mut String) {
    h.push_str("<div class=\"legend\">");
    for e in 0..4 {
        let _ = write!(h, "<span>{}epoch {e}</span>", swatch(epoch_colour(e)));
    }
    h.push_str(r##"<span><svg width="28" height="14" aria-hidden="true"><defs><pattern id="lg-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#e8590c" stroke-width="2.2"/></pattern></defs><rect x="0" y="1" width="28" height="12" fill="#4e79a7"/><rect x="0" y="1" width="28" height="12" fill="url(#lg-hatch)" stroke="#e8590c"/></svg>records the truncation cuts</span>"##);
    h.push_str(r##"<span><svg width="28" height="14" aria-hidden="true"><rect x="0" y="4" width="28" height="7" fill="#e03131"/></svg>lost records proven committed (acknowledged writes lost)</span>"##);
    h.push_str(r##"<span><svg width="28" height="14" aria-hidden="true"><rect x="0" y="4" width="28" height="7" fill="#ffa8a8"/></svg>lost records possibly committed (or not bounded)</span>"##);
    h.push_str(r##"<span><svg width="14" height="14" aria-hidden="true"><line x1="7" y1="0" x2="7" y2="14" stroke="#1c7ed6" stroke-width="3"/></svg>high watermark</span>"##);
    h.push_str(r##"<span><svg width="14" height="14" aria-hidden="true"><path d="M2,0 v14 l8,-7 z" fill="#212529"/></svg>log end offset</span>"##);
    h.push_str(r##"<span><svg width="14" height="14" aria-hidden="true"><line x1="7" y1="0" x2="7" y2="14" stroke="#000" stroke-width="3"/></svg>✂ truncation point</span>"##);
    h.push_str(r##"<span><svg width="14" height="14" aria-hidden="true"><path d="M7,2 l5,5 l-5,5 l-5,-5 z" fill="#d6336c"/></svg>divergence from the reference</span>"##);
    h.push_str(r##"<span><svg width="14" height="14" aria-hidden="true"><path d="M7,13 l-6,-10 h12 z" fill="#c92a2a"/></svg>election (red: unclean)</span>"##);
    h.push_str(r##"<span><svg width="28" height="14" aria-hidden="true"><defs><pattern id="lg-cp" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><line x1="0" y1="0" x2="0" y2="4" stroke="#333" stroke-width="1.5"/></pattern></defs><rect x="0" y="4" width="28" height="6" fill="url(#lg-cp)"/></svg>checkpoint epoch disagreeing with batches</span>"##);
    h.push_str("</div>\n");
}

fn anchor(p: &PartitionReport) -> String {
    let mut a = String::from("p-");
    for c in format!("{}-{}", p.diff.topic, p.diff.partition).chars() {
        a.push(
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            },
        );
    }
    a
}

/// The brokers of a partition's replicas, `1, 2, 3`.
fn brokers(p: &PartitionReport) -> String {
    p.diff
        .replicas
        .iter()
        .map(|r| r.broker.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

fn reason(p: &PartitionReport) -> String {
    serde_json::to_value(p.diff.reference.reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
        .replace('_', " ")
}

fn finding_kinds(p: &PartitionReport) -> Vec<String> {
    let mut kinds: Vec<String> = p
        .diff
        .findings
        .iter()
        .chain(p.diff.replicas.iter().flat_map(|r| &r.findings))
        .map(kind_name)
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

fn kind_name(f: &DiffFinding) -> String {
    serde_json::to_value(f.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The commitment of lost records in words for a cell: never a bare `0`
/// while more may have been committed, never "none" beside a loss.
fn committed_cell(proven: u64, possible: Option<u64>) -> String {
    match possible {
        Some(0) => "not committed".to_string(),
        _ => bounds_words(proven, possible),
    }
}

/// The whole capture first: partitions compared and losing data, records
/// lost, the committed bounds, replicas not captured or not read, and one
/// sentence saying what it comes to.
fn overview(h: &mut String, report: &Report) {
    let o = report.overview();
    let count = crate::format::text::count;
    let not_captured = o.replicas_not_captured();
    let committed_possible = o.committed_possible + o.committed_unknown;
    let _ = writeln!(
        h,
        "<section id=\"overview\" data-kind=\"overview\" data-partitions=\"{}\" data-losing=\"{}\" data-nothing-lost=\"{}\" data-records-lost=\"{}\" data-control-records-lost=\"{}\" data-committed-proven=\"{}\" data-committed-possible=\"{}\" data-committed-unknown=\"{}\" data-replicas-not-captured=\"{not_captured}\" data-replicas-left-out=\"{}\">\n<h2>The capture</h2>",
        o.compared,
        o.losing,
        o.nothing_lost,
        o.records,
        o.control_records,
        o.committed_proven,
        committed_possible,
        o.committed_unknown,
        o.left_out,
    );
    // The sentence.
    let compared = count(o.compared, "partition", "partitions");
    let missing = not_captured + o.left_out;
    if o.losing == 0 && missing == 0 {
        let _ = writeln!(
            h,
            "<p class=\"verdict\" data-kind=\"verdict\">Nothing lost: in the {compared} compared, every record is kept by the reference or fetched again from it.</p>"
        );
    } else if o.losing == 0 {
        let _ = writeln!(
            h,
            "<p class=\"verdict warn\" data-kind=\"verdict\">Nothing lost among the replicas read: in the {compared} compared, every record they hold is kept by the reference or fetched again from it; but {} not captured or could not be read, so the loss may be larger (below).</p>",
            if missing == 1 {
                "1 replica is".to_string()
            } else {
                format!("{missing} replicas are")
            }
        );
    } else {
        let mut lost = count(o.records, "record", "records");
        if o.control_records > 0 {
            let _ = write!(
                lost,
                " (and {})",
                count(o.control_records, "control record", "control records")
            );
        }
        let committed = if o.committed_proven + committed_possible == 0 {
            "not committed".to_string()
        } else {
            let mut c = format!(
                "committed: {} proven, at most {committed_possible} possible",
                o.committed_proven
            );
            if o.committed_unknown > 0 {
                let _ = write!(c, " ({} cannot be bounded)", o.committed_unknown);
            }
            c
        };
        let _ = writeln!(
            h,
            "<p class=\"verdict{}\" data-kind=\"verdict\">Data lost in {} of {compared} compared: {lost} lost on every replica; {committed}.</p>",
            if o.committed_proven + committed_possible > 0 {
                " loss"
            } else {
                ""
            },
            o.losing,
        );
    }
    // The figures.
    h.push_str("<table class=\"overview\"><tbody>\n");
    let row = |h: &mut String, k: &str, v: String, bad: bool| {
        let _ = writeln!(
            h,
            "<tr><th>{k}</th><td class=\"num{}\">{v}</td></tr>",
            if bad { " loss" } else { "" }
        );
    };
    row(h, "partitions compared", o.compared.to_string(), false);
    row(
        h,
        "partitions losing data",
        o.losing.to_string(),
        o.losing > 0,
    );
    row(
        h,
        "records lost",
        {
            let mut v = o.records.to_string();
            if o.control_records > 0 {
                let _ = write!(v, " + {} control", o.control_records);
            }
            v
        },
        o.records > 0,
    );
    row(
        h,
        "committed (proven)",
        o.committed_proven.to_string(),
        o.committed_proven > 0,
    );
    row(
        h,
        "committed (possible: at most)",
        if o.committed_unknown > 0 {
            format!(
                "{committed_possible} ({} cannot be bounded)",
                o.committed_unknown
            )
        } else {
            committed_possible.to_string()
        },
        committed_possible > 0,
    );
    row(
        h,
        "replicas not captured",
        not_captured.to_string(),
        not_captured > 0,
    );
    if o.left_out > 0 {
        row(
            h,
            "replicas that could not be read",
            o.left_out.to_string(),
            true,
        );
    }
    h.push_str("</tbody></table>\n");
    for (b, n) in &o.not_captured {
        let _ = writeln!(
            h,
            "<p class=\"warn\">Broker {b} is assigned but not captured ({}): {}.</p>",
            count(*n, "partition", "partitions"),
            markup(NOT_CAPTURED_WEAKENS)
        );
    }
    if o.left_out > 0 {
        let _ = writeln!(
            h,
            "<p class=\"warn\">{} could not be read and {} left out of {} loss, which is that of the replicas read (problems at the end).</p>",
            count(o.left_out, "replica", "replicas"),
            if o.left_out == 1 { "is" } else { "are" },
            if o.left_out == 1 { "its partition's" } else { "their partitions'" }
        );
    }
    if o.losing > 0 && o.nothing_lost > 0 {
        let _ = writeln!(
            h,
            "<p>{}: nothing lost (<a href=\"#nothing-lost\">listed below</a>).</p>",
            count(o.nothing_lost, "partition", "partitions")
        );
    }
    h.push_str("</section>\n");
}

/// The table of the partitions the page heads with, worst first.
fn summary(h: &mut String, order: &[(usize, &PartitionReport)]) {
    if order.is_empty() {
        return;
    }
    let losing = order.iter().filter(|(_, p)| p.loss.any()).count();
    let _ = writeln!(
        h,
        "<h2 id=\"summary\">{}</h2>\n<p>Worst first. Records lost: on no replica once every replica follows the reference, counted once per partition. Committed: proven (below a high watermark or a consumer group's commit some evidence shows) and at most possible (every member of an ISR in force held them).</p>\n<table class=\"summary\">\n<thead><tr><th>partition</th><th>replicas</th><th>reference (leader)</th><th>divergence offset</th><th>records lost</th><th>committed</th><th>findings</th></tr></thead>\n<tbody>",
        if losing == order.len() {
            format!(
                "{} that {} data",
                crate::format::text::count(losing as u64, "partition", "partitions"),
                if losing == 1 { "loses" } else { "lose" }
            )
        } else {
            "Partitions that lose data, or whose replicas are not all captured".to_string()
        }
    );
    for (_, p) in order {
        let name = format!("{}-{}", p.diff.topic, p.diff.partition);
        let committed = p.committed_lost();
        let possible = p.loss.committed_possible;
        let bad = p.loss.possibly_committed_or_unknown() > 0;
        let kinds = finding_kinds(p);
        let lost = if p.loss.any() {
            let mut v = p.records_lost().to_string();
            if p.loss.control_records > 0 {
                let _ = write!(v, " + {} control", p.loss.control_records);
            }
            v
        } else {
            let missing: Vec<String> = p
                .loss
                .replicas_not_captured
                .iter()
                .map(|b| format!("broker {b} not captured"))
                .chain(p.left_out.iter().map(|b| format!("broker {b} not read")))
                .collect();
            format!("0 among the replicas read ({})", missing.join(", "))
        };
        let _ = writeln!(
            h,
            "<tr data-partition=\"{}\" data-divergence=\"{}\" data-records-lost=\"{}\" data-committed-lost=\"{committed}\" data-committed-possible=\"{}\" data-verdict=\"{}\"{}><td><a href=\"#{}\">{}</a></td><td>{}</td><td>broker {} ({})</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            markup(&name),
            opt(p.divergence_offset()),
            p.records_lost(),
            opt(possible),
            p.loss.verdict.name(),
            if bad { " class=\"loss\"" } else { "" },
            anchor(p),
            markup(&name),
            brokers(p),
            p.diff.reference.broker,
            markup(&reason(p)),
            opt(p.divergence_offset()),
            lost,
            if p.loss.any() {
                committed_cell(committed, possible)
            } else {
                "-".to_string()
            },
            if kinds.is_empty() {
                "-".to_string()
            } else {
                format!("{}: {}", p.finding_count(), markup(&kinds.join(", ")))
            }
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

/// The partitions that lose nothing, folded into one list under one line
/// that counts them (open when nothing else heads the page and the list is
/// short); those drawn further down are linked.
fn nothing_lost(h: &mut String, quiet: &NothingLost<'_>, alone: bool) {
    if quiet.all.is_empty() {
        return;
    }
    let agree = quiet.all.iter().filter(|(_, p)| p.agrees()).count();
    let _ = writeln!(
        h,
        "<h2 id=\"nothing-lost\">{}: nothing lost</h2>\n<details{}><summary>{} List them ({}).</summary>\n<table class=\"nothing-lost\">\n<thead><tr><th>partition</th><th>replicas</th><th>reference (leader)</th><th>log start</th><th>log end</th><th>state</th><th>findings</th></tr></thead>\n<tbody>",
        crate::format::text::count(quiet.all.len() as u64, "partition", "partitions"),
        if alone && quiet.all.len() <= OPEN_LIST {
            " open"
        } else {
            ""
        },
        if agree == quiet.all.len() {
            "Every replica holds the reference's batches up to the same log end; nothing is cut and nothing was found.".to_string()
        } else {
            format!(
                "Every record is kept by the reference or fetched again from it. In {agree} the replicas agree (the same batches up to the same log end, no finding); in {} they differ{}.",
                quiet.all.len() - agree,
                if quiet.drawn.is_empty() {
                    String::new()
                } else {
                    format!(" ({} drawn below)", quiet.drawn.len())
                }
            )
        },
        crate::format::text::count(quiet.all.len() as u64, "row", "rows")
    );
    for (_, p) in &quiet.all {
        let name = format!("{}-{}", p.diff.topic, p.diff.partition);
        let (start, end) = (
            p.diff
                .replicas
                .iter()
                .map(|r| r.log_start_offset)
                .min()
                .unwrap_or(0),
            p.diff
                .replicas
                .iter()
                .map(|r| r.log_end_offset)
                .max()
                .unwrap_or(0),
        );
        let agrees = p.agrees();
        let drawn = quiet.drawn.iter().any(|(_, d)| std::ptr::eq(*d, *p));
        let state = if agrees {
            "agree".to_string()
        } else {
            let cut: i64 = p.diff.replicas.iter().map(|r| r.records_to_truncate).sum();
            if cut > 0 {
                format!("differ: {cut} records cut, fetched again")
            } else {
                "differ".to_string()
            }
        };
        let kinds = finding_kinds(p);
        let _ = writeln!(
            h,
            "<tr data-partition=\"{}\"{} data-records-lost=\"0\" data-verdict=\"{}\"><td>{}</td><td>{}</td><td>broker {}</td><td class=\"num\">{start}</td><td class=\"num\">{end}</td><td>{}</td><td>{}</td></tr>",
            markup(&name),
            if agrees { " data-agrees=\"true\"" } else { "" },
            p.loss.verdict.name(),
            if drawn {
                format!("<a href=\"#{}\">{}</a>", anchor(p), markup(&name))
            } else {
                markup(&name)
            },
            brokers(p),
            p.diff.reference.broker,
            markup(&state),
            if kinds.is_empty() {
                "-".to_string()
            } else {
                format!("{}: {}", p.finding_count(), markup(&kinds.join(", ")))
            }
        );
    }
    h.push_str("</tbody>\n</table>\n</details>\n");
}

/// The partition's loss, first in its section: the headline, then each
/// lost range.
fn loss(h: &mut String, p: &PartitionReport) {
    let l = &p.loss;
    let _ = writeln!(
        h,
        "<div class=\"partition-loss\" data-kind=\"partition-loss\" data-records=\"{}\" data-control-records=\"{}\" data-committed-proven=\"{}\" data-committed-possible=\"{}\" data-verdict=\"{}\"><p class=\"{}\">{}</p>",
        l.records,
        l.control_records,
        l.committed_proven,
        opt(l.committed_possible),
        l.verdict.name(),
        if l.possibly_committed_or_unknown() > 0 { "loss" } else { "" },
        markup(&l.headline())
    );
    if !l.offsets.is_empty() {
        h.push_str("<table class=\"lost\"><thead><tr><th>lost offsets</th><th>records</th><th>leader epoch</th><th>held now by</th><th>committed</th></tr></thead><tbody>\n");
        for r in &l.offsets {
            let _ = writeln!(
                h,
                "<tr data-kind=\"lost-range\" data-start=\"{}\" data-end=\"{}\" data-records=\"{}\" data-committed=\"{}\"><td>[{}, {})</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                r.start,
                r.end,
                r.records,
                r.committed.name(),
                r.start,
                r.end,
                r.records + r.control_records,
                r.leader_epoch,
                r.held_by.iter().map(i32::to_string).collect::<Vec<_>>().join(", "),
                r.committed.name()
            );
        }
        h.push_str("</tbody></table>\n");
    }
    h.push_str("</div>\n");
}

fn partition(h: &mut String, p: &PartitionReport, i: usize) {
    let name = format!("{}-{}", p.diff.topic, p.diff.partition);
    let _ = writeln!(
        h,
        "<section class=\"partition\" data-partition=\"{}\">\n<h2 id=\"{}\">{}</h2>",
        markup(&name),
        anchor(p),
        markup(&name)
    );
    let _ = writeln!(
        h,
        "<p>Reference: broker {} ({}), leader epoch {}. Each lane is one replica; the top lane shows the controller's elections.</p>",
        p.diff.reference.broker,
        markup(&reason(p)),
        opt(p.diff.reference.leader_epoch)
    );
    loss(h, p);
    h.push_str(&partition_svg(p, &format!("p{i}")));
    h.push('\n');
    // Replica table.
    h.push_str("<h3>Replicas</h3>\n<table class=\"replicas\"><thead><tr><th>broker</th><th>log start</th><th>log end</th><th>high watermark</th><th>latest epoch</th><th>diverges at</th><th>truncates to</th><th>HW-only truncation</th><th>records cut</th><th>lost</th><th>committed</th><th>only here</th></tr></thead><tbody>\n");
    for r in &p.diff.replicas {
        let alarming = r.lost_cut > 0 && r.committed_possible_cut != Some(0);
        let _ = writeln!(
            h,
            "<tr{}><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            if alarming { " class=\"loss\"" } else { "" },
            r.broker,
            if r.broker == p.diff.reference.broker { " (reference)" } else { "" },
            r.log_start_offset,
            r.log_end_offset,
            opt(r.high_watermark),
            opt(r.latest_epoch),
            opt(r.divergence_offset),
            r.truncation_offset,
            r.hw_truncation_offset,
            r.records_to_truncate,
            r.lost_cut,
            if r.lost_cut == 0 {
                "-".to_string()
            } else {
                committed_cell(r.committed_proven_cut, r.committed_possible_cut)
            },
            r.records_only_here
        );
    }
    h.push_str("</tbody></table>\n");
    // Findings.
    let mut findings = Vec::new();
    for f in &p.diff.findings {
        findings.push(("partition".to_string(), f));
    }
    for r in &p.diff.replicas {
        for f in &r.findings {
            findings.push((format!("broker {}", r.broker), f));
        }
    }
    if !findings.is_empty() {
        h.push_str("<h3>Findings</h3>\n<ul class=\"findings\">\n");
        for (who, f) in findings {
            let _ = writeln!(
                h,
                "<li data-finding=\"{}\"><b>{}</b>: <code>{}</code>: {}</li>",
                markup(&kind_name(f)),
                markup(&who),
                markup(&kind_name(f)),
                markup(&f.detail)
            );
        }
        h.push_str("</ul>\n");
    }
    // The story.
    if let Some(i) = &p.impact {
        impact(h, i);
    }
    h.push_str("<h3>What happened (<code>klf diff --explain</code>)</h3>\n<pre class=\"story\">");
    let mut story_lines = loss_story(&p.loss);
    story_lines.extend(story(&p.diff, &epoch_leaders(p.history.as_ref())));
    for line in &story_lines {
        h.push_str(&markup(line));
        h.push('\n');
    }
    h.push_str("</pre>\n");
    // Elections.
    if let Some(hist) = &p.history {
        let _ = writeln!(
            h,
            "<h3>Controller's view (metadata log)</h3>\n<p>Assigned replicas: {}.</p>\n<table class=\"elections\"><thead><tr><th>metadata offset</th><th>leader</th><th>leader epoch</th><th>ISR</th><th>first offset of the epoch</th><th>time (UTC, epoch ms)</th><th>note</th></tr></thead><tbody>",
            hist.replicas.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
        );
        for e in &hist.changes {
            let placed = p
                .elections
                .iter()
                .find(|m| m.metadata_offset == e.metadata_offset)
                .and_then(|m| m.offset);
            let note = if e.unclean {
                "<span class=\"loss\">UNCLEAN election</span>"
            } else if e.leader_changed {
                "leader elected"
            } else {
                "ISR change"
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td data-time=\"{}\">{}</td><td>{note}</td></tr>",
                e.metadata_offset,
                if e.leader >= 0 { e.leader.to_string() } else { "none".into() },
                e.leader_epoch,
                e.isr.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", "),
                opt(placed),
                e.timestamp,
                markup(&human_time(e.timestamp))
            );
        }
        h.push_str("</tbody></table>\n");
    }
    if let Some(inc) = &p.incident {
        incident(h, inc, p.incident_left_out);
    }
    // Timeline disagreements.
    let dis: Vec<_> = p
        .replicas
        .iter()
        .flat_map(|v| {
            v.timeline
                .disagreements
                .iter()
                .map(move |d| (v.timeline.broker, d))
        })
        .collect();
    if !dis.is_empty() {
        h.push_str("<h3>Epoch checkpoint against batch headers</h3>\n<ul class=\"findings\">\n");
        for (b, d) in dis {
            let _ = writeln!(
                h,
                "<li>broker {b}: <code>{}</code>: {}</li>",
                markup(d.code),
                markup(&d.message)
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
}

/// The partition's incident timeline (`klf timeline --incident`): its
/// entries in time order (at most [`crate::model::report::INCIDENT_ENTRIES`],
/// the rest counted), and its ISR changes held against the metadata log.
fn incident(h: &mut String, inc: &PartitionIncident, left_out: u64) {
    let _ = writeln!(
        h,
        "<h3>Incident timeline (<code>klf timeline --incident</code>)</h3>\n<p>The metadata log's records, each replica's first batch of each epoch read, checkpoint modification times and the nodes' own log lines, in time order (UTC; a time marked {ASSUMED_MARK} is a log line's as written, its node's zone not known).</p>\n<table class=\"incident\" data-kind=\"incident\" data-entries=\"{}\" data-left-out=\"{left_out}\"><thead><tr><th>time (UTC)</th><th>node</th><th>kind</th><th>what</th><th>source</th></tr></thead><tbody>",
        inc.entries.len()
    );
    for e in &inc.entries {
        let mut what = markup(&e.text);
        if let Some(r) = &e.reason {
            let _ = write!(what, "; Kafka's reason: {}", markup(r));
        }
        let bad = matches!(
            e.kind,
            "unclean-election" | "log-unclean-partition-change" | "log-truncation-below-hw"
        );
        let _ = writeln!(
            h,
            "<tr data-kind=\"incident-entry\" data-entry=\"{}\" data-time=\"{}\"{}><td>{}</td><td>{}</td><td><code>{}</code></td><td>{what}</td><td><code>{}</code></td></tr>",
            e.kind,
            e.time,
            if bad { " class=\"loss\"" } else { "" },
            markup(&entry_time(e)),
            e.node.map_or(String::new(), |n| n.to_string()),
            e.kind,
            markup(&source_text(&e.source))
        );
    }
    h.push_str("</tbody></table>\n");
    if left_out > 0 {
        let _ = writeln!(
            h,
            "<p>and {left_out} more {} (fencings, restarts, checkpoint times): <code>klf timeline --incident</code> lists every one.</p>",
            if left_out == 1 { "entry" } else { "entries" }
        );
    }
    match &inc.isr_changes.why_not {
        Some(why) => {
            let _ = writeln!(
                h,
                "<p>ISR changes not held against the metadata log: {}.</p>",
                markup(why)
            );
        }
        None if !inc.isr_changes.changes.is_empty() => {
            h.push_str(
                "<p>ISR changes, the logs against the metadata log:</p>\n<ul class=\"findings\">\n",
            );
            for c in &inc.isr_changes.changes {
                let _ = writeln!(
                    h,
                    "<li data-kind=\"isr-change\" data-partition-epoch=\"{}\" data-verdict=\"{}\">{}</li>",
                    c.partition_epoch,
                    isr_verdict_code(c.verdict),
                    markup(&isr_change_line(c))
                );
            }
            h.push_str("</ul>\n");
        }
        None => {}
    }
}

/// Who the loss hurts (`klf impact`): groups, transactions, producers.
fn impact(h: &mut String, i: &crate::model::impact::PartitionImpact) {
    let name = |v: serde_json::Result<serde_json::Value>| {
        v.ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let _ = writeln!(
        h,
        "<h3>Who it hurts (<code>klf impact</code>)</h3>\n<div class=\"impact\" data-kind=\"impact\" data-affected=\"{}\" data-lso=\"{}\">",
        i.affected.map_or("unknown".to_string(), |a| a.to_string()),
        opt(i.last_stable_offset)
    );
    match &i.groups_unknown {
        Some(why) => {
            let _ = writeln!(h, "<p>Consumer groups: unknown ({})</p>", markup(why));
        }
        None if i.groups.is_empty() => {
            h.push_str("<p>No consumer group has a commit for this partition.</p>\n")
        }
        None => {
            h.push_str("<table class=\"groups\"><thead><tr><th>group</th><th>protocol</th><th>committed</th><th>epoch</th><th>state</th><th>restart: earliest</th><th>latest</th><th>none</th><th>phantom records</th></tr></thead><tbody>\n");
            for g in &i.groups {
                let f = |o: Option<i64>, e: Option<&str>| match (o, e) {
                    (Some(o), _) => o.to_string(),
                    (None, Some(e)) => format!("fails: {e}"),
                    _ => "-".into(),
                };
                let state = name(serde_json::to_value(g.state));
                let _ = writeln!(
                    h,
                    "<tr data-kind=\"group-impact\" data-group=\"{}\" data-state=\"{}\" data-offset=\"{}\" data-records=\"{}\" title=\"{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
                    markup(&g.group),
                    state,
                    opt(g.committed_offset),
                    g.phantom_records,
                    markup(&g.detail),
                    markup(&g.group),
                    markup(g.protocol.as_deref().unwrap_or("-")),
                    opt(g.committed_offset),
                    opt(g.committed_leader_epoch),
                    state,
                    f(g.next_fetch_offset.earliest, g.error.earliest),
                    f(g.next_fetch_offset.latest, g.error.latest),
                    f(g.next_fetch_offset.none, g.error.none),
                    g.phantom_records
                );
            }
            h.push_str("</tbody></table>\n");
        }
    }
    if !i.transactions.is_empty() {
        h.push_str("<ul class=\"findings\">\n");
        for t in &i.transactions {
            let _ = writeln!(
                h,
                "<li data-kind=\"transaction-impact\" data-state=\"{}\" data-offset=\"{}\">{}{}</li>",
                name(serde_json::to_value(t.state)),
                t.first_offset,
                markup(&t.detail),
                t.remedy
                    .as_ref()
                    .map_or(String::new(), |r| format!("<br>remedy: <code>{}</code>", markup(r)))
            );
        }
        h.push_str("</ul>\n");
    } else if let Some(why) = &i.transactions_unknown {
        let _ = writeln!(h, "<p>Transactions: {}</p>", markup(why));
    }
    if !i.producers.is_empty() {
        h.push_str("<ul class=\"findings\">\n");
        for x in &i.producers {
            let _ = writeln!(
                h,
                "<li data-kind=\"producer-impact\" data-state=\"{}\" data-producer=\"{}\">{}</li>",
                x.state,
                x.producer_id,
                markup(&x.detail)
            );
        }
        h.push_str("</ul>\n");
    }
    h.push_str("<ul class=\"config\">\n");
    for c in &i.config {
        let _ = writeln!(
            h,
            "<li data-kind=\"config\" data-name=\"{}\"><code>{}</code> = {} ({}): {}</li>",
            markup(&c.name),
            markup(&c.name),
            markup(c.value.as_deref().unwrap_or("unknown")),
            c.source,
            markup(&c.effect)
        );
    }
    h.push_str("</ul>\n</div>\n");
}
