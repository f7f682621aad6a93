//! Plain data the layers pass around: what a capture holds once it is read
//! (replica logs as batch summaries, the controller's partition history,
//! consumer group commits, high watermark checkpoints). No I/O and no
//! analysis here: `capture` fills these in, `analysis` reasons over them,
//! `render` prints them.

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
    pub first_timestamp: i64,
    /// `maxTimestamp`.
    #[serde(default)]
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

/// One change of a partition's leadership or ISR in the metadata log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Election {
    /// Offset of the record in the metadata log.
    pub metadata_offset: i64,
    /// Leader after the change (-1: none).
    pub leader: i32,
    /// Leader epoch after the change.
    pub leader_epoch: i32,
    /// Partition epoch after the change (every change bumps it).
    pub partition_epoch: i32,
    /// ISR after the change.
    pub isr: Vec<i32>,
    /// Eligible leader replicas (KIP-966) after the change; `null` when the
    /// metadata does not carry them.
    pub elr: Option<Vec<i32>>,
    /// Last known ELR (KIP-966) after the change; `null` when absent.
    pub last_known_elr: Option<Vec<i32>>,
    /// Leader recovery state (0 recovered, 1 recovering).
    pub leader_recovery_state: i8,
    /// Whether the leader changed (a new epoch) in this record.
    pub leader_changed: bool,
    /// The new leader was not in the ISR before the change.
    pub unclean: bool,
    /// Record timestamp (ms).
    pub timestamp: i64,
}

/// Leadership history of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionHistory {
    /// Assigned replicas (latest).
    pub replicas: Vec<i32>,
    /// Every PartitionRecord / PartitionChangeRecord, in log order.
    pub changes: Vec<Election>,
    /// Whether the history starts where the partition was created (its
    /// first record is a PartitionRecord in leader epoch 0 and partition
    /// epoch 0). When it does not (the metadata log was snapshotted and its
    /// start deleted), ISR states before the first change are unknown.
    pub from_creation: bool,
}

impl PartitionHistory {
    /// The state at the end of the log.
    pub fn current(&self) -> Option<&Election> {
        self.changes.last()
    }

    /// Who led `epoch` (`None`: the history has no such epoch, or no leader).
    pub fn leader_of(&self, epoch: i32) -> Option<i32> {
        self.changes
            .iter()
            .filter(|e| e.leader_epoch == epoch && e.leader >= 0)
            .map(|e| e.leader)
            .next_back()
    }

    /// The highest leader epoch the history knows.
    pub fn max_epoch(&self) -> Option<i32> {
        self.changes.iter().map(|e| e.leader_epoch).max()
    }
}

/// One offset a consumer group committed for a partition, as the group
/// coordinator wrote it to `__consumer_offsets`. Of several commits of a
/// group with the same leader epoch, the capture keeps the highest offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupCommit {
    /// Group id.
    pub group: String,
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The committed offset: the next offset the group would read.
    pub offset: i64,
    /// Leader epoch of the last record the group consumed (KIP-320);
    /// `None` when the commit carries none (`-1`, older clients, legacy
    /// value versions).
    pub leader_epoch: Option<i32>,
    /// Commit time (ms, the coordinator's clock).
    pub commit_timestamp: i64,
    /// Broker whose `__consumer_offsets` replica held the commit.
    pub broker: i32,
    /// The segment file holding it.
    pub file: String,
    /// Byte position of its batch in that file.
    pub position: u64,
}

/// A broker's `replication-offset-checkpoint` entry for a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HighWatermarkFact {
    /// Broker id.
    pub broker: i32,
    /// The checkpointed high watermark as written (not clamped); `None`
    /// when the partition is not listed.
    pub raw: Option<i64>,
    /// The checkpoint file, when the broker directory has one.
    pub file: Option<String>,
    /// Its modification time (ms since the epoch), when the capture kept it.
    pub mtime_ms: Option<i64>,
}
