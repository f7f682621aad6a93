//! Record batches (magic v2, `DefaultRecordBatch`) and the iteration over the
//! entries of a `.log` segment (v2 batches and legacy v0/v1 message sets).
//!
//! [`SegmentIter`] frames entries the way Kafka's `FileLogInputStream` does:
//!
//! 1. 17 bytes or fewer left: end of data (the bytes are a [`Tail`]).
//! 2. A size field below 14 is an error (zero-filled tails end here).
//! 3. An entry whose declared size runs past the end: end of data (truncated
//!    tail, reported as a [`Tail`]).
//! 4. Byte 16 (signed) below 2 selects the legacy format, anything else v2.
//!
//! A framing error ends the iteration; [`SegmentIter::resync`] scans forward
//! for the next plausible batch (CRC-checked) and resumes there, telling how
//! many bytes it skipped. CRC mismatches do not stop iteration (Kafka prints
//! them as `isvalid: false`); [`Batch::check_crc`] reports them.

use super::bytes;
use super::codec::{self, Codec};
pub use super::framing::{TimestampType, LOG_OVERHEAD};
use super::legacy::LegacyEntry;
use super::record::{increment_sequence, parse_record, Record, RecordContext};
use super::ParseError;

/// Bytes up to and including the magic byte.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// Size of the v2 batch header.
pub const V2_HEADER_SIZE: usize = 61;
/// Smallest size field accepted by Kafka (v0 record overhead).
pub const MIN_SIZE_FIELD: i32 = 14;
/// Smallest encoded v2 record: one byte each for the length, attributes,
/// timestamp delta, offset delta, key length, value length and header count.
pub const MIN_RECORD_SIZE: usize = 7;

// Fields of a slice already known to hold them (the 61-byte header, an
// entry whose size was checked), read through the one checked reader: the
// fallback is never taken.
#[inline]
fn be_i64(b: &[u8], at: usize) -> i64 {
    bytes::be_i64(b, at).unwrap_or(-1)
}
#[inline]
fn be_i32(b: &[u8], at: usize) -> i32 {
    bytes::be_i32(b, at).unwrap_or(-1)
}
#[inline]
fn be_i16(b: &[u8], at: usize) -> i16 {
    bytes::be_i16(b, at).unwrap_or(-1)
}

/// A v2 record batch: a view over its 61-byte header and its bytes.
///
/// The header view is always 61 bytes. Like Kafka, a malformed batch whose
/// declared size is below 61 bytes has its header read from the file bytes
/// that follow it; `bytes` holds exactly the declared entry.
#[derive(Debug, Clone, Copy)]
pub struct RecordBatch<'a> {
    /// Byte position of the batch in the segment.
    pub position: u64,
    header: &'a [u8; V2_HEADER_SIZE],
    bytes: &'a [u8],
}

impl<'a> RecordBatch<'a> {
    /// A view over `data[pos..]`, where the entry has `entry_len` bytes in
    /// total (log overhead included). Fails when `data` ends inside the
    /// header or the entry.
    pub fn new(data: &'a [u8], pos: usize, entry_len: usize) -> Result<Self, ParseError> {
        let header = data
            .get(pos..pos.saturating_add(V2_HEADER_SIZE))
            .and_then(|h| <&[u8; V2_HEADER_SIZE]>::try_from(h).ok())
            .ok_or_else(|| {
                ParseError::new(pos as u64, "file ends inside the 61-byte batch header")
            })?;
        let bytes = data
            .get(pos..pos.saturating_add(entry_len))
            .ok_or_else(|| ParseError::new(pos as u64, "file ends inside the batch"))?;
        Ok(RecordBatch {
            position: pos as u64,
            header,
            bytes,
        })
    }

    /// The batch at segment position `pos` of `w`, `entry_len` bytes in
    /// total; as [`RecordBatch::new`], positions counted in the segment.
    pub fn in_window(w: &Window<'a>, pos: u64, entry_len: usize) -> Result<Self, ParseError> {
        let header = w
            .get(pos, V2_HEADER_SIZE)
            .and_then(|h| <&[u8; V2_HEADER_SIZE]>::try_from(h).ok())
            .ok_or_else(|| ParseError::new(pos, "file ends inside the 61-byte batch header"))?;
        let bytes = w
            .get(pos, entry_len)
            .ok_or_else(|| ParseError::new(pos, "file ends inside the batch"))?;
        Ok(RecordBatch {
            position: pos,
            header,
            bytes,
        })
    }

