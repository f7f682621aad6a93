//! Batch-header scans of one replica for the impact of a loss: the producer
//! state the replica rebuilds (as Kafka does on load: its latest producer
//! snapshot, then every batch after it), the data records between two
//! offsets, and the type of a transaction marker.
//!
//! Only batch headers are read, except for a control batch whose marker
//! type is asked for (one record key). Nothing is kept per batch: memory is
//! bounded by the number of producers.

use crate::capture::replica::{for_each_batch_in, summarize, SegmentsFrom};
use crate::format::batch::Batch;
use crate::format::record::control::{parse_type_id, ControlType};
use crate::model::ReplicaProblem;
use crate::model::{BatchSummary, ProducerStateView, ProducerView, Replica};

/// Cap on the decompressed size of a control batch read for its marker.
const MAX_CONTROL_BYTES: usize = 1 << 20;

/// Calls `visit` with the summary of every batch of `replica` holding an
/// offset in `[from, to)`, in log order, and for a control batch the type of
/// its first record (a transaction marker's COMMIT/ABORT). Reading stops at
/// a bad batch (as Kafka's recovery would) or when `visit` returns `false`.
pub fn scan_batches(
    replica: &Replica,
    from: i64,
    to: i64,
    visit: &mut dyn FnMut(&BatchSummary, Option<ControlType>) -> bool,
) -> Vec<ReplicaProblem> {
    if let Some(problems) = scan_digest(replica, from, to, &mut |s, control, _| visit(s, control)) {
        return problems;
    }
    let mut scratch = Vec::new();
    for_each_batch_in(replica, from, to, true, &mut |batch, _| {
        let summary = summarize(batch);
        let control = match batch {
            Batch::V2(b) if b.is_control() => Some(control_type(b, &mut scratch)),
            _ => None,
        };
        visit(&summary, control)
    })
}

/// Every batch of `replica` from the one holding `from` to its log end, as
/// [`scan_batches`] gives them, with each batch's size on disk in bytes;
/// what ends a segment early is a problem, as when a replica is loaded for
/// a diff: a batch whose checksum fails (the rest of the segment is not
/// used, as Kafka's recovery truncates there), an entry that does not
/// frame, a torn tail, a failed read. `visit` returns `false` to stop.
pub fn scan_sized(
    replica: &Replica,
    from: i64,
    visit: &mut dyn FnMut(&BatchSummary, Option<ControlType>, u64) -> bool,
) -> Vec<ReplicaProblem> {
    use crate::format::walk::{Checksums, Step};
    if let Some(problems) = scan_digest(replica, from, i64::MAX, visit) {
        return problems;
    }
    let mut problems = Vec::new();
    let mut scratch = Vec::new();
    for seg in SegmentsFrom::new(replica, Some(from), None) {
        let path = seg.log;
        let file = match seg.open() {
            Ok(f) => f,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let len = file.len();
        let mut walk = seg.walk(&file).checksums(Checksums::Stop);
        while let Some(step) = walk.next() {
            match step {
                Step::Batch(batch) => {
                    if batch.last_offset() < from {
                        continue;
                    }
                    let summary = summarize(&batch);
                    let control = match &batch {
                        Batch::V2(b) if b.is_control() => Some(control_type(b, &mut scratch)),
                        _ => None,
                    };
                    if !visit(&summary, control, batch.size_in_bytes()) {
                        return problems;
                    }
                }
                Step::BadCrc(batch, e) => problems.push(crate::capture::replica::bad_crc_problem(
                    path,
                    len,
                    batch.position(),
                    &e,
                )),
                Step::Bad(e) => {
                    problems.push(crate::capture::replica::bad_entry_problem(path, len, &e))
                }
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
    }
    problems
}

/// [`scan_batches`] of a replica a digest summarises (`None`: its
/// segments are not a digest's): the segments and batches the reading
/// from the offset index would reach, stopping where it stops.
fn scan_digest(
    replica: &Replica,
    from: i64,
    to: i64,
    visit: &mut dyn FnMut(&BatchSummary, Option<ControlType>, u64) -> bool,
) -> Option<Vec<ReplicaProblem>> {
    use crate::format::digest::{CrcCheck, WalkEnd};
    let first = replica.segments.iter().find_map(|s| s.log.as_ref())?;
    if !crate::capture::digest::is_digest_segment(first) {
        return None;
    }
    let mut problems = Vec::new();
    for seg in SegmentsFrom::new(replica, Some(from), Some(to)) {
        let path = seg.log;
        let d = match crate::capture::digest::segment(path) {
            Some(Ok(d)) => d,
            Some(Err(e)) => {
                problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: None,
                    message: format!(
                        "the digest's summaries of this segment cannot be read: byte {}: {}",
                        e.pos, e.reason
                    ),
                    io: true,
                });
                continue;
            }
            None => {
                problems.push(ReplicaProblem {
                    path: path.to_path_buf(),
                    position: None,
                    message: "not summarised in the digest".to_string(),
                    io: true,
                });
                continue;
            }
        };
        let mut stopped = false;
        for b in &d.batches {
            if matches!(b.crc, CrcCheck::Bad(_)) {
                stopped = true;
                break;
            }
            if b.summary.last_offset < from {
                continue;
            }
            if b.summary.base_offset >= to {
                return Some(problems);
            }
            if b.crc == CrcCheck::Unchecked {
                crate::capture::digest::used_unchecked(1);
            }
            let s = crate::capture::digest::summary(b);
            let control = s.is_control.then(|| {
                b.control_type
                    .map_or(ControlType::Unknown, ControlType::from_id)
            });
            if !visit(&s, control, b.size) {
                return Some(problems);
            }
        }
        if stopped {
            continue;
        }
        match &d.end {
            WalkEnd::Bad { pos, reason } => problems.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: Some(*pos),
                message: format!("{reason}; the rest of the segment is not read"),
                io: false,
            }),
            WalkEnd::Io { reason, .. } => problems.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: None,
                message: format!("cannot read (on the node, when the digest was made): {reason}"),
                io: true,
            }),
            WalkEnd::Clean | WalkEnd::Tail { .. } => {}
        }
    }
    Some(problems)
}

