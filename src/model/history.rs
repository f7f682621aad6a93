//! The controller's view of a partition: its leadership and ISR history in
//! the metadata log.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

/// One change of a partition's leadership or ISR in the metadata log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Election {
    /// Offset of the record in the metadata log.
    pub metadata_offset: i64,
    /// Leader after the change (-1: none).
    pub leader: i32,
    /// Leader epoch after the change.
    pub leader_epoch: i32,
    /// Partition epoch after the change (every change bumps it).
    pub partition_epoch: i32,
    /// ISR after the change.
    pub isr: Vec<i32>,
    /// Eligible leader replicas (KIP-966) after the change; `null` when the
    /// metadata does not carry them.
    pub elr: Option<Vec<i32>>,
    /// Last known ELR (KIP-966) after the change; `null` when absent.
    pub last_known_elr: Option<Vec<i32>>,
    /// Leader recovery state (0 recovered, 1 recovering).
    pub leader_recovery_state: i8,
    /// Whether the leader changed (a new epoch) in this record.
    pub leader_changed: bool,
    /// The new leader was not in the ISR before the change.
    pub unclean: bool,
    /// Record timestamp (ms).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub timestamp: i64,
}

/// Leadership history of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionHistory {
    /// Assigned replicas (latest).
    pub replicas: Vec<i32>,
    /// Every PartitionRecord / PartitionChangeRecord, in log order.
    pub changes: Vec<Election>,
    /// Whether the history starts where the partition was created (its
    /// first record is a PartitionRecord in leader epoch 0 and partition
    /// epoch 0). When it does not (the metadata log was snapshotted and its
    /// start deleted), ISR states before the first change are unknown.
    pub from_creation: bool,
}

impl PartitionHistory {
    /// The state at the end of the log.
    pub fn current(&self) -> Option<&Election> {
        self.changes.last()
    }

    /// Who led `epoch` (`None`: the history has no such epoch, or no leader).
    pub fn leader_of(&self, epoch: i32) -> Option<i32> {
        self.changes
            .iter()
            .filter(|e| e.leader_epoch == epoch && e.leader >= 0)
            .map(|e| e.leader)
            .next_back()
    }

    /// The highest leader epoch the history knows.
    pub fn max_epoch(&self) -> Option<i32> {
        self.changes.iter().map(|e| e.leader_epoch).max()
    }
}

/// What the metadata log says.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ControllerView {
    /// The metadata log replica read.
    pub source: Option<PathBuf>,
    /// Per (topic, partition).
    pub partitions: BTreeMap<(String, i32), PartitionHistory>,
    /// What could not be read or used (each with its file and byte): the
    /// history lacks what those records said.
    pub problems: Vec<crate::model::evidence::ReadProblem>,
    /// The settings that decide whether a loss can happen
    /// ([`IMPACT_CONFIGS`]) and every feature level, in log order.
    pub configs: Vec<crate::model::impact::ConfigFact>,
    /// The quorum's own history: each controller leader elected
    /// (`LeaderChangeMessage`) and each voter set written
    /// (`KRaftVoters`, KIP-853), in log order.
    pub quorum: Vec<QuorumChange>,
    /// Where the partition, broker and quorum records read lie: metadata offset
    /// to the segment (an index into [`ControllerView::segment_files`])
    /// and the byte its batch starts at.
    #[serde(skip)]
    pub record_at: BTreeMap<i64, (u32, u64)>,
    /// The segment files of the metadata log read, in log order.
    #[serde(skip)]
    pub segment_files: Vec<PathBuf>,
    /// The brokers' registrations, fencings and controlled shutdowns, in
    /// log order.
    #[serde(skip)]
    pub brokers: Vec<BrokerChange>,
}

impl ControllerView {
    /// The segment file and byte of the batch holding the record at
    /// `metadata_offset`, when it is a partition, broker or quorum record
    /// read.
    pub fn record_source(&self, metadata_offset: i64) -> Option<(&std::path::Path, u64)> {
        let &(seg, byte) = self.record_at.get(&metadata_offset)?;
        let file = self.segment_files.get(usize::try_from(seg).ok()?)?;
        Some((file.as_path(), byte))
    }
}

/// What a broker record of the metadata log says of a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrokerChangeKind {
    /// RegisterBrokerRecord: a broker (a new incarnation) registered.
    Registered,
    /// UnregisterBrokerRecord.
    Unregistered,
    /// FenceBrokerRecord, or a BrokerRegistrationChangeRecord with
    /// `fenced=1`.
    Fenced,
    /// UnfenceBrokerRecord, or `fenced=-1`.
    Unfenced,
    /// A BrokerRegistrationChangeRecord with `inControlledShutdown=1`.
    ControlledShutdown,
}

/// One broker record of the metadata log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokerChange {
    /// Offset of the record in the metadata log.
    pub metadata_offset: i64,
    /// Record timestamp (ms).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub timestamp: i64,
    /// The broker.
    pub broker: i32,
    /// Its broker epoch.
    pub broker_epoch: i64,
    /// What happened.
    pub kind: BrokerChangeKind,
}

/// What a KRaft control record of the metadata log says of the quorum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuorumChange {
    /// Offset of the record in the metadata log.
    pub metadata_offset: i64,
    /// The quorum's epoch (the batch's leader epoch).
    pub epoch: i32,
    /// The batch's timestamp (ms).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub timestamp: i64,
    /// `leader-change` or `voters`.
    pub kind: QuorumChangeKind,
    /// The controller elected (leader-change), else `null`.
    pub leader: Option<i32>,
    /// The voters: the set the leader was elected by, or the voter set
    /// written.
    pub voters: Vec<i32>,
    /// The voters that granted the leader its votes (leader-change).
    pub granting_voters: Vec<i32>,
}

/// Which control record a [`QuorumChange`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuorumChangeKind {
    /// `LeaderChangeMessage`: a controller won an election.
    LeaderChange,
    /// `VotersRecord`: the voter set (KIP-853 dynamic quorums).
    Voters,
}

/// The configuration names the metadata log is searched for: the ones that
/// decide whether an acknowledged write can be lost.
pub const IMPACT_CONFIGS: [&str; 4] = [
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "replica.lag.time.max.ms",
    "default.replication.factor",
];
