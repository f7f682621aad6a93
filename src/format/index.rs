//! Offset index (`.index`, 8-byte entries) and time index (`.timeindex`,
//! 12-byte entries), big-endian, no header.
//!
//! Kafka counts `floor(file length / entry size)` entries and never scans for
//! the zero slots a preallocated (or crashed) index carries at its end, so the
//! raw views here do the same; [`OffsetIndex::valid_entries`] and
//! [`TimeIndex::valid_entries`] apply the offline heuristics that tell real
//! entries from padding. Lookups reproduce Kafka's `AbstractIndex` search,
//! including its warm-section shortcut, so that results on unsorted (damaged)
//! indexes match Kafka's too.

/// Size of an offset index entry.
pub const OFFSET_ENTRY_SIZE: usize = 8;
/// Size of a time index entry.
pub const TIME_ENTRY_SIZE: usize = 12;

/// An offset index entry: absolute offset and position in the `.log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetPosition {
    /// base offset + relative offset.
    pub offset: i64,
    /// Byte position of a batch in the `.log` (signed as stored).
    pub position: i32,
}

/// A time index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampOffset {
    /// Timestamp (ms).
    pub timestamp: i64,
    /// base offset + relative offset.
    pub offset: i64,
}

/// Which sanity check an index failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SanityError(pub String);

impl std::fmt::Display for SanityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Kafka's binary search over `entries` slots (`AbstractIndex.indexSlotRangeFor`
/// with `LARGEST_LOWER_BOUND`): the slot of the greatest key ≤ `target`, or
/// `None`.
fn largest_lower_bound(
    entries: usize,
    warm: usize,
    key: impl Fn(usize) -> i64,
    target: i64,
) -> Option<usize> {
    if entries == 0 {
        return None;
    }
    let first_hot = (entries as i64 - 1 - warm as i64).max(0) as usize;
    let search = |begin: usize, end: usize| {
        let (mut lo, mut hi) = (begin as i64, end as i64);
        while lo < hi {
            let mid = ((lo + hi + 1) as u64 >> 1) as i64;
            let found = key(mid as usize);
            match found.cmp(&target) {
                std::cmp::Ordering::Greater => hi = mid - 1,
                std::cmp::Ordering::Less => lo = mid,
                std::cmp::Ordering::Equal => return mid as usize,
            }
        }
        lo as usize
    };
    if key(first_hot) < target {
        return Some(search(first_hot, entries - 1));
    }
    if key(0) > target {
        return None;
    }
    Some(search(0, first_hot))
}

/// `N` bytes at `at` of a file of `len` bytes whose first bytes are
/// `data` and the rest zeros (`None` past `len`).
fn zero_tail<const N: usize>(data: &[u8], len: usize, at: usize) -> Option<[u8; N]> {
    if at.checked_add(N)? > len {
        return None;
    }
    let mut b = [0u8; N];
    if let Some(have) = data.get(at..) {
        let n = have.len().min(N);
        b[..n].copy_from_slice(&have[..n]);
    }
    Some(b)
}

fn zero_tail_i32(data: &[u8], len: usize, at: usize) -> Option<i32> {
    zero_tail::<4>(data, len, at).map(i32::from_be_bytes)
}

fn zero_tail_i64(data: &[u8], len: usize, at: usize) -> Option<i64> {
    zero_tail::<8>(data, len, at).map(i64::from_be_bytes)
}

/// An index file's bytes: the first `data.len()` of `len`, the rest zeros
/// (the hole after a sparse file's data, not held). From a plain slice,
/// the whole file.
#[derive(Debug, Clone, Copy)]
pub struct IndexBytes<'a> {
    /// The bytes held.
    pub data: &'a [u8],
    /// The file's length (at least `data.len()`).
    pub len: usize,
}

impl<'a> From<&'a [u8]> for IndexBytes<'a> {
    fn from(data: &'a [u8]) -> Self {
        IndexBytes {
            data,
            len: data.len(),
        }
    }
}

