//! `klf check` output: the table, JUnit XML, and the JSON wire types
//! (the schema of `--format json` and `jsonl`: every key present, `null`
//! where a value does not apply).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use crate::render::text::Utc;

use crate::analysis::check::{
    CheckReport, Family, Finding, LossBrief, PartitionCheck, Severity, Summary,
};
use crate::analysis::diff::ReferenceChoice;
use crate::render::style::{cell, display_width, paint, Fit, Look, Paint, Sheet};
use crate::render::text::{counted, markup, sanitize, JsonSafe};

/// `{"findings": [...], "summary": {...}, "partitions": [...]}`.
#[derive(Serialize)]
pub struct CheckDocument<'a> {
    /// Every finding, sorted by location then code.
    pub findings: FindingsOut<'a>,
    /// Counts.
    pub summary: &'a Summary,
    /// Per partition with two or more replicas: reference and loss.
    pub partitions: PartitionsOut<'a>,
}

/// A report's findings, each put in its wire form as it is serialised.
pub struct FindingsOut<'a>(pub &'a [Finding]);

impl Serialize for FindingsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|f| Utc(finding_out(f, false))))
    }
}

/// A report's partitions, each put in its wire form as it is serialised.
pub struct PartitionsOut<'a>(pub &'a [PartitionCheck]);

impl Serialize for PartitionsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| Utc(partition_out(p, false))))
    }
}

/// One finding (a `jsonl` line has `"type": "finding"` first).
#[derive(Serialize)]
pub struct FindingOut<'a> {
    /// `"finding"` in `jsonl`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// The code.
    pub code: &'a str,
    /// `error`, `warning` or `info`.
    pub severity: Severity,
    /// `capture`, `segments`, `indexes`, `epochs`, `offsets`, `replication`.
    pub family: Family,
    /// Broker, when the finding is about one replica.
    pub broker: Option<i32>,
    /// Topic.
    pub topic: Option<&'a str>,
    /// Partition.
    pub partition: Option<i32>,
    /// The file, as found under the given paths.
    pub file: Option<&'a str>,
    /// Byte position in the file.
    pub position: Option<u64>,
    /// Kafka offset concerned.
    pub offset: Option<i64>,
    /// What is wrong.
    pub message: &'a str,
    /// What to do.
    pub hint: &'a str,
    /// Accepted by the baseline.
    pub baselined: bool,
}

/// A partition's reference and loss (a `jsonl` line has `"type":
/// "partition"`).
#[derive(Serialize)]
pub struct PartitionOut<'a> {
    /// `"partition"` in `jsonl`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// The reference replica, as `klf diff` names it.
    pub reference: &'a ReferenceChoice,
    /// The loss, as `klf diff` counts it.
    pub loss: &'a LossBrief,
    /// Brokers whose replica could not be read, left out of the
    /// comparison and the loss (`[]` when none).
    pub left_out: &'a [i32],
}

fn partition_out(p: &PartitionCheck, line: bool) -> PartitionOut<'_> {
    PartitionOut {
        kind: line.then_some("partition"),
        topic: &p.topic,
        partition: p.partition,
        reference: &p.reference,
        loss: &p.loss,
        left_out: &p.left_out,
    }
}

fn finding_out(f: &Finding, line: bool) -> FindingOut<'_> {
    let l = &f.location;
    FindingOut {
        kind: line.then_some("finding"),
        code: &f.code,
        severity: f.severity,
        family: f.family,
        broker: l.broker,
        topic: l.topic.as_deref(),
        partition: l.partition,
        file: l.file.as_deref(),
        position: l.position,
        offset: l.offset,
        message: &f.message,
        hint: &f.hint,
        baselined: f.baselined,
    }
}

