//! The plain data of what a partition loses, counted once: the lost
//! ranges, who holds them, how sure we can be that they had been committed
//! and every fact those bounds used. `analysis::loss` counts it from a
//! diff ([`crate::model::diff`]) and the capture's evidence.

use serde::Serialize;

use crate::model::records::{Committed, ProducerLoss};
use crate::model::BatchSummary;

/// The partition's verdict, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Committed records are lost (`committed_proven > 0`).
    CommittedLost,
    /// Records that may have been committed are lost.
    PossiblyCommittedLost,
    /// Records are lost whose commitment cannot be bounded.
    UnknownLost,
    /// Records are lost, none of them committed.
    UncommittedLost,
    /// Nothing is lost.
    NothingLost,
}

impl Verdict {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::CommittedLost => "committed-lost",
            Verdict::PossiblyCommittedLost => "possibly-committed-lost",
            Verdict::UnknownLost => "unknown-lost",
            Verdict::UncommittedLost => "uncommitted-lost",
            Verdict::NothingLost => "nothing-lost",
        }
    }
}

/// A half-open range `[start, end)` of lost records sharing epoch, holders
/// and commitment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostRange {
    /// First offset.
    pub start: i64,
    /// One past the last offset.
    pub end: i64,
    /// Data records in the range.
    pub records: u64,
    /// Control records (transaction markers, ...) in the range.
    pub control_records: u64,
    /// Leader epoch of the batches (`-1`: v0/v1 messages).
    pub leader_epoch: i32,
    /// Replicas holding these records now.
    pub held_by: Vec<i32>,
    /// Whether they had been committed.
    pub committed: Committed,
}

/// Lost data records of one leader epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpochLoss {
    /// Leader epoch.
    pub leader_epoch: i32,
    /// Data records.
    pub records: u64,
}

/// Kinds of evidence the bounds use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    /// A replica's `replication-offset-checkpoint` entry.
    HighWatermarkCheckpoint,
    /// An offset a consumer group committed.
    ConsumerGroupCommit,
    /// An ISR state in the metadata log whose members all may have held
    /// lost records: they may have been committed.
    IsrState,
    /// An ISR state with a member that never held lost records: the high
    /// watermark could not pass them while it was in force.
    IsrStateRulesOut,
    /// No ISR history for the partition.
    NoIsrHistory,
    /// The ISR history does not reach back far enough.
    IsrHistoryIncomplete,
    /// The metadata log ends before epochs the replicas hold.
    MetadataBehindReplicas,
    /// An assigned replica whose log is not in the capture.
    ReplicaNotCaptured,
    /// No `__consumer_offsets` in the capture.
    NoConsumerOffsets,
}

impl EvidenceKind {
    /// The kebab-case name (the JSON `kind`).
    pub fn name(self) -> &'static str {
        match self {
            EvidenceKind::HighWatermarkCheckpoint => "high-watermark-checkpoint",
            EvidenceKind::ConsumerGroupCommit => "consumer-group-commit",
            EvidenceKind::IsrState => "isr-state",
            EvidenceKind::IsrStateRulesOut => "isr-state-rules-out",
            EvidenceKind::NoIsrHistory => "no-isr-history",
            EvidenceKind::IsrHistoryIncomplete => "isr-history-incomplete",
            EvidenceKind::MetadataBehindReplicas => "metadata-behind-replicas",
            EvidenceKind::ReplicaNotCaptured => "replica-not-captured",
            EvidenceKind::NoConsumerOffsets => "no-consumer-offsets",
        }
    }
}

