//! `klf diff` output: the tables, and the JSON wire types (the schema of
//! `--format json` and `jsonl`, written here field by field so that it moves
//! only when this file does, not when a model struct does), of the
//! partitions the engine diffed ([`DiffedPartition`]).

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use crate::render::json;

use crate::format::text::human_time;
use crate::model::diff::{
    DiffFinding, DiffedPartition, FindingKind, PartitionDiff, ProtocolSource, ReplicaDiff, ScanInfo,
};
use crate::model::loss::{
    EpochLoss, EvidenceKind, LossEvidence, LostRange, PartitionLoss, UnknownBound, Verdict,
    NOT_CAPTURED_WEAKENS,
};
use crate::model::records::{Bytes, LeftOut, LossSummary, LostRecord, ProducerLoss, RecordsRead};
use crate::model::truncation::{EpochStart, Round};
use crate::render::explain::{loss_story, protocol_line, story};
use crate::render::overview::loss_words;
use crate::render::style::{cell, paint, Look, Paint, Sheet};
use crate::render::text::sanitize;

/// `{"partitions": [...]}`: the `--format json` document.
#[derive(Serialize)]
pub struct DiffDocument<'a> {
    /// One per partition with two or more replicas.
    pub partitions: Vec<DiffPartition<'a>>,
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
    /// The truncations the brokers logged against klf's prediction: only
    /// when the capture holds the brokers' own logs.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub broker_log: &'a [crate::model::broker_log::TruncationCheck],
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
    pub unknown: Vec<UnknownOut>,
    /// Per leader epoch.
    pub leader_epochs: &'a [EpochLoss],
    /// Per producer.
    pub producers: Vec<ProducerOut<'a>>,
    /// Earliest batch timestamp.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: Option<i64>,
    /// Latest batch timestamp.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_timestamp: Option<i64>,
    /// Assigned replicas not in the capture.
    pub replicas_not_captured: &'a [i32],
    /// The evidence.
    pub evidence: Vec<EvidenceOut<'a>>,
    /// With `--records`: the lost records, read as they are written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records: Option<Streamed<'a>>,
    /// With `--records`: how many more were read (beyond the limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records_omitted: Option<After<'a, Omitted>>,
    /// With `--records`: the records counted that could not be read back,
    /// and where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records_left_out: Option<After<'a, LeftOutField>>,
}

/// A bound the loss could not compute, and why.
#[derive(Serialize)]
pub struct UnknownOut {
    /// `committed_possible`.
    pub bound: &'static str,
    /// Why, in words.
    pub reason: String,
}

/// The lost data records of one producer, from the batch headers.
#[derive(Serialize)]
pub struct ProducerOut<'a> {
    /// Producer id (`-1`: written without one).
    pub producer_id: i64,
    /// Producer epochs seen.
    pub producer_epochs: &'a [i16],
    /// Data records.
    pub records: u64,
    /// First lost offset.
    pub first_offset: i64,
    /// Last lost offset.
    pub last_offset: i64,
    /// Sequence of the first lost record (`-1`: not idempotent).
    pub first_sequence: i32,
    /// Sequence of the last lost record.
    pub last_sequence: i32,
    /// Whether any of its lost batches is transactional.
    pub transactional: bool,
}

/// One fact the loss's bounds used.
#[derive(Serialize)]
pub struct EvidenceOut<'a> {
    /// What kind of fact.
    pub kind: EvidenceKind,
    /// Broker it comes from.
    pub broker: Option<i32>,
    /// Consumer group (`consumer-group-commit`).
    pub group: Option<&'a str>,
    /// The offset the fact is about.
    pub offset: Option<i64>,
    /// Leader epoch (of a commit, of an ISR state).
    pub leader_epoch: Option<i32>,
    /// The ISR (`isr-state`, `isr-state-rules-out`).
    pub isr: Option<&'a [i32]>,
    /// Offset of the record in the metadata log.
    pub metadata_offset: Option<i64>,
    /// When (ms).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub time: Option<i64>,
    /// Where the fact was read.
    pub file: Option<&'a str>,
    /// Lost data records it proves committed or admits as possibly
    /// committed.
    pub records: u64,
    /// The fact in words.
    pub detail: String,
}

/// `lost_summary`: every cut record read, summarised.
#[derive(Serialize)]
pub struct SummaryOut<'a> {
    /// Records (control records included).
    pub records: u64,
    /// Control records among them.
    pub control_records: u64,
    /// Earliest timestamp.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: Option<i64>,
    /// Latest timestamp.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_timestamp: Option<i64>,
    /// Records per leader epoch.
    pub by_epoch: &'a BTreeMap<i32, u64>,
    /// Per producer.
    pub by_producer: Vec<SummaryProducerOut<'a>>,
}

