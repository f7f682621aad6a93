//! The one checked reader of klf's parsers: big-endian integers at a
//! position ([`be_i16`], [`be_i32`], [`be_i64`], ... returning `None` past
//! the end) and a [`Reader`] that walks a slice, every read returning a
//! [`ParseError`] with the byte position where it failed. No read here can
//! panic, whatever the input.

use byteorder::{BigEndian, ByteOrder};

use crate::format::varint::{read_uvarint, read_uvarlong, read_varint, read_varlong, VarintError};
use crate::format::ParseError;

macro_rules! be_at {
    ($($name:ident: $t:ty = $n:literal, $read:ident;)*) => {
        $(
            #[doc = concat!("The big-endian `", stringify!($t), "` at `at`; `None` when it runs past the end.")]
            #[inline]
            pub fn $name(b: &[u8], at: usize) -> Option<$t> {
                Some(BigEndian::$read(b.get(at..at.checked_add($n)?)?))
            }
        )*
    };
}

be_at! {
    be_i16: i16 = 2, read_i16;
    be_u16: u16 = 2, read_u16;
    be_i32: i32 = 4, read_i32;
    be_u32: u32 = 4, read_u32;
    be_i64: i64 = 8, read_i64;
    be_u64: u64 = 8, read_u64;
}

/// Reason used for reads past the end of the input. Java reports these
/// as a `BufferUnderflowException`, whose message is `null`.
pub const UNDERFLOW: &str = "unexpected end of data";

/// Big-endian cursor over a byte slice; every read is bounds-checked.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, reporting positions as `base + offset`.
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Reader { buf, pos: 0, base }
    }
    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// Current position (relative to the slice start).
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// An error at the current position.
    pub fn err(&self, reason: impl Into<std::borrow::Cow<'static, str>>) -> ParseError {
        ParseError::new(self.base + self.pos as u64, reason)
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        if n > self.remaining() {
            return Err(self.err(UNDERFLOW));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// The next `N` bytes as an array.
    pub fn arr<const N: usize>(&mut self) -> Result<[u8; N], ParseError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    /// A big-endian `i8`.
    pub fn i8(&mut self) -> Result<i8, ParseError> {
        Ok(i8::from_be_bytes(self.arr()?))
    }
    /// A big-endian `i16`.
    pub fn i16(&mut self) -> Result<i16, ParseError> {
        Ok(BigEndian::read_i16(self.take(2)?))
    }
    /// A big-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, ParseError> {
        Ok(BigEndian::read_u16(self.take(2)?))
    }
    /// A big-endian `i32`.
    pub fn i32(&mut self) -> Result<i32, ParseError> {
        Ok(BigEndian::read_i32(self.take(4)?))
    }
    /// A big-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, ParseError> {
        Ok(BigEndian::read_u32(self.take(4)?))
    }
    /// A big-endian `i64`.
    pub fn i64(&mut self) -> Result<i64, ParseError> {
        Ok(BigEndian::read_i64(self.take(8)?))
    }
    /// A big-endian `f64`.
    pub fn f64(&mut self) -> Result<f64, ParseError> {
        Ok(BigEndian::read_f64(self.take(8)?))
    }
    /// 16 bytes (a UUID).
    pub fn uuid(&mut self) -> Result<[u8; 16], ParseError> {
        self.arr()
    }
    /// Unsigned varint of at most 5 bytes (Java `readUnsignedVarint`).
    pub fn uvarint(&mut self) -> Result<u32, ParseError> {
        let start = self.pos;
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = match self.buf.get(self.pos) {
                Some(b) => *b,
                None => return Err(self.err(UNDERFLOW)),
            };
            self.pos += 1;
            value |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.pos = start;
        Err(self.err("varint is too long, the most significant bit in the 5th byte is set"))
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, ParseError> {
        Ok(self.arr::<1>()?[0])
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The position in the whole input (`base` + position in the slice).
    pub fn absolute(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// A zigzag varint (Kafka's `ByteUtils.readVarint`).
    #[inline]
    pub fn varint(&mut self) -> Result<i32, ParseError> {
        let (v, n) = read_varint(self.buf, self.pos).map_err(|e| self.err(e.reason()))?;
        self.pos += n;
        Ok(v)
    }

    /// A zigzag varlong (Kafka's `ByteUtils.readVarlong`).
    #[inline]
    pub fn varlong(&mut self) -> Result<i64, ParseError> {
        let (v, n) = read_varlong(self.buf, self.pos).map_err(|e| self.err(e.reason()))?;
        self.pos += n;
        Ok(v)
    }

    /// An unsigned varlong.
    #[inline]
    pub fn uvarlong(&mut self) -> Result<u64, ParseError> {
        let (v, n) = read_uvarlong(self.buf, self.pos).map_err(|e| self.err(e.reason()))?;
        self.pos += n;
        Ok(v)
    }
}

/// A forward reader of varints over a byte slice that tracks its position:
/// the record parser's cursor (the hot path of deep dumps), answering
/// `Option`/[`VarintError`] where [`crate::format::bytes::Reader`] answers
/// a positioned [`crate::format::ParseError`]; its fixed-size reads are the
/// same checked reads.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Current position in the slice.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Reads a zigzag varint.
    #[inline]
    pub fn varint(&mut self) -> Result<i32, VarintError> {
        let (v, n) = read_varint(self.buf, self.pos)?;
        self.pos += n;
        Ok(v)
    }

    /// Reads a zigzag varlong.
    #[inline]
    pub fn varlong(&mut self) -> Result<i64, VarintError> {
        let (v, n) = read_varlong(self.buf, self.pos)?;
        self.pos += n;
        Ok(v)
    }

    /// Reads an unsigned varint.
    #[inline]
    pub fn uvarint(&mut self) -> Result<u32, VarintError> {
        let (v, n) = read_uvarint(self.buf, self.pos)?;
        self.pos += n;
        Ok(v)
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// Reads `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// Reads a big-endian i16.
    pub fn i16(&mut self) -> Option<i16> {
        self.bytes(2).and_then(|b| be_i16(b, 0))
    }

    /// Reads a big-endian u16.
    pub fn u16(&mut self) -> Option<u16> {
        self.bytes(2).and_then(|b| be_u16(b, 0))
    }

    /// Reads a big-endian i32.
    pub fn i32(&mut self) -> Option<i32> {
        self.bytes(4).and_then(|b| be_i32(b, 0))
    }

    /// Reads a big-endian i64.
    pub fn i64(&mut self) -> Option<i64> {
        self.bytes(8).and_then(|b| be_i64(b, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_the_end_fail_with_the_position() {
        assert_eq!(be_i32(&[0, 0, 1, 2], 0), Some(258));
        assert_eq!(be_i32(&[0, 0, 1], 0), None);
        assert_eq!(be_i64(&[0; 8], usize::MAX), None);
        let mut r = Reader::new(&[0, 5, 0xff], 100);
        assert_eq!(r.i16().unwrap(), 5);
        let e = r.i16().unwrap_err();
        assert_eq!(e.pos, 102);
        assert_eq!(r.u8().unwrap(), 0xff);
        assert!(r.is_empty());
        let mut v = Reader::new(&[0x80, 0x80], 7);
        assert_eq!(v.varint().unwrap_err().pos, 7);
    }
}
