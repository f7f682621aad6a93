//! Text forms every output shares: JSON strings the way Jackson writes them
//! (what kafka-dump-log prints and klf's JSON agrees with), base64, sizes
//! and times.

/// A JSON string literal as Jackson writes it: `"` and `\` escaped,
/// `\b \t \n \f \r` short, other control characters `\u00XX`.
pub fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Standard base64 alphabet.
pub const STD_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// URL-safe base64 alphabet.
pub const URL_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64 encoding with the given alphabet, with or without `=` padding.
pub fn base64(data: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// `n` and the noun for it: "1 entry", "3 entries".
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1.5 GiB`-style size.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses a byte count: digits with an optional `K`, `M`, `G` or `T`
/// suffix (powers of 1024, `KiB`/`KB` spellings accepted).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a byte count (e.g. 512M, 4G, 1000000)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use K, M, G or T)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Epoch milliseconds as ISO-8601 UTC with milliseconds
/// (`2026-11-30T12:56:00.660Z`); None for a negative value (Kafka's `-1`,
/// no timestamp) or one past the year 9999.
pub fn iso_time(ms: i64) -> Option<String> {
    iso_time_bytes(ms).map(|b| b.iter().map(|&c| char::from(c)).collect())
}

/// [`iso_time`] as its 24 ASCII bytes, without allocating.
pub fn iso_time_bytes(ms: i64) -> Option<[u8; 24]> {
    if !(0..=253_402_300_799_999).contains(&ms) {
        return None;
    }
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // civil date from days since 1970-01-01 (the proleptic Gregorian
    // calendar, in 400-year eras)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut n: i64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, in_day / 3_600_000);
    put(14, 2, in_day / 60_000 % 60);
    put(17, 2, in_day / 1000 % 60);
    put(20, 3, in_day % 1000);
    Some(out)
}

/// A timestamp for a person: the ISO-8601 UTC time and, beside it, the
/// epoch milliseconds (`2026-11-30T12:56:00.660Z (1795992960660)`); the
/// bare number when it is not a time (negative).
pub fn human_time(ms: i64) -> String {
    let mut n = itoa::Buffer::new();
    let digits = n.format(ms);
    match iso_time_bytes(ms) {
        Some(t) => {
            let mut s = String::with_capacity(28 + digits.len());
            s.extend(t.iter().map(|&c| char::from(c)));
            s.push_str(" (");
            s.push_str(digits);
            s.push(')');
            s
        }
        None => digits.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        let b = |x: &[u8]| base64(x, STD_ALPHABET, true);
        assert_eq!(b(b""), "");
        assert_eq!(b(b"f"), "Zg==");
        assert_eq!(b(b"fo"), "Zm8=");
        assert_eq!(b(b"foo"), "Zm9v");
        assert_eq!(b(&[0xff, 0xfe, 0x00, 0x01]), "//4AAQ==");
        assert_eq!(base64(&[0xfb, 0xff], URL_ALPHABET, false), "-_8");
    }

    #[test]
    fn json_strings_escape_as_jackson_does() {
        let mut s = String::new();
        json_string(&mut s, "a\"b\\\u{1b}\n");
        assert_eq!(s, "\"a\\\"b\\\\\\u001B\\n\"");
    }

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
