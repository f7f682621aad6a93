//! The transactions pipeline (`klf transactions`): per selected partition
//! one replica, the one `klf diff` takes as the reference (the broker
//! `--leader` names, else the leader at capture in the metadata log, else
//! the diff's own rule), read once from its log start to its end, batch
//! headers only (a marker's first record key for its type), folded as it
//! goes ([`crate::analysis::transactions`]); then the folds merged and set
//! beside the coordinator's `__transaction_state`.

use rayon::prelude::*;

use crate::analysis::diff::ReferenceHint;
use crate::analysis::transactions::{report, Folded, PartitionFold, ReplicaRead};
use crate::capture::producers::scan_sized;
use crate::capture::replica::replica_log_ends;
use crate::capture::transactions::{transaction_log, TransactionLogView, TRANSACTION_STATE};
use crate::engine::diff::{diff_partition_replicas, DiffRequest, ReadMode};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::model::diff::{DiffOptions, ReferenceReason};
use crate::model::transactions::TxnReport;
use crate::model::{Capture, Replica, ReplicaProblem};

/// A transactions run over a capture.
pub struct TxnRun<'c> {
    /// What it found.
    pub report: TxnReport,
    /// Problems met reading the partitions and `__transaction_state`.
    pub problems: Vec<ReplicaProblem>,
    /// The evidence used (the metadata log's problems are in it).
    pub evidence: Evidence<'c>,
}

/// The partitions of `capture` that `req` selects (every topic, internal
/// ones included: `__consumer_offsets` holds the markers of transactions
/// that commit offsets), in topic and partition order.
pub fn selected<'c>(
    capture: &'c Capture,
    req: &DiffRequest,
) -> Vec<(&'c (String, i32), &'c [Replica])> {
    capture
        .partitions
        .iter()
        .filter(|((t, p), reps)| {
            !reps.is_empty()
                && req.topic.as_ref().is_none_or(|x| x == t)
                && req.partition.is_none_or(|x| x == *p)
        })
        .map(|(k, reps)| (k, reps.as_slice()))
        .collect()
}

/// Reads the transactions of every partition `req` selects (its `leader`,
/// `topic`, `partition` and `protocol`; the mode is the diff's window,
/// used only to choose a reference among several replicas); `progress` is
/// called once per partition read (from worker threads).
pub fn transactions_capture<'c>(
    capture: &'c Capture,
    req: &DiffRequest,
    progress: &(dyn Fn() + Sync),
) -> TxnRun<'c> {
    let evidence = Evidence::gather(capture);
    let options = evidence.diff_options(req.protocol);
    let log = coordinator_log(&evidence);
    let wanted = selected(capture, req);
    let (folded, mut problems) = wanted
        .par_iter()
        .map(|((topic, partition), reps)| {
            let r = fold_partition(&evidence, &options, req, topic, *partition, reps);
            progress();
            r
        })
        .fold(
            || (Folded::default(), Vec::new()),
            |(acc, mut problems), (f, mut pr)| {
                problems.append(&mut pr);
                (acc.merge(f), problems)
            },
        )
        .reduce(
            || (Folded::default(), Vec::new()),
            |(a, mut pa), (b, mut pb)| {
                pa.append(&mut pb);
                (a.merge(b), pa)
            },
        );
    let coordinator = if log.topic_present {
        Ok((log.ids.as_slice(), log.trimmed.as_slice()))
    } else {
        Err("the capture holds no __transaction_state replica".to_string())
    };
    let report = report(folded, coordinator);
    problems.extend(log.problems);
    TxnRun {
        report,
        problems,
        evidence,
    }
}

/// The capture's `__transaction_state`, each partition read from its
/// leader at capture time when the metadata log names one.
pub fn coordinator_log(evidence: &Evidence<'_>) -> TransactionLogView {
    transaction_log(evidence.capture(), &|part| {
        evidence
            .history(TRANSACTION_STATE, part)
            .and_then(|h| h.current())
            .map(|e| e.leader)
            .filter(|l| *l >= 0)
    })
}

