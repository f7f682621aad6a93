//! A pure model of where Kafka truncates a follower replica.
//!
//! Kafka has used three mechanisms over time, selected by the follower's
//! inter-broker protocol / `metadata.version`:
//!
//! * **High-watermark truncation** (before 0.11.0-IV2, and still the fallback
//!   for a replica without leader epochs): truncate to the local high
//!   watermark, then fetch (`AbstractFetcherThread.truncateToHighWatermark`).
//! * **OffsetsForLeaderEpoch** (KIP-101, 0.11.0-IV2; with the epoch in the
//!   reply since 2.0-IV0, KIP-279): ask the leader for the end offset of the
//!   follower's latest epoch and truncate, repeating until the answer is final
//!   (`AbstractFetcherThread.truncateToEpochEndOffsets`).
//! * **Truncation on fetch** (2.7-IV1): the fetch carries `lastFetchedEpoch`,
//!   the leader answers `DivergingEpoch` (`Partition.readRecords`) and the
//!   follower truncates (`truncateOnFetchResponse`), until a fetch is valid.
//!
//! All three share the follower-side computation `getOffsetTruncationState`
//! ([`truncation_point`]) and the out-of-range fallback
//! `fetchOffsetAndTruncate` ([`out_of_range_action`]). [`predict_truncation`]
//! runs them to convergence and records every round so a report can explain
//! the result. The KRaft metadata log has its own rules
//! ([`validate_metadata_fetch`], [`metadata_truncation_offset`]).
//!
//! Model assumptions (as in the reference notes, §4.10): one follower fetches
//! from one leader that does not change during the rounds (no appends,
//! retention or leadership change); no request fails (epoch fencing passes);
//! no tiered storage. Nothing here does I/O.

use super::epochs::{brief, EpochCache};
use crate::model::truncation::{
    EpochEndOffset, FollowerLookup, OutOfRangeCause, Outcome, PointRule, ReplicationProtocol,
    Round, RoundKind, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET,
};

/// What the model needs to know about the leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderView {
    /// The leader's in-memory epoch cache (empty for record format below v2).
    pub cache: EpochCache,
    /// Leader log start offset.
    pub log_start_offset: i64,
    /// Leader log end offset.
    pub log_end_offset: i64,
    /// The leader's current leader epoch, when known (e.g. from the metadata
    /// log). A leader records `(epoch, LEO)` when it is elected
    /// (`Partition.makeLeader`), even before writing; if the cache lacks an
    /// entry at least this high, the model adds `(epoch, log_end_offset)`.
    pub current_leader_epoch: Option<i32>,
}

/// What the model needs to know about the follower when it starts following.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowerView {
    /// The follower's epoch cache (apply [`EpochCache::repair_on_load`] first
    /// for a follower that was restarted).
    pub cache: EpochCache,
    /// Follower log start offset.
    pub log_start_offset: i64,
    /// Follower log end offset.
    pub log_end_offset: i64,
    /// Follower high watermark (clamped to `[log_start_offset, log_end_offset]`
    /// by the model, as Kafka does when it loads the HW checkpoint).
    pub high_watermark: i64,
    /// Base offset of the follower's first segment; a truncation below it
    /// empties the log (`truncateFullyAndStartAt`). Defaults to the log start
    /// offset.
    pub first_segment_base: Option<i64>,
}

/// `OffsetTruncationState`: where to truncate and whether that is final.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationPoint {
    /// Offset to truncate to.
    pub offset: i64,
    /// `truncationCompleted`: false only for [`PointRule::FollowerLacksEpoch`].
    pub truncation_completed: bool,
    /// Which branch fired.
    pub rule: PointRule,
}

