//! The `.klfd` digest container: what `klf digest` ships from a node and
//! every analysis command reads in place of the node's log directories.
//! Pure bytes here (encode and decode, no I/O); `capture::digest` makes
//! and mounts them. The layout is documented in `docs/digest-format.md`.
//!
//! A digest is a header and a sequence of entries:
//!
//! ```text
//! header  "KLFDIGST" (8 bytes) | major u16 LE | minor u16 LE
//! entry   tag u8 | body length u32 LE | body | CRC-32C u32 LE of tag, length and body
//! ...
//! end     tag 0xFF | 8 | entries before it, u64 LE | CRC-32C
//! ```
//!
//! Entries are written as they are made (a digest streams to stdout), each
//! checks itself (a damaged byte is found at its entry), and a digest that
//! lacks its end entry is truncated. A reader refuses another major version
//! and skips entries it does not know whose tag has bit 6 set (0x40 to 0x7E:
//! optional additions of a later minor version).

use std::path::{Path, PathBuf};

use crate::format::crc::crc32c;
use crate::format::ParseError;

/// The first 8 bytes of every digest.
pub const MAGIC: &[u8; 8] = b"KLFDIGST";
/// Major version: a reader refuses any other.
pub const MAJOR: u16 = 1;
/// Minor version: additions a reader of the same major can skip.
pub const MINOR: u16 = 0;
/// Header length.
pub const HEADER_LEN: usize = 12;
/// Largest entry body klf writes or reads (256 MiB).
pub const MAX_BODY: u32 = 256 << 20;
/// Largest decoded content of one entry (a shipped file, a segment's
/// summaries): 1 GiB.
pub const MAX_CONTENT: u64 = 1 << 30;
/// Longest path inside a digest.
pub const MAX_PATH: usize = 4096;

/// Entry tags.
pub mod tag {
    /// JSON object: the klf version, the options and what was read.
    pub const NODE: u8 = 1;
    /// A directory (so that empty ones exist too).
    pub const DIR: u8 = 2;
    /// A file shipped whole (zstd).
    pub const FILE: u8 = 3;
    /// A file listed (path, length, time), its bytes not shipped.
    pub const LISTED: u8 = 4;
    /// A segment `.log`: its batch summaries (zstd).
    pub const SEGMENT: u8 = 5;
    /// A problem met while digesting: path and message.
    pub const NOTE: u8 = 6;
    /// The end.
    pub const END: u8 = 0xFF;
}

/// One decoded entry (its content still compressed where it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry<'a> {
    /// The node entry's JSON text.
    Node(&'a [u8]),
    /// A directory.
    Dir(PathBuf),
    /// A file: path, modification time (ms since the epoch, `None` when not
    /// known), length on the node, and the compressed bytes.
    File {
        /// Path relative to the digest's root.
        path: PathBuf,
        /// Modification time in ms.
        mtime_ms: Option<i64>,
        /// Length on the node.
        len: u64,
        /// Length of the content shipped (up to `len`; the rest reads as
        /// zeros).
        raw_len: u64,
        /// zstd frame of the content.
        content: &'a [u8],
    },
    /// A file whose bytes are not in the digest.
    Listed {
        /// Path relative to the digest's root.
        path: PathBuf,
        /// Modification time in ms.
        mtime_ms: Option<i64>,
        /// Length on the node.
        len: u64,
    },
    /// A segment's summaries: decode `content` with [`decode_segment`].
    Segment {
        /// Path relative to the digest's root.
        path: PathBuf,
        /// Modification time in ms.
        mtime_ms: Option<i64>,
        /// Length on the node.
        len: u64,
        /// Length of the encoded summaries once decompressed.
        raw_len: u64,
        /// zstd frame of the encoded summaries.
        content: &'a [u8],
    },
    /// A problem met while digesting.
    Note {
        /// The file or directory concerned.
        path: PathBuf,
        /// What happened.
        message: String,
    },
    /// An optional entry of a later minor version, skipped.
    Unknown(u8),
}

/// Encodes the header.
pub fn header() -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend_from_slice(&MAJOR.to_le_bytes());
    v.extend_from_slice(&MINOR.to_le_bytes());
    v
}

/// Reads the header: the version, or why the bytes are not a digest klf
/// reads.
pub fn read_header(b: &[u8]) -> Result<(u16, u16), ParseError> {
    if b.len() < HEADER_LEN || &b[..8] != MAGIC {
        return Err(ParseError::new(
            0,
            "not a klf digest (it does not begin with KLFDIGST)",
        ));
    }
    let major = u16::from_le_bytes([b[8], b[9]]);
    let minor = u16::from_le_bytes([b[10], b[11]]);
    if major != MAJOR {
        return Err(ParseError::new(
            8,
            format!(
                "digest format {major}.{minor}; this klf reads format {MAJOR}.x (make the digest again with this klf, or read it with the klf that made it)"
            ),
        ));
    }
    Ok((major, minor))
}

