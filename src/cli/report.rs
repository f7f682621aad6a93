//! `klf report`: a self-contained HTML page for a post-mortem of a capture.

use std::io::Write;
use std::path::PathBuf;

use super::common::{Output, Status};
use klf::engine::report::build;
use klf::engine::ReadMode;
use klf::render::report::html;

/// `--help` and man page text after the options.
pub const AFTER_HELP: &str = "\
Exit status:
  0  page written, no lost record was or may have been committed
  1  page written; a partition loses records that were or may have been
     committed (as klf diff --fail-on committed), or a segment could not be
     read whole (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, an unreadable archive, no partition
     with two or more replicas, an output path refused: inside an input,
     an input itself, a symbolic link or a file with other hard links)

The page:
  One HTML file, inline CSS and SVG, no script, nothing loaded from
  elsewhere. It opens on the whole capture: partitions compared, partitions
  losing data, records lost, committed proven and at most possible, replicas
  not captured, and one sentence saying what it comes to (\"Nothing lost: ...\"
  when nothing is). Then the partitions that lose data, worst first: a table,
  then each with an SVG timeline with one lane per replica (leader epochs,
  high watermark, log end, divergence, truncation, records cut, the lost ones
  proven committed in red and possibly committed in light red; each lane says
  what its cut loses and its committed bounds, never a bare 0 while more may
  have been committed), the controller's elections, and the story that
  klf diff --explain tells. The partitions that lose nothing are one folded
  list, at most 50 of those whose replicas differ drawn after it (use
  --topic and --partition to draw any one). Every mark carries data-*
  attributes (data-kind, data-replica, data-epoch, data-start, data-end,
  data-offset, data-records); docs/commands.md in the klf sources lists
  them.

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
    #[command(flatten)]
    select: super::common::Selection,
}

/// Runs `klf report`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let to_stdout = args.html.as_os_str() == "-";
    // The output rule, before any work: never into the evidence.
    let target = if to_stdout {
        None
    } else {
        match out.output_target(&args.html, &args.paths) {
            Ok(t) => Some(t),
            Err(s) => return s,
        }
    };
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    if let Some(t) = &target {
        let found = super::check::found_inputs(&capture, &args.paths);
        if let Err(s) = out.output_target(&t.path, &found) {
            return s;
        }
    }
    let req = args.select.request(ReadMode::Full);
    if let Err(s) = args.select.check(out, &capture) {
        return s;
    }
    let candidates = args.select.candidates(&capture);
    let impact = out.counted(candidates, "partitions diffed", |tick| {
        klf::engine::impact::impact_capture(&capture, &req, tick)
    });
    let inputs = args.paths.iter().map(|p| p.display().to_string()).collect();
    let report = match build(&impact, inputs) {
        Ok(r) => r,
        Err(e) => {
            out.diag(format_args!("klf: {e}"));
            return Status::Failure;
        }
    };
    for p in &impact.problems {
        out.diag(format_args!("klf: {p}"));
    }
    for p in &report.problems {
        out.diag(format_args!("klf: {p}"));
    }
    // A read of the evidence failed (the machine's failure): the page
    // would draw an incomplete capture as if it were whole. None is
    // written; the files are named at the end of the run (exit 2).
    let failed = klf::engine::machine::failed_reads();
    if !failed.is_empty() {
        out.diag(format_args!(
            "klf: {}: not written: {} of the capture could not be read (named below)",
            if to_stdout {
                "the page".to_string()
            } else {
                args.html.display().to_string()
            },
            klf::render::text::counted(failed.len() as u64, "file")
        ));
        return Status::Failure;
    }
    let page = html::render(&report);
    // what the metadata log could not give is in report.problems, printed
    // above: the page lacks it, so the run is not clean
    let metadata_unread = impact
        .diff
        .evidence
        .controller
        .as_ref()
        .is_some_and(|c| !c.problems.is_empty());
    let status = if report.committed_loss() || report.damaged || metadata_unread {
        Status::Corruption
    } else {
        Status::Clean
    };
    let Some(target) = target else {
        return match out.out().write_all(page.as_bytes()) {
            Ok(()) => status,
            Err(e) => status.worst(out.write_failed(e)),
        };
    };
    if let Err(e) = target.write(page.as_bytes()) {
        out.diag(format_args!(
            "klf: {}: cannot write: {e}",
            args.html.display()
        ));
        return Status::Failure;
    }
    out.note(format_args!(
        "klf: wrote {} ({})",
        args.html.display(),
        klf::render::text::counted(report.partitions.len() as u64, "partition")
    ));
    status
}