/// `AbstractFetcherThread.getOffsetTruncationState`, the follower's reaction to
/// a leader answer `(epoch, end offset)` (OffsetsForLeaderEpoch reply or
/// `DivergingEpoch`).
///
/// `follower_lookup` is the follower's `UnifiedLog.endOffsetForEpoch(answer.epoch)`
/// (`None` when absent); it is only consulted when both fields of the answer
/// are defined. `fetch_offset` is the partition's current fetch offset.
pub fn truncation_point(
    answer: EpochEndOffset,
    follower_lookup: Option<EpochEndOffset>,
    follower_log_end_offset: i64,
    fetch_offset: i64,
) -> TruncationPoint {
    if answer.end_offset == UNDEFINED_EPOCH_OFFSET {
        return TruncationPoint {
            offset: fetch_offset,
            truncation_completed: true,
            rule: PointRule::LeaderOffsetUndefined,
        };
    }
    if answer.epoch == UNDEFINED_EPOCH {
        return TruncationPoint {
            offset: answer.end_offset.min(follower_log_end_offset),
            truncation_completed: true,
            rule: PointRule::LeaderEpochUndefined,
        };
    }
    match follower_lookup {
        None => TruncationPoint {
            offset: answer.end_offset.min(follower_log_end_offset),
            truncation_completed: true,
            rule: PointRule::FollowerLookupAbsent,
        },
        Some(local) if local.epoch != answer.epoch => TruncationPoint {
            offset: local.end_offset.min(follower_log_end_offset),
            truncation_completed: false,
            rule: PointRule::FollowerLacksEpoch,
        },
        Some(local) => TruncationPoint {
            offset: local
                .end_offset
                .min(answer.end_offset)
                .min(follower_log_end_offset),
            truncation_completed: true,
            rule: PointRule::SameEpoch,
        },
    }
}

/// [`truncation_point`] with the follower lookup taken from its cache.
/// Returns the point and the lookup used (`None` if absent or not consulted).
pub fn truncation_point_from_cache(
    answer: EpochEndOffset,
    follower_cache: &EpochCache,
    follower_log_end_offset: i64,
    fetch_offset: i64,
) -> (TruncationPoint, Option<EpochEndOffset>) {
    let consult = answer.end_offset != UNDEFINED_EPOCH_OFFSET && answer.epoch != UNDEFINED_EPOCH;
    let lookup = if consult {
        follower_cache.end_offset_for_epoch(answer.epoch, follower_log_end_offset)
    } else {
        None
    };
    (
        truncation_point(answer, lookup, follower_log_end_offset, fetch_offset),
        lookup,
    )
}

/// The leader's OffsetsForLeaderEpoch answer (`ReplicaManager.lastOffsetForLeaderEpoch`
/// → `Partition.lastOffsetForLeaderEpoch` → `UnifiedLog.endOffsetForEpoch`),
/// assuming no error: `endOffsetFor(requested, LEO)` with an undefined offset
/// mapped to `(U, U)`. A v0 reply carries no epoch, so the receiver sees
/// `(U, offset)`.
pub fn answer_offsets_for_leader_epoch(
    leader: &LeaderView,
    requested_epoch: i32,
    reply_has_epoch: bool,
) -> EpochEndOffset {
    match leader
        .cache
        .end_offset_for_epoch(requested_epoch, leader.log_end_offset)
    {
        None => EpochEndOffset::UNDEFINED,
        Some(r) if !reply_has_epoch => EpochEndOffset::new(UNDEFINED_EPOCH, r.end_offset),
        Some(r) => r,
    }
}

/// The leader's verdict on a fetch (`Partition.readRecords` + `UnifiedLog.read`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchCheck {
    /// Records (or an empty, valid read) are returned.
    Valid {
        /// The leader's end offset for the fetch's epoch, when one was sent.
        epoch_end: Option<EpochEndOffset>,
    },
    /// `DivergingEpoch(epoch, end offset)`: no records.
    Diverging {
        /// The leader's answer.
        answer: EpochEndOffset,
    },
    /// `OFFSET_OUT_OF_RANGE`.
    OutOfRange {
        /// Which check failed.
        cause: OutOfRangeCause,
        /// The leader's end offset for the fetch's epoch, when computed.
        epoch_end: Option<EpochEndOffset>,
    },
}

/// How the leader answers a fetch at `fetch_offset` carrying `last_fetched_epoch`
/// (present only under [`ReplicationProtocol::DivergingEpoch`] with a non-empty
/// follower cache), following `Partition.readRecords`:
///
/// 1. With an epoch `E`: `(e, o) = endOffsetFor(E, LEO)`; undefined → out of
///    range; `fetch_offset < LSO` → out of range; `e < E` or `o < fetch_offset`
///    → `DivergingEpoch(e, o)`.
/// 2. Then the read: `fetch_offset < LSO` or `> LEO` → out of range, else valid.
pub fn check_fetch(
    leader: &LeaderView,
    fetch_offset: i64,
    last_fetched_epoch: Option<i32>,
) -> FetchCheck {
    let mut epoch_end = None;
    if let Some(e) = last_fetched_epoch {
        let r = leader.cache.end_offset_for(e, leader.log_end_offset);
        if r.has_undefined_offset() || r.has_undefined_epoch() {
            return FetchCheck::OutOfRange {
                cause: OutOfRangeCause::EpochUnknownToLeader,
                epoch_end: None,
            };
        }
        if fetch_offset < leader.log_start_offset {
            return FetchCheck::OutOfRange {
                cause: OutOfRangeCause::BelowLogStart,
                epoch_end: Some(r),
            };
        }
        if r.epoch < e || r.end_offset < fetch_offset {
            return FetchCheck::Diverging { answer: r };
        }
        epoch_end = Some(r);
    }
    if fetch_offset < leader.log_start_offset {
        FetchCheck::OutOfRange {
            cause: OutOfRangeCause::BelowLogStart,
            epoch_end,
        }
    } else if fetch_offset > leader.log_end_offset {
        FetchCheck::OutOfRange {
            cause: OutOfRangeCause::AboveLogEnd,
            epoch_end,
        }
    } else {
        FetchCheck::Valid { epoch_end }
    }
}

