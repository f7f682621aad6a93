//! The Scala coordinators' text: what kafka-dump-log's `--offsets-decoder`
//! printed up to Kafka 3.7 (`GroupMetadataManager.formatRecordKeyAndValue`)
//! and its `--transaction-log-decoder` up to 4.0
//! (`TransactionLog.formatRecordKeyAndValue`).
//!
//! Both read the record themselves, with the versions their release knows
//! (generated `SCALA_GROUP_VALUE_MAX`, `SCALA_TXN_VALUE_MAX`), and neither
//! catches what it throws: a version they do not know, a record that does
//! not read, stops the whole tool there. That is the `Err` of these
//! functions (its reason is the exception's message). Collections are
//! printed in the order the Scala 2.13 hash tables holding them iterate
//! ([`crate::format::jvm::scala_hash_order`]).

use super::tables;
use super::{group_value_schema, txn_value_schema, KeyPayload, TxnState};
use crate::format::jvm::{java_string_hash, scala_hash_order, topic_partition_hash, ScalaPut};
use crate::format::metadata::schema::{read_message, Msg, Reader, Val};
use crate::format::text::json_string;
use crate::format::ParseError;

/// How the Scala decoders of release line `line` behave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalaText {
    /// The release line (`(3, 7)`): which value versions it reads.
    pub line: (u8, u8),
    /// A key version the decoder does not know stops the tool (before
    /// 3.4), rather than printing `unknown::version=N`.
    pub unknown_key_aborts: bool,
}

fn java_error(e: &ParseError) -> ParseError {
    ParseError::new(
        e.pos,
        format!("java.nio.BufferUnderflowException: {}", e.reason),
    )
}

/// A non-nullable Kafka string (int16 length, UTF-8) as the generated
/// classes read it.
fn kstring(r: &mut Reader, field: &str) -> Result<String, ParseError> {
    let len = r.i16().map_err(|e| java_error(&e))?;
    if len < 0 {
        return Err(r.err(format!(
            "java.lang.RuntimeException: non-nullable field {field} was serialized as null"
        )));
    }
    let bytes = r.take(len as usize).map_err(|e| java_error(&e))?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// `"%X".format(BigInt(1, bytes))`: the bytes as one unsigned number in
/// upper-case hexadecimal, without leading zeros (`""` for no bytes).
fn big_int_hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return String::new();
    }
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02X}"));
    }
    let trimmed = s.trim_start_matches('0');
    if trimmed.is_empty() {
        "0".to_string()
    } else {
        trimmed.to_string()
    }
}

fn read_value(
    value: &[u8],
    schema: &'static crate::format::metadata::schema::Schema,
    highest: i16,
    unknown: impl FnOnce(i16) -> String,
) -> Result<Msg, ParseError> {
    let mut r = Reader::new(value, 0);
    let version = r.i16().map_err(|e| java_error(&e))?;
    if version < 0 || version > highest {
        return Err(ParseError::new(
            0,
            format!("java.lang.IllegalStateException: {}", unknown(version)),
        ));
    }
    read_message(&mut r, schema, version).map_err(|e| java_error(&e))
}

