//! Telling a file's kind from its name and opening what its dump reads:
//! the file, and for an index the `.log` (and `.index`) of its base
//! offset, for a `.log` dumped with a selection its indexes, all
//! read-only.

use std::io;
use std::path::{Path, PathBuf};

use crate::capture::mmap::FileBytes;
use crate::capture::segment::SegmentFile;
use crate::capture::vfs;
use crate::format::batch::SegmentSource;
use crate::format::checkpoint::{
    OffsetCheckpointKind, CLEAN_SHUTDOWN_FILE, LEADER_EPOCH_CHECKPOINT_FILE,
};
use crate::format::index::IndexBytes;
use crate::format::names::{base_offset_of, parse_remote_segment_name};
use crate::format::props::{MAX_PROPERTIES_BYTES, META_PROPERTIES_FILE, PARTITION_METADATA_FILE};
use crate::model::dump::{Kind, Opened, Reread, TextKind};

use super::meter::Metered;

/// Name of the KRaft quorum state file in `__cluster_metadata-0`.
pub const QUORUM_STATE_FILE: &str = "quorum-state";

/// Name of the bootstrap metadata snapshot in a log directory root.
pub const BOOTSTRAP_CHECKPOINT_FILE: &str = "bootstrap.checkpoint";

/// The kind of a checkpoint, properties or state file called `name`, if
/// it is one.
pub fn text_kind(name: &str) -> Option<TextKind> {
    if let Some(k) = OffsetCheckpointKind::from_file_name(name) {
        return Some(TextKind::OffsetCheckpoint(k));
    }
    match name {
        LEADER_EPOCH_CHECKPOINT_FILE => Some(TextKind::LeaderEpochCheckpoint),
        META_PROPERTIES_FILE => Some(TextKind::MetaProperties),
        PARTITION_METADATA_FILE => Some(TextKind::PartitionMetadata),
        QUORUM_STATE_FILE => Some(TextKind::QuorumState),
        CLEAN_SHUTDOWN_FILE => Some(TextKind::CleanShutdown),
        // a remote segment's copy of the leader-epoch checkpoint
        // (`<offset>-<segment id>.leader_epoch_checkpoint`)
        _ if parse_remote_segment_name(name)
            .is_some_and(|r| r.suffix == "leader_epoch_checkpoint") =>
        {
            Some(TextKind::LeaderEpochCheckpoint)
        }
        _ => None,
    }
}

/// Kind of a file name, by the text after its last `.` (as kafka-dump-log).
pub fn kind_of(name: &str) -> Kind {
    match name.rfind('.').map(|i| &name[i..]) {
        None => Kind::NoSuffix,
        Some(".log") | Some(".checkpoint") => Kind::Log,
        Some(".index") => Kind::Index,
        Some(".timeindex") => Kind::TimeIndex,
        Some(".snapshot") | Some(".txnindex") => Kind::Aux,
        Some(_) => Kind::Unknown,
    }
}

/// Kind of a file name: a [`TextKind`] by its exact name, else by suffix
/// ([`kind_of`]).
pub fn classify(name: &str) -> Kind {
    text_kind(name).map_or_else(|| kind_of(name), Kind::Text)
}

/// Whether `name` is a remote segment's file named by base offset and
/// segment id (`<offset>-<segment id>.<suffix>`), which kafka-dump-log
/// stops on (it reads the base offset from the name).
pub fn is_remote_segment_name(name: &str) -> bool {
    parse_remote_segment_name(name).is_some()
        && !name
            .split('.')
            .next()
            .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
}

/// The file bytes a dump of one file needs.
pub struct Inputs {
    /// The file itself, unless it is a `.log` (read through `log`, a
    /// window at a time when it is not mapped), a checkpoint (read a line
    /// at a time by its dumper) or a properties or state file over
    /// [`MAX_PROPERTIES_BYTES`] (not read): then empty.
    main: FileBytes,
    /// The `.log`: the file itself (a `.log` or a KRaft `.checkpoint`), or
    /// the `.log` of the same base offset (index kinds).
    log: Option<SegmentFile>,
    /// The `.index` of the same base offset (time index, and a `.log`
    /// dumped with a selection; `None` if absent).
    index: Option<FileBytes>,
    /// The length of that `.index` (for a time index: its bytes past
    /// `index` are the hole of a sparse file, zeros).
    index_len: usize,
    /// The `.timeindex` of a `.log` dumped with `--since`/`--until`.
    timeindex: Option<FileBytes>,
    /// Size of the file itself (for an index: its bytes past `main` are
    /// the hole of a sparse file, zeros, not held).
    size: u64,
    /// The file's kind.
    kind: Kind,
    /// The file's path as opened.
    path: String,
    /// The base offset in the file's name (0 when it has none).
    base: i64,
}

