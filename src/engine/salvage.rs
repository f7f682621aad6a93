//! The salvage pipeline: for a partition that loses records, read every
//! lost batch back from a replica that holds it, in offset order, and hand
//! its bytes (untouched) and its records (decompressed within the usual
//! cap) to a sink. What cannot be read is recorded with file, byte and
//! reason, and reading goes on with the next batch.
//!
//! Nothing is kept per record or per batch beyond the one being handed on:
//! memory does not grow with the bytes salvaged.

use crate::model::ReplicaProblem;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::PathBuf;

use crate::capture::producers::marker_at;
use crate::capture::replica::{for_each_record, SegmentsFrom};
use crate::capture::segment::SegmentFile;
use crate::engine::diff::{DiffRun, PartitionResult};
use crate::engine::evidence::broker_ids;
use crate::format::batch::{Batch, TimestampType};
use crate::format::record::control::{parse_type_id, ControlType};
use crate::format::walk::Step;
use crate::model::loss::LostBatch;
use crate::model::{Bytes, Replica, SalvagedRecord};

/// Where salvaged batches and records go.
pub trait SalvageSink {
    /// One lost batch, its bytes exactly as the segment holds them.
    fn batch(&mut self, raw: &[u8]) -> io::Result<()>;
    /// One record of it (records of the batch below the first lost offset
    /// are not handed on).
    fn record(&mut self, r: &SalvagedRecord) -> io::Result<()>;
}

/// A lost batch that could not be salvaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsalvaged {
    /// Its offsets, `[start, end)`.
    pub start: i64,
    /// See `start`.
    pub end: i64,
    /// The file and byte where reading failed (`None`: not found).
    pub file: Option<String>,
    /// See `file`.
    pub position: Option<u64>,
    /// Why.
    pub reason: String,
}

/// What a partition's salvage read and wrote.
#[derive(Debug, Clone, Default)]
pub struct SalvageSummary {
    /// Data records handed on.
    pub records: u64,
    /// Control records (transaction markers) handed on.
    pub control_records: u64,
    /// Batches handed on.
    pub batches: u64,
    /// Batches (or parts) that could not be.
    pub unsalvaged: Vec<Unsalvaged>,
    /// The segment files read.
    pub files: BTreeSet<PathBuf>,
    /// Problems, with file and byte, for stderr.
    pub problems: Vec<ReplicaProblem>,
}

struct Open<'r> {
    replica: &'r Replica,
    segment: usize,
    file: SegmentFile,
}

/// Salvages the loss of `p` into `sink`. An error of the sink (a write
/// that failed) ends the run; a batch that cannot be read does not.
pub fn salvage_partition(
    run: &DiffRun<'_>,
    p: &PartitionResult,
    sink: &mut dyn SalvageSink,
) -> io::Result<SalvageSummary> {
    let replicas = run.replicas(p);
    let ids = broker_ids(replicas);
    let by_id = |b: i32| ids.iter().position(|&i| i == b).map(|i| &replicas[i]);
    let mut out = SalvageSummary::default();
    // The marker of each transaction among the lost batches: a data batch
    // is committed or aborted by the first marker of its producer after it.
    let mut markers: BTreeMap<i64, Vec<(i64, ControlType)>> = BTreeMap::new();
    for lb in p.loss.batches.iter().filter(|b| b.batch.is_control) {
        if let Some(t) = lb
            .held_by
            .iter()
            .find_map(|&b| by_id(b))
            .and_then(|r| marker_at(r, lb.batch.base_offset))
        {
            markers
                .entry(lb.batch.producer_id)
                .or_default()
                .push((lb.batch.base_offset, t));
        }
    }
    let mut open: Option<Open<'_>> = None;
    let mut scratch = Vec::new();
    for lb in &p.loss.batches {
        let b = &lb.batch;
        let transaction = (b.is_transactional && !b.is_control).then(|| {
            match markers
                .get(&b.producer_id)
                .and_then(|m| m.iter().find(|(o, _)| *o > b.last_offset))
            {
                Some((_, ControlType::Commit)) => "committed",
                Some((_, ControlType::Abort)) => "aborted",
                _ => "open",
            }
        });
        let mut done = false;
        let mut failure: Option<Unsalvaged> = None;
        for replica in lb.held_by.iter().filter_map(|&h| by_id(h)) {
            match read_batch(
                replica,
                lb,
                &mut open,
                &mut scratch,
                transaction,
                sink,
                &mut out,
            )? {
                Ok(()) => {
                    done = true;
                    break;
                }
                Err(u) => failure = Some(u),
            }
        }
        if !done {
            out.unsalvaged.push(failure.unwrap_or(Unsalvaged {
                start: lb.from,
                end: b.last_offset + 1,
                file: None,
                position: None,
                reason: "no captured replica holding it".into(),
            }));
        }
    }
    Ok(out)
}