/// The `key:`/`payload:` texts of one `__consumer_offsets` record as the
/// Scala group coordinator's formatter prints them:
/// `offset_commit::group=G,partition=T-P` with `offset=N[,metadata=M]`,
/// `group_metadata::group=G` with the group as JSON (`protocolType`,
/// `protocol`, `generationId`, `assignment`: `{member=[t-0, t-1]:USERDATA,…}`),
/// `<DELETE>` for a tombstone, and `unknown::version=N` (no payload) for a
/// key it does not know (before 3.4 that stops the tool).
pub fn scala_offsets_text(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    text: ScalaText,
) -> Result<KeyPayload, ParseError> {
    let Some(key) = key else {
        return Err(ParseError::new(
            0,
            "org.apache.kafka.common.KafkaException: Failed to decode message using offset topic decoder (message had a missing key)",
        ));
    };
    let (offset_max, group_max) = tables::SCALA_GROUP_VALUE_MAX
        .iter()
        .find(|(l, _, _)| *l == text.line)
        .map_or((i16::MAX, i16::MAX), |&(_, o, g)| (o, g));
    let mut r = Reader::new(key, 0);
    let version = r.i16().map_err(|e| java_error(&e))?;
    match version {
        0 | 1 => {
            let group = kstring(&mut r, "group")?;
            let topic = kstring(&mut r, "topic")?;
            let partition = r.i32().map_err(|e| java_error(&e))?;
            let key_text = format!("offset_commit::group={group},partition={topic}-{partition}");
            let payload = match value {
                None => "<DELETE>".to_string(),
                Some(v) => {
                    let schema = group_value_schema(1)
                        .ok_or_else(|| ParseError::new(0, "no OffsetCommitValue schema"))?;
                    let m = read_value(v, schema, offset_max, |v| {
                        format!("Unknown offset message version: {v}")
                    })?;
                    let offset = m.int("offset").unwrap_or(-1);
                    match m.str("metadata") {
                        Some(meta) if !meta.is_empty() => format!("offset={offset},metadata={meta}"),
                        _ => format!("offset={offset}"),
                    }
                }
            };
            Ok(KeyPayload {
                key: Some(key_text),
                payload: Some(payload),
            })
        }
        2 => {
            let group = kstring(&mut r, "group")?;
            let key_text = format!("group_metadata::group={group}");
            let payload = match value {
                None => "<DELETE>".to_string(),
                Some(v) => {
                    let schema = group_value_schema(2)
                        .ok_or_else(|| ParseError::new(0, "no GroupMetadataValue schema"))?;
                    let m = read_value(v, schema, group_max, |v| {
                        format!("Unknown group metadata message version: {v}")
                    })?;
                    group_json(&group, &m)?
                }
            };
            Ok(KeyPayload {
                key: Some(key_text),
                payload: Some(payload),
            })
        }
        v if text.unknown_key_aborts => Err(ParseError::new(
            0,
            format!(
                "org.apache.kafka.common.KafkaException: Failed to decode message using offset topic decoder (message had an invalid key: version {v})"
            ),
        )),
        v => Ok(KeyPayload {
            key: Some(format!("unknown::version={v}")),
            payload: None,
        }),
    }
}

/// The group metadata value as the Scala formatter prints it.
fn group_json(group: &str, m: &Msg) -> Result<String, ParseError> {
    let protocol_type = m.str("protocolType").unwrap_or_default();
    let members = m.structs("members");
    // GroupMetadata.loadGroup: a static member id seen twice is refused
    let mut instances: Vec<&str> = Vec::new();
    for member in &members {
        if let Some(id) = member.str("groupInstanceId") {
            if instances.contains(&id) {
                return Err(ParseError::new(
                    0,
                    format!(
                        "java.lang.IllegalStateException: Static member with groupInstanceId={id} cannot be added to group {group} since it is already a member"
                    ),
                ));
            }
            instances.push(id);
        }
    }
    // the members' mutable.HashMap, keyed by member id
    let ids: Vec<&str> = members
        .iter()
        .map(|mm| mm.str("memberId").unwrap_or_default())
        .collect();
    let steps: Vec<ScalaPut> = ids
        .iter()
        .map(|id| ScalaPut::One(java_string_hash(id)))
        .collect();
    let order = scala_hash_order(&steps, |a, b| ids[a] == ids[b]);
    // a member put twice keeps its first place and its last value
    let last_of = |id: &str| {
        members
            .iter()
            .rposition(|mm| mm.str("memberId").unwrap_or_default() == id)
            .unwrap_or(0)
    };
    let mut parts = Vec::with_capacity(order.len());
    for i in order {
        let member = members[last_of(ids[i])];
        let assignment = match member.get("assignment") {
            Some(Val::Bytes(b)) => b.as_slice(),
            _ => &[],
        };
        if protocol_type == "consumer" {
            let (partitions, user_data) = consumer_assignment(assignment)?;
            let hex = user_data.as_deref().map(big_int_hex).unwrap_or_default();
            if hex.is_empty() {
                parts.push(format!("{}=[{}]", ids[i], partitions.join(", ")));
            } else {
                parts.push(format!("{}=[{}]:{hex}", ids[i], partitions.join(", ")));
            }
        } else {
            parts.push(format!("{}={}", ids[i], big_int_hex(assignment)));
        }
    }
    let mut out = String::from("{\"protocolType\":");
    json_string(&mut out, protocol_type);
    out.push_str(",\"protocol\":");
    match m.str("protocol") {
        Some(p) => json_string(&mut out, p),
        None => out.push_str("null"),
    }
    out.push_str(",\"generationId\":");
    out.push_str(&m.int("generation").unwrap_or(0).to_string());
    out.push_str(",\"assignment\":");
    json_string(&mut out, &format!("{{{}}}", parts.join(",")));
    out.push('}');
    Ok(out)
}

