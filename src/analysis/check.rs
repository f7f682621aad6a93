//! `check`: every consistency check klf knows, run over a capture, as a list
//! of findings with stable codes, severities and locations.
//!
//! The checks read only what [`crate::capture`] finds and [`crate::format`]
//! parses; the cross-replica and epoch checks reuse
//! [`crate::analysis::diff::diff_partition`] and
//! [`crate::analysis::timeline::timeline`]. Nothing here prints: the CLI
//! renders a [`CheckReport`].
//!
//! Every code is listed in [`CHECKS`] with its severity, family and meaning
//! (the table the README reproduces). Severities follow what Kafka itself
//! does with the data: `error` for damage or loss Kafka does not repair
//! silently (bad checksums in the middle of a log, committed records cut),
//! `warning` for the marks of an unclean shutdown or of a normal but
//! consequential event (a torn tail recovery will drop, preallocated index
//! slots, an uncommitted divergent tail truncation will cut), `info` for
//! facts worth knowing on healthy data.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::analysis::diff::{
    BatchSummary, DivergenceKind, FindingKind, PartitionDiff, ReferenceChoice, ReplicaLog,
};
use crate::analysis::explain::loss_headline;
use crate::analysis::loss::{PartitionLoss, Verdict};
use crate::analysis::timeline::timeline;
use crate::capture::controller::controller_view;
use crate::capture::discover::{Capture, Level, Replica, ReplicaKind};
use crate::capture::replica::replica_log;
use crate::capture::replica::summarize;
use crate::format::batch::{Batch, SegmentIter, TailKind, V2_HEADER_SIZE};
use crate::format::checkpoint::{OffsetCheckpointKind, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::format::index::{OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE};
use crate::format::snapshot::read_producer_snapshot;
use crate::format::txnindex::parse_txn_index;

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; normal in a healthy capture.
    Info,
    /// The mark of an unclean shutdown or of an event with consequences;
    /// Kafka copes with it.
    Warning,
    /// Damage, or loss of committed data.
    Error,
}

impl Severity {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Groups of checks (one JUnit test case per replica and family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Files found, checkpoint files readable.
    Capture,
    /// Batch framing, checksums, offsets, segment names, torn tails.
    Segments,
    /// `.index` and `.timeindex` files.
    Indexes,
    /// Leader epochs in batches and `leader-epoch-checkpoint`.
    Epochs,
    /// Log start, high watermark, recovery point, log end.
    Offsets,
    /// The replicas of a partition against each other.
    Replication,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 6] = [
        Family::Capture,
        Family::Segments,
        Family::Indexes,
        Family::Epochs,
        Family::Offsets,
        Family::Replication,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Capture => "capture",
            Family::Segments => "segments",
            Family::Indexes => "indexes",
            Family::Epochs => "epochs",
            Family::Offsets => "offsets",
            Family::Replication => "replication",
        }
    }
}

/// One entry of the code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// Stable kebab-case code.
    pub code: &'static str,
    /// Severity of every finding with this code.
    pub severity: Severity,
    /// Family.
    pub family: Family,
    /// What the finding means.
    pub meaning: &'static str,
    /// What to do about it.
    pub hint: &'static str,
}

macro_rules! checks {
    ($($name:ident = $code:literal, $sev:ident, $fam:ident, $meaning:literal, $hint:literal;)*) => {
        /// The stable codes, as constants.
        pub mod code {
            $(
                #[doc = $meaning]
                pub const $name: &str = $code;
            )*
        }
        /// Every finding code `klf check` emits: code, severity, family,
        /// meaning and hint. Codes are stable; new ones may be added.
        pub const CHECKS: &[CheckInfo] = &[
            $(CheckInfo {
                code: $code,
                severity: Severity::$sev,
                family: Family::$fam,
                meaning: $meaning,
                hint: $hint,
            },)*
        ];
    };
}

