//! Reading one replica's segments into the batch-level summary the analyses
//! work on ([`ReplicaLog`]): every batch header, the log end offset, the log
//! start offset, the high watermark and the leader-epoch checkpoint.
//!
//! Only batch headers are read (no record decoding, no decompression). A
//! batch whose framing or checksum is bad ends the reading of its segment,
//! as Kafka's own recovery would truncate there; what was skipped is reported
//! as a [`ReplicaProblem`] with file and byte position, and reading goes on
//! with the next segment.

use std::path::Path;

use crate::capture::segment::{SegmentFile, SegmentReader};
use crate::format::batch::Batch;
use crate::format::index::OffsetIndex;
use crate::format::walk::{Checksums, Step, Walk};
use crate::model::{BatchSummary, Capture, Replica, ReplicaLog, ReplicaProblem, SegmentFiles};

/// A replica read from disk.
#[derive(Debug, Clone)]
pub struct LoadedReplica {
    /// The summary the analyses take.
    pub log: ReplicaLog,
    /// Problems met while reading.
    pub problems: Vec<ReplicaProblem>,
    /// Bytes of segment data read.
    pub bytes_read: u64,
}

/// The rest of the segment `path` (of `len` bytes) from byte `from` is not
/// used: `e` says why, `because` how Kafka treats it.
fn rest_unused(
    path: &Path,
    len: u64,
    from: u64,
    e: &crate::format::error::ParseError,
    because: &str,
) -> ReplicaProblem {
    ReplicaProblem {
        path: path.to_path_buf(),
        position: Some(e.pos),
        message: format!(
            "{}; the rest of the segment ({} bytes) is not used{because}",
            e.reason,
            len.saturating_sub(from)
        ),
        io: false,
    }
}

/// A batch at byte `at` of the segment `path` (of `len` bytes) whose
/// checksum fails: the rest of the segment is not used.
pub(crate) fn bad_crc_problem(
    path: &Path,
    len: u64,
    at: u64,
    e: &crate::format::error::ParseError,
) -> ReplicaProblem {
    rest_unused(
        path,
        len,
        at,
        e,
        ", as Kafka's recovery would truncate here",
    )
}

/// An entry of the segment `path` (of `len` bytes) that does not frame:
/// the rest of the segment is not used.
pub(crate) fn bad_entry_problem(
    path: &Path,
    len: u64,
    e: &crate::format::error::ParseError,
) -> ReplicaProblem {
    rest_unused(path, len, e.pos, e, "")
}

/// Every replica of `topic` in `capture`: its index among its partition's
/// replicas, the partition, the replica.
pub fn replicas_of_topic<'c>(capture: &'c Capture, topic: &str) -> Vec<(usize, i32, &'c Replica)> {
    capture
        .partitions
        .iter()
        .filter(|((t, _), _)| t == topic)
        .flat_map(|((_, p), reps)| reps.iter().enumerate().map(move |(i, r)| (i, *p, r)))
        .collect()
}

/// Summarises one batch header.
pub fn summarize(batch: &Batch<'_>) -> BatchSummary {
    match batch {
        Batch::V2(b) => BatchSummary {
            base_offset: b.base_offset(),
            last_offset: b.last_offset(),
            partition_leader_epoch: b.partition_leader_epoch(),
            crc: b.crc(),
            record_count: b.records_count(),
            is_control: b.is_control(),
            is_transactional: b.is_transactional(),
            first_timestamp: b.base_timestamp(),
            max_timestamp: b.max_timestamp(),
            producer_id: b.producer_id(),
            producer_epoch: b.producer_epoch(),
            base_sequence: b.base_sequence(),
        },
        Batch::Legacy(e) => BatchSummary {
            base_offset: e.offset,
            last_offset: e.offset,
            partition_leader_epoch: -1,
            crc: crate::format::crc::crc32c(e.bytes()),
            record_count: 1,
            is_control: false,
            is_transactional: false,
            first_timestamp: -1,
            max_timestamp: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        },
    }
}

