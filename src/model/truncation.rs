//! The plain data of Kafka's truncation model: the leader-epoch cache's
//! entries, the protocols a follower truncates by, and the rounds of a
//! predicted truncation, as `analysis::truncation` computes them and every
//! output shows them. The model itself (the cache's rules, the rounds'
//! prediction) is `analysis::epochs` and `analysis::truncation`.

use serde::{Deserialize, Serialize};

/// Kafka's "undefined epoch" sentinel (`RecordBatch.NO_PARTITION_LEADER_EPOCH`,
/// `OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH`).
pub const UNDEFINED_EPOCH: i32 = -1;

/// Kafka's "undefined offset" sentinel
/// (`OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET`).
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// One cache entry: the first offset written in a leader epoch (Kafka's
/// `EpochStart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EpochStart {
    /// Leader epoch.
    pub epoch: i32,
    /// First offset of that epoch.
    pub start_offset: i64,
}

impl EpochStart {
    /// A new entry (not validated; see `analysis::epochs::EpochCache::assign`).
    pub const fn new(epoch: i32, start_offset: i64) -> Self {
        EpochStart {
            epoch,
            start_offset,
        }
    }
}

/// An `(epoch, end offset)` pair as returned by `LeaderEpochFileCache.endOffsetFor`
/// and carried by `OffsetsForLeaderEpoch` responses and `DivergingEpoch` fields.
///
/// Either field may be the undefined sentinel `-1`
/// ([`UNDEFINED_EPOCH`], [`UNDEFINED_EPOCH_OFFSET`]), exactly as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EpochEndOffset {
    /// Leader epoch (`-1` when undefined).
    pub epoch: i32,
    /// End offset of that epoch, exclusive (`-1` when undefined).
    pub end_offset: i64,
}

impl EpochEndOffset {
    /// `(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)`.
    pub const UNDEFINED: EpochEndOffset = EpochEndOffset {
        epoch: UNDEFINED_EPOCH,
        end_offset: UNDEFINED_EPOCH_OFFSET,
    };

    /// A new pair.
    pub const fn new(epoch: i32, end_offset: i64) -> Self {
        EpochEndOffset { epoch, end_offset }
    }

    /// True when the offset is the undefined sentinel (Kafka compares with
    /// `UNDEFINED_EPOCH_OFFSET`, i.e. exactly `-1`).
    pub fn has_undefined_offset(&self) -> bool {
        self.end_offset == UNDEFINED_EPOCH_OFFSET
    }

    /// True when the epoch is the undefined sentinel.
    pub fn has_undefined_epoch(&self) -> bool {
        self.epoch == UNDEFINED_EPOCH
    }
}

impl std::fmt::Display for EpochEndOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = if self.has_undefined_epoch() {
            "U".to_string()
        } else {
            self.epoch.to_string()
        };
        let o = if self.has_undefined_offset() {
            "U".to_string()
        } else {
            self.end_offset.to_string()
        };
        write!(f, "({e},{o})")
    }
}

/// Which truncation mechanism the follower uses, from its inter-broker
/// protocol / `metadata.version` (gates of `MetadataVersion`:
/// `isOffsetForLeaderEpochSupported` = 0.11.0-IV2,
/// `offsetForLeaderEpochRequestVersion` >= 1 from 2.0-IV0,
/// `isTruncationOnFetchSupported` = 2.7-IV1). Every KRaft cluster uses
/// [`ReplicationProtocol::DivergingEpoch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReplicationProtocol {
    /// Below 0.11.0-IV2: high-watermark truncation only.
    HighWatermark,
    /// 0.11.0-IV2 up to 2.0-IV0: OffsetsForLeaderEpoch v0, reply without epoch.
    OffsetsForLeaderEpochV0,
    /// 2.0-IV0 up to 2.7-IV1: OffsetsForLeaderEpoch with epoch (KIP-279).
    OffsetsForLeaderEpoch,
    /// 2.7-IV1 and later: truncation driven by `DivergingEpoch` in fetch responses.
    #[default]
    DivergingEpoch,
}

impl ReplicationProtocol {
    /// All four protocols, oldest first.
    pub const ALL: [ReplicationProtocol; 4] = [
        ReplicationProtocol::HighWatermark,
        ReplicationProtocol::OffsetsForLeaderEpochV0,
        ReplicationProtocol::OffsetsForLeaderEpoch,
        ReplicationProtocol::DivergingEpoch,
    ];

