//! `klf report`: a self-contained HTML page for a post-mortem of a capture.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::common::{Output, Status};
use klf::report::{build, html, ReportOptions};

/// Write a self-contained HTML post-mortem page: summary, replica timelines as SVG, the diff story
#[derive(clap::Args, Debug)]
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
    let options = ReportOptions {
        leader: args.leader,
        topic: args.topic,
        partition: args.partition,
    };
    let report = match build(&args.paths, &options) {
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
