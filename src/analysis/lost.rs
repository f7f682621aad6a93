//! The records a truncation cuts, summarised by producer and time range as
//! they are read: what an SRE needs to tell the owners of the data what was
//! lost (the summary's data is [`crate::model::records`]).

use std::collections::BTreeMap;

use crate::model::records::{LossSummary, LostRecord, ProducerLoss};

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
                timestamps: None,
                transactional: false,
            });
        if !p.producer_epochs.contains(&r.producer_epoch) {
            p.producer_epochs.push(r.producer_epoch);
        }
        p.records += 1;
        p.transactional |= r.transactional;
        if r.offset < p.first_offset {
            p.first_offset = r.offset;
            p.first_sequence = r.sequence;
        }
        if r.offset > p.last_offset {
            p.last_offset = r.offset;
            p.last_sequence = r.sequence;
        }
        p.timestamps = Some(match p.timestamps {
            Some((first, last)) => (first.min(r.timestamp), last.max(r.timestamp)),
            None => (r.timestamp, r.timestamp),
        });
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
