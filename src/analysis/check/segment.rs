//! The rules of one segment's batches, fed in file order by whatever reads
//! them (its bytes, or a digest's summaries): framing, checksums, headers,
//! offset order, the segment's name, its tail; the fold the replica's
//! order-dependent rules take of it ([`SegmentFold`]); the producer
//! snapshots those rules start from ([`Snapshots`]). Pure: the reading is
//! the engine's (`crate::engine::check`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::codes::{code, finding};
use super::index::SegmentBatches;
use super::report::{display, BatchAt, BatchPlace};
use crate::format::memory::fallible;
use crate::format::snapshot::{read_producer_snapshot, ProducerEntry};
use crate::format::text::count;
use crate::model::check::{Finding, Location, SegmentBatch};
use crate::model::timeline::EpochSpan;
use crate::model::{BatchSummary, SegmentFiles};

/// An order-free fingerprint of a set of batches (two independent sums of
/// a hash of each batch's `(base, last, epoch, crc)`, and their count): two
/// replicas with the same batches in a range have the same fingerprint
/// there, and any difference changes it but for a chance of 2^-128.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fingerprint {
    count: u64,
    sums: (u64, u64),
}

impl Fingerprint {
    /// Adds a batch's `(base, last, epoch, crc)`.
    pub fn add(&mut self, k: (i64, i64, i32, u32)) {
        let mix = |seed: u64| {
            let mut h = seed;
            for v in [
                k.0 as u64,
                k.1 as u64,
                u64::from(k.2 as u32) << 32 | u64::from(k.3),
            ] {
                h ^= v;
                // splitmix64's finaliser
                h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
                h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                h ^= h >> 31;
            }
            h
        };
        self.count += 1;
        self.sums.0 = self.sums.0.wrapping_add(mix(0x243f_6a88_85a3_08d3));
        self.sums.1 = self.sums.1.wrapping_add(mix(0x1319_8a2e_0370_7344));
    }

    /// Adds another set's fingerprint.
    pub fn merge(&mut self, o: Fingerprint) {
        self.count += o.count;
        self.sums.0 = self.sums.0.wrapping_add(o.sums.0);
        self.sums.1 = self.sums.1.wrapping_add(o.sums.1);
    }
}

/// What a replica's producer snapshots say, read before its batches: the
/// latest readable snapshot's offset and producers, and the findings of
/// the snapshots that do not read.
#[derive(Debug, Default)]
pub struct Snapshots {
    /// The latest snapshot Kafka would read: its offset and producers.
    pub latest: Option<(i64, Vec<ProducerEntry>)>,
    /// Producers of the latest snapshot with a sequence to continue.
    pub waiting: BTreeSet<i64>,
    /// What is wrong with the others (and the reader's failures, which it
    /// adds here in file order).
    pub findings: Vec<Finding>,
}

impl Snapshots {
    /// The snapshot at `offset` (`at`: its file), its bytes as read:
    /// Kafka's reading of it (structure, then checksum).
    pub fn add(&mut self, offset: i64, data: &[u8], at: Location) {
        match read_producer_snapshot(data) {
            Ok(s) => {
                if self.latest.as_ref().is_none_or(|(o, _)| offset > *o) {
                    self.waiting = s
                        .entries
                        .iter()
                        .filter(|e| e.last_sequence >= 0)
                        .map(|e| e.producer_id)
                        .collect();
                    self.latest = Some((offset, s.entries));
                }
            }
            Err(e) => self.findings.push(finding(
                code::PRODUCER_SNAPSHOT_INVALID,
                Location {
                    position: Some(e.pos),
                    ..at
                },
                format!("Kafka would refuse this producer snapshot: {}", e.reason),
            )),
        }
    }
}

