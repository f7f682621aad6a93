//! The records a truncation cuts, one by one, and their summary by producer
//! and time range: what an SRE needs to tell the owners of the data what was
//! lost.

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::model::records::{Bytes, LostRecord, UnreadBatch};

/// The cut records of one producer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerLoss {
    /// Producer id (-1: records written without one).
    pub producer_id: i64,
    /// Producer epochs seen.
    pub producer_epochs: Vec<i16>,
    /// Records.
    pub records: u64,
    /// First and last offset.
    pub first_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// First and last sequence (-1 when the producer is not idempotent).
    pub first_sequence: i32,
    /// Last sequence.
    pub last_sequence: i32,
    /// Earliest timestamp.
    pub first_timestamp: i64,
    /// Latest timestamp.
    pub last_timestamp: i64,
}

/// Summary of the cut records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// Summarises cut records by producer, epoch and time range.
pub fn summarize(records: &[LostRecord]) -> LossSummary {
    let mut b = SummaryBuilder::default();
    for r in records {
        b.add(r);
    }
    b.finish()
}

/// A [`LossSummary`] built one record at a time, so that every record is
/// counted while only some are kept (`--records-limit`).
#[derive(Debug, Clone, Default)]
pub struct SummaryBuilder {
    by_producer: BTreeMap<i64, ProducerLoss>,
    by_epoch: BTreeMap<i32, u64>,
    records: u64,
    control: u64,
    first_timestamp: Option<i64>,
    last_timestamp: Option<i64>,
}

impl SummaryBuilder {
    /// Counts one record.
    pub fn add(&mut self, r: &LostRecord) {
        self.records += 1;
        self.first_timestamp = Some(
            self.first_timestamp
                .map_or(r.timestamp, |t| t.min(r.timestamp)),
        );
        self.last_timestamp = Some(
            self.last_timestamp
                .map_or(r.timestamp, |t| t.max(r.timestamp)),
        );
        *self.by_epoch.entry(r.epoch).or_insert(0) += 1;
        if r.control {
            self.control += 1;
            return;
        }
        let p = self
            .by_producer
            .entry(r.producer_id)
            .or_insert(ProducerLoss {
                producer_id: r.producer_id,
                producer_epochs: Vec::new(),
                records: 0,
                first_offset: r.offset,
                last_offset: r.offset,
                first_sequence: r.sequence,
                last_sequence: r.sequence,
                first_timestamp: r.timestamp,
                last_timestamp: r.timestamp,
            });
        if !p.producer_epochs.contains(&r.producer_epoch) {
            p.producer_epochs.push(r.producer_epoch);
        }
        p.records += 1;
        if r.offset < p.first_offset {
            p.first_offset = r.offset;
            p.first_sequence = r.sequence;
        }
        if r.offset > p.last_offset {
            p.last_offset = r.offset;
            p.last_sequence = r.sequence;
        }
        p.first_timestamp = p.first_timestamp.min(r.timestamp);
        p.last_timestamp = p.last_timestamp.max(r.timestamp);
    }

    /// Records counted so far.
    pub fn count(&self) -> u64 {
        self.records
    }

    /// The summary.
    pub fn finish(self) -> LossSummary {
        LossSummary {
            records: self.records,
            control_records: self.control,
            first_timestamp: self.first_timestamp,
            last_timestamp: self.last_timestamp,
            by_epoch: self.by_epoch,
            by_producer: self.by_producer.into_values().collect(),
        }
    }
}

/// How many unread batches a list names (the rest are counted).
pub const UNREAD_NAMED: usize = 1000;

/// The records of a list that could not be read back, and where.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
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
