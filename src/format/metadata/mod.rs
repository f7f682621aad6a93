//! KRaft `__cluster_metadata` records (also the data batches of metadata
//! snapshot `.checkpoint` files).
//!
//! A metadata record value is a frame (unsigned varints: frame version 1,
//! api key, record version) followed by the record body in Kafka's
//! "flexible" message encoding. [`decode_metadata_record`] parses one value
//! into a generic, schema-driven [`schema::Msg`]; [`MetadataRecord::typed`]
//! turns the records a timeline needs into typed structs; and
//! [`format_metadata_payload`] gives the exact text `kafka-dump-log
//! --cluster-metadata-decoder` prints after ` payload: `.
//!
//! The schema-driven reader and the JSON writer in [`schema`] are shared with
//! the internal-topic decoders of [`crate::format::internal`].

pub mod remote;
pub mod schema;

mod control;
#[allow(clippy::all)]
mod tables;

use crate::format::ParseError;
pub use control::{
    checkpoint_header_line, decode_kraft_control, format_kraft_control, kraft_control_json,
    parse_checkpoint_name, KraftControlType,
};
use schema::{Msg, Reader, Schema};
use tables::METADATA_SCHEMAS;

/// A decoded metadata record: frame, record type and body.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRecord {
    /// Api key (record type id).
    pub api_key: i16,
    /// Record schema version.
    pub version: i16,
    /// Record name as in Kafka's schema (`PartitionChangeRecord`).
    pub name: &'static str,
    /// The decoded body.
    pub body: Msg,
}

impl MetadataRecord {
    /// The `MetadataRecordType` enum constant (`PARTITION_CHANGE_RECORD`).
    pub fn type_name(&self) -> String {
        record_type_constant(self.name)
    }

    /// The JSON object `--cluster-metadata-decoder` prints:
    /// `{"type":"<TYPE>","version":<n>,"data":{…}}`.
    pub fn to_json(&self) -> String {
        self.to_json_named(&|name| name)
    }

