//! Reading captures straight from tar archives, and the file-system calls
//! the rest of [`crate::capture`] makes, so that a directory tree inside an
//! archive reads like one on disk.
//!
//! [`mount`] reads a `.tar`, `.tar.gz`/`.tgz` or `.tar.zst`/`.tzst` file into
//! memory (nothing is extracted to disk) and registers its tree under a
//! virtual root: the archive's path with `!` appended. A file `broker-1/t-0/00000000000000000000.log`
//! of `capture.tar.gz` is then `capture.tar.gz!/broker-1/t-0/00000000000000000000.log`,
//! and that is how every report names it.
//!
//! The functions below ([`metadata`], [`read_dir`], [`canonicalize`],
//! [`File::open`], [`open`], [`read`]) have the shape of their `std::fs`
//! counterparts: on a path under a mounted root they answer from memory,
//! on any other path they call `std::fs` (so behaviour on real directories
//! is unchanged).
//!
//! An archive is refused whole when an entry would land outside its root:
//! an absolute path, a `..` component, or a symlink or hard link whose target
//! leaves the root. Symlinks and hard links to files inside the archive read
//! as copies of their target; other entry kinds (devices, fifos, links to
//! directories) are left out and listed in [`Mounted::skipped`]. The total
//! size of the files read is capped ([`DEFAULT_LIMIT`] unless the caller
//! says otherwise); past the cap the archive is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::mmap::FileBytes;

/// Default cap on the bytes of all files of one archive held in memory: 4 GiB.
pub const DEFAULT_LIMIT: u64 = 4 << 30;

/// File name endings recognised as archives.
pub const ARCHIVE_SUFFIXES: &[&str] = &[".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst"];

/// Whether a path names an archive klf reads (by its name).
pub fn is_archive_name(p: &Path) -> bool {
    let name = p.to_string_lossy().to_ascii_lowercase();
    ARCHIVE_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Compression of an archive, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Plain tar.
    None,
    /// gzip.
    Gzip,
    /// Zstandard.
    Zstd,
}

/// Why an archive could not be mounted.
#[derive(Debug)]
pub enum ArchiveError {
    /// The archive file could not be opened or read, or is not a tar archive.
    Read {
        /// The archive.
        archive: PathBuf,
        /// Byte position in the (decompressed) tar stream, when known.
        pos: Option<u64>,
        /// What went wrong.
        reason: String,
    },
    /// An entry would land outside the archive root.
    Escapes {
        /// The archive.
        archive: PathBuf,
        /// Byte position of the entry's header in the (decompressed) tar stream.
        pos: u64,
        /// The entry's name as stored.
        entry: String,
        /// Why it escapes.
        reason: String,
    },
    /// The files add up to more than the cap.
    TooLarge {
        /// The archive.
        archive: PathBuf,
        /// The cap in bytes.
        limit: u64,
        /// The entry that went past it.
        entry: String,
    },
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveError::Read { archive, pos, reason } => {
                write!(f, "{}", archive.display())?;
                if let Some(p) = pos {
                    write!(f, ":{p}")?;
                }
                write!(
                    f,
                    ": cannot read this archive: {reason} (klf reads .tar, .tar.gz/.tgz and .tar.zst/.tzst; check that the file is complete, e.g. with `tar -tf`)"
                )
            }
            ArchiveError::Escapes { archive, pos, entry, reason } => write!(
                f,
                "{}:{pos}: entry {entry:?} {reason}; refusing the archive (every entry must stay inside the archive's root: re-create it with relative paths, e.g. `tar -C capture -czf capture.tar.gz .`)",
                archive.display()
            ),
            ArchiveError::TooLarge { archive, limit, entry } => write!(
                f,
                "{}: the files add up to more than {} ({limit} bytes) at entry {entry:?}; klf holds an archive's files in memory: raise the cap with --archive-limit or extract the archive and pass the directory",
                archive.display(),
                human_bytes(*limit)
            ),
        }
    }
}

impl std::error::Error for ArchiveError {}

use crate::format::text::human_bytes;

/// What [`mount`] read.
#[derive(Debug, Clone)]
pub struct Mounted {
    /// The virtual root: the archive path with `!` appended.
    pub root: PathBuf,
    /// Compression found.
    pub compression: Compression,
    /// Regular files (links resolved to files count once per name).
    pub files: usize,
    /// Bytes of file content held in memory.
    pub bytes: u64,
    /// The cap that applied.
    pub limit: u64,
    /// Entries left out, with why.
    pub skipped: Vec<(String, String)>,
}

/// A file of an archive: its bytes (shared by every name that links to it,
/// never copied) and the modification time its header records.
#[derive(Debug, Clone)]
struct FileEntry {
    content: Content,
    mtime: Option<u64>,
}

/// What a tree holds of a file.
#[derive(Debug, Clone)]
enum Content {
    /// Its bytes, then `zero_tail` zeros (a preallocated index a digest
    /// ships up to the end of its data).
    Held { bytes: Arc<Vec<u8>>, zero_tail: u64 },
    /// A file of a digest whose bytes are not held: its length on the node.
    Absent(u64),
}

impl FileEntry {
    fn len(&self) -> u64 {
        match &self.content {
            Content::Held { bytes, zero_tail } => (bytes.len() as u64).saturating_add(*zero_tail),
            Content::Absent(len) => *len,
        }
    }

    /// The bytes, or why they cannot be had.
    fn bytes(&self, p: &Path) -> io::Result<&Arc<Vec<u8>>> {
        match &self.content {
            Content::Held { bytes, .. } => Ok(bytes),
            Content::Absent(_) => Err(not_in_digest(p)),
        }
    }
}

/// The error of a read of a file a digest lists without its bytes.
pub fn not_in_digest(_: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "its bytes are not in the digest (a digest holds batch summaries, not records or index entries; read the file on its node)",
    )
}

/// One file of a tree registered with [`register_tree`].
#[derive(Debug, Clone)]
pub enum TreeFile {
    /// Held in memory.
    Bytes {
        /// The content, up to the end of its data.
        bytes: Vec<u8>,
        /// Modification time, seconds since the epoch.
        mtime: Option<u64>,
        /// The file's length: past `bytes`, zeros.
        len: u64,
    },
    /// Listed: its length and time, its bytes not held.
    Absent {
        /// Length on the node.
        len: u64,
        /// Modification time, seconds since the epoch.
        mtime: Option<u64>,
    },
}

/// Registers a tree of files under the virtual root `root` (a digest's
/// path with `!` appended), as [`mount`] does for an archive: `files` are
/// relative paths, `dirs` directories that exist even when empty.
pub fn register_tree(root: &Path, files: Vec<(PathBuf, TreeFile)>, dirs: Vec<PathBuf>) {
    build_tree(root, files, dirs).register();
}

/// A tree built and not yet registered ([`build_tree`]): trees can be built
/// on several threads, then registered in a chosen order.
#[derive(Debug)]
pub struct BuiltTree(Tree);

impl BuiltTree {
    /// Registers the tree (replacing one at the same root), as
    /// [`register_tree`] does.
    pub fn register(self) {
        let tree = self.0;
        if let Ok(mut m) = MOUNTS.write() {
            m.retain(|t| t.root != tree.root);
            m.push(Arc::new(tree));
        }
    }
}

