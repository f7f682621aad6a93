//! The plain data of a partition's diff: per replica where it parts from
//! the reference, where Kafka truncates it and what that cuts, with the
//! findings; per partition the reference, the truncation protocol
//! modelled and what was read. `analysis::diff` computes it; the loss
//! ([`crate::model::loss`]) is counted from it.

use serde::{Deserialize, Serialize};

use crate::model::loss::PartitionLoss;
use crate::model::truncation::{EpochStart, Outcome, ReplicationProtocol, Round};

/// Options of the diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DiffOptions {
    /// Protocol used for `truncation_offset` (default: truncation on fetch, Kafka >= 2.7).
    #[serde(default)]
    pub protocol: ReplicationProtocol,
    /// Where `protocol` comes from.
    #[serde(default)]
    pub source: ProtocolSource,
    /// When the protocol is assumed: the other protocol the cluster may
    /// have run, predicted too (`alternative_truncation_offset`); a
    /// replica whose truncation differs under it gets the partition finding
    /// `truncation-depends-on-protocol`.
    #[serde(default)]
    pub alternative: Option<ReplicationProtocol>,
    /// The cluster's mode, as the capture shows it.
    #[serde(default)]
    pub mode: ClusterMode,
}

/// Where a diff's truncation protocol comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolSource {
    /// Given by the operator (`--inter-broker-protocol`).
    Given,
    /// A KRaft cluster: every `metadata.version` (3.0-IV1 on) truncates on
    /// fetch.
    Kraft,
    /// Not in the capture (a ZooKeeper-mode broker's
    /// `inter.broker.protocol.version` is in its server.properties): the
    /// default of every release since 2.7 assumed.
    #[default]
    Assumed,
}

impl ProtocolSource {
    /// The JSON value.
    pub fn code(self) -> &'static str {
        match self {
            ProtocolSource::Given => "given",
            ProtocolSource::Kraft => "kraft",
            ProtocolSource::Assumed => "assumed",
        }
    }
}

/// The cluster mode a capture shows: KRaft (`meta.properties` version 1,
/// or a metadata log), ZooKeeper (version 0), both (a migration), or
/// unknown (no readable `meta.properties`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ClusterMode {
    /// KRaft.
    Kraft,
    /// ZooKeeper.
    Zookeeper,
    /// Brokers of both modes (a ZooKeeper-to-KRaft migration).
    Mixed,
    /// Not known.
    #[default]
    Unknown,
}

impl ClusterMode {
    /// The JSON value.
    pub fn code(self) -> &'static str {
        match self {
            ClusterMode::Kraft => "kraft",
            ClusterMode::Zookeeper => "zookeeper",
            ClusterMode::Mixed => "mixed",
            ClusterMode::Unknown => "unknown",
        }
    }
}

/// Which rule chose the reference replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceReason {
    /// Operator override.
    Explicit,
    /// Leader at capture time from the metadata log.
    MetadataLeader,
    /// Unique highest latest epoch.
    HighestLatestEpoch,
    /// Tie on latest epoch broken by the longest log.
    LongestLog,
    /// Still tied: lowest broker id taken.
    Ambiguous,
    /// No replica.
    NoReplicas,
}

/// The chosen reference replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceChoice {
    /// Broker id (`-1` when there is no replica).
    pub broker: i32,
    /// Rule that chose it.
    pub reason: ReferenceReason,
    /// The epoch the reference leads in the model (its latest cache epoch).
    pub leader_epoch: Option<i32>,
}

/// How a replica's batches relate to the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// Same batches over the whole compared range and same log end.
    Identical,
    /// The replica is a strict prefix of the reference (lagging).
    Prefix,
    /// The reference is a strict prefix of the replica (replica longer).
    Extends,
    /// Batches differ at `divergence_offset`.
    Diverged,
    /// The offset ranges do not overlap.
    Disjoint,
    /// This replica is the reference.
    Reference,
}

