//! `klf diff`: where replicas of a partition part, what Kafka's truncation
//! cuts on each, what the partition loses (on no replica once every replica
//! follows the reference), and whether that had been committed.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{cell, paint, table, Output, Paint, Status};
use klf::analysis::diff::{DiffReport, FindingKind, PartitionDiff};
use klf::analysis::explain::{epoch_leaders, loss_headline, loss_story, story};
use klf::analysis::loss::{PartitionLoss, Verdict};
use klf::analysis::lost::{Bytes, LossSummary, LostRecord};
use klf::engine::records::{cut_records, lost_records, RecordList};
use klf::engine::{diff_capture, DiffRequest, PartitionResult, ReadMode};

/// Output formats of `klf diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table per partition.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
}

/// Which loss makes `klf diff` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Lost records that were or may have been committed (committed_possible
    /// > 0, or records whose commitment cannot be bounded).
    Committed,
    /// Any lost record.
    Any,
    /// Never for a loss (damaged segments still exit 1).
    Never,
}

impl FailOn {
    /// Whether `loss` fails the run.
    pub fn fails(self, loss: &PartitionLoss) -> bool {
        match self {
            FailOn::Committed => loss.possibly_committed_or_unknown() > 0,
            FailOn::Any => loss.any(),
            FailOn::Never => false,
        }
    }
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  nothing lost that --fail-on counts (default: no lost record was or may
     have been committed)
  1  a loss that --fail-on counts (default committed: committed_possible > 0,
     or lost records whose commitment cannot be bounded), or a segment could
     not be read whole (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, an unreadable archive, no partition
     with two or more replicas)
  A closed stdout (klf diff ... | head) does not change the status.

What is lost:
  A partition loses the records that no replica will hold once every
  replica has followed the reference (each follower's predicted truncation
  applied), counted once. Of those, committed_proven are below a high
  watermark some evidence shows (a replica's replication-offset-checkpoint,
  an offset a consumer group committed), committed_possible were held by
  every member of an ISR the metadata log records (an upper bound; null
  without a metadata log). Each fact used is listed in loss.evidence.

JSON output:
  With --format json, one document:
  {\"partitions\":[{\"topic\",\"partition\",\"reference\":{\"broker\",\"reason\",
  \"leader_epoch\"},\"loss\":{\"records\",\"control_records\",\"offsets\":[{\"start\",
  \"end\",\"records\",\"control_records\",\"leader_epoch\",\"held_by\",\"committed\"}],
  \"held_by\",\"committed_proven\",\"committed_possible\",\"committed_unknown\",
  \"verdict\",\"unknown\",\"leader_epochs\",\"producers\",\"first_timestamp\",
  \"last_timestamp\",\"replicas_not_captured\",\"evidence\":[{\"kind\",\"broker\",
  \"group\",\"offset\",\"leader_epoch\",\"isr\",\"metadata_offset\",\"time\",\"file\",
  \"records\",\"detail\"}]},\"replicas\":[{\"broker\",\"log_end_offset\",
  \"high_watermark\",\"latest_epoch\",\"divergence_offset\",\"truncation_offset\",
  \"hw_truncation_offset\",\"records_to_truncate\",
  \"committed_records_to_truncate\",\"records_only_here\",\"truncation_rounds\",
  \"findings\"}],\"findings\":[...]}]}
  With --records, loss also has \"lost_records\" and \"lost_records_omitted\",
  and each replica \"lost_records\", \"lost_records_omitted\" and
  \"lost_summary\" (which counts every record, however many are listed).
  Each partition has \"scan\":{\"mode\":\"window\"|\"full\",\"window_start\",
  \"full_reason\",\"bytes_read\",\"log_bytes\"}: what was read (see --verify).
  man klf-diff and the README describe every field.

",
    super::common::inputs_help!(),
    "\
Examples:
  klf diff capture/ --explain
  klf diff broker-1 broker-2 broker-3 --topic orders --format json
  klf diff capture.tar.gz --records --records-limit 50
  klf diff capture/ --verify
  klf diff capture/ --fail-on any
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
    /// Tell each partition's story in plain words, with the evidence of the
    /// loss figures (table format)
    #[arg(long)]
    explain: bool,
    /// List the records the partition loses and those each replica's
    /// truncation cuts (offset, epoch, timestamp, producer id/epoch/sequence,
    /// key, value size, committed), with a summary by producer and time range
    #[arg(long)]
    records: bool,
    /// Read every batch of every replica and compare the shared prefix batch
    /// by batch (default: read only the window where replicas can differ,
    /// from the lowest high watermark, log end or epoch disagreement on)
    #[arg(long)]
    verify: bool,
    /// With --records: list at most this many records per list (the counts
    /// and summaries still cover every record)
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    records_limit: usize,
    /// Which loss exits 1: committed (lost records that were or may have
    /// been committed), any (any lost record), never
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = FailOn::Committed)]
    fail_on: FailOn,
}