fn control_type(b: &crate::format::batch::RecordBatch<'_>, scratch: &mut Vec<u8>) -> ControlType {
    let Ok(mut records) = b.records(scratch, MAX_CONTROL_BYTES) else {
        return ControlType::Unknown;
    };
    match records.next() {
        Some(Ok(r)) => parse_type_id(r.key).map_or(ControlType::Unknown, ControlType::from_id),
        _ => ControlType::Unknown,
    }
}

/// Data records (control records left out) of `replica` at offsets in
/// `[from, to)`, counted from batch headers (a batch cut by the range counts
/// the records of its offsets in it).
pub fn count_data_records(replica: &Replica, from: i64, to: i64) -> (u64, Vec<ReplicaProblem>) {
    let mut n = 0u64;
    if to <= from {
        return (0, Vec::new());
    }
    let problems = scan_batches(replica, from, to, &mut |b, control| {
        if control.is_none() {
            n += b.records_in(from, to).max(0) as u64;
        }
        true
    });
    (n, problems)
}

/// Applies one batch to a producer state, as Kafka's `ProducerAppendInfo`
/// does on replay: a data batch sets the producer's epoch, last sequence
/// and offset, and opens a transaction when transactional; a marker closes
/// it.
pub fn apply_batch(state: &mut ProducerStateView, b: &BatchSummary, control: Option<ControlType>) {
    if b.producer_id < 0 {
        return;
    }
    let e = state
        .producers
        .entry(b.producer_id)
        .or_insert_with(|| ProducerView {
            producer_id: b.producer_id,
            producer_epoch: b.producer_epoch,
            last_sequence: -1,
            last_offset: -1,
            txn_first_offset: None,
            last_timestamp: -1,
        });
    e.producer_epoch = b.producer_epoch;
    e.last_timestamp = b.max_timestamp;
    match control {
        Some(ControlType::Commit | ControlType::Abort) => e.txn_first_offset = None,
        Some(_) => {}
        None => {
            if b.base_sequence >= 0 {
                let delta = b.last_offset.saturating_sub(b.base_offset);
                e.last_sequence = crate::format::record::increment_sequence(
                    b.base_sequence,
                    i32::try_from(delta).unwrap_or(i32::MAX),
                );
            }
            e.last_offset = b.last_offset;
            if b.is_transactional && e.txn_first_offset.is_none() {
                e.txn_first_offset = Some(b.base_offset);
            }
        }
    }
}

/// The producer state `replica` rebuilds at its log end: its latest
/// readable producer snapshot at or below `log_end`, then every batch from
/// the snapshot's offset on (from the log start when no snapshot serves).
pub fn producer_state(replica: &Replica, log_end: i64) -> (ProducerStateView, Vec<ReplicaProblem>) {
    let mut problems = Vec::new();
    let mut state = ProducerStateView::default();
    for snap in replica
        .snapshots
        .iter()
        .rev()
        .filter(|s| s.offset <= log_end)
    {
        let bytes = match crate::capture::vfs::open(&snap.path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(&snap.path, None, &e));
                continue;
            }
        };
        match crate::format::snapshot::read_producer_snapshot(&bytes) {
            Ok(s) => {
                for p in s.entries {
                    state.producers.insert(
                        p.producer_id,
                        ProducerView {
                            producer_id: p.producer_id,
                            producer_epoch: p.producer_epoch,
                            last_sequence: p.last_sequence,
                            last_offset: p.last_offset,
                            txn_first_offset: p.current_txn_first_offset(),
                            last_timestamp: p.timestamp,
                        },
                    );
                }
                state.snapshot_offset = Some(snap.offset);
                break;
            }
            Err(e) => problems.push(ReplicaProblem {
                path: snap.path.clone(),
                position: Some(e.pos),
                message: format!("{}; an older snapshot is used", e.reason),
                io: false,
            }),
        }
    }
    let from = state.snapshot_offset.unwrap_or(i64::MIN);
    state.read_from = state
        .snapshot_offset
        .unwrap_or_else(|| replica.segments.first().map_or(0, |s| s.base_offset));
    problems.extend(scan_batches(
        replica,
        from.max(0),
        log_end,
        &mut |b, control| {
            if b.base_offset >= state.read_from {
                apply_batch(&mut state, b, control);
            }
            true
        },
    ));
    (state, problems)
}

/// The type of the marker batch of `replica` whose base offset is `offset`
/// (`None` when the replica has no control batch there).
pub fn marker_at(replica: &Replica, offset: i64) -> Option<ControlType> {
    let mut found = None;
    let _ = scan_batches(replica, offset, offset + 1, &mut |b, control| {
        if b.base_offset == offset {
            found = control;
        }
        false
    });
    found
}
