//! kafka-dump-log text: byte-identical to what the chosen release's
//! DumpLogSegments (`Options::release`, see [`crate::render::release`]) prints on
//! stdout for `.log` (and KRaft `.checkpoint`), `.index` and `.timeindex`
//! files.
//!
//! The functions here take file bytes (the caller opens files) and write the
//! text as they go, so that when Kafka's tool would stop with an exception
//! the output stops at the same byte (a half-written line included) and the
//! function returns [`DumpError::Abort`] with the position and reason.
//! Everything Kafka prints on stderr (the summaries of index mismatches and
//! offset gaps) is collected in [`Findings`]. Problems that Kafka prints
//! without stopping (a batch with a bad CRC, a torn tail) are reported to the
//! caller's [`Problems`] sink so it can set an exit status.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::format::batch::{Batch, RecordBatch, SegmentIter, SegmentSource, Tail};
use crate::format::index::{IndexBytes, OffsetIndex, TimeIndex};
use crate::format::jvm::java_hash_map_order;
use crate::format::legacy::{LegacyEntry, LegacyRecord};
use crate::format::record::control::{self, ControlType};
use crate::format::record::{java_utf8, Record};
use crate::format::seek::Pick;
use crate::format::walk::{Checksums, Step, Walk};
use crate::format::ParseError;

use crate::render::release::Release;

/// Options of a dump, named after kafka-dump-log's.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--print-data-log` (or any decoder option): print keys and payloads.
    pub print_data: bool,
    /// `--deep-iteration` (implied by `print_data`): one line per record.
    pub deep: bool,
    /// `--skip-record-metadata`.
    pub skip_record_metadata: bool,
    /// `--max-bytes` (default `i32::MAX`): only this many bytes of a `.log`.
    pub max_bytes: i32,
    /// `--max-message-size` (default 5 MiB): bytes read at an index position.
    pub max_message_size: i32,
    /// `--index-sanity-check`.
    pub index_sanity_only: bool,
    /// `--verify-index-only`.
    pub verify_only: bool,
    /// Cap on the decompressed size of one batch.
    pub decompress_cap: usize,
    /// klf extension (not in Kafka): after a batch that cannot be framed or
    /// whose records cannot be read, report it, skip to the next plausible
    /// batch and go on, instead of stopping. Positions then stay file
    /// positions.
    pub resync: bool,
    /// Whose text: the kafka-dump-log release reproduced.
    pub release: Release,
    /// klf only (json and table): the parts of a record whose bytes are
    /// shown (`--show`; `--print-data-log` shows all three).
    pub show: Show,
    /// klf only (json and table): how those bytes are written
    /// (`--encoding`).
    pub encoding: Encoding,
}

/// The parts of a record whose contents a json or table dump shows; the
/// others are given by size (key, value) or by name (header keys).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Show {
    /// The key's bytes.
    pub key: bool,
    /// The value's bytes.
    pub value: bool,
    /// Each header's value beside its key.
    pub headers: bool,
}

impl Show {
    /// Key, value and headers.
    pub const ALL: Show = Show {
        key: true,
        value: true,
        headers: true,
    };

    /// Whether any content is shown.
    pub fn any(self) -> bool {
        self.key || self.value || self.headers
    }
}

/// How record bytes are written in json and table dumps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Encoding {
    /// As text: in JSON `{"text": ...}` when valid UTF-8, else
    /// `{"base64": ...}`; in a table, malformed bytes as U+FFFD.
    #[default]
    Utf8,
    /// Lowercase hexadecimal, two digits a byte (`{"hex": ...}` in JSON).
    Hex,
    /// Standard base64, padded (`{"base64": ...}` in JSON).
    Base64,
}

/// `bytes` as lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

impl Default for Options {
    fn default() -> Self {
        Options {
            print_data: false,
            deep: false,
            skip_record_metadata: false,
            max_bytes: i32::MAX,
            max_message_size: 5 * 1024 * 1024,
            index_sanity_only: false,
            verify_only: false,
            decompress_cap: crate::format::codec::decompressed_cap(),
            resync: false,
            release: Release::NEWEST,
            show: Show::default(),
            encoding: Encoding::default(),
        }
    }
}

/// What a record formatter sees of a (non-control) record.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    /// Absolute offset.
    pub offset: i64,
    /// Key bytes (`None` for null).
    pub key: Option<&'a [u8]>,
    /// Value bytes (`None` for null).
    pub value: Option<&'a [u8]>,
}

/// Key text and payload text of a record, as printed after `key: ` and
/// `payload: ` (`None`: that piece is not printed).
pub type Formatted<'a> = (Option<Cow<'a, str>>, Option<Cow<'a, str>>);

/// Turns a record's key and value into the texts kafka-dump-log prints with
/// `--print-data-log`: the hook for `--offsets-decoder`,
/// `--transaction-log-decoder` and `--cluster-metadata-decoder`.
///
/// An `Err` stops the dump of the file, as the exception does in Kafka (for
/// example the offsets decoder meeting a record without a key); its text is
/// the reason reported.
pub trait RecordFormatter {
    /// Formats one record.
    fn format<'a>(&mut self, rec: &RecordRef<'a>) -> Result<Formatted<'a>, String>;

    /// Formats as `release`'s tool does from now on (for a formatter whose
    /// text depends on the release).
    fn set_release(&mut self, _release: Release) {}

    /// A copy to format other records with at the same time, when what it
    /// prints for a record does not depend on the records before it
    /// (`None` otherwise: such records are formatted in order, by one).
    fn fork(&self) -> Option<Box<dyn RecordFormatter + Send>> {
        None
    }
}

/// Kafka's default `StringDecoder`: UTF-8, malformed bytes replaced by U+FFFD.
#[derive(Debug, Default, Clone, Copy)]
pub struct StringFormatter;

impl RecordFormatter for StringFormatter {
    fn format<'a>(&mut self, rec: &RecordRef<'a>) -> Result<Formatted<'a>, String> {
        Ok((rec.key.map(java_utf8), rec.value.map(java_utf8)))
    }

    fn fork(&self) -> Option<Box<dyn RecordFormatter + Send>> {
        Some(Box::new(*self))
    }
}

/// A built-in `Decoder` class of kafka-dump-log's `--key-decoder-class` and
/// `--value-decoder-class` (`org.apache.kafka.tools.api.*` from Kafka 4.0,
/// `kafka.serializer.*` before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoderClass {
    /// `StringDecoder` (the default): UTF-8.
    String,
    /// `DefaultDecoder`: the bytes as a Java `byte[]`, which prints as its
    /// identity (`[B@1b6d3586`), a number no two JVM runs share.
    Default,
    /// `IntegerDecoder`: the first 4 bytes, big-endian.
    Integer,
    /// `LongDecoder`: the first 8 bytes, big-endian.
    Long,
}

impl DecoderClass {
    /// The class names accepted, per decoder.
    pub const NAMES: &'static [(&'static str, DecoderClass)] = &[
        (
            "org.apache.kafka.tools.api.StringDecoder",
            DecoderClass::String,
        ),
        (
            "org.apache.kafka.tools.api.DefaultDecoder",
            DecoderClass::Default,
        ),
        (
            "org.apache.kafka.tools.api.IntegerDecoder",
            DecoderClass::Integer,
        ),
        ("org.apache.kafka.tools.api.LongDecoder", DecoderClass::Long),
        ("kafka.serializer.StringDecoder", DecoderClass::String),
        ("kafka.serializer.DefaultDecoder", DecoderClass::Default),
        ("kafka.serializer.IntegerDecoder", DecoderClass::Integer),
        ("kafka.serializer.LongDecoder", DecoderClass::Long),
    ];

    /// The decoder of a fully qualified class name, if it is a built-in one.
    pub fn from_class(name: &str) -> Option<DecoderClass> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| *d)
    }

    fn decode<'a>(self, bytes: &'a [u8], identity: &mut u32) -> Result<Cow<'a, str>, String> {
        let underflow = || "java.nio.BufferUnderflowException".to_string();
        Ok(match self {
            DecoderClass::String => java_utf8(bytes),
            DecoderClass::Integer => {
                let b: [u8; 4] = bytes
                    .get(..4)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(underflow)?;
                Cow::Owned(i32::from_be_bytes(b).to_string())
            }
            DecoderClass::Long => {
                let b: [u8; 8] = bytes
                    .get(..8)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(underflow)?;
                Cow::Owned(i64::from_be_bytes(b).to_string())
            }
            DecoderClass::Default => {
                // A stand-in identity: the shape Kafka prints, a value of
                // its own (Kafka's differs in every run too).
                *identity = identity.wrapping_mul(1_103_515_245).wrapping_add(12_345) & 0x7fff_ffff;
                Cow::Owned(format!("[B@{:x}", *identity))
            }
        })
    }
}