/// A `.index` file.
#[derive(Debug, Clone, Copy)]
pub struct OffsetIndex<'a> {
    data: &'a [u8],
    len: usize,
    /// Base offset of the segment (from the file name).
    pub base_offset: i64,
}

impl<'a> OffsetIndex<'a> {
    /// A view over the file bytes.
    pub fn new(data: &'a [u8], base_offset: i64) -> Self {
        Self::with_len(data, base_offset, data.len())
    }
    /// A view over a file of `len` bytes of which `data` holds the first
    /// (the rest is zeros: the hole after a sparse file's data, read as
    /// Kafka reads it without being held).
    pub fn with_len(data: &'a [u8], base_offset: i64, len: usize) -> Self {
        OffsetIndex {
            data,
            len: len.max(data.len()),
            base_offset,
        }
    }
    /// A view over [`IndexBytes`].
    pub fn of(b: IndexBytes<'a>, base_offset: i64) -> Self {
        Self::with_len(b.data, base_offset, b.len)
    }
    /// File length.
    pub fn len_bytes(&self) -> usize {
        self.len
    }
    /// Number of slots as Kafka counts them.
    pub fn entries(&self) -> usize {
        self.len / OFFSET_ENTRY_SIZE
    }
    /// Stored relative offset of slot `n` (`None` past the end).
    pub fn relative_offset(&self, n: usize) -> Option<i32> {
        zero_tail_i32(self.data, self.len, n.checked_mul(OFFSET_ENTRY_SIZE)?)
    }
    /// Slot `n` (`None` past the end).
    pub fn entry(&self, n: usize) -> Option<OffsetPosition> {
        let at = n.checked_mul(OFFSET_ENTRY_SIZE)?;
        Some(OffsetPosition {
            offset: self
                .base_offset
                .wrapping_add(i64::from(self.relative_offset(n)?)),
            position: zero_tail_i32(self.data, self.len, at.checked_add(4)?)?,
        })
    }
    /// All slots.
    pub fn iter(&self) -> impl Iterator<Item = OffsetPosition> + '_ {
        (0..self.entries()).filter_map(move |n| self.entry(n))
    }
    /// Kafka's `OffsetIndex.lookup`: the entry with the greatest offset ≤
    /// `target`, or (base offset, 0).
    pub fn lookup(&self, target: i64) -> OffsetPosition {
        let key = |n: usize| self.entry(n).map_or(self.base_offset, |e| e.offset);
        match largest_lower_bound(self.entries(), 8192 / OFFSET_ENTRY_SIZE, key, target) {
            Some(slot) => self.entry(slot).unwrap_or(OffsetPosition {
                offset: self.base_offset,
                position: 0,
            }),
            None => OffsetPosition {
                offset: self.base_offset,
                position: 0,
            },
        }
    }
    /// Kafka's `OffsetIndex.sanityCheck`.
    pub fn sanity_check(&self) -> Result<(), SanityError> {
        let n = self.entries();
        if n != 0 {
            let last = self.entry(n - 1).map_or(self.base_offset, |e| e.offset);
            if last < self.base_offset {
                return Err(SanityError(format!(
                    "index has non-zero size but the last offset is {last} which is less than the base offset {}",
                    self.base_offset
                )));
            }
        }
        if !self.len.is_multiple_of(OFFSET_ENTRY_SIZE) {
            return Err(SanityError(format!(
                "index is corrupt, found {} bytes which is neither positive nor a multiple of 8",
                self.len
            )));
        }
        Ok(())
    }
    /// Number of leading slots that are real entries: the longest prefix with
    /// strictly increasing offsets, a relative offset of at least 1 (the first
    /// batch of a segment is never indexed, so 0 is padding), and positions
    /// that are non-negative and below `log_len` when given.
    pub fn valid_entries(&self, log_len: Option<u64>) -> usize {
        let mut prev: Option<i64> = None;
        for n in 0..self.entries() {
            let (Some(rel), Some(e)) = (self.relative_offset(n), self.entry(n)) else {
                break;
            };
            if rel < 1 || e.position < 0 {
                return n;
            }
            if log_len.is_some_and(|l| e.position as u64 >= l) {
                return n;
            }
            if prev.is_some_and(|p| e.offset <= p) {
                return n;
            }
            prev = Some(e.offset);
        }
        self.entries()
    }
}