/// What `AbstractFetcherThread.fetchOffsetAndTruncate` does after
/// `OFFSET_OUT_OF_RANGE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfRangeAction {
    /// Leader LEO `<` follower LEO: truncate to the leader's LEO and fetch from it.
    TruncateToLeaderEnd {
        /// The leader's log end offset.
        offset: i64,
    },
    /// Leader LSO `>` follower LEO: delete the whole log, restart it at the
    /// leader's LSO (`truncateFullyAndStartAt`, cache cleared).
    ResetToLeaderStart {
        /// The leader's log start offset.
        offset: i64,
    },
    /// Keep the log and fetch from `max(leader LSO, follower LEO)` = follower LEO.
    Keep {
        /// The next fetch offset.
        fetch_offset: i64,
    },
}

/// `fetchOffsetAndTruncate`: compare the leader's latest and earliest offsets
/// with the follower's LEO.
pub fn out_of_range_action(leader: &LeaderView, follower_log_end_offset: i64) -> OutOfRangeAction {
    if leader.log_end_offset < follower_log_end_offset {
        OutOfRangeAction::TruncateToLeaderEnd {
            offset: leader.log_end_offset,
        }
    } else if leader.log_start_offset > follower_log_end_offset {
        OutOfRangeAction::ResetToLeaderStart {
            offset: leader.log_start_offset,
        }
    } else {
        OutOfRangeAction::Keep {
            fetch_offset: leader.log_start_offset.max(follower_log_end_offset),
        }
    }
}

/// The result of [`predict_truncation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    /// Protocol simulated.
    pub protocol: ReplicationProtocol,
    /// How it ended.
    pub outcome: Outcome,
    /// Every record the follower held below this offset survives; every record
    /// at or above it is removed. `<=` the follower's initial LEO. When the log
    /// was reset, this is the follower's original log start offset (nothing survives).
    pub keep_end: i64,
    /// Offset of the first fetch answered with leader data.
    pub resume_at: Option<i64>,
    /// The log was emptied and restarted at the leader's log start offset.
    pub reset: bool,
    /// Follower HW after the rounds.
    pub high_watermark_after: i64,
    /// `keep_end` is below the follower's initial HW (committed data cut).
    pub below_high_watermark: bool,
    /// Follower cache after the rounds.
    pub cache_after: EpochCache,
    /// Follower LEO after the rounds (before any re-fetching).
    pub log_end_offset_after: i64,
    /// Every round.
    pub rounds: Vec<Round>,
    /// Corrections applied to inconsistent inputs before simulating.
    pub input_adjustments: Vec<String>,
}

impl Prediction {
    /// The rounds as human-readable lines, for an `--explain` output.
    pub fn explain(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .input_adjustments
            .iter()
            .map(|a| format!("input adjusted: {a}"))
            .collect();
        lines.extend(self.rounds.iter().map(Round::describe));
        lines.push(format!(
            "{:?} ({:?}): keep offsets below {}{}{}",
            self.outcome,
            self.protocol,
            self.keep_end,
            if self.reset {
                "; log reset to the leader's log start offset"
            } else {
                ""
            },
            if self.below_high_watermark {
                "; cuts below the follower's high watermark"
            } else {
                ""
            }
        ));
        lines
    }
}

/// The four protocols' predictions for one follower.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredictionSet {
    /// [`ReplicationProtocol::HighWatermark`].
    pub high_watermark: Prediction,
    /// [`ReplicationProtocol::OffsetsForLeaderEpochV0`].
    pub offsets_for_leader_epoch_v0: Prediction,
    /// [`ReplicationProtocol::OffsetsForLeaderEpoch`].
    pub offsets_for_leader_epoch: Prediction,
    /// [`ReplicationProtocol::DivergingEpoch`].
    pub diverging_epoch: Prediction,
}