/// kafka-dump-log's `DecoderMessageParser`: the key and the value decoded
/// by their `Decoder` classes (a null key or value prints nothing). A
/// decoder that throws (`IntegerDecoder` on fewer than 4 bytes) stops the
/// dump, as in Kafka.
#[derive(Debug, Clone)]
pub struct ClassFormatter {
    /// `--key-decoder-class`.
    pub key: DecoderClass,
    /// `--value-decoder-class`.
    pub value: DecoderClass,
    identity: u32,
}

impl ClassFormatter {
    /// A formatter with these decoders.
    pub fn new(key: DecoderClass, value: DecoderClass) -> ClassFormatter {
        ClassFormatter {
            key,
            value,
            identity: 0x1b6d_3586,
        }
    }
}

impl RecordFormatter for ClassFormatter {
    fn format<'a>(&mut self, rec: &RecordRef<'a>) -> Result<Formatted<'a>, String> {
        let key = match rec.key {
            Some(k) => Some(self.key.decode(k, &mut self.identity)?),
            None => None,
        };
        let value = match rec.value {
            Some(v) => Some(self.value.decode(v, &mut self.identity)?),
            None => None,
        };
        Ok((key, value))
    }

    fn fork(&self) -> Option<Box<dyn RecordFormatter + Send>> {
        // DefaultDecoder prints an identity that changes with each record.
        let ordered = [self.key, self.value].contains(&DecoderClass::Default);
        (!ordered).then(|| Box::new(self.clone()) as Box<dyn RecordFormatter + Send>)
    }
}

/// Why a dump stopped early.
#[derive(Debug)]
pub enum DumpError {
    /// Writing the output failed (e.g. a closed pipe).
    Write(io::Error),
    /// The input made Kafka's tool stop here (an exception in Kafka).
    Abort(ParseError),
    /// Reading the input failed (the machine, not the data).
    Read(io::Error),
}

impl From<io::Error> for DumpError {
    fn from(e: io::Error) -> Self {
        DumpError::Write(e)
    }
}

fn abort(pos: u64, reason: impl Into<Cow<'static, str>>) -> DumpError {
    DumpError::Abort(ParseError::new(pos, reason))
}

/// Receives the problems found while dumping that do not stop the dump.
pub trait Problems {
    /// One problem at a byte position of the file being dumped.
    fn problem(&mut self, e: ParseError);
}

impl Problems for Vec<ParseError> {
    fn problem(&mut self, e: ParseError) {
        self.push(e);
    }
}

/// What kafka-dump-log prints to stderr after all files: index mismatches,
/// time-index findings and offset gaps, keyed by absolute path.
#[derive(Debug, Default, Clone)]
pub struct Findings {
    /// (index path, [(index offset, log offset)]) in discovery order.
    pub index_mismatches: Vec<(String, Vec<(i64, i64)>)>,
    /// (time index path, [(index timestamp, log timestamp)]).
    pub time_mismatches: Vec<(String, Vec<(i64, i64)>)>,
    /// (time index path, [(index timestamp, previous index timestamp)]).
    pub out_of_order: Vec<(String, Vec<(i64, i64)>)>,
    /// (time index path, [(indexed offset, found log offset)]).
    pub not_found: Vec<(String, Vec<(i64, i64)>)>,
    /// (log path, [(offset, following offset)]).
    pub non_consecutive: Vec<(String, Vec<(i64, i64)>)>,
}

fn push_finding(list: &mut Vec<(String, Vec<(i64, i64)>)>, path: &str, pair: (i64, i64)) {
    match list.iter_mut().find(|(p, _)| p == path) {
        Some((_, v)) => v.push(pair),
        None => list.push((path.to_string(), vec![pair])),
    }
}

impl Findings {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.index_mismatches.is_empty()
            && self.time_mismatches.is_empty()
            && self.out_of_order.is_empty()
            && self.not_found.is_empty()
            && self.non_consecutive.is_empty()
    }

    /// Writes the summaries in the wording and order of `release`'s
    /// kafka-dump-log. The Scala tool (up to 4.1) keeps lists that it
    /// builds by prepending, printed newest first; the Java tool (4.2 on)
    /// keeps per-file sorted maps (index mismatches by index offset,
    /// highest first; offset gaps by offset) inside hash maps keyed by the
    /// absolute path, printed in Java's `HashMap` iteration order.
    pub fn write_to(&self, w: &mut dyn Write, release: Release) -> io::Result<()> {
        let java = release.java_tool();
        let order = |list: &Vec<(String, Vec<(i64, i64)>)>| -> Vec<usize> {
            if java {
                java_hash_map_order(list.iter().map(|(p, _)| p.as_str()))
            } else {
                (0..list.len()).collect()
            }
        };
        for i in order(&self.index_mismatches) {
            let (path, pairs) = &self.index_mismatches[i];
            writeln!(w, "Mismatches in :{path}")?;
            let pairs = if java {
                sorted_map(pairs, true)
            } else {
                pairs.iter().rev().copied().collect()
            };
            for (a, b) in pairs {
                writeln!(w, "  Index offset: {a}, log offset: {b}")?;
            }
        }
        for i in order(&self.time_mismatches) {
            let (path, pairs) = &self.time_mismatches[i];
            writeln!(w, "Found timestamp mismatch in :{path}")?;
            for (a, b) in pairs {
                writeln!(w, "  Index timestamp: {a}, log timestamp: {b}")?;
            }
        }
        for i in order(&self.out_of_order) {
            let (path, pairs) = &self.out_of_order[i];
            writeln!(w, "Found out of order timestamp in :{path}")?;
            for (a, b) in pairs {
                writeln!(
                    w,
                    "  Index timestamp: {a}, Previously indexed timestamp: {b}"
                )?;
            }
        }
        for i in order(&self.not_found) {
            let (path, pairs) = &self.not_found[i];
            if java {
                writeln!(w, "The following indexed offsets are not found in :{path}")?;
            } else {
                writeln!(w, "The following indexed offsets are not found in the log.")?;
            }
            for (a, b) in pairs {
                writeln!(w, "Indexed offset: {a}, found log offset: {b}")?;
            }
        }
        for i in order(&self.non_consecutive) {
            let (path, pairs) = &self.non_consecutive[i];
            writeln!(w, "Non-consecutive offsets in {path}")?;
            let pairs = if java {
                sorted_map(pairs, false)
            } else {
                pairs.iter().rev().copied().collect()
            };
            for (a, b) in pairs {
                writeln!(w, "  {a} is followed by {b}")?;
            }
        }
        Ok(())
    }
}

/// `pairs` put into a Java `TreeMap` in order (a later pair with the same
/// key replaces the value), read back ascending or, with `reverse`,
/// descending.
fn sorted_map(pairs: &[(i64, i64)], reverse: bool) -> Vec<(i64, i64)> {
    let mut m = std::collections::BTreeMap::new();
    for &(k, v) in pairs {
        m.insert(k, v);
    }
    if reverse {
        m.into_iter().rev().collect()
    } else {
        m.into_iter().collect()
    }
}

/// How a file is named in the output.
#[derive(Debug, Clone)]
pub struct FileNames {
    /// As `java.io.File` prints the argument (the `Dumping` line).
    pub display: String,
    /// The last path component.
    pub name: String,
    /// `File.getAbsolutePath` (summaries).
    pub absolute: String,
}

impl FileNames {
    /// Names for a path argument, relative paths resolved against `cwd`.
    pub fn new(arg: &str, cwd: &str) -> FileNames {
        let display = java_file_display(arg);
        let name = display
            .rsplit('/')
            .next()
            .unwrap_or(display.as_str())
            .to_string();
        let absolute = if display.starts_with('/') {
            display.clone()
        } else if display.is_empty() {
            java_file_display(cwd)
        } else {
            java_file_display(&format!("{}/{}", cwd, display))
        };
        // A name with a terminal escape or a line break is never printed raw
        // (Kafka's own names never hold one; kafka-dump-log would print it).
        let safe = |s: String| crate::render::text::sanitize(&s).into_owned();
        FileNames {
            display: safe(display),
            name: safe(name),
            absolute: safe(absolute),
        }
    }
}

/// `new java.io.File(path).toString()` on Unix: repeated `/` collapsed, a
/// trailing `/` dropped (except for the root).
pub fn java_file_display(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut prev_slash = false;
    for c in path.chars() {
        if c == '/' {
            if !prev_slash {
                out.push(c);
            }
            prev_slash = true;
        } else {
            out.push(c);
            prev_slash = false;
        }
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

use crate::format::names::base_offset_of;

// ------------------------------------------------------------------ writing

/// A writer that knows whether the last byte written ended a line.
struct LineTracker<'w, W: Write> {
    inner: &'w mut W,
    mid_line: bool,
}

impl<W: Write> LineTracker<'_, W> {
    /// Ends a half-written line (resync after an error mid-line).
    fn end_line(&mut self) -> io::Result<()> {
        if self.mid_line {
            self.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<W: Write> Write for LineTracker<'_, W> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        if n > 0 {
            self.mid_line = buf[n - 1] != b'\n';
        }
        Ok(n)
    }
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)?;
        if let Some(&b) = buf.last() {
            self.mid_line = b != b'\n';
        }
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[inline]
fn num<W: Write>(w: &mut W, n: impl itoa::Integer) -> io::Result<()> {
    let mut b = itoa::Buffer::new();
    w.write_all(b.format(n).as_bytes())
}

