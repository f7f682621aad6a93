//! Decompression of record payloads: gzip, snappy (raw or xerial-framed),
//! lz4 (Kafka's LZ4 frame subset) and zstd.
//!
//! Every decoder writes into a caller-supplied buffer (reused across batches)
//! and stops with an error as soon as the output would exceed the caller's
//! cap, so a hostile batch cannot make klf allocate more than the cap.
//! Acceptance follows Kafka's readers (see the per-codec notes); errors carry
//! the byte position inside the compressed input.

use std::io::Read;

use super::ParseError;

/// Default cap on the decompressed size of one batch or wrapper message.
///
/// Kafka bounds what a batch occupies on disk (`max.message.bytes`, at most
/// `i32::MAX`) but not what it inflates to, so klf needs its own bound:
/// decompression stops with an error at the cap, and the output buffer never
/// grows past it. A v2 batch that declares more records than the cap could
/// hold at [`crate::format::batch::MIN_RECORD_SIZE`] bytes each is refused
/// before decompressing anything. One cap for every command (`klf
/// --max-decompressed-bytes` sets it, [`set_decompressed_cap`]): each
/// worker thread inflates into a buffer that never grows past it, so 64 MiB
/// keeps a bomb on every core of a small machine within a few hundred MiB,
/// while a real batch (`max.message.bytes` is 1 MiB by default; text
/// compresses 5 to 10 times) stays far below it.
pub const DEFAULT_DECOMPRESSED_CAP: usize = 64 << 20;

static DECOMPRESSED_CAP: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(DEFAULT_DECOMPRESSED_CAP);

/// The cap on the decompressed size of one batch every reader uses
/// ([`DEFAULT_DECOMPRESSED_CAP`] unless [`set_decompressed_cap`] changed it).
pub fn decompressed_cap() -> usize {
    DECOMPRESSED_CAP.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets the cap [`decompressed_cap`] gives, for the rest of the process.
pub fn set_decompressed_cap(bytes: usize) {
    DECOMPRESSED_CAP.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// Compression codec ids of batch / message attributes (bits 0–2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// Not compressed (0).
    None,
    /// gzip (1).
    Gzip,
    /// snappy (2).
    Snappy,
    /// lz4 (3).
    Lz4,
    /// zstd (4).
    Zstd,
}

impl Codec {
    /// The codec of a compression id; `None` (the Rust one) for 5–7, which
    /// Kafka rejects.
    pub fn from_id(id: u8) -> Option<Codec> {
        Some(match id {
            0 => Codec::None,
            1 => Codec::Gzip,
            2 => Codec::Snappy,
            3 => Codec::Lz4,
            4 => Codec::Zstd,
            _ => return None,
        })
    }

    /// Kafka's lowercase name (`CompressionType.name`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Gzip => "gzip",
            Codec::Snappy => "snappy",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }

    /// The Java enum constant (`CompressionType.toString`, `NONE`), which
    /// kafka-dump-log printed up to 2.8.
    pub fn constant(self) -> &'static str {
        match self {
            Codec::None => "NONE",
            Codec::Gzip => "GZIP",
            Codec::Snappy => "SNAPPY",
            Codec::Lz4 => "LZ4",
            Codec::Zstd => "ZSTD",
        }
    }

    /// The numeric id.
    pub fn id(self) -> u8 {
        match self {
            Codec::None => 0,
            Codec::Gzip => 1,
            Codec::Snappy => 2,
            Codec::Lz4 => 3,
            Codec::Zstd => 4,
        }
    }
}

/// Decompresses `input` with `codec` into `out` (cleared first), refusing to
/// produce more than `cap` bytes. `magic` is the record format version of the
/// batch or wrapper: LZ4 frames written for magic 0 carry a broken header
/// checksum that Kafka does not verify.
///
/// Errors are positioned relative to the start of `input`.
pub fn decompress(
    codec: Codec,
    input: &[u8],
    magic: i8,
    out: &mut Vec<u8>,
    cap: usize,
) -> Result<(), ParseError> {
    out.clear();
    match codec {
        Codec::None => {
            if input.len() > cap {
                return Err(cap_error(0, cap));
            }
            out.extend_from_slice(input);
            Ok(())
        }
        Codec::Gzip => gzip(input, out, cap),
        Codec::Snappy => snappy(input, out, cap),
        Codec::Lz4 => lz4(input, magic == 0, out, cap),
        Codec::Zstd => zstd(input, out, cap),
    }
}

