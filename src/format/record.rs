//! Records of a v2 batch (`DefaultRecord`): zigzag varint framing, key, value
//! and headers, parsed as zero-copy views.
//!
//! Validation mirrors Kafka's `DefaultRecord.readFrom`: the body must be
//! exactly `length` bytes, header counts and header key lengths must not be
//! negative, and a negative key or value length means null.

use super::bytes::Cursor;
use super::varint::VarintError;

/// What a batch contributes to the values of its records.
#[derive(Debug, Clone, Copy)]
pub struct RecordContext {
    /// Batch base offset.
    pub base_offset: i64,
    /// Batch base timestamp (or delete horizon).
    pub base_timestamp: i64,
    /// Batch base sequence (-1 if none).
    pub base_sequence: i32,
    /// `Some(max timestamp)` for LogAppendTime batches: every record's
    /// timestamp is then the batch's max timestamp.
    pub log_append_time: Option<i64>,
}

/// One record, borrowing key, value and headers from the batch bytes (or from
/// the decompression buffer).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Record attributes byte (unused by Kafka).
    pub attributes: i8,
    /// Timestamp delta as stored.
    pub timestamp_delta: i64,
    /// Offset delta as stored.
    pub offset_delta: i32,
    /// Absolute offset: base offset + offset delta.
    pub offset: i64,
    /// Timestamp (LogAppendTime batches: the batch max timestamp).
    pub timestamp: i64,
    /// Sequence number, -1 when the batch has none.
    pub sequence: i32,
    /// Key; `None` for null.
    pub key: Option<&'a [u8]>,
    /// Value; `None` for null (tombstone).
    pub value: Option<&'a [u8]>,
    /// Number of headers.
    pub header_count: u32,
    /// The encoded headers (already validated).
    headers_raw: &'a [u8],
    /// Total encoded size, including the length varint.
    pub size_in_bytes: usize,
}

impl<'a> Record<'a> {
    /// Key size as Kafka reports it (-1 for null).
    pub fn key_size(&self) -> i32 {
        self.key.map_or(-1, |k| k.len() as i32)
    }

    /// Value size as Kafka reports it (-1 for null).
    pub fn value_size(&self) -> i32 {
        self.value.map_or(-1, |v| v.len() as i32)
    }

    /// The headers, in order.
    pub fn headers(&self) -> Headers<'a> {
        Headers {
            cur: Cursor::new(self.headers_raw),
            left: self.header_count,
        }
    }
}

/// One record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// Header key bytes (Kafka decodes them as UTF-8).
    pub key: &'a [u8],
    /// Header value; `None` for null.
    pub value: Option<&'a [u8]>,
}

/// Iterator over the (pre-validated) headers of a record.
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    cur: Cursor<'a>,
    left: u32,
}

impl<'a> Iterator for Headers<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (key, value) = read_header(&mut self.cur).ok()?;
        Some(Header { key, value })
    }
}

/// Why a record could not be read, with the byte position (relative to the
/// records area given to [`parse_record`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// Position relative to the start of the records area.
    pub pos: usize,
    /// Reason.
    pub reason: std::borrow::Cow<'static, str>,
}

impl RecordError {
    fn new(pos: usize, reason: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        RecordError {
            pos,
            reason: reason.into(),
        }
    }
}

type HeaderPair<'a> = (&'a [u8], Option<&'a [u8]>);

fn read_header<'a>(cur: &mut Cursor<'a>) -> Result<HeaderPair<'a>, &'static str> {
    let klen = cur.varint().map_err(VarintError::reason)?;
    if klen < 0 {
        return Err("invalid negative header key size");
    }
    let key = cur
        .bytes(klen as usize)
        .ok_or("header key runs past the record")?;
    let vlen = cur.varint().map_err(VarintError::reason)?;
    let value = if vlen >= 0 {
        Some(
            cur.bytes(vlen as usize)
                .ok_or("header value runs past the record")?,
        )
    } else {
        None
    };
    Ok((key, value))
}