/// The analyses' view of a replica from its batch summaries (in log
/// order) and the base offset of its last segment holding a `.log`: the log
/// end offset is one past the last batch, or that base offset when the last
/// segment is empty; the log start offset is the larger of the checkpoint's
/// and the first segment's base.
pub fn replica_log(
    replica: &Replica,
    broker: i32,
    batches: Vec<BatchSummary>,
    last_segment_base: Option<i64>,
) -> ReplicaLog {
    let last_batch_end = batches
        .iter()
        .map(|b| b.last_offset.saturating_add(1))
        .max();
    let mut log = replica_log_ends(replica, broker, last_batch_end, last_segment_base);
    log.batches = batches;
    log
}

/// [`replica_log`] of a replica whose batches were read and not kept:
/// `last_batch_end` is one past the greatest last offset of its batches
/// (`None`: no batch). The log's `batches` are empty.
pub fn replica_log_ends(
    replica: &Replica,
    broker: i32,
    last_batch_end: Option<i64>,
    last_segment_base: Option<i64>,
) -> ReplicaLog {
    let first_base = replica.segments.first().map(|s| s.base_offset);
    let log_end_offset = match (last_batch_end, last_segment_base) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => replica.log_start_offset.unwrap_or(0),
    };
    let log_start_offset = match (replica.log_start_offset, first_base) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => 0,
    };
    let checkpoint_epochs = replica.leader_epoch_checkpoint.as_ref().map(|c| {
        c.checkpoint
            .entries
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    });
    ReplicaLog {
        broker,
        batches: Vec::new(),
        log_start_offset,
        log_end_offset,
        high_watermark: replica.high_watermark,
        checkpoint_epochs,
        first_segment_base: first_base,
        window_start: None,
    }
}

/// Reads every segment of `replica`. `broker` is the id to report it under
/// (the discovery's node id, or a fallback the caller chose).
pub fn load_replica(replica: &Replica, broker: i32) -> LoadedReplica {
    load_replica_from(replica, broker, None)
}

/// Grows `batches` (doubling) if the memory for it and for what the
/// analyses make of it can be had: they copy, sort and key a replica's
/// headers, so three times the new size is asked for and given back at
/// once. `false` when it cannot (a machine short of memory): the caller
/// reports that as an I/O problem rather than abort on the allocation.
fn grow(batches: &mut Vec<BatchSummary>) -> bool {
    let more = batches.len().max(1024);
    let bytes = (batches.len() + more).saturating_mul(std::mem::size_of::<BatchSummary>());
    let mut probe: Vec<u8> = Vec::new();
    use crate::format::memory::fallible;
    if fallible(|| probe.try_reserve_exact(bytes.saturating_mul(3))).is_err() {
        return false;
    }
    drop(probe);
    fallible(|| batches.try_reserve(more)).is_ok()
}

/// One segment of a replica that [`SegmentsFrom`] chose: its files, its
/// `.log`, and how to read it for the offsets asked for.
#[derive(Debug, Clone, Copy)]
pub struct ReplicaSegment<'r> {
    /// Its files.
    pub files: &'r SegmentFiles,
    /// Its `.log`.
    pub log: &'r Path,
    /// Its place in the replica's `segments`.
    pub index: usize,
    from: Option<i64>,
    to: Option<i64>,
}

impl<'r> ReplicaSegment<'r> {
    /// The base offset in its name.
    pub fn base_offset(&self) -> i64 {
        self.files.base_offset
    }

    /// Opens its `.log` read-only.
    pub fn open(&self) -> std::io::Result<SegmentFile> {
        SegmentFile::open(self.log)
    }

    /// Where in `file` (its `.log`, opened) reading starts: at the
    /// position its offset index gives for the first offset asked for,
    /// when that offset lies past the segment's base (see
    /// [`start_position`]); else at the start.
    pub fn start(&self, file: &SegmentFile) -> u64 {
        match self.from {
            Some(from) if from > self.files.base_offset => start_position(self.files, file, from),
            _ => 0,
        }
    }

