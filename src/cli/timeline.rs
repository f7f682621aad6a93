//! `klf timeline`: per replica, which leader epochs wrote which offsets,
//! from the batch headers beside the `leader-epoch-checkpoint`.

use std::io::Write;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::Serialize;

use super::common::{cell, paint, table, Output, Paint, Status};
use klf::analysis::timeline::{timeline, Timeline};
use klf::capture::controller::{controller_view, PartitionHistory};
use klf::capture::replica::load_replica;

/// Output formats of `klf timeline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  no disagreement
  1  a disagreement between batches and leader-epoch-checkpoint, or an
     unreadable segment
  2  usage or I/O error

JSON output:
  With --format json, one document:
  {\"partitions\":[{\"topic\",\"partition\",\"replicas\":[{\"broker\",\"from_batches\":
  [{\"epoch\",\"start_offset\",\"end_offset\",\"batches\",\"records\",
  \"first_timestamp\",\"last_timestamp\"}],\"checkpoint\":[[epoch,start_offset]],
  \"log_start_offset\",\"log_end_offset\",\"high_watermark\",\"recovery_point\",
  \"disagreements\":[{\"code\",\"epoch\",\"message\"}]}],\"controller\":{\"replicas\",
  \"changes\":[...]}}]}

",
    super::common::inputs_help!(),
    "\
Examples:
  klf timeline capture/
  klf timeline capture.tar.zst --topic orders --partition 0 --format json
"
);


/// Leader-epoch timeline of every replica, from batch headers and leader-epoch-checkpoint
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Only this topic
    #[arg(long)]
    topic: Option<String>,
    /// Only this partition number
    #[arg(long)]
    partition: Option<i32>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Serialize)]
struct PartitionTimeline {
    topic: String,
    partition: i32,
    replicas: Vec<Timeline>,
    /// The controller's view from the capture's metadata log, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    controller: Option<PartitionHistory>,
}

#[derive(Serialize)]
struct Report {
    partitions: Vec<PartitionTimeline>,
}

/// Runs `klf timeline`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    let wanted: Vec<_> = capture
        .partitions
        .iter()
        .filter(|((t, p), _)| {
            args.topic.as_ref().is_none_or(|x| x == t) && args.partition.is_none_or(|x| x == *p)
        })
        .collect();
    if wanted.is_empty() {
        out.diag("klf: no partition found under the given paths");
        return Status::Failure;
    }
    let total: usize = wanted.iter().map(|(_, reps)| reps.len()).sum();
    let bar = out.progress(total as u64, "{bar:40} {pos}/{len} replicas read");
    let parts: Vec<_> = wanted
        .par_iter()
        .map(|((topic, partition), reps)| {
            let loaded: Vec<_> = reps
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let l = load_replica(r, r.node_id.unwrap_or(-(i as i32) - 1));
                    if let Some(b) = &bar {
                        b.inc(1);
                    }
                    (l, r.recovery_point)
                })
                .collect();
            (topic.clone(), *partition, loaded)
        })
        .collect();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let controller = controller_view(&capture);
    let mut status = Status::Clean;
    let mut report = Report { partitions: Vec::new() };
    for (topic, partition, loaded) in parts {
        let mut replicas = Vec::new();
        for (l, recovery_point) in loaded {
            for p in &l.problems {
                out.diag(format_args!("klf: {p}"));
                status = Status::Corruption;
            }
            let mut t = timeline(&l.log);
            t.recovery_point = recovery_point;
            if !t.disagreements.is_empty() {
                status = Status::Corruption;
            }
            replicas.push(t);
        }
        let history = controller
            .as_ref()
            .and_then(|c| c.partitions.get(&(topic.clone(), partition)))
            .cloned();
        report.partitions.push(PartitionTimeline {
            topic,
            partition,
            replicas,
            controller: history,
        });
    }
    let res = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut *out.out(), &report)
            .map_err(std::io::Error::from)
            .and_then(|_| writeln!(out.out())),
        Format::Table => {
            let color = out.color;
            render(&report, color, out.out())
        }
    };
    match res {
        Ok(()) => status,
        Err(e) => status.worst(out.write_failed(e)),
    }
}

fn render(report: &Report, color: bool, w: &mut impl Write) -> std::io::Result<()> {
    for p in &report.partitions {
        if let Some(h) = &p.controller {
            writeln!(
                w,
                "{}-{}: controller's view (metadata log), replicas {:?}",
                p.topic, p.partition, h.replicas
            )?;
            let mut t = table(color);
            t.set_header(vec!["metadata offset", "leader", "leader epoch", "ISR", "recovery", "note"]);
            for e in &h.changes {
                let note = if e.unclean {
                    "UNCLEAN election"
                } else if e.leader_changed {
                    "leader elected"
                } else {
                    "ISR change"
                };
                t.add_row(vec![
                    cell(color, e.metadata_offset.to_string(), None),
                    cell(color, e.leader.to_string(), None),
                    cell(color, e.leader_epoch.to_string(), None),
                    cell(color, format!("{:?}", e.isr), None),
                    cell(
                        color,
                        if e.leader_recovery_state == 1 { "recovering" } else { "recovered" },
                        None,
                    ),
                    cell(color, note, e.unclean.then_some(Paint::Bad)),
                ]);
            }
            writeln!(w, "{t}")?;
        }
        for r in &p.replicas {
            writeln!(
                w,
                "{}-{} broker {}: log start {}, log end {}, high watermark {}, recovery point {}",
                p.topic,
                p.partition,
                r.broker,
                r.log_start_offset,
                r.log_end_offset,
                r.high_watermark.map_or("-".into(), |h| h.to_string()),
                r.recovery_point.map_or("-".into(), |h| h.to_string())
            )?;
            let mut t = table(color);
            t.set_header(vec![
                "epoch", "start", "end", "batches", "records", "first ts", "last ts", "checkpoint start",
            ]);
            for s in &r.from_batches {
                let cp = r
                    .checkpoint
                    .as_ref()
                    .and_then(|c| c.iter().find(|(e, _)| *e == s.epoch))
                    .map_or("-".into(), |(_, o)| o.to_string());
                t.add_row(vec![
                    s.epoch.to_string(),
                    s.start_offset.to_string(),
                    s.end_offset.to_string(),
                    s.batches.to_string(),
                    s.records.to_string(),
                    s.first_timestamp.to_string(),
                    s.last_timestamp.to_string(),
                    cp,
                ]);
            }
            for (e, o) in r.checkpoint.iter().flatten() {
                if !r.from_batches.iter().any(|s| s.epoch == *e) {
                    t.add_row(vec![
                        e.to_string(),
                        "-".into(),
                        "-".into(),
                        "0".into(),
                        "0".into(),
                        "-".into(),
                        "-".into(),
                        o.to_string(),
                    ]);
                }
            }
            writeln!(w, "{t}")?;
            for d in &r.disagreements {
                writeln!(w, "  {} {}: {}", paint(color, "!", Paint::Warn), d.code, d.message)?;
            }
            writeln!(w)?;
        }
    }
    Ok(())
}