/// What one piece of evidence is, with the facts only that kind carries
/// (the fields every kind may fill are [`LossEvidence`]'s). `render::loss`
/// words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvidenceFact {
    /// A holder's `replication-offset-checkpoint` entry: the evidence's
    /// `offset` is the value as written (`None`: the partition is not
    /// listed), its `records` the lost data records below it.
    HighWatermarkCheckpoint {
        /// The high watermark the diff used (the written one clamped to
        /// the replica's log).
        used: Option<i64>,
        /// How long (ms) before the newest lost batch's timestamp the file
        /// was last written, when it was written before it.
        written_before_newest_lost_ms: Option<i64>,
    },
    /// An offset a consumer group committed: the evidence's `offset`,
    /// `leader_epoch` and `group` are the commit's, its `records` the lost
    /// data records it proves committed.
    ConsumerGroupCommit {
        /// The captured replicas whose log is on the commit's lineage: it
        /// holds the commit's leader epoch at the offset before the commit
        /// (without an epoch: it holds that offset).
        lineage: Vec<i32>,
    },
    /// An ISR state whose members all hold (or may have held) lost records:
    /// the evidence's `records` of them may have been committed.
    IsrState,
    /// An ISR state with members that never held lost records.
    IsrStateRulesOut {
        /// The members that never held them.
        never_held: Vec<i32>,
        /// The lost data records they never held.
        lost: u64,
    },
    /// A bound that could not be computed for some records.
    Unbounded(BoundGap),
    /// An assigned replica (the evidence's `broker`) whose log is not in
    /// the capture.
    ReplicaNotCaptured,
    /// No `__consumer_offsets` in the capture.
    NoConsumerOffsets,
}

impl EvidenceFact {
    /// Its kind.
    pub fn kind(&self) -> EvidenceKind {
        match self {
            EvidenceFact::HighWatermarkCheckpoint { .. } => EvidenceKind::HighWatermarkCheckpoint,
            EvidenceFact::ConsumerGroupCommit { .. } => EvidenceKind::ConsumerGroupCommit,
            EvidenceFact::IsrState => EvidenceKind::IsrState,
            EvidenceFact::IsrStateRulesOut { .. } => EvidenceKind::IsrStateRulesOut,
            EvidenceFact::Unbounded(g) => g.kind(),
            EvidenceFact::ReplicaNotCaptured => EvidenceKind::ReplicaNotCaptured,
            EvidenceFact::NoConsumerOffsets => EvidenceKind::NoConsumerOffsets,
        }
    }
}

/// Why the upper bound (`committed_possible`) is unknown for some records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundGap {
    /// The capture holds no ISR history for the partition.
    NoIsrHistory {
        /// Why, as the caller knows it (`None`: no `__cluster_metadata`
        /// log with this partition).
        why: Option<String>,
    },
    /// The history starts after the epochs of some lost records (its start
    /// was deleted after a snapshot).
    IsrHistoryIncomplete {
        /// The leader epoch it starts at.
        first_epoch: Option<i32>,
    },
    /// The history ends before epochs a replica holds.
    MetadataBehindReplicas {
        /// The highest leader epoch the history knows.
        history_epoch: Option<i32>,
        /// The highest latest epoch of a replica.
        replica_epoch: Option<i32>,
    },
}

impl BoundGap {
    /// The kind of evidence noting it.
    pub fn kind(&self) -> EvidenceKind {
        match self {
            BoundGap::NoIsrHistory { .. } => EvidenceKind::NoIsrHistory,
            BoundGap::IsrHistoryIncomplete { .. } => EvidenceKind::IsrHistoryIncomplete,
            BoundGap::MetadataBehindReplicas { .. } => EvidenceKind::MetadataBehindReplicas,
        }
    }
}