/// `ConsumerProtocol.deserializeAssignment`: the partitions (`t-0`) and the
/// user data (`None` when null). A version above the highest is read as the
/// highest (the fields are the same); one below 0, or bytes that do not
/// read, are a `SchemaException`.
fn consumer_assignment(bytes: &[u8]) -> Result<(Vec<String>, Option<Vec<u8>>), ParseError> {
    let schema_err = |what: &str| {
        ParseError::new(
            0,
            format!("org.apache.kafka.common.protocol.types.SchemaException: {what}"),
        )
    };
    let mut r = Reader::new(bytes, 0);
    let version = r
        .i16()
        .map_err(|_| schema_err("Buffer underflow while parsing consumer protocol's header"))?;
    if version < 0 {
        return Err(schema_err(&format!(
            "Unsupported assignment version: {version}"
        )));
    }
    let schema = &tables::CONSUMER_PROTOCOL_ASSIGNMENT;
    let version = version.min(schema.valid.1);
    let m = read_message(&mut r, schema, version)
        .map_err(|_| schema_err("Buffer underflow while parsing consumer protocol's assignment"))?;
    let mut partitions = Vec::new();
    for tp in m.structs("assignedPartitions") {
        let topic = tp.str("topic").unwrap_or_default();
        for p in tp.ints("partitions").unwrap_or_default() {
            partitions.push(format!("{topic}-{p}"));
        }
    }
    let user_data = match m.get("userData") {
        Some(Val::Bytes(b)) => Some(b.clone()),
        _ => None,
    };
    Ok((partitions, user_data))
}

