//! What `klf dump`'s engine hands its renderers: the files to dump (their
//! kind from their name, their partition), the decoder a file's records
//! are read with, and one file opened (its bytes, its segment, the index
//! beside it, a checkpoint's text to read again from its start). The engine
//! (`engine::dump`) fills these in; the renderers (`render::dump`) read
//! them and open nothing themselves.

use std::io::{self, BufRead};

use crate::format::batch::SegmentSource;
use crate::format::checkpoint::OffsetCheckpointKind;
use crate::format::index::IndexBytes;

/// Files that are not segment files: dumped by the json and table formats,
/// skipped (with a note) by the kafka format, which kafka-dump-log has no
/// output for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// `replication-offset-checkpoint`, `recovery-point-offset-checkpoint`,
    /// `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`.
    OffsetCheckpoint(OffsetCheckpointKind),
    /// `leader-epoch-checkpoint`.
    LeaderEpochCheckpoint,
    /// `meta.properties`.
    MetaProperties,
    /// `partition.metadata`.
    PartitionMetadata,
    /// `quorum-state` (KRaft).
    QuorumState,
    /// `.kafka_cleanshutdown`.
    CleanShutdown,
}

impl TextKind {
    /// Whether the file is a checkpoint: read a line at a time, never held
    /// whole (the others are read whole, up to a cap).
    pub fn is_checkpoint(self) -> bool {
        matches!(
            self,
            TextKind::OffsetCheckpoint(_) | TextKind::LeaderEpochCheckpoint
        )
    }
}

/// What a file is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.log` or KRaft `.checkpoint`.
    Log,
    /// `.index`.
    Index,
    /// `.timeindex`.
    TimeIndex,
    /// `.txnindex` or producer `.snapshot`.
    Aux,
    /// A checkpoint, properties or state file ([`TextKind`]).
    Text(TextKind),
    /// Any other suffix.
    Unknown,
    /// No `.` in the name.
    NoSuffix,
}

/// One file to dump.
#[derive(Debug, Clone)]
pub struct Item {
    /// The path as printed (and opened).
    pub path: String,
    /// The file's kind, from its name.
    pub kind: Kind,
    /// Topic and partition of the partition directory holding the file, if
    /// its parent directory is named like one.
    pub topic_partition: Option<(String, i32)>,
    /// Whether the file was named as a PATH (or in `--files`), not found in
    /// a directory: a selection (`--offsets`, ...) leaves out the files of
    /// a directory that hold no batches, never a file named.
    pub named: bool,
}

impl Item {
    /// The topic, if known.
    pub fn topic(&self) -> Option<&str> {
        self.topic_partition.as_ref().map(|(t, _)| t.as_str())
    }
}

/// The decoders of internal topics' records, selectable by option in
/// kafka-dump-log's precedence (and chosen by topic in json and table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoderKind {
    /// `__consumer_offsets` (`--offsets-decoder`).
    Offsets,
    /// `__transaction_state` (`--transaction-log-decoder`).
    TransactionLog,
    /// `__cluster_metadata` (`--cluster-metadata-decoder`).
    ClusterMetadata,
    /// `__share_group_state` (`--share-group-state-decoder`).
    ShareGroupState,
    /// `__remote_log_metadata` (`--remote-log-metadata-decoder`).
    RemoteLogMetadata,
}

impl DecoderKind {
    /// The name in JSON output (`decoder` of a `file` object).
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::Offsets => "offsets",
            DecoderKind::TransactionLog => "transaction_log",
            DecoderKind::ClusterMetadata => "cluster_metadata",
            DecoderKind::ShareGroupState => "share_group_state",
            DecoderKind::RemoteLogMetadata => "remote_log_metadata",
        }
    }

    /// The decoder of an internal topic's records, by topic name.
    pub fn for_topic(topic: &str) -> Option<DecoderKind> {
        match topic {
            "__consumer_offsets" => Some(DecoderKind::Offsets),
            "__transaction_state" => Some(DecoderKind::TransactionLog),
            "__cluster_metadata" => Some(DecoderKind::ClusterMetadata),
            "__share_group_state" => Some(DecoderKind::ShareGroupState),
            "__remote_log_metadata" => Some(DecoderKind::RemoteLogMetadata),
            _ => None,
        }
    }
}

/// A file read from its start each time it is asked for: a checkpoint,
/// read a line at a time (once for its summary, once for its entries,
/// once more for its problems), never held whole.
pub trait Reread {
    /// The file's text from its first byte. The first call opens it; an
    /// error is the machine's (or the file changed), never the data's.
    fn reread(&mut self) -> io::Result<&mut dyn BufRead>;
}

/// Text in memory, read again from its start each time.
impl Reread for io::Cursor<Vec<u8>> {
    fn reread(&mut self) -> io::Result<&mut dyn BufRead> {
        self.set_position(0);
        Ok(self)
    }
}

/// One file as its renderer reads it, opened by the engine.
pub struct Opened<'a> {
    /// The file's kind.
    pub kind: Kind,
    /// The file's bytes: an index up to the end of its data (a sparse
    /// file's hole is not held), a properties or state file whole; empty
    /// for a `.log` (read through `log`), a checkpoint (read through
    /// `lines`) and a file over its cap.
    pub data: &'a [u8],
    /// The file's size (an index's bytes past `data` are zeros).
    pub size: u64,
    /// The segment: the file itself (a `.log` or KRaft `.checkpoint`), or
    /// the `.log` of an index's base offset; `None` for other kinds.
    pub log: Option<&'a dyn SegmentSource>,
    /// The `.index` beside a `.timeindex` (`None` when there is none).
    pub sibling_index: Option<IndexBytes<'a>>,
    /// A checkpoint's text.
    pub lines: Option<Box<dyn Reread + 'a>>,
}

const EMPTY: [u8; 0] = [];

impl Opened<'_> {
    /// The file itself as index bytes: `data`, then zeros to `size`.
    pub fn index(&self) -> IndexBytes<'_> {
        IndexBytes {
            data: self.data,
            len: usize::try_from(self.size).unwrap_or(usize::MAX),
        }
    }

    /// The segment (none: no bytes).
    pub fn log(&self) -> &dyn SegmentSource {
        match self.log {
            Some(l) => l,
            None => &EMPTY,
        }
    }

    /// The segment's length, if there is one.
    pub fn log_len(&self) -> Option<u64> {
        self.log.map(SegmentSource::len)
    }
}
