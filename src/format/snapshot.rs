//! Producer state snapshot (`<offset>.snapshot`), big-endian:
//! int16 version (1), uint32 CRC-32C of bytes `[6, end)`, int32 entry
//! count, then 46-byte entries (producerId i64, epoch i16, lastSequence
//! i32, lastOffset i64, offsetDelta i32, timestamp i64, coordinatorEpoch
//! i32, currentTxnFirstOffset i64).

use super::bytes::{be_i16, be_i32, be_i64, be_u32};
use crate::format::ParseError;

/// Byte position where the CRC-covered part (entry count + entries) starts.
pub const ENTRIES_OFFSET: usize = 6;
/// Size of one producer entry.
pub const ENTRY_SIZE: usize = 46;
/// The only snapshot version Kafka reads.
pub const VERSION: i16 = 1;

/// One producer of the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerEntry {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    /// Last data offset; negative means the entry carries no batch metadata.
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    /// Negative = no open transaction.
    pub current_txn_first_offset: i64,
}

impl ProducerEntry {
    /// Whether Kafka keeps batch metadata for this producer (lastOffset >= 0).
    pub fn has_batch_metadata(&self) -> bool {
        self.last_offset >= 0
    }

    /// First sequence of the last batch, with the sequence wraparound
    /// (`DefaultRecordBatch.decrementSequence`).
    pub fn first_sequence(&self) -> i32 {
        decrement_sequence(self.last_sequence, self.offset_delta)
    }

    /// First offset of the last batch.
    pub fn first_offset(&self) -> i64 {
        self.last_offset.wrapping_sub(i64::from(self.offset_delta))
    }

    /// The open transaction's first offset, when there is one.
    pub fn current_txn_first_offset(&self) -> Option<i64> {
        (self.current_txn_first_offset >= 0).then_some(self.current_txn_first_offset)
    }
}

/// `sequence - decrement`, wrapping below zero to `i32::MAX` as Kafka does.
pub fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        (i32::MAX as i64 - (i64::from(decrement) - i64::from(sequence)) + 1) as i32
    } else {
        sequence - decrement
    }
}

/// A parsed snapshot. The CRC is reported, not enforced: see [`ProducerSnapshot::check_crc`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerSnapshot {
    pub version: i16,
    /// Stored CRC.
    pub crc: u32,
    /// CRC-32C computed over bytes `[6, end of file)`.
    pub computed_crc: u32,
    pub entries: Vec<ProducerEntry>,
    /// Bytes after the last entry (covered by the CRC, otherwise ignored).
    pub trailing_bytes: usize,
}

impl ProducerSnapshot {
    /// Kafka's CRC check; the error reason is Kafka's message.
    pub fn check_crc(&self) -> Result<(), ParseError> {
        crc_matches(self.crc, self.computed_crc)
    }
}

fn crc_matches(stored: u32, computed: u32) -> Result<(), ParseError> {
    if stored != computed {
        return Err(ParseError::new(
            2,
            format!(
                "Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
            ),
        ));
    }
    Ok(())
}

/// A field the schema requires: Kafka's message for a read past the end.
fn need<T>(v: Option<T>, pos: usize) -> Result<T, ParseError> {
    v.ok_or_else(|| ParseError::new(pos as u64, "Snapshot failed schema validation: null"))
}

/// Parses a snapshot file's structure (version, count, entries). Schema
/// failures return an error whose reason is Kafka's
/// `Snapshot failed schema validation: …` message. The CRC is computed but
/// not enforced here; call [`ProducerSnapshot::check_crc`] (or
/// [`read_producer_snapshot`]) for Kafka's full check.
pub fn parse_producer_snapshot(data: &[u8]) -> Result<ProducerSnapshot, ParseError> {
    let view = view_producer_snapshot(data)?;
    Ok(ProducerSnapshot {
        version: view.version,
        crc: view.crc,
        computed_crc: view.computed_crc,
        entries: view.entries().collect(),
        trailing_bytes: view.trailing_bytes,
    })
}

/// A snapshot whose structure was checked ([`view_producer_snapshot`]),
/// its entries read from the bytes on demand: what
/// [`parse_producer_snapshot`] gives, without holding the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotView<'a> {
    /// File version.
    pub version: i16,
    /// Stored CRC-32C.
    pub crc: u32,
    /// CRC-32C of the bytes from offset 6 to the end.
    pub computed_crc: u32,
    /// Number of entries (all present in the bytes).
    pub count: usize,
    /// Bytes after the last entry.
    pub trailing_bytes: usize,
    data: &'a [u8],
}

impl<'a> SnapshotView<'a> {
    /// The entries, in file order, read as they are asked for.
    pub fn entries(&self) -> impl Iterator<Item = ProducerEntry> + 'a {
        let data = self.data;
        (0..self.count).filter_map(move |i| entry_at(data, 10 + i * ENTRY_SIZE).ok())
    }

    /// Kafka's CRC check ([`ProducerSnapshot::check_crc`]).
    pub fn check_crc(&self) -> Result<(), ParseError> {
        crc_matches(self.crc, self.computed_crc)
    }
}

