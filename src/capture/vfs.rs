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

/// `1.5 GiB`-style size.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses a byte count: digits with an optional `K`, `M`, `G` or `T`
/// suffix (powers of 1024, `KiB`/`KB` spellings accepted).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a byte count (e.g. 512M, 4G, 1000000)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use K, M, G or T)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

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

#[derive(Debug)]
struct Tree {
    /// Virtual root as given (`capture.tar.gz!`).
    root: PathBuf,
    /// The same, absolute (lexically), to match absolute spellings.
    abs_root: PathBuf,
    /// Relative path → content.
    files: BTreeMap<PathBuf, Arc<Vec<u8>>>,
    /// Relative directory paths, the root (`""`) included.
    dirs: BTreeSet<PathBuf>,
    /// Relative path → modification time the tar header records (s).
    mtimes: BTreeMap<PathBuf, u64>,
}

impl Tree {
    fn rel(&self, p: &Path) -> Option<PathBuf> {
        if let Ok(r) = p.strip_prefix(&self.root) {
            return Some(normal(r));
        }
        let abs = std::path::absolute(p).ok()?;
        abs.strip_prefix(&self.abs_root).ok().map(normal)
    }
}

/// `a/./b` → `a/b` (archive-internal paths are already free of `..`).
fn normal(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect()
}

static MOUNTS: RwLock<Vec<Arc<Tree>>> = RwLock::new(Vec::new());

