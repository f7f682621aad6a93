//! Who a loss hurts: consumer groups, transactions and idempotent
//! producers, once every replica follows the reference leader, and the
//! configuration that let it happen.
//!
//! Everything here follows what Kafka's own clients and brokers do (4.1):
//! - A restarted consumer fetches its group's committed offset. When the
//!   commit carries a leader epoch (KIP-320) the position is validated with
//!   OffsetsForLeaderEpoch: the leader answers the end offset of that epoch
//!   in its epoch cache; an end below the commit is a truncation, and the
//!   consumer moves to that end under `earliest`, `latest` and `by_duration`
//!   alike, or fails with LogTruncationException under `none`; an undefined
//!   answer resets by the policy. A commit without an epoch is not
//!   validated: past the log end it is OFFSET_OUT_OF_RANGE (reset by the
//!   policy, or OffsetOutOfRangeException), inside the log it is fetched
//!   from as is, silently skipping the new leader's records before it.
//! - The partition leader rebuilds each producer's state from its snapshot
//!   and log. An open transaction whose marker was cut stays open: nothing
//!   on the partition leader aborts it, and a coordinator that completed it
//!   never sends the marker again. read_committed consumers stop at the
//!   last stable offset (the first offset of the earliest open transaction).
//! - An idempotent producer's next batch carries the sequence after its last
//!   acknowledged one. A leader that holds the producer at a lower sequence
//!   answers OUT_OF_ORDER_SEQUENCE_NUMBER (a client since 2.5 bumps its
//!   epoch and resends, so the records in the gap are not resent and the
//!   application sees no error); a leader with no state for it accepts the
//!   batch and the gap goes undetected.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::epochs::EpochCache;
use crate::format::record::control::ControlType;
use crate::model::impact::{
    ConfigImpact, DeliveryState, GroupImpact, GroupState, PartitionImpact, PerReset,
    ProducerImpact, ShareGroupImpact, ShareGroupState, ShareLost, SharePartitionState, TxnImpact,
    TxnOutcome,
};
use crate::model::loss::PartitionLoss;
use crate::model::truncation::EpochStart;
use crate::model::{
    BatchSummary, ConfigFact, CoordinatorTxn, LatestCommit, PartitionHistory, ProducerStateView,
    ReplicaLog,
};

/// What the impact is computed from.
pub struct ImpactContext<'a> {
    /// The reference leader.
    pub leader: i32,
    /// Its log start and end.
    pub log_start: i64,
    /// See `log_start`.
    pub log_end: i64,
    /// Its leader-epoch cache.
    pub epochs: &'a [EpochStart],
    /// Every replica's log as read.
    pub logs: &'a [ReplicaLog],
    /// The latest commit of each group (`Err`: why there are none to read).
    pub commits: Result<&'a [LatestCommit], String>,
    /// Group kinds by group id.
    pub protocols: &'a BTreeMap<String, String>,
    /// The share groups' states for the partition (`Err`: why they cannot
    /// be read).
    pub shares: Result<&'a [SharePartitionState], String>,
    /// The new leader's producer state (`Err`: why it is unknown).
    pub producers: Result<&'a ProducerStateView, String>,
    /// The coordinator's latest state per producer id (`Err`: why unknown).
    pub coordinator: Result<&'a BTreeMap<i64, CoordinatorTxn>, String>,
    /// Types of the lost control batches, by base offset.
    pub markers: &'a BTreeMap<i64, ControlType>,
    /// The metadata log's settings (`Err`: why there are none).
    pub configs: Result<&'a [ConfigFact], String>,
    /// The partition's history in the metadata log.
    pub history: Option<&'a PartitionHistory>,
    /// Data records on the new leader's log in `[from, to)`.
    pub count: &'a dyn Fn(i64, i64) -> u64,
    /// Data records of one producer on the new leader's log in `[from, to)`.
    pub count_producer: &'a dyn Fn(i64, i64, i64) -> u64,
}

fn lost_data(b: &BatchSummary) -> bool {
    !b.is_control
}

/// The impact of `loss` on `topic`-`partition`.
pub fn partition_impact(
    topic: &str,
    partition: i32,
    loss: &PartitionLoss,
    ctx: &ImpactContext<'_>,
) -> PartitionImpact {
    let first_lost = loss.offsets.iter().map(|r| r.start).min();
    let cache = EpochCache::from_checkpoint(ctx.epochs.iter().map(|e| (e.epoch, e.start_offset)));
    let mut out = PartitionImpact {
        topic: topic.to_string(),
        partition,
        leader: ctx.leader,
        log_start_offset: ctx.log_start,
        new_log_end: ctx.log_end,
        first_lost_offset: first_lost,
        records_lost: loss.records,
        last_stable_offset: None,
        groups: Vec::new(),
        groups_unknown: None,
        share_groups: Vec::new(),
        share_groups_unknown: None,
        transactions: Vec::new(),
        transactions_unknown: None,
        producers: Vec::new(),
        producers_unknown: None,
        config: Vec::new(),
        affected: Some(false),
    };
    match &ctx.commits {
        Ok(commits) => {
            for c in *commits {
                out.groups
                    .push(group_impact(c, loss, first_lost, &cache, ctx));
            }
        }
        Err(why) => out.groups_unknown = Some(why.clone()),
    }
    match &ctx.shares {
        Ok(shares) => {
            for s in *shares {
                out.share_groups
                    .push(share_group_impact(s, loss, first_lost, ctx));
            }
        }
        Err(why) => out.share_groups_unknown = Some(why.clone()),
    }
    transactions(&mut out, loss, ctx);
    producers(&mut out, loss, first_lost, ctx);
    out.config = config(topic, partition, loss, ctx);
    let hurt = out.groups.iter().any(|g| {
        matches!(
            g.state,
            GroupState::Diverged
                | GroupState::PastLogEnd
                | GroupState::SilentSkip
                | GroupState::EpochUnknown
        )
    }) || out.share_groups.iter().any(|g| {
        matches!(
            g.state,
            ShareGroupState::PastLogEnd | ShareGroupState::Skips | ShareGroupState::InFlightLost
        )
    }) || out
        .transactions
        .iter()
        .any(|t| matches!(t.state, TxnOutcome::Hanging | TxnOutcome::Lost))
        || out.producers.iter().any(|p| p.state != "sent-again");
    // What the capture cannot show is never "nothing affected".
    let unknown = out.groups_unknown.is_some()
        || out.producers_unknown.is_some()
        || out.share_groups_unknown.is_some()
        || out.groups.iter().any(|g| g.state == GroupState::Unreadable)
        || out
            .share_groups
            .iter()
            .any(|g| g.state == ShareGroupState::Unreadable)
        || out
            .transactions
            .iter()
            .any(|t| t.state == TxnOutcome::OpenUnknown);
    out.affected = if hurt {
        Some(true)
    } else if unknown {
        None
    } else {
        Some(false)
    };
    out
}

