//! `klf check` of a data segment a digest summarises: the same checks as a
//! read of its bytes, from the digest's batch summaries (framing, the
//! checksums the digest checked, headers, offset order, the segment's name,
//! its tail, the order-dependent rules), with the index checks the node ran
//! when the digest was made ([`node_index_findings`]), reported against
//! the digest's files.

use std::path::Path;

use super::segment::{check_indexes, FoldContext, SegBatch, SegBatches, SegmentFold, SegmentScan};
use super::stream::BatchAt;
use crate::analysis::check::{code, display, finding, info, Finding, Location};
use crate::capture::digest::make::Walked;
use crate::capture::digest::summary;
use crate::capture::discover::{Capture, Replica, SegmentFiles};
use crate::format::batch::V2_HEADER_SIZE;
use crate::format::digest::{CrcCheck, SegmentDigest, ShippedFinding, WalkEnd};
use crate::format::ParseError;

/// What a segment's walk gives the index checks: the batches up to where
/// reading stops, and where it stops.
fn readable(walked: &[Walked], end: &WalkEnd) -> (Vec<SegBatch>, Option<u64>) {
    let mut list = Vec::with_capacity(walked.len());
    for b in walked {
        if !(0..=2).contains(&b.magic) || b.crc_bad {
            return (list, Some(b.position));
        }
        list.push(SegBatch {
            position: b.position,
            base_offset: b.base_offset,
            last_offset: b.last_offset,
            is_control: b.is_control,
        });
    }
    let stopped = match end {
        WalkEnd::Bad { pos, .. } => Some(*pos),
        WalkEnd::Io { pos, .. } => Some(pos.unwrap_or(0)),
        WalkEnd::Clean | WalkEnd::Tail { .. } => None,
    };
    (list, stopped)
}

/// Every segment `.log` of a node's capture: its replica and segment, to
/// find a walked segment's in one lookup.
pub struct SegmentsOf<'c> {
    map: std::collections::HashMap<&'c Path, (&'c Replica, &'c SegmentFiles)>,
}

impl<'c> SegmentsOf<'c> {
    /// The segments of `capture`'s partitions (live and set aside).
    pub fn new(capture: &'c Capture) -> Self {
        let mut map = std::collections::HashMap::new();
        for r in capture
            .partitions
            .values()
            .flatten()
            .chain(&capture.set_aside)
        {
            for s in &r.segments {
                if let Some(p) = &s.log {
                    map.insert(p.as_path(), (r, s));
                }
            }
        }
        SegmentsOf { map }
    }
}

/// On the node, when the digest is made: `klf check`'s index checks of the
/// data segment at `path` (its `.index`, `.timeindex` and `.txnindex`
/// against the batches the digest walked), as the digest ships them
/// (`None`: the segment is in no replica discovery found).
pub fn node_index_findings(
    capture: &Capture,
    segments: &SegmentsOf<'_>,
    path: &Path,
    walked: &[Walked],
    end: &WalkEnd,
) -> Option<Vec<ShippedFinding>> {
    let &(r, seg) = segments.map.get(path)?;
    {
        let bases: Vec<i64> = r.segments.iter().map(|s| s.base_offset).collect();
        let clean = capture
            .brokers
            .iter()
            .find(|b| b.path == r.log_dir)
            .map(|b| b.clean_shutdown.is_some());
        let rebuilt =
            crate::analysis::check::rebuilt_on_restart(false, clean, r.recovery_point, &bases)
                .is_some_and(|b| seg.base_offset >= b);
        let (list, stopped) = readable(walked, end);
        let batches = SegBatches::new(list)?;
        let log_len = seg.log_len.unwrap_or(0);
        let mut found = Vec::new();
        check_indexes(
            seg,
            log_len,
            &batches,
            rebuilt,
            stopped,
            &Location::default(),
            &mut found,
        );
        let kind_of = |f: &Finding| -> u8 {
            let file = f.location.file.as_deref();
            let is = |p: &Option<std::path::PathBuf>| {
                p.as_deref()
                    .is_some_and(|p| file == Some(display(p).as_str()))
            };
            if is(&seg.index) {
                1
            } else if is(&seg.timeindex) {
                2
            } else if is(&seg.txnindex) {
                3
            } else {
                0
            }
        };
        Some(
            found
                .iter()
                .map(|f| ShippedFinding {
                    code: f.code.to_string(),
                    file: kind_of(f),
                    position: f.location.position,
                    offset: f.location.offset,
                    message: f.message.to_string(),
                })
                .collect(),
        )
    }
}

/// A finding the node made, against this capture's path of its file.
fn shipped(f: &ShippedFinding, seg: &SegmentFiles, log: &Path, base: &Location) -> Finding {
    let file = match f.file {
        1 => seg.index.as_deref(),
        2 => seg.timeindex.as_deref(),
        3 => seg.txnindex.as_deref(),
        _ => None,
    }
    .unwrap_or(log);
    let loc = Location {
        file: Some(display(file)),
        position: f.position,
        offset: f.offset,
        ..base.clone()
    };
    match info(&f.code) {
        Some(i) => finding(i.code, loc, f.message.clone()),
        // a code of a later klf: reported as it came, as an error
        None => Finding {
            code: f.code.clone().into(),
            ..finding(code::FILE_UNREADABLE, loc, f.message.clone())
        },
    }
}