/// `--format json` (one pretty document) or `jsonl` (a line per finding,
/// per partition, then `{"type": "summary", ...}`).
pub fn write_json(report: &CheckReport, lines: bool, w: &mut impl Write) -> std::io::Result<()> {
    let w = &mut JsonSafe(w);
    let io = std::io::Error::from;
    if lines {
        for f in &report.findings {
            crate::render::text::write_value(&mut *w, false, &finding_out(f, true)).map_err(io)?;
            writeln!(w)?;
        }
        for p in &report.partitions {
            crate::render::text::write_value(&mut *w, false, &partition_out(p, true))
                .map_err(io)?;
            writeln!(w)?;
        }
        #[derive(Serialize)]
        struct Line<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            summary: &'a Summary,
        }
        crate::render::text::write_value(
            &mut *w,
            false,
            &Line {
                kind: "summary",
                summary: &report.summary,
            },
        )
        .map_err(io)?;
        return writeln!(w);
    }
    let doc = CheckDocument {
        findings: FindingsOut(&report.findings),
        summary: &report.summary,
        partitions: PartitionsOut(&report.partitions),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(io)?;
    writeln!(w)
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

/// The table of findings, the hints of their codes and the verdict line.
/// How many findings of one code in one partition the table shows.
pub const SHOWN_PER_GROUP: usize = 3;

/// The findings the table shows: errors first, then warnings and infos;
/// within each, at most [`SHOWN_PER_GROUP`] of one code in one partition
/// (the count of the rest on the last), at most `max` in all. Returns them
/// with the number of the group's others each stands for, and how many
/// were left out in all.
pub fn shown_findings(report: &CheckReport, max: Option<usize>) -> (Vec<(&Finding, usize)>, usize) {
    let mut order: Vec<&Finding> = report.findings.iter().collect();
    order.sort_by_key(|f| std::cmp::Reverse(f.severity));
    type Group<'a> = (&'a str, Option<&'a str>, Option<i32>);
    let mut groups: BTreeMap<Group<'_>, usize> = BTreeMap::new();
    for f in &order {
        *groups
            .entry((&*f.code, f.location.topic.as_deref(), f.location.partition))
            .or_default() += 1;
    }
    let mut seen: BTreeMap<Group<'_>, usize> = BTreeMap::new();
    let mut shown = Vec::new();
    for f in order {
        let key = (&*f.code, f.location.topic.as_deref(), f.location.partition);
        let n = seen.entry(key).or_default();
        *n += 1;
        let total = groups.get(&key).copied().unwrap_or(0);
        if *n < SHOWN_PER_GROUP || (*n == SHOWN_PER_GROUP && total == SHOWN_PER_GROUP) {
            shown.push((f, 0));
        } else if *n == SHOWN_PER_GROUP {
            shown.push((f, total - SHOWN_PER_GROUP));
        }
    }
    if let Some(max) = max {
        shown.truncate(max.max(1));
    }
    let kept: usize = shown.iter().map(|(_, more)| 1 + more).sum();
    (shown, report.findings.len() - kept)
}

/// The most findings [`write_table`] can show in `rows` lines of a
/// terminal `look.width` wide, hints and summary included (at least one):
/// `--max-findings`'s default on a terminal, a screenful. A line wider
/// than the terminal (a path too long for it, kept whole) counts the rows
/// the terminal wraps it onto.
pub fn screenful(report: &CheckReport, level: Severity, look: Look, rows: usize) -> usize {
    let lines = |n: usize| {
        let mut buf = Vec::new();
        {
            let mut w = Fit::new(&mut buf, look.width);
            // into memory: nothing to fail
            let _ = write_table(report, level, look, Some(n), &mut w).and_then(|()| w.flush());
        }
        let width = look.width.unwrap_or(usize::MAX).max(1);
        String::from_utf8_lossy(&buf)
            .lines()
            .map(|l| display_width(l).div_ceil(width).max(1))
            .sum::<usize>()
    };
    // every finding takes a line at least: no more than `rows` can fit
    let all = shown_findings(report, None).0.len().min(rows);
    // the largest n whose table fits: lines grow with n
    let (mut lo, mut hi) = (1, all.max(1));
    if lines(hi) <= rows {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if lines(mid) <= rows {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

pub fn write_table(
    report: &CheckReport,
    level: Severity,
    look: Look,
    max: Option<usize>,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    if !report.findings.is_empty() {
        let (shown, left_out) = shown_findings(report, max);
        let mut t = Sheet::new(look);
        t.set_header(vec![
            "severity",
            "code",
            "broker",
            "partition",
            "file",
            "position",
            "offset",
            "message",
        ]);
        t.title(2).prose(7);
        for &(f, more) in &shown {
            let sev = if f.baselined {
                format!("{} (baseline)", f.severity.name())
            } else {
                f.severity.name().to_string()
            };
            let partition = match (&f.location.topic, f.location.partition) {
                (Some(t), Some(p)) => format!("{t}-{p}"),
                _ => String::new(),
            };
            let file = f.location.file.clone().unwrap_or_default();
            let paint = match f.severity {
                _ if f.baselined => None,
                Severity::Error => Some(Paint::Bad),
                Severity::Warning => Some(Paint::Warn),
                _ => None,
            };
            t.add_row(vec![
                cell(color, sev, paint),
                cell(color, f.code.clone(), None),
                cell(color, opt(&f.location.broker), None),
                cell(color, sanitize(&partition).into_owned(), None),
                cell(color, sanitize(&file).into_owned(), None),
                cell(color, opt(&f.location.position), None),
                cell(color, opt(&f.location.offset), None),
                cell(
                    color,
                    if more > 0 {
                        format!(
                            "{} (and {more} more like {} in {})",
                            sanitize(&f.message),
                            if more == 1 { "it" } else { "this" },
                            if partition.is_empty() {
                                "the capture".into()
                            } else {
                                sanitize(&partition)
                            }
                        )
                    } else {
                        sanitize(&f.message).into_owned()
                    },
                    None,
                ),
            ]);
        }
        writeln!(w, "{t}")?;
        if left_out > 0 {
            writeln!(
                w,
                "{} not shown (--max-findings N shows more; --format json lists every one)",
                counted(left_out as u64, "more finding")
            )?;
        }
        let mut hints: BTreeMap<&str, &str> = BTreeMap::new();
        // the hints of the codes shown
        for (f, _) in &shown {
            hints.entry(&*f.code).or_insert(&*f.hint);
        }
        for (code, hint) in hints {
            writeln!(w, "{code}: {}", sanitize(hint))?;
        }
    }
    for p in report.partitions.iter().filter(|p| !p.left_out.is_empty()) {
        let brokers: Vec<String> = p.left_out.iter().map(i32::to_string).collect();
        writeln!(
            w,
            "{}-{}: broker {} left out (a file could not be read); the comparison and the loss are the other replicas'",
            sanitize(&p.topic),
            p.partition,
            brokers.join(", ")
        )?;
    }
    let s = &report.summary;
    let failing = report.failing(level).count();
    writeln!(
        w,
        "{}, {}, {}, {} checked: {}, {}, {}{}; {}",
        counted(s.partitions, "partition"),
        counted(s.replicas, "replica"),
        counted(s.segments, "segment"),
        counted(s.batches, "batch"),
        counted(s.errors, "error"),
        counted(s.warnings, "warning"),
        counted(s.infos, "info"),
        if s.baselined > 0 {
            format!(" ({} accepted by the baseline)", s.baselined)
        } else {
            String::new()
        },
        if failing == 0 {
            paint(color, "PASS", Paint::Good)
        } else {
            paint(
                color,
                &format!("FAIL ({failing} at or above {})", level.name()),
                Paint::Bad,
            )
        }
    )
}

/// JUnit XML: one test case per replica and check family (per partition
/// for replication), failing where a finding is at or above `level`.
pub fn write_junit(
    report: &CheckReport,
    level: Severity,
    w: &mut impl Write,
) -> std::io::Result<()> {
    // Test cases: (suite = topic-partition, name = broker N / partition, family).
    type Key = (String, i32, Option<i32>, Family);
    let mut cases: BTreeMap<Key, Vec<&Finding>> = BTreeMap::new();
    for s in &report.subjects {
        let families: &[Family] = if s.broker.is_some() {
            &[
                Family::Segments,
                Family::Indexes,
                Family::Epochs,
                Family::Offsets,
            ]
        } else {
            &[Family::Replication]
        };
        for f in families {
            cases
                .entry((s.topic.clone(), s.partition, s.broker, *f))
                .or_default();
        }
    }
    let mut capture_level: Vec<&Finding> = Vec::new();
    for f in &report.findings {
        match (&f.location.topic, f.location.partition) {
            (Some(t), Some(p)) => {
                let broker = if f.family == Family::Replication {
                    None
                } else {
                    f.location.broker
                };
                cases
                    .entry((t.clone(), p, broker, f.family))
                    .or_default()
                    .push(f);
            }
            _ => capture_level.push(f),
        }
    }
    let fails = |fs: &[&Finding]| fs.iter().any(|f| f.severity >= level && !f.baselined);
    let mut suites: BTreeMap<String, Vec<(String, Vec<&Finding>)>> = BTreeMap::new();
    for ((t, p, b, fam), fs) in cases {
        let name = match b {
            Some(b) => format!("broker {b} {}", fam.name()),
            None => format!("partition {}", fam.name()),
        };
        suites
            .entry(format!("{t}-{p}"))
            .or_default()
            .push((name, fs));
    }
    suites
        .entry("capture".to_string())
        .or_default()
        .push(("capture".to_string(), capture_level));
    let total: usize = suites.values().map(Vec::len).sum();
    let failures: usize = suites
        .values()
        .flatten()
        .filter(|(_, fs)| fails(fs))
        .count();
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        w,
        r#"<testsuites name="klf check" tests="{total}" failures="{failures}" errors="0">"#
    )?;
    for (suite, cases) in &suites {
        let sf = cases.iter().filter(|(_, fs)| fails(fs)).count();
        writeln!(
            w,
            r#"  <testsuite name="{}" tests="{}" failures="{sf}" errors="0">"#,
            markup(suite),
            cases.len()
        )?;
        for (name, fs) in cases {
            let classname = format!("klf.check.{suite}");
            write!(
                w,
                r#"    <testcase classname="{}" name="{}""#,
                markup(&classname),
                markup(name)
            )?;
            if fs.is_empty() {
                writeln!(w, "/>")?;
                continue;
            }
            writeln!(w, ">")?;
            let failing: Vec<&&Finding> = fs
                .iter()
                .filter(|f| f.severity >= level && !f.baselined)
                .collect();
            if !failing.is_empty() {
                let codes: Vec<&str> = failing.iter().map(|f| &*f.code).collect();
                writeln!(
                    w,
                    r#"      <failure type="{}" message="{}">"#,
                    markup(codes[0]),
                    markup(&format!(
                        "{} finding(s): {}",
                        failing.len(),
                        codes.join(", ")
                    ))
                )?;
                for f in &failing {
                    writeln!(w, "{}", markup(&finding_line(f)))?;
                }
                writeln!(w, "      </failure>")?;
            }
            let rest: Vec<&&Finding> = fs
                .iter()
                .filter(|f| f.severity < level || f.baselined)
                .collect();
            if !rest.is_empty() {
                write!(w, "      <system-out>")?;
                for f in rest {
                    writeln!(w, "{}", markup(&finding_line(f)))?;
                }
                writeln!(w, "</system-out>")?;
            }
            writeln!(w, "    </testcase>")?;
        }
        writeln!(w, "  </testsuite>")?;
    }
    writeln!(w, "</testsuites>")
}

fn finding_line(f: &Finding) -> String {
    let mut where_ = String::new();
    if let Some(file) = &f.location.file {
        where_.push_str(file);
        if let Some(p) = f.location.position {
            where_.push_str(&format!(":{p}"));
        }
        where_.push_str(": ");
    }
    let off = f
        .location
        .offset
        .map(|o| format!(" (offset {o})"))
        .unwrap_or_default();
    format!(
        "[{}] {}: {where_}{}{off}{}; hint: {}",
        f.severity.name(),
        f.code,
        f.message,
        if f.baselined { " (baseline)" } else { "" },
        f.hint
    )
}
