//! Records of the internal topics `__consumer_offsets` (group coordinator)
//! and `__transaction_state` (transaction coordinator), as Kafka 4.1 writes
//! and `kafka-dump-log --offsets-decoder` / `--transaction-log-decoder`
//! prints them.
//!
//! Framing for both topics: the record key is an int16 record type followed
//! by the key message (always version 0); the value is an int16 version
//! followed by the value message, or absent (a tombstone). Both decoders of
//! Kafka 4.1 print `{"type":"<record type>","data":{…}}` as the key and
//! `{"version":"<value version>","data":{…}}` (or `<DELETE>`) as the payload.

use crate::format::metadata::schema::{
    read_message, write_json, Msg, Reader, Schema, Val, UNDERFLOW,
};
use crate::format::ParseError;

/// The key and payload texts of one record, as the dump tool prints them
/// after ` key: ` and ` payload: ` (each omitted when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPayload {
    pub key: Option<String>,
    pub payload: Option<String>,
}

/// A decoded coordinator record.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinatorRecord {
    /// Record type (the int16 prefix of the key; the key message's api key).
    pub record_type: i16,
    /// Key message name (`OffsetCommitKey`).
    pub key_name: &'static str,
    pub key: Msg,
    /// `None` for a tombstone.
    pub value: Option<CoordinatorValue>,
}

/// The value half of a coordinator record.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinatorValue {
    pub version: i16,
    /// Value message name (`OffsetCommitValue`).
    pub name: &'static str,
    pub msg: Msg,
}

/// Why a coordinator record did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorError {
    /// The record type is not known to the coordinator.
    UnknownRecordType(i16),
    /// Any other failure; the reason is Kafka's exception message.
    Invalid(ParseError),
}

impl std::fmt::Display for CoordinatorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoordinatorError::UnknownRecordType(t) => write!(f, "Found an unknown record type {t}"),
            CoordinatorError::Invalid(e) => write!(f, "{}", e.reason),
        }
    }
}

impl std::error::Error for CoordinatorError {}

/// The group coordinator's key schema for `record_type`.
pub fn group_key_schema(record_type: i16) -> Option<&'static Schema> {
    tables::GROUP_KEYS.iter().find(|s| s.api_key == record_type)
}

/// The group coordinator's value schema for `record_type`.
pub fn group_value_schema(record_type: i16) -> Option<&'static Schema> {
    tables::GROUP_VALUES
        .iter()
        .find(|s| s.api_key == record_type)
}

fn txn_key_schema(record_type: i16) -> Option<&'static Schema> {
    (record_type == 0).then_some(&tables::TRANSACTION_LOG_KEY)
}

fn txn_value_schema(record_type: i16) -> Option<&'static Schema> {
    (record_type == 0).then_some(&tables::TRANSACTION_LOG_VALUE)
}

/// The message of an exception thrown while reading, as Java reports it
/// (`BufferUnderflowException` has no message).
fn java_message(e: &ParseError) -> String {
    if e.reason == UNDERFLOW {
        "null".to_string()
    } else {
        e.reason.to_string()
    }
}

fn read_version(r: &mut Reader, what: &str) -> Result<i16, CoordinatorError> {
    r.i16().map_err(|e| {
        CoordinatorError::Invalid(ParseError::new(
            e.pos,
            format!("Could not read version from {what}'s buffer."),
        ))
    })
}

fn read_part(
    r: &mut Reader,
    schema: &'static Schema,
    version: i16,
    what: &str,
) -> Result<Msg, CoordinatorError> {
    read_message(r, schema, version).map_err(|e| {
        CoordinatorError::Invalid(ParseError::new(
            e.pos,
            format!(
                "Could not read record with version {version} from {what}'s buffer due to: {}.",
                java_message(&e)
            ),
        ))
    })
}