/// What one segment read on its own gives its replica's order-dependent
/// rules, combined with the other segments' in log order
/// ([`super::ReplicaFold`]): sizes bounded by epochs and producers, not
/// batches.
#[derive(Debug, Default)]
pub struct SegmentFold {
    /// Runs of one epoch, with where each begins.
    pub spans: Vec<(EpochSpan, BatchPlace)>,
    /// Each waiting producer's first data batch at or after the snapshot.
    pub next_of: BTreeMap<i64, BatchAt>,
    /// Transactional producers' batches.
    pub txns: BTreeMap<i64, TxnPart>,
    /// The batches whose base offset is in the agreement range.
    pub agree: Fingerprint,
}

/// One producer's transactional batches in a segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct TxnPart {
    /// A control batch (commit or abort) closed what was open.
    pub closed: bool,
    /// Its first data batch, before any control batch.
    pub first_open: Option<(i64, BatchPlace)>,
    /// Its first data batch after the last control batch.
    pub open_after_close: Option<(i64, BatchPlace)>,
}

/// What a segment's scan folds as it reads, and with what.
pub struct FoldContext<'a> {
    /// The replica's producer snapshots.
    pub snapshots: &'a Snapshots,
    /// The offset range whose batches' [`Fingerprint`] to take.
    pub agree: Option<(i64, i64)>,
    /// Keep every batch's header.
    pub keep: bool,
    /// Segments from this base offset on have their indexes rebuilt by
    /// Kafka when the broker next starts ([`super::rebuilt_on_restart`]).
    pub rebuilt_from: Option<i64>,
}

impl SegmentFold {
    /// The next batch of the segment, at `place`.
    pub fn push(&mut self, s: &BatchSummary, place: BatchPlace, cx: &FoldContext<'_>) {
        match self.spans.last_mut() {
            Some((span, _)) if span.epoch == s.partition_leader_epoch => {
                span.join(&EpochSpan::of(s))
            }
            _ => self.spans.push((EpochSpan::of(s), place)),
        }
        if let Some((at, _)) = &cx.snapshots.latest {
            if !s.is_control
                && s.base_offset >= *at
                && cx.snapshots.waiting.contains(&s.producer_id)
                && !self.next_of.contains_key(&s.producer_id)
            {
                self.next_of.insert(
                    s.producer_id,
                    BatchAt {
                        summary: s.clone(),
                        place,
                    },
                );
            }
        }
        if s.is_transactional && s.producer_id >= 0 {
            let t = self.txns.entry(s.producer_id).or_default();
            if s.is_control {
                t.closed = true;
                t.open_after_close = None;
            } else if t.closed {
                t.open_after_close.get_or_insert((s.base_offset, place));
            } else {
                t.first_open.get_or_insert((s.base_offset, place));
            }
        }
        if let Some((lo, hi)) = cx.agree {
            if (lo..hi).contains(&s.base_offset) {
                self.agree.add(s.key());
            }
        }
    }
}

/// What one segment's own checks found.
pub struct SegmentScan {
    /// The findings.
    pub findings: Vec<Finding>,
    /// Batches read.
    pub batches: u64,
    /// Position and offset of the first batch.
    pub first: Option<(u64, i64)>,
    /// Smallest base offset of its batches.
    pub min_base: Option<i64>,
    /// Greatest last offset of its batches.
    pub last: Option<i64>,
    /// Where reading stopped on damage (`None`: at the end of the file).
    pub stopped: Option<u64>,
    /// Where its readable batches end.
    pub end: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// What the replica's order-dependent rules need of it.
    pub fold: SegmentFold,
    /// Its batches, when asked to keep them.
    pub kept: Option<Vec<BatchAt>>,
}

/// How a segment's batch checksum came out, for [`SegmentRule::batch`].
pub enum Crc<'a> {
    /// It matches (or was not checked: a digest's batch below where the
    /// node checked).
    Fine,
    /// It fails: the reason, and whether the entry is too short to be a
    /// batch at all (a framing problem rather than a checksum's).
    Fails(&'a str, bool),
}

