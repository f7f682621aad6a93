//! `meta.properties` (Java properties text) and `partition.metadata`, read the
//! way Kafka 4.x reads them.
//!
//! - [`parse_properties`] implements `java.util.Properties.load(InputStream)`:
//!   ISO-8859-1 bytes, `#`/`!` comments, `=`/`:`/whitespace separators,
//!   backslash line continuation and escapes (`\uXXXX`, `\t`, `\n`, `\r`, `\f`).
//! - [`MetaProperties::from_properties`] applies Kafka's
//!   `MetaProperties.Builder(Properties)` and `build()` rules (versions 0 and 1).
//! - [`parse_partition_metadata`] applies `PartitionMetadataReadBuffer.read()`.
//! - [`Uuid`] is Kafka's UUID as printed on disk: 16 bytes in URL-safe base64
//!   without padding (22 characters).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use super::checkpoint::{clip, java_parse_int, utf8_chunk_start};
use super::ParseError;

/// Name of the properties file in each log directory root.
pub const META_PROPERTIES_FILE: &str = "meta.properties";

/// Name of the topic-id file in each partition directory.
pub const PARTITION_METADATA_FILE: &str = "partition.metadata";

/// Largest properties or state file klf reads (`meta.properties`,
/// `partition.metadata`, `quorum-state`, `.kafka_cleanshutdown`): 1 MiB.
/// Kafka writes a few hundred bytes in each (a handful of keys, a topic id,
/// a voter list, a broker epoch); a larger file is not something Kafka
/// wrote, and is not read.
pub const MAX_PROPERTIES_BYTES: u64 = 1 << 20;

/// Why a properties or state file of `len` bytes is not read.
pub fn over_properties_cap(len: u64) -> String {
    format!(
        "{len} bytes, over klf's cap of {MAX_PROPERTIES_BYTES} bytes for a properties or state file \
         (Kafka writes a few hundred)"
    )
}

/// A problem in a properties-style file: 1-based line (when about one line),
/// byte position and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropsError {
    /// 1-based line number of the logical line, if the problem is about one.
    pub line: Option<u32>,
    /// Byte position in the file and reason.
    pub error: ParseError,
}

impl PropsError {
    fn new(line: Option<u32>, pos: u64, reason: impl Into<Cow<'static, str>>) -> Self {
        PropsError {
            line,
            error: ParseError::new(pos, reason),
        }
    }
}

impl fmt::Display for PropsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}, {}", self.error),
            None => write!(f, "{}", self.error),
        }
    }
}

impl std::error::Error for PropsError {}

/// One `key=value` pair of a properties file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// Key after unescaping.
    pub key: String,
    /// Value after unescaping.
    pub value: String,
    /// 1-based line where the logical line starts.
    pub line: u32,
    /// Byte position where the logical line starts.
    pub pos: u64,
}

/// The pairs of a properties file in file order. Lookups follow Java:
/// the last occurrence of a key wins.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Properties {
    /// All pairs in file order, duplicates included.
    pub entries: Vec<Property>,
}

impl Properties {
    /// The value Java's `getProperty(key)` returns (last occurrence).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.find(key).map(|p| p.value.as_str())
    }

    /// The pair Java keeps for `key` (last occurrence).
    pub fn find(&self, key: &str) -> Option<&Property> {
        self.entries.iter().rev().find(|p| p.key == key)
    }

    /// Keys and the values Java keeps, sorted by key.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.entries
            .iter()
            .map(|p| (p.key.clone(), p.value.clone()))
            .collect()
    }
}

