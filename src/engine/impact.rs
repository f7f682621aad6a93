//! The impact pipeline: the diff of every selected partition, then for each
//! partition that loses records the consumer groups, transactions and
//! producers that loss hurts ([`crate::analysis::impact`]), from the
//! capture's `__consumer_offsets`, `__transaction_state`, the new leader's
//! producer snapshots and batches, and the metadata log.

use crate::model::ReplicaProblem;
use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::impact::{partition_impact, ImpactContext};
use crate::capture::groups::CONSUMER_OFFSETS;
use crate::capture::producers::{count_data_records, marker_at, producer_state, scan_batches};
use crate::capture::share_groups::{share_states, ShareStates, SHARE_GROUP_STATE};
use crate::capture::transactions::{coordinator_view, CoordinatorView, TRANSACTION_STATE};
use crate::engine::diff::{diff_capture, DiffRequest, DiffRun};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::model::diff::PartitionDiff;
use crate::model::impact::PartitionImpact;
use crate::model::loss::PartitionLoss;
use crate::model::{Capture, Replica, ReplicaLog};

/// An impact run over a capture.
pub struct ImpactRun<'c> {
    /// The diff the impact is computed from.
    pub diff: DiffRun<'c>,
    /// One per partition that loses records, in topic/partition order.
    pub partitions: Vec<PartitionImpact>,
    /// Problems met reading the coordinators' topics and the new leaders'
    /// producer state (the diff's own are in `diff`).
    pub problems: Vec<ReplicaProblem>,
}

/// Runs the diff of `req` over `capture`, then the impact of every loss.
pub fn impact_capture<'c>(
    capture: &'c Capture,
    req: &DiffRequest,
    progress: &(dyn Fn() + Sync),
) -> ImpactRun<'c> {
    let diff = diff_capture(capture, req, progress);
    let (partitions, mut problems) = impacts_of(&diff);
    if let Some(g) = diff.evidence.groups_read() {
        problems.extend(g.problems.iter().cloned());
    }
    ImpactRun {
        diff,
        partitions,
        problems,
    }
}

/// The impact of every loss of a diff run, with the problems met reading
/// `__transaction_state`, `__share_group_state` and the new leaders'
/// producer state (those of `__consumer_offsets` are the evidence's,
/// `Evidence::groups_read`).
pub fn impacts_of(diff: &DiffRun<'_>) -> (Vec<PartitionImpact>, Vec<ReplicaProblem>) {
    let mut problems = Vec::new();
    let mut coord_view: Option<CoordinatorView> = None;
    let mut partitions = Vec::new();
    let lost: BTreeSet<(String, i32)> = diff
        .partitions
        .iter()
        .filter(|p| p.loss.any())
        .map(|p| (p.diff.topic.clone(), p.diff.partition))
        .collect();
    // every lost partition's share groups, in one read of __share_group_state
    let shares = (!lost.is_empty()).then(|| {
        let s = share_groups(&diff.evidence, &lost);
        problems.extend(s.problems.iter().cloned());
        s
    });
    for p in &diff.partitions {
        if !p.loss.any() {
            continue;
        }
        let coord = coord_view.get_or_insert_with(|| {
            let v = coordinator(&diff.evidence);
            problems.extend(v.problems.iter().cloned());
            v
        });
        let Some(shares) = &shares else { continue };
        if let Some(i) = impact_with_shares(
            &diff.evidence,
            diff.replicas(p),
            &p.diff,
            &p.loss,
            &p.logs,
            coord,
            shares,
            &mut problems,
        ) {
            partitions.push(i);
        }
    }
    (partitions, problems)
}

/// The share groups' states of the partitions in `wanted`, each
/// `__share_group_state` partition read from its leader at capture time
/// when the metadata log names one.
pub fn share_groups(evidence: &Evidence<'_>, wanted: &BTreeSet<(String, i32)>) -> ShareStates {
    share_states(evidence.capture(), wanted, &|part| {
        leader_of(evidence, SHARE_GROUP_STATE, part)
    })
}

/// The capture's `__transaction_state` view, each partition read from
/// its leader at capture time when the metadata log names one.
pub fn coordinator(evidence: &Evidence<'_>) -> CoordinatorView {
    coordinator_view(evidence.capture(), &|part| {
        leader_of(evidence, TRANSACTION_STATE, part)
    })
}

fn leader_of(evidence: &Evidence<'_>, topic: &str, partition: i32) -> Option<i32> {
    evidence
        .history(topic, partition)
        .and_then(|h| h.current())
        .map(|e| e.leader)
        .filter(|l| *l >= 0)
}

/// The impact of one partition's loss, from its diff, loss and replica
/// logs; `replicas` are the partition's replicas in the capture, `coord`
/// the coordinator's view. `None` when the reference replica is not among
/// them. The partition's share groups are read from `__share_group_state`
/// for it alone ([`impact_with_shares`] takes them read for many).
pub fn impact_of(
    evidence: &Evidence<'_>,
    replicas: &[Replica],
    diff: &PartitionDiff,
    loss: &PartitionLoss,
    logs: &[ReplicaLog],
    coord: &CoordinatorView,
    problems: &mut Vec<ReplicaProblem>,
) -> Option<PartitionImpact> {
    let wanted = BTreeSet::from([(diff.topic.clone(), diff.partition)]);
    let shares = share_groups(evidence, &wanted);
    problems.extend(shares.problems.iter().cloned());
    impact_with_shares(
        evidence, replicas, diff, loss, logs, coord, &shares, problems,
    )
}