/// The tree [`register_tree`] registers, built without registering it.
pub fn build_tree(root: &Path, files: Vec<(PathBuf, TreeFile)>, dirs: Vec<PathBuf>) -> BuiltTree {
    let mut tree = Tree {
        abs_root: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
        root: root.to_path_buf(),
        count: 0,
        dirs: Dir::default(),
    };
    for d in dirs {
        tree.dirs.make(&d);
    }
    // the files of one folder come together (a digest and an archive list
    // a folder's files in a row): each run is added under its folder found
    // once
    let mut run: Vec<(OsString, FileEntry)> = Vec::new();
    let mut run_dir: Option<PathBuf> = None;
    for (rel, f) in files {
        let entry = match f {
            TreeFile::Bytes { bytes, mtime, len } => FileEntry {
                content: Content::Held {
                    zero_tail: len.saturating_sub(bytes.len() as u64),
                    bytes: Arc::new(bytes),
                },
                mtime,
            },
            TreeFile::Absent { len, mtime } => FileEntry {
                content: Content::Absent(len),
                mtime,
            },
        };
        let Some((parent, name)) = split_name(&rel) else {
            continue;
        };
        if run_dir.as_deref().map(Path::as_os_str) != Some(parent.as_os_str()) {
            tree.add_run(run_dir.take(), &mut run);
            run_dir = Some(parent.to_path_buf());
        }
        run.push((name.to_owned(), entry));
    }
    tree.add_run(run_dir, &mut run);
    BuiltTree(tree)
}

/// A directory of an archive: its subdirectories and the names of its files.
/// A trie, so memory grows with the names an archive holds, not with their
/// depth times their length.
#[derive(Debug, Default)]
struct Dir {
    dirs: BTreeMap<OsString, Dir>,
    files: BTreeMap<OsString, FileEntry>,
}

impl Dir {
    fn find(&self, rel: &Path) -> Option<&Dir> {
        let mut d = self;
        for c in names(rel) {
            d = d.dirs.get(c)?;
        }
        Some(d)
    }

    fn make(&mut self, rel: &Path) -> &mut Dir {
        let mut d = self;
        for k in names(rel) {
            // a key is made only for a folder not there yet
            if !d.dirs.contains_key(k) {
                d.dirs.insert(k.to_owned(), Dir::default());
            }
            d = d
                .dirs
                .get_mut(k)
                .unwrap_or_else(|| unreachable!("inserted above"));
        }
        d
    }
}

/// The names along a path inside a tree, as [`Path::components`] gives
/// them for the relative paths a tree is built and looked up with
/// (`a/b/c`, made [`normal`]), without its parsing: the bytes split at
/// `/`, empty and `.` parts left out, a leading `/` kept as a name of its
/// own (as the root component, which no tree holds).
#[cfg(unix)]
fn names(p: &Path) -> impl Iterator<Item = &std::ffi::OsStr> {
    use std::os::unix::ffi::OsStrExt;
    let b = p.as_os_str().as_bytes();
    let root = (b.first() == Some(&b'/')).then(|| std::ffi::OsStr::new("/"));
    root.into_iter().chain(
        b.split(|&c| c == b'/')
            .filter(|s| !s.is_empty() && *s != b".")
            .map(std::ffi::OsStr::from_bytes),
    )
}

#[cfg(not(unix))]
fn names(p: &Path) -> impl Iterator<Item = &std::ffi::OsStr> {
    p.components().map(|c| c.as_os_str())
}

/// A tree path's folder and name (`a/b/c` → `a/b`, `c`), as
/// [`Path::parent`] and [`Path::file_name`] give them for the plain
/// relative paths of a tree.
#[cfg(unix)]
fn split_name(rel: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let b = rel.as_os_str().as_bytes();
    // anything but a plain path (`a//b`, `a/.`, `..`) the slow way
    if b.is_empty() || b.ends_with(b"/") || b.ends_with(b"/.") || b == b"." || b.ends_with(b"..") {
        return Some((rel.parent()?, rel.file_name()?));
    }
    Some(match b.iter().rposition(|&c| c == b'/') {
        Some(i) => (
            Path::new(std::ffi::OsStr::from_bytes(&b[..i])),
            std::ffi::OsStr::from_bytes(&b[i + 1..]),
        ),
        None => (Path::new(""), rel.as_os_str()),
    })
}

#[cfg(not(unix))]
fn split_name(rel: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    Some((rel.parent()?, rel.file_name()?))
}

#[derive(Debug)]
struct Tree {
    /// Virtual root as given (`capture.tar.gz!`).
    root: PathBuf,
    /// The same, absolute (lexically), to match absolute spellings.
    abs_root: PathBuf,
    /// How many files the tree holds.
    count: usize,
    /// Every directory, the root included.
    dirs: Dir,
}

impl Tree {
    /// An archive of one folder (`tar -czf capture.tar.gz capture/`) is
    /// read as that folder: `capture.tar.gz!/broker-1/...` names
    /// `capture/broker-1/...` when the archive holds nothing else at its
    /// top and has no `broker-1` of its own there. Paths spelled with the
    /// folder's name still work.
    fn through_single_folder(&self, r: PathBuf) -> PathBuf {
        // the tree's top first: it costs no walk, and most trees hold more
        // than one folder there
        if !self.dirs.files.is_empty() || self.dirs.dirs.len() != 1 {
            return r;
        }
        if r.as_os_str().is_empty() || self.has_file(&r) || self.is_dir(&r) {
            return r;
        }
        let Some(top) = self.dirs.dirs.keys().next() else {
            return r;
        };
        let inside = Path::new(top).join(&r);
        if self.has_file(&inside) || self.is_dir(&inside) {
            inside
        } else {
            r
        }
    }

    fn is_dir(&self, rel: &Path) -> bool {
        self.dirs.find(rel).is_some()
    }

    fn add_file(&mut self, rel: PathBuf, entry: FileEntry) {
        if let Some((parent, name)) = split_name(&rel) {
            if self
                .dirs
                .make(parent)
                .files
                .insert(name.to_owned(), entry)
                .is_none()
            {
                self.count += 1;
            }
        }
    }

    /// Adds the files of `run` (emptied) to the folder `dir`, as
    /// [`Tree::add_file`] adds each.
    fn add_run(&mut self, dir: Option<PathBuf>, run: &mut Vec<(OsString, FileEntry)>) {
        let Some(dir) = dir else {
            return;
        };
        let d = self.dirs.make(&dir);
        let before = d.files.len();
        d.files.extend(run.drain(..));
        self.count += d.files.len() - before;
    }

    fn forget_file(&mut self, rel: &Path) {
        if let Some((parent, name)) = split_name(rel) {
            if let Some(d) = self.dirs.find_mut(parent) {
                if d.files.remove(name).is_some() {
                    self.count -= 1;
                }
            }
        }
    }

    /// The file at `rel`, if the tree holds one.
    fn file(&self, rel: &Path) -> Option<&FileEntry> {
        let (parent, name) = split_name(rel)?;
        self.dirs.find(parent)?.files.get(name)
    }

    fn has_file(&self, rel: &Path) -> bool {
        self.file(rel).is_some()
    }
}

impl Dir {
    fn find_mut(&mut self, rel: &Path) -> Option<&mut Dir> {
        let mut d = self;
        for c in names(rel) {
            d = d.dirs.get_mut(c)?;
        }
        Some(d)
    }
}

