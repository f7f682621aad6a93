//! `klf diff`: where replicas of a partition part, what Kafka's truncation
//! cuts on each, and whether committed records are among the cut.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;
use rayon::prelude::*;

use super::common::{cell, paint, table, Output, Paint, Status};
use klf::analysis::diff::{DiffOptions, DiffReport, PartitionDiff};
use klf::capture::controller::{controller_view, reference_hint};
use klf::analysis::explain::{epoch_leaders, story};
use klf::analysis::lost::{summarize, Bytes, LossSummary, LostRecord};
use klf::capture::replica::records_in_range;
use klf::capture::scan::{diff_replicas, ReadMode};

/// Output formats of `klf diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table per partition.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  nothing lost
  1  a replica would lose committed records, or a segment could not be read
     whole (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, an unreadable archive, no partition
     with two or more replicas)

JSON output:
  With --format json, one document:
  {\"partitions\":[{\"topic\",\"partition\",\"reference\":{\"broker\",\"reason\",
  \"leader_epoch\"},\"replicas\":[{\"broker\",\"log_end_offset\",\"high_watermark\",
  \"latest_epoch\",\"divergence_offset\",\"truncation_offset\",
  \"hw_truncation_offset\",\"records_to_truncate\",
  \"committed_records_to_truncate\",\"records_only_here\",\"truncation_rounds\",
  \"findings\"}],\"findings\":[...]}]}
  With --records each replica also has \"lost_records\" and \"lost_summary\".
  Each partition has \"scan\":{\"mode\":\"window\"|\"full\",\"window_start\",
  \"full_reason\",\"bytes_read\",\"log_bytes\"}: what was read (see --verify).
  README.md describes every field.

",
    super::common::inputs_help!(),
    "\
Examples:
  klf diff capture/ --explain
  klf diff broker-1 broker-2 broker-3 --topic orders --format json
  klf diff capture.tar.gz --records --records-limit 50
  klf diff capture/ --verify
"
);


/// Compare the replicas of each partition: divergence, predicted truncation, records lost
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
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
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Tell each partition's story in plain words (table format)
    #[arg(long)]
    explain: bool,
    /// List the records each replica's truncation cuts (offset, epoch,
    /// timestamp, producer id/epoch/sequence, key, value size), with a
    /// summary by producer and time range
    #[arg(long)]
    records: bool,
    /// Read every batch of every replica and compare the shared prefix batch
    /// by batch (default: read only the window where replicas can differ,
    /// from the lowest high watermark, log end or epoch disagreement on)
    #[arg(long)]
    verify: bool,
    /// With --records: at most this many records per replica
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    records_limit: usize,
}