    /// The whole entry (log overhead included).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// `baseOffset`.
    pub fn base_offset(&self) -> i64 {
        be_i64(self.header, 0)
    }
    /// `batchLength` (bytes after this field).
    pub fn batch_length(&self) -> i32 {
        be_i32(self.header, 8)
    }
    /// Total size: batchLength + 12.
    pub fn size_in_bytes(&self) -> i64 {
        self.batch_length() as i64 + LOG_OVERHEAD as i64
    }
    /// `partitionLeaderEpoch`.
    pub fn partition_leader_epoch(&self) -> i32 {
        be_i32(self.header, 12)
    }
    /// Magic byte (2, or any larger value Kafka also reads as v2).
    pub fn magic(&self) -> i8 {
        self.header[16] as i8
    }
    /// Stored CRC-32C.
    pub fn crc(&self) -> u32 {
        be_i32(self.header, 17) as u32
    }
    /// Attributes (low byte; Kafka ignores the high byte).
    pub fn attributes(&self) -> u8 {
        self.header[22]
    }
    /// `lastOffsetDelta`.
    pub fn last_offset_delta(&self) -> i32 {
        be_i32(self.header, 23)
    }
    /// baseOffset + lastOffsetDelta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(self.last_offset_delta() as i64)
    }
    /// `baseTimestamp` (the delete horizon when that bit is set).
    pub fn base_timestamp(&self) -> i64 {
        be_i64(self.header, 27)
    }
    /// `maxTimestamp`.
    pub fn max_timestamp(&self) -> i64 {
        be_i64(self.header, 35)
    }
    /// `producerId`.
    pub fn producer_id(&self) -> i64 {
        be_i64(self.header, 43)
    }
    /// `producerEpoch`.
    pub fn producer_epoch(&self) -> i16 {
        be_i16(self.header, 51)
    }
    /// `baseSequence`.
    pub fn base_sequence(&self) -> i32 {
        be_i32(self.header, 53)
    }
    /// Sequence of the last record (wrapping), -1 without a base sequence.
    pub fn last_sequence(&self) -> i32 {
        let base = self.base_sequence();
        if base == -1 {
            -1
        } else {
            increment_sequence(base, self.last_offset_delta())
        }
    }
    /// `recordsCount`.
    pub fn records_count(&self) -> i32 {
        be_i32(self.header, 57)
    }
    /// Compression codec id (bits 0–2).
    pub fn compression_id(&self) -> u8 {
        self.attributes() & 0x07
    }
    /// Compression codec; `None` for the invalid ids 5–7.
    pub fn compression(&self) -> Option<Codec> {
        Codec::from_id(self.compression_id())
    }
    /// CreateTime or LogAppendTime (bit 3).
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes() & 0x08 == 0 {
            TimestampType::CreateTime
        } else {
            TimestampType::LogAppendTime
        }
    }
    /// Transactional bit (4).
    pub fn is_transactional(&self) -> bool {
        self.attributes() & 0x10 != 0
    }
    /// Control bit (5).
    pub fn is_control(&self) -> bool {
        self.attributes() & 0x20 != 0
    }
    /// The delete horizon (bit 6 set: the base timestamp).
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        if self.attributes() & 0x40 != 0 {
            Some(self.base_timestamp())
        } else {
            None
        }
    }
    /// CRC-32C over attributes..end, as computed.
    pub fn computed_crc(&self) -> u32 {
        self.bytes.get(21..).map_or(0, crate::format::crc::crc32c)
    }
    /// Kafka's `isValid`: size ≥ 61 and the CRC matches.
    pub fn is_valid(&self) -> bool {
        self.bytes.len() >= V2_HEADER_SIZE && self.crc() == self.computed_crc()
    }
    /// The records area (after the header); empty for a short batch.
    pub fn records_area(&self) -> &'a [u8] {
        self.bytes.get(V2_HEADER_SIZE..).unwrap_or(&[])
    }

    fn context(&self) -> RecordContext {
        RecordContext {
            base_offset: self.base_offset(),
            base_timestamp: self.base_timestamp(),
            base_sequence: self.base_sequence(),
            log_append_time: match self.timestamp_type() {
                TimestampType::LogAppendTime => Some(self.max_timestamp()),
                _ => None,
            },
        }
    }

    /// The records, as Kafka's `DefaultRecordBatch.iterator()` yields them.
    ///
    /// Uncompressed batches are parsed lazily: an error surfaces at the
    /// record where it happens (records before it are yielded). Compressed
    /// batches are decompressed into `scratch` (at most `cap` bytes) and fully
    /// validated before the first record is yielded, so an error in a
    /// compressed batch yields no record at all, like Kafka.
    pub fn records<'s>(
        &self,
        scratch: &'s mut Vec<u8>,
        cap: usize,
    ) -> Result<Records<'s>, ParseError>
    where
        'a: 's,
    {
        let pos = self.position;
        let count = self.records_count();
        if self.bytes.len() < V2_HEADER_SIZE {
            return Err(ParseError::new(
                pos,
                format!(
                    "batch of {} bytes is shorter than the 61-byte header",
                    self.bytes.len()
                ),
            ));
        }
        if count == 0 {
            return Ok(Records::empty());
        }
        let codec = self.compression().ok_or_else(|| {
            ParseError::new(
                pos + 21,
                format!("unknown compression type id {}", self.compression_id()),
            )
        })?;
        if count < 0 {
            return Err(ParseError::new(
                pos + 57,
                format!("found invalid record count {count} in magic v2 batch"),
            ));
        }
        let ctx = self.context();
        if codec == Codec::None {
            return Ok(Records {
                buf: self.records_area(),
                base: pos + V2_HEADER_SIZE as u64,
                compressed: false,
                cur: 0,
                left: count as u32,
                ctx,
                failed: false,
            });
        }
        // N records need at least N * MIN_RECORD_SIZE decompressed bytes:
        // a count the cap cannot hold is refused before inflating anything.
        if (count as u64).saturating_mul(MIN_RECORD_SIZE as u64) > cap as u64 {
            return Err(ParseError::new(
                pos + 57,
                format!(
                    "batch at {pos}: {count} records need at least {} decompressed bytes, more than the cap of {cap} bytes",
                    count as u64 * MIN_RECORD_SIZE as u64
                ),
            ));
        }
        let data_pos = pos + V2_HEADER_SIZE as u64;
        codec::decompress(codec, self.records_area(), self.magic(), scratch, cap).map_err(|e| {
            ParseError::new(
                data_pos + e.pos,
                format!(
                    "batch at {pos}: {} decompression failed: {}",
                    codec.name(),
                    e.reason
                ),
            )
        })?;
        let buf: &'s [u8] = scratch;
        // Validate every record before yielding any.
        let mut at = 0usize;
        for _ in 0..count {
            let (_, next) = parse_record(buf, at, &ctx).map_err(|e| {
                ParseError::new(
                    pos,
                    format!("batch at {pos}: decompressed byte {}: {}", e.pos, e.reason),
                )
            })?;
            at = next;
        }
        if at != buf.len() {
            return Err(ParseError::new(
                pos,
                format!(
                    "batch at {pos}: incorrect declared batch size, {} decompressed bytes remain after {count} records",
                    buf.len() - at
                ),
            ));
        }
        Ok(Records {
            buf,
            base: pos,
            compressed: true,
            cur: 0,
            left: count as u32,
            ctx,
            failed: false,
        })
    }
}

