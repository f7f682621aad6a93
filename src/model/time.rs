//! Points in time as Kafka writes them: milliseconds since the epoch.
//!
//! A field holding one is declared a time where it is declared:
//! `#[serde(serialize_with = "crate::model::time::millis")]` on an `i64`
//! (or an `Option<i64>`, absent written as null). It is serialised as a
//! newtype struct named [`MILLIS`]: a plain JSON writer sees the number;
//! render's JSON writer also writes the field's `NAME_utc` twin beside it
//! (its ISO-8601 UTC time, or null when the value is not a time: null,
//! Kafka's `-1`, out of range). No writer guesses a time from a field's
//! name.

use serde::{Serialize, Serializer};

/// The newtype-struct name a time field is serialised under.
pub const MILLIS: &str = "klf::millis";

/// Serialises a time field (epoch milliseconds, or an optional one) as a
/// [`MILLIS`] newtype struct.
pub fn millis<T: Serialize + ?Sized, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_newtype_struct(MILLIS, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_writer_sees_the_number() {
        #[derive(Serialize)]
        struct T {
            #[serde(serialize_with = "millis")]
            at: i64,
            #[serde(serialize_with = "millis")]
            none: Option<i64>,
        }
        let s = serde_json::to_string(&T { at: 5, none: None }).unwrap_or_default();
        assert_eq!(s, r#"{"at":5,"none":null}"#);
    }
}
