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

/// [`document`] appended to a buffer: serialised as it is, then made safe
/// in one pass over what was added, with the bytes [`document`] writes. A
/// serialiser writes whole characters, [`crate::render::text::json_safe`]
/// maps each on its own, and a raw line break is only ever the layout's
/// (one in a string is written `\n`), written in a piece of its own: the
/// text is made safe a line at a time, its line breaks kept.
pub fn document_into<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> io::Result<()> {
    appended_safe(out, |o| serde_json::to_writer_pretty(o, &Utc(v)))
}

/// [`line()`] appended to a buffer, as [`document_into`] does.
pub fn line_into<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> io::Result<()> {
    appended_safe(out, |o| serde_json::to_writer(o, &Utc(v)))
}

/// [`document_into`] of a value the document holds `depth` levels in:
/// its lines after the first indented as they are there (2 spaces a
/// level), as if cut out of the enclosing document.
pub fn nested_into<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    v: &T,
    depth: usize,
) -> io::Result<()> {
    appended_safe(out, |o| {
        let mut ser = serde_json::Serializer::with_formatter(
            o,
            Pretty {
                level: depth,
                has_value: false,
            },
        );
        Utc(v).serialize(&mut ser)
    })
}

/// serde_json's pretty layout (2 spaces a level) from a given level on.
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn line<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        const SPACES: &[u8] = &[b' '; 64];
        w.write_all(b"\n")?;
        let mut n = self.level * 2;
        while n > 0 {
            let k = n.min(SPACES.len());
            w.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level = self.level.saturating_sub(1);
        if self.has_value {
            self.line(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.line(w)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// What `write` serialises, and a newline, appended to `out` and made safe.
fn appended_safe(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> io::Result<()> {
    let start = out.len();
    write(out).map_err(io::Error::from)?;
    out.push(b'\n');
    made_safe_from(out, start);
    Ok(())
}

/// The JSON text of `out` from `start` on passed through
/// [`crate::render::text::json_safe`].
fn made_safe_from(out: &mut Vec<u8>, start: usize) {
    let Some(tail) = out.get(start..) else {
        return;
    };
    if !crate::render::text::may_hold_unsafe(tail) {
        return;
    }
    let Ok(text) = std::str::from_utf8(tail) else {
        return;
    };
    let mut safe = String::with_capacity(text.len() + 16);
    for (i, l) in text.split('\n').enumerate() {
        if i > 0 {
            safe.push('\n');
        }
        safe.push_str(&crate::render::text::json_safe(l));
    }
    out.truncate(start);
    out.extend_from_slice(safe.as_bytes());
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

    #[test]
    fn into_a_buffer_the_bytes_are_the_writers() {
        #[derive(Serialize)]
        struct Names {
            names: Vec<&'static str>,
            #[serde(serialize_with = "crate::model::time::millis")]
            at: i64,
        }
        let d = Names {
            // DEL, C1, an Arabic letter mark, a bidi override, a BOM, plain
            // non-ASCII text and a line break
            names: vec![
                "a\u{7f}b",
                "\u{85}",
                "\u{61c}x",
                "\u{202e}evil",
                "\u{feff}",
                "héllo €",
                "two\nlines",
            ],
            at: 1_700_000_000_000,
        };
        for pretty in [true, false] {
            let (mut want, mut got) = (Vec::new(), b"before".to_vec());
            if pretty {
                document(&mut want, &d).unwrap_or_default();
                document_into(&mut got, &d).unwrap_or_default();
            } else {
                line(&mut want, &d).unwrap_or_default();
                line_into(&mut got, &d).unwrap_or_default();
            }
            assert_eq!(&got[..6], b"before");
            assert_eq!(
                String::from_utf8_lossy(&got[6..]),
                String::from_utf8_lossy(&want)
            );
            assert!(String::from_utf8_lossy(&want).contains("\\u202e"));
        }
    }

    #[test]
    fn a_nested_value_is_laid_out_as_the_enclosing_document_has_it() {
        #[derive(Serialize)]
        struct Inner {
            empty: Vec<u8>,
            none: std::collections::BTreeMap<u8, u8>,
            list: Vec<Vec<i32>>,
            #[serde(serialize_with = "crate::model::time::millis")]
            at: i64,
            text: &'static str,
        }
        #[derive(Serialize)]
        struct Outer<'a> {
            partitions: [&'a Inner; 1],
        }
        let inner = Inner {
            empty: Vec::new(),
            none: Default::default(),
            list: vec![vec![], vec![1, -2]],
            at: 1_700_000_000_000,
            text: "\u{202e}x",
        };
        for depth in [0, 1, 2, 5] {
            // the document holding it `depth` levels in, its own lines cut
            // out of it
            let mut whole = Vec::new();
            document(&mut whole, &inner).unwrap_or_default();
            let pad = " ".repeat(2 * depth);
            let text = String::from_utf8_lossy(&whole).replace('\n', &format!("\n{pad}"));
            let want = format!("{}\n", text.trim_end());
            let mut got = b"x".to_vec();
            nested_into(&mut got, &inner, depth).unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&got[1..]), want, "depth {depth}");
        }
        // as `json_element` of diff uses it: the element of the document
        let mut whole = Vec::new();
        document(
            &mut whole,
            &Outer {
                partitions: [&inner],
            },
        )
        .unwrap_or_default();
        let mut el = Vec::new();
        nested_into(&mut el, &inner, 2).unwrap_or_default();
        el.pop();
        let text = String::from_utf8_lossy(&whole);
        assert_eq!(
            text,
            format!(
                "{{\n  \"partitions\": [\n    {}\n  ]\n}}\n",
                String::from_utf8_lossy(&el)
            )
        );
    }
}