/// The rules of one segment's batches, fed in file order by whatever
/// reads them (its bytes, or a digest's summaries): framing, checksums,
/// headers, offset order, the segment's name, its tail; what the
/// replica's order-dependent rules need (the fold); the batches the index
/// rules look up ([`SegmentBatches`]: a few dozen bytes a batch of this
/// one segment).
pub struct SegmentRule<'a> {
    seg: &'a SegmentFiles,
    path: &'a Path,
    fidx: usize,
    base: &'a Location,
    cx: &'a FoldContext<'a>,
    log_len: u64,
    /// What was found.
    pub findings: Vec<Finding>,
    fold: SegmentFold,
    kept: Option<Vec<BatchAt>>,
    first: Option<(u64, i64)>,
    min_base: Option<i64>,
    prev_in_seg: Option<i64>,
    /// Where reading stopped on damage: index entries past it are not
    /// judged.
    stopped: Option<u64>,
    batches: Vec<SegmentBatch>,
}

impl<'a> SegmentRule<'a> {
    /// The rules of the segment `seg` (its `.log` at `path`, `log_len`
    /// bytes, `fidx`-th of its replica's).
    pub fn new(
        seg: &'a SegmentFiles,
        path: &'a Path,
        fidx: usize,
        log_len: u64,
        base: &'a Location,
        cx: &'a FoldContext<'a>,
    ) -> Self {
        SegmentRule {
            seg,
            path,
            fidx,
            base,
            cx,
            log_len,
            findings: Vec::new(),
            fold: SegmentFold::default(),
            kept: cx.keep.then(Vec::new),
            first: None,
            min_base: None,
            prev_in_seg: None,
            stopped: None,
            batches: Vec::new(),
        }
    }

    /// A location in the segment's `.log`.
    pub fn at(&self, position: Option<u64>, offset: Option<i64>) -> Location {
        Location {
            file: Some(display(self.path)),
            position,
            offset,
            ..self.base.clone()
        }
    }

    /// The next batch: at `pos`, with this magic, summary and checksum;
    /// `header` is a v2 batch's (last offset delta, record count). `false`
    /// when reading stops here.
    pub fn batch(
        &mut self,
        pos: u64,
        magic: i8,
        summary: BatchSummary,
        crc: Crc<'_>,
        header: Option<(i32, i32)>,
    ) -> bool {
        let rest = self.log_len.saturating_sub(pos);
        let first = summary.base_offset;
        if !(0..=2).contains(&magic) {
            self.findings.push(finding(
                code::BATCH_BAD_MAGIC,
                self.at(Some(pos), Some(first)),
                format!(
                    "magic {magic} is not 0, 1 or 2; the rest of the segment ({}) is not a readable log",
                    count(rest, "byte", "bytes")
                ),
            ));
            self.stopped = Some(pos);
            return false;
        }
        if let Crc::Fails(reason, short) = crc {
            let c = if short {
                code::BATCH_FRAMING
            } else {
                code::BATCH_CRC_MISMATCH
            };
            self.findings.push(finding(
                c,
                self.at(Some(pos), Some(first)),
                format!(
                    "{reason}; Kafka's recovery truncates the segment here, dropping {}",
                    count(rest, "byte", "bytes")
                ),
            ));
            self.stopped = Some(pos);
            return false;
        }
        if let Some((delta, count)) = header {
            if delta < 0 || count < 0 || i64::from(count) > i64::from(delta) + 1 {
                self.findings.push(finding(
                    code::BATCH_HEADER_INVALID,
                    self.at(Some(pos), Some(first)),
                    format!(
                        "last offset delta {delta} and record count {count} are impossible together"
                    ),
                ));
            }
        }
        // For a legacy compressed wrapper the offset field is its last
        // inner offset: only v2 base offsets can be compared as firsts.
        if let Some(p) = self.prev_in_seg {
            if first <= p {
                self.findings.push(finding(
                    code::BATCH_OFFSET_ORDER,
                    self.at(Some(pos), Some(first)),
                    format!(
                        "batch at offset {first} follows a batch ending at offset {p}: offsets do not increase"
                    ),
                ));
            }
        } else {
            self.first = Some((pos, first));
            if summary.last_offset < self.seg.base_offset
                || (magic >= 2 && first < self.seg.base_offset)
            {
                self.findings.push(finding(
                    code::SEGMENT_NAME_MISMATCH,
                    self.at(Some(pos), Some(first)),
                    format!(
                        "first batch starts at offset {first}, below the segment's base offset {} from its name",
                        self.seg.base_offset
                    ),
                ));
            }
        }
        self.prev_in_seg = Some(
            self.prev_in_seg
                .map_or(summary.last_offset, |p| p.max(summary.last_offset)),
        );
        self.min_base = Some(self.min_base.map_or(first, |m| m.min(first)));
        self.fold.push(&summary, (self.fidx, pos), self.cx);
        // memory for what the index checks need, asked for, not assumed
        if self.batches.len() == self.batches.capacity()
            && fallible(|| self.batches.try_reserve(self.batches.len().max(1024))).is_err()
        {
            self.findings.push(finding(
                code::FILE_UNREADABLE,
                self.at(Some(pos), None),
                format!(
                    "cannot allocate memory to check the segment past {}",
                    count(self.batches.len() as u64, "batch", "batches")
                ),
            ));
            self.stopped = Some(pos);
            return false;
        }
        self.batches.push(SegmentBatch {
            position: pos,
            base_offset: summary.base_offset,
            last_offset: summary.last_offset,
            is_control: summary.is_control,
        });
        if let Some(k) = &mut self.kept {
            k.push(BatchAt {
                summary,
                place: (self.fidx, pos),
            });
        }
        true
    }

