//! Turning the paths an operator passes into brokers, replicas and segments.
//!
//! [`discover`] accepts any mix of:
//!
//! - a broker log directory (a directory holding `meta.properties`, or one that
//!   looks like a log directory without it);
//! - a partition directory (`<topic>-<partition>`, or `__cluster_metadata-0`),
//!   read together with the checkpoints of the log directory around it;
//! - a capture: a folder whose direct children are broker log directories
//!   (`broker-1/ broker-2/ ...`). Folders under it that are themselves
//!   captures (an `after/` snapshot, say) are not read; they are listed in
//!   [`Capture::excluded`] and reported, and can be passed on their own.
//!
//! Discovery only lists directories and reads small text files (properties,
//! checkpoints, markers). It opens every file read-only, never writes, never
//! creates, and bounds what it reads. Each oddity (missing or broken
//! `meta.properties`, torn checkpoints, names Kafka would reject, empty or
//! unreadable files, directories named like files, non-UTF-8 names, dangling
//! or looping symlinks, symlinks that leave the tree) becomes one
//! [`Diagnostic`] and discovery goes on. The result is sorted and does not
//! depend on directory listing order.

// std::fs-shaped calls that also see inside mounted archives (capture::vfs).
use super::vfs as fs;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::format::checkpoint::{
    parse_clean_shutdown, read_leader_epoch_checkpoint, read_offset_checkpoint, Checkpoint,
    CleanShutdown, Limits, OffsetCheckpointKind, ReadError, CLEAN_SHUTDOWN_FILE,
    LEADER_EPOCH_CHECKPOINT_FILE,
};
use crate::format::kafka_log::{log_file_kind, LogFileKind};
use crate::format::names::{
    node_id_from_folder_name, parse_partition_dir_name, parse_segment_file_name, PartitionDirName,
    PendingState, ReplicaKind, SegmentFileKind,
};
use crate::format::props::{
    node_id_hint, over_properties_cap, parse_partition_metadata, parse_properties, MetaProperties,
    PropsError, MAX_PROPERTIES_BYTES, META_PROPERTIES_FILE, PARTITION_METADATA_FILE,
};
use crate::format::ParseError;
use crate::model::capture::{
    Broker, BrokerCheckpoints, Capture, CheckpointFile, Diagnostic, KraftSnapshotFile, Level,
    LogFile, NodeIdSource, PendingFile, Replica, SegmentFiles, SnapshotFile,
};

/// A folder of Kafka's own logs beside a node's data (`broker-1/logs/`).
pub const LOGS_FOLDER: &str = "logs";

/// Kafka's own log files directly in `dir` and in its `logs/` folder, by
/// name (`server.log`, `controller.log.2026-12-06-04.gz`, ...), sorted.
pub fn log_files_in(dir: &Path) -> Vec<(PathBuf, LogFileKind, bool)> {
    let mut out = Vec::new();
    for d in [dir.to_path_buf(), dir.join(LOGS_FOLDER)] {
        let Ok(rd) = fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if let Some((kind, gzip)) = log_file_kind(&name) {
                if e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()) && is_file(&e.path())
                {
                    out.push((e.path(), kind, gzip));
                }
            }
        }
    }
    out.sort();
    out
}

/// Tiered storage's index cache directory in a log directory root; not a partition.
pub const REMOTE_INDEX_CACHE_DIR: &str = "remote-log-index-cache";

/// Largest text file (properties, marker) discovery reads whole; a larger
/// one is not read (see [`MAX_PROPERTIES_BYTES`]). Checkpoints are read a
/// line at a time within their own caps ([`Limits`]).
pub const MAX_TEXT_FILE: u64 = MAX_PROPERTIES_BYTES;

/// Finds brokers, replicas and segments under `paths` (see the module
/// documentation for what each path may be). Never fails: whatever cannot be
/// read becomes a [`Diagnostic`].
pub fn discover<P: AsRef<Path>>(paths: &[P]) -> Capture {
    let mut d = Discovery::default();
    for p in paths {
        d.classify_input(p.as_ref());
    }
    d.run()
}

/// What to read in one log directory.
#[derive(Debug, Clone)]
enum Want {
    All,
    /// Names of the partition directories to read.
    Only(BTreeSet<String>),
}

#[derive(Default)]
struct Discovery {
    /// Log directories to read: display path → (canonical root of the input, what).
    log_dirs: BTreeMap<PathBuf, (PathBuf, Want)>,
    /// Canonical log directory → display path, to merge the same directory
    /// reached by two paths.
    canonical_log_dirs: BTreeMap<PathBuf, PathBuf>,
    /// Partition directories outside any log directory: (dir, input root).
    loose_partitions: BTreeSet<(PathBuf, PathBuf)>,
    excluded: BTreeSet<PathBuf>,
    diags: Vec<Diagnostic>,
    /// Reads that failed (see [`Capture::unreadable`]).
    unreadable: BTreeSet<PathBuf>,
    /// Files over a cap, not read (see [`Capture::refused`]).
    refused: BTreeSet<PathBuf>,
    /// Kafka's own logs found (see [`Capture::logs`]).
    logs: Vec<LogFile>,
}

impl Discovery {
    /// A read of `path` that failed: the machine's failure (reported as a
    /// warning, and kept so that nothing is inferred from its absence).
    fn read_failed(&mut self, path: &Path, message: String) {
        self.unreadable.insert(path.to_path_buf());
        self.warn(path, message);
    }

    /// A symlink that cannot be followed (dangling, or a loop): what it
    /// stood for cannot be read, so nothing is inferred from its absence
    /// (kept as unreadable, and noted as a failed read: exit status 2).
    fn link_failed(&mut self, path: &Path, e: &std::io::Error) {
        let message = format!("symlink that cannot be followed (dangling or looping): {e}");
        fs::note_failed_read(path, message.clone());
        self.read_failed(path, message);
    }

    fn note(&mut self, path: &Path, message: impl Into<std::borrow::Cow<'static, str>>) {
        self.diags.push(Diagnostic {
            path: path.to_path_buf(),
            level: Level::Note,
            message: message.into(),
        });
    }

    fn warn(&mut self, path: &Path, message: impl Into<std::borrow::Cow<'static, str>>) {
        self.diags.push(Diagnostic {
            path: path.to_path_buf(),
            level: Level::Warning,
            message: message.into(),
        });
    }

