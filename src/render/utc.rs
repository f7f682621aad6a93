//! A serializer adapter that writes a `NAME_utc` field beside every time
//! field NAME as the value is serialized: a field declared a time
//! ([`crate::model::time::millis`]) is serialized as a newtype struct named
//! [`MILLIS`], and the adapter writes its twin on seeing that type, never
//! by the field's name. Nothing is turned into a `serde_json::Value`
//! first: a document of any size streams to its writer in the memory of
//! its largest scalar, and a field whose `Serialize` reads its items as it
//! goes (records read back from a segment) is never held.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde::ser::{
    self, Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant,
    SerializeTuple, SerializeTupleStruct, SerializeTupleVariant, Serializer,
};

use crate::format::text::iso_time;
use crate::model::time::MILLIS;

/// Whether a key of a dump's JSON line (built as a `serde_json::Value`,
/// which carries no types) holds a point in time as epoch milliseconds:
/// `timestamp`, `time`, a name ending in `_timestamp`, and
/// `delete_horizon_ms`.
pub fn is_time_field(key: &str) -> bool {
    matches!(key, "timestamp" | "time" | "delete_horizon_ms") || key.ends_with("_timestamp")
}

/// `T` serialized with a `NAME_utc` field beside every time field of every
/// struct and map in it, at any depth, as it is written.
pub struct Utc<T>(pub T);

impl<T: Serialize> Serialize for Utc<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(UtcSer(s, None))
    }
}

/// Where a field's value, serialized, leaves its `_utc` twin when it is a
/// time: `Some(None)` for a time field whose value is not a time.
type Twin = Cell<Option<Option<String>>>;

/// A reference passed on wrapped (with the field's twin slot, when it is
/// a field's value).
struct W<'a, T: ?Sized>(&'a T, Option<&'a Twin>);

impl<T: Serialize + ?Sized> Serialize for W<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(UtcSer(s, self.1))
    }
}

/// The `NAME_utc` name of a struct's time field, as the `'static` name a
/// struct field needs: a struct's field names are the program's own, so
/// the set made is small and fixed.
fn utc_name(key: &'static str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let names = NAMES.get_or_init(|| Mutex::new(HashMap::new()));
    let Ok(mut names) = names.lock() else {
        return "time_utc";
    };
    names
        .entry(key)
        .or_insert_with(|| Box::leak(format!("{key}_utc").into_boxed_str()))
}

/// The ISO-8601 UTC time of a value serialized as an integer (or an
/// optional one), else `None`.
fn time_of<T: Serialize + ?Sized>(v: &T) -> Option<String> {
    v.serialize(Probe).ok().flatten().and_then(iso_time)
}

struct UtcSer<'a, S>(S, Option<&'a Twin>);

/// A compound being written, its elements wrapped.
pub struct Compound<C>(C);

impl<S: Serializer> Serializer for UtcSer<'_, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Compound<S::SerializeSeq>;
    type SerializeTuple = Compound<S::SerializeTuple>;
    type SerializeTupleStruct = Compound<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Compound<S::SerializeTupleVariant>;
    type SerializeMap = MapCompound<S::SerializeMap>;
    type SerializeStruct = Compound<S::SerializeStruct>;
    type SerializeStructVariant = Compound<S::SerializeStructVariant>;

    fn serialize_bool(self, v: bool) -> Result<S::Ok, S::Error> {
        self.0.serialize_bool(v)
    }
    fn serialize_i8(self, v: i8) -> Result<S::Ok, S::Error> {
        self.0.serialize_i8(v)
    }
    fn serialize_i16(self, v: i16) -> Result<S::Ok, S::Error> {
        self.0.serialize_i16(v)
    }
    fn serialize_i32(self, v: i32) -> Result<S::Ok, S::Error> {
        self.0.serialize_i32(v)
    }
    fn serialize_i64(self, v: i64) -> Result<S::Ok, S::Error> {
        self.0.serialize_i64(v)
    }
    fn serialize_i128(self, v: i128) -> Result<S::Ok, S::Error> {
        self.0.serialize_i128(v)
    }
    fn serialize_u8(self, v: u8) -> Result<S::Ok, S::Error> {
        self.0.serialize_u8(v)
    }
    fn serialize_u16(self, v: u16) -> Result<S::Ok, S::Error> {
        self.0.serialize_u16(v)
    }
    fn serialize_u32(self, v: u32) -> Result<S::Ok, S::Error> {
        self.0.serialize_u32(v)
    }
    fn serialize_u64(self, v: u64) -> Result<S::Ok, S::Error> {
        self.0.serialize_u64(v)
    }
    fn serialize_u128(self, v: u128) -> Result<S::Ok, S::Error> {
        self.0.serialize_u128(v)
    }
    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        self.0.serialize_f32(v)
    }
    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        self.0.serialize_f64(v)
    }
    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        self.0.serialize_char(v)
    }
    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        self.0.serialize_str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<S::Ok, S::Error> {
        self.0.serialize_bytes(v)
    }
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_none()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&W(v, self.1))
    }
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit()
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_struct(name)
    }
    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_variant(name, index, variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        if name == MILLIS {
            if let Some(twin) = self.1 {
                twin.set(Some(time_of(v)));
            }
            return self.0.serialize_newtype_struct(name, &W(v, None));
        }
        self.0.serialize_newtype_struct(name, &W(v, self.1))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &W(v, None))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Compound)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Compound)
    }
    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Compound)
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(Compound)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        // entries may be added: the length is not known
        self.0.serialize_map(None).map(|m| MapCompound {
            inner: m,
            key: None,
        })
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        // a struct with a time field has more fields than it says
        self.0.serialize_struct(name, len.max(1)).map(Compound)
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len.max(1))
            .map(Compound)
    }
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

