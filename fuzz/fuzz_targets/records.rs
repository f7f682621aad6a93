//! Record payload decoders: __cluster_metadata records and KRaft control
//! records, __consumer_offsets, __transaction_state and __share_group_state
//! keys and values (as the newest release and 4.0 print them),
//! and the control-record parsers of v2 batches.
#![no_main]
use klf::format::internal::{
    decode_group_record, decode_share_state_record, decode_transaction_record,
    format_offsets_record, format_share_state_record, format_transaction_log_record,
    CoordinatorText,
};
use klf::format::metadata::{
    decode_kraft_control, decode_metadata_record, format_kraft_control, format_metadata_payload,
    kraft_control_json, KraftControlType,
};
use klf::format::record::control;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    // Coordinator records: a u16 LE key length, the key, then the value
    // (null when bit 2 of the selector is set).
    let (key, value) = match rest {
        [a, b, kv @ ..] => kv.split_at(usize::from(u16::from_le_bytes([*a, *b])).min(kv.len())),
        _ => (rest, &[][..]),
    };
    let value = (sel & 4 == 0).then_some(value);
    match sel % 4 {
        0 => {
            let _ = decode_metadata_record(rest);
            let _ = format_metadata_payload(7, Some(rest));
        }
        1 => {
            for kind in [
                KraftControlType::LeaderChange,
                KraftControlType::SnapshotHeader,
                KraftControlType::SnapshotFooter,
                KraftControlType::KRaftVersion,
                KraftControlType::KRaftVoters,
            ] {
                let _ = decode_kraft_control(kind, rest);
                let _ = kraft_control_json(kind, rest);
                let _ = format_kraft_control(kind, rest);
            }
            let _ = control::parse_type_id(Some(rest));
            let _ = control::parse_end_txn_marker(Some(rest));
            let _ = control::parse_leader_change(rest);
            let _ = control::parse_snapshot_header(rest);
            let _ = control::parse_snapshot_footer(rest);
            let _ = control::parse_kraft_version(rest);
            let _ = control::parse_voters(rest);
        }
        2 => {
            if let Ok(r) = decode_group_record(key, value) {
                let _ = format!("{r:?}");
            }
            // the newest release's text, 4.0's (tagged fields it lacks left
            // out), 3.7's and 3.3's (the Scala coordinator's text)
            let _ = format_offsets_record(3, Some(key), value, CoordinatorText::NEWEST);
            for old in older_texts() {
                let _ = format_offsets_record(3, Some(key), value, old);
            }
            if let Ok(r) = decode_share_state_record(key, value) {
                let _ = format!("{r:?}");
            }
            let _ = format_share_state_record(3, Some(key), value, CoordinatorText::NEWEST);
        }
        _ => {
            if let Ok(r) = decode_transaction_record(key, value) {
                let _ = format!("{r:?}");
            }
            let _ = format_transaction_log_record(3, Some(key), value, CoordinatorText::NEWEST);
            for old in older_texts() {
                let _ = format_transaction_log_record(3, Some(key), value, old);
            }
        }
    }
});

/// Older releases' coordinator texts: 4.0 (the Scala transaction log), 3.7
/// (the Scala group coordinator too), 3.3 (unknown keys stop the tool).
fn older_texts() -> [CoordinatorText; 3] {
    let line = |line: (u8, u8)| CoordinatorText {
        line,
        status_names: false,
        scala_transactions: true,
        scala_offsets: line < (3, 8),
        scala_unknown_key_aborts: line < (3, 4),
    };
    [line((4, 0)), line((3, 7)), line((3, 3))]
}