    /// [`MetadataRecord::to_json`] with the field keys `name` gives.
    fn to_json_named(&self, name: &dyn Fn(&'static str) -> &'static str) -> String {
        let mut out = String::from("{\"type\":");
        schema::json_string(&mut out, &self.type_name());
        out.push_str(",\"version\":");
        out.push_str(&self.version.to_string());
        out.push_str(",\"data\":");
        schema::write_json_named(&mut out, &self.body, name);
        out.push('}');
        out
    }

    /// Typed view of the records an election timeline needs; `None` for
    /// other record types.
    pub fn typed(&self) -> Option<TypedMetadata> {
        let b = &self.body;
        let i32f = |n: &str| b.int(n).and_then(|v| i32::try_from(v).ok());
        Some(match self.api_key {
            0 => TypedMetadata::RegisterBroker(RegisterBroker {
                broker_id: i32f("brokerId")?,
                is_migrating_zk_broker: b.bool("isMigratingZkBroker").unwrap_or(false),
                incarnation_id: b.uuid("incarnationId")?,
                broker_epoch: b.int("brokerEpoch")?,
                end_points: b
                    .structs("endPoints")
                    .into_iter()
                    .map(|e| BrokerEndpoint {
                        name: e.str("name").unwrap_or_default().to_string(),
                        host: e.str("host").unwrap_or_default().to_string(),
                        port: e
                            .int("port")
                            .and_then(|p| u16::try_from(p).ok())
                            .unwrap_or(0),
                        security_protocol: e
                            .int("securityProtocol")
                            .and_then(|p| i16::try_from(p).ok())
                            .unwrap_or(0),
                    })
                    .collect(),
                features: b
                    .structs("features")
                    .into_iter()
                    .map(|e| BrokerFeature {
                        name: e.str("name").unwrap_or_default().to_string(),
                        min_supported_version: e
                            .int("minSupportedVersion")
                            .and_then(|p| i16::try_from(p).ok())
                            .unwrap_or(0),
                        max_supported_version: e
                            .int("maxSupportedVersion")
                            .and_then(|p| i16::try_from(p).ok())
                            .unwrap_or(0),
                    })
                    .collect(),
                rack: b.str("rack").map(str::to_string),
                fenced: b.bool("fenced").unwrap_or(true),
                in_controlled_shutdown: b.bool("inControlledShutdown").unwrap_or(false),
                log_dirs: b.uuids("logDirs").unwrap_or_default(),
            }),
            1 => TypedMetadata::UnregisterBroker {
                broker_id: i32f("brokerId")?,
                broker_epoch: b.int("brokerEpoch")?,
            },
            2 => TypedMetadata::Topic(TopicRecord {
                name: b.str("name")?.to_string(),
                topic_id: b.uuid("topicId")?,
            }),
            3 => TypedMetadata::Partition(PartitionRecord {
                partition_id: i32f("partitionId")?,
                topic_id: b.uuid("topicId")?,
                replicas: b.ints("replicas").unwrap_or_default(),
                isr: b.ints("isr").unwrap_or_default(),
                removing_replicas: b.ints("removingReplicas").unwrap_or_default(),
                adding_replicas: b.ints("addingReplicas").unwrap_or_default(),
                leader: i32f("leader")?,
                leader_recovery_state: b
                    .int("leaderRecoveryState")
                    .and_then(|v| i8::try_from(v).ok())
                    .unwrap_or(0),
                leader_epoch: i32f("leaderEpoch")?,
                partition_epoch: i32f("partitionEpoch")?,
                directories: b.uuids("directories").unwrap_or_default(),
                eligible_leader_replicas: b.ints("eligibleLeaderReplicas"),
                last_known_elr: b.ints("lastKnownElr"),
            }),
            5 => TypedMetadata::PartitionChange(PartitionChangeRecord {
                partition_id: i32f("partitionId")?,
                topic_id: b.uuid("topicId")?,
                isr: b.ints("isr"),
                leader: i32f("leader").unwrap_or(LEADER_UNCHANGED),
                replicas: b.ints("replicas"),
                removing_replicas: b.ints("removingReplicas"),
                adding_replicas: b.ints("addingReplicas"),
                leader_recovery_state: b
                    .int("leaderRecoveryState")
                    .and_then(|v| i8::try_from(v).ok())
                    .unwrap_or(-1),
                directories: b.uuids("directories"),
                eligible_leader_replicas: b.ints("eligibleLeaderReplicas"),
                last_known_elr: b.ints("lastKnownElr"),
            }),
            7 | 8 => {
                let broker_id = i32f("id")?;
                let broker_epoch = b.int("epoch")?;
                if self.api_key == 7 {
                    TypedMetadata::FenceBroker {
                        broker_id,
                        broker_epoch,
                    }
                } else {
                    TypedMetadata::UnfenceBroker {
                        broker_id,
                        broker_epoch,
                    }
                }
            }
            9 => TypedMetadata::RemoveTopic {
                topic_id: b.uuid("topicId")?,
            },
            12 => TypedMetadata::FeatureLevel {
                name: b.str("name")?.to_string(),
                feature_level: b.int("featureLevel").and_then(|v| i16::try_from(v).ok())?,
            },
            17 => TypedMetadata::BrokerRegistrationChange {
                broker_id: i32f("brokerId")?,
                broker_epoch: b.int("brokerEpoch")?,
                fenced: b
                    .int("fenced")
                    .and_then(|v| i8::try_from(v).ok())
                    .unwrap_or(0),
                in_controlled_shutdown: b
                    .int("inControlledShutdown")
                    .and_then(|v| i8::try_from(v).ok())
                    .unwrap_or(0),
                log_dirs: b.uuids("logDirs").unwrap_or_default(),
            },
            _ => return None,
        })
    }
}

/// Leader epoch after applying a KRaft `PartitionChangeRecord` whose `Leader`
/// field is `leader_field` (`PartitionRegistration.merge`): any value other
/// than `-2` ("no change") bumps the epoch by one, even when the leader stays
/// the same or becomes `-1` (none).
pub fn leader_epoch_after_partition_change(previous_epoch: i32, leader_field: i32) -> i32 {
    if leader_field == -2 {
        previous_epoch
    } else {
        previous_epoch.saturating_add(1)
    }
}

/// `PartitionChangeRecord.leader` value meaning "leader unchanged".
pub const LEADER_UNCHANGED: i32 = -2;

/// TopicRecord (api key 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicRecord {
    pub name: String,
    pub topic_id: [u8; 16],
}

