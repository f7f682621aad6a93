//! A pure model of Kafka's leader-epoch cache (`LeaderEpochFileCache`).
//!
//! Every replica of a partition whose record format is v2 keeps an ordered list
//! of `(leader epoch, start offset)` entries: the first offset written in each
//! leader epoch. Kafka persists it as the `leader-epoch-checkpoint` file and uses
//! it to answer `OffsetsForLeaderEpoch` requests and to validate fetches that
//! carry a `lastFetchedEpoch`; the follower truncation predictor in
//! [`crate::analysis::truncation`] is built on it.
//!
//! This module mirrors the semantics of
//! `storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java`
//! (Apache Kafka 3.9 / 4.x) without any I/O: the asynchronous and synchronous
//! flushes of the real class only change *when* the file is written, never the
//! in-memory result modelled here.
//!
//! Invariant: the entries are strictly increasing in both epoch and start
//! offset, every epoch and start offset is `>= 0`. Every constructor and
//! mutator keeps it, whatever the input (unsorted, duplicated or negative
//! entries are handled by the same `assign` rule Kafka applies when it loads a
//! checkpoint file, negative ones are rejected instead of throwing).

use crate::model::truncation::{EpochEndOffset, EpochStart, UNDEFINED_EPOCH};

/// `assign` was given a negative epoch or start offset. Kafka throws
/// `IllegalArgumentException` here; the model rejects the entry instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid leader epoch entry (epoch {epoch}, start offset {start_offset})")]
pub struct InvalidEpochEntry {
    /// The rejected epoch.
    pub epoch: i32,
    /// The rejected start offset.
    pub start_offset: i64,
}

/// What an accepted [`EpochCache::assign`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssignOutcome {
    /// The latest entry already has this epoch with a start offset `<=` the
    /// given one (`isUpdateNeeded` false): nothing changed, nothing written.
    Ignored,
    /// The entry was inserted after removing `removed` (newest first).
    Inserted {
        /// Entries removed because their epoch was `>=` the new epoch or their
        /// start offset `>=` the new start offset (newest first).
        removed: Vec<EpochStart>,
        /// Kafka logs a warning (`caused truncation of conflicting entries`)
        /// when more than one entry was removed or the single removed entry's
        /// start offset differs from the new one.
        warned: bool,
    },
}

/// An in-memory leader epoch cache with `LeaderEpochFileCache` semantics.
///
/// Serialises as the list of entries; deserialising applies [`EpochCache::assign`]
/// to every entry in order (like Kafka's constructor does with the checkpoint
/// file), silently dropping invalid entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochCache {
    entries: Vec<EpochStart>,
}

impl From<Vec<EpochStart>> for EpochCache {
    fn from(v: Vec<EpochStart>) -> Self {
        EpochCache::from_checkpoint(v.into_iter().map(|e| (e.epoch, e.start_offset)))
    }
}

impl From<EpochCache> for Vec<EpochStart> {
    fn from(c: EpochCache) -> Self {
        c.entries
    }
}

impl EpochCache {
    /// An empty cache.
    pub fn new() -> Self {
        EpochCache::default()
    }

    /// Builds a cache from `leader-epoch-checkpoint` entries `(epoch, start)`
    /// the way Kafka's `LeaderEpochFileCache` constructor does: `assign` each
    /// entry in file order. Invalid (negative) entries are dropped; use
    /// [`EpochCache::from_checkpoint_checked`] to see them.
    ///
    /// Note this is the raw file content; Kafka repairs it at log load with
    /// [`EpochCache::repair_on_load`].
    pub fn from_checkpoint<I: IntoIterator<Item = (i32, i64)>>(entries: I) -> Self {
        Self::from_checkpoint_checked(entries).0
    }

    /// Like [`EpochCache::from_checkpoint`], also returning the rejected entries.
    pub fn from_checkpoint_checked<I: IntoIterator<Item = (i32, i64)>>(
        entries: I,
    ) -> (Self, Vec<InvalidEpochEntry>) {
        let mut cache = EpochCache::new();
        let mut rejected = Vec::new();
        for (epoch, start) in entries {
            if let Err(e) = cache.assign(epoch, start) {
                rejected.push(e);
            }
        }
        (cache, rejected)
    }

