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
    name_in_line, read_message, write_json_named, Msg, Reader, Schema, Val, UNDERFLOW,
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

fn share_key_schema(record_type: i16) -> Option<&'static Schema> {
    tables::SHARE_KEYS.iter().find(|s| s.api_key == record_type)
}

fn share_value_schema(record_type: i16) -> Option<&'static Schema> {
    tables::SHARE_VALUES
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

/// Decodes a `__share_group_state` record (the share coordinator's
/// `ShareSnapshot` and `ShareUpdate` records, Kafka 4.0 on).
pub fn decode_share_state_record(
    key: &[u8],
    value: Option<&[u8]>,
) -> Result<CoordinatorRecord, CoordinatorError> {
    decode_with(key, value, share_key_schema, share_value_schema)
}

/// The `key:`/`payload:` texts `kafka-dump-log --share-group-state-decoder`
/// prints for a `__share_group_state` record at `offset`; `Err` as for
/// [`format_offsets_record`].
pub fn format_share_state_record(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    text: CoordinatorText,
) -> Result<KeyPayload, ParseError> {
    format_coordinator(offset, key, value, decode_share_state_record, text)
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

/// A field's JSON key as release line `line` names it in message `schema`.
fn name_in(schema: &'static str, line: (u8, u8)) -> impl Fn(&'static str) -> &'static str {
    move |field| name_in_line(tables::COORDINATOR_RENAMED, schema, line, field)
}

fn key_json(rec: &CoordinatorRecord, line: (u8, u8)) -> String {
    let mut out = String::from("{\"type\":\"");
    out.push_str(&rec.record_type.to_string());
    out.push_str("\",\"data\":");
    write_json_named(&mut out, &rec.key, &name_in(rec.key_name, line));
    out.push('}');
    out
}

fn value_json(v: &CoordinatorValue, line: (u8, u8)) -> String {
    let mut out = String::from("{\"version\":\"");
    out.push_str(&v.version.to_string());
    out.push_str("\",\"data\":");
    write_json_named(&mut out, &v.msg, &name_in(v.name, line));
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
    text: CoordinatorText,
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
            if let Some(v) = rec.value.as_mut() {
                hide_unknown_tagged(&mut v.msg, v.name, text.line);
            }
            if text.status_names && rec.key_name == "TransactionLogKey" {
                if let Some(status) = rec
                    .value
                    .as_mut()
                    .and_then(|v| v.msg.get_mut("transactionStatus"))
                {
                    if let Val::Int(id) = *status {
                        *status = Val::Str(TxnState::name_of(id));
                    }
                }
            }
            KeyPayload {
                key: Some(key_json(&rec, text.line)),
                payload: Some(
                    rec.value
                        .as_ref()
                        .map(|v| value_json(v, text.line))
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
    text: CoordinatorText,
) -> Result<KeyPayload, ParseError> {
    if text.scala_offsets {
        return scala::scala_offsets_text(key, value, text.scala());
    }
    // a record type added after the release: its decoder does not read it
    if let Some(&[a, b, ..]) = key {
        let t = i16::from_be_bytes([a, b]);
        if tables::GROUP_TYPES_SINCE
            .iter()
            .any(|(ty, since)| *ty == t && *since > text.line)
        {
            return Ok(KeyPayload {
                key: Some(format!(
                    "Unknown record type {t} at offset {offset}, skipping."
                )),
                payload: None,
            });
        }
    }
    format_coordinator(offset, key, value, decode_group_record, text)
}

/// The `key:`/`payload:` texts `kafka-dump-log --transaction-log-decoder`
/// prints for a `__transaction_state` record at `offset`; `Err` as for
/// [`format_offsets_record`]; how, as [`CoordinatorText`] says.
pub fn format_transaction_log_record(
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    text: CoordinatorText,
) -> Result<KeyPayload, ParseError> {
    if text.scala_transactions {
        return scala::scala_transaction_text(key, value, text.scala());
    }
    format_coordinator(offset, key, value, decode_transaction_record, text)
}

/// How a release's kafka-dump-log prints coordinator records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordinatorText {
    /// The release line (`(4, 1)`): tagged fields it does not know
    /// (`TAGGED_SINCE`) are left out.
    pub line: (u8, u8),
    /// `transactionStatus` as the state's name (a JSON string; the number,
    /// quoted, for an id Kafka does not know), else the number.
    pub status_names: bool,
    /// The Scala transaction-log text (`transaction_metadata::...`) of the
    /// releases before 4.1, instead of JSON.
    pub scala_transactions: bool,
    /// The Scala group coordinator's text (`offset_commit::...`,
    /// `group_metadata::...`) of the releases before 3.8, instead of JSON.
    pub scala_offsets: bool,
    /// The Scala decoders stop the tool on a key version they do not know
    /// (before 3.4) rather than print `unknown::version=N`.
    pub scala_unknown_key_aborts: bool,
}

impl CoordinatorText {
    /// The newest release's text.
    pub const NEWEST: CoordinatorText = CoordinatorText {
        line: (u8::MAX, u8::MAX),
        status_names: true,
        scala_transactions: false,
        scala_offsets: false,
        scala_unknown_key_aborts: false,
    };

    fn scala(self) -> scala::ScalaText {
        scala::ScalaText {
            line: self.line,
            unknown_key_aborts: self.scala_unknown_key_aborts,
        }
    }
}

/// Empties the slots of tagged fields that release `line` does not know.
fn hide_unknown_tagged(msg: &mut Msg, schema: &str, line: (u8, u8)) {
    crate::format::metadata::schema::hide_tagged_since(msg, schema, line, tables::TAGGED_SINCE);
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
    /// The state's name as Kafka prints it (`Empty`, `PrepareCommit` …);
    /// an unknown id is its number.
    pub fn name_of(id: i64) -> String {
        i8::try_from(id)
            .ok()
            .and_then(|b| TxnState::from_id(b).name())
            .map_or_else(|| id.to_string(), str::to_string)
    }

    /// Kafka's name of a known state (`None` for an unknown id).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
            TxnState::Dead => "Dead",
            TxnState::PrepareEpochFence => "PrepareEpochFence",
            TxnState::Unknown(_) => return None,
        })
    }

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
    /// `clientTransactionVersion` (a tagged field of Kafka 4.0 on; `None`
    /// when the record does not carry it).
    pub client_transaction_version: Option<i16>,
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
                    client_transaction_version: m
                        .int("clientTransactionVersion")
                        .and_then(|v| i16::try_from(v).ok()),
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

