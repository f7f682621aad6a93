//! Legacy message sets (magic v0 and v1): one message per log entry, or a
//! compressed wrapper message whose value holds an inner message set.
//!
//! Semantics follow Kafka's `LegacyRecord` and `AbstractLegacyRecordBatch`:
//! v0 has no timestamp (-1, `NoTimestampType`); any magic other than 0 is laid
//! out as v1; a negative key or value length is null; inner offsets of a v1
//! wrapper are relative to the wrapper's (last) offset; a partial inner entry
//! at the end of the decompressed data is dropped silently.

use super::codec::{self, Codec};
use super::framing::{TimestampType, LOG_OVERHEAD};
use super::ParseError;

/// Bytes of a message before the key length: crc, magic, attributes (+ v1
/// timestamp).
pub const HEADER_SIZE_V0: usize = 6;
/// See [`HEADER_SIZE_V0`].
pub const HEADER_SIZE_V1: usize = 14;
/// Smallest valid message (v0 overhead).
pub const RECORD_OVERHEAD_V0: usize = 14;

use super::bytes::{be_i32, be_i64};

/// One legacy message (the bytes after the entry's offset and size).
#[derive(Debug, Clone, Copy)]
pub struct LegacyRecord<'a> {
    buf: &'a [u8],
    wrapper: Option<(i64, TimestampType)>,
}

impl<'a> LegacyRecord<'a> {
    /// A view over a message. `buf` must hold at least 14 bytes for the
    /// fixed fields to be readable; shorter input reads as invalid.
    pub fn new(buf: &'a [u8]) -> Self {
        LegacyRecord { buf, wrapper: None }
    }

    /// The raw message bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// Stored CRC-32 (unsigned).
    pub fn crc(&self) -> u32 {
        be_i32(self.buf, 0).unwrap_or(0) as u32
    }
    /// CRC-32 of magic..end, as computed.
    pub fn computed_crc(&self) -> u32 {
        self.buf.get(4..).map_or(0, crc32fast::hash)
    }
    /// Kafka's `isValid`: at least 14 bytes and a matching CRC.
    pub fn is_valid(&self) -> bool {
        self.buf.len() >= RECORD_OVERHEAD_V0 && self.crc() == self.computed_crc()
    }
    /// Magic byte.
    pub fn magic(&self) -> i8 {
        self.buf.get(4).map_or(0, |&b| b as i8)
    }
    /// Attributes byte.
    pub fn attributes(&self) -> u8 {
        self.buf.get(5).copied().unwrap_or(0)
    }
    /// Compression codec; `None` for ids 5–7.
    pub fn compression(&self) -> Option<Codec> {
        Codec::from_id(self.attributes() & 0x07)
    }
    /// Timestamp type (v0: none; inner v1 messages: the wrapper's).
    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic() == 0 {
            TimestampType::NoTimestampType
        } else if let Some((_, t)) = self.wrapper {
            t
        } else if self.attributes() & 0x08 == 0 {
            TimestampType::CreateTime
        } else {
            TimestampType::LogAppendTime
        }
    }
    /// Timestamp: -1 for v0; the wrapper's for inner messages of a
    /// LogAppendTime wrapper; else the stored field.
    pub fn timestamp(&self) -> i64 {
        if self.magic() == 0 {
            return -1;
        }
        if let Some((ts, TimestampType::LogAppendTime)) = self.wrapper {
            return ts;
        }
        self.buf.get(6..14).and_then(|s| be_i64(s, 0)).unwrap_or(-1)
    }
    fn key_size_offset(&self) -> usize {
        if self.magic() == 0 {
            HEADER_SIZE_V0
        } else {
            HEADER_SIZE_V1
        }
    }
    /// Stored key length (negative = null), printed as stored by Kafka.
    pub fn key_size(&self) -> Result<i32, &'static str> {
        be_i32(self.buf, self.key_size_offset()).ok_or("message too short for its key length")
    }
    fn value_size_offset(&self) -> Result<usize, &'static str> {
        Ok(self.key_size_offset() + 4 + self.key_size()?.max(0) as usize)
    }
    /// Stored value length (negative = null).
    pub fn value_size(&self) -> Result<i32, &'static str> {
        be_i32(self.buf, self.value_size_offset()?).ok_or("message too short for its value length")
    }
    fn size_delimited(&self, at: usize) -> Result<Option<&'a [u8]>, &'static str> {
        let size = be_i32(self.buf, at).ok_or("message too short for a length field")?;
        if size < 0 {
            return Ok(None);
        }
        let start = at + 4;
        self.buf
            .get(start..start + size as usize)
            .map(Some)
            .ok_or("key or value runs past the end of the message")
    }
    /// Key (`None` for null).
    pub fn key(&self) -> Result<Option<&'a [u8]>, &'static str> {
        self.size_delimited(self.key_size_offset())
    }
    /// Value (`None` for null).
    pub fn value(&self) -> Result<Option<&'a [u8]>, &'static str> {
        self.size_delimited(self.value_size_offset()?)
    }
}

