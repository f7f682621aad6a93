//! The facts the impact of a loss is computed from, as the capture layer
//! reads them: the producer state a replica rebuilds, the transaction
//! coordinator's last word per producer, a group's latest commit, and the
//! configuration the metadata log records; and the impact itself, as
//! `analysis::impact` computes it: what each consumer group, transaction
//! and producer meets once every replica follows the new leader.

use serde::{Deserialize, Serialize};

/// One producer as a replica's producer state holds it (what Kafka rebuilds
/// on load: its latest producer snapshot, then the batches after it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProducerView {
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch of its last batch or marker.
    pub producer_epoch: i16,
    /// Last sequence of its last data batch (`-1` when none).
    pub last_sequence: i32,
    /// Last offset of its last data batch (`-1` when none).
    pub last_offset: i64,
    /// First offset of its open transaction, when one is open.
    pub txn_first_offset: Option<i64>,
    /// Timestamp of its last batch.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_timestamp: i64,
}

/// A replica's producer state at its log end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerStateView {
    /// Producers by id.
    pub producers: std::collections::BTreeMap<i64, ProducerView>,
    /// Offset of the producer snapshot the state started from, if one was
    /// used.
    pub snapshot_offset: Option<i64>,
    /// Offset the batches were read from.
    pub read_from: i64,
}

/// The transaction coordinator's latest record for a transactional id
/// (`__transaction_state`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoordinatorTxn {
    /// The transactional id.
    pub transactional_id: String,
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// State name as Kafka's tools print it (`CompleteCommit`, `Ongoing`...).
    pub state: String,
    /// Partitions of the transaction in this state.
    pub partitions: Vec<(String, Vec<i32>)>,
    /// `transactionLastUpdateTimestampMs`.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_update_timestamp: i64,
    /// Broker whose `__transaction_state` replica it was read from.
    pub broker: i32,
    /// Offset of the record in `__transaction_state`.
    pub log_offset: i64,
}

/// A group's latest record for one partition in a `__consumer_offsets`
/// replica, in log order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestCommit {
    /// The group.
    pub group: String,
    /// The commit; `None` when the latest record deletes the offset.
    pub commit: Option<crate::model::evidence::GroupCommit>,
    /// Broker of the `__consumer_offsets` replica.
    pub broker: i32,
    /// The `__consumer_offsets` partition.
    pub offsets_partition: i32,
    /// Offset of the record in that partition.
    pub log_offset: i64,
    /// When the latest record does not decode: the problem (file, byte,
    /// reason); `commit` is then `None`.
    pub unreadable: Option<String>,
}

/// A configuration value the metadata log sets (`ConfigRecord`), or a
/// feature level (`FeatureLevelRecord`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigFact {
    /// `topic`, `broker` (`resource` empty: the cluster default) or `feature`.
    pub scope: String,
    /// Topic name, broker id, or empty for a cluster-wide default.
    pub resource: String,
    /// Config or feature name.
    pub name: String,
    /// Value (`null`: the record removes the setting).
    pub value: Option<String>,
    /// Offset of the record in the metadata log.
    pub metadata_offset: i64,
    /// Batch timestamp of the record.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub timestamp: i64,
}

/// A value under each `auto.offset.reset` policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct PerReset<T> {
    /// `auto.offset.reset=earliest` (and `by_duration`, which resets like it
    /// to a time-based offset where a reset happens).
    pub earliest: T,
    /// `auto.offset.reset=latest`.
    pub latest: T,
    /// `auto.offset.reset=none`.
    pub none: T,
}

/// What a group's restarted consumer meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GroupState {
    /// The commit is at or below the first lost offset on the group's
    /// lineage: the consumer goes on where it was.
    Unaffected,
    /// The commit carries a leader epoch whose end on the new leader is
    /// below it: Kafka detects the truncation (KIP-320).
    Diverged,
    /// The commit has no leader epoch and lies past the new log end:
    /// OFFSET_OUT_OF_RANGE, reset by the policy.
    PastLogEnd,
    /// The commit has no leader epoch and lies inside the new log, past the
    /// divergence: the consumer fetches from it, skipping the new leader's
    /// records before it, with no error.
    SilentSkip,
    /// The new leader knows no epoch at or above the commit's: reset by the
    /// policy.
    EpochUnknown,
    /// The group's latest record deletes its offset: it starts by the
    /// policy.
    NoOffset,
    /// The group's latest record does not decode: where it resumes is
    /// unknown.
    Unreadable,
}

