//! What an incident timeline reads of a replica besides what the diff
//! read: where the first batch of an epoch lies (its segment and byte,
//! found with the offset index as Kafka finds a fetch position, reading a
//! few batch headers), and when the replica's checkpoints were last
//! modified.

use std::path::PathBuf;

use crate::capture::replica::SegmentsFrom;
use crate::capture::vfs;
use crate::format::walk::Step;
use crate::model::timeline::CheckpointTime;
use crate::model::{Capture, Replica};

/// How many batch headers are read past the offset index's entry to find
/// a batch; past them the batch is not placed (its byte is left unknown).
const MAX_HEADERS: usize = 10_000;

/// The segment file of `replica` holding the batch whose base offset is
/// `base_offset`, and the byte the batch starts at (from the node's digest
/// when the segment is held in one); `None` when the batch is not found
/// (the segment cannot be read, or the batch is not where the index
/// leads).
pub fn batch_position(replica: &Replica, base_offset: i64) -> Option<(PathBuf, u64)> {
    let seg = SegmentsFrom::new(
        replica,
        Some(base_offset),
        Some(base_offset.saturating_add(1)),
    )
    .next()?;
    // a node's digest keeps each batch's position
    if let Some(d) = crate::capture::digest::segment(seg.log) {
        return d
            .ok()?
            .batches
            .iter()
            .find(|b| b.summary.base_offset == base_offset)
            .map(|b| (seg.log.to_path_buf(), b.position));
    }
    let file = seg.open().ok()?;
    let mut walk = seg.walk(&file);
    for _ in 0..MAX_HEADERS {
        match walk.next()? {
            Step::Batch(b) | Step::BadCrc(b, _) => {
                if b.offset_field() == base_offset {
                    return Some((seg.log.to_path_buf(), b.position()));
                }
                if b.offset_field() > base_offset {
                    return None;
                }
            }
            Step::Skipped(_) => {}
            Step::Bad(_) | Step::Tail(_) | Step::Io(_) => return None,
        }
    }
    None
}

/// The modification times of the checkpoints that speak of `replica`
/// (node `broker`): its log directory's `replication-offset-checkpoint`
/// (with the high watermark it lists for the partition) and its own
/// `leader-epoch-checkpoint` (with its latest entry). A file whose time
/// cannot be told is left out.
pub fn checkpoint_times(capture: &Capture, replica: &Replica, broker: i32) -> Vec<CheckpointTime> {
    let mut out = Vec::new();
    let hw_file = capture
        .brokers
        .iter()
        .find(|b| b.path == replica.log_dir)
        .and_then(|b| b.checkpoints.replication_offset.as_ref())
        .map(|c| c.path.clone());
    if let Some(file) = hw_file {
        if let Some(modified) = vfs::modified_ms(&file) {
            out.push(CheckpointTime {
                broker,
                high_watermarks: true,
                says: match replica.high_watermark {
                    Some(hw) => format!(
                        "high watermark {hw} for {}-{}",
                        replica.topic, replica.partition
                    ),
                    None => format!("no entry for {}-{}", replica.topic, replica.partition),
                },
                file,
                modified,
            });
        }
    }
    if let Some(cp) = &replica.leader_epoch_checkpoint {
        if let Some(modified) = vfs::modified_ms(&cp.path) {
            out.push(CheckpointTime {
                broker,
                high_watermarks: false,
                says: match cp.checkpoint.entries.last() {
                    Some(e) => format!(
                        "{} {}, the latest epoch {} from offset {}",
                        cp.checkpoint.entries.len(),
                        if cp.checkpoint.entries.len() == 1 {
                            "entry"
                        } else {
                            "entries"
                        },
                        e.epoch,
                        e.start_offset
                    ),
                    None => "no entry".to_string(),
                },
                file: cp.path.clone(),
                modified,
            });
        }
    }
    out
}