/// The replica of a partition a transactions run reads, and why: the
/// only one; the broker `--leader` names or the metadata log's leader at
/// capture, when it holds one; else the diff's reference (highest latest
/// epoch, then longest log).
pub fn reference(
    evidence: &Evidence<'_>,
    options: &DiffOptions,
    leader: Option<i32>,
    topic: &str,
    partition: i32,
    reps: &[Replica],
) -> (usize, &'static str) {
    if reps.len() == 1 {
        return (0, "only-replica");
    }
    let ids = broker_ids(reps);
    let hint = evidence.reference(leader, topic, partition);
    let named = match hint {
        ReferenceHint::Explicit { broker } => Some((broker, "explicit")),
        ReferenceHint::MetadataLeader { broker, .. } => Some((broker, "metadata-leader")),
        ReferenceHint::Auto => None,
    };
    if let Some((broker, why)) = named {
        if let Some(i) = ids.iter().position(|&b| b == broker) {
            return (i, why);
        }
    }
    let r = diff_partition_replicas(
        evidence,
        topic,
        partition,
        reps,
        hint,
        options,
        ReadMode::Window,
    );
    let chosen = r.diff.reference;
    let i = ids.iter().position(|&b| b == chosen.broker).unwrap_or(0);
    let why = match chosen.reason {
        ReferenceReason::Explicit => "explicit",
        ReferenceReason::MetadataLeader => "metadata-leader",
        ReferenceReason::HighestLatestEpoch => "highest-latest-epoch",
        ReferenceReason::LongestLog => "longest-log",
        ReferenceReason::Ambiguous | ReferenceReason::NoReplicas => "ambiguous",
    };
    (i, why)
}

fn fold_partition(
    evidence: &Evidence<'_>,
    options: &DiffOptions,
    req: &DiffRequest,
    topic: &str,
    partition: i32,
    reps: &[Replica],
) -> (Folded, Vec<ReplicaProblem>) {
    let (i, why) = reference(evidence, options, req.leader, topic, partition, reps);
    let replica = &reps[i];
    let broker = broker_ids(reps)[i];
    let ends = replica_log_ends(replica, broker, None, None);
    let mut fold = PartitionFold::new(topic, partition);
    let mut last_end: Option<i64> = None;
    let problems = scan_sized(replica, ends.log_start_offset, &mut |b, control, size| {
        fold.batch(b, control, size);
        let end = b.last_offset.saturating_add(1);
        last_end = Some(last_end.map_or(end, |e| e.max(end)));
        true
    });
    let last_segment_base = replica
        .segments
        .iter()
        .rev()
        .find(|s| s.log.is_some())
        .map(|s| s.base_offset);
    let ends = replica_log_ends(replica, broker, last_end, last_segment_base);
    let folded = fold.finish(ReplicaRead {
        broker,
        reference: why,
        log_start_offset: ends.log_start_offset,
        log_end_offset: ends.log_end_offset,
        high_watermark: ends.high_watermark,
    });
    (folded, problems)
}

/// Keeps of `report` what concerns the producers asked for (`producers`:
/// these producer ids; `transactional_id`: the producers of that id):
/// those producers, the partitions they wrote to (whole: their last
/// stable offset is every producer's), that id's coordinator record, the
/// odd markers of those producers. `None` for both keeps everything.
pub fn only_producers(
    report: &mut TxnReport,
    producers: Option<&[i64]>,
    transactional_id: Option<&str>,
) {
    if producers.is_none() && transactional_id.is_none() {
        return;
    }
    let keep = |pid: i64, id: Option<&str>| {
        producers.is_none_or(|ps| ps.contains(&pid))
            && transactional_id.is_none_or(|t| id == Some(t))
    };
    report
        .producers
        .retain(|p| keep(p.producer_id, p.transactional_id.as_deref()));
    let touched: std::collections::BTreeSet<(&str, i32)> = report
        .producers
        .iter()
        .flat_map(|p| p.partitions.iter().map(|r| (r.topic.as_str(), r.partition)))
        .collect();
    let kept: std::collections::BTreeSet<(String, i32)> = touched
        .into_iter()
        .map(|(t, p)| (t.to_string(), p))
        .collect();
    report
        .partitions
        .retain(|p| kept.contains(&(p.topic.clone(), p.partition)));
    let pids: Vec<i64> = report.producers.iter().map(|p| p.producer_id).collect();
    report.coordinator.retain(|c| {
        transactional_id.is_none_or(|t| c.transactional_id == t)
            && (transactional_id.is_some()
                || c.producers.iter().any(|p| pids.contains(&p.producer_id)))
    });
    report.odd_markers.retain(|m| pids.contains(&m.producer_id));
    report.odd_markers_total = report.odd_markers.len() as u64;
}