/// PartitionRecord (api key 3): full partition state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRecord {
    pub partition_id: i32,
    pub topic_id: [u8; 16],
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub removing_replicas: Vec<i32>,
    pub adding_replicas: Vec<i32>,
    /// -1 = no leader.
    pub leader: i32,
    /// 0 = recovered, 1 = recovering (after an unclean election).
    pub leader_recovery_state: i8,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// Log directory per replica (v1+), same order as `replicas`.
    pub directories: Vec<[u8; 16]>,
    /// KIP-966 (v2+); `None` = null.
    pub eligible_leader_replicas: Option<Vec<i32>>,
    pub last_known_elr: Option<Vec<i32>>,
}

/// PartitionChangeRecord (api key 5): a delta; `None` = unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionChangeRecord {
    pub partition_id: i32,
    pub topic_id: [u8; 16],
    pub isr: Option<Vec<i32>>,
    /// [`LEADER_UNCHANGED`] (-2) = unchanged; -1 = no leader. Any other
    /// value bumps the leader epoch when applied.
    pub leader: i32,
    pub replicas: Option<Vec<i32>>,
    pub removing_replicas: Option<Vec<i32>>,
    pub adding_replicas: Option<Vec<i32>>,
    /// -1 = unchanged.
    pub leader_recovery_state: i8,
    pub directories: Option<Vec<[u8; 16]>>,
    pub eligible_leader_replicas: Option<Vec<i32>>,
    pub last_known_elr: Option<Vec<i32>>,
}

impl PartitionChangeRecord {
    /// Whether applying this change bumps the leader epoch.
    pub fn bumps_leader_epoch(&self) -> bool {
        self.leader != LEADER_UNCHANGED
    }
}

/// One listener of a RegisterBrokerRecord.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerEndpoint {
    pub name: String,
    pub host: String,
    pub port: u16,
    pub security_protocol: i16,
}

/// One supported feature range of a RegisterBrokerRecord.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerFeature {
    pub name: String,
    pub min_supported_version: i16,
    pub max_supported_version: i16,
}

/// RegisterBrokerRecord (api key 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterBroker {
    pub broker_id: i32,
    pub is_migrating_zk_broker: bool,
    pub incarnation_id: [u8; 16],
    pub broker_epoch: i64,
    pub end_points: Vec<BrokerEndpoint>,
    pub features: Vec<BrokerFeature>,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    pub log_dirs: Vec<[u8; 16]>,
}

/// Typed metadata records (see [`MetadataRecord::typed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedMetadata {
    RegisterBroker(RegisterBroker),
    UnregisterBroker {
        broker_id: i32,
        broker_epoch: i64,
    },
    Topic(TopicRecord),
    Partition(PartitionRecord),
    PartitionChange(PartitionChangeRecord),
    FenceBroker {
        broker_id: i32,
        broker_epoch: i64,
    },
    UnfenceBroker {
        broker_id: i32,
        broker_epoch: i64,
    },
    RemoveTopic {
        topic_id: [u8; 16],
    },
    FeatureLevel {
        name: String,
        feature_level: i16,
    },
    /// `fenced`: 1 fenced, -1 unfenced, 0 unchanged; `in_controlled_shutdown`: 1 entered.
    BrokerRegistrationChange {
        broker_id: i32,
        broker_epoch: i64,
        fenced: i8,
        in_controlled_shutdown: i8,
        log_dirs: Vec<[u8; 16]>,
    },
}

/// The enum constant Kafka derives from a record name: `_` before each
/// capital that follows a lower-case letter or digit, then upper-cased.
pub fn record_type_constant(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The schema of metadata record type `api_key`, if Kafka 4.1 knows it.
pub fn metadata_schema(api_key: i16) -> Option<&'static Schema> {
    METADATA_SCHEMAS.iter().find(|s| s.api_key == api_key)
}

