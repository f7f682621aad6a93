//! Kafka's own log files: arbitrary bytes are cut into records and every
//! record read for its event. Lines of any length, invalid UTF-8, records
//! without a logger, runs of unreadable lines: each must end in an item,
//! never a panic, a hang or an allocation past the line and record caps.
#![no_main]
use klf::format::kafka_log::{self, Item};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for cap in [0, kafka_log::DEFAULT_MAX_EXTRA_LINES] {
        for item in kafka_log::entries_with(data, cap) {
            match item {
                Item::Entry(e) => {
                    assert!(e.continuation.len() <= cap);
                    let _ = kafka_log::event(&e);
                }
                Item::Unreadable(u) => assert!(u.lines > 0),
            }
        }
    }
});
