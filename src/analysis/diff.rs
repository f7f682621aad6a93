//! Replica diff: compares the replicas of a partition batch by batch and
//! predicts what Kafka's truncation would cut from each of them.
//!
//! Input is a summary of each replica's log (batch headers, offsets, high
//! watermark, `leader-epoch-checkpoint` entries), built by the caller from
//! parsed segments. Output per partition: the reference replica (the leader the
//! others would follow) and, per replica, where its batches stop matching the
//! reference, where Kafka's epoch protocol and legacy high-watermark
//! truncation would cut it, and how many records that removes.
//!
//! Decisions (documented here because Kafka has no equivalent):
//! * **Epoch cache per replica** (notes §8.1): the checkpoint entries are
//!   loaded with `assign` (as Kafka's constructor), repaired as `LogLoader`
//!   does (`truncateFromEnd(LEO)`, `truncateFromStart(LSO)`), then extended
//!   with the segment-recovery rule from the batches. Without a checkpoint the
//!   cache is rebuilt from the batches alone. The reference replica also keeps
//!   a trailing `(E, LEO)` checkpoint entry (a leader elected in `E` that has
//!   not written yet, still in its memory), and gets `(E_L, LEO)` when the
//!   caller gives its current leader epoch from the metadata log.
//! * **High watermark**: the checkpoint value clamped to `[LSO, LEO]`, as Kafka
//!   loads it; a missing one is treated as Kafka does (checkpoint absent → 0,
//!   clamped → LSO) and flagged.
//! * **Committed**: a cut record at offset `o` counts as committed when some
//!   replica (the cut one included) holds the identical batch and `o` is below
//!   that replica's high watermark (notes §8.6 "committed-any": every replica's
//!   HW is a lower bound of a leader HW it learned, and it vouches only for the
//!   batches it holds itself).
//! * **Record counts** work from batch headers. A batch's records are assumed
//!   to occupy its offsets `base..=last` densely (true for v2 batches that were
//!   not compacted). When a cut falls inside a batch, the records at offsets
//!   `>=` the cut are counted (Kafka sets the LEO to the cut offset and removes
//!   the whole batch physically; in practice cuts are batch boundaries). For a
//!   compacted batch (`record_count` smaller than its offset span) a partial
//!   overlap is approximated by `min(record_count, overlap)`.
//! * Batches are compared on `(base_offset, last_offset, partition_leader_epoch, crc)`;
//!   the CRC does not cover base offset and epoch, hence all four. Only batches
//!   reaching the common range `[max(LSO), ...)` are compared. Compacted
//!   partitions (replicas cleaned at different times have differently shaped
//!   batches) are not handled specially: they show up as divergence.

use std::collections::HashSet;

use super::epochs::{brief, EpochCache};
use super::truncation::{predict_truncation, FollowerView, LeaderView, Prediction};
use crate::model::diff::{
    DiffFinding, DiffOptions, DivergenceKind, FindingKind, PartitionDiff, ReferenceChoice,
    ReferenceReason, ReplicaDiff,
};
use crate::model::truncation::{EpochStart, Outcome, ReplicationProtocol};
use crate::model::{BatchSummary, ReplicaLog};

/// How the caller wants the reference replica chosen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ReferenceHint {
    /// Highest latest epoch, then longest log.
    #[default]
    Auto,
    /// Operator override.
    Explicit {
        /// Broker id.
        broker: i32,
    },
    /// The leader at capture time according to the metadata log.
    MetadataLeader {
        /// Broker id.
        broker: i32,
        /// The leader epoch recorded in the metadata, if known.
        leader_epoch: Option<i32>,
    },
}

/// One partition to diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionReplicas {
    /// Topic name.
    pub topic: String,
    /// Partition number.
    pub partition: i32,
    /// Replica summaries.
    pub replicas: Vec<ReplicaLog>,
    /// Reference rule.
    pub reference: ReferenceHint,
}

