//! One replica's own checks, reading its files: segments (framing,
//! checksums, offsets, torn tails), indexes against the log, producer
//! snapshots, transaction indexes; then the epoch and offset rules of
//! `analysis::check` over what was read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::analysis::check::{
    check_epochs, check_offsets, code, display, finding, BatchLoc, Finding, Location, ReplicaResult,
};
use crate::capture::replica::{replica_log, summarize};
use crate::capture::segment::SegmentFile;
use crate::format::batch::{Batch, EntryError, TailKind, V2_HEADER_SIZE};
use crate::format::index::{OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE};
use crate::format::names::ReplicaKind;
use crate::format::snapshot::read_producer_snapshot;
use crate::format::txnindex::parse_txn_index;
use crate::model::{BatchSummary, Replica};

/// Checks of one replica on its own: segments, indexes, epochs, offsets.
pub fn check_replica(replica: &Replica, broker: i32) -> ReplicaResult {
    let base = Location {
        broker: Some(broker),
        topic: Some(replica.topic.clone()),
        partition: Some(replica.partition),
        ..Location::default()
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
        .map(|(i, (seg, path))| scan_segment(seg, path, i, i + 1 == nseg, &base))
        .collect();
    let mut findings = Vec::new();
    let files: Vec<PathBuf> = logs.iter().map(|(_, p)| (*p).clone()).collect();
    let mut batches: Vec<BatchLoc> = Vec::new();
    let segments = nseg as u64;
    let mut bytes_read = 0u64;
    let last_segment_base = logs.last().map(|(s, _)| s.base_offset);
    let mut prev_last: Option<(i64, usize)> = None; // last offset of the previous segment, its file
    for (fidx, ((seg, path), scan)) in logs.iter().zip(scans).enumerate() {
        findings.extend(scan.findings);
        bytes_read += scan.bytes_read;
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
        }
        batches.extend(scan.batches);
    }
    let summaries: Vec<BatchSummary> = batches.iter().map(|b| b.summary.clone()).collect();
    let log = replica_log(replica, broker, summaries, last_segment_base);
    let mut result = ReplicaResult {
        findings,
        log,
        batches,
        files,
        segments,
        bytes: bytes_read,
        cleaned_to: replica.cleaner_offset,
    };
    check_epochs(replica, &base, &mut result);
    if replica.kind != ReplicaKind::Metadata {
        check_offsets(replica, &base, &mut result);
        check_producers(replica, &base, &mut result);
    }
    result
}

/// What one segment's own checks found.
struct SegmentScan {
    findings: Vec<Finding>,
    batches: Vec<BatchLoc>,
    /// Position and offset of the first batch.
    first: Option<(u64, i64)>,
    /// Greatest last offset of its batches.
    last: Option<i64>,
    bytes_read: u64,
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
) -> SegmentScan {
    let mut findings = Vec::new();
    let mut batches: Vec<BatchLoc> = Vec::new();
    let mut first_batch = None;
    let at = |position: Option<u64>, offset: Option<i64>| Location {
        file: Some(display(path)),
        position,
        offset,
        ..base.clone()
    };
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
                batches,
                first: None,
                last: None,
                bytes_read: 0,
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
        batches.push(BatchLoc {
            summary,
            file: fidx,
            position: pos,
        });
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
    check_indexes(
        seg,
        log_len,
        &batches,
        is_last,
        stopped,
        base,
        &mut findings,
    );
    SegmentScan {
        findings,
        batches,
        first: first_batch,
        last: prev_in_seg,
        bytes_read: log_len,
    }
}