/// The api key of a metadata record's frame (frame version 1 only).
fn peek_api_key(value: &[u8]) -> Option<i16> {
    let mut r = Reader::new(value, 0);
    (frame_field(&mut r, "frame version").ok()? == 1)
        .then(|| frame_field(&mut r, "type").ok())
        .flatten()
}

fn frame_field(r: &mut Reader, what: &str) -> Result<i16, ParseError> {
    let start = r.pos();
    let v = r
        .uvarint()
        .map_err(|_| ParseError::new(start as u64, format!("Error while reading {what}")))?;
    i16::try_from(v)
        .map_err(|_| ParseError::new(start as u64, format!("Value for {what} was too large.")))
}

/// Decodes one metadata record value (frame + body). On failure the error's
/// reason is the message Kafka's `MetadataRecordSerde` raises, and its
/// position is the byte of `value` where decoding stopped.
pub fn decode_metadata_record(value: &[u8]) -> Result<MetadataRecord, ParseError> {
    decode_framed(value, metadata_schema, |_| None)
}

/// The schema of `__remote_log_metadata` record type `api_key`.
pub fn remote_log_metadata_schema(api_key: i16) -> Option<&'static Schema> {
    tables::REMOTE_LOG_METADATA_SCHEMAS
        .iter()
        .find(|s| s.api_key == api_key)
}

/// Decodes one `__remote_log_metadata` record value: the same frame as a
/// metadata record (`RemoteLogMetadataSerde` is an `AbstractApiMessageSerde`
/// too), over the remote log metadata schemas.
pub fn decode_remote_log_metadata_record(value: &[u8]) -> Result<MetadataRecord, ParseError> {
    decode_framed(value, remote_log_metadata_schema, |_| None)
}

/// Frame, then body: `lookup` finds the schema of an api key, `highest`
/// the highest version the reading release's code has for it (`None`: the
/// schema's own), whose fields are the ones read.
fn decode_framed(
    value: &[u8],
    lookup: impl Fn(i16) -> Option<&'static Schema>,
    highest: impl Fn(i16) -> Option<i16>,
) -> Result<MetadataRecord, ParseError> {
    decode_frame(value, lookup, highest, false, None)
}

/// `preview`: as Kafka 2.8's serde (the KRaft preview) reads, which knows
/// frame version 0 only and reads the body without checking what follows.
/// `line`: the release line whose code reads it, which lacks the tagged
/// fields added after it (`METADATA_TAGGED_SINCE`) and skips them as
/// unknown tags.
fn decode_frame(
    value: &[u8],
    lookup: impl Fn(i16) -> Option<&'static Schema>,
    highest: impl Fn(i16) -> Option<i16>,
    preview: bool,
    line: Option<(u8, u8)>,
) -> Result<MetadataRecord, ParseError> {
    let mut r = Reader::new(value, 0);
    let frame = frame_field(&mut r, "frame version")?;
    if preview {
        if frame != 0 {
            return Err(ParseError::new(
                0,
                format!("Could not deserialize metadata record due to unknown frame version {frame}(only frame version 0 is supported)"),
            ));
        }
    } else if frame == 0 {
        return Err(ParseError::new(
            0,
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.",
        ));
    } else if frame != 1 {
        return Err(ParseError::new(
            0,
            format!("Could not deserialize metadata record due to unknown frame version {frame}(only frame version 1 is supported)"),
        ));
    }
    let api_key = frame_field(&mut r, "type")?;
    let version = frame_field(&mut r, "version")?;
    let schema = lookup(api_key).ok_or_else(|| {
        r.err(format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        ))
    })?;
    let valid = match highest(api_key) {
        Some(h) => schema::Vr(schema.valid.0, h.min(schema.valid.1)),
        None => schema.valid,
    };
    let lacks = line.map(|line| schema::TaggedSince {
        schema: schema.name,
        line,
        since: tables::METADATA_TAGGED_SINCE,
    });
    let body =
        schema::read_message_lacking(&mut r, schema, version, valid, lacks).map_err(|e| {
            ParseError::new(
                e.pos,
                format!("Failed to deserialize record with type {api_key}"),
            )
        })?;
    if r.remaining() > 0 && !preview {
        return Err(r.err(format!(
            "Found {} byte(s) of garbage after {api_key}",
            r.remaining()
        )));
    }
    Ok(MetadataRecord {
        api_key,
        version,
        name: schema.name,
        body,
    })
}