/// Runs [`predict_truncation`] under every protocol.
pub fn predict_all(leader: &LeaderView, follower: &FollowerView) -> PredictionSet {
    PredictionSet {
        high_watermark: predict_truncation(leader, follower, ReplicationProtocol::HighWatermark),
        offsets_for_leader_epoch_v0: predict_truncation(
            leader,
            follower,
            ReplicationProtocol::OffsetsForLeaderEpochV0,
        ),
        offsets_for_leader_epoch: predict_truncation(
            leader,
            follower,
            ReplicationProtocol::OffsetsForLeaderEpoch,
        ),
        diverging_epoch: predict_truncation(leader, follower, ReplicationProtocol::DivergingEpoch),
    }
}

/// The legacy (pre-0.11) result: high-watermark truncation plus the
/// out-of-range fallbacks. Same as `predict_truncation(.., HighWatermark)`.
pub fn predict_high_watermark_truncation(
    leader: &LeaderView,
    follower: &FollowerView,
) -> Prediction {
    predict_truncation(leader, follower, ReplicationProtocol::HighWatermark)
}

/// Predicts where Kafka truncates `follower` when it starts following
/// `leader`, with Kafka's initial fetch offset
/// (`ReplicaManager.initialFetchOffset`: the LEO under truncation on fetch with
/// a non-empty cache, else the HW).
///
/// Procedure (notes §4.10, modelling `AbstractFetcherThread`):
/// * mode HW (protocol [`ReplicationProtocol::HighWatermark`] or empty
///   follower cache): truncate to the HW (`truncateToHighWatermark`);
/// * mode OffsetsForLeaderEpoch (v0 or v1+): ask for the latest epoch,
///   truncate to [`truncation_point`], repeat while not final;
/// * mode DivergingEpoch: start fetching at the LEO with `lastFetchedEpoch`.
///
/// Then fetch until a fetch is valid, handling `DivergingEpoch` and
/// `OFFSET_OUT_OF_RANGE` ([`out_of_range_action`]) as Kafka does.
pub fn predict_truncation(
    leader: &LeaderView,
    follower: &FollowerView,
    protocol: ReplicationProtocol,
) -> Prediction {
    predict_truncation_from(leader, follower, protocol, None)
}

/// The replica-log state that truncation acts on, with the operations of
/// `UnifiedLog` that change it (offsets, high watermark, epoch cache).
/// Segments are reduced to the base offset of the first one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogModel {
    /// Epoch cache.
    pub cache: EpochCache,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// High watermark.
    pub high_watermark: i64,
    /// Base offset of the first segment.
    pub first_segment_base: i64,
}

/// Result of [`LogModel::append_batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendEffect {
    /// The batch's epoch was assigned (or ignored) in the cache.
    Assigned(super::epochs::AssignOutcome),
    /// A v0/v1 batch cleared a non-empty cache.
    CacheCleared,
    /// No cache change.
    Unchanged,
    /// A v2 batch with a negative epoch: Kafka's `assign` throws; the model
    /// leaves the cache unchanged.
    InvalidEpoch(i32),
}

impl LogModel {
    /// An empty log at offset 0.
    pub fn empty() -> Self {
        LogModel {
            cache: EpochCache::new(),
            log_start_offset: 0,
            log_end_offset: 0,
            high_watermark: 0,
            first_segment_base: 0,
        }
    }

    /// `UnifiedLog.append` of one batch `base..=last`: a v2 batch
    /// (`epoch = Some(e)`) assigns `(e, base)` in the cache
    /// (`maybeAssignEpochStartOffset`); a v0/v1 batch (`None`) clears a non-empty
    /// cache (`clearAndFlush`, reverting to HW truncation). LEO := `last + 1`.
    pub fn append_batch(
        &mut self,
        epoch: Option<i32>,
        base_offset: i64,
        last_offset: i64,
    ) -> AppendEffect {
        let effect = match epoch {
            Some(e) => match self.cache.assign(e, base_offset) {
                Ok(o) => AppendEffect::Assigned(o),
                Err(_) => AppendEffect::InvalidEpoch(e),
            },
            None if !self.cache.is_empty() => {
                self.cache.clear();
                AppendEffect::CacheCleared
            }
            None => AppendEffect::Unchanged,
        };
        self.log_end_offset = self.log_end_offset.max(last_offset.saturating_add(1));
        effect
    }