/// One fact the bounds use, for a reader to check the reasoning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LossEvidence {
    /// What the fact is.
    pub fact: EvidenceFact,
    /// Broker it comes from (`null` when none applies).
    pub broker: Option<i32>,
    /// Consumer group (`consumer-group-commit`).
    pub group: Option<String>,
    /// The offset the fact is about (high watermark, committed offset).
    pub offset: Option<i64>,
    /// Leader epoch (of a commit, of an ISR state).
    pub leader_epoch: Option<i32>,
    /// The ISR (`isr-state`).
    pub isr: Option<Vec<i32>>,
    /// Offset of the record in the metadata log (`isr-state`).
    pub metadata_offset: Option<i64>,
    /// When (ms): the checkpoint file's mtime, the commit time, the
    /// metadata record's timestamp.
    pub time: Option<i64>,
    /// Where the fact was read (file), when one applies.
    pub file: Option<String>,
    /// Lost data records this fact proves committed (`high-watermark-checkpoint`,
    /// `consumer-group-commit`) or admits as possibly committed (`isr-state`).
    pub records: u64,
}

impl LossEvidence {
    /// Its kind.
    pub fn kind(&self) -> EvidenceKind {
        self.fact.kind()
    }

    /// A fact with no broker, offset or file of its own.
    pub fn note(fact: EvidenceFact) -> LossEvidence {
        LossEvidence {
            fact,
            broker: None,
            group: None,
            offset: None,
            leader_epoch: None,
            isr: None,
            metadata_offset: None,
            time: None,
            file: None,
            records: 0,
        }
    }
}

/// A bound that could not be computed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBound {
    /// `committed_possible` (the only bound that can be unknown).
    pub bound: &'static str,
    /// Why.
    pub reason: BoundGap,
}

/// One lost batch: its header, which part of it is lost, who holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostBatch {
    /// The batch header.
    pub batch: BatchSummary,
    /// First lost offset in it (`>= base_offset`).
    pub from: i64,
    /// Replicas holding it.
    pub held_by: Vec<i32>,
    /// Records below this offset are proven committed.
    pub proven_to: i64,
    /// Whether the rest is possibly committed.
    pub possible: Committed,
}

impl LostBatch {
    /// Commitment of the record at `offset`.
    pub fn committed_at(&self, offset: i64) -> Committed {
        if offset < self.proven_to {
            Committed::Proven
        } else {
            self.possible
        }
    }
}

/// What the partition loses (`render::diff` writes its JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLoss {
    /// Data records lost (on no replica once all follow the reference).
    pub records: u64,
    /// Control records lost (transaction markers, ...), not in the bounds.
    pub control_records: u64,
    /// The lost records, as half-open offset ranges.
    pub offsets: Vec<LostRange>,
    /// Replicas holding lost records now.
    pub held_by: Vec<i32>,
    /// Lost data records proven committed (lower bound).
    pub committed_proven: u64,
    /// Lost data records possibly committed (upper bound; includes the
    /// proven ones); `null` when some records cannot be bounded.
    pub committed_possible: Option<u64>,
    /// Lost data records neither proven nor bounded (no ISR history).
    pub committed_unknown: u64,
    /// The verdict.
    pub verdict: Verdict,
    /// Bounds that could not be computed for every record, and why.
    pub unknown: Vec<UnknownBound>,
    /// Lost data records per leader epoch.
    pub leader_epochs: Vec<EpochLoss>,
    /// Lost data records per producer, from the batch headers.
    pub producers: Vec<ProducerLoss>,
    /// Earliest batch timestamp among the lost batches (ms).
    pub first_timestamp: Option<i64>,
    /// Latest batch timestamp among the lost batches (ms).
    pub last_timestamp: Option<i64>,
    /// Assigned replicas (metadata log) whose log is not in the capture
    /// (see [`NOT_CAPTURED_WEAKENS`]).
    pub replicas_not_captured: Vec<i32>,
    /// Every fact the bounds used.
    pub evidence: Vec<LossEvidence>,
    /// The lost batches, in offset order (not in the JSON: what
    /// `--records` and salvage read records from).
    pub batches: Vec<LostBatch>,
}

impl PartitionLoss {
    /// Whether anything is lost.
    pub fn any(&self) -> bool {
        self.records > 0 || self.control_records > 0
    }

