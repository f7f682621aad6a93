//! Reading the replicas of one partition for a diff.
//!
//! Replicas of a partition share a long prefix; they can only differ near
//! their ends. So by default only a **window** is read: from the lowest of
//! the replicas' high watermarks, log end offsets and the first offset where
//! their `leader-epoch-checkpoint`s stop agreeing, to the end of each log.
//! The segments before the window are not opened; inside the segment holding
//! the window's start, reading begins where the offset index points. Each
//! replica's log end offset is found first from the tail of its last segment
//! (again through the index). The cost is that of the window, not of the log.
//!
//! Every batch is read instead (**full** read) when the window cannot be
//! trusted: `verify` asks for it, a replica has no usable checkpoint or high
//! watermark, the batches at the window's start carry another epoch than the
//! checkpoint says, the tail cannot be read cleanly, or the diff's answer
//! (a divergence or truncation offset) falls at or below the window's start
//! (the start is one below the lowest offset an answer can take, so batches
//! straddling it are compared whole). The full read
//! also compares the shared prefix batch by batch, which the window takes on
//! trust from the checkpoints.

use rayon::prelude::*;

use crate::capture::replica::{load_replica_from, start_position, LoadedReplica};
use crate::capture::segment::SegmentFile;
use crate::format::walk::{Checksums, Step, Walk};
use crate::model::Replica;

/// Reads every replica (`ids[i]` is the broker id of `replicas[i]`), in
/// parallel: every batch, or from the batch holding `from` on.
pub fn load_all(replicas: &[Replica], ids: &[i32], from: Option<i64>) -> Vec<LoadedReplica> {
    replicas
        .par_iter()
        .zip(ids.par_iter())
        .map(|(r, &id)| load_replica_from(r, id, from))
        .collect()
}

/// The log end offset of a replica from the tail of its last segment: one
/// past the last batch read from the position of the segment's last offset
/// index entry, or the segment's base offset when it holds no batch. With
/// the bytes read. Fails on anything unclean (the full read reports it).
pub fn tail_end(r: &Replica) -> Result<(i64, u64), String> {
    let Some(seg) = r.segments.iter().rev().find(|s| s.log.is_some()) else {
        return Ok((r.log_start_offset.unwrap_or(0), 0));
    };
    let path = seg.log.as_deref().unwrap_or(std::path::Path::new(""));
    if let Some(d) = crate::capture::digest::segment(path) {
        return digest_tail_end(path, seg.base_offset, d);
    }
    let seg_file =
        SegmentFile::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let start = start_position(seg, &seg_file, i64::MAX);
    let mut end = seg.base_offset;
    let mut walk = Walk::new(seg_file.reader(start, seg_file.len())).checksums(Checksums::Stop);
    while let Some(step) = walk.next() {
        match step {
            Step::Batch(b) => end = end.max(b.last_offset().saturating_add(1)),
            Step::BadCrc(_, e) | Step::Bad(e) => {
                return Err(format!("{}:{}: {}", path.display(), e.pos, e.reason))
            }
            Step::Io(e) => return Err(format!("{}: cannot read: {e}", path.display())),
            Step::Tail(_) => return Err(format!("{}: torn tail", path.display())),
            Step::Skipped(_) => {}
        }
    }
    Ok((end, seg_file.len().saturating_sub(start)))
}

/// [`tail_end`] of a segment a digest summarises: one past its last batch,
/// failing on what a read of its tail would fail on (a bad checksum the
/// digest found, an entry that does not frame, a torn tail, a failed read).
fn digest_tail_end(
    path: &std::path::Path,
    base: i64,
    d: Result<std::sync::Arc<crate::format::digest::SegmentDigest>, crate::format::ParseError>,
) -> Result<(i64, u64), String> {
    use crate::format::digest::{CrcCheck, WalkEnd};
    let d = d.map_err(|e| {
        format!(
            "{}: the digest cannot be read: byte {}: {}",
            path.display(),
            e.pos,
            e.reason
        )
    })?;
    let mut end = base;
    for b in &d.batches {
        if let CrcCheck::Bad(reason) = &b.crc {
            return Err(format!("{}:{}: {reason}", path.display(), b.position));
        }
        end = end.max(b.summary.last_offset.saturating_add(1));
    }
    match &d.end {
        WalkEnd::Clean => Ok((end, 0)),
        WalkEnd::Bad { pos, reason } => Err(format!("{}:{pos}: {reason}", path.display())),
        WalkEnd::Tail { .. } => Err(format!("{}: torn tail", path.display())),
        WalkEnd::Io { reason, .. } => Err(format!("{}: cannot read: {reason}", path.display())),
    }
}
