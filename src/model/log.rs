//! One replica's log as the analyses see it: batch headers, offsets,
//! checkpoints.

use serde::{Deserialize, Serialize};

/// Header facts of one record batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchSummary {
    /// First offset of the batch.
    pub base_offset: i64,
    /// Last offset of the batch (`base_offset + lastOffsetDelta`).
    pub last_offset: i64,
    /// `partitionLeaderEpoch` (`-1` when absent, e.g. v0/v1 batches).
    pub partition_leader_epoch: i32,
    /// Batch CRC (CRC-32C for v2).
    pub crc: u32,
    /// Number of records in the batch.
    pub record_count: i32,
    /// Control batch (transaction markers, etc.).
    #[serde(default)]
    pub is_control: bool,
    /// Transactional batch.
    #[serde(default)]
    pub is_transactional: bool,
    /// `baseTimestamp` (first timestamp).
    #[serde(default)]
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: i64,
    /// `maxTimestamp`.
    #[serde(default)]
    #[serde(serialize_with = "crate::model::time::millis")]
    pub max_timestamp: i64,
    /// Producer id (`-1` when none).
    #[serde(default = "minus_one_i64")]
    pub producer_id: i64,
    /// Producer epoch (`-1` when none).
    #[serde(default = "minus_one_i16")]
    pub producer_epoch: i16,
    /// Base sequence (`-1` when none).
    #[serde(default = "minus_one_i32")]
    pub base_sequence: i32,
}

fn minus_one_i64() -> i64 {
    -1
}
fn minus_one_i16() -> i16 {
    -1
}
fn minus_one_i32() -> i32 {
    -1
}

impl BatchSummary {
    /// The comparison key `(base, last, epoch, crc)`.
    pub fn key(&self) -> (i64, i64, i32, u32) {
        (
            self.base_offset,
            self.last_offset,
            self.partition_leader_epoch,
            self.crc,
        )
    }

    /// Number of this batch's records with an offset in `[lo, hi)`, under the
    /// density assumption of the module documentation.
    pub fn records_in(&self, lo: i64, hi: i64) -> i64 {
        let count = i64::from(self.record_count.max(0));
        let span = self
            .last_offset
            .saturating_sub(self.base_offset)
            .saturating_add(1)
            .max(0);
        let from = lo.max(self.base_offset);
        let to = hi.min(self.last_offset.saturating_add(1));
        if to <= from {
            return 0;
        }
        if from == self.base_offset && to == self.last_offset.saturating_add(1) {
            return count;
        }
        let overlap = to.saturating_sub(from);
        if count == span {
            overlap
        } else {
            overlap.min(count)
        }
    }
}

#[cfg(test)]
impl BatchSummary {
    /// For tests: a batch with a record at every offset `base..=last`, of
    /// leader epoch `epoch`, its CRC `crc` standing for its content; no
    /// producer, no timestamps.
    pub(crate) fn dense(base: i64, last: i64, epoch: i32, crc: u32) -> BatchSummary {
        BatchSummary {
            base_offset: base,
            last_offset: last,
            partition_leader_epoch: epoch,
            crc,
            record_count: i32::try_from(last - base + 1).unwrap_or(0),
            is_control: false,
            is_transactional: false,
            first_timestamp: 0,
            max_timestamp: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        }
    }
}

/// One replica's log summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaLog {
    /// Broker id.
    pub broker: i32,
    /// Batches, in any order (sorted by base offset before use).
    pub batches: Vec<BatchSummary>,
    /// Log start offset (`log-start-offset-checkpoint` or first segment base, the larger).
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// Raw `replication-offset-checkpoint` value, if the partition was listed.
    #[serde(default)]
    pub high_watermark: Option<i64>,
    /// `leader-epoch-checkpoint` entries `(epoch, start)`, if the file exists.
    #[serde(default)]
    pub checkpoint_epochs: Option<Vec<(i32, i64)>>,
    /// Base offset of the first segment, if known (defaults to the log start offset).
    #[serde(default)]
    pub first_segment_base: Option<i64>,
    /// `Some(w)` when only the batches from offset `w` on were read (the
    /// batch holding `w` and every later one): the offsets below `w` are the
    /// shared prefix, whose epochs come from `leader-epoch-checkpoint` and
    /// whose batches are not compared. `None`: every batch was read.
    #[serde(default)]
    pub window_start: Option<i64>,
}