    fn classify_input(&mut self, path: &Path) {
        let meta = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                self.warn(path, format!("cannot read this path: {e}"));
                return;
            }
        };
        if !meta.is_dir() {
            self.warn(
                path,
                "not a directory: pass a broker log directory, a partition directory or a folder of broker directories",
            );
            return;
        }
        let root = canonical_or_self(path);
        if is_file(&path.join(META_PROPERTIES_FILE)) {
            self.add_log_dir(path, &root, Want::All);
            return;
        }
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if parse_partition_dir_name(name).is_ok() && looks_like_partition_dir(path) {
                match parent_dir(path).filter(|p| has_log_dir_files(p)) {
                    Some(parent) => {
                        let parent_root = canonical_or_self(&parent);
                        let mut set = BTreeSet::new();
                        set.insert(name.to_owned());
                        self.add_log_dir(&parent, &parent_root, Want::Only(set));
                    }
                    None => {
                        self.loose_partitions.insert((path.to_path_buf(), root));
                    }
                }
                return;
            }
        }
        // A capture: direct children that are broker log directories.
        let children = self.list_dir(path);
        let mut brokers = Vec::new();
        let mut nested = Vec::new();
        let mut others = Vec::new();
        for child in children {
            let Some(child_path) = self.child_dir(path, &child, &root) else {
                continue;
            };
            if looks_like_log_dir(&child_path) {
                brokers.push(child_path);
            } else if holds_log_dirs(&child_path) {
                nested.push(child_path);
            } else {
                others.push(child_path);
            }
        }
        if !brokers.is_empty() {
            let mut taken: Vec<Identity> = brokers.iter().map(|b| log_dir_identity(b)).collect();
            for b in &brokers {
                self.add_log_dir(b, &root, Want::All);
            }
            // A folder holding one more node's log directories (a node's
            // several log directories, `broker-1/d1` and `broker-1/d2`,
            // beside a controller's) is part of the capture; any other
            // (an `after/` of the same nodes) is another capture.
            for n in nested {
                let (dirs, others) = nested_log_dirs(&n);
                let ids: Vec<Identity> = dirs.iter().map(|d| log_dir_identity(d)).collect();
                if node_folder_joins(&ids, &taken) {
                    for d in &dirs {
                        self.add_log_dir(d, &root, Want::All);
                    }
                    taken.extend(ids);
                    for o in others {
                        self.other_capture(o);
                    }
                } else {
                    self.other_capture(n);
                }
            }
            for o in others {
                self.logs_only_folder(&o);
            }
            return;
        }
        if looks_like_log_dir(path) {
            self.add_log_dir(path, &root, Want::All);
            return;
        }
        if !nested.is_empty() {
            self.add_nested(path, &root, nested);
            return;
        }
        // a node's digest made of its folder of Kafka logs alone
        // (`controller-100.klfd` of `controller-100/server.log`): read as
        // that folder is in a capture
        if digest_root_stem(path).is_some() && !log_files_in(path).is_empty() {
            self.logs_only_folder(path);
            return;
        }
        // what is here instead, and what would read it
        let mut names: Vec<String> = Vec::new();
        let mut segments = None;
        let mut count = 0usize;
        if let Ok(rd) = fs::read_dir(path) {
            for e in rd.flatten() {
                count += 1;
                let n = e.file_name().to_string_lossy().into_owned();
                if parse_segment_file_name(&n).is_some()
                    && segments
                        .as_ref()
                        .is_none_or(|s: &PathBuf| path.join(&n) < *s)
                {
                    segments = Some(path.join(&n));
                }
                // the first five names, whatever the listing's order
                let at = names.partition_point(|x| *x < n);
                if at < 5 {
                    names.insert(at, n);
                    names.truncate(5);
                }
            }
        }
        let held = match count {
            0 => "it is empty".to_string(),
            n if n > names.len() => {
                format!("it holds {} and {} more", names.join(", "), n - names.len())
            }
            _ => format!("it holds {}", names.join(", ")),
        };
        let hint = match segments {
            Some(f) => format!("; `klf dump {}` shows what is in a file", f.display()),
            None => {
                "; pass the folder holding the nodes' log directories (each has a meta.properties)"
                    .to_string()
            }
        };
        self.warn(
            path,
            format!(
                "no Kafka log directory, partition directory or capture found here (none up to {NESTED_DEPTH} folders down): {held}{hint}"
            ),
        );
    }

    /// A capture whose log directories are below its folders rather than
    /// directly in it: a node's several log directories (`broker-1/d1`,
    /// `broker-1/d2`), `NAME/data`-style nodes, a node folder per pod
    /// holding `data-0/kafka-log0`. Every log directory found (up to
    /// [`NESTED_DEPTH`] folders down) is read, each node known by its
    /// `meta.properties`, never by a folder's name. A folder of several
    /// nodes holding again a log directory of a node folder beside it (an
    /// `after/` beside `broker-1/d1`, ...) is another capture, not read;
    /// when the same node (or another cluster) otherwise stands under two
    /// of its folders, they are separate captures (a `before/` and an
    /// `after/` of one cluster): none is read, and the message says which
    /// folder to pass.
    fn add_nested(&mut self, path: &Path, root: &Path, mut nested: Vec<PathBuf>) {
        // (top folder, log directory, who it says it is)
        let mut found: Vec<(PathBuf, PathBuf, Identity)> = Vec::new();
        let mut other_captures = Vec::new();
        let mut tops: Vec<NestedTop> = Vec::new();
        for top in &nested {
            let (dirs, others) = nested_log_dirs(top);
            let ids = dirs.iter().map(|d| log_dir_identity(d)).collect();
            tops.push(NestedTop {
                path: top.clone(),
                dirs,
                ids,
                others,
            });
        }
        // The folders of one node each (`broker-1/` holding `d1` and `d2`)
        // are the capture's nodes; a folder of several nodes holding one
        // of those nodes' log directories again (an `after/` beside them)
        // is another capture.
        let node_ids: Vec<Identity> = tops
            .iter()
            .filter(|t| single_node(&t.ids).is_some())
            .flat_map(|t| t.ids.iter().cloned())
            .collect();
        if !node_ids.is_empty() {
            tops.retain(|t| {
                let again = single_node(&t.ids).is_none()
                    && t.ids.iter().any(|i| {
                        i.node
                            .is_some_and(|n| node_ids.iter().any(|o| same_log_dir(n, i, o)))
                    });
                if again {
                    other_captures.push(t.path.clone());
                }
                !again
            });
            nested.retain(|n| !other_captures.contains(n));
        }
        for t in tops {
            for (dir, id) in t.dirs.into_iter().zip(t.ids) {
                found.push((t.path.clone(), dir, id));
            }
            other_captures.extend(t.others);
        }
        // A node's log directory in two folders is two captures of it: the
        // same directory id twice, or (no directory ids, as ZooKeeper mode
        // writes) the same node under two folders. A node's several log
        // directories (JBOD) have a directory id each.
        let mut seen: BTreeMap<(i32, Option<&str>), BTreeSet<&Path>> = BTreeMap::new();
        let mut clusters: BTreeMap<&str, BTreeSet<&Path>> = BTreeMap::new();
        for (top, _, id) in &found {
            if let Some(n) = id.node {
                seen.entry((n, id.directory.as_deref()))
                    .or_default()
                    .insert(top);
            }
            if let Some(c) = &id.cluster {
                clusters.entry(c).or_default().insert(top);
            }
        }
        let tops_of_node: BTreeMap<i32, BTreeSet<&Path>> = seen
            .iter()
            .filter(|(_, tops)| tops.len() > 1)
            .map(|((n, _), tops)| (*n, tops.clone()))
            .collect();
        let name = |p: &Path| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        };
        let shared = tops_of_node.iter().next();
        let why = match shared {
            Some((n, tops)) => Some(format!(
                "node {n} stands in {}",
                tops.iter()
                    .take(2)
                    .map(|t| name(t))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )),
            None if clusters.len() > 1 => Some(format!(
                "they hold {} clusters ({})",
                clusters.len(),
                clusters
                    .iter()
                    .map(|(c, tops)| format!(
                        "{c}: {}",
                        tops.iter().map(|t| name(t)).collect::<Vec<_>>().join(", ")
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            None => None,
        };
        if let Some(why) = why {
            let names: Vec<String> = nested.iter().map(|n| name(n)).collect();
            let first = nested
                .first()
                .map(|n| n.display().to_string())
                .unwrap_or_default();
            self.warn(
                path,
                format!(
                    "these folders hold separate captures ({why}): {}; pass one capture's folder, e.g. `klf {} {first}`",
                    names.join(", "),
                    COMMAND.get().copied().unwrap_or("diff")
                ),
            );
            self.excluded.extend(nested);
            return;
        }
        for (_, dir, _) in found {
            self.add_log_dir(&dir, root, Want::All);
        }
        for n in other_captures {
            self.other_capture(n);
        }
    }

    /// Kafka logs found, of `node`.
    fn add_logs(&mut self, found: Vec<(PathBuf, LogFileKind, bool)>, node: Option<i32>) {
        for (path, kind, gzip) in found {
            self.logs.push(LogFile {
                node_id: node,
                path,
                kind,
                gzip,
                given: false,
            });
        }
    }

    /// A folder of a capture that is not a log directory: a node's Kafka
    /// logs when it holds some and its name says the node
    /// (`controller-100/server.log`), else noted and ignored.
    fn logs_only_folder(&mut self, o: &Path) {
        let found = log_files_in(o);
        let node = digest_root_stem(o)
            .or_else(|| o.file_name().and_then(|n| n.to_str()))
            .and_then(node_id_from_folder_name);
        match node {
            Some(n) if !found.is_empty() => {
                self.note(
                    o,
                    format!("no log directory; Kafka's own logs, read as node {n}'s (from the folder's name)"),
                );
                self.add_logs(found, Some(n));
            }
            _ if !found.is_empty() => self.warn(
                o,
                "Kafka's own logs in a folder whose name gives no node id; not read (name the folder like broker-3, or pass --logs NODE=PATH)",
            ),
            _ => self.note(o, "not a broker log directory; ignored"),
        }
    }

    /// The Kafka logs of node folders: a folder that holds log
    /// directories of one node only (`broker-1/` holding `d1` and `d2`,
    /// `pod-1/` holding `data-0/kafka-log0`), inside the path given, holds
    /// that node's logs beside them (`broker-1/server.log`, `pod-1/logs/`);
    /// so does each folder above it up to the first that holds another
    /// node's, or the path given.
    fn node_folder_logs(&mut self, brokers: &[Broker], roots: &BTreeMap<PathBuf, PathBuf>) {
        let mut folders: BTreeMap<PathBuf, i32> = BTreeMap::new();
        for b in brokers {
            let Some(node) = b.node_id else { continue };
            let Some(root) = roots.get(&b.path) else {
                continue;
            };
            for folder in b.path.ancestors().skip(1) {
                if folder.as_os_str().is_empty()
                    || !canonical_or_self(folder).starts_with(root)
                    || folders.contains_key(folder)
                {
                    break;
                }
                // every log directory under it is this node's
                let under: BTreeSet<Option<i32>> = brokers
                    .iter()
                    .filter(|o| o.path.starts_with(folder))
                    .map(|o| o.node_id)
                    .collect();
                let others_here = fs::read_dir(folder).is_ok_and(|rd| {
                    rd.flatten().any(|e| {
                        let p = e.path();
                        is_dir(&p)
                            && looks_like_log_dir(&p)
                            && !brokers
                                .iter()
                                .any(|o| o.path == p && o.node_id == Some(node))
                    })
                });
                if under.len() != 1 || others_here {
                    break;
                }
                folders.insert(folder.to_path_buf(), node);
            }
        }
        for (folder, node) in folders {
            let found = log_files_in(&folder);
            self.add_logs(found, Some(node));
        }
    }

    /// A folder holding another capture: noted, not read.
    fn other_capture(&mut self, n: PathBuf) {
        let names = capture_folder_names(&n);
        self.note(
            &n,
            format!(
                "holds another capture ({}); not included: pass this folder on its own to read it",
                names.join(", ")
            ),
        );
        self.excluded.insert(n);
    }

    fn add_log_dir(&mut self, path: &Path, root: &Path, want: Want) {
        let canon = canonical_or_self(path);
        let key = match self.canonical_log_dirs.get(&canon).cloned() {
            Some(existing) => {
                if existing != path {
                    self.note(
                        path,
                        format!("same directory as {}; read once", existing.display()),
                    );
                }
                existing
            }
            None => {
                self.canonical_log_dirs.insert(canon, path.to_path_buf());
                path.to_path_buf()
            }
        };
        let entry = self
            .log_dirs
            .entry(key)
            .or_insert_with(|| (root.to_path_buf(), Want::Only(BTreeSet::new())));
        match (&mut entry.1, want) {
            (Want::All, _) => {}
            (slot @ Want::Only(_), Want::All) => *slot = Want::All,
            (Want::Only(set), Want::Only(more)) => set.extend(more),
        }
    }

    /// Entries of a directory, sorted by name; failures reported.
    fn list_dir(&mut self, dir: &Path) -> Vec<fs::DirEntry> {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                self.read_failed(dir, format!("cannot list directory: {e}"));
                return Vec::new();
            }
        };
        let mut entries = Vec::new();
        for e in rd {
            match e {
                Ok(e) => entries.push(e),
                Err(e) => self.read_failed(dir, format!("error while listing directory: {e}")),
            }
        }
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        entries
    }

    /// Resolves a directory entry that should be a directory. Returns its path
    /// when it is one (following a symlink inside the tree, or outside with a
    /// warning); reports and returns `None` otherwise (files are skipped silently).
    fn child_dir(&mut self, parent: &Path, entry: &fs::DirEntry, root: &Path) -> Option<PathBuf> {
        let path = parent.join(entry.file_name());
        let ft = entry.file_type().ok()?;
        if ft.is_symlink() {
            let target = match fs::metadata(&path) {
                Ok(m) => m,
                Err(e) => {
                    self.link_failed(&path, &e);
                    return None;
                }
            };
            if !target.is_dir() {
                return None;
            }
            self.check_symlink_target(&path, root);
            return Some(path);
        }
        ft.is_dir().then_some(path)
    }

    fn check_symlink_target(&mut self, path: &Path, root: &Path) {
        match fs::canonicalize(path) {
            Ok(t) if !t.starts_with(root) => self.warn(
                path,
                format!(
                    "symlink leads outside the capture, to {}; followed",
                    t.display()
                ),
            ),
            Ok(_) => {}
            Err(e) => self.warn(path, format!("symlink cannot be resolved: {e}")),
        }
    }

    fn run(mut self) -> Capture {
        let mut cap = Capture::default();
        let log_dirs = std::mem::take(&mut self.log_dirs);
        let roots: BTreeMap<PathBuf, PathBuf> = log_dirs
            .iter()
            .map(|(path, (root, _))| (path.clone(), root.clone()))
            .collect();
        let mut seen_partition_dirs: HashSet<PathBuf> = HashSet::new();
        for (path, (root, want)) in log_dirs {
            let (broker, replicas) =
                self.read_log_dir(&path, &root, &want, &mut seen_partition_dirs);
            cap.brokers.push(broker);
            for r in replicas {
                self.place(&mut cap, r);
            }
        }
        let loose = std::mem::take(&mut self.loose_partitions);
        for (dir, root) in loose {
            if !seen_partition_dirs.insert(canonical_or_self(&dir)) {
                continue;
            }
            let log_dir = parent_dir(&dir).unwrap_or_else(|| PathBuf::from("."));
            let node_id = log_dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(node_id_from_folder_name);
            self.warn(
                &dir,
                match node_id {
                    Some(n) => format!(
                        "partition directory outside a broker log directory; node id {n} taken from the parent folder name, no broker checkpoints"
                    ),
                    None => "partition directory outside a broker log directory: node id unknown, no broker checkpoints".to_string(),
                },
            );
            let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Ok(parsed) = parse_partition_dir_name(name) else {
                continue;
            };
            let r = self.read_partition_dir(
                &dir,
                &log_dir,
                &root,
                parsed,
                node_id,
                &BrokerCheckpoints::default(),
            );
            self.place(&mut cap, r);
        }
        self.cross_check_brokers(&cap.brokers);
        self.node_folder_logs(&cap.brokers, &roots);
        let mut logs = std::mem::take(&mut self.logs);
        logs.sort();
        logs.dedup_by(|a, b| a.path == b.path);
        cap.logs = logs;
        cap.brokers.sort_by(|a, b| {
            (a.node_id.is_none(), a.node_id, &a.path).cmp(&(
                b.node_id.is_none(),
                b.node_id,
                &b.path,
            ))
        });
        let order = |a: &Replica, b: &Replica| {
            (a.node_id.is_none(), a.node_id, &a.dir).cmp(&(b.node_id.is_none(), b.node_id, &b.dir))
        };
        for list in cap.partitions.values_mut() {
            list.sort_by(order);
            // held for the whole run: no room for replicas never found
            list.shrink_to_fit();
        }
        cap.set_aside.sort_by_key(|r| {
            (
                r.topic.clone(),
                r.partition,
                r.node_id.is_none(),
                r.node_id,
                r.dir.clone(),
            )
        });
        cap.metadata_logs.sort_by(order);
        cap.excluded = self.excluded.into_iter().collect();
        cap.unreadable = std::mem::take(&mut self.unreadable).into_iter().collect();
        cap.refused = std::mem::take(&mut self.refused).into_iter().collect();
        self.diags.sort_by(|a, b| a.path.cmp(&b.path));
        self.diags.dedup();
        cap.warnings = self.diags;
        cap
    }

    fn place(&mut self, cap: &mut Capture, r: Replica) {
        match r.kind {
            ReplicaKind::Live => {
                let list = cap
                    .partitions
                    .entry((r.topic.clone(), r.partition))
                    .or_default();
                // exactly as many as found: a partition's few replicas, held
                // for the whole run, times every partition of a capture
                list.reserve_exact(1);
                list.push(r)
            }
            ReplicaKind::Metadata => cap.metadata_logs.push(r),
            _ => cap.set_aside.push(r),
        }
    }

    fn cross_check_brokers(&mut self, brokers: &[Broker]) {
        let mut by_node: BTreeMap<i32, Vec<&Broker>> = BTreeMap::new();
        for b in brokers {
            if let Some(n) = b.node_id {
                by_node.entry(n).or_default().push(b);
            }
        }
        for (node, list) in by_node {
            if list.len() < 2 {
                continue;
            }
            let dir_ids: Vec<_> = list
                .iter()
                .map(|b| {
                    b.meta
                        .as_ref()
                        .and_then(|m| m.as_ref().ok())
                        .and_then(|m| m.directory_id)
                })
                .collect();
            let distinct: BTreeSet<_> = dir_ids.iter().flatten().collect();
            let all_known = dir_ids.iter().all(Option::is_some);
            let paths: Vec<String> = list.iter().map(|b| b.path.display().to_string()).collect();
            if all_known && distinct.len() == list.len() {
                self.note(
                    &list[0].path,
                    format!(
                        "node {node} has several log directories: {}",
                        paths.join(", ")
                    ),
                );
            } else {
                self.warn(
                    &list[0].path,
                    format!(
                        "several log directories claim node {node} without distinct directory.id: {} (two copies of one broker?)",
                        paths.join(", ")
                    ),
                );
            }
        }
        let clusters: BTreeSet<&str> = brokers
            .iter()
            .filter_map(|b| b.meta.as_ref()?.as_ref().ok()?.cluster_id.as_deref())
            .collect();
        if clusters.len() > 1 {
            if let Some(first) = brokers.first() {
                let list: Vec<&str> = clusters.into_iter().collect();
                self.warn(
                    &first.path,
                    format!(
                        "brokers of more than one cluster were given: cluster ids {}",
                        list.join(", ")
                    ),
                );
            }
        }
    }

    fn read_log_dir(
        &mut self,
        path: &Path,
        root: &Path,
        want: &Want,
        seen_partition_dirs: &mut HashSet<PathBuf>,
    ) -> (Broker, Vec<Replica>) {
        let mut broker = Broker {
            node_id: None,
            node_id_source: NodeIdSource::Unknown,
            path: path.to_path_buf(),
            meta: None,
            meta_raw: None,
            checkpoints: BrokerCheckpoints::default(),
            clean_shutdown: None,
            bootstrap_checkpoint: None,
            temp_files: Vec::new(),
            partial: matches!(want, Want::Only(_)),
        };
        let entries = self.list_dir(path);
        if super::mmap::log_dir_is_live(path) {
            self.warn(
                path,
                "live log directory: a running process (a broker) holds its .lock; files are read, \
                 not memory-mapped, and may change or vanish while klf reads them",
            );
        }
        // (directory, parsed name, reached through a symlink)
        let mut partition_dirs: Vec<(PathBuf, PartitionDirName, bool)> = Vec::new();
        let mut saw_meta = false;
        // Kafka's own logs copied beside the data (`server.log`, ...)
        let mut root_logs: Vec<(PathBuf, LogFileKind, bool)> = Vec::new();
        for entry in entries {
            let child = path.join(entry.file_name());
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                self.warn(
                    &child,
                    "name is not valid UTF-8; skipped (Kafka names are UTF-8 topic names and fixed file names)",
                );
                continue;
            };
            let linked = entry.file_type().map_or(true, |t| t.is_symlink());
            let Some(kind) = self.entry_kind(&child, &entry, root) else {
                continue;
            };
            if kind == EntryKind::Dir {
                if name == LOGS_FOLDER {
                    let found = log_files_in(&child);
                    if !found.is_empty() {
                        self.note(
                            &child,
                            "Kafka's own logs beside the data, read as the node's logs (Kafka itself would refuse to start with a folder that is not a partition here)",
                        );
                        root_logs.extend(found);
                        continue;
                    }
                }
                if name == REMOTE_INDEX_CACHE_DIR {
                    self.note(
                        &child,
                        "tiered storage index cache; not a partition, skipped",
                    );
                    continue;
                }
                match parse_partition_dir_name(&name) {
                    Ok(parsed) => {
                        if let Want::Only(set) = want {
                            if !set.contains(&name) {
                                continue;
                            }
                        }
                        partition_dirs.push((child, parsed, linked));
                    }
                    Err(why) => self.warn(
                        &child,
                        format!(
                            "directory is not a partition directory ({why}); Kafka refuses to start with it in a log directory"
                        ),
                    ),
                }
                continue;
            }
            // A regular file.
            if name == META_PROPERTIES_FILE {
                saw_meta = true;
                self.read_meta(&child, &mut broker);
            } else if let Some(kind) = OffsetCheckpointKind::from_file_name(&name) {
                let empty = (
                    Level::Note,
                    "Kafka creates checkpoint files empty and fills them on the first write",
                );
                let read =
                    |r: &mut dyn std::io::BufRead| read_offset_checkpoint(r, &Limits::OFFSETS);
                if let Some(checkpoint) = self.read_checkpoint(&child, empty, read) {
                    self.report_checkpoint(&child, &checkpoint);
                    *broker.checkpoints.slot(kind) = Some(CheckpointFile {
                        path: child,
                        checkpoint,
                    });
                }
            } else if name == CLEAN_SHUTDOWN_FILE {
                if let Some(text) = self.read_text(&child, None) {
                    // Its presence is what Kafka goes by: one over the cap
                    // still counts, its content unreadable.
                    let marker = match text {
                        Ok(bytes) => parse_clean_shutdown(&bytes),
                        Err(why) => {
                            broker.clean_shutdown =
                                Some(CleanShutdown::Unreadable(ParseError::new(0, why)));
                            continue;
                        }
                    };
                    if let CleanShutdown::Unreadable(e) = &marker {
                        self.warn(
                            &child,
                            format!("clean shutdown marker Kafka cannot parse ({e}); its presence still skips recovery"),
                        );
                    }
                    broker.clean_shutdown = Some(marker);
                }
            } else if name == ".lock" {
                // Held by a running broker; says nothing offline.
            } else if name == "bootstrap.checkpoint" {
                broker.bootstrap_checkpoint = Some(child);
            } else if name.ends_with(".tmp") {
                self.note(
                    &child,
                    "temporary file of a checkpoint or properties write that had not been renamed into place: \
                     the broker stopped, or the capture was taken, mid-write; Kafka ignores it",
                );
                broker.temp_files.push(child);
            } else if let Some((kind, gzip)) = log_file_kind(&name) {
                root_logs.push((child, kind, gzip));
            } else {
                self.warn(&child, "unrecognised file in a log directory root");
            }
        }
        if !saw_meta {
            self.warn(
                path,
                "no meta.properties: Kafka would not start on this log directory; node id taken from elsewhere",
            );
        }
        self.settle_node_id(&mut broker);
        self.add_logs(root_logs, broker.node_id);
        // A partition directory that is not a symlink is its log
        // directory's canonical path and its own name: one canonicalisation
        // for the log directory, not one per partition.
        let canonical_log_dir = canonical_or_self(path);
        let mut todo = Vec::with_capacity(partition_dirs.len());
        for (dir, parsed, linked) in partition_dirs {
            let canonical = match dir.file_name() {
                Some(name) if !linked => canonical_log_dir.join(name),
                _ => canonical_or_self(&dir),
            };
            if !seen_partition_dirs.insert(canonical) {
                self.note(&dir, "already read through another path");
                continue;
            }
            todo.push((dir, parsed));
        }
        // Partition directories are read on every core, each into its own
        // list of diagnostics, merged in name order (the result does not
        // depend on the schedule).
        let read: Vec<(Replica, Discovery)> = {
            use rayon::prelude::*;
            let (node_id, checkpoints) = (broker.node_id, &broker.checkpoints);
            todo.into_par_iter()
                .map(|(dir, parsed)| {
                    let mut sub = Discovery::default();
                    let r = sub.read_partition_dir(&dir, path, root, parsed, node_id, checkpoints);
                    (r, sub)
                })
                .collect()
        };
        let mut replicas = Vec::with_capacity(read.len());
        for (r, sub) in read {
            self.diags.extend(sub.diags);
            self.unreadable.extend(sub.unreadable);
            self.refused.extend(sub.refused);
            replicas.push(r);
        }
        self.cross_check_checkpoints(&broker, &replicas);
        (broker, replicas)
    }

    fn settle_node_id(&mut self, broker: &mut Broker) {
        let folder = broker
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(node_id_from_folder_name);
        let from_meta = match &broker.meta {
            Some(Ok(m)) => m.node_id.map(|n| (n, NodeIdSource::MetaProperties)),
            _ => None,
        };
        let hint = broker
            .meta_raw
            .as_ref()
            .and_then(node_id_hint)
            .map(|n| (n, NodeIdSource::MetaPropertiesHint));
        let chosen = from_meta
            .or(hint)
            .or(folder.map(|n| (n, NodeIdSource::FolderName)));
        match chosen {
            Some((n, src)) => {
                broker.node_id = Some(n);
                broker.node_id_source = src;
                match src {
                    NodeIdSource::MetaPropertiesHint => self.warn(
                        &broker.path,
                        format!("node id {n} read from a meta.properties Kafka would reject"),
                    ),
                    NodeIdSource::FolderName => self.warn(
                        &broker.path,
                        format!(
                            "node id {n} taken from the folder name: meta.properties gives none"
                        ),
                    ),
                    _ => {}
                }
                // A folder's name is not a node id (`d2`, `kafka-log0`,
                // `data-1`): meta.properties is, and is not questioned by it.
            }
            None => self.warn(
                &broker.path,
                "node id unknown: no usable meta.properties and no number in the folder name",
            ),
        }
    }

    fn read_meta(&mut self, path: &Path, broker: &mut Broker) {
        let Some(text) = self.read_text(path, Some((Level::Warning, "Kafka cannot start on it")))
        else {
            return;
        };
        let bytes = match text {
            Ok(bytes) => bytes,
            Err(why) => {
                broker.meta = Some(Err(PropsError {
                    line: None,
                    error: ParseError::new(0, why),
                }));
                return;
            }
        };
        match parse_properties(&bytes) {
            Ok(props) => {
                broker.meta_raw = Some(props.clone());
                let meta = MetaProperties::from_properties(props);
                if let Err(e) = &meta {
                    self.warn(
                        path,
                        format!("Kafka would reject this meta.properties: {e}"),
                    );
                }
                broker.meta = Some(meta);
            }
            Err(e) => {
                self.warn(path, format!("Kafka cannot load this properties file: {e}"));
                broker.meta = Some(Err(e));
            }
        }
    }

    fn report_checkpoint<T>(&mut self, path: &Path, cp: &Checkpoint<T>) {
        if cp.problems.is_empty() {
            return;
        }
        let first = cp.first_rejection().unwrap_or(&cp.problems[0]);
        let (level, verdict) = if cp.kafka_accepts() {
            (
                Level::Note,
                "Kafka reads it, but its writer never leaves this",
            )
        } else {
            (Level::Warning, "Kafka would fail to read it")
        };
        let more = match cp.problem_count() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        let message = format!(
            "{verdict}: {first}{more}; {} could be read",
            crate::format::text::count(cp.entries.len() as u64, "entry", "entries")
        );
        self.diags.push(Diagnostic {
            path: path.to_path_buf(),
            level,
            message: message.into(),
        });
    }

    /// Reads a small text file read-only; reports empty, oversized and
    /// unreadable files. `empty` says what an empty file means: `None` for
    /// nothing to report, else the level and explanation. `None` when the
    /// read failed; `Some(Err(why))` when the file is over
    /// [`MAX_PROPERTIES_BYTES`] (judged by the open file's length: nothing
    /// of it is read or held).
    fn read_text(
        &mut self,
        path: &Path,
        empty: Option<(Level, &str)>,
    ) -> Option<Result<Vec<u8>, String>> {
        let file = match fs::File::open(path) {
            Ok(f) => f,
            Err(e) => {
                self.read_failed(path, format!("cannot open for reading: {e}"));
                return None;
            }
        };
        let len = match file.len() {
            Ok(n) => n,
            Err(e) => {
                self.read_failed(path, format!("cannot stat: {e}"));
                return None;
            }
        };
        if len > MAX_PROPERTIES_BYTES {
            return Some(Err(self.refuse(path, over_properties_cap(len))));
        }
        let mut bytes = Vec::new();
        if let Err(e) = file.take(MAX_PROPERTIES_BYTES + 1).read_to_end(&mut bytes) {
            self.read_failed(path, format!("read error: {e}"));
            return None;
        }
        if bytes.len() as u64 > MAX_PROPERTIES_BYTES {
            // It grew since its length was looked at.
            let why = over_properties_cap(bytes.len() as u64);
            return Some(Err(self.refuse(path, why)));
        }
        self.say_empty(path, bytes.is_empty(), empty);
        Some(Ok(bytes))
    }

    /// A file over one of klf's caps: a warning, and kept as refused (its
    /// reader goes on as if Kafka could not use it). Returns the reason.
    fn refuse(&mut self, path: &Path, why: String) -> String {
        fs::note_refused(path, why.clone());
        self.refused.insert(path.to_path_buf());
        let why = format!("not read: {why}");
        self.warn(path, why.clone());
        why
    }

    fn say_empty(&mut self, path: &Path, is_empty: bool, empty: Option<(Level, &str)>) {
        if let (true, Some((level, why))) = (is_empty, empty) {
            self.diags.push(Diagnostic {
                path: path.to_path_buf(),
                level,
                message: format!("empty file: {why}").into(),
            });
        }
    }

    /// Reads a checkpoint file read-only, a line at a time through `read`
    /// (which applies the checkpoint's caps); reports empty, unreadable and
    /// over-cap files. `None` when it could not be read or is over a cap
    /// (then left out, as if missing: nothing of it is used).
    fn read_checkpoint<T>(
        &mut self,
        path: &Path,
        empty: (Level, &str),
        read: impl FnOnce(&mut dyn std::io::BufRead) -> Result<Checkpoint<T>, ReadError>,
    ) -> Option<Checkpoint<T>> {
        let file = match fs::File::open(path) {
            Ok(f) => f,
            Err(e) => {
                self.read_failed(path, format!("cannot open for reading: {e}"));
                return None;
            }
        };
        // a file held in memory (an archive's, a digest's) needs no more
        // buffer than its length
        let cap = match &file {
            fs::File::Memory(c) => c.get_ref().len().saturating_add(1).min(64 * 1024),
            fs::File::Disk(..) | fs::File::Careful(..) => 64 * 1024,
        };
        let mut r = std::io::BufReader::with_capacity(cap, file);
        let read = read(&mut r);
        match read {
            Ok(cp) => {
                let is_empty = cp.version.is_none() && cp.problem_count() == 0;
                self.say_empty(path, is_empty, Some(empty));
                Some(cp)
            }
            Err(ReadError::Read(e)) => {
                self.read_failed(path, format!("read error: {e}"));
                None
            }
            Err(ReadError::OverCap(c)) => {
                self.refuse(path, c.to_string());
                None
            }
            Err(ReadError::Sink(never)) => match never {},
        }
    }

    /// What a directory entry is after following a symlink; `None` (reported)
    /// when it cannot be used.
    fn entry_kind(&mut self, path: &Path, entry: &fs::DirEntry, root: &Path) -> Option<EntryKind> {
        let ft = match entry.file_type() {
            Ok(ft) => ft,
            Err(e) => {
                fs::read_failed(path, &e);
                self.read_failed(path, format!("cannot stat: {e}"));
                return None;
            }
        };
        let ft = if ft.is_symlink() {
            match fs::metadata(path) {
                Ok(m) => {
                    self.check_symlink_target(path, root);
                    m.file_type()
                }
                Err(e) => {
                    self.link_failed(path, &e);
                    return None;
                }
            }
        } else {
            ft
        };
        if ft.is_dir() {
            Some(EntryKind::Dir)
        } else if ft.is_file() {
            Some(EntryKind::File)
        } else {
            self.warn(
                path,
                "neither a regular file nor a directory (device, socket or pipe); skipped",
            );
            None
        }
    }

    fn read_partition_dir(
        &mut self,
        dir: &Path,
        log_dir: &Path,
        root: &Path,
        parsed: PartitionDirName,
        node_id: Option<i32>,
        checkpoints: &BrokerCheckpoints,
    ) -> Replica {
        let mut r = Replica {
            topic: parsed.topic,
            partition: parsed.partition,
            node_id,
            log_dir: log_dir.to_path_buf(),
            dir: dir.to_path_buf(),
            kind: parsed.kind,
            segments: Vec::new(),
            snapshots: Vec::new(),
            pending: Vec::new(),
            kraft_snapshots: Vec::new(),
            quorum_state: None,
            leader_epoch_checkpoint: None,
            partition_metadata: None,
            high_watermark: None,
            log_start_offset: None,
            recovery_point: None,
            cleaner_offset: None,
            other_files: Vec::new(),
        };
        match &r.kind {
            ReplicaKind::Delete { .. } => self.note(
                dir,
                "partition deleted, awaiting removal (-delete): not a live replica; the topic name may be cut short",
            ),
            ReplicaKind::Future { .. } => self.note(
                dir,
                "target of an intra-broker move between log directories (-future): not the live replica",
            ),
            ReplicaKind::Stray { .. } => self.note(
                dir,
                "stray replica no longer assigned to this broker (-stray): not a live replica; the topic name may be cut short",
            ),
            ReplicaKind::Live | ReplicaKind::Metadata => {}
        }
        if r.kind != ReplicaKind::Metadata {
            r.high_watermark = checkpoints.offset_of(
                OffsetCheckpointKind::ReplicationOffset,
                &r.topic,
                r.partition,
            );
            r.log_start_offset =
                checkpoints.offset_of(OffsetCheckpointKind::LogStartOffset, &r.topic, r.partition);
            r.recovery_point =
                checkpoints.offset_of(OffsetCheckpointKind::RecoveryPoint, &r.topic, r.partition);
            r.cleaner_offset =
                checkpoints.offset_of(OffsetCheckpointKind::CleanerOffset, &r.topic, r.partition);
        }
        let mut segments: BTreeMap<i64, SegmentFiles> = BTreeMap::new();
        for entry in self.list_dir(dir) {
            // the listed folder joined with the name
            let path = entry.path_ref().to_path_buf();
            let Some(name) = entry.name().to_str() else {
                self.warn(&path, "name is not valid UTF-8; skipped");
                continue;
            };
            let Some(kind) = self.entry_kind(&path, &entry, root) else {
                continue;
            };
            if kind == EntryKind::Dir {
                if parse_segment_file_name(name).is_some() {
                    self.warn(&path, "a directory named like a segment file; skipped (Kafka ignores directories here)");
                } else {
                    self.warn(
                        &path,
                        "unexpected directory inside a partition directory; skipped",
                    );
                }
                continue;
            }
            if name == LEADER_EPOCH_CHECKPOINT_FILE {
                let empty = (
                    Level::Note,
                    "no leader epoch recorded (Kafka creates the file empty)",
                );
                let read =
                    |r: &mut dyn std::io::BufRead| read_leader_epoch_checkpoint(r, &Limits::EPOCHS);
                if let Some(checkpoint) = self.read_checkpoint(&path, empty, read) {
                    self.report_checkpoint(&path, &checkpoint);
                    r.leader_epoch_checkpoint = Some(Box::new(CheckpointFile { path, checkpoint }));
                }
                continue;
            }
            if name == PARTITION_METADATA_FILE {
                let empty = (Level::Warning, "Kafka cannot read a topic id from it");
                if let Some(text) = self.read_text(&path, Some(empty)) {
                    let pm = match text {
                        Ok(bytes) => {
                            let pm = parse_partition_metadata(&bytes);
                            if let Err(e) = &pm {
                                self.warn(
                                    &path,
                                    format!("Kafka would fail to read partition.metadata: {e}"),
                                );
                            }
                            pm
                        }
                        // Over the cap (already said): no topic id from it.
                        Err(why) => Err(PropsError {
                            line: None,
                            error: ParseError::new(0, why),
                        }),
                    };
                    r.partition_metadata = Some(Box::new(pm));
                }
                continue;
            }
            if name == "quorum-state" && r.kind == ReplicaKind::Metadata {
                // Nothing is read from it here: whoever reads it (`klf
                // dump`) reports a failure, and no probe opens it twice.
                r.quorum_state = Some(path);
                continue;
            }
            if name.ends_with(".tmp") {
                self.note(
                    &path,
                    "temporary file of a write that had not been renamed into place: \
                     the broker stopped, or the capture was taken, mid-write; Kafka ignores it",
                );
                r.other_files.push(path);
                continue;
            }
            let Some(seg) = parse_segment_file_name(name) else {
                self.warn(&path, "unrecognised file in a partition directory");
                r.other_files.push(path);
                continue;
            };
            // Whether it reads is the real open's to say (an error of the
            // machine there is an I/O error, not a file left out).
            if !seg.canonical {
                self.warn(
                    &path,
                    "offset in the name is not zero-padded to 20 digits as Kafka writes it",
                );
            }
            let len = self.check_empty(&path, entry.tree_len(), seg.kind, seg.pending);
            if seg.kind == SegmentFileKind::KraftSnapshot {
                if let Some(state) = seg.pending {
                    self.note(&path, format!("KRaft snapshot {}", pending_phrase(state)));
                }
                if r.kind != ReplicaKind::Metadata {
                    self.warn(&path, "KRaft snapshot outside the metadata log directory");
                }
                r.kraft_snapshots.push(KraftSnapshotFile {
                    end_offset: seg.offset,
                    epoch: seg.epoch.unwrap_or(0),
                    pending: seg.pending,
                    path,
                });
                continue;
            }
            if let Some(state) = seg.pending {
                self.note(&path, pending_phrase(state));
                r.pending.push(PendingFile {
                    offset: seg.offset,
                    kind: seg.kind,
                    state,
                    path,
                });
                continue;
            }
            if seg.kind == SegmentFileKind::Snapshot {
                r.snapshots.push(SnapshotFile {
                    offset: seg.offset,
                    path,
                });
                continue;
            }
            let s = segments.entry(seg.offset).or_insert_with(|| SegmentFiles {
                base_offset: seg.offset,
                log: None,
                index: None,
                timeindex: None,
                txnindex: None,
                log_len: None,
            });
            if seg.kind == SegmentFileKind::Log && s.log.is_none() {
                s.log_len = len;
            }
            let slot = match seg.kind {
                SegmentFileKind::Log => &mut s.log,
                SegmentFileKind::Index => &mut s.index,
                SegmentFileKind::TimeIndex => &mut s.timeindex,
                _ => &mut s.txnindex,
            };
            if let Some(prev) = slot.as_ref() {
                // Two names for one offset (e.g. 5.log and 00000000000000000005.log).
                self.warn(
                    &path,
                    format!("same segment file as {}; keeping the first", prev.display()),
                );
            } else {
                *slot = Some(path);
            }
        }
        for s in segments.values() {
            if s.log.is_none() {
                let any = s
                    .index
                    .as_ref()
                    .or(s.timeindex.as_ref())
                    .or(s.txnindex.as_ref());
                if let Some(p) = any {
                    self.warn(p, "index without its .log segment: Kafka deletes such orphaned indexes on load");
                }
            }
        }
        r.segments = segments.into_values().collect();
        r.snapshots.sort();
        r.pending.sort();
        r.kraft_snapshots.sort();
        r.other_files.sort();
        if r.segments.is_empty() && r.kind == ReplicaKind::Live {
            self.warn(dir, "partition directory without any .log segment");
        }
        r
    }

    /// Notes an empty file; its size.
    fn check_empty(
        &mut self,
        path: &Path,
        listed_len: Option<u64>,
        kind: SegmentFileKind,
        pending: Option<PendingState>,
    ) -> Option<u64> {
        let len = match listed_len {
            Some(n) => n,
            None => fs::metadata(path).ok()?.len(),
        };
        if len != 0 || pending.is_some() {
            return Some(len);
        }
        match kind {
            SegmentFileKind::Log => self.note(path, "empty segment (normal for a segment just rolled)"),
            SegmentFileKind::Index | SegmentFileKind::TimeIndex | SegmentFileKind::TxnIndex => {
                self.note(path, "empty index (normal when its segment is small)")
            }
            SegmentFileKind::Snapshot => {
                // A broker killed while writing one leaves it so; Kafka
                // deletes it on load and rebuilds from an earlier snapshot
                // and the log (check's producer-snapshot-invalid says so).
                self.note(path, "empty producer snapshot (a write cut short): Kafka deletes it when it loads the log and rebuilds producer state from an earlier snapshot and the log")
            }
            SegmentFileKind::KraftSnapshot => {
                self.warn(path, "empty KRaft snapshot: a complete snapshot holds at least header and footer batches")
            }
        }
        Some(0)
    }

    fn cross_check_checkpoints(&mut self, broker: &Broker, replicas: &[Replica]) {
        if broker.partial {
            return;
        }
        let present: BTreeSet<(&str, i32)> = replicas
            .iter()
            .filter(|r| r.kind != ReplicaKind::Metadata)
            .map(|r| (r.topic.as_str(), r.partition))
            .collect();
        for kind in [
            OffsetCheckpointKind::ReplicationOffset,
            OffsetCheckpointKind::RecoveryPoint,
        ] {
            let Some(file) = broker.checkpoints.get(kind) else {
                continue;
            };
            let listed: BTreeSet<(&str, i32)> = file
                .checkpoint
                .entries
                .iter()
                .map(|e| (e.topic.as_str(), e.partition))
                .collect();
            for (t, p) in listed.difference(&present) {
                self.note(
                    &file.path,
                    format!("lists {t}-{p}, which has no partition directory here"),
                );
            }
            if file.checkpoint.kafka_accepts() && file.checkpoint.version.is_some() {
                for (t, p) in present.difference(&listed) {
                    self.note(
                        &file.path,
                        format!("does not list {t}-{p}, which has a partition directory here"),
                    );
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    File,
    Dir,
}

fn pending_phrase(state: PendingState) -> &'static str {
    match state {
        PendingState::Deleted => "scheduled for deletion (.deleted): not part of the log; Kafka deletes it on next load",
        PendingState::Cleaned => "output of an unfinished compaction (.cleaned): Kafka deletes it on next load",
        PendingState::Swap => "compaction or split output being swapped in (.swap): Kafka completes or discards the swap on next load",
        PendingState::Part => "being written (.part): incomplete",
    }
}

/// The parent of `p`, `.` for a bare relative name.
/// The name of the node folder a digest was made of, for the root of a
/// mounted digest (`controller-100.klfd!` → `controller-100`).
fn digest_root_stem(p: &Path) -> Option<&str> {
    if !fs::is_virtual(p) {
        return None;
    }
    let name = p.file_name()?.to_str()?.strip_suffix('!')?;
    let cut = name.len().checked_sub(".klfd".len())?;
    name.get(cut..)?
        .eq_ignore_ascii_case(".klfd")
        .then(|| &name[..cut])
}

fn parent_dir(p: &Path) -> Option<PathBuf> {
    p.parent().map(|q| {
        if q.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            q.to_path_buf()
        }
    })
}

fn canonical_or_self(p: &Path) -> PathBuf {
    fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn is_file(p: &Path) -> bool {
    fs::metadata(p).map(|m| m.is_file()).unwrap_or(false)
}

fn is_dir(p: &Path) -> bool {
    fs::metadata(p).map(|m| m.is_dir()).unwrap_or(false)
}

/// A partition directory: contains a segment file, `leader-epoch-checkpoint`
/// or `partition.metadata`.
fn looks_like_partition_dir(p: &Path) -> bool {
    let Ok(rd) = fs::read_dir(p) else {
        return false;
    };
    rd.flatten().any(|e| {
        e.file_name().to_str().is_some_and(|n| {
            n == LEADER_EPOCH_CHECKPOINT_FILE
                || n == PARTITION_METADATA_FILE
                || parse_segment_file_name(n).is_some()
        })
    })
}

/// A broker log directory: `meta.properties`, or (without it) a checkpoint
/// file, a clean shutdown marker, or a partition directory with content.
fn looks_like_log_dir(p: &Path) -> bool {
    if !is_dir(p) {
        return false;
    }
    if is_file(&p.join(META_PROPERTIES_FILE)) {
        return true;
    }
    let Ok(rd) = fs::read_dir(p) else {
        return false;
    };
    rd.flatten().any(|e| {
        let Some(n) = e.file_name().to_str().map(str::to_owned) else {
            return false;
        };
        OffsetCheckpointKind::from_file_name(&n).is_some()
            || n == CLEAN_SHUTDOWN_FILE
            || (parse_partition_dir_name(&n).is_ok() && looks_like_partition_dir(&e.path()))
    })
}

/// A log directory by its own files: `meta.properties`, an offset
/// checkpoint or a clean shutdown marker (partition directories alone do not count).
fn has_log_dir_files(p: &Path) -> bool {
    is_file(&p.join(META_PROPERTIES_FILE))
        || is_file(&p.join(CLEAN_SHUTDOWN_FILE))
        || OffsetCheckpointKind::ALL
            .iter()
            .any(|k| is_file(&p.join(k.file_name())))
}

/// The klf command a refusal's advice names (set once by the CLI; `diff`
/// when unset).
static COMMAND: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Names the klf command that runs discovery, for the commands its advice
/// gives (`klf check capture/before`).
pub fn set_command(name: &'static str) {
    let _ = COMMAND.set(name);
}

/// How many folders down a capture's log directories may be found:
/// `CAPTURE/NODE/d1`, `CAPTURE/NODE/data-0/kafka-log0`.
const NESTED_DEPTH: usize = 3;

/// Folders of a nested capture visited at most, whatever its depth: a
/// capture's nodes and their log directories, not a whole disk.
const NESTED_FOLDERS: usize = 10_000;

/// The log directories below `top` (itself included), in name order, up to
/// [`NESTED_DEPTH`] folders below the capture; a log directory's own
/// folders (its partitions) are not searched. Second: the folders beside a
/// folder's log directories that hold log directories of their own and are
/// not one more node of it (an `after/` beside the nodes): other captures,
/// not read. A node folder beside them (`broker-1/` holding `d1` and `d2`
/// beside a controller's log directory) is read with them (see
/// [`node_folder_joins`]).
fn nested_log_dirs(top: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut visited = 0;
    let (mut out, mut others) = nested_walk(top, 1, &mut visited);
    out.sort();
    others.sort();
    (out, others)
}

/// [`nested_log_dirs`] of `dir`, `depth` folders below the capture,
/// counting the folders visited.
fn nested_walk(dir: &Path, depth: usize, visited: &mut usize) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut others = Vec::new();
    *visited += 1;
    if *visited > NESTED_FOLDERS {
        return (out, others);
    }
    if looks_like_log_dir(dir) {
        out.push(dir.to_path_buf());
        return (out, others);
    }
    if depth >= NESTED_DEPTH {
        return (out, others);
    }
    let Ok(rd) = fs::read_dir(dir) else {
        return (out, others);
    };
    let mut children: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_dir(p))
        .collect();
    children.sort();
    // A folder of log directories is a capture: its other folders are
    // other captures (an `after/` beside the nodes), as at the top, but
    // for the folders of one more node of it (a node's several log
    // directories beside a controller's log directory).
    let logs: Vec<PathBuf> = children
        .iter()
        .filter(|c| looks_like_log_dir(c))
        .cloned()
        .collect();
    if !logs.is_empty() {
        let mut taken: Vec<Identity> = logs.iter().map(|l| log_dir_identity(l)).collect();
        for c in children.iter().filter(|c| !logs.contains(c)) {
            let (dirs, sub_others) = nested_walk(c, depth + 1, visited);
            if dirs.is_empty() {
                continue;
            }
            let ids: Vec<Identity> = dirs.iter().map(|d| log_dir_identity(d)).collect();
            if node_folder_joins(&ids, &taken) {
                out.extend(dirs);
                others.extend(sub_others);
                taken.extend(ids);
            } else {
                others.push(c.clone());
            }
        }
        out.extend(logs);
        return (out, others);
    }
    // depth first, in name order
    for c in children {
        let (d, o) = nested_walk(&c, depth + 1, visited);
        out.extend(d);
        others.extend(o);
    }
    (out, others)
}