/// The `metadata.version` of a feature level (`3.3-IV3`), as the newest
/// release's `MetadataVersion` names it; `None` for a level it does not
/// know.
pub fn metadata_version_name(level: i16) -> Option<&'static str> {
    tables::METADATA_VERSIONS
        .iter()
        .find(|(l, _)| *l == level)
        .map(|(_, n)| *n)
}

/// The text `kafka-dump-log --cluster-metadata-decoder` prints after
/// ` payload: ` for a record at `offset` with value `value` (metadata
/// records print no key). A value that does not decode prints
/// `Error at <offset>, skipping. <reason>`.
pub fn format_metadata_payload(offset: i64, value: Option<&[u8]>) -> String {
    format_metadata_payload_for(offset, value, (u8::MAX, u8::MAX))
}

/// [`format_metadata_payload`] as release line `line`'s kafka-dump-log
/// prints it: a record type that line does not know is `Unknown metadata
/// id`, a version above the highest it reads `Failed to deserialize record
/// with type` (generated `METADATA_MAX_VERSIONS`), and tagged fields it
/// does not know are left out (`METADATA_TAGGED_SINCE`).
pub fn format_metadata_payload_for(offset: i64, value: Option<&[u8]>, line: (u8, u8)) -> String {
    let Some(v) = value else {
        // Kafka's reader fails on the first byte of a missing value.
        return format!("Error at {offset}, skipping. Error while reading frame version");
    };
    let known = tables::METADATA_MAX_VERSIONS
        .iter()
        .find(|(l, _)| *l == line)
        .map(|(_, k)| *k);
    let highest = |key: i16| known.and_then(|k| k.iter().find(|(a, _)| *a == key).map(|(_, h)| *h));
    let decoded = match known {
        Some(k) => {
            // a record type the line does not know fails at its lookup,
            // after the frame and before the body (2.8 checks the frame
            // against version 0 first: peek_api_key reads frame 1 only)
            if let Some(key) = peek_api_key(v).filter(|_| line >= (3, 0)) {
                if !k.iter().any(|(a, _)| *a == key) {
                    return format!(
                        "Error at {offset}, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {key}"
                    );
                }
            }
            // a record the line lays out otherwise is read with its own schema
            let own = |key: i16| {
                tables::METADATA_OLD_LAYOUTS
                    .iter()
                    .find(|(l, s)| *l == line && s.api_key == key)
                    .map(|(_, s)| *s)
            };
            // 2.8 (the KRaft preview) reads frame version 0 only
            let preview = line < (3, 0);
            match peek_api_key(v).and_then(own) {
                Some(schema) => decode_frame(v, |_| Some(schema), |_| None, preview, Some(line)),
                None => decode_frame(v, metadata_schema, highest, preview, Some(line)),
            }
        }
        None => decode_metadata_record(v),
    };
    match decoded {
        Ok(mut rec) => {
            if known.is_some() {
                schema::hide_tagged_since(
                    &mut rec.body,
                    rec.name,
                    line,
                    tables::METADATA_TAGGED_SINCE,
                );
            }
            let record = rec.name;
            rec.to_json_named(&|field| {
                schema::name_in_line(tables::METADATA_RENAMED, record, line, field)
            })
        }
        Err(e) => format!("Error at {offset}, skipping. {}", e.reason),
    }
}

#[cfg(test)]
mod tests {
    use super::schema::uuid_string;
    use super::*;

    #[test]
    fn type_constants() {
        assert_eq!(
            record_type_constant("PartitionChangeRecord"),
            "PARTITION_CHANGE_RECORD"
        );
        assert_eq!(
            record_type_constant("ZkMigrationStateRecord"),
            "ZK_MIGRATION_STATE_RECORD"
        );
        assert_eq!(record_type_constant("NoOpRecord"), "NO_OP_RECORD");
    }