/// Kinds of findings. Each has one kebab-case code ([`FindingKind::code`]),
/// the same in every output; where `klf check` names the same fact, it is
/// check's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// No `leader-epoch-checkpoint`: cache rebuilt from batches.
    CheckpointMissing,
    /// Checkpoint entries rejected (negative values).
    CheckpointInvalidEntries,
    /// Checkpoint entries beyond the LEO or before the LSO (stale after async flush).
    CheckpointStaleEntries,
    /// The checkpoint ends with `(E, LEO)`: a leader elected in `E` that has not written.
    CheckpointTrailingEmptyEpoch,
    /// The repaired checkpoint differs from the cache derived from batches.
    CheckpointDiffersFromBatches,
    /// A batch carries a lower epoch than an earlier batch.
    EpochRegression,
    /// Batches unsorted, overlapping or beyond the log end offset.
    BatchLayout,
    /// Raw HW above the LEO (unflushed loss).
    HighWatermarkBeyondLogEnd,
    /// No HW checkpoint entry.
    #[serde(rename = "high-watermark-missing")]
    HighWatermarkUnknown,
    /// Replica's latest epoch above the reference's (Kafka answers `OFFSET_OUT_OF_RANGE`).
    #[serde(rename = "replica-epoch-ahead")]
    ReferenceBehindReplicaEpoch,
    /// The epoch protocol keeps records that differ from the reference.
    #[serde(rename = "protocol-keeps-divergent")]
    ProtocolKeepsDivergentRecords,
    /// The epoch protocol cuts records identical to the reference's (refetched).
    ProtocolCutsMatchingRecords,
    /// Legacy high-watermark truncation would keep records that differ from
    /// the reference (notes §5.4 "kept divergent").
    #[serde(rename = "hw-truncation-keeps-divergent")]
    HighWatermarkTruncationKeepsDivergentRecords,
    /// Legacy high-watermark truncation would cut committed records that the
    /// epoch protocol keeps (notes §5.4 "at risk").
    #[serde(rename = "hw-truncation-cuts-committed")]
    HighWatermarkTruncationCutsCommittedRecords,
    /// Same base offset and epoch, different batch: log-matching property violated.
    LogMatchingViolation,
    /// Truncation falls inside a batch.
    TruncationInsideBatch,
    /// Records below a high watermark would be cut.
    #[serde(rename = "committed-records-cut")]
    CommittedDataTruncated,
    /// The prediction did not converge.
    #[serde(rename = "truncation-unresolved")]
    TruncationNotConverged,
    /// The follower's log would be emptied and restarted at the reference's LSO.
    LogReset,
    /// The requested reference replica is not among the replicas.
    ReferenceNotFound,
    /// Reference chosen among equal candidates.
    AmbiguousReference,
    /// The truncation protocol is not known from the capture and the
    /// protocols the cluster may run cut a replica at different offsets.
    TruncationDependsOnProtocol,
    /// Replica offset ranges do not overlap.
    #[serde(rename = "replicas-disjoint")]
    DisjointLogs,
    /// An assigned replica (metadata log) is not in the capture.
    ReplicaNotCaptured,
    /// A broker's own log says it truncated, after starting from the
    /// captured state, at another offset than klf predicts.
    PredictionDisagreesWithBrokerLog,
}

impl FindingKind {
    /// The finding's code.
    pub fn code(self) -> &'static str {
        match self {
            FindingKind::CheckpointMissing => "checkpoint-missing",
            FindingKind::CheckpointInvalidEntries => "checkpoint-invalid-entries",
            FindingKind::CheckpointStaleEntries => "checkpoint-stale-entries",
            FindingKind::CheckpointTrailingEmptyEpoch => "checkpoint-trailing-empty-epoch",
            FindingKind::CheckpointDiffersFromBatches => "checkpoint-differs-from-batches",
            FindingKind::EpochRegression => "epoch-regression",
            FindingKind::BatchLayout => "batch-layout",
            FindingKind::HighWatermarkBeyondLogEnd => "high-watermark-beyond-log-end",
            FindingKind::HighWatermarkUnknown => "high-watermark-missing",
            FindingKind::ReferenceBehindReplicaEpoch => "replica-epoch-ahead",
            FindingKind::ProtocolKeepsDivergentRecords => "protocol-keeps-divergent",
            FindingKind::ProtocolCutsMatchingRecords => "protocol-cuts-matching-records",
            FindingKind::HighWatermarkTruncationKeepsDivergentRecords => {
                "hw-truncation-keeps-divergent"
            }
            FindingKind::HighWatermarkTruncationCutsCommittedRecords => {
                "hw-truncation-cuts-committed"
            }
            FindingKind::LogMatchingViolation => "log-matching-violation",
            FindingKind::TruncationInsideBatch => "truncation-inside-batch",
            FindingKind::CommittedDataTruncated => "committed-records-cut",
            FindingKind::TruncationNotConverged => "truncation-unresolved",
            FindingKind::LogReset => "log-reset",
            FindingKind::ReferenceNotFound => "reference-not-found",
            FindingKind::AmbiguousReference => "ambiguous-reference",
            FindingKind::TruncationDependsOnProtocol => "truncation-depends-on-protocol",
            FindingKind::DisjointLogs => "replicas-disjoint",
            FindingKind::ReplicaNotCaptured => "replica-not-captured",
            FindingKind::PredictionDisagreesWithBrokerLog => "prediction-disagrees-with-broker-log",
        }
    }
}

/// A finding with a human-readable detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffFinding {
    /// Kind.
    pub kind: FindingKind,
    /// Detail.
    pub detail: String,
}