fn finding(kind: FindingKind, detail: impl Into<String>) -> DiffFinding {
    DiffFinding {
        kind,
        detail: detail.into(),
    }
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffReport {
    /// One entry per input partition.
    pub partitions: Vec<PartitionDiff>,
}

/// Diffs every partition.
pub fn diff_partitions(input: &[PartitionReplicas], options: &DiffOptions) -> DiffReport {
    DiffReport {
        partitions: input.iter().map(|p| diff_partition(p, options)).collect(),
    }
}

/// A replica after normalisation.
struct Normalized<'a> {
    src: &'a ReplicaLog,
    batches: Vec<BatchSummary>,
    /// Offsets below this were not read (see [`ReplicaLog::window_start`]).
    window: Option<i64>,
    lso: i64,
    leo: i64,
    hw: Option<i64>,
    cache: EpochCache,
    /// Trailing `(E, LEO)` checkpoint entry removed by the load repair.
    trailing: Option<EpochStart>,
    findings: Vec<DiffFinding>,
}

impl Normalized<'_> {
    fn hw_or_lso(&self) -> i64 {
        self.hw.unwrap_or(self.lso)
    }

    /// Latest epoch the broker holds in memory if it was not restarted: the
    /// repaired cache's, or a trailing `(E, LEO)` checkpoint entry's.
    fn latest_epoch(&self) -> Option<i32> {
        match (self.cache.latest_epoch(), self.trailing) {
            (Some(e), Some(t)) => Some(e.max(t.epoch)),
            (None, Some(t)) => Some(t.epoch),
            (e, None) => e,
        }
    }
}