/// Iterator over the records of a v2 batch; see [`RecordBatch::records`].
#[derive(Debug, Clone)]
pub struct Records<'a> {
    buf: &'a [u8],
    /// File position of `buf[0]` (uncompressed) or of the batch (compressed).
    base: u64,
    compressed: bool,
    cur: usize,
    left: u32,
    ctx: RecordContext,
    failed: bool,
}

impl<'a> Records<'a> {
    fn empty() -> Self {
        Records {
            buf: &[],
            base: 0,
            compressed: false,
            cur: 0,
            left: 0,
            ctx: RecordContext {
                base_offset: 0,
                base_timestamp: 0,
                base_sequence: -1,
                log_append_time: None,
            },
            failed: false,
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 || self.failed {
            return None;
        }
        match parse_record(self.buf, self.cur, &self.ctx) {
            Ok((rec, next)) => {
                self.left -= 1;
                self.cur = next;
                if self.left == 0 && self.cur != self.buf.len() && !self.compressed {
                    self.failed = true;
                    return Some(Err(ParseError::new(
                        self.base + self.cur as u64,
                        format!(
                            "incorrect declared batch size: {} bytes remain after the last record",
                            self.buf.len() - self.cur
                        ),
                    )));
                }
                Some(Ok(rec))
            }
            Err(e) => {
                self.failed = true;
                let pos = if self.compressed {
                    self.base
                } else {
                    self.base + e.pos as u64
                };
                Some(Err(ParseError::new(pos, e.reason)))
            }
        }
    }
}

/// One entry of a segment.
#[derive(Debug, Clone, Copy)]
pub enum Batch<'a> {
    /// A v2 (or higher magic) record batch.
    V2(RecordBatch<'a>),
    /// A legacy v0/v1 message (possibly a compressed wrapper). Negative magic
    /// values also land here, as in Kafka; their header cannot be read.
    Legacy(LegacyEntry<'a>),
}

impl<'a> Batch<'a> {
    /// Byte position in the segment.
    pub fn position(&self) -> u64 {
        match self {
            Batch::V2(b) => b.position,
            Batch::Legacy(e) => e.position,
        }
    }
    /// The first 8 bytes: base offset (v2) or offset (legacy).
    pub fn offset_field(&self) -> i64 {
        match self {
            Batch::V2(b) => b.base_offset(),
            Batch::Legacy(e) => e.offset,
        }
    }
    /// Last offset (v2: base + lastOffsetDelta; legacy: the offset field).
    pub fn last_offset(&self) -> i64 {
        match self {
            Batch::V2(b) => b.last_offset(),
            Batch::Legacy(e) => e.offset,
        }
    }
    /// Entry size in bytes (declared size + 12).
    pub fn size_in_bytes(&self) -> u64 {
        match self {
            Batch::V2(b) => b.bytes.len() as u64,
            Batch::Legacy(e) => e.bytes().len() as u64,
        }
    }
    /// Magic byte.
    pub fn magic(&self) -> i8 {
        match self {
            Batch::V2(b) => b.magic(),
            Batch::Legacy(e) => e.magic,
        }
    }
    /// An error when the stored checksum does not match the content (or the
    /// entry is too short to carry one).
    pub fn check_crc(&self) -> Result<(), ParseError> {
        match self {
            Batch::V2(b) => {
                if b.bytes.len() < V2_HEADER_SIZE {
                    Err(ParseError::new(
                        b.position,
                        format!(
                            "batch size {} is smaller than the minimum batch overhead 61",
                            b.bytes.len()
                        ),
                    ))
                } else if b.is_valid() {
                    Ok(())
                } else {
                    Err(ParseError::new(
                        b.position,
                        format!(
                            "CRC mismatch: stored crc32c {:#010x}, computed {:#010x}",
                            b.crc(),
                            b.computed_crc()
                        ),
                    ))
                }
            }
            Batch::Legacy(e) => e.check_crc(),
        }
    }
}

/// What ended an iteration that stopped without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailKind {
    /// 17 bytes or fewer left: too short to hold an entry header.
    Short,
    /// An entry header whose declared size runs past the end of the data.
    Truncated {
        /// Declared entry size (size field + 12).
        declared: i64,
    },
}

/// Bytes left after the last complete entry, when there are any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tail {
    /// Position of the first byte not part of a complete entry.
    pub position: u64,
    /// Number of bytes from there to the end of the iterated range.
    pub len: u64,
    /// Why iteration stopped there.
    pub kind: TailKind,
}

