//! Opening a file read-only and getting at its bytes.
//!
//! Regular files above [`MMAP_THRESHOLD`] bytes are memory-mapped (read-only,
//! private); smaller files are read into memory. A file that may not be
//! mapped (below) is read whole when it is not a segment, up to
//! [`MAX_WHOLE_READ`] bytes; a segment is left to
//! [`crate::capture::segment`], which reads it a window at a time
//! ([`FileBytes::open_segment`]). Every way gives the same bytes;
//! [`FileBytes::read`] forces the plain read.
//!
//! # Live log directories and SIGBUS
//!
//! A mapping is only as stable as the file under it. If another process
//! truncates the file while it is mapped (a broker truncating its active
//! segment on recovery or follower truncation, deleting a segment that is
//! then reused), touching a page past the new end raises SIGBUS, which no
//! Rust code can catch. So [`FileBytes::open`] maps a file only when nothing
//! suggests it can change:
//!
//! - mapping is off altogether after [`set_mmap_disabled`] (`klf --no-mmap`)
//!   or with the environment variable `KLF_NO_MMAP` set to anything but `0`;
//! - a file inside a *live* log directory is read, never mapped. A log
//!   directory is live when a process holds a lock on its `.lock` file, as a
//!   running broker does ([`log_dir_is_live`]; probed with `F_GETLK`, which
//!   reads the lock table and changes nothing);
//! - a file modified less than [`RECENT_WRITE`] ago in a log directory that
//!   still has its `.lock` file (a broker's own directory, or a plain copy of
//!   one) is read, never mapped: a broker that was just killed leaves a log
//!   directory whose `.lock` nobody holds, and restarting it truncates files
//!   (recovery, follower truncation) that klf may be reading. Captures
//!   without `.lock` are mapped whatever their age, so a fresh copy does
//!   not cost memory the size of its segments;
//! - a file whose size or modification time changes between the first look
//!   and the mapping is read instead.
//!
//! A read cannot fault: a file that shrinks while it is read simply gives
//! fewer bytes, and one that vanishes gives an I/O error naming it.
//! As a last resort, [`install_sigbus_handler`] turns a SIGBUS that still
//! happens (a file rewritten outside any locked log directory) into a
//! message and exit status 2 instead of a crash.
//!
//! Nothing here ever opens a file for writing.

// Memory-mapping is the one place klf needs `unsafe`: every block says why
// it is sound (see the module documentation for what can still go wrong).
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Default most bytes read at once from a file that is not mapped (see
/// [`crate::capture::segment`]).
pub const DEFAULT_READ_WINDOW: usize = 8 << 20;

/// Most bytes read at once from a segment that is not mapped:
/// `KLF_READ_WINDOW` when set to a valid byte count of at least one byte
/// (`K`, `M`, `G` suffixes allowed), else [`DEFAULT_READ_WINDOW`]. A
/// segment larger than this that is not mapped is read a window at a time
/// whatever its size; a small value makes every segment go that way (for
/// tests of the unmapped path on small files).
pub fn read_window() -> usize {
    static W: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *W.get_or_init(|| {
        std::env::var("KLF_READ_WINDOW")
            .ok()
            .and_then(|v| crate::format::text::parse_bytes(&v).ok())
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n >= 1)
            .unwrap_or(DEFAULT_READ_WINDOW)
    })
}

/// Files at least this large are memory-mapped by [`FileBytes::open`].
pub const MMAP_THRESHOLD: u64 = 64 * 1024;

/// Files of a log directory with a `.lock` file modified more recently than
/// this are read, not mapped (see the module docs). A plain `cp -r` copy
/// that kept `.lock` is read for this long after the copy; one keeping
/// times (`cp -p`, `rsync -a`, tar) or leaving `.lock` out is mapped at once.
pub const RECENT_WRITE: std::time::Duration = std::time::Duration::from_secs(300);

