//! One replica's own checks, reading its files: segments (framing,
//! checksums, offsets, torn tails), indexes against the log, producer
//! snapshots, transaction indexes; then, over its batches streamed again in
//! log order ([`Fold`]), the epoch, offset and producer rules of
//! `analysis::check`. No batch list is kept: a segment's batches live while
//! its indexes are checked, the stream holds a chunk.

use crate::analysis::check::settle_unreadable;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::segment::Fingerprint;
use super::segment::{
    check_indexes, file_name_of_path, Crc, FoldContext, SegmentChecks, SegmentFold, SegmentScan,
    Snapshots,
};
use super::stream::{BatchAt, ReplicaBatches, SegmentPlan};
use crate::analysis::check::{
    check_epochs, check_offsets, code, display, finding, rebuilt_on_restart, BatchPlace,
    ReplicaResult,
};
use crate::analysis::timeline::EpochSpans;
use crate::capture::replica::{replica_log_ends, summarize};
use crate::capture::segment::SegmentFile;
use crate::format::batch::{Batch, TailKind, V2_HEADER_SIZE};
use crate::format::names::ReplicaKind;
use crate::format::walk::{Checksums, Step, Walk};
use crate::model::check::Location;
use crate::model::{BatchSummary, Replica};

/// A replica after its segments' own checks: its result (findings,
/// offsets, counts, epochs, producer rules), how to stream its batches
/// again, and the fingerprint of its batches in the agreement range asked
/// for.
pub struct Scanned {
    /// The result.
    pub result: ReplicaResult,
    /// Its segments' readable batches, in log order.
    pub plans: Vec<SegmentPlan>,
    /// The fingerprint of its batches whose base offset is in the range
    /// [`scan_replica`] was given.
    pub agree: Fingerprint,
    /// Its batches, for a small replica ([`keeps_batches`]): the later
    /// steps then read no file again.
    pub kept: Option<Vec<BatchAt>>,
}

/// A replica whose `.log` files hold at most this many bytes keeps its
/// batches' headers from its scan (a few hundred KiB at most).
pub const KEEP_LOG_BYTES: u64 = 4 << 20;

/// [`KEEP_LOG_BYTES`], or `KLF_KEEP_LOG_BYTES` when set to a byte count
/// (`K`, `M`, `G` suffixes allowed; `0` makes every replica go the way of
/// a large one: for tests of that way on small captures).
fn keep_log_bytes() -> u64 {
    static N: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("KLF_KEEP_LOG_BYTES")
            .ok()
            .and_then(|v| crate::format::text::parse_bytes(&v).ok())
            .unwrap_or(KEEP_LOG_BYTES)
    })
}

/// Whether `replica`'s scan keeps its batches: its `.log` files are known
/// to hold at most [`keep_log_bytes`] (and some bytes at all when that is
/// 0).
pub fn keeps_batches(replica: &Replica) -> bool {
    let limit = keep_log_bytes();
    if limit == 0 {
        return false;
    }
    let mut total = 0u64;
    for s in replica.segments.iter().filter(|s| s.log.is_some()) {
        match s.log_len {
            Some(n) => total = total.saturating_add(n),
            None => return false,
        }
    }
    total <= limit
}

/// One segment's readable range and offsets, for the locator.
#[derive(Debug, Clone)]
struct SegmentRange {
    plan: SegmentPlan,
    /// Smallest base offset and greatest last offset of its batches.
    offsets: Option<(i64, i64)>,
}

/// A replica's order-dependent facts, its segments' folds combined in log
/// order.
struct ReplicaFold {
    spans: EpochSpans,
    span_starts: Vec<BatchPlace>,
    next_of: BTreeMap<i64, BatchAt>,
    /// Open transactions: producer id -> its first batch's offset.
    open: BTreeMap<i64, (i64, BatchPlace)>,
    agree: Fingerprint,
}

impl ReplicaFold {
    fn new() -> Self {
        ReplicaFold {
            spans: EpochSpans::default(),
            span_starts: Vec::new(),
            next_of: BTreeMap::new(),
            open: BTreeMap::new(),
            agree: Fingerprint::default(),
        }
    }