    /// A walk over `file` (its `.log`, opened) from [`Self::start`]:
    /// batches below the first offset asked for are passed over, and the
    /// walk ends at the first batch at or past the end offset asked for.
    /// Checksums are not checked unless asked ([`Walk::checksums`]).
    pub fn walk<'f>(&self, file: &'f SegmentFile) -> Walk<SegmentReader<'f>> {
        let mut walk = Walk::new(file.reader(self.start(file), file.len()));
        if let Some(from) = self.from {
            walk = walk.from(from);
        }
        if let Some(to) = self.to {
            walk = walk.to(to);
        }
        walk
    }
}

/// The segments of a replica that can hold offsets in `[from, to)` (no
/// bound where `None`), in log order: the segments with a `.log` (an index
/// without its `.log` is no segment: Kafka deletes it on load), from the
/// one holding `from` to the last whose base offset is below `to`.
///
/// Kafka's segments are contiguous: a segment holds the offsets from its
/// base offset up to the next segment's, so one whose next segment's base
/// offset is at or below `from` holds nothing asked for and is not chosen.
/// A segment may be empty (its batches cleaned away): it is chosen all the
/// same, and a walk over it finds nothing, the next one goes on.
#[derive(Debug, Clone)]
pub struct SegmentsFrom<'r> {
    segments: &'r [SegmentFiles],
    next: usize,
    from: Option<i64>,
    to: Option<i64>,
}

impl<'r> SegmentsFrom<'r> {
    /// The segments of `replica` that can hold offsets in `[from, to)`.
    pub fn new(replica: &'r Replica, from: Option<i64>, to: Option<i64>) -> Self {
        Self::among(&replica.segments, from, to)
    }

    /// Those of `segments` (a replica's, by base offset, ascending).
    pub fn among(segments: &'r [SegmentFiles], from: Option<i64>, to: Option<i64>) -> Self {
        SegmentsFrom {
            segments,
            next: 0,
            from,
            to,
        }
    }
}

impl<'r> Iterator for SegmentsFrom<'r> {
    type Item = ReplicaSegment<'r>;

    fn next(&mut self) -> Option<ReplicaSegment<'r>> {
        while let Some(files) = self.segments.get(self.next) {
            let index = self.next;
            self.next += 1;
            let Some(log) = files.log.as_deref() else {
                continue;
            };
            if self.to.is_some_and(|to| files.base_offset >= to) {
                self.next = self.segments.len();
                return None;
            }
            if let Some(from) = self.from {
                // its offsets are below the next segment's base
                let next_base = self.segments[self.next..]
                    .iter()
                    .find(|s| s.log.is_some())
                    .map(|s| s.base_offset);
                if next_base.is_some_and(|n| n <= from) {
                    continue;
                }
            }
            return Some(ReplicaSegment {
                files,
                log,
                index,
                from: self.from,
                to: self.to,
            });
        }
        None
    }
}

