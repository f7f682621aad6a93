//! What discovery finds under the paths an operator passes: brokers (log
//! directories with their checkpoints), replicas (partition directories with
//! their segments, snapshots and checkpoints), and a diagnostic for every
//! oddity. Plain data: `capture::discover` fills it in, the analyses and
//! the engine read it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::format::checkpoint::{
    Checkpoint, CleanShutdown, EpochEntry, OffsetCheckpointKind, OffsetEntry,
};
use crate::format::kafka_log::LogFileKind;
use crate::format::names::{PendingState, ReplicaKind, SegmentFileKind};
use crate::format::props::{MetaProperties, PartitionMetadata, Properties, PropsError};

/// How serious a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Worth knowing, normal in a healthy capture (an empty index of a small
    /// segment, a folder that was left out on purpose).
    Note,
    /// Something is missing, broken, or not what Kafka would write.
    Warning,
}

/// One finding about one path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// The file or directory concerned.
    pub path: PathBuf,
    /// Note or warning.
    pub level: Level,
    /// What was found and what it means (a fixed text is not copied:
    /// a capture can hold a diagnostic per partition directory).
    pub message: std::borrow::Cow<'static, str>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Note => "note",
            Level::Warning => "warning",
        };
        write!(f, "{level}: {}: {}", self.path.display(), self.message)
    }
}

/// Where a broker's node id came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeIdSource {
    /// `meta.properties`, read with Kafka's rules.
    MetaProperties,
    /// `node.id` or `broker.id` of a `meta.properties` Kafka would reject.
    MetaPropertiesHint,
    /// The folder name (`broker-3` → 3).
    FolderName,
    /// Not known.
    Unknown,
}

/// A checkpoint file that was read, with what could be parsed and its problems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointFile<T> {
    /// The file.
    pub path: PathBuf,
    /// Lenient parse: every readable entry plus every problem;
    /// [`Checkpoint::kafka_accepts`] says whether Kafka would read it.
    pub checkpoint: Checkpoint<T>,
}

/// The four offset checkpoints of a log directory root; `None` when the file
/// is absent or could not be read (a [`Diagnostic`] says which).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrokerCheckpoints {
    /// `replication-offset-checkpoint` (high watermarks).
    pub replication_offset: Option<CheckpointFile<OffsetEntry>>,
    /// `recovery-point-offset-checkpoint`.
    pub recovery_point: Option<CheckpointFile<OffsetEntry>>,
    /// `log-start-offset-checkpoint`.
    pub log_start_offset: Option<CheckpointFile<OffsetEntry>>,
    /// `cleaner-offset-checkpoint`.
    pub cleaner_offset: Option<CheckpointFile<OffsetEntry>>,
}

impl BrokerCheckpoints {
    /// The checkpoint of the given kind, if it was read.
    pub fn get(&self, kind: OffsetCheckpointKind) -> Option<&CheckpointFile<OffsetEntry>> {
        match kind {
            OffsetCheckpointKind::ReplicationOffset => self.replication_offset.as_ref(),
            OffsetCheckpointKind::RecoveryPoint => self.recovery_point.as_ref(),
            OffsetCheckpointKind::LogStartOffset => self.log_start_offset.as_ref(),
            OffsetCheckpointKind::CleanerOffset => self.cleaner_offset.as_ref(),
        }
    }

    /// The slot of the given kind, to fill in.
    pub fn slot(&mut self, kind: OffsetCheckpointKind) -> &mut Option<CheckpointFile<OffsetEntry>> {
        match kind {
            OffsetCheckpointKind::ReplicationOffset => &mut self.replication_offset,
            OffsetCheckpointKind::RecoveryPoint => &mut self.recovery_point,
            OffsetCheckpointKind::LogStartOffset => &mut self.log_start_offset,
            OffsetCheckpointKind::CleanerOffset => &mut self.cleaner_offset,
        }
    }

    /// The offset the checkpoint of `kind` lists for a partition.
    pub fn offset_of(
        &self,
        kind: OffsetCheckpointKind,
        topic: &str,
        partition: i32,
    ) -> Option<i64> {
        self.get(kind)
            .and_then(|f| f.checkpoint.offset_of(topic, partition))
    }
}

