//! The one JSON writer of every command's `--format json` and `jsonl`
//! (dump's lines apart, which keep Kafka's field order as they are read):
//! a value written as one pretty document or as one compact line, with
//! the `NAME_utc` twin of every time field (a field declared with
//! [`crate::model::time::millis`]) and every character that could drive a
//! terminal escaped ([`crate::render::text::JsonSafe`]). Values stream to
//! the writer as they are serialised; none is held whole.

use std::io::{self, Write};

use serde::Serialize;

use crate::render::text::JsonSafe;
use crate::render::utc::Utc;

/// Writes `v` as one pretty JSON document and a newline.
pub fn document<T: Serialize + ?Sized>(w: &mut impl Write, v: &T) -> io::Result<()> {
    let mut w = JsonSafe(w);
    serde_json::to_writer_pretty(&mut w, &Utc(v)).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

/// Writes `v` as one JSON line (compact, then a newline).
pub fn line<T: Serialize + ?Sized>(w: &mut impl Write, v: &T) -> io::Result<()> {
    let mut w = JsonSafe(w);
    serde_json::to_writer(&mut w, &Utc(v)).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Doc {
        name: &'static str,
        #[serde(serialize_with = "crate::model::time::millis")]
        timestamp: i64,
    }

    #[test]
    fn a_document_and_a_line_carry_twins_and_no_raw_escape() {
        let d = Doc {
            name: "a\u{1b}[31m",
            timestamp: 0,
        };
        let mut out = Vec::new();
        line(&mut out, &d).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out),
            "{\"name\":\"a\\u001b[31m\",\"timestamp\":0,\"timestamp_utc\":\"1970-01-01T00:00:00.000Z\"}\n"
        );
        let mut out = Vec::new();
        document(&mut out, &d).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("{\n  \"name\""), "{text}");
        assert!(text.ends_with("}\n"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
    }
}
