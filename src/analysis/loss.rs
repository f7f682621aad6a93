//! What a partition loses, counted once: the records that will exist on no
//! replica once every replica has followed the reference leader (each
//! follower's predicted truncation applied, the reference's log kept), and
//! how sure we can be that they had been committed.
//!
//! Records below the reference's log start offset are past retention
//! (gone whatever happened) and not counted.
//!
//! A record is identified by its offset and the batch holding it
//! (`(base, last, epoch, crc)`): two replicas holding the identical batch
//! hold the same records, counted once; two replicas holding different
//! batches at the same offsets (divergent tails of two old leaders) hold
//! different records, both lost. A batch's records at offset `o` are lost
//! when the reference does not hold the batch and every replica that holds
//! it cuts `o` (its truncation offset is at or below `o`).
//!
//! Committed means what Kafka means: below the leader's high watermark. A
//! capture cannot hold the leader's high watermark of the moment, so two
//! bounds are computed, each from named evidence:
//!
//! * **proven**: below an offset that some fact shows the high watermark
//!   reached on the lineage holding the record: the
//!   `replication-offset-checkpoint` of a replica holding the batch (every
//!   replica's high watermark is a lower bound of one the leader had), or an
//!   offset a consumer group committed (a consumer fetches only below the
//!   high watermark; the commit's leader epoch names the lineage: every
//!   captured replica whose log has that epoch at the offset before the
//!   commit must hold the batch; without an epoch, every replica holding
//!   that offset must).
//! * **possible**: some ISR state the metadata log records, in the
//!   record's leader epoch or a later one, consisted of replicas that may
//!   have held the record: each holds the batch now, or is not in the
//!   capture, or followed a later leader (and may have truncated it since),
//!   or lost its unflushed tail below a high watermark it had checkpointed.
//!   Once every ISR member holds a record the leader's high watermark
//!   passes it and acks=all producers are answered; no record outside this
//!   bound can have been committed. All ISR states of those epochs are
//!   taken, whatever their time: producer timestamps are not trusted.
//!
//! So `proven <= acknowledged (acks=all) and lost <= possible`. Where the
//! capture holds no metadata log (ZooKeeper clusters, or a capture without
//! one), or the history does not reach back to the record's epoch, the
//! upper bound is unknown for those records: `committed_possible` is then
//! `null` and `committed_unknown` counts them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::model::diff::{DiffFinding, FindingKind, PartitionDiff};
use crate::model::loss::{
    BoundGap, EpochLoss, EvidenceFact, LossEvidence, LostBatch, LostRange, PartitionLoss,
    UnknownBound, Verdict, NOT_CAPTURED_WEAKENS,
};
use crate::model::records::{Committed, ProducerLoss};
use crate::model::{BatchSummary, GroupCommit, HighWatermarkFact, PartitionHistory, ReplicaLog};

/// What besides the replicas' logs the bounds are computed from.
#[derive(Debug, Clone, Copy, Default)]
pub struct LossContext<'a> {
    /// The partition's ISR history from the metadata log.
    pub history: Option<&'a PartitionHistory>,
    /// Why there is no history, when there is none.
    pub history_missing: Option<&'a str>,
    /// Offsets consumer groups committed for the partition.
    pub commits: &'a [GroupCommit],
    /// Whether the capture holds `__consumer_offsets` (so that no commit
    /// means none was found, not none looked for).
    pub commits_searched: bool,
    /// Each captured replica's `replication-offset-checkpoint` entry.
    pub high_watermarks: &'a [HighWatermarkFact],
}

/// A batch's comparison key `(base, last, epoch, crc)`.
type BatchKey = (i64, i64, i32, u32);

/// Data and control records of `b` in `[lo, hi)`.
fn split_records(b: &BatchSummary, lo: i64, hi: i64) -> (u64, u64) {
    let n = u64::try_from(b.records_in(lo, hi)).unwrap_or(0);
    if b.is_control {
        (0, n)
    } else {
        (n, 0)
    }
}

/// A replica as the bounds need it.
struct Rep<'a> {
    broker: i32,
    log: &'a ReplicaLog,
    keys: HashSet<BatchKey>,
    truncation_offset: i64,
    log_start: i64,
    log_end: i64,
    /// High watermark the diff used (clamped).
    hw: Option<i64>,
    /// Epoch cache the diff used: (epoch, start offset).
    cache: Vec<(i32, i64)>,
}

impl Rep<'_> {
    /// The leader epoch of the record at `offset`, by the epoch cache
    /// (`LeaderEpochFileCache.epochForOffset`: the latest entry starting at
    /// or below it), for an offset the log holds.
    fn epoch_at(&self, offset: i64) -> Option<i32> {
        if offset < self.log_start || offset >= self.log_end {
            return None;
        }
        self.cache
            .iter()
            .rev()
            .find(|(_, s)| *s <= offset)
            .map(|(e, _)| *e)
    }
}

/// Computes what the partition loses, from its diff, the replica logs the
/// diff was computed from, and the evidence in `ctx`.
pub fn partition_loss(
    diff: &PartitionDiff,
    logs: &[ReplicaLog],
    ctx: &LossContext<'_>,
) -> PartitionLoss {
    let reps = replicas_as_diffed(diff, logs);
    let mut batches = lost_batches(&reps, diff.reference.broker);

    // The lower bound: what some fact shows below the high watermark.
    let mut evidence = prove_by_high_watermarks(&mut batches, &reps, ctx.high_watermarks);
    evidence.extend(prove_by_group_commits(&mut batches, &reps, ctx.commits));
    if !batches.is_empty() && !ctx.commits_searched {
        evidence.push(LossEvidence::note(EvidenceFact::NoConsumerOffsets));
    }

    // The upper bound: what an ISR in force may have let the high watermark pass.
    let mut unknown = Vec::new();
    match ctx.history {
        Some(h) => {
            evidence.extend(bound_by_isr_history(
                &mut batches,
                &reps,
                h,
                ctx.high_watermarks,
            ));
            if let Some(gap) = isr_history_gap(&batches, &reps, h) {
                unbounded(gap, &mut evidence, &mut unknown);
            }
        }
        None if !batches.is_empty() => {
            for l in &mut batches {
                l.possible = Committed::Unknown;
            }
            let why = ctx.history_missing.map(str::to_string);
            unbounded(BoundGap::NoIsrHistory { why }, &mut evidence, &mut unknown);
        }
        None => {}
    }

    // Replicas the capture lacks weaken both the loss and its bounds.
    let not_captured = assigned_not_captured(&reps, ctx.history);
    if !batches.is_empty() {
        evidence.extend(not_captured.iter().map(|b| LossEvidence {
            broker: Some(*b),
            ..LossEvidence::note(EvidenceFact::ReplicaNotCaptured)
        }));
    }

    summarize(batches, evidence, unknown, not_captured)
}

