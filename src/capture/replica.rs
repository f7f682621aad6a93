//! Reading one replica's segments into the batch-level summary the analyses
//! work on ([`ReplicaLog`]): every batch header, the log end offset, the log
//! start offset, the high watermark and the leader-epoch checkpoint.
//!
//! Only batch headers are read (no record decoding, no decompression). A
//! batch whose framing or checksum is bad ends the reading of its segment,
//! as Kafka's own recovery would truncate there; what was skipped is reported
//! as a [`ReplicaProblem`] with file and byte position, and reading goes on
//! with the next segment.

use std::path::PathBuf;

use crate::capture::segment::SegmentFile;
use crate::format::batch::{Batch, EntryError};
use crate::format::index::OffsetIndex;
use crate::model::{BatchSummary, Replica, ReplicaLog, SegmentFiles};

/// Something wrong found while reading a replica's segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaProblem {
    /// The file.
    pub path: PathBuf,
    /// Byte position in the file, where one applies.
    pub position: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// The file could not be read (the machine failed, or klf refused to
    /// hold it): nothing is known about its bytes from there on. Not
    /// evidence of damage.
    pub io: bool,
}

impl ReplicaProblem {
    /// A read of `path` that failed (at `position`, when it got that far).
    pub fn unreadable(path: &std::path::Path, position: Option<u64>, e: &std::io::Error) -> Self {
        ReplicaProblem {
            path: path.to_path_buf(),
            position,
            message: format!("cannot read: {e}"),
            io: true,
        }
    }
}

impl std::fmt::Display for ReplicaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}:{}: {}", self.path.display(), p, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

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

