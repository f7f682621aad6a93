//! `klf diff` output: the tables, and the JSON wire types (the schema of
//! `--format json` and `jsonl`, written here field by field so that it moves
//! only when this file does, not when an analysis struct does).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use crate::render::text::Utc;

use crate::analysis::diff::{
    Finding, FindingKind, PartitionDiff, ProtocolSource, ReplicaDiff, ScanInfo,
};
use crate::analysis::epochs::EpochEntry;
use crate::analysis::explain::{loss_headline, loss_story, protocol_line, story};
use crate::analysis::loss::{
    EpochLoss, Evidence, LostRange, PartitionLoss, ProducerBatchLoss, UnknownBound, Verdict,
};
use crate::analysis::lost::{LossSummary, LostRecord};
use crate::analysis::truncation::Round;
use crate::engine::records::{PartitionRecords, RecordList};
use crate::engine::PartitionResult;
use crate::model::Bytes;
use crate::render::style::{cell, paint, Look, Paint, Sheet};
use crate::render::text::{human_time, sanitize, JsonSafe};

/// `{"partitions": [...]}`: the `--format json` document.
#[derive(Serialize)]
pub struct DiffDocument<'a> {
    /// One per partition with two or more replicas.
    pub partitions: Vec<Utc<DiffPartition<'a>>>,
}

/// One partition (a `jsonl` line has `"type": "partition"` first).
#[derive(Serialize)]
pub struct DiffPartition<'a> {
    /// `"partition"` in `jsonl`; absent in the document.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// The reference replica.
    pub reference: Reference,
    /// What the partition loses.
    pub loss: Loss<'a>,
    /// Per replica.
    pub replicas: Vec<Replica<'a>>,
    /// Findings about the partition as a whole.
    pub findings: Vec<FindingOut<'a>>,
    /// The truncation protocol modelled.
    pub truncation_protocol: TruncationProtocol,
    /// What was read.
    pub scan: Option<&'a ScanInfo>,
    /// Brokers whose replica could not be read, left out of the diff and
    /// the loss (`[]` when none).
    pub left_out: &'a [i32],
}

/// The truncation protocol a diff modelled, where it comes from, and the
/// alternative predicted beside an assumed one.
#[derive(Serialize)]
pub struct TruncationProtocol {
    /// `diverging_epoch`, `offsets_for_leader_epoch`,
    /// `offsets_for_leader_epoch_v0`, `high_watermark`.
    pub protocol: serde_json::Value,
    /// `given` (`--inter-broker-protocol`), `kraft`, `assumed`.
    pub source: &'static str,
    /// With `assumed`: the other protocol predicted (each replica's
    /// `alternative_truncation_offset`), else `null`.
    pub alternative: serde_json::Value,
    /// `kraft`, `zookeeper`, `mixed`, `unknown`: the cluster's mode as the
    /// capture shows it.
    pub cluster_mode: &'static str,
}

/// The reference replica and the rule that chose it.
#[derive(Serialize)]
pub struct Reference {
    /// Broker id (`-1`: no replica).
    pub broker: i32,
    /// `explicit`, `metadata_leader`, `highest_latest_epoch`, `longest_log`,
    /// `ambiguous`, `no_replicas`.
    pub reason: serde_json::Value,
    /// The leader epoch it leads in.
    pub leader_epoch: Option<i32>,
}

/// A finding: one code, its detail.
#[derive(Serialize)]
pub struct FindingOut<'a> {
    /// The code.
    pub code: &'static str,
    /// In words.
    pub detail: &'a str,
}

/// The partition's loss.
#[derive(Serialize)]
pub struct Loss<'a> {
    /// Data records lost.
    pub records: u64,
    /// Control records lost.
    pub control_records: u64,
    /// Half-open ranges.
    pub offsets: &'a [LostRange],
    /// Replicas holding lost records.
    pub held_by: &'a [i32],
    /// Proven committed.
    pub committed_proven: u64,
    /// Possibly committed; `null` when unknown.
    pub committed_possible: Option<u64>,
    /// Neither proven nor bounded.
    pub committed_unknown: u64,
    /// The verdict.
    pub verdict: Verdict,
    /// Bounds not computed, and why.
    pub unknown: &'a [UnknownBound],
    /// Per leader epoch.
    pub leader_epochs: &'a [EpochLoss],
    /// Per producer.
    pub producers: &'a [ProducerBatchLoss],
    /// Earliest batch timestamp.
    pub first_timestamp: Option<i64>,
    /// Latest batch timestamp.
    pub last_timestamp: Option<i64>,
    /// Assigned replicas not in the capture.
    pub replicas_not_captured: &'a [i32],
    /// The evidence.
    pub evidence: &'a [Evidence],
    /// With `--records`: the lost records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records: Option<&'a [LostRecord]>,
    /// With `--records`: how many more were counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records_omitted: Option<u64>,
}