/// `a/./b` → `a/b` (archive-internal paths are already free of `..`).
fn normal(p: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        // a plain path (what discovery passes around) is its own normal
        // form: copied, not parsed
        use std::os::unix::ffi::OsStrExt;
        let b = p.as_os_str().as_bytes();
        if b.is_empty()
            || (b[0] != b'/'
                && b.split(|&c| c == b'/')
                    .all(|s| !s.is_empty() && s != b"." && s != b".."))
        {
            return p.to_path_buf();
        }
    }
    p.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect()
}

static MOUNTS: RwLock<Vec<Arc<Tree>>> = RwLock::new(Vec::new());

fn lookup(p: &Path) -> Option<(Arc<Tree>, PathBuf)> {
    let mounts = MOUNTS.read().ok()?;
    if mounts.is_empty() {
        return None;
    }
    // the path as spelled under a root (what discovery passes around)
    // first; the absolute form (a system call for the working directory)
    // only when no root matches that way
    if let Some(found) = mounts.iter().find_map(|t| {
        under_root(p, &t.root).map(|r| (Arc::clone(t), t.through_single_folder(normal(r))))
    }) {
        return Some(found);
    }
    // klf never changes its working directory: it is asked for once
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        CWD.get_or_init(|| std::env::current_dir().ok())
            .as_ref()?
            .join(p)
    };
    let abs: PathBuf = abs
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    mounts.iter().find_map(|t| {
        abs.strip_prefix(&t.abs_root)
            .ok()
            .map(|r| (Arc::clone(t), t.through_single_folder(normal(r))))
    })
}

/// `p` with `root` taken off its front, when it lies under `root`: spelled
/// with the root's own bytes then a separator (what discovery passes
/// around; a comparison of bytes), or, as [`Path::strip_prefix`] compares
/// them, component by component.
fn under_root<'a>(p: &'a Path, root: &Path) -> Option<&'a Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        if let Some(rest) = p
            .as_os_str()
            .as_bytes()
            .strip_prefix(root.as_os_str().as_bytes())
        {
            match rest.split_first() {
                None => return Some(Path::new("")),
                Some((&b'/', r)) => return Some(Path::new(std::ffi::OsStr::from_bytes(r))),
                Some(_) => {}
            }
        }
    }
    p.strip_prefix(root).ok()
}

/// The mounted root `p` lies under and its path inside it (through a
/// single top folder, as reads go).
pub fn resolve(p: &Path) -> Option<(PathBuf, PathBuf)> {
    lookup(p).map(|(t, rel)| (t.root.clone(), rel))
}

/// Whether `p` lies under a mounted archive root.
pub fn is_virtual(p: &Path) -> bool {
    lookup(p).is_some()
}

/// The virtual root of an archive path (`capture.tar.gz` → `capture.tar.gz!`).
pub fn root_of(archive: &Path) -> PathBuf {
    let mut s = archive.as_os_str().to_owned();
    s.push("!");
    PathBuf::from(s)
}

/// Splits `capture.tar.gz!/broker-1/...` into the archive and the path
/// inside it, when some component ends in `!` and names an archive.
pub fn split_virtual(p: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut prefix = PathBuf::new();
    let mut comps = p.components();
    while let Some(c) = comps.next() {
        let s = c.as_os_str().to_string_lossy();
        if let Some(stem) = s.strip_suffix('!') {
            let archive = prefix.join(stem);
            if is_archive_name(&archive)
                || archive
                    .to_string_lossy()
                    .to_ascii_lowercase()
                    .ends_with(".klfd")
            {
                return Some((archive, comps.as_path().to_path_buf()));
            }
        }
        prefix.push(c);
    }
    None
}

/// Reads the archive at `archive` into memory and registers its tree under
/// [`root_of`]`(archive)`. Mounting the same path twice reads it once.
pub fn mount(archive: &Path, limit: u64) -> Result<Mounted, ArchiveError> {
    mount_with_progress(archive, limit, &mut |_| {})
}

/// Largest body of a PAX extended header or a GNU long name or long link
/// entry klf reads; a bigger claim is refused before anything is read.
pub const MAX_EXTENSION: u64 = 64 << 10;

/// Longest entry name (bytes), as Linux's `PATH_MAX`.
pub const MAX_NAME: usize = 4096;

/// Deepest entry (path components). A capture is a handful of levels deep
/// (`capture/broker-1/orders-0/00000000000000000000.log`); a name a
/// thousand directories deep is an attack on memory, not a capture.
pub const MAX_DEPTH: usize = 64;

/// How far the decompressed tar stream may run past `limit` (headers,
/// padding, entries left out) before the archive is refused.
fn stream_budget(limit: u64) -> u64 {
    limit.saturating_add(limit / 8).saturating_add(64 << 20)
}

