//! `klf check` output: the table, JUnit XML, and the JSON wire types
//! (the schema of `--format json` and `jsonl`: every key present, `null`
//! where a value does not apply).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use serde::Serialize;

use crate::render::json;

use crate::model::check::{
    CheckReport, Family, Finding, LossBrief, PartitionCheck, Severity, Summary,
};
use crate::model::diff::ReferenceChoice;
use crate::render::style::{cell, display_width, paint, Fit, Look, Paint, Sheet};
use crate::render::text::{counted, markup, sanitize};

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
        s.collect_seq(self.0.iter().map(|f| finding_out(f, false)))
    }
}

/// A report's partitions, each put in its wire form as it is serialised.
pub struct PartitionsOut<'a>(pub &'a [PartitionCheck]);

impl Serialize for PartitionsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| partition_out(p, false)))
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
    if lines {
        for f in &report.findings {
            json::line(w, &finding_out(f, true))?;
        }
        for p in &report.partitions {
            json::line(w, &partition_out(p, true))?;
        }
        #[derive(Serialize)]
        struct Line<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            summary: &'a Summary,
        }
        return json::line(
            w,
            &Line {
                kind: "summary",
                summary: &report.summary,
            },
        );
    }
    json::document(
        w,
        &CheckDocument {
            findings: FindingsOut(&report.findings),
            summary: &report.summary,
            partitions: PartitionsOut(&report.partitions),
        },
    )
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

/// A code with more findings than this (of one baseline status) is folded
/// into one row of the table.
pub const FOLD_OVER: usize = 3;

/// One row of the table: a finding, or the findings of one code folded.
#[derive(Debug, Clone)]
pub enum Row<'a> {
    /// A finding, with its location and message.
    One(&'a Finding),
    /// The findings of one code (all accepted by the baseline, or none),
    /// counted: the files, partitions and brokers they are in.
    Fold(Vec<&'a Finding>),
}

impl Row<'_> {
    /// The findings the row stands for.
    pub fn len(&self) -> usize {
        match self {
            Row::One(_) => 1,
            Row::Fold(v) => v.len(),
        }
    }

    /// Whether the row stands for no finding (never: a fold holds some).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn first(&self) -> Option<&Finding> {
        match self {
            Row::One(f) => Some(f),
            Row::Fold(v) => v.first().copied(),
        }
    }

    /// The severity of its findings.
    pub fn severity(&self) -> Severity {
        self.first().map_or(Severity::Info, |f| f.severity)
    }
}

/// The table's rows: errors, then warnings, then infos (in each, the
/// findings no baseline accepts first, in location order); the findings of
/// a code that has more than `fold_over` of them (of one baseline status)
/// folded into one row, where its first finding is.
pub fn rows(report: &CheckReport, fold_over: usize) -> Vec<Row<'_>> {
    type Key<'a> = (&'a str, bool);
    let mut counts: BTreeMap<Key<'_>, usize> = BTreeMap::new();
    for f in &report.findings {
        *counts.entry((&*f.code, f.baselined)).or_default() += 1;
    }
    let mut order: Vec<&Finding> = report.findings.iter().collect();
    order.sort_by_key(|f| (std::cmp::Reverse(f.severity), f.baselined));
    let mut rows: Vec<Row<'_>> = Vec::new();
    let mut folds: BTreeMap<Key<'_>, usize> = BTreeMap::new();
    for f in order {
        let key = (&*f.code, f.baselined);
        if counts.get(&key).copied().unwrap_or(0) <= fold_over {
            rows.push(Row::One(f));
            continue;
        }
        match folds.get(&key) {
            Some(&i) => {
                if let Some(Row::Fold(v)) = rows.get_mut(i) {
                    v.push(f);
                }
            }
            None => {
                folds.insert(key, rows.len());
                rows.push(Row::Fold(vec![f]));
            }
        }
    }
    rows
}