/// Reads `replica`'s batches from the one holding offset `from` to the end
/// of the log (every batch when `from` is `None`). Segments that end before
/// `from` are not opened ([`SegmentsFrom`]); in the segment holding it,
/// reading starts at the position its offset index gives (Kafka's own
/// lookup), or at the start of the segment when the index is missing or
/// does not lead to a batch at or before `from`. The result's
/// [`ReplicaLog::window_start`] is `from`.
pub fn load_replica_from(replica: &Replica, broker: i32, from: Option<i64>) -> LoadedReplica {
    let mut batches = Vec::new();
    let mut problems = Vec::new();
    let mut bytes_read = 0u64;
    // End of the batches read but left out (below `from`): a bound on the LEO.
    let mut skipped_end: Option<i64> = None;
    let mut note_skipped = |end: i64| skipped_end = Some(skipped_end.map_or(end, |e| e.max(end)));
    // The base offset of the segment where memory for the headers ran out.
    let mut out_of_memory = None;
    for seg in SegmentsFrom::new(replica, from, None) {
        let path = seg.log;
        if let Some(d) = crate::capture::digest::segment(path) {
            let len = seg.files.log_len.unwrap_or(0);
            let ok = from_digest(path, len, d, from, &mut problems, &mut |b| {
                if from.is_some_and(|w| b.last_offset < w) {
                    note_skipped(b.last_offset.saturating_add(1));
                    return true;
                }
                if batches.len() == batches.capacity() && !grow(&mut batches) {
                    return false;
                }
                batches.push(b);
                true
            });
            if !ok {
                out_of_memory = Some(seg.base_offset());
                problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: None,
                    message: format!(
                        "cannot allocate memory for more than {} batch headers",
                        batches.len()
                    ),
                    io: true,
                });
                break;
            }
            continue;
        }
        let seg_file = match seg.open() {
            Ok(b) => b,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let len = seg_file.len();
        bytes_read += len.saturating_sub(seg.start(&seg_file));
        // a batch whose checksum fails ends the segment, as Kafka's
        // recovery truncates there
        let mut walk = seg.walk(&seg_file).checksums(Checksums::Stop);
        while let Some(step) = walk.next() {
            match step {
                Step::Batch(batch) => {
                    // memory for the headers is asked for, not assumed:
                    // a machine without it is an I/O error, not an abort
                    if batches.len() == batches.capacity() && !grow(&mut batches) {
                        problems.push(ReplicaProblem {
                            path: path.to_path_buf(),
                            position: Some(batch.position()),
                            message: format!(
                                "cannot allocate memory for more than {} batch headers",
                                batches.len()
                            ),
                            io: true,
                        });
                        out_of_memory = Some(seg.base_offset());
                        break;
                    }
                    batches.push(summarize(&batch));
                }
                Step::BadCrc(batch, e) => {
                    problems.push(bad_crc_problem(path, len, batch.position(), &e))
                }
                Step::Bad(e) => problems.push(bad_entry_problem(path, len, &e)),
                Step::Io(e) => {
                    problems.push(ReplicaProblem::unreadable(path, Some(walk.position()), &e))
                }
                Step::Tail(tail) => problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: Some(tail.position),
                    message: format!("torn tail: {}", tail.describe()),
                    io: false,
                }),
                Step::Skipped(_) => {}
            }
        }
        if let Some(end) = walk.passed_end() {
            note_skipped(end);
        }
        if out_of_memory.is_some() {
            break;
        }
    }
    // The log end offset is at least the base of the last segment (of the
    // one reading stopped in, when memory ran out).
    let last_segment_base = out_of_memory.or_else(|| {
        replica
            .segments
            .iter()
            .rev()
            .find(|s| s.log.is_some())
            .map(|s| s.base_offset)
    });
    let mut log = replica_log(replica, broker, batches, last_segment_base);
    if let Some(end) = skipped_end {
        log.log_end_offset = log.log_end_offset.max(end);
    }
    log.window_start = from;
    LoadedReplica {
        log,
        problems,
        bytes_read,
    }
}