/// Parses Java properties text as `Properties.load(InputStream)` does (bytes
/// are ISO-8859-1, so every byte sequence is text). The only error is a
/// malformed `\uXXXX` escape, which Java rejects.
pub fn parse_properties(bytes: &[u8]) -> Result<Properties, PropsError> {
    let is_ws = |b: u8| matches!(b, b' ' | b'\t' | 0x0c);
    let is_eol = |b: u8| b == b'\n' || b == b'\r';
    let mut out = Properties::default();
    let mut i = 0usize;
    let mut line_no: u32 = 1;
    // Advances past one line terminator (\r\n counts once), counting lines.
    let skip_eol = |i: &mut usize, line_no: &mut u32| {
        if let Some(&b) = bytes.get(*i) {
            *i += 1;
            if b == b'\r' && bytes.get(*i) == Some(&b'\n') {
                *i += 1;
            }
            *line_no = line_no.saturating_add(1);
        }
    };
    while i < bytes.len() {
        // Start of a natural line that may begin a logical line.
        while bytes.get(i).copied().is_some_and(is_ws) {
            i += 1;
        }
        match bytes.get(i) {
            None => break,
            Some(&b) if is_eol(b) => {
                skip_eol(&mut i, &mut line_no);
                continue;
            }
            Some(b'#') | Some(b'!') => {
                while bytes.get(i).copied().is_some_and(|b| !is_eol(b)) {
                    i += 1;
                }
                skip_eol(&mut i, &mut line_no);
                continue;
            }
            Some(_) => {}
        }
        let start_pos = i as u64;
        let start_line = line_no;
        // Gather the logical line as (byte, file position) pairs.
        let mut logical: Vec<(u8, u64)> = Vec::new();
        loop {
            let seg_start = i;
            while bytes.get(i).copied().is_some_and(|b| !is_eol(b)) {
                i += 1;
            }
            let seg = bytes.get(seg_start..i).unwrap_or(&[]);
            let trailing_bs = seg.iter().rev().take_while(|&&b| b == b'\\').count();
            let keep = if trailing_bs % 2 == 1 {
                seg.len() - 1
            } else {
                seg.len()
            };
            for (k, &b) in seg.iter().take(keep).enumerate() {
                logical.push((b, (seg_start + k) as u64));
            }
            if trailing_bs % 2 == 1 && i < bytes.len() {
                skip_eol(&mut i, &mut line_no);
                while bytes.get(i).copied().is_some_and(is_ws) {
                    i += 1;
                }
                continue;
            }
            skip_eol(&mut i, &mut line_no);
            break;
        }
        // Split key and value.
        let mut key_end = logical.len();
        let mut value_start = logical.len();
        let mut has_sep = false;
        let mut preceding_bs = false;
        for (k, &(c, _)) in logical.iter().enumerate() {
            if (c == b'=' || c == b':') && !preceding_bs {
                key_end = k;
                value_start = k + 1;
                has_sep = true;
                break;
            } else if is_ws(c) && !preceding_bs {
                key_end = k;
                value_start = k + 1;
                break;
            }
            preceding_bs = c == b'\\' && !preceding_bs;
        }
        while let Some(&(c, _)) = logical.get(value_start) {
            if !is_ws(c) {
                if !has_sep && (c == b'=' || c == b':') {
                    has_sep = true;
                } else {
                    break;
                }
            }
            value_start += 1;
        }
        let key = unescape(logical.get(..key_end).unwrap_or(&[]), start_line)?;
        let value = unescape(logical.get(value_start..).unwrap_or(&[]), start_line)?;
        out.entries.push(Property {
            key,
            value,
            line: start_line,
            pos: start_pos,
        });
    }
    Ok(out)
}

