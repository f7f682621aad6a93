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
    EpochLoss, EvidenceKind, LossEvidence, LostBatch, LostRange, PartitionLoss, ProducerBatchLoss,
    UnknownBound, Verdict, NOT_CAPTURED_WEAKENS,
};
use crate::model::records::Committed;
use crate::model::{
    BatchSummary, Election, GroupCommit, HighWatermarkFact, PartitionHistory, ReplicaLog,
};

/// Kafka's default `replica.high.watermark.checkpoint.interval.ms`.
pub const HW_CHECKPOINT_INTERVAL_DEFAULT_MS: i64 = 5000;

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
    keys: HashSet<(i64, i64, i32, u32)>,
    truncation_offset: i64,
    log_start: i64,
    log_end: i64,
    /// High watermark the diff used (clamped).
    hw: Option<i64>,
    /// Epoch cache the diff used: (epoch, start offset).
    cache: Vec<(i32, i64)>,
}

impl Rep<'_> {
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
    let reps: Vec<Rep<'_>> = diff
        .replicas
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
        .collect();
    let reference = diff.reference.broker;
    let ref_keys: Option<&HashSet<_>> =
        reps.iter().find(|r| r.broker == reference).map(|r| &r.keys);
    // Below the reference's log start, records are past retention: gone
    // from the partition whatever the incident, not lost by it.
    let ref_start = reps
        .iter()
        .find(|r| r.broker == reference)
        .map_or(i64::MIN, |r| r.log_start);

    // Lost batches: cut on every replica holding them, absent from the reference.
    let mut lost: BTreeMap<(i64, i64, i32, u32), LostBatch> = BTreeMap::new();
    for r in reps.iter().filter(|r| r.broker != reference) {
        for b in &r.log.batches {
            let key = b.key();
            if b.records_in(r.truncation_offset, r.log_end) == 0 || lost.contains_key(&key) {
                continue;
            }
            if ref_keys.is_some_and(|k| k.contains(&key)) {
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

    let mut evidence = Vec::new();
    let mut unknown = Vec::new();
    let holders: BTreeSet<i32> = batches
        .iter()
        .flat_map(|l| l.held_by.iter().copied())
        .collect();

    // Proof from high watermark checkpoints of the holders.
    let mut hw_proofs: BTreeMap<i32, u64> = BTreeMap::new();
    for l in &mut batches {
        for h in &l.held_by {
            if let Some(hw) = reps.iter().find(|r| r.broker == *h).and_then(|r| r.hw) {
                if hw > l.proven_to {
                    l.proven_to = hw;
                }
            }
        }
    }
    for l in &batches {
        for h in &l.held_by {
            if let Some(hw) = reps.iter().find(|r| r.broker == *h).and_then(|r| r.hw) {
                let (d, _) = split_records(&l.batch, l.from, hw);
                *hw_proofs.entry(*h).or_default() += d;
            }
        }
    }
    let newest_lost = batches.iter().map(|l| l.batch.max_timestamp).max();
    if !batches.is_empty() {
        for h in &holders {
            let fact = ctx.high_watermarks.iter().find(|f| f.broker == *h);
            let used = reps.iter().find(|r| r.broker == *h).and_then(|r| r.hw);
            let raw = fact.and_then(|f| f.raw);
            let mtime = fact.and_then(|f| f.mtime_ms);
            let proved = hw_proofs.get(h).copied().unwrap_or(0);
            let mut detail = match raw {
                Some(v) => format!(
                    "broker {h}'s replication-offset-checkpoint says {v}{}: {proved} lost records below it are committed",
                    if used.is_some_and(|u| u != v) { format!(" (used as {})", used.unwrap_or(v)) } else { String::new() }
                ),
                None => format!("broker {h}'s replication-offset-checkpoint does not list the partition: it proves nothing"),
            };
            detail.push_str(&format!(
                "; Kafka writes that file every replica.high.watermark.checkpoint.interval.ms (default {} s), so it may miss the last writes before a kill",
                HW_CHECKPOINT_INTERVAL_DEFAULT_MS / 1000
            ));
            if let (Some(m), Some(n)) = (mtime, newest_lost) {
                if n > m {
                    detail.push_str(&format!(
                        "; it was last written {} before the newest lost batch's timestamp",
                        human_ms(n - m)
                    ));
                }
            }
            evidence.push(LossEvidence {
                kind: EvidenceKind::HighWatermarkCheckpoint,
                broker: Some(*h),
                group: None,
                offset: raw,
                leader_epoch: None,
                isr: None,
                metadata_offset: None,
                time: mtime,
                file: fact.and_then(|f| f.file.clone()),
                records: proved,
                detail,
            });
        }
    }

    // Proof from consumer group commits.
    if !batches.is_empty() {
        let first_lost = batches.iter().map(|l| l.from).min().unwrap_or(i64::MAX);
        let mut commits: Vec<&GroupCommit> = ctx
            .commits
            .iter()
            .filter(|c| c.offset > first_lost)
            .collect();
        commits.sort_by(|a, b| {
            (&a.group, a.leader_epoch, a.offset).cmp(&(&b.group, b.leader_epoch, b.offset))
        });
        for c in commits {
            let last = c.offset - 1;
            let candidates: Vec<&Rep<'_>> = reps
                .iter()
                .filter(|r| match c.leader_epoch {
                    Some(e) => r.epoch_at(last) == Some(e),
                    None => last >= r.log_start && last < r.log_end,
                })
                .collect();
            let mut proved = 0;
            if !candidates.is_empty() {
                // `batches` is sorted by first lost offset.
                for l in batches.iter_mut().take_while(|l| l.from < c.offset) {
                    let key = l.batch.key();
                    if candidates.iter().all(|r| r.keys.contains(&key)) {
                        proved += split_records(&l.batch, l.from, c.offset).0;
                        l.proven_to = l.proven_to.max(c.offset);
                    }
                }
            }
            let lineage = match c.leader_epoch {
                Some(e) => format!("leader epoch {e} at offset {last}"),
                None => format!("no leader epoch; offset {last}"),
            };
            let names: Vec<String> = candidates.iter().map(|r| r.broker.to_string()).collect();
            let detail = if candidates.is_empty() {
                format!(
                    "group {:?} committed offset {} ({lineage}), which no captured replica's log matches: it proves nothing here",
                    c.group, c.offset
                )
            } else if proved == 0 {
                format!(
                    "group {:?} committed offset {} ({lineage}, the log of broker(s) {}), which does not hold the lost records",
                    c.group,
                    c.offset,
                    names.join(", ")
                )
            } else {
                format!(
                    "group {:?} committed offset {} ({lineage}, the log of broker(s) {}): a consumer reads only below the high watermark, so the {proved} lost records below it were committed",
                    c.group,
                    c.offset,
                    names.join(", ")
                )
            };
            evidence.push(LossEvidence {
                kind: EvidenceKind::ConsumerGroupCommit,
                broker: Some(c.broker),
                group: Some(c.group.clone()),
                offset: Some(c.offset),
                leader_epoch: c.leader_epoch,
                isr: None,
                metadata_offset: None,
                time: (c.commit_timestamp >= 0).then_some(c.commit_timestamp),
                file: Some(format!("{}:{}", c.file, c.position)),
                records: proved,
                detail,
            });
        }
        if !ctx.commits_searched {
            evidence.push(note(
                EvidenceKind::NoConsumerOffsets,
                "the capture holds no __consumer_offsets replica: consumer group commits could not be used as proof".into(),
            ));
        }
    }

    // The upper bound from the ISR history.
    let captured: BTreeSet<i32> = reps.iter().map(|r| r.broker).collect();
    let mut not_captured = Vec::new();
    if let Some(h) = ctx.history {
        not_captured = h
            .replicas
            .iter()
            .copied()
            .filter(|b| !captured.contains(b))
            .collect();
        let mut isr_admits: BTreeMap<usize, u64> = BTreeMap::new();
        let mut isr_rules_out: BTreeMap<usize, (BTreeSet<i32>, u64)> = BTreeMap::new();
        let max_known = h.max_epoch();
        let replica_max = reps
            .iter()
            .filter_map(|r| r.cache.last().map(|c| c.0))
            .max();
        let behind = match (max_known, replica_max) {
            (Some(k), Some(r)) => r > k,
            (None, _) => true,
            _ => false,
        };
        let first_epoch = h.changes.first().map(|e| e.leader_epoch);
        for l in batches.iter_mut() {
            let e = l.batch.partition_leader_epoch;
            if behind || (!h.from_creation && first_epoch.is_none_or(|f| e <= f)) {
                l.possible = Committed::Unknown;
                continue;
            }
            let may_hold = |m: i32| -> bool { may_have_held(m, l, &reps, ctx.high_watermarks, h) };
            let admitting = h.changes.iter().enumerate().find(|(_, s)| {
                s.leader_epoch >= e
                    && s.leader >= 0
                    && !s.isr.is_empty()
                    && s.isr.iter().all(|m| may_hold(*m))
            });
            if let Some((i, _)) = admitting {
                l.possible = Committed::Possible;
                *isr_admits.entry(i).or_default() += split_records(&l.batch, l.from, i64::MAX).0;
            } else {
                for (i, s) in h.changes.iter().enumerate() {
                    if s.leader_epoch < e || s.leader < 0 || s.isr.is_empty() {
                        continue;
                    }
                    let entry = isr_rules_out.entry(i).or_insert((BTreeSet::new(), 0));
                    entry
                        .0
                        .extend(s.isr.iter().copied().filter(|m| !may_hold(*m)));
                    entry.1 += split_records(&l.batch, l.from, i64::MAX).0;
                }
            }
        }
        for (i, (missing, n)) in isr_rules_out {
            let s: &Election = &h.changes[i];
            let who: Vec<String> = missing.iter().map(i32::to_string).collect();
            evidence.push(LossEvidence {
                kind: EvidenceKind::IsrStateRulesOut,
                broker: Some(s.leader),
                group: None,
                offset: None,
                leader_epoch: Some(s.leader_epoch),
                isr: Some(s.isr.clone()),
                metadata_offset: Some(s.metadata_offset),
                time: Some(s.timestamp),
                file: None,
                records: 0,
                detail: format!(
                    "the metadata log (offset {}) records ISR {:?} under leader {} in epoch {}: broker(s) {} never held {n} of the lost records (and followed no later leader that could have made them truncate them), so the high watermark could not pass them in this ISR",
                    s.metadata_offset, s.isr, s.leader, s.leader_epoch, who.join(", ")
                ),
            });
        }
        for (i, n) in isr_admits {
            let s: &Election = &h.changes[i];
            evidence.push(LossEvidence {
                kind: EvidenceKind::IsrState,
                broker: Some(s.leader),
                group: None,
                offset: None,
                leader_epoch: Some(s.leader_epoch),
                isr: Some(s.isr.clone()),
                metadata_offset: Some(s.metadata_offset),
                time: Some(s.timestamp),
                file: None,
                records: n,
                detail: format!(
                    "the metadata log (offset {}) records ISR {:?} under leader {} in epoch {}: every member holds (or may have held) {n} of the lost records, so the leader's high watermark may have passed them",
                    s.metadata_offset, s.isr, s.leader, s.leader_epoch
                ),
            });
        }
        if behind && !batches.is_empty() {
            let reason = format!(
                "the metadata log's history of the partition ends at leader epoch {}, below epoch {} that a replica holds: the ISR of the later epochs is unknown",
                max_known.map_or("-".to_string(), |k| k.to_string()),
                replica_max.map_or("-".to_string(), |k| k.to_string())
            );
            evidence.push(note(EvidenceKind::MetadataBehindReplicas, reason.clone()));
            unknown.push(UnknownBound {
                bound: "committed_possible",
                reason,
            });
        } else if batches.iter().any(|l| l.possible == Committed::Unknown) {
            let reason = format!(
                "the metadata log's history of the partition starts at leader epoch {} (its start was deleted after a snapshot): the ISR of earlier epochs is unknown",
                first_epoch.map_or("-".to_string(), |k| k.to_string())
            );
            evidence.push(note(EvidenceKind::IsrHistoryIncomplete, reason.clone()));
            unknown.push(UnknownBound {
                bound: "committed_possible",
                reason,
            });
        }
    } else if !batches.is_empty() {
        for l in batches.iter_mut() {
            l.possible = Committed::Unknown;
        }
        let reason = ctx
            .history_missing
            .unwrap_or("the capture holds no __cluster_metadata log with this partition")
            .to_string();
        let reason =
            format!("{reason}: without the ISR history no record can be ruled out as committed");
        evidence.push(note(EvidenceKind::NoIsrHistory, reason.clone()));
        unknown.push(UnknownBound {
            bound: "committed_possible",
            reason,
        });
    }
    for b in &not_captured {
        if batches.is_empty() {
            break;
        }
        evidence.push(LossEvidence {
            broker: Some(*b),
            ..note(
                EvidenceKind::ReplicaNotCaptured,
                format!("broker {b} is an assigned replica whose log is not in the capture: it may hold records counted here as lost, and is taken as possibly holding any of them"),
            )
        });
    }

    summarize(batches, evidence, unknown, not_captured)
}

/// Whether ISR member `m` may have held lost batch `l` at some point.
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

fn note(kind: EvidenceKind, detail: String) -> LossEvidence {
    LossEvidence {
        kind,
        broker: None,
        group: None,
        offset: None,
        leader_epoch: None,
        isr: None,
        metadata_offset: None,
        time: None,
        file: None,
        records: 0,
        detail,
    }
}

fn summarize(
    batches: Vec<LostBatch>,
    evidence: Vec<LossEvidence>,
    unknown: Vec<UnknownBound>,
    replicas_not_captured: Vec<i32>,
) -> PartitionLoss {
    let mut offsets: Vec<LostRange> = Vec::new();
    let (mut records, mut control, mut proven, mut possible, mut unknown_n) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut epochs: BTreeMap<i32, u64> = BTreeMap::new();
    let mut producers: BTreeMap<i64, ProducerBatchLoss> = BTreeMap::new();
    let mut held: BTreeSet<i32> = BTreeSet::new();
    for l in &batches {
        let b = &l.batch;
        let end = b.last_offset.saturating_add(1);
        held.extend(l.held_by.iter().copied());
        // Up to two pieces: the proven part, then the rest.
        let cut = l.proven_to.clamp(l.from, end);
        for (lo, hi, class) in [(l.from, cut, Committed::Proven), (cut, end, l.possible)] {
            if hi <= lo {
                continue;
            }
            let (d, c) = split_records(b, lo, hi);
            if d + c == 0 {
                continue;
            }
            records += d;
            control += c;
            match class {
                Committed::Proven => proven += d,
                Committed::Possible => possible += d,
                Committed::Unknown => unknown_n += d,
                Committed::No => {}
            }
            let mut holders = l.held_by.clone();
            holders.sort_unstable();
            match offsets.last_mut() {
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
                _ => offsets.push(LostRange {
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
        let (d, _) = split_records(b, l.from, end);
        if d == 0 {
            continue;
        }
        *epochs.entry(b.partition_leader_epoch).or_default() += d;
        let seq_at = |o: i64| -> i32 {
            if b.base_sequence < 0 {
                return -1;
            }
            let delta = i32::try_from(o - b.base_offset).unwrap_or(0);
            // Sequences wrap at i32::MAX (DefaultRecordBatch.incrementSequence).
            let s = i64::from(b.base_sequence) + i64::from(delta);
            i32::try_from(s % (i64::from(i32::MAX) + 1)).unwrap_or(-1)
        };
        let p = producers.entry(b.producer_id).or_insert(ProducerBatchLoss {
            producer_id: b.producer_id,
            producer_epochs: Vec::new(),
            records: 0,
            first_offset: l.from,
            last_offset: b.last_offset,
            first_sequence: seq_at(l.from),
            last_sequence: seq_at(b.last_offset),
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
            p.first_sequence = seq_at(l.from);
        }
        if b.last_offset > p.last_offset {
            p.last_offset = b.last_offset;
            p.last_sequence = seq_at(b.last_offset);
        }
    }
    offsets.sort_by_key(|r| (r.start, r.leader_epoch, r.end));
    let with_data: Vec<&LostBatch> = batches.iter().filter(|l| !l.batch.is_control).collect();
    let first_timestamp = with_data
        .iter()
        .map(|l| l.batch.first_timestamp)
        .filter(|t| *t >= 0)
        .min();
    let last_timestamp = with_data
        .iter()
        .map(|l| l.batch.max_timestamp)
        .filter(|t| *t >= 0)
        .max();
    let committed_possible = (unknown_n == 0).then_some(proven + possible);
    let verdict = if proven > 0 {
        Verdict::CommittedLost
    } else if possible > 0 {
        Verdict::PossiblyCommittedLost
    } else if unknown_n > 0 {
        Verdict::UnknownLost
    } else if records + control > 0 {
        Verdict::UncommittedLost
    } else {
        Verdict::NothingLost
    };
    PartitionLoss {
        records,
        control_records: control,
        offsets,
        held_by: held.into_iter().collect(),
        committed_proven: proven,
        committed_possible,
        committed_unknown: unknown_n,
        verdict,
        // A bound is unknown only where some record is left unbounded.
        unknown: if unknown_n > 0 { unknown } else { Vec::new() },
        leader_epochs: epochs
            .into_iter()
            .map(|(leader_epoch, records)| EpochLoss {
                leader_epoch,
                records,
            })
            .collect(),
        producers: producers.into_values().collect(),
        first_timestamp,
        last_timestamp,
        replicas_not_captured,
        evidence: if records + control > 0 {
            evidence
        } else {
            Vec::new()
        },
        batches,
    }
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
        let end = l.batch.last_offset.saturating_add(1);
        let cut = l.proven_to.clamp(l.from, end);
        for (lo, hi, class) in [(l.from, cut, Committed::Proven), (cut, end, l.possible)] {
            if hi <= lo {
                continue;
            }
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

/// `1.2 s`, `3 min 4 s`, `2 h 5 min`.
pub fn human_ms(ms: i64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{}.{} s", s, (ms % 1000) / 100)
    } else if s < 3600 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
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