/// [`impact_of`] with the share groups' states already read (`shares`
/// holds the partition's, [`share_groups`]).
#[allow(clippy::too_many_arguments)]
pub fn impact_with_shares(
    evidence: &Evidence<'_>,
    replicas: &[Replica],
    diff: &PartitionDiff,
    loss: &PartitionLoss,
    logs: &[ReplicaLog],
    coord: &CoordinatorView,
    shares: &ShareStates,
    problems: &mut Vec<ReplicaProblem>,
) -> Option<PartitionImpact> {
    let ids = broker_ids(replicas);
    let leader = diff.reference.broker;
    let by_id =
        |b: i32| -> Option<&Replica> { ids.iter().position(|&i| i == b).map(|i| &replicas[i]) };
    let reference = by_id(leader)?;
    let rd = diff.replicas.iter().find(|r| r.broker == leader)?;
    let (log_start, log_end) = (rd.log_start_offset, rd.log_end_offset);
    let (state, pr) = producer_state(reference, log_end);
    problems.extend(pr);
    let commits_vec;
    let commits = if evidence.has_consumer_offsets() {
        commits_vec = evidence
            .groups()
            .latest_for(&diff.topic, diff.partition, &|part| {
                leader_of(evidence, CONSUMER_OFFSETS, part)
            });
        Ok(commits_vec.as_slice())
    } else {
        Err(
            "the capture holds no __consumer_offsets replica: the groups' commits cannot be read"
                .to_string(),
        )
    };
    let empty = BTreeMap::new();
    let protocols = evidence.groups_read().map_or(&empty, |g| &g.protocols);
    let share_state = if shares.unknown_ids.contains(&diff.topic) && shares.topic_present {
        Err(format!(
            "no replica of {} holds a partition.metadata: the share groups' states, kept by topic id, cannot be matched to it",
            diff.topic
        ))
    } else if !shares.topic_present {
        // Kafka creates __share_group_state with the first share group's
        // state: without it, a share group __consumer_offsets names is unknown
        let named: Vec<&str> = protocols
            .iter()
            .filter(|(_, k)| k.as_str() == "share")
            .map(|(g, _)| g.as_str())
            .collect();
        if named.is_empty() {
            Ok(&[][..])
        } else {
            Err(format!(
                "the capture holds no __share_group_state replica: the state of the share groups __consumer_offsets names ({}) cannot be read",
                named.join(", ")
            ))
        }
    } else {
        Ok(shares.for_partition(&diff.topic, diff.partition))
    };
    let coordinator = if coord.topic_present {
        Ok(&coord.by_producer)
    } else {
        Err("the capture holds no __transaction_state replica".to_string())
    };
    // the type of every lost marker, read from a replica holding it
    let mut markers = BTreeMap::new();
    for lb in loss.batches.iter().filter(|b| b.batch.is_control) {
        if let Some(m) = lb
            .held_by
            .iter()
            .find_map(|&b| by_id(b))
            .and_then(|r| marker_at(r, lb.batch.base_offset))
        {
            markers.insert(lb.batch.base_offset, m);
        }
    }
    let configs = match &evidence.controller {
        Some(c) => Ok(c.configs.as_slice()),
        None => Err("the capture holds no __cluster_metadata log".to_string()),
    };
    let count_problems = std::cell::RefCell::new(Vec::new());
    // Many groups ask for the same range (the log start to the divergence):
    // each range is read once.
    let counted = std::cell::RefCell::new(BTreeMap::<(i64, i64), u64>::new());
    let count = |a: i64, b: i64| {
        if let Some(n) = counted.borrow().get(&(a, b)) {
            return *n;
        }
        let (n, pr) = count_data_records(reference, a, b);
        count_problems.borrow_mut().extend(pr);
        counted.borrow_mut().insert((a, b), n);
        n
    };
    let count_producer = |pid: i64, a: i64, b: i64| {
        let mut n = 0u64;
        let pr = scan_batches(reference, a, b, &mut |s, control| {
            if control.is_none() && s.producer_id == pid {
                n += s.records_in(a, b).max(0) as u64;
            }
            true
        });
        count_problems.borrow_mut().extend(pr);
        n
    };
    let ctx = ImpactContext {
        leader,
        log_start,
        log_end,
        epochs: &rd.epoch_cache,
        logs,
        commits,
        protocols,
        shares: share_state,
        producers: Ok(&state),
        coordinator,
        markers: &markers,
        configs,
        history: evidence.history(&diff.topic, diff.partition),
        count: &count,
        count_producer: &count_producer,
    };
    let out = partition_impact(&diff.topic, diff.partition, loss, &ctx);
    problems.extend(count_problems.into_inner());
    Some(out)
}
