//! Kafka's variable-length integers.
//!
//! Record fields use zigzag varints (`int32`, at most 5 bytes) and varlongs
//! (`int64`, at most 10 bytes), least significant 7-bit group first, bit 7 set
//! while more bytes follow. KRaft framing and "flexible" messages use the same
//! grouping without zigzag ([`read_uvarint`]).
//!
//! Decoding mirrors Kafka's `ByteUtils`: a value that does not terminate within
//! the maximum length is an error, and (as in Kafka) value bits of the last
//! allowed byte that do not fit the integer are dropped rather than rejected.
//! Every function reads through `get`, so truncated input is an error, never a
//! panic.

use super::ParseError;

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The input ended before the last byte of the varint.
    Truncated,
    /// More than 5 (varint) or 10 (varlong) bytes had the continuation bit.
    TooLong,
}

impl VarintError {
    /// A static description.
    pub fn reason(self) -> &'static str {
        match self {
            VarintError::Truncated => "truncated varint",
            VarintError::TooLong => "varint does not terminate within its maximum length",
        }
    }

    /// As a [`ParseError`] at byte `pos`.
    pub fn at(self, pos: u64) -> ParseError {
        ParseError::new(pos, self.reason())
    }
}

/// Reads an unsigned varint (no zigzag) of at most 5 bytes at `buf[pos..]`.
/// Returns the value and the number of bytes consumed.
#[inline]
pub fn read_uvarint(buf: &[u8], pos: usize) -> Result<(u32, usize), VarintError> {
    let mut value: u32 = 0;
    for i in 0..5usize {
        let idx = pos.checked_add(i).ok_or(VarintError::Truncated)?;
        let b = *buf.get(idx).ok_or(VarintError::Truncated)?;
        // Kafka shifts the fifth group by 28 in 32-bit arithmetic: its upper
        // bits fall off. Same here.
        value |= ((b & 0x7f) as u32).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(VarintError::TooLong)
}

/// Reads an unsigned varlong (no zigzag) of at most 10 bytes.
#[inline]
pub fn read_uvarlong(buf: &[u8], pos: usize) -> Result<(u64, usize), VarintError> {
    let mut value: u64 = 0;
    for i in 0..10usize {
        let idx = pos.checked_add(i).ok_or(VarintError::Truncated)?;
        let b = *buf.get(idx).ok_or(VarintError::Truncated)?;
        value |= ((b & 0x7f) as u64).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(VarintError::TooLong)
}

/// Zigzag-decodes a 32-bit value.
#[inline]
pub fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Zigzag-decodes a 64-bit value.
#[inline]
pub fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads a zigzag varint (Kafka `readVarint`).
#[inline]
pub fn read_varint(buf: &[u8], pos: usize) -> Result<(i32, usize), VarintError> {
    // Fast path: one byte.
    if let Some(&b) = buf.get(pos) {
        if b & 0x80 == 0 {
            return Ok((unzigzag32(b as u32), 1));
        }
    }
    let (v, n) = read_uvarint(buf, pos)?;
    Ok((unzigzag32(v), n))
}

/// Reads a zigzag varlong (Kafka `readVarlong`).
#[inline]
pub fn read_varlong(buf: &[u8], pos: usize) -> Result<(i64, usize), VarintError> {
    if let Some(&b) = buf.get(pos) {
        if b & 0x80 == 0 {
            return Ok((unzigzag64(b as u64), 1));
        }
    }
    let (v, n) = read_uvarlong(buf, pos)?;
    Ok((unzigzag64(v), n))
}

/// Appends the zigzag varint encoding of `v` (used by tests and by writers of
/// synthetic data).
pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_uvarlong(out, ((v << 1) ^ (v >> 31)) as u32 as u64);
}

/// Appends the zigzag varlong encoding of `v`.
pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_uvarlong(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends the unsigned base-128 encoding of `v`.
pub fn write_uvarlong(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_varint() {
        for v in [0, 1, -1, 63, -64, 64, 300, -300, i32::MAX, i32::MIN] {
            let mut b = Vec::new();
            write_varint(&mut b, v);
            assert_eq!(read_varint(&b, 0), Ok((v, b.len())), "{v}");
        }
    }

    #[test]
    fn roundtrip_varlong() {
        for v in [0i64, 1, -1, 1 << 40, -(1 << 40), i64::MAX, i64::MIN] {
            let mut b = Vec::new();
            write_varlong(&mut b, v);
            assert_eq!(read_varlong(&b, 0), Ok((v, b.len())), "{v}");
        }
    }

    #[test]
    fn known_bytes() {
        assert_eq!(read_varint(&[0x10], 0), Ok((8, 1)));
        assert_eq!(read_varint(&[0x02], 0), Ok((1, 1)));
        assert_eq!(read_varint(&[0x01], 0), Ok((-1, 1)));
        assert_eq!(read_varint(&[0xac, 0x02], 0), Ok((150, 2)));
    }

    #[test]
    fn truncated_and_too_long() {
        assert_eq!(read_varint(&[], 0), Err(VarintError::Truncated));
        assert_eq!(read_varint(&[0x80], 0), Err(VarintError::Truncated));
        assert_eq!(read_varint(&[0x80, 0x80], 5), Err(VarintError::Truncated));
        assert_eq!(
            read_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01], 0),
            Err(VarintError::TooLong)
        );
        assert_eq!(read_varlong(&[0xff; 11], 0), Err(VarintError::TooLong));
        assert_eq!(read_varlong(&[0xff; 9], 0), Err(VarintError::Truncated));
        assert_eq!(
            read_varint(&[0x00], usize::MAX),
            Err(VarintError::Truncated)
        );
    }

    #[test]
    fn fifth_byte_excess_bits_dropped_like_kafka() {
        // 0x7f in the fifth byte: Kafka computes 0x7f << 28 in 32 bits.
        let (v, n) = read_uvarint(&[0xff, 0xff, 0xff, 0xff, 0x7f], 0).unwrap();
        assert_eq!(n, 5);
        assert_eq!(v, 0xffff_ffff);
    }
}