impl Tail {
    /// A human-readable description.
    pub fn describe(&self) -> String {
        match self.kind {
            TailKind::Short => format!("{} trailing bytes, too few for an entry header", self.len),
            TailKind::Truncated { declared } => format!(
                "truncated entry: declares {declared} bytes but only {} remain",
                self.len
            ),
        }
    }
}

/// A stretch of bytes skipped by [`SegmentIter::resync`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// First skipped byte.
    pub from: u64,
    /// Position of the next plausible entry (or the end of the range).
    pub to: u64,
}

/// A stretch of a segment's bytes held in memory: `data[0]` is byte `base`
/// of the segment. `complete` when the segment's bytes end where `data`
/// ends (a mapped or read file, a file of an archive); `false` for a window
/// of a file read a piece at a time, which has more bytes after `data`.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    /// The bytes.
    pub data: &'a [u8],
    /// Segment position of `data[0]`.
    pub base: u64,
    /// Whether the segment ends where `data` ends.
    pub complete: bool,
}

impl<'a> Window<'a> {
    /// All of a segment held in memory.
    pub fn whole(data: &'a [u8]) -> Self {
        Window {
            data,
            base: 0,
            complete: true,
        }
    }

    /// Segment position one past the last byte held.
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.data.len() as u64)
    }

    /// Bytes `[pos, pos + len)` of the segment, when all are held.
    pub fn get(&self, pos: u64, len: usize) -> Option<&'a [u8]> {
        let local = usize::try_from(pos.checked_sub(self.base)?).ok()?;
        self.data.get(local..local.checked_add(len)?)
    }

    /// Whether bytes `[pos, pos + len)` are not all held although the
    /// segment may have them: reading more of the file could supply them. A
    /// complete window that holds `pos` lacks nothing: past its end the
    /// segment has no bytes.
    pub fn lacks(&self, pos: u64, len: usize) -> bool {
        if pos < self.base {
            return true;
        }
        if self.get(pos, len).is_some() {
            return false;
        }
        !self.complete
    }
}

/// Where an iteration over the entries of a segment stands, apart from the
/// bytes: [`SegmentIter`] pairs it with a [`Window`] of a segment in
/// memory; a reader of files not held in memory pairs it with the window it
/// has read, reading more when [`Scan::needs`] says so. Either way the same
/// entries, errors, tails and skips come out for the same bytes.
#[derive(Debug, Clone)]
pub struct Scan {
    pos: u64,
    end: u64,
    done: bool,
    strict: bool,
    error_at: Option<u64>,
    /// Next candidate position of a resync not yet finished for lack of
    /// bytes.
    resync_at: Option<u64>,
    tail: Option<Tail>,
    /// Position and size of the entry the last [`Scan::next`] returned.
    last: Option<(u64, usize)>,
}

/// The outcome of [`Scan::resync`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resync {
    /// The iteration had not failed: nothing to skip.
    NotFailed,
    /// Skipped this range; the iteration resumes at its end.
    Skipped(Skipped),
    /// The window lacks bytes `[at, at + len)`: supply them and call again.
    Needs {
        /// First byte needed.
        at: u64,
        /// How many.
        len: usize,
    },
}

impl Scan {
    /// Entries starting in `[start, end)` (Kafka's `FileRecords.slice`).
    pub fn new(start: u64, end: u64) -> Self {
        Scan {
            pos: start.min(end),
            end,
            done: false,
            strict: false,
            error_at: None,
            resync_at: None,
            tail: None,
            last: None,
        }
    }

    /// See [`SegmentIter::strict`].
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Position of the next entry.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// End of the iterated range.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The tail that ended the iteration, if it ended on one.
    pub fn tail(&self) -> Option<Tail> {
        self.tail
    }

    /// Whether the iteration has ended (an error, a tail, the end).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The bytes `(at, len)` that [`Scan::next`] needs and `w` lacks, or
    /// `None` when `w` holds all it needs.
    pub fn needs(&self, w: &Window<'_>) -> Option<(u64, usize)> {
        if self.done {
            return None;
        }
        let pos = self.pos;
        if !self.header_fits(pos) {
            return None;
        }
        if w.lacks(pos, HEADER_SIZE_UP_TO_MAGIC) {
            return Some((pos, HEADER_SIZE_UP_TO_MAGIC));
        }
        let h = w.get(pos, HEADER_SIZE_UP_TO_MAGIC)?;
        let size = be_i32(h, 8);
        if size < MIN_SIZE_FIELD {
            return None;
        }
        let total = size as u64 + LOG_OVERHEAD as u64;
        if total > self.end - pos {
            return None;
        }
        // A v2 batch's 61-byte header is read even when the entry is
        // shorter (from the bytes after it, as Kafka does).
        let len = if h[16] as i8 >= 2 {
            total.max(V2_HEADER_SIZE as u64)
        } else {
            total
        } as usize;
        w.lacks(pos, len).then_some((pos, len))
    }

    /// Kafka: `position >= end - HEADER_SIZE_UP_TO_MAGIC` ends the data.
    fn header_fits(&self, pos: u64) -> bool {
        pos.saturating_add(HEADER_SIZE_UP_TO_MAGIC as u64) < self.end
    }

