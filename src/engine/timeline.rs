//! The timeline pipeline: every replica of the selected partitions read
//! whole, its leader-epoch timeline from the batch headers beside its
//! `leader-epoch-checkpoint`, and the controller's history of the partition.

use rayon::prelude::*;

use crate::analysis::timeline::{timeline, Timeline};
use crate::capture::discover::Capture;
use crate::capture::replica::{load_replica, ReplicaProblem};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::model::PartitionHistory;

/// One partition's timelines.
#[derive(Debug, Clone)]
pub struct PartitionTimelines {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// One per replica, in broker order.
    pub replicas: Vec<Timeline>,
    /// The controller's history of the partition, if the capture has a
    /// metadata log that knows it.
    pub controller: Option<PartitionHistory>,
    /// Without it, why (no metadata log: a ZooKeeper-mode cluster, or not
    /// captured; or a log that does not know the partition).
    pub controller_missing: Option<String>,
    /// Problems met while reading.
    pub problems: Vec<ReplicaProblem>,
}

/// The timelines of every partition of `capture` that `topic` and
/// `partition` select (all when `None`); `progress` is called once per
/// replica read (from worker threads).
pub fn timelines(
    capture: &Capture,
    topic: Option<&str>,
    partition: Option<i32>,
    progress: &(dyn Fn() + Sync),
) -> Vec<PartitionTimelines> {
    let evidence = Evidence::gather(capture);
    let wanted: Vec<_> = capture
        .partitions
        .iter()
        .filter(|((t, p), _)| topic.is_none_or(|x| x == t) && partition.is_none_or(|x| x == *p))
        .collect();
    wanted
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
            PartitionTimelines {
                topic: t.clone(),
                partition: *p,
                replicas,
                controller: evidence.history(t, *p).cloned(),
                controller_missing: evidence.history_missing(t, *p),
                problems,
            }
        })
        .collect()
}
