//! What one segment's checks read besides its batches, whatever holds them
//! (its bytes, read by `replica`; a digest's summaries, read by
//! `digested`): the replica's producer snapshots, and the segment's
//! indexes, opened, read and fed to the rules of `analysis::check` (a
//! failed read is a `file-unreadable` finding here; every other finding
//! is the rules').

use std::path::Path;

use crate::analysis::check::{
    code, display, finding, missing_index, txn_index_finding, IndexRule, IndexedSegment,
    SegmentBatches, Snapshots,
};
use crate::format::index::{OffsetIndex, TimeIndex};
use crate::format::names::ReplicaKind;
use crate::format::txnindex::parse_txn_index;
use crate::model::check::{Finding, IndexEntry, IndexKind, Location};
use crate::model::{Replica, SegmentFiles};

/// The producer snapshots of `replica` (none for a metadata log), read
/// before its batches, each given to [`Snapshots::add`].
pub(super) fn read_snapshots(replica: &Replica, base: &Location) -> Snapshots {
    let mut snaps = Snapshots::default();
    if replica.kind == ReplicaKind::Metadata {
        return snaps;
    }
    for snap in &replica.snapshots {
        let at = Location {
            file: Some(display(&snap.path)),
            ..base.clone()
        };
        match crate::capture::vfs::read(&snap.path) {
            Ok(data) => snaps.add(snap.offset, &data, at),
            Err(e) => snaps.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                format!("cannot read: {e}"),
            )),
        }
    }
    snaps
}

pub(super) fn file_name_of_path(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `.txnindex`, `.index` and `.timeindex` of one segment (its `.log` of
/// `log_len` bytes), against the batches read from it (`stopped`: where
/// that reading stopped on damage). `rebuilt`: Kafka rebuilds this
/// segment's indexes when the broker next starts
/// ([`crate::analysis::check::rebuilt_on_restart`]).
pub(super) fn check_indexes(
    seg: &SegmentFiles,
    log_len: u64,
    batches: &SegmentBatches,
    rebuilt: bool,
    stopped: Option<u64>,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
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
    let segment = IndexedSegment {
        base_offset: seg.base_offset,
        log_len,
        batches,
        stopped,
        rebuilt,
    };
    for (kind, path) in [
        (IndexKind::Offset, &seg.index),
        (IndexKind::Time, &seg.timeindex),
    ] {
        let Some(path) = path else {
            if let Some(lp) = &seg.log {
                let at = Location {
                    file: Some(display(lp)),
                    ..base.clone()
                };
                findings.extend(missing_index(kind, &segment, at));
            }
            continue;
        };
        let at = Location {
            file: Some(display(path)),
            ..base.clone()
        };
        // Only the bytes up to the end of the file's data are read: a
        // sparse preallocated index (Kafka's 10 MiB default) is a few
        // entries and a hole, which reads as zeros.
        let (data, file_len) = match crate::capture::vfs::open_data(path) {
            Ok(d) => d,
            Err(e) => {
                findings.push(finding(
                    code::FILE_UNREADABLE,
                    at,
                    format!("cannot read: {e}"),
                ));
                continue;
            }
        };
        let len = usize::try_from(file_len).unwrap_or(usize::MAX);
        let offsets = OffsetIndex::with_len(&data, seg.base_offset, len);
        let times = TimeIndex::with_len(&data, seg.base_offset, len);
        // slot `n` as stored (the bytes past the data read as zeros)
        let slot = |n: usize| -> IndexEntry {
            match kind {
                IndexKind::Offset => IndexEntry::Offset {
                    relative: offsets.relative_offset(n).unwrap_or(0),
                    position: offsets.entry(n).map_or(0, |e| e.position),
                },
                IndexKind::Time => IndexEntry::Time {
                    timestamp: times.entry(n).map_or(0, |e| e.timestamp),
                    relative: times.relative_offset(n).unwrap_or(0),
                },
            }
        };
        let entry_size = kind.entry_size();
        // The first slot from which the file holds nothing but zeros (the
        // slots past its data are zeros without being read).
        let mut zero_from = (len / entry_size).min(data.len().div_ceil(entry_size));
        while zero_from > 0 && slot(zero_from - 1).is_zero() {
            zero_from -= 1;
        }
        let mut rule = IndexRule::new(kind, len as u64, zero_from, segment, at);
        for n in 0..zero_from {
            if !rule.entry(slot(n)) {
                break;
            }
        }
        findings.extend(rule.finish());
    }
}

/// `.txnindex` entries, read and given to [`txn_index_finding`] (a
/// partial entry at its end is left out, as Kafka leaves it).
fn check_txn_index(
    base_offset: i64,
    path: &Path,
    batches: &SegmentBatches,
    complete: bool,
    base: &Location,
    findings: &mut Vec<Finding>,
) {
    let at = Location {
        file: Some(display(path)),
        ..base.clone()
    };
    let data = match crate::capture::vfs::open(path) {
        Ok(d) => d,
        Err(e) => {
            findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                format!("cannot read: {e}"),
            ));
            return;
        }
    };
    let Ok(idx) = parse_txn_index(&data) else {
        return;
    };
    findings.extend(txn_index_finding(
        base_offset,
        &idx.entries,
        batches,
        complete,
        at,
    ));
}
