//! `klf check` of a data segment a digest summarises: the same checks as a
//! read of its bytes, from the digest's batch summaries (framing, the
//! checksums the digest checked, headers, offset order, the segment's name,
//! its tail, the order-dependent rules), with the index checks the node ran
//! when the digest was made ([`node_index_findings`]), reported against
//! the digest's files.

use std::path::Path;

use super::segment::check_indexes;
use crate::analysis::check::{
    code, display, finding, info, Crc, FoldContext, SegmentBatches, SegmentRule, SegmentScan,
};
use crate::capture::digest::make::Walked;
use crate::capture::digest::summary;
use crate::format::batch::V2_HEADER_SIZE;
use crate::format::digest::{CrcCheck, SegmentDigest, ShippedFinding, WalkEnd};
use crate::format::ParseError;
use crate::model::check::{Finding, Location, SegmentBatch};
use crate::model::{Capture, Replica, SegmentFiles};

/// What a segment's walk gives the index checks: the batches up to where
/// reading stops, and where it stops.
fn readable(walked: &[Walked], end: &WalkEnd) -> (Vec<SegmentBatch>, Option<u64>) {
    let mut list = Vec::with_capacity(walked.len());
    for b in walked {
        if !(0..=2).contains(&b.magic) || b.crc_bad {
            return (list, Some(b.position));
        }
        list.push(SegmentBatch {
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
        let batches = SegmentBatches::new(list)?;
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
    d: Result<std::sync::Arc<SegmentDigest>, ParseError>,
    fidx: usize,
    is_last: bool,
    base: &Location,
    cx: &FoldContext<'_>,
) -> SegmentScan {
    let log_len = seg.log_len.unwrap_or(0);
    let d = match d {
        Ok(d) => d,
        Err(e) => {
            let mut c = SegmentRule::new(seg, path, fidx, 0, base, cx);
            let at = c.at(None, None);
            c.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                format!(
                    "cannot read the digest's summaries of this segment: byte {} of the digest: {}",
                    e.pos, e.reason
                ),
            ));
            let (mut scan, _) = c.finish();
            scan.kept = None;
            return scan;
        }
    };
    let mut c = SegmentRule::new(seg, path, fidx, log_len, base, cx);
    let mut stopped = false;
    for b in &d.batches {
        let s = summary(b);
        let header = (b.magic >= 2).then(|| {
            (
                i32::try_from(s.last_offset.wrapping_sub(s.base_offset)).unwrap_or(-1),
                s.record_count,
            )
        });
        let crc = match &b.crc {
            CrcCheck::Bad(reason) => {
                Crc::Fails(reason, b.magic >= 2 && b.size < V2_HEADER_SIZE as u64)
            }
            CrcCheck::Ok | CrcCheck::Unchecked => Crc::Fine,
        };
        if !c.batch(b.position, b.magic, s, crc, header) {
            stopped = true;
            break;
        }
    }
    if !stopped {
        match &d.end {
            WalkEnd::Clean => {}
            WalkEnd::Bad { pos, reason } => c.bad_entry(*pos, reason),
            WalkEnd::Io { pos, reason } => {
                let pos = pos.unwrap_or(0);
                let at = c.at(Some(pos), None);
                c.read_failed(
                    pos,
                    finding(
                        code::FILE_UNREADABLE,
                        at,
                        format!("cannot read (on the node, when the digest was made): {reason}"),
                    ),
                );
            }
            WalkEnd::Tail { pos, len, declared } => c.tail(*pos, *len, *declared, is_last),
        }
    }
    let at = c.at(None, None);
    let (mut scan, batches) = c.finish();
    // the index checks the node ran, where this klf would have run its own
    if batches.is_some() {
        match &d.index_findings {
            Some(fs) => scan
                .findings
                .extend(fs.iter().map(|f| shipped(f, seg, path, base))),
            None => scan.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                "the digest holds no index checks of this segment (it was made by a klf that did not run them): run klf check on the node",
            )),
        }
    }
    scan
}
