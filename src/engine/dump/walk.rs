//! Turning the PATHs of `klf dump` into the files to dump, in a fixed order.
//!
//! A PATH that is not a directory is dumped as given (kafka-dump-log's
//! behaviour, missing files included). A directory goes through
//! [`crate::capture::discover`], which tells a partition directory, a broker
//! log directory and a folder of broker directories apart:
//!
//! - a log directory: its own files in name order (`meta.properties`, the
//!   offset checkpoints, `bootstrap.checkpoint`, `.kafka_cleanshutdown`),
//!   then each partition directory in name order;
//! - a partition directory: its segment files by base offset (`.log`,
//!   `.index`, `.timeindex`, `.txnindex`, then `.snapshot` and KRaft
//!   `.checkpoint` files at that offset), then `leader-epoch-checkpoint`,
//!   `partition.metadata` and `quorum-state`;
//! - a folder of broker directories: each broker in discovery's order (node
//!   id, then path).
//!
//! A directory discovery makes nothing of (a folder of copied segment files,
//! say) is read flat: its files of known kinds in name order.
//!
//! Discovery's notes and warnings about paths inside the PATH that are not
//! dumped themselves (unknown files, `.deleted` segments, a nested capture
//! left out) are passed on; a dumped file reports its own problems.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::capture::discover::discover;
use crate::capture::vfs;
use crate::format::checkpoint::{
    OffsetCheckpointKind, CLEAN_SHUTDOWN_FILE, LEADER_EPOCH_CHECKPOINT_FILE,
};
use crate::format::names::{parse_partition_dir_name, parse_segment_file_name, SegmentFileKind};
use crate::format::props::{META_PROPERTIES_FILE, PARTITION_METADATA_FILE};
use crate::model::dump::{Item, Kind, TextKind};
use crate::model::Replica;

use super::open::{classify, BOOTSTRAP_CHECKPOINT_FILE, QUORUM_STATE_FILE};

/// An item for a file given by path: the topic comes from the parent
/// directory's name, for the kinds of files a partition directory holds.
pub fn item(path: String) -> Item {
    let p = Path::new(&path);
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = classify(&name);
    let in_partition_dir = match kind {
        Kind::Text(t) => matches!(
            t,
            TextKind::LeaderEpochCheckpoint | TextKind::PartitionMetadata | TextKind::QuorumState
        ),
        _ => name != BOOTSTRAP_CHECKPOINT_FILE,
    };
    let topic_partition = parent_name(p).filter(|_| in_partition_dir).and_then(|n| {
        parse_partition_dir_name(&n)
            .ok()
            .map(|d| (d.topic, d.partition))
    });
    Item {
        path,
        kind,
        topic_partition,
        named: false,
    }
}

/// An item for a file found in a directory walk, with the topic and
/// partition discovery gave it (`None` in a log directory root).
fn walked(path: &Path, topic_partition: Option<(String, i32)>) -> Item {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Item {
        path: path.to_string_lossy().into_owned(),
        kind: classify(&name),
        topic_partition,
        named: false,
    }
}

