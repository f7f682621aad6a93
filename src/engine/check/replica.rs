//! One replica's own checks, reading its files: segments (framing,
//! checksums, offsets, torn tails), indexes against the log, producer
//! snapshots, transaction indexes; then, over its batches streamed again in
//! log order ([`Fold`]), the epoch, offset and producer rules of
//! `analysis::check`. No batch list is kept: a segment's batches live while
//! its indexes are checked, the stream holds a chunk.

use crate::analysis::check::settle_unreadable;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::stream::{BatchAt, ReplicaBatches, SegmentPlan};
use crate::analysis::check::{
    check_epochs, check_offsets, code, display, finding, rebuilt_on_restart, BatchPlace, Finding,
    Location, ReplicaResult,
};
use crate::analysis::timeline::{EpochSpan, EpochSpans};
use crate::capture::replica::{replica_log_ends, summarize};
use crate::capture::segment::SegmentFile;
use crate::format::batch::{Batch, EntryError, TailKind, V2_HEADER_SIZE};
use crate::format::index::{OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE};
use crate::format::names::ReplicaKind;
use crate::format::snapshot::{read_producer_snapshot, ProducerEntry};
use crate::format::txnindex::parse_txn_index;
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
    fn add(&mut self, k: (i64, i64, i32, u32)) {
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

    fn merge(&mut self, o: Fingerprint) {
        self.count += o.count;
        self.sums.0 = self.sums.0.wrapping_add(o.sums.0);
        self.sums.1 = self.sums.1.wrapping_add(o.sums.1);
    }
}

/// One segment's readable range and offsets, for the locator.
#[derive(Debug, Clone)]
struct SegmentRange {
    plan: SegmentPlan,
    /// Smallest base offset and greatest last offset of its batches.
    offsets: Option<(i64, i64)>,
}

/// What a replica's producer snapshots say, read before its batches: the
/// latest readable snapshot's offset and producers, and the findings of
/// the snapshots that do not read.
pub(super) struct Snapshots {
    latest: Option<(i64, Vec<ProducerEntry>)>,
    /// Producers of the latest snapshot with a sequence to continue.
    waiting: BTreeSet<i64>,
    findings: Vec<Finding>,
}

impl Snapshots {
    pub(super) fn read(replica: &Replica, base: &Location) -> Snapshots {
        let mut findings = Vec::new();
        let mut latest: Option<(i64, Vec<ProducerEntry>)> = None;
        if replica.kind != ReplicaKind::Metadata {
            for snap in &replica.snapshots {
                let mut l = base.clone();
                l.file = Some(display(&snap.path));
                let data = match crate::capture::vfs::read(&snap.path) {
                    Ok(d) => d,
                    Err(e) => {
                        findings.push(finding(
                            code::FILE_UNREADABLE,
                            l,
                            format!("cannot read: {e}"),
                        ));
                        continue;
                    }
                };
                match read_producer_snapshot(&data) {
                    Ok(s) => {
                        if latest.as_ref().is_none_or(|(o, _)| snap.offset > *o) {
                            latest = Some((snap.offset, s.entries));
                        }
                    }
                    Err(e) => {
                        l.position = Some(e.pos);
                        findings.push(finding(
                            code::PRODUCER_SNAPSHOT_INVALID,
                            l,
                            format!("Kafka would refuse this producer snapshot: {}", e.reason),
                        ));
                    }
                }
            }
        }
        let waiting = latest
            .as_ref()
            .map(|(_, es)| {
                es.iter()
                    .filter(|e| e.last_sequence >= 0)
                    .map(|e| e.producer_id)
                    .collect()
            })
            .unwrap_or_default();
        Snapshots {
            latest,
            waiting,
            findings,
        }
    }
}

/// What one segment read on its own gives its replica's order-dependent
/// rules, combined with the other segments' in log order
/// ([`ReplicaFold`]): sizes bounded by epochs and producers, not batches.
#[derive(Debug, Default)]
pub(super) struct SegmentFold {
    /// Runs of one epoch, with where each begins.
    spans: Vec<(EpochSpan, BatchPlace)>,
    /// Each waiting producer's first data batch at or after the snapshot.
    next_of: BTreeMap<i64, BatchAt>,
    /// Transactional producers' batches.
    txns: BTreeMap<i64, TxnPart>,
    /// The batches whose base offset is in the agreement range.
    agree: Fingerprint,
}