checks! {
    CAPTURE_WARNING = "capture-warning", Warning, Capture,
        "Discovery found something Kafka would not write or would refuse (unreadable or unexpected file, broken meta.properties, missing segment).",
        "Read the message; check how the capture was taken.";
    CHECKPOINT_UNREADABLE = "checkpoint-unreadable", Error, Capture,
        "A checkpoint file Kafka would fail to read (malformed line, bad count, bad number).",
        "Kafka fails to load this log directory (offset checkpoints) or the partition (leader-epoch-checkpoint) until the file is repaired or removed.";
    CHECKPOINT_ODDITY = "checkpoint-oddity", Info, Capture,
        "A checkpoint file Kafka reads, in a shape its writer never produces (missing final newline, duplicate entry).",
        "Usually a capture taken mid-write; compare with the broker's own copy.";
    WRITE_INTERRUPTED = "write-interrupted", Info, Capture,
        "A `.tmp` file: a checkpoint or properties write that was never renamed into place (the broker stopped, or the capture was taken, mid-write).",
        "Kafka ignores it and uses the previous version of the file; expected after a crash.";
    FILE_UNREADABLE = "file-unreadable", Error, Capture,
        "A segment or index file could not be opened or read.",
        "Check permissions and that the capture is complete.";
    BATCH_FRAMING = "batch-framing", Error, Segments,
        "An entry's size field or header is impossible (size below the minimum, header cut): the segment cannot be read past this point.",
        "Kafka's recovery truncates the segment here, losing every later batch of the segment; restore the segment from another replica.";
    BATCH_BAD_MAGIC = "batch-bad-magic", Error, Segments,
        "A batch with a magic byte other than 0, 1 or 2.",
        "The bytes are not a Kafka batch (overwritten or misaligned data); recovery truncates here.";
    BATCH_CRC_MISMATCH = "batch-crc-mismatch", Error, Segments,
        "A batch whose stored checksum (CRC-32C for v2, CRC-32 for v0/v1) does not match its bytes.",
        "The batch is corrupt on disk; Kafka's recovery truncates the segment here. Restore from an in-sync replica.";
    BATCH_HEADER_INVALID = "batch-header-invalid", Error, Segments,
        "A v2 batch header with impossible values (negative last offset delta or record count, more records than offsets).",
        "The batch was not written by Kafka as it stands; treat the segment as corrupt.";
    BATCH_OFFSET_ORDER = "batch-offset-order", Error, Segments,
        "A batch whose base offset is not above the last offset of the batch before it in the segment.",
        "Offsets must strictly increase; consumers and index lookups go wrong. Restore the segment from another replica.";
    SEGMENT_NAME_MISMATCH = "segment-name-mismatch", Error, Segments,
        "A segment holds offsets below the base offset in its file name.",
        "Index entries of this segment cannot be expressed; the file was renamed or written by something other than Kafka.";
    SEGMENT_OVERLAP = "segment-overlap", Error, Segments,
        "A segment starts at or below the last offset of the segment before it.",
        "Two segments claim the same offsets (a failed cleaner swap or a manual copy); Kafka reads the wrong one.";
    SEGMENT_TORN_TAIL = "segment-torn-tail", Warning, Segments,
        "Bytes after the last complete batch of the last segment: a write cut short by an unclean shutdown.",
        "Kafka's recovery drops these bytes on the next start; nothing acknowledged after the last complete batch survives.";
    SEGMENT_TORN_MIDDLE = "segment-torn-middle", Error, Segments,
        "Bytes after the last complete batch of a segment that is not the last one.",
        "A rolled segment should end on a batch boundary; data is missing in the middle of the log.";
    INDEX_MISSING = "index-missing", Info, Indexes,
        "A non-empty segment without its .index or .timeindex file.",
        "Kafka rebuilds a missing index on load; nothing to do unless the capture was meant to be complete.";
    INDEX_LENGTH_INVALID = "index-length-invalid", Error, Indexes,
        "An index file whose length is not a multiple of its entry size (8 for .index, 12 for .timeindex).",
        "Kafka's sanity check rejects the index; delete it and let Kafka rebuild it.";
    INDEX_PREALLOCATED = "index-preallocated", Warning, Indexes,
        "Zero-filled slots after the last entry of an index: the preallocated file was never trimmed, so the broker did not shut down cleanly.",
        "Kafka recovers the segment on the next start; expect recovery from the recovery point on.";
    INDEX_STALE_ENTRIES = "index-stale-entries", Info, Indexes,
        "Entries past the end of the log in the last segment's index: leftovers of a truncation (or of a crash) in a preallocated index, outside the entry count Kafka keeps in memory.",
        "Kafka ignores them while running, trims them at a clean shutdown and rebuilds the index after a crash; nothing to do.";
    INDEX_NOT_MONOTONIC = "index-not-monotonic", Error, Indexes,
        "An index entry whose offset (or timestamp) does not increase over the previous entry.",
        "Lookups through this index go wrong; delete the index and let Kafka rebuild it.";
    INDEX_OUTSIDE_SEGMENT = "index-outside-segment", Error, Indexes,
        "An index entry pointing before the segment base, past the segment's last offset, or past the end of the .log file.",
        "Delete the index and let Kafka rebuild it; find out why the .log is shorter than its index.";
    INDEX_ENTRY_MISMATCH = "index-entry-mismatch", Error, Indexes,
        "An .index entry whose position is not the start of a batch or whose offset does not belong to the batches from there, or a .timeindex entry whose offset is not the end of a batch.",
        "Fetches that use this entry read from the wrong place; delete the index and let Kafka rebuild it.";
    TXN_INDEX_INVALID = "txn-index-invalid", Error, Indexes,
        "A .txnindex entry Kafka rejects (unknown version, last offset below the segment base) or that does not match the log (first offset after last offset, no control batch at the abort marker's offset).",
        "Consumers reading with isolation.level=read_committed get aborted records or lose committed ones; delete the .txnindex and let Kafka rebuild it by recovering the segment.";
    EPOCH_REGRESSION = "epoch-regression", Error, Epochs,
        "A batch carries a lower leader epoch than an earlier batch of the log.",
        "Leader epochs never decrease in a healthy log; truncation decisions based on epochs are unreliable here.";
    CHECKPOINT_MISSING = "checkpoint-missing", Warning, Epochs,
        "No readable leader-epoch-checkpoint although the batches carry leader epochs.",
        "Kafka rebuilds the epoch cache from the batches on recovery; check why the file is absent.";
    CHECKPOINT_NOT_MONOTONIC = "checkpoint-not-monotonic", Error, Epochs,
        "leader-epoch-checkpoint entries whose epoch or start offset does not increase.",
        "Kafka drops the earlier entries on load; the epoch cache does not match the log.";
    CHECKPOINT_PAST_LOG_END = "checkpoint-past-log-end", Warning, Epochs,
        "A leader-epoch-checkpoint entry starts past the log end offset (a checkpoint written before the log lost its tail).",
        "Kafka truncates such entries on load; the log lost data the checkpoint had seen.";
    EPOCH_MISSING_FROM_CHECKPOINT = "epoch-missing-from-checkpoint", Warning, Epochs,
        "Batches of a leader epoch that the leader-epoch-checkpoint does not list.",
        "The checkpoint lags the log (unclean shutdown, or a capture taken live); Kafka adds the epoch back when it recovers the segment.";
    EPOCH_START_MISMATCH = "epoch-start-mismatch", Error, Epochs,
        "The leader-epoch-checkpoint says an epoch starts at a different offset than its first batch.",
        "Follower truncation uses these start offsets; a wrong one makes Kafka keep or cut the wrong records.";
    CHECKPOINT_EPOCH_WITHOUT_BATCHES = "checkpoint-epoch-without-batches", Warning, Epochs,
        "A leader-epoch-checkpoint entry inside the log whose epoch no batch carries.",
        "The checkpoint and the log disagree about who led; check for truncation after the checkpoint was written.";
    HIGH_WATERMARK_MISSING = "high-watermark-missing", Info, Offsets,
        "The replica is not listed in replication-offset-checkpoint.",
        "Kafka starts it with a high watermark at the log start; nothing is known committed from this replica alone.";
    HIGH_WATERMARK_BELOW_LOG_START = "high-watermark-below-log-start", Info, Offsets,
        "The checkpointed high watermark is below the log start offset.",
        "Kafka raises it to the log start on load.";
    HIGH_WATERMARK_BEYOND_LOG_END = "high-watermark-beyond-log-end", Error, Offsets,
        "The checkpointed high watermark is above the log end offset: committed records this replica had are not on disk.",
        "The replica lost acknowledged data (unflushed writes at a crash, or a truncated capture); compare with the other replicas.";
    LOG_START_BEYOND_LOG_END = "log-start-beyond-log-end", Error, Offsets,
        "The log start offset is above the log end offset.",
        "The segments Kafka should hold are missing.";
    RECOVERY_POINT_MISSING = "recovery-point-missing", Info, Offsets,
        "The replica is not listed in recovery-point-offset-checkpoint.",
        "After an unclean shutdown Kafka recovers the whole log; normal for a partition created since the last checkpoint.";
    RECOVERY_POINT_BEHIND_LOG_END = "recovery-point-behind-log-end", Info, Offsets,
        "The recovery point lags the log end: segments from there on were not flushed when the checkpoint was written.",
        "After an unclean shutdown Kafka re-validates everything from the recovery point; normal on a live capture.";
    RECOVERY_POINT_BEYOND_LOG_END = "recovery-point-beyond-log-end", Warning, Offsets,
        "The recovery point is above the log end offset: data that was flushed is no longer in the log.",
        "Either the log was truncated after the checkpoint was written (a follower's truncation, normal for a live capture) or flushed data was lost.";
    LOG_MATCHING_VIOLATION = "log-matching-violation", Error, Replication,
        "Replicas hold different batches for the same offsets below the smallest high watermark, or the same base offset and epoch with different content.",
        "Committed data differs between replicas and Kafka's protocol cannot notice; find which replica holds what producers were acknowledged.";
    COMMITTED_RECORDS_LOST = "committed-records-lost", Error, Replication,
        "Records no replica will keep once every replica follows the leader, some of them proven committed: below a high watermark a replica checkpointed, or below an offset a consumer group committed (acknowledged writes lost; counted once per partition).",
        "Copy the partition directories of the replicas holding them now (`klf diff --explain` names them and the evidence): the records disappear when those replicas rejoin.";
    POSSIBLY_COMMITTED_RECORDS_LOST = "possibly-committed-records-lost", Error, Replication,
        "Records no replica will keep once every replica follows the leader that may have been committed: every member of an ISR the metadata log records held them, or no ISR history can rule it out (counted once per partition).",
        "Treat them as acknowledged until shown otherwise: copy the replicas holding them now and compare with what producers were told (`klf diff --records`).";
    UNCOMMITTED_RECORDS_LOST = "uncommitted-records-lost", Warning, Replication,
        "Records no replica will keep once every replica follows the leader, none of them committed: some ISR member never held them (acks=1 or unacknowledged writes; counted once per partition).",
        "Producers with acks=1 may have been told they succeeded; expected after a leader failover.";
    DIVERGENT_TAIL = "divergent-tail", Info, Replication,
        "A replica holds a tail that differs from the leader's log; Kafka will truncate it (whether that loses anything is the partition's *-records-lost finding).",
        "Expected after a leader failover; the partition's loss finding says what is lost and whether it was committed.";
    PROTOCOL_KEEPS_DIVERGENT = "protocol-keeps-divergent", Error, Replication,
        "Kafka's leader-epoch protocol will keep records that differ from the leader's: the replicas stay inconsistent.",
        "Usually a stale or missing leader-epoch-checkpoint; rebuild the replica from the leader.";
    REPLICA_EPOCH_AHEAD = "replica-epoch-ahead", Warning, Replication,
        "A replica's latest leader epoch is above the reference leader's.",
        "The capture may mix moments, or the reference is not the real leader; pass all brokers captured at once.";
    REPLICAS_DISJOINT = "replicas-disjoint", Warning, Replication,
        "The offset ranges of two replicas do not overlap.",
        "Nothing can be compared; the follower will be reset to the leader's log start.";
    TRUNCATION_UNRESOLVED = "truncation-unresolved", Warning, Replication,
        "The truncation prediction did not converge, or empties the replica.",
        "Read the partition with `klf diff --explain`.";
    REPLICA_BEHIND = "replica-behind", Info, Replication,
        "A replica is a prefix of the leader's log (a lagging follower).",
        "It catches up by fetching; nothing is lost.";
    PRODUCER_SNAPSHOT_INVALID = "producer-snapshot-invalid", Error, Segments,
        "A producer .snapshot file Kafka would refuse (version, CRC-32C, length).",
        "Kafka rebuilds producer state from the log when it deletes a bad snapshot; idempotence guarantees may lapse meanwhile.";
    PRODUCER_SEQUENCE_GAP = "producer-sequence-gap", Warning, Segments,
        "A producer's first batch after the latest snapshot does not continue the sequence the snapshot records.",
        "Records of an idempotent producer are missing between the snapshot and the log, or the snapshot is stale.";
    TRANSACTION_OPEN = "transaction-open", Info, Segments,
        "A transaction has batches but no commit or abort marker up to the log end.",
        "Normal while a producer is in a transaction; after an incident the coordinator aborts it on timeout. read_committed consumers stall at its first offset.";
    EPOCH_BEYOND_CONTROLLER = "epoch-beyond-controller", Error, Replication,
        "A replica holds batches of a leader epoch higher than the controller ever assigned to the partition (metadata log).",
        "The replica's data did not come from this cluster's leaders, or the metadata log is older than the data; compare the capture times.";
    UNCLEAN_ELECTION = "unclean-election", Warning, Replication,
        "The metadata log records an unclean leader election: a leader from outside the ISR (leader recovery state RECOVERING).",
        "Records acknowledged by the previous leader may be lost; run `klf diff --records` on the partition.";
}

