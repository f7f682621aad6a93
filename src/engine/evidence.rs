//! What a capture holds besides the replicas' batches, gathered once per
//! run and shared by every partition: the controller's view from the
//! metadata log (reference leader, ISR history), each replica's high
//! watermark checkpoint (value, file, mtime), and the consumer group
//! commits of `__consumer_offsets` (read on first need: only when some
//! partition loses records).

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use crate::analysis::broker_log::check_truncations;
use crate::analysis::diff::{diff_partition, PartitionReplicas, ReferenceHint};
use crate::analysis::loss::{partition_loss, LossContext};
use crate::capture::controller::controller_view;
use crate::capture::groups::{group_commits, GroupCommits, CONSUMER_OFFSETS};
use crate::capture::logs::read_logs;
use crate::capture::replica::high_watermark_fact;
use crate::model::broker_log::{BrokerLogs, LoggedEvent};
use crate::model::diff::{ClusterMode, DiffOptions, PartitionDiff, ProtocolSource};
use crate::model::loss::PartitionLoss;
use crate::model::truncation::ReplicationProtocol;
use crate::model::{Capture, ControllerView, HighWatermarkFact, PartitionHistory, Replica};

/// The evidence of one capture.
pub struct Evidence<'c> {
    capture: &'c Capture,
    /// The controller's view, when the capture holds a metadata log.
    pub controller: Option<ControllerView>,
    groups: OnceLock<GroupCommits>,
    no_metadata: String,
    /// Whether the capture holds a `__consumer_offsets` replica (asked
    /// once per partition: found once).
    consumer_offsets: bool,
    /// The nodes' own logs, read when the capture holds some.
    logs: Option<NodeLogs>,
}

/// The statements read from the nodes' logs, found by partition.
pub struct NodeLogs {
    /// What was read.
    pub read: BrokerLogs,
    by_partition: HashMap<(String, i32), Vec<usize>>,
}

impl NodeLogs {
    fn new(read: BrokerLogs) -> NodeLogs {
        let mut by_partition: HashMap<(String, i32), Vec<usize>> = HashMap::new();
        for (i, e) in read.events.iter().enumerate() {
            if let Some(p) = e.event.partition() {
                by_partition
                    .entry((p.topic.clone(), p.partition))
                    .or_default()
                    .push(i);
            }
        }
        NodeLogs { read, by_partition }
    }

    /// The statements about one partition, per node in the order logged.
    pub fn for_partition(&self, topic: &str, partition: i32) -> Vec<&LoggedEvent> {
        self.by_partition
            .get(&(topic.to_string(), partition))
            .map(|v| v.iter().map(|&i| &self.read.events[i]).collect())
            .unwrap_or_default()
    }

    /// [`NodeLogs::for_partition`] with each statement's position in
    /// `read.events` (whose order is each node's own).
    pub fn for_partition_indexed(&self, topic: &str, partition: i32) -> Vec<(usize, &LoggedEvent)> {
        self.by_partition
            .get(&(topic.to_string(), partition))
            .map(|v| v.iter().map(|&i| (i, &self.read.events[i])).collect())
            .unwrap_or_default()
    }
}

/// Broker ids of the replicas of a partition: the node id discovery found,
/// else `-1`, `-2`, ... by position (so that every replica has one).
pub fn broker_ids(replicas: &[Replica]) -> Vec<i32> {
    replicas
        .iter()
        .enumerate()
        .map(|(i, r)| r.node_id.unwrap_or(-(i as i32) - 1))
        .collect()
}

