//! Producer state snapshots (`.snapshot`): the strict reader Kafka uses on
//! load, the structural parser, and the kafka-dump-log renderer.
#![no_main]
use klf::format::snapshot::{parse_producer_snapshot, read_producer_snapshot};
use klf::render::dump::kafka_aux::{dump_producer_snapshot, producer_snapshot_line};
use klf::render::release::Release;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = parse_producer_snapshot(data) {
        let _ = s.check_crc();
        assert!(s.entries.len() <= data.len() / klf::format::snapshot::ENTRY_SIZE + 1);
        for e in &s.entries {
            let _ = (
                e.first_sequence(),
                e.first_offset(),
                e.current_txn_first_offset(),
            );
            let _ = producer_snapshot_line(e, Release::new(4, 1));
            let _ = producer_snapshot_line(e, Release::NEWEST);
        }
    }
    let _ = read_producer_snapshot(data);
    let _ = dump_producer_snapshot("t-0/00000000000000000042.snapshot", data, Release::NEWEST);
});