/// The table entry of `code`.
pub fn info(code: &str) -> Option<&'static CheckInfo> {
    CHECKS.iter().find(|c| c.code == code)
}

/// Where a finding is. Fields that do not apply are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Location {
    /// Broker (node id), when the finding is about one replica.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker: Option<i32>,
    /// Topic.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub topic: Option<String>,
    /// Partition.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub partition: Option<i32>,
    /// The file, as found under the given paths.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// Byte position in the file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub position: Option<u64>,
    /// Kafka offset concerned.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offset: Option<i64>,
}

impl Location {
    /// The identity a baseline matches on: every field, with the file reduced
    /// to its name (broker, topic and partition already say where it is, and
    /// the capture may move between runs).
    pub fn baseline_key(&self) -> Location {
        Location {
            file: self.file.as_deref().map(|f| file_name_of(f).to_string()),
            ..self.clone()
        }
    }
}

fn file_name_of(f: &str) -> &str {
    Path::new(f)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(f)
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable code (see [`CHECKS`]).
    pub code: String,
    /// Severity.
    pub severity: Severity,
    /// Family of the check.
    pub family: Family,
    /// Where.
    #[serde(flatten)]
    pub location: Location,
    /// What is wrong, with the numbers.
    pub message: String,
    /// What it means and what to do.
    pub hint: String,
    /// Accepted by the baseline (set by [`apply_baseline`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
}

/// A replica (or partition) the checks ran on; JUnit renders one test case
/// per subject and family.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subject {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Broker; `None` for the partition as a whole (replication checks).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker: Option<i32>,
}

/// Counts over a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Partitions checked (metadata logs included).
    pub partitions: u64,
    /// Replicas checked.
    pub replicas: u64,
    /// Segments read.
    pub segments: u64,
    /// Batches read.
    pub batches: u64,
    /// Bytes of segment data read.
    pub bytes: u64,
    /// Findings by severity (baselined ones included).
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Infos.
    pub infos: u64,
    /// Findings accepted by a baseline.
    pub baselined: u64,
}

/// Everything `check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Findings, sorted by location then code.
    pub findings: Vec<Finding>,
    /// Counts.
    pub summary: Summary,
    /// Per partition with two or more replicas: the reference replica and
    /// the loss, as `klf diff` computes them.
    pub partitions: Vec<PartitionCheck>,
    /// What was checked.
    #[serde(skip)]
    pub subjects: Vec<Subject>,
}

/// A partition's reference and loss, as `klf diff` reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionCheck {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The reference replica the cross-replica checks compared against.
    pub reference: ReferenceChoice,
    /// What the partition loses.
    pub loss: LossBrief,
}

/// The figures of a partition's loss (see `klf diff`'s `loss`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossBrief {
    /// Data records lost.
    pub records: u64,
    /// Control records lost.
    pub control_records: u64,
    /// Of the data records, proven committed.
    pub committed_proven: u64,
    /// Possibly committed (upper bound); `null` when it cannot be computed.
    pub committed_possible: Option<u64>,
    /// Neither proven nor bounded.
    pub committed_unknown: u64,
    /// `committed-lost`, `possibly-committed-lost`, `unknown-lost`,
    /// `uncommitted-lost` or `nothing-lost`.
    pub verdict: String,
}

/// How the cross-replica checks get a partition's diff and loss from the
/// replica logs they read: the engine's analysis, with the capture's
/// evidence (the same reference and loss as `klf diff`).
pub type PartitionAnalyzer<'a> =
    dyn Fn(&str, i32, Vec<ReplicaLog>) -> (PartitionDiff, PartitionLoss) + Sync + 'a;

impl CheckReport {
    /// Findings at or above `level` that no baseline accepted.
    pub fn failing(&self, level: Severity) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(move |f| f.severity >= level && !f.baselined)
    }

    fn recount(&mut self) {
        let s = &mut self.summary;
        s.errors = 0;
        s.warnings = 0;
        s.infos = 0;
        s.baselined = 0;
        for f in &self.findings {
            match f.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
            if f.baselined {
                s.baselined += 1;
            }
        }
    }
}

/// Builds a finding from the code table.
fn finding(code: &'static str, location: Location, message: impl Into<String>) -> Finding {
    let (severity, family, hint) = match info(code) {
        Some(i) => (i.severity, i.family, i.hint),
        None => (Severity::Error, Family::Capture, ""),
    };
    Finding {
        code: code.to_string(),
        severity,
        family,
        location,
        message: message.into(),
        hint: hint.to_string(),
        baselined: false,
    }
}

/// `(base offset, last offset, leader epoch, crc)` of a batch.
type BatchKey = (i64, i64, i32, u32);

/// Where one batch was read.
#[derive(Debug, Clone)]
struct BatchLoc {
    summary: BatchSummary,
    file: usize,
    position: u64,
}

/// One replica after its own checks.
struct ReplicaResult {
    findings: Vec<Finding>,
    log: ReplicaLog,
    batches: Vec<BatchLoc>,
    files: Vec<PathBuf>,
    segments: u64,
    bytes: u64,
    /// `cleaner-offset-checkpoint` value: below it the log was compacted.
    cleaned_to: Option<i64>,
}

impl ReplicaResult {
    fn loc_of_offset(&self, base: &Location, offset: i64) -> Location {
        let mut l = base.clone();
        l.offset = Some(offset);
        if let Some(b) = self
            .batches
            .iter()
            .find(|b| b.summary.base_offset <= offset && offset <= b.summary.last_offset)
            .or_else(|| {
                self.batches
                    .iter()
                    .find(|b| b.summary.base_offset >= offset)
            })
        {
            l.file = self.files.get(b.file).map(|p| p.display().to_string());
            l.position = Some(b.position);
        }
        l
    }
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

/// Runs every check on everything `capture` holds. `progress` is called once
/// per replica checked (from worker threads).
pub fn check_capture(
    capture: &Capture,
    analyze: &PartitionAnalyzer<'_>,
    progress: &(dyn Fn() + Sync),
) -> CheckReport {
    let mut findings = Vec::new();
    findings.extend(capture_findings(capture));

    // Every replica, data partitions and metadata logs, checked in parallel.
    struct Job<'a> {
        replica: &'a Replica,
        broker: i32,
        partition_key: Option<(String, i32)>,
    }
    let mut jobs = Vec::new();
    for ((topic, partition), reps) in &capture.partitions {
        for (i, r) in reps.iter().enumerate() {
            jobs.push(Job {
                replica: r,
                broker: r.node_id.unwrap_or(-(i as i32) - 1),
                partition_key: Some((topic.clone(), *partition)),
            });
        }
    }
    for (i, r) in capture.metadata_logs.iter().enumerate() {
        jobs.push(Job {
            replica: r,
            broker: r.node_id.unwrap_or(-(i as i32) - 1),
            partition_key: None,
        });
    }
    let results: Vec<ReplicaResult> = jobs
        .par_iter()
        .map(|j| {
            let r = check_replica(j.replica, j.broker);
            progress();
            r
        })
        .collect();

    let mut summary = Summary::default();
    let mut subjects = BTreeSet::new();
    let mut by_partition: BTreeMap<(String, i32), Vec<&ReplicaResult>> = BTreeMap::new();
    let mut partitions = BTreeSet::new();
    for (j, r) in jobs.iter().zip(&results) {
        summary.replicas += 1;
        summary.segments += r.segments;
        summary.batches += r.batches.len() as u64;
        summary.bytes += r.bytes;
        findings.extend(r.findings.iter().cloned());
        subjects.insert(Subject {
            topic: j.replica.topic.clone(),
            partition: j.replica.partition,
            broker: Some(j.broker),
        });
        partitions.insert((j.replica.topic.clone(), j.replica.partition));
        if let Some(k) = &j.partition_key {
            by_partition.entry(k.clone()).or_default().push(r);
        }
    }
    summary.partitions = partitions.len() as u64;

    let cross: Vec<(Vec<Finding>, PartitionCheck)> = by_partition
        .par_iter()
        .filter(|(_, reps)| reps.len() >= 2)
        .map(|((topic, partition), reps)| check_partition(topic, *partition, reps, analyze))
        .collect();
    let (cross, partition_checks): (Vec<Vec<Finding>>, Vec<PartitionCheck>) =
        cross.into_iter().unzip();
    for ((topic, partition), reps) in &by_partition {
        if reps.len() >= 2 {
            subjects.insert(Subject {
                topic: topic.clone(),
                partition: *partition,
                broker: None,
            });
        }
    }
    findings.extend(cross.into_iter().flatten());
    findings.extend(controller_findings(capture, &by_partition));
    findings.sort_by(|a, b| {
        (&a.location, &a.code, &a.message).cmp(&(&b.location, &b.code, &b.message))
    });
    findings
        .dedup_by(|a, b| a.code == b.code && a.location == b.location && a.message == b.message);
    let mut report = CheckReport {
        findings,
        summary,
        partitions: partition_checks,
        subjects: subjects.into_iter().collect(),
    };
    report.recount();
    report
}