/// `scan_segment` of a segment a digest summarises.
pub(super) fn scan(
    seg: &SegmentFiles,
    path: &Path,
    d: Result<SegmentDigest, ParseError>,
    fidx: usize,
    is_last: bool,
    base: &Location,
    cx: &FoldContext<'_>,
) -> SegmentScan {
    let mut fold = SegmentFold::default();
    let mut kept: Option<Vec<BatchAt>> = cx.keep.then(Vec::new);
    let mut findings = Vec::new();
    let at = |position: Option<u64>, offset: Option<i64>| Location {
        file: Some(display(path)),
        position,
        offset,
        ..base.clone()
    };
    let log_len = seg.log_len.unwrap_or(0);
    let d = match d {
        Ok(d) => d,
        Err(e) => {
            findings.push(finding(
                code::FILE_UNREADABLE,
                at(None, None),
                format!(
                    "cannot read the digest's summaries of this segment: byte {} of the digest: {}",
                    e.pos, e.reason
                ),
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
    let mut first_batch = None;
    let mut min_base: Option<i64> = None;
    let mut prev_in_seg: Option<i64> = None;
    let mut stopped: Option<u64> = None;
    let mut count = 0u64;
    for b in &d.batches {
        let pos = b.position;
        let rest = log_len.saturating_sub(pos);
        let s = summary(b);
        if !(0..=2).contains(&b.magic) {
            findings.push(finding(
                code::BATCH_BAD_MAGIC,
                at(Some(pos), Some(s.base_offset)),
                format!(
                    "magic {} is not 0, 1 or 2; the rest of the segment ({rest} bytes) is not a readable log",
                    b.magic
                ),
            ));
            stopped = Some(pos);
            break;
        }
        if let CrcCheck::Bad(reason) = &b.crc {
            let c = if b.magic >= 2 && b.size < V2_HEADER_SIZE as u64 {
                code::BATCH_FRAMING
            } else {
                code::BATCH_CRC_MISMATCH
            };
            findings.push(finding(
                c,
                at(Some(pos), Some(s.base_offset)),
                format!(
                    "{reason}; Kafka's recovery truncates the segment here, dropping {rest} bytes"
                ),
            ));
            stopped = Some(pos);
            break;
        }
        if b.magic >= 2 {
            let delta = s.last_offset.wrapping_sub(s.base_offset);
            let count = s.record_count;
            if delta < 0 || count < 0 || i64::from(count) > delta + 1 {
                findings.push(finding(
                    code::BATCH_HEADER_INVALID,
                    at(Some(pos), Some(s.base_offset)),
                    format!(
                        "last offset delta {delta} and record count {count} are impossible together"
                    ),
                ));
            }
        }
        let first = s.base_offset;
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
            if s.last_offset < seg.base_offset || (b.magic >= 2 && first < seg.base_offset) {
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
        prev_in_seg = Some(prev_in_seg.map_or(s.last_offset, |p| p.max(s.last_offset)));
        min_base = Some(min_base.map_or(first, |m| m.min(first)));
        fold.push(&s, (fidx, pos), cx);
        count += 1;
        if let Some(k) = &mut kept {
            k.push(BatchAt {
                summary: s,
                place: (fidx, pos),
            });
        }
    }
    if stopped.is_none() {
        match &d.end {
            WalkEnd::Clean => {}
            WalkEnd::Bad { pos, reason } => {
                let c = if reason.contains("magic") {
                    code::BATCH_BAD_MAGIC
                } else {
                    code::BATCH_FRAMING
                };
                findings.push(finding(
                    c,
                    at(Some(*pos), None),
                    format!(
                        "{reason}; the rest of the segment ({} bytes) cannot be read",
                        log_len.saturating_sub(*pos)
                    ),
                ));
                stopped = Some(*pos);
            }
            WalkEnd::Io { pos, reason } => {
                findings.push(finding(
                    code::FILE_UNREADABLE,
                    at(*pos, None),
                    format!("cannot read (on the node, when the digest was made): {reason}"),
                ));
                stopped = Some(pos.unwrap_or(0));
            }
            WalkEnd::Tail { pos, len, declared } => {
                let declared = match declared {
                    Some(n) => format!("; the entry there declares {n} bytes"),
                    None => String::new(),
                };
                let (c, where_) = if is_last {
                    (code::SEGMENT_TORN_TAIL, "last segment")
                } else {
                    (code::SEGMENT_TORN_MIDDLE, "segment that is not the last")
                };
                findings.push(finding(
                    c,
                    at(Some(*pos), None),
                    format!("{len} bytes after the last complete batch of the {where_}{declared}"),
                ));
            }
        }
    }
    match &d.index_findings {
        Some(fs) => findings.extend(fs.iter().map(|f| shipped(f, seg, path, base))),
        None => findings.push(finding(
            code::FILE_UNREADABLE,
            at(None, None),
            "the digest holds no index checks of this segment (it was made by a klf that did not run them): run klf check on the node",
        )),
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