/// The name of a path's parent directory, resolving `.`-like parents.
fn parent_name(p: &Path) -> Option<String> {
    let parent = match p.parent() {
        Some(q) if !q.as_os_str().is_empty() => q.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let named = parent
        .file_name()
        .filter(|n| *n != "." && *n != "..")
        .map(|n| n.to_string_lossy().into_owned());
    named.or_else(|| {
        vfs::canonicalize(&parent)
            .ok()?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    })
}

/// What one PATH expands to.
#[derive(Debug, Default)]
pub struct Expansion {
    /// Files to dump, in order.
    pub items: Vec<Item>,
    /// Lines for stderr (without the `klf dump: ` prefix).
    pub notes: Vec<String>,
    /// Files of a directory that klf does not dump (a note each, the first
    /// few; the rest summarised).
    pub not_dumped: Vec<String>,
    /// Set when the PATH could not be used at all (exit status 2).
    pub failed: bool,
}

/// Expands one PATH.
pub fn expand(arg: &str) -> Expansion {
    let p = Path::new(arg);
    let is_dir = vfs::metadata(p).map(|m| m.is_dir()).unwrap_or(false);
    if !is_dir {
        return Expansion {
            items: vec![Item {
                named: true,
                ..item(arg.to_string())
            }],
            ..Expansion::default()
        };
    }
    let cap = discover(&[p]);
    let mut files: Vec<(PathBuf, Option<(String, i32)>)> = Vec::new();
    let mut placed: BTreeSet<PathBuf> = BTreeSet::new();
    let mut replicas: Vec<&Replica> = cap
        .partitions
        .values()
        .flatten()
        .chain(&cap.metadata_logs)
        .chain(&cap.set_aside)
        .collect();
    replicas.sort_by(|a, b| a.dir.cmp(&b.dir));
    for broker in &cap.brokers {
        if !broker.partial {
            files.extend(root_files(&broker.path).into_iter().map(|f| (f, None)));
        }
        for r in replicas.iter().filter(|r| r.log_dir == broker.path) {
            placed.insert(r.dir.clone());
            files.extend(replica_files(r));
        }
    }
    for r in replicas.iter().filter(|r| !placed.contains(&r.dir)) {
        files.extend(replica_files(r));
    }
    let mut e = Expansion::default();
    if cap.brokers.is_empty() && replicas.is_empty() {
        // Not a Kafka layout: the directory's own files of known kinds.
        let mut names: Vec<String> = match vfs::read_dir(p) {
            Ok(rd) => rd
                .flatten()
                .filter(|d| d.file_type().map(|t| !t.is_dir()).unwrap_or(false))
                .map(|d| d.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(err) => {
                e.notes.push(format!("{arg}: cannot list directory: {err}"));
                e.failed = true;
                return e;
            }
        };
        names.sort();
        for n in names {
            let found = item(join(arg, &n));
            match found.kind {
                Kind::Unknown | Kind::NoSuffix => e.not_dumped.push(found.path),
                _ => e.items.push(found),
            }
        }
        if e.items.is_empty() {
            e.notes.clear();
            e.not_dumped.clear();
            e.notes.extend(cap.warnings.iter().map(ToString::to_string));
            e.notes.push(format!(
                "{arg}: no Kafka log directory, partition directory or segment file found here"
            ));
            e.failed = true;
        }
        return e;
    }
    let dumped: BTreeSet<&Path> = files.iter().map(|(f, _)| f.as_path()).collect();
    for d in &cap.warnings {
        if d.path.starts_with(p) && !dumped.contains(d.path.as_path()) {
            e.notes.push(d.to_string());
        }
    }
    e.items = files.into_iter().map(|(f, tp)| walked(&f, tp)).collect();
    e
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn is_file(p: &Path) -> bool {
    vfs::metadata(p).map(|m| m.is_file()).unwrap_or(false)
}

/// The files of a log directory root that `klf dump` reads, in name order.
fn root_files(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<&str> = OffsetCheckpointKind::ALL
        .iter()
        .map(|k| k.file_name())
        .chain([
            META_PROPERTIES_FILE,
            CLEAN_SHUTDOWN_FILE,
            BOOTSTRAP_CHECKPOINT_FILE,
        ])
        .collect();
    names.sort_unstable();
    names
        .into_iter()
        .map(|n| dir.join(n))
        .filter(|p| is_file(p))
        .collect()
}

/// The files of a partition directory: segment files by (base offset, kind),
/// then the partition's text files.
fn replica_files(r: &Replica) -> Vec<(PathBuf, Option<(String, i32)>)> {
    let rank = |k: SegmentFileKind| match k {
        SegmentFileKind::Log => 0,
        SegmentFileKind::Index => 1,
        SegmentFileKind::TimeIndex => 2,
        SegmentFileKind::TxnIndex => 3,
        SegmentFileKind::Snapshot => 4,
        SegmentFileKind::KraftSnapshot => 5,
    };
    let mut seg: Vec<(i64, u8, PathBuf)> = Vec::new();
    for s in &r.segments {
        for p in [&s.log, &s.index, &s.timeindex, &s.txnindex]
            .into_iter()
            .flatten()
        {
            if let Some(n) = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(parse_segment_file_name)
            {
                seg.push((n.offset, rank(n.kind), p.clone()));
            }
        }
    }
    for s in &r.snapshots {
        seg.push((s.offset, rank(SegmentFileKind::Snapshot), s.path.clone()));
    }
    for s in r.kraft_snapshots.iter().filter(|s| s.pending.is_none()) {
        seg.push((
            s.end_offset,
            rank(SegmentFileKind::KraftSnapshot),
            s.path.clone(),
        ));
    }
    seg.sort();
    let mut out: Vec<PathBuf> = seg.into_iter().map(|(_, _, p)| p).collect();
    out.extend(
        [
            LEADER_EPOCH_CHECKPOINT_FILE,
            PARTITION_METADATA_FILE,
            QUORUM_STATE_FILE,
        ]
        .into_iter()
        .map(|n| r.dir.join(n))
        .filter(|p| is_file(p)),
    );
    let tp = Some((r.topic.clone(), r.partition));
    out.into_iter().map(|p| (p, tp.clone())).collect()
}
