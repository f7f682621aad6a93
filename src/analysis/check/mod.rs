//! `check`: every consistency check klf knows, as a list of findings with
//! stable codes, severities and locations.
//!
//! This module is pure: the code table ([`CHECKS`], in `codes`), the rules over
//! what a capture holds (`rules`: discovery's diagnostics, the epoch and
//! offset rules of one replica, the cross-replica and controller rules),
//! the rules of one segment's batches as they are read (`segment`:
//! [`SegmentRule`], the producer [`Snapshots`]), of its indexes against
//! them (`index`: [`IndexRule`], [`txn_index_finding`]), of a replica's
//! segments in log order (`replica`: [`ReplicaFold`],
//! [`segment_overlap`]). Opening and reading segments,
//! indexes and snapshots, feeding what was read to these rules, and
//! running them over a whole capture, is the engine's
//! (`crate::engine::check`); a read that fails is the reader's
//! `file-unreadable` finding.
//! The finding model ([`crate::model::check`]: `CheckReport`, `Finding`,
//! `Location`) is plain data; nothing here prints: `render` turns a
//! `CheckReport` into text.
//!
//! Every code is listed in [`CHECKS`] with its severity, family and meaning
//! (the table docs/findings.md reproduces). Severities follow what Kafka
//! itself does with the data: `error` for damage or loss Kafka does not
//! repair silently (bad checksums in the middle of a log, committed records
//! lost), `warning` for a normal but consequential event or a file Kafka
//! would not have left so (a torn tail recovery will drop, an untrimmed
//! index Kafka reads as it stands, uncommitted records lost), `info` for
//! facts worth knowing on healthy data (a crashed broker's preallocated
//! index, which Kafka rebuilds).

mod assemble;
mod codes;
mod index;
mod replica;
mod report;
mod rules;
mod segment;

pub use assemble::{assemble, settle, settle_metadata, PartitionChecked, Settled};
pub use codes::{code, finding, info, CHECKS};
pub use index::{missing_index, txn_index_finding, IndexRule, IndexedSegment, SegmentBatches};
pub use replica::{segment_overlap, ReplicaFold};
pub use report::{display, BatchAt, BatchKey, BatchPlace, Checked, Locator, ReplicaResult};
pub use rules::{
    agreement_range, capture_findings, check_epochs, check_offsets, check_partition,
    controller_findings, epoch_beyond_controller, impact_findings, log_matching_at,
    not_captured_uncompared, rebuilt_on_restart, settle_unreadable, AtOffset, LogMatching,
};
pub use segment::{
    Crc, Fingerprint, FoldContext, SegmentFold, SegmentRule, SegmentScan, Snapshots, TxnPart,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::check::{Baseline, BaselineEntry, CheckReport, Location, Severity};
    use std::collections::BTreeSet;

    #[test]
    fn codes_are_unique_kebab_case_and_documented() {
        let mut seen = BTreeSet::new();
        for c in CHECKS {
            assert!(seen.insert(c.code), "duplicate code {}", c.code);
            assert!(
                c.code
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-'),
                "{} is not kebab-case",
                c.code
            );
            assert!(!c.meaning.is_empty() && !c.hint.is_empty(), "{}", c.code);
            assert_eq!(info(c.code), Some(c));
        }
        assert_eq!(
            finding(code::BATCH_CRC_MISMATCH, Location::default(), "x").severity,
            Severity::Error
        );
    }

    #[test]
    fn baseline_matches_on_code_and_location_not_message_or_directory() {
        let loc = |file: &str| Location {
            broker: Some(1),
            topic: Some("t".into()),
            partition: Some(0),
            file: Some(file.into()),
            position: Some(10),
            offset: Some(5),
        };
        let mut report = CheckReport {
            findings: vec![
                finding(code::BATCH_CRC_MISMATCH, loc("a/t-0/00.log"), "one"),
                finding(code::BATCH_FRAMING, loc("a/t-0/00.log"), "two"),
            ],
            ..CheckReport::default()
        };
        let baseline = Baseline {
            version: 1,
            findings: vec![BaselineEntry {
                code: code::BATCH_CRC_MISMATCH.into(),
                location: loc("elsewhere/t-0/00.log"),
            }],
        };
        assert_eq!(report.accept(&baseline), 1);
        assert!(report.findings[0].baselined);
        assert!(!report.findings[1].baselined);
        assert_eq!(report.failing(Severity::Error).count(), 1);
        let mut moved = loc("a/t-0/00.log");
        moved.position = Some(11);
        let mut other = CheckReport {
            findings: vec![finding(code::BATCH_CRC_MISMATCH, moved, "one")],
            ..CheckReport::default()
        };
        assert_eq!(other.accept(&baseline), 0);
    }

    #[test]
    fn severities_order() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Error);
    }
}