/// Whether log directories found in one folder (`ids`, who each says it
/// is) are one more node of a capture whose log directories say `taken`:
/// they all name the same node, and none is a log directory the capture
/// already has (that node with the same directory id, or either without
/// one, as ZooKeeper mode writes). A folder of several nodes (an `after/`)
/// or of a node already there is another capture.
fn node_folder_joins(ids: &[Identity], taken: &[Identity]) -> bool {
    let Some(node) = single_node(ids) else {
        return false;
    };
    let clusters: BTreeSet<&str> = taken.iter().filter_map(|t| t.cluster.as_deref()).collect();
    ids.iter().all(|i| {
        i.cluster
            .as_deref()
            .is_none_or(|c| clusters.is_empty() || clusters.contains(c))
            && !taken.iter().any(|t| same_log_dir(node, i, t))
    })
}

/// The node all of `ids` name, if they name one and the same.
fn single_node(ids: &[Identity]) -> Option<i32> {
    let first = ids.first()?.node?;
    ids.iter().all(|i| i.node == Some(first)).then_some(first)
}

/// Whether `other` may be the same log directory of `node` as `id`: the
/// same node, and the same directory id or no directory id to tell them
/// apart.
fn same_log_dir(node: i32, id: &Identity, other: &Identity) -> bool {
    other.node == Some(node)
        && match (&id.directory, &other.directory) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
}

