//! Each codec's capped decompression: never more than the cap, never a
//! panic; what the reference encoders produce round-trips.
#![no_main]
use std::io::Write;

use klf::format::codec::{decompress, Codec};
use libfuzzer_sys::fuzz_target;

fn encode(codec: Codec, data: &[u8]) -> Option<Vec<u8>> {
    Some(match codec {
        Codec::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).ok()?;
            e.finish().ok()?
        }
        Codec::Snappy => snap::raw::Encoder::new().compress_vec(data).ok()?,
        Codec::Zstd => zstd::bulk::compress(data, 1).ok()?,
        _ => return None,
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let sel = data[0];
    let codec = Codec::from_id(sel % 5).unwrap();
    let magic = ((sel >> 3) % 3) as i8;
    // Caps from 0 up to 64 KiB, small ones hit often.
    let cap = usize::from(u16::from_le_bytes([data[1], data[2]])) >> (data[1] & 7);
    let input = &data[3..];
    let mut out = Vec::new();
    if decompress(codec, input, magic, &mut out, cap).is_ok() {
        assert!(
            out.len() <= cap,
            "{codec:?} produced {} bytes over the cap {cap}",
            out.len()
        );
    } else {
        // A failed decode stops at most one byte past the cap.
        assert!(
            out.len() <= cap.saturating_add(1),
            "{codec:?} error after {} bytes, cap {cap}",
            out.len()
        );
    }
    // Round trip through a reference encoder when the top bit asks for it.
    if sel & 0x80 != 0 {
        if let Some(enc) = encode(codec, input) {
            let r = decompress(codec, &enc, magic, &mut out, 1 << 20);
            if input.len() <= 1 << 20 {
                r.unwrap();
                assert_eq!(&out[..], input);
            } else {
                assert!(r.is_err());
            }
        }
    }
});