    /// The next entry, from the bytes of `w`. Ends (`None`) when `w` lacks
    /// bytes it needs ([`Scan::needs`]); the scan is then unchanged and can
    /// go on with a window that has them.
    pub fn next<'a>(&mut self, w: Window<'a>) -> Option<Result<Batch<'a>, ParseError>> {
        self.last = None;
        if self.done || self.needs(&w).is_some() {
            return None;
        }
        let pos = self.pos;
        let header = if self.header_fits(pos) {
            w.get(pos, HEADER_SIZE_UP_TO_MAGIC)
        } else {
            None
        };
        let Some(h) = header else {
            self.done = true;
            if self.end > pos {
                let tail = Tail {
                    position: pos,
                    len: self.end - pos,
                    kind: TailKind::Short,
                };
                self.tail = Some(tail);
                if self.strict {
                    return self.fail(ParseError::new(tail.position, tail.describe()));
                }
            }
            return None;
        };
        let offset = be_i64(h, 0);
        let size = be_i32(h, 8);
        let magic = h[16] as i8;
        if size < MIN_SIZE_FIELD {
            return self.fail(ParseError::new(
                pos,
                format!("found record size {size} smaller than minimum record overhead (14)"),
            ));
        }
        let total = size as usize + LOG_OVERHEAD;
        let entry = if total as u64 <= self.end - pos {
            w.get(pos, total)
        } else {
            None
        };
        let Some(entry) = entry else {
            self.done = true;
            let tail = Tail {
                position: pos,
                len: self.end - pos,
                kind: TailKind::Truncated {
                    declared: total as i64,
                },
            };
            self.tail = Some(tail);
            if self.strict {
                return self.fail(ParseError::new(tail.position, tail.describe()));
            }
            return None;
        };
        if self.strict && !(0..=2).contains(&magic) {
            return self.fail(ParseError::new(pos + 16, format!("bad magic {magic}")));
        }
        let item = if magic >= 2 {
            match RecordBatch::in_window(&w, pos, total) {
                // A last offset past the largest 64-bit offset is no offset
                // at all: every reader (dump, check, timeline, diff, salvage)
                // stops here on damage, rather than each reading the batch
                // its own way (a negative last offset, records dropped).
                Ok(b) if b.base_offset().checked_add(i64::from(b.last_offset_delta())).is_none() => {
                    return self.fail(ParseError::new(
                        pos,
                        format!(
                            "batch at base offset {} declares last offset delta {}: its last offset overflows a 64-bit offset",
                            b.base_offset(),
                            b.last_offset_delta()
                        ),
                    ))
                }
                Ok(b) => Batch::V2(b),
                Err(e) => return self.fail(e),
            }
        } else {
            Batch::Legacy(LegacyEntry::new(pos, offset, magic, entry))
        };
        if self.strict {
            if let Err(e) = item.check_crc() {
                return self.fail(e);
            }
        }
        self.pos = pos + total as u64;
        self.last = Some((pos, total));
        Some(Ok(item))
    }

    /// The entry the last [`Scan::next`] returned, framed again from the
    /// bytes of `w` (which still hold it); `None` when that call returned
    /// no entry.
    pub fn again<'a>(&self, w: Window<'a>) -> Option<Batch<'a>> {
        let (pos, total) = self.last?;
        let h = w.get(pos, HEADER_SIZE_UP_TO_MAGIC)?;
        let magic = h[16] as i8;
        if magic >= 2 {
            RecordBatch::in_window(&w, pos, total).ok().map(Batch::V2)
        } else {
            let entry = w.get(pos, total)?;
            Some(Batch::Legacy(LegacyEntry::new(
                pos,
                be_i64(h, 0),
                magic,
                entry,
            )))
        }
    }

    fn fail<'a>(&mut self, e: ParseError) -> Option<Result<Batch<'a>, ParseError>> {
        self.done = true;
        self.error_at = Some(self.pos);
        Some(Err(e))
    }

    /// After an error: scans forward from the failing position for the
    /// next plausible entry (a framing that fits in the range, a known magic
    /// and a matching checksum) and resumes iteration there (see
    /// [`SegmentIter::resync`]). When `w` lacks bytes the scan needs, says
    /// which; called again with them, it goes on where it stopped.
    pub fn resync(&mut self, w: &Window<'_>) -> Resync {
        let Some(from) = self.error_at else {
            return Resync::NotFailed;
        };
        let mut p = self.resync_at.unwrap_or(from + 1);
        while self.header_fits(p) {
            match plausible_in(w, p, self.end) {
                Plausible::Yes => {
                    self.error_at = None;
                    self.resync_at = None;
                    self.pos = p;
                    self.done = false;
                    return Resync::Skipped(Skipped { from, to: p });
                }
                Plausible::No => p += 1,
                Plausible::Needs(len) => {
                    self.resync_at = Some(p);
                    return Resync::Needs { at: p, len };
                }
            }
        }
        self.error_at = None;
        self.resync_at = None;
        self.pos = self.end;
        self.done = true;
        Resync::Skipped(Skipped { from, to: self.end })
    }
}

enum Plausible {
    Yes,
    No,
    Needs(usize),
}