fn lookup(p: &Path) -> Option<(Arc<Tree>, PathBuf)> {
    let mounts = MOUNTS.read().ok()?;
    mounts
        .iter()
        .find_map(|t| t.rel(p).map(|r| (Arc::clone(t), r)))
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
            if is_archive_name(&archive) {
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
    let mut file = std::fs::File::open(archive).map_err(|e| read_err(None, e.to_string()))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(read_err(None, "it is a directory".into()));
    }
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
    let reader: Box<dyn Read + '_> = match compression {
        Compression::None => Box::new(counted),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(counted)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::new(counted)
                .map_err(|e| read_err(None, format!("zstd: {e}")))?,
        ),
    };
    let mut ar = tar::Archive::new(reader);
    let mut files: BTreeMap<PathBuf, Arc<Vec<u8>>> = BTreeMap::new();
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let mut mtimes: BTreeMap<PathBuf, u64> = BTreeMap::new();
    dirs.insert(PathBuf::new());
    let mut links: Vec<(PathBuf, PathBuf, String)> = Vec::new();
    let mut skipped = Vec::new();
    let mut total: u64 = 0;
    let entries = ar.entries().map_err(|e| read_err(Some(0), e.to_string()))?;
    let mut entries_seen = 0usize;
    for entry in entries {
        let mut entry = entry.map_err(|e| read_err(None, e.to_string()))?;
        entries_seen += 1;
        let pos = entry.raw_header_position();
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let path = entry
            .path()
            .map_err(|e| read_err(Some(pos), format!("entry {raw_name:?}: {e}")))?
            .into_owned();
        let escapes = |reason: &str| ArchiveError::Escapes {
            archive: archive.to_path_buf(),
            pos,
            entry: raw_name.clone(),
            reason: reason.to_string(),
        };
        let rel = inside(&path).map_err(escapes)?;
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            add_dirs(&mut dirs, &rel);
            continue;
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        if kind.is_symlink() || kind.is_hard_link() {
            let target = entry
                .link_name()
                .map_err(|e| read_err(Some(pos), format!("entry {raw_name:?}: {e}")))?
                .ok_or_else(|| read_err(Some(pos), format!("link {raw_name:?} without a target")))?
                .into_owned();
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
                add_dirs(&mut dirs, p);
            }
            links.push((rel, t, raw_name));
            continue;
        }
        if !(kind.is_file()
            || kind == tar::EntryType::Continuous
            || kind == tar::EntryType::GNUSparse)
        {
            skipped.push((
                raw_name,
                format!("{kind:?} entry (not a file or directory)"),
            ));
            continue;
        }
        let size = entry.header().size().unwrap_or(0);
        let room = limit.saturating_sub(total);
        if size > room {
            return Err(ArchiveError::TooLarge {
                archive: archive.to_path_buf(),
                limit,
                entry: raw_name,
            });
        }
        // `size` is bounded by `room` above; the read is capped as well in
        // case the header lies.
        let mut buf = Vec::with_capacity(size.min(1 << 26) as usize);
        (&mut entry)
            .take(room + 1)
            .read_to_end(&mut buf)
            .map_err(|e| read_err(Some(pos), format!("entry {raw_name:?}: {e}")))?;
        if buf.len() as u64 > room {
            return Err(ArchiveError::TooLarge {
                archive: archive.to_path_buf(),
                limit,
                entry: raw_name,
            });
        }
        total += buf.len() as u64;
        if let Some(p) = rel.parent() {
            add_dirs(&mut dirs, p);
        }
        if let Ok(t) = entry.header().mtime() {
            mtimes.insert(rel.clone(), t);
        }
        files.insert(rel, Arc::new(buf));
    }
    if entries_seen == 0 {
        return Err(read_err(Some(0), "no tar entries in it".into()));
    }
    // Links to files inside the archive read as their target; a link to a
    // link is resolved on a later pass (at most 16 deep).
    let mut pending = links;
    for _ in 0..16 {
        let before = pending.len();
        pending.retain(|(link, target, _)| match files.get(target).cloned() {
            Some(bytes) => {
                files.insert(link.clone(), bytes);
                false
            }
            None => true,
        });
        if pending.is_empty() || pending.len() == before {
            break;
        }
    }
    for (_, t, raw) in pending {
        let why = if dirs.contains(&t) {
            "link to a directory; not followed".to_string()
        } else {
            format!(
                "link to {}, which is not a file in the archive",
                t.display()
            )
        };
        skipped.push((raw, why));
    }
    let tree = Tree {
        abs_root: std::path::absolute(&root).unwrap_or_else(|_| root.clone()),
        root: root.clone(),
        files,
        dirs,
        mtimes,
    };
    let mounted = Mounted {
        root,
        compression,
        files: tree.files.len(),
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

fn add_dirs(dirs: &mut BTreeSet<PathBuf>, rel: &Path) {
    let mut p = rel.to_path_buf();
    loop {
        dirs.insert(p.clone());
        if !p.pop() {
            break;
        }
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

/// `std::fs::metadata` (follows symlinks).
pub fn metadata(p: &Path) -> io::Result<Metadata> {
    match lookup(p) {
        None => std::fs::metadata(p).map(Metadata::from),
        Some((t, rel)) => {
            if let Some(f) = t.files.get(&rel) {
                Ok(Metadata {
                    ft: FileType {
                        dir: false,
                        file: true,
                        symlink: false,
                    },
                    len: f.len() as u64,
                })
            } else if t.dirs.contains(&rel) {
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
            .mtimes
            .get(&rel)
            .and_then(|s| i64::try_from(*s).ok())
            .and_then(|s| s.checked_mul(1000)),
    }
}

/// `std::fs::canonicalize`; a path inside an archive is its own canonical form.
pub fn canonicalize(p: &Path) -> io::Result<PathBuf> {
    match lookup(p) {
        None => std::fs::canonicalize(p),
        Some((t, rel)) => {
            if t.files.contains_key(&rel) || t.dirs.contains(&rel) {
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
    path: PathBuf,
    name: OsString,
    ft: FileType,
}

impl DirEntry {
    /// The entry's full path (the listed directory joined with the name).
    pub fn path(&self) -> PathBuf {
        self.path.clone()
    }
    /// The entry's name.
    pub fn file_name(&self) -> OsString {
        self.name.clone()
    }
    /// Its kind, without following symlinks.
    pub fn file_type(&self) -> io::Result<FileType> {
        Ok(self.ft)
    }
}

/// `std::fs::read_dir`; entries inside an archive come in name order.
pub fn read_dir(p: &Path) -> io::Result<std::vec::IntoIter<io::Result<DirEntry>>> {
    let v: Vec<io::Result<DirEntry>> = match lookup(p) {
        None => std::fs::read_dir(p)?
            .map(|e| {
                e.and_then(|e| {
                    Ok(DirEntry {
                        path: e.path(),
                        name: e.file_name(),
                        ft: e.file_type()?.into(),
                    })
                })
            })
            .collect(),
        Some((t, rel)) => {
            if !t.dirs.contains(&rel) {
                return Err(if t.files.contains_key(&rel) {
                    io::Error::other("Not a directory")
                } else {
                    not_found(p)
                });
            }
            let mut names: BTreeMap<OsString, FileType> = BTreeMap::new();
            let child = |q: &Path| -> Option<OsString> {
                let r = q.strip_prefix(&rel).ok()?;
                let mut c = r.components();
                let first = c.next()?;
                c.next().is_none().then(|| first.as_os_str().to_owned())
            };
            // Paths order component by component, so a directory's
            // descendants follow it in one run.
            let below = |k: &&PathBuf| k.starts_with(&rel);
            for d in t.dirs.range(rel.clone()..).take_while(below) {
                if let Some(n) = child(d) {
                    names.insert(
                        n,
                        FileType {
                            dir: true,
                            file: false,
                            symlink: false,
                        },
                    );
                }
            }
            for f in t
                .files
                .range(rel.clone()..)
                .map(|(k, _)| k)
                .take_while(below)
            {
                if let Some(n) = child(f) {
                    names.insert(
                        n,
                        FileType {
                            dir: false,
                            file: true,
                            symlink: false,
                        },
                    );
                }
            }
            names
                .into_iter()
                .map(|(name, ft)| {
                    Ok(DirEntry {
                        path: p.join(&name),
                        name,
                        ft,
                    })
                })
                .collect()
        }
    };
    Ok(v.into_iter())
}

/// A file opened for reading: on disk, or in an archive.
pub enum File {
    /// A real file.
    Disk(std::fs::File),
    /// A file held in memory.
    Memory(io::Cursor<Arc<Vec<u8>>>),
}

impl File {
    /// Opens read-only.
    pub fn open(p: impl AsRef<Path>) -> io::Result<File> {
        let p = p.as_ref();
        match lookup(p) {
            None => std::fs::File::open(p).map(File::Disk),
            Some((t, rel)) => match t.files.get(&rel) {
                Some(b) => Ok(File::Memory(io::Cursor::new(Arc::clone(b)))),
                None if t.dirs.contains(&rel) => Err(io::Error::other("Is a directory")),
                None => Err(not_found(p)),
            },
        }
    }
}

impl Read for File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            File::Disk(f) => f.read(buf),
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

/// [`FileBytes::open`] for real paths; a copy of the bytes for paths inside
/// an archive.
pub fn open(p: &Path) -> io::Result<FileBytes> {
    match lookup(p) {
        None => FileBytes::open(p),
        Some((t, rel)) => match t.files.get(&rel) {
            Some(b) => Ok(FileBytes::from_vec(b.as_ref().clone())),
            None => Err(not_found(p)),
        },
    }
}

/// `std::fs::read`.
pub fn read(p: &Path) -> io::Result<Vec<u8>> {
    match lookup(p) {
        None => std::fs::read(p),
        Some((t, rel)) => t
            .files
            .get(&rel)
            .map(|b| b.as_ref().clone())
            .ok_or_else(|| not_found(p)),
    }
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
    fn byte_counts() {
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }

    #[test]
    fn virtual_paths_split_at_the_archive() {
        let (a, rest) = split_virtual(Path::new("caps/x.tar.gz!/broker-1/t-0")).unwrap();
        assert_eq!(a, PathBuf::from("caps/x.tar.gz"));
        assert_eq!(rest, PathBuf::from("broker-1/t-0"));
        assert!(split_virtual(Path::new("caps/x!/y")).is_none());
    }
}