/// Name of the lock file a broker holds in each of its log directories.
pub const LOCK_FILE: &str = ".lock";

static NO_MMAP: AtomicBool = AtomicBool::new(false);

/// Turns memory mapping off (or back on) for every later
/// [`FileBytes::open`]: files are then always read.
pub fn set_mmap_disabled(disabled: bool) {
    NO_MMAP.store(disabled, Ordering::Relaxed);
}

/// Whether mapping is off: [`set_mmap_disabled`] or `KLF_NO_MMAP` set to
/// something other than `0` or the empty string.
pub fn mmap_disabled() -> bool {
    NO_MMAP.load(Ordering::Relaxed)
        || std::env::var_os("KLF_NO_MMAP").is_some_and(|v| !v.is_empty() && v != "0")
}

enum Inner {
    Mapped(Mapped),
    Owned(Vec<u8>),
    Shared(std::sync::Arc<Vec<u8>>),
}

/// A mapping, listed in [`MAPPINGS`] with its file's path while it lives,
/// so that a SIGBUS on it can name the file.
struct Mapped {
    map: memmap2::Mmap,
    /// Its slot in [`MAPPINGS`], when one was free.
    slot: Option<usize>,
    /// The path, as the slot points to it.
    _path: Box<[u8]>,
}

/// One live mapping, read by the SIGBUS handler (atomics only: a signal
/// handler may not take a lock).
struct Slot {
    start: std::sync::atomic::AtomicUsize,
    len: std::sync::atomic::AtomicUsize,
    path: std::sync::atomic::AtomicPtr<u8>,
    path_len: std::sync::atomic::AtomicUsize,
}

const MAPPING_SLOTS: usize = 1024;

/// The live mappings and their files' paths (see [`install_sigbus_handler`]).
static MAPPINGS: [Slot; MAPPING_SLOTS] = [const {
    Slot {
        start: std::sync::atomic::AtomicUsize::new(0),
        len: std::sync::atomic::AtomicUsize::new(0),
        path: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
        path_len: std::sync::atomic::AtomicUsize::new(0),
    }
}; MAPPING_SLOTS];

impl Mapped {
    fn new(map: memmap2::Mmap, path: &Path) -> Mapped {
        let mut owned: Box<[u8]> = path.as_os_str().as_encoded_bytes().into();
        let start = map.as_ptr() as usize;
        let slot = (start != 0)
            .then(|| {
                MAPPINGS.iter().position(|s| {
                    s.start
                        .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                })
            })
            .flatten();
        if let Some(i) = slot {
            let s = &MAPPINGS[i];
            s.path.store(owned.as_mut_ptr(), Ordering::Release);
            s.path_len.store(owned.len(), Ordering::Release);
            s.len.store(map.len(), Ordering::Release);
            s.start.store(start, Ordering::Release);
        }
        Mapped {
            map,
            slot,
            _path: owned,
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            // Out of the list before the mapping and the path go.
            let s = &MAPPINGS[i];
            s.start.store(usize::MAX, Ordering::Release);
            s.path_len.store(0, Ordering::Release);
            s.path.store(std::ptr::null_mut(), Ordering::Release);
            s.len.store(0, Ordering::Release);
            s.start.store(0, Ordering::Release);
        }
    }
}

/// The path of the mapped file holding `addr`, for the SIGBUS handler:
/// only atomics, no allocation.
fn mapped_path_at(addr: usize) -> Option<(*const u8, usize)> {
    for s in &MAPPINGS {
        let start = s.start.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX || addr < start {
            continue;
        }
        let len = s.len.load(Ordering::Acquire);
        if addr - start < len {
            let p = s.path.load(Ordering::Acquire);
            let n = s.path_len.load(Ordering::Acquire);
            if !p.is_null() {
                return Some((p.cast_const(), n));
            }
        }
    }
    None
}

/// The bytes of a file, mapped or read.
pub struct FileBytes {
    inner: Inner,
}