fn normalize(r: &ReplicaLog) -> Normalized<'_> {
    let mut findings = Vec::new();
    let lso = r.log_start_offset.max(0);
    let leo = r.log_end_offset.max(lso);
    let mut batches = r.batches.clone();
    let sorted = batches
        .windows(2)
        .all(|w| w[0].base_offset <= w[1].base_offset);
    if !sorted {
        findings.push(finding(
            FindingKind::BatchLayout,
            "batches were not in offset order; sorted by base offset",
        ));
        batches.sort_by_key(|b| (b.base_offset, b.last_offset));
    }
    if let Some(w) = batches
        .windows(2)
        .find(|w| w[1].base_offset <= w[0].last_offset)
    {
        findings.push(finding(
            FindingKind::BatchLayout,
            format!(
                "overlapping batches at {} and {}",
                w[0].base_offset, w[1].base_offset
            ),
        ));
    }
    if let Some(b) = batches.iter().find(|b| b.last_offset < b.base_offset) {
        findings.push(finding(
            FindingKind::BatchLayout,
            format!(
                "batch at {} has last offset {} below its base",
                b.base_offset, b.last_offset
            ),
        ));
    }
    if let Some(b) = batches.iter().find(|b| b.last_offset >= leo) {
        findings.push(finding(
            FindingKind::BatchLayout,
            format!(
                "batch [{}, {}) extends beyond the log end offset {leo}",
                b.base_offset,
                b.last_offset.saturating_add(1)
            ),
        ));
    }
    // Epoch regression.
    let mut max_epoch = -1;
    for b in &batches {
        if b.partition_leader_epoch >= 0 {
            if b.partition_leader_epoch < max_epoch {
                findings.push(finding(
                    FindingKind::EpochRegression,
                    format!(
                        "batch at {} has epoch {} after epoch {max_epoch}",
                        b.base_offset, b.partition_leader_epoch
                    ),
                ));
                break;
            }
            max_epoch = b.partition_leader_epoch;
        }
    }
    let hw = match r.high_watermark {
        None => {
            findings.push(finding(
                FindingKind::HighWatermarkUnknown,
                "no high watermark checkpoint entry; treated as the log start offset",
            ));
            None
        }
        Some(raw) => {
            if raw > leo {
                findings.push(finding(
                    FindingKind::HighWatermarkBeyondLogEnd,
                    format!("checkpointed high watermark {raw} is beyond the log end offset {leo} (unflushed loss)"),
                ));
            }
            Some(raw.clamp(lso, leo))
        }
    };
    let batch_epochs: Vec<(i32, i64)> = batches
        .iter()
        .filter(|b| b.base_offset < leo)
        .map(|b| (b.partition_leader_epoch, b.base_offset))
        .collect();
    let mut from_batches = EpochCache::rebuild_from_batches(batch_epochs.iter().copied());
    from_batches.truncate_from_start(lso);
    let mut trailing = None;
    let cache = match &r.checkpoint_epochs {
        None => {
            findings.push(finding(
                FindingKind::CheckpointMissing,
                "no leader-epoch-checkpoint; cache rebuilt from batch headers",
            ));
            from_batches.clone()
        }
        Some(entries) => {
            let (mut c, rejected) = EpochCache::from_checkpoint_checked(entries.iter().copied());
            if !rejected.is_empty() {
                findings.push(finding(
                    FindingKind::CheckpointInvalidEntries,
                    format!("rejected checkpoint entries: {}", brief(&rejected)),
                ));
            }
            let (end_removed, start_removed) = c.repair_on_load(leo, lso);
            let mut stale: Vec<EpochStart> = end_removed.clone();
            if let Some(first) = end_removed.last() {
                // `end_removed` is newest first; a single removed entry at exactly
                // the LEO is the benign trailing empty epoch.
                if end_removed.len() == 1 && first.start_offset == leo {
                    trailing = Some(*first);
                    stale.clear();
                    findings.push(finding(
                        FindingKind::CheckpointTrailingEmptyEpoch,
                        format!(
                            "checkpoint ends with ({}, {leo}): elected in epoch {} without writing",
                            first.epoch, first.epoch
                        ),
                    ));
                }
            }
            let start_stale: Vec<EpochStart> = start_removed
                .iter()
                .filter(|e| e.start_offset < lso)
                .copied()
                .collect();
            if !stale.is_empty() || start_stale.len() > 1 {
                findings.push(finding(
                    FindingKind::CheckpointStaleEntries,
                    format!(
                        "stale checkpoint entries repaired: beyond LEO {}, before LSO {}",
                        brief(&stale),
                        brief(&start_removed)
                    ),
                ));
            }
            if r.window_start.is_some() {
                // Only a window was read: below its first batch the batches'
                // epochs are the checkpoint's (that prefix was not read).
                let mut seeded = c.clone();
                seeded.truncate_from_end(batches.first().map_or(leo, |b| b.base_offset));
                seeded.extend_from_recovered_batches(batch_epochs.iter().copied());
                seeded.truncate_from_start(lso);
                from_batches = seeded;
            }
            c.extend_from_recovered_batches(batch_epochs.iter().copied());
            if c != from_batches {
                findings.push(finding(
                    FindingKind::CheckpointDiffersFromBatches,
                    format!(
                        "repaired checkpoint {} differs from batch-derived {}",
                        c.brief(),
                        from_batches.brief()
                    ),
                ));
            }
            c
        }
    };
    Normalized {
        src: r,
        batches,
        window: r.window_start,
        lso,
        leo,
        hw,
        cache,
        trailing,
        findings,
    }
}

