//! Transactions as a whole (`klf transactions`): per producer, the
//! transactions its batches and markers show in each partition's log,
//! folded (committed, aborted, open, their records, bytes and durations);
//! per partition, the last stable offset and the open transactions that
//! hold it back; and the transaction coordinator's own count from
//! `__transaction_state`. `analysis::transactions` computes them,
//! `capture::transactions` reads the coordinator's log.

use serde::Serialize;

/// A topic partition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct PartitionRef {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
}

/// The data of the transactions of one outcome (or of a producer's
/// non-transactional batches).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OutcomeCounts {
    /// Transactions as a whole (one that wrote to three partitions counts
    /// once), when the logs can tell (see [`ProducerTxns::count_rule`]);
    /// `None` when they cannot.
    pub transactions: Option<u64>,
    /// Transactions counted once per partition they wrote to (each marker
    /// that closes data, or each open run of data).
    pub partition_transactions: u64,
    /// Data batches.
    pub batches: u64,
    /// Data records (the batch headers' record counts).
    pub records: u64,
    /// Bytes of the data batches on disk.
    pub bytes: u64,
}

/// Non-transactional data of a producer (idempotent batches).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DataCounts {
    /// Batches.
    pub batches: u64,
    /// Records.
    pub records: u64,
    /// Bytes on disk.
    pub bytes: u64,
}

/// How a set of values spreads: count, min, median, max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Spread {
    /// Values.
    pub count: u64,
    /// Smallest.
    pub min: i64,
    /// Median (the lower middle value of an even count).
    pub median: i64,
    /// Largest.
    pub max: i64,
    /// Whether the median is exact: past a bound on the values kept it is
    /// taken from a histogram of 1% buckets.
    pub median_exact: bool,
}

/// The coordinator's record of one producer id of a transactional id, from
/// `__transaction_state` (every record of it, in log order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CoordinatorCounts {
    /// Producer id.
    pub producer_id: i64,
    /// Transactions the coordinator prepared to commit (`PrepareCommit`)
    /// with partitions.
    pub committed: u64,
    /// Transactions it prepared to abort (`PrepareAbort`) with partitions.
    pub aborted: u64,
    /// Transactions it ended with no partition (a `PrepareCommit` or
    /// `PrepareAbort` record listing none): nothing was written.
    pub empty: u64,
    /// `PrepareEpochFence` records: a newer producer fenced this one.
    pub fenced: u64,
    /// Lowest producer epoch in its records.
    pub first_epoch: i16,
    /// Highest.
    pub last_epoch: i16,
}

/// One transactional id as the coordinator's log holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoordinatorTxns {
    /// The transactional id.
    pub transactional_id: String,
    /// Broker whose `__transaction_state` replica it was read from.
    pub broker: i32,
    /// The `__transaction_state` partition.
    pub state_partition: i32,
    /// Its latest state (`CompleteCommit`, `Ongoing`...; `null`: the
    /// latest record is a tombstone, the id expired).
    pub state: Option<String>,
    /// Producer id of the latest record.
    pub producer_id: i64,
    /// Producer epoch of the latest record.
    pub producer_epoch: i16,
    /// Partitions of the latest record (those of a transaction in
    /// progress).
    pub partitions: Vec<PartitionRef>,
    /// `transactionLastUpdateTimestampMs` of the latest record.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_update_timestamp: i64,
    /// `clientTransactionVersion` of the latest record that carries it
    /// (2: KIP-890's transaction version 2, the epoch bumped at each
    /// transaction's end); `None` when no record carries it (before
    /// Kafka 4.0).
    pub transaction_version: Option<i16>,
    /// Per producer id it used, in id order.
    pub producers: Vec<CoordinatorCounts>,
}

/// A marker whose producer epoch is neither its data's nor one more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OddMarker {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Offset of the marker.
    pub offset: i64,
    /// Producer id.
    pub producer_id: i64,
    /// `COMMIT` or `ABORT`.
    pub marker: &'static str,
    /// The marker's producer epoch.
    pub marker_epoch: i16,
    /// The epoch of the data it closes.
    pub data_epoch: i16,
}

/// An open transaction in one partition: data of a producer after its last
/// marker, no marker yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenTxn {
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch of its last data batch.
    pub producer_epoch: i16,
    /// Transactional id, from `__transaction_state`.
    pub transactional_id: Option<String>,
    /// Its first offset: the last stable offset cannot pass it.
    pub first_offset: i64,
    /// Its last offset.
    pub last_offset: i64,
    /// Timestamp of its first batch.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: i64,
    /// Data batches.
    pub batches: u64,
    /// Records.
    pub records: u64,
    /// Bytes.
    pub bytes: u64,
    /// The coordinator's latest state for its transactional id (`None`:
    /// no `__transaction_state` record of it).
    pub coordinator_state: Option<String>,
    /// Whether it hangs: the coordinator has finished with it (its latest
    /// record is not a transaction of this producer in progress over this
    /// partition), so no marker will come and read_committed consumers
    /// stop at `first_offset` until it is aborted. `None`: cannot be told.
    pub hanging: Option<bool>,
    /// The operator's remedy for a hanging one (printed, never run).
    pub remedy: Option<String>,
}