impl<C: SerializeSeq> SerializeSeq for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
        self.0.serialize_element(&W(v, None))
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

impl<C: SerializeTuple> SerializeTuple for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
        self.0.serialize_element(&W(v, None))
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

impl<C: SerializeTupleStruct> SerializeTupleStruct for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
        self.0.serialize_field(&W(v, None))
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

impl<C: SerializeTupleVariant> SerializeTupleVariant for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
        self.0.serialize_field(&W(v, None))
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

impl<C: SerializeStruct> SerializeStruct for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), C::Error> {
        let twin = Twin::new(None);
        self.0.serialize_field(key, &W(v, Some(&twin)))?;
        if let Some(t) = twin.take() {
            self.0.serialize_field(utc_name(key), &t)?;
        }
        Ok(())
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
        self.0.skip_field(key)
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

impl<C: SerializeStructVariant> SerializeStructVariant for Compound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), C::Error> {
        let twin = Twin::new(None);
        self.0.serialize_field(key, &W(v, Some(&twin)))?;
        if let Some(t) = twin.take() {
            self.0.serialize_field(utc_name(key), &t)?;
        }
        Ok(())
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
        self.0.skip_field(key)
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

/// A map being written: its last key, to add the `_utc` entry after a
/// value that is a time.
pub struct MapCompound<C> {
    inner: C,
    key: Option<String>,
}

impl<C: SerializeMap> SerializeMap for MapCompound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), C::Error> {
        self.key = k.serialize(KeyProbe).ok().flatten();
        self.inner.serialize_key(&W(k, None))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), C::Error> {
        let twin = Twin::new(None);
        self.inner.serialize_value(&W(v, Some(&twin)))?;
        if let (Some(k), Some(t)) = (self.key.take(), twin.take()) {
            self.inner.serialize_entry(&format!("{k}_utc"), &t)?;
        }
        Ok(())
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

/// Why a probe gave up: the value is not what it looks for.
#[derive(Debug)]
struct NotIt;

impl std::fmt::Display for NotIt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a scalar")
    }
}

impl std::error::Error for NotIt {}

impl ser::Error for NotIt {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        NotIt
    }
}