    #[test]
    fn partition_change_roundtrip() {
        // frame 1, api key 5, version 0; partitionId 0; topic id; tagged: isr [1,2], leader 1
        let mut v = vec![1u8, 5, 0, 0, 0, 0, 0];
        v.extend_from_slice(&[7u8; 16]);
        v.extend_from_slice(&[2, 0, 3, 3, 0, 0, 0, 1, 0, 0, 0, 2, 1, 4, 0, 0, 0, 1]);
        let rec = decode_metadata_record(&v).expect("decodes");
        let json = rec.to_json();
        assert_eq!(
            json,
            format!(
                "{{\"type\":\"PARTITION_CHANGE_RECORD\",\"version\":0,\"data\":{{\"partitionId\":0,\"topicId\":\"{}\",\"isr\":[1,2],\"leader\":1}}}}",
                uuid_string(&[7u8; 16])
            )
        );
        match rec.typed() {
            Some(TypedMetadata::PartitionChange(pc)) => {
                assert_eq!(pc.isr, Some(vec![1, 2]));
                assert_eq!(pc.leader, 1);
                assert!(pc.bumps_leader_epoch());
                assert_eq!(pc.replicas, None);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// A `PartitionRecord` v2 (replicas assigned to log directories) read
    /// by releases that know version 0 only: its `directories` array is
    /// read as tagged fields, tag 0 with size 0 four times. 3.0 and 3.1
    /// lack the tagged `leaderRecoveryState` (tag 0, from 3.2) and skip 0
    /// bytes for each; 3.2 to 3.6 read its byte whatever the size. What
    /// their kafka-dump-log printed for this record (the `jbod` capture).
    #[test]
    fn a_tag_an_older_release_lacks_is_skipped_by_its_size() {
        // frame 1, api key 3, version 2
        let mut v = vec![1u8, 3, 2];
        v.extend_from_slice(&[0, 0, 0, 0]); // partitionId 0
        v.extend_from_slice(&[9u8; 16]); // topicId
        for arr in [&[1u8, 2, 3][..], &[1, 2, 3], &[], &[]] {
            v.push(arr.len() as u8 + 1);
            for x in arr {
                v.extend_from_slice(&[0, 0, 0, *x]);
            }
        }
        v.extend_from_slice(&[0, 0, 0, 1]); // leader 1
        v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // leader and partition epoch
        v.push(4); // directories: 3 x Uuid(0, 1), unassigned
        for _ in 0..3 {
            v.extend_from_slice(&[0u8; 15]);
            v.push(1);
        }
        v.push(0); // no tagged fields
        let garbage = |line| format_metadata_payload_for(24, Some(&v), line);
        for line in [(3, 0), (3, 1)] {
            assert_eq!(
                garbage(line),
                "Error at 24, skipping. Found 41 byte(s) of garbage after 3"
            );
        }
        for line in [(3, 2), (3, 6)] {
            assert_eq!(
                garbage(line),
                "Error at 24, skipping. Found 37 byte(s) of garbage after 3"
            );
        }
        assert!(
            garbage((3, 7)).contains("\"directories\":["),
            "{}",
            garbage((3, 7))
        );
    }

    #[test]
    fn metadata_errors() {
        assert_eq!(
            format_metadata_payload(5, Some(&[0, 3, 0])),
            "Error at 5, skipping. Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."
        );
        assert_eq!(
            format_metadata_payload(6, Some(&[1, 20, 0, 0, 9])),
            "Error at 6, skipping. Found 1 byte(s) of garbage after 20"
        );
        assert_eq!(
            format_metadata_payload(7, Some(&[1, 3, 0, 0])),
            "Error at 7, skipping. Failed to deserialize record with type 3"
        );
        assert_eq!(
            format_metadata_payload(8, Some(&[1, 6, 0])),
            "Error at 8, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 6"
        );
        // Huge array count is rejected before allocating.
        let mut v = vec![1u8, 3, 0, 0, 0, 0, 0];
        v.extend_from_slice(&[0u8; 16]);
        v.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(decode_metadata_record(&v).is_err());
    }
}