/// Whether a CRC-valid entry with a known magic starts at `p` and fits
/// before `end`, from the bytes of `w`.
fn plausible_in(w: &Window<'_>, p: u64, end: u64) -> Plausible {
    if w.lacks(p, HEADER_SIZE_UP_TO_MAGIC) {
        return Plausible::Needs(HEADER_SIZE_UP_TO_MAGIC);
    }
    let Some(h) = w.get(p, HEADER_SIZE_UP_TO_MAGIC) else {
        return Plausible::No;
    };
    let size = be_i32(h, 8);
    if size < MIN_SIZE_FIELD {
        return Plausible::No;
    }
    let total = size as usize + LOG_OVERHEAD;
    if p.saturating_add(total as u64) > end {
        return Plausible::No;
    }
    if w.lacks(p, total) {
        return Plausible::Needs(total);
    }
    let Some(entry) = w.get(p, total) else {
        return Plausible::No;
    };
    let ok = match h[16] {
        2 => {
            total >= V2_HEADER_SIZE
                && be_i32(entry, 17) as u32 == crate::format::crc::crc32c(&entry[21..])
                && be_i32(entry, 57) >= 0
        }
        0 | 1 => {
            let crc = be_i32(entry, 12) as u32;
            crc == crc32fast::hash(&entry[16..])
        }
        _ => false,
    };
    if ok {
        Plausible::Yes
    } else {
        Plausible::No
    }
}

/// Whether a CRC-valid entry with a known magic starts at `p` and fits before
/// `end`.
pub fn plausible_entry_at(data: &[u8], p: usize, end: usize) -> bool {
    matches!(
        plausible_in(&Window::whole(data), p as u64, end.min(data.len()) as u64),
        Plausible::Yes
    )
}

/// Iterates the entries of a segment held in memory; see the module docs.
#[derive(Debug, Clone)]
pub struct SegmentIter<'a> {
    w: Window<'a>,
    scan: Scan,
}

impl<'a> SegmentIter<'a> {
    /// Iterates all of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self::with_range(data, 0, data.len())
    }

    /// The bytes of segment positions `[from, from + len)` that are in
    /// memory (fewer at the window's end; empty outside it).
    pub fn bytes_at(&self, from: u64, len: u64) -> &'a [u8] {
        let start = from
            .saturating_sub(self.w.base)
            .min(self.w.data.len() as u64) as usize;
        let end = (start as u64)
            .saturating_add(len)
            .min(self.w.data.len() as u64) as usize;
        &self.w.data[start..end]
    }

    /// Iterates entries starting in `[start, end)` (Kafka's
    /// `FileRecords.slice`). Headers of entries are still read from `data`
    /// beyond `end` when needed, as Kafka does.
    pub fn with_range(data: &'a [u8], start: usize, end: usize) -> Self {
        let end = end.min(data.len());
        SegmentIter {
            w: Window::whole(data),
            scan: Scan::new(start as u64, end as u64),
        }
    }

    /// Iterates the entries of `w` from `scan`'s position. When `w` is not
    /// complete, iteration ends quietly (no tail) at the first entry it does
    /// not hold whole.
    pub fn in_window(w: Window<'a>, scan: Scan) -> Self {
        SegmentIter { w, scan }
    }

    /// Strict mode: besides framing errors, a CRC mismatch, a magic other
    /// than 0, 1 or 2, and a tail (short or truncated) are errors, each
    /// ending the iteration at the entry's position (see [`Self::resync`]).
    /// The default mode follows Kafka: such entries are yielded and a tail
    /// ends the iteration quietly.
    pub fn strict(mut self) -> Self {
        self.scan = self.scan.strict();
        self
    }

    /// Position of the next entry.
    pub fn position(&self) -> u64 {
        self.scan.position()
    }

    /// The entries starting in `[start, end)` of the same bytes (a range of
    /// what this iterator holds: `start` at an entry's position).
    pub fn sub_range(&self, start: u64, end: u64) -> SegmentIter<'a> {
        SegmentIter::in_window(self.w, Scan::new(start, end.min(self.scan.end())))
    }

    /// The tail that ended the iteration, if it ended on one.
    pub fn tail(&self) -> Option<Tail> {
        self.scan.tail()
    }

    /// After an error: scans forward from the failing position for the next
    /// plausible entry (a framing that fits in the data, a known magic and a
    /// matching checksum) and resumes iteration there. Returns the skipped
    /// range, or `None` when the iteration had not failed (or, in a window
    /// that is not complete, could not finish the scan).
    pub fn resync(&mut self) -> Option<Skipped> {
        match self.scan.resync(&self.w) {
            Resync::Skipped(s) => Some(s),
            Resync::NotFailed | Resync::Needs { .. } => None,
        }
    }
}

impl<'a> Iterator for SegmentIter<'a> {
    type Item = Result<Batch<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.scan.next(self.w)
    }
}

/// Why reading an entry failed: the bytes (a framing or checksum error at a
/// position), or the machine (a read that failed, a refusal to hold an
/// entry in memory). Only the first is evidence about the data.
#[derive(Debug)]
pub enum EntryError {
    /// The bytes are bad there.
    Bad(ParseError),
    /// Reading failed; nothing is known about the bytes.
    Io(std::io::Error),
}

impl From<ParseError> for EntryError {
    fn from(e: ParseError) -> Self {
        EntryError::Bad(e)
    }
}

