//! `klf check`: the CI gate. Runs every check of
//! [`klf::analysis::check`] and renders the findings as a table, one JSON
//! document or JUnit XML. Exit 0 when nothing at or above `--fail-on` is left
//! after the baseline, 1 when something is, 2 on usage or I/O errors.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{cell, paint, table, Output, Paint, Status};
use klf::analysis::check::{
    apply_baseline, Baseline, CheckReport, Family, Finding, Severity,
};
use klf::capture::discover::discover;

/// Output formats of `klf check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table of findings and a summary line.
    Table,
    /// One JSON document: `{"findings": [...], "summary": {...}}`.
    Json,
    /// JUnit XML: a test case per replica and check family.
    Junit,
}

/// The lowest severity that fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Errors fail the run.
    Error,
    /// Warnings and errors fail the run.
    Warning,
}

impl FailOn {
    fn severity(self) -> Severity {
        match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
        }
    }
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  nothing at or above --fail-on (after the baseline)
  1  findings at or above --fail-on
  2  usage or I/O error (a missing PATH, an unreadable archive or baseline)

Output:
  table  findings with severity, code, location and message, the hint of
         each code, and a PASS/FAIL summary line
  json   {\"findings\":[{\"code\",\"severity\",\"family\",\"broker\",\"topic\",
         \"partition\",\"file\",\"position\",\"offset\",\"message\",\"hint\",
         \"baselined\"}],\"summary\":{...}}
  junit  JUnit XML: one test case per replica and check family (one per
         partition for replication checks); findings at or above --fail-on
         are <failure> elements, the others <system-out>

",
    super::common::inputs_help!(),
    "\
Examples:
  klf check capture/
  klf check capture.tar.gz --format junit > klf-check.xml
  klf check capture/ --write-baseline klf-baseline.json
  klf check capture/ --baseline klf-baseline.json --fail-on warning
"
);


/// Check captured log directories: framing, checksums, indexes, epochs, checkpoints, replicas
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or folders of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Lowest severity that makes the exit code 1
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
    /// Accept the findings listed in this file (written by --write-baseline)
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write every finding of this run to FILE as a baseline (the run then passes)
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
}

/// Runs `klf check`.
pub fn run(args: Args, out: &mut Output) -> Status {
    // The output rule, before any work: never into the evidence.
    let write_to = match &args.write_baseline {
        Some(p) => match out.output_target(p, &args.paths) {
            Ok(t) => Some(t),
            Err(s) => return s,
        },
        None => None,
    };
    let baseline = match &args.baseline {
        None => None,
        Some(p) => match std::fs::read(p) {
            Err(e) => {
                out.diag(format_args!(
                    "klf: cannot read baseline {}: {e}",
                    p.display()
                ));
                return Status::Failure;
            }
            Ok(bytes) => match serde_json::from_slice::<Baseline>(&bytes) {
                Ok(b) => Some(b),
                Err(e) => {
                    out.diag(format_args!(
                        "klf: {} is not a klf baseline: {e}",
                        p.display()
                    ));
                    return Status::Failure;
                }
            },
        },
    };
    let paths = match out.resolve_inputs(&args.paths) {
        Ok(p) => p,
        Err(s) => return s,
    };
    let capture = discover(&paths);
    // Broker directories found under the inputs (symlinked ones included).
    if let Some(t) = &write_to {
        let found = found_inputs(&capture, &args.paths);
        if let Err(s) = out.output_target(&t.path, &found) {
            return s;
        }
    }
    let replicas: usize =
        capture.partitions.values().map(Vec::len).sum::<usize>() + capture.metadata_logs.len();
    if replicas == 0 {
        for w in capture.warnings_only() {
            out.note(format_args!(
                "klf: warning: {}: {}",
                w.path.display(),
                w.message
            ));
        }
        out.diag("klf: no partition found under the given paths");
        return Status::Failure;
    }
    let bar = out.progress(replicas as u64, "{bar:40} {pos}/{len} replicas checked");
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let mut report = klf::engine::check::check(&capture, &tick);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(b) = &baseline {
        apply_baseline(&mut report, b);
    }
    let mut status_override = None;
    if let Some(t) = &write_to {
        let p = &t.path;
        let b = Baseline::from_report(&report);
        let res = serde_json::to_vec_pretty(&b)
            .map_err(std::io::Error::from)
            .and_then(|mut v| {
                v.push(b'\n');
                t.write(&v)
            });
        match res {
            Ok(()) => {
                out.note(format_args!(
                    "klf: wrote {} findings to baseline {}",
                    b.findings.len(),
                    p.display()
                ));
                apply_baseline(&mut report, &b);
            }
            Err(e) => {
                out.diag(format_args!(
                    "klf: cannot write baseline {}: {e}",
                    p.display()
                ));
                status_override = Some(Status::Failure);
            }
        }
    }
    let level = args.fail_on.severity();
    let res = match args.format {
        Format::Table => {
            let color = out.color;
            render_table(&report, level, color, out.out())
        }
        Format::Json => serde_json::to_writer_pretty(&mut *out.out(), &report)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(out.out())),
        Format::Junit => render_junit(&report, level, out.out()),
    };
    let status = if let Some(s) = status_override {
        s
    } else if report.failing(level).next().is_some() {
        Status::Corruption
    } else {
        Status::Clean
    };
    match res {
        Ok(()) => status,
        Err(e) => status.worst(out.write_failed(e)),
    }
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