mod scala;
#[allow(clippy::all)]
mod tables;

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
        let kp = format_offsets_record(9, Some(&key), Some(&value), CoordinatorText::NEWEST)
            .expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("{\"type\":\"1\",\"data\":{\"group\":\"g\",\"topic\":\"t\",\"partition\":3}}")
        );
        assert_eq!(
            kp.payload.as_deref(),
            Some("{\"version\":\"3\",\"data\":{\"offset\":42,\"leaderEpoch\":-1,\"metadata\":\"\",\"commitTimestamp\":1000}}")
        );
        let tomb =
            format_offsets_record(9, Some(&key), None, CoordinatorText::NEWEST).expect("has key");
        assert_eq!(tomb.payload.as_deref(), Some("<DELETE>"));
        let rec = decode_group_record(&key, None).expect("decodes");
        assert_eq!(rec.offset_commit_key(), Some(("g".into(), "t".into(), 3)));
    }

    #[test]
    fn offsets_errors() {
        assert!(format_offsets_record(4, None, Some(&[0, 0]), CoordinatorText::NEWEST).is_err());
        let kp = format_offsets_record(4, Some(&[0, 99]), None, CoordinatorText::NEWEST)
            .expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("Unknown record type 99 at offset 4, skipping.")
        );
        assert_eq!(kp.payload, None);
        let kp =
            format_offsets_record(4, Some(&[0]), None, CoordinatorText::NEWEST).expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("Error at offset 4, skipping. Could not read version from key's buffer.")
        );
        let kp = format_offsets_record(4, Some(&[0, 2, 0]), None, CoordinatorText::NEWEST)
            .expect("has key");
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
        let kp = format_transaction_log_record(
            1,
            Some(&key),
            Some(&v),
            CoordinatorText {
                status_names: false,
                ..CoordinatorText::NEWEST
            },
        )
        .expect("has key");
        assert_eq!(
            kp.key.as_deref(),
            Some("{\"type\":\"0\",\"data\":{\"transactionalId\":\"tx\"}}")
        );
        assert_eq!(
            kp.payload.as_deref(),
            Some("{\"version\":\"1\",\"data\":{\"producerId\":5,\"producerEpoch\":0,\"transactionTimeoutMs\":60000,\"transactionStatus\":1,\"transactionPartitions\":[{\"topic\":\"t\",\"partitionIds\":[0]}],\"transactionLastUpdateTimestampMs\":7,\"transactionStartTimestampMs\":6,\"clientTransactionVersion\":2}}")
        );
        let named = format_transaction_log_record(1, Some(&key), Some(&v), CoordinatorText::NEWEST)
            .expect("has key");
        assert!(named
            .payload
            .as_deref()
            .is_some_and(|p| p.contains("\"transactionStatus\":\"Ongoing\",")));
        assert_eq!(TxnState::name_of(2), "PrepareCommit");
        assert_eq!(TxnState::name_of(9), "9");
        let rec = decode_transaction_record(&key, Some(&v)).expect("decodes");
        let entry = rec.transaction_log_entry().expect("typed");
        assert_eq!(entry.transactional_id, "tx");
        let st = entry.state.expect("value");
        assert_eq!(st.state, TxnState::Ongoing);
        assert_eq!(st.partitions, vec![("t".to_string(), vec![0])]);
        assert_eq!(st.client_transaction_version, Some(2));
    }
}
