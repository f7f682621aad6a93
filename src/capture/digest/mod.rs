//! Digests (`.klfd`): a node's log directories as `klf digest` ships them
//! (see [`crate::format::digest`] for the bytes and
//! `docs/digest-format.md`). [`make`] writes one on the node; [`mount`]
//! reads one where the analysis runs and registers its tree with
//! [`crate::capture::vfs`], so that discovery, checkpoints, snapshots and
//! the internal topics read as from the node's directories. A data
//! segment's `.log` is there with its length and time, its bytes are not:
//! the readers of [`crate::capture::replica`] and
//! [`crate::capture::producers`] take its batch summaries from
//! [`segment`] instead.

pub mod make;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::capture::vfs::{self, TreeFile};
use crate::format::digest::{self as fmt, Entry, SegmentDigest};
use crate::format::ParseError;
use crate::model::BatchSummary;

/// File name ending of a digest.
pub const SUFFIX: &str = ".klfd";

/// Whether a path names a digest (by its name).
pub fn is_digest_name(p: &Path) -> bool {
    p.to_string_lossy().to_ascii_lowercase().ends_with(SUFFIX)
}

/// Whether `bytes` begin as a digest does.
pub fn looks_like_digest(bytes: &[u8]) -> bool {
    bytes.starts_with(fmt::MAGIC)
}

/// A segment's summaries inside a mounted digest.
#[derive(Clone)]
struct SegmentRef {
    /// Where the digest's segments' summaries are read from.
    src: Arc<Source>,
    /// The mount that read the digest ([`MOUNTS`]).
    mount: u64,
    /// Where this segment's compressed summaries are in the digest.
    at: u64,
    len: usize,
    /// Their CRC-32C when the digest was mounted: a digest file that
    /// changed since is an error, never other summaries.
    crc: u32,
    raw_len: u64,
    file_len: u64,
}

/// A mounted digest's bytes, for its segments' summaries: the digest file
/// (read again where a partition's summaries are needed: memory does not
/// hold them), or bytes given.
enum Source {
    File(std::fs::File),
    Memory(Arc<Vec<u8>>),
}

impl Source {
    fn read(&self, at: u64, len: usize) -> Result<Vec<u8>, ParseError> {
        match self {
            Source::Memory(b) => usize::try_from(at)
                .ok()
                .and_then(|a| b.get(a..a.checked_add(len)?))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| ParseError::new(at, "past the end of the digest")),
            Source::File(f) => {
                let mut buf = vec![0u8; len];
                read_exact_at(f, &mut buf, at).map_err(|e| {
                    ParseError::new(at, format!("cannot read the digest again: {e}"))
                })?;
                Ok(buf)
            }
        }
    }
}

#[cfg(unix)]
fn read_exact_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(not(unix))]
fn read_exact_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = f;
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(buf)
}

/// The segments of each mounted digest: root → path inside it → summaries.
/// Keyed by their bytes: a root is spelled as [`vfs::root_of`] spells it,
/// and the paths inside are plain (`a/b/c`, as the digest names them and
/// as [`vfs::resolve`] gives them).
type Segments = HashMap<std::ffi::OsString, HashMap<std::ffi::OsString, SegmentRef>>;

static SEGMENTS: std::sync::LazyLock<RwLock<Segments>> =
    std::sync::LazyLock::new(|| RwLock::new(HashMap::new()));

/// Each mounted digest's root, its file, and the paths its node was given
/// (`klf digest PATH...` as typed on the node) with the folder each is
/// under in the digest.
/// (and whether it was made with `--verify`).
static ROOTS: RwLock<Vec<MountedRoot>> = RwLock::new(Vec::new());

/// A mounted digest: its virtual root, its file, the paths its node was
/// given, and whether it was made with `--verify`.
type MountedRoot = (PathBuf, PathBuf, Vec<(String, String)>, bool);