impl FileBytes {
    /// Opens `path` read-only: memory-mapped when it is a regular file of at
    /// least [`MMAP_THRESHOLD`] bytes that is not in a live log directory
    /// (see the module docs), else read whole, up to [`MAX_WHOLE_READ`]
    /// bytes (a larger file is refused with an error saying so). Segments
    /// are opened with [`FileBytes::open_segment`] instead, which never
    /// reads a large file whole.
    pub fn open(path: &Path) -> io::Result<FileBytes> {
        match Self::open_segment(path)? {
            Opened::Bytes(b) => Ok(b),
            Opened::Unmapped { file, len } => Self::read_file(file, len),
        }
    }

    /// Opens `path` read-only as [`FileBytes::open`] does, but a file that
    /// is not mapped and is larger than [`MMAP_THRESHOLD`] is left unread:
    /// [`Opened::Unmapped`], for a reader that reads it a window at a time.
    pub fn open_segment(path: &Path) -> io::Result<Opened> {
        let (file, meta) = open_regular(path)?;
        let small = meta.len() < MMAP_THRESHOLD;
        if small && meta.len() <= read_window() as u64 {
            return Self::read_file(file, meta.len()).map(Opened::Bytes);
        }
        if !small && may_map(path, &meta) {
            // SAFETY: the mapping is read-only and private. Its contents can
            // still change (or vanish, SIGBUS) if another process modifies
            // the file; files of live log directories are never mapped, and
            // a file that changed while we looked is read instead (module
            // docs).
            let map = match unsafe { memmap2::MmapOptions::new().map(&file) } {
                Ok(m) => m,
                // The address space or memory a mapping needs is not there
                // (ENOMEM under a ulimit, say): read it a window at a time.
                Err(_) => {
                    return Ok(Opened::Unmapped {
                        file,
                        len: meta.len(),
                    })
                }
            };
            let after = file.metadata()?;
            if after.len() == meta.len() && after.modified().ok() == meta.modified().ok() {
                #[cfg(unix)]
                {
                    let _ = map.advise(memmap2::Advice::Sequential);
                }
                return Ok(Opened::Bytes(FileBytes {
                    inner: Inner::Mapped(Mapped::new(map, path)),
                }));
            }
            drop(map);
            return Ok(Opened::Unmapped {
                file,
                len: after.len(),
            });
        }
        Ok(Opened::Unmapped {
            file,
            len: meta.len(),
        })
    }

    /// Opens `path` read-only as [`FileBytes::open`] does, but holds only
    /// its bytes up to the end of its data ([`data_end`]): a file whose
    /// tail is a hole (a sparse preallocated index, 10 MiB of which a few
    /// bytes are entries) costs its data, not its length. Returns the bytes
    /// and the file's length; every byte between them reads as zero.
    pub fn open_data(path: &Path) -> io::Result<(FileBytes, u64)> {
        let (file, meta) = open_regular(path)?;
        let len = meta.len();
        let end = data_end(&file, len);
        if end >= MMAP_THRESHOLD && may_map(path, &meta) {
            // SAFETY: as in `open_segment`: read-only and private; files of
            // live log directories are never mapped, and a file that changed
            // while we looked is read instead.
            if let Ok(map) = unsafe { memmap2::MmapOptions::new().len(end as usize).map(&file) } {
                let after = file.metadata()?;
                if after.len() == len && after.modified().ok() == meta.modified().ok() {
                    return Ok((
                        FileBytes {
                            inner: Inner::Mapped(Mapped::new(map, path)),
                        },
                        len,
                    ));
                }
            }
        }
        let bytes = read_capped(file.take(end), end)?;
        Ok((FileBytes::from_vec(bytes), len))
    }

    /// Reads the whole file into memory (no mapping), up to
    /// [`MAX_WHOLE_READ`] bytes.
    pub fn read(path: &Path) -> io::Result<FileBytes> {
        let (file, meta) = open_regular(path)?;
        Self::read_file(file, meta.len())
    }