/// Replaces control characters (terminal escapes in hostile names) by `?`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn render_table(
    report: &CheckReport,
    level: Severity,
    color: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    if !report.findings.is_empty() {
        let mut t = table(color);
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
        for f in &report.findings {
            let sev = if f.baselined {
                format!("{} (baseline)", f.severity.name())
            } else {
                f.severity.name().to_string()
            };
            let partition = match (&f.location.topic, f.location.partition) {
                (Some(t), Some(p)) => format!("{t}-{p}"),
                _ => String::new(),
            };
            let file = f
                .location
                .file
                .as_deref()
                .map(|p| {
                    std::path::Path::new(p)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| p.to_string())
                })
                .unwrap_or_default();
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
                cell(color, sanitize(&partition), None),
                cell(color, sanitize(&file), None),
                cell(color, opt(&f.location.position), None),
                cell(color, opt(&f.location.offset), None),
                cell(color, sanitize(&f.message), None),
            ]);
        }
        writeln!(w, "{t}")?;
        let mut hints: BTreeMap<&str, &str> = BTreeMap::new();
        for f in &report.findings {
            hints.entry(f.code.as_str()).or_insert(f.hint.as_str());
        }
        for (code, hint) in hints {
            writeln!(w, "{code}: {}", sanitize(hint))?;
        }
    }
    let s = &report.summary;
    let failing = report.failing(level).count();
    writeln!(
        w,
        "{} partitions, {} replicas, {} segments, {} batches checked: {} errors, {} warnings, {} infos{}; {}",
        s.partitions,
        s.replicas,
        s.segments,
        s.batches,
        s.errors,
        s.warnings,
        s.infos,
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

/// Escapes text for XML content and attribute values; characters XML 1.0
/// cannot hold become `?`.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

fn render_junit(report: &CheckReport, level: Severity, w: &mut impl Write) -> std::io::Result<()> {
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
            xml_escape(suite),
            cases.len()
        )?;
        for (name, fs) in cases {
            let classname = format!("klf.check.{suite}");
            write!(
                w,
                r#"    <testcase classname="{}" name="{}""#,
                xml_escape(&classname),
                xml_escape(name)
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
                let codes: Vec<&str> = failing.iter().map(|f| f.code.as_str()).collect();
                writeln!(
                    w,
                    r#"      <failure type="{}" message="{}">"#,
                    xml_escape(codes[0]),
                    xml_escape(&format!(
                        "{} finding(s): {}",
                        failing.len(),
                        codes.join(", ")
                    ))
                )?;
                for f in &failing {
                    writeln!(w, "{}", xml_escape(&finding_line(f)))?;
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
                    writeln!(w, "{}", xml_escape(&finding_line(f)))?;
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

/// The inputs as given plus the broker and partition directories discovery
/// found under them: what no output may land in.
pub fn found_inputs(capture: &klf::capture::discover::Capture, given: &[PathBuf]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = given.to_vec();
    v.extend(capture.brokers.iter().map(|b| b.path.clone()));
    v.extend(
        capture
            .partitions
            .values()
            .flatten()
            .chain(&capture.metadata_logs)
            .map(|r| r.dir.clone()),
    );
    v
}