/// The cut records of one producer, as read back.
#[derive(Serialize)]
pub struct SummaryProducerOut<'a> {
    /// Producer id (`-1`: written without one).
    pub producer_id: i64,
    /// Producer epochs seen, in the order read.
    pub producer_epochs: &'a [i16],
    /// Records.
    pub records: u64,
    /// First offset.
    pub first_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// Sequence of the first record (`-1`: not idempotent).
    pub first_sequence: i32,
    /// Sequence of the last record.
    pub last_sequence: i32,
    /// Earliest timestamp.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: i64,
    /// Latest timestamp.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_timestamp: i64,
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
    pub epoch_cache: &'a [EpochStart],
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
    /// Of those, data records no replica keeps (this replica's share of the
    /// partition's loss).
    pub lost_records_to_truncate: u64,
    /// Of the lost ones, proven committed (as the partition's
    /// `committed_proven`).
    pub committed_proven_to_truncate: u64,
    /// Of the lost ones, possibly committed (as the partition's
    /// `committed_possible`); `null` when some cannot be bounded.
    pub committed_possible_to_truncate: Option<u64>,
    /// Of those cut, below a high watermark a replica holding them
    /// checkpointed (a stale checkpoint proves less than was committed).
    pub checkpointed_records_to_truncate: i64,
    /// Of those, on no other replica.
    pub records_only_here: i64,
    /// Records high-watermark truncation would cut.
    pub hw_records_to_truncate: i64,
    /// Of those, below a checkpointed high watermark.
    pub hw_checkpointed_records_to_truncate: i64,
    /// Control records cut.
    pub control_records_to_truncate: i64,
    /// How the prediction ended.
    pub truncation_outcome: serde_json::Value,
    /// The protocol's rounds.
    pub truncation_rounds: &'a [Round],
    /// Findings about this replica.
    pub findings: Vec<FindingOut<'a>>,
    /// With `--records`: the records its truncation cuts, read as they are
    /// written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records: Option<Streamed<'a>>,
    /// With `--records`: how many more were read (beyond the limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records_omitted: Option<After<'a, Omitted>>,
    /// With `--records`: every cut record read, summarised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_summary: Option<After<'a, Summary>>,
    /// With `--records`: the records counted that could not be read back,
    /// and where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_records_left_out: Option<After<'a, LeftOutField>>,
}

/// Reads the record lists of the partitions being written, as they are
/// written (the command hands in the engine's readers): nothing is held
/// per record.
pub trait RecordLists {
    /// Streams the records partition `part` loses into `sink`.
    fn lost(
        &mut self,
        part: usize,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> std::io::Result<RecordsRead>;
    /// Streams the records broker `broker`'s truncation cuts in partition
    /// `part` into `sink`; `None` when it cuts nothing.
    fn cut(
        &mut self,
        part: usize,
        broker: i32,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> Option<std::io::Result<RecordsRead>>;
}

/// One list to read while it is written: which list, and once read, how
/// it ended (for the fields after it).
pub struct ListSlot<'a> {
    lists: &'a dyn RunList,
    part: usize,
    broker: Option<i32>,
    read: std::cell::RefCell<Option<RecordsRead>>,
}

/// The lists, shared by the slots that read them one after the other.
trait RunList {
    fn run(
        &self,
        part: usize,
        broker: Option<i32>,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> Option<std::io::Result<RecordsRead>>;
}

struct Shared<'r>(std::cell::RefCell<&'r mut dyn RecordLists>);

impl RunList for Shared<'_> {
    fn run(
        &self,
        part: usize,
        broker: Option<i32>,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> Option<std::io::Result<RecordsRead>> {
        let mut lists = self.0.borrow_mut();
        match broker {
            None => Some(lists.lost(part, sink)),
            Some(b) => lists.cut(part, b, sink),
        }
    }
}

impl<'a> ListSlot<'a> {
    fn new(lists: &'a dyn RunList, part: usize, broker: Option<i32>) -> ListSlot<'a> {
        ListSlot {
            lists,
            part,
            broker,
            read: std::cell::RefCell::new(None),
        }
    }

    /// Reads the list into `sink`; `None` when there is no list (a replica
    /// whose truncation cuts nothing).
    fn run(
        &self,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> Option<std::io::Result<RecordsRead>> {
        self.lists.run(self.part, self.broker, sink)
    }
}

/// A record list serialized as it is read.
pub struct Streamed<'a>(&'a ListSlot<'a>);

impl serde::Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(None)?;
        let mut failed: Option<S::Error> = None;
        let r = self.0.run(&mut |rec| {
            seq.serialize_element(rec).map_err(|e| {
                let m = e.to_string();
                failed = Some(e);
                std::io::Error::other(m)
            })
        });
        if let Some(e) = failed {
            return Err(e);
        }
        match r {
            Some(Ok(read)) => *self.0.read.borrow_mut() = Some(read),
            Some(Err(e)) => return Err(S::Error::custom(e)),
            None => {}
        }
        seq.end()
    }
}

/// A field whose value is known once the list before it was read.
pub struct After<'a, F>(&'a ListSlot<'a>, std::marker::PhantomData<F>);

/// What [`After`] takes from a list read.
pub trait FromRead {
    /// The value written.
    fn write<S: serde::Serializer>(read: Option<&RecordsRead>, s: S) -> Result<S::Ok, S::Error>;
}

/// `lost_records_omitted`.
pub struct Omitted;
/// `lost_summary`.
pub struct Summary;
/// `lost_records_left_out`.
pub struct LeftOutField;

impl FromRead for Omitted {
    fn write<S: serde::Serializer>(read: Option<&RecordsRead>, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&read.map_or(0, |r| r.omitted), s)
    }
}

impl FromRead for Summary {
    fn write<S: serde::Serializer>(read: Option<&RecordsRead>, s: S) -> Result<S::Ok, S::Error> {
        match read {
            Some(r) => serde::Serialize::serialize(&summary_out(&r.summary), s),
            None => serde::Serialize::serialize(&summary_out(&LossSummary::default()), s),
        }
    }
}

impl FromRead for LeftOutField {
    fn write<S: serde::Serializer>(read: Option<&RecordsRead>, s: S) -> Result<S::Ok, S::Error> {
        match read {
            Some(r) => serde::Serialize::serialize(&r.left_out, s),
            None => serde::Serialize::serialize(&LeftOut::default(), s),
        }
    }
}

