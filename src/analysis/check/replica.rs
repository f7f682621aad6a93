//! The rules of one replica over its segments' folds, combined in log
//! order ([`ReplicaFold`]): where its epochs go backwards, then the epoch,
//! offset, producer-sequence and open-transaction rules; and segments that
//! overlap the one before them ([`segment_overlap`]). Pure functions over
//! what the engine read of each segment ([`super::SegmentRule`]).

use std::collections::BTreeMap;

use super::codes::{code, finding};
use super::report::{BatchAt, BatchPlace, ReplicaResult};
use super::rules::{check_epochs, check_offsets};
use super::segment::{Fingerprint, SegmentFold, Snapshots};
use crate::analysis::timeline::EpochSpans;
use crate::format::names::ReplicaKind;
use crate::model::check::{Finding, Location};
use crate::model::Replica;

/// A replica's order-dependent facts, its segments' folds combined in log
/// order: bounded by its epochs and producers, not its batches.
#[derive(Debug, Default)]
pub struct ReplicaFold {
    spans: EpochSpans,
    span_starts: Vec<BatchPlace>,
    next_of: BTreeMap<i64, BatchAt>,
    /// Open transactions: producer id -> its first batch's offset.
    open: BTreeMap<i64, (i64, BatchPlace)>,
    agree: Fingerprint,
}

impl ReplicaFold {
    /// The next segment's fold.
    pub fn add(&mut self, seg: SegmentFold) {
        for (span, place) in seg.spans {
            if self.spans.push_span(span) {
                self.span_starts.push(place);
            }
        }
        for (pid, b) in seg.next_of {
            self.next_of.entry(pid).or_insert(b);
        }
        for (pid, t) in seg.txns {
            let now = if t.closed {
                t.open_after_close
            } else {
                self.open.get(&pid).copied().or(t.first_open)
            };
            match now {
                Some(o) => {
                    self.open.insert(pid, o);
                }
                None => {
                    self.open.remove(&pid);
                }
            }
        }
        self.agree.merge(seg.agree);
    }

    /// The fingerprint of the batches in the agreement range.
    pub fn agree(&self) -> Fingerprint {
        self.agree
    }

    /// Puts what was kept into `result` and runs the rules over it
    /// (`snaps`: the replica's producer snapshots, their findings first).
    pub fn finish(
        self,
        replica: &Replica,
        base: &Location,
        snaps: Snapshots,
        result: &mut ReplicaResult,
    ) {
        // The first batch of each epoch below one seen before it starts a
        // span: where the epochs go backwards.
        let mut regressions = Vec::new();
        let mut max_epoch = -1;
        for (span, &place) in self.spans.spans.iter().zip(&self.span_starts) {
            let e = span.epoch;
            if e >= 0
                && e < max_epoch
                && !regressions
                    .iter()
                    .any(|r: &(i64, i32, BatchPlace)| r.1 == e)
            {
                regressions.push((span.start_offset, e, place));
            }
            max_epoch = max_epoch.max(e);
        }
        result.spans = self.spans;
        result.span_starts = self.span_starts;
        result.regressions = regressions;
        result.findings.extend(snaps.findings);
        check_epochs(replica, base, result);
        if replica.kind == ReplicaKind::Metadata {
            return;
        }
        check_offsets(replica, base, result);
        sequence_gaps(&snaps.latest, &self.next_of, base, result);
        open_transactions(self.open, base, result);
    }
}