/// One producer's transactional batches in a segment.
#[derive(Debug, Clone, Copy, Default)]
struct TxnPart {
    /// A control batch (commit or abort) closed what was open.
    closed: bool,
    /// Its first data batch, before any control batch.
    first_open: Option<(i64, BatchPlace)>,
    /// Its first data batch after the last control batch.
    open_after_close: Option<(i64, BatchPlace)>,
}

/// What a segment's scan folds as it reads, and with what.
pub(super) struct FoldContext<'a> {
    pub(super) snapshots: &'a Snapshots,
    pub(super) agree: Option<(i64, i64)>,
    /// Keep every batch's header.
    pub(super) keep: bool,
    /// Segments from this base offset on have their indexes rebuilt by
    /// Kafka when the broker next starts ([`rebuilt_on_restart`]).
    pub(super) rebuilt_from: Option<i64>,
}

impl SegmentFold {
    pub(super) fn push(&mut self, s: &BatchSummary, place: BatchPlace, cx: &FoldContext<'_>) {
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
    let logs: Vec<(&crate::capture::discover::SegmentFiles, &PathBuf)> = replica
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

/// What one segment's own checks found.
pub(super) struct SegmentScan {
    pub(super) findings: Vec<Finding>,
    /// Batches read.
    pub(super) batches: u64,
    /// Position and offset of the first batch.
    pub(super) first: Option<(u64, i64)>,
    /// Smallest base offset of its batches.
    pub(super) min_base: Option<i64>,
    /// Greatest last offset of its batches.
    pub(super) last: Option<i64>,
    /// Where its readable batches end.
    pub(super) end: u64,
    pub(super) bytes_read: u64,
    /// What the replica's order-dependent rules need of it.
    pub(super) fold: SegmentFold,
    /// Its batches, when asked to keep them.
    pub(super) kept: Option<Vec<BatchAt>>,
}

/// What the index checks of a segment read of each of its batches.
#[derive(Debug, Clone, Copy)]
pub(super) struct SegBatch {
    pub(super) position: u64,
    pub(super) base_offset: i64,
    pub(super) last_offset: i64,
    pub(super) is_control: bool,
}

/// The batches of one segment, in file order, with the lookups the index
/// checks make (each in logarithmic time, not a scan per entry).
pub(super) struct SegBatches {
    /// In file order (positions increase).
    list: Vec<SegBatch>,
    /// `(base offset, greatest last offset of the batches up to it)` in base
    /// offset order: whether some batch holds an offset.
    by_base: Vec<(i64, i64)>,
    /// `(last offset, index in list)`, sorted: the latest batch ending at
    /// an offset.
    last_at: Vec<(i64, usize)>,
    /// Base offsets of the control batches, sorted.
    control: Vec<i64>,
}

impl SegBatches {
    /// The lookup tables of a segment's batches; `None` when the memory for
    /// them cannot be had.
    pub(super) fn new(list: Vec<SegBatch>) -> Option<Self> {
        let mut by_base: Vec<(i64, i64)> = Vec::new();
        let mut last_at: Vec<(i64, usize)> = Vec::new();
        use crate::format::memory::fallible;
        fallible(|| by_base.try_reserve_exact(list.len())).ok()?;
        fallible(|| last_at.try_reserve_exact(list.len())).ok()?;
        by_base.extend(list.iter().map(|b| (b.base_offset, b.last_offset)));
        by_base.sort_unstable();
        let mut max_last = i64::MIN;
        for e in by_base.iter_mut() {
            max_last = max_last.max(e.1);
            e.1 = max_last;
        }
        last_at.extend(list.iter().enumerate().map(|(i, b)| (b.last_offset, i)));
        last_at.sort_unstable();
        let mut control: Vec<i64> = list
            .iter()
            .filter(|b| b.is_control)
            .map(|b| b.base_offset)
            .collect();
        control.sort_unstable();
        Some(SegBatches {
            list,
            by_base,
            last_at,
            control,
        })
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The greatest last offset.
    fn last(&self) -> Option<i64> {
        self.by_base.last().map(|(_, l)| *l)
    }

    /// Whether some batch has `base <= offset <= last`.
    fn holds(&self, offset: i64) -> bool {
        let n = self.by_base.partition_point(|(b, _)| *b <= offset);
        n > 0 && self.by_base[n - 1].1 >= offset
    }

    /// The batch starting at `position`, by index.
    fn at_position(&self, position: u64) -> Option<usize> {
        self.list
            .binary_search_by_key(&position, |b| b.position)
            .ok()
    }

    /// Whether a batch at index `i` or after it in the file ends at `offset`.
    fn ends_at_or_after(&self, i: usize, offset: i64) -> bool {
        // the last entry ending at `offset` has the greatest index
        let n = self.last_at.partition_point(|&(l, _)| l <= offset);
        n > 0 && self.last_at[n - 1].0 == offset && self.last_at[n - 1].1 >= i
    }

    /// Whether a control batch starts at `offset`.
    fn control_at(&self, offset: i64) -> bool {
        self.control.binary_search(&offset).is_ok()
    }
}

/// Reads one segment (`fidx`: its number among the replica's `.log` files):
/// framing, checksums, headers, offset order within it, its name, its tail
/// and its indexes.
fn scan_segment(
    seg: &crate::capture::discover::SegmentFiles,
    path: &Path,
    fidx: usize,
    is_last: bool,
    base: &Location,
    cx: &FoldContext<'_>,
) -> SegmentScan {
    let mut fold = SegmentFold::default();
    let mut kept: Option<Vec<BatchAt>> = cx.keep.then(Vec::new);
    let mut findings = Vec::new();
    let mut batches: Vec<SegBatch> = Vec::new();
    let mut first_batch = None;
    let mut min_base: Option<i64> = None;
    let at = |position: Option<u64>, offset: Option<i64>| Location {
        file: Some(display(path)),
        position,
        offset,
        ..base.clone()
    };
    if let Some(d) = crate::capture::digest::segment(path) {
        return super::digested::scan(seg, path, d, fidx, is_last, base, cx);
    }
    let data = match SegmentFile::open(path) {
        Ok(b) => b,
        Err(e) => {
            findings.push(finding(
                code::FILE_UNREADABLE,
                at(None, None),
                format!("cannot read: {e}"),
            ));
            return SegmentScan {
                findings,
                batches: 0,
                first: None,
                min_base: None,
                last: None,
                end: 0,
                bytes_read: 0,
                fold,
                kept: None,
            };
        }
    };
    let log_len = data.len();
    let mut it = data.entries();
    let mut prev_in_seg: Option<i64> = None;
    // Where reading stopped on damage: index entries past it are not judged.
    let mut stopped: Option<u64> = None;
    while let Some(item) = it.next_entry() {
        let batch = match item {
            Ok(b) => b,
            Err(EntryError::Io(e)) => {
                let pos = it.position();
                findings.push(finding(
                    code::FILE_UNREADABLE,
                    at(Some(pos), None),
                    format!("cannot read: {e}"),
                ));
                stopped = Some(pos);
                break;
            }
            Err(EntryError::Bad(e)) => {
                let code = if e.reason.contains("magic") {
                    code::BATCH_BAD_MAGIC
                } else {
                    code::BATCH_FRAMING
                };
                findings.push(finding(
                    code,
                    at(Some(e.pos), None),
                    format!(
                        "{}; the rest of the segment ({} bytes) cannot be read",
                        e.reason,
                        log_len.saturating_sub(e.pos)
                    ),
                ));
                stopped = Some(e.pos);
                break;
            }
        };
        let pos = batch.position();
        let rest = log_len.saturating_sub(pos);
        let magic = batch.magic();
        if !(0..=2).contains(&magic) {
            findings.push(finding(
                code::BATCH_BAD_MAGIC,
                at(Some(pos), Some(batch.offset_field())),
                format!(
                    "magic {magic} is not 0, 1 or 2; the rest of the segment ({rest} bytes) is not a readable log"
                ),
            ));
            stopped = Some(pos);
            break;
        }
        if let Err(e) = batch.check_crc() {
            let code = match batch {
                Batch::V2(b) if b.bytes().len() < V2_HEADER_SIZE => code::BATCH_FRAMING,
                _ => code::BATCH_CRC_MISMATCH,
            };
            findings.push(finding(
                code,
                at(Some(pos), Some(batch.offset_field())),
                format!(
                    "{}; Kafka's recovery truncates the segment here, dropping {rest} bytes",
                    e.reason
                ),
            ));
            stopped = Some(pos);
            break;
        }
        let summary = summarize(&batch);
        if let Batch::V2(b) = batch {
            let delta = b.last_offset_delta();
            let count = b.records_count();
            if delta < 0 || count < 0 || i64::from(count) > i64::from(delta) + 1 {
                findings.push(finding(
                    code::BATCH_HEADER_INVALID,
                    at(Some(pos), Some(b.base_offset())),
                    format!(
                        "last offset delta {delta} and record count {count} are impossible together"
                    ),
                ));
            }
        }
        // For a legacy compressed wrapper the offset field is its last
        // inner offset: only v2 base offsets can be compared as firsts.
        let first = summary.base_offset;
        if let Some(p) = prev_in_seg {
            if first <= p {
                findings.push(finding(
                    code::BATCH_OFFSET_ORDER,
                    at(Some(pos), Some(first)),
                    format!(
                        "batch at offset {first} follows a batch ending at offset {p}: offsets do not increase"
                    ),
                ));
            }
        } else {
            first_batch = Some((pos, first));
            if summary.last_offset < seg.base_offset
                || (matches!(batch, Batch::V2(_)) && first < seg.base_offset)
            {
                findings.push(finding(
                    code::SEGMENT_NAME_MISMATCH,
                    at(Some(pos), Some(first)),
                    format!(
                        "first batch starts at offset {first}, below the segment's base offset {} from its name",
                        seg.base_offset
                    ),
                ));
            }
        }
        prev_in_seg = Some(prev_in_seg.map_or(summary.last_offset, |p| p.max(summary.last_offset)));
        min_base = Some(min_base.map_or(first, |m| m.min(first)));
        fold.push(&summary, (fidx, pos), cx);
        // memory for what the index checks need, asked for, not assumed
        if batches.len() == batches.capacity()
            && crate::format::memory::fallible(|| batches.try_reserve(batches.len().max(1024)))
                .is_err()
        {
            findings.push(finding(
                code::FILE_UNREADABLE,
                at(Some(pos), None),
                format!(
                    "cannot allocate memory to check the segment past {} batches",
                    batches.len()
                ),
            ));
            stopped = Some(pos);
            break;
        }
        batches.push(SegBatch {
            position: pos,
            base_offset: summary.base_offset,
            last_offset: summary.last_offset,
            is_control: summary.is_control,
        });
        if let Some(k) = &mut kept {
            k.push(BatchAt {
                summary,
                place: (fidx, pos),
            });
        }
    }
    if stopped.is_none() {
        if let Some(tail) = it.tail() {
            let declared = match tail.kind {
                TailKind::Truncated { declared } => {
                    format!("; the entry there declares {declared} bytes")
                }
                TailKind::Short => String::new(),
            };
            let (code, where_) = if is_last {
                (code::SEGMENT_TORN_TAIL, "last segment")
            } else {
                (code::SEGMENT_TORN_MIDDLE, "segment that is not the last")
            };
            findings.push(finding(
                code,
                at(Some(tail.position), None),
                format!(
                    "{} bytes after the last complete batch of the {where_}{declared}",
                    tail.len
                ),
            ));
        }
    }
    let count = batches.len() as u64;
    match SegBatches::new(batches) {
        Some(batches) => check_indexes(
            seg,
            log_len,
            &batches,
            cx.rebuilt_from.is_some_and(|b| seg.base_offset >= b),
            stopped,
            base,
            &mut findings,
        ),
        None => findings.push(finding(
            code::FILE_UNREADABLE,
            at(None, None),
            "cannot allocate memory to check the segment's indexes".to_string(),
        )),
    }
    // A segment that changed while it was read: what was found in it is
    // not evidence, the change is (the machine's answer, exit 2).
    if let Err(e) = data.unchanged() {
        findings = vec![finding(
            code::FILE_UNREADABLE,
            at(None, None),
            format!("cannot read: {e}"),
        )];
    }
    SegmentScan {
        findings,
        batches: count,
        first: first_batch,
        min_base,
        last: prev_in_seg,
        end: stopped.unwrap_or(log_len),
        bytes_read: log_len,
        fold,
        kept,
    }
}

fn file_name_of_path(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether every byte of `b` is zero.
fn all_zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// One index entry judged: the entry (offset and position, or timestamp and
/// offset), whether it is not judged (past where the log's reading
/// stopped), and what is wrong with it (code, offset, message).
type Judged = ((i64, i64), bool, Vec<(&'static str, Option<i64>, String)>);

/// `.index` and `.timeindex` of one segment, against the batches read from it.
/// `rebuilt`: Kafka rebuilds this segment's indexes when the broker next
/// starts ([`rebuilt_on_restart`]), so it reads none of their bytes: the
/// entries up to the first that does not fit the log are its index, the
/// rest are leftovers, one info; zero-filled slots are its preallocation.
pub(super) fn check_indexes(
    seg: &crate::capture::discover::SegmentFiles,
    log_len: u64,
    batches: &SegBatches,
    rebuilt: bool,
    stopped: Option<u64>,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
    if let Some(path) = &seg.txnindex {
        check_txn_index(
            seg.base_offset,
            path,
            batches,
            stopped.is_none(),
            base,
            findings,
        );
    }
    for (kind, path) in [("index", &seg.index), ("timeindex", &seg.timeindex)] {
        let Some(path) = path else {
            // A segment holding no data needs no index; Kafka recreates them.
            if !batches.is_empty() {
                if let Some(lp) = &seg.log {
                    findings.push(finding(
                        code::INDEX_MISSING,
                        Location {
                            file: Some(display(lp)),
                            ..base.clone()
                        },
                        format!("segment {} has no .{kind} file", seg.base_offset),
                    ));
                }
            }
            continue;
        };
        let at = |position: Option<u64>, offset: Option<i64>| Location {
            file: Some(display(path)),
            position,
            offset,
            ..base.clone()
        };
        // Only the bytes up to the end of the file's data are read: a
        // sparse preallocated index (Kafka's 10 MiB default) is a few
        // entries and a hole, which reads as zeros.
        let (data, file_len) = match crate::capture::vfs::open_data(path) {
            Ok(d) => d,
            Err(e) => {
                findings.push(finding(
                    code::FILE_UNREADABLE,
                    at(None, None),
                    format!("cannot read: {e}"),
                ));
                continue;
            }
        };
        let entry_size = if kind == "index" {
            OFFSET_ENTRY_SIZE
        } else {
            TIME_ENTRY_SIZE
        };
        let file_len = usize::try_from(file_len).unwrap_or(usize::MAX);
        if file_len % entry_size != 0 {
            findings.push(finding(
                code::INDEX_LENGTH_INVALID,
                at(Some((file_len - file_len % entry_size) as u64), None),
                format!("{file_len} bytes is not a multiple of the {entry_size}-byte entry size"),
            ));
        }
        let slots = file_len / entry_size;
        // The first slot from which the file holds nothing but zeros (the
        // slots past its data are zeros without being read).
        let mut zero_from = slots.min(data.len().div_ceil(entry_size));
        while zero_from > 0 {
            let s = (zero_from - 1) * entry_size;
            // a slot the data ends inside is zeros past the data
            match data.get(s..(s + entry_size).min(data.len())) {
                Some(e) if all_zero(e) => zero_from -= 1,
                _ => break,
            }
        }
        // All-zero slots at the end are padding: a real .index entry never
        // has relative offset 0 (the first batch is never indexed), and a
        // time-index entry (timestamp 0, base offset) is treated alike.
        if zero_from < slots {
            let padding = slots - zero_from;
            let (code, why) = if rebuilt {
                (
                    code::INDEX_PREALLOCATED,
                    "the broker did not shut down cleanly (or was running when copied), and Kafka rebuilds this segment's indexes when it next starts",
                )
            } else {
                (
                    code::INDEX_UNTRIMMED,
                    "Kafka loads this index as it stands and counts these slots as entries",
                )
            };
            findings.push(finding(
                code,
                at(Some((zero_from * entry_size) as u64), None),
                format!(
                    "{padding} zero-filled slots ({} bytes) after {zero_from} entries: a preallocated index never trimmed; {why}",
                    padding * entry_size
                ),
            ));
        }
        let be = |s: usize, n: usize| -> i64 {
            let mut v: i64 = 0;
            for i in 0..n {
                v = (v << 8) | i64::from(data.get(s + i).copied().unwrap_or(0));
            }
            if n == 4 {
                i64::from(v as u32 as i32)
            } else {
                v
            }
        };
        let seg_last = batches.last();
        let last_text = || seg_last.map_or("none".to_string(), |l| l.to_string());
        // Entry `n` against the one before it: what it is (to compare the
        // next one with), whether it is not judged (past where the log's
        // reading stopped), and what is wrong with it.
        let judge = |n: usize, prev: Option<(i64, i64)>| -> Judged {
            let s = n * entry_size;
            let mut wrong = Vec::new();
            if kind == "index" {
                let rel = be(s, 4);
                let position = be(s + 4, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some_and(|p| position >= p as i64) {
                    return ((offset, position), true, wrong);
                }
                if let Some((po, _)) = prev {
                    if offset <= po {
                        wrong.push((
                            code::INDEX_NOT_MONOTONIC,
                            Some(offset),
                            format!("entry {n}: offset {offset} does not increase over the previous entry's {po}"),
                        ));
                    }
                }
                if rel < 0
                    || position < 0
                    || position as u64 >= log_len
                    || seg_last.is_none_or(|l| offset > l)
                {
                    wrong.push((
                        code::INDEX_OUTSIDE_SEGMENT,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} at position {position} is outside the segment (base offset {}, last offset {}, {log_len} bytes)",
                            seg.base_offset,
                            last_text()
                        ),
                    ));
                    return ((offset, position), false, wrong);
                }
                // The position must start a batch; the entry's offset is the
                // last offset of an append that began there: at least that
                // batch's last offset, and the last offset of some batch.
                match batches.at_position(position as u64) {
                    None => wrong.push((
                        code::INDEX_ENTRY_MISMATCH,
                        Some(offset),
                        format!("entry {n}: position {position} for offset {offset} is not the start of a batch"),
                    )),
                    Some(i) => {
                        let b = &batches.list[i];
                        let ends_batch = batches.ends_at_or_after(i, offset);
                        if offset < b.last_offset || !ends_batch {
                            wrong.push((
                                code::INDEX_ENTRY_MISMATCH,
                                Some(offset),
                                format!(
                                    "entry {n}: offset {offset} does not fit the batch at position {position} (offsets [{}, {}))",
                                    b.base_offset,
                                    b.last_offset.saturating_add(1)
                                ),
                            ));
                        }
                    }
                }
                ((offset, position), false, wrong)
            } else {
                let ts = be(s, 8);
                let rel = be(s + 8, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some() && !matches!(seg_last, Some(l) if offset <= l) {
                    return ((ts, offset), true, wrong);
                }
                if let Some((pts, po)) = prev {
                    if ts <= pts || offset < po {
                        wrong.push((
                            code::INDEX_NOT_MONOTONIC,
                            Some(offset),
                            format!(
                                "entry {n}: (timestamp {}, offset {offset}) does not increase over ({}, {po})",
                                crate::format::text::human_time(ts),
                                crate::format::text::human_time(pts)
                            ),
                        ));
                    }
                }
                if rel < 0 || seg_last.is_none_or(|l| offset > l) {
                    wrong.push((
                        code::INDEX_OUTSIDE_SEGMENT,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} is outside the segment (base offset {}, last offset {})",
                            seg.base_offset,
                            last_text()
                        ),
                    ));
                    return ((ts, offset), false, wrong);
                }
                // Kafka 4.x writes a time index entry at the offset of the
                // record with the largest timestamp, which can lie inside a
                // batch (a follower appending a leader's batch does this; the
                // divergence capture has one). kafka-dump-log's own check
                // calls that a mismatch; Kafka itself reads it fine.
                if !batches.holds(offset) {
                    wrong.push((
                        code::INDEX_ENTRY_MISMATCH,
                        Some(offset),
                        format!("entry {n}: offset {offset} is in no batch of the segment"),
                    ));
                }
                ((ts, offset), false, wrong)
            }
        };
        let mut prev: Option<(i64, i64)> = None;
        if rebuilt {
            // The index Kafka would be using is the prefix that fits the
            // log; what follows it is leftovers it never reads.
            for n in 0..zero_from {
                let (this, skip, wrong) = judge(n, prev);
                if skip {
                    continue;
                }
                if let Some((_, offset, why)) = wrong.into_iter().next() {
                    findings.push(finding(
                        code::INDEX_STALE_ENTRIES,
                        at(Some((n * entry_size) as u64), offset),
                        format!(
                            "{} from entry {n} on {} leftovers that do not fit the log (first: {why}; the log ends at offset {}, {log_len} bytes): the broker did not shut down cleanly (or was running when copied), and Kafka rebuilds this segment's indexes when it next starts",
                            crate::format::text::count((zero_from - n) as u64, "entry", "entries"),
                            if zero_from - n == 1 { "is" } else { "are" },
                            seg_last.map_or("none".to_string(), |l| l.saturating_add(1).to_string())
                        ),
                    ));
                    break;
                }
                prev = Some(this);
            }
            continue;
        }
        let mut reported: BTreeSet<&'static str> = BTreeSet::new();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        for n in 0..zero_from {
            let (this, skip, wrong) = judge(n, prev);
            if skip {
                continue;
            }
            prev = Some(this);
            for (code, offset, msg) in wrong {
                *counts.entry(code).or_default() += 1;
                if reported.insert(code) {
                    findings.push(finding(
                        code,
                        at(Some((n * entry_size) as u64), offset),
                        msg,
                    ));
                }
            }
        }
        for (code, n) in counts {
            if n > 1 {
                if let Some(f) = findings
                    .iter_mut()
                    .rev()
                    .find(|f| f.code == code && f.location.file.as_deref() == Some(&display(path)))
                {
                    f.message
                        .to_mut()
                        .push_str(&format!(" ({} more entries like this)", n - 1));
                }
            }
        }
    }
}

/// `.txnindex` entries: Kafka's load-time rules, and each abort marker is a
/// control batch of the segment.
fn check_txn_index(
    base_offset: i64,
    path: &Path,
    batches: &SegBatches,
    complete: bool,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
    let at = |position: u64, offset: Option<i64>| Location {
        file: Some(display(path)),
        position: Some(position),
        offset,
        ..base.clone()
    };
    let data = match crate::capture::vfs::open(path) {
        Ok(d) => d,
        Err(e) => {
            findings.push(finding(
                code::FILE_UNREADABLE,
                Location {
                    file: Some(display(path)),
                    ..base.clone()
                },
                format!("cannot read: {e}"),
            ));
            return;
        }
    };
    let Ok(idx) = parse_txn_index(&data) else {
        return;
    };
    let seg_last = batches.last();
    let mut problems = Vec::new();
    for e in &idx.entries {
        let why = if !e.version_supported() {
            Some(format!(
                "entry version {} is not one Kafka reads",
                e.version
            ))
        } else if e.last_offset < base_offset {
            Some(format!(
                "abort marker offset {} is below the segment base offset {base_offset}",
                e.last_offset
            ))
        } else if e.first_offset > e.last_offset {
            Some(format!(
                "first offset {} is after the abort marker offset {}",
                e.first_offset, e.last_offset
            ))
        } else if complete
            && !batches.control_at(e.last_offset)
            && matches!(seg_last, Some(l) if e.last_offset <= l)
        {
            Some(format!(
                "no control batch at the abort marker offset {} of producer {}",
                e.last_offset, e.producer_id
            ))
        } else if complete && !matches!(seg_last, Some(l) if e.last_offset <= l) {
            Some(format!(
                "abort marker offset {} is past the segment's last offset {}",
                e.last_offset,
                seg_last.map_or("none".to_string(), |l| l.to_string())
            ))
        } else {
            None
        };
        if let Some(w) = why {
            problems.push((e.position, e.last_offset, w));
        }
    }
    if let Some((pos, off, why)) = problems.first() {
        let more = match problems.len() {
            1 => String::new(),
            n => format!(" ({} more entries like this)", n - 1),
        };
        findings.push(finding(
            code::TXN_INDEX_INVALID,
            at(*pos, Some(*off)),
            format!("{why}{more}"),
        ));
    }
}