fn decode_with(
    key: &[u8],
    value: Option<&[u8]>,
    key_schema: fn(i16) -> Option<&'static Schema>,
    value_schema: fn(i16) -> Option<&'static Schema>,
) -> Result<CoordinatorRecord, CoordinatorError> {
    let mut kr = Reader::new(key, 0);
    let record_type = read_version(&mut kr, "key")?;
    let ks = key_schema(record_type).ok_or(CoordinatorError::UnknownRecordType(record_type))?;
    // Kafka reads the key message at a "version" equal to the record type.
    let key_msg = read_part(&mut kr, ks, record_type, "key")?;
    let value = match value {
        None => None,
        Some(v) => {
            let vs = value_schema(record_type)
                .ok_or(CoordinatorError::UnknownRecordType(record_type))?;
            let mut vr = Reader::new(v, 0);
            let version = read_version(&mut vr, "value")?;
            if !vs.valid.contains(version) {
                return Err(CoordinatorError::Invalid(ParseError::new(
                    0,
                    format!("Found an unknown record version {version} for {record_type} type"),
                )));
            }
            let msg = read_part(&mut vr, vs, version, "value")?;
            Some(CoordinatorValue {
                version,
                name: vs.name,
                msg,
            })
        }
    };
    Ok(CoordinatorRecord {
        record_type,
        key_name: ks.name,
        key: key_msg,
        value,
    })
}

/// Decodes a `__consumer_offsets` record (key bytes and optional value bytes).
pub fn decode_group_record(
    key: &[u8],
    value: Option<&[u8]>,
) -> Result<CoordinatorRecord, CoordinatorError> {
    decode_with(key, value, group_key_schema, group_value_schema)
}

/// Decodes a `__transaction_state` record.
pub fn decode_transaction_record(
    key: &[u8],
    value: Option<&[u8]>,
) -> Result<CoordinatorRecord, CoordinatorError> {
    decode_with(key, value, txn_key_schema, txn_value_schema)
}

/// Record type of `GroupMetadataKey`/`GroupMetadataValue`.
pub const GROUP_METADATA_TYPE: i16 = 2;

/// For classic groups of protocol type `consumer`, the dump tool replaces
/// each member's `subscription` and `assignment` bytes by the decoded
/// consumer-protocol message (an int16 version, then the message); bytes
/// that do not decode are left as they are.
fn expand_consumer_protocol(msg: &mut Msg) {
    if msg.str("protocolType") != Some("consumer") {
        return;
    }
    let Some(Val::Arr(members)) = msg.get_mut("members") else {
        return;
    };
    for member in members.iter_mut() {
        let Val::Struct(m) = member else { continue };
        for (field, schema) in [
            ("subscription", &tables::CONSUMER_PROTOCOL_SUBSCRIPTION),
            ("assignment", &tables::CONSUMER_PROTOCOL_ASSIGNMENT),
        ] {
            let Some(slot) = m.get_mut(field) else {
                continue;
            };
            let Val::Bytes(bytes) = slot else { continue };
            let mut r = Reader::new(bytes, 0);
            let decoded = r
                .i16()
                .and_then(|version| read_message(&mut r, schema, version));
            if let Ok(inner) = decoded {
                *slot = Val::Struct(inner);
            }
        }
    }
}

fn key_json(rec: &CoordinatorRecord) -> String {
    let mut out = String::from("{\"type\":\"");
    out.push_str(&rec.record_type.to_string());
    out.push_str("\",\"data\":");
    write_json(&mut out, &rec.key);
    out.push('}');
    out
}

fn value_json(v: &CoordinatorValue) -> String {
    let mut out = String::from("{\"version\":\"");
    out.push_str(&v.version.to_string());
    out.push_str("\",\"data\":");
    write_json(&mut out, &v.msg);
    out.push('}');
    out
}

/// A decoder of one coordinator record from its key and value bytes.
type RecordDecoder = fn(&[u8], Option<&[u8]>) -> Result<CoordinatorRecord, CoordinatorError>;

fn format_coordinator(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    decode: RecordDecoder,
) -> Result<KeyPayload, ParseError> {
    let Some(key) = key else {
        return Err(ParseError::new(
            0,
            format!(
                "Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"
            ),
        ));
    };
    Ok(match decode(key, value) {
        Ok(mut rec) => {
            if rec.record_type == GROUP_METADATA_TYPE && rec.key_name == "GroupMetadataKey" {
                if let Some(v) = rec.value.as_mut() {
                    expand_consumer_protocol(&mut v.msg);
                }
            }
            KeyPayload {
                key: Some(key_json(&rec)),
                payload: Some(
                    rec.value
                        .as_ref()
                        .map(value_json)
                        .unwrap_or_else(|| "<DELETE>".to_string()),
                ),
            }
        }
        Err(CoordinatorError::UnknownRecordType(t)) => KeyPayload {
            key: Some(format!(
                "Unknown record type {t} at offset {offset}, skipping."
            )),
            payload: None,
        },
        Err(CoordinatorError::Invalid(e)) => KeyPayload {
            key: Some(format!("Error at offset {offset}, skipping. {}", e.reason)),
            payload: None,
        },
    })
}

