//! Records read back from a log, as the loss reports list them (and the
//! byte-string form every JSON output uses).

use std::collections::BTreeMap;

use serde::Serialize;

/// Whether a lost record had been committed (see `analysis::loss`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Committed {
    /// Below a high watermark some evidence shows.
    Proven,
    /// Possibly: held by every member of an ISR in force.
    Possible,
    /// Cannot be told (no ISR history covers it).
    Unknown,
    /// No: some ISR member in force never held it.
    No,
}

impl Committed {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Committed::Proven => "proven",
            Committed::Possible => "possible",
            Committed::Unknown => "unknown",
            Committed::No => "no",
        }
    }
}

/// Bytes of a key, as JSON: UTF-8 text when it is valid, else base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bytes {
    /// Valid UTF-8.
    Text(String),
    /// Anything else, base64 (standard alphabet, padded).
    Base64(String),
}

impl Bytes {
    /// Classifies raw bytes.
    pub fn from_raw(b: &[u8]) -> Bytes {
        match std::str::from_utf8(b) {
            Ok(s) => Bytes::Text(s.to_string()),
            Err(_) => Bytes::Base64(base64(b)),
        }
    }
}

fn base64(b: &[u8]) -> String {
    crate::format::text::base64(b, crate::format::text::STD_ALPHABET, true)
}

/// One record a truncation cuts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostRecord {
    /// Offset.
    pub offset: i64,
    /// Leader epoch of its batch.
    pub epoch: i32,
    /// Record timestamp (ms).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub timestamp: i64,
    /// Producer id of its batch (-1: none).
    pub producer_id: i64,
    /// Producer epoch of its batch.
    pub producer_epoch: i16,
    /// Producer sequence of the record (-1: none).
    pub sequence: i32,
    /// Key, `null` when the record has none.
    pub key: Option<Bytes>,
    /// Value size in bytes, `null` for a tombstone (null value).
    pub value_size: Option<usize>,
    /// Part of a control batch (a transaction marker).
    pub control: bool,
    /// Part of a transactional batch.
    pub transactional: bool,
    /// Whether the record had been committed (`proven`, `possible`, `no`,
    /// `unknown`; see the partition's `loss`), for a record that no replica
    /// keeps; `null` for a cut record that another replica keeps.
    pub committed: Option<Committed>,
    /// Replicas holding the record now (partition-level lists); `null` in a
    /// replica's own list.
    pub held_by: Option<Vec<i32>>,
}

/// A batch whose records are counted in a list's figures (from its header)
/// but could not be read back: a batch that inflates past the
/// decompression cap, a record that does not parse, a segment whose
/// reading stopped before it. Listed with where and why, so that the
/// records shown and the records counted always agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnreadBatch {
    /// The batch's offsets concerned, `[start, end)`.
    pub start: i64,
    /// See `start`.
    pub end: i64,
    /// Records of the list in it that were not read.
    pub records: u64,
    /// Broker whose replica it was read from (`null`: no replica holding
    /// it could be read).
    pub broker: Option<i32>,
    /// The segment file (`null`: not reached).
    pub file: Option<String>,
    /// Byte position of the batch in it (`null`: not reached).
    pub position: Option<u64>,
    /// Why.
    pub reason: String,
}

/// One lost record, salvaged whole from a replica that holds it (`klf
/// salvage`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalvagedRecord {
    /// Original offset.
    pub offset: i64,
    /// Leader epoch of its batch.
    pub leader_epoch: i32,
    /// Timestamp (ms).
    pub timestamp: i64,
    /// `CreateTime` or `LogAppendTime`.
    pub timestamp_type: &'static str,
    /// Key (`None`: null).
    pub key: Option<Bytes>,
    /// Value (`None`: null, a tombstone).
    pub value: Option<Bytes>,
    /// Headers: key (UTF-8, lossily), value.
    pub headers: Vec<(String, Option<Bytes>)>,
    /// Producer id, epoch and sequence (`-1` when none).
    pub producer_id: i64,
    /// See `producer_id`.
    pub producer_epoch: i16,
    /// See `producer_id`.
    pub sequence: i32,
    /// From a transactional batch.
    pub transactional: bool,
    /// For a control record: the marker type (`COMMIT`, `ABORT`, ...).
    pub control: Option<&'static str>,
    /// For transactional data: `committed`, `aborted` (its marker in the
    /// loss says so), or `open` (no marker for it among the lost batches).
    pub transaction: Option<&'static str>,
    /// Brokers holding it.
    pub held_by: Vec<i32>,
    /// Whether it was committed.
    pub committed: Committed,
    /// Base offset of its batch.
    pub batch_base_offset: i64,
}

/// The lost (or cut) data records of one producer, counted either from
/// the lost batches' headers (`analysis::loss`, a partition's loss) or
/// from the records read back (`analysis::lost`, a list of records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerLoss {
    /// Producer id (`-1`: records written without one).
    pub producer_id: i64,
    /// Producer epochs seen: ascending when counted from batch headers, in
    /// the order read when counted from records.
    pub producer_epochs: Vec<i16>,
    /// Data records.
    pub records: u64,
    /// First offset.
    pub first_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// Sequence of the record at the first offset (`-1`: the producer is
    /// not idempotent).
    pub first_sequence: i32,
    /// Sequence of the record at the last offset.
    pub last_sequence: i32,
    /// Earliest and latest record timestamp (ms); `None` when counted from
    /// batch headers, which give a batch's first and largest timestamp, not
    /// those of the records lost from it.
    pub timestamps: Option<(i64, i64)>,
    /// Whether any of its records is transactional.
    pub transactional: bool,
}

/// Summary of the cut records (`render::diff` writes its JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossSummary {
    /// Records (control records included).
    pub records: u64,
    /// Control records among them.
    pub control_records: u64,
    /// Earliest timestamp, `null` when nothing is cut.
    pub first_timestamp: Option<i64>,
    /// Latest timestamp.
    pub last_timestamp: Option<i64>,
    /// Leader epochs of the cut records, with their counts.
    pub by_epoch: BTreeMap<i32, u64>,
    /// Per producer, by producer id.
    pub by_producer: Vec<ProducerLoss>,
}

/// How many unread batches a list names (the rest are counted).
pub const UNREAD_NAMED: usize = 1000;

/// The records of a list that could not be read back, and where.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// Records not read.
    pub records: u64,
    /// Batches they are in.
    pub batch_count: u64,
    /// The batches, at most [`UNREAD_NAMED`] of them, in the list's order.
    pub batches: Vec<UnreadBatch>,
}

impl LeftOut {
    /// Counts `b` (named while fewer than [`UNREAD_NAMED`] are).
    pub fn add(&mut self, b: UnreadBatch) {
        if b.records == 0 {
            return;
        }
        self.records += b.records;
        self.batch_count += 1;
        if self.batches.len() < UNREAD_NAMED {
            self.batches.push(b);
        }
    }

    /// Whether nothing was left out.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }
}

/// What reading one list of records back found: every record read,
/// summarised; how many were listed and how many not (beyond the limit);
/// and what the figures count that could not be read.
#[derive(Debug, Clone)]
pub struct RecordsRead {
    /// Every record read, summarised.
    pub summary: LossSummary,
    /// Records listed.
    pub listed: u64,
    /// Records read but not listed (beyond the limit).
    pub omitted: u64,
    /// Records counted in the figures that could not be read back.
    pub left_out: LeftOut,
}