/// Why a digest could not be read: the file, the byte and the reason.
#[derive(Debug, Clone)]
pub struct DigestError {
    /// The digest.
    pub path: PathBuf,
    /// Byte position, when one applies.
    pub pos: Option<u64>,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for DigestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{}:{p}: {}", self.path.display(), self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

/// What [`mount`] read.
#[derive(Debug, Clone)]
pub struct Mounted {
    /// The virtual root: the digest's path with `!` appended.
    pub root: PathBuf,
    /// The node entry: what made the digest and how.
    pub node: serde_json::Value,
    /// Files listed (shipped, summarised or listed).
    pub files: usize,
    /// Segments summarised.
    pub segments: usize,
    /// Problems met on the node while the digest was made: path, message.
    pub notes: Vec<(PathBuf, String)>,
}

/// Reads the digest at `path` (at most `limit` bytes of it and of the files
/// it ships) and registers its tree under `path!`.
pub fn mount(path: &Path, limit: u64) -> Result<Mounted, DigestError> {
    prepare(path, limit).map(Prepared::register)
}

/// A digest read and checked, its tree built, not yet registered: digests
/// are prepared on several threads, then registered in the order given.
pub struct Prepared {
    root: PathBuf,
    path: PathBuf,
    tree: vfs::BuiltTree,
    segs: HashMap<std::ffi::OsString, SegmentRef>,
    inputs: Vec<(String, String)>,
    verify: bool,
    mounted: Mounted,
}

impl Prepared {
    /// Registers the digest's tree and segments under its root (`path!`).
    pub fn register(self) -> Mounted {
        self.tree.register();
        if let Ok(mut r) = ROOTS.write() {
            r.retain(|(x, _, _, _)| *x != self.root);
            r.push((self.root.clone(), self.path, self.inputs, self.verify));
        }
        if let Ok(mut m) = SEGMENTS.write() {
            m.insert(self.root.into_os_string(), self.segs);
        }
        self.mounted
    }
}

/// Reads the digest at `path` (at most `limit` bytes of it and of the files
/// it ships) and builds its tree, without registering it ([`mount`] does
/// both).
pub fn prepare(path: &Path, limit: u64) -> Result<Prepared, DigestError> {
    let err = |pos: Option<u64>, reason: String| DigestError {
        path: path.to_path_buf(),
        pos,
        reason,
    };
    let meta = std::fs::metadata(path).map_err(|e| err(None, e.to_string()))?;
    if !meta.is_file() {
        return Err(err(None, "not a regular file; not read".into()));
    }
    if meta.len() > limit {
        return Err(err(
            None,
            format!(
                "{} bytes, more than the limit of {} (--archive-limit)",
                meta.len(),
                limit
            ),
        ));
    }
    let (file, _) =
        crate::capture::mmap::open_regular(path).map_err(|e| err(None, e.to_string()))?;
    let bytes = crate::capture::mmap::read_whole(path).map_err(|e| err(None, e.to_string()))?;
    prepare_from(path, &bytes, limit, Source::File(file))
}

/// [`mount`] of a digest's bytes, registered under `path!`.
pub fn mount_bytes(path: &Path, bytes: Arc<Vec<u8>>, limit: u64) -> Result<Mounted, DigestError> {
    prepare_from(path, &bytes.clone(), limit, Source::Memory(bytes)).map(Prepared::register)
}

fn prepare_from(
    path: &Path,
    bytes: &[u8],
    limit: u64,
    src: Source,
) -> Result<Prepared, DigestError> {
    let err = |pos: u64, reason: String| DigestError {
        path: path.to_path_buf(),
        pos: Some(pos),
        reason,
    };
    let parsed = parse(bytes, limit).map_err(|e| err(e.pos, e.reason.into_owned()))?;
    let root = vfs::root_of(path);
    // the segments' summaries stay where they are, with their checksums
    let src = Arc::new(src);
    let mount = MOUNTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut segs = Vec::with_capacity(parsed.segments.len());
    for (rel, at, len, raw_len, file_len) in &parsed.segments {
        segs.push((
            rel.clone().into_os_string(),
            SegmentRef {
                src: Arc::clone(&src),
                mount,
                at: *at as u64,
                len: *len,
                crc: crate::format::crc::crc32c(bytes.get(*at..at + len).unwrap_or_default()),
                raw_len: *raw_len,
                file_len: *file_len,
            },
        ));
    }
    let n_segments = segs.len();
    let n_files = parsed.files.len();
    let tree = vfs::build_tree(&root, parsed.files, parsed.dirs);
    let list = |k: &str| -> Vec<String> {
        parsed
            .node
            .get(k)
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let unders = list("under");
    let inputs: Vec<(String, String)> = list("inputs")
        .into_iter()
        .enumerate()
        .map(|(i, p)| (p, unders.get(i).cloned().unwrap_or_default()))
        .collect();
    let verify = parsed.node.get("verify").and_then(|v| v.as_bool()) == Some(true);
    Ok(Prepared {
        root: root.clone(),
        path: path.to_path_buf(),
        tree,
        segs: segs.into_iter().collect(),
        inputs,
        verify,
        mounted: Mounted {
            root,
            node: parsed.node,
            files: n_files,
            segments: n_segments,
            notes: parsed.notes,
        },
    })
}

/// Everything a digest holds, parsed (segments' summaries left compressed).
pub struct Parsed {
    /// The node entry.
    pub node: serde_json::Value,
    /// Files for the tree.
    pub files: Vec<(PathBuf, TreeFile)>,
    /// Directories.
    pub dirs: Vec<PathBuf>,
    /// Segments: path, position and length of the compressed summaries,
    /// their decoded length, the file's length on the node.
    pub segments: Vec<(PathBuf, usize, usize, u64, u64)>,
    /// Notes.
    pub notes: Vec<(PathBuf, String)>,
}

fn secs(ms: Option<i64>) -> Option<u64> {
    ms.and_then(|m| u64::try_from(m.div_euclid(1000)).ok())
}

/// Parses a whole digest (checks every entry; decompresses the files it
/// ships, at most `limit` bytes in all; decodes every segment's summaries
/// once to check them, keeping none). The entries are framed in order,
/// then inflated and checked on every core; the error reported is the
/// first in the digest's order, whatever the schedule.
pub fn parse(bytes: &[u8], limit: u64) -> Result<Parsed, ParseError> {
    use rayon::prelude::*;
    fmt::read_header(bytes)?;
    let mut out = Parsed {
        node: serde_json::Value::Null,
        files: Vec::new(),
        dirs: Vec::new(),
        segments: Vec::new(),
        notes: Vec::new(),
    };
    // what is inflated once the entries are framed: a shipped file (its
    // index in `out.files`) or a segment's summaries, to check
    enum Work<'a> {
        File {
            index: usize,
            content: &'a [u8],
            raw_len: u64,
            cap: u64,
            at: u64,
        },
        Segment {
            content: &'a [u8],
            raw_len: u64,
            cap: u64,
            start: u64,
        },
    }
    // (entry number, work)
    let mut work: Vec<(u64, Work)> = Vec::new();
    // each file's entry number and position, for a name given twice
    let mut named: Vec<(u64, u64)> = Vec::new();
    let mut pos = fmt::HEADER_LEN;
    let mut count = 0u64;
    let mut total = 0u64;
    let framed = loop {
        let (entry, next) = match fmt::read_entry(bytes, pos, count) {
            Ok(x) => x,
            Err(e) => break Err(e),
        };
        let Some(entry) = entry else {
            pos = next;
            break Ok(());
        };
        let at = pos as u64;
        match entry {
            Entry::Node(json) => match serde_json::from_slice(json) {
                Ok(v) => out.node = v,
                Err(e) => {
                    break Err(ParseError::new(
                        at,
                        format!("the node entry is not JSON: {e}"),
                    ))
                }
            },
            Entry::Dir(p) => out.dirs.push(p),
            Entry::File {
                path,
                mtime_ms,
                len,
                raw_len,
                content,
            } => {
                total = total.saturating_add(raw_len);
                work.push((
                    count,
                    Work::File {
                        index: out.files.len(),
                        content,
                        raw_len,
                        cap: limit.saturating_sub(total - raw_len),
                        at,
                    },
                ));
                named.push((count, at));
                out.files.push((
                    path,
                    TreeFile::Bytes {
                        bytes: Vec::new(),
                        mtime: secs(mtime_ms),
                        len,
                    },
                ));
            }
            Entry::Listed {
                path,
                mtime_ms,
                len,
            } => {
                named.push((count, at));
                out.files.push((
                    path,
                    TreeFile::Absent {
                        len,
                        mtime: secs(mtime_ms),
                    },
                ));
            }
            Entry::Segment {
                path,
                mtime_ms,
                len,
                raw_len,
                content,
            } => {
                let start = content.as_ptr() as usize - bytes.as_ptr() as usize;
                // checked below, so that a damaged digest is refused whole
                // rather than found out partition by partition
                work.push((
                    count,
                    Work::Segment {
                        content,
                        raw_len,
                        cap: segment_cap(len),
                        start: start as u64,
                    },
                ));
                named.push((count, at));
                out.segments
                    .push((path.clone(), start, content.len(), raw_len, len));
                out.files.push((
                    path,
                    TreeFile::Absent {
                        len,
                        mtime: secs(mtime_ms),
                    },
                ));
            }
            Entry::Note { path, message } => out.notes.push((path, message)),
            Entry::Unknown(_) => {}
        }
        count += 1;
        pos = next;
    };
    // The first error in the digest's order: an entry that does not frame
    // (its number is `count`), a name given twice, then one that does not
    // inflate or decode.
    let mut first: Option<((u64, u8), ParseError)> = None;
    let mut keep = |key: (u64, u8), e: ParseError| {
        if first.as_ref().is_none_or(|(k, _)| key < *k) {
            first = Some((key, e));
        }
    };
    if let Err(e) = framed {
        keep((count, 0), e);
    }
    // a name given twice: the files in name order, each one's twin
    let mut order: Vec<usize> = (0..out.files.len()).collect();
    order.par_sort_unstable_by(|&a, &b| {
        out.files[a]
            .0
            .as_os_str()
            .cmp(out.files[b].0.as_os_str())
            .then(named[a].0.cmp(&named[b].0))
    });
    if let Some((entry, at, i)) = order
        .windows(2)
        .filter(|w| out.files[w[0]].0.as_os_str() == out.files[w[1]].0.as_os_str())
        .map(|w| (named[w[1]].0, named[w[1]].1, w[1]))
        .min()
    {
        keep(
            (entry, 1),
            ParseError::new(
                at,
                format!("{} is in the digest twice", out.files[i].0.display()),
            ),
        );
    }
    drop(order);
    drop(named);
    // a file's index and bytes, or a segment checked
    type Inflated = Result<Option<(usize, Vec<u8>)>, ParseError>;
    let inflated: Vec<(u64, Inflated)> = work
        .par_iter()
        .map(|(entry, w)| {
            let r = match *w {
                Work::File {
                    index,
                    content,
                    raw_len,
                    cap,
                    at,
                } => fmt::inflate(content, raw_len, cap, at).map(|data| Some((index, data))),
                Work::Segment {
                    content,
                    raw_len,
                    cap,
                    start,
                } => fmt::inflate(content, raw_len, cap, start)
                    .and_then(|raw| fmt::decode_segment(&raw, start))
                    .map(|_| None),
            };
            (*entry, r)
        })
        .collect();
    drop(work);
    for (entry, r) in inflated {
        match r {
            Ok(Some((index, data))) => {
                if let Some((_, TreeFile::Bytes { bytes, .. })) = out.files.get_mut(index) {
                    *bytes = data;
                }
            }
            Ok(None) => {}
            Err(e) => keep((entry, 2), e),
        }
    }
    if let Some((_, e)) = first {
        return Err(e);
    }
    if pos != bytes.len() {
        return Err(ParseError::new(
            pos as u64,
            format!(
                "{} bytes after the end entry (two digests joined, or damage)",
                bytes.len() - pos
            ),
        ));
    }
    if out.node.is_null() {
        return Err(ParseError::new(
            fmt::HEADER_LEN as u64,
            "the digest has no node entry",
        ));
    }
    Ok(out)
}

/// The most the summaries of a segment of `len` bytes can take decoded:
/// every entry is at least 26 bytes and encodes to at most about 80.
fn segment_cap(len: u64) -> u64 {
    (len / 26)
        .saturating_add(1)
        .saturating_mul(96)
        .saturating_add(1 << 16)
}

/// The summaries of the segment at `path`, when it is a data segment of a
/// mounted digest (`None` for any other file): read again from the digest
/// and decoded, or, when this thread decoded them a moment ago (a diff
/// reads a replica's last segment to find its end, then in its window),
/// those again.
pub fn segment(path: &Path) -> Option<Result<Arc<SegmentDigest>, ParseError>> {
    let (root, rel) = vfs::resolve(path)?;
    let segments = SEGMENTS.read().ok()?;
    let s = segments.get(root.as_os_str())?.get(rel.as_os_str())?;
    // the mount that read the digest, where the summaries are in it,
    // their length and checksum
    let key = (s.mount, s.at, s.len, s.crc);
    if let Some(hit) = RECENT.with(|r| {
        r.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, d)| Arc::clone(d))
    }) {
        return Some(Ok(hit));
    }
    let d = s.src.read(s.at, s.len).and_then(|content| {
        if crate::format::crc::crc32c(&content) != s.crc {
            return Err(ParseError::new(
                s.at,
                "the digest changed since it was read (its summaries of this segment are not what they were)",
            ));
        }
        fmt::inflate(&content, s.raw_len, segment_cap(s.file_len), s.at)
            .and_then(|raw| fmt::decode_segment(&raw, s.at))
            .map(Arc::new)
    });
    if let Some(d) = d
        .as_ref()
        .ok()
        .filter(|d| d.batches.len() <= RECENT_MAX_BATCHES)
    {
        RECENT.with(|r| {
            let mut r = r.borrow_mut();
            if r.len() >= RECENT_KEPT {
                r.pop_front();
            }
            r.push_back((key, Arc::clone(d)));
        });
    }
    Some(d)
}