/// [`mount`], calling `progress` with the number of archive (compressed)
/// bytes consumed so far.
pub fn mount_with_progress(
    archive: &Path,
    limit: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Mounted, ArchiveError> {
    let root = root_of(archive);
    let read_err = |pos: Option<u64>, reason: String| ArchiveError::Read {
        archive: archive.to_path_buf(),
        pos,
        reason,
    };
    // A pipe, socket or device named like an archive would block or never
    // end: only a regular file is opened.
    let meta = std::fs::metadata(archive).map_err(|e| read_err(None, e.to_string()))?;
    if meta.is_dir() {
        return Err(read_err(None, "it is a directory".into()));
    }
    if !meta.is_file() {
        return Err(read_err(
            None,
            "not a regular file (a pipe, socket or device); not read".into(),
        ));
    }
    let mut file = std::fs::File::open(archive).map_err(|e| read_err(None, e.to_string()))?;
    let mut magic = [0u8; 4];
    let n = read_up_to(&mut file, &mut magic).map_err(|e| read_err(None, e.to_string()))?;
    let compression = match &magic[..n] {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd] => Compression::Zstd,
        _ => Compression::None,
    };
    let counted = Counting {
        inner: io::Cursor::new(magic[..n].to_vec()).chain(file),
        count: 0,
        progress,
    };
    let decoded: Box<dyn Read + '_> = match compression {
        Compression::None => Box::new(counted),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(counted)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::new(counted)
                .map_err(|e| read_err(None, format!("zstd: {e}")))?,
        ),
    };
    // Every decompressed byte counts: a small archive that expands without
    // end is refused once it has run past the budget.
    let position = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let budget = stream_budget(limit);
    let reader = Budget {
        inner: decoded,
        read: std::rc::Rc::clone(&position),
        budget,
    };
    let mut ar = tar::Archive::new(reader);
    let mut tree = Tree {
        abs_root: std::path::absolute(&root).unwrap_or_else(|_| root.clone()),
        root: root.clone(),
        count: 0,
        dirs: Dir::default(),
    };
    let mut links: Vec<(PathBuf, PathBuf, String)> = Vec::new();
    let mut skipped = Vec::new();
    // Where each name was last defined, for the duplicate policy.
    let mut seen: BTreeMap<PathBuf, u64> = BTreeMap::new();
    let mut total: u64 = 0;
    let entries = ar.entries().map_err(|e| read_err(Some(0), e.to_string()))?;
    let mut entries_seen = 0usize;
    // Extensions that apply to the next entry.
    let mut long_name: Option<Vec<u8>> = None;
    let mut long_link: Option<Vec<u8>> = None;
    let mut pax_size: Option<u64> = None;
    for entry in entries.raw(true) {
        let mut entry = entry.map_err(|e| read_err(Some(position.get()), tar_reason(&e)))?;
        entries_seen += 1;
        let pos = entry.raw_header_position();
        let kind = entry.header().entry_type();
        let size = entry
            .header()
            .entry_size()
            .map_err(|e| read_err(Some(pos), format!("header size: {}", tar_reason(&e))))?;
        // Extension entries: their body, capped, applies to the next entry.
        if kind.is_gnu_longname()
            || kind.is_gnu_longlink()
            || kind.is_pax_local_extensions()
            || kind.is_pax_global_extensions()
        {
            if size > MAX_EXTENSION {
                return Err(read_err(
                    Some(pos),
                    format!(
                        "an extension header (long name, long link or PAX) of {size} bytes; klf reads at most {MAX_EXTENSION}"
                    ),
                ));
            }
            let body = read_capped(&mut entry, size, &mut total, limit)
                .map_err(|e| read_err(Some(pos), e))?;
            if kind.is_gnu_longname() {
                long_name = Some(trim_nul(body));
            } else if kind.is_gnu_longlink() {
                long_link = Some(trim_nul(body));
            } else if kind.is_pax_local_extensions() {
                for (key, value) in pax_records(&body).map_err(|e| read_err(Some(pos), e))? {
                    match key.as_slice() {
                        b"path" => long_name = Some(value),
                        b"linkpath" => long_link = Some(value),
                        b"size" => {
                            let v = std::str::from_utf8(&value)
                                .ok()
                                .and_then(|v| v.trim().parse::<u64>().ok())
                                .ok_or_else(|| {
                                    read_err(Some(pos), "PAX size is not a number".into())
                                })?;
                            pax_size = Some(v);
                        }
                        _ => {}
                    }
                }
            }
            continue;
        }
        let raw_name_bytes = long_name
            .take()
            .unwrap_or_else(|| entry.path_bytes().into_owned());
        let link_bytes = long_link
            .take()
            .or_else(|| entry.link_name_bytes().map(|b| b.into_owned()));
        let declared = pax_size.take();
        let raw_name = String::from_utf8_lossy(&raw_name_bytes).into_owned();
        // What an entry costs in memory besides its content (its name in
        // the maps, the maps' nodes) counts against the budget too.
        total = total.saturating_add(3 * raw_name_bytes.len() as u64 + 512);
        if total > limit {
            return Err(ArchiveError::TooLarge {
                archive: archive.to_path_buf(),
                limit,
                entry: raw_name,
            });
        }
        if raw_name_bytes.len() > MAX_NAME {
            return Err(read_err(
                Some(pos),
                format!(
                    "an entry name of {} bytes; names longer than {MAX_NAME} bytes are refused",
                    raw_name_bytes.len()
                ),
            ));
        }
        if let Some(d) = declared {
            if d != size {
                return Err(read_err(
                    Some(pos),
                    format!("entry {raw_name:?}: a PAX size of {d} bytes over a header size of {size}; klf reads entries whose header gives their size"),
                ));
            }
        }
        let path = path_of(&raw_name_bytes)
            .map_err(|e| read_err(Some(pos), format!("entry {raw_name:?}: {e}")))?;
        let escapes = |reason: &str| ArchiveError::Escapes {
            archive: archive.to_path_buf(),
            pos,
            entry: raw_name.clone(),
            reason: reason.to_string(),
        };
        let rel = inside(&path).map_err(escapes)?;
        if rel.components().count() > MAX_DEPTH {
            return Err(read_err(
                Some(pos),
                format!("entry {raw_name:?} is more than {MAX_DEPTH} directories deep; refused"),
            ));
        }
        if kind.is_dir() {
            if tree.has_file(&rel) {
                // As extraction does: the later entry replaces the earlier.
                tree.forget_file(&rel);
                note_replaced(&mut skipped, &rel, seen.get(&rel), pos);
            }
            tree.dirs.make(&rel);
            seen.insert(rel, pos);
            continue;
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        if let Some(prev) = seen.get(&rel).copied() {
            if tree.is_dir(&rel)
                && tree
                    .dirs
                    .find(&rel)
                    .is_some_and(|d| !d.dirs.is_empty() || !d.files.is_empty())
            {
                skipped.push((
                    raw_name.clone(),
                    format!(
                        "a file named like a directory that holds entries (byte {prev}); left out"
                    ),
                ));
                continue;
            }
            tree.forget_file(&rel);
            links.retain(|(l, _, _)| l != &rel);
            note_replaced(&mut skipped, &rel, Some(&prev), pos);
        }
        seen.insert(rel.clone(), pos);
        if kind.is_symlink() || kind.is_hard_link() {
            let target = link_bytes
                .map(|b| path_of(&b))
                .transpose()
                .map_err(|e| read_err(Some(pos), format!("entry {raw_name:?}: {e}")))?
                .ok_or_else(|| {
                    read_err(Some(pos), format!("link {raw_name:?} without a target"))
                })?;
            // A symlink's target is relative to the link's directory; a hard
            // link's names another entry from the archive root.
            let resolved = if kind.is_symlink() {
                if target.is_absolute() {
                    return Err(escapes(&format!(
                        "is a symlink to the absolute path {}",
                        target.display()
                    )));
                }
                rel.parent().unwrap_or(Path::new("")).join(&target)
            } else {
                target.clone()
            };
            let t = inside_lexically(&resolved).map_err(|_| {
                escapes(&format!(
                    "is a {} pointing out of the archive, to {}",
                    if kind.is_symlink() {
                        "symlink"
                    } else {
                        "hard link"
                    },
                    target.display()
                ))
            })?;
            if let Some(p) = rel.parent() {
                tree.dirs.make(p);
            }
            links.push((rel, t, raw_name));
            continue;
        }
        if kind == tar::EntryType::GNUSparse {
            // Its map of holes may continue in headers after this one: read
            // as plain data it would desynchronise the stream.
            return Err(read_err(
                Some(pos),
                format!("entry {raw_name:?} is a GNU sparse file (tar -S); klf does not read sparse entries: re-create the archive without --sparse, or extract it"),
            ));
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            skipped.push((
                raw_name,
                format!("{kind:?} entry (not a file or directory)"),
            ));
            continue;
        }
        if size > limit.saturating_sub(total) {
            return Err(ArchiveError::TooLarge {
                archive: archive.to_path_buf(),
                limit,
                entry: raw_name,
            });
        }
        let buf = read_capped(&mut entry, size, &mut total, limit).map_err(|e| {
            if e.contains("more than the cap") {
                ArchiveError::TooLarge {
                    archive: archive.to_path_buf(),
                    limit,
                    entry: raw_name.clone(),
                }
            } else {
                read_err(Some(pos), format!("entry {raw_name:?}: {e}"))
            }
        })?;
        let mtime = entry.header().mtime().ok();
        tree.add_file(
            rel,
            FileEntry {
                content: Content::Held {
                    bytes: Arc::new(buf),
                    zero_tail: 0,
                },
                mtime,
            },
        );
    }
    if entries_seen == 0 {
        return Err(read_err(Some(0), "no tar entries in it".into()));
    }
    // Links to files inside the archive read as their target; a link to a
    // link is resolved on a later pass (at most 16 deep).
    let mut pending = links;
    for _ in 0..16 {
        let before = pending.len();
        pending.retain(|(link, target, _)| match tree.file(target).cloned() {
            Some(f) => {
                tree.add_file(link.clone(), f);
                false
            }
            None => true,
        });
        if pending.is_empty() || pending.len() == before {
            break;
        }
    }
    let unresolved: BTreeSet<PathBuf> = pending.iter().map(|(l, _, _)| l.clone()).collect();
    for (_, t, raw) in pending {
        let why = if tree.is_dir(&t) {
            "link to a directory; not followed".to_string()
        } else if unresolved.contains(&t) {
            "a chain of links more than 16 deep, or a circle of links; not followed".to_string()
        } else {
            format!(
                "link to {}, which is not a file in the archive",
                t.display()
            )
        };
        skipped.push((raw, why));
    }
    let mounted = Mounted {
        root,
        compression,
        files: tree.count,
        bytes: total,
        limit,
        skipped,
    };
    if let Ok(mut m) = MOUNTS.write() {
        m.retain(|t| t.root != tree.root);
        m.push(Arc::new(tree));
    }
    Ok(mounted)
}