/// Checks against the controller's view, when the capture holds a metadata
/// log: unclean elections, and replica epochs the controller never assigned.
fn controller_findings(
    capture: &Capture,
    by_partition: &BTreeMap<(String, i32), Vec<&ReplicaResult>>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(view) = controller_view(capture) else {
        return out;
    };
    let source = view.source.as_ref().map(|p| display(p));
    for ((topic, partition), history) in &view.partitions {
        let base = Location {
            topic: Some(topic.clone()),
            partition: Some(*partition),
            ..Default::default()
        };
        for e in history.changes.iter().filter(|e| e.unclean) {
            let mut l = base.clone();
            l.file = source.clone();
            l.offset = Some(e.metadata_offset);
            out.push(finding(
                code::UNCLEAN_ELECTION,
                l,
                format!(
                    "the controller elected broker {} leader in epoch {} from outside the ISR (metadata log offset {})",
                    e.leader, e.leader_epoch, e.metadata_offset
                ),
            ));
        }
        let Some(max_epoch) = history.changes.iter().map(|e| e.leader_epoch).max() else {
            continue;
        };
        for r in by_partition
            .get(&(topic.clone(), *partition))
            .into_iter()
            .flatten()
        {
            let Some(b) = r
                .batches
                .iter()
                .find(|b| b.summary.partition_leader_epoch > max_epoch)
            else {
                continue;
            };
            let mut l = base.clone();
            l.broker = Some(r.log.broker);
            l.file = r.files.get(b.file).map(|p| p.display().to_string());
            l.position = Some(b.position);
            l.offset = Some(b.summary.base_offset);
            out.push(finding(
                code::EPOCH_BEYOND_CONTROLLER,
                l,
                format!(
                    "batch at offset {} has leader epoch {}, but the controller's highest epoch for the partition is {max_epoch}",
                    b.summary.base_offset, b.summary.partition_leader_epoch
                ),
            ));
        }
    }
    out
}

/// Discovery's diagnostics as findings: checkpoint files Kafka cannot read,
/// and every warning.
fn capture_findings(capture: &Capture) -> Vec<Finding> {
    let mut out = Vec::new();
    // Replica identity of a path inside a partition directory.
    let mut dirs: BTreeMap<&Path, (i32, &str, i32)> = BTreeMap::new();
    for r in capture
        .partitions
        .values()
        .flatten()
        .chain(&capture.metadata_logs)
        .chain(&capture.set_aside)
    {
        if let Some(n) = r.node_id {
            dirs.insert(&r.dir, (n, &r.topic, r.partition));
        }
    }
    let brokers: BTreeMap<&Path, i32> = capture
        .brokers
        .iter()
        .filter_map(|b| Some((b.path.as_path(), b.node_id?)))
        .collect();
    for d in &capture.warnings {
        let name = d.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_checkpoint = name == LEADER_EPOCH_CHECKPOINT_FILE
            || OffsetCheckpointKind::from_file_name(name).is_some();
        let code = match (is_checkpoint, d.level) {
            (true, Level::Warning) if d.message.contains("Kafka would fail to read it") => {
                code::CHECKPOINT_UNREADABLE
            }
            (true, Level::Note) if d.message.contains("its writer never leaves this") => {
                code::CHECKPOINT_ODDITY
            }
            (_, Level::Warning) => code::CAPTURE_WARNING,
            (_, Level::Note) if name.ends_with(".tmp") => code::WRITE_INTERRUPTED,
            (_, Level::Note) => continue,
        };
        let mut loc = Location {
            file: Some(display(&d.path)),
            ..Location::default()
        };
        let parent = d.path.parent();
        if let Some(&(b, t, p)) = parent
            .and_then(|p| dirs.get(p))
            .or_else(|| dirs.get(d.path.as_path()))
        {
            loc.broker = Some(b);
            loc.topic = Some(t.to_string());
            loc.partition = Some(p);
        } else if let Some(&b) = parent
            .and_then(|p| brokers.get(p))
            .or_else(|| brokers.get(d.path.as_path()))
        {
            loc.broker = Some(b);
        }
        out.push(finding(code, loc, d.message.clone()));
    }
    out
}

/// Checks of one replica on its own: segments, indexes, epochs, offsets.
fn check_replica(replica: &Replica, broker: i32) -> ReplicaResult {
    let base = Location {
        broker: Some(broker),
        topic: Some(replica.topic.clone()),
        partition: Some(replica.partition),
        ..Location::default()
    };
    let logs: Vec<(&crate::capture::discover::SegmentFiles, &PathBuf)> = replica
        .segments
        .iter()
        .filter_map(|s| s.log.as_ref().map(|p| (s, p)))
        .collect();
    let nseg = logs.len();
    // Segments are read in parallel; what spans segments is checked after.
    let scans: Vec<SegmentScan> = logs
        .par_iter()
        .enumerate()
        .map(|(i, (seg, path))| scan_segment(seg, path, i, i + 1 == nseg, &base))
        .collect();
    let mut findings = Vec::new();
    let files: Vec<PathBuf> = logs.iter().map(|(_, p)| (*p).clone()).collect();
    let mut batches: Vec<BatchLoc> = Vec::new();
    let segments = nseg as u64;
    let mut bytes_read = 0u64;
    let last_segment_base = logs.last().map(|(s, _)| s.base_offset);
    let mut prev_last: Option<(i64, usize)> = None; // last offset of the previous segment, its file
    for (fidx, ((seg, path), scan)) in logs.iter().zip(scans).enumerate() {
        findings.extend(scan.findings);
        bytes_read += scan.bytes_read;
        if let (Some((pos, first)), Some((pl, pf))) = (scan.first, prev_last) {
            if first <= pl || seg.base_offset <= pl {
                findings.push(finding(
                    code::SEGMENT_OVERLAP,
                    Location {
                        file: Some(display(path)),
                        position: Some(pos),
                        offset: Some(first),
                        ..base.clone()
                    },
                    format!(
                        "segment {} (first batch at offset {first}) overlaps the previous segment {} that ends at offset {pl}",
                        seg.base_offset,
                        files.get(pf).map(|p| file_name_of_path(p)).unwrap_or_default()
                    ),
                ));
            }
        }
        if let Some(p) = scan.last {
            prev_last = Some((p, fidx));
        }
        batches.extend(scan.batches);
    }
    let summaries: Vec<BatchSummary> = batches.iter().map(|b| b.summary.clone()).collect();
    let log = replica_log(replica, broker, summaries, last_segment_base);
    let mut result = ReplicaResult {
        findings,
        log,
        batches,
        files,
        segments,
        bytes: bytes_read,
        cleaned_to: replica.cleaner_offset,
    };
    check_epochs(replica, &base, &mut result);
    if replica.kind != ReplicaKind::Metadata {
        check_offsets(replica, &base, &mut result);
        check_producers(replica, &base, &mut result);
    }
    result
}

/// What one segment's own checks found.
struct SegmentScan {
    findings: Vec<Finding>,
    batches: Vec<BatchLoc>,
    /// Position and offset of the first batch.
    first: Option<(u64, i64)>,
    /// Greatest last offset of its batches.
    last: Option<i64>,
    bytes_read: u64,
}