    fn read_file(file: File, len_hint: u64) -> io::Result<FileBytes> {
        Ok(FileBytes {
            inner: Inner::Owned(read_capped(file, len_hint)?),
        })
    }

    /// Bytes already in memory (a file read from an archive, say).
    pub fn from_vec(bytes: Vec<u8>) -> FileBytes {
        FileBytes {
            inner: Inner::Owned(bytes),
        }
    }

    /// Bytes held elsewhere (a file of a mounted archive), shared, not
    /// copied.
    pub fn shared(bytes: std::sync::Arc<Vec<u8>>) -> FileBytes {
        FileBytes {
            inner: Inner::Shared(bytes),
        }
    }

    /// Whether the bytes come from a memory mapping.
    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, Inner::Mapped(_))
    }

    /// Tells the kernel that the mapped pages before byte `pos` will not be
    /// needed again soon, so they leave this process's resident memory (they
    /// stay in the page cache; touching them again maps them back, with the
    /// same bytes). A sequential reader calls this as it goes, which keeps
    /// its resident memory bounded whatever the file size. Works in steps of
    /// [`RELEASE_STEP`] bytes; a no-op for bytes that were read into memory.
    pub fn consumed(&self, pos: usize, released: &mut usize) {
        let Inner::Mapped(Mapped { map, .. }) = &self.inner else {
            return;
        };
        let pos = pos.min(map.len());
        if pos < *released + RELEASE_STEP {
            return;
        }
        let end = pos - pos % RELEASE_STEP;
        // SAFETY: the mapping is private and read-only: MADV_DONTNEED only
        // drops this process's page-table entries; a later access faults the
        // same file bytes back in from the page cache, so every slice handed
        // out stays valid and unchanged.
        #[cfg(unix)]
        unsafe {
            let _ = map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                *released,
                end - *released,
            );
        }
        *released = end;
    }
}

/// Maps the pages behind `bytes` into this process now
/// (`MADV_POPULATE_READ`), so that the thread that reads them next does
/// not stop on a page fault for each few of them: a reader calls it from a
/// worker for the bytes it will read after the ones in hand. A hint: bytes
/// not mapped from a file (read into memory) are already there, and any
/// failure (an old kernel, a range not mapped) changes nothing.
pub fn populate(bytes: &[u8]) {
    #[cfg(target_os = "linux")]
    {
        if bytes.is_empty() {
            return;
        }
        let page = 4096usize;
        let start = bytes.as_ptr() as usize;
        let aligned = start - start % page;
        let len = bytes.len() + (start - aligned);
        // SAFETY: MADV_POPULATE_READ only faults in, readable, pages of
        // mappings that already exist (the range starts on the page that
        // holds `bytes[0]` and ends on the one that holds its last byte,
        // both mapped since `bytes` is a live slice); it changes no byte,
        // no protection and no mapping, and fails (ignored) rather than
        // faulting on a page that is not mapped.
        unsafe {
            let _ = libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_POPULATE_READ);
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = bytes;
    }
}

/// A file opened by [`FileBytes::open_segment`].
pub enum Opened {
    /// Its bytes, mapped or (a small file) read.
    Bytes(FileBytes),
    /// Not mapped (see the module docs) and not read yet: `len` bytes when
    /// opened.
    Unmapped {
        /// The file, open read-only.
        file: File,
        /// Its size when opened.
        len: u64,
    },
}

/// Most bytes of a file other than a segment read whole into memory when it
/// is not mapped (an index, a snapshot, a checkpoint). Segments are read a
/// window at a time whatever their size; a larger file of another kind is
/// refused when it cannot be mapped.
pub const MAX_WHOLE_READ: u64 = 256 << 20;

/// `std::fs::read`, up to [`MAX_WHOLE_READ`] bytes (a larger file is an
/// error saying so); pipes, sockets and devices refused.
pub fn read_whole(path: &Path) -> io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    read_capped(file, meta.len())
}