/// Kafka's `DefaultRecordBatch.incrementSequence` (wraps at `i32::MAX` to 0).
#[inline]
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// Parses the record starting at `buf[pos..]`. Returns the record and the
/// position just after it.
pub fn parse_record<'a>(
    buf: &'a [u8],
    pos: usize,
    ctx: &RecordContext,
) -> Result<(Record<'a>, usize), RecordError> {
    let (len, n) = super::varint::read_varint(buf, pos).map_err(|e| {
        RecordError::new(
            pos,
            match e {
                VarintError::Truncated => "premature end of records (record length)",
                VarintError::TooLong => "record length varint too long",
            },
        )
    })?;
    let body_start = pos + n;
    if len < 0 {
        return Err(RecordError::new(pos, format!("invalid record size {len}")));
    }
    let remaining = buf.len() - body_start;
    if (len as usize) > remaining {
        return Err(RecordError::new(
            pos,
            format!(
                "invalid record size: expected {len} bytes in record payload, but only {remaining} remain"
            ),
        ));
    }
    let body_end = body_start + len as usize;
    let body = &buf[body_start..body_end];
    let at = |c: &Cursor<'_>| body_start + c.pos();
    let mut cur = Cursor::new(body);
    let attributes = cur
        .u8()
        .ok_or_else(|| RecordError::new(at(&cur), "record body too short for attributes"))?
        as i8;
    let timestamp_delta = cur
        .varlong()
        .map_err(|e| RecordError::new(at(&cur), format!("timestamp delta: {}", e.reason())))?;
    let offset_delta = cur
        .varint()
        .map_err(|e| RecordError::new(at(&cur), format!("offset delta: {}", e.reason())))?;
    let key_len = cur
        .varint()
        .map_err(|e| RecordError::new(at(&cur), format!("key length: {}", e.reason())))?;
    let key = if key_len >= 0 {
        Some(cur.bytes(key_len as usize).ok_or_else(|| {
            RecordError::new(
                at(&cur),
                format!("key of {key_len} bytes runs past the record"),
            )
        })?)
    } else {
        None
    };
    let value_len = cur
        .varint()
        .map_err(|e| RecordError::new(at(&cur), format!("value length: {}", e.reason())))?;
    let value = if value_len >= 0 {
        Some(cur.bytes(value_len as usize).ok_or_else(|| {
            RecordError::new(
                at(&cur),
                format!("value of {value_len} bytes runs past the record"),
            )
        })?)
    } else {
        None
    };
    let hpos = at(&cur);
    let header_count = cur
        .varint()
        .map_err(|e| RecordError::new(hpos, format!("header count: {}", e.reason())))?;
    if header_count < 0 {
        return Err(RecordError::new(
            hpos,
            format!("found invalid number of record headers {header_count}"),
        ));
    }
    if header_count as usize > cur.remaining() {
        return Err(RecordError::new(
            hpos,
            format!(
                "found invalid number of record headers: {header_count} is larger than the remaining size {}",
                cur.remaining()
            ),
        ));
    }
    let headers_start = cur.pos();
    for _ in 0..header_count {
        let p = at(&cur);
        read_header(&mut cur).map_err(|r| RecordError::new(p, r))?;
    }
    let headers_raw = &body[headers_start..cur.pos()];
    if cur.remaining() != 0 {
        return Err(RecordError::new(
            at(&cur),
            format!(
                "invalid record size: expected to read {len} bytes in record payload, but instead read {}",
                cur.pos()
            ),
        ));
    }
    let timestamp = match ctx.log_append_time {
        Some(t) => t,
        None => ctx.base_timestamp.wrapping_add(timestamp_delta),
    };
    let sequence = if ctx.base_sequence >= 0 {
        increment_sequence(ctx.base_sequence, offset_delta)
    } else {
        -1
    };
    Ok((
        Record {
            attributes,
            timestamp_delta,
            offset_delta,
            offset: ctx.base_offset.wrapping_add(offset_delta as i64),
            timestamp,
            sequence,
            key,
            value,
            header_count: header_count as u32,
            headers_raw,
            size_in_bytes: body_end - pos,
        },
        body_end,
    ))
}