fn note_replaced(skipped: &mut Vec<(String, String)>, rel: &Path, prev: Option<&u64>, pos: u64) {
    skipped.push((
        rel.display().to_string(),
        format!(
            "the entry at byte {} is replaced by a later entry of the same name at byte {pos} (as extraction would)",
            prev.map_or("-".to_string(), u64::to_string)
        ),
    ));
}

/// The tar crate's error, without raw header bytes.
fn tar_reason(e: &io::Error) -> String {
    let s = e.to_string();
    // The crate quotes the field it could not read; keep the message short
    // and printable (the caller's diagnostics are sanitised too).
    s.chars().take(200).collect()
}

/// A name from a header or an extension as a path.
fn path_of(b: &[u8]) -> Result<PathBuf, String> {
    if b.contains(&0) {
        return Err("a NUL byte in the name".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(b)))
    }
    #[cfg(not(unix))]
    {
        Ok(PathBuf::from(String::from_utf8_lossy(b).into_owned()))
    }
}

fn trim_nul(mut b: Vec<u8>) -> Vec<u8> {
    while b.last() == Some(&0) {
        b.pop();
    }
    b
}

/// `size` bytes of an entry, counted against `limit` in `total`; never
/// allocates or reads more than the budget left.
fn read_capped(
    r: &mut impl Read,
    size: u64,
    total: &mut u64,
    limit: u64,
) -> Result<Vec<u8>, String> {
    let room = limit.saturating_sub(*total);
    if size > room {
        return Err("the files add up to more than the cap".into());
    }
    let mut buf = Vec::new();
    let want = usize::try_from(size).map_err(|_| "too large for this machine".to_string())?;
    crate::format::memory::fallible(|| buf.try_reserve_exact(want))
        .map_err(|e| format!("cannot allocate {size} bytes: {e}"))?;
    crate::format::memory::fallible(|| r.take(size).read_to_end(&mut buf))
        .map_err(|e| tar_reason(&e))?;
    *total = total.saturating_add(buf.len() as u64);
    Ok(buf)
}

/// One `key=value` record of a PAX extended header.
type PaxRecord = (Vec<u8>, Vec<u8>);

/// The `key=value` records of a PAX extended header (`"%d %s=%s\n"`).
fn pax_records(mut body: &[u8]) -> Result<Vec<PaxRecord>, String> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let sp = body
            .iter()
            .position(|&b| b == b' ')
            .ok_or("a PAX record without a length")?;
        let len: usize = std::str::from_utf8(&body[..sp])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("a PAX record length that is not a number")?;
        if len <= sp + 1 || len > body.len() {
            return Err("a PAX record length past the header".into());
        }
        let rec = &body[sp + 1..len];
        let rec = rec.strip_suffix(b"\n").unwrap_or(rec);
        let eq = rec
            .iter()
            .position(|&b| b == b'=')
            .ok_or("a PAX record without '='")?;
        out.push((rec[..eq].to_vec(), rec[eq + 1..].to_vec()));
        body = &body[len..];
    }
    Ok(out)
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

struct Counting<'a, R> {
    inner: R,
    count: u64,
    progress: &'a mut dyn FnMut(u64),
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        (self.progress)(self.count);
        Ok(n)
    }
}

/// The decompressed stream, refused once it runs past its budget.
struct Budget<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
    budget: u64,
}

impl<R: Read> Read for Budget<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let total = self.read.get().saturating_add(n as u64);
        self.read.set(total);
        if total > self.budget {
            return Err(io::Error::other(format!(
                "the archive expands to more than {} ({} bytes); raise --archive-limit or extract it",
                human_bytes(self.budget),
                self.budget
            )));
        }
        Ok(n)
    }
}

/// An entry name as a path relative to the archive root; refuses absolute
/// names and `..` components (even ones that would come back inside).
fn inside(p: &Path) -> Result<PathBuf, &'static str> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => return Err("has a '..' component"),
            Component::RootDir | Component::Prefix(_) => return Err("is an absolute path"),
        }
    }
    Ok(out)
}

/// A link target resolved lexically inside the root; `Err` when it climbs
/// above it or is absolute.
fn inside_lexically(p: &Path) -> Result<PathBuf, ()> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(());
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(()),
        }
    }
    Ok(out)
}

/// The kind of a path (the parts of `std::fs::FileType` klf uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileType {
    dir: bool,
    file: bool,
    symlink: bool,
}

impl FileType {
    /// A directory.
    pub fn is_dir(&self) -> bool {
        self.dir
    }
    /// A regular file.
    pub fn is_file(&self) -> bool {
        self.file
    }
    /// A symbolic link (never inside an archive: links read as their target).
    pub fn is_symlink(&self) -> bool {
        self.symlink
    }
}

impl From<std::fs::FileType> for FileType {
    fn from(t: std::fs::FileType) -> FileType {
        FileType {
            dir: t.is_dir(),
            file: t.is_file(),
            symlink: t.is_symlink(),
        }
    }
}

/// What `std::fs::Metadata` tells that klf uses.
#[derive(Debug, Clone, Copy)]
pub struct Metadata {
    ft: FileType,
    len: u64,
}

impl Metadata {
    /// A directory.
    pub fn is_dir(&self) -> bool {
        self.ft.dir
    }
    /// A regular file.
    pub fn is_file(&self) -> bool {
        self.ft.file
    }
    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }
    /// Whether the size is zero.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The kind.
    pub fn file_type(&self) -> FileType {
        self.ft
    }
}

impl From<std::fs::Metadata> for Metadata {
    fn from(m: std::fs::Metadata) -> Metadata {
        Metadata {
            ft: m.file_type().into(),
            len: m.len(),
        }
    }
}

fn not_found(p: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} is not in the archive", p.display()),
    )
}