/// For each producer in the latest snapshot (`latest`: its offset and
/// producers), its next batch after the snapshot offset (`next_of`)
/// continues its sequence.
fn sequence_gaps(
    latest: &Option<(i64, Vec<crate::format::snapshot::ProducerEntry>)>,
    next_of: &BTreeMap<i64, BatchAt>,
    base: &Location,
    result: &mut ReplicaResult,
) {
    let Some((at, entries)) = latest else {
        return;
    };
    for e in entries.iter().filter(|e| e.last_sequence >= 0) {
        let Some(next) = next_of.get(&e.producer_id) else {
            continue;
        };
        let s = &next.summary;
        // A new producer epoch restarts sequences at 0.
        let expected = if s.producer_epoch == e.producer_epoch {
            if e.last_sequence == i32::MAX {
                0
            } else {
                e.last_sequence + 1
            }
        } else {
            0
        };
        if s.base_sequence != expected && s.base_sequence >= 0 {
            let mut loc = base.clone();
            loc.offset = Some(s.base_offset);
            result.place(&mut loc, next.place);
            result.findings.push(finding(
                code::PRODUCER_SEQUENCE_GAP,
                loc,
                format!(
                    "producer {} (epoch {}) ends at sequence {} in the snapshot at offset {at}, but its next batch at offset {} starts at sequence {} (epoch {})",
                    e.producer_id, e.producer_epoch, e.last_sequence, s.base_offset, s.base_sequence, s.producer_epoch
                ),
            ));
        }
    }
}

/// Transactions open at the log end: a transactional batch of a producer
/// with no control marker after it (`open`: producer id -> its first such
/// batch).
fn open_transactions(
    open: BTreeMap<i64, (i64, BatchPlace)>,
    base: &Location,
    result: &mut ReplicaResult,
) {
    for (pid, (first, place)) in open {
        let mut loc = base.clone();
        loc.offset = Some(first);
        result.place(&mut loc, place);
        result.findings.push(finding(
            code::TRANSACTION_OPEN,
            loc,
            format!("producer {pid} has a transaction open since offset {first}: no commit or abort marker follows it"),
        ));
    }
}