/// Producer state: every `.snapshot` file reads under Kafka's own rules
/// (version, CRC-32C); for each producer in the latest snapshot, its next
/// batch after the snapshot offset continues its sequence; transactions
/// still open at the log end are reported.
fn check_producers(replica: &Replica, base: &Location, r: &mut ReplicaResult) {
    let mut latest: Option<(i64, Vec<crate::format::snapshot::ProducerEntry>)> = None;
    for snap in &replica.snapshots {
        let mut l = base.clone();
        l.file = Some(display(&snap.path));
        let data = match crate::capture::vfs::read(&snap.path) {
            Ok(d) => d,
            Err(e) => {
                r.findings.push(finding(
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
                r.findings.push(finding(
                    code::PRODUCER_SNAPSHOT_INVALID,
                    l,
                    format!("Kafka would refuse this producer snapshot: {}", e.reason),
                ));
            }
        }
    }
    if let Some((at, entries)) = latest {
        for e in entries.iter().filter(|e| e.last_sequence >= 0) {
            let Some(next) = r.batches.iter().find(|b| {
                b.summary.base_offset >= at
                    && b.summary.producer_id == e.producer_id
                    && !b.summary.is_control
            }) else {
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
                let loc = r.loc_of_offset(base, s.base_offset);
                r.findings.push(finding(
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
    // Transactions open at the log end: a transactional batch of a producer
    // with no control marker after it.
    let mut open: BTreeMap<i64, i64> = BTreeMap::new();
    for b in &r.batches {
        let s = &b.summary;
        if !s.is_transactional || s.producer_id < 0 {
            continue;
        }
        if s.is_control {
            open.remove(&s.producer_id);
        } else {
            open.entry(s.producer_id).or_insert(s.base_offset);
        }
    }
    for (pid, first) in open {
        let loc = r.loc_of_offset(base, first);
        r.findings.push(finding(
            code::TRANSACTION_OPEN,
            loc,
            format!("producer {pid} has a transaction open since offset {first}: no commit or abort marker follows it"),
        ));
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

/// `.index` and `.timeindex` of one segment, against the batches read from it.
fn check_indexes(
    seg: &crate::capture::discover::SegmentFiles,
    log_len: u64,
    batches: &[BatchLoc],
    is_last: bool,
    stopped: Option<u64>,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
    let seg_last = batches.iter().map(|b| b.summary.last_offset).max();
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
        let data = match crate::capture::vfs::open(path) {
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
        if data.len() % entry_size != 0 {
            findings.push(finding(
                code::INDEX_LENGTH_INVALID,
                at(Some((data.len() - data.len() % entry_size) as u64), None),
                format!(
                    "{} bytes is not a multiple of the {entry_size}-byte entry size",
                    data.len()
                ),
            ));
        }
        let slots = data.len() / entry_size;
        // The first slot from which the file holds nothing but zeros.
        let mut zero_from = slots;
        while zero_from > 0 {
            let s = (zero_from - 1) * entry_size;
            match data.get(s..s + entry_size) {
                Some(e) if all_zero(e) => zero_from -= 1,
                _ => break,
            }
        }
        // All-zero slots at the end are padding: a real .index entry never
        // has relative offset 0 (the first batch is never indexed), and a
        // time-index entry (timestamp 0, base offset) is treated alike.
        if zero_from < slots {
            let padding = slots - zero_from;
            findings.push(finding(
                code::INDEX_PREALLOCATED,
                at(Some((zero_from * entry_size) as u64), None),
                format!(
                    "{padding} zero-filled slots ({} bytes) after {zero_from} entries: a preallocated index that was never trimmed (unclean shutdown or live active segment)",
                    padding * entry_size
                ),
            ));
        }
        // In the last segment, entries past the log's end that only precede
        // padding are stale leftovers of a truncation.
        let past_end = |n: usize| -> bool {
            let s = n * entry_size;
            let rel_at = if kind == "index" { s } else { s + 8 };
            let rel = data
                .get(rel_at..rel_at + 4)
                .map_or(0, |b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            let offset = seg.base_offset.saturating_add(i64::from(rel));
            let beyond_pos = kind == "index"
                && data.get(s + 4..s + 8).is_some_and(|b| {
                    i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])) >= log_len as i64
                });
            !matches!(seg_last, Some(l) if offset <= l) || beyond_pos
        };
        let mut live_to = zero_from;
        if is_last && stopped.is_none() {
            while live_to > 0 && past_end(live_to - 1) {
                live_to -= 1;
            }
            if live_to < zero_from {
                findings.push(finding(
                    code::INDEX_STALE_ENTRIES,
                    at(Some((live_to * entry_size) as u64), None),
                    format!(
                        "{} entries after entry {live_to} point past the end of the log (last offset {}, {log_len} bytes): leftovers of a truncation in a preallocated index",
                        zero_from - live_to,
                        seg_last.map_or("none".to_string(), |l| l.to_string())
                    ),
                ));
            }
        }
        let mut reported: BTreeSet<&'static str> = BTreeSet::new();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        let mut report = |code: &'static str, pos: usize, offset: Option<i64>, msg: String| {
            *counts.entry(code).or_default() += 1;
            if reported.insert(code) {
                findings.push(finding(code, at(Some(pos as u64), offset), msg));
            }
        };
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
        let mut prev: Option<(i64, i64)> = None;
        for n in 0..live_to {
            let s = n * entry_size;
            if kind == "index" {
                let rel = be(s, 4);
                let position = be(s + 4, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some_and(|p| position >= p as i64) {
                    continue;
                }
                if let Some((po, _)) = prev {
                    if offset <= po {
                        report(
                            code::INDEX_NOT_MONOTONIC,
                            s,
                            Some(offset),
                            format!("entry {n}: offset {offset} does not increase over the previous entry's {po}"),
                        );
                    }
                }
                prev = Some((offset, position));
                if rel < 0
                    || position < 0
                    || position as u64 >= log_len
                    || seg_last.is_some_and(|l| offset > l)
                    || seg_last.is_none()
                {
                    report(
                        code::INDEX_OUTSIDE_SEGMENT,
                        s,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} at position {position} is outside the segment (base offset {}, last offset {}, {log_len} bytes)",
                            seg.base_offset,
                            seg_last.map_or("none".to_string(), |l| l.to_string())
                        ),
                    );
                    continue;
                }
                // The position must start a batch; the entry's offset is the
                // last offset of an append that began there: at least that
                // batch's last offset, and the last offset of some batch.
                match batches.binary_search_by_key(&(position as u64), |b| b.position) {
                    Err(_) => report(
                        code::INDEX_ENTRY_MISMATCH,
                        s,
                        Some(offset),
                        format!("entry {n}: position {position} for offset {offset} is not the start of a batch"),
                    ),
                    Ok(i) => {
                        let b = &batches[i].summary;
                        let ends_batch = batches[i..]
                            .iter()
                            .any(|x| x.summary.last_offset == offset);
                        if offset < b.last_offset || !ends_batch {
                            report(
                                code::INDEX_ENTRY_MISMATCH,
                                s,
                                Some(offset),
                                format!(
                                    "entry {n}: offset {offset} does not fit the batch at position {position} (offsets [{}, {}))",
                                    b.base_offset,
                                    b.last_offset.saturating_add(1)
                                ),
                            );
                        }
                    }
                }
            } else {
                let ts = be(s, 8);
                let rel = be(s + 8, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some() && !matches!(seg_last, Some(l) if offset <= l) {
                    continue;
                }
                if let Some((pts, po)) = prev {
                    if ts <= pts || offset < po {
                        report(
                            code::INDEX_NOT_MONOTONIC,
                            s,
                            Some(offset),
                            format!("entry {n}: (timestamp {ts}, offset {offset}) does not increase over ({pts}, {po})"),
                        );
                    }
                }
                prev = Some((ts, offset));
                if rel < 0 || seg_last.is_none() || seg_last.is_some_and(|l| offset > l) {
                    report(
                        code::INDEX_OUTSIDE_SEGMENT,
                        s,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} is outside the segment (base offset {}, last offset {})",
                            seg.base_offset,
                            seg_last.map_or("none".to_string(), |l| l.to_string())
                        ),
                    );
                    continue;
                }
                // Kafka 4.x writes a time index entry at the offset of the
                // record with the largest timestamp, which can lie inside a
                // batch (a follower appending a leader's batch does this; the
                // divergence capture has one). kafka-dump-log's own check
                // calls that a mismatch; Kafka itself reads it fine.
                if !batches
                    .iter()
                    .any(|b| b.summary.base_offset <= offset && offset <= b.summary.last_offset)
                {
                    report(
                        code::INDEX_ENTRY_MISMATCH,
                        s,
                        Some(offset),
                        format!("entry {n}: offset {offset} is in no batch of the segment"),
                    );
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
    batches: &[BatchLoc],
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
    let seg_last = batches.iter().map(|b| b.summary.last_offset).max();
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
            && !batches
                .iter()
                .any(|b| b.summary.is_control && b.summary.base_offset == e.last_offset)
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