    /// `UnifiedLog.maybeAssignEpochStartOffset(epoch, LEO)`, what a broker does
    /// when it becomes leader in a new epoch (`Partition.makeLeader`).
    pub fn assign_epoch_at_log_end(&mut self, epoch: i32) -> Option<super::epochs::AssignOutcome> {
        self.cache.assign(epoch, self.log_end_offset).ok()
    }

    /// `UnifiedLog.truncateTo(target)`. Returns true when data was removed.
    /// * `target >= LEO`: nothing removed; the cache still drops entries
    ///   starting at or after the LEO (an empty trailing epoch).
    /// * `target <` first segment base: [`LogModel::truncate_fully_and_start_at`].
    /// * else LEO := target, LSO := min(LSO, target), HW := min(HW, target),
    ///   cache `truncateFromEnd(target)`.
    ///
    /// Kafka rejects a negative target; the model treats it as 0.
    pub fn truncate_to(&mut self, target: i64) -> bool {
        let t = target.max(0);
        if t >= self.log_end_offset {
            self.cache.truncate_from_end(self.log_end_offset);
            return false;
        }
        if t < self.first_segment_base {
            self.truncate_fully_and_start_at(t);
            return true;
        }
        self.cache.truncate_from_end(t);
        self.log_end_offset = t;
        self.log_start_offset = self.log_start_offset.min(t);
        self.high_watermark = self.high_watermark.min(t);
        true
    }

    /// `UnifiedLog.truncateFullyAndStartAt(offset)`: empty log at `offset`,
    /// cache cleared, LSO = LEO = HW = `offset`.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) {
        self.cache.clear();
        self.log_end_offset = offset;
        self.log_start_offset = offset;
        self.high_watermark = offset;
        self.first_segment_base = offset;
    }

    /// `UnifiedLog.updateHighWatermark(hw)`: clamp to `[LSO, LEO]` and set.
    /// Returns the new HW.
    pub fn update_high_watermark(&mut self, hw: i64) -> i64 {
        let new = if hw < self.log_start_offset {
            self.log_start_offset
        } else if hw >= self.log_end_offset {
            self.log_end_offset
        } else {
            hw
        };
        self.high_watermark = new;
        new
    }

    /// `UnifiedLog.maybeIncrementHighWatermark(hw)` (leader): moves the HW only
    /// forward; returns the old HW when it moved. Kafka throws for `hw > LEO`;
    /// the model returns `None` and changes nothing.
    pub fn maybe_increment_high_watermark(&mut self, hw: i64) -> Option<i64> {
        if hw > self.log_end_offset || hw <= self.high_watermark {
            return None;
        }
        let old = self.high_watermark;
        self.high_watermark = hw;
        Some(old)
    }

    /// `UnifiedLog.maybeUpdateHighWatermark(hw)` (follower): clamp like
    /// [`LogModel::update_high_watermark`]; returns the new HW if it changed.
    pub fn maybe_update_high_watermark(&mut self, hw: i64) -> Option<i64> {
        let old = self.high_watermark;
        let new = self.update_high_watermark(hw);
        if new == old {
            None
        } else {
            Some(new)
        }
    }

    /// `UnifiedLog.maybeIncrementLogStartOffset(o)`: LSO only moves forward
    /// (up to the HW in Kafka; not checked here); cache `truncateFromStart`.
    pub fn increment_log_start_offset(&mut self, offset: i64) -> bool {
        if offset <= self.log_start_offset {
            return false;
        }
        self.log_start_offset = offset;
        self.cache.truncate_from_start(offset);
        if self.high_watermark < offset {
            self.high_watermark = offset;
        }
        true
    }
}