/// Frames one entry: tag, length, body, CRC.
pub fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(body.len() + 9);
    v.push(tag);
    v.extend_from_slice(&(body.len() as u32).to_le_bytes());
    v.extend_from_slice(body);
    let crc = crc32c(&v);
    v.extend_from_slice(&crc.to_le_bytes());
    v
}

/// The end entry after `count` entries.
pub fn end_entry(count: u64) -> Vec<u8> {
    frame(tag::END, &count.to_le_bytes())
}

fn put_uvar(v: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        v.push((n as u8) | 0x80);
        n >>= 7;
    }
    v.push(n as u8);
}

fn put_var(v: &mut Vec<u8>, n: i64) {
    put_uvar(v, ((n << 1) ^ (n >> 63)) as u64);
}

fn put_bytes(v: &mut Vec<u8>, b: &[u8]) {
    put_uvar(v, b.len() as u64);
    v.extend_from_slice(b);
}

fn path_bytes(p: &Path) -> Vec<u8> {
    // '/'-separated, relative; the components' bytes as the node has them
    let mut out = Vec::new();
    for (i, c) in p.components().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(c.as_os_str().as_encoded_bytes());
    }
    out
}

/// Body of a directory entry.
pub fn dir_body(path: &Path) -> Vec<u8> {
    let mut v = Vec::new();
    put_bytes(&mut v, &path_bytes(path));
    v
}

fn file_head(v: &mut Vec<u8>, path: &Path, mtime_ms: Option<i64>, len: u64) {
    put_bytes(v, &path_bytes(path));
    put_var(v, mtime_ms.unwrap_or(i64::MIN));
    put_uvar(v, len);
}

/// Body of a shipped file of `len` bytes on the node: `content` is its
/// bytes up to the end of its data (the rest, if any, reads as zeros: a
/// preallocated index), compressed here.
pub fn file_body(
    path: &Path,
    mtime_ms: Option<i64>,
    len: u64,
    content: &[u8],
) -> std::io::Result<Vec<u8>> {
    let mut v = Vec::new();
    file_head(&mut v, path, mtime_ms, len);
    put_uvar(&mut v, content.len() as u64);
    let z = compress(content)?;
    v.extend_from_slice(&z);
    Ok(v)
}

/// A shipped file's content compressed as it is written (a Kafka log's
/// reduced copy, made a chunk at a time: what is held is the compressed
/// content); [`FileEncoder::finish`] makes the file entry's body, of a file
/// whose length is the content's.
pub struct FileEncoder {
    z: zstd::stream::write::Encoder<'static, Vec<u8>>,
    raw_len: u64,
}

impl FileEncoder {
    /// A new encoder.
    pub fn new() -> std::io::Result<Self> {
        Ok(FileEncoder {
            z: zstd::stream::write::Encoder::new(Vec::new(), 3)?,
            raw_len: 0,
        })
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.raw_len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.raw_len == 0
    }

    /// The body of the file entry of `path`: its length and content are
    /// what was written.
    pub fn finish(self, path: &Path, mtime_ms: Option<i64>) -> std::io::Result<Vec<u8>> {
        let raw_len = self.raw_len;
        let z = self.z.finish()?;
        let mut v = Vec::with_capacity(z.len() + 64);
        file_head(&mut v, path, mtime_ms, raw_len);
        put_uvar(&mut v, raw_len);
        v.extend_from_slice(&z);
        Ok(v)
    }
}

impl std::io::Write for FileEncoder {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.z.write(buf)?;
        self.raw_len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.z.flush()
    }
}

/// Body of a listed file.
pub fn listed_body(path: &Path, mtime_ms: Option<i64>, len: u64) -> Vec<u8> {
    let mut v = Vec::new();
    file_head(&mut v, path, mtime_ms, len);
    v
}

/// Body of a segment entry: `compressed` is [`SegmentEncoder::finish`]'s
/// output, `raw_len` its length decompressed.
pub fn segment_body(
    path: &Path,
    mtime_ms: Option<i64>,
    len: u64,
    compressed: &[u8],
    raw_len: u64,
) -> Vec<u8> {
    let mut v = Vec::with_capacity(compressed.len() + 64);
    file_head(&mut v, path, mtime_ms, len);
    put_uvar(&mut v, raw_len);
    v.extend_from_slice(compressed);
    v
}

/// Body of a note.
pub fn note_body(path: &Path, message: &str) -> Vec<u8> {
    let mut v = Vec::new();
    put_bytes(&mut v, &path_bytes(path));
    put_bytes(&mut v, message.as_bytes());
    v
}