/// Reads one segment (`fidx`: its number among the replica's `.log` files):
/// framing, checksums, headers, offset order within it, its name, its tail
/// and its indexes.
fn scan_segment(
    seg: &crate::capture::discover::SegmentFiles,
    path: &Path,
    fidx: usize,
    is_last: bool,
    base: &Location,
) -> SegmentScan {
    let mut findings = Vec::new();
    let mut batches: Vec<BatchLoc> = Vec::new();
    let mut first_batch = None;
    let at = |position: Option<u64>, offset: Option<i64>| Location {
        file: Some(display(path)),
        position,
        offset,
        ..base.clone()
    };
    let data = match crate::capture::vfs::open(path) {
        Ok(b) => b,
        Err(e) => {
            findings.push(finding(
                code::FILE_UNREADABLE,
                at(None, None),
                format!("cannot read: {e}"),
            ));
            return SegmentScan {
                findings,
                batches,
                first: None,
                last: None,
                bytes_read: 0,
            };
        }
    };
    let mut released = 0usize;
    let mut it = SegmentIter::new(&data);
    let mut prev_in_seg: Option<i64> = None;
    // Where reading stopped on damage: index entries past it are not judged.
    let mut stopped: Option<u64> = None;
    for item in it.by_ref() {
        let batch = match item {
            Ok(b) => b,
            Err(e) => {
                let code = if e.reason.contains("magic") {
                    code::BATCH_BAD_MAGIC
                } else {
                    code::BATCH_FRAMING
                };
                findings.push(finding(
                    code,
                    at(Some(e.pos), None),
                    format!(
                        "{}; the rest of the segment ({} bytes) cannot be read",
                        e.reason,
                        (data.len() as u64).saturating_sub(e.pos)
                    ),
                ));
                stopped = Some(e.pos);
                break;
            }
        };
        let pos = batch.position();
        let rest = (data.len() as u64).saturating_sub(pos);
        let magic = batch.magic();
        if !(0..=2).contains(&magic) {
            findings.push(finding(
                code::BATCH_BAD_MAGIC,
                at(Some(pos), Some(batch.offset_field())),
                format!(
                    "magic {magic} is not 0, 1 or 2; the rest of the segment ({rest} bytes) is not a readable log"
                ),
            ));
            stopped = Some(pos);
            break;
        }
        if let Err(e) = batch.check_crc() {
            let code = match batch {
                Batch::V2(b) if b.bytes().len() < V2_HEADER_SIZE => code::BATCH_FRAMING,
                _ => code::BATCH_CRC_MISMATCH,
            };
            findings.push(finding(
                code,
                at(Some(pos), Some(batch.offset_field())),
                format!(
                    "{}; Kafka's recovery truncates the segment here, dropping {rest} bytes",
                    e.reason
                ),
            ));
            stopped = Some(pos);
            break;
        }
        data.consumed(pos as usize, &mut released);
        let summary = summarize(&batch);
        if let Batch::V2(b) = batch {
            let delta = b.last_offset_delta();
            let count = b.records_count();
            if delta < 0 || count < 0 || i64::from(count) > i64::from(delta) + 1 {
                findings.push(finding(
                    code::BATCH_HEADER_INVALID,
                    at(Some(pos), Some(b.base_offset())),
                    format!(
                        "last offset delta {delta} and record count {count} are impossible together"
                    ),
                ));
            }
        }
        // For a legacy compressed wrapper the offset field is its last
        // inner offset: only v2 base offsets can be compared as firsts.
        let first = summary.base_offset;
        if let Some(p) = prev_in_seg {
            if first <= p {
                findings.push(finding(
                    code::BATCH_OFFSET_ORDER,
                    at(Some(pos), Some(first)),
                    format!(
                        "batch at offset {first} follows a batch ending at offset {p}: offsets do not increase"
                    ),
                ));
            }
        } else {
            first_batch = Some((pos, first));
            if summary.last_offset < seg.base_offset
                || (matches!(batch, Batch::V2(_)) && first < seg.base_offset)
            {
                findings.push(finding(
                    code::SEGMENT_NAME_MISMATCH,
                    at(Some(pos), Some(first)),
                    format!(
                        "first batch starts at offset {first}, below the segment's base offset {} from its name",
                        seg.base_offset
                    ),
                ));
            }
        }
        prev_in_seg = Some(prev_in_seg.map_or(summary.last_offset, |p| p.max(summary.last_offset)));
        batches.push(BatchLoc {
            summary,
            file: fidx,
            position: pos,
        });
    }
    if stopped.is_none() {
        if let Some(tail) = it.tail() {
            let declared = match tail.kind {
                TailKind::Truncated { declared } => {
                    format!("; the entry there declares {declared} bytes")
                }
                TailKind::Short => String::new(),
            };
            let (code, where_) = if is_last {
                (code::SEGMENT_TORN_TAIL, "last segment")
            } else {
                (code::SEGMENT_TORN_MIDDLE, "segment that is not the last")
            };
            findings.push(finding(
                code,
                at(Some(tail.position), None),
                format!(
                    "{} bytes after the last complete batch of the {where_}{declared}",
                    tail.len
                ),
            ));
        }
    }
    check_indexes(seg, &data, &batches, is_last, stopped, base, &mut findings);
    SegmentScan {
        findings,
        batches,
        first: first_batch,
        last: prev_in_seg,
        bytes_read: data.len() as u64,
    }
}

/// Producer state: every `.snapshot` file reads under Kafka's own rules
/// (version, CRC-32C); for each producer in the latest snapshot, its next
/// batch after the snapshot offset continues its sequence; transactions
/// still open at the log end are reported.
fn check_producers(replica: &Replica, base: &Location, r: &mut ReplicaResult) {
    let mut latest: Option<(i64, Vec<crate::format::snapshot::ProducerEntry>)> = None;
    for snap in &replica.snapshots {
        let mut l = base.clone();
        l.file = Some(display(&snap.path));
        let data = match crate::capture::vfs::read(&snap.path) {
            Ok(d) => d,
            Err(e) => {
                r.findings.push(finding(
                    code::FILE_UNREADABLE,
                    l,
                    format!("cannot read: {e}"),
                ));
                continue;
            }
        };
        match read_producer_snapshot(&data) {
            Ok(s) => {
                if latest.as_ref().is_none_or(|(o, _)| snap.offset > *o) {
                    latest = Some((snap.offset, s.entries));
                }
            }
            Err(e) => {
                l.position = Some(e.pos);
                r.findings.push(finding(
                    code::PRODUCER_SNAPSHOT_INVALID,
                    l,
                    format!("Kafka would refuse this producer snapshot: {}", e.reason),
                ));
            }
        }
    }
    if let Some((at, entries)) = latest {
        for e in entries.iter().filter(|e| e.last_sequence >= 0) {
            let Some(next) = r.batches.iter().find(|b| {
                b.summary.base_offset >= at
                    && b.summary.producer_id == e.producer_id
                    && !b.summary.is_control
            }) else {
                continue;
            };
            let s = &next.summary;
            // A new producer epoch restarts sequences at 0.
            let expected = if s.producer_epoch == e.producer_epoch {
                if e.last_sequence == i32::MAX {
                    0
                } else {
                    e.last_sequence + 1
                }
            } else {
                0
            };
            if s.base_sequence != expected && s.base_sequence >= 0 {
                let loc = r.loc_of_offset(base, s.base_offset);
                r.findings.push(finding(
                    code::PRODUCER_SEQUENCE_GAP,
                    loc,
                    format!(
                        "producer {} (epoch {}) ends at sequence {} in the snapshot at offset {at}, but its next batch at offset {} starts at sequence {} (epoch {})",
                        e.producer_id, e.producer_epoch, e.last_sequence, s.base_offset, s.base_sequence, s.producer_epoch
                    ),
                ));
            }
        }
    }
    // Transactions open at the log end: a transactional batch of a producer
    // with no control marker after it.
    let mut open: BTreeMap<i64, i64> = BTreeMap::new();
    for b in &r.batches {
        let s = &b.summary;
        if !s.is_transactional || s.producer_id < 0 {
            continue;
        }
        if s.is_control {
            open.remove(&s.producer_id);
        } else {
            open.entry(s.producer_id).or_insert(s.base_offset);
        }
    }
    for (pid, first) in open {
        let loc = r.loc_of_offset(base, first);
        r.findings.push(finding(
            code::TRANSACTION_OPEN,
            loc,
            format!("producer {pid} has a transaction open since offset {first}: no commit or abort marker follows it"),
        ));
    }
}