/// Java's `loadConvert`: ISO-8859-1 bytes with backslash escapes to a String.
fn unescape(chars: &[(u8, u64)], line: u32) -> Result<String, PropsError> {
    let mut out = String::with_capacity(chars.len());
    let mut k = 0usize;
    while let Some(&(c, pos)) = chars.get(k) {
        k += 1;
        if c != b'\\' {
            out.push(char::from(c));
            continue;
        }
        let Some(&(e, _)) = chars.get(k) else {
            break;
        };
        k += 1;
        match e {
            b'u' => {
                let mut v: u32 = 0;
                for _ in 0..4 {
                    let digit = chars.get(k).and_then(|&(h, _)| char::from(h).to_digit(16));
                    let Some(d) = digit else {
                        return Err(PropsError::new(Some(line), pos, "malformed \\uxxxx escape"));
                    };
                    v = v * 16 + d;
                    k += 1;
                }
                // Java keeps lone surrogates in its UTF-16 strings; Rust cannot.
                out.push(char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            b't' => out.push('\t'),
            b'r' => out.push('\r'),
            b'n' => out.push('\n'),
            b'f' => out.push('\u{0c}'),
            other => out.push(char::from(other)),
        }
    }
    Ok(out)
}

/// A Kafka UUID (`org.apache.kafka.common.Uuid`): 16 bytes, printed as
/// URL-safe base64 without padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero UUID, which Kafka rejects as a topic id.
    pub const ZERO: Uuid = Uuid([0; 16]);
    /// Uuid(0, 1): the id of the `__cluster_metadata` topic and the
    /// "unassigned" directory id.
    pub const ONE: Uuid = Uuid([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);

    /// Parses as Kafka's `Uuid.fromString`: at most 24 characters of URL-safe
    /// base64 (padding optional) decoding to exactly 16 bytes. The error
    /// position is the character offset in `s`.
    pub fn parse(s: &str) -> Result<Uuid, ParseError> {
        if s.chars().count() > 24 {
            return Err(ParseError::new(0, "UUID string longer than 24 characters"));
        }
        let bytes = base64url_decode_java(s)?;
        let arr: [u8; 16] = bytes.as_slice().try_into().map_err(|_| {
            ParseError::new(
                0,
                format!(
                    "UUID must be 16 bytes, {:?} decodes to {}",
                    clip(s),
                    bytes.len()
                ),
            )
        })?;
        Ok(Uuid(arr))
    }

    /// The two 64-bit halves, as Kafka prints them in some logs.
    pub fn halves(&self) -> (i64, i64) {
        let half = |at| crate::format::bytes::be_i64(&self.0, at).unwrap_or(0);
        (half(0), half(8))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::with_capacity(22);
        for chunk in self.0.chunks(3) {
            let b0 = u32::from(chunk.first().copied().unwrap_or(0));
            let b1 = u32::from(chunk.get(1).copied().unwrap_or(0));
            let b2 = u32::from(chunk.get(2).copied().unwrap_or(0));
            let n = (b0 << 16) | (b1 << 8) | b2;
            let chars = chunk.len() + 1;
            for k in 0..chars {
                let idx = ((n >> (18 - 6 * k)) & 63) as usize;
                out.push(char::from(ALPHABET.get(idx).copied().unwrap_or(b'A')));
            }
        }
        f.write_str(&out)
    }
}

/// `java.util.Base64.getUrlDecoder().decode(String)`: padding optional,
/// unused trailing bits ignored, nothing after padding.
fn base64url_decode_java(s: &str) -> Result<Vec<u8>, ParseError> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut bits: u32 = 0;
    let mut nbits: u32 = 0;
    let mut in_unit = 0usize;
    let bytes = s.as_bytes();
    let mut k = 0usize;
    while let Some(&c) = bytes.get(k) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            b'=' => {
                // Valid endings: "xx==" or "xxx=".
                let ok = match in_unit {
                    2 => bytes.get(k + 1) == Some(&b'=') && k + 2 == bytes.len(),
                    3 => k + 1 == bytes.len(),
                    _ => false,
                };
                if !ok {
                    return Err(ParseError::new(
                        k as u64,
                        "base64 padding in the wrong place",
                    ));
                }
                return Ok(out);
            }
            _ => {
                return Err(ParseError::new(
                    k as u64,
                    "character outside the URL-safe base64 alphabet",
                ))
            }
        };
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        in_unit = (in_unit + 1) % 4;
        if nbits >= 8 {
            nbits -= 8;
            out.push(((bits >> nbits) & 0xff) as u8);
        }
        k += 1;
    }
    if in_unit == 1 {
        return Err(ParseError::new(
            bytes.len() as u64,
            "last base64 unit does not have enough valid bits",
        ));
    }
    Ok(out)
}