/// What a folded row says: how many findings, in how many files,
/// partitions (the first named) and brokers.
pub fn fold_text(fs: &[&Finding]) -> String {
    let files: BTreeSet<&str> = fs
        .iter()
        .filter_map(|f| f.location.file.as_deref())
        .collect();
    let parts: BTreeSet<(&str, i32)> = fs
        .iter()
        .filter_map(|f| Some((f.location.topic.as_deref()?, f.location.partition?)))
        .collect();
    let brokers: BTreeSet<i32> = fs.iter().filter_map(|f| f.location.broker).collect();
    let n = fs.len() as u64;
    let one_per_file = files.len() == fs.len();
    let mut s = if one_per_file {
        counted(n, "file")
    } else if files.is_empty() {
        counted(n, "finding")
    } else {
        format!(
            "{} in {}",
            counted(n, "finding"),
            counted(files.len() as u64, "file")
        )
    };
    if !parts.is_empty() {
        const NAMED: usize = 3;
        let names: Vec<String> = parts
            .iter()
            .take(NAMED)
            .map(|(t, p)| format!("{}-{p}", sanitize(t)))
            .collect();
        let more = parts.len().saturating_sub(NAMED);
        s.push_str(if one_per_file || files.is_empty() {
            " in "
        } else {
            " of "
        });
        s.push_str(&format!(
            "{} ({}{})",
            counted(parts.len() as u64, "partition"),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    if !brokers.is_empty() {
        const LISTED: usize = 8;
        if brokers.len() <= LISTED {
            let list: Vec<String> = brokers.iter().map(i32::to_string).collect();
            s.push_str(&format!(
                " on {} {}",
                if brokers.len() == 1 {
                    "broker"
                } else {
                    "brokers"
                },
                list.join(", ")
            ));
        } else {
            s.push_str(&format!(" on {}", counted(brokers.len() as u64, "broker")));
        }
    }
    s
}

/// How many findings the table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Every row (into a pipe).
    All,
    /// At most this many rows (`--max-findings`), errors first.
    Rows(usize),
    /// A screenful of this many lines (on a terminal): every error, then
    /// as many warnings and infos as the lines left hold; when the errors
    /// alone do not fit, every code with more than one error is folded.
    Screen(usize),
}

/// What [`write_table`] writes: the rows, how many of them, and whether
/// the hints of their codes.
struct Plan<'a> {
    rows: Vec<Row<'a>>,
    shown: usize,
    hints: bool,
}

/// The rows [`write_table`] shows under `limit`, and how many of them.
fn plan(report: &CheckReport, level: Severity, look: Look, limit: Limit) -> Plan<'_> {
    let every = |n: Option<usize>| {
        let rows = rows(report, FOLD_OVER);
        let shown = n.map_or(rows.len(), |n| n.min(rows.len()));
        Plan {
            rows,
            shown,
            hints: true,
        }
    };
    let height = match limit {
        Limit::All => return every(None),
        Limit::Rows(n) => return every(Some(n)),
        Limit::Screen(h) => h,
    };
    let lines = |p: &Plan<'_>| {
        let mut buf = Vec::new();
        {
            let mut w = Fit::new(&mut buf, look.width);
            // into memory: nothing to fail
            let _ = write_plan(report, level, look, p, &mut w).and_then(|()| w.flush());
        }
        let width = look.width.unwrap_or(usize::MAX).max(1);
        String::from_utf8_lossy(&buf)
            .lines()
            .map(|l| display_width(l).div_ceil(width).max(1))
            .sum::<usize>()
    };
    // Errors are never cut: when they do not fit with the hints of their
    // codes, the hints are left out, then every code with more than one
    // error is folded.
    let mut p = Plan {
        rows: Vec::new(),
        shown: 0,
        hints: true,
    };
    for (fold_over, hints) in [(FOLD_OVER, true), (FOLD_OVER, false), (1, false)] {
        let rows = rows(report, fold_over);
        let errors = rows
            .iter()
            .take_while(|x| x.severity() == Severity::Error)
            .count();
        p = Plan {
            rows,
            shown: errors,
            hints,
        };
        if lines(&p) <= height {
            break;
        }
    }
    // the largest number of rows whose table fits (lines grow with it)
    let (mut lo, mut hi) = (p.shown, p.rows.len());
    p.shown = hi;
    if lines(&p) <= height {
        return p;
    }
    p.shown = lo;
    if lines(&p) > height {
        return p;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        p.shown = mid;
        if lines(&p) <= height {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    p.shown = lo;
    p
}

/// The table: the overview of the capture, the findings (as [`Limit`]
/// says), the hints of the codes shown and the verdict line.
pub fn write_table(
    report: &CheckReport,
    level: Severity,
    look: Look,
    limit: Limit,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let p = plan(report, level, look, limit);
    write_plan(report, level, look, &p, w)
}

/// The overview: the whole capture in one or two lines (partitions and
/// replicas checked, errors, warnings and infos, partitions compared and
/// losing data, replicas not captured), or one sentence for a healthy one.
pub fn write_overview(report: &CheckReport, look: Look, w: &mut impl Write) -> std::io::Result<()> {
    let color = look.color;
    let s = &report.summary;
    // data partitions read but not compared (one replica captured or read)
    let mut data: BTreeSet<(&str, i32)> = BTreeSet::new();
    for r in report.subjects.iter().filter(|r| r.broker.is_some()) {
        if r.topic != crate::format::names::METADATA_TOPIC {
            data.insert((&r.topic, r.partition));
        }
    }
    let uncompared = (data.len() as u64).saturating_sub(s.partitions_compared);
    let checked = format!(
        "{} ({}) checked",
        counted(s.partitions, "partition"),
        counted(s.replicas, "replica")
    );
    let not_compared = if uncompared > 0 {
        format!(
            "; {} with fewer than two replicas read, not compared",
            counted(uncompared, "partition")
        )
    } else {
        String::new()
    };
    let healthy = s.errors == 0
        && s.warnings == 0
        && s.partitions_losing_data == 0
        && s.replicas_not_captured == 0;
    if healthy {
        let lost = if s.partitions_compared > 0 {
            format!(", {} compared: nothing lost", s.partitions_compared)
        } else {
            String::new()
        };
        let infos = if s.infos > 0 {
            format!(" ({} below)", counted(s.infos, "info"))
        } else {
            String::new()
        };
        let line = format!("Healthy: {checked}{lost}, no error or warning{infos}{not_compared}.");
        return writeln!(w, "{}", paint(color, &line, Paint::Good));
    }
    let counts = format!(
        "{checked}: {}, {}, {}.",
        counted(s.errors, "error"),
        counted(s.warnings, "warning"),
        counted(s.infos, "info")
    );
    let counts = match (s.errors, s.warnings) {
        (0, 0) => counts,
        (0, _) => paint(color, &counts, Paint::Warn),
        _ => paint(color, &counts, Paint::Bad),
    };
    writeln!(w, "{counts}")?;
    let mut line = if s.partitions_compared == 0 {
        "No partition has two replicas read: nothing compared, no loss computed".to_string()
    } else if s.partitions_losing_data == 0 {
        format!("{} compared: nothing lost", s.partitions_compared)
    } else {
        format!(
            "{} compared, {} losing data",
            s.partitions_compared, s.partitions_losing_data
        )
    };
    if s.replicas_not_captured > 0 {
        line.push_str(&format!(
            "; {} assigned but not captured",
            counted(s.replicas_not_captured, "replica")
        ));
    }
    if s.partitions_compared > 0 {
        line.push_str(&not_compared);
    }
    line.push('.');
    if s.partitions_losing_data > 0 {
        line = paint(color, &line, Paint::Bad);
    }
    writeln!(w, "{line}")
}

fn write_plan(
    report: &CheckReport,
    level: Severity,
    look: Look,
    plan: &Plan<'_>,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    write_overview(report, look, w)?;
    let shown = &plan.rows[..plan.shown.min(plan.rows.len())];
    if !shown.is_empty() {
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
        for row in shown {
            let Some(f) = row.first() else { continue };
            let sev = if f.baselined {
                format!("{} (baseline)", f.severity.name())
            } else {
                f.severity.name().to_string()
            };
            let paint = match f.severity {
                _ if f.baselined => None,
                Severity::Error => Some(Paint::Bad),
                Severity::Warning => Some(Paint::Warn),
                _ => None,
            };
            let cells = match row {
                Row::One(f) => {
                    let partition = match (&f.location.topic, f.location.partition) {
                        (Some(t), Some(p)) => format!("{t}-{p}"),
                        _ => String::new(),
                    };
                    let file = f.location.file.clone().unwrap_or_default();
                    [
                        opt(&f.location.broker),
                        sanitize(&partition).into_owned(),
                        sanitize(&file).into_owned(),
                        opt(&f.location.position),
                        opt(&f.location.offset),
                        sanitize(&f.message).into_owned(),
                    ]
                }
                Row::Fold(v) => [
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    fold_text(v),
                ],
            };
            let mut r = vec![cell(color, sev, paint), cell(color, f.code.clone(), None)];
            r.extend(cells.into_iter().map(|c| cell(color, c, None)));
            t.add_row(r);
        }
        writeln!(w, "{t}")?;
    }
    let kept: usize = shown.iter().map(Row::len).sum();
    let left_out = report.findings.len().saturating_sub(kept);
    if left_out > 0 {
        writeln!(
            w,
            "{} not shown (--max-findings N shows more; --format json lists every one)",
            counted(left_out as u64, "more finding")
        )?;
    }
    let mut hints: BTreeMap<&str, &str> = BTreeMap::new();
    // the hints of the codes shown
    for f in shown.iter().filter_map(Row::first) {
        hints.entry(&*f.code).or_insert(&*f.hint);
    }
    if !plan.hints && !hints.is_empty() {
        writeln!(
            w,
            "hints left out to fit the screen: pipe the output (| less) to read them"
        )?;
    } else {
        for (code, hint) in hints {
            writeln!(w, "{code}: {}", sanitize(hint))?;
        }
    }
    for p in report.partitions.iter().filter(|p| !p.left_out.is_empty()) {
        let brokers: Vec<String> = p.left_out.iter().map(i32::to_string).collect();
        writeln!(
            w,
            "{}-{}: {} {} left out (a file could not be read); the comparison and the loss are the other replicas'",
            sanitize(&p.topic),
            p.partition,
            if p.left_out.len() == 1 { "broker" } else { "brokers" },
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
                        "{}: {}",
                        counted(failing.len() as u64, "finding"),
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