impl<F: FromRead> serde::Serialize for After<'_, F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        F::write(self.0.read.borrow().as_ref(), s)
    }
}

fn after<'a, F>(slot: &'a ListSlot<'a>) -> Option<After<'a, F>> {
    Some(After(slot, std::marker::PhantomData))
}

fn value<T: Serialize>(v: T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

fn findings(fs: &[DiffFinding]) -> Vec<FindingOut<'_>> {
    fs.iter()
        .map(|f| FindingOut {
            code: f.kind.code(),
            detail: &f.detail,
        })
        .collect()
}

fn replica<'a>(r: &'a ReplicaDiff, cut: Option<&'a ListSlot<'a>>) -> Replica<'a> {
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
        lost_records_to_truncate: r.lost_cut,
        committed_proven_to_truncate: r.committed_proven_cut,
        committed_possible_to_truncate: r.committed_possible_cut,
        checkpointed_records_to_truncate: r.checkpointed_records_to_truncate,
        records_only_here: r.records_only_here,
        hw_records_to_truncate: r.hw_records_to_truncate,
        hw_checkpointed_records_to_truncate: r.hw_checkpointed_records_to_truncate,
        control_records_to_truncate: r.control_records_to_truncate,
        truncation_outcome: value(r.truncation_outcome),
        truncation_rounds: &r.truncation_rounds,
        findings: findings(&r.findings),
        lost_records: cut.map(Streamed),
        lost_records_omitted: cut.and_then(after),
        lost_summary: cut.and_then(after),
        lost_records_left_out: cut.and_then(after),
    }
}

fn loss<'a>(l: &'a PartitionLoss, lost: Option<&'a ListSlot<'a>>) -> Loss<'a> {
    Loss {
        records: l.records,
        control_records: l.control_records,
        offsets: &l.offsets,
        held_by: &l.held_by,
        committed_proven: l.committed_proven,
        committed_possible: l.committed_possible,
        committed_unknown: l.committed_unknown,
        verdict: l.verdict,
        unknown: l.unknown.iter().map(unknown_out).collect(),
        leader_epochs: &l.leader_epochs,
        producers: l.producers.iter().map(producer_out).collect(),
        first_timestamp: l.first_timestamp,
        last_timestamp: l.last_timestamp,
        replicas_not_captured: &l.replicas_not_captured,
        evidence: l.evidence.iter().map(evidence_out).collect(),
        lost_records: lost.map(Streamed),
        lost_records_omitted: lost.and_then(after),
        lost_records_left_out: lost.and_then(after),
    }
}

fn unknown_out(u: &UnknownBound) -> UnknownOut {
    UnknownOut {
        bound: u.bound,
        reason: crate::render::loss::gap_reason(&u.reason),
    }
}

fn producer_out(p: &ProducerLoss) -> ProducerOut<'_> {
    ProducerOut {
        producer_id: p.producer_id,
        producer_epochs: &p.producer_epochs,
        records: p.records,
        first_offset: p.first_offset,
        last_offset: p.last_offset,
        first_sequence: p.first_sequence,
        last_sequence: p.last_sequence,
        transactional: p.transactional,
    }
}

fn evidence_out(e: &LossEvidence) -> EvidenceOut<'_> {
    EvidenceOut {
        kind: e.kind(),
        broker: e.broker,
        group: e.group.as_deref(),
        offset: e.offset,
        leader_epoch: e.leader_epoch,
        isr: e.isr.as_deref(),
        metadata_offset: e.metadata_offset,
        time: e.time,
        file: e.file.as_deref(),
        records: e.records,
        detail: crate::render::loss::evidence_detail(e),
    }
}

fn summary_out(s: &LossSummary) -> SummaryOut<'_> {
    SummaryOut {
        records: s.records,
        control_records: s.control_records,
        first_timestamp: s.first_timestamp,
        last_timestamp: s.last_timestamp,
        by_epoch: &s.by_epoch,
        by_producer: s
            .by_producer
            .iter()
            .map(|p| SummaryProducerOut {
                producer_id: p.producer_id,
                producer_epochs: &p.producer_epochs,
                records: p.records,
                first_offset: p.first_offset,
                last_offset: p.last_offset,
                first_sequence: p.first_sequence,
                last_sequence: p.last_sequence,
                // Read back, every record has a timestamp (`-1`: none).
                first_timestamp: p.timestamps.map_or(-1, |t| t.0),
                last_timestamp: p.timestamps.map_or(-1, |t| t.1),
            })
            .collect(),
    }
}

/// The record lists of one partition, each to be read while written.
pub struct PartitionSlots<'a> {
    lost: ListSlot<'a>,
    cut: Vec<ListSlot<'a>>,
}

impl<'a> PartitionSlots<'a> {
    /// The slots of partition `part` (index in the slice written) of `p`.
    fn new(lists: &'a dyn RunList, part: usize, p: DiffedPartition<'_>) -> PartitionSlots<'a> {
        PartitionSlots {
            lost: ListSlot::new(lists, part, None),
            cut: p
                .diff
                .replicas
                .iter()
                .map(|r| ListSlot::new(lists, part, Some(r.broker)))
                .collect(),
        }
    }
}

