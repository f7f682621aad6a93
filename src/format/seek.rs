//! Where a range of offsets or times lies in a segment, found with its
//! `.index` and `.timeindex` as Kafka finds a fetch position: the index
//! gives a batch at or before the target, and the batch headers are read
//! on from there (only their first 61 bytes matter). The indexes are
//! untrusted: an entry is used only while offsets and positions keep
//! rising and the position lies inside the log; a bad index only makes the
//! scan start earlier, never skip a batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::format::batch::{Batch, SegmentSource};
use crate::format::index::{OffsetIndex, TimeIndex};
use crate::format::walk::{Step, Walk};

/// What part of a segment is asked for: offsets `[first, end)` and batches
/// from the first whose max timestamp is at least `since` to the first
/// whose max timestamp is at least `until` (Kafka's offset-for-time, both
/// ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// First offset (inclusive).
    pub first: i64,
    /// End offset (exclusive).
    pub end: i64,
    /// Epoch milliseconds: from the first batch whose max timestamp is at
    /// least this.
    pub since: Option<i64>,
    /// Epoch milliseconds: up to the first batch whose max timestamp is at
    /// least this.
    pub until: Option<i64>,
}

impl Default for Wanted {
    fn default() -> Wanted {
        Wanted {
            first: i64::MIN,
            end: i64::MAX,
            since: None,
            until: None,
        }
    }
}

impl Wanted {
    /// Whether everything is wanted.
    pub fn is_all(&self) -> bool {
        *self == Wanted::default()
    }
}

/// The part of a segment to read: byte positions `[start, end)` (batch
/// boundaries) and the offsets `[first, end_offset)` of the records wanted
/// in the batches there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Position of the first batch to read.
    pub start: u64,
    /// Position where reading stops.
    pub end: u64,
    /// First offset wanted.
    pub first: i64,
    /// Offsets from this one on are not wanted.
    pub end_offset: i64,
}

/// The position of a batch at or before the one holding `target`: the
/// latest trustworthy `.index` entry whose offset is at most `target`
/// (0 without one).
pub fn offset_floor(index: Option<&[u8]>, base_offset: i64, target: i64, log_len: u64) -> u64 {
    let Some(index) = index else { return 0 };
    let idx = OffsetIndex::new(index, base_offset);
    let mut best = 0u64;
    let (mut last_off, mut last_pos) = (i64::MIN, -1i64);
    for e in idx.iter() {
        let pos = i64::from(e.position);
        if e.offset <= last_off
            || pos <= last_pos
            || pos as u64 >= log_len
            || e.offset < base_offset
        {
            break;
        }
        if e.offset > target {
            break;
        }
        best = pos as u64;
        (last_off, last_pos) = (e.offset, pos);
    }
    best
}

/// An offset at or before the first batch whose max timestamp is at least
/// `t`: the offset of the latest trustworthy `.timeindex` entry whose
/// timestamp is below `t` (the segment's base offset without one).
pub fn time_floor(timeindex: Option<&[u8]>, base_offset: i64, t: i64) -> i64 {
    let Some(ti) = timeindex else {
        return base_offset;
    };
    let ti = TimeIndex::new(ti, base_offset);
    let mut best = base_offset;
    let (mut last_ts, mut last_off) = (i64::MIN, i64::MIN);
    for e in ti.iter() {
        if e.timestamp <= last_ts || e.offset < last_off || e.offset < base_offset {
            break;
        }
        if e.timestamp >= t {
            break;
        }
        best = e.offset;
        (last_ts, last_off) = (e.timestamp, e.offset);
    }
    best
}

fn max_timestamp(b: &Batch<'_>) -> i64 {
    match b {
        Batch::V2(v) => v.max_timestamp(),
        Batch::Legacy(e) => e.record().timestamp(),
    }
}

/// The lowest offset a batch may hold: a v2 batch's base offset, an
/// uncompressed legacy message's offset; a compressed legacy wrapper
/// carries only its last offset, so the one after the batch before it.
fn first_offset(b: &Batch<'_>, prev_last: Option<i64>) -> i64 {
    match b {
        Batch::V2(v) => v.base_offset(),
        Batch::Legacy(e) if e.record().attributes() & 0x07 == 0 => e.offset,
        Batch::Legacy(_) => prev_last.map_or(i64::MIN, |p| p.saturating_add(1)),
    }
}