    /// The protocol a follower running the given inter-broker protocol /
    /// metadata version `(major, minor, iv)` uses, e.g. `(2, 7, 1)` for
    /// 2.7-IV1. Releases without an IV suffix have `iv` 0 here.
    pub fn for_version(major: u32, minor: u32, iv: u32) -> Self {
        let v = (major, minor, iv);
        if v >= (2, 7, 1) {
            ReplicationProtocol::DivergingEpoch
        } else if v >= (2, 0, 0) {
            ReplicationProtocol::OffsetsForLeaderEpoch
        } else if v >= (0, 11, 2) {
            ReplicationProtocol::OffsetsForLeaderEpochV0
        } else {
            ReplicationProtocol::HighWatermark
        }
    }

    /// The protocol of an `inter.broker.protocol.version` value as Kafka
    /// reads it (`MetadataVersion.fromVersionString`): `2.6`, `2.6-IV0`,
    /// `0.11.0`, `0.11.0-IV2`, `3.9`, `2.8.1` (a patch number is ignored).
    /// A value without `-IVn` means the release's last IV, as in Kafka
    /// (`2.7` is `2.7-IV2`, which truncates on fetch). Releases before 1.0
    /// are written `0.X.Y` (the `Y` is part of the release, `0.11.0`).
    pub fn for_inter_broker_protocol(value: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "'{value}' is not an inter.broker.protocol.version (e.g. 2.6, 2.6-IV0, 0.11.0-IV2, 3.9)"
            )
        };
        let v = value.trim();
        let (release, iv) = match v.split_once("-IV") {
            Some((r, iv)) => (r, Some(iv.parse::<u32>().map_err(|_| bad())?)),
            None => (v, None),
        };
        let nums: Vec<u32> = release
            .split('.')
            .map(|p| p.parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        // 0.X.Y names the release by its first three numbers; 1.0 on by two.
        let (major, minor) = match nums.as_slice() {
            [0, m, _] | [0, m, _, _] => (0, *m),
            [0, ..] => return Err(bad()),
            [a, b] | [a, b, _] => (*a, *b),
            _ => return Err(bad()),
        };
        // no IV: the release's last one (every gate is passed by it)
        Ok(ReplicationProtocol::for_version(
            major,
            minor,
            iv.unwrap_or(u32::MAX),
        ))
    }

    /// In words: the mechanism and the `inter.broker.protocol.version`
    /// range that uses it.
    pub fn describe(self) -> &'static str {
        match self {
            ReplicationProtocol::HighWatermark => {
                "high-watermark truncation (inter.broker.protocol.version below 0.11.0-IV2)"
            }
            ReplicationProtocol::OffsetsForLeaderEpochV0 => {
                "OffsetsForLeaderEpoch v0 (inter.broker.protocol.version 0.11.0-IV2 to 1.1)"
            }
            ReplicationProtocol::OffsetsForLeaderEpoch => {
                "OffsetsForLeaderEpoch (inter.broker.protocol.version 2.0 to 2.7-IV0)"
            }
            ReplicationProtocol::DivergingEpoch => {
                "truncation on fetch (inter.broker.protocol.version 2.7-IV1 and later, and every KRaft cluster)"
            }
        }
    }
}

/// Which branch of `getOffsetTruncationState` produced a truncation point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointRule {
    /// The leader's offset is undefined: truncate to the current fetch offset
    /// (the HW in the first OffsetsForLeaderEpoch round).
    LeaderOffsetUndefined,
    /// The leader's epoch is undefined (OffsetsForLeaderEpoch v0): `min(leader offset, LEO)`.
    LeaderEpochUndefined,
    /// The follower has no end offset for the leader's epoch: `min(leader offset, LEO)`.
    FollowerLookupAbsent,
    /// The follower lacks the leader's epoch: cut where its next higher epoch
    /// starts and ask again (not final).
    FollowerLacksEpoch,
    /// Both have the epoch: `min(follower end, leader end, LEO)`.
    SameEpoch,
}

/// Why a leader answers `OFFSET_OUT_OF_RANGE` to a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutOfRangeCause {
    /// The fetch's `lastFetchedEpoch` has no defined end offset on the leader.
    EpochUnknownToLeader,
    /// The fetch offset is below the leader's log start offset.
    BelowLogStart,
    /// The fetch offset is above the leader's log end offset.
    AboveLogEnd,
}

/// How a round of a predicted truncation (`analysis::truncation`) was driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundKind {
    /// Truncation to the fetch position (high watermark) without asking the leader.
    HighWatermark,
    /// An OffsetsForLeaderEpoch request and the truncation it caused.
    OffsetsForLeaderEpoch,
    /// A fetch answered with `DivergingEpoch` and the truncation it caused.
    FetchDiverging,
    /// A fetch answered `OFFSET_OUT_OF_RANGE`; truncated to the leader's LEO.
    FetchOutOfRangeToLeaderEnd,
    /// A fetch answered `OFFSET_OUT_OF_RANGE`; log emptied and restarted at the leader's LSO.
    FetchOutOfRangeReset,
    /// A fetch answered `OFFSET_OUT_OF_RANGE`; log kept.
    FetchOutOfRangeKeep,
    /// A fetch answered with data (or an empty valid read): replication resumes.
    FetchValid,
}