/// A bounds-checked reader over one body; positions are reported in the
/// digest (`base` is the body's position there).
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Reader<'a> {
    #[cold]
    fn err(&self, why: impl Into<std::borrow::Cow<'static, str>>) -> ParseError {
        ParseError::new(self.base + self.pos as u64, why)
    }

    /// An unsigned varint: most are one byte (the deltas of a segment's
    /// summaries), read without the loop.
    #[inline]
    fn uvar(&mut self) -> Result<u64, ParseError> {
        match self.b.get(self.pos) {
            Some(&b) if b < 0x80 => {
                self.pos += 1;
                Ok(u64::from(b))
            }
            _ => self.uvar_long(),
        }
    }

    fn uvar_long(&mut self) -> Result<u64, ParseError> {
        let mut n: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.b.get(self.pos) else {
                return Err(self.err("the entry ends inside a number"));
            };
            self.pos += 1;
            n |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(self.err("a number longer than 10 bytes"))
    }

    #[inline]
    fn var(&mut self) -> Result<i64, ParseError> {
        let u = self.uvar()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], ParseError> {
        let n = usize::try_from(n).map_err(|_| self.err("a length past the entry"))?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| self.err("a length past the end of the entry"))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, ParseError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, ParseError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn path(&mut self) -> Result<PathBuf, ParseError> {
        let at = self.pos;
        let n = self.uvar()?;
        if n as usize > MAX_PATH {
            return Err(self.err(format!("a path of {n} bytes (at most {MAX_PATH})")));
        }
        let raw = self.take(n)?;
        let text = std::str::from_utf8(raw)
            .map_err(|_| ParseError::new(self.base + at as u64, "a path that is not UTF-8"))?;
        if text.is_empty() {
            return Err(ParseError::new(self.base + at as u64, "an empty path"));
        }
        // printable ASCII holds no control character: the characters are
        // looked at only in a path that has other bytes
        let ascii = raw.iter().all(|b| (0x20..0x7f).contains(b));
        for c in text.split('/') {
            // relative, and never out of the digest's root
            if c.is_empty() || c == "." || c == ".." || (!ascii && c.chars().any(char::is_control))
            {
                return Err(ParseError::new(
                    self.base + at as u64,
                    format!("path {text:?} is not a plain relative path"),
                ));
            }
        }
        // its parts joined by `/` as they are (none empty): the path itself
        Ok(PathBuf::from(text))
    }

    fn file_head(&mut self) -> Result<(PathBuf, Option<i64>, u64), ParseError> {
        let path = self.path()?;
        let m = self.var()?;
        let len = self.uvar()?;
        Ok((path, (m != i64::MIN).then_some(m), len))
    }

    fn rest(&mut self) -> &'a [u8] {
        let s = &self.b[self.pos..];
        self.pos = self.b.len();
        s
    }
}

/// Reads the entry at `pos` of `digest`: the entry (`None` for the end
/// entry, whose count of entries before it must be `count`) and the
/// position after it.
pub fn read_entry(
    digest: &[u8],
    pos: usize,
    count: u64,
) -> Result<(Option<Entry<'_>>, usize), ParseError> {
    let at = pos as u64;
    let head = digest.get(pos..pos.saturating_add(5)).ok_or_else(|| {
        ParseError::new(
            at,
            "the digest ends here without its end entry: it is truncated (copy it again)",
        )
    })?;
    let tag = head[0];
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
    if len > MAX_BODY {
        return Err(ParseError::new(
            at + 1,
            format!("an entry of {len} bytes (at most {MAX_BODY})"),
        ));
    }
    let end = pos + 5 + len as usize;
    let Some(framed) = digest.get(pos..end) else {
        return Err(ParseError::new(
            at,
            "the digest ends inside this entry: it is truncated (copy it again)",
        ));
    };
    let Some(stored) = digest.get(end..end + 4) else {
        return Err(ParseError::new(
            at,
            "the digest ends inside this entry: it is truncated (copy it again)",
        ));
    };
    let stored = u32::from_le_bytes([stored[0], stored[1], stored[2], stored[3]]);
    let computed = crc32c(framed);
    if stored != computed {
        return Err(ParseError::new(
            at,
            format!(
                "entry checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the digest is damaged"
            ),
        ));
    }
    let mut r = Reader {
        b: &framed[5..],
        pos: 0,
        base: at + 5,
    };
    let entry = match tag {
        tag::END => {
            let n = r.take(8)?;
            let n = u64::from_le_bytes([n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]]);
            if n != count {
                return Err(ParseError::new(
                    at,
                    format!("the end entry counts {n} entries, the digest holds {count}"),
                ));
            }
            return Ok((None, end + 4));
        }
        tag::NODE => Entry::Node(r.rest()),
        tag::DIR => Entry::Dir(r.path()?),
        tag::FILE => {
            let (path, mtime_ms, len) = r.file_head()?;
            let raw_len = r.uvar()?;
            if raw_len > len {
                return Err(r.err(format!(
                    "{raw_len} bytes shipped of a file of {len} bytes"
                )));
            }
            Entry::File {
                path,
                mtime_ms,
                len,
                raw_len,
                content: r.rest(),
            }
        }
        tag::LISTED => {
            let (path, mtime_ms, len) = r.file_head()?;
            Entry::Listed {
                path,
                mtime_ms,
                len,
            }
        }
        tag::SEGMENT => {
            let (path, mtime_ms, len) = r.file_head()?;
            let raw_len = r.uvar()?;
            Entry::Segment {
                path,
                mtime_ms,
                len,
                raw_len,
                content: r.rest(),
            }
        }
        tag::NOTE => {
            // a note may be about the digest's root: an empty path
            let empty = matches!(r.b.get(r.pos), Some(0));
            let path = if empty {
                r.pos += 1;
                PathBuf::new()
            } else {
                r.path()?
            };
            let n = r.uvar()?;
            let m = r.take(n)?;
            Entry::Note {
                path,
                message: String::from_utf8_lossy(m).into_owned(),
            }
        }
        t if (0x40..0x7F).contains(&t) => Entry::Unknown(t),
        t => {
            return Err(ParseError::new(
                at,
                format!("entry tag {t:#04x} is not one this klf knows (a digest of a later klf: read it with that klf)"),
            ))
        }
    };
    Ok((Some(entry), end + 4))
}