/// Records read back for one partition: the partition's lost records, and
/// per broker the records its truncation cuts.
struct PartitionRecords {
    lost: RecordList,
    cut: BTreeMap<i32, RecordList>,
}

/// Runs `klf diff`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    let req = DiffRequest {
        leader: args.leader,
        topic: args.topic.clone(),
        partition: args.partition,
        mode: if args.verify { ReadMode::Full } else { ReadMode::Window },
        options: Default::default(),
    };
    let candidates = capture
        .partitions
        .keys()
        .filter(|(t, p)| {
            args.topic.as_ref().is_none_or(|x| x == t) && args.partition.is_none_or(|x| x == *p)
        })
        .filter(|k| capture.partitions.get(*k).is_some_and(|r| r.len() >= 2))
        .count();
    let bar = out.progress(candidates as u64, "{bar:40} {pos}/{len} partitions diffed");
    let run = diff_capture(&capture, &req, &|| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if run.partitions.is_empty() {
        if let Some((t, p)) = run.single_replica.first() {
            let name = format!("{t}-{p}");
            out.diag(format_args!(
                "klf: only one replica of {name} found; diff compares the replicas of a partition: \
                 pass the same partition directory from each broker (broker-1/{name} broker-2/{name} ...), \
                 the broker directories, or the folder holding them"
            ));
        } else {
            out.diag(format_args!(
                "klf: no partition with two or more replicas under the given paths \
                 (give the broker directories of one capture, or the folder holding them)"
            ));
        }
        return Status::Failure;
    }
    if let Some(c) = &run.evidence.controller {
        for p in &c.problems {
            out.diag(format_args!("klf: metadata log: {p}"));
        }
    }
    let mut problems = false;
    for p in &run.partitions {
        for pr in &p.problems {
            problems = true;
            out.diag(format_args!("klf: {pr}"));
        }
    }
    if let Some(g) = run.evidence.groups_read() {
        for pr in &g.problems {
            out.diag(format_args!("klf: __consumer_offsets: {pr}"));
        }
    }
    // The records behind the figures, read from the segments.
    let mut records: Vec<Option<PartitionRecords>> = Vec::new();
    for p in &run.partitions {
        if !args.records {
            records.push(None);
            continue;
        }
        let reps = run.replicas(p);
        let ids = klf::engine::broker_ids(reps);
        let lost = lost_records(reps, &p.loss, args.records_limit);
        let mut cut = BTreeMap::new();
        for r in &p.diff.replicas {
            if r.truncation_offset >= r.log_end_offset {
                continue;
            }
            let Some(i) = ids.iter().position(|b| *b == r.broker) else {
                continue;
            };
            cut.insert(r.broker, cut_records(&reps[i], r, &p.loss, args.records_limit));
        }
        for pr in lost.problems.iter().chain(cut.values().flat_map(|c| &c.problems)) {
            out.diag(format_args!("klf: {pr}"));
        }
        records.push(Some(PartitionRecords { lost, cut }));
    }
    // The status is settled before anything is written: a reader that
    // closes the pipe early does not change it.
    let lossy = run.partitions.iter().any(|p| args.fail_on.fails(&p.loss));
    let status = if lossy || problems {
        Status::Corruption
    } else {
        Status::Clean
    };
    let res = match args.format {
        Format::Json => write_json(&run.partitions, &records, out.out()),
        Format::Table => {
            let leaders: Vec<BTreeMap<i32, (i32, bool)>> = run
                .partitions
                .iter()
                .map(|p| epoch_leaders(run.evidence.history(&p.diff.topic, p.diff.partition)))
                .collect();
            let color = out.color;
            render_table(&run.partitions, args.explain, &leaders, &records, color, out.out())
        }
    };
    if let Err(e) = res {
        return status.worst(out.write_failed(e));
    }
    status
}

