//! kafka-dump-log compatible text for the transaction index, producer
//! snapshots, and the record decoders of the internal topics
//! (`--offsets-decoder`, `--transaction-log-decoder`,
//! `--cluster-metadata-decoder`).

use crate::format::internal::{
    format_offsets_record, format_share_state_record, format_transaction_log_record,
    CoordinatorText, KeyPayload,
};
use crate::format::metadata::format_metadata_payload_for;
use crate::format::snapshot::{read_producer_snapshot, ProducerEntry};
use crate::format::txnindex::{parse_txn_index, AbortedTxn, CURRENT_VERSION};
use crate::format::ParseError;

use crate::render::release::Release;

/// What the dump tool produces for one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDump {
    /// Text on stdout, starting with the `Dumping <file>` line; every line ends with `\n`.
    pub stdout: String,
    /// Text on stderr (e.g. a corrupt snapshot's message), lines ending with `\n`.
    pub stderr: String,
    /// Set when the tool would abort the whole run after `stdout` (the
    /// exception message; the JVM then prints a stack trace and no summaries).
    pub aborted: Option<String>,
}

/// How `java.io.File` prints a path given on the command line: repeated `/`
/// collapsed, a trailing `/` dropped.
pub fn java_file_display(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c == '/' && out.ends_with('/') {
            continue;
        }
        out.push(c);
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// The `Dumping <file>` header line (with its line end).
pub fn dumping_line(path: &str) -> String {
    format!("Dumping {}\n", java_file_display(path))
}

/// One `.txnindex` line (without line end).
pub fn txn_index_line(e: &AbortedTxn) -> String {
    format!(
        "version: {} producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
        e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset
    )
}

/// The whole output for a `.txnindex` file with contents `data`, given as
/// `path` on the command line. The same in every mode (shallow, deep,
/// index sanity check). Kafka collects all entries before printing, so an
/// entry whose version is above 0 aborts the run before any entry line is
/// printed. The abort message names the absolute path; `path` stands in for
/// it here.
pub fn dump_txn_index(path: &str, data: &[u8]) -> FileDump {
    let mut d = FileDump {
        stdout: dumping_line(path),
        ..FileDump::default()
    };
    // parse_txn_index does not fail on content.
    let idx = match parse_txn_index(data) {
        Ok(i) => i,
        Err(e) => {
            d.aborted = Some(e.reason.into_owned());
            return d;
        }
    };
    if let Some(bad) = idx.first_bad_version().and_then(|i| idx.entries.get(i)) {
        d.aborted = Some(format!(
            "Unexpected aborted transaction version {} in transaction index {}, current version is {}",
            bad.version,
            java_file_display(path),
            CURRENT_VERSION
        ));
        return d;
    }
    for e in &idx.entries {
        d.stdout.push_str(&txn_index_line(e));
        d.stdout.push('\n');
    }
    d
}

/// One `.snapshot` line (without line end). Without batch metadata the line
/// ends with `lastTimestamp: <ms> ` (trailing space) where `release`'s tool
/// prints one (up to 4.1).
pub fn producer_snapshot_line(e: &ProducerEntry, release: Release) -> String {
    let txn = match (
        e.current_txn_first_offset(),
        release.snapshot_scala_option(),
    ) {
        (Some(o), false) => format!("OptionalLong[{o}]"),
        (None, false) => "OptionalLong.empty".to_string(),
        (Some(o), true) => format!("Some({o})"),
        (None, true) => "None".to_string(),
    };
    let mut s = format!(
        "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {}",
        e.producer_id, e.producer_epoch, e.coordinator_epoch, txn
    );
    if release.snapshot_last_timestamp() {
        s.push_str(&format!(" lastTimestamp: {}", e.timestamp));
    }
    if e.has_batch_metadata() || release.snapshot_trailing_space() {
        s.push(' ');
    }
    if e.has_batch_metadata() {
        s.push_str(&format!(
            "firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
            e.first_sequence(),
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp
        ));
    }
    s
}

/// The whole output for a producer `.snapshot` file. A corrupt snapshot
/// (bad version, schema failure, CRC mismatch) prints Kafka's message on
/// stderr and the run continues.
pub fn dump_producer_snapshot(path: &str, data: &[u8], release: Release) -> FileDump {
    let mut d = FileDump {
        stdout: dumping_line(path),
        ..FileDump::default()
    };
    match read_producer_snapshot(data) {
        Ok(snap) => {
            for e in &snap.entries {
                d.stdout.push_str(&producer_snapshot_line(e, release));
                d.stdout.push('\n');
            }
        }
        Err(e) => {
            d.stderr.push_str(&e.reason);
            d.stderr.push('\n');
        }
    }
    d
}

/// The record decoders of kafka-dump-log handled here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuxDecoder {
    /// `--offsets-decoder` (`__consumer_offsets`).
    Offsets,
    /// `--transaction-log-decoder` (`__transaction_state`).
    TransactionLog,
    /// `--cluster-metadata-decoder` (`__cluster_metadata`, metadata snapshots).
    ClusterMetadata,
    /// `--share-group-state-decoder` (`__share_group_state`).
    ShareGroupState,
    /// `--remote-log-metadata-decoder` (`__remote_log_metadata`, tiered
    /// storage).
    RemoteLogMetadata,
}