/// Per-replica result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaDiff {
    /// Broker id.
    pub broker: i32,
    /// Log start offset used.
    pub log_start_offset: i64,
    /// Log end offset used.
    pub log_end_offset: i64,
    /// High watermark used (checkpoint clamped to `[LSO, LEO]`), `None` when unknown.
    pub high_watermark: Option<i64>,
    /// Latest epoch of the normalised cache, or of a trailing `(E, LEO)`
    /// checkpoint entry when higher (the broker was elected in `E` and has
    /// not written; a running broker still holds that entry in memory).
    pub latest_epoch: Option<i32>,
    /// Normalised epoch cache used by the model.
    pub epoch_cache: Vec<EpochStart>,
    /// First offset where this replica's batches stop matching the reference
    /// (`None` when identical or disjoint, or for the reference itself).
    pub divergence_offset: Option<i64>,
    /// Relation to the reference.
    pub divergence_kind: DivergenceKind,
    /// Predicted truncation offset under `protocol` (= LEO when nothing is cut).
    pub truncation_offset: i64,
    /// Protocol of `truncation_offset`.
    pub protocol: ReplicationProtocol,
    /// Where Kafka truncates it under [`DiffOptions::alternative`] (when the
    /// protocol is assumed), else `None`.
    #[serde(default)]
    pub alternative_truncation_offset: Option<i64>,
    /// The rounds of that prediction (for `--explain`).
    #[serde(default)]
    pub alternative_rounds: Vec<Round>,
    /// Legacy high-watermark truncation offset (with out-of-range fallbacks).
    pub hw_truncation_offset: i64,
    /// Records at or above `truncation_offset`.
    pub records_to_truncate: i64,
    /// Of those, records below a high watermark a replica holding them
    /// checkpointed (the "committed-any" rule, module docs): proven
    /// committed, but a stale checkpoint proves less than was committed;
    /// the replica's commitment bounds are `committed_proven_cut` and
    /// `committed_possible_cut`.
    pub checkpointed_records_to_truncate: i64,
    /// Of those, records in batches present on no other replica.
    pub records_only_here: i64,
    /// Records at or above `hw_truncation_offset`.
    pub hw_records_to_truncate: i64,
    /// Of those, records below a checkpointed high watermark (same rule as
    /// `checkpointed_records_to_truncate`).
    pub hw_checkpointed_records_to_truncate: i64,
    /// Control records among `records_to_truncate`.
    pub control_records_to_truncate: i64,
    /// Lost data records this replica holds (all cut by its truncation):
    /// its share of the partition's loss, set with the loss
    /// ([`crate::analysis::loss::share_loss`]).
    #[serde(default)]
    pub lost_cut: u64,
    /// Of those, proven committed (computed as the partition's
    /// `committed_proven`).
    #[serde(default)]
    pub committed_proven_cut: u64,
    /// Of those, possibly committed (computed as the partition's
    /// `committed_possible`; `None` when some cannot be bounded).
    #[serde(default)]
    pub committed_possible_cut: Option<u64>,
    /// How the prediction ended.
    pub truncation_outcome: Outcome,
    /// Rounds of the prediction (for `--explain`).
    pub truncation_rounds: Vec<Round>,
    /// Findings about this replica.
    pub findings: Vec<DiffFinding>,
}

/// Per-partition result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionDiff {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Reference replica.
    pub reference: ReferenceChoice,
    /// Replicas, in input order.
    pub replicas: Vec<ReplicaDiff>,
    /// Partition-level findings.
    pub findings: Vec<DiffFinding>,
    /// The truncation protocol modelled, where it comes from and the
    /// alternative also predicted.
    #[serde(default)]
    pub protocol: DiffOptions,
    /// How the replicas were read, when the caller read them from disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanInfo>,
    /// The truncations the brokers logged, held against klf's prediction
    /// (only when the capture holds the brokers' logs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broker_log: Vec<crate::model::broker_log::TruncationCheck>,
}

/// How much of the replicas' logs a diff read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanMode {
    /// Only the window from [`ScanInfo::window_start`] to the log ends.
    Window,
    /// Every batch of every replica.
    Full,
}

/// How the replicas' logs were read for one partition's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanInfo {
    /// Window or full.
    pub mode: ScanMode,
    /// First offset of the window (window mode).
    pub window_start: Option<i64>,
    /// Why every batch was read, when the window was not enough or not usable
    /// (`None` in window mode, and when the full read was asked for).
    pub full_reason: Option<String>,
    /// Bytes of segment data read, all replicas together.
    pub bytes_read: u64,
    /// Bytes of segment data the replicas hold.
    pub log_bytes: u64,
}

/// One partition's diff as the outputs write it: the diff, what the
/// partition loses, and the brokers whose replica could not be read (left
/// out of both). The engine's result holds these beside what it read; a
/// renderer is handed this view of it.
#[derive(Debug, Clone, Copy)]
pub struct DiffedPartition<'a> {
    /// The diff.
    pub diff: &'a PartitionDiff,
    /// What the partition loses, counted once.
    pub loss: &'a PartitionLoss,
    /// Brokers whose replica could not be read, left out of the diff and
    /// the loss.
    pub left_out: &'a [i32],
}