/// Decompresses an entry's content of `raw_len` bytes (at most `cap`);
/// `at` is the content's position in the digest, for errors.
pub fn inflate(content: &[u8], raw_len: u64, cap: u64, at: u64) -> Result<Vec<u8>, ParseError> {
    if raw_len > cap.min(MAX_CONTENT) {
        return Err(ParseError::new(
            at,
            format!(
                "an entry that inflates to {raw_len} bytes (at most {})",
                cap.min(MAX_CONTENT)
            ),
        ));
    }
    let out = decompress(content, raw_len as usize)
        .map_err(|e| ParseError::new(at, format!("the entry does not decompress: {e}")))?;
    if out.len() as u64 != raw_len {
        return Err(ParseError::new(
            at,
            format!(
                "the entry inflates to {} bytes, it declares {raw_len}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// The header fields of one batch the analyses use (the model's batch
/// summary, without depending on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchHeader {
    /// First offset.
    pub base_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// `partitionLeaderEpoch`.
    pub partition_leader_epoch: i32,
    /// Stored CRC (a legacy entry: CRC-32C of its bytes).
    pub crc: u32,
    /// Records.
    pub record_count: i32,
    /// Control batch.
    pub is_control: bool,
    /// Transactional batch.
    pub is_transactional: bool,
    /// `baseTimestamp`.
    pub first_timestamp: i64,
    /// `maxTimestamp`.
    pub max_timestamp: i64,
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// Base sequence.
    pub base_sequence: i32,
}

/// Whether a batch's checksum was checked when the digest was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrcCheck {
    /// Not checked (only its header was read).
    Unchecked,
    /// Checked: it matches.
    Ok,
    /// Checked: it does not match; the reason as the reader gives it.
    Bad(String),
}

/// One entry of a segment as the digest saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestBatch {
    /// Byte position in the segment.
    pub position: u64,
    /// Entry size in bytes (size field + 12).
    pub size: u64,
    /// Magic byte.
    pub magic: i8,
    /// The header's summary (a legacy entry's CRC-32C of its bytes).
    pub summary: BatchHeader,
    /// A control batch's first record's type id (`None`: not a control
    /// batch, or its type was not read).
    pub control_type: Option<i16>,
    /// Whether its checksum was checked.
    pub crc: CrcCheck,
}

/// How the walk over a segment ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkEnd {
    /// At the end of the data.
    Clean,
    /// An entry that does not frame (Kafka's recovery truncates there).
    Bad {
        /// Byte position.
        pos: u64,
        /// Why.
        reason: String,
    },
    /// A torn tail.
    Tail {
        /// Byte position.
        pos: u64,
        /// Bytes from there to the end.
        len: u64,
        /// `None`: too short for a header; `Some(n)`: an entry declaring n bytes.
        declared: Option<i64>,
    },
    /// A read that failed on the node.
    Io {
        /// Byte position, when known.
        pos: Option<u64>,
        /// The error.
        reason: String,
    },
}

/// One segment's summaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentDigest {
    /// Entries in file order, up to where the walk ended.
    pub batches: Vec<DigestBatch>,
    /// How it ended.
    pub end: WalkEnd,
    /// Bytes of the segment read to make this.
    pub bytes_read: u64,
    /// What `klf check`'s index checks found on the node (the indexes
    /// against these batches; `None`: they were not run).
    pub index_findings: Option<Vec<ShippedFinding>>,
}

/// A finding made on the node, for `klf check` to report as its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedFinding {
    /// The finding's code.
    pub code: String,
    /// Which file of the segment: 0 `.log`, 1 `.index`, 2 `.timeindex`,
    /// 3 `.txnindex`.
    pub file: u8,
    /// Byte position in that file.
    pub position: Option<u64>,
    /// Offset concerned.
    pub offset: Option<i64>,
    /// The message.
    pub message: String,
}