/// Generates a probe serializer: the scalars it answers with their value,
/// everything else "none" (`Ok(None)`) or `NotIt` for compounds.
macro_rules! probe {
    ($name:ident, $out:ty, { $($method:ident($t:ty) => $conv:expr;)* }) => {
        struct $name;
        impl Serializer for $name {
            type Ok = Option<$out>;
            type Error = NotIt;
            type SerializeSeq = ser::Impossible<Option<$out>, NotIt>;
            type SerializeTuple = ser::Impossible<Option<$out>, NotIt>;
            type SerializeTupleStruct = ser::Impossible<Option<$out>, NotIt>;
            type SerializeTupleVariant = ser::Impossible<Option<$out>, NotIt>;
            type SerializeMap = ser::Impossible<Option<$out>, NotIt>;
            type SerializeStruct = ser::Impossible<Option<$out>, NotIt>;
            type SerializeStructVariant = ser::Impossible<Option<$out>, NotIt>;
            $(
                fn $method(self, v: $t) -> Result<Option<$out>, NotIt> {
                    #[allow(clippy::redundant_closure_call)]
                    Ok(($conv)(v))
                }
            )*
            fn serialize_none(self) -> Result<Option<$out>, NotIt> {
                Ok(None)
            }
            fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Option<$out>, NotIt> {
                v.serialize(self)
            }
            fn serialize_unit(self) -> Result<Option<$out>, NotIt> {
                Ok(None)
            }
            fn serialize_unit_struct(self, _: &'static str) -> Result<Option<$out>, NotIt> {
                Ok(None)
            }
            fn serialize_unit_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
            ) -> Result<Option<$out>, NotIt> {
                Ok(None)
            }
            fn serialize_newtype_struct<T: Serialize + ?Sized>(
                self,
                _: &'static str,
                v: &T,
            ) -> Result<Option<$out>, NotIt> {
                v.serialize(self)
            }
            fn serialize_newtype_variant<T: Serialize + ?Sized>(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: &T,
            ) -> Result<Option<$out>, NotIt> {
                Ok(None)
            }
            fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotIt> {
                Err(NotIt)
            }
            fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotIt> {
                Err(NotIt)
            }
            fn serialize_tuple_struct(
                self,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeTupleStruct, NotIt> {
                Err(NotIt)
            }
            fn serialize_tuple_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeTupleVariant, NotIt> {
                Err(NotIt)
            }
            fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotIt> {
                Err(NotIt)
            }
            fn serialize_struct(
                self,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeStruct, NotIt> {
                Err(NotIt)
            }
            fn serialize_struct_variant(
                self,
                _: &'static str,
                _: u32,
                _: &'static str,
                _: usize,
            ) -> Result<Self::SerializeStructVariant, NotIt> {
                Err(NotIt)
            }
        }
    };
}

probe!(Probe, i64, {
    serialize_bool(bool) => |_| None;
    serialize_i8(i8) => |v| Some(i64::from(v));
    serialize_i16(i16) => |v| Some(i64::from(v));
    serialize_i32(i32) => |v| Some(i64::from(v));
    serialize_i64(i64) => Some;
    serialize_i128(i128) => |v| i64::try_from(v).ok();
    serialize_u8(u8) => |v| Some(i64::from(v));
    serialize_u16(u16) => |v| Some(i64::from(v));
    serialize_u32(u32) => |v| Some(i64::from(v));
    serialize_u64(u64) => |v| i64::try_from(v).ok();
    serialize_u128(u128) => |v| i64::try_from(v).ok();
    serialize_f32(f32) => |_| None;
    serialize_f64(f64) => |_| None;
    serialize_char(char) => |_| None;
    serialize_str(&str) => |_| None;
    serialize_bytes(&[u8]) => |_| None;
});

probe!(KeyProbe, String, {
    serialize_bool(bool) => |_| None;
    serialize_i8(i8) => |_| None;
    serialize_i16(i16) => |_| None;
    serialize_i32(i32) => |_| None;
    serialize_i64(i64) => |_| None;
    serialize_i128(i128) => |_| None;
    serialize_u8(u8) => |_| None;
    serialize_u16(u16) => |_| None;
    serialize_u32(u32) => |_| None;
    serialize_u64(u64) => |_| None;
    serialize_u128(u128) => |_| None;
    serialize_f32(f32) => |_| None;
    serialize_f64(f64) => |_| None;
    serialize_char(char) => |_| None;
    serialize_str(&str) => |v: &str| Some(v.to_string());
    serialize_bytes(&[u8]) => |_| None;
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::millis;

    #[derive(serde::Serialize)]
    struct Inner {
        #[serde(serialize_with = "millis")]
        time: i64,
        offset: i64,
    }

    /// A time held as a value of its own (in a map, or an item of a list).
    #[derive(serde::Serialize)]
    struct At(#[serde(serialize_with = "millis")] i64);

    #[derive(serde::Serialize)]
    struct Outer {
        #[serde(serialize_with = "millis")]
        max_timestamp: Option<i64>,
        #[serde(serialize_with = "millis")]
        first_timestamp: Option<i64>,
        name: &'static str,
        inner: Vec<Inner>,
        map: std::collections::BTreeMap<String, At>,
        plain: std::collections::BTreeMap<String, i64>,
        times: Vec<At>,
        empty: std::collections::BTreeMap<String, i64>,
    }

    #[test]
    fn time_fields_get_their_utc_time_beside_them_as_they_stream() {
        let mut map = std::collections::BTreeMap::new();
        map.insert("a".to_string(), At(0));
        let mut plain = std::collections::BTreeMap::new();
        plain.insert("b_timestamp".to_string(), 1);
        let v = Outer {
            max_timestamp: Some(1_795_992_960_660),
            first_timestamp: None,
            name: "x",
            inner: vec![Inner {
                time: -1,
                offset: 5,
            }],
            map,
            plain,
            times: vec![At(0)],
            empty: std::collections::BTreeMap::new(),
        };
        let s = serde_json::to_string(&Utc(&v)).unwrap_or_default();
        assert_eq!(
            s,
            r#"{"max_timestamp":1795992960660,"max_timestamp_utc":"2026-11-29T22:56:00.660Z","first_timestamp":null,"first_timestamp_utc":null,"name":"x","inner":[{"time":-1,"time_utc":null,"offset":5}],"map":{"a":0,"a_utc":"1970-01-01T00:00:00.000Z"},"plain":{"b_timestamp":1},"times":[0],"empty":{}}"#
        );
        let pretty = serde_json::to_string_pretty(&Utc(&v)).unwrap_or_default();
        let back: serde_json::Value = serde_json::from_str(&pretty).unwrap_or_default();
        assert_eq!(back["inner"][0]["time_utc"], serde_json::Value::Null);
        assert_eq!(back["map"]["a_utc"], "1970-01-01T00:00:00.000Z");
        // a plain writer sees the numbers only
        let bare = serde_json::to_string(&v).unwrap_or_default();
        assert!(!bare.contains("_utc"), "{bare}");
    }
}
