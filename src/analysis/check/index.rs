//! The rules of a segment's indexes (`.index`, `.timeindex`, `.txnindex`)
//! against the batches read from its `.log`: pure functions over what the
//! engine read. The batches of the one segment being checked are held
//! ([`SegmentBatches`], a few dozen bytes each, with the lookups the rules
//! make in logarithmic time); the index entries are fed one at a time
//! ([`IndexRule::entry`]), so nothing grows with the index.

use std::collections::BTreeMap;

use super::codes::{code, finding};
use crate::format::memory::fallible;
use crate::format::text::{count, human_time};
use crate::format::txnindex::AbortedTxn;
use crate::model::check::{Finding, IndexEntry, IndexKind, Location, SegmentBatch};

/// The batches of one segment, in file order, with the lookups the index
/// rules make (each in logarithmic time, not a scan per entry).
#[derive(Debug)]
pub struct SegmentBatches {
    /// In file order (positions increase).
    list: Vec<SegmentBatch>,
    /// `(base offset, greatest last offset of the batches up to it)` in base
    /// offset order: whether some batch holds an offset.
    by_base: Vec<(i64, i64)>,
    /// `(last offset, index in list)`, sorted: the latest batch ending at
    /// an offset.
    last_at: Vec<(i64, usize)>,
    /// Base offsets of the control batches, sorted.
    control: Vec<i64>,
}

impl SegmentBatches {
    /// The lookup tables of a segment's batches (`list` in file order);
    /// `None` when the memory for them cannot be had.
    pub fn new(list: Vec<SegmentBatch>) -> Option<Self> {
        let mut by_base: Vec<(i64, i64)> = Vec::new();
        let mut last_at: Vec<(i64, usize)> = Vec::new();
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
        Some(SegmentBatches {
            list,
            by_base,
            last_at,
            control,
        })
    }

