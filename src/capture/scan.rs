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

use std::path::PathBuf;

use rayon::prelude::*;

use crate::analysis::epochs::EpochCache;
use crate::capture::discover::Replica;
use crate::capture::replica::{load_replica_from, start_position, LoadedReplica};
use crate::format::batch::SegmentIter;

/// Reads every replica (`ids[i]` is the broker id of `replicas[i]`), in
/// parallel: every batch, or from the batch holding `from` on.
pub fn load_all(replicas: &[Replica], ids: &[i32], from: Option<i64>) -> Vec<LoadedReplica> {
    replicas
        .par_iter()
        .zip(ids.par_iter())
        .map(|(r, &id)| load_replica_from(r, id, from))
        .collect()
}

/// What the window plan knows of one replica before reading its batches.
struct Plan {
    broker: i32,
    leo: i64,
    hw: i64,
    cache: EpochCache,
}

/// The window's start, and the bytes read to find it; or why there is none
/// (with the bytes read so far).
pub fn plan_window(replicas: &[Replica], ids: &[i32]) -> Result<(i64, u64), (String, u64)> {
    let tails: Vec<Result<(i64, u64), String>> = replicas.par_iter().map(tail_end).collect();
    let mut bytes = 0;
    let mut plans = Vec::with_capacity(replicas.len());
    for ((r, &broker), tail) in replicas.iter().zip(ids).zip(tails) {
        let (leo, b) = tail.map_err(|e| (format!("broker {broker}: {e}"), bytes))?;
        bytes += b;
        let Some(cp) = &r.leader_epoch_checkpoint else {
            return Err((
                format!("broker {broker} has no leader-epoch-checkpoint"),
                bytes,
            ));
        };
        let (mut cache, rejected) = EpochCache::from_checkpoint_checked(
            cp.checkpoint
                .entries
                .iter()
                .map(|e| (e.epoch, e.start_offset)),
        );
        if !rejected.is_empty() || cp.checkpoint.entries.is_empty() {
            return Err((
                format!(
                    "broker {broker}'s leader-epoch-checkpoint is empty or has invalid entries"
                ),
                bytes,
            ));
        }
        let first_base = r.segments.first().map(|s| s.base_offset);
        let lso = match (r.log_start_offset, first_base) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(0),
        }
        .max(0);
        let leo = leo.max(lso);
        cache.repair_on_load(leo, lso);
        let Some(hw) = r.high_watermark else {
            return Err((
                format!("broker {broker} has no high watermark checkpoint entry"),
                bytes,
            ));
        };
        plans.push(Plan {
            broker,
            leo,
            hw: hw.clamp(lso, leo),
            cache,
        });
    }
    let mut window = i64::MAX;
    for p in &plans {
        window = window.min(p.hw).min(p.leo);
        // The first epoch entry that another replica reaching it lacks.
        for e in p.cache.entries() {
            let disagrees = plans.iter().any(|o| {
                o.broker != p.broker && o.leo > e.start_offset && !o.cache.entries().contains(e)
            });
            if disagrees {
                window = window.min(e.start_offset);
                break;
            }
        }
    }
    if window == i64::MAX {
        return Err(("no replica to read".to_string(), bytes));
    }
    // One below: every answer the window supports lies strictly above its
    // start, so an answer at or below it means the window was too short.
    Ok(((window - 1).max(0), bytes))
}

/// The log end offset of a replica from the tail of its last segment: one
/// past the last batch read from the position of the segment's last offset
/// index entry, or the segment's base offset when it holds no batch. With
/// the bytes read. Fails on anything unclean (the full read reports it).
fn tail_end(r: &Replica) -> Result<(i64, u64), String> {
    let Some(seg) = r.segments.iter().rev().find(|s| s.log.is_some()) else {
        return Ok((r.log_start_offset.unwrap_or(0), 0));
    };
    let path = seg
        .log
        .as_ref()
        .map(PathBuf::as_path)
        .unwrap_or(std::path::Path::new(""));
    let bytes = crate::capture::vfs::open(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let start = start_position(seg, &bytes, i64::MAX);
    let mut end = seg.base_offset;
    let mut it = SegmentIter::with_range(&bytes, start, bytes.len());
    for item in it.by_ref() {
        let b = item.map_err(|e| format!("{}:{}: {}", path.display(), e.pos, e.reason))?;
        b.check_crc()
            .map_err(|e| format!("{}:{}: {}", path.display(), e.pos, e.reason))?;
        end = end.max(b.last_offset().saturating_add(1));
    }
    if it.tail().is_some() {
        return Err(format!("{}: torn tail", path.display()));
    }
    Ok((end, (bytes.len() - start) as u64))
}

/// Whether the first batch read of some replica carries another epoch than
/// its checkpoint gives that offset (the window would then misplace an
/// epoch's start): the reason, if so.
pub fn window_start_disagrees(
    replicas: &[Replica],
    ids: &[i32],
    loaded: &[LoadedReplica],
) -> Option<String> {
    for ((r, &broker), l) in replicas.iter().zip(ids).zip(loaded) {
        let (Some(first), Some(cp)) = (l.log.batches.first(), &r.leader_epoch_checkpoint) else {
            continue;
        };
        if first.partition_leader_epoch < 0 {
            continue;
        }
        let cache = EpochCache::from_checkpoint(
            cp.checkpoint
                .entries
                .iter()
                .map(|e| (e.epoch, e.start_offset)),
        );
        if cache.epoch_for_offset(first.base_offset) != Some(first.partition_leader_epoch) {
            return Some(format!(
                "broker {broker}: the batch at {} has epoch {}, its leader-epoch-checkpoint says {:?}",
                first.base_offset,
                first.partition_leader_epoch,
                cache.epoch_for_offset(first.base_offset)
            ));
        }
    }
    None
}