/// A legacy log entry: offset, size and one (possibly wrapper) message.
#[derive(Debug, Clone, Copy)]
pub struct LegacyEntry<'a> {
    /// Byte position in the segment.
    pub position: u64,
    /// The offset field (for a wrapper: the offset of its last inner message).
    pub offset: i64,
    /// Magic byte (signed; only 0 and 1 are readable).
    pub magic: i8,
    bytes: &'a [u8],
}

impl<'a> LegacyEntry<'a> {
    /// A view over a whole entry (log overhead included).
    pub fn new(position: u64, offset: i64, magic: i8, bytes: &'a [u8]) -> Self {
        LegacyEntry {
            position,
            offset,
            magic,
            bytes,
        }
    }
    /// The whole entry.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Fails for magic values other than 0 and 1, whose header Kafka cannot
    /// load.
    pub fn check_magic(&self) -> Result<(), ParseError> {
        if self.magic == 0 || self.magic == 1 {
            Ok(())
        } else {
            Err(ParseError::new(
                self.position + 16,
                format!("unknown legacy magic value {}", self.magic),
            ))
        }
    }
    /// The message.
    pub fn record(&self) -> LegacyRecord<'a> {
        LegacyRecord::new(self.bytes.get(LOG_OVERHEAD..).unwrap_or(&[]))
    }
    /// An error when the CRC does not match (or the magic is unreadable).
    pub fn check_crc(&self) -> Result<(), ParseError> {
        self.check_magic()?;
        let r = self.record();
        if r.is_valid() {
            Ok(())
        } else {
            Err(ParseError::new(
                self.position,
                format!(
                    "CRC mismatch: stored crc32 {:#010x}, computed {:#010x}",
                    r.crc(),
                    r.computed_crc()
                ),
            ))
        }
    }

    /// The messages of this entry as Kafka's deep iteration yields them: the
    /// entry itself when uncompressed, else the inner messages of the
    /// decompressed value (decompressed into `scratch`, at most `cap` bytes,
    /// and framed before the first one is yielded).
    pub fn records<'s>(
        &self,
        scratch: &'s mut Vec<u8>,
        cap: usize,
    ) -> Result<LegacyRecords<'s>, ParseError>
    where
        'a: 's,
    {
        self.check_magic()?;
        let outer = self.record();
        let pos = self.position;
        let codec = outer.compression().ok_or_else(|| {
            ParseError::new(
                pos + 17,
                format!("unknown compression type id {}", outer.attributes() & 7),
            )
        })?;
        if codec == Codec::None {
            return Ok(LegacyRecords {
                single: Some((self.offset, outer)),
                buf: &[],
                cur: 0,
                base: 0,
                relative: false,
                wrapper: None,
                entry_pos: pos,
                failed: false,
            });
        }
        if codec == Codec::Zstd {
            return Err(ParseError::new(
                pos,
                "invalid wrapper compression type zstd in a legacy message",
            ));
        }
        let value = outer
            .value()
            .map_err(|r| ParseError::new(pos, r))?
            .ok_or_else(|| {
                ParseError::new(
                    pos,
                    format!(
                        "found invalid compressed record set with null value (magic = {})",
                        self.magic
                    ),
                )
            })?;
        codec::decompress(codec, value, self.magic, scratch, cap).map_err(|e| {
            ParseError::new(
                pos,
                format!(
                    "wrapper at {pos}: {} decompression failed at compressed byte {}: {}",
                    codec.name(),
                    e.pos,
                    e.reason
                ),
            )
        })?;
        let buf: &'s [u8] = scratch;
        // Frame the inner entries first: Kafka reads them all before the
        // first one is returned (offsets of v1 are relative to the last).
        let mut p = 0usize;
        let mut last_inner: Option<i64> = None;
        while let Some(h) = buf.get(p..p + LOG_OVERHEAD) {
            let off = be_i64(h, 0).unwrap_or(-1);
            let size = be_i32(h, 8).unwrap_or(-1);
            if size < RECORD_OVERHEAD_V0 as i32 {
                return Err(ParseError::new(
                    pos,
                    format!(
                        "wrapper at {pos}: inner message at decompressed byte {p} has size {size}, less than the minimum record overhead (14)"
                    ),
                ));
            }
            let end = p + LOG_OVERHEAD + size as usize;
            if end > buf.len() {
                break;
            }
            last_inner = Some(off);
            p = end;
        }
        let framed_end = p;
        let Some(last_inner) = last_inner else {
            return Err(ParseError::new(
                pos,
                "found invalid compressed record set with no inner records",
            ));
        };
        let (relative, base) = if self.magic == 1 {
            if self.offset == 0 {
                (true, 0)
            } else if self.offset < last_inner {
                return Err(ParseError::new(
                    pos,
                    format!(
                        "found invalid wrapper offset in compressed v1 message set, wrapper offset '{}' is less than the last inner message offset '{last_inner}' and it is not zero",
                        self.offset
                    ),
                ));
            } else {
                (true, self.offset.wrapping_sub(last_inner))
            }
        } else {
            (false, 0)
        };
        Ok(LegacyRecords {
            single: None,
            buf: &buf[..framed_end],
            cur: 0,
            base,
            relative,
            wrapper: Some((outer.timestamp(), outer.timestamp_type())),
            entry_pos: pos,
            failed: false,
        })
    }
}