/// Reads one lost batch from `replica` and hands it on. `Ok(Err(..))`: this
/// replica could not give it.
#[allow(clippy::too_many_arguments)]
fn read_batch<'r>(
    replica: &'r Replica,
    lb: &LostBatch,
    open: &mut Option<Open<'r>>,
    scratch: &mut Vec<u8>,
    transaction: Option<&'static str>,
    sink: &mut dyn SalvageSink,
    out: &mut SalvageSummary,
) -> io::Result<Result<(), Unsalvaged>> {
    let b = &lb.batch;
    let end = b.last_offset + 1;
    let fail = |file: Option<String>, position: Option<u64>, reason: String| Unsalvaged {
        start: lb.from,
        end,
        file,
        position,
        reason,
    };
    // The segment holding the batch's base offset: the first that can hold
    // it, when its base offset is at or below it.
    let Some(seg) = SegmentsFrom::new(
        replica,
        Some(b.base_offset),
        Some(b.base_offset.saturating_add(1)),
    )
    .next()
    .filter(|s| s.base_offset() <= b.base_offset) else {
        return Ok(Err(fail(
            None,
            None,
            format!(
                "broker {:?} has no segment holding offset {}",
                replica.node_id, b.base_offset
            ),
        )));
    };
    let path = seg.log;
    let reuse = open
        .as_ref()
        .is_some_and(|o| std::ptr::eq(o.replica, replica) && o.segment == seg.index);
    if !reuse {
        match seg.open() {
            Ok(file) => {
                *open = Some(Open {
                    replica,
                    segment: seg.index,
                    file,
                })
            }
            Err(e) => {
                out.problems
                    .push(ReplicaProblem::unreadable(path, None, &e));
                return Ok(Err(fail(
                    Some(path.display().to_string()),
                    None,
                    format!("cannot read: {e}"),
                )));
            }
        }
    }
    let Some(o) = open.as_ref() else {
        return Ok(Err(fail(None, None, "no segment open".into())));
    };
    let file = &o.file;
    let name = path.display().to_string();
    // from the offset index's position for the base offset, batches
    // before it passed over, up to the first batch past it
    let mut walk = seg.walk(file);
    while let Some(step) = walk.next() {
        let batch = match step {
            Step::Batch(x) => x,
            Step::Io(e) => {
                out.problems
                    .push(ReplicaProblem::unreadable(path, None, &e));
                return Ok(Err(fail(Some(name), None, format!("cannot read: {e}"))));
            }
            Step::Bad(e) => {
                let p = ReplicaProblem {
                    path: path.to_path_buf(),
                    position: Some(e.pos),
                    message: format!(
                        "{}; the lost batch at offset {} is not salvaged from here",
                        e.reason, b.base_offset
                    ),
                    io: false,
                };
                out.problems.push(p);
                return Ok(Err(fail(Some(name), Some(e.pos), e.reason.to_string())));
            }
            Step::BadCrc(..) | Step::Skipped(_) | Step::Tail(_) => continue,
        };
        let Batch::V2(v2) = batch else {
            continue;
        };
        if v2.base_offset() < b.base_offset {
            continue;
        }
        if (v2.last_offset(), v2.partition_leader_epoch(), v2.crc())
            != (b.last_offset, b.partition_leader_epoch, b.crc)
        {
            continue;
        }
        if !v2.is_valid() {
            out.problems.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: Some(v2.position),
                message: "batch checksum mismatch; the lost batch is not salvaged from here".into(),
                io: false,
            });
            return Ok(Err(fail(
                Some(name),
                Some(v2.position),
                "batch checksum mismatch".into(),
            )));
        }
        out.files.insert(path.to_path_buf());
        sink.batch(v2.bytes())?;
        out.batches += 1;
        let ts_type = match v2.timestamp_type() {
            TimestampType::LogAppendTime => "LogAppendTime",
            _ => "CreateTime",
        };
        let mut records_problems = Vec::new();
        let mut sink_err: Option<io::Error> = None;
        let mut count = (0u64, 0u64);
        for_each_record(&v2, scratch, path, &mut records_problems, &mut |r| {
            if r.offset < lb.from {
                return true;
            }
            let control = v2.is_control().then(|| {
                parse_type_id(r.key).map_or("UNKNOWN", |t| ControlType::from_id(t).name())
            });
            let rec = SalvagedRecord {
                offset: r.offset,
                leader_epoch: v2.partition_leader_epoch(),
                timestamp: r.timestamp,
                timestamp_type: ts_type,
                key: r.key.map(Bytes::from_raw),
                value: r.value.map(Bytes::from_raw),
                headers: r
                    .headers()
                    .map(|h| {
                        (
                            String::from_utf8_lossy(h.key).into_owned(),
                            h.value.map(Bytes::from_raw),
                        )
                    })
                    .collect(),
                producer_id: v2.producer_id(),
                producer_epoch: v2.producer_epoch(),
                sequence: r.sequence,
                transactional: v2.is_transactional(),
                control,
                transaction,
                held_by: lb.held_by.clone(),
                committed: lb.committed_at(r.offset),
                batch_base_offset: v2.base_offset(),
            };
            if control.is_some() {
                count.1 += 1;
            } else {
                count.0 += 1;
            }
            match sink.record(&rec) {
                Ok(()) => true,
                Err(e) => {
                    sink_err = Some(e);
                    false
                }
            }
        });
        if let Some(e) = sink_err {
            return Err(e);
        }
        out.records += count.0;
        out.control_records += count.1;
        if let Some(pr) = records_problems.first() {
            out.unsalvaged.push(Unsalvaged {
                start: lb.from,
                end,
                file: Some(name.clone()),
                position: pr.position,
                reason: format!(
                    "the batch's bytes are copied, its records after this do not decode: {}",
                    pr.message
                ),
            });
        }
        out.problems.extend(records_problems);
        return Ok(Ok(()));
    }
    Ok(Err(fail(
        Some(name),
        None,
        format!(
            "batch [{}, {end}) of epoch {} not found in the segment",
            b.base_offset, b.partition_leader_epoch
        ),
    )))
}

/// An input file of a salvage as the manifest records it: its length and
/// its CRC32C (`None` when it could not be read whole; the length is then
/// what the file system says, 0 when it says nothing).
pub fn input_checksum(path: &std::path::Path) -> (u64, Option<u32>) {
    match crate::capture::vfs::crc32c(path) {
        Ok((crc, bytes)) => (bytes, Some(crc)),
        Err(_) => (
            crate::capture::vfs::metadata(path).map_or(0, |m| m.len()),
            None,
        ),
    }
}