fn file_name_of_path(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether every byte of `b` is zero.
fn all_zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// `.index` and `.timeindex` of one segment, against the batches read from it.
fn check_indexes(
    seg: &crate::capture::discover::SegmentFiles,
    log: &[u8],
    batches: &[BatchLoc],
    is_last: bool,
    stopped: Option<u64>,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
    let log_len = log.len() as u64;
    let seg_last = batches.iter().map(|b| b.summary.last_offset).max();
    if let Some(path) = &seg.txnindex {
        check_txn_index(
            seg.base_offset,
            path,
            batches,
            stopped.is_none(),
            base,
            findings,
        );
    }
    for (kind, path) in [("index", &seg.index), ("timeindex", &seg.timeindex)] {
        let Some(path) = path else {
            // A segment holding no data needs no index; Kafka recreates them.
            if !batches.is_empty() {
                if let Some(lp) = &seg.log {
                    findings.push(finding(
                        code::INDEX_MISSING,
                        Location {
                            file: Some(display(lp)),
                            ..base.clone()
                        },
                        format!("segment {} has no .{kind} file", seg.base_offset),
                    ));
                }
            }
            continue;
        };
        let at = |position: Option<u64>, offset: Option<i64>| Location {
            file: Some(display(path)),
            position,
            offset,
            ..base.clone()
        };
        let data = match crate::capture::vfs::open(path) {
            Ok(d) => d,
            Err(e) => {
                findings.push(finding(
                    code::FILE_UNREADABLE,
                    at(None, None),
                    format!("cannot read: {e}"),
                ));
                continue;
            }
        };
        let entry_size = if kind == "index" {
            OFFSET_ENTRY_SIZE
        } else {
            TIME_ENTRY_SIZE
        };
        if data.len() % entry_size != 0 {
            findings.push(finding(
                code::INDEX_LENGTH_INVALID,
                at(Some((data.len() - data.len() % entry_size) as u64), None),
                format!(
                    "{} bytes is not a multiple of the {entry_size}-byte entry size",
                    data.len()
                ),
            ));
        }
        let slots = data.len() / entry_size;
        // The first slot from which the file holds nothing but zeros.
        let mut zero_from = slots;
        while zero_from > 0 {
            let s = (zero_from - 1) * entry_size;
            match data.get(s..s + entry_size) {
                Some(e) if all_zero(e) => zero_from -= 1,
                _ => break,
            }
        }
        // All-zero slots at the end are padding: a real .index entry never
        // has relative offset 0 (the first batch is never indexed), and a
        // time-index entry (timestamp 0, base offset) is treated alike.
        if zero_from < slots {
            let padding = slots - zero_from;
            findings.push(finding(
                code::INDEX_PREALLOCATED,
                at(Some((zero_from * entry_size) as u64), None),
                format!(
                    "{padding} zero-filled slots ({} bytes) after {zero_from} entries: a preallocated index that was never trimmed (unclean shutdown or live active segment)",
                    padding * entry_size
                ),
            ));
        }
        // In the last segment, entries past the log's end that only precede
        // padding are stale leftovers of a truncation.
        let past_end = |n: usize| -> bool {
            let s = n * entry_size;
            let rel_at = if kind == "index" { s } else { s + 8 };
            let rel = data
                .get(rel_at..rel_at + 4)
                .map_or(0, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            let offset = seg.base_offset.saturating_add(i64::from(rel));
            let beyond_pos = kind == "index"
                && data.get(s + 4..s + 8).is_some_and(|b| {
                    i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])) >= log_len as i64
                });
            !matches!(seg_last, Some(l) if offset <= l) || beyond_pos
        };
        let mut live_to = zero_from;
        if is_last && stopped.is_none() {
            while live_to > 0 && past_end(live_to - 1) {
                live_to -= 1;
            }
            if live_to < zero_from {
                findings.push(finding(
                    code::INDEX_STALE_ENTRIES,
                    at(Some((live_to * entry_size) as u64), None),
                    format!(
                        "{} entries after entry {live_to} point past the end of the log (last offset {}, {log_len} bytes): leftovers of a truncation in a preallocated index",
                        zero_from - live_to,
                        seg_last.map_or("none".to_string(), |l| l.to_string())
                    ),
                ));
            }
        }
        let mut reported: BTreeSet<&'static str> = BTreeSet::new();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut report = |code: &'static str, pos: usize, offset: Option<i64>, msg: String| {
            *counts.entry(code).or_default() += 1;
            if reported.insert(code) {
                findings.push(finding(code, at(Some(pos as u64), offset), msg));
            }
        };
        let be = |s: usize, n: usize| -> i64 {
            let mut v: i64 = 0;
            for i in 0..n {
                v = (v << 8) | i64::from(data.get(s + i).copied().unwrap_or(0));
            }
            if n == 4 {
                i64::from(v as u32 as i32)
            } else {
                v
            }
        };
        let mut prev: Option<(i64, i64)> = None;
        for n in 0..live_to {
            let s = n * entry_size;
            if kind == "index" {
                let rel = be(s, 4);
                let position = be(s + 4, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some_and(|p| position >= p as i64) {
                    continue;
                }
                if let Some((po, _)) = prev {
                    if offset <= po {
                        report(
                            code::INDEX_NOT_MONOTONIC,
                            s,
                            Some(offset),
                            format!("entry {n}: offset {offset} does not increase over the previous entry's {po}"),
                        );
                    }
                }
                prev = Some((offset, position));
                if rel < 0
                    || position < 0
                    || position as u64 >= log_len
                    || seg_last.is_some_and(|l| offset > l)
                    || seg_last.is_none()
                {
                    report(
                        code::INDEX_OUTSIDE_SEGMENT,
                        s,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} at position {position} is outside the segment (base offset {}, last offset {}, {log_len} bytes)",
                            seg.base_offset,
                            seg_last.map_or("none".to_string(), |l| l.to_string())
                        ),
                    );
                    continue;
                }
                // The position must start a batch; the entry's offset is the
                // last offset of an append that began there: at least that
                // batch's last offset, and the last offset of some batch.
                match batches.binary_search_by_key(&(position as u64), |b| b.position) {
                    Err(_) => report(
                        code::INDEX_ENTRY_MISMATCH,
                        s,
                        Some(offset),
                        format!("entry {n}: position {position} for offset {offset} is not the start of a batch"),
                    ),
                    Ok(i) => {
                        let b = &batches[i].summary;
                        let ends_batch = batches[i..]
                            .iter()
                            .any(|x| x.summary.last_offset == offset);
                        if offset < b.last_offset || !ends_batch {
                            report(
                                code::INDEX_ENTRY_MISMATCH,
                                s,
                                Some(offset),
                                format!(
                                    "entry {n}: offset {offset} does not fit the batch at position {position} (offsets {}..={})",
                                    b.base_offset, b.last_offset
                                ),
                            );
                        }
                    }
                }
            } else {
                let ts = be(s, 8);
                let rel = be(s + 8, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some() && !matches!(seg_last, Some(l) if offset <= l) {
                    continue;
                }
                if let Some((pts, po)) = prev {
                    if ts <= pts || offset < po {
                        report(
                            code::INDEX_NOT_MONOTONIC,
                            s,
                            Some(offset),
                            format!("entry {n}: (timestamp {ts}, offset {offset}) does not increase over ({pts}, {po})"),
                        );
                    }
                }
                prev = Some((ts, offset));
                if rel < 0 || seg_last.is_none() || seg_last.is_some_and(|l| offset > l) {
                    report(
                        code::INDEX_OUTSIDE_SEGMENT,
                        s,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} is outside the segment (base offset {}, last offset {})",
                            seg.base_offset,
                            seg_last.map_or("none".to_string(), |l| l.to_string())
                        ),
                    );
                    continue;
                }
                // Kafka 4.x writes a time index entry at the offset of the
                // record with the largest timestamp, which can lie inside a
                // batch (a follower appending a leader's batch does this; the
                // divergence capture has one). kafka-dump-log's own check
                // calls that a mismatch; Kafka itself reads it fine.
                if !batches
                    .iter()
                    .any(|b| b.summary.base_offset <= offset && offset <= b.summary.last_offset)
                {
                    report(
                        code::INDEX_ENTRY_MISMATCH,
                        s,
                        Some(offset),
                        format!("entry {n}: offset {offset} is in no batch of the segment"),
                    );
                }
            }
        }
        for (code, n) in counts {
            if n > 1 {
                if let Some(f) = findings
                    .iter_mut()
                    .rev()
                    .find(|f| f.code == code && f.location.file.as_deref() == Some(&display(path)))
                {
                    f.message
                        .push_str(&format!(" ({} more entries like this)", n - 1));
                }
            }
        }
    }
}

/// `.txnindex` entries: Kafka's load-time rules, and each abort marker is a
/// control batch of the segment.
fn check_txn_index(
    base_offset: i64,
    path: &Path,
    batches: &[BatchLoc],
    complete: bool,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
    let at = |position: u64, offset: Option<i64>| Location {
        file: Some(display(path)),
        position: Some(position),
        offset,
        ..base.clone()
    };
    let data = match crate::capture::vfs::open(path) {
        Ok(d) => d,
        Err(e) => {
            findings.push(finding(
                code::FILE_UNREADABLE,
                Location {
                    file: Some(display(path)),
                    ..base.clone()
                },
                format!("cannot read: {e}"),
            ));
            return;
        }
    };
    let Ok(idx) = parse_txn_index(&data) else {
        return;
    };
    let seg_last = batches.iter().map(|b| b.summary.last_offset).max();
    let mut problems = Vec::new();
    for e in &idx.entries {
        let why = if !e.version_supported() {
            Some(format!(
                "entry version {} is not one Kafka reads",
                e.version
            ))
        } else if e.last_offset < base_offset {
            Some(format!(
                "abort marker offset {} is below the segment base offset {base_offset}",
                e.last_offset
            ))
        } else if e.first_offset > e.last_offset {
            Some(format!(
                "first offset {} is after the abort marker offset {}",
                e.first_offset, e.last_offset
            ))
        } else if complete
            && !batches
                .iter()
                .any(|b| b.summary.is_control && b.summary.base_offset == e.last_offset)
            && matches!(seg_last, Some(l) if e.last_offset <= l)
        {
            Some(format!(
                "no control batch at the abort marker offset {} of producer {}",
                e.last_offset, e.producer_id
            ))
        } else if complete && !matches!(seg_last, Some(l) if e.last_offset <= l) {
            Some(format!(
                "abort marker offset {} is past the segment's last offset {}",
                e.last_offset,
                seg_last.map_or("none".to_string(), |l| l.to_string())
            ))
        } else {
            None
        };
        if let Some(w) = why {
            problems.push((e.position, e.last_offset, w));
        }
    }
    if let Some((pos, off, why)) = problems.first() {
        let more = match problems.len() {
            1 => String::new(),
            n => format!(" ({} more entries like this)", n - 1),
        };
        findings.push(finding(
            code::TXN_INDEX_INVALID,
            at(*pos, Some(*off)),
            format!("{why}{more}"),
        ));
    }
}

