//! The records a truncation cuts, one by one, and their summary by producer
//! and time range: what an SRE needs to tell the owners of the data what was
//! lost.

use std::collections::BTreeMap;

use serde::Serialize;

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
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One record a truncation cuts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostRecord {
    /// Offset.
    pub offset: i64,
    /// Leader epoch of its batch.
    pub epoch: i32,
    /// Record timestamp (ms).
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
    pub committed: Option<crate::analysis::loss::Committed>,
    /// Replicas holding the record now (partition-level lists); `null` in a
    /// replica's own list.
    pub held_by: Option<Vec<i32>>,
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
    }
}