#[inline]
fn text<W: Write>(w: &mut W, bytes: &[u8]) -> io::Result<()> {
    w.write_all(java_utf8(bytes).as_bytes())
}

fn bool_str(b: bool) -> &'static [u8] {
    if b {
        b"true"
    } else {
        b"false"
    }
}

use crate::format::text::json_string;

use crate::format::text::base64;

/// Standard base64 with padding (how Jackson writes `bytes` fields).
pub fn base64_std(bytes: &[u8]) -> String {
    base64(
        bytes,
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        true,
    )
}

/// Kafka's `Uuid.toString`: URL-safe base64 without padding (22 chars).
pub fn uuid_string(u: &[u8; 16]) -> String {
    base64(
        u,
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        false,
    )
}

/// The text kafka-dump-log prints for a control record after the record
/// metadata (leading space included), or the reason it would fail.
pub fn control_record_text(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<String, Cow<'static, str>> {
    control_record_text_of(Release::NEWEST, key, value)
}

/// [`control_record_text`] as `release`'s tool prints it (before 4.1 a
/// `LeaderChange` record is only named, `controlType: LEADER_CHANGE(2)`).
pub fn control_record_text_of(
    release: Release,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<String, Cow<'static, str>> {
    let type_id = control::parse_type_id(key)?;
    let ty = ControlType::from_id(type_id);
    let (name, decoded) = release.control_type(type_id);
    if !decoded {
        return Ok(format!(" controlType: {name}({type_id})"));
    }
    let value_or_err = || value.ok_or(Cow::Borrowed("control record has a null value"));
    let mut s = String::new();
    match ty {
        ControlType::Abort | ControlType::Commit => {
            let epoch = control::parse_end_txn_marker(value)?;
            s.push_str(&format!(
                " endTxnMarker: {} coordinatorEpoch: {epoch}",
                ty.name()
            ));
        }
        ControlType::LeaderChange => {
            let m = control::parse_leader_change(value_or_err()?)?;
            s.push_str(&format!(
                " LeaderChange: {{\"version\":{},\"leaderId\":{},\"voters\":",
                m.version, m.leader_id
            ));
            let voters = |s: &mut String, list: &[control::LeaderChangeVoter]| {
                s.push('[');
                for (i, v) in list.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str(&format!("{{\"voterId\":{}", v.voter_id));
                    if m.version >= 1 {
                        s.push_str(",\"voterDirectoryId\":");
                        json_string(s, &uuid_string(&[0u8; 16]));
                    }
                    s.push('}');
                }
                s.push(']');
            };
            voters(&mut s, &m.voters);
            s.push_str(",\"grantingVoters\":");
            voters(&mut s, &m.granting_voters);
            s.push('}');
        }
        ControlType::SnapshotHeader => {
            let h = control::parse_snapshot_header(value_or_err()?)?;
            s.push_str(&format!(
                " SnapshotHeader {{\"version\":{},\"lastContainedLogTimestamp\":{}}}",
                h.version, h.last_contained_log_timestamp
            ));
        }
        ControlType::SnapshotFooter => {
            let v = control::parse_snapshot_footer(value_or_err()?)?;
            s.push_str(&format!(" SnapshotFooter {{\"version\":{v}}}"));
        }
        ControlType::KRaftVersion => {
            let k = control::parse_kraft_version(value_or_err()?)?;
            s.push_str(&format!(
                " KRaftVersion {{\"version\":{},\"kRaftVersion\":{}}}",
                k.version, k.kraft_version
            ));
        }
        ControlType::KRaftVoters => {
            let v = control::parse_voters(value_or_err()?)?;
            s.push_str(&format!(
                " KRaftVoters {{\"version\":{},\"voters\":[",
                v.version
            ));
            for (i, voter) in v.voters.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&format!(
                    "{{\"voterId\":{},\"voterDirectoryId\":",
                    voter.voter_id
                ));
                json_string(&mut s, &uuid_string(&voter.voter_directory_id));
                s.push_str(",\"endpoints\":[");
                for (j, e) in voter.endpoints.iter().enumerate() {
                    if j > 0 {
                        s.push(',');
                    }
                    s.push_str("{\"name\":");
                    json_string(&mut s, &e.name);
                    s.push_str(",\"host\":");
                    json_string(&mut s, &e.host);
                    s.push_str(&format!(",\"port\":{}}}", e.port));
                }
                s.push_str(&format!(
                    "],\"kRaftVersionFeature\":{{\"minSupportedVersion\":{},\"maxSupportedVersion\":{}}}}}",
                    voter.min_supported_version, voter.max_supported_version
                ));
            }
            s.push_str("]}");
        }
        ControlType::Unknown => {
            s.push_str(&format!(" controlType: {}({type_id})", ty.name()));
        }
    }
    Ok(s)
}

// ------------------------------------------------------------------ dumping

/// After a step of a walk that is not a batch: a failed read or, without
/// `--resync`, an entry that does not frame ends the dump; with it, the
/// damage is a problem and the walk goes on after it, a second problem
/// saying how far (the position it resumes at is returned). A torn tail is
/// kept in `tail`, for the caller to report if the dump reads to the end.
fn past_damage(
    step: Step<'_>,
    resync: bool,
    problems: &mut dyn Problems,
    tail: &mut Option<Tail>,
) -> Result<Option<u64>, DumpError> {
    match step {
        Step::Io(e) => Err(DumpError::Read(e)),
        Step::Bad(e) if !resync => Err(DumpError::Abort(e)),
        Step::Bad(e) => {
            problems.problem(e);
            Ok(None)
        }
        Step::Skipped(s) => {
            problems.problem(ParseError::new(
                s.from,
                format!(
                    "resync: skipped {} bytes, resuming at {}",
                    s.to - s.from,
                    s.to
                ),
            ));
            Ok(Some(s.to))
        }
        Step::Tail(t) => {
            *tail = Some(t);
            Ok(None)
        }
        // batches are the caller's
        Step::Batch(_) | Step::BadCrc(..) => Ok(None),
    }
}

/// What [`Render::admit`] says of a record.
enum Admit {
    /// Write it.
    Show,
    /// Leave it out and go on.
    Skip,
    /// Leave it and the rest of the batch out.
    Stop,
}

/// Problems passed on and counted.
struct Counted<'p> {
    inner: &'p mut dyn Problems,
    count: usize,
}

impl Problems for Counted<'_> {
    fn problem(&mut self, e: ParseError) {
        self.count += 1;
        self.inner.problem(e);
    }
}

/// State shared by the files of one run.
pub struct Dumper<'o> {
    /// Options.
    pub opts: Options,
    /// Key/payload formatter.
    pub formatter: &'o mut dyn RecordFormatter,
    /// Summaries collected.
    pub findings: Findings,
    scratch: Vec<u8>,
    /// Buffers of batches rendered ahead, kept for the next ones (a fresh
    /// buffer costs a page fault per page).
    spare: std::sync::Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
    /// The last dump stopped in the middle of a line (kafka-dump-log's run
    /// ends there; klf ends the line before the next file's).
    mid_line: bool,
}

/// Bytes of batches one task renders ahead ([`Dumper`], kafka format).
const RENDER_CHUNK: u64 = 1 << 20;
/// Tasks per core rendered ahead at a time.
const RENDER_CHUNKS: u64 = 4;

/// Batches rendered ahead: their text, what they found, and where they are.
struct Rendered {
    start: u64,
    end: u64,
    entries: usize,
    text: Vec<u8>,
    scratch: Vec<u8>,
    problems: Vec<ParseError>,
    offsets: OffsetGaps,
    error: Option<DumpError>,
}

/// Kafka's offset-gap tracking: each record's offset against the one
/// before (the Java tool from 4.2 compares the first with -1 too; the
/// Scala tool starts at the first). A chunk of batches rendered ahead
/// does not know the offset before it: it keeps its first and is
/// [`OffsetGaps::absorb`]ed by the file's, in order.
struct OffsetGaps {
    java: bool,
    first: Option<i64>,
    last: Option<i64>,
    gaps: Vec<(i64, i64)>,
}

impl OffsetGaps {
    /// A file's, from its start.
    fn file(java: bool) -> Self {
        OffsetGaps {
            java,
            first: None,
            last: Some(-1),
            gaps: Vec::new(),
        }
    }