impl AuxDecoder {
    /// The key and payload texts `release`'s tool prints for one (non-control)
    /// record at `offset` (` key: <key>` and ` payload: <payload>` pieces;
    /// a `None` piece is not printed). `Err` means the tool aborts the run
    /// at this record (the offsets and transaction-log decoders on a record
    /// without a key).
    pub fn decode(
        self,
        release: Release,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<KeyPayload, ParseError> {
        let text = CoordinatorText {
            line: (release.major, release.minor),
            status_names: release.transaction_status_names(),
            scala_transactions: release.scala_transaction_text(),
            scala_offsets: release.scala_offsets_text(),
            scala_unknown_key_aborts: release.scala_unknown_key_aborts(),
        };
        match self {
            AuxDecoder::Offsets => format_offsets_record(offset, key, value, text),
            AuxDecoder::TransactionLog => format_transaction_log_record(offset, key, value, text),
            AuxDecoder::ShareGroupState => format_share_state_record(offset, key, value, text),
            AuxDecoder::ClusterMetadata => Ok(KeyPayload {
                key: None,
                payload: Some(format_metadata_payload_for(
                    offset,
                    value,
                    (release.major, release.minor),
                )),
            }),
            AuxDecoder::RemoteLogMetadata => Ok(KeyPayload {
                key: None,
                payload: Some(
                    crate::format::metadata::remote::format_remote_log_metadata_payload(
                        offset,
                        value,
                        release.remote_txn_idx_empty(),
                    ),
                ),
            }),
        }
    }

    /// [`AuxDecoder::decode`] for the json and table formats: the same,
    /// but a remote log metadata record as the JSON of its schema
    /// (`{"type", "version", "data"}`, as cluster metadata is printed)
    /// rather than Kafka's Java `toString()`.
    pub fn decode_structured(
        self,
        release: Release,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<KeyPayload, ParseError> {
        if self != AuxDecoder::RemoteLogMetadata {
            return self.decode(release, offset, key, value);
        }
        let payload = match value.map(crate::format::metadata::decode_remote_log_metadata_record) {
            Some(Ok(rec)) => rec.to_json(),
            Some(Err(e)) => return Err(e),
            None => return Err(ParseError::new(0, "no value")),
        };
        Ok(KeyPayload {
            key: None,
            payload: Some(payload),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_like_java_file() {
        assert_eq!(java_file_display("a//b/"), "a/b");
        assert_eq!(java_file_display("/"), "/");
    }

    #[test]
    fn snapshot_line_without_metadata_has_trailing_space() {
        let e = ProducerEntry {
            producer_id: 1,
            producer_epoch: 0,
            last_sequence: -1,
            last_offset: -1,
            offset_delta: 0,
            timestamp: 5,
            coordinator_epoch: 3,
            current_txn_first_offset: 17,
        };
        assert_eq!(
            producer_snapshot_line(&e, Release::new(4, 1)),
            "producerId: 1 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong[17] lastTimestamp: 5 "
        );
        assert_eq!(
            producer_snapshot_line(&e, Release::new(4, 4)),
            "producerId: 1 producerEpoch: 0 coordinatorEpoch: 3 currentTxnFirstOffset: OptionalLong[17] lastTimestamp: 5"
        );
    }

    #[test]
    fn txn_index_abort_on_bad_version() {
        let mut data = vec![0u8; 34];
        data.extend_from_slice(&[1u8; 34]);
        let d = dump_txn_index("x//00.txnindex", &data);
        assert_eq!(d.stdout, "Dumping x/00.txnindex\n");
        assert!(d
            .aborted
            .unwrap()
            .starts_with("Unexpected aborted transaction version 1"));
    }

    #[test]
    fn corrupt_snapshot_goes_to_stderr() {
        let d = dump_producer_snapshot(
            "p/1.snapshot",
            &[0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
            Release::NEWEST,
        );
        assert_eq!(d.stdout, "Dumping p/1.snapshot\n");
        assert!(d.stderr.starts_with(
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: 0. Computed crc: "
        ));
    }
}
