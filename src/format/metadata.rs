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

use crate::format::ParseError;

pub mod schema {
    //! A small interpreter for Kafka's generated message classes: field
    //! tables describe a message; [`read_message`] decodes bytes into a
    //! [`Msg`] the way the generated `read` method does, and [`write_json`]
    //! prints it the way the generated `*JsonConverter.write` followed by
    //! Jackson's compact `toString()` does.

    pub use crate::format::text::{base64, json_string, STD_ALPHABET, URL_ALPHABET};
    use crate::format::ParseError;

    /// Highest version number (open-ended version ranges end here).
    pub const MAX: i16 = i16::MAX;

    /// An inclusive version range; empty when the start is above the end.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Vr(pub i16, pub i16);

    /// The empty version range.
    pub const NONE: Vr = Vr(1, 0);

    impl Vr {
        /// Whether `v` lies in the range.
        pub fn contains(self, v: i16) -> bool {
            v >= self.0 && v <= self.1
        }
        /// Whether the range holds no version.
        pub fn is_empty(self) -> bool {
            self.0 > self.1
        }
        /// Intersection of two ranges.
        pub fn intersect(self, o: Vr) -> Vr {
            Vr(self.0.max(o.0), self.1.min(o.1))
        }
        /// Membership as Kafka's generated code tests it: the generator
        /// assumes the version lies in `possible` (the valid versions of the
        /// enclosing structure) and only emits the bound checks that range
        /// needs, so a version outside `possible` (which the generated
        /// `read`/`write` do not reject) is tested against those checks only.
        pub fn member(self, v: i16, possible: Vr) -> bool {
            if self.intersect(possible).is_empty() {
                return false;
            }
            (self.0 <= possible.0 || v >= self.0) && (self.1 >= possible.1 || v <= self.1)
        }
    }