impl<'c> Evidence<'c> {
    /// Reads the controller's view of `capture` (the rest is read when
    /// needed).
    pub fn gather(capture: &'c Capture) -> Evidence<'c> {
        let mut e = Evidence::gather_without_logs(capture);
        e.logs = (!capture.logs.is_empty()).then(|| NodeLogs::new(read_logs(&capture.logs)));
        e
    }

    /// [`Evidence::gather`] without reading the nodes' logs (for what
    /// does not use them).
    pub fn gather_without_logs(capture: &'c Capture) -> Evidence<'c> {
        Evidence {
            capture,
            controller: controller_view(capture),
            groups: OnceLock::new(),
            consumer_offsets: capture
                .partitions
                .range((CONSUMER_OFFSETS.to_string(), i32::MIN)..)
                .next()
                .is_some_and(|((t, _), _)| t == CONSUMER_OFFSETS),
            logs: None,
            no_metadata: "the capture holds no __cluster_metadata log (a ZooKeeper-mode cluster, or the metadata log was not captured)".to_string(),
        }
    }

    /// The nodes' own logs, when the capture holds some.
    pub fn logs(&self) -> Option<&NodeLogs> {
        self.logs.as_ref()
    }

    /// The capture.
    pub fn capture(&self) -> &'c Capture {
        self.capture
    }

    /// The cluster mode the capture shows: each broker's `meta.properties`
    /// version (1 KRaft, 0 ZooKeeper), and a metadata log (KRaft, or a
    /// ZooKeeper-to-KRaft migration when brokers still say 0).
    pub fn cluster_mode(&self) -> ClusterMode {
        let versions = self.capture.meta_versions();
        let metadata_log = self.controller.is_some() || !self.capture.metadata_logs.is_empty();
        let kraft = versions.contains(&1);
        let zookeeper = versions.contains(&0);
        match (kraft, zookeeper) {
            (true, true) => ClusterMode::Mixed,
            (false, true) if metadata_log => ClusterMode::Mixed,
            (true, false) => ClusterMode::Kraft,
            (false, true) => ClusterMode::Zookeeper,
            (false, false) if metadata_log => ClusterMode::Kraft,
            (false, false) => ClusterMode::Unknown,
        }
    }

    /// The truncation protocol to model: the operator's
    /// (`--inter-broker-protocol`), else truncation on fetch where the
    /// capture proves it (a KRaft cluster, whose every `metadata.version`
    /// has it; a migration, which needs 3.4 or later), else truncation on
    /// fetch assumed (the default of every release since 2.7), with
    /// OffsetsForLeaderEpoch (2.0 to 2.6, common while an upgrade pins the
    /// protocol) predicted beside it.
    pub fn diff_options(&self, given: Option<ReplicationProtocol>) -> DiffOptions {
        let mode = self.cluster_mode();
        match given {
            Some(protocol) => DiffOptions {
                protocol,
                source: ProtocolSource::Given,
                alternative: None,
                mode,
            },
            None if mode == ClusterMode::Kraft
                || (mode == ClusterMode::Mixed && self.controller.is_some()) =>
            {
                DiffOptions {
                    protocol: ReplicationProtocol::DivergingEpoch,
                    source: ProtocolSource::Kraft,
                    alternative: None,
                    mode,
                }
            }
            None => DiffOptions {
                protocol: ReplicationProtocol::DivergingEpoch,
                source: ProtocolSource::Assumed,
                alternative: Some(ReplicationProtocol::OffsetsForLeaderEpoch),
                mode,
            },
        }
    }

    /// The partition's history in the metadata log.
    pub fn history(&self, topic: &str, partition: i32) -> Option<&PartitionHistory> {
        self.controller
            .as_ref()
            .and_then(|c| c.partitions.get(&(topic.to_string(), partition)))
    }

    /// Why the capture holds no controller's view of a partition (no
    /// metadata log, or one without the partition); `None` when it does.
    pub fn history_missing(&self, topic: &str, partition: i32) -> Option<String> {
        match (&self.controller, self.history(topic, partition)) {
            (None, _) => Some(self.no_metadata.clone()),
            (Some(c), None) => Some(format!(
                "the __cluster_metadata log read ({}) has no record of this partition",
                c.source
                    .as_ref()
                    .map_or("-".to_string(), |p| p.display().to_string())
            )),
            _ => None,
        }
    }

    /// The reference rule for a partition: `leader` when the operator gave
    /// one, else the metadata log's leader at capture time, else the diff's
    /// own rule.
    pub fn reference(&self, leader: Option<i32>, topic: &str, partition: i32) -> ReferenceHint {
        reference_hint(leader, self.history(topic, partition))
    }

    /// The consumer group commits for every data partition of the capture,
    /// read from `__consumer_offsets` the first time they are asked for.
    pub fn groups(&self) -> &GroupCommits {
        self.groups.get_or_init(|| {
            let wanted: BTreeSet<(String, i32)> = self
                .capture
                .partitions
                .keys()
                .filter(|(t, _)| t != CONSUMER_OFFSETS)
                .cloned()
                .collect();
            group_commits(self.capture, &wanted)
        })
    }

    /// Whether the group commits have been read (their problems are then
    /// worth reporting).
    pub fn groups_read(&self) -> Option<&GroupCommits> {
        self.groups.get()
    }

    /// Whether the capture holds a `__consumer_offsets` replica.
    pub fn has_consumer_offsets(&self) -> bool {
        self.consumer_offsets
    }

    /// The high watermark facts of the replicas of a partition.
    pub fn high_watermarks(&self, replicas: &[Replica], ids: &[i32]) -> Vec<HighWatermarkFact> {
        replicas
            .iter()
            .zip(ids)
            .map(|(r, &id)| high_watermark_fact(self.capture, r, id))
            .collect()
    }

    /// Diffs a partition and computes what it loses, with this evidence.
    /// `replicas` are the partition's replicas in the capture (for their
    /// checkpoint facts), `input` the logs read from them.
    pub fn analyze(
        &self,
        input: &PartitionReplicas,
        replicas: &[Replica],
        options: &DiffOptions,
    ) -> (PartitionDiff, PartitionLoss) {
        let mut diff = diff_partition(input, options);
        let loss = self.complete(&mut diff, input, replicas);
        (diff, loss)
    }

    /// Completes a partition's diff with this evidence: what it loses
    /// (each replica's share, a replica not captured), and what the
    /// brokers' logs say of its truncations.
    pub fn complete(
        &self,
        diff: &mut PartitionDiff,
        input: &PartitionReplicas,
        replicas: &[Replica],
    ) -> PartitionLoss {
        let loss = self.loss(diff, input, replicas);
        crate::analysis::loss::share_loss(diff, &loss);
        diff.findings
            .extend(crate::analysis::loss::not_captured_finding(&loss));
        if let Some(logs) = &self.logs {
            let events = logs.for_partition(&input.topic, input.partition);
            diff.broker_log = check_truncations(diff, &events);
            diff.findings
                .extend(crate::analysis::broker_log::disagreements(&diff.broker_log));
        }
        loss
    }

    /// What a diffed partition loses, with this evidence.
    pub fn loss(
        &self,
        diff: &PartitionDiff,
        input: &PartitionReplicas,
        replicas: &[Replica],
    ) -> PartitionLoss {
        let ids = broker_ids(replicas);
        let hws = self.high_watermarks(replicas, &ids);
        let history = self.history(&input.topic, input.partition);
        let missing = self.history_missing(&input.topic, input.partition);
        let mut ctx = LossContext {
            history,
            history_missing: missing.as_deref(),
            commits: &[],
            commits_searched: self.has_consumer_offsets(),
            high_watermarks: &hws,
        };
        let loss = partition_loss(diff, &input.replicas, &ctx);
        if loss.records == 0 || !ctx.commits_searched {
            return loss;
        }
        ctx.commits = self.groups().for_partition(&input.topic, input.partition);
        partition_loss(diff, &input.replicas, &ctx)
    }
}

/// The diff's reference for a partition: the broker the operator named,
/// else the leader at the end of the metadata log with its epoch, else the
/// diff's own rule.
pub fn reference_hint(leader: Option<i32>, history: Option<&PartitionHistory>) -> ReferenceHint {
    match leader {
        Some(b) => ReferenceHint::Explicit { broker: b },
        None => history
            .and_then(|h| h.current())
            .filter(|e| e.leader >= 0)
            .map(|e| ReferenceHint::MetadataLeader {
                broker: e.leader,
                leader_epoch: Some(e.leader_epoch),
            })
            .unwrap_or(ReferenceHint::Auto),
    }
}