/// The `key:`/`payload:` texts `kafka-dump-log --offsets-decoder` prints for
/// a `__consumer_offsets` record at `offset`. A record without a key makes
/// the tool abort the run: that is the `Err` case (reason = Kafka's message).
pub fn format_offsets_record(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<KeyPayload, ParseError> {
    format_coordinator(offset, key, value, decode_group_record)
}

/// The `key:`/`payload:` texts `kafka-dump-log --transaction-log-decoder`
/// prints for a `__transaction_state` record at `offset`; `Err` as for
/// [`format_offsets_record`].
pub fn format_transaction_log_record(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<KeyPayload, ParseError> {
    format_coordinator(offset, key, value, decode_transaction_record)
}

/// Transaction states of `TransactionLogValue.transactionStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    Empty,
    Ongoing,
    PrepareCommit,
    PrepareAbort,
    CompleteCommit,
    CompleteAbort,
    Dead,
    PrepareEpochFence,
    Unknown(i8),
}

impl TxnState {
    /// From the stored status byte.
    pub fn from_id(id: i8) -> Self {
        match id {
            0 => TxnState::Empty,
            1 => TxnState::Ongoing,
            2 => TxnState::PrepareCommit,
            3 => TxnState::PrepareAbort,
            4 => TxnState::CompleteCommit,
            5 => TxnState::CompleteAbort,
            6 => TxnState::Dead,
            7 => TxnState::PrepareEpochFence,
            other => TxnState::Unknown(other),
        }
    }
}

/// Typed view of a `__transaction_state` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionLogEntry {
    pub transactional_id: String,
    /// `None` for a tombstone.
    pub state: Option<TransactionMetadata>,
}

/// Typed `TransactionLogValue`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionMetadata {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub previous_producer_id: i64,
    pub next_producer_id: i64,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// (topic, partitions); empty when stored as null.
    pub partitions: Vec<(String, Vec<i32>)>,
    pub last_update_timestamp_ms: i64,
    pub start_timestamp_ms: i64,
}

impl CoordinatorRecord {
    /// Typed view when this is a transaction-log record.
    pub fn transaction_log_entry(&self) -> Option<TransactionLogEntry> {
        if self.key_name != "TransactionLogKey" {
            return None;
        }
        let state = match &self.value {
            None => None,
            Some(v) => {
                let m = &v.msg;
                Some(TransactionMetadata {
                    producer_id: m.int("producerId")?,
                    producer_epoch: m.int("producerEpoch").and_then(|v| i16::try_from(v).ok())?,
                    previous_producer_id: m.int("previousProducerId").unwrap_or(-1),
                    next_producer_id: m.int("nextProducerId").unwrap_or(-1),
                    timeout_ms: m
                        .int("transactionTimeoutMs")
                        .and_then(|v| i32::try_from(v).ok())?,
                    state: TxnState::from_id(
                        m.int("transactionStatus")
                            .and_then(|v| i8::try_from(v).ok())?,
                    ),
                    partitions: m
                        .structs("transactionPartitions")
                        .into_iter()
                        .map(|p| {
                            (
                                p.str("topic").unwrap_or_default().to_string(),
                                p.ints("partitionIds").unwrap_or_default(),
                            )
                        })
                        .collect(),
                    last_update_timestamp_ms: m.int("transactionLastUpdateTimestampMs")?,
                    start_timestamp_ms: m.int("transactionStartTimestampMs")?,
                })
            }
        };
        Some(TransactionLogEntry {
            transactional_id: self.key.str("transactionalId")?.to_string(),
            state,
        })
    }

