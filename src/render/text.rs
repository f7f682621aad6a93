//! Untrusted text on its way to a person: topic names, record keys, header
//! keys, file names and every message that quotes them come from the
//! capture, and a name can hold a terminal escape (ESC, BEL), a line break
//! that forges a second line, or a bidirectional control that makes the
//! text read backwards. One sanitiser for terminals and logs, one escaper
//! for XML and HTML, used by every renderer (fd's `sanitize.rs` is the
//! model).

use std::borrow::Cow;

/// Whether `c` must not reach a terminal or a log as it is: C0 and C1
/// controls and DEL, bidirectional controls (U+061C, U+200E, U+200F,
/// U+202A-U+202E, U+2066-U+2069), zero-width characters (U+200B-U+200D,
/// U+2060, U+FEFF) and the line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `s` with every unsafe character (see [`is_unsafe`]) written as a visible
/// escape, `\u{1b}`; unchanged (and not copied) when it has none.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe(c) {
            o.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            o.push(c);
        }
    }
    Cow::Owned(o)
}

/// `s` for XML or HTML text and attribute values: sanitised (see
/// [`sanitize`]; XML 1.0 cannot hold most controls anyway), then `&`, `<`,
/// `>`, `"` and `'` as entities.
pub fn markup(s: &str) -> String {
    let s = sanitize(s);
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\u{FFFE}' | '\u{FFFF}' => o.push_str("\\u{fffe}"),
            c => o.push(c),
        }
    }
    o
}

/// Serialised JSON with every unsafe character (see [`is_unsafe`]) that
/// the serialiser left raw (DEL, C1 controls, bidirectional and zero-width
/// characters: JSON allows them in strings) written as a `\uXXXX` escape;
/// the value it denotes is unchanged. C0 controls are already escaped.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    if !may_hold_unsafe(json.as_bytes()) || !json.chars().any(is_unsafe) {
        return Cow::Borrowed(json);
    }
    let mut o = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if is_unsafe(c) {
            // Every unsafe character is in the Basic Multilingual Plane.
            o.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            o.push(c);
        }
    }
    Cow::Owned(o)
}

/// Whether UTF-8 `b` may hold a character a JSON serialiser leaves raw but
/// [`is_unsafe`] refuses: DEL, or the lead byte of U+0080-U+009F (C2),
/// U+061C (D8), U+200B-U+2069 (E2) or U+FEFF (EF).
fn may_hold_unsafe(b: &[u8]) -> bool {
    b.iter()
        .any(|&x| matches!(x, 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
}

/// A writer that passes serialised JSON through [`json_safe`]. Each write
/// of a JSON serialiser holds whole characters.
pub struct JsonSafe<W>(pub W);

impl<W: std::io::Write> std::io::Write for JsonSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !may_hold_unsafe(buf) {
            self.0.write_all(buf)?;
            return Ok(buf.len());
        }
        match std::str::from_utf8(buf) {
            Ok(s) => self.0.write_all(json_safe(s).as_bytes())?,
            Err(_) => self.0.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_become_visible() {
        assert!(matches!(sanitize("orders-0"), Cow::Borrowed(_)));
        assert_eq!(sanitize("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(sanitize("bel\u{7}nl\nx"), "bel\\u{7}nl\\u{a}x");
        assert_eq!(sanitize("rlo\u{202e}txt.gol"), "rlo\\u{202e}txt.gol");
        assert_eq!(sanitize("zw\u{200b}j"), "zw\\u{200b}j");
        assert_eq!(sanitize("c1\u{9b}"), "c1\\u{9b}");
        assert_eq!(sanitize("ünïcödé"), "ünïcödé");
    }

    #[test]
    fn markup_escapes_entities_after_sanitising() {
        assert_eq!(
            markup("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(markup("t\u{1b}"), "t\\u{1b}");
    }

    #[test]
    fn json_keeps_its_value_and_loses_raw_bidi() {
        let raw = serde_json::to_string("a\u{202e}b\u{7f}c\u{1b}").unwrap();
        let safe = json_safe(&raw);
        assert_eq!(safe, "\"a\\u202eb\\u007fc\\u001b\"");
        let back: String = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, "a\u{202e}b\u{7f}c\u{1b}");
    }
}