/// [`predict_truncation`] with an explicit initial fetch offset (Kafka test
/// fixtures set one that is neither the LEO nor the HW). `None` uses Kafka's
/// rule.
pub fn predict_truncation_from(
    leader_in: &LeaderView,
    follower_in: &FollowerView,
    protocol: ReplicationProtocol,
    initial_fetch_offset: Option<i64>,
) -> Prediction {
    let mut adjustments = Vec::new();
    let leader = sanitize_leader(leader_in, &mut adjustments);
    let mut f = sanitize_follower(follower_in, &mut adjustments);
    let f0_lso = f.log_start_offset;
    let f0_hw = f.high_watermark;
    let n_entries = f.cache.len();
    let mut rounds: Vec<Round> = Vec::new();

    let hw_mode = protocol == ReplicationProtocol::HighWatermark || f.cache.is_empty();
    let default_init = if protocol == ReplicationProtocol::DivergingEpoch && !hw_mode {
        f.log_end_offset
    } else {
        f.high_watermark
    };
    let init = initial_fetch_offset.unwrap_or(default_init).max(0);

    // Phase 1: truncation before fetching.
    let fetch_offset;
    if hw_mode {
        f.truncate_to(init);
        push(
            &mut rounds,
            &f,
            RoundKind::HighWatermark,
            init,
            None,
            None,
            None,
            FollowerLookup::NotConsulted,
            None,
            Some(init),
        );
        fetch_offset = init;
    } else if protocol == ReplicationProtocol::DivergingEpoch {
        fetch_offset = init;
    } else {
        let has_epoch = protocol == ReplicationProtocol::OffsetsForLeaderEpoch;
        let mut p = init;
        let mut done = false;
        for _ in 0..=n_entries {
            let Some(e) = f.cache.latest_epoch() else {
                // Not reachable from a consistent cache (a non-final round never
                // empties it); Kafka would fall back to HW truncation at `p`.
                f.truncate_to(p);
                push(
                    &mut rounds,
                    &f,
                    RoundKind::HighWatermark,
                    p,
                    None,
                    None,
                    None,
                    FollowerLookup::NotConsulted,
                    None,
                    Some(p),
                );
                done = true;
                break;
            };
            let answer = answer_offsets_for_leader_epoch(&leader, e, has_epoch);
            let (point, lookup) =
                truncation_point_from_cache(answer, &f.cache, f.log_end_offset, p);
            f.truncate_to(point.offset);
            push(
                &mut rounds,
                &f,
                RoundKind::OffsetsForLeaderEpoch,
                p,
                Some(e),
                Some(answer),
                None,
                lookup_of(answer, lookup),
                Some(point),
                Some(point.offset),
            );
            p = point.offset.max(0);
            if point.truncation_completed {
                done = true;
                break;
            }
        }
        if !done {
            return finish(
                protocol,
                Outcome::IterationLimit,
                f,
                f0_lso,
                f0_hw,
                false,
                None,
                rounds,
                adjustments,
            );
        }
        fetch_offset = p;
    }

    let bound = n_entries + 8;
    let (outcome, resume_at, reset) =
        fetch_loop(&leader, &mut f, fetch_offset, protocol, &mut rounds, bound);
    finish(
        protocol,
        outcome,
        f,
        f0_lso,
        f0_hw,
        reset,
        resume_at,
        rounds,
        adjustments,
    )
}

/// The fetch phase (notes §4.10 step 6): fetch at `fetch_offset` until the
/// leader answers with data, truncating on `DivergingEpoch` and handling
/// `OFFSET_OUT_OF_RANGE` with `fetchOffsetAndTruncate`.
fn fetch_loop(
    leader: &LeaderView,
    f: &mut LogModel,
    mut fetch_offset: i64,
    protocol: ReplicationProtocol,
    rounds: &mut Vec<Round>,
    bound: usize,
) -> (Outcome, Option<i64>, bool) {
    let mut reset = false;
    let mut outcome = Outcome::IterationLimit;
    let mut resume_at = None;
    for _ in 0..bound {
        let sent = if protocol == ReplicationProtocol::DivergingEpoch {
            f.cache.latest_epoch()
        } else {
            None
        };
        match check_fetch(leader, fetch_offset, sent) {
            FetchCheck::Valid { epoch_end } => {
                push(
                    rounds,
                    f,
                    RoundKind::FetchValid,
                    fetch_offset,
                    sent,
                    epoch_end,
                    None,
                    FollowerLookup::NotConsulted,
                    None,
                    None,
                );
                outcome = Outcome::Converged;
                resume_at = Some(fetch_offset);
                break;
            }
            FetchCheck::Diverging { answer } => {
                let (point, lookup) =
                    truncation_point_from_cache(answer, &f.cache, f.log_end_offset, fetch_offset);
                f.truncate_to(point.offset);
                push(
                    rounds,
                    f,
                    RoundKind::FetchDiverging,
                    fetch_offset,
                    sent,
                    Some(answer),
                    None,
                    lookup_of(answer, lookup),
                    Some(point),
                    Some(point.offset),
                );
                fetch_offset = point.offset.max(0);
            }
            FetchCheck::OutOfRange { cause, epoch_end } => {
                match out_of_range_action(leader, f.log_end_offset) {
                    OutOfRangeAction::TruncateToLeaderEnd { offset } => {
                        f.truncate_to(offset);
                        push(
                            rounds,
                            f,
                            RoundKind::FetchOutOfRangeToLeaderEnd,
                            fetch_offset,
                            sent,
                            epoch_end,
                            Some(cause),
                            FollowerLookup::NotConsulted,
                            None,
                            Some(offset),
                        );
                        fetch_offset = offset;
                    }
                    OutOfRangeAction::ResetToLeaderStart { offset } => {
                        f.truncate_fully_and_start_at(offset);
                        reset = true;
                        push(
                            rounds,
                            f,
                            RoundKind::FetchOutOfRangeReset,
                            fetch_offset,
                            sent,
                            epoch_end,
                            Some(cause),
                            FollowerLookup::NotConsulted,
                            None,
                            Some(offset),
                        );
                        fetch_offset = offset;
                    }
                    OutOfRangeAction::Keep { fetch_offset: next } => {
                        push(
                            rounds,
                            f,
                            RoundKind::FetchOutOfRangeKeep,
                            fetch_offset,
                            sent,
                            epoch_end,
                            Some(cause),
                            FollowerLookup::NotConsulted,
                            None,
                            None,
                        );
                        if next == fetch_offset {
                            outcome = Outcome::Stuck;
                            break;
                        }
                        fetch_offset = next;
                    }
                }
            }
        }
    }
    (outcome, resume_at, reset)
}