    /// Field types of the message schemas.
    #[derive(Debug)]
    pub enum Ty {
        Bool,
        I8,
        I16,
        U16,
        I32,
        U32,
        I64,
        F64,
        Uuid,
        Str,
        Bytes,
        /// Array of the element type.
        Arr(&'static Ty),
        /// Nested structure with its own fields.
        Struct(&'static [Field]),
    }

    /// Default value of a field (what a reader assumes when a tagged field is
    /// absent, and what the JSON writer compares tagged fields with).
    #[derive(Debug)]
    pub enum Def {
        Null,
        /// Empty array or byte string.
        Empty,
        Int(i64),
        Bool(bool),
        F64(f64),
        Str(&'static str),
        ZeroUuid,
        /// A structure holding the defaults of its own fields.
        Struct,
    }

    /// One field of a message schema. `name` is already the JSON key (the
    /// schema name with its first character lower-cased).
    #[derive(Debug)]
    pub struct Field {
        pub name: &'static str,
        pub ty: Ty,
        pub ver: Vr,
        pub nullable: Vr,
        pub tagged: Vr,
        pub tag: u32,
        pub default: Def,
        /// Per-field override of the message's flexible versions.
        pub flex: Option<Vr>,
    }

    /// A top-level message schema.
    #[derive(Debug)]
    pub struct Schema {
        pub name: &'static str,
        pub api_key: i16,
        pub valid: Vr,
        pub flex: Vr,
        pub fields: &'static [Field],
    }

    /// A decoded value.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Val {
        Null,
        Bool(bool),
        /// Every integer type (int8 … int64, uint16, uint32).
        Int(i64),
        F64(f64),
        Uuid([u8; 16]),
        Str(String),
        Bytes(Vec<u8>),
        Arr(Vec<Val>),
        Struct(Msg),
    }

    /// A decoded structure: one slot per schema field, `None` when the field
    /// does not exist in the message version.
    #[derive(Debug, Clone)]
    pub struct Msg {
        pub fields: &'static [Field],
        pub version: i16,
        /// Versions the generated code assumes for this structure (see [`Vr::member`]).
        pub possible: Vr,
        pub values: Vec<Option<Val>>,
    }

    impl PartialEq for Msg {
        fn eq(&self, other: &Self) -> bool {
            std::ptr::eq(self.fields, other.fields)
                && self.version == other.version
                && self.values == other.values
        }
    }

    impl Msg {
        /// The value of the field with JSON name `name`, when present in this version.
        pub fn get(&self, name: &str) -> Option<&Val> {
            self.fields
                .iter()
                .position(|f| f.name == name)
                .and_then(|i| self.values.get(i))
                .and_then(|v| v.as_ref())
        }
        /// Mutable access to a field value.
        pub fn get_mut(&mut self, name: &str) -> Option<&mut Val> {
            let i = self.fields.iter().position(|f| f.name == name)?;
            self.values.get_mut(i).and_then(|v| v.as_mut())
        }
        /// Integer field, if present and an integer.
        pub fn int(&self, name: &str) -> Option<i64> {
            match self.get(name) {
                Some(Val::Int(i)) => Some(*i),
                _ => None,
            }
        }
        /// Boolean field.
        pub fn bool(&self, name: &str) -> Option<bool> {
            match self.get(name) {
                Some(Val::Bool(b)) => Some(*b),
                _ => None,
            }
        }
        /// String field (`None` when absent or null).
        pub fn str(&self, name: &str) -> Option<&str> {
            match self.get(name) {
                Some(Val::Str(s)) => Some(s),
                _ => None,
            }
        }
        /// UUID field.
        pub fn uuid(&self, name: &str) -> Option<[u8; 16]> {
            match self.get(name) {
                Some(Val::Uuid(u)) => Some(*u),
                _ => None,
            }
        }
        /// Array-of-integers field; `None` when absent or null.
        pub fn ints(&self, name: &str) -> Option<Vec<i32>> {
            match self.get(name) {
                Some(Val::Arr(a)) => Some(
                    a.iter()
                        .filter_map(|v| match v {
                            Val::Int(i) => i32::try_from(*i).ok(),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => None,
            }
        }
        /// Array-of-UUIDs field; `None` when absent or null.
        pub fn uuids(&self, name: &str) -> Option<Vec<[u8; 16]>> {
            match self.get(name) {
                Some(Val::Arr(a)) => Some(
                    a.iter()
                        .filter_map(|v| match v {
                            Val::Uuid(u) => Some(*u),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => None,
            }
        }
        /// Array-of-structures field; empty when absent or null.
        pub fn structs(&self, name: &str) -> Vec<&Msg> {
            match self.get(name) {
                Some(Val::Arr(a)) => a
                    .iter()
                    .filter_map(|v| match v {
                        Val::Struct(m) => Some(m),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            }
        }
    }

    pub use crate::format::bytes::{Reader, UNDERFLOW};

    fn read_len(r: &mut Reader, flexible: bool, wide: bool) -> Result<i64, ParseError> {
        // Java holds the unsigned varint in an int: values of 2^31 and more
        // are negative there.
        Ok(if flexible {
            i64::from((r.uvarint()? as i32).wrapping_sub(1))
        } else if wide {
            i64::from(r.i32()?)
        } else {
            i64::from(r.i16()?)
        })
    }

    /// The default value of a field, as the generated constructor sets it.
    pub fn default_val(f: &Field, version: i16, possible: Vr) -> Val {
        match &f.default {
            Def::Null => Val::Null,
            Def::Empty => match f.ty {
                Ty::Bytes => Val::Bytes(Vec::new()),
                _ => Val::Arr(Vec::new()),
            },
            Def::Int(i) => Val::Int(*i),
            Def::Bool(b) => Val::Bool(*b),
            Def::F64(d) => Val::F64(*d),
            Def::Str(s) => Val::Str((*s).to_string()),
            Def::ZeroUuid => Val::Uuid([0; 16]),
            Def::Struct => match f.ty {
                Ty::Struct(fields) => {
                    Val::Struct(default_msg(fields, version, possible.intersect(f.ver)))
                }
                _ => Val::Null,
            },
        }
    }

    fn default_msg(fields: &'static [Field], version: i16, possible: Vr) -> Msg {
        Msg {
            fields,
            version,
            possible,
            values: fields
                .iter()
                .map(|f| {
                    f.ver
                        .member(version, possible)
                        .then(|| default_val(f, version, possible))
                })
                .collect(),
        }
    }

    struct Ctx {
        version: i16,
        flex: Vr,
    }

    fn read_struct(
        r: &mut Reader,
        fields: &'static [Field],
        cx: &Ctx,
        possible: Vr,
    ) -> Result<Msg, ParseError> {
        let v = cx.version;
        let mut values = Vec::with_capacity(fields.len());
        for f in fields {
            let present = possible.intersect(f.ver);
            if !f.ver.member(v, possible) {
                values.push(None);
            } else if f.tagged.member(v, present) {
                values.push(Some(default_val(f, v, possible)));
            } else {
                let flexible = f.flex.unwrap_or(cx.flex).member(v, present);
                values.push(Some(read_field(r, f, flexible, false, cx, present)?));
            }
        }
        if cx.flex.member(v, possible) {
            let cur_flexible = possible.intersect(cx.flex);
            // A count of 2^31 or more is a negative int in Java: no iterations.
            let n = (r.uvarint()? as i32).max(0);
            for _ in 0..n {
                let tag = r.uvarint()?;
                let size = r.uvarint()? as usize;
                let known = fields
                    .iter()
                    .position(|f| f.tag == tag && !f.ver.intersect(f.tagged).is_empty());
                match known {
                    Some(i) => {
                        let f = &fields[i];
                        if !f.ver.intersect(f.tagged).member(v, cur_flexible) {
                            return Err(r.err(format!("Tag {tag} is not valid for version {v}")));
                        }
                        let present = possible.intersect(f.ver);
                        values[i] = Some(read_field(r, f, true, true, cx, present)?);
                    }
                    None => {
                        r.take(size)?;
                    }
                }
            }
        }
        Ok(Msg {
            fields,
            version: v,
            possible,
            values,
        })
    }

    fn read_field(
        r: &mut Reader,
        f: &'static Field,
        flexible: bool,
        tagged: bool,
        cx: &Ctx,
        present: Vr,
    ) -> Result<Val, ParseError> {
        let nullable = f.nullable.member(cx.version, present);
        if let Ty::Struct(fields) = f.ty {
            if nullable {
                let null = if tagged {
                    (r.uvarint()? as i32) <= 0
                } else {
                    r.i8()? < 0
                };
                if null {
                    return Ok(Val::Null);
                }
            }
            return Ok(Val::Struct(read_struct(r, fields, cx, present)?));
        }
        read_value(r, &f.ty, f.name, nullable, flexible, cx, present)
    }

    fn read_value(
        r: &mut Reader,
        ty: &'static Ty,
        name: &str,
        nullable: bool,
        flexible: bool,
        cx: &Ctx,
        present: Vr,
    ) -> Result<Val, ParseError> {
        let null_err =
            |r: &Reader| r.err(format!("non-nullable field {name} was serialized as null"));
        Ok(match ty {
            Ty::Bool => Val::Bool(r.i8()? != 0),
            Ty::I8 => Val::Int(r.i8()?.into()),
            Ty::I16 => Val::Int(r.i16()?.into()),
            Ty::U16 => Val::Int(r.u16()?.into()),
            Ty::I32 => Val::Int(r.i32()?.into()),
            Ty::U32 => Val::Int(r.u32()?.into()),
            Ty::I64 => Val::Int(r.i64()?),
            Ty::F64 => Val::F64(r.f64()?),
            Ty::Uuid => Val::Uuid(r.uuid()?),
            Ty::Str => {
                let len = read_len(r, flexible, false)?;
                if len < 0 {
                    if nullable {
                        return Ok(Val::Null);
                    }
                    return Err(null_err(r));
                }
                if len > 0x7fff {
                    return Err(r.err(format!("string field {name} had invalid length {len}")));
                }
                let b = r.take(len as usize)?;
                Val::Str(String::from_utf8_lossy(b).into_owned())
            }
            Ty::Bytes => {
                let len = read_len(r, flexible, true)?;
                if len < 0 {
                    if nullable {
                        return Ok(Val::Null);
                    }
                    return Err(null_err(r));
                }
                if len as u64 > r.remaining() as u64 {
                    return Err(r.err(format!(
                        "Error reading byte array of {len} byte(s): only {} byte(s) available",
                        r.remaining()
                    )));
                }
                Val::Bytes(r.take(len as usize)?.to_vec())
            }
            Ty::Arr(elem) => {
                let len = read_len(r, flexible, true)?;
                if len < 0 {
                    if nullable {
                        return Ok(Val::Null);
                    }
                    return Err(null_err(r));
                }
                if len as u64 > r.remaining() as u64 {
                    return Err(r.err(format!(
                        "Tried to allocate a collection of size {len}, but there are only {} bytes remaining.",
                        r.remaining()
                    )));
                }
                // `len` is bounded by the remaining bytes, but a value takes
                // more memory than its smallest encoding: preallocate a
                // little and let elements that really parse grow it.
                let mut out = Vec::with_capacity((len as usize).min(1024));
                for _ in 0..len {
                    out.push(match elem {
                        Ty::Struct(fields) => Val::Struct(read_struct(r, fields, cx, present)?),
                        _ => read_value(r, elem, name, false, flexible, cx, present)?,
                    });
                }
                Val::Arr(out)
            }
            Ty::Struct(fields) => Val::Struct(read_struct(r, fields, cx, present)?),
        })
    }

    /// Decodes a whole message of `schema` at `version` from `r` (the
    /// generated `read(Readable, short)`); trailing bytes are left unread.
    /// Like the generated code it does not reject versions outside the
    /// schema's valid range (see [`Vr::member`]); callers check that where
    /// Kafka does.
    pub fn read_message(
        r: &mut Reader,
        schema: &'static Schema,
        version: i16,
    ) -> Result<Msg, ParseError> {
        let cx = Ctx {
            version,
            flex: schema.flex,
        };
        read_struct(r, schema.fields, &cx, schema.valid)
    }

    /// The message as the generated class would hold it after being
    /// written at `version`: fields of that version keep their value or
    /// take their default, other fields are dropped.
    pub fn reversion(msg: &Msg, version: i16) -> Msg {
        Msg {
            fields: msg.fields,
            version,
            possible: msg.possible,
            values: msg
                .fields
                .iter()
                .zip(msg.values.iter())
                .map(|(f, v)| {
                    if !f.ver.member(version, msg.possible) {
                        return None;
                    }
                    Some(match v {
                        Some(Val::Struct(m)) => Val::Struct(reversion(m, version)),
                        Some(Val::Arr(a)) => Val::Arr(
                            a.iter()
                                .map(|e| match e {
                                    Val::Struct(m) => Val::Struct(reversion(m, version)),
                                    other => other.clone(),
                                })
                                .collect(),
                        ),
                        Some(other) => other.clone(),
                        None => default_val(f, version, msg.possible),
                    })
                })
                .collect(),
        }
    }

    /// Writes `msg` as compact JSON, following the generated JSON converters:
    /// fields in schema order, fields absent in the version omitted, tagged
    /// fields omitted when they hold their default.
    pub fn write_json(out: &mut String, msg: &Msg) {
        out.push('{');
        let mut first = true;
        for (f, slot) in msg.fields.iter().zip(msg.values.iter()) {
            let Some(val) = slot else { continue };
            let present = msg.possible.intersect(f.ver);
            if f.tagged.member(msg.version, present)
                && *val == default_val(f, msg.version, msg.possible)
            {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            json_string(out, f.name);
            out.push(':');
            write_val(out, val);
        }
        out.push('}');
    }

    /// Writes one value as compact JSON.
    pub fn write_val(out: &mut String, val: &Val) {
        match val {
            Val::Null => out.push_str("null"),
            Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Val::Int(i) => out.push_str(&i.to_string()),
            Val::F64(d) => out.push_str(&java_json_double(*d)),
            Val::Uuid(u) => {
                out.push('"');
                out.push_str(&uuid_string(u));
                out.push('"');
            }
            Val::Str(s) => json_string(out, s),
            Val::Bytes(b) => {
                out.push('"');
                out.push_str(&base64(b, STD_ALPHABET, true));
                out.push('"');
            }
            Val::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_val(out, v);
                }
                out.push(']');
            }
            Val::Struct(m) => write_json(out, m),
        }
    }

    /// Kafka's `Uuid.toString()`: URL-safe base64 without padding (22 characters).
    pub fn uuid_string(u: &[u8; 16]) -> String {
        base64(u, URL_ALPHABET, false)
    }

    /// A double as Jackson writes a `DoubleNode`: Java's `Double.toString`
    /// form, with NaN and the infinities as quoted strings.
    pub fn java_json_double(d: f64) -> String {
        if d.is_nan() {
            return "\"NaN\"".into();
        }
        if d.is_infinite() {
            return if d > 0.0 {
                "\"Infinity\""
            } else {
                "\"-Infinity\""
            }
            .into();
        }
        java_double_to_string(d)
    }

    /// Java's `Double.toString` for finite values (shortest round-trip digits).
    pub fn java_double_to_string(d: f64) -> String {
        if d == 0.0 {
            return if d.is_sign_negative() { "-0.0" } else { "0.0" }.into();
        }
        let sci = format!("{:e}", d.abs());
        let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
        let sign = if d < 0.0 { "-" } else { "" };
        let abs = d.abs();
        if (1e-3..1e7).contains(&abs) {
            let (int_part, frac_part) = if exp >= 0 {
                let e = exp as usize + 1;
                if digits.len() > e {
                    (digits[..e].to_string(), digits[e..].to_string())
                } else {
                    (format!("{digits:0<e$}"), String::new())
                }
            } else {
                let zeros = "0".repeat((-exp - 1) as usize);
                ("0".to_string(), format!("{zeros}{digits}"))
            };
            let frac = if frac_part.is_empty() {
                "0".to_string()
            } else {
                frac_part
            };
            format!("{sign}{int_part}.{frac}")
        } else {
            let frac = if digits.len() > 1 { &digits[1..] } else { "0" };
            format!("{sign}{}.{frac}E{exp}", &digits[..1])
        }
    }
}

use schema::{read_message, write_json, Msg, Reader, Schema};

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
        let mut out = String::from("{\"type\":");
        schema::json_string(&mut out, &self.type_name());
        out.push_str(",\"version\":");
        out.push_str(&self.version.to_string());
        out.push_str(",\"data\":");
        write_json(&mut out, &self.body);
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
    let mut r = Reader::new(value, 0);
    let frame = frame_field(&mut r, "frame version")?;
    if frame == 0 {
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
    let schema = metadata_schema(api_key).ok_or_else(|| {
        r.err(format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        ))
    })?;
    let body = read_message(&mut r, schema, version).map_err(|e| {
        ParseError::new(
            e.pos,
            format!("Failed to deserialize record with type {api_key}"),
        )
    })?;
    if r.remaining() > 0 {
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

/// The text `kafka-dump-log --cluster-metadata-decoder` prints after
/// ` payload: ` for a record at `offset` with value `value` (metadata
/// records print no key). A value that does not decode prints
/// `Error at <offset>, skipping. <reason>`.
pub fn format_metadata_payload(offset: i64, value: Option<&[u8]>) -> String {
    match value {
        // Kafka's reader fails on the first byte of a missing value.
        None => format!("Error at {offset}, skipping. Error while reading frame version"),
        Some(v) => match decode_metadata_record(v) {
            Ok(rec) => rec.to_json(),
            Err(e) => format!("Error at {offset}, skipping. {}", e.reason),
        },
    }
}

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
    write_json(&mut out, &schema::reversion(&msg, write_version));
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

/// (end offset, epoch) of a `<20 digits>-<10 digits>.checkpoint` name.
pub fn parse_checkpoint_name(file_name: &str) -> Option<(i64, i32)> {
    let stem = file_name.strip_suffix(".checkpoint")?;
    let (o, e) = stem.split_once('-')?;
    if o.len() != 20
        || e.len() != 10
        || !o.bytes().all(|b| b.is_ascii_digit())
        || !e.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((o.parse().ok()?, e.parse().ok()?))
}

#[allow(clippy::all)]
#[rustfmt::skip]
mod tables {
    //! Field tables of the Kafka 4.1 metadata record schemas
    //! (`metadata/src/main/resources/common/metadata/*.json`).
    use super::schema::{Def, Field, Schema, Ty, Vr, MAX, NONE};

    static M_F1: &[Field] = &[
        Field { name: "reason", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 0, default: Def::Null, flex: None },
    ];
    static M_F2: &[Field] = &[
        Field { name: "id", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "resourceType", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "resourceName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "patternType", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "principal", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "host", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "operation", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "permissionType", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F3: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 0, default: Def::Null, flex: None },
    ];
    static M_F4: &[Field] = &[
        Field { name: "brokerId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "brokerEpoch", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "fenced", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: Vr(0, MAX), tag: 0, default: Def::Int(0), flex: None },
        Field { name: "inControlledShutdown", ty: Ty::I8, ver: Vr(1, MAX), nullable: NONE, tagged: Vr(1, MAX), tag: 1, default: Def::Int(0), flex: None },
        Field { name: "logDirs", ty: Ty::Arr(&Ty::Uuid), ver: Vr(2, MAX), nullable: NONE, tagged: Vr(2, MAX), tag: 2, default: Def::Empty, flex: None },
    ];
    static M_F5: &[Field] = &[
        Field { name: "topicName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static M_F6: &[Field] = &[
        Field { name: "entityType", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "entityName", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static M_F7: &[Field] = &[
        Field { name: "entity", ty: Ty::Arr(&Ty::Struct(M_F6)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "key", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "value", ty: Ty::F64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::F64(0.0), flex: None },
        Field { name: "remove", ty: Ty::Bool, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Bool(false), flex: None },
    ];
    static M_F8: &[Field] = &[
        Field { name: "resourceType", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "resourceName", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "value", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static M_F9: &[Field] = &[
        Field { name: "owner", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "requester", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "renewers", ty: Ty::Arr(&Ty::Str), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "issueTimestamp", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "maxTimestamp", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "expirationTimestamp", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "tokenId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static M_F10: &[Field] = &[];
    static M_F11: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "featureLevel", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F12: &[Field] = &[
        Field { name: "id", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "epoch", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F13: &[Field] = &[];
    static M_F14: &[Field] = &[
        Field { name: "partitionId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "isr", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 0, default: Def::Null, flex: None },
        Field { name: "leader", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: Vr(0, MAX), tag: 1, default: Def::Int(-2), flex: None },
        Field { name: "replicas", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 2, default: Def::Null, flex: None },
        Field { name: "removingReplicas", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 3, default: Def::Null, flex: None },
        Field { name: "addingReplicas", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: Vr(0, MAX), tag: 4, default: Def::Null, flex: None },
        Field { name: "leaderRecoveryState", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: Vr(0, MAX), tag: 5, default: Def::Int(-1), flex: None },
        Field { name: "directories", ty: Ty::Arr(&Ty::Uuid), ver: Vr(1, MAX), nullable: Vr(1, MAX), tagged: Vr(1, MAX), tag: 8, default: Def::Null, flex: None },
        Field { name: "eligibleLeaderReplicas", ty: Ty::Arr(&Ty::I32), ver: Vr(2, MAX), nullable: Vr(2, MAX), tagged: Vr(2, MAX), tag: 6, default: Def::Null, flex: None },
        Field { name: "lastKnownElr", ty: Ty::Arr(&Ty::I32), ver: Vr(2, MAX), nullable: Vr(2, MAX), tagged: Vr(2, MAX), tag: 7, default: Def::Null, flex: None },
    ];
    static M_F15: &[Field] = &[
        Field { name: "partitionId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "replicas", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "isr", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "removingReplicas", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "addingReplicas", ty: Ty::Arr(&Ty::I32), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "leader", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "leaderRecoveryState", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: Vr(0, MAX), tag: 0, default: Def::Int(0), flex: None },
        Field { name: "leaderEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "partitionEpoch", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "directories", ty: Ty::Arr(&Ty::Uuid), ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "eligibleLeaderReplicas", ty: Ty::Arr(&Ty::I32), ver: Vr(2, MAX), nullable: Vr(2, MAX), tagged: Vr(2, MAX), tag: 1, default: Def::Null, flex: None },
        Field { name: "lastKnownElr", ty: Ty::Arr(&Ty::I32), ver: Vr(2, MAX), nullable: Vr(2, MAX), tagged: Vr(2, MAX), tag: 2, default: Def::Null, flex: None },
    ];
    static M_F16: &[Field] = &[
        Field { name: "brokerId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "brokerEpoch", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(-1), flex: None },
        Field { name: "nextProducerId", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F17: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "host", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "port", ty: Ty::U16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "securityProtocol", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F18: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "minSupportedVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "maxSupportedVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F19: &[Field] = &[
        Field { name: "brokerId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "isMigratingZkBroker", ty: Ty::Bool, ver: Vr(2, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Bool(false), flex: None },
        Field { name: "incarnationId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "brokerEpoch", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "endPoints", ty: Ty::Arr(&Ty::Struct(M_F17)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "features", ty: Ty::Arr(&Ty::Struct(M_F18)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "rack", ty: Ty::Str, ver: Vr(0, MAX), nullable: Vr(0, MAX), tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "fenced", ty: Ty::Bool, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Bool(true), flex: None },
        Field { name: "inControlledShutdown", ty: Ty::Bool, ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Bool(false), flex: None },
        Field { name: "logDirs", ty: Ty::Arr(&Ty::Uuid), ver: Vr(3, MAX), nullable: NONE, tagged: Vr(3, MAX), tag: 0, default: Def::Empty, flex: None },
    ];
    static M_F20: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "host", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "port", ty: Ty::U16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "securityProtocol", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F21: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "minSupportedVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "maxSupportedVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F22: &[Field] = &[
        Field { name: "controllerId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "incarnationId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "zkMigrationReady", ty: Ty::Bool, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Bool(false), flex: None },
        Field { name: "endPoints", ty: Ty::Arr(&Ty::Struct(M_F20)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "features", ty: Ty::Arr(&Ty::Struct(M_F21)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static M_F23: &[Field] = &[
        Field { name: "id", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
    ];
    static M_F24: &[Field] = &[
        Field { name: "tokenId", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
    ];
    static M_F25: &[Field] = &[
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
    ];
    static M_F26: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "mechanism", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F27: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "topicId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
    ];
    static M_F28: &[Field] = &[
        Field { name: "id", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "epoch", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F29: &[Field] = &[
        Field { name: "brokerId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "brokerEpoch", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F30: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "mechanism", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "salt", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "storedKey", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "serverKey", ty: Ty::Bytes, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "iterations", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static M_F31: &[Field] = &[
        Field { name: "zkMigrationState", ty: Ty::I8, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    /// Metadata record schemas, by api key.
    pub(crate) static METADATA_SCHEMAS: &[Schema] = &[
        Schema { name: "RegisterBrokerRecord", api_key: 0, valid: Vr(0, 3), flex: Vr(0, MAX), fields: M_F19 },
        Schema { name: "UnregisterBrokerRecord", api_key: 1, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F29 },
        Schema { name: "TopicRecord", api_key: 2, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F27 },
        Schema { name: "PartitionRecord", api_key: 3, valid: Vr(0, 2), flex: Vr(0, MAX), fields: M_F15 },
        Schema { name: "ConfigRecord", api_key: 4, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F8 },
        Schema { name: "PartitionChangeRecord", api_key: 5, valid: Vr(0, 2), flex: Vr(0, MAX), fields: M_F14 },
        Schema { name: "FenceBrokerRecord", api_key: 7, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F12 },
        Schema { name: "UnfenceBrokerRecord", api_key: 8, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F28 },
        Schema { name: "RemoveTopicRecord", api_key: 9, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F25 },
        Schema { name: "DelegationTokenRecord", api_key: 10, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F9 },
        Schema { name: "UserScramCredentialRecord", api_key: 11, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F30 },
        Schema { name: "FeatureLevelRecord", api_key: 12, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F11 },
        Schema { name: "ClientQuotaRecord", api_key: 14, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F7 },
        Schema { name: "ProducerIdsRecord", api_key: 15, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F16 },
        Schema { name: "BrokerRegistrationChangeRecord", api_key: 17, valid: Vr(0, 2), flex: Vr(0, MAX), fields: M_F4 },
        Schema { name: "AccessControlEntryRecord", api_key: 18, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F2 },
        Schema { name: "RemoveAccessControlEntryRecord", api_key: 19, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F23 },
        Schema { name: "NoOpRecord", api_key: 20, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F13 },
        Schema { name: "ZkMigrationStateRecord", api_key: 21, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F31 },
        Schema { name: "RemoveUserScramCredentialRecord", api_key: 22, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F26 },
        Schema { name: "BeginTransactionRecord", api_key: 23, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F3 },
        Schema { name: "EndTransactionRecord", api_key: 24, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F10 },
        Schema { name: "AbortTransactionRecord", api_key: 25, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F1 },
        Schema { name: "RemoveDelegationTokenRecord", api_key: 26, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F24 },
        Schema { name: "RegisterControllerRecord", api_key: 27, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F22 },
        Schema { name: "ClearElrRecord", api_key: 28, valid: Vr(0, 0), flex: Vr(0, MAX), fields: M_F5 },
    ];
    static C_F1: &[Field] = &[
        Field { name: "version", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "kRaftVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static C_F2: &[Field] = &[
        Field { name: "voterId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "voterDirectoryId", ty: Ty::Uuid, ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
    ];
    static C_F3: &[Field] = &[
        Field { name: "voterId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "voterDirectoryId", ty: Ty::Uuid, ver: Vr(1, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
    ];
    static C_F4: &[Field] = &[
        Field { name: "version", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "leaderId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "voters", ty: Ty::Arr(&Ty::Struct(C_F2)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "grantingVoters", ty: Ty::Arr(&Ty::Struct(C_F3)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    static C_F5: &[Field] = &[
        Field { name: "version", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static C_F6: &[Field] = &[
        Field { name: "version", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "lastContainedLogTimestamp", ty: Ty::I64, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static C_F7: &[Field] = &[
        Field { name: "name", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "host", ty: Ty::Str, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Str(""), flex: None },
        Field { name: "port", ty: Ty::U16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static C_F8: &[Field] = &[
        Field { name: "minSupportedVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "maxSupportedVersion", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
    ];
    static C_F9: &[Field] = &[
        Field { name: "voterId", ty: Ty::I32, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "voterDirectoryId", ty: Ty::Uuid, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::ZeroUuid, flex: None },
        Field { name: "endpoints", ty: Ty::Arr(&Ty::Struct(C_F7)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
        Field { name: "kRaftVersionFeature", ty: Ty::Struct(C_F8), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Struct, flex: None },
    ];
    static C_F10: &[Field] = &[
        Field { name: "version", ty: Ty::I16, ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Int(0), flex: None },
        Field { name: "voters", ty: Ty::Arr(&Ty::Struct(C_F9)), ver: Vr(0, MAX), nullable: NONE, tagged: NONE, tag: 0, default: Def::Empty, flex: None },
    ];
    pub(crate) static KRAFT_VERSION_RECORD: Schema = Schema { name: "KRaftVersionRecord", api_key: -1, valid: Vr(0, 0), flex: Vr(0, MAX), fields: C_F1 };
    pub(crate) static LEADER_CHANGE_MESSAGE: Schema = Schema { name: "LeaderChangeMessage", api_key: -1, valid: Vr(0, 1), flex: Vr(0, MAX), fields: C_F4 };
    pub(crate) static SNAPSHOT_FOOTER_RECORD: Schema = Schema { name: "SnapshotFooterRecord", api_key: -1, valid: Vr(0, 0), flex: Vr(0, MAX), fields: C_F5 };
    pub(crate) static SNAPSHOT_HEADER_RECORD: Schema = Schema { name: "SnapshotHeaderRecord", api_key: -1, valid: Vr(0, 0), flex: Vr(0, MAX), fields: C_F6 };
    pub(crate) static VOTERS_RECORD: Schema = Schema { name: "VotersRecord", api_key: -1, valid: Vr(0, 0), flex: Vr(0, MAX), fields: C_F10 };
}
use tables::METADATA_SCHEMAS;

#[cfg(test)]
mod tests {
    use super::schema::*;
    use super::*;

    #[test]
    fn java_doubles() {
        assert_eq!(java_double_to_string(1048576.0), "1048576.0");
        assert_eq!(java_double_to_string(1.0e7), "1.0E7");
        assert_eq!(java_double_to_string(0.001), "0.001");
        assert_eq!(java_double_to_string(0.0001), "1.0E-4");
        assert_eq!(java_double_to_string(-2.5), "-2.5");
        assert_eq!(java_double_to_string(123.456), "123.456");
        assert_eq!(java_json_double(f64::NAN), "\"NaN\"");
    }

    #[test]
    fn uuid_and_base64() {
        assert_eq!(uuid_string(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(base64(b"ab", STD_ALPHABET, true), "YWI=");
        assert_eq!(base64(&[0xfb, 0xff], URL_ALPHABET, false), "-_8");
    }

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

    #[test]
    fn json_escapes() {
        let mut s = String::new();
        json_string(&mut s, "a\"b\\c\n\u{1}/é");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001/é\"");
    }
}