/// The follower's lookup of the leader's answer epoch in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FollowerLookup {
    /// Not consulted (no answer, or an answer with an undefined field).
    NotConsulted,
    /// `endOffsetForEpoch` was absent.
    Absent,
    /// The follower's `(epoch, end offset)`.
    Found {
        /// The lookup result.
        value: EpochEndOffset,
    },
}

/// One round of the prediction (one request and its effect).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based round number.
    pub n: usize,
    /// What happened.
    pub kind: RoundKind,
    /// Fetch position before the round.
    pub position: i64,
    /// Epoch sent (OffsetsForLeaderEpoch's requested epoch or the fetch's `lastFetchedEpoch`).
    pub sent_epoch: Option<i32>,
    /// The leader's answer, if any.
    pub answer: Option<EpochEndOffset>,
    /// Out-of-range cause, for out-of-range rounds.
    pub out_of_range: Option<OutOfRangeCause>,
    /// The follower lookup used.
    pub lookup: FollowerLookup,
    /// Branch of `getOffsetTruncationState`, when it ran.
    pub rule: Option<PointRule>,
    /// Truncation offset of the round, if it truncated.
    pub truncate_to: Option<i64>,
    /// `truncationCompleted` of the round's truncation point, when one was computed.
    pub truncation_completed: Option<bool>,
    /// Follower cache after the round.
    pub cache_after: Vec<EpochStart>,
    /// Follower LEO after the round.
    pub log_end_offset_after: i64,
    /// Follower HW after the round.
    pub high_watermark_after: i64,
}

impl Round {
    /// A one-line human description for an `--explain` story.
    pub fn describe(&self) -> String {
        let sent = self
            .sent_epoch
            .map(|e| format!(" epoch {e}"))
            .unwrap_or_default();
        let answer = self.answer.map(|a| format!(" → {a}")).unwrap_or_default();
        let lookup = match self.lookup {
            FollowerLookup::NotConsulted => String::new(),
            FollowerLookup::Absent => "; follower lookup absent".to_string(),
            FollowerLookup::Found { value } => format!("; follower lookup {value}"),
        };
        let cut = match (self.truncate_to, self.truncation_completed) {
            (Some(t), Some(true)) => format!("; truncate to {t} (final)"),
            (Some(t), Some(false)) => format!("; truncate to {t} (not final)"),
            (Some(t), None) => format!("; truncate to {t}"),
            (None, _) => String::new(),
        };
        let what = match self.kind {
            RoundKind::HighWatermark => "high-watermark truncation".to_string(),
            RoundKind::OffsetsForLeaderEpoch => "OffsetsForLeaderEpoch".to_string(),
            RoundKind::FetchDiverging => "fetch → DivergingEpoch".to_string(),
            RoundKind::FetchOutOfRangeToLeaderEnd => {
                "fetch → OFFSET_OUT_OF_RANGE, leader LEO below ours".to_string()
            }
            RoundKind::FetchOutOfRangeReset => {
                "fetch → OFFSET_OUT_OF_RANGE, log restarted at leader LSO".to_string()
            }
            RoundKind::FetchOutOfRangeKeep => "fetch → OFFSET_OUT_OF_RANGE, log kept".to_string(),
            RoundKind::FetchValid => "fetch valid, replication resumes".to_string(),
        };
        let oor = self
            .out_of_range
            .map(|c| format!(" ({c:?})"))
            .unwrap_or_default();
        format!(
            "round {}: {what}{oor} at {}{sent}{answer}{lookup}{cut}; cache {} LEO {} HW {}",
            self.n,
            self.position,
            Entries(&self.cache_after),
            self.log_end_offset_after,
            self.high_watermark_after
        )
    }
}

/// How a prediction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A fetch was answered with data: the follower replicates from `resume_at`.
    Converged,
    /// Kafka would repeat an identical fetch → `OFFSET_OUT_OF_RANGE` → keep
    /// cycle without progress (follower epoch unknown to the leader, logs overlap).
    Stuck,
    /// The round bound was exceeded (should not happen; indicates inconsistent input).
    IterationLimit,
}

/// Epoch cache entries as the cache writes itself: `[(0,0),(2,60)]`.
struct Entries<'a>(&'a [EpochStart]);

impl std::fmt::Display for Entries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[")?;
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "({},{})", e.epoch, e.start_offset)?;
        }
        write!(f, "]")
    }
}
