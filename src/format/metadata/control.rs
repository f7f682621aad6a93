//! KRaft control records (`LeaderChangeMessage`, snapshot header and footer,
//! `KRaftVersionRecord`, `VotersRecord`) as `kafka-dump-log` prints them, and
//! the names of metadata snapshot `.checkpoint` files.

use crate::format::metadata::schema::{read_message, reversion, write_json, Msg, Reader, Schema};
use crate::format::metadata::tables;
pub use crate::format::names::parse_checkpoint_name;
use crate::format::ParseError;

/// Control record types whose value Kafka prints as JSON (KRaft control
/// records in `__cluster_metadata` and metadata snapshots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KraftControlType {
    /// Type 2: `LeaderChangeMessage`, printed as ` LeaderChange: <json>`.
    LeaderChange,
    /// Type 3: ` SnapshotHeader <json>`.
    SnapshotHeader,
    /// Type 4: ` SnapshotFooter <json>`.
    SnapshotFooter,
    /// Type 5: ` KRaftVersion <json>`.
    KRaftVersion,
    /// Type 6: ` KRaftVoters <json>`.
    KRaftVoters,
}

impl KraftControlType {
    /// From the control record key's type id (2–6); `None` for others
    /// (0/1 are transaction markers, the rest unknown).
    pub fn from_type_id(id: i16) -> Option<Self> {
        Some(match id {
            2 => KraftControlType::LeaderChange,
            3 => KraftControlType::SnapshotHeader,
            4 => KraftControlType::SnapshotFooter,
            5 => KraftControlType::KRaftVersion,
            6 => KraftControlType::KRaftVoters,
            _ => return None,
        })
    }

    fn schema(self) -> &'static Schema {
        match self {
            KraftControlType::LeaderChange => &tables::LEADER_CHANGE_MESSAGE,
            KraftControlType::SnapshotHeader => &tables::SNAPSHOT_HEADER_RECORD,
            KraftControlType::SnapshotFooter => &tables::SNAPSHOT_FOOTER_RECORD,
            KraftControlType::KRaftVersion => &tables::KRAFT_VERSION_RECORD,
            KraftControlType::KRaftVoters => &tables::VOTERS_RECORD,
        }
    }

    /// The label the dump tool prints before the JSON.
    pub fn label(self) -> &'static str {
        match self {
            KraftControlType::LeaderChange => "LeaderChange:",
            KraftControlType::SnapshotHeader => "SnapshotHeader",
            KraftControlType::SnapshotFooter => "SnapshotFooter",
            KraftControlType::KRaftVersion => "KRaftVersion",
            KraftControlType::KRaftVoters => "KRaftVoters",
        }
    }
}

/// Decodes the value of a KRaft control record. Kafka always reads it at
/// schema version 0; the returned message carries that read version.
pub fn decode_kraft_control(kind: KraftControlType, value: &[u8]) -> Result<Msg, ParseError> {
    let mut r = Reader::new(value, 0);
    read_message(&mut r, kind.schema(), 0)
}

/// The JSON the dump tool prints for a KRaft control record value: the
/// message read at version 0, written at the version stored in its own
/// `version` field (fields that version has and version 0 lacks print their
/// defaults). `Err` when the value does not decode: the tool aborts the
/// run there.
pub fn kraft_control_json(kind: KraftControlType, value: &[u8]) -> Result<String, ParseError> {
    let msg = decode_kraft_control(kind, value)?;
    let write_version = msg
        .int("version")
        .and_then(|v| i16::try_from(v).ok())
        .unwrap_or(0);
    let mut out = String::new();
    write_json(&mut out, &reversion(&msg, write_version));
    Ok(out)
}

/// The piece of a record line the dump tool prints for a KRaft control
/// record (types 2–6), with its leading space: e.g. ` SnapshotHeader {…}`,
/// ` LeaderChange: {…}`.
pub fn format_kraft_control(kind: KraftControlType, value: &[u8]) -> Result<String, ParseError> {
    Ok(format!(
        " {} {}",
        kind.label(),
        kraft_control_json(kind, value)?
    ))
}

/// What the dump tool prints for a metadata snapshot `.checkpoint` file
/// name before its batches: `KRaft bootstrap snapshot` for
/// `bootstrap.checkpoint`, else `Snapshot end offset: <o>, epoch: <e>` from a
/// `<20 digits>-<10 digits>.checkpoint` name. `None` for other names (the
/// tool aborts on those).
pub fn checkpoint_header_line(file_name: &str) -> Option<String> {
    if file_name == "bootstrap.checkpoint" {
        return Some("KRaft bootstrap snapshot".to_string());
    }
    let (offset, epoch) = parse_checkpoint_name(file_name)?;
    Some(format!("Snapshot end offset: {offset}, epoch: {epoch}"))
}
