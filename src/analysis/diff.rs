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

/// Step 1: a replica as Kafka would load it (notes §8.1): its batches in
/// offset order with any layout anomaly noted ([`layout_findings`]), the
/// log start and end offsets, the high watermark as `UnifiedLog` loads its
/// checkpoint ([`loaded_high_watermark`]) and the epoch cache as
/// `LogLoader` repairs it ([`loaded_epoch_cache`]).
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
    findings.extend(layout_findings(&batches, leo));
    let hw = loaded_high_watermark(r.high_watermark, lso, leo, &mut findings);
    let (cache, trailing) = loaded_epoch_cache(r, &batches, lso, leo, &mut findings);
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

/// What breaks the shape of a log Kafka writes, in sorted `batches`: two
/// batches sharing offsets, a batch ending below its base, a batch beyond
/// the log end offset, and a leader epoch lower than an earlier batch's
/// (a leader stamps each batch with its epoch, and epochs only grow: a
/// regression means a log-matching anomaly). The first of each.
fn layout_findings(batches: &[BatchSummary], leo: i64) -> Vec<DiffFinding> {
    let mut findings = Vec::new();
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
    let mut max_epoch = -1;
    for b in batches {
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
    findings
}

/// The high watermark as Kafka loads `replication-offset-checkpoint`
/// (notes §2.6): the checkpointed value clamped to `[LSO, LEO]`. A missing
/// entry is noted (Kafka takes 0, clamped to the LSO); a value beyond the
/// log end offset is noted as unflushed loss.
fn loaded_high_watermark(
    raw: Option<i64>,
    lso: i64,
    leo: i64,
    findings: &mut Vec<DiffFinding>,
) -> Option<i64> {
    let Some(raw) = raw else {
        findings.push(finding(
            FindingKind::HighWatermarkUnknown,
            "no high watermark checkpoint entry; treated as the log start offset",
        ));
        return None;
    };
    if raw > leo {
        findings.push(finding(
            FindingKind::HighWatermarkBeyondLogEnd,
            format!("checkpointed high watermark {raw} is beyond the log end offset {leo} (unflushed loss)"),
        ));
    }
    Some(raw.clamp(lso, leo))
}

/// The epoch cache as Kafka loads it (notes §3.5, §8.1): the
/// `leader-epoch-checkpoint` entries assigned as `LeaderEpochFileCache`'s
/// constructor does, repaired as `LogLoader` does (`truncateFromEnd(LEO)`,
/// `truncateFromStart(LSO)`), then extended by segment recovery (a batch's
/// epoch assigned when above the latest cached one). Without a checkpoint
/// the cache is rebuilt from the batches. Returned with the trailing
/// `(E, LEO)` entry the repair removed, if that was all it removed: a
/// leader elected in `E` that never wrote, which a broker still running
/// holds in memory. Every repair and any difference from the cache the
/// batches alone give is noted.
fn loaded_epoch_cache(
    r: &ReplicaLog,
    batches: &[BatchSummary],
    lso: i64,
    leo: i64,
    findings: &mut Vec<DiffFinding>,
) -> (EpochCache, Option<EpochStart>) {
    let batch_epochs: Vec<(i32, i64)> = batches
        .iter()
        .filter(|b| b.base_offset < leo)
        .map(|b| (b.partition_leader_epoch, b.base_offset))
        .collect();
    let mut from_batches = EpochCache::rebuild_from_batches(batch_epochs.iter().copied());
    from_batches.truncate_from_start(lso);
    let Some(entries) = &r.checkpoint_epochs else {
        findings.push(finding(
            FindingKind::CheckpointMissing,
            "no leader-epoch-checkpoint; cache rebuilt from batch headers",
        ));
        return (from_batches, None);
    };
    let mut trailing = None;
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
    (c, trailing)
}

/// Step 2: the reference replica, the leader the others follow (notes
/// §8.3): the one the operator or the metadata log names, else the highest
/// latest epoch (the leader Kafka's controller would have elected last),
/// then the longest log, then the lowest broker id (noted as ambiguous).
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

/// Divergence of `a` (replica) against `b` (reference), notes §8.2: the
/// first offset in the common range where their batches differ on
/// `(base, last, epoch, crc)`, and whether it is a log-matching violation
/// (same base and epoch, different content).
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
    key_sets: &[HashSet<BatchKey>],
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

/// Records of `batches` in `[from, leo)`.
fn records_from(batches: &[BatchSummary], from: i64, leo: i64) -> i64 {
    batches.iter().map(|b| b.records_in(from, leo)).sum()
}

/// Diffs one partition.
pub fn diff_partition(input: &PartitionReplicas, options: &DiffOptions) -> PartitionDiff {
    let mut findings = Vec::new();
    let reps: Vec<Normalized<'_>> = input.replicas.iter().map(normalize).collect();
    let chosen = choose_reference(&reps, &input.reference, &mut findings);
    let Some((ri, reason)) = chosen else {
        let none = ReferenceChoice {
            broker: -1,
            reason: ReferenceReason::NoReplicas,
            leader_epoch: None,
        };
        return partition_diff(input, options, none, Vec::new(), findings);
    };
    let refr = &reps[ri];
    let metadata_epoch = match &input.reference {
        ReferenceHint::MetadataLeader {
            broker,
            leader_epoch,
        } if *broker == refr.src.broker => *leader_epoch,
        _ => None,
    };
    let leader = leader_view(&input.reference, refr, &reps, metadata_epoch);
    findings.extend(epochs_above_metadata(&reps, metadata_epoch));
    let key_sets: Vec<HashSet<BatchKey>> = reps
        .iter()
        .map(|r| r.batches.iter().map(BatchSummary::key).collect())
        .collect();
    let follow = Following {
        reps: &reps,
        key_sets: &key_sets,
        reference: ri,
        leader: &leader,
        metadata_epoch,
        options,
    };
    let mut replicas = Vec::with_capacity(reps.len());
    for idx in 0..reps.len() {
        let (replica, depends_on_protocol) = follow.replica_diff(idx);
        findings.extend(depends_on_protocol);
        replicas.push(replica);
    }
    let reference = ReferenceChoice {
        broker: refr.src.broker,
        reason,
        leader_epoch: reported_leader_epoch(&input.reference, refr, metadata_epoch),
    };
    partition_diff(input, options, reference, replicas, findings)
}

fn partition_diff(
    input: &PartitionReplicas,
    options: &DiffOptions,
    reference: ReferenceChoice,
    replicas: Vec<ReplicaDiff>,
    findings: Vec<DiffFinding>,
) -> PartitionDiff {
    PartitionDiff {
        topic: input.topic.clone(),
        partition: input.partition,
        reference,
        replicas,
        findings,
        protocol: *options,
        scan: None,
        broker_log: Vec::new(),
    }
}

/// A batch's comparison key `(base, last, epoch, crc)`.
type BatchKey = (i64, i64, i32, u32);

/// The reference's epoch cache as the leader holds it in memory: the
/// loaded cache plus a trailing `(E, LEO)` checkpoint entry (a leader
/// records its new epoch at its log end when elected, `Partition.makeLeader`,
/// notes §4.1, and a load repair would drop it, §3.5).
fn leader_cache(refr: &Normalized<'_>) -> EpochCache {
    let mut cache = refr.cache.clone();
    if let Some(t) = refr.trailing {
        if cache.latest_epoch_is_below(t.epoch) {
            let _ = cache.assign(t.epoch, refr.leo);
        }
    }
    cache
}

/// Step 3: the reference as the leader the followers fetch from
/// (notes §4.10 inputs): [`leader_cache`], with the leader epoch the
/// metadata log names as its current one. A replica named as the leader
/// (`--leader`, klf elect's candidates) leads, once elected, in an epoch
/// above every epoch before it (the controller gives each election a new
/// one, `PartitionChangeBuilder`) recorded at its log end. Without it a
/// follower whose latest epoch is above the candidate's would be compared
/// as if the candidate still led its old epoch, keeping records the new
/// epoch makes it cut. When the named replica already holds the highest
/// epoch this changes no answer.
fn leader_view(
    hint: &ReferenceHint,
    refr: &Normalized<'_>,
    reps: &[Normalized<'_>],
    metadata_epoch: Option<i32>,
) -> LeaderView {
    let mut cache = leader_cache(refr);
    if matches!(hint, ReferenceHint::Explicit { .. }) {
        if let Some(highest) = reps.iter().filter_map(Normalized::latest_epoch).max() {
            let next = highest.saturating_add(1);
            if cache.latest_epoch_is_below(next) {
                let _ = cache.assign(next, refr.leo);
            }
        }
    }
    LeaderView {
        cache,
        log_start_offset: refr.lso,
        log_end_offset: refr.leo,
        current_leader_epoch: metadata_epoch,
    }
}

/// The epoch the reference leads in, as reported: the metadata log's
/// epoch applied as the predictor applies it (`(E, LEO)` assigned when the
/// cache is below it); for a named replica its own latest epoch, not the
/// one its election would give it.
fn reported_leader_epoch(
    hint: &ReferenceHint,
    refr: &Normalized<'_>,
    metadata_epoch: Option<i32>,
) -> Option<i32> {
    let mut cache = leader_cache(refr);
    if matches!(hint, ReferenceHint::Explicit { .. }) {
        return cache.latest_epoch();
    }
    if let Some(e) = metadata_epoch {
        if e >= 0 && cache.latest_epoch_is_below(e) {
            let _ = cache.assign(e, refr.leo);
        }
    }
    cache.latest_epoch()
}

/// Step 4: replicas holding an epoch above the one the metadata log says
/// the reference leads in. The controller issues every epoch (notes §6.1),
/// so a higher one means the metadata capture is stale or a cache is
/// anomalous (notes §8.3 rule 2).
fn epochs_above_metadata(reps: &[Normalized<'_>], metadata_epoch: Option<i32>) -> Vec<DiffFinding> {
    let Some(me) = metadata_epoch else {
        return Vec::new();
    };
    reps.iter()
        .filter_map(|r| {
            let le = r.latest_epoch().filter(|le| *le > me)?;
            Some(finding(
                FindingKind::ReferenceBehindReplicaEpoch,
                format!(
                    "broker {} has epoch {le} above the metadata leader epoch {me} (stale metadata capture or cache anomaly)",
                    r.src.broker
                ),
            ))
        })
        .collect()
}

/// Where Kafka truncates a follower, under each protocol predicted.
#[derive(Default)]
struct Predictions {
    /// Under the diff's protocol.
    protocol: Option<Prediction>,
    /// Under legacy high-watermark truncation.
    high_watermark: Option<Prediction>,
    /// Under the alternative protocol, when one is predicted.
    alternative: Option<Prediction>,
}

/// What a truncation to an offset removes from a replica.
struct CutCounts {
    /// Records cut by the predicted truncation.
    records: i64,
    /// Control records among them.
    control: i64,
    /// Of them, below a high watermark of a replica holding the batch.
    committed: i64,
    /// Of them, in batches no other replica holds.
    only_here: i64,
    /// Records legacy high-watermark truncation would cut.
    hw_records: i64,
    /// Of them, below a high watermark of a replica holding the batch.
    hw_committed: i64,
}

/// Everything step 5 compares each replica with.
struct Following<'a> {
    reps: &'a [Normalized<'a>],
    key_sets: &'a [HashSet<BatchKey>],
    /// Index of the reference in `reps`.
    reference: usize,
    leader: &'a LeaderView,
    metadata_epoch: Option<i32>,
    options: &'a DiffOptions,
}

impl Following<'_> {
    /// Step 5: replica `idx` following the reference: where its batches
    /// part from the reference's ([`divergence`], notes §8.2), where Kafka
    /// truncates it under the diff's protocol, the legacy high-watermark
    /// one and the alternative ([`Following::predict`], notes §4, §8.4),
    /// what those cuts remove ([`Following::cut_counts`]), and the
    /// findings about each. Also the partition finding that the cut
    /// depends on the protocol, when it does.
    fn replica_diff(&self, idx: usize) -> (ReplicaDiff, Option<DiffFinding>) {
        let (r, refr) = (&self.reps[idx], &self.reps[self.reference]);
        let is_ref = idx == self.reference;
        let (divergence_offset, kind, violation) = if is_ref {
            (None, DivergenceKind::Reference, false)
        } else {
            divergence(r, refr)
        };
        let mut rf = r.findings.clone();
        rf.extend(divergence_findings(
            r,
            refr,
            kind,
            violation,
            divergence_offset,
        ));
        let p = if is_ref {
            Predictions::default()
        } else {
            self.predict(r)
        };
        let keep_end = |p: &Option<Prediction>| p.as_ref().map_or(r.leo, |p| p.keep_end);
        let truncation_offset = keep_end(&p.protocol);
        let hw_truncation_offset = keep_end(&p.high_watermark);
        let alternative_truncation_offset =
            self.options.alternative.map(|_| keep_end(&p.alternative));
        let depends_on_protocol =
            self.protocol_dependence(r, truncation_offset, alternative_truncation_offset);
        if let Some(pred) = &p.protocol {
            rf.extend(self.prediction_findings(r, pred));
        }
        rf.extend(inside_batch_finding(r, truncation_offset));
        if !is_ref && kind != DivergenceKind::Disjoint {
            let expected = divergence_offset.unwrap_or(r.leo).min(r.leo);
            rf.extend(keep_findings(
                expected,
                truncation_offset,
                hw_truncation_offset,
            ));
        }
        let cut = self.cut_counts(idx, truncation_offset, hw_truncation_offset);
        rf.extend(commitment_findings(&cut, is_ref));
        let replica = ReplicaDiff {
            broker: r.src.broker,
            log_start_offset: r.lso,
            log_end_offset: r.leo,
            high_watermark: r.hw,
            latest_epoch: r.latest_epoch(),
            epoch_cache: r.cache.entries().to_vec(),
            divergence_offset,
            divergence_kind: kind,
            truncation_offset,
            protocol: self.options.protocol,
            alternative_truncation_offset,
            alternative_rounds: p.alternative.map(|p| p.rounds).unwrap_or_default(),
            hw_truncation_offset,
            records_to_truncate: cut.records,
            checkpointed_records_to_truncate: cut.committed,
            records_only_here: cut.only_here,
            hw_records_to_truncate: cut.hw_records,
            hw_checkpointed_records_to_truncate: cut.hw_committed,
            lost_cut: 0,
            committed_proven_cut: 0,
            committed_possible_cut: Some(0),
            control_records_to_truncate: cut.control,
            truncation_outcome: p
                .protocol
                .as_ref()
                .map_or(Outcome::Converged, |p| p.outcome),
            truncation_rounds: p.protocol.map(|p| p.rounds).unwrap_or_default(),
            findings: rf,
        };
        (replica, depends_on_protocol)
    }

    /// Where Kafka truncates follower `r` following the leader
    /// ([`predict_truncation`]: notes §4.10, `AbstractFetcherThread` with
    /// the initial fetch offset of `ReplicaManager.initialFetchOffset`),
    /// under the diff's protocol, legacy high-watermark truncation (notes
    /// §5) and the alternative protocol.
    fn predict(&self, r: &Normalized<'_>) -> Predictions {
        let fv = FollowerView {
            cache: r.cache.clone(),
            log_start_offset: r.lso,
            log_end_offset: r.leo,
            high_watermark: r.hw_or_lso(),
            first_segment_base: r.src.first_segment_base,
        };
        Predictions {
            protocol: Some(predict_truncation(self.leader, &fv, self.options.protocol)),
            high_watermark: Some(predict_truncation(
                self.leader,
                &fv,
                ReplicationProtocol::HighWatermark,
            )),
            alternative: self
                .options
                .alternative
                .map(|alt| predict_truncation(self.leader, &fv, alt)),
        }
    }

    /// The partition finding that Kafka truncates `r` elsewhere under the
    /// alternative protocol (the capture does not say which the cluster
    /// runs: the `inter.broker.protocol.version` gate of 2.7-IV1, notes §0).
    fn protocol_dependence(
        &self,
        r: &Normalized<'_>,
        truncation_offset: i64,
        alternative_truncation_offset: Option<i64>,
    ) -> Option<DiffFinding> {
        let (alt, at) = (self.options.alternative?, alternative_truncation_offset?);
        (at != truncation_offset).then(|| {
            finding(
                FindingKind::TruncationDependsOnProtocol,
                format!(
                    "broker {}: Kafka truncates it to {truncation_offset} under {}, to {at} under {}; the capture does not say which the cluster runs (give --inter-broker-protocol)",
                    r.src.broker,
                    self.options.protocol.describe(),
                    alt.describe()
                ),
            )
        })
    }

    /// What the prediction for `r` shows beyond its offset: rounds that did
    /// not converge, a log emptied and restarted at the leader's log start
    /// (`truncateFullyAndStartAt`, notes §4.7), and a follower epoch above
    /// the leader's (Kafka answers `OFFSET_OUT_OF_RANGE`, §4.7), unless the
    /// metadata log already named the leader's epoch.
    fn prediction_findings(&self, r: &Normalized<'_>, p: &Prediction) -> Vec<DiffFinding> {
        let mut out = Vec::new();
        if p.outcome != Outcome::Converged {
            out.push(finding(
                FindingKind::TruncationNotConverged,
                format!("prediction ended {:?}", p.outcome),
            ));
        }
        if p.reset {
            out.push(finding(
                FindingKind::LogReset,
                format!(
                    "log emptied and restarted at the reference's log start offset {}",
                    self.leader.log_start_offset
                ),
            ));
        }
        if let (Some(fe), Some(le)) = (r.cache.latest_epoch(), self.leader.cache.latest_epoch()) {
            if fe > le && self.metadata_epoch.is_none() {
                out.push(finding(
                    FindingKind::ReferenceBehindReplicaEpoch,
                    format!("latest epoch {fe} is above the reference's {le}; Kafka would answer OFFSET_OUT_OF_RANGE"),
                ));
            }
        }
        out
    }

    /// What truncating replica `idx` to `truncation_offset` (and, legacy,
    /// to `hw_truncation_offset`) removes, and how much of it lies below a
    /// high watermark ([`committed_records`]).
    fn cut_counts(
        &self,
        idx: usize,
        truncation_offset: i64,
        hw_truncation_offset: i64,
    ) -> CutCounts {
        let r = &self.reps[idx];
        let leo = r.leo;
        let in_cut = |b: &BatchSummary| b.records_in(truncation_offset, leo);
        let elsewhere = |b: &BatchSummary| {
            let key = b.key();
            self.key_sets
                .iter()
                .enumerate()
                .any(|(k, s)| k != idx && s.contains(&key))
        };
        CutCounts {
            records: records_from(&r.batches, truncation_offset, leo),
            control: r.batches.iter().filter(|b| b.is_control).map(in_cut).sum(),
            committed: committed_records(self.reps, self.key_sets, idx, truncation_offset),
            only_here: r.batches.iter().filter(|b| !elsewhere(b)).map(in_cut).sum(),
            hw_records: records_from(&r.batches, hw_truncation_offset, leo),
            hw_committed: committed_records(self.reps, self.key_sets, idx, hw_truncation_offset),
        }
    }
}

