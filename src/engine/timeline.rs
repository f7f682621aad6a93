//! The timeline pipeline: every replica of the selected partitions read
//! whole, its leader-epoch timeline from the batch headers beside its
//! `leader-epoch-checkpoint`, and the controller's history of the partition.

use crate::model::ReplicaProblem;
use rayon::prelude::*;

use crate::analysis::timeline::timeline;
use crate::capture::replica::load_replica;
use crate::engine::evidence::{broker_ids, Evidence};
use crate::format::names::METADATA_TOPIC;
use crate::model::timeline::PartitionTimelines;
use crate::model::{Capture, Replica};

/// The timelines of every partition of `capture` that `topic` and
/// `partition` select (all when `None`); `progress` is called once per
/// replica read (from worker threads).
pub fn timelines(
    capture: &Capture,
    topic: Option<&str>,
    partition: Option<i32>,
    progress: &(dyn Fn() + Sync),
) -> Timelines {
    let evidence = Evidence::gather_without_logs(capture);
    let wanted = selection(capture, topic, partition);
    let read: Vec<(PartitionTimelines, Vec<ReplicaProblem>)> = wanted
        .par_iter()
        .map(|((t, p), reps)| {
            let mut problems = Vec::new();
            let replicas = reps
                .iter()
                .zip(broker_ids(reps))
                .map(|(r, id)| {
                    let l = load_replica(r, id);
                    progress();
                    problems.extend(l.problems);
                    let mut tl = timeline(&l.log);
                    tl.recovery_point = r.recovery_point;
                    tl
                })
                .collect();
            let metadata = t == METADATA_TOPIC;
            let timelines = PartitionTimelines {
                topic: t.clone(),
                partition: *p,
                replicas,
                controller: if metadata {
                    None
                } else {
                    evidence.history(t, *p).cloned()
                },
                controller_missing: if metadata {
                    Some(METADATA_LOG_OWN.to_string())
                } else {
                    evidence.history_missing(t, *p)
                },
            };
            (timelines, problems)
        })
        .collect();
    let (partitions, problems) = read.into_iter().unzip();
    Timelines {
        partitions,
        problems,
        metadata_problems: evidence.controller.map(|c| c.problems).unwrap_or_default(),
    }
}

/// Every selected partition's timelines, and what the metadata log could
/// not give (the controller's histories lack it).
#[derive(Debug, Clone)]
pub struct Timelines {
    /// One per partition.
    pub partitions: Vec<PartitionTimelines>,
    /// Problems met while reading, one list per partition (the same
    /// order).
    pub problems: Vec<Vec<ReplicaProblem>>,
    /// Records of the metadata log that could not be read, with file and
    /// byte.
    pub metadata_problems: Vec<crate::model::ReadProblem>,
}

/// Why the metadata log's own timeline has no controller's view.
pub const METADATA_LOG_OWN: &str = "this is the metadata log itself: its leader epochs are the \
     KRaft controller quorum's, from its batches and leader-epoch-checkpoint (quorum-state \
     names the quorum's current leader)";

/// The partitions `topic` and `partition` select (all when `None`), each
/// with its replicas in broker order. The metadata log
/// (`__cluster_metadata-0`) is among them when `topic` names it, or when
/// nothing else is selected and no filter is given (a folder of the
/// metadata log alone).
pub fn selection<'c>(
    capture: &'c Capture,
    topic: Option<&str>,
    partition: Option<i32>,
) -> Vec<((String, i32), &'c [Replica])> {
    let mut wanted: Vec<((String, i32), &[Replica])> = capture
        .partitions
        .iter()
        .filter(|((t, p), _)| topic.is_none_or(|x| x == t) && partition.is_none_or(|x| x == *p))
        .map(|(k, reps)| (k.clone(), reps.as_slice()))
        .collect();
    let asked = topic == Some(METADATA_TOPIC) && partition.is_none_or(|p| p == 0);
    let alone = wanted.is_empty() && topic.is_none() && partition.is_none();
    if !capture.metadata_logs.is_empty() && (asked || alone) {
        wanted.push((
            (METADATA_TOPIC.to_string(), 0),
            capture.metadata_logs.as_slice(),
        ));
    }
    wanted
}