/// Reads of evidence that failed because of the machine (EIO, EMFILE,
/// ENFILE, ENOMEM, EACCES, a link that cannot be followed, a file that
/// changed while it was read, a directory that cannot be listed), in the
/// order they happened: whatever a command made of the rest, its answer is
/// incomplete, and the command line ends with exit status 2 naming them
/// ([`failed_reads`]). A file that does not exist is not recorded here
/// (probes ask for files that may be absent; the readers that needed it
/// report it), nor a pipe or device refused for what it is.
static FAILED_READS: std::sync::Mutex<FailedReads> = std::sync::Mutex::new(FailedReads {
    order: Vec::new(),
    reasons: BTreeMap::new(),
});

/// The failed reads: paths in the order they failed, and each one's
/// reason.
struct FailedReads {
    order: Vec<PathBuf>,
    reasons: BTreeMap<PathBuf, String>,
}

/// Notes a failed read of `path` (see [`failed_reads`]): every error but
/// those that say what the path is rather than how the machine failed
/// (not found, not a regular file).
pub fn read_failed(path: &Path, e: &io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::InvalidInput
    ) {
        return;
    }
    note_failed_read(path, e.to_string());
}

/// Notes a failed read of `path` with a reason of its own (a link that
/// cannot be followed, say); see [`failed_reads`].
pub fn note_failed_read(path: &Path, reason: String) {
    if let Ok(mut f) = FAILED_READS.lock() {
        if !f.reasons.contains_key(path) {
            f.order.push(path.to_path_buf());
            f.reasons.insert(path.to_path_buf(), reason);
        }
    }
}