/// The node id (`node.id`, else `broker.id`), cluster id and directory id
/// a log directory's `meta.properties` gives, read leniently (discovery reads it
/// again, and says what is wrong with it).
fn log_dir_identity(dir: &Path) -> Identity {
    let path = dir.join(META_PROPERTIES_FILE);
    let Ok(file) = fs::File::open(&path) else {
        return Identity::default();
    };
    let mut bytes = Vec::new();
    if file
        .take(MAX_PROPERTIES_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return Identity::default();
    }
    let Ok(props) = parse_properties(&bytes) else {
        return Identity::default();
    };
    let get = |k: &str| props.get(k).map(|v| v.trim().to_string());
    Identity {
        node: get("node.id")
            .or_else(|| get("broker.id"))
            .and_then(|v| v.parse().ok()),
        cluster: get("cluster.id"),
        directory: get("directory.id"),
    }
}

/// A folder of a capture that holds log directories below it: what
/// [`nested_log_dirs`] found there.
struct NestedTop {
    path: PathBuf,
    /// Its log directories.
    dirs: Vec<PathBuf>,
    /// Who each of them says it is.
    ids: Vec<Identity>,
    /// Other captures found in it (not read).
    others: Vec<PathBuf>,
}

/// Who a log directory says it is (see [`log_dir_identity`]).
#[derive(Default, Clone)]
struct Identity {
    node: Option<i32>,
    cluster: Option<String>,
    /// `directory.id` (KRaft, one per log directory of a node).
    directory: Option<String>,
}

