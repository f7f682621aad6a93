//! `.index`, `.timeindex` and `.txnindex`: entries, lookups, sanity checks
//! and the kafka-dump-log renderers (which read the `.log` at each indexed
//! position). The first byte picks the file kind; for offset and time
//! indexes the input is split into the index and the log it points into.
#![no_main]
use klf::format::index::{OffsetIndex, TimeIndex};
use klf::format::txnindex::parse_txn_index;
use klf::render::dump::kafka::{Dumper, FileNames, Options, StringFormatter};
use klf::render::dump::kafka_aux::dump_txn_index;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 11 {
        return;
    }
    let sel = data[0];
    let base = i64::from_le_bytes(data[1..9].try_into().unwrap()) >> (data[1] & 63);
    let split = usize::from(u16::from_le_bytes([data[9], data[10]]));
    let rest = &data[11..];
    let (idx, log) = rest.split_at(split.min(rest.len()));
    let mut fmt = StringFormatter;
    let opts = Options {
        deep: sel & 0x10 != 0,
        print_data: sel & 0x20 != 0,
        index_sanity_only: sel & 0x40 != 0,
        verify_only: sel & 0x80 != 0,
        max_message_size: 1 << 16,
        decompress_cap: 1 << 20,
        ..Options::default()
    };
    match sel % 3 {
        0 => {
            let ix = OffsetIndex::new(idx, base);
            let n = ix.entries();
            for e in ix.iter() {
                let _ = ix.lookup(e.offset);
            }
            let _ = (
                ix.entry(n),
                ix.entry(n.wrapping_sub(1)),
                ix.lookup(base),
                ix.lookup(i64::MAX),
            );
            let _ = ix.sanity_check();
            let _ = (
                ix.valid_entries(None),
                ix.valid_entries(Some(log.len() as u64)),
            );
            let mut d = Dumper::new(opts, &mut fmt);
            let names = FileNames::new("t-0/00000000000000000000.index", "/");
            let _ = d.dump_index(&mut std::io::sink(), &names, idx, &log);
        }
        1 => {
            let ix = TimeIndex::new(idx, base);
            for e in ix.iter() {
                let _ = ix.lookup(e.timestamp);
            }
            let _ = (
                ix.lookup(i64::MIN),
                ix.lookup(i64::MAX),
                ix.entry(ix.entries()),
            );
            let _ = ix.sanity_check();
            let _ = ix.valid_entries();
            // Second half of the log part doubles as the offset index.
            let (log, oidx) = log.split_at(log.len() / 2);
            let mut d = Dumper::new(opts, &mut fmt);
            let names = FileNames::new("t-0/00000000000000000000.timeindex", "/");
            let _ = d.dump_time_index(&mut std::io::sink(), &names, idx, Some(oidx.into()), &log);
            let _ = d.dump_time_index(&mut std::io::sink(), &names, idx, None, &log);
        }
        _ => {
            let txn = &data[1..];
            if let Ok(t) = parse_txn_index(txn) {
                let _ = t.first_bad_version();
                let _ = t.sanity_check(base);
            }
            let _ = dump_txn_index("t-0/00000000000000000000.txnindex", txn);
        }
    }
});