/// CRC-32C and length of a file's content, read in chunks of 1 MiB (memory
/// does not grow with the file).
pub fn crc32c_streamed(path: &Path) -> io::Result<(u32, u64)> {
    let (mut file, _) = open_regular(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut crc, mut len) = (crate::format::crc::Crc32c::default(), 0u64);
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok((crc.value(), len));
        }
        crc.update(&buf[..n]);
        len += n as u64;
    }
}

fn read_capped(file: impl Read, len_hint: u64) -> io::Result<Vec<u8>> {
    if len_hint > MAX_WHOLE_READ {
        return Err(too_large_to_read(len_hint));
    }
    // The hint only sizes the first allocation; a file that grew or shrank
    // meanwhile is still read correctly, up to the cap.
    // The machine may not have the memory: an I/O error, not an abort.
    let mut v = Vec::new();
    crate::format::memory::fallible(|| v.try_reserve_exact(len_hint as usize)).map_err(|_| {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("cannot allocate {len_hint} bytes to read the file"),
        )
    })?;
    crate::format::memory::fallible(|| file.take(MAX_WHOLE_READ + 1).read_to_end(&mut v))?;
    if v.len() as u64 > MAX_WHOLE_READ {
        return Err(too_large_to_read(v.len() as u64));
    }
    // Read to its end, the file no longer has the size it had when opened:
    // something wrote to it meanwhile (never read as a file that ends
    // there).
    if v.len() as u64 != len_hint {
        return Err(changed_while_read(len_hint, Some(v.len() as u64)));
    }
    Ok(v)
}

/// The error for a file that is no longer what it was when klf opened it:
/// `len` bytes then, `now` now (`None`: it is gone).
pub fn changed_while_read(len: u64, now: Option<u64>) -> io::Error {
    let what = match now {
        Some(n) if n < len => format!("it shrank from {len} to {n} bytes"),
        Some(n) if n > len => format!("it grew from {len} to {n} bytes"),
        Some(_) => format!("its modification time moved ({len} bytes)"),
        None => "it is gone".to_string(),
    };
    io::Error::other(format!(
        "the file changed while klf read it ({what}): something is writing to it; nothing is concluded from this reading (read a copy that nothing writes to)"
    ))
}

pub(crate) fn too_large_to_read(len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!(
            "{len} bytes is more than klf reads into memory without a memory mapping ({MAX_WHOLE_READ} bytes); \
             mapping is off for this file (--no-mmap, KLF_NO_MMAP, or a log directory in use or just written)"
        ),
    )
}

/// Granularity of [`FileBytes::consumed`] (a multiple of the page size).
pub const RELEASE_STEP: usize = 8 << 20;

/// Whether `path` may be mapped: a regular file, mapping not turned off,
/// not in a live log directory, not just written in a broker's log
/// directory (see the module docs).
fn may_map(path: &Path, meta: &std::fs::Metadata) -> bool {
    let just_written = recently_modified(meta) && in_broker_log_dir(path);
    meta.is_file() && !mmap_disabled() && !just_written && !in_live_log_dir(path)
}

/// Modified less than [`RECENT_WRITE`] ago (or in the future).
fn recently_modified(meta: &std::fs::Metadata) -> bool {
    match meta.modified() {
        Ok(t) => std::time::SystemTime::now()
            .duration_since(t)
            .map_or(true, |age| age < RECENT_WRITE),
        Err(_) => true,
    }
}

/// A pipe, socket or device is not read: opening a FIFO blocks until a
/// writer appears, and a device can be endless. Directories are left to
/// the OS (reading one fails with "Is a directory").
fn refuse_special_meta(meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.is_file() || meta.is_dir() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a pipe, socket or device); not read",
    ))
}

