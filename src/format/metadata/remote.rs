//! `__remote_log_metadata`: the records a broker's
//! `TopicBasedRemoteLogMetadataManager` writes for tiered storage (KIP-405):
//! a segment copied to remote storage, its state changes (copy finished,
//! delete started and finished), a partition's deletion, and (in the
//! manager's own snapshots) the segment metadata snapshot. The records are
//! framed as metadata records ([`super::decode_remote_log_metadata_record`]);
//! this module gives the text `kafka-dump-log
//! --remote-log-metadata-decoder` prints for one: the Java `toString()` of
//! the object Kafka's `RemoteLogMetadataSerde` makes of it.

use super::decode_remote_log_metadata_record;
use super::schema::{uuid_string, Msg, Val};

/// `RemoteLogSegmentState` by id.
pub const SEGMENT_STATES: [&str; 4] = [
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
];

/// `RemotePartitionDeleteState` by id.
pub const PARTITION_DELETE_STATES: [&str; 3] = [
    "DELETE_PARTITION_MARKED",
    "DELETE_PARTITION_STARTED",
    "DELETE_PARTITION_FINISHED",
];

fn state(names: &[&str], what: &str, id: Option<i64>) -> Result<String, String> {
    let id = id.unwrap_or(-1);
    usize::try_from(id)
        .ok()
        .and_then(|i| names.get(i))
        .map(|s| s.to_string())
        .ok_or_else(|| format!("Given {what} id is invalid: {id}"))
}

/// `TopicIdPartition.toString()`: `<topic id>:<topic>-<partition>`.
fn topic_id_partition(m: Option<&Msg>) -> String {
    let Some(m) = m else {
        return "null".into();
    };
    format!(
        "{}:{}-{}",
        m.uuid("id").map_or("null".into(), |u| uuid_string(&u)),
        m.str("name").unwrap_or("null"),
        m.int("partition").unwrap_or(0)
    )
}

fn sub<'a>(m: &'a Msg, name: &str) -> Option<&'a Msg> {
    match m.get(name) {
        Some(Val::Struct(s)) => Some(s),
        _ => None,
    }
}

/// `RemoteLogSegmentId.toString()`.
fn segment_id(m: &Msg) -> String {
    let id = sub(m, "remoteLogSegmentId");
    format!(
        "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
        topic_id_partition(id.and_then(|i| sub(i, "topicIdPartition"))),
        id.and_then(|i| i.uuid("id"))
            .map_or("null".into(), |u| uuid_string(&u))
    )
}

/// `Optional<CustomMetadata>.toString()`.
fn custom_metadata(m: &Msg) -> String {
    match m.get("customMetadata") {
        Some(Val::Bytes(b)) => format!("Optional[CustomMetadata{{{} bytes}}]", b.len()),
        _ => "Optional.empty".into(),
    }
}

/// The segment's leader epochs as the `TreeMap<Integer, Long>` Kafka builds
/// of them prints: `{0=0, 3=72}` (a repeated epoch keeps its last offset).
fn leader_epochs(m: &Msg) -> String {
    let mut map = std::collections::BTreeMap::new();
    if let Some(Val::Arr(entries)) = m.get("segmentLeaderEpochs") {
        for e in entries {
            if let Val::Struct(e) = e {
                map.insert(
                    e.int("leaderEpoch").unwrap_or(0),
                    e.int("offset").unwrap_or(0),
                );
            }
        }
    }
    let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", parts.join(", "))
}

fn int(m: &Msg, name: &str) -> i64 {
    m.int(name).unwrap_or(0)
}

/// The `toString()` of the object one `__remote_log_metadata` record
/// value becomes, or the message of the exception Kafka's serde raises on
/// it. `txn_idx_empty`: the segment objects print `txnIdxEmpty` (Kafka 4.0
/// on).
pub fn remote_log_metadata_text(value: &[u8], txn_idx_empty: bool) -> Result<String, String> {
    let rec = decode_remote_log_metadata_record(value).map_err(|e| e.reason.into_owned())?;
    let m = &rec.body;
    let txn = |m: &Msg| {
        if txn_idx_empty {
            format!(", txnIdxEmpty={}", m.bool("txnIndexEmpty").unwrap_or(false))
        } else {
            String::new()
        }
    };
    Ok(match rec.api_key {
        0 => format!(
            "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={}, endOffset={}, brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={}, segmentSizeInBytes={}, customMetadata={}, state={}{}}}",
            segment_id(m),
            int(m, "startOffset"),
            int(m, "endOffset"),
            int(m, "brokerId"),
            int(m, "maxTimestampMs"),
            int(m, "eventTimestampMs"),
            leader_epochs(m),
            int(m, "segmentSizeInBytes"),
            custom_metadata(m),
            state(&SEGMENT_STATES, "remote log segment state", m.int("remoteLogSegmentState"))?,
            txn(m)
        ),
        1 => format!(
            "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={}, state={}, eventTimestampMs={}, brokerId={}}}",
            segment_id(m),
            custom_metadata(m),
            state(&SEGMENT_STATES, "remote log segment state", m.int("remoteLogSegmentState"))?,
            int(m, "eventTimestampMs"),
            int(m, "brokerId")
        ),
        2 => format!(
            "RemotePartitionDeleteMetadata{{topicPartition={}, state={}, eventTimestampMs={}, brokerId={}}}",
            topic_id_partition(sub(m, "topicIdPartition")),
            state(
                &PARTITION_DELETE_STATES,
                "remote partition delete state",
                m.int("remotePartitionDeleteState")
            )?,
            int(m, "eventTimestampMs"),
            int(m, "brokerId")
        ),
        _ => format!(
            "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset={}, endOffset={}, maxTimestampMs={}, segmentLeaderEpochs={}, segmentSizeInBytes={}, customMetadata={}, state={}{}}}",
            m.uuid("segmentId").map_or("null".into(), |u| uuid_string(&u)),
            int(m, "startOffset"),
            int(m, "endOffset"),
            int(m, "maxTimestampMs"),
            leader_epochs(m),
            int(m, "segmentSizeInBytes"),
            custom_metadata(m),
            state(&SEGMENT_STATES, "remote log segment state", m.int("remoteLogSegmentState"))?,
            txn(m)
        ),
    })
}

/// The text `kafka-dump-log --remote-log-metadata-decoder` prints after
/// ` payload: ` for the record at `offset` (no key is printed): the
/// object's `toString()`, or `Error at offset <offset>, skipping. <reason>`.
pub fn format_remote_log_metadata_payload(
    offset: i64,
    value: Option<&[u8]>,
    txn_idx_empty: bool,
) -> String {
    match value.map(|v| remote_log_metadata_text(v, txn_idx_empty)) {
        Some(Ok(t)) => t,
        Some(Err(e)) => format!("Error at offset {offset}, skipping. {e}"),
        None => format!("Error at offset {offset}, skipping. null"),
    }
}