#[derive(Clone, Copy)]
enum Fetch {
    At(i64),
    Fails(&'static str),
}

fn group_impact(
    c: &LatestCommit,
    loss: &PartitionLoss,
    first_lost: Option<i64>,
    cache: &EpochCache,
    ctx: &ImpactContext<'_>,
) -> GroupImpact {
    let (start, end) = (ctx.log_start, ctx.log_end);
    let protocol = ctx.protocols.get(&c.group).cloned();
    if let Some(why) = &c.unreadable {
        return GroupImpact {
            group: c.group.clone(),
            protocol,
            committed_offset: None,
            committed_leader_epoch: None,
            commit_timestamp: None,
            coordinator_broker: c.broker,
            state: GroupState::Unreadable,
            divergence_offset: None,
            next_fetch_offset: PerReset::default(),
            error: PerReset::default(),
            records_skipped: PerReset::default(),
            records_reread: PerReset::default(),
            phantom_records: 0,
            phantom_offsets: Vec::new(),
            phantom_first_timestamp: None,
            phantom_last_timestamp: None,
            detail: format!(
                "the group's latest commit does not decode ({why}): where it resumes is unknown"
            ),
        };
    }
    let Some(commit) = &c.commit else {
        return GroupImpact {
            group: c.group.clone(),
            protocol,
            committed_offset: None,
            committed_leader_epoch: None,
            commit_timestamp: None,
            coordinator_broker: c.broker,
            state: GroupState::NoOffset,
            divergence_offset: None,
            next_fetch_offset: PerReset {
                earliest: Some(start),
                latest: Some(end),
                none: None,
            },
            error: PerReset {
                earliest: None,
                latest: None,
                none: Some("NoOffsetForPartitionException"),
            },
            records_skipped: PerReset::default(),
            records_reread: PerReset::default(),
            phantom_records: 0,
            phantom_offsets: Vec::new(),
            phantom_first_timestamp: None,
            phantom_last_timestamp: None,
            detail: format!(
                "the group's latest record for the partition deletes its offset (__consumer_offsets-{} offset {}): a restarted consumer starts by auto.offset.reset",
                c.offsets_partition, c.log_offset
            ),
        };
    };
    let co = commit.offset;
    let reset = |e: &'static str| PerReset {
        earliest: Fetch::At(start),
        latest: Fetch::At(end),
        none: Fetch::Fails(e),
    };
    let all = |f: Fetch| PerReset {
        earliest: f,
        latest: f,
        none: f,
    };
    let (state, fetch, divergence) = match commit.leader_epoch {
        Some(e) => {
            let eo = cache.end_offset_for(e, end);
            if eo.has_undefined_offset() || eo.has_undefined_epoch() {
                (
                    GroupState::EpochUnknown,
                    reset("LogTruncationException"),
                    None,
                )
            } else if eo.end_offset < co {
                (
                    GroupState::Diverged,
                    PerReset {
                        earliest: Fetch::At(eo.end_offset),
                        latest: Fetch::At(eo.end_offset),
                        none: Fetch::Fails("LogTruncationException"),
                    },
                    Some(eo.end_offset),
                )
            } else {
                (GroupState::Unaffected, all(Fetch::At(co)), None)
            }
        }
        None => {
            if co > end || co < start {
                (
                    GroupState::PastLogEnd,
                    reset("OffsetOutOfRangeException"),
                    first_lost.filter(|f| *f < co),
                )
            } else if first_lost.is_some_and(|f| f < co) {
                (GroupState::SilentSkip, all(Fetch::At(co)), first_lost)
            } else {
                (GroupState::Unaffected, all(Fetch::At(co)), None)
            }
        }
    };
    // Where the group's lineage parts from the new log: what it has consumed
    // below this point is still on the new log.
    let parted = divergence.unwrap_or(co).min(co);
    let skipped = |f: Fetch| match f {
        Fetch::At(p) if p > parted => Some((ctx.count)(parted, p.min(end))),
        Fetch::At(_) => Some(0),
        Fetch::Fails(_) => None,
    };
    let reread = |f: Fetch| match f {
        Fetch::At(p) if p < parted => Some((ctx.count)(p, parted)),
        Fetch::At(_) => Some(0),
        Fetch::Fails(_) => None,
    };
    let map = |f: &dyn Fn(Fetch) -> Option<u64>| PerReset {
        earliest: f(fetch.earliest),
        latest: f(fetch.latest),
        none: f(fetch.none),
    };
    // Records it consumed that no replica keeps: lost batches below the
    // commit on the group's lineage (the replicas whose batch at offset
    // commit-1 has the commit's epoch; every lineage when none is captured).
    let lineage: BTreeSet<i32> = ctx
        .logs
        .iter()
        .filter(|l| {
            l.batches.iter().any(|b| {
                b.base_offset < co
                    && b.last_offset >= co - 1
                    && commit
                        .leader_epoch
                        .is_none_or(|e| b.partition_leader_epoch == e)
            })
        })
        .map(|l| l.broker)
        .collect();
    let mut phantom = 0u64;
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    let (mut t0, mut t1) = (None::<i64>, None::<i64>);
    if state != GroupState::Unaffected {
        for lb in &loss.batches {
            let b = &lb.batch;
            if !lost_data(b) || lb.from >= co {
                continue;
            }
            if let Some(e) = commit.leader_epoch {
                if b.partition_leader_epoch > e {
                    continue;
                }
            }
            if !lineage.is_empty() && !lb.held_by.iter().any(|h| lineage.contains(h)) {
                continue;
            }
            let n = b.records_in(lb.from, co).max(0) as u64;
            if n == 0 {
                continue;
            }
            phantom += n;
            let hi = co.min(b.last_offset + 1);
            match ranges.last_mut() {
                Some(r) if r.1 >= lb.from => r.1 = r.1.max(hi),
                _ => ranges.push((lb.from, hi)),
            }
            t0 = Some(t0.map_or(b.first_timestamp, |t| t.min(b.first_timestamp)));
            t1 = Some(t1.map_or(b.max_timestamp, |t| t.max(b.max_timestamp)));
        }
    }
    let next = PerReset {
        earliest: at(fetch.earliest),
        latest: at(fetch.latest),
        none: at(fetch.none),
    };
    let error = PerReset {
        earliest: err(fetch.earliest),
        latest: err(fetch.latest),
        none: err(fetch.none),
    };
    let records_skipped = map(&skipped);
    let records_reread = map(&reread);
    let epoch_text = commit
        .leader_epoch
        .map_or("no leader epoch".to_string(), |e| {
            format!("leader epoch {e}")
        });
    let detail = match state {
        GroupState::Unaffected => format!(
            "committed {co} ({epoch_text}), at or below the first lost offset: unaffected"
        ),
        GroupState::Diverged => format!(
            "committed {co} ({epoch_text}); the new leader ends that epoch at {}: a restarted consumer detects the truncation and resumes at {} under earliest and latest (none: LogTruncationException); it had consumed {} no replica keeps",
            parted, parted, records_text(phantom)
        ),
        GroupState::PastLogEnd => format!(
            "committed {co} ({epoch_text}), past the new log end {end}: OFFSET_OUT_OF_RANGE; earliest re-reads from {start} ({}), latest skips to {end} ({} never seen), none fails; it had consumed {} no replica keeps",
            records_text(records_reread.earliest.unwrap_or(0)),
            records_text(records_skipped.latest.unwrap_or(0)),
            records_text(phantom)
        ),
        GroupState::SilentSkip => format!(
            "committed {co} ({epoch_text}), inside the new log past the divergence at {parted}: fetched as is, with no error, skipping {} of the new leader; it had consumed {} no replica keeps",
            records_text(records_skipped.none.unwrap_or(0)),
            records_text(phantom)
        ),
        GroupState::EpochUnknown => format!(
            "committed {co} ({epoch_text}), an epoch the new leader has no entry at or above: reset by auto.offset.reset (none: LogTruncationException)"
        ),
        GroupState::NoOffset | GroupState::Unreadable => unreachable!("handled above"),
    };
    GroupImpact {
        group: c.group.clone(),
        protocol,
        committed_offset: Some(co),
        committed_leader_epoch: commit.leader_epoch,
        commit_timestamp: Some(commit.commit_timestamp),
        coordinator_broker: c.broker,
        state,
        divergence_offset: divergence,
        next_fetch_offset: next,
        error,
        records_skipped,
        records_reread,
        phantom_records: phantom,
        phantom_offsets: ranges,
        phantom_first_timestamp: t0,
        phantom_last_timestamp: t1,
        detail,
    }
}