/// The entries of a segment, however its bytes are held: a
/// [`SegmentIter`] over bytes in memory, or a reader that reads a file a
/// window at a time. The same bytes give the same entries either way.
pub trait Entries {
    /// The next entry (see [`SegmentIter`]).
    fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>>;
    /// See [`SegmentIter::resync`].
    fn resync(&mut self) -> Result<Option<Skipped>, EntryError>;
    /// The tail that ended the iteration, if it ended on one.
    fn tail(&self) -> Option<Tail>;
    /// Position of the next entry.
    fn position(&self) -> u64;
    /// The entries from the current position that are already in memory,
    /// to look ahead (the iteration itself does not move).
    fn ahead(&self) -> SegmentIter<'_>;
    /// What maps bytes of [`Self::ahead`] into memory before they are
    /// read, for a worker to call on the bytes after those in hand (a
    /// memory-mapped file's pages); `None` when they are in memory already.
    fn page_in(&self) -> Option<fn(&[u8])> {
        None
    }
    /// The entry the last [`Self::next_entry`] returned, framed again from
    /// the bytes still held (`None` when it returned none). A lending
    /// reader such as [`crate::format::walk::Walk`] decides what to do with
    /// an entry, then takes it again to hand it out. Entries that wrap
    /// others forward it: the default has no entry to give.
    fn again(&self) -> Option<Batch<'_>> {
        None
    }
    /// `Ok` while the bytes are what they were when opened; else the error
    /// saying they changed while read (a file something writes to). A
    /// checksum that fails in bytes that changed under the reader is not
    /// evidence. Bytes in memory never change: the default.
    fn unchanged(&self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<T: Entries + ?Sized> Entries for Box<T> {
    fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
        (**self).next_entry()
    }
    fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
        (**self).resync()
    }
    fn tail(&self) -> Option<Tail> {
        (**self).tail()
    }
    fn position(&self) -> u64 {
        (**self).position()
    }
    fn ahead(&self) -> SegmentIter<'_> {
        (**self).ahead()
    }
    fn page_in(&self) -> Option<fn(&[u8])> {
        (**self).page_in()
    }
    fn again(&self) -> Option<Batch<'_>> {
        (**self).again()
    }
    fn unchanged(&self) -> std::io::Result<()> {
        (**self).unchanged()
    }
}

impl<T: Entries + ?Sized> Entries for &mut T {
    fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
        (**self).next_entry()
    }
    fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
        (**self).resync()
    }
    fn tail(&self) -> Option<Tail> {
        (**self).tail()
    }
    fn position(&self) -> u64 {
        (**self).position()
    }
    fn ahead(&self) -> SegmentIter<'_> {
        (**self).ahead()
    }
    fn page_in(&self) -> Option<fn(&[u8])> {
        (**self).page_in()
    }
    fn again(&self) -> Option<Batch<'_>> {
        (**self).again()
    }
    fn unchanged(&self) -> std::io::Result<()> {
        (**self).unchanged()
    }
}

impl Entries for SegmentIter<'_> {
    fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
        self.next().map(|r| r.map_err(EntryError::Bad))
    }
    fn again(&self) -> Option<Batch<'_>> {
        self.scan.again(self.w)
    }
    fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
        Ok(SegmentIter::resync(self))
    }
    fn tail(&self) -> Option<Tail> {
        SegmentIter::tail(self)
    }
    fn position(&self) -> u64 {
        SegmentIter::position(self)
    }
    fn ahead(&self) -> SegmentIter<'_> {
        let mut scan = Scan::new(self.scan.position(), self.scan.end());
        if self.scan.is_done() {
            scan.done = true;
        }
        SegmentIter::in_window(self.w, scan)
    }
}

/// A segment's bytes, however they are held, from which [`Entries`] are
/// read: bytes in memory, or a file read a window at a time.
pub trait SegmentSource {
    /// Size in bytes.
    fn len(&self) -> u64;
    /// Whether it has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The entries starting in `[start, end)` (see
    /// [`SegmentIter::with_range`]).
    fn entries(&self, start: u64, end: u64) -> Box<dyn Entries + '_>;
}

/// Bytes in memory (a slice, a vector, a mapped file).
impl<T: AsRef<[u8]>> SegmentSource for T {
    fn len(&self) -> u64 {
        self.as_ref().len() as u64
    }
    fn entries(&self, start: u64, end: u64) -> Box<dyn Entries + '_> {
        let end = usize::try_from(end).unwrap_or(usize::MAX);
        let start = usize::try_from(start).unwrap_or(usize::MAX);
        Box::new(SegmentIter::with_range(self.as_ref(), start, end))
    }
}