fn choose_reference(
    reps: &[Normalized<'_>],
    hint: &ReferenceHint,
    findings: &mut Vec<DiffFinding>,
) -> Option<(usize, ReferenceReason)> {
    if reps.is_empty() {
        return None;
    }
    let wanted = match hint {
        ReferenceHint::Auto => None,
        ReferenceHint::Explicit { broker } => Some((*broker, ReferenceReason::Explicit)),
        ReferenceHint::MetadataLeader { broker, .. } => {
            Some((*broker, ReferenceReason::MetadataLeader))
        }
    };
    if let Some((broker, reason)) = wanted {
        if let Some(i) = reps.iter().position(|r| r.src.broker == broker) {
            return Some((i, reason));
        }
        findings.push(finding(
            FindingKind::ReferenceNotFound,
            format!("requested reference broker {broker} is not among the replicas; choosing automatically"),
        ));
    }
    let key = |r: &Normalized<'_>| (r.latest_epoch().unwrap_or(-1), r.leo);
    let best_epoch = reps.iter().map(|r| key(r).0).max().unwrap_or(-1);
    let by_epoch: Vec<usize> = (0..reps.len())
        .filter(|&i| key(&reps[i]).0 == best_epoch)
        .collect();
    if by_epoch.len() == 1 {
        return Some((by_epoch[0], ReferenceReason::HighestLatestEpoch));
    }
    let best_leo = by_epoch.iter().map(|&i| reps[i].leo).max().unwrap_or(0);
    let by_leo: Vec<usize> = by_epoch
        .into_iter()
        .filter(|&i| reps[i].leo == best_leo)
        .collect();
    if by_leo.len() == 1 {
        return Some((by_leo[0], ReferenceReason::LongestLog));
    }
    let chosen = by_leo
        .iter()
        .copied()
        .min_by_key(|&i| reps[i].src.broker)
        .unwrap_or(0);
    findings.push(finding(
        FindingKind::AmbiguousReference,
        format!(
            "brokers {:?} tie on latest epoch {best_epoch} and log end offset {best_leo}; took broker {}",
            by_leo.iter().map(|&i| reps[i].src.broker).collect::<Vec<_>>(),
            reps[chosen].src.broker
        ),
    ));
    Some((chosen, ReferenceReason::Ambiguous))
}

/// Divergence of `a` (replica) against `b` (reference).
fn divergence(a: &Normalized<'_>, b: &Normalized<'_>) -> (Option<i64>, DivergenceKind, bool) {
    // Below a window's start the batches were not read: the shared prefix.
    let lo = a
        .lso
        .max(b.lso)
        .max(a.window.unwrap_or(i64::MIN))
        .max(b.window.unwrap_or(i64::MIN));
    if a.lso > b.leo || b.lso > a.leo {
        return (None, DivergenceKind::Disjoint, false);
    }
    let pick = |r: &Normalized<'_>| -> Vec<BatchSummary> {
        r.batches
            .iter()
            .filter(|x| x.last_offset >= lo && x.base_offset < r.leo)
            .cloned()
            .collect()
    };
    let xa = pick(a);
    let xb = pick(b);
    let (mut i, mut j) = (0, 0);
    while i < xa.len() && j < xb.len() {
        if xa[i].key() == xb[j].key() {
            i += 1;
            j += 1;
            continue;
        }
        // A batch straddling the common start may begin below it.
        let d = xa[i].base_offset.min(xb[j].base_offset).max(lo);
        let violation = xa[i].base_offset == xb[j].base_offset
            && xa[i].partition_leader_epoch == xb[j].partition_leader_epoch
            && xa[i].partition_leader_epoch >= 0;
        return (Some(d), DivergenceKind::Diverged, violation);
    }
    if i < xa.len() {
        return (
            Some(xa[i].base_offset.max(lo)),
            DivergenceKind::Extends,
            false,
        );
    }
    if j < xb.len() {
        return (
            Some(xb[j].base_offset.max(lo)),
            DivergenceKind::Prefix,
            false,
        );
    }
    // Batch lists agree; compare log ends (a log may end without batches, e.g. all compacted).
    match a.leo.cmp(&b.leo) {
        std::cmp::Ordering::Equal => (None, DivergenceKind::Identical, false),
        std::cmp::Ordering::Less => (Some(a.leo), DivergenceKind::Prefix, false),
        std::cmp::Ordering::Greater => (Some(b.leo), DivergenceKind::Extends, false),
    }
}