/// A digest's summaries of one segment, as [`load_replica_from`] reads a
/// segment: each batch in log order to `visit` (which returns `false` to
/// stop: memory ran short), up to the first whose checksum the digest found
/// bad (a batch below `from` is not checked: a read from the window does
/// not reach it), then the way the segment ends, as the same problems.
/// `false` when `visit` stopped it.
pub fn from_digest(
    path: &std::path::Path,
    len: u64,
    d: Result<std::sync::Arc<crate::format::digest::SegmentDigest>, crate::format::ParseError>,
    from: Option<i64>,
    problems: &mut Vec<ReplicaProblem>,
    visit: &mut dyn FnMut(BatchSummary) -> bool,
) -> bool {
    use crate::format::digest::{CrcCheck, WalkEnd};
    let d = match d {
        Ok(d) => d,
        Err(e) => {
            problems.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: None,
                message: format!("the digest's summaries of this segment cannot be read: byte {} of the digest: {}", e.pos, e.reason),
                io: true,
            });
            return true;
        }
    };
    for b in &d.batches {
        let below = from.is_some_and(|w| b.summary.last_offset < w);
        if !below && b.crc == CrcCheck::Unchecked {
            crate::capture::digest::used_unchecked(1);
        }
        if let (CrcCheck::Bad(reason), false) = (&b.crc, below) {
            problems.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: Some(b.position),
                message: format!(
                    "{reason}; the rest of the segment ({} bytes) is not used, as Kafka's recovery would truncate here",
                    len.saturating_sub(b.position)
                ),
                io: false,
            });
            return true;
        }
        if !visit(crate::capture::digest::summary(b)) {
            return false;
        }
    }
    match &d.end {
        WalkEnd::Clean => {}
        WalkEnd::Bad { pos, reason } => problems.push(ReplicaProblem {
            path: path.to_path_buf(),
            position: Some(*pos),
            message: format!(
                "{reason}; the rest of the segment ({} bytes) is not used",
                len.saturating_sub(*pos)
            ),
            io: false,
        }),
        WalkEnd::Tail { .. } => {
            if let Some((pos, text)) = crate::capture::digest::tail_text(&d.end) {
                problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: Some(pos),
                    message: format!("torn tail: {text}"),
                    io: false,
                });
            }
        }
        WalkEnd::Io { pos, reason } => problems.push(ReplicaProblem {
            path: path.to_path_buf(),
            position: *pos,
            message: format!("cannot read (on the node, when the digest was made): {reason}"),
            io: true,
        }),
    }
    true
}

/// Where in `log` (the bytes of `seg`'s `.log`) to start reading for the
/// batches holding offsets `>= from`: the position of the segment's offset
/// index entry with the greatest offset `<= from` (Kafka's lookup), when the
/// index exists, its entry leads to a well-framed batch there whose offsets
/// start at or before the entry's, and the entries before it are sane;
/// otherwise 0, the start of the segment.
pub fn start_position(seg: &SegmentFiles, log: &SegmentFile, from: i64) -> u64 {
    let Some(index_path) = &seg.index else {
        return 0;
    };
    let Ok(index_bytes) = crate::capture::vfs::open(index_path) else {
        return 0;
    };
    let index = OffsetIndex::new(&index_bytes, seg.base_offset);
    // Only the leading run of real entries (preallocated zeros and garbage
    // after it are not used), searched for the greatest offset <= from.
    let valid = index.valid_entries(Some(log.len()));
    let (mut lo, mut hi) = (0usize, valid);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match index.entry(mid) {
            Some(e) if e.offset <= from => lo = mid + 1,
            _ => hi = mid,
        }
    }
    let Some(entry) = lo.checked_sub(1).and_then(|n| index.entry(n)) else {
        return 0;
    };
    let Ok(pos) = u64::try_from(entry.position) else {
        return 0;
    };
    match Walk::new(log.reader(pos, log.len())).next() {
        Some(Step::Batch(b)) if b.offset_field() <= entry.offset => pos,
        _ => 0,
    }
}

/// The records of one v2 batch, decompressed into `scratch` when compressed
/// (at most [`crate::format::codec::decompressed_cap`] bytes); a problem (a batch that does not decompress, a record
/// that does not parse) is pushed with `path` and its byte position, and
/// ends the batch. `visit` returns `false` to stop; the result is `false`
/// when it did.
pub fn for_each_record(
    b: &crate::format::batch::RecordBatch<'_>,
    scratch: &mut Vec<u8>,
    path: &std::path::Path,
    problems: &mut Vec<ReplicaProblem>,
    visit: &mut dyn FnMut(crate::format::record::Record<'_>) -> bool,
) -> bool {
    let records = match b.records(scratch, crate::format::codec::decompressed_cap()) {
        Ok(r) => r,
        Err(e) => {
            problems.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: Some(e.pos),
                message: e.reason.to_string(),
                io: false,
            });
            return true;
        }
    };
    for r in records {
        match r {
            Ok(r) => {
                if !visit(r) {
                    return false;
                }
            }
            Err(e) => {
                problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: Some(e.pos),
                    message: e.reason.to_string(),
                    io: false,
                });
                break;
            }
        }
    }
    true
}