/// The wire form of one partition's diff; with `records`, its lists are
/// read as they are written.
pub fn partition<'a>(
    p: DiffedPartition<'a>,
    records: Option<&'a PartitionSlots<'a>>,
    line: bool,
) -> DiffPartition<'a> {
    let d: &PartitionDiff = p.diff;
    DiffPartition {
        kind: line.then_some("partition"),
        topic: &d.topic,
        partition: d.partition,
        reference: Reference {
            broker: d.reference.broker,
            reason: value(d.reference.reason),
            leader_epoch: d.reference.leader_epoch,
        },
        loss: loss(p.loss, records.map(|r| &r.lost)),
        replicas: d
            .replicas
            .iter()
            .enumerate()
            .map(|(i, r)| {
                // a replica whose truncation cuts nothing has no list
                let cuts = r.truncation_offset < r.log_end_offset;
                replica(r, records.and_then(|x| x.cut.get(i)).filter(|_| cuts))
            })
            .collect(),
        findings: findings(&d.findings),
        truncation_protocol: TruncationProtocol {
            protocol: value(d.protocol.protocol),
            source: d.protocol.source.code(),
            alternative: value(d.protocol.alternative),
            cluster_mode: d.protocol.mode.code(),
        },
        scan: d.scan.as_ref(),
        left_out: p.left_out,
        broker_log: &d.broker_log,
    }
}

/// `--format json` (one pretty document) or `jsonl` (one partition per
/// line); with `records`, the record lists are read from it as they are
/// written, one partition at a time.
pub fn write_json(
    parts: &[DiffedPartition<'_>],
    records: Option<&mut dyn RecordLists>,
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let Some(records) = records else {
        return write_parts(parts, None, lines, w);
    };
    let shared = Shared(std::cell::RefCell::new(records));
    write_parts(parts, Some(&shared), lines, w)
}

fn write_parts<'a>(
    parts: &'a [DiffedPartition<'a>],
    lists: Option<&'a dyn RunList>,
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let slots: Vec<Option<PartitionSlots<'a>>> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| lists.map(|l| PartitionSlots::new(l, i, *p)))
        .collect();
    if lines {
        for (p, s) in parts.iter().zip(&slots) {
            json::line(w, &partition(*p, s.as_ref(), true))?;
        }
        return Ok(());
    }
    json::document(
        w,
        &DiffDocument {
            partitions: parts
                .iter()
                .zip(&slots)
                .map(|(p, s)| partition(*p, s.as_ref(), false))
                .collect(),
        },
    )
}

/// `--format json` or `jsonl` of partitions diffed as they are written
/// (no record lists): one partition is held at a time (`view` gives what
/// is written of it), and the document is the one [`write_json`] writes of
/// the same partitions.
pub fn write_json_each<T>(
    parts: impl Iterator<Item = T>,
    view: fn(&T) -> DiffedPartition<'_>,
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    if lines {
        for p in parts {
            json::line(w, &partition(view(&p), None, true))?;
        }
        return Ok(());
    }
    json::document(
        w,
        &EachDocument {
            partitions: Each(std::cell::RefCell::new(Some(parts)), view),
        },
    )
}

/// One partition as [`write_json_each`] writes it, rendered alone (so that
/// partitions can be rendered on every core): a JSON line, or the
/// document's element at the depth the document holds it, for
/// [`write_json_rendered`].
pub fn json_element(p: DiffedPartition<'_>, lines: bool) -> std::io::Result<Vec<u8>> {
    let mut v = Vec::new();
    if lines {
        json::line_into(&mut v, &partition(p, None, true))?;
        return Ok(v);
    }
    // an element of the document's `partitions`: two levels in
    json::nested_into(&mut v, &partition(p, None, false), 2)?;
    v.pop();
    Ok(v)
}

/// The bytes [`write_json_each`] writes, of partitions rendered with
/// [`json_element`].
pub fn write_json_rendered(
    parts: impl Iterator<Item = std::io::Result<Vec<u8>>>,
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    if lines {
        for p in parts {
            w.write_all(&p?)?;
        }
        return Ok(());
    }
    w.write_all(b"{\n  \"partitions\": [")?;
    let mut any = false;
    for p in parts {
        let p = p?;
        w.write_all(if any { b",\n    " } else { b"\n    " })?;
        w.write_all(&p)?;
        any = true;
    }
    w.write_all(if any { b"\n  ]\n}\n" } else { b"]\n}\n" })
}

/// [`DiffDocument`] with its partitions taken from an iterator as they are
/// serialised.
#[derive(Serialize)]
#[serde(bound = "")]
struct EachDocument<T, I: Iterator<Item = T>> {
    partitions: Each<T, I>,
}

/// A sequence serialised from an iterator (taken on the first and only
/// serialisation), each item written as its view.
struct Each<T, I>(std::cell::RefCell<Option<I>>, fn(&T) -> DiffedPartition<'_>);

impl<T, I: Iterator<Item = T>> Serialize for Each<T, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let parts = self.0.borrow_mut().take();
        let view = self.1;
        s.collect_seq(parts.into_iter().flatten().map(|p| Held(p, view)))
    }
}