/// What the divergence of `r` from the reference shows: logs whose
/// offset ranges do not overlap, and two batches at the same offset with
/// the same epoch but different content (a violation of log matching the
/// epoch protocol cannot detect, notes §1: the CRC covers neither).
fn divergence_findings(
    r: &Normalized<'_>,
    refr: &Normalized<'_>,
    kind: DivergenceKind,
    violation: bool,
    divergence_offset: Option<i64>,
) -> Vec<DiffFinding> {
    let mut out = Vec::new();
    if kind == DivergenceKind::Disjoint {
        out.push(finding(
            FindingKind::DisjointLogs,
            format!(
                "offset range [{}, {}) does not overlap the reference's [{}, {})",
                r.lso, r.leo, refr.lso, refr.leo
            ),
        ));
    }
    if violation {
        out.push(finding(
            FindingKind::LogMatchingViolation,
            format!(
                "batch at {} has the same epoch as the reference's but different content; the epoch protocol cannot detect this",
                divergence_offset.unwrap_or(-1)
            ),
        ));
    }
    out
}

/// A truncation offset inside one of `r`'s batches: Kafka removes the
/// whole batch (`UnifiedLog.truncateTo` cuts at a batch boundary).
fn inside_batch_finding(r: &Normalized<'_>, truncation_offset: i64) -> Option<DiffFinding> {
    let b = r
        .batches
        .iter()
        .find(|b| b.base_offset < truncation_offset && truncation_offset <= b.last_offset)?;
    Some(finding(
        FindingKind::TruncationInsideBatch,
        format!(
            "truncation offset {truncation_offset} falls inside batch [{}, {}); Kafka removes the whole batch",
            b.base_offset,
            b.last_offset.saturating_add(1)
        ),
    ))
}