/// Appends the encoding of one record (for tests and synthetic data).
pub fn encode_record(
    out: &mut Vec<u8>,
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&[u8], Option<&[u8]>)],
) {
    use super::varint::{write_varint, write_varlong};
    let mut body = vec![0u8];
    write_varlong(&mut body, timestamp_delta);
    write_varint(&mut body, offset_delta);
    for field in [key, value] {
        match field {
            Some(b) => {
                write_varint(&mut body, b.len() as i32);
                body.extend_from_slice(b);
            }
            None => write_varint(&mut body, -1),
        }
    }
    write_varint(&mut body, headers.len() as i32);
    for (k, v) in headers {
        write_varint(&mut body, k.len() as i32);
        body.extend_from_slice(k);
        match v {
            Some(v) => {
                write_varint(&mut body, v.len() as i32);
                body.extend_from_slice(v);
            }
            None => write_varint(&mut body, -1),
        }
    }
    write_varint(out, body.len() as i32);
    out.extend_from_slice(&body);
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: RecordContext = RecordContext {
        base_offset: 100,
        base_timestamp: 1_700_000_000_000,
        base_sequence: 5,
        log_append_time: None,
    };

    #[test]
    fn worked_example() {
        // From the on-disk notes §3.6: len=8 attrs tsΔ offΔ keyLen=1 'k' valLen=1 'v' headers=0
        let b = [0x10, 0x00, 0x00, 0x00, 0x02, b'k', 0x02, b'v', 0x00];
        let (r, end) = parse_record(&b, 0, &CTX).unwrap();
        assert_eq!(end, 9);
        assert_eq!(r.key, Some(&b"k"[..]));
        assert_eq!(r.value, Some(&b"v"[..]));
        assert_eq!(r.offset, 100);
        assert_eq!(r.sequence, 5);
        assert_eq!(r.headers().count(), 0);
    }

    #[test]
    fn headers_nulls_and_append_time() {
        let mut b = Vec::new();
        encode_record(
            &mut b,
            7,
            3,
            None,
            None,
            &[(b"h1", Some(b"x")), (b"h2", None)],
        );
        let ctx = RecordContext {
            log_append_time: Some(42),
            ..CTX
        };
        let (r, _) = parse_record(&b, 0, &ctx).unwrap();
        assert_eq!((r.key_size(), r.value_size()), (-1, -1));
        assert_eq!(r.timestamp, 42);
        assert_eq!(r.offset, 103);
        let h: Vec<_> = r.headers().collect();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].key, b"h1");
        assert_eq!(h[1].value, None);
    }

    #[test]
    fn sequence_wraps() {
        assert_eq!(increment_sequence(i32::MAX, 1), 0);
        assert_eq!(increment_sequence(i32::MAX - 1, 3), 1);
        assert_eq!(increment_sequence(0, 4), 4);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let mut b = Vec::new();
        encode_record(
            &mut b,
            1,
            2,
            Some(b"key"),
            Some(b"value"),
            &[(b"h", Some(b"v"))],
        );
        for cut in 0..b.len() {
            assert!(parse_record(&b[..cut], 0, &CTX).is_err(), "cut {cut}");
        }
        // Declared length longer than the body actually used.
        let mut longer = b.clone();
        longer[0] += 2;
        longer.extend_from_slice(&[0, 0]);
        assert!(parse_record(&longer, 0, &CTX).is_err());
    }
}

/// Control records: the record key names the type; the value layout depends
/// on it (transaction markers, KRaft control messages).
pub mod control {
    use crate::format::bytes::Cursor;
    use std::borrow::Cow;

