//! v2 segments: the entry framing (lenient as Kafka, strict with resync, as
//! `klf dump --resync` and `klf check` walk a segment) plus deep record
//! iteration with capped decompression, and the kafka-dump-log renderer,
//! of whole segments and of the part a selection picks.
#![no_main]
use klf::format::batch::{Batch, SegmentIter};
use klf::format::seek::{span, Pick, Wanted};
use klf::render::dump::kafka::{Dumper, FileNames, Options, StringFormatter};
use libfuzzer_sys::fuzz_target;

const CAP: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let mut scratch = Vec::new();
    // Lenient walk (kafka-dump-log's view).
    let mut it = SegmentIter::new(data);
    for b in &mut it {
        let Ok(b) = b else { break };
        let _ = (
            b.position(),
            b.offset_field(),
            b.last_offset(),
            b.size_in_bytes(),
        );
        let _ = b.check_crc();
        if let Batch::V2(rb) = b {
            let _ = (
                rb.producer_id(),
                rb.last_sequence(),
                rb.delete_horizon_ms(),
                rb.is_valid(),
            );
            if let Ok(recs) = rb.records(&mut scratch, CAP) {
                for r in recs {
                    let Ok(r) = r else { break };
                    for h in r.headers() {
                        let _ = (h.key.len(), h.value.map(|v| v.len()));
                    }
                    let _ = (r.key_size(), r.value_size());
                }
            }
            assert!(scratch.len() <= CAP);
        }
    }
    if let Some(t) = it.tail() {
        let _ = t.describe();
    }
    // Strict walk with resync: must terminate and make progress.
    let mut it = SegmentIter::new(data).strict();
    let mut rounds = 0usize;
    loop {
        match it.next() {
            Some(Ok(_)) => {}
            Some(Err(_)) => {
                let before = it.position();
                match it.resync() {
                    Some(s) => assert!(s.to >= s.from && s.to >= before),
                    None => break,
                }
            }
            None => break,
        }
        rounds += 1;
        assert!(
            rounds <= data.len() + 2,
            "strict iteration does not progress"
        );
    }
    // The kafka-dump-log renderer, deep with payloads, resyncing.
    let mut fmt = StringFormatter;
    let opts = Options {
        print_data: true,
        deep: true,
        decompress_cap: CAP,
        resync: data.first().is_some_and(|b| b & 1 == 1),
        ..Options::default()
    };
    let mut d = Dumper::new(opts, &mut fmt);
    let names = FileNames::new("t-0/00000000000000000000.log", "/");
    let mut problems = Vec::new();
    let _ = d.dump_log(&mut std::io::sink(), &names, &data, &mut problems);
    // A part of it, picked by offsets, a key and a count from the input.
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let want = Wanted {
        first: i64::from(byte(1)) - 8,
        end: i64::from(byte(1)) + i64::from(byte(2)),
        since: (byte(3) & 1 == 1).then(|| i64::from(byte(4)) << 32),
        until: None,
    };
    let picked = span(&data, None, None, 0, &want);
    let key = (byte(5) & 1 == 1).then(|| data.get(6..8).unwrap_or(&[]).to_vec());
    let count = (byte(5) & 2 == 2).then(|| u64::from(byte(8)));
    let pick = Pick::new(Some(picked), data.len() as u64, key, count);
    let _ = d.dump_log_picked(&mut std::io::sink(), &names, &data, pick, &mut problems);
});
