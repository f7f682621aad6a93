//! `klf salvage` files: a salvaged record as one JSON line, the replay
//! line Kafka's console producer and kcat read, and the manifest.

use std::io::Write;

use serde::Serialize;

use crate::model::{Bytes, SalvagedRecord};
use crate::render::json;

#[derive(Serialize)]
struct Header<'a> {
    key: &'a str,
    value: &'a Option<Bytes>,
}

/// A salvaged record on the wire (`docs/json.md`, `klf salvage`).
#[derive(Serialize)]
struct Record<'a> {
    offset: i64,
    leader_epoch: i32,
    #[serde(serialize_with = "crate::model::time::millis")]
    timestamp: i64,
    timestamp_type: &'static str,
    key: &'a Option<Bytes>,
    value: &'a Option<Bytes>,
    headers: Vec<Header<'a>>,
    producer_id: i64,
    producer_epoch: i16,
    sequence: i32,
    transactional: bool,
    control: Option<&'static str>,
    transaction: Option<&'static str>,
    held_by: &'a [i32],
    committed: &'static str,
    batch_base_offset: i64,
}

/// Writes `r` as one JSON line.
pub fn write_record(r: &SalvagedRecord, w: &mut impl Write) -> std::io::Result<()> {
    let rec = Record {
        offset: r.offset,
        leader_epoch: r.leader_epoch,
        timestamp: r.timestamp,
        timestamp_type: r.timestamp_type,
        key: &r.key,
        value: &r.value,
        headers: r
            .headers
            .iter()
            .map(|(k, v)| Header { key: k, value: v })
            .collect(),
        producer_id: r.producer_id,
        producer_epoch: r.producer_epoch,
        sequence: r.sequence,
        transactional: r.transactional,
        control: r.control,
        transaction: r.transaction,
        held_by: &r.held_by,
        committed: r.committed.name(),
        batch_base_offset: r.batch_base_offset,
    };
    json::line(w, &rec)
}

/// Why a salvaged record is left out of the replay file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotReplayed {
    /// A transaction marker.
    Control,
    /// Data of an aborted transaction: never visible, never replayed.
    Aborted,
    /// Data of a transaction with no marker among the lost batches.
    OpenTransaction,
    /// A null key or value (a tombstone) the text format cannot carry.
    Null,
    /// Bytes that are not UTF-8, or hold a tab or line break.
    NotText,
    /// Headers (the text format carries none).
    Headers,
}

/// The replay line of `r`: `key TAB value`, for Kafka's console producer
/// (`--property parse.key=true --property key.separator=<TAB>`) and kcat
/// (`-K '\t'`); or why it has none (the JSON line still has it).
pub fn replay_line(r: &SalvagedRecord) -> Result<String, NotReplayed> {
    if r.control.is_some() {
        return Err(NotReplayed::Control);
    }
    match r.transaction {
        Some("aborted") => return Err(NotReplayed::Aborted),
        Some("open") => return Err(NotReplayed::OpenTransaction),
        _ => {}
    }
    if !r.headers.is_empty() {
        return Err(NotReplayed::Headers);
    }
    let text = |b: &Option<Bytes>| match b {
        None => Err(NotReplayed::Null),
        Some(Bytes::Base64(_)) => Err(NotReplayed::NotText),
        Some(Bytes::Text(t)) if t.contains(['\t', '\n', '\r']) => Err(NotReplayed::NotText),
        Some(Bytes::Text(t)) => Ok(t.clone()),
    };
    Ok(format!("{}\t{}\n", text(&r.key)?, text(&r.value)?))
}

/// Counts of records left out of the replay file, by reason.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ReplaySkipped {
    /// Transaction markers.
    pub control: u64,
    /// Aborted transactional data.
    pub aborted: u64,
    /// Transactional data with no marker in the loss.
    pub open_transaction: u64,
    /// Null key or value.
    pub null: u64,
    /// Not UTF-8 text, or with a tab or line break.
    pub not_text: u64,
    /// With headers.
    pub headers: u64,
}

impl ReplaySkipped {
    /// Counts one.
    pub fn add(&mut self, why: NotReplayed) {
        match why {
            NotReplayed::Control => self.control += 1,
            NotReplayed::Aborted => self.aborted += 1,
            NotReplayed::OpenTransaction => self.open_transaction += 1,
            NotReplayed::Null => self.null += 1,
            NotReplayed::NotText => self.not_text += 1,
            NotReplayed::Headers => self.headers += 1,
        }
    }

