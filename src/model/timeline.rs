//! The plain data of a replica's leader-epoch timeline: which epochs wrote
//! which offset ranges according to the batch headers, beside what its
//! `leader-epoch-checkpoint` says, with every disagreement named; and a
//! partition's timelines with the controller's history.
//! `analysis::timeline` builds them.

use serde::Serialize;

use crate::model::{BatchSummary, PartitionHistory};

/// One leader epoch as the batch headers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpochSpan {
    /// The leader epoch (`partitionLeaderEpoch` of the batches).
    pub epoch: i32,
    /// First offset written in this epoch (base offset of its first batch).
    pub start_offset: i64,
    /// One past the last offset written in this epoch: the span is the
    /// half-open range `[start_offset, end)`, as `klf diff` and `klf dump`
    /// write ranges. A log's last span ends at the log end offset
    /// (`analysis::timeline::timeline_of_spans`).
    pub end: i64,
    /// Batches.
    pub batches: u64,
    /// Records (control records included).
    pub records: i64,
    /// Earliest `baseTimestamp` of its batches.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: i64,
    /// Latest `maxTimestamp` of its batches.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_timestamp: i64,
}

/// A disagreement between the batches and the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    /// Stable code.
    pub code: &'static str,
    /// The epoch concerned, where one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i32>,
    /// What is wrong, in words.
    pub message: String,
}

/// The timeline of one replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// Node id.
    pub broker: i32,
    /// Epoch spans from the batch headers, in log order.
    pub from_batches: Vec<EpochSpan>,
    /// `(epoch, start_offset)` entries of `leader-epoch-checkpoint`; `None`
    /// when the file is missing or unreadable.
    pub checkpoint: Option<Vec<(i32, i64)>>,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// High watermark from `replication-offset-checkpoint`.
    pub high_watermark: Option<i64>,
    /// Recovery point from `recovery-point-offset-checkpoint` (set by the
    /// caller, which has the broker's checkpoints; `None` when unknown).
    pub recovery_point: Option<i64>,
    /// Disagreements between the two views.
    pub disagreements: Vec<Disagreement>,
}

impl EpochSpan {
    /// The span of one batch.
    pub fn of(b: &BatchSummary) -> EpochSpan {
        EpochSpan {
            epoch: b.partition_leader_epoch,
            start_offset: b.base_offset,
            end: b.last_offset.saturating_add(1),
            batches: 1,
            records: i64::from(b.record_count.max(0)),
            first_timestamp: b.first_timestamp,
            last_timestamp: b.max_timestamp,
        }
    }

    /// Extends this span by the next span of the same epoch.
    pub fn join(&mut self, next: &EpochSpan) {
        self.end = self.end.max(next.end);
        self.batches += next.batches;
        self.records += next.records;
        self.first_timestamp = self.first_timestamp.min(next.first_timestamp);
        self.last_timestamp = self.last_timestamp.max(next.last_timestamp);
    }
}

/// One partition's timelines.
#[derive(Debug, Clone)]
pub struct PartitionTimelines {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// One per replica, in broker order.
    pub replicas: Vec<Timeline>,
    /// The controller's history of the partition, if the capture has a
    /// metadata log that knows it.
    pub controller: Option<PartitionHistory>,
    /// Without it, why (no metadata log: a ZooKeeper-mode cluster, or not
    /// captured; or a log that does not know the partition).
    pub controller_missing: Option<String>,
}