fn write_json(
    parts: &[PartitionResult],
    records: &[Option<PartitionRecords>],
    w: &mut impl Write,
) -> std::io::Result<()> {
    let report = DiffReport {
        partitions: parts.iter().map(|p| p.diff.clone()).collect(),
    };
    let mut v = serde_json::to_value(&report).unwrap_or_default();
    let Some(list) = v["partitions"].as_array_mut() else {
        return Err(std::io::Error::other("diff report is not a list"));
    };
    for (i, jp) in list.iter_mut().enumerate() {
        let (Some(p), Some(obj)) = (parts.get(i), jp.as_object_mut()) else {
            continue;
        };
        let mut loss = serde_json::to_value(&p.loss).unwrap_or_default();
        if let Some(Some(r)) = records.get(i) {
            loss["lost_records"] = serde_json::to_value(&r.lost.records).unwrap_or_default();
            loss["lost_records_omitted"] = r.lost.omitted.into();
            if let Some(reps) = obj.get_mut("replicas").and_then(|x| x.as_array_mut()) {
                for jr in reps {
                    let Some(b) = jr["broker"].as_i64().and_then(|b| i32::try_from(b).ok()) else {
                        continue;
                    };
                    if let Some(c) = r.cut.get(&b) {
                        jr["lost_records"] = serde_json::to_value(&c.records).unwrap_or_default();
                        jr["lost_records_omitted"] = c.omitted.into();
                        jr["lost_summary"] = serde_json::to_value(&c.summary).unwrap_or_default();
                    }
                }
            }
        }
        obj.insert("loss".into(), loss);
    }
    serde_json::to_writer_pretty(&mut *w, &v).map_err(std::io::Error::from)?;
    writeln!(w)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

fn render_table(
    parts: &[PartitionResult],
    explain: bool,
    leaders: &[BTreeMap<i32, (i32, bool)>],
    records: &[Option<PartitionRecords>],
    color: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    for (i, part) in parts.iter().enumerate() {
        let p = &part.diff;
        writeln!(
            w,
            "{}-{}: reference broker {} ({})",
            sanitize(&p.topic),
            p.partition,
            p.reference.broker,
            reason_text(p)
        )?;
        let headline_paint = match part.loss.verdict {
            Verdict::NothingLost => None,
            Verdict::UncommittedLost => Some(Paint::Warn),
            _ => Some(Paint::Bad),
        };
        let headline = loss_headline(&part.loss);
        match headline_paint {
            Some(pt) => writeln!(w, "  {}", paint(color, &headline, pt))?,
            None => writeln!(w, "  {headline}")?,
        }
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
            // The pre-0.11 counterfactual is the "HW-only truncation"
            // column, not a finding that outranks the real loss.
            for f in r
                .findings
                .iter()
                .filter(|f| f.kind != FindingKind::HighWatermarkTruncationCutsCommittedRecords)
            {
                findings
                    .entry(format!("broker {}", r.broker))
                    .or_default()
                    .push(format!("{:?}: {}", f.kind, f.detail));
            }
        }
        for (who, fs) in &findings {
            for f in fs {
                writeln!(w, "  {} {who}: {}", paint(color, "!", Paint::Warn), sanitize(f))?;
            }
        }
        if explain {
            for line in loss_story(&part.loss) {
                writeln!(w, "  {}", sanitize(&line))?;
            }
            let none = BTreeMap::new();
            for line in story(p, leaders.get(i).unwrap_or(&none)) {
                writeln!(w, "  {line}")?;
            }
        }
        if let Some(Some(rec)) = records.get(i) {
            render_lost("the partition loses", &rec.lost, color, w)?;
            for r in &p.replicas {
                if let Some(c) = rec.cut.get(&r.broker) {
                    render_lost(&format!("broker {}'s truncation cuts", r.broker), c, color, w)?;
                }
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

fn render_lost(what: &str, list: &RecordList, color: bool, w: &mut impl Write) -> std::io::Result<()> {
    let summary: &LossSummary = &list.summary;
    let records: &[LostRecord] = &list.records;
    writeln!(
        w,
        "  records {what}: {} ({} control), timestamps {} .. {}",
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
        "committed",
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
            r.committed.map_or("-".into(), |c| c.name().to_string()),
        ]);
    }
    writeln!(w, "{t}")?;
    if list.omitted > 0 {
        writeln!(
            w,
            "    {} more not shown (--records-limit); the counts above cover them",
            list.omitted
        )?;
    }
    Ok(())
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