/// Calls `visit` with every valid data (non-control) v2 batch of every
/// segment of `replica`, in log order, with its segment's path. What cannot
/// be read goes to `problems`: a bad entry or a failed read ends its
/// segment, a batch whose checksum fails is skipped (its `what` are not
/// used), a torn tail is reported. `visit` gets `problems` for its own.
pub fn for_each_data_batch(
    replica: &Replica,
    what: &str,
    problems: &mut Vec<ReplicaProblem>,
    visit: &mut dyn FnMut(
        &crate::format::batch::RecordBatch<'_>,
        &std::path::Path,
        &mut Vec<ReplicaProblem>,
    ),
) {
    for seg in SegmentsFrom::new(replica, None, None) {
        let path = seg.log;
        let file = match seg.open() {
            Ok(f) => f,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let mut walk = seg.walk(&file).checksums(Checksums::Mark);
        while let Some(step) = walk.next() {
            let (b, crc_fine) = match step {
                Step::Batch(Batch::V2(b)) => (b, true),
                Step::BadCrc(Batch::V2(b), _) => (b, false),
                Step::Batch(Batch::Legacy(_))
                | Step::BadCrc(Batch::Legacy(_), _)
                | Step::Skipped(_) => continue,
                Step::Bad(e) => {
                    problems.push(ReplicaProblem {
                        path: path.to_path_buf(),
                        position: Some(e.pos),
                        message: format!("{}; the rest of the segment is not read", e.reason),
                        io: false,
                    });
                    continue;
                }
                Step::Io(e) => {
                    problems.push(ReplicaProblem::unreadable(path, None, &e));
                    continue;
                }
                Step::Tail(tail) => {
                    // A torn tail of a killed broker: what came before is read.
                    problems.push(ReplicaProblem {
                        path: path.to_path_buf(),
                        position: Some(tail.position),
                        message: format!("torn tail: {}", tail.describe()),
                        io: false,
                    });
                    continue;
                }
            };
            if b.is_control() {
                continue;
            }
            if !crc_fine {
                problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: Some(b.position),
                    message: format!("batch checksum mismatch; its {what} are not used"),
                    io: false,
                });
                continue;
            }
            visit(&b, path, problems);
        }
    }
}

/// Calls `visit` with every batch of `replica` holding an offset in `[from,
/// to)`, in log order, with its segment's path (found through the offset
/// index: [`SegmentsFrom`]). Reading stops where Kafka's recovery would (a
/// bad entry, a checksum that fails; with `report`, a bad entry is a
/// problem too) or when `visit` returns `false`.
pub fn for_each_batch_in(
    replica: &Replica,
    from: i64,
    to: i64,
    report: bool,
    visit: &mut dyn FnMut(&Batch<'_>, &std::path::Path) -> bool,
) -> Vec<ReplicaProblem> {
    let mut problems = Vec::new();
    for seg in SegmentsFrom::new(replica, Some(from), Some(to)) {
        let path = seg.log;
        let file = match seg.open() {
            Ok(f) => f,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let mut walk = seg.walk(&file).checksums(Checksums::Stop);
        while let Some(step) = walk.next() {
            match step {
                Step::Batch(batch) => {
                    if !visit(&batch, path) {
                        return problems;
                    }
                }
                Step::Io(e) => problems.push(ReplicaProblem::unreadable(path, None, &e)),
                Step::Bad(e) if report => problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: Some(e.pos),
                    message: format!("{}; the rest of the segment is not read", e.reason),
                    io: false,
                }),
                Step::Bad(_) | Step::BadCrc(..) | Step::Tail(_) | Step::Skipped(_) => {}
            }
        }
        if walk.reached_to() {
            break;
        }
    }
    problems
}

