//! The timeline pipeline: every replica of the selected partitions read
//! whole, its leader-epoch timeline from the batch headers beside its
//! `leader-epoch-checkpoint`, and the controller's history of the partition;
//! and the incident pipeline (`--incident`): the engine's diff of the
//! capture decides which partitions lose data, and each one's records of
//! the metadata log, epoch boundaries, checkpoint times and the nodes' log
//! lines are merged in time order.

use crate::model::ReplicaProblem;
use rayon::prelude::*;

use std::collections::BTreeSet;

use crate::analysis::incident::{infer_zones, partition_incident, IncidentInput};
use crate::analysis::timeline::{quorum_events, timeline};
use crate::capture::incident::{batch_position, checkpoint_times};
use crate::capture::replica::load_replica;
use crate::capture::vfs::read_small;
use crate::engine::diff::{diff_capture, DiffRequest, DiffRun, PartitionResult};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::format::names::METADATA_TOPIC;
use crate::format::props::{over_properties_cap, MAX_PROPERTIES_BYTES};
use crate::format::quorum_state::parse_quorum_state;
use crate::model::broker_log::LoggedEvent;
use crate::model::timeline::{
    EntrySource, EpochBoundary, NodeQuorumState, NodeZone, PartitionIncident, PartitionTimelines,
    QuorumHistory,
};
use crate::model::ControllerView;
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
                quorum: metadata.then(|| quorum_history(evidence.controller.as_ref(), reps)),
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

/// The quorum's history from the metadata log read (`controller`), and
/// each metadata log replica's `quorum-state`.
fn quorum_history(controller: Option<&ControllerView>, reps: &[Replica]) -> QuorumHistory {
    QuorumHistory {
        source: controller.and_then(|c| c.source.clone()),
        changes: controller
            .map(|c| quorum_events(&c.quorum))
            .unwrap_or_default(),
        states: reps
            .iter()
            .filter_map(|r| Some(node_quorum_state(r.node_id, r.quorum_state.as_ref()?)))
            .collect(),
    }
}

