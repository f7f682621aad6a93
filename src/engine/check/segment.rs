//! What one segment's own checks are made of, whatever holds its batches
//! (its bytes, read by `replica`; a digest's summaries, read by
//! `digested`): the fold the replica's order-dependent rules take, the
//! batches' lookups, and the checks of its indexes against them.

use crate::format::text::count;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::stream::BatchAt;
use crate::analysis::check::{code, display, finding, BatchPlace};
use crate::format::index::{OFFSET_ENTRY_SIZE, TIME_ENTRY_SIZE};
use crate::format::names::ReplicaKind;
use crate::format::snapshot::{read_producer_snapshot, ProducerEntry};
use crate::format::txnindex::parse_txn_index;
use crate::model::check::{Finding, Location};
use crate::model::timeline::EpochSpan;
use crate::model::{BatchSummary, Replica, SegmentFiles};

/// An order-free fingerprint of a set of batches (two independent sums of
/// a hash of each batch's `(base, last, epoch, crc)`, and their count): two
/// replicas with the same batches in a range have the same fingerprint
/// there, and any difference changes it but for a chance of 2^-128.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fingerprint {
    count: u64,
    sums: (u64, u64),
}

impl Fingerprint {
    pub(super) fn add(&mut self, k: (i64, i64, i32, u32)) {
        let mix = |seed: u64| {
            let mut h = seed;
            for v in [
                k.0 as u64,
                k.1 as u64,
                u64::from(k.2 as u32) << 32 | u64::from(k.3),
            ] {
                h ^= v;
                // splitmix64's finaliser
                h = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
                h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                h ^= h >> 31;
            }
            h
        };
        self.count += 1;
        self.sums.0 = self.sums.0.wrapping_add(mix(0x243f_6a88_85a3_08d3));
        self.sums.1 = self.sums.1.wrapping_add(mix(0x1319_8a2e_0370_7344));
    }

    pub(super) fn merge(&mut self, o: Fingerprint) {
        self.count += o.count;
        self.sums.0 = self.sums.0.wrapping_add(o.sums.0);
        self.sums.1 = self.sums.1.wrapping_add(o.sums.1);
    }
}

/// What a replica's producer snapshots say, read before its batches: the
/// latest readable snapshot's offset and producers, and the findings of
/// the snapshots that do not read.
pub(super) struct Snapshots {
    pub(super) latest: Option<(i64, Vec<ProducerEntry>)>,
    /// Producers of the latest snapshot with a sequence to continue.
    pub(super) waiting: BTreeSet<i64>,
    pub(super) findings: Vec<Finding>,
}

impl Snapshots {
    pub(super) fn read(replica: &Replica, base: &Location) -> Snapshots {
        let mut findings = Vec::new();
        let mut latest: Option<(i64, Vec<ProducerEntry>)> = None;
        if replica.kind != ReplicaKind::Metadata {
            for snap in &replica.snapshots {
                let mut l = base.clone();
                l.file = Some(display(&snap.path));
                let data = match crate::capture::vfs::read(&snap.path) {
                    Ok(d) => d,
                    Err(e) => {
                        findings.push(finding(
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
                        findings.push(finding(
                            code::PRODUCER_SNAPSHOT_INVALID,
                            l,
                            format!("Kafka would refuse this producer snapshot: {}", e.reason),
                        ));
                    }
                }
            }
        }
        let waiting = latest
            .as_ref()
            .map(|(_, es)| {
                es.iter()
                    .filter(|e| e.last_sequence >= 0)
                    .map(|e| e.producer_id)
                    .collect()
            })
            .unwrap_or_default();
        Snapshots {
            latest,
            waiting,
            findings,
        }
    }
}

/// What one segment read on its own gives its replica's order-dependent
/// rules, combined with the other segments' in log order
/// ([`ReplicaFold`]): sizes bounded by epochs and producers, not batches.
#[derive(Debug, Default)]
pub(super) struct SegmentFold {
    /// Runs of one epoch, with where each begins.
    pub(super) spans: Vec<(EpochSpan, BatchPlace)>,
    /// Each waiting producer's first data batch at or after the snapshot.
    pub(super) next_of: BTreeMap<i64, BatchAt>,
    /// Transactional producers' batches.
    pub(super) txns: BTreeMap<i64, TxnPart>,
    /// The batches whose base offset is in the agreement range.
    pub(super) agree: Fingerprint,
}

/// One producer's transactional batches in a segment.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TxnPart {
    /// A control batch (commit or abort) closed what was open.
    pub(super) closed: bool,
    /// Its first data batch, before any control batch.
    pub(super) first_open: Option<(i64, BatchPlace)>,
    /// Its first data batch after the last control batch.
    pub(super) open_after_close: Option<(i64, BatchPlace)>,
}

/// What a segment's scan folds as it reads, and with what.
pub(super) struct FoldContext<'a> {
    pub(super) snapshots: &'a Snapshots,
    pub(super) agree: Option<(i64, i64)>,
    /// Keep every batch's header.
    pub(super) keep: bool,
    /// Segments from this base offset on have their indexes rebuilt by
    /// Kafka when the broker next starts ([`rebuilt_on_restart`]).
    pub(super) rebuilt_from: Option<i64>,
}