    /// A chunk's, not knowing the offset before it.
    fn chunk(java: bool) -> Self {
        OffsetGaps {
            java,
            first: None,
            last: None,
            gaps: Vec::new(),
        }
    }

    fn track(&mut self, offset: i64) {
        match self.last {
            None => self.first = Some(offset),
            // The Scala tool takes -1 for "no offset yet".
            Some(last) if (self.java || last != -1) && offset != last.wrapping_add(1) => {
                self.gaps.push((last, offset));
            }
            Some(_) => {}
        }
        self.last = Some(offset);
    }

    /// The chunk that follows what this one tracked.
    fn absorb(&mut self, chunk: OffsetGaps) {
        if let Some(first) = chunk.first {
            self.track(first);
            self.gaps.extend(chunk.gaps);
            self.last = chunk.last;
        }
    }
}

/// The text of the `entries` batches from `start` (to `end`) of `ahead`.
fn render_chunk(
    opts: &Options,
    formatter: &mut dyn RecordFormatter,
    ahead: &SegmentIter<'_>,
    (start, end, entries): (u64, u64, usize),
    (mut text, mut scratch): (Vec<u8>, Vec<u8>),
) -> Rendered {
    let mut offsets = OffsetGaps::chunk(opts.release.java_tool());
    text.clear();
    let _ = crate::format::memory::fallible(|| {
        text.try_reserve(usize::try_from(end - start).unwrap_or(0))
    });
    let mut problems = Vec::new();
    let mut error = None;
    let mut it = ahead.sub_range(start, end);
    let mut tracker = LineTracker {
        inner: &mut text,
        mid_line: false,
    };
    for _ in 0..entries {
        let Some(Ok(batch)) = it.next() else { break };
        let valid = checksum_matches(&batch);
        let mut render = Render {
            opts,
            formatter: &mut *formatter,
            offsets: &mut offsets,
            scratch: &mut scratch,
            pick: None,
            shown: 0,
        };
        let position = batch.position();
        if let Err(e) = render.batch(&mut tracker, &batch, position, valid, &mut problems) {
            error = Some(e);
            break;
        }
    }
    Rendered {
        start,
        end,
        entries,
        text,
        scratch,
        problems,
        offsets,
        error,
    }
}

/// Whether a v2 batch's checksum matches, as [`Render::batch`] is told
/// (a legacy entry: `true`, it is checked where it is printed).
fn checksum_matches(batch: &Batch<'_>) -> bool {
    match batch {
        Batch::V2(v) => v.is_valid(),
        Batch::Legacy(_) => true,
    }
}

/// What writes one batch's text: the options, the key/payload formatter,
/// the offset tracking and a buffer for decompression.
struct Render<'r> {
    opts: &'r Options,
    formatter: &'r mut dyn RecordFormatter,
    offsets: &'r mut OffsetGaps,
    scratch: &'r mut Vec<u8>,
    /// Only the records this picks are written (a part of the log).
    pick: Option<&'r mut Pick>,
    /// Records written.
    shown: u64,
}

