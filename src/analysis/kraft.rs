//! Truncation of the KRaft metadata log (`__cluster_metadata`): raft's
//! fetch validation (`KafkaRaftClient`, `ValidOffsetAndEpoch`) and where a
//! voter truncates, which unlike a data partition never goes below its high
//! watermark (`KafkaMetadataLog.truncateTo` refuses).

use super::epochs::EpochCache;

/// The leader's (or any voter's) metadata log as seen by raft fetch validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataLogView {
    /// The log's epoch cache.
    pub cache: EpochCache,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// Oldest snapshot id `(offset, epoch)`.
    pub oldest_snapshot: Option<(i64, i32)>,
    /// Latest snapshot id `(offset, epoch)`.
    pub latest_snapshot: Option<(i64, i32)>,
}

/// Kind of [`MetadataFetchValidation`] (raft `ValidOffsetAndEpoch.Kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetadataFetchKind {
    /// The fetch position is valid.
    Valid,
    /// The follower must truncate (`DivergingEpoch`).
    Diverging,
    /// The follower must fetch the snapshot.
    Snapshot,
}

/// Result of [`validate_metadata_fetch`]: kind and `(offset, epoch)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataFetchValidation {
    /// Kind.
    pub kind: MetadataFetchKind,
    /// Offset (the diverging end offset, the snapshot offset, or the fetch offset).
    pub offset: i64,
    /// Epoch.
    pub epoch: i32,
}

impl MetadataLogView {
    /// `KafkaMetadataLog.lastFetchedEpoch`: latest cached epoch, else the
    /// latest snapshot's epoch, else 0.
    pub fn last_fetched_epoch(&self) -> i32 {
        self.cache
            .latest_epoch()
            .or(self.latest_snapshot.map(|s| s.1))
            .unwrap_or(0)
    }

    /// `KafkaMetadataLog.endOffsetForEpoch(epoch)` as `(offset, epoch)`: the
    /// cache lookup; a branch-4 answer landing exactly on the oldest snapshot
    /// is replaced by the snapshot id; an absent lookup gives
    /// `(LEO, lastFetchedEpoch)`.
    pub fn end_offset_for_epoch(&self, epoch: i32) -> (i64, i32) {
        match self.cache.end_offset_for_epoch(epoch, self.log_end_offset) {
            Some(r) => match self.oldest_snapshot {
                Some((so, se)) if r.end_offset == so && r.epoch == epoch => (so, se),
                _ => (r.end_offset, r.epoch),
            },
            None => (self.log_end_offset, self.last_fetched_epoch()),
        }
    }
}

/// `ReplicatedLog.validateOffsetAndEpoch(offset, epoch)`, the raft leader's
/// check of a follower fetch `(fetch offset, last fetched epoch)`:
/// 1. LSO 0 and offset 0 → valid `(0, 0)`;
/// 2. with an oldest snapshot `(so, se)`: offset `<` LSO, or offset `==` LSO
///    with epoch `!= se`, or epoch `< se` → snapshot (the latest snapshot id);
/// 3. otherwise `(o, e) = endOffsetForEpoch(epoch)`: `e != epoch` or
///    `o < offset` → diverging `(o, e)`, else valid `(offset, epoch)`.
///
/// (`KafkaRaftClient` also answers a fetch at offset 0 with the latest
/// snapshot when one exists; that step is not modelled here.)
pub fn validate_metadata_fetch(
    log: &MetadataLogView,
    fetch_offset: i64,
    last_fetched_epoch: i32,
) -> MetadataFetchValidation {
    if log.log_start_offset == 0 && fetch_offset == 0 {
        return MetadataFetchValidation {
            kind: MetadataFetchKind::Valid,
            offset: 0,
            epoch: 0,
        };
    }
    if let Some((_, se)) = log.oldest_snapshot {
        let lso = log.log_start_offset;
        if fetch_offset < lso
            || (fetch_offset == lso && last_fetched_epoch != se)
            || last_fetched_epoch < se
        {
            // Kafka throws if there is no latest snapshot here; the oldest one
            // exists, so the latest does too in any consistent input.
            let (o, e) = log
                .latest_snapshot
                .or(log.oldest_snapshot)
                .unwrap_or((lso, se));
            return MetadataFetchValidation {
                kind: MetadataFetchKind::Snapshot,
                offset: o,
                epoch: e,
            };
        }
    }
    let (o, e) = log.end_offset_for_epoch(last_fetched_epoch);
    if e != last_fetched_epoch || o < fetch_offset {
        MetadataFetchValidation {
            kind: MetadataFetchKind::Diverging,
            offset: o,
            epoch: e,
        }
    } else {
        MetadataFetchValidation {
            kind: MetadataFetchKind::Valid,
            offset: fetch_offset,
            epoch: last_fetched_epoch,
        }
    }
}

/// Why a metadata-log follower refuses a diverging answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MetadataTruncationError {
    /// `KafkaRaftClient` raises a fatal error when the leader's diverging
    /// offset is below the follower's HW (committed metadata would be cut).
    #[error("diverging end offset {offset} is below the high watermark {high_watermark}")]
    BelowHighWatermark {
        /// The leader's diverging end offset.
        offset: i64,
        /// The follower's high watermark.
        high_watermark: i64,
    },
    /// `KafkaMetadataLog.truncateTo` refuses a truncation below the HW.
    #[error("truncation offset {offset} is below the high watermark {high_watermark}")]
    TruncationBelowHighWatermark {
        /// The computed truncation offset.
        offset: i64,
        /// The follower's high watermark.
        high_watermark: i64,
    },
}

/// The metadata-log follower's truncation on `DivergingEpoch(epoch, offset)`
/// (`KafkaRaftClient` + `ReplicatedLog.truncateToEndOffset`): refuse when the
/// offset is below the follower's HW; epoch 0 → `min(offset, LEO)`; else with
/// the local `(o, e) = endOffsetForEpoch(epoch)`: `min(o, offset)` when
/// `e == epoch`, else `o`.
pub fn metadata_truncation_offset(
    follower: &MetadataLogView,
    follower_high_watermark: Option<i64>,
    diverging_offset: i64,
    diverging_epoch: i32,
) -> Result<i64, MetadataTruncationError> {
    if let Some(hw) = follower_high_watermark {
        if diverging_offset < hw {
            return Err(MetadataTruncationError::BelowHighWatermark {
                offset: diverging_offset,
                high_watermark: hw,
            });
        }
    }
    let t = if diverging_epoch == 0 {
        diverging_offset.min(follower.log_end_offset)
    } else {
        let (o, e) = follower.end_offset_for_epoch(diverging_epoch);
        if e == diverging_epoch {
            o.min(diverging_offset)
        } else {
            o
        }
    };
    if let Some(hw) = follower_high_watermark {
        if t < hw {
            return Err(MetadataTruncationError::TruncationBelowHighWatermark {
                offset: t,
                high_watermark: hw,
            });
        }
    }
    Ok(t)
}