    /// Whether the segment has no batch.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The greatest last offset.
    pub fn last(&self) -> Option<i64> {
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

/// The segment an index is checked against: what reading its `.log` gave.
#[derive(Debug, Clone, Copy)]
pub struct IndexedSegment<'a> {
    /// Its base offset (from the file names).
    pub base_offset: i64,
    /// The length of its `.log`.
    pub log_len: u64,
    /// Its batches, up to where reading stopped.
    pub batches: &'a SegmentBatches,
    /// Where reading its `.log` stopped on damage (`None`: to its end):
    /// index entries past it are not judged.
    pub stopped: Option<u64>,
    /// Kafka rebuilds this segment's indexes when the broker next starts
    /// ([`super::rebuilt_on_restart`]), so it reads none of their bytes: the
    /// entries up to the first that does not fit the log are its index,
    /// the rest are leftovers (one info); zero-filled slots are its
    /// preallocation.
    pub rebuilt: bool,
}

/// A segment holding batches has no `.index` (or `.timeindex`): `at` is
/// its `.log`. A segment holding no data needs no index (Kafka recreates
/// them).
pub fn missing_index(
    kind: IndexKind,
    segment: &IndexedSegment<'_>,
    at: Location,
) -> Option<Finding> {
    if segment.batches.is_empty() {
        return None;
    }
    Some(finding(
        code::INDEX_MISSING,
        at,
        format!(
            "segment {} has no .{} file",
            segment.base_offset,
            kind.extension()
        ),
    ))
}

/// What is wrong with one entry: code, offset, message.
type Wrong = Vec<(&'static str, Option<i64>, String)>;

/// The rules of one `.index` or `.timeindex` against its segment's
/// batches, fed its entries in file order ([`IndexRule::entry`]) up to the
/// zero-filled slots at its end; [`IndexRule::finish`] gives the findings.
/// What it holds does not grow with the entries: the previous entry, and
/// at most one finding per code.
pub struct IndexRule<'a> {
    kind: IndexKind,
    segment: IndexedSegment<'a>,
    /// The index file (the segment's replica, the file).
    at: Location,
    /// Entries before the zero-filled slots.
    entries: usize,
    /// Entries fed so far.
    n: usize,
    /// The last judged entry: (offset, position) or (timestamp, offset).
    prev: Option<(i64, i64)>,
    findings: Vec<Finding>,
    /// How many entries had each code (not rebuilt).
    counts: BTreeMap<&'static str, u64>,
    /// The rule has what it needs (rebuilt: the first leftover).
    done: bool,
}

impl<'a> IndexRule<'a> {
    /// The rules of the index at `at` (`kind`, `len` bytes long), whose
    /// first `entries` slots are followed by zero-filled ones only (all-zero
    /// slots at the end are padding: a real `.index` entry never has
    /// relative offset 0, the first batch being never indexed, and a
    /// time-index entry of timestamp 0 and relative offset 0 is taken
    /// alike). What the file's length and padding say is found here.
    pub fn new(
        kind: IndexKind,
        len: u64,
        entries: usize,
        segment: IndexedSegment<'a>,
        at: Location,
    ) -> Self {
        let entry_size = kind.entry_size() as u64;
        let slots = len / entry_size;
        let entries = entries.min(usize::try_from(slots).unwrap_or(usize::MAX));
        let mut rule = IndexRule {
            kind,
            segment,
            at,
            entries,
            n: 0,
            prev: None,
            findings: Vec::new(),
            counts: BTreeMap::new(),
            done: false,
        };
        if !len.is_multiple_of(entry_size) {
            let f = finding(
                code::INDEX_LENGTH_INVALID,
                rule.loc(Some(len - len % entry_size), None),
                format!(
                    "{} is not a multiple of the {entry_size}-byte entry size",
                    count(len, "byte", "bytes")
                ),
            );
            rule.findings.push(f);
        }
        let zero_from = entries as u64;
        if zero_from < slots {
            let padding = slots - zero_from;
            let (code, why) = if segment.rebuilt {
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
            let f = finding(
                code,
                rule.loc(Some(zero_from * entry_size), None),
                format!(
                    "{} ({}) after {}: a preallocated index never trimmed; {why}",
                    count(padding, "zero-filled slot", "zero-filled slots"),
                    count(padding * entry_size, "byte", "bytes"),
                    count(zero_from, "entry", "entries")
                ),
            );
            rule.findings.push(f);
        }
        rule
    }

    fn loc(&self, position: Option<u64>, offset: Option<i64>) -> Location {
        Location {
            position,
            offset,
            ..self.at.clone()
        }
    }

    /// The next entry. `false` when later entries change nothing (all
    /// were fed, or a rebuilt index's leftovers were found): the reader
    /// may stop.
    pub fn entry(&mut self, e: IndexEntry) -> bool {
        if self.done || self.n >= self.entries {
            return false;
        }
        let n = self.n;
        self.n += 1;
        let (this, skip, wrong) = self.judge(n, e);
        if skip {
            return self.n < self.entries;
        }
        let entry_size = self.kind.entry_size() as u64;
        if self.segment.rebuilt {
            // The index Kafka would be using is the prefix that fits the
            // log; what follows it is leftovers it never reads.
            if let Some((_, offset, why)) = wrong.into_iter().next() {
                let left = (self.entries - n) as u64;
                let f = finding(
                    code::INDEX_STALE_ENTRIES,
                    self.loc(Some(n as u64 * entry_size), offset),
                    format!(
                        "{} from entry {n} on {} {} that {} not fit the log (first: {why}; the log ends at offset {}, {}): the broker did not shut down cleanly (or was running when copied), and Kafka rebuilds this segment's indexes when it next starts",
                        count(left, "entry", "entries"),
                        if left == 1 { "is" } else { "are" },
                        if left == 1 { "a leftover" } else { "leftovers" },
                        if left == 1 { "does" } else { "do" },
                        self.segment
                            .batches
                            .last()
                            .map_or("none".to_string(), |l| l.saturating_add(1).to_string()),
                        count(self.segment.log_len, "byte", "bytes")
                    ),
                );
                self.findings.push(f);
                self.done = true;
                return false;
            }
            self.prev = Some(this);
            return self.n < self.entries;
        }
        self.prev = Some(this);
        for (code, offset, msg) in wrong {
            let c = self.counts.entry(code).or_default();
            *c += 1;
            if *c == 1 {
                let f = finding(code, self.loc(Some(n as u64 * entry_size), offset), msg);
                self.findings.push(f);
            }
        }
        self.n < self.entries
    }

    /// Entry `n` against the one before it: what it is (to compare the
    /// next one with), whether it is not judged (past where the log's
    /// reading stopped), and what is wrong with it.
    fn judge(&self, n: usize, e: IndexEntry) -> ((i64, i64), bool, Wrong) {
        let seg = &self.segment;
        let batches = seg.batches;
        let seg_last = batches.last();
        let last_text = || seg_last.map_or("none".to_string(), |l| l.to_string());
        let mut wrong = Vec::new();
        match e {
            IndexEntry::Offset { relative, position } => {
                let rel = i64::from(relative);
                let position = i64::from(position);
                let offset = seg.base_offset.saturating_add(rel);
                if seg.stopped.is_some_and(|p| position >= p as i64) {
                    return ((offset, position), true, wrong);
                }
                if let Some((po, _)) = self.prev {
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
                    || position as u64 >= seg.log_len
                    || seg_last.is_none_or(|l| offset > l)
                {
                    wrong.push((
                        code::INDEX_OUTSIDE_SEGMENT,
                        Some(offset),
                        format!(
                            "entry {n}: offset {offset} at position {position} is outside the segment (base offset {}, last offset {}, {})",
                            seg.base_offset,
                            last_text(),
                            count(seg.log_len, "byte", "bytes")
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
            }
            IndexEntry::Time {
                timestamp: ts,
                relative,
            } => {
                let rel = i64::from(relative);
                let offset = seg.base_offset.saturating_add(rel);
                if seg.stopped.is_some() && !matches!(seg_last, Some(l) if offset <= l) {
                    return ((ts, offset), true, wrong);
                }
                if let Some((pts, po)) = self.prev {
                    if ts <= pts || offset < po {
                        wrong.push((
                            code::INDEX_NOT_MONOTONIC,
                            Some(offset),
                            format!(
                                "entry {n}: (timestamp {}, offset {offset}) does not increase over ({}, {po})",
                                human_time(ts),
                                human_time(pts)
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
        }
    }

    /// The findings: the file's length and padding, then the first entry
    /// of each kind of problem, saying how many more are like it (a
    /// rebuilt index: where its leftovers begin).
    pub fn finish(mut self) -> Vec<Finding> {
        for (code, n) in self.counts {
            if n > 1 {
                if let Some(f) = self.findings.iter_mut().rev().find(|f| f.code == code) {
                    f.message
                        .to_mut()
                        .push_str(&format!(" ({} like this)", more_entries(n - 1)));
                }
            }
        }
        self.findings
    }
}

/// The `.txnindex` at `at` of a segment, its entries as read: Kafka's
/// load-time rules, and each abort marker is a control batch of the
/// segment (when its `.log` was read to its end, `complete`). One finding
/// for the first entry that breaks one, saying how many more do.
pub fn txn_index_finding(
    base_offset: i64,
    entries: &[AbortedTxn],
    batches: &SegmentBatches,
    complete: bool,
    at: Location,
) -> Option<Finding> {
    let seg_last = batches.last();
    let mut first: Option<(u64, i64, String)> = None;
    let mut problems = 0u64;
    for e in entries {
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
            problems += 1;
            first.get_or_insert((e.position, e.last_offset, w));
        }
    }
    let (pos, off, why) = first?;
    let more = match problems {
        1 => String::new(),
        n => format!(" ({} like this)", more_entries(n - 1)),
    };
    Some(finding(
        code::TXN_INDEX_INVALID,
        Location {
            position: Some(pos),
            offset: Some(off),
            ..at
        },
        format!("{why}{more}"),
    ))
}

/// `n more entries`, `1 more entry`.
fn more_entries(n: u64) -> String {
    count(n, "more entry", "more entries")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(position: u64, base_offset: i64, last_offset: i64) -> SegmentBatch {
        SegmentBatch {
            position,
            base_offset,
            last_offset,
            is_control: false,
        }
    }

    /// Three batches of a segment at base offset 100: [100, 104] at 0,
    /// [105, 109] at 200, a control batch [110, 110] at 400; 500 bytes.
    fn batches() -> SegmentBatches {
        let mut control = batch(400, 110, 110);
        control.is_control = true;
        SegmentBatches::new(vec![batch(0, 100, 104), batch(200, 105, 109), control]).unwrap()
    }

    fn segment(batches: &SegmentBatches, rebuilt: bool) -> IndexedSegment<'_> {
        IndexedSegment {
            base_offset: 100,
            log_len: 500,
            batches,
            stopped: None,
            rebuilt,
        }
    }

    fn at() -> Location {
        Location {
            file: Some("t-0/00000000000000000100.index".into()),
            ..Location::default()
        }
    }

    fn off(relative: i32, position: i32) -> IndexEntry {
        IndexEntry::Offset { relative, position }
    }

    fn time(timestamp: i64, relative: i32) -> IndexEntry {
        IndexEntry::Time {
            timestamp,
            relative,
        }
    }

    /// The findings of an index of `kind` holding `entries` (and `pad`
    /// zero-filled slots after them).
    fn run(
        kind: IndexKind,
        entries: &[IndexEntry],
        pad: usize,
        seg: IndexedSegment<'_>,
    ) -> Vec<Finding> {
        let len = ((entries.len() + pad) * kind.entry_size()) as u64;
        let mut rule = IndexRule::new(kind, len, entries.len(), seg, at());
        for &e in entries {
            if !rule.entry(e) {
                break;
            }
        }
        rule.finish()
    }

    fn codes(fs: &[Finding]) -> Vec<&str> {
        fs.iter().map(|f| f.code.as_ref()).collect()
    }

    #[test]
    fn entries_that_fit_the_log_find_nothing() {
        let b = batches();
        let fs = run(
            IndexKind::Offset,
            &[off(9, 200), off(10, 400)],
            0,
            segment(&b, false),
        );
        assert!(fs.is_empty(), "{fs:?}");
        let fs = run(
            IndexKind::Time,
            &[time(1_000, 4), time(2_000, 9)],
            0,
            segment(&b, false),
        );
        assert!(fs.is_empty(), "{fs:?}");
    }

    #[test]
    fn a_segment_with_batches_and_no_index_is_missing_one() {
        let b = batches();
        let f = missing_index(IndexKind::Time, &segment(&b, false), at()).unwrap();
        assert_eq!(f.code, code::INDEX_MISSING);
        assert_eq!(f.message, "segment 100 has no .timeindex file");
        let empty = SegmentBatches::new(Vec::new()).unwrap();
        assert!(missing_index(IndexKind::Offset, &segment(&empty, false), at()).is_none());
    }

    #[test]
    fn a_length_not_a_multiple_of_the_entry_size_is_invalid() {
        let b = batches();
        let rule = IndexRule::new(IndexKind::Offset, 13, 1, segment(&b, false), at());
        let fs = rule.finish();
        assert_eq!(codes(&fs), [code::INDEX_LENGTH_INVALID]);
        assert_eq!(fs[0].location.position, Some(8));
        assert_eq!(
            fs[0].message,
            "13 bytes is not a multiple of the 8-byte entry size"
        );
    }

    #[test]
    fn zero_slots_after_the_entries_are_untrimmed_or_preallocated() {
        let b = batches();
        let fs = run(IndexKind::Offset, &[off(9, 200)], 3, segment(&b, false));
        assert_eq!(codes(&fs), [code::INDEX_UNTRIMMED]);
        assert_eq!(fs[0].location.position, Some(8));
        assert!(fs[0]
            .message
            .starts_with("3 zero-filled slots (24 bytes) after 1 entry: "));
        let fs = run(IndexKind::Time, &[time(5, 4)], 1, segment(&b, true));
        assert_eq!(codes(&fs), [code::INDEX_PREALLOCATED]);
        assert_eq!(fs[0].location.position, Some(12));
    }

    #[test]
    fn offsets_that_go_back_are_not_monotonic_and_counted() {
        let b = batches();
        let fs = run(
            IndexKind::Offset,
            &[off(10, 400), off(9, 200), off(9, 200)],
            0,
            segment(&b, false),
        );
        assert_eq!(codes(&fs), [code::INDEX_NOT_MONOTONIC]);
        assert_eq!(fs[0].location.position, Some(8));
        assert_eq!(fs[0].location.offset, Some(109));
        assert_eq!(
            fs[0].message,
            "entry 1: offset 109 does not increase over the previous entry's 110 (1 more entry like this)"
        );
        let fs = run(
            IndexKind::Time,
            &[time(2_000, 9), time(1_000, 9)],
            0,
            segment(&b, false),
        );
        assert_eq!(codes(&fs), [code::INDEX_NOT_MONOTONIC]);
        assert_eq!(fs[0].location.position, Some(12));
    }

    #[test]
    fn entries_past_the_log_are_outside_the_segment() {
        let b = batches();
        let fs = run(IndexKind::Offset, &[off(9, 600)], 0, segment(&b, false));
        assert_eq!(codes(&fs), [code::INDEX_OUTSIDE_SEGMENT]);
        assert_eq!(
            fs[0].message,
            "entry 0: offset 109 at position 600 is outside the segment (base offset 100, last offset 110, 500 bytes)"
        );
        let fs = run(IndexKind::Time, &[time(5, 11)], 0, segment(&b, false));
        assert_eq!(codes(&fs), [code::INDEX_OUTSIDE_SEGMENT]);
        assert_eq!(fs[0].location.offset, Some(111));
    }

    #[test]
    fn entries_that_miss_their_batch_are_mismatches() {
        let b = batches();
        // not the start of a batch
        let fs = run(IndexKind::Offset, &[off(9, 100)], 0, segment(&b, false));
        assert_eq!(codes(&fs), [code::INDEX_ENTRY_MISMATCH]);
        assert_eq!(
            fs[0].message,
            "entry 0: position 100 for offset 109 is not the start of a batch"
        );
        // inside the batch at that position, not at its end
        let fs = run(IndexKind::Offset, &[off(7, 200)], 0, segment(&b, false));
        assert_eq!(codes(&fs), [code::INDEX_ENTRY_MISMATCH]);
        assert_eq!(
            fs[0].message,
            "entry 0: offset 107 does not fit the batch at position 200 (offsets [105, 110))"
        );
        // a time entry inside a batch is fine; one in a gap is not
        let gap = SegmentBatches::new(vec![batch(0, 100, 104), batch(200, 107, 109)]).unwrap();
        let fs = run(IndexKind::Time, &[time(5, 2)], 0, segment(&gap, false));
        assert!(fs.is_empty(), "{fs:?}");
        let fs = run(IndexKind::Time, &[time(5, 5)], 0, segment(&gap, false));
        assert_eq!(codes(&fs), [code::INDEX_ENTRY_MISMATCH]);
        assert_eq!(
            fs[0].message,
            "entry 0: offset 105 is in no batch of the segment"
        );
    }

    #[test]
    fn a_rebuilt_index_past_its_valid_prefix_is_leftovers() {
        let b = batches();
        let fs = run(
            IndexKind::Offset,
            &[off(4, 0), off(9, 600), off(2, 0)],
            0,
            segment(&b, true),
        );
        assert_eq!(codes(&fs), [code::INDEX_STALE_ENTRIES]);
        assert_eq!(fs[0].location.position, Some(8));
        assert!(fs[0].message.starts_with(
            "2 entries from entry 1 on are leftovers that do not fit the log (first: entry 1: offset 109 at position 600 is outside the segment"
        ));
        assert!(fs[0]
            .message
            .contains("the log ends at offset 111, 500 bytes"));
    }

    #[test]
    fn entries_past_where_reading_stopped_are_not_judged() {
        let b = SegmentBatches::new(vec![batch(0, 100, 104)]).unwrap();
        let seg = IndexedSegment {
            stopped: Some(200),
            ..segment(&b, false)
        };
        let fs = run(IndexKind::Offset, &[off(4, 0), off(9, 200)], 0, seg);
        assert!(fs.is_empty(), "{fs:?}");
        let fs = run(IndexKind::Time, &[time(1, 4), time(2, 9)], 0, seg);
        assert!(fs.is_empty(), "{fs:?}");
    }

    fn txn(position: u64, first_offset: i64, last_offset: i64) -> AbortedTxn {
        AbortedTxn {
            position,
            version: 0,
            raw_version: 0,
            producer_id: 7,
            first_offset,
            last_offset,
            last_stable_offset: first_offset,
        }
    }

    #[test]
    fn txn_index_entries_follow_kafkas_rules_and_the_log() {
        let b = batches();
        assert!(txn_index_finding(100, &[txn(0, 105, 110)], &b, true, at()).is_none());
        let f = txn_index_finding(
            100,
            &[txn(0, 105, 110), txn(34, 101, 104), txn(68, 50, 60)],
            &b,
            true,
            at(),
        )
        .unwrap();
        assert_eq!(f.code, code::TXN_INDEX_INVALID);
        assert_eq!(
            (f.location.position, f.location.offset),
            (Some(34), Some(104))
        );
        assert_eq!(
            f.message,
            "no control batch at the abort marker offset 104 of producer 7 (1 more entry like this)"
        );
        // the log not read to its end: only Kafka's own rules
        assert!(txn_index_finding(100, &[txn(0, 105, 200)], &b, false, at()).is_none());
        let f = txn_index_finding(100, &[txn(0, 105, 200)], &b, true, at()).unwrap();
        assert_eq!(
            f.message,
            "abort marker offset 200 is past the segment's last offset 110"
        );
        let mut v1 = txn(0, 105, 110);
        v1.version = 1;
        let f = txn_index_finding(100, &[v1], &b, false, at()).unwrap();
        assert_eq!(f.message, "entry version 1 is not one Kafka reads");
    }
}