/// Where the data of `file` (of length `len`) ends: the start of its
/// trailing hole, from the file system (`SEEK_DATA`/`SEEK_HOLE`); `len`
/// where the file system does not say, the file has no trailing hole, or
/// it has more extents than are worth walking. Bytes past it read as
/// zeros: a reader looking for where real entries end need not touch them.
pub fn data_end(file: &File, len: u64) -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        let seek = |pos: u64, whence: libc::c_int| -> Option<u64> {
            let pos = libc::off_t::try_from(pos).ok()?;
            // SAFETY: lseek on a descriptor this `File` owns and keeps open
            // for the call; it moves the file position, which no reader of
            // this `File` relies on (every read of it is positioned or
            // follows a rewind).
            let r = unsafe { libc::lseek(fd, pos, whence) };
            u64::try_from(r).ok()
        };
        let mut end = 0u64;
        let mut pos = 0u64;
        let mut walked = 0;
        let found = loop {
            if walked == 4096 {
                // more extents than are worth walking
                break None;
            }
            walked += 1;
            let Some(data) = seek(pos, libc::SEEK_DATA) else {
                // ENXIO: no data at or after pos; any other error: unknown
                let no_data = std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO);
                break no_data.then_some(end);
            };
            let Some(hole) = seek(data, libc::SEEK_HOLE) else {
                break None;
            };
            end = hole;
            if hole >= len {
                break Some(end);
            }
            pos = hole;
        };
        let _ = seek(0, libc::SEEK_SET);
        found.map_or(len, |e| e.min(len))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = file;
        len
    }
}

/// Opens `path` read-only and says what it opened, in one open and one
/// stat of the open file: a pipe, socket or device is refused. The open does not wait on a FIFO (it is
/// non-blocking, which changes nothing for a regular file) and never makes a
/// terminal the controlling one.
pub fn open_regular(path: &Path) -> io::Result<(File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    refuse_special_meta(&meta)?;
    Ok((file, meta))
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.inner {
            Inner::Mapped(m) => &m.map,
            Inner::Owned(v) => v,
            Inner::Shared(v) => v,
        }
    }
}

