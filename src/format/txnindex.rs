//! Transaction index (`<base offset>.txnindex`): one 34-byte big-endian
//! entry per aborted transaction whose ABORT marker lies in the segment.
//!
//! | Off | Size | Field |
//! |---|---|---|
//! | 0 | 2 | version (written as int16 0; Kafka reads back only byte 0, signed) |
//! | 2 | 8 | producerId |
//! | 10 | 8 | firstOffset |
//! | 18 | 8 | lastOffset (offset of the ABORT marker) |
//! | 26 | 8 | lastStableOffset |
//!
//! A trailing partial entry (fewer than 34 bytes) is ignored by Kafka.

use crate::format::ParseError;

/// Size of one entry in bytes.
pub const ENTRY_SIZE: usize = 34;

/// Highest entry version Kafka accepts.
pub const CURRENT_VERSION: i8 = 0;

/// One aborted transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// Byte position of the entry in the file.
    pub position: u64,
    /// The signed first byte of the entry (what Kafka's `version()` returns).
    pub version: i8,
    /// The full stored int16 version field.
    pub raw_version: i16,
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// Whether Kafka accepts this entry (its version is not above 0).
    pub fn version_supported(&self) -> bool {
        self.version <= CURRENT_VERSION
    }

    fn from_bytes(position: u64, b: &[u8; ENTRY_SIZE]) -> Self {
        // Fields of a whole entry: the checked reads cannot fail.
        let be64 = |o: usize| super::bytes::be_i64(b, o).unwrap_or(-1);
        AbortedTxn {
            position,
            version: b[0] as i8,
            raw_version: super::bytes::be_i16(b, 0).unwrap_or(-1),
            producer_id: be64(2),
            first_offset: be64(10),
            last_offset: be64(18),
            last_stable_offset: be64(26),
        }
    }
}

/// A parsed transaction index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnIndex {
    /// All complete entries in file order (including ones with an
    /// unsupported version; see [`TxnIndex::first_bad_version`]).
    pub entries: Vec<AbortedTxn>,
    /// Bytes after the last complete entry (ignored by Kafka).
    pub trailing_bytes: usize,
}

impl TxnIndex {
    /// Index of the first entry Kafka would reject ("Unexpected aborted
    /// transaction version"), if any.
    pub fn first_bad_version(&self) -> Option<usize> {
        self.entries.iter().position(|e| !e.version_supported())
    }

    /// Checks Kafka's load-time sanity rule: every entry's lastOffset must be
    /// at or above the segment base offset.
    pub fn sanity_check(&self, base_offset: i64) -> Result<(), ParseError> {
        for e in &self.entries {
            if e.last_offset < base_offset {
                return Err(ParseError::new(
                    e.position + 18,
                    format!(
                        "last offset of the aborted transaction {} is less than the segment base offset {base_offset}",
                        e.last_offset
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Parses a whole `.txnindex` file. Never fails on content (every 34-byte
/// slot is an entry); the `Result` is kept for symmetry with other parsers.
pub fn parse_txn_index(data: &[u8]) -> Result<TxnIndex, ParseError> {
    let mut entries = Vec::with_capacity(data.len() / ENTRY_SIZE);
    let mut chunks = data.chunks_exact(ENTRY_SIZE);
    let mut position = 0u64;
    for chunk in &mut chunks {
        let mut b = [0u8; ENTRY_SIZE];
        b.copy_from_slice(chunk);
        entries.push(AbortedTxn::from_bytes(position, &b));
        position += ENTRY_SIZE as u64;
    }
    Ok(TxnIndex {
        entries,
        trailing_bytes: chunks.remainder().len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ver: [u8; 2], pid: i64, first: i64, last: i64, lso: i64) -> Vec<u8> {
        let mut v = ver.to_vec();
        for x in [pid, first, last, lso] {
            v.extend_from_slice(&x.to_be_bytes());
        }
        v
    }

    #[test]
    fn parses_entries_and_ignores_partial_tail() {
        let mut d = entry([0, 0], 7, 10, 20, 10);
        d.extend(entry([0, 9], 8, 30, 40, 30));
        d.extend_from_slice(&[1, 2, 3]);
        let idx = parse_txn_index(&d).unwrap();
        assert_eq!(idx.entries.len(), 2);
        assert_eq!(idx.trailing_bytes, 3);
        assert_eq!(idx.entries[1].version, 0);
        assert_eq!(idx.entries[1].raw_version, 9);
        assert_eq!(idx.entries[1].last_offset, 40);
        assert_eq!(idx.entries[1].position, 34);
        assert_eq!(idx.first_bad_version(), None);
        assert!(idx.sanity_check(20).is_ok());
        assert_eq!(idx.sanity_check(21).unwrap_err().pos, 18);
    }

    #[test]
    fn version_is_signed_first_byte() {
        let idx = parse_txn_index(&entry([0xff, 0], 1, 2, 3, 4)).unwrap();
        assert_eq!(idx.entries[0].version, -1);
        assert!(idx.entries[0].version_supported());
        let idx = parse_txn_index(&entry([1, 0], 1, 2, 3, 4)).unwrap();
        assert_eq!(idx.first_bad_version(), Some(0));
        assert!(parse_txn_index(&[]).unwrap().entries.is_empty());
    }
}
