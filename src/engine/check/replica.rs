//! One replica's own checks, reading its files: each segment walked once
//! and its batches fed to `analysis::check`'s [`SegmentRule`] (framing,
//! checksums, offsets, torn tails), then its indexes read against them;
//! its producer snapshots; then the segments' folds combined in log order
//! ([`ReplicaFold`]: the epoch, offset and producer rules). The reading is
//! here, the rules in `analysis::check`. No batch list is kept: a
//! segment's batches live while its indexes are checked, the stream holds
//! a chunk.

use crate::analysis::check::settle_unreadable;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::segment::{check_indexes, file_name_of_path, read_snapshots};
use super::stream::{ReplicaBatches, SegmentPlan};
use crate::analysis::check::{
    code, display, finding, rebuilt_on_restart, segment_overlap, BatchAt, BatchPlace, Crc,
    Fingerprint, FoldContext, ReplicaFold, ReplicaResult, SegmentRule, SegmentScan,
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
    let snapshots = read_snapshots(replica, &base);
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
    let mut fold = ReplicaFold::default();
    let mut kept: Option<Vec<BatchAt>> = cx.keep.then(Vec::new);
    for (fidx, ((seg, path), mut scan)) in logs.iter().zip(scans).enumerate() {
        match (&mut kept, scan.kept.take()) {
            (Some(k), Some(mut b)) => k.append(&mut b),
            _ => kept = None,
        }
        findings.extend(scan.findings);
        bytes_read += scan.bytes_read;
        batches += scan.batches;
        if let (Some(first), Some((pl, pf))) = (scan.first, prev_last) {
            let prev_name = files
                .get(pf)
                .map(|p| file_name_of_path(p))
                .unwrap_or_default();
            let at = Location {
                file: Some(display(path)),
                ..base.clone()
            };
            findings.extend(segment_overlap(seg.base_offset, first, pl, &prev_name, at));
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
    let agree_print = fold.agree();
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
            let mut c = SegmentRule::new(seg, path, fidx, 0, base, cx);
            let at = c.at(None, None);
            c.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                format!("cannot read: {e}"),
            ));
            let (mut scan, _) = c.finish();
            scan.kept = None;
            return scan;
        }
    };
    let log_len = data.len();
    let mut c = SegmentRule::new(seg, path, fidx, log_len, base, cx);
    // every batch's checksum checked, the walk going on past one that
    // fails (the segment's checks say where Kafka's recovery would stop)
    let mut walk = Walk::new(data.entries()).checksums(Checksums::Mark);
    while let Some(step) = walk.next() {
        let (batch, crc) = match step {
            Step::Batch(b) => (b, None),
            Step::BadCrc(b, e) => (b, Some(e)),
            Step::Io(e) => {
                let pos = walk.position();
                let at = c.at(Some(pos), None);
                c.read_failed(
                    pos,
                    finding(code::FILE_UNREADABLE, at, format!("cannot read: {e}")),
                );
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
    let (mut scan, batches) = c.finish();
    if let Some(batches) = batches {
        let stopped = scan.stopped;
        check_indexes(
            seg,
            log_len,
            &batches,
            rebuilt,
            stopped,
            base,
            &mut scan.findings,
        );
    }
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
