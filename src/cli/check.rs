//! `klf check`: the CI gate. Runs every check of
//! [`klf::engine::check`] and renders the findings as a table, one JSON
//! document or JUnit XML. Exit 0 when nothing at or above `--fail-on` is left
//! after the baseline, 1 when something is, 2 on usage or I/O errors.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{Output, Status};
use klf::model::check::Baseline;
use klf::model::check::Severity;
use klf::render::check::{write_json, write_junit, write_table, Limit};

/// Output formats of `klf check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table of findings and a summary line.
    Table,
    /// One JSON document: `{"findings": [...], "summary": {...}}`.
    Json,
    /// JSON Lines: a `{"type": "finding"}` object per finding, then
    /// `{"type": "partition"}` per partition and `{"type": "summary"}`.
    Jsonl,
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
  1  findings at or above --fail-on, or a file-too-large finding (a file
     over klf's caps, left unread) whatever the baseline says
  2  usage or I/O error (a missing PATH, an unreadable archive or baseline,
     a file-unreadable finding, whatever --fail-on and the baseline say)

Output:
  table  an overview of the capture (partitions checked, compared and
         losing data, errors, warnings and infos, replicas not captured;
         one sentence when healthy), then the findings, errors first, a
         code with more than 3 findings folded into one row counting its
         files, partitions and brokers; the hint of each code shown, and a
         PASS/FAIL summary line
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
  klf check capture/ --topic orders --partition 0
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
    /// The cluster's inter.broker.protocol.version (e.g. 2.6): how
    /// followers truncate, which a ZooKeeper-mode capture does not hold
    /// (default: from the capture)
    #[arg(long, value_name = "VERSION", value_parser = super::common::parse_inter_broker_protocol)]
    inter_broker_protocol: Option<klf::model::truncation::ReplicationProtocol>,
    /// Table: show at most N rows of findings, errors first (0: the
    /// overview and summary alone; default: a screenful on a terminal,
    /// every error whatever the height, all into a pipe). A code with more
    /// than 3 findings is one row counting them. JSON, JSON Lines and
    /// JUnit list every finding whatever N
    #[arg(long, value_name = "N")]
    max_findings: Option<usize>,
    /// Only this topic
    #[arg(long)]
    topic: Option<String>,
    /// Only this partition number
    #[arg(long)]
    partition: Option<i32>,
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
    let capture = match out.discover(&paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    super::common::note_unverified_digests(out);
    // Broker directories found under the inputs (symlinked ones included).
    if let Some(t) = &write_to {
        let found = found_inputs(&capture, &args.paths);
        if let Err(s) = out.output_target(&t.path, &found) {
            return s;
        }
    }
    let only = klf::engine::check::Only {
        topic: args.topic.clone(),
        partition: args.partition,
    };
    // A --topic or --partition that selects nothing: named with what the
    // capture holds (exit 2), as diff and impact do.
    if !only.all() && only.replicas(&capture) == 0 {
        let selection = super::common::Selection {
            leader: None,
            topic: args.topic.clone(),
            partition: args.partition,
            inter_broker_protocol: None,
        };
        if let Err(s) = selection.check(out, &capture) {
            return s;
        }
    }
    let replicas = only.replicas(&capture);
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
    let mut report = out.counted(replicas, "replicas checked", |tick| {
        klf::engine::check::check(&capture, args.inter_broker_protocol, &only, tick)
    });
    if let Some(b) = &baseline {
        report.accept(b);
    }
    let mut status_override = None;
    // A read of the evidence failed (the machine's failure): a baseline of
    // this run would accept findings of an incomplete reading. None is
    // written; the files are named at the end of the run (exit 2).
    let failed = klf::engine::machine::failed_reads();
    let write_to = match write_to {
        Some(t) if !failed.is_empty() => {
            out.diag(format_args!(
                "klf: baseline {} not written: {} of the capture could not be read (named below)",
                t.path.display(),
                klf::render::text::counted(failed.len() as u64, "file")
            ));
            status_override = Some(Status::Failure);
            None
        }
        t => t,
    };
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
                // Counted as the next run counts them: the findings the
                // baseline accepts (findings of one code at one place
                // differing only in their message share an entry).
                let accepted = report.accept(&b);
                let entries = b.findings.len() as u64;
                out.note(format_args!(
                    "klf: wrote baseline {}: it accepts {}{}",
                    p.display(),
                    klf::render::text::counted(accepted, "finding"),
                    if entries == accepted {
                        String::new()
                    } else {
                        format!(
                            " ({}: findings of one code at one place share one)",
                            klf::render::text::count(entries, "entry", "entries")
                        )
                    }
                ));
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
            let look = out.look();
            let limit = match (args.max_findings, look.width) {
                (Some(n), _) => Limit::Rows(n),
                // a screenful on a terminal, the prompt's line kept
                (None, Some(_)) => Limit::Screen(
                    klf::render::style::terminal_height()
                        .unwrap_or(24)
                        .saturating_sub(1),
                ),
                (None, None) => Limit::All,
            };
            let mut w = out.fitted();
            write_table(&report, level, look, limit, &mut w).and_then(|()| w.flush())
        }
        Format::Json => write_json(&report, false, out.out()),
        Format::Jsonl => write_json(&report, true, out.out()),
        Format::Junit => write_junit(&report, level, out.out()),
    };
    let status = if let Some(s) = status_override {
        s
    } else if klf::engine::check::machine_failed(&report) {
        // A file that could not be read is the machine's failure, not
        // evidence about the data: exit 2 whatever the baseline says.
        Status::Failure
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

/// The inputs as given plus the broker and partition directories discovery
/// found under them: what no output may land in.
pub fn found_inputs(capture: &klf::model::Capture, given: &[PathBuf]) -> Vec<PathBuf> {
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