impl Render<'_> {
    /// A batch's line and, deep, its records; `position` as the line says
    /// it, `valid` whether its checksum matches. With `--resync`, an error
    /// ends the line and is a problem, and the dump goes on.
    fn batch<W: Write>(
        &mut self,
        w: &mut LineTracker<'_, W>,
        batch: &Batch<'_>,
        position: u64,
        valid: bool,
        problems: &mut dyn Problems,
    ) -> Result<(), DumpError> {
        match self.write_batch_line(w, batch, position, valid) {
            Err(DumpError::Abort(e)) if self.opts.resync => {
                w.end_line()?;
                problems.problem(e);
                return Ok(());
            }
            r => r?,
        }
        // The checksum was computed ahead; only a bad one is worked out
        // again, for its message.
        if !valid || matches!(batch, Batch::Legacy(_)) {
            if let Err(e) = batch.check_crc() {
                problems.problem(e);
            }
        }
        if self.opts.deep {
            match self.write_records(w, batch, position) {
                Err(DumpError::Abort(e)) if self.opts.resync => {
                    w.end_line()?;
                    problems.problem(e);
                }
                r => r?,
            }
        }
        Ok(())
    }

    /// `valid`: whether a v2 batch's checksum matches (computed by the
    /// caller); legacy entries check their own.
    fn write_batch_line<W: Write>(
        &mut self,
        w: &mut W,
        batch: &Batch<'_>,
        position: u64,
        valid: bool,
    ) -> Result<(), DumpError> {
        match batch {
            Batch::V2(b) => {
                w.write_all(b"baseOffset: ")?;
                num(w, b.base_offset())?;
                w.write_all(b" lastOffset: ")?;
                num(w, b.last_offset())?;
                w.write_all(b" count: ")?;
                num(w, b.records_count())?;
                w.write_all(b" baseSequence: ")?;
                num(w, b.base_sequence())?;
                w.write_all(b" lastSequence: ")?;
                num(w, b.last_sequence())?;
                w.write_all(b" producerId: ")?;
                num(w, b.producer_id())?;
                w.write_all(b" producerEpoch: ")?;
                num(w, b.producer_epoch())?;
                w.write_all(b" partitionLeaderEpoch: ")?;
                num(w, b.partition_leader_epoch())?;
                w.write_all(b" isTransactional: ")?;
                w.write_all(bool_str(b.is_transactional()))?;
                w.write_all(b" isControl: ")?;
                w.write_all(bool_str(b.is_control()))?;
                if self.opts.release.batch_delete_horizon() {
                    w.write_all(b" deleteHorizonMs: ")?;
                    match b.delete_horizon_ms() {
                        Some(ms) => {
                            w.write_all(b"OptionalLong[")?;
                            num(w, ms)?;
                            w.write_all(b"]")?;
                        }
                        None => w.write_all(b"OptionalLong.empty")?,
                    }
                }
                let codec = b.compression().ok_or_else(|| {
                    abort(
                        b.position + 21,
                        format!("unknown compression type id {}", b.compression_id()),
                    )
                })?;
                w.write_all(b" position: ")?;
                num(w, position)?;
                w.write_all(b" ")?;
                w.write_all(b.timestamp_type().name().as_bytes())?;
                w.write_all(b": ")?;
                num(w, b.max_timestamp())?;
                w.write_all(b" size: ")?;
                num(w, b.size_in_bytes())?;
                w.write_all(b" magic: ")?;
                num(w, b.magic())?;
                w.write_all(b" compresscodec: ")?;
                w.write_all(self.codec_text(codec))?;
                w.write_all(b" crc: ")?;
                num(w, b.crc())?;
                w.write_all(b" isvalid: ")?;
                w.write_all(bool_str(valid))?;
                w.write_all(b"\n")?;
            }
            Batch::Legacy(e) => {
                w.write_all(b"offset: ")?;
                num(w, e.offset)?;
                e.check_magic().map_err(DumpError::Abort)?;
                let r = e.record();
                let codec = r.compression().ok_or_else(|| {
                    abort(
                        e.position + 17,
                        format!("unknown compression type id {}", r.attributes() & 7),
                    )
                })?;
                w.write_all(b" position: ")?;
                num(w, position)?;
                w.write_all(b" ")?;
                w.write_all(r.timestamp_type().name().as_bytes())?;
                w.write_all(b": ")?;
                num(w, r.timestamp())?;
                w.write_all(b" size: ")?;
                num(w, e.bytes().len())?;
                w.write_all(b" magic: ")?;
                num(w, e.magic)?;
                w.write_all(b" compresscodec: ")?;
                w.write_all(self.codec_text(codec))?;
                w.write_all(b" crc: ")?;
                num(w, r.crc())?;
                w.write_all(b" isvalid: ")?;
                w.write_all(bool_str(r.is_valid()))?;
                w.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// A codec as this release prints it.
    fn codec_text(&self, codec: crate::format::codec::Codec) -> &'static [u8] {
        if self.opts.release.codec_constants() {
            codec.constant().as_bytes()
        } else {
            codec.name().as_bytes()
        }
    }

    /// Whether the record at `offset` with `key` is written: every one in
    /// a whole dump (its offset tracked for gaps), the ones the pick
    /// selects in a part. Counts what is shown.
    fn admit(&mut self, offset: i64, key: Option<&[u8]>) -> Admit {
        match self.pick.as_deref_mut() {
            None => self.offsets.track(offset),
            Some(p) if p.past(offset) => return Admit::Stop,
            Some(p) if !p.record(offset, key) => return Admit::Skip,
            Some(p) => {
                if !p.take() {
                    return Admit::Stop;
                }
            }
        }
        self.shown += 1;
        Admit::Show
    }

    /// `position`: where the batch is, as the batch line says.
    fn write_records<W: Write>(
        &mut self,
        w: &mut W,
        batch: &Batch<'_>,
        position: u64,
    ) -> Result<(), DumpError> {
        let mut scratch = std::mem::take(self.scratch);
        let r = match batch {
            Batch::V2(b) => self.write_v2_records(w, b, &mut scratch, position),
            Batch::Legacy(e) => self.write_legacy_records(w, e, &mut scratch, position),
        };
        *self.scratch = scratch;
        r
    }

    fn write_v2_records<W: Write>(
        &mut self,
        w: &mut W,
        b: &RecordBatch<'_>,
        scratch: &mut Vec<u8>,
        position: u64,
    ) -> Result<(), DumpError> {
        let records = b
            .records(scratch, self.opts.decompress_cap)
            .map_err(DumpError::Abort)?;
        let control = b.is_control();
        let ts_type = b.timestamp_type().name().as_bytes();
        let with_batch = self.opts.release.record_line_with_batch();
        for rec in records {
            let rec = rec.map_err(DumpError::Abort)?;
            match self.admit(rec.offset, rec.key) {
                Admit::Show => {}
                Admit::Skip => continue,
                Admit::Stop => break,
            }
            let mut pipe = true;
            if !self.opts.skip_record_metadata {
                if with_batch {
                    let codec = b.compression().map_or(&b""[..], |c| self.codec_text(c));
                    let batch = BatchFields {
                        base_offset: b.base_offset(),
                        last_offset: b.last_offset(),
                        base_sequence: b.base_sequence(),
                        last_sequence: b.last_sequence(),
                        producer_epoch: b.producer_epoch().into(),
                        partition_leader_epoch: b.partition_leader_epoch(),
                        size: b.size_in_bytes(),
                        magic: b.magic().into(),
                        codec,
                        position,
                    };
                    write_record_batch_fields(
                        w,
                        rec.offset,
                        (true, None),
                        (rec.key_size(), rec.value_size()),
                        ts_type,
                        rec.timestamp,
                        &batch,
                    )?;
                    write_v2_sequence_headers(w, &rec)?;
                } else {
                    write_v2_metadata(w, ts_type, &rec)?;
                }
                if control {
                    let t = control_record_text_of(self.opts.release, rec.key, rec.value).map_err(
                        |r| {
                            abort(
                                b.position,
                                format!("control record at offset {}: {r}", rec.offset),
                            )
                        },
                    )?;
                    w.write_all(t.as_bytes())?;
                }
                pipe = false;
            }
            if self.opts.print_data && !control {
                self.write_key_payload(w, rec.offset, rec.key, rec.value, pipe, b.position)?;
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    }

    fn write_key_payload<W: Write>(
        &mut self,
        w: &mut W,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        pipe: bool,
        pos: u64,
    ) -> Result<(), DumpError> {
        let (k, p) = self
            .formatter
            .format(&RecordRef { offset, key, value })
            .map_err(|r| abort(pos, format!("record at offset {offset}: {r}")))?;
        if let Some(k) = k {
            w.write_all(if pipe { b"| key: " } else { b" key: " })?;
            w.write_all(k.as_bytes())?;
        }
        if let Some(p) = p {
            w.write_all(b" payload: ")?;
            w.write_all(p.as_bytes())?;
        }
        Ok(())
    }

    fn write_legacy_records<W: Write>(
        &mut self,
        w: &mut W,
        e: &LegacyEntry<'_>,
        scratch: &mut Vec<u8>,
        position: u64,
    ) -> Result<(), DumpError> {
        let outer = e.record();
        let ts_type = outer.timestamp_type().name().as_bytes();
        let with_batch = self.opts.release.record_line_with_batch();
        // 2.8's record line names the wrapper's base offset: its first
        // message's (read ahead; the messages are in memory already)
        let base_offset = if with_batch && !self.opts.skip_record_metadata {
            let mut ahead = Vec::new();
            match e
                .records(&mut ahead, self.opts.decompress_cap)
                .map(|mut m| m.next())
            {
                Ok(Some(Ok(first))) => first.offset,
                _ => e.offset,
            }
        } else {
            e.offset
        };
        let msgs = e
            .records(scratch, self.opts.decompress_cap)
            .map_err(DumpError::Abort)?;
        for m in msgs {
            let m = m.map_err(DumpError::Abort)?;
            match self.admit(m.offset, m.record.key().ok().flatten()) {
                Admit::Show => {}
                Admit::Skip => continue,
                Admit::Stop => break,
            }
            let mut pipe = true;
            if !self.opts.skip_record_metadata {
                if with_batch {
                    let ks = m.record.key_size().map_err(|r| abort(e.position, r))?;
                    let vs = m.record.value_size().map_err(|r| abort(e.position, r))?;
                    let codec = outer.compression().map_or(&b""[..], |c| self.codec_text(c));
                    let batch = BatchFields {
                        base_offset,
                        last_offset: e.offset,
                        base_sequence: -1,
                        last_sequence: -1,
                        producer_epoch: -1,
                        partition_leader_epoch: -1,
                        size: e.bytes().len() as i64,
                        magic: e.magic.into(),
                        codec,
                        position,
                    };
                    let valid = m.record.is_valid();
                    write_record_batch_fields(
                        w,
                        m.offset,
                        (valid, Some(m.record.crc())),
                        (ks, vs),
                        ts_type,
                        m.record.timestamp(),
                        &batch,
                    )?;
                    w.write_all(b" crc: ")?;
                    num(w, m.record.crc())?;
                    w.write_all(b" isvalid: ")?;
                    w.write_all(bool_str(valid))?;
                } else {
                    let brace = self.opts.release.legacy_crc_brace();
                    write_legacy_metadata(w, ts_type, m.offset, &m.record, e.position, brace)?;
                }
                pipe = false;
            }
            if self.opts.print_data {
                let key = m.record.key().map_err(|r| abort(e.position, r))?;
                let value = m.record.value().map_err(|r| abort(e.position, r))?;
                self.write_key_payload(w, m.offset, key, value, pipe, e.position)?;
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<'o> Dumper<'o> {
    /// A dumper.
    pub fn new(opts: Options, formatter: &'o mut dyn RecordFormatter) -> Self {
        Dumper {
            opts,
            formatter,
            findings: Findings::default(),
            scratch: Vec::new(),
            spare: std::sync::Mutex::new(Vec::new()),
            mid_line: false,
        }
    }

    /// Dumps the next files as `release`'s tool does.
    pub fn set_release(&mut self, release: Release) {
        self.opts.release = release;
        self.formatter.set_release(release);
    }

    /// `Dumping <file>` line.
    /// A dump that stopped mid-line (where kafka-dump-log's whole run
    /// would end) gets its line ended first.
    pub fn write_dumping<W: Write>(&mut self, w: &mut W, names: &FileNames) -> io::Result<()> {
        if std::mem::take(&mut self.mid_line) {
            w.write_all(b"\n")?;
        }
        w.write_all(b"Dumping ")?;
        w.write_all(names.display.as_bytes())?;
        w.write_all(b"\n")
    }

    /// Dumps a `.log` (or KRaft `.checkpoint`) file: its bytes in memory, or
    /// any other [`SegmentSource`] (a file read a window at a time).
    pub fn dump_log<W: Write>(
        &mut self,
        w: &mut W,
        names: &FileNames,
        log: &dyn SegmentSource,
        problems: &mut dyn Problems,
    ) -> Result<(), DumpError> {
        let mut tracker = LineTracker {
            inner: w,
            mid_line: false,
        };
        let r = self.dump_log_lines(&mut tracker, names, log, problems);
        self.mid_line = tracker.mid_line;
        r
    }

    fn dump_log_lines<W: Write>(
        &mut self,
        w: &mut LineTracker<'_, W>,
        names: &FileNames,
        log: &dyn SegmentSource,
        problems: &mut dyn Problems,
    ) -> Result<(), DumpError> {
        self.write_log_header(w, names)?;
        let slice_end = (self.opts.max_bytes.max(0) as u64).min(log.len());
        let full = self.opts.max_bytes == i32::MAX;
        // Records rendered ahead on every core, in order, when the
        // formatter's text does not depend on what came before; the
        // checksums of those batches are worked out where they are
        // rendered. A shallow dump's lines are few: its walk checks each
        // batch as it reads it, which streams the batch from memory once
        // (the next header follows it, where the hardware fetches ahead).
        let forks =
            self.opts.deep && rayon::current_num_threads() > 1 && self.formatter.fork().is_some();
        let checksums = if forks {
            Checksums::Unchecked
        } else {
            Checksums::Mark
        };
        let mut walk = Walk::new(log.entries(0, slice_end))
            .resync(self.opts.resync)
            .checksums(checksums);
        let mut valid_bytes: u64 = 0;
        let mut tail = None;
        let mut offsets = OffsetGaps::file(self.opts.release.java_tool());
        let mut ready: std::collections::VecDeque<Rendered> = std::collections::VecDeque::new();
        let r = (|| -> Result<(), DumpError> {
            loop {
                if forks && ready.is_empty() && valid_bytes == walk.position() {
                    ready = self.render_ahead(walk.ahead(), walk.page_in());
                }
                if let Some(chunk) = ready.pop_front() {
                    if chunk.start == walk.position() {
                        w.write_all(&chunk.text)?;
                        if let Ok(mut spare) = self.spare.lock() {
                            spare.push((chunk.text, chunk.scratch));
                        }
                        for e in chunk.problems {
                            problems.problem(e);
                        }
                        offsets.absorb(chunk.offsets);
                        if let Some(e) = chunk.error {
                            return Err(e);
                        }
                        // the walk moves over the batches rendered
                        for _ in 0..chunk.entries {
                            match walk.next() {
                                Some(Step::Batch(_)) => {}
                                Some(Step::Io(e)) => return Err(DumpError::Read(e)),
                                _ => {
                                    return Err(abort(
                                        walk.position(),
                                        "the segment changed while it was read",
                                    ))
                                }
                            }
                        }
                        valid_bytes = chunk.end;
                        continue;
                    }
                    ready.clear();
                }
                let (batch, valid) = match walk.next() {
                    None => break,
                    Some(Step::Batch(b)) => {
                        let valid = !forks || checksum_matches(&b);
                        (b, valid)
                    }
                    Some(Step::BadCrc(b, _)) => (b, false),
                    Some(step) => {
                        if let Some(to) = past_damage(step, self.opts.resync, problems, &mut tail)?
                        {
                            valid_bytes = to;
                        }
                        continue;
                    }
                };
                let mut render = Render {
                    opts: &self.opts,
                    formatter: &mut *self.formatter,
                    offsets: &mut offsets,
                    scratch: &mut self.scratch,
                    pick: None,
                    shown: 0,
                };
                render.batch(w, &batch, valid_bytes, valid, problems)?;
                valid_bytes += batch.size_in_bytes();
            }
            Ok(())
        })();
        for gap in std::mem::take(&mut offsets.gaps) {
            push_finding(&mut self.findings.non_consecutive, &names.absolute, gap);
        }
        r?;
        let trailing = slice_end.saturating_sub(valid_bytes);
        if trailing > 0 && full {
            w.write_all(b"Found ")?;
            num(w, trailing)?;
            w.write_all(b" invalid bytes at the end of ")?;
            w.write_all(names.name.as_bytes())?;
            w.write_all(b"\n")?;
        }
        if full {
            if let Some(t) = tail {
                problems.problem(ParseError::new(t.position, t.describe()));
            }
        }
        Ok(())
    }

    /// The lines before a `.log`'s batches (`Log starting offset: N`) or a
    /// KRaft snapshot's (`Snapshot end offset: ...`).
    fn write_log_header<W: Write>(&self, w: &mut W, names: &FileNames) -> Result<(), DumpError> {
        if names.name.ends_with(".log") {
            let base = base_offset_of(&names.name).ok_or_else(|| {
                abort(
                    0,
                    format!("cannot parse a base offset from file name {}", names.name),
                )
            })?;
            w.write_all(self.opts.release.log_start_label().as_bytes())?;
            num(w, base)?;
            w.write_all(b"\n")?;
        } else if names.name.ends_with(".checkpoint") {
            if names.name == "bootstrap.checkpoint" {
                w.write_all(b"KRaft bootstrap snapshot\n")?;
            } else {
                let (offset, epoch) = snapshot_id(&names.name).ok_or_else(|| {
                    abort(
                        0,
                        format!(
                            "snapshot file name {} is not <20-digit offset>-<10-digit epoch>.checkpoint",
                            names.name
                        ),
                    )
                })?;
                writeln!(w, "Snapshot end offset: {offset}, epoch: {epoch}")?;
            }
        }
        Ok(())
    }

    /// Dumps the part of a `.log` (or KRaft snapshot) `pick` selects, in kafka-dump-log's
    /// lines: the batches holding picked records (with `--deep-iteration`,
    /// each followed by its picked records only; without, at most the
    /// pick's count of batches), read from the pick's start position on.
    /// Every line is the line kafka-dump-log prints for that batch or
    /// record; the lines about the whole file (offset gaps, invalid bytes
    /// at the end) are left out.
    pub fn dump_log_picked<W: Write>(
        &mut self,
        w: &mut W,
        names: &FileNames,
        log: &dyn SegmentSource,
        mut pick: Pick,
        problems: &mut dyn Problems,
    ) -> Result<(), DumpError> {
        let mut tracker = LineTracker {
            inner: w,
            mid_line: false,
        };
        let w = &mut tracker;
        let r = self.write_log_header(w, names);
        if r.is_err() {
            self.mid_line = tracker.mid_line;
            return r;
        }
        let w = &mut tracker;
        let to_the_end = self.opts.max_bytes == i32::MAX && pick.end == log.len();
        let selects = pick.clone();
        let mut walk = Walk::new(log.entries(pick.start, pick.end))
            .resync(self.opts.resync)
            // a compressed wrapper's offset is its last message's
            .keep(move |b| selects.holds(b));
        // offset gaps are a whole file's finding: not tracked for a part
        let mut offsets = OffsetGaps::file(self.opts.release.java_tool());
        let mut buffer: Vec<u8> = Vec::new();
        let mut problems = Counted {
            inner: problems,
            count: 0,
        };
        let mut tail = None;
        let r = (|| -> Result<(), DumpError> {
            while !pick.done() {
                let batch = match walk.next() {
                    None => break,
                    Some(Step::Batch(b) | Step::BadCrc(b, _)) => b,
                    Some(step) => {
                        past_damage(step, self.opts.resync, &mut problems, &mut tail)?;
                        continue;
                    }
                };
                let position = batch.position();
                let valid = batch.check_crc().is_ok();
                if !self.opts.deep && !pick.take() {
                    break;
                }
                let mut render = Render {
                    opts: &self.opts,
                    formatter: &mut *self.formatter,
                    offsets: &mut offsets,
                    scratch: &mut self.scratch,
                    pick: self.opts.deep.then_some(&mut pick),
                    shown: 0,
                };
                if !render.opts.deep {
                    render.batch(w, &batch, position, valid, &mut problems)?;
                    continue;
                }
                // deep: the batch's line only before a record it holds, or
                // before what went wrong in it
                buffer.clear();
                let mut lines = LineTracker {
                    inner: &mut buffer,
                    mid_line: false,
                };
                let before = problems.count;
                let done = render.batch(&mut lines, &batch, position, valid, &mut problems);
                let mid_line = lines.mid_line;
                if render.shown > 0 || done.is_err() || problems.count > before {
                    w.write_all(&buffer)?;
                    w.mid_line = mid_line;
                }
                done?;
            }
            Ok(())
        })();
        self.mid_line = tracker.mid_line;
        r?;
        // bytes after the last batch that frames are damage, as in a dump of
        // the whole file (its "invalid bytes" line is about the whole file)
        if let (true, Some(t)) = (to_the_end, tail) {
            problems.problem(ParseError::new(t.position, t.describe()));
        }
        Ok(())
    }

    /// Renders, on every core, the batches of `ahead` (those already in
    /// memory from the next one on) up to the first that does not frame:
    /// about [`RENDER_CHUNK`] bytes of batches per task, [`RENDER_CHUNKS`]
    /// tasks per core at a time. Less than two tasks' worth is left to the
    /// sequential path.
    fn render_ahead(
        &self,
        ahead: SegmentIter<'_>,
        page_in: Option<fn(&[u8])>,
    ) -> std::collections::VecDeque<Rendered> {
        let most = RENDER_CHUNK * RENDER_CHUNKS * rayon::current_num_threads() as u64;
        let mut plan: Vec<(u64, u64, usize)> = Vec::new();
        let (mut start, mut bytes, mut n) = (ahead.position(), 0u64, 0usize);
        let mut total = 0u64;
        for item in ahead.sub_range(ahead.position(), u64::MAX) {
            let Ok(b) = item else { break };
            let size = b.size_in_bytes();
            bytes += size;
            total += size;
            n += 1;
            if bytes >= RENDER_CHUNK {
                plan.push((start, b.position() + size, n));
                start = b.position() + size;
                bytes = 0;
                n = 0;
            }
            if total >= most {
                break;
            }
        }
        if n > 0 {
            plan.push((start, start + bytes, n));
        }
        if plan.len() < 2 {
            return std::collections::VecDeque::new();
        }
        let chunks = plan.len() as u64;
        let mut formatters = Vec::with_capacity(plan.len());
        for _ in &plan {
            match self.formatter.fork() {
                Some(f) => formatters.push(f),
                None => return std::collections::VecDeque::new(),
            }
        }
        let opts = &self.opts;
        let ahead = &ahead;
        let spare = &self.spare;
        // The pages of the next round are mapped in meanwhile, a piece per
        // task among the rendering tasks, not by the thread that scans
        // their headers next.
        let after = plan.last().map_or(0, |p| p.1);
        let pieces = page_in.map_or(0, |_| {
            ahead
                .bytes_at(after, most)
                .len()
                .div_ceil(RENDER_CHUNK as usize)
        });
        // a chunk to render with its formatter, or (None) a piece to map in
        type Task = Option<((u64, u64, usize), Box<dyn RecordFormatter + Send>)>;
        let tasks: Vec<Task> = plan
            .into_iter()
            .zip(formatters)
            .map(Some)
            .chain((0..pieces).map(|_| None))
            .collect();
        use rayon::prelude::*;
        let rendered: Vec<Option<Rendered>> = tasks
            .into_par_iter()
            .enumerate()
            .map(|(i, task)| match task {
                Some(((start, end, entries), mut f)) => {
                    let buffers = spare
                        .lock()
                        .ok()
                        .and_then(|mut s| s.pop())
                        .unwrap_or_default();
                    Some(render_chunk(
                        opts,
                        &mut *f,
                        ahead,
                        (start, end, entries),
                        buffers,
                    ))
                }
                None => {
                    if let Some(page_in) = page_in {
                        let piece = (i as u64).saturating_sub(chunks) * RENDER_CHUNK;
                        page_in(ahead.bytes_at(after + piece, RENDER_CHUNK));
                    }
                    None
                }
            })
            .collect();
        rendered.into_iter().flatten().collect()
    }

    /// Dumps a `.index` file. `log` is the `.log` of the same base offset.
    pub fn dump_index<'i, W: Write>(
        &mut self,
        w: &mut W,
        names: &FileNames,
        index: impl Into<IndexBytes<'i>>,
        log: &dyn SegmentSource,
    ) -> Result<(), DumpError> {
        let base = base_offset_of(&names.name).ok_or_else(|| {
            abort(
                0,
                format!("cannot parse a base offset from file name {}", names.name),
            )
        })?;
        let idx = OffsetIndex::of(index.into(), base);
        if idx.entries() == 0 {
            w.write_all(names.display.as_bytes())?;
            w.write_all(b" is empty.\n")?;
            return Ok(());
        }
        if self.opts.index_sanity_only {
            idx.sanity_check()
                .map_err(|e| abort(0, format!("corrupt index: {e}")))?;
            w.write_all(names.display.as_bytes())?;
            w.write_all(b" passed sanity check.\n")?;
            return Ok(());
        }
        for i in 0..idx.entries() {
            let Some(entry) = idx.entry(i) else { break };
            if entry.offset == base && i > 0 {
                return Ok(());
            }
            let slot_pos = (i * 8) as u64;
            let last = first_last_offset_at(log, entry.position, self.opts.max_message_size)?
                .map_err(|r| {
                    abort(
                        slot_pos,
                        format!(
                            "index slot {i} (offset {}, position {}): {r}",
                            entry.offset, entry.position
                        ),
                    )
                })?;
            if last != entry.offset {
                push_finding(
                    &mut self.findings.index_mismatches,
                    &names.absolute,
                    (entry.offset, last),
                );
            }
            if !self.opts.verify_only {
                w.write_all(b"offset: ")?;
                num(w, entry.offset)?;
                w.write_all(b" position: ")?;
                num(w, entry.position)?;
                w.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// Dumps a `.timeindex` file. `index` is the `.index` of the same base
    /// offset (`None` when it does not exist: lookups then give position 0),
    /// `log` the `.log`.
    pub fn dump_time_index<'i, W: Write>(
        &mut self,
        w: &mut W,
        names: &FileNames,
        time_index: impl Into<IndexBytes<'i>>,
        index: Option<IndexBytes<'i>>,
        log: &dyn SegmentSource,
    ) -> Result<(), DumpError> {
        let base = base_offset_of(&names.name).ok_or_else(|| {
            abort(
                0,
                format!("cannot parse a base offset from file name {}", names.name),
            )
        })?;
        // kafka-dump-log opens the segment's offset index first, in every
        // mode; a missing one (Kafka creates indexes lazily: an active
        // segment may have none yet) stops the run there, and leaves an
        // empty .index behind, which klf does not write
        let Some(index) = index else {
            return Err(abort(
                0,
                "no offset index beside this time index: kafka-dump-log stops here (IllegalArgumentException: Invalid max index size: -1); --format json or table read it",
            ));
        };
        let tidx = TimeIndex::of(time_index.into(), base);
        let oidx = OffsetIndex::of(index, base);
        if self.opts.index_sanity_only {
            tidx.sanity_check()
                .map_err(|e| abort(0, format!("corrupt time index: {e}")))?;
            w.write_all(names.display.as_bytes())?;
            w.write_all(b" passed sanity check.\n")?;
            return Ok(());
        }
        let mut prev_ts: i64 = -1;
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = (|| -> Result<(), DumpError> {
            for i in 0..tidx.entries() {
                let Some(entry) = tidx.entry(i) else { break };
                if entry.offset == base && i > 0 {
                    return Ok(());
                }
                let slot_pos = (i * 12) as u64;
                let position = oidx.lookup(entry.offset).position;
                let ctx = |r: Cow<'static, str>| {
                    abort(
                        slot_pos,
                        format!(
                            "time index slot {i} (timestamp {}, offset {}): {r}",
                            entry.timestamp, entry.offset
                        ),
                    )
                };
                if position < 0 || position as u64 > log.len() {
                    return Err(ctx(format!(
                        "position {position} is outside the log ({} bytes)",
                        log.len()
                    )
                    .into()));
                }
                // The first batch from the slot's position holding its
                // offset: its last offset and its greatest record timestamp.
                let mut walk =
                    Walk::new(log.entries(position as u64, log.len())).from(entry.offset);
                let found = match walk.next() {
                    Some(Step::Batch(b) | Step::BadCrc(b, _)) => {
                        let max_ts = if b.last_offset() == entry.offset {
                            Some(
                                max_record_timestamp(&b, &mut scratch, self.opts.decompress_cap)
                                    .map_err(|e| {
                                        ctx(format!("byte {}: {}", e.pos, e.reason).into())
                                    })?,
                            )
                        } else {
                            None
                        };
                        Some((b.last_offset(), max_ts))
                    }
                    Some(Step::Bad(e)) => {
                        return Err(ctx(format!("byte {}: {}", e.pos, e.reason).into()))
                    }
                    Some(Step::Io(e)) => return Err(DumpError::Read(e)),
                    Some(Step::Skipped(_) | Step::Tail(_)) | None => None,
                };
                match found {
                    None => push_finding(
                        &mut self.findings.not_found,
                        &names.absolute,
                        (entry.offset, -1),
                    ),
                    Some((last, _)) if last != entry.offset => push_finding(
                        &mut self.findings.not_found,
                        &names.absolute,
                        (entry.offset, last),
                    ),
                    Some((_, max_ts)) => {
                        let max_ts = max_ts.unwrap_or(-1);
                        if max_ts != entry.timestamp {
                            push_finding(
                                &mut self.findings.time_mismatches,
                                &names.absolute,
                                (entry.timestamp, max_ts),
                            );
                        }
                        if prev_ts >= entry.timestamp {
                            push_finding(
                                &mut self.findings.out_of_order,
                                &names.absolute,
                                (entry.timestamp, prev_ts),
                            );
                        }
                    }
                }
                if !self.opts.verify_only {
                    w.write_all(b"timestamp: ")?;
                    num(w, entry.timestamp)?;
                    w.write_all(b" offset: ")?;
                    num(w, entry.offset)?;
                    w.write_all(b"\n")?;
                }
                prev_ts = entry.timestamp;
            }
            Ok(())
        })();
        self.scratch = scratch;
        result
    }
}

/// The batch fields 2.8's record line repeats.
struct BatchFields<'c> {
    base_offset: i64,
    last_offset: i64,
    base_sequence: i32,
    last_sequence: i32,
    producer_epoch: i32,
    partition_leader_epoch: i32,
    size: i64,
    magic: i32,
    codec: &'c [u8],
    position: u64,
}

/// 2.8's record line up to `position: N`: `valid_crc` is the record's
/// `isValid` and `checksumOrNull` (`None` for v2 records: `null`).
fn write_record_batch_fields<W: Write>(
    w: &mut W,
    offset: i64,
    valid_crc: (bool, Option<u32>),
    sizes: (i32, i32),
    ts_type: &[u8],
    timestamp: i64,
    b: &BatchFields<'_>,
) -> io::Result<()> {
    w.write_all(b"| offset: ")?;
    num(w, offset)?;
    w.write_all(b" isValid: ")?;
    w.write_all(bool_str(valid_crc.0))?;
    w.write_all(b" crc: ")?;
    match valid_crc.1 {
        Some(c) => num(w, c)?,
        None => w.write_all(b"null")?,
    }
    w.write_all(b" keySize: ")?;
    num(w, sizes.0)?;
    w.write_all(b" valueSize: ")?;
    num(w, sizes.1)?;
    w.write_all(b" ")?;
    w.write_all(ts_type)?;
    w.write_all(b": ")?;
    num(w, timestamp)?;
    w.write_all(b" baseOffset: ")?;
    num(w, b.base_offset)?;
    w.write_all(b" lastOffset: ")?;
    num(w, b.last_offset)?;
    w.write_all(b" baseSequence: ")?;
    num(w, b.base_sequence)?;
    w.write_all(b" lastSequence: ")?;
    num(w, b.last_sequence)?;
    w.write_all(b" producerEpoch: ")?;
    num(w, b.producer_epoch)?;
    w.write_all(b" partitionLeaderEpoch: ")?;
    num(w, b.partition_leader_epoch)?;
    w.write_all(b" batchSize: ")?;
    num(w, b.size)?;
    w.write_all(b" magic: ")?;
    num(w, b.magic)?;
    w.write_all(b" compressType: ")?;
    w.write_all(b.codec)?;
    w.write_all(b" position: ")?;
    num(w, b.position)
}

fn write_v2_metadata<W: Write>(w: &mut W, ts_type: &[u8], rec: &Record<'_>) -> io::Result<()> {
    w.write_all(b"| offset: ")?;
    num(w, rec.offset)?;
    w.write_all(b" ")?;
    w.write_all(ts_type)?;
    w.write_all(b": ")?;
    num(w, rec.timestamp)?;
    w.write_all(b" keySize: ")?;
    num(w, rec.key_size())?;
    w.write_all(b" valueSize: ")?;
    num(w, rec.value_size())?;
    write_v2_sequence_headers(w, rec)
}

/// ` sequence: S headerKeys: [k,…]` of a v2 record.
fn write_v2_sequence_headers<W: Write>(w: &mut W, rec: &Record<'_>) -> io::Result<()> {
    w.write_all(b" sequence: ")?;
    num(w, rec.sequence)?;
    w.write_all(b" headerKeys: [")?;
    for (i, h) in rec.headers().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        text(w, h.key)?;
    }
    w.write_all(b"]")
}

fn write_legacy_metadata<W: Write>(
    w: &mut W,
    ts_type: &[u8],
    offset: i64,
    r: &LegacyRecord<'_>,
    pos: u64,
    brace: bool,
) -> Result<(), DumpError> {
    // Kafka builds the whole piece before printing it: sizes first.
    let ks = r.key_size().map_err(|e| abort(pos, e))?;
    let vs = r.value_size().map_err(|e| abort(pos, e))?;
    w.write_all(b"| offset: ")?;
    num(w, offset)?;
    w.write_all(b" ")?;
    w.write_all(ts_type)?;
    w.write_all(b": ")?;
    num(w, r.timestamp())?;
    w.write_all(b" keySize: ")?;
    num(w, ks)?;
    w.write_all(b" valueSize: ")?;
    num(w, vs)?;
    w.write_all(b" isValid: ")?;
    w.write_all(bool_str(r.is_valid()))?;
    w.write_all(b" crc: ")?;
    num(w, r.crc())?;
    if brace {
        w.write_all(b"}")?;
    }
    Ok(())
}

/// The last offset of the first entry of `log` at `position` within
/// `max_size` bytes, as kafka-dump-log reads it for an index slot; the
/// inner error says why there is none. A failed read is the outer error.
fn first_last_offset_at(
    log: &dyn SegmentSource,
    position: i32,
    max_size: i32,
) -> Result<Result<i64, Cow<'static, str>>, DumpError> {
    if position < 0 {
        return Ok(Err(format!("invalid position {position}").into()));
    }
    let p = position as u64;
    if p > log.len() {
        return Ok(Err(format!(
            "position {position} is beyond the end of the log ({} bytes)",
            log.len()
        )
        .into()));
    }
    let end = p.saturating_add(max_size.max(0) as u64).min(log.len());
    let r = match Walk::new(log.entries(p, end)).next() {
        Some(Step::Batch(b) | Step::BadCrc(b, _)) => Ok(b.last_offset()),
        Some(Step::Bad(e)) => Err(format!("byte {}: {}", e.pos, e.reason).into()),
        Some(Step::Io(e)) => return Err(DumpError::Read(e)),
        Some(Step::Skipped(_) | Step::Tail(_)) | None => {
            Err(format!("no complete batch at position {position} within {max_size} bytes").into())
        }
    };
    Ok(r)
}

/// Max record timestamp of a batch (-1 without records), iterating records
/// as Kafka does (decompressing if needed).
pub fn max_record_timestamp(
    b: &Batch<'_>,
    scratch: &mut Vec<u8>,
    cap: usize,
) -> Result<i64, ParseError> {
    let mut max = -1i64;
    match b {
        Batch::V2(rb) => {
            for r in rb.records(scratch, cap)? {
                max = max.max(r?.timestamp);
            }
        }
        Batch::Legacy(e) => {
            for m in e.records(scratch, cap)? {
                max = max.max(m?.record.timestamp());
            }
        }
    }
    Ok(max)
}

/// `(end offset, epoch)` from a KRaft snapshot name
/// `<20-digit offset>-<10-digit epoch>.checkpoint`, parsed as Kafka's
/// `Snapshots.parse` does.
pub fn snapshot_id(name: &str) -> Option<(i64, i32)> {
    let offset = crate::format::checkpoint::java_parse_long(name.get(..20)?).ok()?;
    let epoch = name.get(21..31)?;
    let digits = epoch.strip_prefix(['+', '-']).unwrap_or(epoch);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((offset, epoch.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::encode_batch;
    use crate::format::record::encode_record;

    #[test]
    fn java_paths() {
        assert_eq!(java_file_display("a//b/"), "a/b");
        assert_eq!(java_file_display("/"), "/");
        let n = FileNames::new("testdata//x/00000000000000000005.log", "/repo");
        assert_eq!(n.name, "00000000000000000005.log");
        assert_eq!(n.absolute, "/repo/testdata/x/00000000000000000005.log");
        assert_eq!(base_offset_of(&n.name), Some(5));
        assert_eq!(base_offset_of("foo.log"), None);
        assert_eq!(
            snapshot_id("00000000000000000100-0000000003.checkpoint"),
            Some((100, 3))
        );
    }

    #[test]
    fn base64_and_json() {
        assert_eq!(base64_std(b"hello"), "aGVsbG8=");
        assert_eq!(uuid_string(&[0u8; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        let mut s = String::new();
        json_string(&mut s, "a\"b\\c\n\u{1}é/");
        assert_eq!(s, "\"a\\\"b\\\\c\\n\\u0001é/\"");
    }

    fn dump(seg: &[u8], opts: Options) -> (String, Vec<ParseError>) {
        let mut f = StringFormatter;
        let mut d = Dumper::new(opts, &mut f);
        let names = FileNames::new("d/00000000000000000000.log", "/r");
        let mut out = Vec::new();
        let mut problems = Vec::new();
        d.write_dumping(&mut out, &names).unwrap();
        d.dump_log(&mut out, &names, &seg, &mut problems).unwrap();
        (String::from_utf8(out).unwrap(), problems)
    }

    #[test]
    fn log_lines() {
        let mut recs = Vec::new();
        encode_record(&mut recs, 0, 0, Some(b"k"), Some(b"v"), &[(b"h", None)]);
        let seg = encode_batch(0, 3, 0, 0, 1000, 1000, (7, 0, 0), 1, &recs);
        let (out, problems) = dump(
            &seg,
            Options {
                deep: true,
                print_data: true,
                ..Options::default()
            },
        );
        let crc = u32::from_be_bytes(seg[17..21].try_into().unwrap());
        assert_eq!(
            out,
            format!(
                "Dumping d/00000000000000000000.log\nLog starting offset: 0\n\
baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: 7 producerEpoch: 0 partitionLeaderEpoch: 3 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1000 size: {} magic: 2 compresscodec: none crc: {crc} isvalid: true\n\
| offset: 0 CreateTime: 1000 keySize: 1 valueSize: 1 sequence: 0 headerKeys: [h] key: k payload: v\n",
                seg.len()
            )
        );
        assert!(problems.is_empty());
        let mut torn = seg.clone();
        torn.extend_from_slice(&seg[..30]);
        let (out, problems) = dump(&torn, Options::default());
        assert!(out.ends_with("Found 30 invalid bytes at the end of 00000000000000000000.log\n"));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].pos, seg.len() as u64);
    }
}