/// Predicts the rest of the fetch phase for a follower that is already
/// fetching (state `Fetching` in `AbstractFetcherThread`) at `fetch_offset`,
/// e.g. after the leader's log changed under it. Under
/// [`ReplicationProtocol::DivergingEpoch`] each fetch carries the follower's
/// latest epoch; otherwise fetches carry none and only range checks apply.
pub fn predict_fetch_phase(
    leader_in: &LeaderView,
    follower: &LogModel,
    fetch_offset: i64,
    protocol: ReplicationProtocol,
) -> Prediction {
    let mut adjustments = Vec::new();
    let leader = sanitize_leader(leader_in, &mut adjustments);
    let fv = FollowerView {
        cache: follower.cache.clone(),
        log_start_offset: follower.log_start_offset,
        log_end_offset: follower.log_end_offset,
        high_watermark: follower.high_watermark,
        first_segment_base: Some(follower.first_segment_base),
    };
    let mut f = sanitize_follower(&fv, &mut adjustments);
    let f0_lso = f.log_start_offset;
    let f0_hw = f.high_watermark;
    let mut rounds = Vec::new();
    let bound = f.cache.len() + 8;
    let (outcome, resume_at, reset) = fetch_loop(
        &leader,
        &mut f,
        fetch_offset.max(0),
        protocol,
        &mut rounds,
        bound,
    );
    finish(
        protocol,
        outcome,
        f,
        f0_lso,
        f0_hw,
        reset,
        resume_at,
        rounds,
        adjustments,
    )
}

#[allow(clippy::too_many_arguments)]
fn push(
    rounds: &mut Vec<Round>,
    f: &LogModel,
    kind: RoundKind,
    position: i64,
    sent_epoch: Option<i32>,
    answer: Option<EpochEndOffset>,
    out_of_range: Option<OutOfRangeCause>,
    lookup: FollowerLookup,
    point: Option<TruncationPoint>,
    truncate_to: Option<i64>,
) {
    rounds.push(Round {
        n: rounds.len() + 1,
        kind,
        position,
        sent_epoch,
        answer,
        out_of_range,
        lookup,
        rule: point.map(|p| p.rule),
        truncate_to,
        truncation_completed: point.map(|p| p.truncation_completed),
        cache_after: f.cache.entries().to_vec(),
        log_end_offset_after: f.log_end_offset,
        high_watermark_after: f.high_watermark,
    });
}