/// Leader epochs in the batches and the `leader-epoch-checkpoint`, through
/// [`timeline`].
fn check_epochs(replica: &Replica, base: &Location, r: &mut ReplicaResult) {
    let t = timeline(&r.log);
    let has_epochs = r.log.batches.iter().any(|b| b.partition_leader_epoch >= 0);
    let cp_loc = || Location {
        file: replica
            .leader_epoch_checkpoint
            .as_ref()
            .map(|c| display(&c.path))
            .or_else(|| Some(display(&replica.dir.join(LEADER_EPOCH_CHECKPOINT_FILE)))),
        ..base.clone()
    };
    let mut regressions = Vec::new();
    let mut max_epoch = -1;
    for b in &r.batches {
        let e = b.summary.partition_leader_epoch;
        if e >= 0 && e < max_epoch {
            regressions.push((b.summary.base_offset, e));
        }
        max_epoch = max_epoch.max(e);
    }
    for d in &t.disagreements {
        let (code, loc) = match d.code {
            "epoch-regression" => {
                let off = regressions
                    .iter()
                    .find(|(_, e)| Some(*e) == d.epoch)
                    .map(|(o, _)| *o);
                let loc = match off {
                    Some(o) => r.loc_of_offset(base, o),
                    None => base.clone(),
                };
                (code::EPOCH_REGRESSION, loc)
            }
            "checkpoint-missing" => {
                if !has_epochs {
                    // v0/v1 logs and empty logs carry no epochs to record.
                    continue;
                }
                (code::CHECKPOINT_MISSING, cp_loc())
            }
            "checkpoint-not-monotonic" => (code::CHECKPOINT_NOT_MONOTONIC, cp_loc()),
            "checkpoint-past-log-end" => (code::CHECKPOINT_PAST_LOG_END, cp_loc()),
            "epoch-missing-from-checkpoint" => {
                let mut l = cp_loc();
                l.offset = t
                    .from_batches
                    .iter()
                    .find(|s| Some(s.epoch) == d.epoch)
                    .map(|s| s.start_offset);
                (code::EPOCH_MISSING_FROM_CHECKPOINT, l)
            }
            "epoch-start-mismatch" => {
                let mut l = cp_loc();
                l.offset = t
                    .from_batches
                    .iter()
                    .find(|s| Some(s.epoch) == d.epoch)
                    .map(|s| s.start_offset);
                (code::EPOCH_START_MISMATCH, l)
            }
            "checkpoint-epoch-without-batches" => {
                (code::CHECKPOINT_EPOCH_WITHOUT_BATCHES, cp_loc())
            }
            _ => continue,
        };
        r.findings.push(finding(code, loc, d.message.clone()));
    }
}

/// Log start ≤ high watermark ≤ log end; recovery point ≤ log end.
fn check_offsets(replica: &Replica, base: &Location, r: &mut ReplicaResult) {
    let lso = r.log.log_start_offset;
    let leo = r.log.log_end_offset;
    let cp_file = |name: &str| Location {
        file: Some(display(&replica.log_dir.join(name))),
        ..base.clone()
    };
    let hw_file = OffsetCheckpointKind::ReplicationOffset.file_name();
    let rp_file = OffsetCheckpointKind::RecoveryPoint.file_name();
    if lso > leo {
        r.findings.push(finding(
            code::LOG_START_BEYOND_LOG_END,
            Location {
                offset: Some(lso),
                ..base.clone()
            },
            format!("log start offset {lso} is above the log end offset {leo}"),
        ));
    }
    match replica.high_watermark {
        None => r.findings.push(finding(
            code::HIGH_WATERMARK_MISSING,
            cp_file(hw_file),
            format!("{hw_file} has no entry for this partition"),
        )),
        Some(hw) => {
            if hw < lso {
                r.findings.push(finding(
                    code::HIGH_WATERMARK_BELOW_LOG_START,
                    Location {
                        offset: Some(hw),
                        ..cp_file(hw_file)
                    },
                    format!("high watermark {hw} is below the log start offset {lso}"),
                ));
            }
            if hw > leo {
                r.findings.push(finding(
                    code::HIGH_WATERMARK_BEYOND_LOG_END,
                    Location {
                        offset: Some(hw),
                        ..cp_file(hw_file)
                    },
                    format!(
                        "high watermark {hw} is above the log end offset {leo}: {} committed offsets are not on disk",
                        hw - leo
                    ),
                ));
            }
        }
    }
    if replica.recovery_point.is_none() && leo > lso {
        r.findings.push(finding(
            code::RECOVERY_POINT_MISSING,
            cp_file(rp_file),
            format!("{rp_file} has no entry for this partition"),
        ));
    }
    if let Some(rp) = replica.recovery_point {
        if rp > leo {
            r.findings.push(finding(
                code::RECOVERY_POINT_BEYOND_LOG_END,
                Location {
                    offset: Some(rp),
                    ..cp_file(rp_file)
                },
                format!("recovery point {rp} is above the log end offset {leo}"),
            ));
        } else if rp < leo {
            r.findings.push(finding(
                code::RECOVERY_POINT_BEHIND_LOG_END,
                Location {
                    offset: Some(rp),
                    ..cp_file(rp_file)
                },
                format!(
                    "recovery point {rp} is below the log end offset {leo}: offsets {rp}..{leo} were not known flushed"
                ),
            ));
        }
    }
}