    /// Kafka's `ControlRecordType` ids.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ControlType {
        /// Transaction abort marker (0).
        Abort,
        /// Transaction commit marker (1).
        Commit,
        /// KRaft leader change (2).
        LeaderChange,
        /// KRaft snapshot header (3).
        SnapshotHeader,
        /// KRaft snapshot footer (4).
        SnapshotFooter,
        /// KRaft version (5).
        KRaftVersion,
        /// KRaft voters (6).
        KRaftVoters,
        /// Any other id.
        Unknown,
    }

    impl ControlType {
        /// The type of an id.
        pub fn from_id(id: i16) -> ControlType {
            match id {
                0 => ControlType::Abort,
                1 => ControlType::Commit,
                2 => ControlType::LeaderChange,
                3 => ControlType::SnapshotHeader,
                4 => ControlType::SnapshotFooter,
                5 => ControlType::KRaftVersion,
                6 => ControlType::KRaftVoters,
                _ => ControlType::Unknown,
            }
        }
        /// Kafka's enum constant name.
        pub fn name(self) -> &'static str {
            match self {
                ControlType::Abort => "ABORT",
                ControlType::Commit => "COMMIT",
                ControlType::LeaderChange => "LEADER_CHANGE",
                ControlType::SnapshotHeader => "SNAPSHOT_HEADER",
                ControlType::SnapshotFooter => "SNAPSHOT_FOOTER",
                ControlType::KRaftVersion => "KRAFT_VERSION",
                ControlType::KRaftVoters => "KRAFT_VOTERS",
                ControlType::Unknown => "UNKNOWN",
            }
        }
    }

    /// Kafka's `ControlRecordType.parseTypeId`: the type id from a control
    /// record key (version int16 ≥ 0, type int16).
    pub fn parse_type_id(key: Option<&[u8]>) -> Result<i16, Cow<'static, str>> {
        let key = key.ok_or("control record has a null key")?;
        if key.len() < 4 {
            return Err(format!(
                "invalid value size found for end control record key: must have at least 4 bytes, but found only {}",
                key.len()
            )
            .into());
        }
        let version = crate::format::bytes::be_i16(key, 0).unwrap_or(-1);
        if version < 0 {
            return Err(format!("invalid version found for control record: {version}").into());
        }
        Ok(crate::format::bytes::be_i16(key, 2).unwrap_or(-1))
    }

    /// A transaction marker's coordinator epoch (`EndTransactionMarker`):
    /// value version int16 ≥ 0, then coordinatorEpoch int32.
    pub fn parse_end_txn_marker(value: Option<&[u8]>) -> Result<i32, Cow<'static, str>> {
        let value = value.ok_or("end transaction marker has a null value")?;
        let mut c = Cursor::new(value);
        let version = c.i16().ok_or("end transaction marker value too short")?;
        if version < 0 {
            return Err(
                format!("invalid version found for end transaction marker: {version}").into(),
            );
        }
        c.i32()
            .ok_or_else(|| "end transaction marker value too short".into())
    }

    /// A KRaft voter as in `LeaderChangeMessage`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct LeaderChangeVoter {
        /// Voter id.
        pub voter_id: i32,
    }

    /// `LeaderChangeMessage` read at version 0.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct LeaderChange {
        /// The message's own Version field.
        pub version: i16,
        /// New leader.
        pub leader_id: i32,
        /// Voters of the epoch.
        pub voters: Vec<LeaderChangeVoter>,
        /// Voters that granted the vote.
        pub granting_voters: Vec<LeaderChangeVoter>,
    }

    /// `SnapshotHeaderRecord`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SnapshotHeader {
        /// Version field.
        pub version: i16,
        /// Append time of the last record contained.
        pub last_contained_log_timestamp: i64,
    }

    /// `KRaftVersionRecord`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct KRaftVersion {
        /// Version field.
        pub version: i16,
        /// kraft.version.
        pub kraft_version: i16,
    }

    /// An endpoint of a voter.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Endpoint {
        /// Listener name.
        pub name: String,
        /// Host.
        pub host: String,
        /// Port.
        pub port: u16,
    }

    /// A voter of `VotersRecord`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Voter {
        /// Replica id.
        pub voter_id: i32,
        /// Directory id (16 bytes).
        pub voter_directory_id: [u8; 16],
        /// Endpoints.
        pub endpoints: Vec<Endpoint>,
        /// Supported kraft.version range.
        pub min_supported_version: i16,
        /// See `min_supported_version`.
        pub max_supported_version: i16,
    }

    /// `VotersRecord`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Voters {
        /// Version field.
        pub version: i16,
        /// Voters.
        pub voters: Vec<Voter>,
    }

    /// A reader of Kafka's "flexible" message encoding (compact arrays and
    /// strings, tagged fields), with the checks of the generated readers.
    struct Flex<'a> {
        c: Cursor<'a>,
    }

    type R<T> = Result<T, Cow<'static, str>>;

    impl<'a> Flex<'a> {
        fn i16(&mut self) -> R<i16> {
            self.c.i16().ok_or_else(|| "buffer underflow".into())
        }
        fn u16(&mut self) -> R<u16> {
            self.c.u16().ok_or_else(|| "buffer underflow".into())
        }
        fn i32(&mut self) -> R<i32> {
            self.c.i32().ok_or_else(|| "buffer underflow".into())
        }
        fn i64(&mut self) -> R<i64> {
            self.c.i64().ok_or_else(|| "buffer underflow".into())
        }
        fn uvarint(&mut self) -> R<u32> {
            self.c.uvarint().map_err(|e| e.reason().into())
        }
        fn uuid(&mut self) -> R<[u8; 16]> {
            let b = self.c.bytes(16).ok_or("buffer underflow")?;
            let mut u = [0u8; 16];
            u.copy_from_slice(b);
            Ok(u)
        }
        /// Compact array length; `field` names it in errors.
        fn array_len(&mut self, field: &str) -> R<usize> {
            let n = self.uvarint()? as i64 - 1;
            if n < 0 {
                return Err(format!("non-nullable field {field} was serialized as null").into());
            }
            if n as usize > self.c.remaining() {
                return Err(format!(
                    "Tried to allocate a collection of size {n}, but there are only {} bytes remaining.",
                    self.c.remaining()
                )
                .into());
            }
            Ok(n as usize)
        }
        fn string(&mut self, field: &str) -> R<String> {
            let n = self.uvarint()? as i64 - 1;
            if n < 0 {
                return Err(format!("non-nullable field {field} was serialized as null").into());
            }
            if n > 0x7fff {
                return Err(format!("string field {field} had invalid length {n}").into());
            }
            let b = self.c.bytes(n as usize).ok_or("buffer underflow")?;
            Ok(super::java_utf8(b).into_owned())
        }
        fn tagged_fields(&mut self) -> R<()> {
            let n = self.uvarint()?;
            for _ in 0..n {
                let _tag = self.uvarint()?;
                let size = self.uvarint()?;
                self.c.bytes(size as usize).ok_or("buffer underflow")?;
            }
            Ok(())
        }
    }

    /// Arrays are bounded by the bytes left (Kafka's rule), but an element
    /// is larger in memory than its smallest encoding: preallocate at most
    /// this many and let elements that really parse grow the vector.
    const PREALLOC_MAX: usize = 1024;

    fn lc_voters(f: &mut Flex<'_>, field: &str) -> R<Vec<LeaderChangeVoter>> {
        let n = f.array_len(field)?;
        let mut v = Vec::with_capacity(n.min(PREALLOC_MAX));
        for _ in 0..n {
            let voter_id = f.i32()?;
            f.tagged_fields()?;
            v.push(LeaderChangeVoter { voter_id });
        }
        Ok(v)
    }

    /// Parses a `LeaderChangeMessage` value (read at version 0).
    pub fn parse_leader_change(value: &[u8]) -> R<LeaderChange> {
        let mut f = Flex {
            c: Cursor::new(value),
        };
        let version = f.i16()?;
        let leader_id = f.i32()?;
        let voters = lc_voters(&mut f, "voters")?;
        let granting_voters = lc_voters(&mut f, "grantingVoters")?;
        f.tagged_fields()?;
        Ok(LeaderChange {
            version,
            leader_id,
            voters,
            granting_voters,
        })
    }

    /// Parses a `SnapshotHeaderRecord` value.
    pub fn parse_snapshot_header(value: &[u8]) -> R<SnapshotHeader> {
        let mut f = Flex {
            c: Cursor::new(value),
        };
        let version = f.i16()?;
        let ts = f.i64()?;
        f.tagged_fields()?;
        Ok(SnapshotHeader {
            version,
            last_contained_log_timestamp: ts,
        })
    }

    /// Parses a `SnapshotFooterRecord` value; returns its Version field.
    pub fn parse_snapshot_footer(value: &[u8]) -> R<i16> {
        let mut f = Flex {
            c: Cursor::new(value),
        };
        let version = f.i16()?;
        f.tagged_fields()?;
        Ok(version)
    }

    /// Parses a `KRaftVersionRecord` value.
    pub fn parse_kraft_version(value: &[u8]) -> R<KRaftVersion> {
        let mut f = Flex {
            c: Cursor::new(value),
        };
        let version = f.i16()?;
        let kraft_version = f.i16()?;
        f.tagged_fields()?;
        Ok(KRaftVersion {
            version,
            kraft_version,
        })
    }

    /// Parses a `VotersRecord` value.
    pub fn parse_voters(value: &[u8]) -> R<Voters> {
        let mut f = Flex {
            c: Cursor::new(value),
        };
        let version = f.i16()?;
        let n = f.array_len("voters")?;
        let mut voters = Vec::with_capacity(n.min(PREALLOC_MAX));
        for _ in 0..n {
            let voter_id = f.i32()?;
            let voter_directory_id = f.uuid()?;
            let ne = f.array_len("endpoints")?;
            let mut endpoints = Vec::with_capacity(ne.min(PREALLOC_MAX));
            for _ in 0..ne {
                let name = f.string("name")?;
                let host = f.string("host")?;
                let port = f.u16()?;
                f.tagged_fields()?;
                endpoints.push(Endpoint { name, host, port });
            }
            let min_supported_version = f.i16()?;
            let max_supported_version = f.i16()?;
            f.tagged_fields()?;
            f.tagged_fields()?;
            voters.push(Voter {
                voter_id,
                voter_directory_id,
                endpoints,
                min_supported_version,
                max_supported_version,
            });
        }
        f.tagged_fields()?;
        Ok(Voters { version, voters })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn type_ids_and_markers() {
            assert_eq!(parse_type_id(Some(&[0, 0, 0, 1])), Ok(1));
            assert!(parse_type_id(Some(&[0, 0, 0])).is_err());
            assert!(parse_type_id(Some(&[0xff, 0xff, 0, 0])).is_err());
            assert!(parse_type_id(None).is_err());
            assert_eq!(parse_end_txn_marker(Some(&[0, 0, 0, 0, 0, 7])), Ok(7));
            assert!(parse_end_txn_marker(Some(&[0, 0, 0, 0, 7])).is_err());
            assert_eq!(ControlType::from_id(9).name(), "UNKNOWN");
        }

        #[test]
        fn kraft_values() {
            // Version 0, leader 1, voters [1], granting [1], no tags.
            let v = [0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 0, 0];
            let lc = parse_leader_change(&v).unwrap();
            assert_eq!(lc.leader_id, 1);
            assert_eq!(lc.voters, vec![LeaderChangeVoter { voter_id: 1 }]);
            for cut in 0..v.len() {
                assert!(parse_leader_change(&v[..cut]).is_err());
            }
            let h = parse_snapshot_header(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0]).unwrap();
            assert_eq!(h.last_contained_log_timestamp, 5);
            assert_eq!(
                parse_kraft_version(&[0, 0, 0, 1, 0]).unwrap().kraft_version,
                1
            );
        }
    }
}

