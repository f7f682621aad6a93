//! What the rules read of a replica checked on its own (the finding model
//! itself is [`crate::model::check`]).

use std::path::{Path, PathBuf};

use crate::analysis::timeline::EpochSpans;
use crate::model::check::{Finding, Location};
use crate::model::{BatchSummary, ReplicaLog};

/// `(base offset, last offset, leader epoch, crc)` of a batch.
pub type BatchKey = (i64, i64, i32, u32);

/// Where a batch is: the index of its file in [`ReplicaResult::files`] and
/// its byte position there.
pub type BatchPlace = (usize, u64);

/// A batch's header and where it is.
#[derive(Debug, Clone)]
pub struct BatchAt {
    /// Its header.
    pub summary: BatchSummary,
    /// Its file and position.
    pub place: BatchPlace,
}

/// Finds where the batch holding an offset is (or, with none holding it,
/// the next batch), reading as little of the replica's files as that takes.
pub type Locator = std::sync::Arc<dyn Fn(i64) -> Option<BatchPlace> + Send + Sync>;

/// One replica after its own checks: what the other rules read of it. Its
/// batches were read as a stream and are not kept: what the rules need of
/// them is summed up here (epochs, counts, the first batch of each epoch),
/// and [`ReplicaResult::locate`] finds any other batch again.
#[derive(Clone)]
pub struct ReplicaResult {
    /// Findings of its own checks.
    pub findings: Vec<Finding>,
    /// Its offsets and checkpoint as the analyses see them (its `batches`
    /// are left empty).
    pub log: ReplicaLog,
    /// Its epochs as the batches show them, and where they go backwards.
    pub spans: EpochSpans,
    /// Where the first batch of each span is (one per `spans.spans`).
    pub span_starts: Vec<BatchPlace>,
    /// The first batch of each epoch that goes backwards: (offset, epoch,
    /// where).
    pub regressions: Vec<(i64, i32, BatchPlace)>,
    /// Batches read.
    pub batches: u64,
    /// The segment files read.
    pub files: Vec<PathBuf>,
    /// Segments read.
    pub segments: u64,
    /// Bytes read.
    pub bytes: u64,
    /// `cleaner-offset-checkpoint` value: below it the log was compacted.
    pub cleaned_to: Option<i64>,
    /// Finds a batch of this replica by offset.
    pub locate: Locator,
    /// A read of one of its files failed (the machine's failure, a
    /// `file-unreadable` finding): nothing else is inferred from it, and
    /// the cross-replica rules leave it out.
    pub unreadable: bool,
}

impl std::fmt::Debug for ReplicaResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplicaResult")
            .field("broker", &self.log.broker)
            .field("findings", &self.findings.len())
            .field("batches", &self.batches)
            .field("segments", &self.segments)
            .finish()
    }
}

impl ReplicaResult {
    /// `base` with the offset, and the file and position of the batch
    /// holding it (or the next batch).
    pub fn loc_of_offset(&self, base: &Location, offset: i64) -> Location {
        let mut l = base.clone();
        l.offset = Some(offset);
        if let Some(place) = (self.locate)(offset) {
            self.place(&mut l, place);
        }
        l
    }

    /// Sets `l`'s file and position to `place`.
    pub fn place(&self, l: &mut Location, (file, position): BatchPlace) {
        l.file = self.files.get(file).map(|p| display(p));
        l.position = Some(position);
    }
}

/// A path as a finding names it.
pub fn display(p: &Path) -> String {
    p.display().to_string()
}

/// One replica checked on its own, and the partition it belongs to (`None`
/// for a metadata log).
pub struct Checked<'a> {
    /// Topic of the replica.
    pub topic: &'a str,
    /// Partition of the replica.
    pub partition: i32,
    /// Its broker id.
    pub broker: i32,
    /// The data partition it is a replica of (`None`: a metadata log).
    pub partition_key: Option<(String, i32)>,
    /// What its own checks found and read.
    pub result: ReplicaResult,
}