/// `meta.properties` as Kafka 4.x interprets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProperties {
    /// File version: 0 (ZooKeeper era, also when the key is missing) or 1 (KRaft).
    pub version: i32,
    /// Node id: `broker.id` in version 0 (optional), `node.id` in version 1.
    pub node_id: Option<i32>,
    /// `cluster.id`, as written.
    pub cluster_id: Option<String>,
    /// `directory.id`, parsed.
    pub directory_id: Option<Uuid>,
    /// Every property of the file.
    pub properties: Properties,
}

impl MetaProperties {
    /// Applies Kafka's rules (`MetaProperties.Builder(Properties)` then
    /// `build()`), failing as Kafka fails: unknown version, missing or
    /// non-numeric `node.id`/`broker.id`, bad `directory.id`, version 1
    /// without `cluster.id`.
    pub fn from_properties(props: Properties) -> Result<MetaProperties, PropsError> {
        let at = |key: &str| {
            props
                .find(key)
                .map(|p| (Some(p.line), p.pos))
                .unwrap_or((None, 0))
        };
        let version = match props.get("version") {
            None => 0,
            Some(v) => {
                let (line, pos) = at("version");
                let n = java_parse_int(v.trim_matches(|c: char| c <= ' ')).map_err(|_| {
                    PropsError::new(
                        line,
                        pos,
                        format!("invalid meta.properties version {:?}", clip(v)),
                    )
                })?;
                if n != 0 && n != 1 {
                    return Err(PropsError::new(
                        line,
                        pos,
                        format!("unknown meta.properties version {n}"),
                    ));
                }
                n
            }
        };
        let id_key = if version == 0 { "broker.id" } else { "node.id" };
        let node_id = match props.get(id_key) {
            None if version == 0 => None,
            None => {
                return Err(PropsError::new(
                    None,
                    0,
                    "node.id not found (required in version 1)",
                ));
            }
            Some(v) => {
                let (line, pos) = at(id_key);
                Some(java_parse_int(v).map_err(|why| {
                    PropsError::new(
                        line,
                        pos,
                        format!("{id_key} {:?} is not a base-10 int ({why})", clip(v)),
                    )
                })?)
            }
        };
        let cluster_id = props.get("cluster.id").map(str::to_owned);
        let directory_id = match props.get("directory.id") {
            None => None,
            Some(v) => {
                let (line, pos) = at("directory.id");
                Some(Uuid::parse(v).map_err(|e| {
                    PropsError::new(
                        line,
                        pos,
                        format!("directory.id is not a Uuid: {}", e.reason),
                    )
                })?)
            }
        };
        if version != 0 && cluster_id.is_none() {
            return Err(PropsError::new(
                None,
                0,
                "cluster.id not found (required in version 1)",
            ));
        }
        Ok(MetaProperties {
            version,
            node_id,
            cluster_id,
            directory_id,
            properties: props,
        })
    }
}

/// Parses `meta.properties` and applies Kafka's rules
/// ([`MetaProperties::from_properties`]).
pub fn parse_meta_properties(bytes: &[u8]) -> Result<MetaProperties, PropsError> {
    MetaProperties::from_properties(parse_properties(bytes)?)
}

/// A node id to use when Kafka's rules reject the file: `node.id` if it is a
/// number, else `broker.id` if it is a number (surrounding whitespace
/// ignored). `None` when neither is.
pub fn node_id_hint(props: &Properties) -> Option<i32> {
    ["node.id", "broker.id"]
        .into_iter()
        .find_map(|k| props.get(k).and_then(|v| java_parse_int(v.trim()).ok()))
}