/// One replica.
#[derive(Serialize)]
pub struct Replica<'a> {
    /// Broker id.
    pub broker: i32,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// High watermark used.
    pub high_watermark: Option<i64>,
    /// Latest leader epoch.
    pub latest_epoch: Option<i32>,
    /// The epoch cache the model used.
    pub epoch_cache: &'a [EpochEntry],
    /// First offset where it parts from the reference.
    pub divergence_offset: Option<i64>,
    /// `identical`, `prefix`, `extends`, `diverged`, `disjoint`, `reference`.
    pub divergence_kind: serde_json::Value,
    /// Where Kafka truncates it.
    pub truncation_offset: i64,
    /// The truncation protocol modelled.
    pub protocol: serde_json::Value,
    /// Where Kafka truncates it under the partition's
    /// `truncation_protocol.alternative`; `null` when there is none.
    pub alternative_truncation_offset: Option<i64>,
    /// Where pre-0.11 high-watermark truncation would cut.
    pub hw_truncation_offset: i64,
    /// Records cut.
    pub records_to_truncate: i64,
    /// Of those, below a high watermark of a replica holding them.
    pub committed_records_to_truncate: i64,
    /// Of those, on no other replica.
    pub records_only_here: i64,
    /// Records high-watermark truncation would cut.
    pub hw_records_to_truncate: i64,
    /// Of those, committed.
    pub hw_committed_records_to_truncate: i64,
    /// Control records cut.
    pub control_records_to_truncate: i64,
    /// How the prediction ended.
    pub truncation_outcome: serde_json::Value,
    /// The protocol's rounds.
    pub truncation_rounds: &'a [Round],
    /// Findings about this replica.
    pub findings: Vec<FindingOut<'a>>,
    /// With `--records`: the records its truncation cuts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records: Option<&'a [LostRecord]>,
    /// With `--records`: how many more were counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records_omitted: Option<u64>,
    /// With `--records`: every cut record, summarised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_summary: Option<&'a LossSummary>,
}

fn value<T: Serialize>(v: T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

fn findings(fs: &[Finding]) -> Vec<FindingOut<'_>> {
    fs.iter()
        .map(|f| FindingOut {
            code: f.kind.code(),
            detail: &f.detail,
        })
        .collect()
}

fn replica<'a>(r: &'a ReplicaDiff, cut: Option<&'a RecordList>) -> Replica<'a> {
    Replica {
        broker: r.broker,
        log_start_offset: r.log_start_offset,
        log_end_offset: r.log_end_offset,
        high_watermark: r.high_watermark,
        latest_epoch: r.latest_epoch,
        epoch_cache: &r.epoch_cache,
        divergence_offset: r.divergence_offset,
        divergence_kind: value(r.divergence_kind),
        truncation_offset: r.truncation_offset,
        protocol: value(r.protocol),
        alternative_truncation_offset: r.alternative_truncation_offset,
        hw_truncation_offset: r.hw_truncation_offset,
        records_to_truncate: r.records_to_truncate,
        committed_records_to_truncate: r.committed_records_to_truncate,
        records_only_here: r.records_only_here,
        hw_records_to_truncate: r.hw_records_to_truncate,
        hw_committed_records_to_truncate: r.hw_committed_records_to_truncate,
        control_records_to_truncate: r.control_records_to_truncate,
        truncation_outcome: value(r.truncation_outcome),
        truncation_rounds: &r.truncation_rounds,
        findings: findings(&r.findings),
        lost_records: cut.map(|c| c.records.as_slice()),
        lost_records_omitted: cut.map(|c| c.omitted),
        lost_summary: cut.map(|c| &c.summary),
    }
}

fn loss<'a>(l: &'a PartitionLoss, lost: Option<&'a RecordList>) -> Loss<'a> {
    Loss {
        records: l.records,
        control_records: l.control_records,
        offsets: &l.offsets,
        held_by: &l.held_by,
        committed_proven: l.committed_proven,
        committed_possible: l.committed_possible,
        committed_unknown: l.committed_unknown,
        verdict: l.verdict,
        unknown: &l.unknown,
        leader_epochs: &l.leader_epochs,
        producers: &l.producers,
        first_timestamp: l.first_timestamp,
        last_timestamp: l.last_timestamp,
        replicas_not_captured: &l.replicas_not_captured,
        evidence: &l.evidence,
        lost_records: lost.map(|c| c.records.as_slice()),
        lost_records_omitted: lost.map(|c| c.omitted),
    }
}