/// The first batch from position `from` for which `hit(batch, its lowest
/// offset)` holds: its position and lowest offset; at a damaged or
/// unreadable batch, or the end, that position and None (the dump reads
/// on to it and reports it).
fn first_batch(
    log: &dyn SegmentSource,
    from: u64,
    hit: &dyn Fn(&Batch<'_>, i64) -> bool,
) -> (u64, Option<i64>) {
    let mut walk = Walk::new(log.entries(from, log.len()));
    let mut prev_last = None;
    loop {
        let at = walk.position();
        match walk.next() {
            Some(Step::Batch(b)) => {
                let lowest = first_offset(&b, prev_last);
                if hit(&b, lowest) {
                    return (b.position(), Some(lowest));
                }
                prev_last = Some(b.last_offset());
            }
            _ => return (at, None),
        }
    }
}

/// Where the wanted part of a segment lies (see [`Span`]).
pub fn span(
    log: &dyn SegmentSource,
    index: Option<&[u8]>,
    timeindex: Option<&[u8]>,
    base_offset: i64,
    want: &Wanted,
) -> Span {
    let len = log.len();
    let mut first = want.first;
    let mut end_offset = want.end;
    // a time is turned into the base offset of the first batch at or past it
    let for_time = |t: i64| -> (u64, Option<i64>) {
        let floor = time_floor(timeindex, base_offset, t);
        let from = offset_floor(index, base_offset, floor, len);
        first_batch(log, from, &|b, _| max_timestamp(b) >= t)
    };
    if let Some(t) = want.since {
        match for_time(t) {
            (_, Some(o)) => first = first.max(o),
            // damage before a batch that late: reading starts at it, so
            // the dump reports it, and shows nothing it cannot place
            (at, None) if at < len => {
                return Span {
                    start: at,
                    end: len,
                    first: i64::MAX,
                    end_offset,
                }
            }
            (_, None) => first = i64::MAX,
        }
    }
    if let Some(t) = want.until {
        // at damage the dump reads on to it and reports it
        if let (_, Some(o)) = for_time(t) {
            end_offset = end_offset.min(o);
        }
    }
    if first >= end_offset {
        return Span {
            start: len,
            end: len,
            first,
            end_offset,
        };
    }
    let (start, _) = if first == i64::MIN {
        (0, None)
    } else {
        let from = offset_floor(index, base_offset, first, len);
        first_batch(log, from, &|b, _| b.last_offset() >= first)
    };
    let end = if end_offset == i64::MAX {
        len
    } else {
        let from = offset_floor(index, base_offset, end_offset, len).max(start);
        first_batch(log, from, &|_, lowest| lowest >= end_offset).0
    };
    Span {
        start,
        end: end.max(start),
        first,
        end_offset,
    }
}

/// The part of a segment a dump reads, and the records it shows there:
/// byte positions `[start, end)` (from [`span`]), offsets `[first,
/// end_offset)`, records of one key, batches of some producers, at most a
/// count of items.
#[derive(Clone, Debug)]
pub struct Pick {
    /// Byte positions `[start, end)`.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    first: i64,
    end_offset: i64,
    key: Option<Vec<u8>>,
    /// Only batches of these producer ids, sorted (`None`: any).
    producers: Option<Arc<[i64]>>,
    left: Option<u64>,
    /// Items shown, counted by every clone (see [`Pick::tallied`]).
    tally: Option<Arc<AtomicU64>>,
}

impl Pick {
    /// The records of `span` (None: the whole segment) in the first
    /// `limit` bytes, of `key` if given, at most `count` items.
    pub fn new(span: Option<Span>, limit: u64, key: Option<Vec<u8>>, count: Option<u64>) -> Pick {
        let mut p = Pick {
            start: 0,
            end: limit,
            first: i64::MIN,
            end_offset: i64::MAX,
            key,
            producers: None,
            left: count,
            tally: None,
        };
        if let Some(s) = span {
            p.start = s.start.min(limit);
            p.end = s.end.min(limit);
            p.first = s.first;
            p.end_offset = s.end_offset;
        }
        p
    }

    /// Whether a batch of offsets `[first, last]` holds any record asked for.
    pub fn batch(&self, first: i64, last: i64) -> bool {
        last >= self.first && first < self.end_offset
    }

    /// The same pick, of the batches of `producers` only (v2 batches whose
    /// producer id is one of them; a v0/v1 entry has none).
    pub fn of_producers(mut self, producers: &[i64]) -> Pick {
        let mut ids = producers.to_vec();
        ids.sort_unstable();
        ids.dedup();
        self.producers = Some(ids.into());
        self
    }

    /// Whether it picks only some producers' batches.
    pub fn by_producer(&self) -> bool {
        self.producers.is_some()
    }

    /// Whether `batch` holds a record asked for: its offsets (a compressed
    /// v0/v1 wrapper names only its last), and its producer.
    pub fn holds(&self, batch: &Batch<'_>) -> bool {
        match batch {
            Batch::V2(b) => {
                self.batch(b.base_offset(), b.last_offset())
                    && self
                        .producers
                        .as_ref()
                        .is_none_or(|p| p.binary_search(&b.producer_id()).is_ok())
            }
            Batch::Legacy(e) => self.producers.is_none() && self.batch(i64::MIN, e.offset),
        }
    }

    /// Whether the record at `offset` with `key` is shown.
    pub fn record(&self, offset: i64, key: Option<&[u8]>) -> bool {
        offset >= self.first
            && offset < self.end_offset
            && self.key.as_deref().is_none_or(|k| key == Some(k))
    }

    /// Whether `offset` lies at or past the end of the range (records
    /// after it in a batch need not be read).
    pub fn past(&self, offset: i64) -> bool {
        offset >= self.end_offset
    }

    /// The same pick, counting each item shown (each [`Pick::take`] that
    /// returns true, in this pick and its clones) in `tally`: whether a
    /// selection matched anything.
    pub fn tallied(mut self, tally: Arc<AtomicU64>) -> Pick {
        self.tally = Some(tally);
        self
    }

    /// Counts one shown item; false once the count was shown.
    pub fn take(&mut self) -> bool {
        let shown = match &mut self.left {
            None => true,
            Some(0) => false,
            Some(n) => {
                *n -= 1;
                true
            }
        };
        if let (true, Some(t)) = (shown, &self.tally) {
            t.fetch_add(1, Ordering::Relaxed);
        }
        shown
    }

    /// Whether the count was shown.
    pub fn done(&self) -> bool {
        self.left == Some(0)
    }
}

/// The ends of a segment, as its readable batch headers give them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    /// The lowest offset of its first batch, and that batch's max timestamp.
    pub first: Option<(i64, i64)>,
    /// The offset after its last readable batch (its end offset: the log
    /// end offset when it is a partition's newest segment), and that
    /// batch's max timestamp.
    pub end: Option<(i64, i64)>,
}