/// Where an offset stands in a share group's state.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ShareCat {
    /// Below the start offset: finished.
    Done,
    /// In a batch of this state.
    In(DeliveryState),
    /// At or past the start offset, in no batch.
    Gap,
}

/// `[lo, hi)` cut by what the share group's state says of each offset.
fn share_pieces(s: &SharePartitionState, lo: i64, hi: i64) -> Vec<(i64, i64, ShareCat)> {
    let mut out = Vec::new();
    let mut at = lo;
    if at < s.start_offset {
        let to = s.start_offset.min(hi);
        out.push((at, to, ShareCat::Done));
        at = to;
    }
    for b in &s.batches {
        if at >= hi {
            break;
        }
        if b.last_offset < at {
            continue;
        }
        if b.first_offset >= hi {
            break;
        }
        if b.first_offset > at {
            out.push((at, b.first_offset, ShareCat::Gap));
            at = b.first_offset;
        }
        let to = b.last_offset.saturating_add(1).min(hi);
        out.push((at, to, ShareCat::In(b.state)));
        at = to;
    }
    if at < hi {
        out.push((at, hi, ShareCat::Gap));
    }
    out
}

fn push_range(ranges: &mut Vec<(i64, i64)>, a: i64, b: i64) {
    match ranges.last_mut() {
        Some(r) if r.1 >= a => r.1 = r.1.max(b),
        _ => ranges.push((a, b)),
    }
}

fn share_group_impact(
    s: &SharePartitionState,
    loss: &PartitionLoss,
    first_lost: Option<i64>,
    ctx: &ImpactContext<'_>,
) -> ShareGroupImpact {
    let end = ctx.log_end;
    let effective = s.effective_start();
    let lag = match (s.start_offset, s.delivery_complete_count) {
        (start, Some(dcc)) if start >= 0 => {
            Some(end.saturating_sub(start).saturating_sub(i64::from(dcc)))
        }
        _ => None,
    };
    let mut out = ShareGroupImpact {
        group: s.group.clone(),
        topic_id: crate::format::metadata::schema::uuid_string(&s.topic_id),
        coordinator_broker: s.coordinator_broker,
        state_partition: s.state_partition,
        state_log_offset: s.log_offset,
        state_epoch: s.state_epoch,
        leader_epoch: s.leader_epoch,
        start_offset: s.start_offset,
        effective_start_offset: effective,
        next_delivered_offset: s.next_delivered(),
        delivery_complete_count: s.delivery_complete_count,
        lag,
        state: ShareGroupState::Unaffected,
        lost: ShareLost::default(),
        lost_offsets: ShareLost::default(),
        records_skipped: 0,
        skipped_offsets: Vec::new(),
        in_flight: s.batches.clone(),
        detail: String::new(),
    };
    let where_ = format!(
        "__share_group_state-{} offset {}",
        s.state_partition, s.log_offset
    );
    if let Some(why) = &s.unreadable {
        out.state = ShareGroupState::Unreadable;
        out.detail =
            format!("the group's state does not read ({why}): where it resumes is unknown");
        return out;
    }
    let Some(eff) = effective else {
        out.state = ShareGroupState::Uninitialized;
        out.detail = format!(
            "the group's state has no start offset ({where_}): it starts by share.auto.offset.reset"
        );
        return out;
    };
    // a state a leader wrote after the lost records' epochs is about the new log
    let newest_lost = loss
        .batches
        .iter()
        .map(|b| b.batch.partition_leader_epoch)
        .max();
    if newest_lost.is_some_and(|e| s.leader_epoch > e) {
        out.detail = format!(
            "its state ({where_}) was written by the leader of epoch {}, after the lost records' epochs: it is about the new log; unaffected",
            s.leader_epoch
        );
        return out;
    }
    // the lost records by what the group had done with them
    for lb in loss.batches.iter().filter(|b| lost_data(&b.batch)) {
        let b = &lb.batch;
        let hi = b.last_offset.saturating_add(1);
        for (a, z, cat) in share_pieces(s, lb.from, hi) {
            let n = b.records_in(a, z).max(0) as u64;
            if n == 0 {
                continue;
            }
            let (count, ranges) = match cat {
                ShareCat::Done | ShareCat::In(DeliveryState::Acknowledged) => (
                    &mut out.lost.acknowledged,
                    &mut out.lost_offsets.acknowledged,
                ),
                ShareCat::In(DeliveryState::Archived) => {
                    (&mut out.lost.archived, &mut out.lost_offsets.archived)
                }
                ShareCat::In(DeliveryState::Acquired) => {
                    (&mut out.lost.acquired, &mut out.lost_offsets.acquired)
                }
                ShareCat::In(DeliveryState::Available) => {
                    (&mut out.lost.available, &mut out.lost_offsets.available)
                }
                ShareCat::Gap => (
                    &mut out.lost.not_delivered,
                    &mut out.lost_offsets.not_delivered,
                ),
                ShareCat::In(DeliveryState::Unknown) => {
                    (&mut out.lost.other, &mut out.lost_offsets.other)
                }
            };
            *count += n;
            push_range(ranges, a, z);
        }
    }
    // what of the new lineage it will never deliver: below its effective
    // start, and the batches it had finished past it
    if let Some(f) = first_lost {
        if eff > f {
            push_range(&mut out.skipped_offsets, f, eff);
        }
        for b in s.batches.iter().filter(|b| b.state.terminal()) {
            let a = b.first_offset.max(f).max(eff);
            let z = b.last_offset.saturating_add(1);
            if a < z {
                push_range(&mut out.skipped_offsets, a, z);
            }
        }
    }
    out.records_skipped = out
        .skipped_offsets
        .iter()
        .filter(|(a, _)| *a < end)
        .map(|&(a, z)| (ctx.count)(a, z.min(end)))
        .sum();
    let future: i64 = out
        .skipped_offsets
        .iter()
        .map(|&(a, z)| z.saturating_sub(a.max(end)).max(0))
        .sum();
    let l = &out.lost;
    let delivered = l.acknowledged + l.archived + l.acquired + l.available + l.other;
    let given = format!(
        "of the lost records it had acknowledged {}, archived {}, acquired {}, released or timed out {}, never been given {}",
        l.acknowledged, l.archived, l.acquired, l.available, l.not_delivered
    );
    let start_text = if eff == s.start_offset {
        format!("start offset {}", s.start_offset)
    } else {
        format!(
            "start offset {} (Kafka starts at {eff} once it loads the state: the batches between are finished)",
            s.start_offset
        )
    };
    let lag_text = match lag {
        Some(x) if x < 0 => format!("; Kafka's lag {x} is negative, so its tools show none"),
        _ => String::new(),
    };
    let next = out.next_delivered_offset.unwrap_or(eff);
    let then = if next == eff {
        String::new()
    } else {
        format!(", then from {next}")
    };
    if eff > end {
        out.state = ShareGroupState::PastLogEnd;
        out.detail = format!(
            "{start_text}, past the new log end {end}: a share fetch there is answered OFFSET_OUT_OF_RANGE and Kafka moves a share-partition start offset only forward to the log start, so the group is given nothing until the log reaches {eff}{then}; it never delivers the new leader's {} from the divergence, nor, of the records written next, the {future} that take offsets below {eff} or that it had finished; {given}{lag_text}",
            records_text(out.records_skipped),
        );
    } else if !out.skipped_offsets.is_empty() {
        out.state = ShareGroupState::Skips;
        out.detail = format!(
            "{start_text}, inside the new log past the divergence: it is given the new log from {next} and never delivers the new leader's {} below its start offset and in the batches it had finished{}; {given}{lag_text}",
            records_text(out.records_skipped),
            if future > 0 {
                format!(", nor, of the records written next, the {future} that take offsets it had finished")
            } else {
                String::new()
            },
        );
    } else if delivered > 0 {
        out.state = ShareGroupState::InFlightLost;
        out.detail = format!(
            "{start_text}: the lost records it had been given and not finished are gone; the new leader's records at those offsets are delivered in their place, with the old delivery counts; {given}"
        );
    } else {
        out.detail = format!(
            "{start_text}, at or before the first lost offset, and none of the lost records given to it: unaffected"
        );
    }
    out
}