    /// An entry at `pos` that does not frame: reading stops.
    pub fn bad_entry(&mut self, pos: u64, reason: &str) {
        let c = if reason.contains("magic") {
            code::BATCH_BAD_MAGIC
        } else {
            code::BATCH_FRAMING
        };
        self.findings.push(finding(
            c,
            self.at(Some(pos), None),
            format!(
                "{reason}; the rest of the segment ({}) cannot be read",
                count(self.log_len.saturating_sub(pos), "byte", "bytes")
            ),
        ));
        self.stopped = Some(pos);
    }

    /// A read that failed at `pos`, as the reader reports it (`failed`):
    /// reading stops.
    pub fn read_failed(&mut self, pos: u64, failed: Finding) {
        self.findings.push(failed);
        self.stopped = Some(pos);
    }

    /// Bytes after the last complete batch (unless reading stopped on
    /// damage before): `declared` is the size an entry there declares.
    pub fn tail(&mut self, pos: u64, len: u64, declared: Option<i64>, is_last: bool) {
        if self.stopped.is_some() {
            return;
        }
        let declared = match declared {
            Some(n) => format!(
                "; the entry there declares {n} {}",
                if n == 1 { "byte" } else { "bytes" }
            ),
            None => String::new(),
        };
        let (c, where_) = if is_last {
            (code::SEGMENT_TORN_TAIL, "last segment")
        } else {
            (code::SEGMENT_TORN_MIDDLE, "segment that is not the last")
        };
        self.findings.push(finding(
            c,
            self.at(Some(pos), None),
            format!(
                "{} after the last complete batch of the {where_}{declared}",
                count(len, "byte", "bytes")
            ),
        ));
    }