    /// Rebuilds a cache from batch headers `(partition leader epoch, base offset)`
    /// in log order, the way segment recovery does it
    /// (`LogSegment.recover`): a batch's epoch is assigned only if it is `>= 0`
    /// and greater than the latest cached epoch. Batches whose epoch goes
    /// backwards are therefore ignored (an anomaly for a real log).
    pub fn rebuild_from_batches<I: IntoIterator<Item = (i32, i64)>>(batches: I) -> Self {
        let mut cache = EpochCache::new();
        cache.extend_from_recovered_batches(batches);
        cache
    }

    /// Applies the segment-recovery rule of [`EpochCache::rebuild_from_batches`]
    /// to an existing cache (what `LogLoader` does after reading the checkpoint).
    pub fn extend_from_recovered_batches<I: IntoIterator<Item = (i32, i64)>>(
        &mut self,
        batches: I,
    ) {
        for (epoch, base) in batches {
            if epoch < 0 || base < 0 {
                continue;
            }
            let newer = match self.latest_epoch() {
                None => true,
                Some(latest) => epoch > latest,
            };
            if newer {
                // Cannot fail: both values were checked above.
                let _ = self.assign(epoch, base);
            }
        }
    }

    /// Applies `assign(epoch, base)` for every appended v2 batch, as
    /// `UnifiedLog.append` does for leader and follower appends
    /// (`maybeAssignEpochStartOffset`). Unlike recovery this also accepts a
    /// lower epoch, which drops newer entries. Invalid entries are skipped and
    /// returned.
    pub fn apply_appended_batches<I: IntoIterator<Item = (i32, i64)>>(
        &mut self,
        batches: I,
    ) -> Vec<InvalidEpochEntry> {
        let mut rejected = Vec::new();
        for (epoch, base) in batches {
            if let Err(e) = self.assign(epoch, base) {
                rejected.push(e);
            }
        }
        rejected
    }