const F_LEGACY: u8 = 1;
const F_CONTROL: u8 = 2;
const F_TXN: u8 = 4;
const F_CRC_OK: u8 = 8;
const F_CRC_BAD: u8 = 16;
const F_CONTROL_TYPE: u8 = 32;

fn first_prev() -> BatchHeader {
    BatchHeader {
        base_offset: 0,
        last_offset: -1,
        partition_leader_epoch: 0,
        crc: 0,
        record_count: 0,
        is_control: false,
        is_transactional: false,
        first_timestamp: 0,
        max_timestamp: 0,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
    }
}

/// The flags byte that ends the batches of a segment's summaries.
const END_OF_BATCHES: u8 = 0xFF;

/// Raw summaries held before they are handed to a streaming compressor.
const BUFFERED: usize = 1 << 20;

thread_local! {
    /// One compression and one decompression context a thread, reused:
    /// making one costs more than compressing a small file.
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// `data` compressed with this thread's context.
pub fn compress(data: &[u8]) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(zstd::bulk::Compressor::new(3)?);
        }
        match c.as_mut() {
            Some(z) => z.compress(data),
            None => zstd::bulk::compress(data, 3),
        }
    })
}

fn decompress(data: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = Some(zstd::bulk::Decompressor::new()?);
        }
        match d.as_mut() {
            Some(z) => z.decompress(data, capacity),
            None => zstd::bulk::decompress(data, capacity),
        }
    })
}

/// Encodes a segment's summaries as they are walked (deltas against the
/// previous batch, varints: a few bytes a batch). Up to 1 MiB of them are
/// held and compressed at the end with the thread's context; past that
/// they go through a streaming compressor as they come: what a large
/// segment's walk holds is its compressed summaries, not its batches.
pub struct SegmentEncoder {
    z: Option<zstd::stream::write::Encoder<'static, Vec<u8>>>,
    raw_len: u64,
    prev: BatchHeader,
    next_pos: u64,
    buf: Vec<u8>,
}

impl SegmentEncoder {
    /// A new encoder.
    pub fn new() -> std::io::Result<Self> {
        Ok(SegmentEncoder {
            z: None,
            raw_len: 0,
            prev: first_prev(),
            next_pos: 0,
            buf: Vec::with_capacity(4096),
        })
    }

