//! `klf report`: a self-contained HTML page for a post-mortem of a capture.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::common::{Output, Status};
use klf::report::{build, html, ReportOptions};

/// `--help` and man page text after the options.
pub const AFTER_HELP: &str = "\
Exit status:
  0  page written, nothing lost
  1  page written; a replica would lose committed records, or a segment could
     not be read whole (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, an unreadable archive, no partition
     with two or more replicas, an output path inside the evidence)

The page:
  One HTML file, inline CSS and SVG, no script, nothing loaded from
  elsewhere. A summary table of every partition, then per partition an SVG
  timeline with one lane per replica (leader epochs, high watermark, log end,
  divergence, truncation, records cut with committed ones in red), the
  controller's elections, and the story klf diff --explain tells. Every mark
  carries data-* attributes (data-kind, data-replica, data-epoch, data-start,
  data-end, data-offset, data-records); README.md lists them.

Inputs:
  As klf diff: broker log directories, partition directories, a folder of
  broker directories, or a .tar, .tar.gz/.tgz or .tar.zst/.tzst archive.

Examples:
  klf report capture/ --html incident.html
  klf report capture.tar.gz --topic orders --html - > orders.html
";

/// Write a self-contained HTML post-mortem page: summary, replica timelines as SVG, the diff story
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Write the page to this file ("-" for stdout)
    ///
    /// One HTML file with inline CSS and SVG, no script and no external
    /// resource. A path inside one of the given PATHs is refused: the
    /// evidence is never written to.
    #[arg(long, required = true, value_name = "OUT.html")]
    html: PathBuf,
    /// Take broker N as the reference leader (default: the leader at capture
    /// time from the metadata log, else the highest latest epoch)
    #[arg(long, value_name = "N")]
    leader: Option<i32>,
    /// Only this topic
    #[arg(long)]
    topic: Option<String>,
    /// Only this partition number
    #[arg(long)]
    partition: Option<i32>,
}

/// Whether `out` would land inside one of the evidence paths.
fn inside_evidence(out: &Path, paths: &[PathBuf]) -> bool {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(parent) = parent.canonicalize() else {
        return false;
    };
    paths
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .any(|p| parent.starts_with(&p) || out.canonicalize().is_ok_and(|o| o == p))
}

/// Runs `klf report`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let to_stdout = args.html.as_os_str() == "-";
    if !to_stdout && inside_evidence(&args.html, &args.paths) {
        out.diag(format_args!(
            "klf: {}: the page would be written inside the evidence; choose a path outside the given directories",
            args.html.display()
        ));
        return Status::Failure;
    }
    let paths = match out.resolve_inputs(&args.paths) {
        Ok(p) => p,
        Err(s) => return s,
    };
    let options = ReportOptions {
        leader: args.leader,
        topic: args.topic,
        partition: args.partition,
    };
    let report = match build(&paths, &options) {
        Ok(r) => r,
        Err(e) => {
            out.diag(format_args!("klf: {e}"));
            return Status::Failure;
        }
    };
    for p in &report.problems {
        out.diag(format_args!("klf: {p}"));
    }
    let page = html::render(&report);
    if to_stdout {
        if let Err(e) = out.out().write_all(page.as_bytes()) {
            return out.write_failed(e);
        }
    } else if let Err(e) = std::fs::write(&args.html, page) {
        out.diag(format_args!(
            "klf: {}: cannot write: {e}",
            args.html.display()
        ));
        return Status::Failure;
    } else {
        out.diag(format_args!(
            "klf: wrote {} ({} partitions)",
            args.html.display(),
            report.partitions.len()
        ));
    }
    if report.committed_loss() || report.damaged {
        Status::Corruption
    } else {
        Status::Clean
    }
}