fn at(f: Fetch) -> Option<i64> {
    match f {
        Fetch::At(p) => Some(p),
        Fetch::Fails(_) => None,
    }
}

fn err(f: Fetch) -> Option<&'static str> {
    match f {
        Fetch::At(_) => None,
        Fetch::Fails(e) => Some(e),
    }
}

/// `COMMIT` or `ABORT` for a transaction marker, else `None`.
fn marker_name(t: Option<&ControlType>) -> Option<&'static str> {
    match t {
        Some(ControlType::Commit) => Some("COMMIT"),
        Some(ControlType::Abort) => Some("ABORT"),
        _ => None,
    }
}

fn committed_state(s: &str) -> bool {
    matches!(s, "PrepareCommit" | "CompleteCommit")
}

fn transactions(out: &mut PartitionImpact, loss: &PartitionLoss, ctx: &ImpactContext<'_>) {
    let state = match &ctx.producers {
        Ok(s) => *s,
        Err(why) => {
            out.transactions_unknown = Some(why.clone());
            return;
        }
    };
    let coordinator = ctx.coordinator.as_ref().ok();
    if let Err(why) = &ctx.coordinator {
        out.transactions_unknown = Some(format!(
            "the coordinator's view is unknown ({why}): an open transaction whose marker was not seen cut is reported as open-unknown"
        ));
    }
    let open: Vec<(i64, i16, i64)> = state
        .producers
        .values()
        .filter_map(|p| {
            p.txn_first_offset
                .map(|f| (p.producer_id, p.producer_epoch, f))
        })
        .filter(|(_, _, f)| *f < ctx.log_end)
        .collect();
    let lso = open
        .iter()
        .map(|(_, _, f)| *f)
        .min()
        .map_or(ctx.log_end, |f| f.min(ctx.log_end))
        .max(ctx.log_start);
    out.last_stable_offset = Some(lso);
    for (pid, epoch, first) in open {
        // the marker of this transaction on a lost lineage
        let cut = loss.batches.iter().find(|lb| {
            lb.batch.is_control && lb.batch.producer_id == pid && lb.batch.base_offset > first
        });
        let marker_name = cut.and_then(|lb| marker_name(ctx.markers.get(&lb.batch.base_offset)));
        let coord = coordinator.and_then(|c| c.get(&pid));
        let listed = |t: &CoordinatorTxn| {
            t.producer_epoch == epoch
                && t.partitions
                    .iter()
                    .any(|(tp, ps)| tp == &out.topic && ps.contains(&out.partition))
        };
        // A coordinator that still lists the partition will act: in a
        // Prepare state it (re)sends the marker to the current leader, in
        // Ongoing it completes or times the transaction out. One that has
        // finished (Complete*, Empty), forgot the producer, or moved to
        // another epoch sends nothing: the transaction hangs.
        let coord_open = coord.is_some_and(|t| {
            listed(t)
                && matches!(
                    t.state.as_str(),
                    "Ongoing" | "PrepareCommit" | "PrepareAbort" | "PrepareEpochFence"
                )
        });
        let st = if coord_open {
            TxnOutcome::Open
        } else if coordinator.is_some() || marker_name.is_some() {
            TxnOutcome::Hanging
        } else {
            TxnOutcome::OpenUnknown
        };
        let records = (ctx.count_producer)(pid, first, ctx.log_end);
        let hides = marker_name == Some("COMMIT")
            || (marker_name.is_none() && coord.is_some_and(|t| committed_state(&t.state)));
        let remedy = (st == TxnOutcome::Hanging).then(|| {
            format!(
                "kafka-transactions.sh --bootstrap-server BROKER abort --topic {} --partition {} --start-offset {first}",
                out.topic, out.partition
            )
        });
        let cut_text = marker_name.map(|m| {
            format!(
                "its {m} marker (offset {}) is cut",
                cut.map_or(-1, |c| c.batch.base_offset)
            )
        });
        let coord_text = match coord {
            Some(t) if coord_open => format!(
                "the coordinator has it {} ({}) and will write its marker to the new leader",
                t.state, t.transactional_id
            ),
            Some(t) => format!(
                "the coordinator has it {} ({}): no marker will come",
                t.state, t.transactional_id
            ),
            None if coordinator.is_some() => {
                "the coordinator has no transaction for this producer: no marker will come"
                    .to_string()
            }
            None => "the coordinator's state is not in the capture".to_string(),
        };
        let why = match cut_text {
            Some(c) => format!("{c}; {coord_text}"),
            None => coord_text,
        };
        let detail = match st {
            TxnOutcome::Hanging => format!(
                "transaction of producer {pid} (epoch {epoch}) is open on the new leader from offset {first} and hangs: {why}; read_committed consumers stop at {lso} until it is aborted{}",
                if hides { format!("; aborting hides its {}, which the transaction had committed", records_text(records)) } else { String::new() }
            ),
            TxnOutcome::Open => format!("transaction of producer {pid} is open from offset {first}; {why}"),
            TxnOutcome::OpenUnknown => format!("transaction of producer {pid} is open from offset {first}; {why}: it may hang"),
            TxnOutcome::Lost => unreachable!(),
        };
        out.transactions.push(TxnImpact {
            producer_id: pid,
            producer_epoch: epoch,
            transactional_id: coord.map(|t| t.transactional_id.clone()),
            first_offset: first,
            state: st,
            lso: Some(lso),
            marker_cut: marker_name,
            marker_cut_offset: cut.map(|c| c.batch.base_offset),
            coordinator_state: coord.map(|t| t.state.clone()),
            records,
            abort_hides_committed: hides,
            remedy,
            detail,
        });
    }
    // transactions whose data on the lost lineage is lost with their marker
    let mut lost: BTreeMap<i64, (i16, i64, u64, Option<&'static str>)> = BTreeMap::new();
    for lb in &loss.batches {
        let b = &lb.batch;
        if !b.is_transactional || b.producer_id < 0 {
            continue;
        }
        if out
            .transactions
            .iter()
            .any(|t| t.producer_id == b.producer_id)
        {
            continue;
        }
        let e = lost
            .entry(b.producer_id)
            .or_insert((b.producer_epoch, lb.from, 0, None));
        if b.is_control {
            e.3 = marker_name(ctx.markers.get(&b.base_offset)).or(e.3);
        } else {
            e.2 += b.records_in(lb.from, i64::MAX).max(0) as u64;
        }
    }
    for (pid, (epoch, first, records, marker)) in lost {
        if records == 0 {
            continue;
        }
        let coord = coordinator.and_then(|c| c.get(&pid));
        out.transactions.push(TxnImpact {
            producer_id: pid,
            producer_epoch: epoch,
            transactional_id: coord.map(|t| t.transactional_id.clone()),
            first_offset: first,
            state: TxnOutcome::Lost,
            lso: Some(lso),
            marker_cut: marker,
            marker_cut_offset: None,
            coordinator_state: coord.map(|t| t.state.clone()),
            records,
            abort_hides_committed: false,
            remedy: None,
            detail: format!(
                "{records} transactional records of producer {pid} from offset {first} are lost{}",
                match marker {
                    Some("COMMIT") => " with their COMMIT marker: a committed transaction is gone",
                    Some(_) => " with their ABORT marker (they were never visible to read_committed consumers)",
                    None => "",
                }
            ),
        });
    }
}

fn producers(
    out: &mut PartitionImpact,
    loss: &PartitionLoss,
    first_lost: Option<i64>,
    ctx: &ImpactContext<'_>,
) {
    let state = match &ctx.producers {
        Ok(s) => *s,
        Err(why) => {
            out.producers_unknown = Some(why.clone());
            return;
        }
    };
    // per producer: (epoch, last sequence, records, transactional) of its
    // last lost data batch by offset
    let mut cut: BTreeMap<i64, (i16, i32, u64, bool)> = BTreeMap::new();
    for lb in &loss.batches {
        let b = &lb.batch;
        if b.is_control || b.producer_id < 0 || b.base_sequence < 0 {
            continue;
        }
        let last = crate::format::record::increment_sequence(
            b.base_sequence,
            i32::try_from(b.last_offset - b.base_offset).unwrap_or(i32::MAX),
        );
        let n = b.records_in(lb.from, i64::MAX).max(0) as u64;
        let e = cut
            .entry(b.producer_id)
            .or_insert((b.producer_epoch, last, 0, b.is_transactional));
        e.0 = b.producer_epoch;
        e.1 = last;
        e.2 += n;
    }
    for (pid, (epoch, last_cut, records, txn)) in cut {
        let kept = state.producers.get(&pid);
        let (st, error, detail) = match kept {
            Some(k) if first_lost.is_some_and(|f| k.last_offset >= f) => (
                "sent-again",
                None,
                format!("producer {pid} has already written to the new leader (offset {}): its sequence error, if any, has happened", k.last_offset),
            ),
            Some(k) if k.producer_epoch > epoch => (
                "fenced",
                Some("INVALID_PRODUCER_EPOCH"),
                format!("the new leader holds producer {pid} at a later epoch {}", k.producer_epoch),
            ),
            Some(k) if k.producer_epoch == epoch && k.last_sequence >= 0 => (
                "sequence-gap",
                Some("OUT_OF_ORDER_SEQUENCE_NUMBER"),
                format!(
                    "the new leader holds producer {pid} at sequence {}; its next batch carries {}: OUT_OF_ORDER_SEQUENCE_NUMBER (a client since Kafka 2.5 bumps its epoch and resends from 0 with no error to the application: the {} of sequences {}..{} {} not resent)",
                    k.last_sequence,
                    crate::format::record::increment_sequence(last_cut, 1),
                    records_text(records),
                    crate::format::record::increment_sequence(k.last_sequence, 1),
                    last_cut,
                    if records == 1 { "is" } else { "are" }
                ),
            ),
            Some(k) => (
                "sequence-gap",
                Some("OUT_OF_ORDER_SEQUENCE_NUMBER"),
                format!(
                    "the new leader holds producer {pid} at epoch {}, its next batch has epoch {epoch} and a sequence other than 0",
                    k.producer_epoch
                ),
            ),
            None => (
                "unknown-to-leader",
                None,
                format!(
                    "the new leader holds no state for producer {pid}: its next batch (sequence {}) is accepted and the gap of {} goes undetected",
                    crate::format::record::increment_sequence(last_cut, 1),
                    records_text(records)
                ),
            ),
        };
        out.producers.push(ProducerImpact {
            producer_id: pid,
            producer_epoch: epoch,
            transactional: txn,
            last_sequence_kept: kept.map(|k| k.last_sequence).filter(|s| *s >= 0),
            last_sequence_cut: last_cut,
            records_lost: records,
            expected_error: error,
            state: st,
            detail,
        });
    }
}

fn config(
    topic: &str,
    _partition: i32,
    loss: &PartitionLoss,
    ctx: &ImpactContext<'_>,
) -> Vec<ConfigImpact> {
    let facts = match &ctx.configs {
        Ok(f) => *f,
        Err(why) => {
            return [
                "unclean.leader.election.enable",
                "min.insync.replicas",
                "replica.lag.time.max.ms",
            ]
            .into_iter()
            .map(|n| ConfigImpact {
                name: n.to_string(),
                value: None,
                source: "unknown",
                metadata_offset: None,
                effect: format!("unknown: {why}"),
            })
            .collect();
        }
    };
    let effective = |name: &str| -> (Option<String>, &'static str, Option<i64>) {
        let topic_level = facts
            .iter()
            .rev()
            .find(|f| f.scope == "topic" && f.resource == topic && f.name == name);
        if let Some(f) = topic_level {
            return (f.value.clone(), "topic", Some(f.metadata_offset));
        }
        let cluster = facts
            .iter()
            .rev()
            .find(|f| f.scope == "broker" && f.resource.is_empty() && f.name == name);
        match cluster {
            Some(f) => (f.value.clone(), "cluster", Some(f.metadata_offset)),
            None => (None, "unknown", None),
        }
    };
    let mut out = Vec::new();
    let unclean = ctx.history.and_then(|h| {
        h.changes
            .iter()
            .rev()
            .find(|e| e.unclean && e.leader == ctx.leader)
    });
    let (v, src, off) = effective("unclean.leader.election.enable");
    let effect = match (unclean, v.as_deref()) {
        (Some(e), Some("true")) => format!(
            "let broker {}, outside the ISR, become leader (epoch {}, metadata offset {})",
            e.leader, e.leader_epoch, e.metadata_offset
        ),
        (Some(e), _) => format!(
            "broker {} was elected from outside the ISR (epoch {}, metadata offset {}) although the metadata log does not set this to true: an election forced with kafka-leader-election --election-type unclean, or a static broker setting",
            e.leader, e.leader_epoch, e.metadata_offset
        ),
        (None, _) if v.is_none() => "not set in the metadata log: a static broker setting or Kafka's default (false) applies, which the capture does not hold".to_string(),
        (None, _) => "no unclean election of this leader is recorded".to_string(),
    };
    out.push(ConfigImpact {
        name: "unclean.leader.election.enable".into(),
        value: v,
        source: src,
        metadata_offset: off,
        effect,
    });
    let (v, src, off) = effective("min.insync.replicas");
    let rf = ctx.history.map(|h| h.replicas.len());
    // the smallest ISR the metadata log records while the lost records' epochs led
    let epochs: BTreeSet<i32> = loss.leader_epochs.iter().map(|e| e.leader_epoch).collect();
    let smallest = ctx.history.and_then(|h| {
        h.changes
            .iter()
            .filter(|e| epochs.contains(&e.leader_epoch))
            .min_by_key(|e| e.isr.len())
    });
    let effect = match (v.as_deref(), rf, smallest) {
        (Some(m), Some(rf), Some(e)) if m.parse::<usize>().is_ok_and(|m| m < rf) && e.isr.len() < rf => format!(
            "min.insync.replicas={m} with replication factor {rf} let the leader acknowledge acks=all writes with an ISR of {} ({:?} from metadata offset {})",
            e.isr.len(), e.isr, e.metadata_offset
        ),
        (Some(m), Some(rf), _) => format!("min.insync.replicas={m} with replication factor {rf}"),
        (None, _, _) => "not set in the metadata log: a static broker setting or Kafka's default (1) applies, which the capture does not hold".to_string(),
        (Some(m), None, _) => format!("min.insync.replicas={m}; the replication factor is unknown"),
    };
    out.push(ConfigImpact {
        name: "min.insync.replicas".into(),
        value: v,
        source: src,
        metadata_offset: off,
        effect,
    });
    if let Some(rf) = rf {
        out.push(ConfigImpact {
            name: "replication.factor".into(),
            value: Some(rf.to_string()),
            source: "replicas",
            metadata_offset: ctx
                .history
                .and_then(|h| h.changes.first())
                .map(|e| e.metadata_offset),
            effect: format!(
                "{rf} replicas: {:?}",
                ctx.history.map(|h| h.replicas.clone()).unwrap_or_default()
            ),
        });
    }
    let (v, src, off) = effective("replica.lag.time.max.ms");
    out.push(ConfigImpact {
        name: "replica.lag.time.max.ms".into(),
        effect: if v.is_none() {
            "not set in the metadata log: a static broker setting (server.properties, not part of a log directory) or Kafka's default (30000) applies".into()
        } else {
            "how long a follower may lag before it leaves the ISR".into()
        },
        value: v,
        source: src,
        metadata_offset: off,
    });
    if let Some(f) = facts
        .iter()
        .rev()
        .find(|f| f.scope == "feature" && f.name == "eligible.leader.replicas.version")
    {
        let on = f.value.as_deref().is_some_and(|v| v != "0");
        out.push(ConfigImpact {
            name: "eligible.leader.replicas.version".into(),
            value: f.value.clone(),
            source: "feature",
            metadata_offset: Some(f.metadata_offset),
            effect: if on {
                "ELR on (KIP-966): replicas that left the ISR with the high watermark may still be elected cleanly".into()
            } else {
                "ELR off".into()
            },
        });
    } else {
        out.push(ConfigImpact {
            name: "eligible.leader.replicas.version".into(),
            value: None,
            source: "unknown",
            metadata_offset: None,
            effect: "no FeatureLevelRecord in the metadata log read: ELR off unless set by a snapshot the capture does not replay".into(),
        });
    }
    out
}

/// `n records`, `1 record`.
fn records_text(n: u64) -> String {
    crate::format::text::count(n, "record", "records")
}

#[cfg(test)]
mod tests {
    //! The rules on small hand-made facts, one per case Kafka's code
    //! distinguishes (the real-Kafka checks are in tests/it/kafka_impact.rs).
    use super::*;
    use crate::model::impact::ShareBatch;
    use crate::model::loss::{LostBatch, LostRange, Verdict};
    use crate::model::records::Committed;
    use crate::model::{GroupCommit, ProducerView};

    fn batch(
        base: i64,
        last: i64,
        epoch: i32,
        pid: i64,
        seq: i32,
        control: bool,
        txn: bool,
    ) -> BatchSummary {
        BatchSummary {
            base_offset: base,
            last_offset: last,
            partition_leader_epoch: epoch,
            crc: 0,
            record_count: i32::try_from(last - base + 1).unwrap_or(0),
            is_control: control,
            is_transactional: txn,
            first_timestamp: 1000 + base,
            max_timestamp: 1000 + last,
            producer_id: pid,
            producer_epoch: 0,
            base_sequence: seq,
        }
    }

    /// Offsets [100, 120) of epoch 0 are lost (held by broker 1); the new
    /// leader 3 wrote epoch 1 from 100 to 110.
    fn loss(batches: Vec<BatchSummary>) -> PartitionLoss {
        let records: u64 = batches
            .iter()
            .filter(|b| !b.is_control)
            .map(|b| (b.last_offset - b.base_offset + 1) as u64)
            .sum();
        PartitionLoss {
            records,
            control_records: 0,
            offsets: vec![LostRange {
                start: 100,
                end: 120,
                records,
                control_records: 0,
                leader_epoch: 0,
                held_by: vec![1],
                committed: Committed::Proven,
            }],
            held_by: vec![1],
            committed_proven: records,
            committed_possible: Some(records),
            committed_unknown: 0,
            verdict: Verdict::CommittedLost,
            unknown: vec![],
            leader_epochs: vec![],
            producers: vec![],
            first_timestamp: None,
            last_timestamp: None,
            replicas_not_captured: vec![],
            evidence: vec![],
            batches: batches
                .into_iter()
                .map(|b| LostBatch {
                    from: b.base_offset,
                    batch: b,
                    held_by: vec![1],
                    proven_to: 120,
                    possible: Committed::Proven,
                })
                .collect(),
        }
    }

    fn commit(group: &str, offset: i64, epoch: Option<i32>) -> LatestCommit {
        LatestCommit {
            group: group.into(),
            commit: Some(GroupCommit {
                group: group.into(),
                topic: "t".into(),
                partition: 0,
                offset,
                leader_epoch: epoch,
                commit_timestamp: 5,
                broker: 2,
                file: "f".into(),
                position: 0,
            }),
            broker: 2,
            offsets_partition: 0,
            log_offset: 9,
            unreadable: None,
        }
    }

    fn run(
        loss: &PartitionLoss,
        commits: &[LatestCommit],
        state: &ProducerStateView,
        coord: Result<&BTreeMap<i64, CoordinatorTxn>, String>,
        markers: &BTreeMap<i64, ControlType>,
    ) -> PartitionImpact {
        run_shares(loss, commits, state, coord, markers, &[])
    }

    fn run_shares(
        loss: &PartitionLoss,
        commits: &[LatestCommit],
        state: &ProducerStateView,
        coord: Result<&BTreeMap<i64, CoordinatorTxn>, String>,
        markers: &BTreeMap<i64, ControlType>,
        shares: &[SharePartitionState],
    ) -> PartitionImpact {
        let epochs = [EpochStart::new(0, 0), EpochStart::new(1, 100)];
        let protocols = BTreeMap::new();
        let count = |a: i64, b: i64| (b - a).max(0) as u64;
        let count_producer = |_: i64, a: i64, b: i64| (b - a).max(0) as u64;
        let ctx = ImpactContext {
            leader: 3,
            log_start: 0,
            log_end: 110,
            epochs: &epochs,
            logs: &[],
            commits: Ok(commits),
            protocols: &protocols,
            shares: Ok(shares),
            producers: Ok(state),
            coordinator: coord,
            markers,
            configs: Err("no metadata log".into()),
            history: None,
            count: &count,
            count_producer: &count_producer,
        };
        partition_impact("t", 0, loss, &ctx)
    }

    #[test]
    fn group_states_follow_the_consumer() {
        let l = loss(vec![batch(100, 119, 0, -1, -1, false, false)]);
        let commits = [
            commit("behind", 90, Some(0)),
            commit("diverged", 115, Some(0)),
            commit("past-no-epoch", 120, None),
            commit("skip", 105, None),
            commit("epoch-ahead", 105, Some(7)),
        ];
        let i = run(
            &l,
            &commits,
            &ProducerStateView::default(),
            Err("none".into()),
            &BTreeMap::new(),
        );
        let g = |n: &str| i.groups.iter().find(|g| g.group == n).unwrap();
        assert_eq!(g("behind").state, GroupState::Unaffected);
        assert_eq!(g("behind").next_fetch_offset.none, Some(90));
        let d = g("diverged");
        assert_eq!(d.state, GroupState::Diverged);
        assert_eq!(
            (
                d.next_fetch_offset.earliest,
                d.next_fetch_offset.latest,
                d.next_fetch_offset.none
            ),
            (Some(100), Some(100), None)
        );
        assert_eq!(d.error.none, Some("LogTruncationException"));
        assert_eq!(d.phantom_records, 15);
        assert_eq!(d.phantom_offsets, vec![(100, 115)]);
        let p = g("past-no-epoch");
        assert_eq!(p.state, GroupState::PastLogEnd);
        assert_eq!(
            (p.next_fetch_offset.earliest, p.next_fetch_offset.latest),
            (Some(0), Some(110))
        );
        assert_eq!(p.error.none, Some("OffsetOutOfRangeException"));
        assert_eq!(
            (p.records_reread.earliest, p.records_skipped.latest),
            (Some(100), Some(10))
        );
        let s = g("skip");
        assert_eq!(s.state, GroupState::SilentSkip);
        assert_eq!(s.next_fetch_offset.none, Some(105));
        assert_eq!(s.records_skipped.none, Some(5));
        // an epoch above every epoch the new leader has: undefined, reset
        let e = g("epoch-ahead");
        assert_eq!(e.state, GroupState::EpochUnknown);
        assert_eq!(
            (e.next_fetch_offset.earliest, e.next_fetch_offset.latest),
            (Some(0), Some(110))
        );
        assert_eq!(i.affected, Some(true));
    }

    fn coordinator(
        state: &str,
        partitions: Vec<(String, Vec<i32>)>,
    ) -> BTreeMap<i64, CoordinatorTxn> {
        BTreeMap::from([(
            7,
            CoordinatorTxn {
                transactional_id: "tx".into(),
                producer_id: 7,
                producer_epoch: 0,
                state: state.into(),
                partitions,
                last_update_timestamp: 1,
                broker: 2,
                log_offset: 3,
            },
        )])
    }

    fn open_txn() -> ProducerStateView {
        let mut s = ProducerStateView::default();
        s.producers.insert(
            7,
            ProducerView {
                producer_id: 7,
                producer_epoch: 0,
                last_sequence: 4,
                last_offset: 99,
                txn_first_offset: Some(95),
                last_timestamp: 1,
            },
        );
        s
    }

    #[test]
    fn transaction_hangs_unless_the_coordinator_still_lists_it() {
        let l = loss(vec![batch(100, 100, 0, 7, -1, true, true)]);
        let markers = BTreeMap::from([(100, ControlType::Commit)]);
        // the marker is cut and the coordinator has completed: hanging
        let c = coordinator("CompleteCommit", vec![]);
        let i = run(&l, &[], &open_txn(), Ok(&c), &markers);
        let t = &i.transactions[0];
        assert_eq!(
            (t.state, t.first_offset, t.lso, t.marker_cut),
            (TxnOutcome::Hanging, 95, Some(95), Some("COMMIT"))
        );
        assert!(t.abort_hides_committed);
        assert!(t.remedy.as_deref().unwrap().ends_with("--start-offset 95"));
        // the coordinator is still in PrepareCommit with the partition: it
        // sends the marker to the new leader
        let c = coordinator("PrepareCommit", vec![("t".into(), vec![0])]);
        let i = run(&l, &[], &open_txn(), Ok(&c), &markers);
        assert_eq!(i.transactions[0].state, TxnOutcome::Open);
        // no coordinator view and no cut marker: cannot tell
        let l = loss(vec![batch(100, 119, 0, -1, -1, false, false)]);
        let i = run(
            &l,
            &[],
            &open_txn(),
            Err("no __transaction_state".into()),
            &BTreeMap::new(),
        );
        assert_eq!(i.transactions[0].state, TxnOutcome::OpenUnknown);
        assert!(i.transactions_unknown.is_some());
    }

    #[test]
    fn producer_sequences() {
        // producer 5 lost sequences 10..29; producer 6 is unknown to the leader
        let l = loss(vec![
            batch(100, 109, 0, 5, 10, false, false),
            batch(110, 119, 0, 6, 3, false, false),
        ]);
        let mut s = ProducerStateView::default();
        s.producers.insert(
            5,
            ProducerView {
                producer_id: 5,
                producer_epoch: 0,
                last_sequence: 9,
                last_offset: 99,
                txn_first_offset: None,
                last_timestamp: 1,
            },
        );
        let i = run(&l, &[], &s, Err("none".into()), &BTreeMap::new());
        let p = |id: i64| i.producers.iter().find(|p| p.producer_id == id).unwrap();
        assert_eq!(
            (
                p(5).state,
                p(5).expected_error,
                p(5).last_sequence_kept,
                p(5).last_sequence_cut
            ),
            (
                "sequence-gap",
                Some("OUT_OF_ORDER_SEQUENCE_NUMBER"),
                Some(9),
                19
            )
        );
        assert_eq!(
            (p(6).state, p(6).expected_error, p(6).last_sequence_kept),
            ("unknown-to-leader", None, None)
        );
        // a producer that already wrote to the new leader after the loss
        s.producers.get_mut(&5).unwrap().last_offset = 105;
        let i = run(&l, &[], &s, Err("none".into()), &BTreeMap::new());
        assert_eq!(
            i.producers
                .iter()
                .find(|p| p.producer_id == 5)
                .unwrap()
                .state,
            "sent-again"
        );
    }

    fn share(group: &str, start: i64, batches: &[(i64, i64, i8, i16)]) -> SharePartitionState {
        SharePartitionState {
            group: group.into(),
            topic_id: [7; 16],
            partition: 0,
            start_offset: start,
            state_epoch: Some(1),
            leader_epoch: 0,
            snapshot_epoch: 0,
            delivery_complete_count: Some(2),
            batches: batches
                .iter()
                .map(|&(first, last, state, count)| ShareBatch {
                    first_offset: first,
                    last_offset: last,
                    state: DeliveryState::from_id(i64::from(state)),
                    state_id: state,
                    delivery_count: count,
                })
                .collect(),
            coordinator_broker: 2,
            state_partition: 0,
            log_offset: 4,
            unreadable: None,
        }
    }

    #[test]
    fn share_groups_follow_the_share_partition() {
        // [100, 120) lost (epoch 0); the new leader ends at 110
        let l = loss(vec![batch(100, 119, 0, -1, -1, false, false)]);
        let mut newer = share("new-lineage", 115, &[]);
        newer.leader_epoch = 1;
        let mut broken = share("unreadable", 90, &[]);
        broken.unreadable = Some("f:0: no".into());
        let shares = [
            // acknowledged to 114, then 115..116 released, 117 rejected
            share("past", 115, &[(115, 116, 0, 1), (117, 117, 4, 1)]),
            share("behind", 90, &[]),
            share("inside", 105, &[(105, 106, 2, 1), (107, 108, 0, 1)]),
            share("in-flight", 100, &[(100, 101, 0, 2), (102, 102, 1, 1)]),
            share("fresh", -1, &[]),
            newer,
            broken,
        ];
        let i = run_shares(
            &l,
            &[],
            &ProducerStateView::default(),
            Err("none".into()),
            &BTreeMap::new(),
            &shares,
        );
        let g = |n: &str| i.share_groups.iter().find(|g| g.group == n).unwrap();
        let p = g("past");
        assert_eq!(p.state, ShareGroupState::PastLogEnd);
        assert_eq!(
            (
                p.lost.acknowledged,
                p.lost.available,
                p.lost.archived,
                p.lost.not_delivered
            ),
            (15, 2, 1, 2)
        );
        assert_eq!(p.lost_offsets.acknowledged, vec![(100, 115)]);
        assert_eq!(p.lost_offsets.not_delivered, vec![(118, 120)]);
        // the new records 100..110 and the offsets 110..115 and 117 to come
        assert_eq!(p.skipped_offsets, vec![(100, 115), (117, 118)]);
        assert_eq!(p.records_skipped, 10);
        assert_eq!(p.next_delivered_offset, Some(115));
        // Kafka's lag against the new log end: 110 - 115 - 2
        assert_eq!(p.lag, Some(-7));
        assert_eq!(g("behind").state, ShareGroupState::Unaffected);
        let s = g("inside");
        // 105..106 acknowledged: the start moves to 107, an AVAILABLE batch
        assert_eq!(
            (s.state, s.effective_start_offset, s.next_delivered_offset),
            (ShareGroupState::Skips, Some(107), Some(107))
        );
        assert_eq!(s.skipped_offsets, vec![(100, 107)]);
        assert_eq!(s.records_skipped, 7);
        let f = g("in-flight");
        assert_eq!(f.state, ShareGroupState::InFlightLost);
        assert_eq!((f.lost.available, f.lost.acquired), (2, 1));
        assert!(f.skipped_offsets.is_empty());
        assert_eq!(g("fresh").state, ShareGroupState::Uninitialized);
        assert_eq!(g("new-lineage").state, ShareGroupState::Unaffected);
        assert_eq!(g("unreadable").state, ShareGroupState::Unreadable);
        assert_eq!(i.affected, Some(true));
        // an unreadable state alone leaves the partition unknown
        let i = run_shares(
            &l,
            &[],
            &ProducerStateView::default(),
            Err("none".into()),
            &BTreeMap::new(),
            &shares[6..],
        );
        assert_eq!(i.affected, None);
    }
}