    fn spill(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        if self.z.is_none() {
            self.z = Some(zstd::stream::write::Encoder::new(Vec::new(), 3)?);
        }
        if let Some(z) = self.z.as_mut() {
            z.write_all(&self.buf)?;
        }
        self.raw_len += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// The next batch, in file order.
    pub fn push(&mut self, b: &DigestBatch) -> std::io::Result<()> {
        encode_batch(&mut self.buf, b, &self.prev, self.next_pos);
        self.next_pos = b.position.wrapping_add(b.size);
        self.prev = b.summary.clone();
        if self.buf.len() >= BUFFERED {
            self.spill()?;
        }
        Ok(())
    }

    /// Ends the summaries with what the walk read, how it ended and the
    /// index checks' findings: the compressed summaries and their length
    /// once decompressed.
    pub fn finish(
        mut self,
        end: &WalkEnd,
        bytes_read: u64,
        index_findings: Option<&[ShippedFinding]>,
    ) -> std::io::Result<(Vec<u8>, u64)> {
        self.buf.push(END_OF_BATCHES);
        put_uvar(&mut self.buf, bytes_read);
        encode_tail(&mut self.buf, end, index_findings);
        if self.z.is_none() {
            let raw_len = self.buf.len() as u64;
            return Ok((compress(&self.buf)?, raw_len));
        }
        self.spill()?;
        let raw_len = self.raw_len;
        match self.z.take() {
            Some(z) => Ok((z.finish()?, raw_len)),
            None => Ok((Vec::new(), raw_len)),
        }
    }
}

fn encode_batch(v: &mut Vec<u8>, b: &DigestBatch, prev: &BatchHeader, next_pos: u64) {
    let x = &b.summary;
    let mut flags = 0u8;
    if b.magic < 2 {
        flags |= F_LEGACY;
    }
    if x.is_control {
        flags |= F_CONTROL;
    }
    if x.is_transactional {
        flags |= F_TXN;
    }
    match &b.crc {
        CrcCheck::Unchecked => {}
        CrcCheck::Ok => flags |= F_CRC_OK,
        CrcCheck::Bad(_) => flags |= F_CRC_BAD,
    }
    if b.control_type.is_some() {
        flags |= F_CONTROL_TYPE;
    }
    v.push(flags);
    v.push(b.magic as u8);
    put_var(v, b.position.wrapping_sub(next_pos) as i64);
    put_uvar(v, b.size);
    put_var(
        v,
        x.base_offset.wrapping_sub(prev.last_offset.wrapping_add(1)),
    );
    put_var(v, x.last_offset.wrapping_sub(x.base_offset));
    put_var(
        v,
        i64::from(x.partition_leader_epoch) - i64::from(prev.partition_leader_epoch),
    );
    v.extend_from_slice(&x.crc.to_le_bytes());
    put_var(v, i64::from(x.record_count));
    put_var(v, x.first_timestamp.wrapping_sub(prev.first_timestamp));
    put_var(v, x.max_timestamp.wrapping_sub(x.first_timestamp));
    put_var(v, x.producer_id.wrapping_sub(prev.producer_id));
    put_var(
        v,
        i64::from(x.producer_epoch) - i64::from(prev.producer_epoch),
    );
    put_var(
        v,
        i64::from(x.base_sequence) - i64::from(prev.base_sequence),
    );
    if let Some(t) = b.control_type {
        put_var(v, i64::from(t));
    }
    if let CrcCheck::Bad(why) = &b.crc {
        put_bytes(v, why.as_bytes());
    }
}

fn encode_tail(v: &mut Vec<u8>, end: &WalkEnd, index_findings: Option<&[ShippedFinding]>) {
    match end {
        WalkEnd::Clean => v.push(0),
        WalkEnd::Bad { pos, reason } => {
            v.push(1);
            put_uvar(v, *pos);
            put_bytes(v, reason.as_bytes());
        }
        WalkEnd::Tail { pos, len, declared } => {
            v.push(2);
            put_uvar(v, *pos);
            put_uvar(v, *len);
            match declared {
                None => v.push(0),
                Some(d) => {
                    v.push(1);
                    put_var(v, *d);
                }
            }
        }
        WalkEnd::Io { pos, reason } => {
            v.push(3);
            match pos {
                None => v.push(0),
                Some(p) => {
                    v.push(1);
                    put_uvar(v, *p);
                }
            }
            put_bytes(v, reason.as_bytes());
        }
    }
    match index_findings {
        None => v.push(0),
        Some(fs) => {
            v.push(1);
            put_uvar(v, fs.len() as u64);
            for f in fs {
                put_bytes(v, f.code.as_bytes());
                v.push(f.file);
                match f.position {
                    None => v.push(0),
                    Some(p) => {
                        v.push(1);
                        put_uvar(v, p);
                    }
                }
                match f.offset {
                    None => v.push(0),
                    Some(o) => {
                        v.push(1);
                        put_var(v, o);
                    }
                }
                put_bytes(v, f.message.as_bytes());
            }
        }
    }
}

/// Encodes a whole segment's summaries at once (what [`SegmentEncoder`]
/// writes, before compression).
pub fn encode_segment(s: &SegmentDigest) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + s.batches.len() * 24);
    let mut prev = first_prev();
    let mut next_pos = 0u64;
    for b in &s.batches {
        encode_batch(&mut v, b, &prev, next_pos);
        next_pos = b.position.wrapping_add(b.size);
        prev = b.summary.clone();
    }
    v.push(END_OF_BATCHES);
    put_uvar(&mut v, s.bytes_read);
    encode_tail(&mut v, &s.end, s.index_findings.as_deref());
    v
}

/// Text as written, its invalid UTF-8 replaced (`U+FFFD`): the valid
/// text a digest holds is checked at once, not character by character.
fn text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

fn to_i32(r: &Reader<'_>, n: i64) -> Result<i32, ParseError> {
    i32::try_from(n).map_err(|_| r.err("a 32-bit field out of range"))
}

