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

pub use crate::format::text::{human_time, iso_time};

pub use super::utc::{is_time_field, Utc};

/// Writes `v` as JSON (pretty or compact) with a `NAME_utc` field beside
/// every time field ([`is_time_field`]), fields in the order they are
/// declared, as it is serialized (never held as a whole).
pub fn write_value<T: serde::Serialize + ?Sized>(
    w: &mut impl std::io::Write,
    pretty: bool,
    v: &T,
) -> serde_json::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(w, &Utc(v))
    } else {
        serde_json::to_writer(w, &Utc(v))
    }
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn time_fields_get_their_utc_time_beside_them_at_any_depth() {
        let mut out = Vec::new();
        let doc = serde_json::json!({
            "max_timestamp": 1_795_992_960_660i64,
            "timestamp_type": "CreateTime",
            "loss": {"time": -1, "first_timestamp": null, "offset": 5},
            "records": [{"timestamp": 0}],
        });
        write_value(&mut out, false, &doc).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
        assert_eq!(v["max_timestamp_utc"], "2026-11-29T22:56:00.660Z");
        assert!(v.get("timestamp_type_utc").is_none());
        assert!(v["loss"]["time_utc"].is_null());
        assert!(v["loss"]["first_timestamp_utc"].is_null());
        assert!(v["loss"].get("offset_utc").is_none());
        assert_eq!(v["records"][0]["timestamp_utc"], "1970-01-01T00:00:00.000Z");
        // beside its field, in the order the fields came
        let keys: Vec<&String> = v
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "max_timestamp",
                "max_timestamp_utc",
                "timestamp_type",
                "loss",
                "records"
            ]
        );
    }

    #[test]
    fn epoch_milliseconds_read_as_utc_dates() {
        assert_eq!(iso_time(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            iso_time(951_782_400_001).as_deref(),
            Some("2000-02-29T00:00:00.001Z")
        );
        assert_eq!(
            iso_time(1_795_992_960_660).as_deref(),
            Some("2026-11-29T22:56:00.660Z")
        );
        assert_eq!(
            iso_time(253_402_300_799_999).as_deref(),
            Some("9999-12-31T23:59:59.999Z")
        );
        assert_eq!(iso_time(-1), None);
        assert_eq!(iso_time(i64::MAX), None);
        assert_eq!(human_time(-1), "-1");
        assert_eq!(human_time(1000), "1970-01-01T00:00:01.000Z (1000)");
    }
}

/// `n` and `noun`, plural unless `n` is 1: `1 partition`, `2 batches`.
pub fn counted(n: impl Into<u128>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else if noun.ends_with("ch") || noun.ends_with('s') || noun.ends_with('x') {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod counted_tests {
    #[test]
    fn one_is_singular() {
        assert_eq!(super::counted(1u64, "partition"), "1 partition");
        assert_eq!(super::counted(0u64, "batch"), "0 batches");
        assert_eq!(super::counted(3u32, "info"), "3 infos");
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A time a person gives: epoch milliseconds, or ISO-8601 UTC
/// (`2026-11-29T22:56:05.313Z`, `2026-11-29T22:56:05Z`, a space for the
/// `T`, `+00:00` for the `Z`, or a date alone, its midnight). None when it
/// is neither.
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return Some(ms);
    }
    let num = |t: &str| -> Option<i64> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut d = date.splitn(3, '-');
    let (y, m, dd) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    if date.len() != 10 || !(1..=12).contains(&m) || !(1..=31).contains(&dd) {
        return None;
    }
    let mut ms = 0;
    if let Some(t) = time {
        let t = t.strip_suffix('Z').or_else(|| t.strip_suffix("+00:00"))?;
        let (hms, frac) = match t.split_once('.') {
            Some((a, f)) => (a, Some(f)),
            None => (t, None),
        };
        let mut p = hms.split(':');
        let (h, mi) = (num(p.next()?)?, num(p.next()?)?);
        let sec = match p.next() {
            Some(x) => num(x)?,
            None => 0,
        };
        if p.next().is_some() || h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        let frac_ms = match frac {
            None => 0,
            Some(f) if (1..=9).contains(&f.len()) => {
                let digits = num(f)?;
                let scale = 10i64.pow(f.len() as u32);
                digits * 1000 / scale
            }
            Some(_) => return None,
        };
        ms = ((h * 60 + mi) * 60 + sec) * 1000 + frac_ms;
    }
    Some(days_from_civil(y, m, dd) * 86_400_000 + ms)
}

#[cfg(test)]
mod parse_time_tests {
    use super::*;

    #[test]
    fn iso_times_and_milliseconds_are_read_back() {
        for ms in [
            0i64,
            951_782_400_001,
            1_795_992_960_660,
            253_402_300_799_999,
        ] {
            assert_eq!(parse_time(&iso_time(ms).unwrap()), Some(ms));
        }
        assert_eq!(parse_time("1795992960660"), Some(1_795_992_960_660));
        assert_eq!(parse_time("2026-11-29T22:56:00Z"), Some(1_795_992_960_000));
        assert_eq!(
            parse_time("2026-11-29 22:56:00.66+00:00"),
            Some(1_795_992_960_660)
        );
        assert_eq!(parse_time("2026-11-29"), Some(1_795_910_400_000));
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-11-29T22:56",
            "2026-11-29T22:56:00+01:00",
            "",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }
}

/// `s` as one shell word: as it is when it needs no quoting, else in
/// single quotes (a `'` inside written `'\''`).
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