fn lookup_of(answer: EpochEndOffset, lookup: Option<EpochEndOffset>) -> FollowerLookup {
    if answer.has_undefined_offset() || answer.has_undefined_epoch() {
        FollowerLookup::NotConsulted
    } else {
        match lookup {
            None => FollowerLookup::Absent,
            Some(value) => FollowerLookup::Found { value },
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    protocol: ReplicationProtocol,
    outcome: Outcome,
    f: LogModel,
    f0_lso: i64,
    f0_hw: i64,
    reset: bool,
    resume_at: Option<i64>,
    rounds: Vec<Round>,
    input_adjustments: Vec<String>,
) -> Prediction {
    let keep_end = if reset { f0_lso } else { f.log_end_offset };
    Prediction {
        protocol,
        outcome,
        keep_end,
        resume_at,
        reset,
        high_watermark_after: f.high_watermark,
        below_high_watermark: keep_end < f0_hw,
        cache_after: f.cache,
        log_end_offset_after: f.log_end_offset,
        rounds,
        input_adjustments,
    }
}

fn sanitize_leader(l: &LeaderView, adj: &mut Vec<String>) -> LeaderView {
    let mut out = l.clone();
    if out.log_start_offset < 0 {
        adj.push(format!(
            "leader log start offset {} raised to 0",
            out.log_start_offset
        ));
        out.log_start_offset = 0;
    }
    if out.log_end_offset < out.log_start_offset {
        adj.push(format!(
            "leader log end offset {} raised to its log start offset {}",
            out.log_end_offset, out.log_start_offset
        ));
        out.log_end_offset = out.log_start_offset;
    }
    let removed = out
        .cache
        .truncate_from_end(out.log_end_offset.saturating_add(1));
    if !removed.is_empty() {
        adj.push(format!(
            "leader cache entries starting beyond its log end offset {} dropped: {}",
            out.log_end_offset,
            brief(&removed)
        ));
    }
    if let Some(e) = out.current_leader_epoch {
        let needs = e >= 0 && out.cache.latest_epoch_is_below(e);
        if needs && out.cache.assign(e, out.log_end_offset).is_ok() {
            adj.push(format!(
                "leader's current epoch {e} recorded at its log end offset {} (Partition.makeLeader)",
                out.log_end_offset
            ));
        }
    }
    out
}

fn sanitize_follower(fv: &FollowerView, adj: &mut Vec<String>) -> LogModel {
    let mut lso = fv.log_start_offset;
    if lso < 0 {
        adj.push(format!("follower log start offset {lso} raised to 0"));
        lso = 0;
    }
    let mut leo = fv.log_end_offset;
    if leo < lso {
        adj.push(format!(
            "follower log end offset {leo} raised to its log start offset {lso}"
        ));
        leo = lso;
    }
    let hw = fv.high_watermark.clamp(lso, leo);
    if hw != fv.high_watermark {
        adj.push(format!(
            "follower high watermark {} clamped to {hw}",
            fv.high_watermark
        ));
    }
    let mut cache = fv.cache.clone();
    let removed = cache.truncate_from_end(leo.saturating_add(1));
    if !removed.is_empty() {
        adj.push(format!(
            "follower cache entries starting beyond its log end offset {leo} dropped: {}",
            brief(&removed)
        ));
    }
    let base = fv.first_segment_base.unwrap_or(lso).clamp(0, lso);
    LogModel {
        cache,
        log_start_offset: lso,
        log_end_offset: leo,
        high_watermark: hw,
        first_segment_base: base,
    }
}

pub use crate::analysis::kraft::{
    metadata_truncation_offset, validate_metadata_fetch, MetadataFetchKind,
    MetadataFetchValidation, MetadataLogView, MetadataTruncationError,
};

#[cfg(test)]
mod tests {
    use super::ReplicationProtocol as P;

    #[test]
    fn inter_broker_protocol_values_map_to_kafkas_gates() {
        for (v, want) in [
            ("0.10.2", P::HighWatermark),
            ("0.11.0-IV1", P::HighWatermark),
            ("0.11.0-IV2", P::OffsetsForLeaderEpochV0),
            ("0.11.0", P::OffsetsForLeaderEpochV0),
            ("1.1", P::OffsetsForLeaderEpochV0),
            ("1.1-IV0", P::OffsetsForLeaderEpochV0),
            ("2.0-IV0", P::OffsetsForLeaderEpoch),
            ("2.6", P::OffsetsForLeaderEpoch),
            ("2.6-IV0", P::OffsetsForLeaderEpoch),
            ("2.7-IV0", P::OffsetsForLeaderEpoch),
            ("2.7-IV1", P::DivergingEpoch),
            ("2.7", P::DivergingEpoch),
            ("2.8.1", P::DivergingEpoch),
            ("3.9", P::DivergingEpoch),
            (" 3.9-IV0 ", P::DivergingEpoch),
        ] {
            assert_eq!(P::for_inter_broker_protocol(v), Ok(want), "{v}");
        }
        for bad in [
            "",
            "2",
            "x.y",
            "2.6-IV",
            "2.6-IVx",
            "0.11",
            "2.6.1.2.3",
            "-2.6",
        ] {
            assert!(P::for_inter_broker_protocol(bad).is_err(), "{bad}");
        }
    }
}