/// Decodes bytes as Java's `new String(bytes, UTF_8)` does (Kafka decodes
/// header keys, string keys and values this way): valid UTF-8 is borrowed;
/// malformed input is replaced by U+FFFD with Java's rules, which differ from
/// [`String::from_utf8_lossy`] for encoded surrogates (one U+FFFD for the
/// whole 3-byte sequence) and drop the rest of a sequence cut by the end of
/// the input.
pub fn java_utf8(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(s) = simdutf8::basic::from_utf8(bytes) {
        return std::borrow::Cow::Borrowed(s);
    }
    const REPL: char = '\u{FFFD}';
    let cont = |b: u8| b & 0xc0 == 0x80;
    let n = bytes.len();
    let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
    let mut out = String::with_capacity(n + 8);
    let mut sp = 0usize;
    while sp < n {
        let b1 = at(sp);
        sp += 1;
        if b1 < 0x80 {
            out.push(b1 as char);
        } else if (0xc2..=0xdf).contains(&b1) {
            if sp < n {
                let b2 = at(sp);
                if cont(b2) {
                    sp += 1;
                    let c = ((b1 as u32 & 0x1f) << 6) | (b2 as u32 & 0x3f);
                    out.push(char::from_u32(c).unwrap_or(REPL));
                } else {
                    out.push(REPL);
                }
                continue;
            }
            out.push(REPL);
            break;
        } else if (0xe0..=0xef).contains(&b1) {
            if sp + 1 < n {
                let (b2, b3) = (at(sp), at(sp + 1));
                if (b1 == 0xe0 && (b2 & 0xe0) == 0x80) || !cont(b2) || !cont(b3) {
                    out.push(REPL);
                    // Java's malformed3: one byte if the second is bad, else two.
                    if !((b1 == 0xe0 && (b2 & 0xe0) == 0x80) || !cont(b2)) {
                        sp += 1;
                    }
                } else {
                    sp += 2;
                    let c =
                        ((b1 as u32 & 0x0f) << 12) | ((b2 as u32 & 0x3f) << 6) | (b3 as u32 & 0x3f);
                    // Surrogate code points are not chars: replaced.
                    out.push(char::from_u32(c).unwrap_or(REPL));
                }
                continue;
            }
            if sp < n && ((b1 == 0xe0 && (at(sp) & 0xe0) == 0x80) || !cont(at(sp))) {
                out.push(REPL);
                continue;
            }
            out.push(REPL);
            break;
        } else if (0xf0..=0xf7).contains(&b1) {
            if sp + 2 < n {
                let (b2, b3, b4) = (at(sp), at(sp + 1), at(sp + 2));
                let uc = ((b1 as u32 & 0x07) << 18)
                    | ((b2 as u32 & 0x3f) << 12)
                    | ((b3 as u32 & 0x3f) << 6)
                    | (b4 as u32 & 0x3f);
                if !cont(b2) || !cont(b3) || !cont(b4) || !(0x10000..0x110000).contains(&uc) {
                    out.push(REPL);
                    // Java's malformed4.
                    let len = if b1 > 0xf4
                        || (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2))
                        || (b1 == 0xf4 && (b2 & 0xf0) != 0x80)
                        || !cont(b2)
                    {
                        1
                    } else if !cont(b3) {
                        2
                    } else {
                        3
                    };
                    sp += len - 1;
                } else {
                    sp += 3;
                    out.push(char::from_u32(uc).unwrap_or(REPL));
                }
                continue;
            }
            let malformed4_2 = |b2: u8| {
                (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2))
                    || (b1 == 0xf4 && (b2 & 0xf0) != 0x80)
                    || !cont(b2)
            };
            if b1 > 0xf4 || (sp < n && malformed4_2(at(sp))) {
                out.push(REPL);
                continue;
            }
            sp += 1;
            out.push(REPL);
            if sp < n && !cont(at(sp)) {
                continue;
            }
            break;
        } else {
            out.push(REPL);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod java_utf8_tests {
    use super::java_utf8;

    #[test]
    fn matches_java_replacement() {
        assert_eq!(java_utf8(b"plain"), "plain");
        // Encoded surrogate: one replacement for three bytes (Rust gives three).
        assert_eq!(java_utf8(&[0xed, 0xa0, 0x80, b'z']), "\u{fffd}z");
        assert_eq!(java_utf8(&[0xed, 0xa0, b'A']), "\u{fffd}A");
        assert_eq!(java_utf8(&[0xe2, 0x82, 0x41]), "\u{fffd}A");
        assert_eq!(java_utf8(&[0xc0, 0x80, b'k']), "\u{fffd}\u{fffd}k");
        assert_eq!(java_utf8(&[0xff, 0x41, 0xc3]), "\u{fffd}A\u{fffd}");
        assert_eq!(java_utf8(&[0xf0, 0x9f, 0x98, 0x80]), "\u{1f600}");
        assert_eq!(java_utf8(&[0xf0, 0x9f, 0x98]), "\u{fffd}");
        assert_eq!(java_utf8(&[0xf1, 0x80, 0x80, b'A']), "\u{fffd}A");
        assert_eq!(java_utf8(&[0xe0, 0x80, 0x80]), "\u{fffd}\u{fffd}\u{fffd}");
    }
}