    /// Lost data records that may have been committed, counting those that
    /// cannot be bounded (the figure a verdict must assume).
    pub fn possibly_committed_or_unknown(&self) -> u64 {
        self.committed_possible.unwrap_or(self.committed_proven) + self.committed_unknown
    }
}

// The loss in words. These stay beside the data, not in `render`, because
// the findings of `klf check` are worded where their rules are
// (`analysis::check`, which cannot reach `render`) and must say the loss
// as `klf diff`, the report and the explanations do; they move to
// `render` when a check finding carries facts instead of its text.

/// What an assigned replica missing from the capture weakens: it may hold
/// records no captured replica holds (the loss may be larger) and may have
/// acknowledged records to a producer (the committed bounds are wider).
pub const NOT_CAPTURED_WEAKENS: &str = "the loss may be larger (a log not captured may hold records no captured replica holds) and the committed bounds wider; capture every assigned replica";

/// Commitment bounds in words: `50 proven, at most 100 possible`.
pub fn bounds_words(proven: u64, possible: Option<u64>) -> String {
    match possible {
        Some(0) => "none".to_string(),
        Some(p) if p == proven => format!("{p} proven"),
        Some(p) => format!("{proven} proven, at most {p} possible"),
        None => format!("{proven} proven, the rest unknown"),
    }
}

/// Brokers as the loss names them: `no broker`, `broker 1`, `brokers 1, 2`.
pub fn brokers(list: &[i32]) -> String {
    let v: Vec<String> = list.iter().map(i32::to_string).collect();
    match v.len() {
        0 => "no broker".to_string(),
        1 => format!("broker {}", v[0]),
        _ => format!("brokers {}", v.join(", ")),
    }
}

impl PartitionLoss {
    /// The loss in one line, the figures a post-mortem quotes first: what
    /// no replica will keep, counted once, and the two bounds of what had
    /// been committed (the words of `klf diff`'s headline and of the loss
    /// findings of `klf check`, so they say it alike).
    pub fn headline(&self) -> String {
        let mut s = loss_figures(self);
        if !self.replicas_not_captured.is_empty() {
            s.push_str(&format!(
                "; {} assigned but not captured: {}",
                brokers(&self.replicas_not_captured),
                NOT_CAPTURED_WEAKENS
            ));
        }
        s
    }
}

/// [`PartitionLoss::headline`] but for the replicas the capture lacks.
fn loss_figures(loss: &PartitionLoss) -> String {
    if !loss.any() {
        return "nothing lost: every record is kept by the reference or fetched again from it"
            .into();
    }
    let mut s = format!(
        "{} lost on every replica",
        crate::format::text::count(loss.records, "record", "records")
    );
    if loss.control_records > 0 {
        s.push_str(&format!(
            " (and {})",
            crate::format::text::count(loss.control_records, "control record", "control records")
        ));
    }
    let mut spans: Vec<(i64, i64)> = loss.offsets.iter().map(|r| (r.start, r.end)).collect();
    spans.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let mut ranges: Vec<String> = merged.iter().map(|(a, b)| format!("[{a}, {b})")).collect();
    if ranges.len() > 4 {
        let n = ranges.len() - 3;
        ranges.truncate(3);
        ranges.push(format!("{n} more ranges"));
    }
    s.push_str(&format!(
        ", offsets {}, held now only by {}",
        ranges.join(" "),
        brokers(&loss.held_by)
    ));
    match loss.verdict {
        Verdict::UncommittedLost => s.push_str(
            "; none committed (never below a high watermark: acks=1, acks=0 or unacknowledged writes)",
        ),
        Verdict::NothingLost => {}
        _ => {
            s.push_str(&format!("; committed: {} proven", loss.committed_proven));
            match loss.committed_possible {
                Some(p) => s.push_str(&format!(", at most {p} possible")),
                None => s.push_str(&format!(
                    ", at most {} possible ({} cannot be bounded)",
                    loss.possibly_committed_or_unknown(),
                    loss.committed_unknown
                )),
            }
        }
    }
    s
}