/// Records of replica `idx` at or above `cut` that are committed: some replica
/// holding the identical batch (this one included) has a high watermark above
/// the record's offset.
fn committed_records(
    reps: &[Normalized<'_>],
    key_sets: &[HashSet<(i64, i64, i32, u32)>],
    idx: usize,
    cut: i64,
) -> i64 {
    let r = &reps[idx];
    let mut committed = 0;
    for b in &r.batches {
        if b.records_in(cut, r.leo) == 0 {
            continue;
        }
        let key = b.key();
        let best_hw = reps
            .iter()
            .enumerate()
            .filter(|(k, _)| *k == idx || key_sets[*k].contains(&key))
            .filter_map(|(_, o)| o.hw)
            .max();
        if let Some(h) = best_hw {
            committed += b.records_in(cut, h.min(r.leo));
        }
    }
    committed
}

fn records_from(batches: &[BatchSummary], from: i64, leo: i64) -> i64 {
    batches.iter().map(|b| b.records_in(from, leo)).sum()
}

/// Diffs one partition.
pub fn diff_partition(input: &PartitionReplicas, options: &DiffOptions) -> PartitionDiff {
    let mut findings = Vec::new();
    let reps: Vec<Normalized<'_>> = input.replicas.iter().map(normalize).collect();
    let Some((ri, reason)) = choose_reference(&reps, &input.reference, &mut findings) else {
        return PartitionDiff {
            topic: input.topic.clone(),
            partition: input.partition,
            reference: ReferenceChoice {
                broker: -1,
                reason: ReferenceReason::NoReplicas,
                leader_epoch: None,
            },
            replicas: Vec::new(),
            findings,
            protocol: *options,
            scan: None,
        };
    };
    let refr = &reps[ri];
    // Leader cache: normalised + trailing empty epoch still in memory + metadata epoch.
    let mut leader_cache = refr.cache.clone();
    if let Some(t) = refr.trailing {
        if leader_cache.latest_epoch_is_below(t.epoch) {
            let _ = leader_cache.assign(t.epoch, refr.leo);
        }
    }
    let metadata_epoch = match &input.reference {
        ReferenceHint::MetadataLeader {
            broker,
            leader_epoch,
        } if *broker == refr.src.broker => *leader_epoch,
        _ => None,
    };
    // A replica named as the leader (`--leader`, klf elect's candidates)
    // leads, once elected, in an epoch above every epoch before it (Kafka's
    // controller gives each election a new one) and records it at its log
    // end. Without it a follower whose latest epoch is above the
    // candidate's would be compared as if the candidate still led its old
    // epoch, keeping records the new epoch makes it cut. When the named
    // replica already holds the highest epoch this changes no answer.
    let own_latest = leader_cache.latest_epoch();
    if matches!(input.reference, ReferenceHint::Explicit { .. }) {
        if let Some(highest) = reps.iter().filter_map(Normalized::latest_epoch).max() {
            let next = highest.saturating_add(1);
            if leader_cache.latest_epoch_is_below(next) {
                let _ = leader_cache.assign(next, refr.leo);
            }
        }
    }
    let leader = LeaderView {
        cache: leader_cache,
        log_start_offset: refr.lso,
        log_end_offset: refr.leo,
        current_leader_epoch: metadata_epoch,
    };
    // Apply the metadata epoch as the predictor would, for reporting (a
    // named replica's own latest epoch, not the one its election would
    // give it).
    let leader_epoch_reported = if matches!(input.reference, ReferenceHint::Explicit { .. }) {
        own_latest
    } else {
        let mut c = leader.cache.clone();
        if let Some(e) = metadata_epoch {
            if e >= 0 && c.latest_epoch_is_below(e) {
                let _ = c.assign(e, refr.leo);
            }
        }
        c.latest_epoch()
    };
    if let Some(me) = metadata_epoch {
        for r in &reps {
            if let Some(le) = r.latest_epoch() {
                if le > me {
                    findings.push(finding(
                        FindingKind::ReferenceBehindReplicaEpoch,
                        format!(
                            "broker {} has epoch {le} above the metadata leader epoch {me} (stale metadata capture or cache anomaly)",
                            r.src.broker
                        ),
                    ));
                }
            }
        }
    }

    // Batch keys per replica, for "only here" and "committed".
    let key_sets: Vec<HashSet<(i64, i64, i32, u32)>> = reps
        .iter()
        .map(|r| r.batches.iter().map(BatchSummary::key).collect())
        .collect();

    let mut out = Vec::with_capacity(reps.len());
    for (idx, r) in reps.iter().enumerate() {
        let mut rf = r.findings.clone();
        let is_ref = idx == ri;
        let (divergence_offset, kind, violation) = if is_ref {
            (None, DivergenceKind::Reference, false)
        } else {
            divergence(r, refr)
        };
        if kind == DivergenceKind::Disjoint {
            rf.push(finding(
                FindingKind::DisjointLogs,
                format!(
                    "offset range [{}, {}) does not overlap the reference's [{}, {})",
                    r.lso, r.leo, refr.lso, refr.leo
                ),
            ));
        }
        if violation {
            rf.push(finding(
                FindingKind::LogMatchingViolation,
                format!(
                    "batch at {} has the same epoch as the reference's but different content; the epoch protocol cannot detect this",
                    divergence_offset.unwrap_or(-1)
                ),
            ));
        }
        let (pred, hw_pred, alt_pred): (
            Option<Prediction>,
            Option<Prediction>,
            Option<Prediction>,
        ) = if is_ref {
            (None, None, None)
        } else {
            let fv = FollowerView {
                cache: r.cache.clone(),
                log_start_offset: r.lso,
                log_end_offset: r.leo,
                high_watermark: r.hw_or_lso(),
                first_segment_base: r.src.first_segment_base,
            };
            (
                Some(predict_truncation(&leader, &fv, options.protocol)),
                Some(predict_truncation(
                    &leader,
                    &fv,
                    ReplicationProtocol::HighWatermark,
                )),
                options
                    .alternative
                    .map(|alt| predict_truncation(&leader, &fv, alt)),
            )
        };
        let truncation_offset = pred.as_ref().map_or(r.leo, |p| p.keep_end);
        let hw_truncation_offset = hw_pred.as_ref().map_or(r.leo, |p| p.keep_end);
        let outcome = pred.as_ref().map_or(Outcome::Converged, |p| p.outcome);
        let alternative_truncation_offset = options
            .alternative
            .map(|_| alt_pred.as_ref().map_or(r.leo, |p| p.keep_end));
        if let (Some(alt), Some(at)) = (options.alternative, alternative_truncation_offset) {
            if at != truncation_offset {
                findings.push(finding(
                    FindingKind::TruncationDependsOnProtocol,
                    format!(
                        "broker {}: Kafka truncates it to {truncation_offset} under {}, to {at} under {}; the capture does not say which the cluster runs (give --inter-broker-protocol)",
                        r.src.broker,
                        options.protocol.describe(),
                        alt.describe()
                    ),
                ));
            }
        }
        if let Some(p) = &pred {
            if p.outcome != Outcome::Converged {
                rf.push(finding(
                    FindingKind::TruncationNotConverged,
                    format!("prediction ended {:?}", p.outcome),
                ));
            }
            if p.reset {
                rf.push(finding(
                    FindingKind::LogReset,
                    format!(
                        "log emptied and restarted at the reference's log start offset {}",
                        refr.lso
                    ),
                ));
            }
            if let (Some(fe), Some(le)) = (r.cache.latest_epoch(), leader.cache.latest_epoch()) {
                if fe > le && metadata_epoch.is_none() {
                    rf.push(finding(
                        FindingKind::ReferenceBehindReplicaEpoch,
                        format!("latest epoch {fe} is above the reference's {le}; Kafka would answer OFFSET_OUT_OF_RANGE"),
                    ));
                }
            }
        }
        if let Some(b) = r
            .batches
            .iter()
            .find(|b| b.base_offset < truncation_offset && truncation_offset <= b.last_offset)
        {
            rf.push(finding(
                FindingKind::TruncationInsideBatch,
                format!(
                    "truncation offset {truncation_offset} falls inside batch [{}, {}); Kafka removes the whole batch",
                    b.base_offset,
                    b.last_offset.saturating_add(1)
                ),
            ));
        }
        // Expected keep from bytes: up to the divergence (or the LEO).
        if !is_ref && kind != DivergenceKind::Disjoint {
            let expected = divergence_offset.unwrap_or(r.leo).min(r.leo);
            if truncation_offset > expected {
                rf.push(finding(
                    FindingKind::ProtocolKeepsDivergentRecords,
                    format!(
                        "the epoch protocol keeps offsets [{expected}, {truncation_offset}) that differ from the reference (stale or missing checkpoint, or log-matching violation)"
                    ),
                ));
            } else if truncation_offset < expected {
                rf.push(finding(
                    FindingKind::ProtocolCutsMatchingRecords,
                    format!(
                        "the epoch protocol cuts offsets [{truncation_offset}, {expected}) identical to the reference's (refetched, not lost)"
                    ),
                ));
            }
        }
        if !is_ref && kind != DivergenceKind::Disjoint {
            let expected = divergence_offset.unwrap_or(r.leo).min(r.leo);
            if hw_truncation_offset > expected {
                rf.push(finding(
                    FindingKind::HighWatermarkTruncationKeepsDivergentRecords,
                    format!(
                        "legacy high-watermark truncation would keep offsets [{expected}, {hw_truncation_offset}) that differ from the reference"
                    ),
                ));
            }
        }
        let leo = r.leo;
        let records_to_truncate = records_from(&r.batches, truncation_offset, leo);
        let hw_records_to_truncate = records_from(&r.batches, hw_truncation_offset, leo);
        let control_records_to_truncate: i64 = r
            .batches
            .iter()
            .filter(|b| b.is_control)
            .map(|b| b.records_in(truncation_offset, leo))
            .sum();
        let committed = committed_records(&reps, &key_sets, idx, truncation_offset);
        let hw_committed = committed_records(&reps, &key_sets, idx, hw_truncation_offset);
        let only_here: i64 = r
            .batches
            .iter()
            .filter(|b| {
                let key = b.key();
                !key_sets
                    .iter()
                    .enumerate()
                    .any(|(k, s)| k != idx && s.contains(&key))
            })
            .map(|b| b.records_in(truncation_offset, leo))
            .sum();
        if hw_committed > committed && !is_ref {
            rf.push(finding(
                FindingKind::HighWatermarkTruncationCutsCommittedRecords,
                format!(
                    "legacy high-watermark truncation would cut {hw_committed} committed records (the epoch protocol cuts {committed})"
                ),
            ));
        }
        if committed > 0 {
            rf.push(finding(
                FindingKind::CommittedDataTruncated,
                format!(
                    "{committed} cut records lie below a high watermark of a replica holding them"
                ),
            ));
        }
        out.push(ReplicaDiff {
            broker: r.src.broker,
            log_start_offset: r.lso,
            log_end_offset: r.leo,
            high_watermark: r.hw,
            latest_epoch: r.latest_epoch(),
            epoch_cache: r.cache.entries().to_vec(),
            divergence_offset,
            divergence_kind: kind,
            truncation_offset,
            protocol: options.protocol,
            alternative_truncation_offset,
            alternative_rounds: alt_pred.map(|p| p.rounds).unwrap_or_default(),
            hw_truncation_offset,
            records_to_truncate,
            checkpointed_records_to_truncate: committed,
            records_only_here: only_here,
            hw_records_to_truncate,
            hw_checkpointed_records_to_truncate: hw_committed,
            lost_cut: 0,
            committed_proven_cut: 0,
            committed_possible_cut: Some(0),
            control_records_to_truncate,
            truncation_outcome: outcome,
            truncation_rounds: pred.map(|p| p.rounds).unwrap_or_default(),
            findings: rf,
        });
    }
    PartitionDiff {
        topic: input.topic.clone(),
        partition: input.partition,
        reference: ReferenceChoice {
            broker: refr.src.broker,
            reason,
            leader_epoch: leader_epoch_reported,
        },
        replicas: out,
        findings,
        protocol: *options,
        scan: None,
    }
}
