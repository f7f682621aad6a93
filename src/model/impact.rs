//! The facts the impact of a loss is computed from, as the capture layer
//! reads them: the producer state a replica rebuilds, the transaction
//! coordinator's last word per producer, a group's latest commit, and the
//! configuration the metadata log records.

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
    pub timestamp: i64,
}
