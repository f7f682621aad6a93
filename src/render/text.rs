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
pub(crate) fn may_hold_unsafe(b: &[u8]) -> bool {
    !below_del(b)
        && b.iter()
            .any(|&x| matches!(x, 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
}

/// Whether every byte is below DEL (ASCII, DEL apart): 64 bytes at a time,
/// without a branch in each (what most of klf's output is, at once).
fn below_del(b: &[u8]) -> bool {
    b.chunks(64)
        .all(|c| !c.iter().fold(false, |any, &x| any | (x >= 0x7f)))
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

/// Text on its way to a terminal with its lines kept (kafka-dump-log's
/// text, whose keys and payloads are the records' bytes): every unsafe
/// character but the line break (see [`is_unsafe`]) written as a visible
/// escape, as [`sanitize`] writes it, and bytes that are not UTF-8 as
/// U+FFFD. Text without a byte that can start such a character passes
/// through as it is. A character cut between two writes is held until
/// the next; [`TerminalSafe::finish`] writes what is held.
pub struct TerminalSafe<W: std::io::Write> {
    inner: W,
    /// The start of a character whose other bytes are still to come.
    pending: Vec<u8>,
}

impl<W: std::io::Write> TerminalSafe<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> TerminalSafe<W> {
        TerminalSafe {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes a character left cut at the end (as U+FFFD) and flushes.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.inner.write_all("\u{fffd}".as_bytes())?;
        }
        self.inner.flush()
    }

    fn text(&mut self, s: &str) -> std::io::Result<()> {
        for (i, line) in s.split('\n').enumerate() {
            if i > 0 {
                self.inner.write_all(b"\n")?;
            }
            self.inner.write_all(sanitize(line).as_bytes())?;
        }
        Ok(())
    }
}

/// Whether `b` may hold an unsafe character other than the line break:
/// a C0 control, or a lead byte of one [`may_hold_unsafe`] names.
fn may_hold_unsafe_text(b: &[u8]) -> bool {
    if below_del(b) {
        // only a control character could be
        return b.chunks(64).any(|c| {
            c.iter()
                .fold(false, |any, &x| any | (x < 0x20 && x != b'\n'))
        });
    }
    b.iter()
        .any(|&x| (x < 0x20 && x != b'\n') || matches!(x, 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
        || b.iter().any(|&x| x >= 0x80) && std::str::from_utf8(b).is_err()
}

impl<W: std::io::Write> std::io::Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() && !may_hold_unsafe_text(buf) {
            self.inner.write_all(buf)?;
            return Ok(buf.len());
        }
        let mut data = std::mem::take(&mut self.pending);
        data.extend_from_slice(buf);
        let mut rest = &data[..];
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.text(s)?;
                    break;
                }
                Err(e) => {
                    let (good, after) = rest.split_at(e.valid_up_to());
                    // the prefix was checked as UTF-8 just now
                    self.text(std::str::from_utf8(good).unwrap_or_default())?;
                    match e.error_len() {
                        // a character cut at the end: the rest comes next
                        None => {
                            self.pending = after.to_vec();
                            break;
                        }
                        Some(n) => {
                            self.inner.write_all("\u{fffd}".as_bytes())?;
                            rest = &after[n..];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_scans_agree_with_a_byte_at_a_time_wherever_the_byte_is() {
        let slow = |b: &[u8]| {
            b.iter()
                .any(|&x| matches!(x, 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
        };
        let slow_text = |b: &[u8]| {
            b.iter()
                .any(|&x| (x < 0x20 && x != b'\n') || matches!(x, 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
                || b.iter().any(|&x| x >= 0x80) && std::str::from_utf8(b).is_err()
        };
        for len in [0usize, 1, 63, 64, 65, 130] {
            for at in 0..len.max(1) {
                for byte in [b'a', b'\n', 0x1b, 0x7e, 0x7f, 0x80, 0xc2, 0xe2, 0xff] {
                    let mut b = vec![b'x'; len];
                    if let Some(x) = b.get_mut(at) {
                        *x = byte;
                    }
                    assert_eq!(may_hold_unsafe(&b), slow(&b), "{len} {at} {byte}");
                    assert_eq!(may_hold_unsafe_text(&b), slow_text(&b), "{len} {at} {byte}");
                }
            }
        }
    }

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
    fn terminal_text_keeps_its_lines_and_shows_controls() {
        use std::io::Write;
        let text = "key: k\u{1b}]0;x\u{7} payload: \u{e9}t\u{e9}\u{202e}\nnext line\n";
        // written whole, and cut at every byte (a character across writes)
        for step in [text.len(), 1, 2, 3] {
            let mut out = Vec::new();
            let mut w = TerminalSafe::new(&mut out);
            for chunk in text.as_bytes().chunks(step) {
                w.write_all(chunk).unwrap();
            }
            w.finish().unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "key: k\\u{1b}]0;x\\u{7} payload: \u{e9}t\u{e9}\\u{202e}\nnext line\n",
                "{step}"
            );
        }
        // plain text and malformed bytes
        let mut out = Vec::new();
        let mut w = TerminalSafe::new(&mut out);
        w.write_all(b"a\xff\x9bb\n").unwrap();
        w.write_all(b"plain\n").unwrap();
        w.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a\u{fffd}\u{fffd}b\nplain\n"
        );
    }

    #[test]
    fn durations_in_the_largest_two_units() {
        assert_eq!(human_ms(1_250), "1.2 s");
        assert_eq!(human_ms(59_999), "59.9 s");
        assert_eq!(human_ms(184_000), "3 min 4 s");
        assert_eq!(human_ms(7_500_000), "2 h 5 min");
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

pub use super::utc::is_time_field;

#[cfg(test)]
mod time_tests {
    use crate::format::text::{human_time, iso_time};

    #[test]
    fn time_fields_get_their_utc_time_beside_them_at_any_depth() {
        use crate::model::time::millis;
        #[derive(serde::Serialize)]
        struct Loss {
            #[serde(serialize_with = "millis")]
            time: i64,
            #[serde(serialize_with = "millis")]
            first_timestamp: Option<i64>,
            offset: i64,
        }
        #[derive(serde::Serialize)]
        struct Record {
            #[serde(serialize_with = "millis")]
            timestamp: i64,
            // a time by its name only: not declared one, no twin
            last_timestamp: i64,
        }
        #[derive(serde::Serialize)]
        struct Doc {
            #[serde(serialize_with = "millis")]
            max_timestamp: i64,
            timestamp_type: &'static str,
            loss: Loss,
            records: Vec<Record>,
        }
        let mut out = Vec::new();
        let doc = Doc {
            max_timestamp: 1_795_992_960_660,
            timestamp_type: "CreateTime",
            loss: Loss {
                time: -1,
                first_timestamp: None,
                offset: 5,
            },
            records: vec![Record {
                timestamp: 0,
                last_timestamp: 0,
            }],
        };
        crate::render::json::line(&mut out, &doc).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
        assert_eq!(v["max_timestamp_utc"], "2026-11-29T22:56:00.660Z");
        assert!(v.get("timestamp_type_utc").is_none());
        assert!(v["loss"]["time_utc"].is_null());
        assert!(v["loss"]["first_timestamp_utc"].is_null());
        assert!(v["loss"].get("offset_utc").is_none());
        assert_eq!(v["records"][0]["timestamp_utc"], "1970-01-01T00:00:00.000Z");
        assert!(v["records"][0].get("last_timestamp_utc").is_none());
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

/// A byte count a person gives: digits, or with a `K`, `M`, `G` or `T`
/// suffix (powers of 1024; `KiB`, `MB` and the like read the same). The
/// reading of what [`human_bytes`] writes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    crate::format::text::parse_bytes(s)
}

/// A time for a person: ISO-8601 UTC, else the epoch milliseconds (a
/// time out of the calendar's range).
pub fn time_or_millis(ms: i64) -> String {
    crate::format::text::iso_time(ms).unwrap_or_else(|| ms.to_string())
}

/// A byte count for a person: `512 B`, `1.2 MiB`, `4.0 GiB`.
pub fn human_bytes(n: u64) -> String {
    crate::format::text::human_bytes(n)
}

/// A duration for a person: `1.2 s`, `3 min 4 s`, `2 h 5 min`.
pub fn human_ms(ms: i64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{}.{} s", s, (ms % 1000) / 100)
    } else if s < 3600 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    }
}

/// `n` and the noun for one or for many: `1 entry`, `2 entries`.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    crate::format::text::count(n, one, many)
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

/// A time a person gives: epoch milliseconds; ISO-8601
/// (`2026-11-29T22:56:05.313Z`, `2026-11-29T22:56:05Z`, a space for the
/// `T`, seconds and their fraction optional, or a date alone, its
/// midnight); or the time Kafka's own logs print (log4j's
/// `2026-12-01 13:29:10,655`, a comma before the milliseconds, in square
/// brackets or not). A time is UTC unless it ends with an offset: `Z`,
/// `+01:00`, `-0500`, `+01` (then that offset from UTC). None when it is
/// none of these.
pub fn parse_time(s: &str) -> Option<i64> {
    let mut s = s.trim();
    if let Some(inner) = s.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        s = inner.trim();
    }
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
        // the offset from UTC: none (UTC), `Z`, or a sign and hours,
        // with minutes after a colon or not
        let (t, offset_ms) = match t.strip_suffix('Z') {
            Some(t) => (t, 0),
            None => match t.rfind(['+', '-']) {
                None => (t, 0),
                Some(at) => {
                    let (clock, zone) = t.split_at(at);
                    let sign = if zone.starts_with('-') { -1 } else { 1 };
                    let zone = &zone[1..];
                    let (zh, zm) = match zone.split_once(':') {
                        Some((h, m)) => (h, m),
                        None if zone.len() == 4 => zone.split_at(2),
                        None => (zone, "00"),
                    };
                    if zh.len() != 2 || zm.len() != 2 {
                        return None;
                    }
                    let (zh, zm) = (num(zh)?, num(zm)?);
                    if zh > 18 || zm > 59 {
                        return None;
                    }
                    (clock, sign * (zh * 60 + zm) * 60_000)
                }
            },
        };
        let (hms, frac) = match t.split_once(['.', ',']) {
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
        ms = ((h * 60 + mi) * 60 + sec) * 1000 + frac_ms - offset_ms;
    }
    Some(days_from_civil(y, m, dd) * 86_400_000 + ms)
}

#[cfg(test)]
mod parse_time_tests {
    use super::*;
    use crate::format::text::iso_time;

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
        // without an offset, UTC; with one, that far from UTC
        assert_eq!(parse_time("2026-11-29T22:56"), Some(1_795_992_960_000));
        assert_eq!(
            parse_time("2026-11-29T23:56:00+01:00"),
            Some(1_795_992_960_000)
        );
        assert_eq!(
            parse_time("2026-11-29 17:56:00.660-0500"),
            Some(1_795_992_960_660)
        );
        assert_eq!(
            parse_time("2026-11-30T00:56:00+02"),
            Some(1_795_992_960_000)
        );
        // Kafka's log4j time, bracketed as in its log lines or not
        assert_eq!(
            parse_time("2026-11-29 22:56:00,660"),
            Some(1_795_992_960_660)
        );
        assert_eq!(
            parse_time("[2026-11-29 22:56:00,660]"),
            Some(1_795_992_960_660)
        );
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-11-29T22:56:00+1:00",
            "2026-11-29T22:56:00+25:00",
            "2026-11-29T22:56:00 UTC",
            "2026-11-29 22:56:00,",
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