/// One broker log directory (a broker with several `log.dirs` appears once
/// per directory, with the same node id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// Node id (`node.id`, else `broker.id`, else from the folder name).
    pub node_id: Option<i32>,
    /// Where [`Broker::node_id`] came from.
    pub node_id_source: NodeIdSource,
    /// The log directory.
    pub path: PathBuf,
    /// `meta.properties` read with Kafka's rules; `None` when absent or unreadable.
    pub meta: Option<Result<MetaProperties, PropsError>>,
    /// The properties of `meta.properties` as written, when the file could be read.
    pub meta_raw: Option<Properties>,
    /// The offset checkpoints of the directory root.
    pub checkpoints: BrokerCheckpoints,
    /// `.kafka_cleanshutdown`, if present (Kafka then skips log recovery).
    pub clean_shutdown: Option<CleanShutdown>,
    /// `bootstrap.checkpoint`, if present (KRaft format-time records).
    pub bootstrap_checkpoint: Option<PathBuf>,
    /// `*.tmp` files in the root: a checkpoint or properties write not yet
    /// renamed into place (broker stopped, or capture taken, mid-write).
    pub temp_files: Vec<PathBuf>,
    /// True when only some partition directories of this log directory were
    /// asked for (a partition directory was passed, not the log directory).
    pub partial: bool,
}

/// The files of one segment (same base offset). Any may be missing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SegmentFiles {
    /// Base offset from the file names.
    pub base_offset: i64,
    /// `.log`.
    pub log: Option<PathBuf>,
    /// `.index`.
    pub index: Option<PathBuf>,
    /// `.timeindex`.
    pub timeindex: Option<PathBuf>,
    /// `.txnindex`.
    pub txnindex: Option<PathBuf>,
    /// Size of the `.log` when the capture was discovered (`None`: not
    /// known).
    pub log_len: Option<u64>,
}

/// A producer state snapshot file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SnapshotFile {
    /// The offset in the name (log end offset when taken, exclusive).
    pub offset: i64,
    /// The file.
    pub path: PathBuf,
}

/// A KRaft snapshot (`<end offset>-<epoch>.checkpoint`) in `__cluster_metadata-0`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct KraftSnapshotFile {
    /// End offset (exclusive) covered by the snapshot.
    pub end_offset: i64,
    /// Epoch of the snapshot.
    pub epoch: i32,
    /// `.part` or `.deleted`, if the snapshot is not complete or is going away.
    pub pending: Option<PendingState>,
    /// The file.
    pub path: PathBuf,
}

/// A file with a transitional suffix (`.deleted`, `.cleaned`, `.swap`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PendingFile {
    /// Offset in the name.
    pub offset: i64,
    /// Which file of the segment (or snapshot).
    pub kind: SegmentFileKind,
    /// The suffix.
    pub state: PendingState,
    /// The file.
    pub path: PathBuf,
}

/// One replica: a partition directory on one broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    /// Topic (from the directory name).
    pub topic: String,
    /// Partition (from the directory name).
    pub partition: i32,
    /// Node id of the broker holding it, when known.
    pub node_id: Option<i32>,
    /// The log directory the partition directory is in.
    pub log_dir: PathBuf,
    /// The partition directory.
    pub dir: PathBuf,
    /// Live, delete, future, stray or metadata.
    pub kind: ReplicaKind,
    /// Segments by base offset, ascending.
    pub segments: Vec<SegmentFiles>,
    /// Producer state snapshots by offset, ascending.
    pub snapshots: Vec<SnapshotFile>,
    /// Files with `.deleted`, `.cleaned` or `.swap` suffixes.
    pub pending: Vec<PendingFile>,
    /// KRaft snapshots (metadata log only).
    pub kraft_snapshots: Vec<KraftSnapshotFile>,
    /// `quorum-state` (metadata log only).
    pub quorum_state: Option<PathBuf>,
    /// `leader-epoch-checkpoint`, leniently parsed; `None` when absent or unreadable.
    pub leader_epoch_checkpoint: Option<Box<CheckpointFile<EpochEntry>>>,
    /// `partition.metadata`; `None` when absent or unreadable.
    pub partition_metadata: Option<Box<Result<PartitionMetadata, PropsError>>>,
    /// High watermark from the log directory's `replication-offset-checkpoint`.
    pub high_watermark: Option<i64>,
    /// From `log-start-offset-checkpoint`. Kafka lists only partitions whose
    /// start is above their first segment's base offset; when absent, Kafka
    /// uses that base offset.
    pub log_start_offset: Option<i64>,
    /// From `recovery-point-offset-checkpoint`.
    pub recovery_point: Option<i64>,
    /// From `cleaner-offset-checkpoint` (compacted topics).
    pub cleaner_offset: Option<i64>,
    /// Files discovery did not recognise (each also reported).
    pub other_files: Vec<PathBuf>,
}