/// A message yielded by deep iteration, with its absolute offset.
#[derive(Debug, Clone, Copy)]
pub struct LegacyMessage<'a> {
    /// Absolute offset.
    pub offset: i64,
    /// The message.
    pub record: LegacyRecord<'a>,
}

/// Iterator over the messages of a legacy entry.
#[derive(Debug, Clone)]
pub struct LegacyRecords<'a> {
    single: Option<(i64, LegacyRecord<'a>)>,
    buf: &'a [u8],
    cur: usize,
    base: i64,
    relative: bool,
    wrapper: Option<(i64, TimestampType)>,
    entry_pos: u64,
    failed: bool,
}

impl<'a> Iterator for LegacyRecords<'a> {
    type Item = Result<LegacyMessage<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some((offset, record)) = self.single.take() {
            return Some(Ok(LegacyMessage { offset, record }));
        }
        if self.failed {
            return None;
        }
        let h = self.buf.get(self.cur..self.cur + LOG_OVERHEAD)?;
        let off = be_i64(h, 0).unwrap_or(-1);
        let size = be_i32(h, 8).unwrap_or(-1) as usize;
        let start = self.cur + LOG_OVERHEAD;
        let msg = self.buf.get(start..start + size)?;
        self.cur = start + size;
        let mut record = LegacyRecord::new(msg);
        if record.magic() == 1 {
            record.wrapper = self.wrapper;
        }
        let offset = if self.relative {
            self.base.wrapping_add(off)
        } else {
            off
        };
        match record.compression() {
            Some(Codec::None) => Some(Ok(LegacyMessage { offset, record })),
            _ => {
                self.failed = true;
                Some(Err(ParseError::new(
                    self.entry_pos,
                    format!(
                        "wrapper at {}: inner message at decompressed byte {} is compressed; inner messages must not be compressed",
                        self.entry_pos,
                        start - LOG_OVERHEAD
                    ),
                )))
            }
        }
    }
}

