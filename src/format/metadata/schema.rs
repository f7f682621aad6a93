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
    /// The highest version the reading code's nested structures accept:
    /// Kafka's generated structure classes refuse a newer one ("Can't read
    /// version"), where the top-level message reads on.
    struct_max: i16,
    /// The tagged fields the reading code lacks though their versions say
    /// it has them (added to a version it already read).
    lacks: Option<TaggedSince>,
}

/// The tagged fields release line `line`'s code lacks in message `schema`,
/// by `since`: (message, field, first line that has it), nested fields
/// listed under their top-level message (see [`hide_tagged_since`]). That
/// code reads such a tag as an unknown one: it skips the size the tag
/// gives, where the field's own reader reads the field whatever the size
/// says.
#[derive(Clone, Copy)]
pub struct TaggedSince {
    pub schema: &'static str,
    pub line: (u8, u8),
    pub since: &'static [(&'static str, &'static str, (u8, u8))],
}

impl TaggedSince {
    fn lacks(&self, field: &str) -> bool {
        self.since
            .iter()
            .any(|(s, name, from)| *s == self.schema && *name == field && *from > self.line)
    }
}

fn nested(r: &Reader, cx: &Ctx) -> Result<(), ParseError> {
    if cx.version > cx.struct_max {
        return Err(r.err(format!("Can't read version {} of a structure", cx.version)));
    }
    Ok(())
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
            let known = fields.iter().position(|f| {
                // a tag the reading code has (its versions meet the
                // structure's): an older release's code lacks later tags,
                // and those added to versions it already had
                f.tag == tag
                    && !f.ver.intersect(f.tagged).intersect(possible).is_empty()
                    && !cx.lacks.is_some_and(|l| l.lacks(f.name))
            });
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
        nested(r, cx)?;
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
    let null_err = |r: &Reader| r.err(format!("non-nullable field {name} was serialized as null"));
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
                    Ty::Struct(fields) => {
                        nested(r, cx)?;
                        Val::Struct(read_struct(r, fields, cx, present)?)
                    }
                    _ => read_value(r, elem, name, false, flexible, cx, present)?,
                });
            }
            Val::Arr(out)
        }
        Ty::Struct(fields) => {
            nested(r, cx)?;
            Val::Struct(read_struct(r, fields, cx, present)?)
        }
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
    read_message_in(r, schema, version, schema.valid)
}

/// [`read_message`] as the generated code of a release whose valid
/// versions are `valid` reads it: fields that first appear above that
/// range do not exist there (an older release reading a newer version).
pub fn read_message_in(
    r: &mut Reader,
    schema: &'static Schema,
    version: i16,
    valid: Vr,
) -> Result<Msg, ParseError> {
    read_message_lacking(r, schema, version, valid, None)
}

/// [`read_message_in`], the reading code also lacking the tagged fields
/// `lacks` names (an older release's code, see [`TaggedSince`]).
pub fn read_message_lacking(
    r: &mut Reader,
    schema: &'static Schema,
    version: i16,
    valid: Vr,
    lacks: Option<TaggedSince>,
) -> Result<Msg, ParseError> {
    let cx = Ctx {
        version,
        flex: schema.flex,
        struct_max: valid.1,
        lacks,
    };
    read_struct(r, schema.fields, &cx, valid)
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
    write_json_named(out, msg, &|name| name);
}

/// [`write_json`] with each field's key as `name` gives it (an older
/// release's name for a field the newest schema renamed).
pub fn write_json_named(out: &mut String, msg: &Msg, name: &dyn Fn(&'static str) -> &'static str) {
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
        json_string(out, name(f.name));
        out.push(':');
        write_val_named(out, val, name);
    }
    out.push('}');
}

/// Writes one value as compact JSON.
pub fn write_val(out: &mut String, val: &Val) {
    write_val_named(out, val, &|name| name);
}

fn write_val_named(out: &mut String, val: &Val, name: &dyn Fn(&'static str) -> &'static str) {
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
                write_val_named(out, v, name);
            }
            out.push(']');
        }
        Val::Struct(m) => write_json_named(out, m, name),
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

/// Empties the slots of the tagged fields that release line `line` does
/// not know, by `since`: (message, field, first line that has it), nested
/// fields listed under their top-level message `schema`. Its kafka-dump-log
/// reads such a field as an unknown tag and does not print it.
pub fn hide_tagged_since(
    msg: &mut Msg,
    schema: &str,
    line: (u8, u8),
    since: &[(&str, &str, (u8, u8))],
) {
    for (i, f) in msg.fields.iter().enumerate() {
        let unknown = since
            .iter()
            .any(|(s, name, from)| *s == schema && *name == f.name && *from > line);
        match msg.values.get_mut(i) {
            Some(slot) if unknown => *slot = None,
            Some(Some(Val::Struct(inner))) => hide_tagged_since(inner, schema, line, since),
            Some(Some(Val::Arr(items))) => {
                for item in items {
                    if let Val::Struct(inner) = item {
                        hide_tagged_since(inner, schema, line, since);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The JSON key release line `line` gives field `field` of message
/// `schema`, by `renamed`: (message, newest name, line, that line's name).
pub fn name_in_line(
    renamed: &'static [(&'static str, &'static str, (u8, u8), &'static str)],
    schema: &str,
    line: (u8, u8),
    field: &'static str,
) -> &'static str {
    renamed
        .iter()
        .find(|(m, n, l, _)| *m == schema && *n == field && *l == line)
        .map_or(field, |(_, _, _, old)| old)
}

#[cfg(test)]
mod tests {
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
    fn json_escapes() {
        let mut s = String::new();
        json_string(&mut s, "a\"b\\c\n\u{1}/é");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001/é\"");
    }
}