/// The entry at byte `pos`, or the error of its first field the bytes cut.
fn entry_at(data: &[u8], pos: usize) -> Result<ProducerEntry, ParseError> {
    let i64_at = |o: usize| need(be_i64(data, pos + o), pos + o);
    let i32_at = |o: usize| need(be_i32(data, pos + o), pos + o);
    Ok(ProducerEntry {
        producer_id: i64_at(0)?,
        producer_epoch: need(be_i16(data, pos + 8), pos + 8)?,
        last_sequence: i32_at(10)?,
        last_offset: i64_at(14)?,
        offset_delta: i32_at(22)?,
        timestamp: i64_at(26)?,
        coordinator_epoch: i32_at(34)?,
        current_txn_first_offset: i64_at(38)?,
    })
}

/// Checks a snapshot's structure as [`parse_producer_snapshot`] does (the
/// same errors, at the same positions), leaving its entries in `data`.
pub fn view_producer_snapshot(data: &[u8]) -> Result<SnapshotView<'_>, ParseError> {
    let version = need(be_i16(data, 0), 0)?;
    if version != VERSION {
        return Err(ParseError::new(
            0,
            format!("Snapshot failed schema validation: Snapshot contained an unknown file version {version}"),
        ));
    }
    let crc = need(be_u32(data, 2), 2)?;
    let count = need(be_i32(data, 6), 6)?;
    let body = data.get(10..).unwrap_or(&[]);
    if count < 0 {
        return Err(ParseError::new(
            6,
            "Snapshot failed schema validation: non-nullable field producerEntries was serialized as null",
        ));
    }
    if count as usize > body.len() {
        return Err(ParseError::new(
            6,
            format!(
                "Snapshot failed schema validation: Tried to allocate a collection of size {count}, but there are only {} bytes remaining.",
                body.len()
            ),
        ));
    }
    let count = count as usize;
    let whole = body.len() / ENTRY_SIZE;
    if count > whole {
        // The first entry the bytes cut fails where Kafka's reader fails.
        let pos = 10 + whole * ENTRY_SIZE;
        return Err(entry_at(data, pos).err().unwrap_or_else(|| {
            ParseError::new(pos as u64, "Snapshot failed schema validation: null")
        }));
    }
    let end = 10 + count * ENTRY_SIZE;
    Ok(SnapshotView {
        version,
        crc,
        computed_crc: crate::format::crc::crc32c(data.get(ENTRIES_OFFSET..).unwrap_or(&[])),
        count,
        trailing_bytes: data.len().saturating_sub(end),
        data,
    })
}

/// Kafka's `ProducerStateManager.readSnapshot`: structure, then CRC.
pub fn read_producer_snapshot(data: &[u8]) -> Result<ProducerSnapshot, ParseError> {
    let snap = parse_producer_snapshot(data)?;
    snap.check_crc()?;
    Ok(snap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(entries: &[ProducerEntry], extra: &[u8]) -> Vec<u8> {
        let mut body = (entries.len() as i32).to_be_bytes().to_vec();
        for e in entries {
            body.extend_from_slice(&e.producer_id.to_be_bytes());
            body.extend_from_slice(&e.producer_epoch.to_be_bytes());
            body.extend_from_slice(&e.last_sequence.to_be_bytes());
            body.extend_from_slice(&e.last_offset.to_be_bytes());
            body.extend_from_slice(&e.offset_delta.to_be_bytes());
            body.extend_from_slice(&e.timestamp.to_be_bytes());
            body.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
            body.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
        }
        body.extend_from_slice(extra);
        let mut out = 1i16.to_be_bytes().to_vec();
        out.extend_from_slice(&crate::format::crc::crc32c(&body).to_be_bytes());
        out.extend(body);
        out
    }

    const E: ProducerEntry = ProducerEntry {
        producer_id: 1000,
        producer_epoch: 2,
        last_sequence: 4,
        last_offset: 99,
        offset_delta: 4,
        timestamp: 1_700_000_000_000,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    };

    #[test]
    fn roundtrip_and_crc() {
        let d = build(&[E], &[]);
        let s = read_producer_snapshot(&d).unwrap();
        assert_eq!(s.entries, vec![E]);
        assert_eq!(s.entries[0].first_sequence(), 0);
        assert_eq!(s.entries[0].first_offset(), 95);
        let mut bad = d.clone();
        bad.push(0);
        let err = read_producer_snapshot(&bad).unwrap_err();
        assert!(err
            .reason
            .starts_with("Snapshot is corrupt (CRC is no longer valid). Stored crc: "));
        assert!(parse_producer_snapshot(&bad).is_ok());
    }

    #[test]
    fn schema_errors() {
        assert_eq!(
            parse_producer_snapshot(&[0, 2, 0, 0, 0, 0, 0, 0, 0, 0])
                .unwrap_err()
                .reason,
            "Snapshot failed schema validation: Snapshot contained an unknown file version 2"
        );
        assert_eq!(
            parse_producer_snapshot(&[0]).unwrap_err().reason,
            "Snapshot failed schema validation: null"
        );
        let huge = [0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0];
        assert!(parse_producer_snapshot(&huge)
            .unwrap_err()
            .reason
            .contains("Tried to allocate"));
        let mut short = build(&[E], &[]);
        short.truncate(20);
        assert!(parse_producer_snapshot(&short).is_err());
    }

    #[test]
    fn sequence_wraps() {
        assert_eq!(decrement_sequence(2, 5), i32::MAX - 2);
        assert_eq!(decrement_sequence(5, 2), 3);
    }
}