/// A `.timeindex` file.
#[derive(Debug, Clone, Copy)]
pub struct TimeIndex<'a> {
    data: &'a [u8],
    len: usize,
    /// Base offset of the segment (from the file name).
    pub base_offset: i64,
}

impl<'a> TimeIndex<'a> {
    /// A view over the file bytes.
    pub fn new(data: &'a [u8], base_offset: i64) -> Self {
        Self::with_len(data, base_offset, data.len())
    }
    /// A view over a file of `len` bytes of which `data` holds the first
    /// (the rest is zeros, as in [`OffsetIndex::with_len`]).
    pub fn with_len(data: &'a [u8], base_offset: i64, len: usize) -> Self {
        TimeIndex {
            data,
            len: len.max(data.len()),
            base_offset,
        }
    }
    /// A view over [`IndexBytes`].
    pub fn of(b: IndexBytes<'a>, base_offset: i64) -> Self {
        Self::with_len(b.data, base_offset, b.len)
    }
    /// File length.
    pub fn len_bytes(&self) -> usize {
        self.len
    }
    /// Number of slots as Kafka counts them.
    pub fn entries(&self) -> usize {
        self.len / TIME_ENTRY_SIZE
    }
    /// Stored relative offset of slot `n` (`None` past the end).
    pub fn relative_offset(&self, n: usize) -> Option<i32> {
        zero_tail_i32(
            self.data,
            self.len,
            n.checked_mul(TIME_ENTRY_SIZE)?.checked_add(8)?,
        )
    }
    /// Slot `n` (`None` past the end).
    pub fn entry(&self, n: usize) -> Option<TimestampOffset> {
        Some(TimestampOffset {
            timestamp: zero_tail_i64(self.data, self.len, n.checked_mul(TIME_ENTRY_SIZE)?)?,
            offset: self
                .base_offset
                .wrapping_add(i64::from(self.relative_offset(n)?)),
        })
    }
    /// All slots.
    pub fn iter(&self) -> impl Iterator<Item = TimestampOffset> + '_ {
        (0..self.entries()).filter_map(move |n| self.entry(n))
    }
    /// Kafka's `TimeIndex.lookup`: the entry with the greatest timestamp ≤
    /// `target`, or (-1, base offset).
    pub fn lookup(&self, target: i64) -> TimestampOffset {
        let none = TimestampOffset {
            timestamp: -1,
            offset: self.base_offset,
        };
        let key = |n: usize| self.entry(n).map_or(-1, |e| e.timestamp);
        match largest_lower_bound(self.entries(), 8192 / TIME_ENTRY_SIZE, key, target) {
            Some(slot) => self.entry(slot).unwrap_or(none),
            None => none,
        }
    }
    /// Kafka's `TimeIndex.sanityCheck`.
    pub fn sanity_check(&self) -> Result<(), SanityError> {
        let n = self.entries();
        if n != 0 {
            let first = self.entry(0).map_or(-1, |e| e.timestamp);
            let last = self.entry(n - 1).unwrap_or(TimestampOffset {
                timestamp: -1,
                offset: self.base_offset,
            });
            if last.timestamp < first {
                return Err(SanityError(format!(
                    "time index has non-zero size but the last timestamp is {} which is less than the first timestamp {first}",
                    last.timestamp
                )));
            }
            if last.offset < self.base_offset {
                return Err(SanityError(format!(
                    "time index has non-zero size but the last offset is {} which is less than the first offset {}",
                    last.offset, self.base_offset
                )));
            }
        }
        if !self.len.is_multiple_of(TIME_ENTRY_SIZE) {
            return Err(SanityError(format!(
                "time index is corrupt, found {} bytes which is neither positive nor a multiple of 12",
                self.len
            )));
        }
        Ok(())
    }
    /// Number of leading slots that are real entries: strictly increasing
    /// timestamps, non-decreasing offsets, relative offset ≥ 1 from slot 1 on.
    pub fn valid_entries(&self) -> usize {
        let mut prev: Option<TimestampOffset> = None;
        for n in 0..self.entries() {
            let (Some(e), Some(rel)) = (self.entry(n), self.relative_offset(n)) else {
                break;
            };
            if rel < 0 || (n > 0 && rel == 0) {
                return n;
            }
            if n == 0 && e.timestamp == 0 && rel == 0 {
                return 0;
            }
            if let Some(p) = prev {
                if e.timestamp <= p.timestamp || e.offset < p.offset {
                    return n;
                }
            }
            prev = Some(e);
        }
        self.entries()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset_index(entries: &[(i32, i32)], zero_slots: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for (r, p) in entries {
            v.extend_from_slice(&r.to_be_bytes());
            v.extend_from_slice(&p.to_be_bytes());
        }
        v.extend(std::iter::repeat_n(0, zero_slots * 8));
        v
    }

    #[test]
    fn offset_index_basics() {
        let data = offset_index(&[(10, 4096), (20, 8192), (35, 12000)], 4);
        let idx = OffsetIndex::new(&data, 100);
        assert_eq!(idx.entries(), 7);
        assert_eq!(
            idx.entry(1),
            Some(OffsetPosition {
                offset: 120,
                position: 8192
            })
        );
        assert_eq!(idx.entry(7), None);
        assert_eq!(idx.valid_entries(Some(20_000)), 3);
        assert_eq!(idx.valid_entries(Some(9000)), 2);
        assert!(idx.sanity_check().is_ok());
        let clean = offset_index(&[(10, 4096), (20, 8192), (35, 12000)], 0);
        let idx = OffsetIndex::new(&clean, 100);
        assert_eq!(idx.lookup(119).position, 4096);
        assert_eq!(idx.lookup(120).position, 8192);
        assert_eq!(idx.lookup(5).position, 0);
        assert_eq!(idx.lookup(1000).position, 12000);
        let short = [0u8; 9];
        assert!(OffsetIndex::new(&short, 0).sanity_check().is_err());
        let neg = offset_index(&[(-5, 0)], 0);
        assert!(OffsetIndex::new(&neg, 10).sanity_check().is_err());
    }

    #[test]
    fn lookup_matches_plain_binary_search_on_large_sorted_index() {
        let entries: Vec<(i32, i32)> = (1..3000).map(|i| (i * 3, i * 100)).collect();
        let data = offset_index(&entries, 0);
        let idx = OffsetIndex::new(&data, 0);
        for target in [-1i64, 0, 2, 3, 4, 4000, 8000, 8997, 9000, 100_000] {
            let expect = entries
                .iter()
                .rev()
                .find(|(r, _)| (*r as i64) <= target)
                .map_or(0, |e| e.1);
            assert_eq!(idx.lookup(target).position, expect, "target {target}");
        }
    }

    #[test]
    fn time_index_basics() {
        let mut data = Vec::new();
        for (ts, rel) in [(1000i64, 0i32), (2000, 5), (3000, 9)] {
            data.extend_from_slice(&ts.to_be_bytes());
            data.extend_from_slice(&rel.to_be_bytes());
        }
        data.extend(std::iter::repeat_n(0, 24));
        let idx = TimeIndex::new(&data, 50);
        assert_eq!(idx.entries(), 5);
        assert_eq!(idx.valid_entries(), 3);
        assert_eq!(
            idx.entry(2),
            Some(TimestampOffset {
                timestamp: 3000,
                offset: 59
            })
        );
        assert!(
            idx.sanity_check().is_err(),
            "zero tail: last ts 0 < first 1000"
        );
        assert_eq!(TimeIndex::new(&data[..36], 50).lookup(2500).offset, 55);
        assert_eq!(TimeIndex::new(&data[..36], 50).lookup(10).timestamp, -1);
        assert!(TimeIndex::new(&[0u8; 13], 0).sanity_check().is_err());
        assert_eq!(TimeIndex::new(&[0u8; 24], 0).valid_entries(), 0);
    }
}