/// The `key:`/`payload:` texts of one `__transaction_state` record as the
/// Scala transaction coordinator's formatter prints them:
/// `transaction_metadata::transactionalId=ID` and
/// `producerId:P,producerEpoch:E,state=S,partitions=[t-0,…],
/// txnLastUpdateTimestamp=T,txnTimeoutMs=M` (`<DELETE>` for a tombstone;
/// no partitions in state Empty; the partitions in the order of the
/// transaction's `mutable.HashSet`). A key version it does not know is
/// `unknown::version=N` (before 3.4 it stops the tool), as are a value
/// version above the line's highest and a state it has no name for.
pub fn scala_transaction_text(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    text: ScalaText,
) -> Result<KeyPayload, ParseError> {
    let Some(key) = key else {
        return Err(ParseError::new(
            0,
            "org.apache.kafka.common.KafkaException: Failed to decode message using the transaction log decoder (message had a missing key)",
        ));
    };
    let mut r = Reader::new(key, 0);
    let version = r.i16().map_err(|e| java_error(&e))?;
    if version != 0 {
        if text.unknown_key_aborts {
            return Err(ParseError::new(
                0,
                format!("java.lang.IllegalStateException: Unknown version {version} from the transaction log message"),
            ));
        }
        return Ok(KeyPayload {
            key: Some(format!("unknown::version={version}")),
            payload: None,
        });
    }
    let id = kstring(&mut r, "transactionalId")?;
    let key_text = format!("transaction_metadata::transactionalId={id}");
    let Some(v) = value else {
        return Ok(KeyPayload {
            key: Some(key_text),
            payload: Some("<DELETE>".to_string()),
        });
    };
    let highest = tables::SCALA_TXN_VALUE_MAX
        .iter()
        .find(|(l, _)| *l == text.line)
        .map_or(i16::MAX, |&(_, h)| h);
    let schema = txn_value_schema(0).ok_or_else(|| ParseError::new(0, "no schema"))?;
    let m = read_value(v, schema, highest, |v| {
        format!("Unknown version {v} from the transaction log message value")
    })?;
    let status = m.int("transactionStatus").unwrap_or(-1);
    let state = i8::try_from(status).ok().map(TxnState::from_id);
    let Some(name) = state.and_then(TxnState::name) else {
        return Err(ParseError::new(
            0,
            format!("java.lang.IllegalStateException: Unknown transaction state id {status} from the transaction status message"),
        ));
    };
    let mut parts: Vec<(String, i32)> = Vec::new();
    let mut steps = Vec::new();
    if state != Some(TxnState::Empty) {
        // addPartitions(topic's partitions .toSet) per topic: a size hint,
        // then each partition (an immutable.HashSet above 4 elements is
        // added in bulk, without the threshold check)
        for tp in m.structs("transactionPartitions") {
            let topic = tp.str("topic").unwrap_or_default().to_string();
            let mut ps = tp.ints("partitionIds").unwrap_or_default();
            let mut seen = Vec::new();
            ps.retain(|p| {
                let new = !seen.contains(p);
                seen.push(*p);
                new
            });
            steps.push(ScalaPut::SizeHint(ps.len()));
            parts.push((String::new(), -1));
            for p in ps.iter() {
                let h = topic_partition_hash(&topic, *p);
                steps.push(if ps.len() > 4 {
                    ScalaPut::Bulk(h)
                } else {
                    ScalaPut::One(h)
                });
                parts.push((topic.clone(), *p));
            }
        }
    }
    let order = scala_hash_order(&steps, |a, b| parts[a] == parts[b]);
    let listed: Vec<String> = order
        .into_iter()
        .map(|i| format!("{}-{}", parts[i].0, parts[i].1))
        .collect();
    let payload = format!(
        "producerId:{},producerEpoch:{},state={name},partitions=[{}],txnLastUpdateTimestamp={},txnTimeoutMs={}",
        m.int("producerId").unwrap_or(-1),
        m.int("producerEpoch").unwrap_or(-1),
        listed.join(","),
        m.int("transactionLastUpdateTimestampMs").unwrap_or(-1),
        m.int("transactionTimeoutMs").unwrap_or(-1),
    );
    Ok(KeyPayload {
        key: Some(key_text),
        payload: Some(payload),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_int_hex_drops_leading_zeros() {
        assert_eq!(big_int_hex(&[]), "");
        assert_eq!(big_int_hex(&[0, 0]), "0");
        assert_eq!(big_int_hex(&[0, 1, 0xab]), "1AB");
        assert_eq!(big_int_hex(&[0xff]), "FF");
    }

    fn s16(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as i16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    #[test]
    fn offset_commit_and_unknown_keys() {
        let text = ScalaText {
            line: (3, 7),
            unknown_key_aborts: false,
        };
        let mut key = vec![0, 1];
        s16(&mut key, "g");
        s16(&mut key, "t");
        key.extend_from_slice(&3i32.to_be_bytes());
        let mut value = vec![0, 3];
        value.extend_from_slice(&42i64.to_be_bytes());
        value.extend_from_slice(&(-1i32).to_be_bytes());
        s16(&mut value, "m");
        value.extend_from_slice(&1000i64.to_be_bytes());
        let kp = scala_offsets_text(Some(&key), Some(&value), text).expect("reads");
        assert_eq!(
            kp.key.as_deref(),
            Some("offset_commit::group=g,partition=t-3")
        );
        assert_eq!(kp.payload.as_deref(), Some("offset=42,metadata=m"));
        let kp = scala_offsets_text(Some(&key), None, text).expect("reads");
        assert_eq!(kp.payload.as_deref(), Some("<DELETE>"));
        let kp = scala_offsets_text(Some(&[0, 5, 0]), Some(&[0]), text).expect("reads");
        assert_eq!(kp.key.as_deref(), Some("unknown::version=5"));
        assert_eq!(kp.payload, None);
        let old = ScalaText {
            line: (3, 3),
            unknown_key_aborts: true,
        };
        assert!(scala_offsets_text(Some(&[0, 5, 0]), None, old).is_err());
        // a value version the line does not read stops the tool
        let mut v9 = value.clone();
        v9[1] = 9;
        assert!(scala_offsets_text(Some(&key), Some(&v9), text)
            .unwrap_err()
            .reason
            .contains("Unknown offset message version: 9"));
        assert!(scala_offsets_text(None, None, text).is_err());
    }
}