/// The first and the last readable batch of `log`. The last is looked for
/// from the latest trustworthy `.index` entry on, and from the start when
/// no batch frames there (a bad index only makes the scan longer); reading
/// stops at the first batch that does not frame (damage ends what can be
/// read, as it ends Kafka's recovery).
pub fn extent(log: &dyn SegmentSource, index: Option<&[u8]>, base_offset: i64) -> Extent {
    let len = log.len();
    let mut walk = Walk::new(log.entries(0, len));
    let first = match walk.next() {
        Some(Step::Batch(b)) => {
            // a compressed legacy wrapper names only its last offset: its
            // first is at least the segment's base offset
            let lowest = match first_offset(&b, None) {
                i64::MIN => base_offset.min(b.last_offset()),
                o => o,
            };
            Some((lowest, max_timestamp(&b)))
        }
        _ => None,
    };
    drop(walk);
    if first.is_none() {
        return Extent::default();
    }
    let last_from = |from: u64| -> Option<(i64, i64)> {
        let mut walk = Walk::new(log.entries(from, len));
        let mut last = None;
        while let Some(Step::Batch(b)) = walk.next() {
            last = Some((b.last_offset().saturating_add(1), max_timestamp(&b)));
        }
        last
    };
    let from = offset_floor(index, base_offset, i64::MAX, len);
    let end = last_from(from).or_else(|| if from > 0 { last_from(0) } else { None });
    Extent { first, end }
}