/// The predicted cuts against what the bytes say should be kept (up to
/// the divergence, `expected`): the epoch protocol keeping divergent
/// records (stale or missing checkpoint, or a log-matching violation) or
/// cutting identical ones (refetched, not lost), and legacy
/// high-watermark truncation keeping divergent records (notes §5.2, why
/// KIP-101 exists).
fn keep_findings(
    expected: i64,
    truncation_offset: i64,
    hw_truncation_offset: i64,
) -> Vec<DiffFinding> {
    let mut out = Vec::new();
    if truncation_offset > expected {
        out.push(finding(
            FindingKind::ProtocolKeepsDivergentRecords,
            format!(
                "the epoch protocol keeps offsets [{expected}, {truncation_offset}) that differ from the reference (stale or missing checkpoint, or log-matching violation)"
            ),
        ));
    } else if truncation_offset < expected {
        out.push(finding(
            FindingKind::ProtocolCutsMatchingRecords,
            format!(
                "the epoch protocol cuts offsets [{truncation_offset}, {expected}) identical to the reference's (refetched, not lost)"
            ),
        ));
    }
    if hw_truncation_offset > expected {
        out.push(finding(
            FindingKind::HighWatermarkTruncationKeepsDivergentRecords,
            format!(
                "legacy high-watermark truncation would keep offsets [{expected}, {hw_truncation_offset}) that differ from the reference"
            ),
        ));
    }
    out
}