/// `partition.metadata` as Kafka reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// File version (0; Kafka accepts any value ≥ 0).
    pub version: i32,
    /// The partition's topic id.
    pub topic_id: Uuid,
}

/// Parses `partition.metadata` as Kafka 4.1's `PartitionMetadataReadBuffer`:
/// two lines, each split on `:\s+` into exactly two parts (labels are not
/// checked); version ≥ 0; topic id a Uuid other than zero. Lines after the
/// second are ignored, as Kafka does.
pub fn parse_partition_metadata(bytes: &[u8]) -> Result<PartitionMetadata, PropsError> {
    // Java decodes in chunks of 8192 characters and fails on a whole chunk
    // holding bytes that are not UTF-8, before handing out any of its lines.
    let utf8_stop = std::str::from_utf8(bytes).err().map(|e| {
        let bad = e.valid_up_to();
        let line = bytes
            .get(..bad)
            .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u32 + 1)
            .unwrap_or(1);
        (utf8_chunk_start(bytes, bad) as u64, bad as u64, line)
    });
    let check_utf8 = |line_start: u64, line_len: usize| -> Result<(), PropsError> {
        if let Some((chunk, bad, bad_line)) = utf8_stop {
            // The line is handed out only if its terminator lies before the failing chunk.
            let end = line_start + line_len as u64;
            if end >= chunk || end >= bytes.len() as u64 {
                return Err(PropsError::new(
                    Some(bad_line),
                    bad,
                    "bytes that are not UTF-8; Kafka's reader fails with MalformedInputException",
                ));
            }
        }
        Ok(())
    };
    let mut lines = read_lines(bytes);
    let (l1, p1, t1) = lines
        .next()
        .ok_or_else(|| PropsError::new(Some(1), 0, "empty file: no version line"))?;
    check_utf8(p1, line_len(&t1, bytes, p1))?;
    let t1 = t1.map_err(|pos| PropsError::new(Some(l1), pos, "bytes that are not UTF-8"))?;
    let parts = java_split_colon_ws(t1);
    let [_, (vpos, v)] = parts.as_slice() else {
        return Err(PropsError::new(
            Some(l1),
            p1,
            format!("malformed line {:?}: expected `version: <int>`", clip(t1)),
        ));
    };
    let version = java_parse_int(v).map_err(|why| {
        PropsError::new(
            Some(l1),
            p1 + *vpos as u64,
            format!("version {:?} is not an int ({why})", clip(v)),
        )
    })?;
    if version < 0 {
        return Err(PropsError::new(
            Some(l1),
            p1 + *vpos as u64,
            format!("unrecognized version {version}"),
        ));
    }
    let (l2, p2, t2) = lines
        .next()
        .ok_or_else(|| PropsError::new(Some(2), bytes.len() as u64, "no topic_id line"))?;
    check_utf8(p2, line_len(&t2, bytes, p2))?;
    let t2 = t2.map_err(|pos| PropsError::new(Some(l2), pos, "bytes that are not UTF-8"))?;
    let parts = java_split_colon_ws(t2);
    let [_, (tpos, t)] = parts.as_slice() else {
        return Err(PropsError::new(
            Some(l2),
            p2,
            format!("malformed line {:?}: expected `topic_id: <uuid>`", clip(t2)),
        ));
    };
    let topic_id = Uuid::parse(t).map_err(|e| {
        PropsError::new(
            Some(l2),
            p2 + (*tpos as u64) + e.pos,
            format!("topic_id {:?}: {}", clip(t), e.reason),
        )
    })?;
    if topic_id == Uuid::ZERO {
        return Err(PropsError::new(
            Some(l2),
            p2 + *tpos as u64,
            "topic_id is the zero UUID",
        ));
    }
    Ok(PartitionMetadata { version, topic_id })
}