/// Reads `replica`'s batches from the one holding offset `from` to the end
/// of the log (every batch when `from` is `None`). Segments that end before
/// `from` are not opened; in the segment holding it, reading starts at the
/// position its offset index gives (Kafka's own lookup), or at the start of
/// the segment when the index is missing or does not lead to a batch at or
/// before `from`. The result's [`ReplicaLog::window_start`] is `from`.
pub fn load_replica_from(replica: &Replica, broker: i32, from: Option<i64>) -> LoadedReplica {
    let mut batches = Vec::new();
    let mut problems = Vec::new();
    let mut bytes_read = 0u64;
    let mut last_segment_base = None;
    // End of the batches read but left out (below `from`): a bound on the LEO.
    let mut skipped_end: Option<i64> = None;
    let mut out_of_memory = false;
    for (i, seg) in replica.segments.iter().enumerate() {
        if out_of_memory {
            break;
        }
        let Some(path) = &seg.log else {
            continue;
        };
        last_segment_base = Some(seg.base_offset);
        if let Some(w) = from {
            // Offsets in this segment are below the next segment's base.
            let next_base = replica.segments[i + 1..]
                .iter()
                .find(|s| s.log.is_some())
                .map(|s| s.base_offset);
            if next_base.is_some_and(|n| n <= w) {
                continue;
            }
        }
        if let Some(d) = crate::capture::digest::segment(path) {
            let len = seg.log_len.unwrap_or(0);
            let ok = from_digest(path, len, d, from, &mut problems, &mut |b| {
                if from.is_some_and(|w| b.last_offset < w) {
                    let end = b.last_offset.saturating_add(1);
                    skipped_end = Some(skipped_end.map_or(end, |e| e.max(end)));
                    return true;
                }
                if batches.len() == batches.capacity() && !grow(&mut batches) {
                    return false;
                }
                batches.push(b);
                true
            });
            if !ok {
                out_of_memory = true;
                problems.push(ReplicaProblem {
                    path: path.clone(),
                    position: None,
                    message: format!(
                        "cannot allocate memory for more than {} batch headers",
                        batches.len()
                    ),
                    io: true,
                });
            }
            continue;
        }
        let seg_file = match SegmentFile::open(path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let len = seg_file.len();
        let start = match from {
            Some(w) if w > seg.base_offset => start_position(seg, &seg_file, w),
            _ => 0,
        };
        bytes_read += len.saturating_sub(start);
        let mut it = seg_file.reader(start, len);
        while let Some(item) = it.next_entry() {
            match item {
                Ok(batch) => {
                    if let Err(e) = batch.check_crc() {
                        // Bytes that changed under klf are not damage.
                        if let Err(e) = seg_file.unchanged() {
                            problems.push(ReplicaProblem::unreadable(path, None, &e));
                            break;
                        }
                        problems.push(ReplicaProblem {
                            path: path.clone(),
                            position: Some(e.pos),
                            message: format!(
                                "{}; the rest of the segment ({} bytes) is not used, as Kafka's recovery would truncate here",
                                e.reason,
                                len - batch.position()
                            ),
                            io: false,
                        });
                        break;
                    }
                    if from.is_some_and(|w| batch.last_offset() < w) {
                        let end = batch.last_offset().saturating_add(1);
                        skipped_end = Some(skipped_end.map_or(end, |e| e.max(end)));
                        continue;
                    }
                    // memory for the headers is asked for, not assumed:
                    // a machine without it is an I/O error, not an abort
                    if batches.len() == batches.capacity() && !grow(&mut batches) {
                        problems.push(ReplicaProblem {
                            path: path.clone(),
                            position: Some(batch.position()),
                            message: format!(
                                "cannot allocate memory for more than {} batch headers",
                                batches.len()
                            ),
                            io: true,
                        });
                        out_of_memory = true;
                        break;
                    }
                    batches.push(summarize(&batch));
                }
                Err(EntryError::Bad(e)) => {
                    problems.push(ReplicaProblem {
                        path: path.clone(),
                        position: Some(e.pos),
                        message: format!(
                            "{}; the rest of the segment ({} bytes) is not used",
                            e.reason,
                            len.saturating_sub(e.pos)
                        ),
                        io: false,
                    });
                    break;
                }
                Err(EntryError::Io(e)) => {
                    problems.push(ReplicaProblem::unreadable(path, Some(it.position()), &e));
                    break;
                }
            }
        }
        if let Some(tail) = it.tail() {
            problems.push(ReplicaProblem {
                path: path.clone(),
                position: Some(tail.position),
                message: format!("torn tail: {}", tail.describe()),
                io: false,
            });
        }
    }
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
    d: Result<crate::format::digest::SegmentDigest, crate::format::ParseError>,
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
    match log.reader(pos, log.len()).next_entry() {
        Some(Ok(b)) if b.offset_field() <= entry.offset => pos,
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
    for seg in &replica.segments {
        let Some(path) = &seg.log else { continue };
        let file = match SegmentFile::open(path) {
            Ok(f) => f,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let mut it = file.entries();
        while let Some(item) = it.next_entry() {
            let b = match item {
                Ok(Batch::V2(b)) => b,
                Ok(Batch::Legacy(_)) => continue,
                Err(EntryError::Bad(e)) => {
                    problems.push(ReplicaProblem {
                        path: path.clone(),
                        position: Some(e.pos),
                        message: format!("{}; the rest of the segment is not read", e.reason),
                        io: false,
                    });
                    break;
                }
                Err(EntryError::Io(e)) => {
                    problems.push(ReplicaProblem::unreadable(path, None, &e));
                    break;
                }
            };
            if b.is_control() {
                continue;
            }
            if !b.is_valid() {
                problems.push(ReplicaProblem {
                    path: path.clone(),
                    position: Some(b.position),
                    message: format!("batch checksum mismatch; its {what} are not used"),
                    io: false,
                });
                continue;
            }
            visit(&b, path, problems);
        }
        if let Some(tail) = it.tail() {
            // A torn tail of a killed broker: what came before is read.
            problems.push(ReplicaProblem {
                path: path.clone(),
                position: Some(tail.position),
                message: format!("torn tail: {}", tail.describe()),
                io: false,
            });
        }
    }
}

/// Calls `visit` with every batch of `replica` holding an offset in `[from,
/// to)`, in log order, with its segment's path (found through the offset
/// index). Reading stops where Kafka's recovery would (a bad entry, a
/// checksum that fails; with `report`, a bad entry is a problem too) or when
/// `visit` returns `false`.
pub fn for_each_batch_in(
    replica: &Replica,
    from: i64,
    to: i64,
    report: bool,
    visit: &mut dyn FnMut(&Batch<'_>, &std::path::Path) -> bool,
) -> Vec<ReplicaProblem> {
    let mut problems = Vec::new();
    for (i, seg) in replica.segments.iter().enumerate() {
        let Some(path) = &seg.log else { continue };
        // Skip segments that end before `from`.
        if replica
            .segments
            .get(i + 1)
            .is_some_and(|next| next.base_offset <= from)
        {
            continue;
        }
        if seg.base_offset >= to {
            break;
        }
        let file = match SegmentFile::open(path) {
            Ok(f) => f,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let start = if from > seg.base_offset {
            start_position(seg, &file, from)
        } else {
            0
        };
        let mut it = file.reader(start, file.len());
        while let Some(item) = it.next_entry() {
            let batch = match item {
                Ok(b) => b,
                Err(EntryError::Io(e)) => {
                    problems.push(ReplicaProblem::unreadable(path, None, &e));
                    break;
                }
                Err(EntryError::Bad(e)) => {
                    if report {
                        problems.push(ReplicaProblem {
                            path: path.clone(),
                            position: Some(e.pos),
                            message: format!("{}; the rest of the segment is not read", e.reason),
                            io: false,
                        });
                    }
                    break;
                }
            };
            if batch.check_crc().is_err() {
                break;
            }
            if batch.last_offset() < from {
                continue;
            }
            if summarize(&batch).base_offset >= to {
                return problems;
            }
            if !visit(&batch, path) {
                return problems;
            }
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