/// Committed records the cuts remove: legacy high-watermark truncation
/// cutting more of them than the epoch protocol (notes §5.1, the loss
/// KIP-101 fixed), and the epoch protocol cutting any.
fn commitment_findings(cut: &CutCounts, is_ref: bool) -> Vec<DiffFinding> {
    let (committed, hw_committed) = (cut.committed, cut.hw_committed);
    let mut out = Vec::new();
    if hw_committed > committed && !is_ref {
        out.push(finding(
            FindingKind::HighWatermarkTruncationCutsCommittedRecords,
            format!(
                "legacy high-watermark truncation would cut {hw_committed} committed records (the epoch protocol cuts {committed})"
            ),
        ));
    }
    if committed > 0 {
        out.push(finding(
            FindingKind::CommittedDataTruncated,
            format!("{committed} cut records lie below a high watermark of a replica holding them"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, last: i64, epoch: i32, crc: u32) -> BatchSummary {
        BatchSummary::dense(base, last, epoch, crc)
    }

    fn log(
        broker: i32,
        batches: Vec<BatchSummary>,
        end: i64,
        hw: Option<i64>,
        checkpoint: Option<&[(i32, i64)]>,
    ) -> ReplicaLog {
        ReplicaLog {
            broker,
            batches,
            log_start_offset: 0,
            log_end_offset: end,
            high_watermark: hw,
            checkpoint_epochs: checkpoint.map(<[_]>::to_vec),
            first_segment_base: None,
            window_start: None,
        }
    }

    fn kinds(findings: &[DiffFinding]) -> Vec<FindingKind> {
        findings.iter().map(|f| f.kind).collect()
    }

    fn epochs(cache: &EpochCache) -> Vec<(i32, i64)> {
        cache
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    #[test]
    fn layout_findings_name_the_first_of_each_anomaly() {
        let ok = [batch(0, 4, 0, 1), batch(5, 9, 1, 2)];
        assert!(layout_findings(&ok, 10).is_empty());
        let bad = [
            batch(0, 4, 2, 1),
            batch(3, 7, 1, 2),
            batch(8, 7, 1, 3),
            batch(9, 12, 0, 4),
        ];
        let f = layout_findings(&bad, 10);
        assert_eq!(
            kinds(&f),
            vec![
                FindingKind::BatchLayout,
                FindingKind::BatchLayout,
                FindingKind::BatchLayout,
                FindingKind::EpochRegression,
            ]
        );
        assert_eq!(f[0].detail, "overlapping batches at 0 and 3");
        assert_eq!(f[1].detail, "batch at 8 has last offset 7 below its base");
        assert_eq!(
            f[2].detail,
            "batch [9, 13) extends beyond the log end offset 10"
        );
        assert_eq!(f[3].detail, "batch at 3 has epoch 1 after epoch 2");
    }

    #[test]
    fn the_high_watermark_is_clamped_to_the_log_as_kafka_loads_it() {
        let mut f = Vec::new();
        assert_eq!(loaded_high_watermark(Some(7), 5, 10, &mut f), Some(7));
        assert_eq!(loaded_high_watermark(Some(2), 5, 10, &mut f), Some(5));
        assert!(f.is_empty());
        assert_eq!(loaded_high_watermark(Some(12), 5, 10, &mut f), Some(10));
        assert_eq!(loaded_high_watermark(None, 5, 10, &mut f), None);
        assert_eq!(
            kinds(&f),
            vec![
                FindingKind::HighWatermarkBeyondLogEnd,
                FindingKind::HighWatermarkUnknown
            ]
        );
    }

    #[test]
    fn the_epoch_cache_is_repaired_as_log_loader_repairs_it() {
        let batches = vec![batch(0, 4, 0, 1), batch(5, 9, 2, 2)];
        // A trailing (3, LEO): elected without writing, kept aside.
        let r = log(
            1,
            batches.clone(),
            10,
            None,
            Some(&[(0, 0), (2, 5), (3, 10)]),
        );
        let mut f = Vec::new();
        let (cache, trailing) = loaded_epoch_cache(&r, &batches, 0, 10, &mut f);
        assert_eq!(epochs(&cache), vec![(0, 0), (2, 5)]);
        assert_eq!(trailing, Some(EpochStart::new(3, 10)));
        assert_eq!(kinds(&f), vec![FindingKind::CheckpointTrailingEmptyEpoch]);

        // An entry beyond the log end is stale; segment recovery adds the
        // batches' epoch the checkpoint lacks.
        let r = log(
            1,
            batches.clone(),
            10,
            None,
            Some(&[(0, 0), (1, 12), (4, 15)]),
        );
        let mut f = Vec::new();
        let (cache, trailing) = loaded_epoch_cache(&r, &batches, 0, 10, &mut f);
        assert_eq!(epochs(&cache), vec![(0, 0), (2, 5)]);
        assert_eq!(trailing, None);
        assert_eq!(kinds(&f), vec![FindingKind::CheckpointStaleEntries]);

        // No checkpoint: rebuilt from the batches.
        let r = log(1, batches.clone(), 10, None, None);
        let mut f = Vec::new();
        let (cache, _) = loaded_epoch_cache(&r, &batches, 0, 10, &mut f);
        assert_eq!(epochs(&cache), vec![(0, 0), (2, 5)]);
        assert_eq!(kinds(&f), vec![FindingKind::CheckpointMissing]);
    }

    #[test]
    fn a_named_leader_leads_in_an_epoch_above_every_replicas() {
        let logs = [
            log(1, vec![batch(0, 4, 1, 1)], 5, Some(5), Some(&[(1, 0)])),
            log(
                2,
                vec![batch(0, 4, 1, 1), batch(5, 7, 3, 2)],
                8,
                Some(5),
                Some(&[(1, 0), (3, 5)]),
            ),
        ];
        let reps: Vec<Normalized<'_>> = logs.iter().map(normalize).collect();
        let named = ReferenceHint::Explicit { broker: 1 };
        let leader = leader_view(&named, &reps[0], &reps, None);
        assert_eq!(epochs(&leader.cache), vec![(1, 0), (4, 5)]);
        assert_eq!(reported_leader_epoch(&named, &reps[0], None), Some(1));

        let auto = ReferenceHint::Auto;
        assert_eq!(
            epochs(&leader_view(&auto, &reps[0], &reps, None).cache),
            vec![(1, 0)]
        );
        // The metadata log's epoch is the one reported, and a replica above
        // it is noted.
        assert_eq!(reported_leader_epoch(&auto, &reps[0], Some(2)), Some(2));
        let f = epochs_above_metadata(&reps, Some(2));
        assert_eq!(kinds(&f), vec![FindingKind::ReferenceBehindReplicaEpoch]);
        assert!(f[0].detail.starts_with("broker 2 has epoch 3 above"));
        assert!(epochs_above_metadata(&reps, None).is_empty());
    }

    #[test]
    fn a_leader_keeps_its_trailing_empty_epoch_in_memory() {
        let logs = [log(
            1,
            vec![batch(0, 4, 1, 1)],
            5,
            Some(5),
            Some(&[(1, 0), (2, 5)]),
        )];
        let reps: Vec<Normalized<'_>> = logs.iter().map(normalize).collect();
        assert_eq!(epochs(&reps[0].cache), vec![(1, 0)]);
        assert_eq!(epochs(&leader_cache(&reps[0])), vec![(1, 0), (2, 5)]);
        assert_eq!(
            reported_leader_epoch(&ReferenceHint::Auto, &reps[0], None),
            Some(2)
        );
    }

    #[test]
    fn a_cut_record_is_committed_below_the_hw_of_a_replica_holding_its_batch() {
        let shared = batch(0, 4, 0, 1);
        let logs = [
            log(
                1,
                vec![shared.clone(), batch(5, 9, 0, 2)],
                10,
                Some(3),
                Some(&[(0, 0)]),
            ),
            log(
                2,
                vec![shared, batch(5, 9, 0, 3)],
                10,
                Some(8),
                Some(&[(0, 0)]),
            ),
        ];
        let reps: Vec<Normalized<'_>> = logs.iter().map(normalize).collect();
        let keys: Vec<HashSet<BatchKey>> = reps
            .iter()
            .map(|r| r.batches.iter().map(BatchSummary::key).collect())
            .collect();
        // Broker 2's HW 8 covers the shared batch only; its own HW 3 the rest.
        assert_eq!(committed_records(&reps, &keys, 0, 0), 5);
        assert_eq!(committed_records(&reps, &keys, 0, 2), 3);
        assert_eq!(committed_records(&reps, &keys, 1, 5), 3, "its own HW 8");
        assert_eq!(records_from(&reps[0].batches, 3, 10), 7);
    }

    #[test]
    fn cuts_against_the_divergence_and_committed_cuts_are_named() {
        assert!(keep_findings(10, 10, 10).is_empty());
        assert_eq!(
            kinds(&keep_findings(10, 12, 15)),
            vec![
                FindingKind::ProtocolKeepsDivergentRecords,
                FindingKind::HighWatermarkTruncationKeepsDivergentRecords
            ]
        );
        assert_eq!(
            kinds(&keep_findings(10, 8, 5)),
            vec![FindingKind::ProtocolCutsMatchingRecords]
        );
        let cut = CutCounts {
            records: 10,
            control: 0,
            committed: 2,
            only_here: 10,
            hw_records: 12,
            hw_committed: 5,
        };
        assert_eq!(
            kinds(&commitment_findings(&cut, false)),
            vec![
                FindingKind::HighWatermarkTruncationCutsCommittedRecords,
                FindingKind::CommittedDataTruncated
            ]
        );
        assert_eq!(
            kinds(&commitment_findings(&cut, true)),
            vec![FindingKind::CommittedDataTruncated]
        );
        let r = log(
            1,
            vec![batch(0, 4, 0, 1), batch(5, 9, 0, 2)],
            10,
            None,
            None,
        );
        let n = normalize(&r);
        assert!(inside_batch_finding(&n, 5).is_none(), "a batch boundary");
        assert_eq!(
            inside_batch_finding(&n, 7).map(|f| f.detail),
            Some(
                "truncation offset 7 falls inside batch [5, 10); Kafka removes the whole batch"
                    .into()
            )
        );
    }
}