/// One partition's transactions, from the replica read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionTxns {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Broker whose replica was read.
    pub broker: i32,
    /// Why that replica: `only-replica`, `explicit` (`--leader`),
    /// `metadata-leader` (the leader at capture in the metadata log),
    /// `highest-latest-epoch`, `longest-log`, `ambiguous` (the diff's
    /// rule).
    pub reference: &'static str,
    /// Its log start offset.
    pub log_start_offset: i64,
    /// Its log end offset.
    pub log_end_offset: i64,
    /// Its high watermark (`replication-offset-checkpoint`; `None`: not in
    /// the capture).
    pub high_watermark: Option<i64>,
    /// The last stable offset, as Kafka computes it: the first offset of
    /// the earliest open transaction when it is below the high watermark,
    /// else the high watermark (the log end offset when the high
    /// watermark is unknown).
    pub last_stable_offset: i64,
    /// What sets it: `open-transaction`, `high-watermark` or `log-end`.
    pub lso_bound: &'static str,
    /// Markers that closed data: commits.
    pub committed: u64,
    /// Aborts.
    pub aborted: u64,
    /// Markers with no data of their producer before them (since its
    /// previous marker, or since the log start): transactions that wrote
    /// nothing here, or whose data lies below the log start.
    pub markers_without_data: u64,
    /// Transactional data records.
    pub transactional_records: u64,
    /// Records of batches with a producer id that are not transactional.
    pub idempotent_records: u64,
    /// Records of batches with no producer id.
    pub plain_records: u64,
    /// The open transactions, by first offset.
    pub open: Vec<OpenTxn>,
}

/// One producer id's transactions over the partitions read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerTxns {
    /// Transactional id, from `__transaction_state` (`None`: not there, or
    /// an idempotent producer).
    pub transactional_id: Option<String>,
    /// Producer id.
    pub producer_id: i64,
    /// Lowest producer epoch of its batches and markers.
    pub first_epoch: i16,
    /// Highest.
    pub last_epoch: i16,
    /// Whether it wrote transactional batches or markers.
    pub transactional: bool,
    /// Committed transactions.
    pub committed: OutcomeCounts,
    /// Aborted transactions.
    pub aborted: OutcomeCounts,
    /// Open transactions (data after its last marker).
    pub open: OutcomeCounts,
    /// Its non-transactional (idempotent) data.
    pub idempotent: DataCounts,
    /// Transactions ended with nothing written (the coordinator's count,
    /// [`CoordinatorCounts::empty`]); `None` when it cannot be told
    /// (`empty_unknown` says why).
    pub empty: Option<u64>,
    /// Why `empty` is unknown, or why it may count short.
    pub empty_unknown: Option<String>,
    /// Markers with no data of it before them, over every partition.
    pub markers_without_data: u64,
    /// How `transactions` were counted: `one-partition` (all its data is in
    /// one partition: a marker is a transaction), `epoch-per-transaction`
    /// (each marker carries its data's epoch + 1, transaction version 2:
    /// markers of one epoch in several partitions are one transaction),
    /// `per-partition` (several partitions and one epoch for many
    /// transactions: which markers belong together cannot be told, so
    /// `transactions` is null), `none` (no transaction).
    pub count_rule: &'static str,
    /// Markers (closing data) whose epoch is their data's + 1: the epoch
    /// bumped at the end of the transaction (transaction version 2, or
    /// before it an abort the coordinator wrote after a timeout or a
    /// fence).
    pub epoch_bumped: u64,
    /// Markers with their data's epoch (transaction version 1).
    pub same_epoch: u64,
    /// Markers whose epoch is neither (see the report's `odd_markers`).
    pub odd_epoch: u64,
    /// Duration in milliseconds of each transaction in each partition:
    /// its first data batch's timestamp to its marker's.
    pub duration_ms: Option<Spread>,
    /// Records of each transaction in each partition (committed and
    /// aborted).
    pub records_per_transaction: Option<Spread>,
    /// Partitions it wrote to.
    pub partitions: Vec<PartitionRef>,
    /// The coordinator's count for this producer id (`None`: no
    /// `__transaction_state` record of it).
    pub coordinator: Option<CoordinatorCounts>,
}

/// Everything `klf transactions` reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TxnReport {
    /// Producers with a producer id, transactional first (by transactional
    /// id, then producer id), then idempotent ones.
    pub producers: Vec<ProducerTxns>,
    /// The partitions read, in topic and partition order.
    pub partitions: Vec<PartitionTxns>,
    /// Every transactional id in `__transaction_state`.
    pub coordinator: Vec<CoordinatorTxns>,
    /// Why the coordinator's view is missing or partial (`None`: read
    /// whole).
    pub coordinator_unknown: Option<String>,
    /// Markers whose epoch is neither their data's nor one more (the
    /// first [`ODD_MARKERS_KEPT`]).
    pub odd_markers: Vec<OddMarker>,
    /// How many there are in all.
    pub odd_markers_total: u64,
}

/// How many odd markers a report lists.
pub const ODD_MARKERS_KEPT: usize = 100;