    /// (group, topic, partition) when this is an offset commit.
    pub fn offset_commit_key(&self) -> Option<(String, String, i32)> {
        if self.record_type != 0 && self.record_type != 1 {
            return None;
        }
        Some((
            self.key.str("group")?.to_string(),
            self.key.str("topic")?.to_string(),
            self.key
                .int("partition")
                .and_then(|v| i32::try_from(v).ok())?,
        ))
    }
}

#[allow(clippy::all)]
#[rustfmt::skip]
mod tables {
    //! Field tables of the Kafka 4.1 group-coordinator and
    //! transaction-coordinator record schemas, and of the consumer embedded
    //! protocol's subscription and assignment.
    use crate::format::metadata::schema::{Def, Field, Schema, Ty, Vr, MAX, NONE};

    static G_F1: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F2: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F3: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F4: &[Field] = &[
        Field { name: "memberEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "previousMemberEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "state", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "assignedPartitions", ty: Ty::Arr(&Ty::Struct(G_F2)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "partitionsPendingRevocation", ty: Ty::Arr(&Ty::Struct(G_F3)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F5: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F6: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "metadata", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F7: &[Field] = &[
        Field { name: "sessionTimeoutMs", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "supportedProtocols", ty: Ty::Arr(&Ty::Struct(G_F6)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F8: &[Field] = &[
        Field { name: "instanceId", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "rackId", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientHost", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "subscribedTopicNames", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "subscribedTopicRegex", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "rebalanceTimeoutMs", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "serverAssignor", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "classicMemberMetadata", ty: Ty::Struct(G_F7), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 0, default: Def::Struct, flex: None },
    ];
    static G_F9: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F10: &[Field] = &[
        Field { name: "epoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "metadataHash", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: Vr(0, MAX), tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F11: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F12: &[Field] = &[
        Field { name: "partition", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "racks", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F13: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "topicName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "numPartitions", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "partitionMetadata", ty: Ty::Arr(&Ty::Struct(G_F12)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F14: &[Field] = &[
        Field { name: "topics", ty: Ty::Arr(&Ty::Struct(G_F13)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F15: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "regularExpression", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F16: &[Field] = &[
        Field { name: "topics", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "version", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "timestamp", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F17: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F18: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F19: &[Field] = &[
        Field { name: "topicPartitions", ty: Ty::Arr(&Ty::Struct(G_F18)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F20: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F21: &[Field] = &[
        Field { name: "assignmentEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F22: &[Field] = &[
        Field { name: "group", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F23: &[Field] = &[
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "groupInstanceId", ty: Ty::Str, ver: Vr(3, MAX), nullable: Vr(3, MAX), tagged: NONE, tag: 0, default: Def::Null, flex: None },
        Field { name: "clientId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientHost", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "rebalanceTimeout", ty: Ty::I32, ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "sessionTimeout", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "subscription", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "assignment", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F24: &[Field] = &[
        Field { name: "protocolType", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "generation", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "protocol", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "leader", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "currentStateTimestamp", ty: Ty::I64, ver: Vr(2, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "members", ty: Ty::Arr(&Ty::Struct(G_F23)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F25: &[Field] = &[
        Field { name: "group", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "topic", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partition", ty: Ty::I32, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F26: &[Field] = &[
        Field { name: "offset", ty: Ty::I64, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "metadata", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "commitTimestamp", ty: Ty::I64, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F27: &[Field] = &[
        Field { name: "group", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "topic", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partition", ty: Ty::I32, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F28: &[Field] = &[
        Field { name: "offset", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "leaderEpoch", ty: Ty::I32, ver: Vr(3, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "metadata", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "commitTimestamp", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "expireTimestamp", ty: Ty::I64, ver: Vr(1, 1), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(4, MAX), nullable: NONE, tagged: Vr(4, MAX), tag: 0, default: Def::ZeroUuid, flex: None },
    ];
    static G_F29: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F30: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F31: &[Field] = &[
        Field { name: "memberEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "previousMemberEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "state", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "assignedPartitions", ty: Ty::Arr(&Ty::Struct(G_F30)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F32: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F33: &[Field] = &[
        Field { name: "rackId", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientHost", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "subscribedTopicNames", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F34: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F35: &[Field] = &[
        Field { name: "epoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "metadataHash", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F36: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F37: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "topicName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F38: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "topicName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F39: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "topicName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F40: &[Field] = &[
        Field { name: "initializingTopics", ty: Ty::Arr(&Ty::Struct(G_F37)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "initializedTopics", ty: Ty::Arr(&Ty::Struct(G_F38)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "deletingTopics", ty: Ty::Arr(&Ty::Struct(G_F39)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F41: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F42: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F43: &[Field] = &[
        Field { name: "topicPartitions", ty: Ty::Arr(&Ty::Struct(G_F42)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F44: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F45: &[Field] = &[
        Field { name: "assignmentEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F46: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F47: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F48: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F49: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F50: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F51: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F52: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F53: &[Field] = &[
        Field { name: "memberEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "previousMemberEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "state", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "activeTasks", ty: Ty::Arr(&Ty::Struct(G_F47)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "standbyTasks", ty: Ty::Arr(&Ty::Struct(G_F48)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "warmupTasks", ty: Ty::Arr(&Ty::Struct(G_F49)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "activeTasksPendingRevocation", ty: Ty::Arr(&Ty::Struct(G_F50)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "standbyTasksPendingRevocation", ty: Ty::Arr(&Ty::Struct(G_F51)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "warmupTasksPendingRevocation", ty: Ty::Arr(&Ty::Struct(G_F52)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F54: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F55: &[Field] = &[
        Field { name: "host", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "port", ty: Ty::U16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F56: &[Field] = &[
        Field { name: "key", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "value", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F57: &[Field] = &[
        Field { name: "instanceId", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "rackId", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "clientHost", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "rebalanceTimeoutMs", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "topologyEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "processId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "userEndpoint", ty: Ty::Struct(G_F55), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Null, flex: None },
        Field { name: "clientTags", ty: Ty::Arr(&Ty::Struct(G_F56)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F58: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F59: &[Field] = &[
        Field { name: "epoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "metadataHash", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F60: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "memberId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F61: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F62: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F63: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F64: &[Field] = &[
        Field { name: "activeTasks", ty: Ty::Arr(&Ty::Struct(G_F61)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "standbyTasks", ty: Ty::Arr(&Ty::Struct(G_F62)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "warmupTasks", ty: Ty::Arr(&Ty::Struct(G_F63)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F65: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F66: &[Field] = &[
        Field { name: "assignmentEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static G_F67: &[Field] = &[
        Field { name: "groupId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F68: &[Field] = &[
        Field { name: "key", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "value", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F69: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "replicationFactor", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "topicConfigs", ty: Ty::Arr(&Ty::Struct(G_F68)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F70: &[Field] = &[
        Field { name: "key", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "value", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static G_F71: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "replicationFactor", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "topicConfigs", ty: Ty::Arr(&Ty::Struct(G_F70)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F72: &[Field] = &[
        Field { name: "sourceTopics", ty: Ty::Arr(&Ty::I16), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "sourceTopicRegex", ty: Ty::Arr(&Ty::I16), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "repartitionSourceTopics", ty: Ty::Arr(&Ty::I16), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F73: &[Field] = &[
        Field { name: "subtopologyId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "sourceTopics", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "sourceTopicRegex", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "stateChangelogTopics", ty: Ty::Arr(&Ty::Struct(G_F69)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "repartitionSinkTopics", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "repartitionSourceTopics", ty: Ty::Arr(&Ty::Struct(G_F71)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "copartitionGroups", ty: Ty::Arr(&Ty::Struct(G_F72)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static G_F74: &[Field] = &[
        Field { name: "epoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "subtopologies", ty: Ty::Arr(&Ty::Struct(G_F73)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static T_F1: &[Field] = &[
        Field { name: "topic", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static T_F2: &[Field] = &[
        Field { name: "assignedPartitions", ty: Ty::Arr(&Ty::Struct(T_F1)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "userData", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Null, flex: None },
    ];
    static T_F3: &[Field] = &[
        Field { name: "topic", ty: Ty::Str, ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitions", ty: Ty::Arr(&Ty::I32), ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static T_F4: &[Field] = &[
        Field { name: "topics", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "userData", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Null, flex: None },
        Field { name: "ownedPartitions", ty: Ty::Arr(&Ty::Struct(T_F3)), ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "generationId", ty: Ty::I32, ver: Vr(2, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "rackId", ty: Ty::Str, ver: Vr(3, MAX), nullable: Vr(3, MAX), tagged: NONE, tag: 0, default: Def::Null, flex: None },
    ];
    static T_F5: &[Field] = &[
        Field { name: "transactionalId", ty: Ty::Str, ver: Vr(0, 0), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static T_F6: &[Field] = &[
        Field { name: "topic", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "partitionIds", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static T_F7: &[Field] = &[
        Field { name: "producerId", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "previousProducerId", ty: Ty::I64, ver: Vr(1, MAX), nullable: NONE, tagged: Vr(1, MAX), tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "nextProducerId", ty: Ty::I64, ver: Vr(1, MAX), nullable: NONE, tagged: Vr(1, MAX), tag: 1, default: Def::Int(-1), flex: None },
        Field { name: "producerEpoch", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "nextProducerEpoch", ty: Ty::I16, ver: Vr(1, MAX), nullable: NONE, tagged: Vr(1, MAX), tag: 3, default: Def::Int(-1), flex: None },
        Field { name: "transactionTimeoutMs", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "transactionStatus", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "transactionPartitions", ty: Ty::Arr(&Ty::Struct(T_F6)), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "transactionLastUpdateTimestampMs", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "transactionStartTimestampMs", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "clientTransactionVersion", ty: Ty::I16, ver: Vr(1, MAX), nullable: NONE, tagged: Vr(1, MAX), tag: 2, default: Def::Int(0), flex: None },
    ];
    /// `__consumer_offsets` record keys, by record type.
    pub(crate) static GROUP_KEYS: &[Schema] = &[
        Schema { name: "LegacyOffsetCommitKey", api_key: 0, valid: Vr(0, 0), flex: NONE, fields: G_F25 },
        Schema { name: "OffsetCommitKey", api_key: 1, valid: Vr(0, 0), flex: NONE, fields: G_F27 },
        Schema { name: "GroupMetadataKey", api_key: 2, valid: Vr(0, 0), flex: NONE, fields: G_F22 },
        Schema { name: "ConsumerGroupMetadataKey", api_key: 3, valid: Vr(0, 0), flex: NONE, fields: G_F9 },
        Schema { name: "ConsumerGroupPartitionMetadataKey", api_key: 4, valid: Vr(0, 0), flex: NONE, fields: G_F11 },
        Schema { name: "ConsumerGroupMemberMetadataKey", api_key: 5, valid: Vr(0, 0), flex: NONE, fields: G_F5 },
        Schema { name: "ConsumerGroupTargetAssignmentMetadataKey", api_key: 6, valid: Vr(0, 0), flex: NONE, fields: G_F20 },
        Schema { name: "ConsumerGroupTargetAssignmentMemberKey", api_key: 7, valid: Vr(0, 0), flex: NONE, fields: G_F17 },
        Schema { name: "ConsumerGroupCurrentMemberAssignmentKey", api_key: 8, valid: Vr(0, 0), flex: NONE, fields: G_F1 },
        Schema { name: "ShareGroupMemberMetadataKey", api_key: 10, valid: Vr(0, 0), flex: NONE, fields: G_F32 },
        Schema { name: "ShareGroupMetadataKey", api_key: 11, valid: Vr(0, 0), flex: NONE, fields: G_F34 },
        Schema { name: "ShareGroupTargetAssignmentMetadataKey", api_key: 12, valid: Vr(0, 0), flex: NONE, fields: G_F44 },
        Schema { name: "ShareGroupTargetAssignmentMemberKey", api_key: 13, valid: Vr(0, 0), flex: NONE, fields: G_F41 },
        Schema { name: "ShareGroupCurrentMemberAssignmentKey", api_key: 14, valid: Vr(0, 0), flex: NONE, fields: G_F29 },
        Schema { name: "ShareGroupStatePartitionMetadataKey", api_key: 15, valid: Vr(0, 0), flex: NONE, fields: G_F36 },
        Schema { name: "ConsumerGroupRegularExpressionKey", api_key: 16, valid: Vr(0, 0), flex: NONE, fields: G_F15 },
        Schema { name: "StreamsGroupMetadataKey", api_key: 17, valid: Vr(0, 0), flex: NONE, fields: G_F58 },
        Schema { name: "StreamsGroupMemberMetadataKey", api_key: 19, valid: Vr(0, 0), flex: NONE, fields: G_F54 },
        Schema { name: "StreamsGroupTargetAssignmentMetadataKey", api_key: 20, valid: Vr(0, 0), flex: NONE, fields: G_F65 },
        Schema { name: "StreamsGroupTargetAssignmentMemberKey", api_key: 21, valid: Vr(0, 0), flex: NONE, fields: G_F60 },
        Schema { name: "StreamsGroupCurrentMemberAssignmentKey", api_key: 22, valid: Vr(0, 0), flex: NONE, fields: G_F46 },
        Schema { name: "StreamsGroupTopologyKey", api_key: 23, valid: Vr(0, 0), flex: NONE, fields: G_F67 },
    ];
    /// `__consumer_offsets` record values, by record type.
    pub(crate) static GROUP_VALUES: &[Schema] = &[
        Schema { name: "LegacyOffsetCommitValue", api_key: 0, valid: Vr(0, 0), flex: NONE, fields: G_F26 },
        Schema { name: "OffsetCommitValue", api_key: 1, valid: Vr(0, 4), flex: Vr(4, MAX), fields: G_F28 },
        Schema { name: "GroupMetadataValue", api_key: 2, valid: Vr(0, 4), flex: Vr(4, MAX), fields: G_F24 },
        Schema { name: "ConsumerGroupMetadataValue", api_key: 3, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F10 },
        Schema { name: "ConsumerGroupPartitionMetadataValue", api_key: 4, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F14 },
        Schema { name: "ConsumerGroupMemberMetadataValue", api_key: 5, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F8 },
        Schema { name: "ConsumerGroupTargetAssignmentMetadataValue", api_key: 6, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F21 },
        Schema { name: "ConsumerGroupTargetAssignmentMemberValue", api_key: 7, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F19 },
        Schema { name: "ConsumerGroupCurrentMemberAssignmentValue", api_key: 8, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F4 },
        Schema { name: "ShareGroupMemberMetadataValue", api_key: 10, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F33 },
        Schema { name: "ShareGroupMetadataValue", api_key: 11, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F35 },
        Schema { name: "ShareGroupTargetAssignmentMetadataValue", api_key: 12, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F45 },
        Schema { name: "ShareGroupTargetAssignmentMemberValue", api_key: 13, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F43 },
        Schema { name: "ShareGroupCurrentMemberAssignmentValue", api_key: 14, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F31 },
        Schema { name: "ShareGroupStatePartitionMetadataValue", api_key: 15, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F40 },
        Schema { name: "ConsumerGroupRegularExpressionValue", api_key: 16, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F16 },
        Schema { name: "StreamsGroupMetadataValue", api_key: 17, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F59 },
        Schema { name: "StreamsGroupMemberMetadataValue", api_key: 19, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F57 },
        Schema { name: "StreamsGroupTargetAssignmentMetadataValue", api_key: 20, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F66 },
        Schema { name: "StreamsGroupTargetAssignmentMemberValue", api_key: 21, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F64 },
        Schema { name: "StreamsGroupCurrentMemberAssignmentValue", api_key: 22, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F53 },
        Schema { name: "StreamsGroupTopologyValue", api_key: 23, valid: Vr(0, 0), flex: Vr(0, MAX), fields: G_F74 },
    ];
    pub(crate) static CONSUMER_PROTOCOL_ASSIGNMENT: Schema = Schema { name: "ConsumerProtocolAssignment", api_key: -1, valid: Vr(0, 3), flex: NONE, fields: T_F2 };
    pub(crate) static CONSUMER_PROTOCOL_SUBSCRIPTION: Schema = Schema { name: "ConsumerProtocolSubscription", api_key: -1, valid: Vr(0, 3), flex: NONE, fields: T_F4 };
    pub(crate) static TRANSACTION_LOG_KEY: Schema = Schema { name: "TransactionLogKey", api_key: 0, valid: Vr(0, 0), flex: NONE, fields: T_F5 };
    pub(crate) static TRANSACTION_LOG_VALUE: Schema = Schema { name: "TransactionLogValue", api_key: 0, valid: Vr(0, 1), flex: Vr(1, MAX), fields: T_F7 };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s16(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as i16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    #[test]
    fn offset_commit_roundtrip() {
        let mut key = vec![0, 1];
        s16(&mut key, "g");
        s16(&mut key, "t");
        key.extend_from_slice(&3i32.to_be_bytes());
        let mut value = vec![0, 3];
        value.extend_from_slice(&42i64.to_be_bytes());
        value.extend_from_slice(&(-1i32).to_be_bytes());
        s16(&mut value, "");
        value.extend_from_slice(&1000i64.to_be_bytes());
        let kp = format_offsets_record(9, Some(&key), Some(&value)).expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("{\"type\":\"1\",\"data\":{\"group\":\"g\",\"topic\":\"t\",\"partition\":3}}")
        );
        assert_eq!(
            kp.payload.as_deref(),
            Some("{\"version\":\"3\",\"data\":{\"offset\":42,\"leaderEpoch\":-1,\"metadata\":\"\",\"commitTimestamp\":1000}}")
        );
        let tomb = format_offsets_record(9, Some(&key), None).expect("has key");
        assert_eq!(tomb.payload.as_deref(), Some("<DELETE>"));
        let rec = decode_group_record(&key, None).expect("decodes");
        assert_eq!(rec.offset_commit_key(), Some(("g".into(), "t".into(), 3)));
    }

    #[test]
    fn offsets_errors() {
        assert!(format_offsets_record(4, None, Some(&[0, 0])).is_err());
        let kp = format_offsets_record(4, Some(&[0, 99]), None).expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("Unknown record type 99 at offset 4, skipping.")
        );
        assert_eq!(kp.payload, None);
        let kp = format_offsets_record(4, Some(&[0]), None).expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("Error at offset 4, skipping. Could not read version from key's buffer.")
        );
        let kp = format_offsets_record(4, Some(&[0, 2, 0]), None).expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("Error at offset 4, skipping. Could not read record with version 2 from key's buffer due to: null.")
        );
    }

    #[test]
    fn transaction_log_value() {
        let mut key = vec![0, 0];
        s16(&mut key, "tx");
        // v1 flexible: producerId, producerEpoch, timeout, status, partitions (compact, 1 entry), ts, ts, tags
        let mut v = vec![0, 1];
        v.extend_from_slice(&5i64.to_be_bytes());
        v.extend_from_slice(&0i16.to_be_bytes());
        v.extend_from_slice(&60000i32.to_be_bytes());
        v.push(1);
        v.push(2); // one partition entry
        v.push(2);
        v.push(b't');
        v.push(2);
        v.extend_from_slice(&0i32.to_be_bytes());
        v.push(0); // entry tags
        v.extend_from_slice(&7i64.to_be_bytes());
        v.extend_from_slice(&6i64.to_be_bytes());
        v.extend_from_slice(&[1, 2, 2, 0, 2]); // tag 2 (clientTransactionVersion) = 2
        let kp = format_transaction_log_record(1, Some(&key), Some(&v)).expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("{\"type\":\"0\",\"data\":{\"transactionalId\":\"tx\"}}")
        );
        assert_eq!(
            kp.payload.as_deref(),
            Some("{\"version\":\"1\",\"data\":{\"producerId\":5,\"producerEpoch\":0,\"transactionTimeoutMs\":60000,\"transactionStatus\":1,\"transactionPartitions\":[{\"topic\":\"t\",\"partitionIds\":[0]}],\"transactionLastUpdateTimestampMs\":7,\"transactionStartTimestampMs\":6,\"clientTransactionVersion\":2}}")
        );
        let rec = decode_transaction_record(&key, Some(&v)).expect("decodes");
        let entry = rec.transaction_log_entry().expect("typed");
        assert_eq!(entry.transactional_id, "tx");
        let st = entry.state.expect("value");
        assert_eq!(st.state, TxnState::Ongoing);
        assert_eq!(st.partitions, vec![("t".to_string(), vec![0])]);
    }
}