impl Inputs {
    /// The `.log` (none: no bytes).
    pub fn log(&self) -> &dyn SegmentSource {
        match &self.log {
            Some(l) => l,
            None => &EMPTY,
        }
    }

    /// The file's size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The base offset in the file's name (0 when it has none).
    pub fn base(&self) -> i64 {
        self.base
    }

    /// The `.index` a selection seeks with.
    pub(crate) fn index_bytes(&self) -> Option<&[u8]> {
        self.index.as_deref()
    }

    /// The `.timeindex` a selection seeks with.
    pub(crate) fn timeindex_bytes(&self) -> Option<&[u8]> {
        self.timeindex.as_deref()
    }

    /// The `.index` beside a time index, as index bytes.
    fn sibling_index(&self) -> Option<IndexBytes<'_>> {
        self.index.as_ref().map(|b| {
            let data: &[u8] = b.as_ref();
            IndexBytes {
                data,
                len: self.index_len.max(data.len()),
            }
        })
    }

    /// The file as its renderer reads it, its segment read through
    /// `metered` when given (the same segment, moving a progress bar: see
    /// [`super::meter::Meter`]).
    pub fn opened<'a>(&'a self, metered: Option<&'a Metered<'a>>) -> Opened<'a> {
        let lines = match self.kind {
            Kind::Text(t) if t.is_checkpoint() => Some(Box::new(Lines {
                path: PathBuf::from(&self.path),
                reader: None,
            }) as Box<dyn Reread>),
            _ => None,
        };
        Opened {
            kind: self.kind,
            data: &self.main,
            size: self.size,
            log: match (&self.log, metered) {
                (Some(_), Some(m)) => Some(m),
                (Some(l), None) => Some(l),
                (None, _) => None,
            },
            sibling_index: self.sibling_index(),
            lines,
        }
    }

    /// Whether the segment's bytes are those it had when opened (a file
    /// that shrank or grew while it was read is not damage: the change is
    /// the answer).
    pub fn unchanged(&self) -> io::Result<()> {
        self.log.as_ref().map_or(Ok(()), SegmentFile::unchanged)
    }
}

const EMPTY: [u8; 0] = [];

/// A checkpoint, opened when first read and read again from its start.
struct Lines {
    path: PathBuf,
    reader: Option<io::BufReader<vfs::File>>,
}

impl Reread for Lines {
    fn reread(&mut self) -> io::Result<&mut dyn io::BufRead> {
        use std::io::Seek;
        match &mut self.reader {
            Some(r) => {
                r.seek(io::SeekFrom::Start(0))?;
            }
            None => {
                let (file, _) = vfs::open_file(&self.path)?;
                self.reader = Some(io::BufReader::with_capacity(64 * 1024, file));
            }
        }
        match &mut self.reader {
            Some(r) => Ok(r),
            None => Err(io::Error::other("checkpoint not open")),
        }
    }
}

/// The file `suffix` names beside the file: the same base offset (the
/// text of its name before the first `.`), in the same folder as
/// `absolute`.
fn sibling(name: &str, absolute: &str, suffix: &str) -> PathBuf {
    let prefix = name.split('.').next().unwrap_or("");
    let dir = Path::new(absolute)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    dir.join(format!("{prefix}{suffix}"))
}