/// One partition's diff, serialised as [`DiffDocument`] serialises it.
struct Held<T>(T, fn(&T) -> DiffedPartition<'_>);

impl<T> Serialize for Held<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        partition((self.1)(&self.0), None, false).serialize(s)
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// Records a replica's truncation cuts: data records, then control records
/// apart (as the loss headline counts them).
fn cut_text(r: &ReplicaDiff) -> String {
    let control = r.control_records_to_truncate.max(0);
    let data = (r.records_to_truncate - control).max(0);
    if control == 0 {
        data.to_string()
    } else {
        format!("{data} + {control} control")
    }
}

/// Commitment bounds of some lost records in a table cell: never a bare
/// `0` while records may have been committed.
pub fn bounds_text(proven: u64, possible: Option<u64>) -> String {
    match possible {
        Some(p) if p == proven && p == 0 => "0".to_string(),
        Some(p) if p == proven => format!("{p} proven"),
        Some(p) => format!("{proven} proven, {p} possible"),
        None => format!("{proven} proven, unknown possible"),
    }
}

fn reason_text(p: &PartitionDiff) -> String {
    serde_json::to_value(p.reference.reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
        .replace('_', " ")
}

/// How [`write_table`] writes the partitions it is given.
#[derive(Default)]
pub struct TableOptions<'a> {
    /// Tell each partition's story (`--explain`).
    pub explain: bool,
    /// Per partition (same index): who led each epoch, for the story.
    pub leaders: &'a [BTreeMap<i32, (i32, bool)>],
    /// Per partition (same index): the lines under the headline of a
    /// partition that loses data without `explain` (why, what next).
    pub notes: &'a [Vec<String>],
    /// The partitions to write, in this order (indices); `None`: all, in
    /// their order.
    pub order: Option<&'a [usize]>,
}

/// The whole capture in a few lines, gathered as partitions pass: what
/// `klf diff` writes before any partition.
#[derive(Debug, Default)]
pub struct Overview {
    /// Partitions compared.
    pub compared: u64,
    /// Partitions losing data.
    pub losing: u64,
    /// Data records lost, over all partitions.
    pub records: u64,
    /// Control records lost.
    pub control_records: u64,
    /// Lost data records proven committed.
    pub committed_proven: u64,
    /// Lost data records possibly committed (bounded ones).
    pub committed_possible: u64,
    /// Lost data records whose commitment cannot be bounded.
    pub committed_unknown: u64,
    /// Assigned brokers whose replica is not captured, with how many
    /// partitions each.
    pub not_captured: BTreeMap<i32, u64>,
    /// Partitions not shown: nothing lost, nothing left out.
    pub folded: u64,
    /// Of those, partitions with findings.
    pub folded_with_findings: u64,
    /// The partitions losing data, worst first.
    pub worst: Vec<Losing>,
}

/// A partition losing data, as the overview names it.
#[derive(Debug, Clone)]
pub struct Losing {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Data records lost.
    pub records: u64,
    /// Control records lost.
    pub control: u64,
    /// Proven committed.
    pub proven: u64,
    /// Possibly committed (`None`: some cannot be bounded).
    pub possible: Option<u64>,
    /// Records whose commitment cannot be bounded.
    pub unknown: u64,
}

/// Rank of a partition for "worst first": committed losses, then possibly
/// committed, unbounded, uncommitted, then partitions losing nothing.
pub fn severity(p: DiffedPartition<'_>) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>) {
    let rank = match p.loss.verdict {
        Verdict::CommittedLost => 0,
        Verdict::PossiblyCommittedLost => 1,
        Verdict::UnknownLost => 2,
        Verdict::UncommittedLost => 3,
        Verdict::NothingLost => 4,
    };
    (
        rank,
        std::cmp::Reverse(p.loss.possibly_committed_or_unknown()),
        std::cmp::Reverse(p.loss.records + p.loss.control_records),
    )
}

impl Overview {
    /// Whether a partition is written in full without `--all`: it loses
    /// data, a replica was left out, or an assigned replica is missing.
    pub fn shown(p: DiffedPartition<'_>) -> bool {
        p.loss.any()
            || !p.left_out.is_empty()
            || !p.loss.replicas_not_captured.is_empty()
            || p.diff
                .broker_log
                .iter()
                .any(|c| c.verdict == crate::model::broker_log::Verdict::Disagrees)
    }

    /// Counts one partition; `shown`: whether it is written in full.
    pub fn add(&mut self, p: DiffedPartition<'_>, shown: bool) {
        self.compared += 1;
        for b in &p.loss.replicas_not_captured {
            *self.not_captured.entry(*b).or_default() += 1;
        }
        if p.loss.any() {
            self.losing += 1;
            self.records += p.loss.records;
            self.control_records += p.loss.control_records;
            self.committed_proven += p.loss.committed_proven;
            match p.loss.committed_possible {
                Some(x) => self.committed_possible += x,
                None => {
                    self.committed_possible +=
                        p.loss.possibly_committed_or_unknown() - p.loss.committed_unknown;
                    self.committed_unknown += p.loss.committed_unknown;
                }
            }
            self.worst.push(Losing {
                topic: p.diff.topic.clone(),
                partition: p.diff.partition,
                records: p.loss.records,
                control: p.loss.control_records,
                proven: p.loss.committed_proven,
                possible: p.loss.committed_possible,
                unknown: p.loss.committed_unknown,
            });
        }
        if !shown {
            self.folded += 1;
            let findings = !p.diff.findings.is_empty()
                || p.diff.replicas.iter().any(|r| !r.findings.is_empty());
            self.folded_with_findings += u64::from(findings);
        }
    }

    /// Writes the overview: totals, the partitions losing data worst first
    /// (at most ten named), those not shown.
    pub fn write(&self, look: Look, w: &mut impl Write) -> std::io::Result<()> {
        let color = look.color;
        let count = crate::format::text::count;
        let compared = count(self.compared, "partition", "partitions");
        if self.losing == 0 {
            writeln!(w, "{compared} compared: nothing lost.")?;
        } else {
            let possible = (self.committed_unknown == 0).then_some(self.committed_possible);
            let mut line = format!(
                "{compared} compared, {} losing data: {}",
                self.losing,
                loss_words(
                    self.records,
                    self.committed_proven,
                    possible,
                    self.committed_unknown
                )
            );
            if self.control_records > 0 {
                line.push_str(&format!(
                    " (and {} lost)",
                    count(self.control_records, "control record", "control records")
                ));
            }
            writeln!(w, "{}", paint(color, &line, Paint::Bad))?;
            let mut worst: Vec<&Losing> = self.worst.iter().collect();
            worst.sort_by_key(|l| {
                let rank = if l.proven > 0 {
                    0
                } else if l.possible.is_none() || l.possible > Some(0) {
                    1
                } else {
                    2
                };
                (
                    rank,
                    std::cmp::Reverse(l.possible.unwrap_or(u64::MAX)),
                    std::cmp::Reverse(l.records + l.control),
                    l.topic.clone(),
                    l.partition,
                )
            });
            for l in worst.iter().take(10) {
                let mut s = format!(
                    "  {}-{}: {}",
                    sanitize(&l.topic),
                    l.partition,
                    loss_words(l.records, l.proven, l.possible, l.unknown)
                );
                if l.control > 0 {
                    s.push_str(&format!(
                        " (and {} lost)",
                        count(l.control, "control record", "control records")
                    ));
                }
                writeln!(w, "{s}")?;
            }
            if worst.len() > 10 {
                writeln!(w, "  and {} more losing data, below", worst.len() - 10)?;
            }
        }
        for (b, n) in &self.not_captured {
            writeln!(
                w,
                "{}",
                paint(
                    color,
                    &format!(
                        "broker {b} assigned but not captured ({}): {}",
                        count(*n, "partition", "partitions"),
                        NOT_CAPTURED_WEAKENS
                    ),
                    Paint::Warn
                )
            )?;
        }
        if self.folded > 0 && (self.losing > 0 || self.folded_with_findings > 0) {
            let what = match self.folded_with_findings {
                0 => "nothing lost".to_string(),
                n => format!("nothing lost, {n} with findings"),
            };
            writeln!(
                w,
                "{}",
                crate::render::overview::folded(self.folded as usize, &what)
            )?;
        }
        writeln!(w)
    }
}

/// Why a losing partition lost its records, from the metadata log: the
/// election of the reference's epoch and the setting that allowed it.
pub fn why_lines(
    p: &PartitionDiff,
    history: Option<&crate::model::PartitionHistory>,
    configs: Option<&[crate::model::impact::ConfigFact]>,
) -> Vec<String> {
    let r = p.reference.broker;
    let epoch = p.reference.leader_epoch.or_else(|| {
        p.replicas
            .iter()
            .find(|x| x.broker == r)
            .and_then(|x| x.latest_epoch)
    });
    let Some(epoch) = epoch else {
        return Vec::new();
    };
    let Some(h) = history else {
        return vec![format!(
            "why: broker {r} leads in epoch {epoch}; the capture has no metadata log (ZooKeeper mode, or not captured), so whether that election was clean is not known"
        )];
    };
    let at = h
        .changes
        .iter()
        .rposition(|e| e.leader_changed && e.leader_epoch == epoch && e.leader == r);
    let Some(at) = at else {
        return vec![format!(
            "why: broker {r} leads in epoch {epoch}, an election the metadata log does not record"
        )];
    };
    let e = &h.changes[at];
    let before = at
        .checked_sub(1)
        .map(|i| format!("{:?}", h.changes[i].isr))
        .unwrap_or_else(|| "not recorded".to_string());
    let when = if e.timestamp >= 0 {
        crate::format::text::iso_time(e.timestamp)
            .map(|t| format!(" at {t}"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    let mut lines = Vec::new();
    if e.unclean {
        lines.push(format!(
            "why: an UNCLEAN election: broker {r} became leader in epoch {epoch}{when} (metadata log offset {}) from outside the ISR {before}, without the records the ISR held",
            e.metadata_offset
        ));
        let setting = configs.and_then(|c| {
            c.iter().rev().find(|f| {
                f.name == "unclean.leader.election.enable"
                    && ((f.scope == "topic" && f.resource == p.topic)
                        || (f.scope == "broker" && f.resource.is_empty()))
            })
        });
        lines.push(match setting {
            Some(f) if f.value.as_deref() == Some("true") => format!(
                "allowed by unclean.leader.election.enable=true ({}, metadata log offset {})",
                if f.scope == "topic" {
                    format!("topic {}", p.topic)
                } else {
                    "cluster default".to_string()
                },
                f.metadata_offset
            ),
            _ if configs.is_some() => "unclean.leader.election.enable is not true in the metadata log: the election was forced (kafka-leader-election --election-type unclean) or set in a broker's server.properties".to_string(),
            _ => String::new(),
        });
        lines.retain(|l| !l.is_empty());
    } else {
        lines.push(format!(
            "why: broker {r} became leader in epoch {epoch}{when} (metadata log offset {}, ISR before {before}, after {:?}) without the lost records",
            e.metadata_offset, e.isr
        ));
    }
    lines
}

/// What the brokers' own logs say of the partition's truncations, a line
/// per broker: the truncation logged after the broker started from the
/// captured state, held against klf's prediction, with its file and line.
pub fn broker_log_lines(p: &PartitionDiff) -> Vec<String> {
    use crate::model::broker_log::{NotCompared, Verdict};
    let mut out = Vec::new();
    for c in &p.broker_log {
        let at = |l: &crate::model::broker_log::LoggedTruncation| {
            format!(
                "{}:{}, {}",
                l.source.file.display(),
                l.source.line,
                l.logged_at
            )
        };
        let history = match c.logged_before_capture {
            0 => String::new(),
            n => format!(
                "; {} logged before it started from the captured state",
                crate::format::text::count(n, "earlier truncation", "earlier truncations")
            ),
        };
        let line = match (&c.logged, c.verdict) {
            (Some(l), Verdict::Agrees) => format!(
                "Kafka's log: broker {} truncated to {} after starting from the captured state ({}): agrees with klf{history}",
                c.broker,
                l.offset,
                at(l)
            ),
            (Some(l), Verdict::AgreesWithAlternative) => format!(
                "Kafka's log: broker {} truncated to {} after starting from the captured state ({}): what the alternative protocol predicts, so the cluster runs it (klf's first prediction: {}){history}",
                c.broker,
                l.offset,
                at(l),
                c.predicted
            ),
            (Some(l), Verdict::Disagrees) => format!(
                "Kafka's log DISAGREES: broker {} truncated to {} after starting from the captured state ({}); klf predicts {} [prediction-disagrees-with-broker-log]{history}",
                c.broker,
                l.offset,
                at(l),
                c.predicted
            ),
            (logged, _) => {
                let why = match &c.why_not_compared {
                    Some(NotCompared::NoLoadOfCapturedState) => {
                        "its log holds no start-up from the captured state, so it cannot tell whether that came before or after the capture".to_string()
                    }
                    Some(NotCompared::OtherLeader { logged, reference }) => format!(
                        "it followed broker {logged} then, klf's prediction follows broker {reference}"
                    ),
                    Some(NotCompared::LedInCapturedEpoch { epoch, source }) => format!(
                        "it became leader in epoch {epoch} ({}:{}), whose records the capture holds",
                        source.file.display(),
                        source.line
                    ),
                    Some(NotCompared::NoPrediction) => {
                        "klf's prediction did not converge".to_string()
                    }
                    Some(NotCompared::NothingLoggedAfterStartUp) | None => {
                        "it logged no truncation after starting from the captured state".to_string()
                    }
                };
                match logged {
                    Some(l) => format!(
                        "Kafka's log: broker {} truncated to {} ({}); not compared: {why}{history}",
                        c.broker,
                        l.logged_offset,
                        at(l)
                    ),
                    None if c.logged_before_capture > 0 => format!(
                        "Kafka's log: broker {}: {} before the capture ({why})",
                        c.broker,
                        crate::format::text::count(
                            c.logged_before_capture,
                            "truncation",
                            "truncations"
                        )
                    ),
                    None => format!("Kafka's log: broker {}: not compared: {why}", c.broker),
                }
            }
        };
        out.push(line);
    }
    out
}

/// The commands to run next on a partition that loses data, with the
/// capture's own paths (`paths`: shell words).
pub fn next_line(p: &PartitionDiff, paths: &str) -> String {
    let sel = format!(
        "{paths} --topic {} --partition {}",
        crate::render::text::shell_word(&p.topic),
        p.partition
    );
    format!("next: klf impact {sel}; klf salvage {sel} --out DIR; klf elect {sel}")
}

/// The tables of `klf diff`: per partition its loss, the replicas, the
/// findings, with `explain` the story, and the records read back.
pub fn write_table(
    parts: &[DiffedPartition<'_>],
    opts: &TableOptions,
    mut records: Option<&mut dyn RecordLists>,
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    let explain = opts.explain;
    let all: Vec<usize> = (0..parts.len()).collect();
    for &i in opts.order.unwrap_or(&all) {
        let Some(part) = parts.get(i) else {
            continue;
        };
        let p = part.diff;
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
        let headline = part.loss.headline();
        match headline_paint {
            Some(pt) => writeln!(w, "  {}", paint(color, &headline, pt))?,
            None => writeln!(w, "  {headline}")?,
        }
        if !explain {
            for line in opts.notes.get(i).into_iter().flatten() {
                writeln!(w, "  {}", sanitize(line))?;
            }
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
            let loss = (r.committed_possible_cut != Some(0)).then_some(Paint::Bad);
            let cut = (r.records_to_truncate > 0).then_some(Paint::Warn);
            t.add_row(vec![
                cell(color, r.broker.to_string(), None),
                cell(color, r.log_end_offset.to_string(), None),
                cell(color, opt(r.high_watermark), None),
                cell(color, opt(r.latest_epoch), None),
                cell(color, opt(r.divergence_offset), None),
                cell(color, r.truncation_offset.to_string(), None),
                cell(color, r.hw_truncation_offset.to_string(), None),
                cell(color, cut_text(r), cut),
                cell(
                    color,
                    bounds_text(r.committed_proven_cut, r.committed_possible_cut),
                    loss,
                ),
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
            for line in loss_story(part.loss) {
                writeln!(w, "  {}", sanitize(&line))?;
            }
            let none = BTreeMap::new();
            for line in story(p, opts.leaders.get(i).unwrap_or(&none)) {
                writeln!(w, "  {line}")?;
            }
        }
        if let Some(rec) = records.as_deref_mut() {
            write_lost("the partition loses", look, w, &mut |sink| {
                Some(rec.lost(i, sink))
            })?;
            // Each record once: the cut lists hold the lost records again
            // (JSON keeps them per replica); here, what each cut is.
            for r in p.replicas.iter().filter(|r| r.records_to_truncate > 0) {
                let kept = (r.records_to_truncate
                    - r.control_records_to_truncate
                    - i64::try_from(r.lost_cut).unwrap_or(i64::MAX))
                .max(0);
                writeln!(
                    w,
                    "  broker {}'s truncation cuts {} at [{}, {}): {} lost (listed above), {} fetched again from the reference",
                    r.broker,
                    crate::format::text::count(
                        u64::try_from(r.records_to_truncate).unwrap_or(0),
                        "record",
                        "records"
                    ),
                    r.truncation_offset,
                    r.log_end_offset,
                    r.lost_cut,
                    kept
                )?;
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

/// Reads one record list into a table as it is read, then its summary: how
/// many, of which producers, when, how many not shown, and what could not
/// be read back (with file, byte and reason). Memory is the table's
/// sample, whatever the number of records.
#[allow(clippy::type_complexity)]
fn write_lost(
    what: &str,
    look: Look,
    w: &mut dyn Write,
    read: &mut dyn FnMut(
        &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> Option<std::io::Result<RecordsRead>>,
) -> std::io::Result<()> {
    let header = [
        "offset",
        "epoch",
        "time (UTC, epoch ms)",
        "producer",
        "p.epoch",
        "sequence",
        "key",
        "value bytes",
        "committed",
        "held by",
    ];
    let mut t =
        crate::render::style::StreamTable::new(&header, look.width).no_wrap(&[0, 1, 3, 4, 5, 7]);
    let mut titled = false;
    let title = format!("  {what}, record by record:");
    let Some(read) = read(&mut |r| {
        if !titled {
            writeln!(w, "{title}")?;
            titled = true;
        }
        let key = match &r.key {
            None => "null".to_string(),
            Some(Bytes::Text(s)) => sanitize(s).into_owned(),
            Some(Bytes::Base64(b)) => format!("base64:{b}"),
        };
        // a record written without a producer id has no producer fields
        let producer = |v: String| {
            if r.producer_id < 0 {
                "-".to_string()
            } else {
                v
            }
        };
        let cells = vec![
            r.offset.to_string(),
            r.epoch.to_string(),
            human_time(r.timestamp),
            producer(r.producer_id.to_string()),
            producer(r.producer_epoch.to_string()),
            if r.sequence < 0 {
                "-".to_string()
            } else {
                r.sequence.to_string()
            },
            key,
            r.value_size.map_or("null".into(), |v| v.to_string()),
            r.committed.map_or("-".into(), |c| c.name().to_string()),
            r.held_by.as_ref().map_or("-".into(), |h| {
                h.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
            }),
        ];
        if look.list() {
            // a narrow terminal: one block per record, as a Sheet lays out
            let mut b = Sheet::new(look);
            b.set_header(header).title(1);
            b.add_row(cells);
            write!(w, "{b}")
        } else {
            t.row(w, cells)
        }
    }) else {
        return Ok(());
    };
    let read = read?;
    if titled && !look.list() {
        t.finish(w)?;
    }
    let summary: &LossSummary = &read.summary;
    writeln!(
        w,
        "  records {what}: {} ({} control), timestamps {} .. {}",
        summary.records + read.left_out.records,
        summary.control_records,
        summary.first_timestamp.map_or("-".into(), human_time),
        summary.last_timestamp.map_or("-".into(), human_time)
    )?;
    for p in &summary.by_producer {
        let records = crate::format::text::count(p.records, "record", "records");
        let (from, to) = (p.first_offset, p.last_offset.saturating_add(1));
        if p.producer_id < 0 {
            writeln!(
                w,
                "    without a producer id: {records}, offsets [{from}, {to})"
            )?;
            continue;
        }
        let mut line = format!(
            "    producer {} (epochs {:?}): {records}, offsets [{from}, {to})",
            p.producer_id, p.producer_epochs
        );
        if p.first_sequence >= 0 {
            line.push_str(&format!(
                ", sequences {} to {}",
                p.first_sequence, p.last_sequence
            ));
        }
        writeln!(w, "{line}")?;
    }
    if read.omitted > 0 {
        writeln!(
            w,
            "    {} more not shown (--records-limit); the counts above cover them",
            read.omitted
        )?;
    }
    write_left_out(&read.left_out, w)
}

/// What a record list could not read back: how many records, and each
/// batch with its file, byte and reason.
fn write_left_out(l: &LeftOut, w: &mut dyn Write) -> std::io::Result<()> {
    if l.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "    {} not read back (counted above from the batch headers), in {}:",
        crate::format::text::count(l.records, "record", "records"),
        crate::format::text::count(l.batch_count, "batch", "batches")
    )?;
    for b in &l.batches {
        let place = match (&b.file, b.position) {
            (Some(f), Some(p)) => format!("{}:{p}", sanitize(f)),
            (Some(f), None) => sanitize(f).into_owned(),
            _ => match b.broker {
                Some(x) => format!("broker {x}"),
                None => "no replica".to_string(),
            },
        };
        writeln!(
            w,
            "      offsets [{}, {}), {}: {place}: {}",
            b.start,
            b.end,
            crate::format::text::count(b.records, "record", "records"),
            sanitize(&b.reason)
        )?;
    }
    if l.batch_count > l.batches.len() as u64 {
        writeln!(
            w,
            "      and {} more",
            crate::format::text::count(l.batch_count - l.batches.len() as u64, "batch", "batches")
        )?;
    }
    Ok(())
}