    /// What the segment's rules found, and its batches for the index rules
    /// (`None` when the memory for their lookups cannot be had: a
    /// finding says so). The index rules' findings go after these.
    pub fn finish(mut self) -> (SegmentScan, Option<SegmentBatches>) {
        let count = self.batches.len() as u64;
        let batches = SegmentBatches::new(std::mem::take(&mut self.batches));
        if batches.is_none() {
            let at = self.at(None, None);
            self.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                "cannot allocate memory to check the segment's indexes".to_string(),
            ));
        }
        let scan = SegmentScan {
            findings: self.findings,
            batches: count,
            first: self.first,
            min_base: self.min_base,
            last: self.prev_in_seg,
            stopped: self.stopped,
            end: self.stopped.unwrap_or(self.log_len),
            bytes_read: self.log_len,
            fold: self.fold,
            kept: self.kept,
        };
        (scan, batches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn seg() -> SegmentFiles {
        SegmentFiles {
            base_offset: 100,
            log: Some(PathBuf::from("t-0/00000000000000000100.log")),
            index: None,
            timeindex: None,
            txnindex: None,
            log_len: Some(1000),
        }
    }

    fn summary(base_offset: i64, last_offset: i64) -> BatchSummary {
        BatchSummary::dense(base_offset, last_offset, 1, 0)
    }

    /// The findings of a segment of 1000 bytes at base offset 100 whose
    /// reading `feed` does, with what its scan says.
    fn run(feed: impl FnOnce(&mut SegmentRule<'_>)) -> SegmentScan {
        let s = seg();
        let path = s.log.clone().unwrap();
        let snaps = Snapshots::default();
        let cx = FoldContext {
            snapshots: &snaps,
            agree: None,
            keep: true,
            rebuilt_from: None,
        };
        let base = Location::default();
        let mut r = SegmentRule::new(&s, &path, 0, 1000, &base, &cx);
        feed(&mut r);
        let (scan, batches) = r.finish();
        assert!(batches.is_some());
        scan
    }

    fn codes(s: &SegmentScan) -> Vec<&str> {
        s.findings.iter().map(|f| f.code.as_ref()).collect()
    }

    #[test]
    fn batches_in_order_find_nothing_and_are_summed_up() {
        let s = run(|r| {
            assert!(r.batch(0, 2, summary(100, 104), Crc::Fine, Some((4, 5))));
            assert!(r.batch(300, 2, summary(105, 109), Crc::Fine, Some((4, 5))));
        });
        assert!(s.findings.is_empty(), "{:?}", s.findings);
        assert_eq!((s.batches, s.first, s.last), (2, Some((0, 100)), Some(109)));
        assert_eq!((s.stopped, s.end, s.min_base), (None, 1000, Some(100)));
        assert_eq!(s.kept.map(|k| k.len()), Some(2));
    }

    #[test]
    fn a_bad_magic_stops_reading() {
        let s = run(|r| assert!(!r.batch(200, 3, summary(100, 104), Crc::Fine, None)));
        assert_eq!(codes(&s), [code::BATCH_BAD_MAGIC]);
        assert_eq!(
            s.findings[0].message,
            "magic 3 is not 0, 1 or 2; the rest of the segment (800 bytes) is not a readable log"
        );
        assert_eq!((s.stopped, s.end), (Some(200), 200));
        let s = run(|r| r.bad_entry(40, "magic 9 is unknown"));
        assert_eq!(codes(&s), [code::BATCH_BAD_MAGIC]);
    }

    #[test]
    fn a_failing_checksum_is_a_mismatch_or_a_short_entry() {
        let s = run(|r| {
            assert!(!r.batch(
                0,
                2,
                summary(100, 104),
                Crc::Fails("crc 1 != 2", false),
                None
            ))
        });
        assert_eq!(codes(&s), [code::BATCH_CRC_MISMATCH]);
        assert_eq!(
            s.findings[0].message,
            "crc 1 != 2; Kafka's recovery truncates the segment here, dropping 1000 bytes"
        );
        let s = run(|r| {
            assert!(!r.batch(0, 2, summary(100, 104), Crc::Fails("too short", true), None))
        });
        assert_eq!(codes(&s), [code::BATCH_FRAMING]);
    }

    #[test]
    fn an_entry_that_does_not_frame_stops_reading() {
        let s = run(|r| r.bad_entry(10, "size -5 is negative"));
        assert_eq!(codes(&s), [code::BATCH_FRAMING]);
        assert_eq!(
            s.findings[0].message,
            "size -5 is negative; the rest of the segment (990 bytes) cannot be read"
        );
        assert_eq!(s.stopped, Some(10));
    }

    #[test]
    fn impossible_header_counts_are_invalid() {
        let s = run(|r| assert!(r.batch(0, 2, summary(100, 104), Crc::Fine, Some((4, 6)))));
        assert_eq!(codes(&s), [code::BATCH_HEADER_INVALID]);
        assert_eq!(
            s.findings[0].message,
            "last offset delta 4 and record count 6 are impossible together"
        );
    }

    #[test]
    fn offsets_that_do_not_increase_are_out_of_order() {
        let s = run(|r| {
            r.batch(0, 2, summary(100, 104), Crc::Fine, None);
            r.batch(300, 2, summary(103, 106), Crc::Fine, None);
        });
        assert_eq!(codes(&s), [code::BATCH_OFFSET_ORDER]);
        assert_eq!(s.findings[0].location.position, Some(300));
        assert_eq!(
            s.findings[0].message,
            "batch at offset 103 follows a batch ending at offset 104: offsets do not increase"
        );
    }

    #[test]
    fn a_first_batch_below_the_base_offset_mismatches_the_name() {
        let s = run(|r| {
            r.batch(0, 2, summary(90, 104), Crc::Fine, None);
        });
        assert_eq!(codes(&s), [code::SEGMENT_NAME_MISMATCH]);
        assert_eq!(
            s.findings[0].message,
            "first batch starts at offset 90, below the segment's base offset 100 from its name"
        );
        // a legacy wrapper's offset is its last: only below the base is wrong
        let s = run(|r| {
            r.batch(0, 1, summary(90, 104), Crc::Fine, None);
        });
        assert!(s.findings.is_empty());
    }

    #[test]
    fn bytes_after_the_last_batch_are_a_torn_tail_or_middle() {
        let s = run(|r| r.tail(900, 100, Some(4000), true));
        assert_eq!(codes(&s), [code::SEGMENT_TORN_TAIL]);
        assert_eq!(
            s.findings[0].message,
            "100 bytes after the last complete batch of the last segment; the entry there declares 4000 bytes"
        );
        let s = run(|r| r.tail(900, 1, None, false));
        assert_eq!(codes(&s), [code::SEGMENT_TORN_MIDDLE]);
        assert_eq!(
            s.findings[0].message,
            "1 byte after the last complete batch of the segment that is not the last"
        );
        // after damage, the rest is the damage's
        let s = run(|r| {
            r.bad_entry(10, "size -5 is negative");
            r.tail(900, 100, None, true);
        });
        assert_eq!(codes(&s), [code::BATCH_FRAMING]);
    }

    #[test]
    fn a_failed_read_stops_reading_with_the_readers_finding() {
        let s = run(|r| {
            let at = r.at(Some(300), None);
            r.read_failed(300, finding(code::FILE_UNREADABLE, at, "cannot read: EIO"));
        });
        assert_eq!(codes(&s), [code::FILE_UNREADABLE]);
        assert_eq!((s.stopped, s.end), (Some(300), 300));
    }

    #[test]
    fn a_snapshot_kafka_would_refuse_is_invalid() {
        let mut snaps = Snapshots::default();
        let at = Location {
            file: Some("t-0/00000000000000000100.snapshot".into()),
            ..Location::default()
        };
        snaps.add(100, &[0, 1, 2], at);
        assert!(snaps.latest.is_none());
        assert_eq!(snaps.findings.len(), 1);
        let f = &snaps.findings[0];
        assert_eq!(f.code, code::PRODUCER_SNAPSHOT_INVALID);
        assert!(f
            .message
            .starts_with("Kafka would refuse this producer snapshot: "));
        assert!(f.location.position.is_some());
    }

    #[test]
    fn fingerprints_ignore_order_and_see_differences() {
        let (a, b) = ((0, 4, 1, 7), (5, 9, 1, 8));
        let (mut x, mut y, mut z) = (
            Fingerprint::default(),
            Fingerprint::default(),
            Fingerprint::default(),
        );
        x.add(a);
        x.add(b);
        y.add(b);
        y.add(a);
        z.add(a);
        z.add((5, 9, 2, 8));
        assert_eq!(x, y);
        assert_ne!(x, z);
        let mut m = Fingerprint::default();
        m.add(a);
        let mut n = Fingerprint::default();
        n.add(b);
        m.merge(n);
        assert_eq!(m, x);
    }
}