impl SegmentFold {
    pub(super) fn push(&mut self, s: &BatchSummary, place: BatchPlace, cx: &FoldContext<'_>) {
        match self.spans.last_mut() {
            Some((span, _)) if span.epoch == s.partition_leader_epoch => {
                span.join(&EpochSpan::of(s))
            }
            _ => self.spans.push((EpochSpan::of(s), place)),
        }
        if let Some((at, _)) = &cx.snapshots.latest {
            if !s.is_control
                && s.base_offset >= *at
                && cx.snapshots.waiting.contains(&s.producer_id)
                && !self.next_of.contains_key(&s.producer_id)
            {
                self.next_of.insert(
                    s.producer_id,
                    BatchAt {
                        summary: s.clone(),
                        place,
                    },
                );
            }
        }
        if s.is_transactional && s.producer_id >= 0 {
            let t = self.txns.entry(s.producer_id).or_default();
            if s.is_control {
                t.closed = true;
                t.open_after_close = None;
            } else if t.closed {
                t.open_after_close.get_or_insert((s.base_offset, place));
            } else {
                t.first_open.get_or_insert((s.base_offset, place));
            }
        }
        if let Some((lo, hi)) = cx.agree {
            if (lo..hi).contains(&s.base_offset) {
                self.agree.add(s.key());
            }
        }
    }
}

/// What one segment's own checks found.
pub(super) struct SegmentScan {
    pub(super) findings: Vec<Finding>,
    /// Batches read.
    pub(super) batches: u64,
    /// Position and offset of the first batch.
    pub(super) first: Option<(u64, i64)>,
    /// Smallest base offset of its batches.
    pub(super) min_base: Option<i64>,
    /// Greatest last offset of its batches.
    pub(super) last: Option<i64>,
    /// Where its readable batches end.
    pub(super) end: u64,
    pub(super) bytes_read: u64,
    /// What the replica's order-dependent rules need of it.
    pub(super) fold: SegmentFold,
    /// Its batches, when asked to keep them.
    pub(super) kept: Option<Vec<BatchAt>>,
}

/// What the index checks of a segment read of each of its batches.
#[derive(Debug, Clone, Copy)]
pub(super) struct SegBatch {
    pub(super) position: u64,
    pub(super) base_offset: i64,
    pub(super) last_offset: i64,
    pub(super) is_control: bool,
}

/// The batches of one segment, in file order, with the lookups the index
/// checks make (each in logarithmic time, not a scan per entry).
pub(super) struct SegBatches {
    /// In file order (positions increase).
    list: Vec<SegBatch>,
    /// `(base offset, greatest last offset of the batches up to it)` in base
    /// offset order: whether some batch holds an offset.
    by_base: Vec<(i64, i64)>,
    /// `(last offset, index in list)`, sorted: the latest batch ending at
    /// an offset.
    last_at: Vec<(i64, usize)>,
    /// Base offsets of the control batches, sorted.
    control: Vec<i64>,
}