/// Everything found under the given paths.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Capture {
    /// Broker log directories, sorted by node id (unknown last), then path.
    pub brokers: Vec<Broker>,
    /// Live replicas by topic-partition; each list sorted by node id, then directory.
    pub partitions: BTreeMap<(String, i32), Vec<Replica>>,
    /// `-delete`, `-future` and `-stray` directories: reported, not live replicas.
    pub set_aside: Vec<Replica>,
    /// `__cluster_metadata-0` directories, one per broker or controller that has one.
    pub metadata_logs: Vec<Replica>,
    /// Folders holding another capture that were not read (e.g. `after/`).
    pub excluded: Vec<PathBuf>,
    /// Notes and warnings, sorted by path.
    pub warnings: Vec<Diagnostic>,
    /// Files and directories whose read failed (the machine's failure, not
    /// the data's): what depends on them is not inferred from (see
    /// [`Capture::unreadable_for`]).
    pub unreadable: Vec<PathBuf>,
    /// Files left unread because they are over one of klf's caps (a
    /// properties file larger than any Kafka writes, a checkpoint with more
    /// entries or a longer line than klf reads): each is a warning, and
    /// read as a file whose content Kafka could not use.
    pub refused: Vec<PathBuf>,
    /// Kafka's own log files (`server.log`, `controller.log`,
    /// `state-change.log`, rotated and gzip ones too) found beside the
    /// nodes' log directories or given with `--logs`, sorted by node and
    /// path.
    pub logs: Vec<LogFile>,
}

/// One of a node's Kafka log files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogFile {
    /// The node that wrote it, when known (a log directory's node, a node
    /// folder's, or the one given with `--logs NODE=PATH`).
    pub node_id: Option<i32>,
    /// The file.
    pub path: PathBuf,
    /// Which log it is.
    pub kind: LogFileKind,
    /// gzip compressed (`….gz`).
    pub gzip: bool,
    /// Given with `--logs`, not found by discovery.
    pub given: bool,
}

impl Capture {
    /// A file or directory whose read failed and that `r`'s analysis needs:
    /// in its partition directory, or a checkpoint of its log directory (or
    /// one of those directories itself).
    pub fn unreadable_for(&self, r: &Replica) -> Option<&Path> {
        self.unreadable
            .iter()
            .find(|p| {
                let parent = p.parent();
                parent == Some(r.dir.as_path())
                    || parent == Some(r.log_dir.as_path())
                    || **p == r.dir
                    || **p == r.log_dir
            })
            .map(PathBuf::as_path)
    }

    /// The `meta.properties` versions of the brokers whose file Kafka
    /// reads: 0 (ZooKeeper mode) and 1 (KRaft).
    pub fn meta_versions(&self) -> BTreeSet<i32> {
        self.brokers
            .iter()
            .filter_map(|b| match &b.meta {
                Some(Ok(m)) => Some(m.version),
                _ => None,
            })
            .collect()
    }

    /// Node ids of the brokers found, sorted, without duplicates.
    pub fn node_ids(&self) -> Vec<i32> {
        let set: BTreeSet<i32> = self.brokers.iter().filter_map(|b| b.node_id).collect();
        set.into_iter().collect()
    }

    /// The live replicas of one partition (empty if none).
    pub fn replicas(&self, topic: &str, partition: i32) -> &[Replica] {
        self.partitions
            .get(&(topic.to_owned(), partition))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Warnings only (no notes).
    pub fn warnings_only(&self) -> impl Iterator<Item = &Diagnostic> {
        self.warnings.iter().filter(|d| d.level == Level::Warning)
    }
}

/// An archive read into memory and mounted under its virtual root.
#[derive(Debug, Clone)]
pub struct ArchiveMount {
    /// What to read: the virtual root (`x.tar.gz!`), or the one folder it
    /// holds (a tar of one folder, `tar -czf c.tar.gz capture/`).
    pub root: PathBuf,
    /// How the tar was compressed.
    pub compression: ArchiveCompression,
    /// Regular files held.
    pub files: usize,
    /// Bytes of file content held in memory.
    pub bytes: u64,
    /// The cap that applied.
    pub limit: u64,
    /// Entries left out, with why.
    pub skipped: Vec<(String, String)>,
}

/// How an archive was compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveCompression {
    /// A plain tar.
    None,
    /// A gzip tar.
    Gzip,
    /// A zstd tar.
    Zstd,
}

/// A digest mounted under its virtual root.
#[derive(Debug, Clone)]
pub struct DigestMount {
    /// What to read: the virtual root (`node-3.klfd!`), or the one node
    /// folder it holds when that root is not a log directory itself.
    pub root: PathBuf,
    /// Files listed (shipped, summarised or listed).
    pub files: usize,
    /// Segments summarised.
    pub segments: usize,
    /// Bytes of the node's segments, as the digest records them (0 when
    /// it does not).
    pub segment_bytes: u64,
    /// Problems met on the node while the digest was made: path, message.
    pub notes: Vec<(PathBuf, String)>,
}