/// The wire form of one partition's diff.
pub fn partition<'a>(
    p: &'a PartitionResult,
    records: Option<&'a PartitionRecords>,
    line: bool,
) -> DiffPartition<'a> {
    let d: &PartitionDiff = &p.diff;
    DiffPartition {
        kind: line.then_some("partition"),
        topic: &d.topic,
        partition: d.partition,
        reference: Reference {
            broker: d.reference.broker,
            reason: value(d.reference.reason),
            leader_epoch: d.reference.leader_epoch,
        },
        loss: loss(&p.loss, records.map(|r| &r.lost)),
        replicas: d
            .replicas
            .iter()
            .map(|r| replica(r, records.and_then(|x| x.cut.get(&r.broker))))
            .collect(),
        findings: findings(&d.findings),
        truncation_protocol: TruncationProtocol {
            protocol: value(d.protocol.protocol),
            source: d.protocol.source.code(),
            alternative: value(d.protocol.alternative),
            cluster_mode: d.protocol.mode.code(),
        },
        scan: d.scan.as_ref(),
        left_out: &p.left_out,
    }
}

/// `--format json` (one pretty document) or `jsonl` (one partition per
/// line).
pub fn write_json(
    parts: &[PartitionResult],
    records: &[Option<PartitionRecords>],
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let w = &mut JsonSafe(w);
    let w = &mut JsonSafe(w);
    let rec = |i: usize| records.get(i).and_then(Option::as_ref);
    if lines {
        for (i, p) in parts.iter().enumerate() {
            crate::render::text::write_value(&mut *w, false, &partition(p, rec(i), true))
                .map_err(std::io::Error::from)?;
            writeln!(w)?;
        }
        return Ok(());
    }
    let doc = DiffDocument {
        partitions: parts
            .iter()
            .enumerate()
            .map(|(i, p)| Utc(partition(p, rec(i), false)))
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(std::io::Error::from)?;
    writeln!(w)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

fn reason_text(p: &PartitionDiff) -> String {
    serde_json::to_value(p.reference.reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
        .replace('_', " ")
}

/// The tables of `klf diff`: per partition its loss, the replicas, the
/// findings, with `explain` the story, and the records read back.
pub fn write_table(
    parts: &[PartitionResult],
    explain: bool,
    leaders: &[BTreeMap<i32, (i32, bool)>],
    records: &[Option<PartitionRecords>],
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
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
        if !part.left_out.is_empty() {
            let brokers: Vec<String> = part.left_out.iter().map(i32::to_string).collect();
            writeln!(
                w,
                "  {}",
                paint(
                    color,
                    &format!(
                        "broker {} left out: a file could not be read (see above); what follows is the other replicas'",
                        brokers.join(", ")
                    ),
                    Paint::Bad
                )
            )?;
        }
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
        if p.protocol.source == ProtocolSource::Assumed && !explain {
            // what the capture cannot say, under the headline (--explain
            // tells it in the story)
            writeln!(w, "  {}", sanitize(&protocol_line(p)))?;
        }
        let mut t = Sheet::new(look);
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
                .push(format!("{}: {}", f.kind.code(), f.detail));
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
                    .push(format!("{}: {}", f.kind.code(), f.detail));
            }
        }
        for (who, fs) in &findings {
            for f in fs {
                writeln!(
                    w,
                    "  {} {who}: {}",
                    paint(color, "!", Paint::Warn),
                    sanitize(f)
                )?;
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
            write_lost("the partition loses", &rec.lost, look, w)?;
            for r in &p.replicas {
                if let Some(c) = rec.cut.get(&r.broker) {
                    write_lost(
                        &format!("broker {}'s truncation cuts", r.broker),
                        c,
                        look,
                        w,
                    )?;
                }
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

fn write_lost(
    what: &str,
    list: &RecordList,
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let summary: &LossSummary = &list.summary;
    let records: &[LostRecord] = &list.records;
    writeln!(
        w,
        "  records {what}: {} ({} control), timestamps {} .. {}",
        summary.records,
        summary.control_records,
        summary.first_timestamp.map_or("-".into(), human_time),
        summary.last_timestamp.map_or("-".into(), human_time)
    )?;
    for p in &summary.by_producer {
        writeln!(
            w,
            "    producer {} (epochs {:?}): {} records, offsets [{}, {}), sequences {} to {}",
            p.producer_id,
            p.producer_epochs,
            p.records,
            p.first_offset,
            p.last_offset.saturating_add(1),
            p.first_sequence,
            p.last_sequence
        )?;
    }
    let mut t = Sheet::new(look);
    t.set_header(vec![
        "offset",
        "epoch",
        "time (UTC, epoch ms)",
        "producer",
        "p.epoch",
        "sequence",
        "key",
        "value bytes",
        "committed",
    ]);
    for r in records {
        let key = match &r.key {
            None => "null".to_string(),
            Some(Bytes::Text(s)) => sanitize(s).into_owned(),
            Some(Bytes::Base64(b)) => format!("base64:{b}"),
        };
        t.add_row(vec![
            r.offset.to_string(),
            r.epoch.to_string(),
            human_time(r.timestamp),
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