/// A segment (base offset `base_offset`, its first batch at `first`:
/// position and offset, `at`: its `.log`) that starts at or below the last
/// offset of the segment before it (`prev_last`, its file named
/// `prev_name`).
pub fn segment_overlap(
    base_offset: i64,
    (pos, first): (u64, i64),
    prev_last: i64,
    prev_name: &str,
    at: Location,
) -> Option<Finding> {
    if first > prev_last && base_offset > prev_last {
        return None;
    }
    Some(finding(
        code::SEGMENT_OVERLAP,
        Location {
            position: Some(pos),
            offset: Some(first),
            ..at
        },
        format!(
            "segment {base_offset} (first batch at offset {first}) overlaps the previous segment {prev_name} that ends at offset {prev_last}"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::check::segment::{FoldContext, TxnPart};
    use crate::format::snapshot::ProducerEntry;
    use crate::model::{BatchSummary, ReplicaLog};
    use std::path::PathBuf;
    use std::sync::Arc;

    fn result() -> ReplicaResult {
        ReplicaResult {
            findings: Vec::new(),
            log: ReplicaLog {
                broker: 1,
                batches: Vec::new(),
                log_start_offset: 0,
                log_end_offset: 0,
                high_watermark: None,
                checkpoint_epochs: None,
                first_segment_base: None,
                window_start: None,
            },
            spans: EpochSpans::default(),
            span_starts: Vec::new(),
            regressions: Vec::new(),
            batches: 0,
            files: vec![PathBuf::from("t-0/00.log")],
            segments: 1,
            bytes: 0,
            cleaned_to: None,
            locate: Arc::new(|_| None),
            unreadable: false,
        }
    }

    fn summary(base_offset: i64, producer_id: i64, base_sequence: i32) -> BatchSummary {
        BatchSummary {
            base_offset,
            last_offset: base_offset + 4,
            partition_leader_epoch: 1,
            crc: 0,
            record_count: 5,
            is_control: false,
            is_transactional: false,
            first_timestamp: 0,
            max_timestamp: 0,
            producer_id,
            producer_epoch: 0,
            base_sequence,
        }
    }

    fn producer(producer_id: i64, last_sequence: i32) -> ProducerEntry {
        ProducerEntry {
            producer_id,
            producer_epoch: 0,
            last_sequence,
            last_offset: 9,
            offset_delta: 4,
            timestamp: 0,
            coordinator_epoch: -1,
            current_txn_first_offset: -1,
        }
    }

    #[test]
    fn a_producer_that_skips_sequences_after_the_snapshot_has_a_gap() {
        let snaps = Snapshots {
            latest: Some((10, vec![producer(7, 4), producer(8, 4)])),
            waiting: [7, 8].into(),
            findings: Vec::new(),
        };
        let cx = FoldContext {
            snapshots: &snaps,
            agree: None,
            keep: false,
            rebuilt_from: None,
        };
        let mut seg = SegmentFold::default();
        seg.push(&summary(10, 7, 9), (0, 500), &cx);
        seg.push(&summary(15, 8, 5), (0, 600), &cx);
        // only the first batch after the snapshot counts
        seg.push(&summary(20, 7, 5), (0, 700), &cx);
        let mut fold = ReplicaFold::default();
        fold.add(seg);
        let mut r = result();
        sequence_gaps(&snaps.latest, &fold.next_of, &Location::default(), &mut r);
        assert_eq!(r.findings.len(), 1);
        let f = &r.findings[0];
        assert_eq!(f.code, code::PRODUCER_SEQUENCE_GAP);
        assert_eq!(
            (f.location.offset, f.location.position),
            (Some(10), Some(500))
        );
        assert_eq!(f.location.file.as_deref(), Some("t-0/00.log"));
        assert_eq!(
            f.message,
            "producer 7 (epoch 0) ends at sequence 4 in the snapshot at offset 10, but its next batch at offset 10 starts at sequence 9 (epoch 0)"
        );
    }

    #[test]
    fn a_transaction_with_no_marker_after_it_is_open() {
        let part = |closed, first_open, open_after_close| TxnPart {
            closed,
            first_open,
            open_after_close,
        };
        let mut fold = ReplicaFold::default();
        let mut a = SegmentFold::default();
        a.txns.insert(1, part(false, Some((10, (0, 100))), None));
        a.txns.insert(2, part(false, Some((12, (0, 200))), None));
        fold.add(a);
        // producer 1 commits in the next segment; 2 stays open from its
        // first batch; 3 opens after a marker
        let mut b = SegmentFold::default();
        b.txns.insert(1, part(true, None, None));
        b.txns.insert(2, part(false, Some((30, (1, 0))), None));
        b.txns.insert(3, part(true, None, Some((40, (1, 90)))));
        fold.add(b);
        let mut r = result();
        open_transactions(fold.open, &Location::default(), &mut r);
        let got: Vec<_> = r
            .findings
            .iter()
            .map(|f| (f.code.as_ref(), f.location.offset, f.message.as_ref()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    code::TRANSACTION_OPEN,
                    Some(12),
                    "producer 2 has a transaction open since offset 12: no commit or abort marker follows it"
                ),
                (
                    code::TRANSACTION_OPEN,
                    Some(40),
                    "producer 3 has a transaction open since offset 40: no commit or abort marker follows it"
                ),
            ]
        );
    }

    #[test]
    fn a_segment_starting_at_or_below_the_previous_end_overlaps_it() {
        let at = Location {
            file: Some("t-0/00000000000000000050.log".into()),
            ..Location::default()
        };
        assert!(segment_overlap(50, (0, 50), 49, "00.log", at.clone()).is_none());
        let f = segment_overlap(50, (0, 45), 49, "00.log", at.clone()).unwrap();
        assert_eq!(f.code, code::SEGMENT_OVERLAP);
        assert_eq!(
            (f.location.position, f.location.offset),
            (Some(0), Some(45))
        );
        assert_eq!(
            f.message,
            "segment 50 (first batch at offset 45) overlaps the previous segment 00.log that ends at offset 49"
        );
        // the name alone overlapping is enough
        assert!(segment_overlap(40, (0, 60), 49, "00.log", at).is_some());
    }
}