/// Encodes one legacy entry (offset, size, message) with a correct CRC (for
/// tests and synthetic data).
pub fn encode_entry(
    offset: i64,
    magic: u8,
    attributes: u8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Vec<u8> {
    let mut m = vec![0, 0, 0, 0, magic, attributes];
    if magic != 0 {
        m.extend_from_slice(&timestamp.to_be_bytes());
    }
    for f in [key, value] {
        match f {
            Some(b) => {
                m.extend_from_slice(&(b.len() as i32).to_be_bytes());
                m.extend_from_slice(b);
            }
            None => m.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let crc = crc32fast::hash(&m[4..]);
    m[..4].copy_from_slice(&crc.to_be_bytes());
    let mut e = offset.to_be_bytes().to_vec();
    e.extend_from_slice(&(m.len() as i32).to_be_bytes());
    e.extend_from_slice(&m);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{Batch, SegmentIter};
    use std::io::Write;

    #[test]
    fn v0_and_v1_plain() {
        let mut seg = encode_entry(0, 0, 0, 0, Some(b"k"), Some(b"v0"));
        seg.extend(encode_entry(1, 1, 0, 1234, None, Some(b"v1")));
        let mut scratch = Vec::new();
        let got: Vec<_> = SegmentIter::new(&seg)
            .map(|b| match b.unwrap() {
                Batch::Legacy(e) => {
                    assert!(e.check_crc().is_ok());
                    let m = e
                        .records(&mut scratch, 1 << 20)
                        .unwrap()
                        .next()
                        .unwrap()
                        .unwrap();
                    (
                        m.offset,
                        m.record.timestamp(),
                        m.record.key_size().unwrap(),
                        m.record.value().unwrap().map(|v| v.to_vec()),
                    )
                }
                Batch::V2(_) => panic!(),
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (0, -1, 1, Some(b"v0".to_vec())),
                (1, 1234, -1, Some(b"v1".to_vec()))
            ]
        );
    }

    #[test]
    fn v1_gzip_wrapper_relative_offsets() {
        let mut inner = Vec::new();
        for i in 0..3 {
            inner.extend(encode_entry(i, 1, 0, 100 + i, None, Some(b"x")));
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&inner).unwrap();
        let value = gz.finish().unwrap();
        // LogAppendTime wrapper: inner timestamps become the wrapper's.
        let seg = encode_entry(12, 1, 1 | 0x08, 999, None, Some(&value));
        let Some(Ok(Batch::Legacy(e))) = SegmentIter::new(&seg).next() else {
            panic!()
        };
        let mut scratch = Vec::new();
        let msgs: Vec<_> = e
            .records(&mut scratch, 1 << 20)
            .unwrap()
            .map(|m| m.unwrap())
            .map(|m| (m.offset, m.record.timestamp()))
            .collect();
        assert_eq!(msgs, vec![(10, 999), (11, 999), (12, 999)]);
    }

    #[test]
    fn short_and_bad_magic() {
        let e = LegacyEntry::new(0, 0, -3, &[0u8; 26]);
        assert!(e.check_magic().is_err());
        let r = LegacyRecord::new(&[0u8; 14][..]);
        // v0 with 14 bytes: key size at 6, value size at 10.
        assert_eq!(r.key_size(), Ok(0));
        let tiny = LegacyRecord::new(&[0, 0, 0, 0, 1, 0, 0][..]);
        assert!(tiny.key_size().is_err());
        assert!(!tiny.is_valid());
    }
}