/// The records of `replica` at offsets in `[from, to)`, read from its
/// segments (the batches that [`load_replica`] accepted: reading stops at
/// the same bad batch). Legacy v0/v1 messages are reported one per entry,
/// with the fields they have. At most `limit` records are returned.
pub fn records_in_range(
    replica: &Replica,
    from: i64,
    to: i64,
    limit: usize,
) -> (Vec<crate::model::LostRecord>, Vec<ReplicaProblem>) {
    let mut out = Vec::new();
    let problems = visit_records(replica, from, to, &mut |_, r| {
        if out.len() >= limit {
            return false;
        }
        out.push(r);
        true
    });
    (out, problems)
}

/// Calls `visit` with each record of `replica` at an offset in `[from,
/// to)`, in offset order, with the key `(base, last, epoch, crc)` of its
/// batch (as [`summarize`] gives it); reading stops where [`load_replica`]
/// stops (a bad batch), or when `visit` returns `false`. Nothing is kept:
/// memory does not grow with the records read.
pub fn visit_records(
    replica: &Replica,
    from: i64,
    to: i64,
    visit: &mut dyn FnMut((i64, i64, i32, u32), crate::model::LostRecord) -> bool,
) -> Vec<ReplicaProblem> {
    visit_batch_records(replica, from, to, visit, &mut |_, _, _, _| {})
}

/// What [`visit_batch_records`] calls with each batch reached: its summary,
/// segment, byte position, and why its records were not all read.
pub type BatchReached<'a> = dyn FnMut(&BatchSummary, &std::path::Path, u64, Option<&str>) + 'a;

/// [`visit_records`], and `on_batch` with each batch reached: its summary,
/// its segment and byte position, and why its records could not all be
/// read (`None`: they were; a batch that inflates past the decompression
/// cap or holds a record that does not parse gives the problem's reason).
/// A batch never reached (reading stopped before it) gets no call.
pub fn visit_batch_records(
    replica: &Replica,
    from: i64,
    to: i64,
    visit: &mut dyn FnMut((i64, i64, i32, u32), crate::model::LostRecord) -> bool,
    on_batch: &mut BatchReached<'_>,
) -> Vec<ReplicaProblem> {
    use crate::model::{Bytes, LostRecord};
    let mut problems = Vec::new();
    let mut scratch = Vec::new();
    let mut more = for_each_batch_in(replica, from, to, false, &mut |batch, path| {
        let summary = summarize(batch);
        let key = summary.key();
        match batch {
            Batch::V2(b) => {
                let before = problems.len();
                let go_on = for_each_record(b, &mut scratch, path, &mut problems, &mut |r| {
                    if r.offset < from || r.offset >= to {
                        return true;
                    }
                    let rec = LostRecord {
                        offset: r.offset,
                        epoch: b.partition_leader_epoch(),
                        timestamp: r.timestamp,
                        producer_id: b.producer_id(),
                        producer_epoch: b.producer_epoch(),
                        sequence: r.sequence,
                        key: r.key.map(Bytes::from_raw),
                        value_size: r.value.map(<[u8]>::len),
                        control: b.is_control(),
                        transactional: b.is_transactional(),
                        committed: None,
                        held_by: None,
                    };
                    visit(key, rec)
                });
                let why = problems.get(before).map(|p| p.message.as_str());
                on_batch(&summary, path, batch.position(), why);
                go_on
            }
            Batch::Legacy(e) => {
                let rec = e.record();
                let rec = LostRecord {
                    offset: e.offset,
                    epoch: -1,
                    timestamp: rec.timestamp(),
                    producer_id: -1,
                    producer_epoch: -1,
                    sequence: -1,
                    key: rec.key().ok().flatten().map(Bytes::from_raw),
                    value_size: rec.value().ok().flatten().map(<[u8]>::len),
                    control: false,
                    transactional: false,
                    committed: None,
                    held_by: None,
                };
                on_batch(&summary, path, batch.position(), None);
                visit(key, rec)
            }
        }
    });
    problems.append(&mut more);
    problems
}