/// Whether `p` is a broker log directory, or a folder holding some (up to
/// three folders down, `NESTED_DEPTH`).
pub fn holds_log_directories(p: &Path) -> bool {
    looks_like_log_dir(p) || holds_log_dirs(p)
}

/// A folder whose direct children include broker log directories, or
/// whose folders hold them (up to [`NESTED_DEPTH`] down).
fn holds_log_dirs(p: &Path) -> bool {
    !nested_log_dirs(p).0.is_empty()
}

/// The folders of `p` that are log directories or hold some (an `after/`
/// capture's `broker-1`, ...), by name.
fn capture_folder_names(p: &Path) -> Vec<String> {
    let Ok(rd) = fs::read_dir(p) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter(|e| is_dir(&e.path()) && holds_log_directories(&e.path()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_dir_names_like_kafka() {
        let p = parse_partition_dir_name("orders-3").unwrap();
        assert_eq!(
            (p.topic.as_str(), p.partition, &p.kind),
            ("orders", 3, &ReplicaKind::Live)
        );
        let p = parse_partition_dir_name("my.topic-with-dashes-12").unwrap();
        assert_eq!(
            (p.topic.as_str(), p.partition),
            ("my.topic-with-dashes", 12)
        );
        let p = parse_partition_dir_name("__cluster_metadata-0").unwrap();
        assert_eq!(p.kind, ReplicaKind::Metadata);
        let p = parse_partition_dir_name("a.b-3.0123456789abcdef0123456789abcdef-delete").unwrap();
        assert_eq!((p.topic.as_str(), p.partition), ("a.b", 3));
        assert_eq!(
            p.kind,
            ReplicaKind::Delete {
                uid: "0123456789abcdef0123456789abcdef".into()
            }
        );
        assert!(matches!(
            parse_partition_dir_name("t-1.ff-future").unwrap().kind,
            ReplicaKind::Future { .. }
        ));
        assert!(matches!(
            parse_partition_dir_name("t-x-1.ff-stray").unwrap().kind,
            ReplicaKind::Stray { .. }
        ));
        for bad in [
            "orders",
            "-3",
            "orders-",
            "orders-x",
            "orders-3-delete",
            "t-1.-future",
            "orders-99999999999",
        ] {
            assert!(parse_partition_dir_name(bad).is_err(), "{bad}");
        }
        // Split at the last '-'; Java's parseInt takes a '+' sign.
        let p = parse_partition_dir_name("t--1").unwrap();
        assert_eq!((p.topic.as_str(), p.partition), ("t-", 1));
        assert_eq!(parse_partition_dir_name("t-+1").unwrap().partition, 1);
    }

    #[test]
    fn segment_file_names() {
        let s = parse_segment_file_name("00000000000000000042.log").unwrap();
        assert_eq!(
            (s.offset, s.kind, s.pending, s.canonical),
            (42, SegmentFileKind::Log, None, true)
        );
        let s = parse_segment_file_name("00000000000000000042.timeindex.deleted").unwrap();
        assert_eq!(
            (s.kind, s.pending),
            (SegmentFileKind::TimeIndex, Some(PendingState::Deleted))
        );
        let s = parse_segment_file_name("00000000000000000100-0000000003.checkpoint").unwrap();
        assert_eq!(
            (s.offset, s.epoch, s.kind),
            (100, Some(3), SegmentFileKind::KraftSnapshot)
        );
        let s = parse_segment_file_name("00000000000000000100-0000000003.checkpoint.part").unwrap();
        assert_eq!(s.pending, Some(PendingState::Part));
        assert!(!parse_segment_file_name("42.log").unwrap().canonical);
        for bad in [
            "leader-epoch-checkpoint",
            "x.log",
            ".log",
            "00000000000000000042.txt",
            "0.log.part",
            "99999999999999999999.log",
        ] {
            assert!(parse_segment_file_name(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn folder_names() {
        assert_eq!(node_id_from_folder_name("broker-3"), Some(3));
        assert_eq!(node_id_from_folder_name("kafka_12"), Some(12));
        assert_eq!(node_id_from_folder_name("node7"), Some(7));
        assert_eq!(node_id_from_folder_name("5"), Some(5));
        assert_eq!(node_id_from_folder_name("after"), None);
        assert_eq!(node_id_from_folder_name("orders-topic-3"), None);
    }
}