/// Decodes [`encode_segment`]'s bytes; `at` is their position in the
/// digest (errors name it: the content is compressed, so positions inside
/// it are counted from there).
pub fn decode_segment(b: &[u8], at: u64) -> Result<SegmentDigest, ParseError> {
    let mut r = Reader {
        b,
        pos: 0,
        base: at,
    };
    // batches until the end flag: each takes at least 14 encoded bytes,
    // so what is allocated stays within the input's size (room for as
    // many as can be there is made at once, up to 4,096: a few hundred
    // KiB at most, and no growing for the segments of a busy node)
    let mut batches = Vec::with_capacity((b.len() / 14).min(4096));
    let mut prev = first_prev();
    let mut next_pos = 0u64;
    loop {
        let flags = r.u8()?;
        if flags == END_OF_BATCHES {
            break;
        }
        let magic = r.u8()? as i8;
        let position = next_pos.wrapping_add(r.var()? as u64);
        let size = r.uvar()?;
        let base_offset = prev.last_offset.wrapping_add(1).wrapping_add(r.var()?);
        let last_offset = base_offset.wrapping_add(r.var()?);
        let epoch = {
            let v = i64::from(prev.partition_leader_epoch) + r_var(&mut r)?;
            to_i32(&r, v)?
        };
        let crc = r.u32()?;
        let record_count = {
            let v = r.var()?;
            to_i32(&r, v)?
        };
        let first_timestamp = prev.first_timestamp.wrapping_add(r.var()?);
        let max_timestamp = first_timestamp.wrapping_add(r.var()?);
        let producer_id = prev.producer_id.wrapping_add(r.var()?);
        let producer_epoch = {
            let v = i64::from(prev.producer_epoch) + r_var(&mut r)?;
            i16::try_from(v).map_err(|_| r.err("a 16-bit field out of range"))?
        };
        let base_sequence = {
            let v = i64::from(prev.base_sequence) + r_var(&mut r)?;
            to_i32(&r, v)?
        };
        let control_type = if flags & F_CONTROL_TYPE != 0 {
            let v = r.var()?;
            Some(i16::try_from(v).map_err(|_| r.err("a 16-bit field out of range"))?)
        } else {
            None
        };
        let crc_check = if flags & F_CRC_BAD != 0 {
            let n = r.uvar()?;
            CrcCheck::Bad(text(r.take(n)?))
        } else if flags & F_CRC_OK != 0 {
            CrcCheck::Ok
        } else {
            CrcCheck::Unchecked
        };
        let summary = BatchHeader {
            base_offset,
            last_offset,
            partition_leader_epoch: epoch,
            crc,
            record_count,
            is_control: flags & F_CONTROL != 0,
            is_transactional: flags & F_TXN != 0,
            first_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
        };
        let _ = flags & F_LEGACY;
        next_pos = position.wrapping_add(size);
        prev = summary.clone();
        batches.push(DigestBatch {
            position,
            size,
            magic,
            summary,
            control_type,
            crc: crc_check,
        });
    }
    let bytes_read = r.uvar()?;
    let end = match r.u8()? {
        0 => WalkEnd::Clean,
        1 => {
            let pos = r.uvar()?;
            let n = r.uvar()?;
            WalkEnd::Bad {
                pos,
                reason: text(r.take(n)?),
            }
        }
        2 => {
            let pos = r.uvar()?;
            let len = r.uvar()?;
            let declared = match r.u8()? {
                0 => None,
                _ => Some(r.var()?),
            };
            WalkEnd::Tail { pos, len, declared }
        }
        3 => {
            let pos = match r.u8()? {
                0 => None,
                _ => Some(r.uvar()?),
            };
            let n = r.uvar()?;
            WalkEnd::Io {
                pos,
                reason: text(r.take(n)?),
            }
        }
        k => return Err(r.err(format!("walk end kind {k} unknown"))),
    };
    let index_findings = match r.u8()? {
        0 => None,
        _ => {
            let n = r.uvar()?;
            if n > (b.len() as u64) / 4 {
                return Err(r.err(format!("{n} findings declared in {} bytes", b.len())));
            }
            let mut fs = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let k = r.uvar()?;
                let code = text(r.take(k)?);
                let file = r.u8()?;
                let position = match r.u8()? {
                    0 => None,
                    _ => Some(r.uvar()?),
                };
                let offset = match r.u8()? {
                    0 => None,
                    _ => Some(r.var()?),
                };
                let k = r.uvar()?;
                let message = text(r.take(k)?);
                fs.push(ShippedFinding {
                    code,
                    file,
                    position,
                    offset,
                    message,
                });
            }
            Some(fs)
        }
    };
    if r.pos != b.len() {
        return Err(r.err("bytes after the segment's summaries"));
    }
    Ok(SegmentDigest {
        batches,
        end,
        bytes_read,
        index_findings,
    })
}

