//! Facts a capture holds about commitment besides the logs: consumer group
//! commits and high watermark checkpoints.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Something read that klf could not use: a batch whose records could not
/// be read back (over the decompression cap, a record that does not
/// parse), damage that ends a segment, or a read the machine failed
/// (`io`). What it held is missing from the answer built on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadProblem {
    /// The file.
    pub file: String,
    /// Byte position in it (of the batch), where one applies.
    pub position: Option<u64>,
    /// Why.
    pub message: String,
    /// The read failed (the machine's failure, not the data's).
    pub io: bool,
}

impl std::fmt::Display for ReadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}:{p}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Something wrong found while reading a replica's segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaProblem {
    /// The file.
    pub path: PathBuf,
    /// Byte position in the file, where one applies.
    pub position: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// The file could not be read (the machine failed, or klf refused to
    /// hold it): nothing is known about its bytes from there on. Not
    /// evidence of damage.
    pub io: bool,
}

impl ReplicaProblem {
    /// A read of `path` that failed (at `position`, when it got that far).
    pub fn unreadable(path: &Path, position: Option<u64>, e: &std::io::Error) -> Self {
        ReplicaProblem {
            path: path.to_path_buf(),
            position,
            message: format!("cannot read: {e}"),
            io: true,
        }
    }
}

impl std::fmt::Display for ReplicaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}:{}: {}", self.path.display(), p, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
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
    #[serde(serialize_with = "crate::model::time::millis")]
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

/// Kafka's default `replica.high.watermark.checkpoint.interval.ms`: how
/// often a broker writes its `replication-offset-checkpoint`, so how far
/// behind the high watermarks it knew the file may be after a kill.
pub const HW_CHECKPOINT_INTERVAL_DEFAULT_MS: i64 = 5000;