impl AsRef<[u8]> for FileBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Whether `dir` is a log directory some process holds the `.lock` of (a
/// running broker). `false` when there is no `.lock`, it cannot be opened,
/// or the platform has no lock probe. Only reads: the lock file is opened
/// read-only and its lock queried with `F_GETLK`, which takes no lock.
pub fn log_dir_is_live(dir: &Path) -> bool {
    let lock = dir.join(LOCK_FILE);
    match File::open(&lock) {
        Ok(f) => lock_is_held(&f),
        Err(_) => false,
    }
}

#[cfg(unix)]
fn lock_is_held(f: &File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: a zeroed flock is a valid value; F_GETLK only fills it in.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 0;
    // SAFETY: valid fd and pointer to a flock for the duration of the call.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETLK, &mut fl) };
    // Kafka locks with Java's FileChannel.tryLock, an fcntl lock on Linux.
    r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short
}

#[cfg(not(unix))]
fn lock_is_held(_: &File) -> bool {
    false
}

/// Whether `path` lies in a live log directory: its own directory (a
/// checkpoint of the log directory) or its grandparent (a segment of a
/// partition directory). Probed at every call, not cached: a broker may
/// start, and take its lock, while klf runs.
pub fn in_live_log_dir(path: &Path) -> bool {
    log_dir_candidates(path).any(log_dir_is_live)
}

/// The directories that may be `path`'s log directory: its own (a
/// checkpoint of the log directory) and its grandparent (a segment of a
/// partition directory).
fn log_dir_candidates(path: &Path) -> impl Iterator<Item = &Path> {
    let parent = path.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    [parent, parent.and_then(Path::parent)]
        .into_iter()
        .flatten()
        .filter(|d| !d.as_os_str().is_empty())
}

/// Whether `path` lies in a broker's log directory by the look of it: its
/// own directory or its grandparent holds a `.lock` file (held or not).
pub fn in_broker_log_dir(path: &Path) -> bool {
    log_dir_candidates(path).any(|d| d.join(LOCK_FILE).is_file())
}

/// Installs a SIGBUS handler that reports a mapped file shrinking under klf
/// (a live log directory that was not recognised as such) and exits with
/// status 2, instead of dying from the signal. Idempotent.
pub fn install_sigbus_handler() {
    #[cfg(unix)]
    {
        static DONE: AtomicBool = AtomicBool::new(false);
        if DONE.swap(true, Ordering::SeqCst) {
            return;
        }
        extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
            const NAMED: &[u8] =
                b": cannot read: the file changed while klf read it (a memory-mapped \
file shrank: bus error): something is writing to it; nothing is concluded from this reading \
(read a copy that nothing writes to, or rerun with --no-mmap)\n";
            const UNNAMED: &[u8] = b"klf: a memory-mapped file shrank while it was being read \
(bus error): the log directory is being written to; rerun with --no-mmap\n";
            // SAFETY: `info` is the siginfo the kernel passed (SA_SIGINFO);
            // reading the faulting address from it is what it is for.
            let addr = unsafe { info.as_ref().map_or(0, |i| i.si_addr() as usize) };
            // SAFETY: write(2) and _exit(2) are async-signal-safe; the path
            // bytes belong to a live mapping's entry (see `Mapped`): the
            // faulting thread is inside that mapping, so it has not been
            // dropped.
            unsafe {
                match mapped_path_at(addr) {
                    Some((p, n)) => {
                        libc::write(2, b"klf: ".as_ptr().cast(), 5);
                        libc::write(2, p.cast(), n);
                        libc::write(2, NAMED.as_ptr().cast(), NAMED.len());
                    }
                    None => {
                        libc::write(2, UNNAMED.as_ptr().cast(), UNNAMED.len());
                    }
                }
                libc::_exit(2);
            }
        }
        // SAFETY: installing a handler that only reads atomics and calls
        // async-signal-safe functions.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::PathBuf;

    /// Sets a file's modification time an hour back, as in a capture copied
    /// with its times kept (recently written files are never mapped).
    fn age(p: &Path) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn mapped_and_read_give_same_bytes() {
        let dir = std::env::temp_dir().join(format!("klf-mmap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0usize, 10, MMAP_THRESHOLD as usize + 17] {
            let p = dir.join(format!("f{len}"));
            let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            std::fs::File::create(&p).unwrap().write_all(&data).unwrap();
            age(&p);
            let a = FileBytes::open(&p).unwrap();
            let b = FileBytes::read(&p).unwrap();
            assert_eq!(&a[..], &data[..]);
            assert_eq!(&b[..], &data[..]);
            assert_eq!(
                a.is_mapped(),
                len >= MMAP_THRESHOLD as usize && !mmap_disabled()
            );
            assert!(!b.is_mapped());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let dir = std::env::temp_dir().join(format!("klf-fifo-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("00000000000000000000.log");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        for r in [FileBytes::open(&fifo), FileBytes::read(&fifo)] {
            let e = r.err().expect("a FIFO must not be read");
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A mapped file that shrinks under klf: the SIGBUS becomes a message
    /// naming the file and exit status 2. Runs in a child process (this test binary again),
    /// since the handler ends the process.
    #[cfg(target_os = "linux")]
    #[test]
    fn sigbus_on_a_shrunk_mapping_becomes_exit_2() {
        if std::env::var_os("KLF_SIGBUS_CHILD").is_some() {
            let p = PathBuf::from(std::env::var_os("KLF_SIGBUS_CHILD").unwrap());
            set_mmap_disabled(false);
            install_sigbus_handler();
            let b = FileBytes::open(&p).unwrap();
            assert!(b.is_mapped());
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_len(0)
                .unwrap();
            // Touching a page past the new end faults.
            // SAFETY: the reference points into the live mapping; the read
            // is expected to fault (SIGBUS), which is what the test checks.
            let v = unsafe { std::ptr::read_volatile(&b[b.len() - 1]) };
            eprintln!("read {v} without a fault");
            std::process::exit(0);
        }
        let dir = std::env::temp_dir().join(format!("klf-sigbus-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("00000000000000000000.log");
        std::fs::write(&p, vec![7u8; MMAP_THRESHOLD as usize * 4]).unwrap();
        age(&p);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "capture::mmap::tests::sigbus_on_a_shrunk_mapping_becomes_exit_2",
                "--nocapture",
            ])
            .env("KLF_SIGBUS_CHILD", &p)
            .env_remove("KLF_NO_MMAP")
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{:?}: {err}", out.status);
        // The message names the file the fault was in.
        assert!(
            err.contains(&format!(
                "klf: {}: cannot read: the file changed while klf read it",
                p.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_recently_written_file_is_read_not_mapped() {
        let dir = std::env::temp_dir().join(format!("klf-recent-test-{}", std::process::id()));
        let part = dir.join("t-0");
        std::fs::create_dir_all(&part).unwrap();
        let p = part.join("00000000000000000000.log");
        std::fs::write(&p, vec![1u8; MMAP_THRESHOLD as usize * 2]).unwrap();
        // Without `.lock` (a capture): mapped, however fresh.
        assert_eq!(FileBytes::open(&p).unwrap().is_mapped(), !mmap_disabled());
        // In a broker's log directory (`.lock` there, held or not): a fresh
        // file is read, an old one mapped.
        std::fs::write(dir.join(LOCK_FILE), b"").unwrap();
        assert!(!FileBytes::open(&p).unwrap().is_mapped());
        age(&p);
        assert_eq!(FileBytes::open(&p).unwrap().is_mapped(), !mmap_disabled());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_is_an_error() {
        assert!(FileBytes::open(Path::new("/nonexistent/klf/file.log")).is_err());
    }

    /// A log directory whose `.lock` another process holds (as a broker
    /// does) is live: its files are read, not mapped. The lock holder is a
    /// child process (locks of our own process are invisible to F_GETLK).
    #[cfg(target_os = "linux")]
    #[test]
    fn locked_log_dir_is_live_and_not_mapped() {
        let dir = std::env::temp_dir().join(format!("klf-live-test-{}", std::process::id()));
        let part = dir.join("t-0");
        std::fs::create_dir_all(&part).unwrap();
        let lock = dir.join(LOCK_FILE);
        std::fs::write(&lock, b"").unwrap();
        let seg = part.join("00000000000000000000.log");
        std::fs::write(&seg, vec![0u8; MMAP_THRESHOLD as usize * 2]).unwrap();
        age(&seg);
        assert!(!log_dir_is_live(&dir));
        assert!(FileBytes::open(&seg).unwrap().is_mapped() || mmap_disabled());
        // python3's fcntl.lockf takes a POSIX lock like Java's FileChannel.lock.
        let script = "import fcntl,sys\nf=open(sys.argv[1],'r+')\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint('locked',flush=True)\nsys.stdin.read()\n";
        let mut child = match std::process::Command::new("python3")
            .args(["-c", script])
            .arg(&lock)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(_) => {
                eprintln!("python3 not found: lock probe not tested");
                std::fs::remove_dir_all(&dir).unwrap();
                return;
            }
        };
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line.trim(), "locked");
        assert!(log_dir_is_live(&dir));
        let before = std::fs::metadata(&lock).unwrap();
        let b = FileBytes::open(&seg).unwrap();
        assert!(!b.is_mapped(), "a file of a live log directory was mapped");
        assert_eq!(b.len(), MMAP_THRESHOLD as usize * 2);
        let after = std::fs::metadata(&lock).unwrap();
        assert_eq!(before.modified().unwrap(), after.modified().unwrap());
        assert_eq!(before.len(), after.len());
        drop(child.stdin.take());
        child.wait().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