fn r_var(r: &mut Reader<'_>) -> Result<i64, ParseError> {
    let v = r.var()?;
    // deltas of 16- and 32-bit fields fit in 33 bits
    if !(-(1i64 << 33)..(1i64 << 33)).contains(&v) {
        return Err(r.err("a delta out of range"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, last: i64, epoch: i32) -> DigestBatch {
        DigestBatch {
            position: (base as u64) * 100,
            size: 100,
            magic: 2,
            summary: BatchHeader {
                base_offset: base,
                last_offset: last,
                partition_leader_epoch: epoch,
                crc: 0xdead_beef ^ base as u32,
                record_count: (last - base + 1) as i32,
                is_control: false,
                is_transactional: false,
                first_timestamp: 1_700_000_000_000 + base,
                max_timestamp: 1_700_000_000_010 + base,
                producer_id: 7,
                producer_epoch: 0,
                base_sequence: base as i32,
            },
            control_type: None,
            crc: CrcCheck::Unchecked,
        }
    }

    /// A file written a piece at a time reads back as one file entry of
    /// its length, its content whole.
    #[test]
    fn a_file_encoded_as_it_is_written_reads_back() {
        use std::io::Write;
        let mut e = FileEncoder::new().unwrap();
        assert!(e.is_empty());
        let mut want = Vec::new();
        for i in 0..5000u32 {
            let line = if i % 100 == 0 {
                format!(
                    "[2026-12-06 02:28:55,{:03}] INFO line {i} (x.Y)\n",
                    i % 1000
                )
            } else {
                "\n".to_string()
            };
            e.write_all(line.as_bytes()).unwrap();
            want.extend_from_slice(line.as_bytes());
        }
        assert_eq!(e.len(), want.len() as u64);
        let body = e
            .finish(Path::new("b/logs/server.log"), Some(1_700_000_000_000))
            .unwrap();
        assert!(body.len() < want.len() / 4, "{} bytes", body.len());
        let framed = frame(tag::FILE, &body);
        let mut digest = header();
        digest.extend_from_slice(&framed);
        match read_entry(&digest, HEADER_LEN, 0).unwrap().0 {
            Some(Entry::File {
                path,
                mtime_ms,
                len,
                raw_len,
                content,
            }) => {
                assert_eq!(path, Path::new("b/logs/server.log"));
                assert_eq!(mtime_ms, Some(1_700_000_000_000));
                assert_eq!((len, raw_len), (want.len() as u64, want.len() as u64));
                assert_eq!(inflate(content, raw_len, MAX_CONTENT, 0).unwrap(), want);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn segments_round_trip() {
        let mut b = vec![batch(0, 9, 0), batch(10, 10, 3), batch(11, 20, 3)];
        b[1].summary.is_control = true;
        b[1].control_type = Some(1);
        b[1].crc = CrcCheck::Ok;
        b[2].crc = CrcCheck::Bad("CRC mismatch".into());
        b[2].summary.producer_epoch = i16::MIN;
        b[2].summary.first_timestamp = i64::MIN;
        b[2].summary.max_timestamp = i64::MAX;
        for end in [
            WalkEnd::Clean,
            WalkEnd::Bad {
                pos: 3,
                reason: "x".into(),
            },
            WalkEnd::Tail {
                pos: 9,
                len: 4,
                declared: Some(-5),
            },
            WalkEnd::Io {
                pos: None,
                reason: "EIO".into(),
            },
        ] {
            let s = SegmentDigest {
                batches: b.clone(),
                end,
                bytes_read: 77,
                index_findings: Some(vec![ShippedFinding {
                    code: "index-offset-order".into(),
                    file: 1,
                    position: Some(8),
                    offset: Some(-3),
                    message: "entry 1".into(),
                }]),
            };
            let enc = encode_segment(&s);
            assert_eq!(decode_segment(&enc, 0).unwrap(), s);
            // every truncation is an error, never a panic
            for n in 0..enc.len() {
                assert!(decode_segment(&enc[..n], 0).is_err());
            }
        }
    }

    #[test]
    fn the_streaming_encoder_writes_what_the_whole_encoding_does() {
        // more than the 1 MiB held before the streaming compressor takes over
        let batches: Vec<DigestBatch> = (0..60_000)
            .map(|i| batch(i * 10, i * 10 + 9, (i / 7000) as i32))
            .collect();
        let s = SegmentDigest {
            batches,
            end: WalkEnd::Clean,
            bytes_read: 5,
            index_findings: None,
        };
        let mut e = SegmentEncoder::new().unwrap();
        for b in &s.batches {
            e.push(b).unwrap();
        }
        let (z, raw_len) = e.finish(&s.end, 5, None).unwrap();
        let raw = encode_segment(&s);
        assert!(raw.len() > BUFFERED);
        assert_eq!(raw_len, raw.len() as u64);
        let back = inflate(&z, raw_len, u64::MAX, 0).unwrap();
        assert_eq!(back, raw);
        assert_eq!(decode_segment(&back, 0).unwrap(), s);
    }

    #[test]
    fn entries_check_themselves() {
        let mut d = header();
        d.extend(frame(tag::DIR, &dir_body(Path::new("t-0"))));
        d.extend(end_entry(1));
        let (e, next) = read_entry(&d, HEADER_LEN, 0).unwrap();
        assert_eq!(e, Some(Entry::Dir(PathBuf::from("t-0"))));
        let (e, end) = read_entry(&d, next, 1).unwrap();
        assert!(e.is_none());
        assert_eq!(end, d.len());
        let mut bad = d.clone();
        bad[HEADER_LEN + 6] ^= 1;
        let e = read_entry(&bad, HEADER_LEN, 0).unwrap_err();
        assert_eq!(e.pos, HEADER_LEN as u64);
        assert!(e.reason.contains("checksum"));
        assert!(read_entry(&d[..d.len() - 3], next, 1).is_err());
        let mut v2 = d.clone();
        v2[8] = 2;
        assert!(read_header(&v2).unwrap_err().reason.contains("format 2.0"));
        let evil = frame(tag::DIR, &dir_body(Path::new("../etc")));
        let mut e2 = header();
        e2.extend(evil);
        assert!(read_entry(&e2, HEADER_LEN, 0).is_err());
    }
}
