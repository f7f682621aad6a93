//! Legacy v0/v1 message sets, including compressed wrappers whose inner
//! message sets are themselves fuzzed (the input is compressed into a
//! wrapper with a valid CRC so the inner framing is reached).
#![no_main]
use std::io::Write;

use klf::format::batch::{Batch, SegmentIter};
use klf::format::legacy::encode_entry;
use klf::render::dump::kafka::{Dumper, FileNames, Options, StringFormatter};
use libfuzzer_sys::fuzz_target;

const CAP: usize = 1 << 20;

fn walk(data: &[u8]) {
    let mut scratch = Vec::new();
    for b in SegmentIter::new(data) {
        let Ok(b) = b else { break };
        if let Batch::Legacy(e) = b {
            let _ = e.check_magic();
            let _ = e.check_crc();
            let rec = e.record();
            let _ = (rec.key(), rec.value(), rec.timestamp(), rec.is_valid());
            if let Ok(msgs) = e.records(&mut scratch, CAP) {
                for m in msgs {
                    let Ok(m) = m else { break };
                    let _ = (
                        m.offset,
                        m.record.key(),
                        m.record.value(),
                        m.record.compression(),
                    );
                }
            }
            assert!(scratch.len() <= CAP);
        }
    }
    let mut fmt = StringFormatter;
    let opts = Options {
        print_data: true,
        deep: true,
        decompress_cap: CAP,
        ..Options::default()
    };
    let mut d = Dumper::new(opts, &mut fmt);
    let names = FileNames::new("t-0/00000000000000000000.log", "/");
    let _ = d.dump_log(&mut std::io::sink(), &names, &data, &mut Vec::new());
}

fn compress(codec: u8, data: &[u8]) -> Option<Vec<u8>> {
    Some(match codec {
        1 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).ok()?;
            e.finish().ok()?
        }
        2 => {
            let mut e = snap::write::FrameEncoder::new(Vec::new());
            e.write_all(data).ok()?;
            e.into_inner().ok()?
        }
        _ => return None,
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode & 3 {
        // The raw bytes as a segment.
        0 | 1 => walk(data),
        // The bytes as the inner message set of a compressed wrapper.
        _ => {
            let magic = (mode >> 2) & 1;
            let codec = 1 + ((mode >> 3) & 1);
            let Some(value) = compress(codec, rest) else {
                return;
            };
            let offset = i64::from(mode >> 4) * 1000;
            let wrapper = encode_entry(offset, magic, codec, 1_700_000_000_000, None, Some(&value));
            walk(&wrapper);
        }
    }
});