/// Runs `klf diff`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    let mut wanted: Vec<(&(String, i32), &Vec<_>)> = capture
        .partitions
        .iter()
        .filter(|((t, p), _)| {
            args.topic.as_ref().is_none_or(|x| x == t) && args.partition.is_none_or(|x| x == *p)
        })
        .collect();
    let single: Vec<String> = wanted
        .iter()
        .filter(|(_, reps)| reps.len() == 1)
        .map(|((t, p), _)| format!("{t}-{p}"))
        .collect();
    wanted.retain(|(_, reps)| reps.len() >= 2);
    if wanted.is_empty() && !single.is_empty() {
        out.diag(format_args!(
            "klf: only one replica of {} found; diff compares the replicas of a partition: \
             pass the same partition directory from each broker (broker-1/{0} broker-2/{0} ...), \
             the broker directories, or the folder holding them",
            single.first().map(String::as_str).unwrap_or_default()
        ));
        return Status::Failure;
    }
    if wanted.is_empty() {
        out.diag(format_args!(
            "klf: no partition with two or more replicas under the given paths \
             (give the broker directories of one capture, or the folder holding them)"
        ));
        return Status::Failure;
    }
    // The controller's view, when the capture holds a metadata log: the
    // leader at capture time is the reference unless --leader says otherwise.
    let controller = if args.leader.is_none() {
        controller_view(&capture)
    } else {
        None
    };
    if let Some(c) = &controller {
        for p in &c.problems {
            out.diag(format_args!("klf: metadata log: {p}"));
        }
    }
    let reference_for = |topic: &str, partition: i32| {
        let history = controller
            .as_ref()
            .and_then(|c| c.partitions.get(&(topic.to_string(), partition)));
        reference_hint(args.leader, history)
    };
    // Read and diff every partition in parallel, keep the order.
    let mode = if args.verify { ReadMode::Full } else { ReadMode::Window };
    let bar = out.progress(wanted.len() as u64, "{bar:40} {pos}/{len} partitions diffed");
    let scanned: Vec<_> = wanted
        .par_iter()
        .map(|((topic, partition), reps)| {
            let ids: Vec<i32> = reps
                .iter()
                .enumerate()
                .map(|(i, r)| r.node_id.unwrap_or(-(i as i32) - 1))
                .collect();
            let reference = reference_for(topic, *partition);
            let d =
                diff_replicas(topic, *partition, reps, &ids, reference, &DiffOptions::default(), mode);
            if let Some(b) = &bar {
                b.inc(1);
            }
            d
        })
        .collect();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let mut problems = false;
    let mut report = DiffReport { partitions: Vec::new() };
    for s in scanned {
        for p in &s.problems {
            problems = true;
            out.diag(format_args!("klf: {p}"));
        }
        report.partitions.push(s.diff);
    }
    // The records each truncation cuts, read from the replica's segments.
    let mut lost: BTreeMap<(usize, i32), (Vec<LostRecord>, LossSummary)> = BTreeMap::new();
    if args.records {
        for (i, p) in report.partitions.iter().enumerate() {
            let reps = wanted[i].1;
            for (j, r) in p.replicas.iter().enumerate() {
                if r.truncation_offset >= r.log_end_offset {
                    continue;
                }
                let Some(rep) = reps
                    .iter()
                    .enumerate()
                    .find(|(k, x)| x.node_id.unwrap_or(-(*k as i32) - 1) == r.broker)
                    .map(|(_, x)| x)
                    .or_else(|| reps.get(j))
                else {
                    continue;
                };
                let (records, problems) = records_in_range(
                    rep,
                    r.truncation_offset,
                    r.log_end_offset,
                    args.records_limit,
                );
                for pr in problems {
                    out.diag(format_args!("klf: {pr}"));
                }
                let summary = summarize(&records);
                lost.insert((i, r.broker), (records, summary));
            }
        }
    }
    let res = match args.format {
        Format::Json => {
            let mut v = serde_json::to_value(&report).unwrap_or_default();
            for ((i, broker), (records, summary)) in &lost {
                if let Some(reps) = v["partitions"][*i]["replicas"].as_array_mut() {
                    for r in reps {
                        if r["broker"].as_i64() == Some(i64::from(*broker)) {
                            r["lost_records"] = serde_json::to_value(records).unwrap_or_default();
                            r["lost_summary"] = serde_json::to_value(summary).unwrap_or_default();
                        }
                    }
                }
            }
            serde_json::to_writer_pretty(&mut *out.out(), &v)
                .map_err(std::io::Error::from)
                .and_then(|_| writeln!(out.out()))
        }
        Format::Table => {
            // Who led each epoch, from the metadata log, for the story.
            let leaders: Vec<BTreeMap<i32, (i32, bool)>> = report
                .partitions
                .iter()
                .map(|p| {
                    epoch_leaders(
                        controller
                            .as_ref()
                            .and_then(|c| c.partitions.get(&(p.topic.clone(), p.partition))),
                    )
                })
                .collect();
            let color = out.color;
            render_table(&report, args.explain, &leaders, &lost, color, out.out())
        }
    };
    if let Err(e) = res {
        return out.write_failed(e);
    }
    let loss = report
        .partitions
        .iter()
        .flat_map(|p| &p.replicas)
        .any(|r| r.committed_records_to_truncate > 0);
    if loss || problems {
        Status::Corruption
    } else {
        Status::Clean
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

type Lost = BTreeMap<(usize, i32), (Vec<LostRecord>, LossSummary)>;

fn render_table(
    report: &DiffReport,
    explain: bool,
    leaders: &[BTreeMap<i32, (i32, bool)>],
    lost: &Lost,
    color: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    for (i, p) in report.partitions.iter().enumerate() {
        writeln!(
            w,
            "{}-{}: reference broker {} ({})",
            p.topic,
            p.partition,
            p.reference.broker,
            reason_text(p)
        )?;
        let mut t = table(color);
        t.set_header(vec![
            "broker",
            "log end",
            "high watermark",
            "latest epoch",
            "diverges at",
            "truncates to",
            "HW-only truncation",
            "records cut",
            "committed cut",
            "only here",
        ]);
        for r in &p.replicas {
            let loss = (r.committed_records_to_truncate > 0).then_some(Paint::Bad);
            let cut = (r.records_to_truncate > 0).then_some(Paint::Warn);
            t.add_row(vec![
                cell(color, r.broker.to_string(), None),
                cell(color, r.log_end_offset.to_string(), None),
                cell(color, opt(r.high_watermark), None),
                cell(color, opt(r.latest_epoch), None),
                cell(color, opt(r.divergence_offset), None),
                cell(color, r.truncation_offset.to_string(), None),
                cell(color, r.hw_truncation_offset.to_string(), None),
                cell(color, r.records_to_truncate.to_string(), cut),
                cell(color, r.committed_records_to_truncate.to_string(), loss),
                cell(color, r.records_only_here.to_string(), None),
            ]);
        }
        writeln!(w, "{t}")?;
        let mut findings: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for f in &p.findings {
            findings
                .entry("partition".into())
                .or_default()
                .push(format!("{:?}: {}", f.kind, f.detail));
        }
        for r in &p.replicas {
            for f in &r.findings {
                findings
                    .entry(format!("broker {}", r.broker))
                    .or_default()
                    .push(format!("{:?}: {}", f.kind, f.detail));
            }
        }
        for (who, fs) in &findings {
            for f in fs {
                writeln!(w, "  {} {who}: {f}", paint(color, "!", Paint::Warn))?;
            }
        }
        if explain {
            let none = BTreeMap::new();
            for line in story(p, leaders.get(i).unwrap_or(&none)) {
                writeln!(w, "  {line}")?;
            }
        }
        for r in &p.replicas {
            if let Some((records, summary)) = lost.get(&(i, r.broker)) {
                render_lost(r.broker, records, summary, color, w)?;
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

fn render_lost(
    broker: i32,
    records: &[LostRecord],
    summary: &LossSummary,
    color: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    writeln!(
        w,
        "  records broker {broker} loses: {} ({} control), timestamps {} .. {}",
        summary.records,
        summary.control_records,
        opt(summary.first_timestamp),
        opt(summary.last_timestamp)
    )?;
    for p in &summary.by_producer {
        writeln!(
            w,
            "    producer {} (epochs {:?}): {} records, offsets {}..={}, sequences {}..={}",
            p.producer_id,
            p.producer_epochs,
            p.records,
            p.first_offset,
            p.last_offset,
            p.first_sequence,
            p.last_sequence
        )?;
    }
    let mut t = table(color);
    t.set_header(vec![
        "offset", "epoch", "timestamp", "producer", "p.epoch", "sequence", "key", "value bytes",
    ]);
    for r in records {
        let key = match &r.key {
            None => "null".to_string(),
            Some(Bytes::Text(s)) => sanitize(s),
            Some(Bytes::Base64(b)) => format!("base64:{b}"),
        };
        t.add_row(vec![
            r.offset.to_string(),
            r.epoch.to_string(),
            r.timestamp.to_string(),
            r.producer_id.to_string(),
            r.producer_epoch.to_string(),
            r.sequence.to_string(),
            key,
            r.value_size.map_or("null".into(), |v| v.to_string()),
        ]);
    }
    writeln!(w, "{t}")
}

/// Keys are untrusted: no terminal control characters reach the screen.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

fn reason_text(p: &PartitionDiff) -> String {
    serde_json::to_value(p.reference.reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
        .replace('_', " ")
}