/// Cross-replica checks of one partition: identical batches below the
/// smallest high watermark, then [`diff_partition`]'s divergence and
/// predicted truncation.
fn check_partition(
    topic: &str,
    partition: i32,
    reps: &[&ReplicaResult],
    analyze: &PartitionAnalyzer<'_>,
) -> (Vec<Finding>, PartitionCheck) {
    let mut out = Vec::new();
    let base_of = |r: &ReplicaResult| Location {
        broker: Some(r.log.broker),
        topic: Some(topic.to_string()),
        partition: Some(partition),
        ..Location::default()
    };
    // Below every replica's high watermark, all replicas must agree.
    let min_hw = reps
        .iter()
        .map(|r| {
            r.log
                .high_watermark
                .unwrap_or(r.log.log_start_offset)
                .clamp(
                    r.log.log_start_offset,
                    r.log.log_end_offset.max(r.log.log_start_offset),
                )
        })
        .min()
        .unwrap_or(0);
    // Each broker's cleaner compacts on its own schedule: below the highest
    // cleaned offset, replicas legitimately hold different batches.
    let cleaned_to = reps.iter().filter_map(|r| r.cleaned_to).max();
    let lo = reps
        .iter()
        .map(|r| r.log.log_start_offset)
        .chain(cleaned_to)
        .max()
        .unwrap_or(0);
    let logs: Vec<ReplicaLog> = reps
        .iter()
        .map(|r| {
            let mut log = r.log.clone();
            if let Some(c) = cleaned_to {
                let start = log.log_start_offset.max(c.min(log.log_end_offset));
                log.log_start_offset = start;
                log.batches.retain(|b| b.last_offset >= start);
            }
            log
        })
        .collect();
    let (diff, loss) = analyze(topic, partition, logs);
    let reference = diff.reference.broker;
    let mut mismatch_reported = BTreeSet::new();
    if lo < min_hw {
        // Every base offset some replica starts a batch at, below the
        // smallest high watermark: each replica holding that offset must
        // have the same batch there.
        let offsets: BTreeSet<i64> = reps
            .iter()
            .flat_map(|r| r.batches.iter().map(|b| b.summary.base_offset))
            .filter(|o| (lo..min_hw).contains(o))
            .collect();
        for o in offsets {
            // Replica index → its batch key at `o` (None: no batch starts there).
            let mut groups: BTreeMap<Option<BatchKey>, Vec<usize>> = BTreeMap::new();
            for (i, r) in reps.iter().enumerate() {
                if o < r.log.log_start_offset || o >= r.log.log_end_offset {
                    continue;
                }
                let key = r
                    .batches
                    .iter()
                    .find(|b| b.summary.base_offset == o)
                    .map(|b| b.summary.key());
                groups.entry(key).or_default().push(i);
            }
            if groups.len() < 2 {
                continue;
            }
            // The largest group is right; on a tie, the one holding the
            // diff's reference replica.
            let Some(best) = groups
                .iter()
                .max_by_key(|(_, v)| (v.len(), v.iter().any(|&i| reps[i].log.broker == reference)))
                .map(|(k, _)| *k)
            else {
                continue;
            };
            let holders: Vec<String> = groups
                .get(&best)
                .map(|v| v.iter().map(|&i| reps[i].log.broker.to_string()).collect())
                .unwrap_or_default();
            for (key, members) in &groups {
                if *key == best {
                    continue;
                }
                for &i in members {
                    let r = reps[i];
                    if !mismatch_reported.insert(r.log.broker) {
                        continue;
                    }
                    let mut l = base_of(r);
                    l.offset = Some(o);
                    let mine = r
                        .batches
                        .iter()
                        .find(|b| b.summary.base_offset == o)
                        .or_else(|| {
                            r.batches
                                .iter()
                                .find(|b| b.summary.base_offset <= o && o <= b.summary.last_offset)
                        });
                    let what = match mine {
                        Some(b) => {
                            l.file = r.files.get(b.file).map(|p| display(p));
                            l.position = Some(b.position);
                            format!(
                                "batch {}..={} (epoch {}, crc {:#010x})",
                                b.summary.base_offset,
                                b.summary.last_offset,
                                b.summary.partition_leader_epoch,
                                b.summary.crc
                            )
                        }
                        None => format!("no batch boundary at offset {o}"),
                    };
                    let theirs = match best {
                        Some((b, last, e, crc)) => {
                            format!("batch {b}..={last} (epoch {e}, crc {crc:#010x})")
                        }
                        None => "no batch starting there".to_string(),
                    };
                    out.push(finding(
                        code::LOG_MATCHING_VIOLATION,
                        l,
                        format!(
                            "{what} differs from broker(s) {}, which hold {theirs}, below the smallest high watermark {min_hw}",
                            holders.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    for rd in &diff.replicas {
        let Some(r) = reps.iter().find(|r| r.log.broker == rd.broker) else {
            continue;
        };
        let base = base_of(r);
        for f in &rd.findings {
            match f.kind {
                FindingKind::LogMatchingViolation => {
                    if mismatch_reported.contains(&rd.broker) {
                        continue;
                    }
                    let off = rd.divergence_offset.unwrap_or(rd.log_start_offset);
                    out.push(finding(
                        code::LOG_MATCHING_VIOLATION,
                        r.loc_of_offset(&base, off),
                        format!("{} (reference broker {})", f.detail, diff.reference.broker),
                    ));
                }
                FindingKind::ProtocolKeepsDivergentRecords => out.push(finding(
                    code::PROTOCOL_KEEPS_DIVERGENT,
                    r.loc_of_offset(&base, rd.divergence_offset.unwrap_or(rd.truncation_offset)),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                FindingKind::ReferenceBehindReplicaEpoch => out.push(finding(
                    code::REPLICA_EPOCH_AHEAD,
                    base.clone(),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                FindingKind::DisjointLogs => out.push(finding(
                    code::REPLICAS_DISJOINT,
                    base.clone(),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                FindingKind::TruncationNotConverged | FindingKind::LogReset => out.push(finding(
                    code::TRUNCATION_UNRESOLVED,
                    base.clone(),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                _ => {}
            }
        }
        if rd.records_to_truncate > 0 || rd.divergence_kind == DivergenceKind::Diverged {
            out.push(finding(
                code::DIVERGENT_TAIL,
                r.loc_of_offset(&base, rd.divergence_offset.unwrap_or(rd.truncation_offset)),
                format!(
                    "diverges from broker {} at offset {}; Kafka truncates it to offset {}, cutting {} records ({} of them on no other replica, {} below a high watermark of a replica holding them)",
                    diff.reference.broker,
                    rd.divergence_offset.map_or("-".to_string(), |d| d.to_string()),
                    rd.truncation_offset,
                    rd.records_to_truncate,
                    rd.records_only_here,
                    rd.committed_records_to_truncate
                ),
            ));
        } else if rd.divergence_kind == DivergenceKind::Prefix {
            out.push(finding(
                code::REPLICA_BEHIND,
                Location {
                    offset: Some(rd.log_end_offset),
                    ..base.clone()
                },
                format!(
                    "log ends at {} while the reference broker {} ends at {}",
                    rd.log_end_offset,
                    diff.reference.broker,
                    diff.replicas
                        .iter()
                        .find(|x| x.broker == diff.reference.broker)
                        .map_or(0, |x| x.log_end_offset)
                ),
            ));
        }
    }
    // The partition's loss, counted once.
    let code = match loss.verdict {
        Verdict::CommittedLost => Some(code::COMMITTED_RECORDS_LOST),
        Verdict::PossiblyCommittedLost | Verdict::UnknownLost => {
            Some(code::POSSIBLY_COMMITTED_RECORDS_LOST)
        }
        Verdict::UncommittedLost => Some(code::UNCOMMITTED_RECORDS_LOST),
        Verdict::NothingLost => None,
    };
    if let Some(code) = code {
        let location = Location {
            topic: Some(topic.to_string()),
            partition: Some(partition),
            offset: loss.offsets.iter().map(|r| r.start).min(),
            ..Location::default()
        };
        out.push(finding(
            code,
            location,
            format!(
                "following broker {}: {}",
                diff.reference.broker,
                loss_headline(&loss)
            ),
        ));
    }
    let summary = PartitionCheck {
        topic: topic.to_string(),
        partition,
        reference: diff.reference.clone(),
        loss: LossBrief {
            records: loss.records,
            control_records: loss.control_records,
            committed_proven: loss.committed_proven,
            committed_possible: loss.committed_possible,
            committed_unknown: loss.committed_unknown,
            verdict: loss.verdict.name().to_string(),
        },
    };
    (out, summary)
}

/// A baseline: the findings accepted as known, by code and location.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// Format version (1).
    pub version: u32,
    /// Accepted findings.
    pub findings: Vec<BaselineEntry>,
}

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// Code.
    pub code: String,
    /// Location (file reduced to its name).
    #[serde(flatten)]
    pub location: Location,
}

impl Baseline {
    /// The baseline accepting every finding of `report`.
    pub fn from_report(report: &CheckReport) -> Baseline {
        let mut findings: Vec<BaselineEntry> = report
            .findings
            .iter()
            .map(|f| BaselineEntry {
                code: f.code.clone(),
                location: f.location.baseline_key(),
            })
            .collect();
        findings.sort();
        findings.dedup();
        Baseline {
            version: 1,
            findings,
        }
    }
}

/// Marks the findings `baseline` accepts; returns how many were accepted.
pub fn apply_baseline(report: &mut CheckReport, baseline: &Baseline) -> u64 {
    let known: BTreeSet<(&str, Location)> = baseline
        .findings
        .iter()
        .map(|e| (e.code.as_str(), e.location.baseline_key()))
        .collect();
    for f in &mut report.findings {
        if known.contains(&(f.code.as_str(), f.location.baseline_key())) {
            f.baselined = true;
        }
    }
    report.recount();
    report.summary.baselined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_documented() {
        let mut seen = BTreeSet::new();
        for c in CHECKS {
            assert!(seen.insert(c.code), "duplicate code {}", c.code);
            assert!(
                c.code
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-'),
                "{} is not kebab-case",
                c.code
            );
            assert!(!c.meaning.is_empty() && !c.hint.is_empty(), "{}", c.code);
            assert_eq!(info(c.code), Some(c));
        }
        assert_eq!(
            finding(code::BATCH_CRC_MISMATCH, Location::default(), "x").severity,
            Severity::Error
        );
    }

    #[test]
    fn baseline_matches_on_code_and_location_not_message_or_directory() {
        let loc = |file: &str| Location {
            broker: Some(1),
            topic: Some("t".into()),
            partition: Some(0),
            file: Some(file.into()),
            position: Some(10),
            offset: Some(5),
        };
        let mut report = CheckReport {
            findings: vec![
                finding(code::BATCH_CRC_MISMATCH, loc("a/t-0/00.log"), "one"),
                finding(code::BATCH_FRAMING, loc("a/t-0/00.log"), "two"),
            ],
            ..CheckReport::default()
        };
        let baseline = Baseline {
            version: 1,
            findings: vec![BaselineEntry {
                code: code::BATCH_CRC_MISMATCH.into(),
                location: loc("elsewhere/t-0/00.log"),
            }],
        };
        assert_eq!(apply_baseline(&mut report, &baseline), 1);
        assert!(report.findings[0].baselined);
        assert!(!report.findings[1].baselined);
        assert_eq!(report.failing(Severity::Error).count(), 1);
        let mut moved = loc("a/t-0/00.log");
        moved.position = Some(11);
        let mut other = CheckReport {
            findings: vec![finding(code::BATCH_CRC_MISMATCH, moved, "one")],
            ..CheckReport::default()
        };
        assert_eq!(apply_baseline(&mut other, &baseline), 0);
    }

    #[test]
    fn severities_order() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Error);
    }
}