fn cap_error(pos: usize, cap: usize) -> ParseError {
    ParseError::new(
        pos as u64,
        format!("decompressed data exceeds the cap of {cap} bytes"),
    )
}

/// Reads all of `r` into `out`, failing past `cap` bytes. The buffer grows
/// by doubling but never past `cap + 1` bytes of capacity, so a bomb costs
/// at most the cap in memory (a plain `read_to_end` may reserve twice that).
fn read_capped(mut r: impl Read, out: &mut Vec<u8>, cap: usize) -> std::io::Result<bool> {
    let max = cap.saturating_add(1);
    loop {
        if out.len() >= max {
            return Ok(false);
        }
        if out.len() == out.capacity() {
            let grow = out.capacity().max(32 * 1024).min(max - out.len());
            out.reserve_exact(grow);
        }
        let at = out.len();
        let room = (out.capacity() - at).min(max - at);
        out.resize(at + room, 0);
        match r.read(&mut out[at..]) {
            Ok(0) => {
                out.truncate(at);
                return Ok(true);
            }
            Ok(n) => out.truncate(at + n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => out.truncate(at),
            Err(e) => {
                out.truncate(at);
                return Err(e);
            }
        }
    }
}

// ---------------------------------------------------------------- gzip

/// gzip as `java.util.zip.GZIPInputStream` reads it: one or more members;
/// after a member, bytes that do not start another valid member are ignored.
fn gzip(input: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), ParseError> {
    let mut rest: &[u8] = input;
    let mut first = true;
    loop {
        let member_start = input.len() - rest.len();
        if !first && !looks_like_gzip_header(rest) {
            // Java ignores a malformed header after a complete member.
            return Ok(());
        }
        let mut dec = flate2::bufread::GzDecoder::new(&mut rest);
        match read_capped(&mut dec, out, cap) {
            Ok(true) => {}
            Ok(false) => return Err(cap_error(member_start, cap)),
            Err(e) => return Err(ParseError::new(member_start as u64, format!("gzip: {e}"))),
        }
        drop(dec);
        first = false;
        if rest.is_empty() {
            return Ok(());
        }
    }
}

fn looks_like_gzip_header(b: &[u8]) -> bool {
    // ID1 ID2 CM(deflate) and a complete 10-byte fixed header.
    b.len() >= 10 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8
}

// ---------------------------------------------------------------- snappy

const SNAPPY_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const SNAPPY_MAX_CHUNK: usize = 512 << 20;

/// snappy as snappy-java's `SnappyInputStream` reads it: the xerial framing
/// (16-byte header, then int32 length-prefixed raw blocks, possibly several
/// concatenated streams), or, when the header is absent, one raw block.
fn snappy(input: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), ParseError> {
    if input.is_empty() {
        return Err(ParseError::new(0, "snappy: cannot decompress empty stream"));
    }
    if input.len() < 16 || input.get(..8) != Some(&SNAPPY_MAGIC[..]) {
        return snappy_block(input, 0, out, cap);
    }
    let mut pos = 16usize;
    loop {
        let Some(len_bytes) = input.get(pos..pos + 4) else {
            // Fewer than 4 bytes left: end of stream (trailing bytes ignored).
            return Ok(());
        };
        let len = super::bytes::be_i32(len_bytes, 0).unwrap_or(-1);
        if len_bytes == &SNAPPY_MAGIC[..4] {
            // A concatenated stream: a new 16-byte header starts here.
            let Some(header) = input.get(pos..pos + 16) else {
                return Err(ParseError::new(
                    pos as u64,
                    "snappy: truncated header of a concatenated stream",
                ));
            };
            if header[..8] != SNAPPY_MAGIC {
                return Ok(());
            }
            let version = super::bytes::be_i32(header, 8).unwrap_or(-1);
            if version < 1 {
                return Err(ParseError::new(
                    pos as u64,
                    format!("snappy: incompatible stream version {version}"),
                ));
            }
            pos += 16;
            continue;
        }
        if len < 0 {
            return Err(ParseError::new(
                pos as u64,
                format!("snappy: invalid chunk length {len}"),
            ));
        }
        let len = len as usize;
        if len > SNAPPY_MAX_CHUNK {
            return Err(ParseError::new(
                pos as u64,
                format!("snappy: chunk length {len} exceeds 512 MiB"),
            ));
        }
        let start = pos + 4;
        let Some(chunk) = input.get(start..start + len) else {
            return Err(ParseError::new(
                pos as u64,
                format!(
                    "snappy: chunk of {len} bytes cut short ({} bytes left)",
                    input.len() - start
                ),
            ));
        };
        snappy_block(chunk, start, out, cap)?;
        pos = start + len;
    }
}

/// Appends one raw snappy block to `out`.
fn snappy_block(block: &[u8], at: usize, out: &mut Vec<u8>, cap: usize) -> Result<(), ParseError> {
    let n = snap::raw::decompress_len(block)
        .map_err(|e| ParseError::new(at as u64, format!("snappy: {e}")))?;
    let start = out.len();
    if start.saturating_add(n) > cap {
        return Err(cap_error(at, cap));
    }
    out.resize(start + n, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| ParseError::new(at as u64, format!("snappy: {e}")))?;
    if written != n {
        return Err(ParseError::new(
            at as u64,
            "snappy: block decoded to a size other than its length prefix",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------- lz4

const LZ4_MAGIC: u32 = 0x184D_2204;

/// lz4 as Kafka's `Lz4BlockInputStream` reads it: one LZ4 frame with
/// independent blocks; header checksum verified unless `ignore_hc` (magic 0
/// data, KAFKA-3160); block checksums verified when flagged; the content
/// checksum is skipped; the end mark is required; bytes after it are ignored.
fn lz4(input: &[u8], ignore_hc: bool, out: &mut Vec<u8>, cap: usize) -> Result<(), ParseError> {
    const PREMATURE: &str = "lz4: stream ended prematurely";
    if input.len() < 6 {
        return Err(ParseError::new(0, PREMATURE));
    }
    let magic = u32::from_le_bytes([input[0], input[1], input[2], input[3]]);
    if magic != LZ4_MAGIC {
        return Err(ParseError::new(
            0,
            "lz4: stream unsupported (bad frame magic)",
        ));
    }
    let flg = input[4];
    let bd = input[5];
    if flg >> 6 != 1 {
        return Err(ParseError::new(4, "lz4: unsupported frame version"));
    }
    if flg & 0x03 != 0 {
        return Err(ParseError::new(4, "lz4: reserved FLG bits set"));
    }
    if flg & 0x20 == 0 {
        return Err(ParseError::new(
            4,
            "lz4: dependent blocks are not supported",
        ));
    }
    let block_checksum = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    let content_checksum = flg & 0x04 != 0;
    if bd & 0x8f != 0 {
        return Err(ParseError::new(5, "lz4: reserved BD bits set"));
    }
    let max_block = match (bd >> 4) & 0x07 {
        4 => 1usize << 16,
        5 => 1 << 18,
        6 => 1 << 20,
        7 => 1 << 22,
        other => {
            return Err(ParseError::new(
                5,
                format!("lz4: unsupported block size code {other}"),
            ))
        }
    };
    let mut pos = 6usize;
    if content_size {
        if input.len() - pos < 8 {
            return Err(ParseError::new(pos as u64, PREMATURE));
        }
        pos += 8;
    }
    let Some(&hc) = input.get(pos) else {
        return Err(ParseError::new(pos as u64, PREMATURE));
    };
    if !ignore_hc {
        let hash = xxh32(&input[4..pos], 0);
        if hc != ((hash >> 8) & 0xff) as u8 {
            return Err(ParseError::new(
                pos as u64,
                "lz4: stream frame descriptor corrupted (header checksum mismatch)",
            ));
        }
    }
    pos += 1;
    loop {
        let Some(word) = input.get(pos..pos + 4) else {
            return Err(ParseError::new(pos as u64, PREMATURE));
        };
        let raw = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        let compressed = raw & 0x8000_0000 == 0;
        let size = (raw & 0x7fff_ffff) as usize;
        let block_pos = pos;
        pos += 4;
        if size == 0 {
            if content_checksum && input.len() - pos < 4 {
                return Err(ParseError::new(pos as u64, PREMATURE));
            }
            return Ok(());
        }
        if size > max_block {
            return Err(ParseError::new(
                block_pos as u64,
                format!("lz4: block size {size} exceeded max: {max_block}"),
            ));
        }
        let Some(block) = input.get(pos..pos + size) else {
            return Err(ParseError::new(block_pos as u64, PREMATURE));
        };
        let start = out.len();
        if compressed {
            let room = max_block.min(cap.saturating_sub(start).saturating_add(1));
            out.resize(start + room, 0);
            match lz4_flex::block::decompress_into(block, &mut out[start..]) {
                Ok(n) => {
                    out.truncate(start + n);
                    if out.len() > cap {
                        return Err(cap_error(block_pos, cap));
                    }
                }
                Err(e) => {
                    out.truncate(start);
                    if start + max_block > cap {
                        return Err(cap_error(block_pos, cap));
                    }
                    return Err(ParseError::new(block_pos as u64, format!("lz4: {e}")));
                }
            }
        } else {
            if start + size > cap {
                return Err(cap_error(block_pos, cap));
            }
            out.extend_from_slice(block);
        }
        pos += size;
        if block_checksum {
            let Some(sum) = input.get(pos..pos + 4) else {
                return Err(ParseError::new(pos as u64, PREMATURE));
            };
            let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
            if stored != xxh32(block, 0) {
                return Err(ParseError::new(pos as u64, "lz4: block checksum mismatch"));
            }
            pos += 4;
        }
    }
}

/// xxHash32 (used by LZ4 frame checksums).
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    const P1: u32 = 2_654_435_761;
    const P2: u32 = 2_246_822_519;
    const P3: u32 = 3_266_489_917;
    const P4: u32 = 668_265_263;
    const P5: u32 = 374_761_393;
    #[inline]
    fn round(acc: u32, lane: u32) -> u32 {
        acc.wrapping_add(lane.wrapping_mul(P2))
            .rotate_left(13)
            .wrapping_mul(P1)
    }
    let mut chunks = data.chunks_exact(16);
    let mut h = if data.len() >= 16 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        for c in &mut chunks {
            for (i, lane) in v.iter_mut().enumerate() {
                let w = u32::from_le_bytes([c[4 * i], c[4 * i + 1], c[4 * i + 2], c[4 * i + 3]]);
                *lane = round(*lane, w);
            }
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u32);
    let rest = if data.len() >= 16 {
        chunks.remainder()
    } else {
        data
    };
    let mut words = rest.chunks_exact(4);
    for w in &mut words {
        let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        h = h
            .wrapping_add(w.wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h
            .wrapping_add((b as u32).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^= h >> 16;
    h
}

// ---------------------------------------------------------------- zstd

/// zstd: one or more standard frames (skippable frames allowed), as zstd-jni's
/// streaming decoder reads them.
fn zstd(input: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), ParseError> {
    let dec = zstd::stream::read::Decoder::with_buffer(input)
        .map_err(|e| ParseError::new(0, format!("zstd: {e}")))?;
    match read_capped(dec, out, cap) {
        Ok(true) => Ok(()),
        Ok(false) => Err(cap_error(0, cap)),
        Err(e) => Err(ParseError::new(0, format!("zstd: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn xxh32_known_values() {
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        // Kafka's descriptor checksums (Kafka on-disk notes, §5.3).
        assert_eq!((xxh32(&[0x60, 0x40], 0) >> 8) & 0xff, 0x82);
        assert_eq!(
            (xxh32(&[0x04, 0x22, 0x4d, 0x18, 0x60, 0x40], 0) >> 8) & 0xff,
            0x1a
        );
        let long: Vec<u8> = (0..100u8).collect();
        // Cross-check against lz4_flex's frame encoder with block checksums.
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(
            lz4_flex::frame::FrameInfo::new().block_checksums(true),
            Vec::new(),
        );
        enc.write_all(&long).unwrap();
        let framed = enc.finish().unwrap();
        let mut out = Vec::new();
        decompress(Codec::Lz4, &framed, 2, &mut out, 1 << 20).unwrap();
        assert_eq!(out, long);
    }

    fn kafka_lz4_frame(payload: &[u8], broken_hc: bool) -> Vec<u8> {
        let mut f = vec![0x04, 0x22, 0x4d, 0x18, 0x60, 0x40];
        f.push(if broken_hc { 0x1a } else { 0x82 });
        let block = lz4_flex::block::compress(payload);
        f.extend_from_slice(&(block.len() as u32).to_le_bytes());
        f.extend_from_slice(&block);
        f.extend_from_slice(&[0, 0, 0, 0]);
        f
    }

    #[test]
    fn lz4_kafka_frames_and_broken_hc() {
        let payload = b"hello hello hello hello kafka".repeat(10);
        let mut out = Vec::new();
        decompress(
            Codec::Lz4,
            &kafka_lz4_frame(&payload, false),
            2,
            &mut out,
            1 << 20,
        )
        .unwrap();
        assert_eq!(out, payload);
        let broken = kafka_lz4_frame(&payload, true);
        decompress(Codec::Lz4, &broken, 0, &mut out, 1 << 20).unwrap();
        assert_eq!(out, payload);
        let err = decompress(Codec::Lz4, &broken, 1, &mut out, 1 << 20).unwrap_err();
        assert!(err.reason.contains("descriptor"), "{err}");
        // Missing end mark.
        let mut cut = kafka_lz4_frame(&payload, false);
        cut.truncate(cut.len() - 4);
        assert!(decompress(Codec::Lz4, &cut, 2, &mut out, 1 << 20).is_err());
        // Cap.
        assert!(decompress(
            Codec::Lz4,
            &kafka_lz4_frame(&payload, false),
            2,
            &mut out,
            10
        )
        .is_err());
    }

    #[test]
    fn gzip_members_and_trailing_garbage() {
        let gz = |d: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(d).unwrap();
            e.finish().unwrap()
        };
        let mut two = gz(b"abc");
        two.extend(gz(b"def"));
        let mut out = Vec::new();
        decompress(Codec::Gzip, &two, 2, &mut out, 1 << 20).unwrap();
        assert_eq!(out, b"abcdef");
        let mut junk = gz(b"abc");
        junk.extend_from_slice(b"junk");
        decompress(Codec::Gzip, &junk, 2, &mut out, 1 << 20).unwrap();
        assert_eq!(out, b"abc");
        let big = gz(&vec![0u8; 100_000]);
        assert!(decompress(Codec::Gzip, &big, 2, &mut out, 1000).is_err());
        assert!(decompress(Codec::Gzip, &big[..big.len() / 2], 2, &mut out, 1 << 20).is_err());
    }

    #[test]
    fn snappy_framed_raw_and_concatenated() {
        let raw = |d: &[u8]| snap::raw::Encoder::new().compress_vec(d).unwrap();
        let framed = |d: &[u8]| {
            let mut f = SNAPPY_MAGIC.to_vec();
            f.extend_from_slice(&1i32.to_be_bytes());
            f.extend_from_slice(&1i32.to_be_bytes());
            let b = raw(d);
            f.extend_from_slice(&(b.len() as i32).to_be_bytes());
            f.extend_from_slice(&b);
            f
        };
        let mut out = Vec::new();
        decompress(Codec::Snappy, &framed(b"xyz"), 2, &mut out, 100).unwrap();
        assert_eq!(out, b"xyz");
        decompress(Codec::Snappy, &raw(b"plain"), 2, &mut out, 100).unwrap();
        assert_eq!(out, b"plain");
        let mut cat = framed(b"ab");
        cat.extend(framed(b"cd"));
        cat.extend_from_slice(&[1, 2]);
        decompress(Codec::Snappy, &cat, 2, &mut out, 100).unwrap();
        assert_eq!(out, b"abcd");
        let mut cut = framed(b"xyzxyzxyz");
        cut.truncate(cut.len() - 2);
        assert!(decompress(Codec::Snappy, &cut, 2, &mut out, 100).is_err());
        assert!(decompress(Codec::Snappy, &[], 2, &mut out, 100).is_err());
        assert!(decompress(Codec::Snappy, &framed(&[7u8; 1000]), 2, &mut out, 100).is_err());
    }

    #[test]
    fn zstd_roundtrip_and_cap() {
        let data = vec![42u8; 10_000];
        let c = zstd::encode_all(&data[..], 3).unwrap();
        let mut out = Vec::new();
        decompress(Codec::Zstd, &c, 2, &mut out, 1 << 20).unwrap();
        assert_eq!(out, data);
        assert!(decompress(Codec::Zstd, &c, 2, &mut out, 100).is_err());
        assert!(decompress(Codec::Zstd, &c[..c.len() - 3], 2, &mut out, 1 << 20).is_err());
    }

    #[test]
    fn garbage_never_panics() {
        let mut out = Vec::new();
        let mut seed = 0x1234_5678u32;
        for len in 0..300usize {
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    seed as u8
                })
                .collect();
            for codec in [Codec::Gzip, Codec::Snappy, Codec::Lz4, Codec::Zstd] {
                let _ = decompress(codec, &buf, 2, &mut out, 1 << 16);
                let mut framed = vec![0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82];
                framed.extend_from_slice(&buf);
                let _ = decompress(Codec::Lz4, &framed, 2, &mut out, 1 << 16);
            }
        }
    }
}