/// A segment's key among the recently decoded: the mount its digest was
/// read by, where the summaries are in it, their length and checksum.
type RecentKey = (u64, u64, usize, u32);

/// Numbers the digests read, one per [`prepare`] (a digest mounted again
/// is another mount: what a thread decoded of the first is not reused).
static MOUNTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many decoded segments a thread keeps.
const RECENT_KEPT: usize = 4;

/// The most batches of a decoded segment a thread keeps (a few MiB): what
/// is kept stays bounded whatever the segments' size.
const RECENT_MAX_BATCHES: usize = 16_384;

thread_local! {
    static RECENT: std::cell::RefCell<std::collections::VecDeque<(RecentKey, Arc<SegmentDigest>)>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// Forgets the segments this thread decoded (so that the next
/// [`segment`] reads the digest again).
pub fn forget_decoded() {
    RECENT.with(|r| r.borrow_mut().clear());
}

static UNCHECKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts batches an analysis used whose CRC the node did not check
/// (below where a digest made without `--verify` checks them).
pub fn used_unchecked(n: u64) {
    UNCHECKED.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
}

/// How many batches the analyses used whose CRC the node did not check.
pub fn unchecked_used() -> u64 {
    UNCHECKED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether a digest with data segments is mounted (a command was given
/// one).
pub fn any_mounted() -> bool {
    SEGMENTS
        .read()
        .is_ok_and(|m| m.values().any(|s| !s.is_empty()))
}

/// The mounted digests made without `--verify`: their batches' checksums
/// were checked only from each partition's high watermark (or recovery
/// point) on.
pub fn unverified() -> Vec<PathBuf> {
    let Ok(roots) = ROOTS.read() else {
        return Vec::new();
    };
    roots
        .iter()
        .filter(|(_, _, _, verify)| !verify)
        .map(|(_, f, _, _)| f.clone())
        .collect()
}

/// Whether `path` is a data segment of a mounted digest.
pub fn is_digest_segment(path: &Path) -> bool {
    match vfs::resolve(path) {
        Some((root, rel)) => SEGMENTS.read().is_ok_and(|m| {
            m.get(root.as_os_str())
                .is_some_and(|s| s.contains_key(rel.as_os_str()))
        }),
        None => false,
    }
}

/// For a path inside a mounted digest: the digest file, and the path on
/// the node the digest was made on (from the paths `klf digest` was given
/// there), as text to paste into a command run on that node.
pub fn on_node(p: &Path) -> Option<(PathBuf, String)> {
    let (root, rel) = vfs::resolve(p)?;
    let roots = ROOTS.read().ok()?;
    let (_, file, inputs, _) = roots.iter().find(|(r, _, _, _)| *r == root)?;
    let join = |base: &str, rest: &Path| -> String {
        if rest.as_os_str().is_empty() {
            base.to_string()
        } else {
            format!("{}/{}", base.trim_end_matches('/'), rest.display())
        }
    };
    let text = match inputs.as_slice() {
        [(one, _)] => join(one, &rel),
        many => {
            // each input is under its own folder of the digest
            let (input, under) = many
                .iter()
                .filter(|(_, u)| !u.is_empty() && rel.starts_with(u))
                .max_by_key(|(_, u)| u.len())?;
            join(input, rel.strip_prefix(under).ok()?)
        }
    };
    Some((file.clone(), text))
}

/// The model's summary of a digest's batch.
pub fn summary(b: &fmt::DigestBatch) -> BatchSummary {
    let h = &b.summary;
    BatchSummary {
        base_offset: h.base_offset,
        last_offset: h.last_offset,
        partition_leader_epoch: h.partition_leader_epoch,
        crc: h.crc,
        record_count: h.record_count,
        is_control: h.is_control,
        is_transactional: h.is_transactional,
        first_timestamp: h.first_timestamp,
        max_timestamp: h.max_timestamp,
        producer_id: h.producer_id,
        producer_epoch: h.producer_epoch,
        base_sequence: h.base_sequence,
    }
}

/// A digest's header for a batch summary.
pub fn header(s: &BatchSummary) -> fmt::BatchHeader {
    fmt::BatchHeader {
        base_offset: s.base_offset,
        last_offset: s.last_offset,
        partition_leader_epoch: s.partition_leader_epoch,
        crc: s.crc,
        record_count: s.record_count,
        is_control: s.is_control,
        is_transactional: s.is_transactional,
        first_timestamp: s.first_timestamp,
        max_timestamp: s.max_timestamp,
        producer_id: s.producer_id,
        producer_epoch: s.producer_epoch,
        base_sequence: s.base_sequence,
    }
}

/// The text of a walk's end, as the readers of a directory word it.
pub fn tail_text(end: &fmt::WalkEnd) -> Option<(u64, String)> {
    match end {
        fmt::WalkEnd::Tail { pos, len, declared } => {
            let tail = crate::format::batch::Tail {
                position: *pos,
                len: *len,
                kind: match declared {
                    None => crate::format::batch::TailKind::Short,
                    Some(d) => crate::format::batch::TailKind::Truncated { declared: *d },
                },
            };
            Some((*pos, tail.describe()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A digest built from entries, each one framed (its checksum good).
    fn digest_of(entries: &[Vec<u8>]) -> Vec<u8> {
        let mut v = fmt::header();
        v.extend(fmt::frame(fmt::tag::NODE, b"{}"));
        for e in entries {
            v.extend_from_slice(e);
        }
        v.extend(fmt::end_entry(entries.len() as u64 + 1));
        v
    }

    /// Whichever fault is found first on the cores, the one refused is the
    /// first in the digest's order, as a reading entry by entry finds it: a
    /// name given twice, a file that does not inflate, an entry that does
    /// not frame.
    #[test]
    fn the_first_fault_in_the_digest_is_the_one_refused() {
        let listed =
            |p: &str| fmt::frame(fmt::tag::LISTED, &fmt::listed_body(Path::new(p), None, 1));
        let good = |p: &str| {
            fmt::frame(
                fmt::tag::FILE,
                &fmt::file_body(Path::new(p), None, 5, b"hello").unwrap_or_default(),
            )
        };
        let broken = |p: &str| {
            let mut body = fmt::file_body(Path::new(p), None, 5, b"hello").unwrap_or_default();
            body.truncate(body.len() - 3);
            fmt::frame(fmt::tag::FILE, &body)
        };
        let reason = |d: Vec<u8>| match parse(&d, 1 << 20) {
            Err(e) => e.reason.into_owned(),
            Ok(_) => "parsed".to_string(),
        };
        assert_eq!(reason(digest_of(&[good("a"), listed("b/c")])), "parsed");
        let r = reason(digest_of(&[
            good("a"),
            broken("z"),
            listed("b/c"),
            listed("b/c"),
        ]));
        assert!(r.contains("does not decompress"), "{r}");
        let r = reason(digest_of(&[listed("b/c"), listed("b/c"), broken("z")]));
        assert!(r.contains("b/c is in the digest twice"), "{r}");
        let r = reason(digest_of(&[good("b/c"), broken("z"), good("b/c")]));
        assert!(r.contains("does not decompress"), "{r}");
        let mut cut = digest_of(&[broken("z"), listed("q")]);
        cut.truncate(cut.len() - 20);
        let r = reason(cut);
        assert!(r.contains("does not decompress"), "{r}");
        let mut cut = digest_of(&[listed("q"), listed("q"), good("r")]);
        cut.truncate(cut.len() - 20);
        let r = reason(cut);
        assert!(r.contains("twice"), "{r}");
        let mut cut = digest_of(&[good("r"), listed("q")]);
        cut.truncate(cut.len() - 20);
        let r = reason(cut);
        assert!(r.contains("truncated"), "{r}");
    }

    /// A digest file that changes after it is mounted gives an error where
    /// a segment's summaries are read again, never other summaries.
    #[test]
    fn a_digest_changed_after_mounting_is_an_error() {
        let node = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/unclean/broker-1");
        let capture = crate::capture::discover::discover(&[&node]);
        let mut bytes = Vec::new();
        let made = make::make(
            &capture,
            std::slice::from_ref(&node),
            &crate::model::digest::Options::default(),
            &mut bytes,
            &|_, _| {},
            &|_, _, _| None,
        );
        assert!(made.is_ok());
        let dir = std::env::temp_dir().join(format!("klf-digest-unit-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("n.klfd");
        assert!(std::fs::write(&file, &bytes).is_ok());
        let m = mount(&file, 1 << 30);
        assert!(m.is_ok());
        let seg = m
            .map(|m| m.root.join("unclean-0/00000000000000000000.log"))
            .unwrap_or_default();
        assert!(matches!(segment(&seg), Some(Ok(_))));
        // decoded a moment ago: the same summaries again
        assert!(matches!(segment(&seg), Some(Ok(_))));
        // the same length, other bytes
        assert!(std::fs::write(&file, vec![0x5a; bytes.len()]).is_ok());
        forget_decoded();
        match segment(&seg) {
            Some(Err(e)) => assert!(e.reason.contains("changed"), "{}", e.reason),
            other => panic!("wanted an error, got {other:?}"),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