/// Byte length of a line from [`read_lines`] (up to its terminator).
fn line_len(text: &Result<&str, u64>, bytes: &[u8], start: u64) -> usize {
    match text {
        Ok(t) => t.len(),
        Err(_) => bytes
            .get(start as usize..)
            .map(|rest| {
                rest.iter()
                    .take_while(|&&b| b != b'\n' && b != b'\r')
                    .count()
            })
            .unwrap_or(0),
    }
}

/// Lines as `BufferedReader.readLine` gives them: (1-based number, start
/// position, text or the position of the first non-UTF-8 byte).
fn read_lines(bytes: &[u8]) -> impl Iterator<Item = (u32, u64, Result<&str, u64>)> {
    let mut i = 0usize;
    let mut n: u32 = 0;
    std::iter::from_fn(move || {
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        while bytes.get(i).is_some_and(|&b| b != b'\n' && b != b'\r') {
            i += 1;
        }
        let raw = bytes.get(start..i).unwrap_or(&[]);
        if bytes.get(i) == Some(&b'\r') && bytes.get(i + 1) == Some(&b'\n') {
            i += 2;
        } else if i < bytes.len() {
            i += 1;
        }
        n = n.saturating_add(1);
        let text = std::str::from_utf8(raw).map_err(|e| (start + e.valid_up_to()) as u64);
        Some((n, start as u64, text))
    })
}