/// The `replication-offset-checkpoint` entry of `replica` as evidence: the
/// value Kafka wrote, the file and its modification time (when the capture
/// kept it).
pub fn high_watermark_fact(
    capture: &crate::model::Capture,
    replica: &Replica,
    broker: i32,
) -> crate::model::HighWatermarkFact {
    let file = capture
        .brokers
        .iter()
        .find(|b| b.path == replica.log_dir)
        .and_then(|b| b.checkpoints.replication_offset.as_ref())
        .map(|c| c.path.clone());
    crate::model::HighWatermarkFact {
        broker,
        raw: replica.high_watermark,
        mtime_ms: file.as_deref().and_then(crate::capture::vfs::modified_ms),
        file: file.map(|p| p.display().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn seg(base: i64, log: bool) -> SegmentFiles {
        let name = format!("{base:020}");
        SegmentFiles {
            base_offset: base,
            log: log.then(|| PathBuf::from(format!("{name}.log"))),
            index: Some(PathBuf::from(format!("{name}.index"))),
            timeindex: None,
            txnindex: None,
            log_len: None,
        }
    }

    fn bases(segments: &[SegmentFiles], from: Option<i64>, to: Option<i64>) -> Vec<i64> {
        SegmentsFrom::among(segments, from, to)
            .map(|s| {
                assert_eq!(segments[s.index].base_offset, s.base_offset());
                s.base_offset()
            })
            .collect()
    }

    #[test]
    fn segments_from_an_offset_start_at_the_one_holding_it() {
        let segs = [seg(0, true), seg(100, true), seg(200, true)];
        assert_eq!(bases(&segs, None, None), [0, 100, 200]);
        assert_eq!(bases(&segs, Some(0), None), [0, 100, 200]);
        assert_eq!(bases(&segs, Some(99), None), [0, 100, 200]);
        // a segment whose next one starts at or below `from` holds none
        assert_eq!(bases(&segs, Some(100), None), [100, 200]);
        assert_eq!(bases(&segs, Some(150), None), [100, 200]);
        assert_eq!(bases(&segs, Some(1 << 40), None), [200]);
        // below every segment: all of them
        assert_eq!(bases(&segs[1..], Some(5), None), [100, 200]);
    }

    #[test]
    fn segments_up_to_an_end_offset_stop_at_the_first_starting_there() {
        let segs = [seg(0, true), seg(100, true), seg(200, true)];
        assert_eq!(bases(&segs, Some(50), Some(100)), [0]);
        assert_eq!(bases(&segs, Some(50), Some(101)), [0, 100]);
        assert_eq!(bases(&segs, Some(150), Some(151)), [100]);
        assert_eq!(bases(&segs, None, Some(0)), Vec::<i64>::new());
    }

    #[test]
    fn an_index_without_its_log_is_no_segment() {
        // Kafka deletes an orphaned index on load: the segment before it
        // still holds the offsets up to the next real segment
        let segs = [seg(0, true), seg(100, false), seg(200, true)];
        assert_eq!(bases(&segs, None, None), [0, 200]);
        assert_eq!(bases(&segs, Some(150), None), [0, 200]);
        assert_eq!(bases(&segs, Some(200), None), [200]);
    }

    #[test]
    fn an_empty_segment_is_chosen_and_the_next_follows() {
        // a segment whose batches were all cleaned away still has its
        // base offset: a walk over it finds nothing, the next goes on
        let segs = [seg(0, true), seg(100, true), seg(300, true)];
        assert_eq!(bases(&segs, Some(120), Some(400)), [100, 300]);
    }
}