    /// `LeaderEpochFileCache.assign(epoch, startOffset)`.
    ///
    /// 1. A negative epoch or offset is rejected (Kafka throws).
    /// 2. If the latest entry has the same epoch and a start offset `<=` the
    ///    given one, nothing happens ([`AssignOutcome::Ignored`]). Only the
    ///    latest entry is compared.
    /// 3. Otherwise, walking from the newest entry backwards, entries with
    ///    `epoch >= E` or `start >= S` are removed until the first one that
    ///    satisfies neither; then `(E, S)` is inserted.
    pub fn assign(
        &mut self,
        epoch: i32,
        start_offset: i64,
    ) -> Result<AssignOutcome, InvalidEpochEntry> {
        if epoch < 0 || start_offset < 0 {
            return Err(InvalidEpochEntry {
                epoch,
                start_offset,
            });
        }
        if let Some(last) = self.entries.last() {
            if last.epoch == epoch && start_offset >= last.start_offset {
                return Ok(AssignOutcome::Ignored);
            }
        }
        let mut removed = Vec::new();
        while let Some(last) = self.entries.last() {
            if last.epoch >= epoch || last.start_offset >= start_offset {
                removed.push(*last);
                self.entries.pop();
            } else {
                break;
            }
        }
        self.entries.push(EpochStart::new(epoch, start_offset));
        let warned =
            removed.len() > 1 || (removed.len() == 1 && removed[0].start_offset != start_offset);
        Ok(AssignOutcome::Inserted { removed, warned })
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[EpochStart] {
        &self.entries
    }

    /// Whether `e` is one of the entries (a binary search: epochs and start
    /// offsets increase through the cache).
    pub fn contains(&self, e: &EpochStart) -> bool {
        self.entries
            .binary_search_by_key(&e.epoch, |x| x.epoch)
            .is_ok_and(|i| self.entries.get(i) == Some(e))
    }

    /// The entries as `(epoch, start)` pairs, oldest first.
    pub fn pairs(&self) -> Vec<(i32, i64)> {
        self.entries
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the cache has no entry (`!nonEmpty`).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `latestEntry()`: the newest entry.
    pub fn latest_entry(&self) -> Option<EpochStart> {
        self.entries.last().copied()
    }

    /// `latestEpoch()`: the epoch of the newest entry.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    /// True when the cache is empty or its latest epoch is below `epoch`
    /// (so `assign(epoch, ..)` would append rather than rewrite history).
    pub fn latest_epoch_is_below(&self, epoch: i32) -> bool {
        match self.latest_epoch() {
            None => true,
            Some(latest) => latest < epoch,
        }
    }

    /// `earliestEntry()`: the oldest entry.
    pub fn earliest_entry(&self) -> Option<EpochStart> {
        self.entries.first().copied()
    }

    /// `previousEpoch()`: the epoch of the entry just before the latest one.
    pub fn previous_epoch(&self) -> Option<i32> {
        let n = self.entries.len();
        if n >= 2 {
            Some(self.entries[n - 2].epoch)
        } else {
            None
        }
    }

    /// `previousEntry(epoch)`: the greatest entry with an epoch `< epoch`.
    pub fn previous_entry(&self, epoch: i32) -> Option<EpochStart> {
        self.entries.iter().rev().find(|e| e.epoch < epoch).copied()
    }

    /// `previousEpoch(epoch)`: the greatest cached epoch `< epoch`.
    pub fn previous_epoch_before(&self, epoch: i32) -> Option<i32> {
        self.previous_entry(epoch).map(|e| e.epoch)
    }

    /// `nextEpoch(epoch)`: the smallest cached epoch `> epoch`.
    pub fn next_epoch(&self, epoch: i32) -> Option<i32> {
        self.entries
            .iter()
            .find(|e| e.epoch > epoch)
            .map(|e| e.epoch)
    }

    /// `epochEntry(epoch)`: the entry of exactly this epoch.
    pub fn epoch_entry(&self, epoch: i32) -> Option<EpochStart> {
        self.entries.iter().find(|e| e.epoch == epoch).copied()
    }

    /// `epochForOffset(offset)`: scanning oldest first, an entry starting
    /// exactly at `offset` gives its epoch; the first entry starting after
    /// `offset` gives the previous entry's epoch (none if there is none);
    /// past the last entry the latest epoch. The log end offset is not
    /// consulted.
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        let mut previous = None;
        for e in &self.entries {
            if e.start_offset == offset {
                return Some(e.epoch);
            }
            if e.start_offset > offset {
                return previous;
            }
            previous = Some(e.epoch);
        }
        previous
    }

    /// `endOffsetFor(requestedEpoch, logEndOffset)`, every branch in Kafka's order:
    ///
    /// 1. `requested == -1` → `(U, U)`.
    /// 2. cache non-empty and `requested == latest epoch` → `(requested, log_end_offset)`.
    /// 3. no entry with an epoch `> requested` (empty cache or above the
    ///    latest) → `(U, U)`.
    /// 4. no entry with an epoch `<= requested` → `(requested, start of the first entry)`
    ///    (the requested epoch is echoed; Kafka's Javadoc says "undefined", the code does this).
    /// 5. otherwise `(greatest epoch <= requested, start of the smallest epoch > requested)`.
    pub fn end_offset_for(&self, requested_epoch: i32, log_end_offset: i64) -> EpochEndOffset {
        if requested_epoch == UNDEFINED_EPOCH {
            return EpochEndOffset::UNDEFINED;
        }
        if self.latest_epoch() == Some(requested_epoch) {
            return EpochEndOffset::new(requested_epoch, log_end_offset);
        }
        let Some(higher) = self.entries.iter().find(|e| e.epoch > requested_epoch) else {
            return EpochEndOffset::UNDEFINED;
        };
        match self
            .entries
            .iter()
            .rev()
            .find(|e| e.epoch <= requested_epoch)
        {
            None => EpochEndOffset::new(requested_epoch, higher.start_offset),
            Some(floor) => EpochEndOffset::new(floor.epoch, higher.start_offset),
        }
    }

    /// `UnifiedLog.endOffsetForEpoch`: [`EpochCache::end_offset_for`] with a
    /// result whose offset is undefined turned into `None`. (A log without a
    /// cache — record format below v2 — is modelled by an empty cache, which
    /// also gives `None` for every epoch.)
    pub fn end_offset_for_epoch(
        &self,
        requested_epoch: i32,
        log_end_offset: i64,
    ) -> Option<EpochEndOffset> {
        let r = self.end_offset_for(requested_epoch, log_end_offset);
        if r.has_undefined_offset() {
            None
        } else {
            Some(r)
        }
    }

    /// `truncateFromEnd(endOffset)`: if `end_offset >= 0` and the latest entry
    /// starts at or after it, remove every entry with `start >= end_offset`
    /// (newest first). Returns the removed entries, newest first. A negative
    /// offset (including `-1`, undefined) is a no-op.
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Vec<EpochStart> {
        let mut removed = Vec::new();
        if end_offset < 0 {
            return removed;
        }
        match self.entries.last() {
            Some(last) if last.start_offset >= end_offset => {}
            _ => return removed,
        }
        while let Some(last) = self.entries.last() {
            if last.start_offset >= end_offset {
                removed.push(*last);
                self.entries.pop();
            } else {
                break;
            }
        }
        removed
    }

    /// `truncateFromStart(startOffset)`: remove, oldest first, every entry with
    /// `start <= start_offset`; if any was removed, re-insert the last removed
    /// epoch with start `start_offset`. So the epoch covering `start_offset`
    /// survives, starting at `start_offset`. Returns the removed entries,
    /// oldest first. A negative offset (including `-1`) removes nothing.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> Vec<EpochStart> {
        let n = self
            .entries
            .iter()
            .take_while(|e| e.start_offset <= start_offset)
            .count();
        if n == 0 {
            return Vec::new();
        }
        let removed: Vec<EpochStart> = self.entries.drain(..n).collect();
        let last = removed[n - 1];
        self.entries
            .insert(0, EpochStart::new(last.epoch, start_offset));
        removed
    }