/// One consumer group's impact on a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupImpact {
    /// Group id.
    pub group: String,
    /// `classic`, `consumer`, `share`, `streams`; `None` when
    /// `__consumer_offsets` holds no metadata record of the group (offsets
    /// set with the Admin API).
    pub protocol: Option<String>,
    /// The latest committed offset (`None` when deleted).
    pub committed_offset: Option<i64>,
    /// Its leader epoch (`None` when the commit carries none).
    pub committed_leader_epoch: Option<i32>,
    /// Commit time (ms).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub commit_timestamp: Option<i64>,
    /// Broker of the `__consumer_offsets` replica read.
    pub coordinator_broker: i32,
    /// What the restarted consumer meets.
    pub state: GroupState,
    /// Where the group's lineage parts from the new log (the first offset
    /// whose record on the new log the group has not consumed).
    pub divergence_offset: Option<i64>,
    /// The offset a restarted consumer fetches first (`None`: it fails).
    pub next_fetch_offset: PerReset<Option<i64>>,
    /// The exception a restarted consumer gets (`None`: none).
    pub error: PerReset<Option<&'static str>>,
    /// Records on the new log it will never see (`None`: it fails).
    pub records_skipped: PerReset<Option<u64>>,
    /// Records it reads again (`None`: it fails).
    pub records_reread: PerReset<Option<u64>>,
    /// Records it had consumed that no replica keeps.
    pub phantom_records: u64,
    /// Their offsets, half-open ranges.
    pub phantom_offsets: Vec<(i64, i64)>,
    /// Their first and last timestamps.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub phantom_first_timestamp: Option<i64>,
    /// See `phantom_first_timestamp`.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub phantom_last_timestamp: Option<i64>,
    /// The story in a sentence.
    pub detail: String,
}

/// State of a transaction the loss touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxnOutcome {
    /// Open on the new leader with no marker to come: its marker was cut, or
    /// the coordinator has finished with it. read_committed consumers stall
    /// at its first offset until it is aborted.
    Hanging,
    /// Open on the new leader and the coordinator still has it in progress:
    /// it will be completed or time out.
    Open,
    /// Open on the new leader; whether a marker will come cannot be told
    /// (no `__transaction_state` in the capture, and no cut marker seen).
    OpenUnknown,
    /// Every record of it on the lost lineage is lost, marker included.
    Lost,
}

/// A transaction the loss touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TxnImpact {
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// Transactional id, from `__transaction_state`.
    pub transactional_id: Option<String>,
    /// First offset of the transaction on the new leader (find-hanging's
    /// StartOffset); for a lost one, its first lost offset.
    pub first_offset: i64,
    /// State.
    pub state: TxnOutcome,
    /// The last stable offset read_committed consumers stop at (the
    /// partition's, with this transaction open).
    pub lso: Option<i64>,
    /// The marker the loss cuts (`COMMIT`/`ABORT`), with its offset.
    pub marker_cut: Option<&'static str>,
    /// Offset of the cut marker.
    pub marker_cut_offset: Option<i64>,
    /// The coordinator's state for the producer (`CompleteCommit`...).
    pub coordinator_state: Option<String>,
    /// Data records of the transaction on the new leader.
    pub records: u64,
    /// Whether aborting it (the remedy) hides records the transaction had
    /// committed: read_committed consumers never see them.
    pub abort_hides_committed: bool,
    /// The operator's remedy (printed, never run).
    pub remedy: Option<String>,
    /// The story in a sentence.
    pub detail: String,
}

/// An idempotent or transactional producer whose last sequences are cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerImpact {
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch of its last lost batch.
    pub producer_epoch: i16,
    /// Transactional batches.
    pub transactional: bool,
    /// Last sequence the new leader holds for it (`None`: no state).
    pub last_sequence_kept: Option<i32>,
    /// Last sequence of its lost batches.
    pub last_sequence_cut: i32,
    /// Records lost.
    pub records_lost: u64,
    /// The error code the new leader answers its next batch with (`None`:
    /// the batch is accepted).
    pub expected_error: Option<&'static str>,
    /// `sequence-gap`, `unknown-to-leader`, `sent-again`, `fenced`.
    pub state: &'static str,
    /// The story in a sentence.
    pub detail: String,
}

/// A setting and what it allowed in this incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigImpact {
    /// Config or feature name.
    pub name: String,
    /// Effective value (`None`: unknown).
    pub value: Option<String>,
    /// `topic`, `cluster`, `feature`, `replicas` (from the partition's
    /// replica list), or `unknown`.
    pub source: &'static str,
    /// Metadata log offset where it was set.
    pub metadata_offset: Option<i64>,
    /// What it allowed, or why it is unknown.
    pub effect: String,
}