/// Reads the file at `display` (its absolute path `absolute`, its last
/// component `name`) and the siblings its kind needs. With `seek`, a
/// `.log`'s `.index` and `.timeindex` are read too. An error names the
/// path it is about.
pub fn load(
    display: &str,
    name: &str,
    absolute: &str,
    kind: Kind,
    seek: bool,
) -> Result<Inputs, (String, io::Error)> {
    let base = base_offset_of(name).unwrap_or(0);
    let path = Path::new(display);
    // An index is read with its segment's .log: say so when that is missing.
    let open_log = |p: &Path| {
        SegmentFile::open(p).map_err(|e| {
            let hint = if e.kind() == io::ErrorKind::NotFound {
                format!(
                    " ({display} is read with its segment's .log: copy the .log beside it, or dump the .log alone)"
                )
            } else {
                String::new()
            };
            (
                p.display().to_string(),
                io::Error::new(e.kind(), format!("{e}{hint}")),
            )
        })
    };
    let (log, index) = match kind {
        Kind::Index => (Some(open_log(&sibling(name, absolute, ".log"))?), None),
        Kind::TimeIndex => {
            let log = open_log(&sibling(name, absolute, ".log"))?;
            let ip = sibling(name, absolute, ".index");
            let index = match vfs::open_data(&ip) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err((ip.display().to_string(), e)),
            };
            (Some(log), index)
        }
        Kind::Log => {
            let log = SegmentFile::open(path).map_err(|e| (display.to_string(), e))?;
            let size = log.len();
            // the indexes to seek with: a missing or unreadable one only
            // means reading from the start
            let (index, timeindex) = if seek && name.ends_with(".log") {
                let open = |suffix: &str| vfs::open(&sibling(name, absolute, suffix)).ok();
                (open(".index"), open(".timeindex"))
            } else {
                (None, None)
            };
            return Ok(Inputs {
                main: FileBytes::from_vec(Vec::new()),
                log: Some(log),
                index,
                index_len: 0,
                timeindex,
                size,
                kind,
                path: display.to_string(),
                base,
            });
        }
        _ => (None, None),
    };
    let (index, index_len) = match index {
        Some((b, len)) => (Some(b), usize::try_from(len).unwrap_or(usize::MAX)),
        None => (None, 0),
    };
    let fail = |e| (display.to_string(), e);
    // An index is held up to the end of its data (a sparse preallocated
    // one is a few entries and a hole); other files whole.
    let (main, size) = if matches!(kind, Kind::Index | Kind::TimeIndex) {
        vfs::open_data(path).map_err(fail)?
    } else if let Kind::Text(t) = kind {
        // A checkpoint is read a line at a time by its dumper; a
        // properties or state file whole, unless it is over the cap (its
        // dumper says so).
        if t.is_checkpoint() {
            let len = vfs::metadata(path).map_err(fail)?.len();
            (FileBytes::from_vec(Vec::new()), len)
        } else {
            let (bytes, len) = vfs::read_small(path, MAX_PROPERTIES_BYTES).map_err(fail)?;
            (FileBytes::from_vec(bytes.unwrap_or_default()), len)
        }
    } else {
        let main = vfs::open(path).map_err(fail)?;
        let size = main.len() as u64;
        (main, size)
    };
    Ok(Inputs {
        main,
        log,
        index,
        index_len,
        timeindex: None,
        size,
        kind,
        path: display.to_string(),
        base,
    })
}

/// The size of the file at `path` (0 when it cannot be read: its dump
/// says why).
pub fn file_size(path: &str) -> u64 {
    vfs::metadata(Path::new(path)).map_or(0, |m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_files_by_exact_name() {
        assert_eq!(
            classify("replication-offset-checkpoint"),
            Kind::Text(TextKind::OffsetCheckpoint(
                OffsetCheckpointKind::ReplicationOffset
            ))
        );
        assert_eq!(
            classify("leader-epoch-checkpoint"),
            Kind::Text(TextKind::LeaderEpochCheckpoint)
        );
        assert_eq!(
            classify("meta.properties"),
            Kind::Text(TextKind::MetaProperties)
        );
        assert_eq!(
            classify(".kafka_cleanshutdown"),
            Kind::Text(TextKind::CleanShutdown)
        );
        // Segment files and KRaft snapshots keep kafka-dump-log's suffix rule.
        assert_eq!(classify("00000000000000000000.log"), Kind::Log);
        assert_eq!(classify("bootstrap.checkpoint"), Kind::Log);
        assert_eq!(classify("x.properties"), Kind::Unknown);
        assert_eq!(classify("quorum-state.tmp"), Kind::Unknown);
    }

    #[test]
    fn a_checkpoint_is_read_again_from_its_start() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/kafka/divergence/broker-2/replication-offset-checkpoint");
        let display = path.to_string_lossy().into_owned();
        let kind = classify("replication-offset-checkpoint");
        let inputs = load(
            &display,
            "replication-offset-checkpoint",
            &display,
            kind,
            false,
        )
        .unwrap();
        let mut opened = inputs.opened(None);
        assert!(opened.data.is_empty(), "a checkpoint is not held whole");
        let lines = opened.lines.as_mut().unwrap();
        let mut first = String::new();
        lines.reread().unwrap().read_line(&mut first).unwrap();
        let mut again = String::new();
        lines.reread().unwrap().read_line(&mut again).unwrap();
        assert_eq!(first, "0\n");
        assert_eq!(again, first);
    }
}