/// One node's `quorum-state`, or why it could not be read.
fn node_quorum_state(node: Option<i32>, file: &std::path::Path) -> NodeQuorumState {
    let mut out = NodeQuorumState {
        node,
        file: file.to_path_buf(),
        leader: None,
        leader_epoch: None,
        voted_for: None,
        voters: None,
        problem: None,
    };
    match read_small(file, MAX_PROPERTIES_BYTES) {
        Ok((Some(bytes), _)) => match parse_quorum_state(&bytes) {
            Ok(s) => {
                out.leader = s.leader;
                out.leader_epoch = s.leader_epoch;
                out.voted_for = s.voted_for;
                out.voters = s.voters;
            }
            Err(e) => out.problem = Some(e.reason.into_owned()),
        },
        Ok((None, len)) => out.problem = Some(over_properties_cap(len)),
        Err(e) => out.problem = Some(format!("cannot read: {e}")),
    }
    out
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

/// What `klf timeline --incident` tells.
#[derive(Debug, Clone, Default)]
pub struct IncidentRequest {
    /// Only this topic.
    pub topic: Option<String>,
    /// Only this partition number.
    pub partition: Option<i32>,
    /// Every partition compared, not only the ones that lose data (a
    /// partition named by both `topic` and `partition` is told whatever it
    /// loses).
    pub all: bool,
    /// The offsets from UTC given for nodes' logs (node, minutes east).
    pub utc_offsets: Vec<(i32, i32)>,
}

/// What the incident timelines of one run share: each node's offset from
/// UTC, and the node-wide statements of the logs (with their positions).
pub struct IncidentContext<'e> {
    /// Each node's offset from UTC, by node.
    pub zones: Vec<NodeZone>,
    node_wide: Vec<(usize, &'e LoggedEvent)>,
}

impl<'e> IncidentContext<'e> {
    /// The zones and node-wide statements of `evidence`'s logs, with the
    /// offsets the operator gave.
    pub fn new(evidence: &'e Evidence<'_>, given: &[(i32, i32)]) -> IncidentContext<'e> {
        let events: &[LoggedEvent] = evidence.logs().map_or(&[], |l| &l.read.events);
        IncidentContext {
            zones: infer_zones(events, evidence.controller.as_ref(), given),
            node_wide: events
                .iter()
                .enumerate()
                .filter(|(_, e)| e.event.partition().is_none())
                .collect(),
        }
    }

    /// The incident timeline of one partition the diff of `run` compared.
    pub fn partition(&self, run: &DiffRun<'_>, p: &PartitionResult) -> PartitionIncident {
        let evidence = &run.evidence;
        let (topic, partition) = (p.diff.topic.as_str(), p.diff.partition);
        let replicas = run.replicas(p);
        let ids = broker_ids(replicas);
        let history = evidence.history(topic, partition);
        let missing = evidence.history_missing(topic, partition);
        let mut nodes: BTreeSet<i32> = p.diff.replicas.iter().map(|r| r.broker).collect();
        nodes.extend(ids.iter().copied());
        if let Some(h) = history {
            nodes.extend(h.replicas.iter().copied());
        }
        let topic_id = replicas.iter().find_map(|r| {
            r.partition_metadata
                .as_deref()
                .and_then(|m| m.as_ref().ok())
                .map(|m| m.topic_id.0)
        });
        let mut boundaries = Vec::new();
        for (r, log) in p.diff.replicas.iter().zip(&p.logs) {
            let Some(replica) = replicas
                .iter()
                .zip(&ids)
                .find(|(_, &id)| id == r.broker)
                .map(|(rep, _)| rep)
            else {
                continue;
            };
            for c in &r.epoch_cache {
                let first = log.batches.iter().find(|b| {
                    b.partition_leader_epoch == c.epoch
                        && b.base_offset <= c.start_offset
                        && c.start_offset <= b.last_offset
                });
                let Some(b) = first else { continue };
                let (file, byte) = match batch_position(replica, b.base_offset) {
                    Some((f, at)) => (f, Some(at)),
                    None => (replica.dir.clone(), None),
                };
                boundaries.push(EpochBoundary {
                    broker: r.broker,
                    epoch: c.epoch,
                    offset: b.base_offset,
                    timestamp: b.first_timestamp,
                    source: EntrySource {
                        file,
                        line: None,
                        byte,
                    },
                });
            }
        }
        let checkpoints = replicas
            .iter()
            .zip(&ids)
            .flat_map(|(r, &id)| checkpoint_times(evidence.capture(), r, id))
            .collect();
        partition_incident(IncidentInput {
            topic,
            partition,
            topic_id,
            loss: Some(&p.loss),
            history,
            history_missing: missing.as_deref(),
            controller: evidence.controller.as_ref(),
            nodes,
            boundaries,
            checkpoints,
            logged: evidence
                .logs()
                .map(|l| l.for_partition_indexed(topic, partition))
                .unwrap_or_default(),
            node_wide: &self.node_wide,
            zones: &self.zones,
        })
    }
}

/// A run of `klf timeline --incident`.
pub struct IncidentRun<'c> {
    /// The diff the partitions were chosen by.
    pub diff: DiffRun<'c>,
    /// Each node's offset from UTC.
    pub zones: Vec<NodeZone>,
    /// The timelines told, in topic/partition order.
    pub partitions: Vec<PartitionIncident>,
    /// Partitions compared that lose data.
    pub losing: usize,
}

/// The incident timelines `req` asks for: the partitions of `capture` that
/// lose data as `klf diff` decides (every one compared with
/// [`IncidentRequest::all`]), each merged in time order. `progress` is
/// called once per partition diffed (from worker threads).
pub fn incident<'c>(
    capture: &'c Capture,
    req: &IncidentRequest,
    progress: &(dyn Fn() + Sync),
) -> IncidentRun<'c> {
    let diff = diff_capture(
        capture,
        &DiffRequest {
            topic: req.topic.clone(),
            partition: req.partition,
            ..DiffRequest::default()
        },
        progress,
    );
    let named = req.topic.is_some() && req.partition.is_some();
    let ctx = IncidentContext::new(&diff.evidence, &req.utc_offsets);
    let partitions: Vec<PartitionIncident> = diff
        .partitions
        .iter()
        .filter(|p| req.all || named || p.loss.any())
        .map(|p| ctx.partition(&diff, p))
        .collect();
    let losing = diff.partitions.iter().filter(|p| p.loss.any()).count();
    let zones = ctx.zones;
    IncidentRun {
        diff,
        zones,
        partitions,
        losing,
    }
}