/// The impact of one partition's loss.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionImpact {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The reference (new) leader.
    pub leader: i32,
    /// Its log start offset.
    pub log_start_offset: i64,
    /// Its log end offset: the partition's new log end.
    pub new_log_end: i64,
    /// First lost offset (`None`: nothing lost).
    pub first_lost_offset: Option<i64>,
    /// Records lost.
    pub records_lost: u64,
    /// Last stable offset on the new leader (`None`: unknown).
    pub last_stable_offset: Option<i64>,
    /// Consumer groups with a commit for the partition.
    pub groups: Vec<GroupImpact>,
    /// Why the groups could not be computed (`None`: they were).
    pub groups_unknown: Option<String>,
    /// Share groups (KIP-932) with a state for the partition in
    /// `__share_group_state`.
    pub share_groups: Vec<ShareGroupImpact>,
    /// Why the share groups could not be computed (`None`: they were, or
    /// the capture shows no share group at all).
    pub share_groups_unknown: Option<String>,
    /// Transactions touched.
    pub transactions: Vec<TxnImpact>,
    /// What part of the transactions could not be computed, and why.
    pub transactions_unknown: Option<String>,
    /// Producers whose sequences are cut.
    pub producers: Vec<ProducerImpact>,
    /// Why the producers could not be computed.
    pub producers_unknown: Option<String>,
    /// The settings behind the incident.
    pub config: Vec<ConfigImpact>,
    /// Whether any group, share group, transaction or producer is affected: `None` when
    /// none is found affected but part of the impact is unknown (no
    /// `__consumer_offsets`, an unreadable commit, an open transaction whose
    /// fate cannot be told).
    pub affected: Option<bool>,
}

/// A record's delivery state in a share group (KIP-932, Kafka's
/// `RecordState`), as `__share_group_state` batches carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeliveryState {
    /// 0: may be delivered (again).
    Available,
    /// 1: delivered to a consumer and not yet acknowledged.
    Acquired,
    /// 2: acknowledged (ACCEPT): done.
    Acknowledged,
    /// 4: rejected, or delivered too often: done, never delivered again.
    Archived,
    /// Any other value.
    Unknown,
}

impl DeliveryState {
    /// The state of a `deliveryState` byte.
    pub fn from_id(id: i64) -> DeliveryState {
        match id {
            0 => DeliveryState::Available,
            1 => DeliveryState::Acquired,
            2 => DeliveryState::Acknowledged,
            4 => DeliveryState::Archived,
            _ => DeliveryState::Unknown,
        }
    }

    /// Whether the group is done with the record (acknowledged or archived).
    pub fn terminal(self) -> bool {
        matches!(self, DeliveryState::Acknowledged | DeliveryState::Archived)
    }
}

/// A range of offsets of a share partition in one delivery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ShareBatch {
    /// First offset.
    pub first_offset: i64,
    /// Last offset (inclusive).
    pub last_offset: i64,
    /// Delivery state.
    pub state: DeliveryState,
    /// The `deliveryState` byte as written.
    pub state_id: i8,
    /// Times delivered.
    pub delivery_count: i16,
}

/// A share group's state for one partition, as the share coordinator
/// rebuilds it from `__share_group_state` (its latest `ShareSnapshot`, then
/// the `ShareUpdate`s after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharePartitionState {
    /// The share group.
    pub group: String,
    /// Topic id the state is keyed by.
    pub topic_id: [u8; 16],
    /// Partition.
    pub partition: i32,
    /// The share-partition start offset as persisted (`-1`: not
    /// initialized). Below it the group is done with every record.
    pub start_offset: i64,
    /// State epoch of the latest snapshot (`None`: no snapshot read).
    pub state_epoch: Option<i32>,
    /// Leader epoch of the partition leader that wrote it last.
    pub leader_epoch: i32,
    /// Snapshot epoch.
    pub snapshot_epoch: i32,
    /// Records at or past the start offset the group is done with, as the
    /// latest record says (`None`: not written, before Kafka 4.2).
    pub delivery_complete_count: Option<i32>,
    /// In-flight batches at or past the start offset, ascending and
    /// disjoint.
    pub batches: Vec<ShareBatch>,
    /// Broker of the `__share_group_state` replica read.
    pub coordinator_broker: i32,
    /// The `__share_group_state` partition.
    pub state_partition: i32,
    /// Offset of the last record applied.
    pub log_offset: i64,
    /// Why the state cannot be told (a record that does not decode, more
    /// batches than klf keeps); the other fields are then what was read
    /// before it.
    pub unreadable: Option<String>,
}

impl SharePartitionState {
    /// Where Kafka's share partition starts once it loads this state
    /// (`SharePartition.maybeInitialize`, then
    /// `maybeUpdateCachedStateAndOffsets`): past the batches the group is
    /// done with that follow the start offset without a gap. `None` when
    /// the state is not initialized.
    pub fn effective_start(&self) -> Option<i64> {
        if self.start_offset < 0 {
            return None;
        }
        let mut at = self.start_offset;
        for b in &self.batches {
            if b.first_offset != at || !b.state.terminal() {
                break;
            }
            at = b.last_offset.saturating_add(1);
        }
        Some(at)
    }