    /// Each reason, under its name in the manifest (`replay_skipped`), with
    /// its count and what it means.
    pub fn reasons(&self) -> [(&'static str, u64, &'static str); 6] {
        [
            ("control", self.control, "transaction markers"),
            ("aborted", self.aborted, "data of aborted transactions"),
            (
                "open_transaction",
                self.open_transaction,
                "transactional data with no marker among the lost batches",
            ),
            ("null", self.null, "a null key or value"),
            (
                "not_text",
                self.not_text,
                "a key or value that is not UTF-8 text, or holds a tab or line break",
            ),
            ("headers", self.headers, "records with headers"),
        ]
    }

    /// The records left out, as `name N (meaning)` per reason that has
    /// any, joined with commas (empty when none is left out).
    pub fn words(&self) -> String {
        self.reasons()
            .iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(name, n, what)| format!("{name} {n} ({what})"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One input file read, with its size and CRC-32C.
#[derive(Debug, Clone, Serialize)]
pub struct InputRead {
    /// The file.
    pub file: String,
    /// Its size.
    pub bytes: u64,
    /// CRC-32C of its content (`null` when it could not be read again).
    pub crc32c: Option<String>,
}

/// Offsets `[start, end)`.
#[derive(Debug, Clone, Serialize)]
pub struct Range {
    /// First offset.
    pub start: i64,
    /// One past the last.
    pub end: i64,
}

/// A lost batch not salvaged.
#[derive(Debug, Clone, Serialize)]
pub struct NotSalvaged {
    /// Offsets.
    pub start: i64,
    /// See `start`.
    pub end: i64,
    /// File and byte where reading failed (`null`: not found).
    pub file: Option<String>,
    /// See `file`.
    pub position: Option<u64>,
    /// Why.
    pub reason: String,
}

/// Damage met while reading a replica.
#[derive(Debug, Clone, Serialize)]
pub struct Damage {
    /// The file.
    pub file: String,
    /// The byte (`null` when not known).
    pub position: Option<u64>,
    /// Why.
    pub reason: String,
}

/// The files written for a partition.
#[derive(Debug, Clone, Serialize)]
pub struct Files {
    /// JSON Lines of every salvaged record.
    pub records: String,
    /// The replay file.
    pub replay: String,
    /// The copy of the original batches (`null` without `--log`).
    pub log: Option<String>,
}

/// One partition in the manifest.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionManifest {
    /// The partition.
    pub topic: String,
    /// See `topic`.
    pub partition: i32,
    /// The reference leader the loss is counted against.
    pub leader: i32,
    /// Data records the partition loses (`klf diff`'s `loss.records`).
    pub records_lost: u64,
    /// Of those, proven committed, and possibly (`null`: unbounded).
    pub committed_proven: u64,
    /// See `committed_proven`.
    pub committed_possible: Option<u64>,
    /// Lost offset ranges.
    pub offsets: Vec<Range>,
    /// Data records salvaged, control records, batches.
    pub records: u64,
    /// See `records`.
    pub control_records: u64,
    /// See `records`.
    pub batches: u64,
    /// Files written.
    pub files: Files,
    /// Lines in the replay file.
    pub replay_records: u64,
    /// Records left out of it, by reason.
    pub replay_skipped: ReplaySkipped,
    /// What could not be salvaged.
    pub unsalvaged: Vec<NotSalvaged>,
    /// Damage met while reading the replicas (a bad batch ends the reading
    /// of its segment: what lies after it is neither counted nor salvaged).
    pub damaged: Vec<Damage>,
    /// The segment files read.
    pub inputs_read: Vec<InputRead>,
}

/// The manifest.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// klf's version.
    pub klf_version: &'static str,
    /// The paths given.
    pub inputs: Vec<String>,
    /// One per partition that loses records.
    pub partitions: Vec<PartitionManifest>,
}

/// Writes the manifest, pretty-printed.
pub fn write_manifest(m: &Manifest, w: &mut impl Write) -> std::io::Result<()> {
    json::document(w, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reasons_are_the_manifests_words() {
        let s = ReplaySkipped {
            control: 1,
            aborted: 200,
            open_transaction: 0,
            null: 52,
            not_text: 0,
            headers: 0,
        };
        let wire = serde_json::to_value(s).unwrap();
        let keys: Vec<&str> = wire
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let names: Vec<&str> = s.reasons().iter().map(|r| r.0).collect();
        assert_eq!(keys, names);
        for (name, n, _) in s.reasons() {
            assert_eq!(wire[name], n);
        }
        assert_eq!(
            s.words(),
            "control 1 (transaction markers), aborted 200 (data of aborted transactions), null 52 (a null key or value)"
        );
        assert_eq!(ReplaySkipped::default().words(), "");
    }
}