    /// `clear()` / `clearAndFlush()`: remove every entry
    /// (`truncateFullyAndStartAt`, record format downgrade).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// `epochEntriesInRange(start, end)`: a copy truncated from the start at
    /// `start` (only when `start >= 0`) and from the end at `end`.
    pub fn entries_in_range(&self, start_offset: i64, end_offset: i64) -> Vec<EpochStart> {
        let mut copy = self.clone();
        if start_offset >= 0 {
            copy.truncate_from_start(start_offset);
        }
        copy.truncate_from_end(end_offset);
        copy.entries
    }

    /// The repair `LogLoader` applies when a log is loaded: `truncateFromEnd`
    /// at the recovered log end offset, then `truncateFromStart` at the
    /// checkpointed log start offset. Removes stale entries left by the
    /// asynchronous flushes of earlier truncations, and also a trailing
    /// `(E, LEO)` entry of a leader that never wrote in epoch `E`.
    /// Returns `(removed from the end, removed from the start)`.
    pub fn repair_on_load(
        &mut self,
        log_end_offset: i64,
        log_start_offset: i64,
    ) -> (Vec<EpochStart>, Vec<EpochStart>) {
        let end = self.truncate_from_end(log_end_offset);
        let start = self.truncate_from_start(log_start_offset);
        (end, start)
    }
}

impl std::fmt::Display for EpochCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[")?;
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "({},{})", e.epoch, e.start_offset)?;
        }
        write!(f, "]")
    }
}

impl EpochCache {
    /// The cache as [`Display`](std::fmt::Display) writes it, its entries
    /// past the first [`LISTED`] counted rather than listed: for messages,
    /// whose size must not grow with a checkpoint.
    pub fn brief(&self) -> impl std::fmt::Display + '_ {
        struct Brief<'a>(&'a [EpochStart]);
        impl std::fmt::Display for Brief<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "[")?;
                for (i, e) in self.0.iter().take(LISTED).enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "({},{})", e.epoch, e.start_offset)?;
                }
                if self.0.len() > LISTED {
                    write!(f, ",… {} more", self.0.len() - LISTED)?;
                }
                write!(f, "]")
            }
        }
        Brief(&self.entries)
    }
}

/// Most items of a list written out in a message ([`brief`],
/// [`EpochCache::brief`]); the rest are counted.
pub const LISTED: usize = 10;

/// `items` as `{:?}` writes a slice, the items past the first [`LISTED`]
/// counted rather than listed (`[a, b, …, … 5 more]`): for messages, whose
/// size must not grow with a checkpoint.
pub fn brief<T: std::fmt::Debug>(items: &[T]) -> impl std::fmt::Display + '_ {
    struct Brief<'a, T>(&'a [T]);
    impl<T: std::fmt::Debug> std::fmt::Display for Brief<'_, T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            if self.0.len() <= LISTED {
                return write!(f, "{:?}", self.0);
            }
            write!(f, "[")?;
            for e in self.0.iter().take(LISTED) {
                write!(f, "{e:?}, ")?;
            }
            write!(f, "… {} more]", self.0.len() - LISTED)
        }
    }
    Brief(items)
}