    /// The first offset at or past the effective start the group delivers:
    /// the first one in no batch or in an AVAILABLE batch.
    pub fn next_delivered(&self) -> Option<i64> {
        let mut at = self.effective_start()?;
        for b in &self.batches {
            if b.last_offset < at {
                continue;
            }
            if b.first_offset > at || b.state == DeliveryState::Available {
                return Some(at);
            }
            at = b.last_offset.saturating_add(1);
        }
        Some(at)
    }

    /// The delivery state of `offset` (`None`: in no batch).
    pub fn state_of(&self, offset: i64) -> Option<&ShareBatch> {
        let i = self.batches.partition_point(|b| b.last_offset < offset);
        self.batches.get(i).filter(|b| b.first_offset <= offset)
    }
}

/// What a share group meets once every replica follows the new leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShareGroupState {
    /// It had been given none of the lost records, and its start offset is
    /// at or before the first lost offset.
    Unaffected,
    /// Its start offset lies past the new log end: share fetches there are
    /// answered OFFSET_OUT_OF_RANGE and Kafka moves a share-partition start
    /// offset only forward (to the log start), so the group is given
    /// nothing until the log reaches it, and never the new leader's records
    /// below it.
    PastLogEnd,
    /// Its start offset, or batches it had finished past it, lie inside the
    /// new log past the divergence: the new leader's records there are never
    /// delivered.
    Skips,
    /// It had been given lost records it had not finished (available again,
    /// or acquired): they are gone, and the new leader's records at those
    /// offsets are delivered in their place with the old delivery counts.
    InFlightLost,
    /// Its state has no start offset (`-1`): it starts by
    /// `share.auto.offset.reset`.
    Uninitialized,
    /// Its state cannot be read: where it resumes is unknown.
    Unreadable,
}

/// Lost records by what the share group had done with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShareLost<T> {
    /// Below its start offset (Kafka keeps no state there: the group had
    /// finished them) or in ACKNOWLEDGED batches.
    pub acknowledged: T,
    /// In ARCHIVED batches (rejected, or delivered too often).
    pub archived: T,
    /// In ACQUIRED batches (given to a consumer, not acknowledged).
    pub acquired: T,
    /// In AVAILABLE batches (given before and released, or timed out).
    pub available: T,
    /// At or past the start offset in no batch: never given to the group.
    pub not_delivered: T,
    /// In batches of a state Kafka does not define.
    pub other: T,
}

/// One share group's impact on a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShareGroupImpact {
    /// Group id.
    pub group: String,
    /// The topic id its state is keyed by (base64, as Kafka prints it).
    pub topic_id: String,
    /// Broker of the `__share_group_state` replica read.
    pub coordinator_broker: i32,
    /// The `__share_group_state` partition.
    pub state_partition: i32,
    /// Offset of the last record of the state in it.
    pub state_log_offset: i64,
    /// State epoch (`None`: no snapshot read).
    pub state_epoch: Option<i32>,
    /// Leader epoch of the partition leader that wrote the state last.
    pub leader_epoch: i32,
    /// The share-partition start offset as persisted (what
    /// `kafka-share-groups --describe --offsets` prints as START-OFFSET).
    pub start_offset: i64,
    /// Where Kafka's share partition starts once it loads the state: past
    /// the finished batches that follow the start offset.
    pub effective_start_offset: Option<i64>,
    /// The first offset the group is given next.
    pub next_delivered_offset: Option<i64>,
    /// Records past the start offset it had finished, as the state says.
    pub delivery_complete_count: Option<i32>,
    /// The lag Kafka's group coordinator computes against the new log end
    /// (log end - start offset - delivery-complete count); a negative one
    /// Kafka's Admin API and tools report as none (`-`).
    pub lag: Option<i64>,
    /// What the group meets.
    pub state: ShareGroupState,
    /// Lost records by what the group had done with them.
    pub lost: ShareLost<u64>,
    /// Their offsets, half-open ranges.
    pub lost_offsets: ShareLost<Vec<(i64, i64)>>,
    /// Records on the new log the group will never be given.
    pub records_skipped: u64,
    /// The offsets of the new lineage, from the first lost offset, the
    /// group will never deliver (half-open ranges; past the new log end,
    /// the offsets the next records written take).
    pub skipped_offsets: Vec<(i64, i64)>,
    /// The in-flight batches of its state.
    pub in_flight: Vec<ShareBatch>,
    /// The story in a sentence.
    pub detail: String,
}