    /// The next segment's fold.
    fn add(&mut self, seg: SegmentFold) {
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

    /// Puts what was kept into `result` and runs the rules over it.
    fn finish(
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
        // For each producer in the latest snapshot, its next batch after the
        // snapshot offset continues its sequence.
        if let Some((at, entries)) = &snaps.latest {
            for e in entries.iter().filter(|e| e.last_sequence >= 0) {
                let Some(next) = self.next_of.get(&e.producer_id) else {
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
        // Transactions open at the log end: a transactional batch of a
        // producer with no control marker after it.
        for (pid, (first, place)) in self.open {
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
}

/// The location every finding of a replica's own checks starts from.
pub fn base_location(replica: &Replica, broker: i32) -> Location {
    Location {
        broker: Some(broker),
        topic: Some(replica.topic.clone()),
        partition: Some(replica.partition),
        ..Location::default()
    }
}

/// Every check of `replica` on its own: each segment read once (in
/// parallel: framing, checksums, offsets within it, its name, tail and
/// indexes, and what the order-dependent rules need of it), then the
/// epoch, offset and producer rules over the segments' folds. `agree`: the
/// offset range whose batches' [`Fingerprint`] to take.
/// `clean_shutdown`: whether the replica's log directory holds Kafka's
/// clean-shutdown marker (`None`: the directory is not in the capture).
pub fn scan_replica(
    replica: &Replica,
    broker: i32,
    agree: Option<(i64, i64)>,
    clean_shutdown: Option<bool>,
) -> Scanned {
    let base = base_location(replica, broker);
    let snapshots = Snapshots::read(replica, &base);
    let bases: Vec<i64> = replica.segments.iter().map(|s| s.base_offset).collect();
    let cx = FoldContext {
        snapshots: &snapshots,
        agree,
        keep: keeps_batches(replica),
        rebuilt_from: rebuilt_on_restart(
            replica.kind == ReplicaKind::Metadata,
            clean_shutdown,
            replica.recovery_point,
            &bases,
        ),
    };
    let logs: Vec<(&crate::model::SegmentFiles, &PathBuf)> = replica
        .segments
        .iter()
        .filter_map(|s| s.log.as_ref().map(|p| (s, p)))
        .collect();
    let nseg = logs.len();
    // Segments are read in parallel; what spans segments is checked after.
    let scans: Vec<SegmentScan> = logs
        .par_iter()
        .enumerate()
        .map(|(i, (seg, path))| scan_segment(seg, path, i, i + 1 == nseg, &base, &cx))
        .collect();
    let mut findings = Vec::new();
    let files: Vec<PathBuf> = logs.iter().map(|(_, p)| (*p).clone()).collect();
    let segments = nseg as u64;
    let mut bytes_read = 0u64;
    let mut batches = 0u64;
    let last_segment_base = logs.last().map(|(s, _)| s.base_offset);
    let mut last_batch_end: Option<i64> = None;
    let mut prev_last: Option<(i64, usize)> = None; // last offset of the previous segment, its file
    let mut ranges = Vec::with_capacity(nseg);
    let mut fold = ReplicaFold::new();
    let mut kept: Option<Vec<BatchAt>> = cx.keep.then(Vec::new);
    for (fidx, ((seg, path), mut scan)) in logs.iter().zip(scans).enumerate() {
        match (&mut kept, scan.kept.take()) {
            (Some(k), Some(mut b)) => k.append(&mut b),
            _ => kept = None,
        }
        findings.extend(scan.findings);
        bytes_read += scan.bytes_read;
        batches += scan.batches;
        if let (Some((pos, first)), Some((pl, pf))) = (scan.first, prev_last) {
            if first <= pl || seg.base_offset <= pl {
                findings.push(finding(
                    code::SEGMENT_OVERLAP,
                    Location {
                        file: Some(display(path)),
                        position: Some(pos),
                        offset: Some(first),
                        ..base.clone()
                    },
                    format!(
                        "segment {} (first batch at offset {first}) overlaps the previous segment {} that ends at offset {pl}",
                        seg.base_offset,
                        files.get(pf).map(|p| file_name_of_path(p)).unwrap_or_default()
                    ),
                ));
            }
        }
        if let Some(p) = scan.last {
            prev_last = Some((p, fidx));
            last_batch_end = Some(
                last_batch_end.map_or(p.saturating_add(1), |e: i64| e.max(p.saturating_add(1))),
            );
        }
        fold.add(scan.fold);
        ranges.push(SegmentRange {
            plan: SegmentPlan {
                file: fidx,
                path: (*path).clone(),
                end: scan.end,
            },
            offsets: scan.min_base.zip(scan.last),
        });
    }
    let log = replica_log_ends(replica, broker, last_batch_end, last_segment_base);
    let plans: Vec<SegmentPlan> = ranges.iter().map(|r| r.plan.clone()).collect();
    let ranges = Arc::new(ranges);
    let agree_print = fold.agree;
    let mut result = ReplicaResult {
        findings,
        log,
        spans: EpochSpans::default(),
        span_starts: Vec::new(),
        regressions: Vec::new(),
        batches,
        files,
        segments,
        bytes: bytes_read,
        cleaned_to: replica.cleaner_offset,
        locate: Arc::new(move |offset| locate(&ranges, offset)),
        unreadable: false,
    };
    fold.finish(replica, &base, snapshots, &mut result);
    settle_unreadable(&mut result);
    Scanned {
        result,
        plans,
        agree: agree_print,
        kept,
    }
}

/// Every check of a replica read on its own (a metadata log, a partition's
/// only replica).
pub fn check_replica(
    replica: &Replica,
    broker: i32,
    clean_shutdown: Option<bool>,
) -> ReplicaResult {
    scan_replica(replica, broker, None, clean_shutdown).result
}

/// The batch holding `offset` (the first in log order), else the first
/// batch at or after it: read again from the segments whose offsets reach
/// it.
fn locate(ranges: &[SegmentRange], offset: i64) -> Option<BatchPlace> {
    let scan = |r: &SegmentRange, pick: &dyn Fn(&BatchSummary) -> bool| -> Option<BatchPlace> {
        let mut s = ReplicaBatches::new(vec![r.plan.clone()]);
        while let Some(b) = s.next_batch() {
            if pick(&b.summary) {
                return Some(b.place);
            }
        }
        None
    };
    let holds = |b: &BatchSummary| b.base_offset <= offset && offset <= b.last_offset;
    for r in ranges {
        if matches!(r.offsets, Some((lo, hi)) if lo <= offset && offset <= hi) {
            if let Some(p) = scan(r, &holds) {
                return Some(p);
            }
        }
    }
    ranges
        .iter()
        .filter(|r| matches!(r.offsets, Some((_, hi)) if hi >= offset))
        .find_map(|r| scan(r, &|b: &BatchSummary| b.base_offset >= offset))
}

/// Reads one segment (`fidx`: its number among the replica's `.log` files):
/// framing, checksums, headers, offset order within it, its name, its tail
/// and its indexes.
fn scan_segment(
    seg: &crate::model::SegmentFiles,
    path: &Path,
    fidx: usize,
    is_last: bool,
    base: &Location,
    cx: &FoldContext<'_>,
) -> SegmentScan {
    if let Some(d) = crate::capture::digest::segment(path) {
        return super::digested::scan(seg, path, d, fidx, is_last, base, cx);
    }
    let data = match SegmentFile::open(path) {
        Ok(b) => b,
        Err(e) => {
            let mut c = SegmentChecks::new(seg, path, fidx, 0, base, cx);
            let at = c.at(None, None);
            c.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                format!("cannot read: {e}"),
            ));
            let mut scan = c.finish(|_, _, _| {});
            scan.kept = None;
            return scan;
        }
    };
    let log_len = data.len();
    let mut c = SegmentChecks::new(seg, path, fidx, log_len, base, cx);
    // every batch's checksum checked, the walk going on past one that
    // fails (the segment's checks say where Kafka's recovery would stop)
    let mut walk = Walk::new(data.entries()).checksums(Checksums::Mark);
    while let Some(step) = walk.next() {
        let (batch, crc) = match step {
            Step::Batch(b) => (b, None),
            Step::BadCrc(b, e) => (b, Some(e)),
            Step::Io(e) => {
                c.unreadable(walk.position(), format!("cannot read: {e}"));
                break;
            }
            Step::Bad(e) => {
                c.bad_entry(e.pos, &e.reason);
                break;
            }
            Step::Tail(tail) => {
                let declared = match tail.kind {
                    TailKind::Truncated { declared } => Some(declared),
                    TailKind::Short => None,
                };
                c.tail(tail.position, tail.len, declared, is_last);
                break;
            }
            Step::Skipped(_) => continue,
        };
        let short = matches!(batch, Batch::V2(b) if b.bytes().len() < V2_HEADER_SIZE);
        let header = match batch {
            Batch::V2(b) => Some((b.last_offset_delta(), b.records_count())),
            Batch::Legacy(_) => None,
        };
        let fine = c.batch(
            batch.position(),
            batch.magic(),
            summarize(&batch),
            match &crc {
                None => Crc::Fine,
                Some(e) => Crc::Fails(&e.reason, short),
            },
            header,
        );
        if !fine {
            break;
        }
    }
    let rebuilt = cx.rebuilt_from.is_some_and(|b| seg.base_offset >= b);
    let mut scan = c.finish(|batches, stopped, findings| {
        check_indexes(seg, log_len, batches, rebuilt, stopped, base, findings)
    });
    // A segment that changed while it was read: what was found in it is
    // not evidence, the change is (the machine's answer, exit 2).
    if let Err(e) = data.unchanged() {
        scan.findings = vec![finding(
            code::FILE_UNREADABLE,
            Location {
                file: Some(display(path)),
                ..base.clone()
            },
            format!("cannot read: {e}"),
        )];
    }
    scan
}