impl SegBatches {
    /// The lookup tables of a segment's batches; `None` when the memory for
    /// them cannot be had.
    pub(super) fn new(list: Vec<SegBatch>) -> Option<Self> {
        let mut by_base: Vec<(i64, i64)> = Vec::new();
        let mut last_at: Vec<(i64, usize)> = Vec::new();
        use crate::format::memory::fallible;
        fallible(|| by_base.try_reserve_exact(list.len())).ok()?;
        fallible(|| last_at.try_reserve_exact(list.len())).ok()?;
        by_base.extend(list.iter().map(|b| (b.base_offset, b.last_offset)));
        by_base.sort_unstable();
        let mut max_last = i64::MIN;
        for e in by_base.iter_mut() {
            max_last = max_last.max(e.1);
            e.1 = max_last;
        }
        last_at.extend(list.iter().enumerate().map(|(i, b)| (b.last_offset, i)));
        last_at.sort_unstable();
        let mut control: Vec<i64> = list
            .iter()
            .filter(|b| b.is_control)
            .map(|b| b.base_offset)
            .collect();
        control.sort_unstable();
        Some(SegBatches {
            list,
            by_base,
            last_at,
            control,
        })
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The greatest last offset.
    fn last(&self) -> Option<i64> {
        self.by_base.last().map(|(_, l)| *l)
    }

    /// Whether some batch has `base <= offset <= last`.
    fn holds(&self, offset: i64) -> bool {
        let n = self.by_base.partition_point(|(b, _)| *b <= offset);
        n > 0 && self.by_base[n - 1].1 >= offset
    }

    /// The batch starting at `position`, by index.
    fn at_position(&self, position: u64) -> Option<usize> {
        self.list
            .binary_search_by_key(&position, |b| b.position)
            .ok()
    }

    /// Whether a batch at index `i` or after it in the file ends at `offset`.
    fn ends_at_or_after(&self, i: usize, offset: i64) -> bool {
        // the last entry ending at `offset` has the greatest index
        let n = self.last_at.partition_point(|&(l, _)| l <= offset);
        n > 0 && self.last_at[n - 1].0 == offset && self.last_at[n - 1].1 >= i
    }

    /// Whether a control batch starts at `offset`.
    fn control_at(&self, offset: i64) -> bool {
        self.control.binary_search(&offset).is_ok()
    }
}

pub(super) fn file_name_of_path(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether every byte of `b` is zero.
fn all_zero(b: &[u8]) -> bool {
    b.iter().all(|&x| x == 0)
}

/// One index entry judged: the entry (offset and position, or timestamp and
/// offset), whether it is not judged (past where the log's reading
/// stopped), and what is wrong with it (code, offset, message).
type Judged = ((i64, i64), bool, Vec<(&'static str, Option<i64>, String)>);

/// `.index` and `.timeindex` of one segment, against the batches read from it.
/// `rebuilt`: Kafka rebuilds this segment's indexes when the broker next
/// starts ([`rebuilt_on_restart`]), so it reads none of their bytes: the
/// entries up to the first that does not fit the log are its index, the
/// rest are leftovers, one info; zero-filled slots are its preallocation.
pub(super) fn check_indexes(
    seg: &crate::model::SegmentFiles,
    log_len: u64,
    batches: &SegBatches,
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
        // Only the bytes up to the end of the file's data are read: a
        // sparse preallocated index (Kafka's 10 MiB default) is a few
        // entries and a hole, which reads as zeros.
        let (data, file_len) = match crate::capture::vfs::open_data(path) {
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
        let file_len = usize::try_from(file_len).unwrap_or(usize::MAX);
        if file_len % entry_size != 0 {
            findings.push(finding(
                code::INDEX_LENGTH_INVALID,
                at(Some((file_len - file_len % entry_size) as u64), None),
                format!(
                    "{} is not a multiple of the {entry_size}-byte entry size",
                    count(file_len as u64, "byte", "bytes")
                ),
            ));
        }
        let slots = file_len / entry_size;
        // The first slot from which the file holds nothing but zeros (the
        // slots past its data are zeros without being read).
        let mut zero_from = slots.min(data.len().div_ceil(entry_size));
        while zero_from > 0 {
            let s = (zero_from - 1) * entry_size;
            // a slot the data ends inside is zeros past the data
            match data.get(s..(s + entry_size).min(data.len())) {
                Some(e) if all_zero(e) => zero_from -= 1,
                _ => break,
            }
        }
        // All-zero slots at the end are padding: a real .index entry never
        // has relative offset 0 (the first batch is never indexed), and a
        // time-index entry (timestamp 0, base offset) is treated alike.
        if zero_from < slots {
            let padding = slots - zero_from;
            let (code, why) = if rebuilt {
                (
                    code::INDEX_PREALLOCATED,
                    "the broker did not shut down cleanly (or was running when copied), and Kafka rebuilds this segment's indexes when it next starts",
                )
            } else {
                (
                    code::INDEX_UNTRIMMED,
                    "Kafka loads this index as it stands and counts these slots as entries",
                )
            };
            findings.push(finding(
                code,
                at(Some((zero_from * entry_size) as u64), None),
                format!(
                    "{} ({}) after {}: a preallocated index never trimmed; {why}",
                    count(padding as u64, "zero-filled slot", "zero-filled slots"),
                    count((padding * entry_size) as u64, "byte", "bytes"),
                    count(zero_from as u64, "entry", "entries")
                ),
            ));
        }
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
        let seg_last = batches.last();
        let last_text = || seg_last.map_or("none".to_string(), |l| l.to_string());
        // Entry `n` against the one before it: what it is (to compare the
        // next one with), whether it is not judged (past where the log's
        // reading stopped), and what is wrong with it.
        let judge = |n: usize, prev: Option<(i64, i64)>| -> Judged {
            let s = n * entry_size;
            let mut wrong = Vec::new();
            if kind == "index" {
                let rel = be(s, 4);
                let position = be(s + 4, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some_and(|p| position >= p as i64) {
                    return ((offset, position), true, wrong);
                }
                if let Some((po, _)) = prev {
                    if offset <= po {
                        wrong.push((
                            code::INDEX_NOT_MONOTONIC,
                            Some(offset),
                            format!("entry {n}: offset {offset} does not increase over the previous entry's {po}"),
                        ));
                    }
                }
                if rel < 0
                    || position < 0
                    || position as u64 >= log_len
                    || seg_last.is_none_or(|l| offset > l)
                {
                    wrong.push((
                        code::INDEX_OUTSIDE_SEGMENT,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} at position {position} is outside the segment (base offset {}, last offset {}, {})",
                            seg.base_offset,
                            last_text(),
                            count(log_len, "byte", "bytes")
                        ),
                    ));
                    return ((offset, position), false, wrong);
                }
                // The position must start a batch; the entry's offset is the
                // last offset of an append that began there: at least that
                // batch's last offset, and the last offset of some batch.
                match batches.at_position(position as u64) {
                    None => wrong.push((
                        code::INDEX_ENTRY_MISMATCH,
                        Some(offset),
                        format!("entry {n}: position {position} for offset {offset} is not the start of a batch"),
                    )),
                    Some(i) => {
                        let b = &batches.list[i];
                        let ends_batch = batches.ends_at_or_after(i, offset);
                        if offset < b.last_offset || !ends_batch {
                            wrong.push((
                                code::INDEX_ENTRY_MISMATCH,
                                Some(offset),
                                format!(
                                    "entry {n}: offset {offset} does not fit the batch at position {position} (offsets [{}, {}))",
                                    b.base_offset,
                                    b.last_offset.saturating_add(1)
                                ),
                            ));
                        }
                    }
                }
                ((offset, position), false, wrong)
            } else {
                let ts = be(s, 8);
                let rel = be(s + 8, 4);
                let offset = seg.base_offset.saturating_add(rel);
                if stopped.is_some() && !matches!(seg_last, Some(l) if offset <= l) {
                    return ((ts, offset), true, wrong);
                }
                if let Some((pts, po)) = prev {
                    if ts <= pts || offset < po {
                        wrong.push((
                            code::INDEX_NOT_MONOTONIC,
                            Some(offset),
                            format!(
                                "entry {n}: (timestamp {}, offset {offset}) does not increase over ({}, {po})",
                                crate::format::text::human_time(ts),
                                crate::format::text::human_time(pts)
                            ),
                        ));
                    }
                }
                if rel < 0 || seg_last.is_none_or(|l| offset > l) {
                    wrong.push((
                        code::INDEX_OUTSIDE_SEGMENT,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} is outside the segment (base offset {}, last offset {})",
                            seg.base_offset,
                            last_text()
                        ),
                    ));
                    return ((ts, offset), false, wrong);
                }
                // Kafka 4.x writes a time index entry at the offset of the
                // record with the largest timestamp, which can lie inside a
                // batch (a follower appending a leader's batch does this; the
                // divergence capture has one). kafka-dump-log's own check
                // calls that a mismatch; Kafka itself reads it fine.
                if !batches.holds(offset) {
                    wrong.push((
                        code::INDEX_ENTRY_MISMATCH,
                        Some(offset),
                        format!("entry {n}: offset {offset} is in no batch of the segment"),
                    ));
                }
                ((ts, offset), false, wrong)
            }
        };
        let mut prev: Option<(i64, i64)> = None;
        if rebuilt {
            // The index Kafka would be using is the prefix that fits the
            // log; what follows it is leftovers it never reads.
            for n in 0..zero_from {
                let (this, skip, wrong) = judge(n, prev);
                if skip {
                    continue;
                }
                if let Some((_, offset, why)) = wrong.into_iter().next() {
                    findings.push(finding(
                        code::INDEX_STALE_ENTRIES,
                        at(Some((n * entry_size) as u64), offset),
                        format!(
                            "{} from entry {n} on {} {} that {} not fit the log (first: {why}; the log ends at offset {}, {}): the broker did not shut down cleanly (or was running when copied), and Kafka rebuilds this segment's indexes when it next starts",
                            count((zero_from - n) as u64, "entry", "entries"),
                            if zero_from - n == 1 { "is" } else { "are" },
                            if zero_from - n == 1 { "a leftover" } else { "leftovers" },
                            if zero_from - n == 1 { "does" } else { "do" },
                            seg_last.map_or("none".to_string(), |l| l.saturating_add(1).to_string()),
                            count(log_len, "byte", "bytes")
                        ),
                    ));
                    break;
                }
                prev = Some(this);
            }
            continue;
        }
        let mut reported: BTreeSet<&'static str> = BTreeSet::new();
        let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
        for n in 0..zero_from {
            let (this, skip, wrong) = judge(n, prev);
            if skip {
                continue;
            }
            prev = Some(this);
            for (code, offset, msg) in wrong {
                *counts.entry(code).or_default() += 1;
                if reported.insert(code) {
                    findings.push(finding(
                        code,
                        at(Some((n * entry_size) as u64), offset),
                        msg,
                    ));
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
                        .to_mut()
                        .push_str(&format!(" ({} like this)", more_entries(n - 1)));
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
    batches: &SegBatches,
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
    let seg_last = batches.last();
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
            && !batches.control_at(e.last_offset)
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
            n => format!(" ({} like this)", more_entries((n - 1) as u64)),
        };
        findings.push(finding(
            code::TXN_INDEX_INVALID,
            at(*pos, Some(*off)),
            format!("{why}{more}"),
        ));
    }
}

/// How a segment's batch checksum came out, for [`SegmentChecks::batch`].
pub(super) enum Crc<'a> {
    /// It matches (or was not checked: a digest's batch below where the
    /// node checked).
    Fine,
    /// It fails: the reason, and whether the entry is too short to be a
    /// batch at all (a framing problem rather than a checksum's).
    Fails(&'a str, bool),
}

/// The checks of one segment's batches, fed in file order by whatever
/// reads them (its bytes, or a digest's summaries): framing, checksums,
/// headers, offset order, the segment's name, its tail; what the
/// replica's order-dependent rules need (the fold); the batches the index
/// checks look up.
pub(super) struct SegmentChecks<'a> {
    seg: &'a SegmentFiles,
    path: &'a Path,
    fidx: usize,
    base: &'a Location,
    cx: &'a FoldContext<'a>,
    log_len: u64,
    /// What was found.
    pub(super) findings: Vec<Finding>,
    fold: SegmentFold,
    kept: Option<Vec<BatchAt>>,
    first: Option<(u64, i64)>,
    min_base: Option<i64>,
    prev_in_seg: Option<i64>,
    /// Where reading stopped on damage: index entries past it are not
    /// judged.
    pub(super) stopped: Option<u64>,
    batches: Vec<SegBatch>,
}

impl<'a> SegmentChecks<'a> {
    /// The checks of the segment `seg` (its `.log` at `path`, `log_len`
    /// bytes, `fidx`-th of its replica's).
    pub(super) fn new(
        seg: &'a SegmentFiles,
        path: &'a Path,
        fidx: usize,
        log_len: u64,
        base: &'a Location,
        cx: &'a FoldContext<'a>,
    ) -> Self {
        SegmentChecks {
            seg,
            path,
            fidx,
            base,
            cx,
            log_len,
            findings: Vec::new(),
            fold: SegmentFold::default(),
            kept: cx.keep.then(Vec::new),
            first: None,
            min_base: None,
            prev_in_seg: None,
            stopped: None,
            batches: Vec::new(),
        }
    }

    /// A location in the segment's `.log`.
    pub(super) fn at(&self, position: Option<u64>, offset: Option<i64>) -> Location {
        Location {
            file: Some(display(self.path)),
            position,
            offset,
            ..self.base.clone()
        }
    }

    /// The next batch: at `pos`, with this magic, summary and checksum;
    /// `header` is a v2 batch's (last offset delta, record count). `false`
    /// when reading stops here.
    pub(super) fn batch(
        &mut self,
        pos: u64,
        magic: i8,
        summary: BatchSummary,
        crc: Crc<'_>,
        header: Option<(i32, i32)>,
    ) -> bool {
        let rest = self.log_len.saturating_sub(pos);
        let first = summary.base_offset;
        if !(0..=2).contains(&magic) {
            self.findings.push(finding(
                code::BATCH_BAD_MAGIC,
                self.at(Some(pos), Some(first)),
                format!(
                    "magic {magic} is not 0, 1 or 2; the rest of the segment ({}) is not a readable log",
                    count(rest, "byte", "bytes")
                ),
            ));
            self.stopped = Some(pos);
            return false;
        }
        if let Crc::Fails(reason, short) = crc {
            let c = if short {
                code::BATCH_FRAMING
            } else {
                code::BATCH_CRC_MISMATCH
            };
            self.findings.push(finding(
                c,
                self.at(Some(pos), Some(first)),
                format!(
                    "{reason}; Kafka's recovery truncates the segment here, dropping {}",
                    count(rest, "byte", "bytes")
                ),
            ));
            self.stopped = Some(pos);
            return false;
        }
        if let Some((delta, count)) = header {
            if delta < 0 || count < 0 || i64::from(count) > i64::from(delta) + 1 {
                self.findings.push(finding(
                    code::BATCH_HEADER_INVALID,
                    self.at(Some(pos), Some(first)),
                    format!(
                        "last offset delta {delta} and record count {count} are impossible together"
                    ),
                ));
            }
        }
        // For a legacy compressed wrapper the offset field is its last
        // inner offset: only v2 base offsets can be compared as firsts.
        if let Some(p) = self.prev_in_seg {
            if first <= p {
                self.findings.push(finding(
                    code::BATCH_OFFSET_ORDER,
                    self.at(Some(pos), Some(first)),
                    format!(
                        "batch at offset {first} follows a batch ending at offset {p}: offsets do not increase"
                    ),
                ));
            }
        } else {
            self.first = Some((pos, first));
            if summary.last_offset < self.seg.base_offset
                || (magic >= 2 && first < self.seg.base_offset)
            {
                self.findings.push(finding(
                    code::SEGMENT_NAME_MISMATCH,
                    self.at(Some(pos), Some(first)),
                    format!(
                        "first batch starts at offset {first}, below the segment's base offset {} from its name",
                        self.seg.base_offset
                    ),
                ));
            }
        }
        self.prev_in_seg = Some(
            self.prev_in_seg
                .map_or(summary.last_offset, |p| p.max(summary.last_offset)),
        );
        self.min_base = Some(self.min_base.map_or(first, |m| m.min(first)));
        self.fold.push(&summary, (self.fidx, pos), self.cx);
        // memory for what the index checks need, asked for, not assumed
        if self.batches.len() == self.batches.capacity()
            && crate::format::memory::fallible(|| {
                self.batches.try_reserve(self.batches.len().max(1024))
            })
            .is_err()
        {
            self.findings.push(finding(
                code::FILE_UNREADABLE,
                self.at(Some(pos), None),
                format!(
                    "cannot allocate memory to check the segment past {}",
                    count(self.batches.len() as u64, "batch", "batches")
                ),
            ));
            self.stopped = Some(pos);
            return false;
        }
        self.batches.push(SegBatch {
            position: pos,
            base_offset: summary.base_offset,
            last_offset: summary.last_offset,
            is_control: summary.is_control,
        });
        if let Some(k) = &mut self.kept {
            k.push(BatchAt {
                summary,
                place: (self.fidx, pos),
            });
        }
        true
    }

    /// An entry at `pos` that does not frame: reading stops.
    pub(super) fn bad_entry(&mut self, pos: u64, reason: &str) {
        let c = if reason.contains("magic") {
            code::BATCH_BAD_MAGIC
        } else {
            code::BATCH_FRAMING
        };
        self.findings.push(finding(
            c,
            self.at(Some(pos), None),
            format!(
                "{reason}; the rest of the segment ({}) cannot be read",
                count(self.log_len.saturating_sub(pos), "byte", "bytes")
            ),
        ));
        self.stopped = Some(pos);
    }

    /// A read that failed at `pos`: reading stops.
    pub(super) fn unreadable(&mut self, pos: u64, message: String) {
        self.findings.push(finding(
            code::FILE_UNREADABLE,
            self.at(Some(pos), None),
            message,
        ));
        self.stopped = Some(pos);
    }

    /// Bytes after the last complete batch (unless reading stopped on
    /// damage before): `declared` is the size an entry there declares.
    pub(super) fn tail(&mut self, pos: u64, len: u64, declared: Option<i64>, is_last: bool) {
        if self.stopped.is_some() {
            return;
        }
        let declared = match declared {
            Some(n) => format!(
                "; the entry there declares {n} {}",
                if n == 1 { "byte" } else { "bytes" }
            ),
            None => String::new(),
        };
        let (c, where_) = if is_last {
            (code::SEGMENT_TORN_TAIL, "last segment")
        } else {
            (code::SEGMENT_TORN_MIDDLE, "segment that is not the last")
        };
        self.findings.push(finding(
            c,
            self.at(Some(pos), None),
            format!(
                "{} after the last complete batch of the {where_}{declared}",
                count(len, "byte", "bytes")
            ),
        ));
    }

    /// What the segment's checks found, with its indexes' (`index` adds
    /// them, given the batches and where reading stopped).
    pub(super) fn finish(
        mut self,
        index: impl FnOnce(&SegBatches, Option<u64>, &mut Vec<Finding>),
    ) -> SegmentScan {
        let count = self.batches.len() as u64;
        let at = self.at(None, None);
        match SegBatches::new(std::mem::take(&mut self.batches)) {
            Some(b) => index(&b, self.stopped, &mut self.findings),
            None => self.findings.push(finding(
                code::FILE_UNREADABLE,
                at,
                "cannot allocate memory to check the segment's indexes".to_string(),
            )),
        }
        SegmentScan {
            findings: self.findings,
            batches: count,
            first: self.first,
            min_base: self.min_base,
            last: self.prev_in_seg,
            end: self.stopped.unwrap_or(self.log_len),
            bytes_read: self.log_len,
            fold: self.fold,
            kept: self.kept,
        }
    }
}

/// `n more entries`, `1 more entry`.
fn more_entries(n: u64) -> String {
    count(n, "more entry", "more entries")
}