/// Builds a v2 batch from records (for tests and synthetic data). The CRC is
/// computed; `records` is the encoded records area (uncompressed).
#[allow(clippy::too_many_arguments)]
pub fn encode_batch(
    base_offset: i64,
    partition_leader_epoch: i32,
    attributes: u16,
    last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    producer: (i64, i16, i32),
    count: i32,
    records: &[u8],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(V2_HEADER_SIZE + records.len());
    b.extend_from_slice(&base_offset.to_be_bytes());
    b.extend_from_slice(&((V2_HEADER_SIZE - LOG_OVERHEAD + records.len()) as i32).to_be_bytes());
    b.extend_from_slice(&partition_leader_epoch.to_be_bytes());
    b.push(2);
    b.extend_from_slice(&[0, 0, 0, 0]);
    b.extend_from_slice(&attributes.to_be_bytes());
    b.extend_from_slice(&last_offset_delta.to_be_bytes());
    b.extend_from_slice(&base_timestamp.to_be_bytes());
    b.extend_from_slice(&max_timestamp.to_be_bytes());
    b.extend_from_slice(&producer.0.to_be_bytes());
    b.extend_from_slice(&producer.1.to_be_bytes());
    b.extend_from_slice(&producer.2.to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(records);
    let crc = crate::format::crc::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::record::encode_record;

    fn sample(base: i64, n: i32) -> Vec<u8> {
        let mut recs = Vec::new();
        for i in 0..n {
            encode_record(&mut recs, i as i64, i, Some(b"k"), Some(b"v"), &[]);
        }
        encode_batch(
            base,
            0,
            0,
            n - 1,
            1000,
            1000 + n as i64 - 1,
            (-1, -1, -1),
            n,
            &recs,
        )
    }

    #[test]
    fn worked_example_crc() {
        // §3.6 of the on-disk notes.
        let mut recs = Vec::new();
        encode_record(&mut recs, 0, 0, Some(b"k"), Some(b"v"), &[]);
        let b = encode_batch(
            0,
            0,
            0,
            0,
            1_700_000_000_000,
            1_700_000_000_000,
            (-1, -1, -1),
            1,
            &recs,
        );
        assert_eq!(b.len(), 70);
        let batch = RecordBatch::new(&b, 0, b.len()).unwrap();
        assert!(batch.is_valid());
        assert_eq!(batch.crc(), crate::format::crc::crc32c(&b[21..]));
    }

    #[test]
    fn iterates_batches_and_records() {
        let mut seg = sample(0, 3);
        seg.extend(sample(3, 2));
        let mut it = SegmentIter::new(&seg);
        let mut scratch = Vec::new();
        let mut offsets = Vec::new();
        for b in &mut it {
            let Batch::V2(b) = b.unwrap() else { panic!() };
            assert!(b.is_valid());
            for r in b.records(&mut scratch, 1 << 20).unwrap() {
                offsets.push(r.unwrap().offset);
            }
        }
        assert_eq!(offsets, vec![0, 1, 2, 3, 4]);
        assert_eq!(it.tail(), None);
    }

    #[test]
    fn tails_and_zero_fill() {
        let one = sample(0, 1);
        let mut seg = one.clone();
        seg.extend_from_slice(&[0u8; 10]);
        let mut it = SegmentIter::new(&seg);
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().is_none());
        assert_eq!(it.tail().unwrap().kind, TailKind::Short);

        let mut seg = one.clone();
        seg.extend_from_slice(&one[..40]);
        let mut it = SegmentIter::new(&seg);
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().is_none());
        assert!(matches!(
            it.tail().unwrap().kind,
            TailKind::Truncated { .. }
        ));

        let mut seg = one.clone();
        seg.extend_from_slice(&[0u8; 100]);
        seg.extend(sample(5, 2));
        let mut it = SegmentIter::new(&seg);
        assert!(it.next().unwrap().is_ok());
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.pos, one.len() as u64);
        assert!(it.next().is_none());
        let skipped = it.resync().unwrap();
        assert_eq!(skipped.from, one.len() as u64);
        assert_eq!(skipped.to, one.len() as u64 + 100);
        let b = it.next().unwrap().unwrap();
        assert_eq!(b.offset_field(), 5);
    }

    #[test]
    fn strict_mode_errors() {
        let one = sample(0, 2);
        let mut seg = one.clone();
        let n = seg.len();
        seg[n - 2] ^= 0xff;
        seg.extend(sample(2, 2));
        let mut it = SegmentIter::new(&seg).strict();
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.pos, 0);
        assert!(e.reason.contains("CRC"));
        let s = it.resync().unwrap();
        assert_eq!(s.to, one.len() as u64);
        assert_eq!(it.next().unwrap().unwrap().offset_field(), 2);
        let mut torn = one.clone();
        torn.extend_from_slice(&one[..30]);
        let mut it = SegmentIter::new(&torn).strict();
        assert!(it.next().unwrap().is_ok());
        assert_eq!(it.next().unwrap().unwrap_err().pos, one.len() as u64);
        let mut bad_magic = one.clone();
        bad_magic[16] = 7;
        let e = SegmentIter::new(&bad_magic)
            .strict()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.pos, 16);
    }

    #[test]
    fn crc_flip_detected() {
        let mut seg = sample(0, 2);
        let n = seg.len();
        seg[n - 2] ^= 0xff;
        let b = SegmentIter::new(&seg).next().unwrap().unwrap();
        assert!(b.check_crc().is_err());
    }

    #[test]
    fn trailing_bytes_in_records_area() {
        let mut recs = Vec::new();
        encode_record(&mut recs, 0, 0, None, Some(b"v"), &[]);
        recs.extend_from_slice(&[0, 0]);
        let b = encode_batch(0, 0, 0, 0, 0, 0, (-1, -1, -1), 1, &recs);
        let rb = RecordBatch::new(&b, 0, b.len()).unwrap();
        let mut s = Vec::new();
        let mut it = rb.records(&mut s, 1 << 20).unwrap();
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut seed = 0x9e37_79b9u32;
        let mut scratch = Vec::new();
        for round in 0..2000usize {
            let base = sample(0, 3);
            let mut buf = base.clone();
            for _ in 0..(round % 7 + 1) {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let i = seed as usize % buf.len();
                buf[i] = (seed >> 8) as u8;
            }
            buf.truncate(buf.len() - round % 13);
            let mut it = SegmentIter::new(&buf);
            loop {
                match it.next() {
                    Some(Ok(Batch::V2(b))) => {
                        let _ = b.is_valid();
                        let _ = b.last_sequence();
                        if let Ok(rs) = b.records(&mut scratch, 1 << 20) {
                            for r in rs.flatten() {
                                let _ = r.headers().count();
                            }
                        }
                    }
                    Some(Ok(Batch::Legacy(_))) => {}
                    Some(Err(_)) => {
                        if it.resync().is_none() {
                            break;
                        }
                    }
                    None => break,
                }
            }
        }
    }
}