/// Every read noted by [`read_failed`] so far, after a look at whether the
/// files read are still what they were ([`recheck_opened`]): (path,
/// reason), one per path, in the order they failed.
pub fn failed_reads() -> Vec<(PathBuf, String)> {
    recheck_opened();
    FAILED_READS
        .lock()
        .map(|f| {
            f.order
                .iter()
                .map(|p| (p.clone(), f.reasons.get(p).cloned().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

/// Files left unread because they are over one of klf's caps (a
/// properties file larger than any Kafka writes, a checkpoint with more
/// entries than klf reads): path → reason, in path order.
static REFUSED: std::sync::Mutex<BTreeMap<PathBuf, String>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Notes that `path` was left unread, over one of klf's caps (see
/// [`refused`]): not the machine's failure, but not a whole reading either.
pub fn note_refused(path: &Path, reason: String) {
    if let Ok(mut r) = REFUSED.lock() {
        r.entry(path.to_path_buf()).or_insert(reason);
    }
}

/// Every file noted by [`note_refused`] so far: (path, reason), in path
/// order.
pub fn refused() -> Vec<(PathBuf, String)> {
    REFUSED
        .lock()
        .map(|r| r.iter().map(|(p, why)| (p.clone(), why.clone())).collect())
        .unwrap_or_default()
}

/// Files on disk opened for their bytes: path → size and modification
/// time when first read, checked by every later [`opened`] of the same
/// path and again by [`recheck_opened`].
type Seen = BTreeMap<PathBuf, (u64, Option<std::time::SystemTime>)>;
static OPENED: std::sync::Mutex<Seen> = std::sync::Mutex::new(BTreeMap::new());

static TRACK_OPENED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns on [`opened`]'s record for the rest of the process: one run of the
/// `klf` binary reads a capture once, and a file that is not what it was
/// earlier in the run changed under it. Off by default, for a library user
/// that reads a directory again after it changed on purpose.
pub fn track_opened() {
    TRACK_OPENED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Notes that `path` was read as `len` bytes last modified at `modified`
/// (for [`recheck_opened`]). When klf read it before as something else,
/// it changed while klf read the capture: the error saying so, noted as a
/// failed read (a later reader must not take the new bytes for evidence).
pub fn opened(path: &Path, len: u64, modified: Option<std::time::SystemTime>) -> io::Result<()> {
    if !TRACK_OPENED.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    // A file whose read failed earlier in the run is not read again as if
    // whole: what it holds now may not be what klf was reading.
    let earlier = FAILED_READS
        .lock()
        .ok()
        .and_then(|f| f.reasons.get(path).cloned());
    if let Some(reason) = earlier {
        return Err(io::Error::other(format!(
            "{reason} (an earlier read in this run)"
        )));
    }
    let Ok(mut seen) = OPENED.lock() else {
        return Ok(());
    };
    match seen.get(path) {
        None => {
            seen.insert(path.to_path_buf(), (len, modified));
            Ok(())
        }
        Some(&(first, at)) if first == len && at == modified => Ok(()),
        Some(&(first, _)) => {
            drop(seen);
            let e = super::mmap::changed_while_read(first, Some(len));
            read_failed(path, &e);
            Err(e)
        }
    }
}

/// Looks again at every file noted by [`opened`]: one whose size or
/// modification time is no longer what it was when klf first read it
/// changed while klf read the capture (something writes to it), and is
/// noted as a failed read whatever a command made of its bytes (see
/// [`failed_reads`]).
pub fn recheck_opened() {
    // Looked at in place (a capture's files can be hundreds of thousands);
    // only the changed ones are kept, and noted once the lock is let go.
    let changed: Vec<(PathBuf, io::Error)> = OPENED
        .lock()
        .map(|m| {
            m.iter()
                .filter_map(|(path, &(len, modified))| {
                    let now = std::fs::metadata(path).ok();
                    let same = now
                        .as_ref()
                        .is_some_and(|m| m.len() == len && m.modified().ok() == modified);
                    (!same).then(|| {
                        let e = super::mmap::changed_while_read(len, now.map(|m| m.len()));
                        (path.clone(), e)
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    for (path, e) in changed {
        note_failed_read(&path, e.to_string());
    }
}

/// `r`, with its error noted against `path` (see [`read_failed`]).
fn noted<T>(path: &Path, r: io::Result<T>) -> io::Result<T> {
    if let Err(e) = &r {
        read_failed(path, e);
    }
    r
}

/// `std::fs::metadata` (follows symlinks).
pub fn metadata(p: &Path) -> io::Result<Metadata> {
    match lookup(p) {
        None => std::fs::metadata(p).map(Metadata::from),
        Some((t, rel)) => {
            if let Some(f) = t.file(&rel) {
                Ok(Metadata {
                    ft: FileType {
                        dir: false,
                        file: true,
                        symlink: false,
                    },
                    len: f.len(),
                })
            } else if t.is_dir(&rel) {
                Ok(Metadata {
                    ft: FileType {
                        dir: true,
                        file: false,
                        symlink: false,
                    },
                    len: 0,
                })
            } else {
                Err(not_found(p))
            }
        }
    }
}

/// When `p` was last modified, in milliseconds since the Unix epoch, to
/// the second (a file inside an archive: the time its tar header records);
/// `None` when that cannot be told.
pub fn modified_ms(p: &Path) -> Option<i64> {
    match lookup(p) {
        None => {
            let t = std::fs::metadata(p).ok()?.modified().ok()?;
            let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
            // To the second, as a tar header keeps it, so that a directory
            // and an archive of it report the same time.
            i64::try_from(d.as_secs()).ok()?.checked_mul(1000)
        }
        Some((t, rel)) => t
            .file(&rel)
            .and_then(|f| f.mtime)
            .and_then(|s| i64::try_from(s).ok())
            .and_then(|s| s.checked_mul(1000)),
    }
}

/// `std::fs::canonicalize`; a path inside an archive is its own canonical form.
pub fn canonicalize(p: &Path) -> io::Result<PathBuf> {
    match lookup(p) {
        None => std::fs::canonicalize(p),
        Some((t, rel)) => {
            if t.has_file(&rel) || t.is_dir(&rel) {
                Ok(if rel.as_os_str().is_empty() {
                    t.abs_root.clone()
                } else {
                    t.abs_root.join(rel)
                })
            } else {
                Err(not_found(p))
            }
        }
    }
}

/// One entry of [`read_dir`].
#[derive(Debug, Clone)]
pub struct DirEntry {
    /// The listed directory joined with the name.
    path: PathBuf,
    /// Where the name starts in `path`.
    name_at: usize,
    ft: FileType,
    /// A file of a mounted tree: its length, known from the listing.
    len: Option<u64>,
}

impl DirEntry {
    /// The entry's full path (the listed directory joined with the name).
    pub fn path(&self) -> PathBuf {
        self.path.clone()
    }
    /// The entry's name.
    pub fn file_name(&self) -> OsString {
        self.name().to_owned()
    }
    /// The entry's full path, borrowed.
    pub fn path_ref(&self) -> &Path {
        &self.path
    }
    /// The entry's name, borrowed (the end of its path).
    pub fn name(&self) -> &std::ffi::OsStr {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let b = self.path.as_os_str().as_bytes();
            std::ffi::OsStr::from_bytes(b.get(self.name_at..).unwrap_or_default())
        }
        #[cfg(not(unix))]
        {
            self.path.file_name().unwrap_or_default()
        }
    }
    /// An entry named `name` in the directory `dir`: their join, made in
    /// one allocation.
    fn new(dir: &Path, name: &std::ffi::OsStr, ft: FileType, len: Option<u64>) -> DirEntry {
        let mut path = OsString::with_capacity(dir.as_os_str().len() + 1 + name.len());
        path.push(dir.as_os_str());
        let mut path = PathBuf::from(path);
        path.push(name);
        DirEntry {
            name_at: path.as_os_str().len().saturating_sub(name.len()),
            path,
            ft,
            len,
        }
    }
    /// Its kind, without following symlinks.
    pub fn file_type(&self) -> io::Result<FileType> {
        Ok(self.ft)
    }
    /// The length of a file of a mounted archive or digest, as its listing
    /// has it (what [`metadata`] would say, without looking it up again);
    /// `None` on disk, where only [`metadata`] says (following a link).
    pub fn tree_len(&self) -> Option<u64> {
        self.len
    }
}

/// `std::fs::read_dir`; entries inside an archive come in name order.
pub fn read_dir(p: &Path) -> io::Result<std::vec::IntoIter<io::Result<DirEntry>>> {
    let v: Vec<io::Result<DirEntry>> = match lookup(p) {
        None => noted(p, std::fs::read_dir(p))?
            .map(|e| {
                noted(
                    p,
                    e.and_then(|e| {
                        let path = e.path();
                        // the listing's names are never `.` or `..`: the
                        // path ends with the name
                        let name_len = path.file_name().map_or(0, |n| n.len());
                        Ok(DirEntry {
                            name_at: path.as_os_str().len() - name_len,
                            path,
                            ft: e.file_type()?.into(),
                            len: None,
                        })
                    }),
                )
            })
            .collect(),
        Some((t, rel)) => {
            let Some(d) = t.dirs.find(&rel) else {
                return Err(if t.has_file(&rel) {
                    io::Error::other("Not a directory")
                } else {
                    not_found(p)
                });
            };
            // the folders and the files, each already in name order, merged
            // (a name both holds is listed as the file)
            let dir_type = FileType {
                dir: true,
                file: false,
                symlink: false,
            };
            let file_type = FileType {
                dir: false,
                file: true,
                symlink: false,
            };
            let mut out = Vec::with_capacity(d.dirs.len() + d.files.len());
            let mut dirs = d.dirs.keys().peekable();
            let mut files = d.files.iter().peekable();
            loop {
                let (name, ft, len) = match (dirs.peek(), files.peek()) {
                    (None, None) => break,
                    (Some(&n), None) => {
                        dirs.next();
                        (n, dir_type, None)
                    }
                    (Some(&n), Some(&(f, _))) if n < f => {
                        dirs.next();
                        (n, dir_type, None)
                    }
                    (Some(&n), Some(&(f, e))) => {
                        if n == f {
                            dirs.next();
                        }
                        files.next();
                        (f, file_type, Some(e.len()))
                    }
                    (None, Some(&(f, e))) => {
                        files.next();
                        (f, file_type, Some(e.len()))
                    }
                };
                out.push(Ok(DirEntry::new(p, name, ft, len)));
            }
            out
        }
    };
    Ok(v.into_iter())
}

/// A file opened for reading: on disk, or in an archive.
pub enum File {
    /// A real file, and its path (a failed read is noted against it).
    Disk(std::fs::File, PathBuf),
    /// A real file read carefully ([`super::careful::everywhere`]): where
    /// the next read is, and its path.
    Careful(super::careful::Careful, u64, PathBuf),
    /// A file held in memory.
    Memory(io::Cursor<Arc<Vec<u8>>>),
}

impl File {
    /// Opens read-only (never a pipe, socket or device).
    pub fn open(p: impl AsRef<Path>) -> io::Result<File> {
        let p = p.as_ref();
        match lookup(p) {
            None if super::careful::everywhere() => noted(p, super::careful::Careful::open(p))
                .map(|f| File::Careful(f, 0, p.to_path_buf())),
            None => {
                noted(p, super::mmap::open_regular(p)).map(|(f, _)| File::Disk(f, p.to_path_buf()))
            }
            Some((t, rel)) => match t.file(&rel) {
                Some(f) => Ok(File::Memory(io::Cursor::new(Arc::clone(f.bytes(p)?)))),
                None if t.is_dir(&rel) => Err(io::Error::other("Is a directory")),
                None => Err(not_found(p)),
            },
        }
    }
}

impl File {
    /// The file's length now, from the open file (nothing is read).
    pub fn len(&self) -> io::Result<u64> {
        match self {
            File::Disk(f, p) => noted(p, f.metadata()).map(|m| m.len()),
            File::Careful(f, _, _) => Ok(f.len()),
            File::Memory(c) => Ok(c.get_ref().len() as u64),
        }
    }

    /// Whether the file is empty now.
    pub fn is_empty(&self) -> io::Result<bool> {
        self.len().map(|n| n == 0)
    }
}

impl io::Seek for File {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        match self {
            File::Disk(f, p) => noted(p, io::Seek::seek(f, to)),
            File::Careful(f, at, _) => {
                let to = match to {
                    io::SeekFrom::Start(n) => Some(n),
                    io::SeekFrom::End(d) => f.len().checked_add_signed(d),
                    io::SeekFrom::Current(d) => at.checked_add_signed(d),
                };
                *at = to.ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "seek to a negative position")
                })?;
                Ok(*at)
            }
            File::Memory(c) => {
                let len = c.get_ref().len() as u64;
                let at = match to {
                    io::SeekFrom::Start(n) => Some(n),
                    io::SeekFrom::End(d) => len.checked_add_signed(d),
                    io::SeekFrom::Current(d) => c.position().checked_add_signed(d),
                };
                let at = at.ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "seek to a negative position")
                })?;
                c.set_position(at);
                Ok(at)
            }
        }
    }
}

impl Read for File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            File::Disk(f, p) => noted(p, f.read(buf)),
            File::Careful(f, at, p) => {
                // the file as it was opened (its length then)
                let left = usize::try_from(f.len().saturating_sub(*at)).unwrap_or(usize::MAX);
                let n = buf.len().min(left);
                let n = noted(p, f.read_at(&mut buf[..n], *at))?;
                *at += n as u64;
                Ok(n)
            }
            File::Memory(c) => {
                let data: &[u8] = c.get_ref();
                let pos = (c.position() as usize).min(data.len());
                let n = buf.len().min(data.len() - pos);
                buf[..n].copy_from_slice(&data[pos..pos + n]);
                c.set_position((pos + n) as u64);
                Ok(n)
            }
        }
    }
}

/// Opens a file to read a little at a time (a checkpoint, say), noting it
/// as read (see [`opened`]): the file and its length.
pub fn open_file(p: &Path) -> io::Result<(File, u64)> {
    let f = File::open(p)?;
    let len = f.len()?;
    let modified = match &f {
        File::Disk(d, _) => Some(d.metadata().ok().and_then(|m| m.modified().ok())),
        File::Careful(d, _, _) => Some(d.modified()),
        File::Memory(_) => None,
    };
    if let Some(modified) = modified {
        opened(p, len, modified)?;
    }
    Ok((f, len))
}

/// The bytes of a small file, when its length is at most `cap` (judged by
/// the open file's length: a larger file is not read, and `None` comes
/// back); and its length.
pub fn read_small(p: &Path, cap: u64) -> io::Result<(Option<Vec<u8>>, u64)> {
    let (f, len) = open_file(p)?;
    if len > cap {
        return Ok((None, len));
    }
    let mut bytes = Vec::new();
    crate::format::memory::fallible(|| f.take(cap + 1).read_to_end(&mut bytes))?;
    let n = bytes.len() as u64;
    if n > cap {
        // It grew since it was opened.
        return Ok((None, n));
    }
    Ok((Some(bytes), n))
}

/// [`FileBytes::open`] for real paths; for a path inside an archive, the
/// bytes the archive holds (shared, not copied).
pub fn open(p: &Path) -> io::Result<FileBytes> {
    match lookup(p) {
        None if super::careful::everywhere() => careful_whole(p, false).map(|(b, _)| b),
        None => {
            let b = noted(p, FileBytes::open(p))?;
            let modified = std::fs::metadata(p).ok().and_then(|m| m.modified().ok());
            opened(p, <[u8]>::len(&b) as u64, modified)?;
            Ok(b)
        }
        Some((t, rel)) => match t.file(&rel) {
            Some(f) => Ok(FileBytes::shared(Arc::clone(f.bytes(p)?))),
            None => Err(not_found(p)),
        },
    }
}

/// [`FileBytes::open_data`] for real paths (the bytes up to the end of the
/// file's data, and its length); for a path inside an archive, all its
/// bytes.
pub fn open_data(p: &Path) -> io::Result<(FileBytes, u64)> {
    match lookup(p) {
        None if super::careful::everywhere() => careful_whole(p, true),
        None => {
            let (b, len) = noted(p, FileBytes::open_data(p))?;
            let modified = std::fs::metadata(p).ok().and_then(|m| m.modified().ok());
            opened(p, len, modified)?;
            Ok((b, len))
        }
        Some((t, rel)) => match t.file(&rel) {
            Some(f) => Ok((FileBytes::shared(Arc::clone(f.bytes(p)?)), f.len())),
            None => Err(not_found(p)),
        },
    }
}

/// [`FileBytes::open_segment`] for real paths; for a path inside an
/// archive, the bytes the archive holds (shared, not copied).
pub fn open_segment(p: &Path) -> io::Result<super::mmap::Opened> {
    match lookup(p) {
        None => noted(p, FileBytes::open_segment(p)),
        Some((t, rel)) => match t.file(&rel) {
            Some(f) => Ok(super::mmap::Opened::Bytes(FileBytes::shared(Arc::clone(
                f.bytes(p)?,
            )))),
            None => Err(not_found(p)),
        },
    }
}

/// CRC-32C and length of a file's content: streamed for a real path, of
/// the bytes the archive holds for a path inside one.
pub fn crc32c(p: &Path) -> io::Result<(u32, u64)> {
    match lookup(p) {
        None => noted(p, super::mmap::crc32c_streamed(p)),
        Some((t, rel)) => match t.file(&rel) {
            Some(f) => {
                let b = f.bytes(p)?;
                Ok((crate::format::crc::crc32c(b), b.len() as u64))
            }
            None => Err(not_found(p)),
        },
    }
}

/// `std::fs::read`, up to [`super::mmap::MAX_WHOLE_READ`] bytes for a
/// real path.
pub fn read(p: &Path) -> io::Result<Vec<u8>> {
    match lookup(p) {
        None if super::careful::everywhere() => careful_whole(p, false).map(|(b, _)| b.to_vec()),
        None => noted(p, super::mmap::read_whole(p)),
        Some((t, rel)) => t
            .file(&rel)
            .ok_or_else(|| not_found(p))
            .and_then(|f| f.bytes(p).map(|b| b.as_ref().clone())),
    }
}

/// A file on disk read carefully ([`super::careful::everywhere`]): whole,
/// or up to the end of its data (`data`: a preallocated index's hole is
/// not read, as [`FileBytes::open_data`] does not), with its length; the
/// read is noted as [`open`]'s is.
fn careful_whole(p: &Path, data: bool) -> io::Result<(FileBytes, u64)> {
    let noted_error = |p: &Path, e: io::Error| {
        read_failed(p, &e);
        e
    };
    let mut f = noted(p, super::careful::Careful::open(p))?;
    let (len, modified) = (f.len(), f.modified());
    let end = if data { f.data_end().min(len) } else { len };
    // what is read whole without a mapping is capped, as on every read
    if end > super::mmap::MAX_WHOLE_READ {
        return Err(noted_error(p, super::mmap::too_large_to_read(end)));
    }
    let bytes = noted(p, f.read_first(end))?;
    if (bytes.len() as u64) < end {
        // it shrank while klf read it
        return Err(noted_error(
            p,
            super::mmap::changed_while_read(len, Some(bytes.len() as u64)),
        ));
    }
    opened(p, len, modified)?;
    Ok((FileBytes::from_vec(bytes), len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_must_stay_inside() {
        assert_eq!(inside(Path::new("./a/b")).unwrap(), PathBuf::from("a/b"));
        assert!(inside(Path::new("/etc/passwd")).is_err());
        assert!(inside(Path::new("a/../../evil")).is_err());
        assert!(inside(Path::new("a/../b")).is_err());
        assert_eq!(
            inside_lexically(Path::new("a/../b")).unwrap(),
            PathBuf::from("b")
        );
        assert!(inside_lexically(Path::new("a/../../b")).is_err());
    }

    #[test]
    fn virtual_paths_split_at_the_archive() {
        let (a, rest) = split_virtual(Path::new("caps/x.tar.gz!/broker-1/t-0")).unwrap();
        assert_eq!(a, PathBuf::from("caps/x.tar.gz"));
        assert_eq!(rest, PathBuf::from("broker-1/t-0"));
        assert!(split_virtual(Path::new("caps/x!/y")).is_none());
    }
}