/// Step 1: each captured replica as the diff left it: its predicted
/// truncation offset (KIP-101/KIP-279 epoch protocol, or `DivergingEpoch`
/// since 2.7-IV1), its log bounds, its high watermark clamped to
/// `[LSO, LEO]` as `UnifiedLog` loads it, and its epoch cache after
/// `LogLoader`'s repair (notes §8.1, §8.4).
fn replicas_as_diffed<'a>(diff: &PartitionDiff, logs: &'a [ReplicaLog]) -> Vec<Rep<'a>> {
    diff.replicas
        .iter()
        .filter_map(|rd| {
            let log = logs.iter().find(|l| l.broker == rd.broker)?;
            Some(Rep {
                broker: rd.broker,
                log,
                keys: log.batches.iter().map(BatchSummary::key).collect(),
                truncation_offset: rd.truncation_offset,
                log_start: rd.log_start_offset,
                log_end: rd.log_end_offset,
                hw: rd.high_watermark,
                cache: rd
                    .epoch_cache
                    .iter()
                    .map(|e| (e.epoch, e.start_offset))
                    .collect(),
            })
        })
        .collect()
}

/// Step 2: the batches no replica keeps. A follower truncates its log to
/// its truncation offset and fetches the rest from the reference leader
/// (`AbstractFetcherThread`: truncate, then fetch), so a record at offset
/// `o` survives when the reference holds its batch (the same
/// `(base, last, epoch, crc)`: the CRC covers neither base offset nor
/// epoch, notes §1) or some replica holding the batch truncates above
/// `o`. Below the reference's log start offset records are past retention
/// (gone whatever the incident, not lost by it). Each lost batch starts
/// `proven_to` at `i64::MIN` and `possible` at [`Committed::No`] for the
/// bounds to raise; they come sorted by first lost offset.
fn lost_batches(reps: &[Rep<'_>], reference: i32) -> Vec<LostBatch> {
    let refr = reps.iter().find(|r| r.broker == reference);
    let ref_start = refr.map_or(i64::MIN, |r| r.log_start);
    let mut lost: BTreeMap<BatchKey, LostBatch> = BTreeMap::new();
    for r in reps.iter().filter(|r| r.broker != reference) {
        for b in &r.log.batches {
            let key = b.key();
            if b.records_in(r.truncation_offset, r.log_end) == 0 || lost.contains_key(&key) {
                continue;
            }
            if refr.is_some_and(|x| x.keys.contains(&key)) {
                continue;
            }
            let holders: Vec<&Rep<'_>> = reps.iter().filter(|o| o.keys.contains(&key)).collect();
            let from = holders
                .iter()
                .map(|h| h.truncation_offset)
                .max()
                .unwrap_or(r.truncation_offset)
                .max(b.base_offset)
                .max(ref_start);
            if from > b.last_offset || b.records_in(from, i64::MAX) == 0 {
                continue;
            }
            lost.insert(
                key,
                LostBatch {
                    batch: b.clone(),
                    from,
                    held_by: holders.iter().map(|h| h.broker).collect(),
                    proven_to: i64::MIN,
                    possible: Committed::No,
                },
            );
        }
    }
    let mut batches: Vec<LostBatch> = lost.into_values().collect();
    batches.sort_by_key(|l| (l.from, l.batch.partition_leader_epoch, l.batch.base_offset));
    batches
}

/// Step 3: the lower bound from high watermark checkpoints. A replica's
/// `replication-offset-checkpoint` is a lower bound of a high watermark
/// the leader had on the lineage of the batches the replica holds (a
/// follower's HW trails the leader's, notes §2.4; the file is written every
/// `replica.high.watermark.checkpoint.interval.ms`, §2.6), so a lost record
/// below a holder's HW was committed. Raises each batch's `proven_to`; one
/// piece of evidence per holder, with the records its checkpoint proves.
fn prove_by_high_watermarks(
    batches: &mut [LostBatch],
    reps: &[Rep<'_>],
    facts: &[HighWatermarkFact],
) -> Vec<LossEvidence> {
    if batches.is_empty() {
        return Vec::new();
    }
    let hw_of = |broker: i32| reps.iter().find(|r| r.broker == broker).and_then(|r| r.hw);
    for l in batches.iter_mut() {
        for hw in l.held_by.iter().filter_map(|h| hw_of(*h)) {
            l.proven_to = l.proven_to.max(hw);
        }
    }
    let holders: BTreeSet<i32> = batches
        .iter()
        .flat_map(|l| l.held_by.iter().copied())
        .collect();
    let newest_lost = batches.iter().map(|l| l.batch.max_timestamp).max();
    holders
        .into_iter()
        .map(|h| {
            let used = hw_of(h);
            let proved: u64 = match used {
                Some(hw) => batches
                    .iter()
                    .filter(|l| l.held_by.contains(&h))
                    .map(|l| split_records(&l.batch, l.from, hw).0)
                    .sum(),
                None => 0,
            };
            let fact = facts.iter().find(|f| f.broker == h);
            let mtime = fact.and_then(|f| f.mtime_ms);
            let written_before_newest_lost_ms = match (mtime, newest_lost) {
                (Some(m), Some(n)) if n > m => Some(n - m),
                _ => None,
            };
            LossEvidence {
                broker: Some(h),
                offset: fact.and_then(|f| f.raw),
                time: mtime,
                file: fact.and_then(|f| f.file.clone()),
                records: proved,
                ..LossEvidence::note(EvidenceFact::HighWatermarkCheckpoint {
                    used,
                    written_before_newest_lost_ms,
                })
            }
        })
        .collect()
}

/// Step 4: the lower bound from consumer group commits. A consumer fetches
/// only below the high watermark (`FetchIsolation.HIGH_WATERMARK`), so the
/// records below a committed offset were committed on the lineage the
/// commit names: its leader epoch (KIP-320) looked up in each replica's
/// epoch cache at the offset before the commit (without an epoch: every
/// replica holding that offset). A lost batch is proven when every replica
/// on that lineage holds it. One piece of evidence per commit above the
/// first lost offset.
fn prove_by_group_commits(
    batches: &mut [LostBatch],
    reps: &[Rep<'_>],
    commits: &[GroupCommit],
) -> Vec<LossEvidence> {
    let Some(first_lost) = batches.iter().map(|l| l.from).min() else {
        return Vec::new();
    };
    let mut commits: Vec<&GroupCommit> = commits.iter().filter(|c| c.offset > first_lost).collect();
    commits.sort_by(|a, b| {
        (&a.group, a.leader_epoch, a.offset).cmp(&(&b.group, b.leader_epoch, b.offset))
    });
    let mut evidence = Vec::with_capacity(commits.len());
    for c in commits {
        let last = c.offset - 1;
        let lineage: Vec<&Rep<'_>> = reps
            .iter()
            .filter(|r| match c.leader_epoch {
                Some(e) => r.epoch_at(last) == Some(e),
                None => last >= r.log_start && last < r.log_end,
            })
            .collect();
        let mut proved = 0;
        if !lineage.is_empty() {
            // `batches` is sorted by first lost offset.
            for l in batches.iter_mut().take_while(|l| l.from < c.offset) {
                let key = l.batch.key();
                if lineage.iter().all(|r| r.keys.contains(&key)) {
                    proved += split_records(&l.batch, l.from, c.offset).0;
                    l.proven_to = l.proven_to.max(c.offset);
                }
            }
        }
        evidence.push(LossEvidence {
            broker: Some(c.broker),
            group: Some(c.group.clone()),
            offset: Some(c.offset),
            leader_epoch: c.leader_epoch,
            time: (c.commit_timestamp >= 0).then_some(c.commit_timestamp),
            file: Some(format!("{}:{}", c.file, c.position)),
            records: proved,
            ..LossEvidence::note(EvidenceFact::ConsumerGroupCommit {
                lineage: lineage.iter().map(|r| r.broker).collect(),
            })
        });
    }
    evidence
}

/// Step 5: the upper bound from the ISR history. The leader's high
/// watermark passes a record only once every member of the ISR has
/// fetched it (`Partition.maybeIncrementLeaderHW`, notes §2.3), so a lost
/// record may have been committed only if some ISR state the metadata log
/// records (`PartitionRecord`/`PartitionChangeRecord`, §6.1), in the
/// record's leader epoch or a later one, consisted of replicas that may
/// have held it ([`may_have_held`]). Marks each batch `Possible`, or leaves
/// it `No`; a batch older than the history (or every batch, when a replica
/// holds an epoch the history does not reach) is `Unknown`
/// ([`isr_history_gap`] says why). One piece of evidence per ISR state that
/// admits lost records, and per state that rules some out.
fn bound_by_isr_history(
    batches: &mut [LostBatch],
    reps: &[Rep<'_>],
    h: &PartitionHistory,
    hws: &[HighWatermarkFact],
) -> Vec<LossEvidence> {
    let behind = history_behind_replicas(reps, h);
    let first_epoch = h.changes.first().map(|e| e.leader_epoch);
    let mut isr_admits: BTreeMap<usize, u64> = BTreeMap::new();
    let mut isr_rules_out: BTreeMap<usize, (BTreeSet<i32>, u64)> = BTreeMap::new();
    for l in batches.iter_mut() {
        let e = l.batch.partition_leader_epoch;
        if behind || (!h.from_creation && first_epoch.is_none_or(|f| e <= f)) {
            l.possible = Committed::Unknown;
            continue;
        }
        let may_hold = |m: i32| -> bool { may_have_held(m, l, reps, hws, h) };
        // ISR states in force in the batch's epoch or later, with a leader.
        let in_force = h
            .changes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.leader_epoch >= e && s.leader >= 0 && !s.isr.is_empty());
        let data = split_records(&l.batch, l.from, i64::MAX).0;
        let admitting = in_force
            .clone()
            .find(|(_, s)| s.isr.iter().all(|m| may_hold(*m)));
        if let Some((i, _)) = admitting {
            l.possible = Committed::Possible;
            *isr_admits.entry(i).or_default() += data;
        } else {
            for (i, s) in in_force {
                let entry = isr_rules_out.entry(i).or_insert((BTreeSet::new(), 0));
                entry
                    .0
                    .extend(s.isr.iter().copied().filter(|m| !may_hold(*m)));
                entry.1 += data;
            }
        }
    }
    let state = |i: usize, fact: EvidenceFact, records: u64| {
        let s = &h.changes[i];
        LossEvidence {
            broker: Some(s.leader),
            leader_epoch: Some(s.leader_epoch),
            isr: Some(s.isr.clone()),
            metadata_offset: Some(s.metadata_offset),
            time: Some(s.timestamp),
            records,
            ..LossEvidence::note(fact)
        }
    };
    let rules_out = isr_rules_out.into_iter().map(|(i, (missing, n))| {
        let never_held = missing.into_iter().collect();
        state(
            i,
            EvidenceFact::IsrStateRulesOut {
                never_held,
                lost: n,
            },
            0,
        )
    });
    let admits = isr_admits
        .into_iter()
        .map(|(i, n)| state(i, EvidenceFact::IsrState, n));
    rules_out.chain(admits).collect()
}

/// Whether the ISR history ends below the latest epoch some replica holds
/// (or knows no epoch at all): the ISR of the later epochs is unknown.
fn history_behind_replicas(reps: &[Rep<'_>], h: &PartitionHistory) -> bool {
    let replica_max = reps
        .iter()
        .filter_map(|r| r.cache.last().map(|c| c.0))
        .max();
    match (h.max_epoch(), replica_max) {
        (Some(k), Some(r)) => r > k,
        (None, _) => true,
        _ => false,
    }
}

/// Why [`bound_by_isr_history`] left lost batches `Unknown`, if it did:
/// the history ends below an epoch a replica holds, or starts after the
/// epoch of a lost batch (its start deleted after a snapshot).
fn isr_history_gap(
    batches: &[LostBatch],
    reps: &[Rep<'_>],
    h: &PartitionHistory,
) -> Option<BoundGap> {
    if batches.is_empty() {
        None
    } else if history_behind_replicas(reps, h) {
        Some(BoundGap::MetadataBehindReplicas {
            history_epoch: h.max_epoch(),
            replica_epoch: reps
                .iter()
                .filter_map(|r| r.cache.last().map(|c| c.0))
                .max(),
        })
    } else if batches.iter().any(|l| l.possible == Committed::Unknown) {
        Some(BoundGap::IsrHistoryIncomplete {
            first_epoch: h.changes.first().map(|e| e.leader_epoch),
        })
    } else {
        None
    }
}

/// Notes that the upper bound is unknown for some records, and why: once
/// as evidence, once as the unknown bound.
fn unbounded(gap: BoundGap, evidence: &mut Vec<LossEvidence>, unknown: &mut Vec<UnknownBound>) {
    evidence.push(LossEvidence::note(EvidenceFact::Unbounded(gap.clone())));
    unknown.push(UnknownBound {
        bound: "committed_possible",
        reason: gap,
    });
}

/// Whether ISR member `m` may have held lost batch `l` at some point: it
/// holds it now; or it is not in the capture; or its log lost an unflushed
/// tail below a high watermark it had checkpointed (the HW may exceed a
/// LEO that lost unflushed data, notes §2.6); or it followed a leader of a
/// later epoch, whose truncation (§4) may have removed the batch since.
fn may_have_held(
    m: i32,
    l: &LostBatch,
    reps: &[Rep<'_>],
    hws: &[HighWatermarkFact],
    h: &PartitionHistory,
) -> bool {
    if l.held_by.contains(&m) {
        return true;
    }
    let Some(r) = reps.iter().find(|r| r.broker == m) else {
        // Not in the capture: nothing says it did not.
        return true;
    };
    // Its log lost an unflushed tail below a high watermark it had written.
    let raw = hws.iter().find(|f| f.broker == m).and_then(|f| f.raw);
    if raw.is_some_and(|hw| hw > l.from) && r.log_end <= l.from {
        return true;
    }
    // It followed a leader of a later epoch, and may have truncated the
    // batch away since.
    let e = l.batch.partition_leader_epoch;
    r.cache
        .iter()
        .any(|(epoch, _)| *epoch > e && h.leader_of(*epoch) != Some(m))
}

/// Step 6: the partition's assigned replicas (metadata log) whose log the
/// capture lacks: they may hold records counted as lost and may have been
/// in an ISR (taken as possibly holding anything).
fn assigned_not_captured(reps: &[Rep<'_>], history: Option<&PartitionHistory>) -> Vec<i32> {
    let captured: BTreeSet<i32> = reps.iter().map(|r| r.broker).collect();
    history.map_or_else(Vec::new, |h| {
        h.replicas
            .iter()
            .copied()
            .filter(|b| !captured.contains(b))
            .collect()
    })
}

/// The parts of lost batch `l` with one commitment each: below its
/// `proven_to` proven committed, the rest as its `possible` says; empty
/// parts left out.
fn commitment_parts(l: &LostBatch) -> impl Iterator<Item = (i64, i64, Committed)> {
    let end = l.batch.last_offset.saturating_add(1);
    let cut = l.proven_to.clamp(l.from, end);
    [(l.from, cut, Committed::Proven), (cut, end, l.possible)]
        .into_iter()
        .filter(|(lo, hi, _)| hi > lo)
}

/// Lost records counted by commitment, with their ranges.
#[derive(Debug, Default)]
struct Tally {
    offsets: Vec<LostRange>,
    records: u64,
    control: u64,
    proven: u64,
    possible: u64,
    unknown: u64,
}

/// Step 7: the loss in figures: ranges, counts per commitment, per leader
/// epoch and per producer, the time span and the verdict.
fn summarize(
    batches: Vec<LostBatch>,
    evidence: Vec<LossEvidence>,
    unknown: Vec<UnknownBound>,
    replicas_not_captured: Vec<i32>,
) -> PartitionLoss {
    let t = tally(&batches);
    let held: BTreeSet<i32> = batches
        .iter()
        .flat_map(|l| l.held_by.iter().copied())
        .collect();
    let with_data = || batches.iter().filter(|l| !l.batch.is_control);
    let first_timestamp = with_data()
        .map(|l| l.batch.first_timestamp)
        .filter(|t| *t >= 0)
        .min();
    let last_timestamp = with_data()
        .map(|l| l.batch.max_timestamp)
        .filter(|t| *t >= 0)
        .max();
    let any = t.records + t.control > 0;
    PartitionLoss {
        records: t.records,
        control_records: t.control,
        committed_proven: t.proven,
        committed_possible: (t.unknown == 0).then_some(t.proven + t.possible),
        committed_unknown: t.unknown,
        verdict: verdict(&t),
        offsets: t.offsets,
        held_by: held.into_iter().collect(),
        // A bound is unknown only where some record is left unbounded.
        unknown: if t.unknown > 0 { unknown } else { Vec::new() },
        leader_epochs: per_leader_epoch(&batches),
        producers: per_producer(&batches),
        first_timestamp,
        last_timestamp,
        replicas_not_captured,
        evidence: if any { evidence } else { Vec::new() },
        batches,
    }
}

/// The lost records by commitment, and as half-open ranges of one leader
/// epoch, one set of holders and one commitment each (adjacent parts
/// merged), sorted by start.
fn tally(batches: &[LostBatch]) -> Tally {
    let mut t = Tally::default();
    for l in batches {
        let b = &l.batch;
        for (lo, hi, class) in commitment_parts(l) {
            let (d, c) = split_records(b, lo, hi);
            if d + c == 0 {
                continue;
            }
            t.records += d;
            t.control += c;
            match class {
                Committed::Proven => t.proven += d,
                Committed::Possible => t.possible += d,
                Committed::Unknown => t.unknown += d,
                Committed::No => {}
            }
            let mut holders = l.held_by.clone();
            holders.sort_unstable();
            match t.offsets.last_mut() {
                Some(p)
                    if p.end == lo
                        && p.leader_epoch == b.partition_leader_epoch
                        && p.held_by == holders
                        && p.committed == class =>
                {
                    p.end = hi;
                    p.records += d;
                    p.control_records += c;
                }
                _ => t.offsets.push(LostRange {
                    start: lo,
                    end: hi,
                    records: d,
                    control_records: c,
                    leader_epoch: b.partition_leader_epoch,
                    held_by: holders,
                    committed: class,
                }),
            }
        }
    }
    t.offsets.sort_by_key(|r| (r.start, r.leader_epoch, r.end));
    t
}

/// The partition's verdict, worst first: committed records lost, possibly
/// committed, unknown, uncommitted, nothing.
fn verdict(t: &Tally) -> Verdict {
    if t.proven > 0 {
        Verdict::CommittedLost
    } else if t.possible > 0 {
        Verdict::PossiblyCommittedLost
    } else if t.unknown > 0 {
        Verdict::UnknownLost
    } else if t.records + t.control > 0 {
        Verdict::UncommittedLost
    } else {
        Verdict::NothingLost
    }
}

/// Lost data records of each lost batch, from its first lost offset.
fn lost_data(l: &LostBatch) -> u64 {
    split_records(&l.batch, l.from, l.batch.last_offset.saturating_add(1)).0
}

/// Lost data records per leader epoch, ascending.
fn per_leader_epoch(batches: &[LostBatch]) -> Vec<EpochLoss> {
    let mut epochs: BTreeMap<i32, u64> = BTreeMap::new();
    for l in batches {
        let d = lost_data(l);
        if d > 0 {
            *epochs.entry(l.batch.partition_leader_epoch).or_default() += d;
        }
    }
    epochs
        .into_iter()
        .map(|(leader_epoch, records)| EpochLoss {
            leader_epoch,
            records,
        })
        .collect()
}

/// The producer sequence of the record at `offset` in `b` (`-1`: not
/// idempotent). Sequences wrap at `i32::MAX`
/// (`DefaultRecordBatch.incrementSequence`).
fn sequence_at(b: &BatchSummary, offset: i64) -> i32 {
    if b.base_sequence < 0 {
        return -1;
    }
    let delta = i32::try_from(offset - b.base_offset).unwrap_or(0);
    let s = i64::from(b.base_sequence) + i64::from(delta);
    i32::try_from(s % (i64::from(i32::MAX) + 1)).unwrap_or(-1)
}

/// Lost data records per producer id, ascending, from the batch headers:
/// epochs, first and last lost offset and their sequences, transactional.
fn per_producer(batches: &[LostBatch]) -> Vec<ProducerLoss> {
    let mut producers: BTreeMap<i64, ProducerLoss> = BTreeMap::new();
    for l in batches {
        let b = &l.batch;
        let d = lost_data(l);
        if d == 0 {
            continue;
        }
        let p = producers.entry(b.producer_id).or_insert(ProducerLoss {
            producer_id: b.producer_id,
            producer_epochs: Vec::new(),
            records: 0,
            first_offset: l.from,
            last_offset: b.last_offset,
            first_sequence: sequence_at(b, l.from),
            last_sequence: sequence_at(b, b.last_offset),
            timestamps: None,
            transactional: false,
        });
        if !p.producer_epochs.contains(&b.producer_epoch) {
            p.producer_epochs.push(b.producer_epoch);
            p.producer_epochs.sort_unstable();
        }
        p.records += d;
        p.transactional |= b.is_transactional;
        if l.from < p.first_offset {
            p.first_offset = l.from;
            p.first_sequence = sequence_at(b, l.from);
        }
        if b.last_offset > p.last_offset {
            p.last_offset = b.last_offset;
            p.last_sequence = sequence_at(b, b.last_offset);
        }
    }
    producers.into_values().collect()
}

/// What a partition's loss takes from one replica: the lost records it
/// holds (its truncation cuts every one of them: a replica that keeps a
/// record after following the reference keeps it from being lost), with
/// their commitment bounded as the partition's bounds are, batch by batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplicaShare {
    /// Lost data records this replica holds.
    pub records: u64,
    /// Lost control records this replica holds.
    pub control_records: u64,
    /// Of the data records, proven committed (lower bound).
    pub committed_proven: u64,
    /// Of the data records, possibly committed (upper bound, including the
    /// proven ones); `None` when some of them cannot be bounded.
    pub committed_possible: Option<u64>,
}

/// [`ReplicaShare`] of broker `broker` in `loss`.
pub fn replica_share(loss: &PartitionLoss, broker: i32) -> ReplicaShare {
    let mut s = ReplicaShare::default();
    let (mut possible, mut unknown) = (0u64, false);
    for l in loss.batches.iter().filter(|l| l.held_by.contains(&broker)) {
        for (lo, hi, class) in commitment_parts(l) {
            let (d, c) = split_records(&l.batch, lo, hi);
            s.records += d;
            s.control_records += c;
            match class {
                Committed::Proven => s.committed_proven += d,
                Committed::Possible => possible += d,
                Committed::Unknown => unknown |= d > 0,
                Committed::No => {}
            }
        }
    }
    s.committed_possible = (!unknown).then_some(s.committed_proven + possible);
    s
}

/// Writes each replica's [`ReplicaShare`] of `loss` into `diff`, so that
/// every view of a replica's cut states its commitment the way the
/// partition's loss does.
pub fn share_loss(diff: &mut PartitionDiff, loss: &PartitionLoss) {
    for r in &mut diff.replicas {
        let s = replica_share(loss, r.broker);
        r.lost_cut = s.records;
        r.committed_proven_cut = s.committed_proven;
        r.committed_possible_cut = s.committed_possible;
    }
}

/// The lost batches of `loss` by key, to look a record's batch up.
pub fn lost_batch_index(loss: &PartitionLoss) -> HashMap<(i64, i64, i32, u32), &LostBatch> {
    loss.batches.iter().map(|l| (l.batch.key(), l)).collect()
}

/// The diff's `replica-not-captured` finding for a partition whose assigned
/// replicas (metadata log) are not all in the capture.
pub fn not_captured_finding(loss: &PartitionLoss) -> Option<DiffFinding> {
    if loss.replicas_not_captured.is_empty() {
        return None;
    }
    let list: Vec<String> = loss
        .replicas_not_captured
        .iter()
        .map(i32::to_string)
        .collect();
    Some(DiffFinding {
        kind: FindingKind::ReplicaNotCaptured,
        detail: format!(
            "assigned replicas not in the capture (metadata log): broker {}; {NOT_CAPTURED_WEAKENS}",
            list.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::{diff_partition, PartitionReplicas, ReferenceHint};
    use crate::model::diff::DiffOptions;
    use crate::model::loss::EvidenceKind;
    use crate::model::Election;

    /// Offsets `[base, last]` of leader epoch `epoch`, producer 7 with its
    /// sequence equal to the offset.
    fn batch(base: i64, last: i64, epoch: i32, crc: u32) -> BatchSummary {
        BatchSummary {
            first_timestamp: 1000 + base,
            max_timestamp: 1000 + last,
            producer_id: 7,
            producer_epoch: 0,
            base_sequence: i32::try_from(base).unwrap_or(-1),
            ..BatchSummary::dense(base, last, epoch, crc)
        }
    }

    fn log(broker: i32, batches: Vec<BatchSummary>, start: i64, end: i64) -> ReplicaLog {
        ReplicaLog {
            broker,
            batches,
            log_start_offset: start,
            log_end_offset: end,
            high_watermark: None,
            checkpoint_epochs: None,
            first_segment_base: None,
            window_start: None,
        }
    }

    fn rep<'a>(
        log: &'a ReplicaLog,
        truncation_offset: i64,
        hw: Option<i64>,
        cache: &[(i32, i64)],
    ) -> Rep<'a> {
        Rep {
            broker: log.broker,
            log,
            keys: log.batches.iter().map(BatchSummary::key).collect(),
            truncation_offset,
            log_start: log.log_start_offset,
            log_end: log.log_end_offset,
            hw,
            cache: cache.to_vec(),
        }
    }

    /// Broker 2 leads epoch 1 from offset 10; brokers 1 and 3 hold the old
    /// leader's tail `[10, 20)` of epoch 0, which both truncate at 10.
    fn logs() -> Vec<ReplicaLog> {
        let shared = batch(0, 9, 0, 1);
        vec![
            log(1, vec![shared.clone(), batch(10, 19, 0, 3)], 0, 20),
            log(2, vec![shared.clone(), batch(10, 14, 1, 2)], 0, 15),
            log(3, vec![shared, batch(10, 19, 0, 3)], 0, 20),
        ]
    }

    fn reps(logs: &[ReplicaLog]) -> Vec<Rep<'_>> {
        vec![
            rep(&logs[0], 10, Some(15), &[(0, 0)]),
            rep(&logs[1], 15, Some(10), &[(0, 0), (1, 10)]),
            rep(&logs[2], 10, Some(12), &[(0, 0)]),
        ]
    }

    fn state(metadata_offset: i64, leader: i32, leader_epoch: i32, isr: &[i32]) -> Election {
        Election {
            metadata_offset,
            leader,
            leader_epoch,
            partition_epoch: 0,
            isr: isr.to_vec(),
            elr: None,
            last_known_elr: None,
            leader_recovery_state: 0,
            leader_changed: true,
            unclean: false,
            timestamp: 500 + metadata_offset,
        }
    }

    fn history(changes: Vec<Election>, from_creation: bool) -> PartitionHistory {
        PartitionHistory {
            replicas: vec![1, 2, 3, 4],
            changes,
            from_creation,
        }
    }

    #[test]
    fn epoch_lookup_takes_the_latest_entry_at_or_below_a_held_offset() {
        let logs = logs();
        let r = rep(&logs[1], 15, None, &[(0, 0), (1, 10)]);
        assert_eq!(r.epoch_at(9), Some(0));
        assert_eq!(r.epoch_at(10), Some(1));
        assert_eq!(r.epoch_at(14), Some(1));
        assert_eq!(r.epoch_at(15), None, "at the log end");
    }

    #[test]
    fn a_batch_is_lost_when_every_holder_cuts_it_and_the_reference_lacks_it() {
        let logs = logs();
        let lost = lost_batches(&reps(&logs), 2);
        assert_eq!(lost.len(), 1);
        assert_eq!(lost[0].batch.key(), (10, 19, 0, 3));
        assert_eq!(lost[0].from, 10);
        assert_eq!(lost[0].held_by, vec![1, 3]);
        assert_eq!(
            (lost[0].proven_to, lost[0].possible),
            (i64::MIN, Committed::No)
        );

        // A holder that keeps part of it keeps those records.
        let mut r = reps(&logs);
        r[2].truncation_offset = 16;
        assert_eq!(lost_batches(&r, 2)[0].from, 16);
        r[2].truncation_offset = 20;
        assert!(lost_batches(&r, 2).is_empty(), "broker 3 keeps it whole");

        // The reference holding the identical batch: refetched, not lost.
        assert!(lost_batches(&reps(&logs), 1).is_empty());

        // Below the reference's log start: past retention.
        let mut r = reps(&logs);
        r[1].log_start = 18;
        assert_eq!(lost_batches(&r, 2)[0].from, 18);
    }

    #[test]
    fn a_holders_checkpointed_high_watermark_proves_what_is_below_it() {
        let logs = logs();
        let reps = reps(&logs);
        let mut lost = lost_batches(&reps, 2);
        let facts = [HighWatermarkFact {
            broker: 1,
            raw: Some(16),
            file: Some("b1/replication-offset-checkpoint".into()),
            mtime_ms: Some(1000),
        }];
        let ev = prove_by_high_watermarks(&mut lost, &reps, &facts);
        assert_eq!(lost[0].proven_to, 15, "the higher holder's HW");
        assert_eq!(ev.len(), 2, "one per holder");
        assert_eq!(ev[0].broker, Some(1));
        assert_eq!(ev[0].offset, Some(16), "as written");
        assert_eq!(ev[0].records, 5, "[10, 15)");
        assert_eq!(
            ev[0].fact,
            EvidenceFact::HighWatermarkCheckpoint {
                used: Some(15),
                written_before_newest_lost_ms: Some(19),
            }
        );
        assert_eq!(
            (ev[1].broker, ev[1].offset, ev[1].records),
            (Some(3), None, 2)
        );
    }

    #[test]
    fn a_group_commit_proves_what_its_lineage_holds_below_it() {
        let logs = logs();
        let reps = reps(&logs);
        let mut lost = lost_batches(&reps, 2);
        let commit = |group: &str, offset: i64, leader_epoch: Option<i32>| GroupCommit {
            group: group.into(),
            topic: "t".into(),
            partition: 0,
            offset,
            leader_epoch,
            commit_timestamp: -1,
            broker: 2,
            file: "c.log".into(),
            position: 7,
        };
        let commits = [
            commit("a", 18, Some(0)),
            commit("b", 18, Some(1)),
            commit("c", 5, Some(0)),
        ];
        let ev = prove_by_group_commits(&mut lost, &reps, &commits);
        assert_eq!(
            ev.len(),
            2,
            "a commit at or below the first lost offset proves nothing"
        );
        assert_eq!(lost[0].proven_to, 18);
        assert_eq!(ev[0].group.as_deref(), Some("a"));
        assert_eq!(ev[0].records, 8, "[10, 18)");
        assert_eq!(
            ev[0].fact,
            EvidenceFact::ConsumerGroupCommit {
                lineage: vec![1, 3]
            }
        );
        assert_eq!((ev[0].time, ev[0].file.as_deref()), (None, Some("c.log:7")));
        // Epoch 1 at offset 17: no captured log holds it.
        assert_eq!(ev[1].records, 0);
        assert_eq!(
            ev[1].fact,
            EvidenceFact::ConsumerGroupCommit { lineage: vec![] }
        );
    }

    #[test]
    fn an_isr_of_holders_admits_a_batch_and_one_with_a_non_holder_rules_it_out() {
        let logs = logs();
        let reps = reps(&logs);
        // Broker 2 never held the batch: it led epoch 1 (no later leader
        // made it truncate the batch away).
        let shrunk = history(
            vec![
                state(1, 1, 0, &[1, 2, 3]),
                state(2, 1, 0, &[1, 3]),
                state(3, 2, 1, &[2]),
            ],
            true,
        );
        let mut lost = lost_batches(&reps, 2);
        let ev = bound_by_isr_history(&mut lost, &reps, &shrunk, &[]);
        assert_eq!(lost[0].possible, Committed::Possible);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].fact, EvidenceFact::IsrState);
        assert_eq!((ev[0].metadata_offset, ev[0].records), (Some(2), 10));
        assert_eq!(isr_history_gap(&lost, &reps, &shrunk), None);

        let full = history(vec![state(1, 1, 0, &[1, 2, 3]), state(3, 2, 1, &[2])], true);
        let mut lost = lost_batches(&reps, 2);
        let ev = bound_by_isr_history(&mut lost, &reps, &full, &[]);
        assert_eq!(lost[0].possible, Committed::No);
        let out: Vec<_> = ev.iter().map(|e| (e.metadata_offset, &e.fact)).collect();
        let rules_out = EvidenceFact::IsrStateRulesOut {
            never_held: vec![2],
            lost: 10,
        };
        assert_eq!(out, vec![(Some(1), &rules_out), (Some(3), &rules_out)]);
    }

    #[test]
    fn a_history_that_misses_the_batchs_epoch_leaves_it_unknown() {
        let logs = logs();
        let reps = reps(&logs);
        // Starts after a snapshot, at the batch's epoch.
        let late = history(vec![state(5, 1, 0, &[1, 3]), state(6, 2, 1, &[2])], false);
        let mut lost = lost_batches(&reps, 2);
        assert!(bound_by_isr_history(&mut lost, &reps, &late, &[]).is_empty());
        assert_eq!(lost[0].possible, Committed::Unknown);
        assert_eq!(
            isr_history_gap(&lost, &reps, &late),
            Some(BoundGap::IsrHistoryIncomplete {
                first_epoch: Some(0)
            })
        );
        // Ends before epoch 1, which broker 2 holds.
        let early = history(vec![state(1, 1, 0, &[1, 2, 3])], true);
        let mut lost = lost_batches(&reps, 2);
        bound_by_isr_history(&mut lost, &reps, &early, &[]);
        assert_eq!(lost[0].possible, Committed::Unknown);
        assert_eq!(
            isr_history_gap(&lost, &reps, &early),
            Some(BoundGap::MetadataBehindReplicas {
                history_epoch: Some(0),
                replica_epoch: Some(1)
            })
        );
    }

    #[test]
    fn a_member_may_have_held_a_batch_it_lacks_now() {
        let mut logs = logs();
        logs.push(log(4, vec![batch(0, 4, 0, 9)], 0, 5));
        let mut reps = reps(&logs);
        reps.push(rep(&logs[3], 5, Some(5), &[(0, 0)]));
        let h = history(
            vec![state(1, 1, 0, &[1, 2, 3, 4]), state(3, 2, 1, &[2])],
            true,
        );
        let lost = lost_batches(&reps, 2);
        let l = &lost[0];
        assert!(may_have_held(1, l, &reps, &[], &h), "holds it");
        assert!(may_have_held(5, l, &reps, &[], &h), "not captured");
        assert!(!may_have_held(2, l, &reps, &[], &h), "led the later epoch");
        assert!(!may_have_held(4, l, &reps, &[], &h));
        let unflushed = [HighWatermarkFact {
            broker: 4,
            raw: Some(12),
            file: None,
            mtime_ms: None,
        }];
        assert!(
            may_have_held(4, l, &reps, &unflushed, &h),
            "its checkpointed HW 12 is beyond its log end 5"
        );
        // Following broker 3 in a later epoch 2, broker 2 may have truncated it.
        reps[1].cache.push((2, 15));
        assert!(may_have_held(2, l, &reps, &[], &h));
        assert_eq!(assigned_not_captured(&reps, Some(&h)), Vec::<i32>::new());
        assert_eq!(assigned_not_captured(&reps[..3], Some(&h)), vec![4]);
        assert!(assigned_not_captured(&reps[..3], None).is_empty());
    }

    #[test]
    fn sequences_wrap_at_i32_max() {
        let mut b = batch(10, 14, 0, 1);
        b.base_sequence = i32::MAX - 1;
        assert_eq!(sequence_at(&b, 10), i32::MAX - 1);
        assert_eq!(sequence_at(&b, 12), 0);
        b.base_sequence = -1;
        assert_eq!(sequence_at(&b, 12), -1, "not idempotent");
    }

    #[test]
    fn the_summary_splits_proven_from_possible_and_counts_per_producer() {
        let lost = |b: BatchSummary, from: i64, proven_to: i64, possible: Committed| LostBatch {
            batch: b,
            from,
            held_by: vec![3, 1],
            proven_to,
            possible,
        };
        let mut second = batch(20, 24, 1, 4);
        second.producer_epoch = 2;
        second.is_transactional = true;
        let loss = summarize(
            vec![
                lost(batch(10, 19, 0, 3), 12, 15, Committed::Possible),
                lost(second, 20, i64::MIN, Committed::No),
            ],
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        let ranges: Vec<_> = loss
            .offsets
            .iter()
            .map(|r| (r.start, r.end, r.records, r.committed, r.held_by.clone()))
            .collect();
        assert_eq!(
            ranges,
            vec![
                (12, 15, 3, Committed::Proven, vec![1, 3]),
                (15, 20, 5, Committed::Possible, vec![1, 3]),
                (20, 25, 5, Committed::No, vec![1, 3]),
            ]
        );
        assert_eq!((loss.records, loss.committed_proven), (13, 3));
        assert_eq!(loss.committed_possible, Some(8));
        assert_eq!(loss.verdict, Verdict::CommittedLost);
        assert_eq!(
            (loss.first_timestamp, loss.last_timestamp),
            (Some(1010), Some(1024))
        );
        let epochs: Vec<_> = loss
            .leader_epochs
            .iter()
            .map(|e| (e.leader_epoch, e.records))
            .collect();
        assert_eq!(epochs, vec![(0, 8), (1, 5)]);
        let p = &loss.producers[..];
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].producer_epochs, vec![0, 2]);
        assert_eq!((p[0].first_offset, p[0].first_sequence), (12, 12));
        assert_eq!((p[0].last_offset, p[0].last_sequence), (24, 24));
        assert_eq!((p[0].records, p[0].transactional), (13, true));
    }

    #[test]
    fn the_verdict_names_the_worst_commitment() {
        let t = |proven, possible, unknown, records| Tally {
            proven,
            possible,
            unknown,
            records,
            ..Tally::default()
        };
        assert_eq!(verdict(&t(1, 5, 5, 9)), Verdict::CommittedLost);
        assert_eq!(verdict(&t(0, 5, 5, 9)), Verdict::PossiblyCommittedLost);
        assert_eq!(verdict(&t(0, 0, 5, 9)), Verdict::UnknownLost);
        assert_eq!(verdict(&t(0, 0, 0, 9)), Verdict::UncommittedLost);
        assert_eq!(verdict(&t(0, 0, 0, 0)), Verdict::NothingLost);
    }

    #[test]
    fn the_loss_of_a_diffed_partition_lists_its_evidence_in_order() {
        let mut logs = logs();
        for (l, hw) in logs.iter_mut().zip([15, 10, 12]) {
            l.high_watermark = Some(hw);
        }
        let input = PartitionReplicas {
            topic: "t".into(),
            partition: 0,
            replicas: logs.clone(),
            reference: ReferenceHint::Auto,
        };
        let diff = diff_partition(&input, &DiffOptions::default());
        assert_eq!(diff.reference.broker, 2);
        let h = history(vec![state(1, 1, 0, &[1, 2, 3]), state(3, 2, 1, &[2])], true);
        let ctx = LossContext {
            history: Some(&h),
            ..LossContext::default()
        };
        let loss = partition_loss(&diff, &logs, &ctx);
        assert_eq!((loss.records, loss.committed_proven), (10, 5));
        assert_eq!(loss.verdict, Verdict::CommittedLost);
        assert_eq!(loss.replicas_not_captured, vec![4]);
        let kinds: Vec<EvidenceKind> = loss.evidence.iter().map(LossEvidence::kind).collect();
        assert_eq!(
            kinds,
            vec![
                EvidenceKind::HighWatermarkCheckpoint,
                EvidenceKind::HighWatermarkCheckpoint,
                EvidenceKind::NoConsumerOffsets,
                EvidenceKind::IsrStateRulesOut,
                EvidenceKind::IsrStateRulesOut,
                EvidenceKind::ReplicaNotCaptured,
            ]
        );
        // Without a history, the upper bound is unknown and says why.
        let ctx = LossContext {
            history_missing: Some("ZooKeeper mode"),
            commits_searched: true,
            ..LossContext::default()
        };
        let loss = partition_loss(&diff, &logs, &ctx);
        assert_eq!(loss.verdict, Verdict::CommittedLost);
        assert_eq!((loss.committed_possible, loss.committed_unknown), (None, 5));
        let gap = BoundGap::NoIsrHistory {
            why: Some("ZooKeeper mode".into()),
        };
        assert_eq!(loss.unknown.len(), 1);
        assert_eq!(loss.unknown[0].reason, gap);
        assert_eq!(
            loss.evidence.last().map(|e| &e.fact),
            Some(&EvidenceFact::Unbounded(gap))
        );
    }
}