/// Java's `Pattern.compile(":\\s+").split(line)` with each part's byte offset.
fn java_split_colon_ws(line: &str) -> Vec<(usize, &str)> {
    let is_ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let bytes = line.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0usize;
    let mut i = 0usize;
    let mut matched = false;
    while i < bytes.len() {
        if bytes.get(i) == Some(&b':') && bytes.get(i + 1).copied().is_some_and(is_ws) {
            let mut j = i + 1;
            while bytes.get(j).copied().is_some_and(is_ws) {
                j += 1;
            }
            parts.push((start, line.get(start..i).unwrap_or("")));
            matched = true;
            start = j;
            i = j;
        } else {
            i += 1;
        }
    }
    if !matched {
        return vec![(0, line)];
    }
    parts.push((start, line.get(start..).unwrap_or("")));
    while parts.last().is_some_and(|p| p.1.is_empty()) {
        parts.pop();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_as_java_store_writes_them() {
        let text = b"#\n#Sun Nov 29 21:17:31 UTC 2026\nnode.id=3\ndirectory.id=Tf9J3lq1RFCNiPOnq0Ayjw\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n";
        let meta = parse_meta_properties(text).unwrap();
        assert_eq!(meta.version, 1);
        assert_eq!(meta.node_id, Some(3));
        assert_eq!(meta.cluster_id.as_deref(), Some("MkU3OEVBNTcwNTJENDM2Qk"));
        assert_eq!(
            meta.directory_id.unwrap().to_string(),
            "Tf9J3lq1RFCNiPOnq0Ayjw"
        );
        assert_eq!(meta.properties.find("version").unwrap().line, 5);
    }

    #[test]
    fn java_properties_syntax() {
        let text = b"  ! comment\r\na : 1\nb\t2\nc=x\\\n   y\nd\\ e=f\\u0041\\n\ne\n=g\nh==i\nk=last\nk=wins";
        let p = parse_properties(text).unwrap();
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get("b"), Some("2"));
        assert_eq!(p.get("c"), Some("xy"));
        assert_eq!(p.get("d e"), Some("fA\n"));
        assert_eq!(p.get("e"), Some(""));
        assert_eq!(p.get(""), Some("g"));
        assert_eq!(p.get("h"), Some("=i"));
        assert_eq!(p.get("k"), Some("wins"));
        assert_eq!(p.find("c").unwrap().line, 4);
        let e = parse_properties(b"x=\\u12G4").unwrap_err();
        assert_eq!(e.error.pos, 2);
        // Latin-1: every byte is a character.
        assert_eq!(
            parse_properties(b"k=\xe9").unwrap().get("k"),
            Some("\u{e9}")
        );
    }

    #[test]
    fn meta_properties_rules() {
        // Version 0: broker.id optional.
        let m = parse_meta_properties(b"broker.id=7\n").unwrap();
        assert_eq!((m.version, m.node_id), (0, Some(7)));
        let m = parse_meta_properties(b"version=0\n").unwrap();
        assert_eq!(m.node_id, None);
        // Version 0 ignores node.id.
        let m = parse_meta_properties(b"version=0\nnode.id=4\n").unwrap();
        assert_eq!(m.node_id, None);
        // Version is trimmed, ids are not.
        let m = parse_meta_properties(b"version=1\\t\nnode.id=1\ncluster.id=c\n").unwrap();
        assert_eq!(m.version, 1);
        let e = parse_meta_properties(b"version=1\nnode.id=1\\t\ncluster.id=c\n").unwrap_err();
        assert_eq!((e.line, e.error.pos), (Some(2), 10));
        assert!(parse_meta_properties(b"version=2\n").is_err());
        assert!(parse_meta_properties(b"version=1\nnode.id=1\n").is_err());
        assert!(parse_meta_properties(b"version=1\ncluster.id=c\n").is_err());
        assert!(parse_meta_properties(b"directory.id=short\n").is_err());
        let p = parse_properties(b"version=1\nnode.id= 5 \n").unwrap();
        assert_eq!(node_id_hint(&p), Some(5));
        let p = parse_properties(b"broker.id=x\n").unwrap();
        assert_eq!(node_id_hint(&p), None);
    }

    #[test]
    fn uuid_like_kafka() {
        let u = Uuid::parse("AAAAAAAAAAAAAAAAAAAAAQ").unwrap();
        assert_eq!(u, Uuid::ONE);
        assert_eq!(u.halves(), (0, 1));
        assert_eq!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAQ==").unwrap(), Uuid::ONE);
        assert!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAQ=").is_err());
        assert!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAA").is_err());
        assert!(Uuid::parse("AAAAAAAAAAAAAAAAAAAA+Q").is_err());
        assert!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAAAAA").is_err());
        // Unused trailing bits are ignored by Java's decoder.
        assert_eq!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAR").unwrap(), Uuid::ONE);
        let bytes: [u8; 16] =
            core::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(200));
        let u = Uuid(bytes);
        assert_eq!(Uuid::parse(&u.to_string()).unwrap(), u);
        assert_eq!(u.to_string().len(), 22);
    }

    #[test]
    fn partition_metadata_like_kafka() {
        let pm = parse_partition_metadata(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").unwrap();
        assert_eq!(pm.version, 0);
        assert_eq!(pm.topic_id, Uuid::ONE);
        // Labels are not checked; whitespace after the colon is required.
        assert!(parse_partition_metadata(b"v:\t3\nx:  AAAAAAAAAAAAAAAAAAAAAQ\n").is_ok());
        let e =
            parse_partition_metadata(b"version:0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").unwrap_err();
        assert_eq!(e.line, Some(1));
        let e =
            parse_partition_metadata(b"version: -1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").unwrap_err();
        assert_eq!(e.error.pos, 9);
        let e =
            parse_partition_metadata(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA").unwrap_err();
        assert_eq!((e.line, e.error.pos), (Some(2), 21));
        let e = parse_partition_metadata(b"version: 0\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e =
            parse_partition_metadata(b"version: 0\ntopic_id: AAAA*AAAAAAAAAAAAAAAAQ").unwrap_err();
        assert_eq!(e.error.pos, 25);
        assert!(parse_partition_metadata(b"").is_err());
        assert!(
            parse_partition_metadata(b"version: 0: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ").is_err()
        );
    }

    #[test]
    fn never_panics_on_prefixes() {
        let full = b"#\n#date\nversion=1\nnode.id=2\ncluster.id=abc\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAQ\n\\u00";
        for n in 0..=full.len() {
            let _ = parse_meta_properties(&full[..n]);
            let _ = parse_partition_metadata(&full[..n]);
        }
    }
}
