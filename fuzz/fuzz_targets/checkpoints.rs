//! Checkpoint files (offset checkpoints, leader-epoch-checkpoint, the clean
//! shutdown marker), the properties files (meta.properties,
//! partition.metadata), each through the strict and the lenient reader, and
//! the KRaft quorum-state file.
#![no_main]
use klf::format::checkpoint::{
    epoch_cache_problems, line_starts, parse_clean_shutdown, parse_leader_epoch_checkpoint,
    parse_leader_epoch_checkpoint_lenient, parse_offset_checkpoint,
    parse_offset_checkpoint_lenient, read_leader_epoch_checkpoint, read_offset_checkpoint, Limits,
};
use klf::format::props::{
    node_id_hint, parse_meta_properties, parse_partition_metadata, parse_properties, Uuid,
};
use klf::format::quorum_state::parse_quorum_state;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(q) = parse_quorum_state(data) {
        // -1 (none) is read as absent, never kept
        assert!(q.leader.is_none_or(|l| l >= 0) && q.voted_for.is_none_or(|v| v >= 0));
    }
    let starts = line_starts(data);
    assert!(starts.len() <= data.len() + 1);
    let _ = parse_offset_checkpoint(data);
    let cp = parse_offset_checkpoint_lenient(data);
    let _ = (
        cp.kafka_accepts(),
        cp.first_rejection().map(|p| p.to_string()),
        cp.offsets(),
    );
    let _ = parse_leader_epoch_checkpoint(data);
    let ep = parse_leader_epoch_checkpoint_lenient(data);
    let _ = epoch_cache_problems(&ep.entries, &starts);
    for p in &ep.problems {
        let _ = p.to_string();
    }
    // Read a line at a time through a small buffer (its size from the
    // first byte), the same entries and problems; within caps, the same or
    // a refusal.
    let cap = usize::from(data.first().copied().unwrap_or(0) % 16) + 1;
    let small = || std::io::BufReader::with_capacity(cap, data);
    if let Ok(r) = read_offset_checkpoint(small(), &Limits::NONE) {
        assert!(r.entries == cp.entries && r.problems == cp.problems);
    }
    if let Ok(r) = read_leader_epoch_checkpoint(small(), &Limits::NONE) {
        assert!(r.entries == ep.entries && r.problems == ep.problems);
    }
    let tight = Limits {
        max_entries: 3,
        max_line: 16,
        max_problems: 2,
    };
    if let Ok(r) = read_offset_checkpoint(small(), &tight) {
        assert!(r.entries == cp.entries && r.first_rejection() == cp.first_rejection());
    }
    let _ = parse_clean_shutdown(data);
    if let Ok(p) = parse_properties(data) {
        let _ = (node_id_hint(&p), p.to_map());
    }
    let _ = parse_meta_properties(data).map_err(|e| e.to_string());
    let _ = parse_partition_metadata(data).map_err(|e| e.to_string());
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = Uuid::parse(s).map(|u| u.halves());
        let _ = klf::format::names::parse_partition_dir_name(s);
        let _ = klf::format::names::parse_segment_file_name(s);
        let _ = klf::format::metadata::parse_checkpoint_name(s);
    }
});
