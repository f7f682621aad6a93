//! Reads that are safe on a live production broker: positioned reads of
//! the bytes asked for (no mapping; each file opened with
//! `posix_fadvise(RANDOM)`, so that the kernel reads ahead only where
//! another reader's read-ahead is under way), at most `--max-rate` bytes a
//! second over all threads, and the page cache left as it was: before a
//! read, the kernel is asked which of its pages the cache holds
//! (`cachestat(2)`, Linux 6.5 and later: it reads nothing and takes no
//! lock a writer holds), and the pages it did not hold are dropped again
//! (`posix_fadvise(DONTNEED)`) once the file is done, or as soon as 32 MiB
//! of them are waiting. The pages it held (the consumers' hot data) are
//! never dropped. Where the kernel cannot say (an older kernel, a sandbox
//! that refuses the call), nothing is dropped: klf's pages then stay, as
//! any reader's would.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bytes a second (0: no limit).
static RATE: AtomicU64 = AtomicU64::new(0);
/// Bytes read from segments and other files.
static READ: AtomicU64 = AtomicU64::new(0);
/// Bytes of the pages klf brought into the page cache and dropped again.
static DROPPED: AtomicU64 = AtomicU64::new(0);
static BUCKET: Mutex<Option<(Instant, u64)>> = Mutex::new(None);

/// Whether every file klf reads from disk is read this way (`klf digest`,
/// which runs on a live broker), not only the segments it walks.
static EVERYWHERE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every read of a file on disk a careful one ([`everywhere`]).
pub fn read_everything_carefully() {
    EVERYWHERE.store(true, Ordering::Relaxed);
}

/// Whether every read of a file on disk is a careful one: the reads of
/// [`crate::capture::vfs`] (discovery's, and `klf check`'s index checks
/// made on the node) go through [`Careful`] then, and none maps a file.
pub fn everywhere() -> bool {
    EVERYWHERE.load(Ordering::Relaxed)
}

/// The first `len` bytes of the file at `path` (fewer where it is
/// shorter), read carefully, a MiB at a time; memory for them is asked
/// for, not assumed.
pub fn read_file(path: &Path, len: u64) -> io::Result<Vec<u8>> {
    Careful::open(path)?.read_first(len)
}

impl Careful {
    /// The first `len` bytes of the file (fewer where it is shorter), as
    /// [`read_file`] reads them.
    pub fn read_first(&mut self, len: u64) -> io::Result<Vec<u8>> {
        read_first(self, len)
    }
}

fn read_first(f: &mut Careful, len: u64) -> io::Result<Vec<u8>> {
    let n = usize::try_from(f.len().min(len))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    let mut out = Vec::new();
    crate::format::memory::fallible(|| out.try_reserve_exact(n))
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    out.resize(n, 0);
    let mut done = 0usize;
    while done < out.len() {
        let end = (done + (1 << 20)).min(out.len());
        let k = f.read_at(&mut out[done..end], done as u64)?;
        if k == 0 {
            out.truncate(done);
            break;
        }
        done += k;
    }
    Ok(out)
}

/// Sets the I/O budget in bytes a second (0: none).
pub fn set_max_rate(bytes_per_second: u64) {
    RATE.store(bytes_per_second, Ordering::Relaxed);
}

/// Bytes read so far, and bytes of the pages klf brought into the page
/// cache and dropped again.
pub fn counters() -> (u64, u64) {
    (
        READ.load(Ordering::Relaxed),
        DROPPED.load(Ordering::Relaxed),
    )
}

/// Counts `n` bytes read and waits until they fit the budget: the reads
/// of all threads together stay at the rate, measured from the first read.
pub fn pace(n: u64) {
    READ.fetch_add(n, Ordering::Relaxed);
    let rate = RATE.load(Ordering::Relaxed);
    if rate == 0 {
        return;
    }
    let wait = {
        let Ok(mut b) = BUCKET.lock() else { return };
        let (start, done) = b.get_or_insert((Instant::now(), 0));
        *done = done.saturating_add(n);
        let due = Duration::from_secs_f64(*done as f64 / rate as f64);
        due.checked_sub(start.elapsed())
    };
    if let Some(w) = wait {
        std::thread::sleep(w);
    }
}

/// A file opened for careful reading.
pub struct Careful {
    file: File,
    len: u64,
    /// Pages klf brought into the cache (first byte, length), to drop.
    brought: Vec<(u64, u64)>,
    /// Their bytes.
    brought_bytes: u64,
    /// Bytes whose pages the cache held, every one, when asked (before
    /// klf read any of them, or with what klf read of them already noted):
    /// a read inside needs no question of its own.
    all_cached: (u64, u64),
}

/// How far ahead the cache is asked about at once, where a read's own
/// pages are all cached (a walk of headers asks once a MiB, not once a
/// header).
const ASK_AHEAD: u64 = 1 << 20;

/// Pages brought into the cache that are dropped at once, rather than
/// when the file is done (a segment walked whole holds no more than this
/// of them).
const DROP_EVERY: u64 = 32 << 20;

impl Careful {
    /// Opens `path` read-only (a regular file only).
    pub fn open(path: &Path) -> io::Result<Careful> {
        let (file, meta) = crate::capture::mmap::open_regular(path)?;
        no_read_ahead(&file);
        Ok(Careful {
            file,
            len: meta.len(),
            brought: Vec::new(),
            brought_bytes: 0,
            all_cached: (0, 0),
        })
    }

    /// The file's length when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The file's modification time, when the system tells it.
    pub fn modified(&self) -> Option<std::time::SystemTime> {
        self.file.metadata().ok().and_then(|m| m.modified().ok())
    }

    /// Where the file's data ends (the start of a trailing hole: a
    /// preallocated index), without reading it.
    pub fn data_end(&self) -> u64 {
        crate::capture::mmap::data_end(&self.file, self.len)
    }

    /// Whether the file was empty when opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads `buf.len()` bytes at `pos` (fewer at the end of the file):
    /// the number read. The pages of it the cache did not hold before are
    /// dropped from it later ([`Careful`]).
    pub fn read_at(&mut self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        // what the file holds of it (a buffered reader asks for more than
        // a small file has)
        let want = (buf.len() as u64).min(self.len.saturating_sub(pos));
        pace(want);
        // asked before the read, which brings them in
        let missing = if want == 0 || self.known_cached(pos, want) {
            Some(Vec::new())
        } else {
            self.missing_pages(pos, want)
        };
        let mut done = 0;
        let result = loop {
            if done >= buf.len() {
                break Ok(done);
            }
            match read_at(&self.file, &mut buf[done..], pos + done as u64) {
                Ok(0) => break Ok(done),
                Ok(n) => done += n,
                Err(e) => break Err(e),
            }
        };
        // what was read of them, even where the read then failed
        if done > 0 {
            let end = pos + done as u64;
            for (from, len) in missing.into_iter().flatten() {
                if from < end {
                    let len = len.min(end.div_ceil(page_size()) * page_size() - from);
                    self.brought.push((from, len));
                    self.brought_bytes += len;
                }
            }
        }
        if self.brought_bytes >= DROP_EVERY {
            self.drop_brought();
        }
        result
    }

    /// Whether the pages of `len` bytes at `pos` lie where the cache held
    /// every page when asked.
    fn known_cached(&self, pos: u64, len: u64) -> bool {
        let (from, n) = self.all_cached;
        pos >= from && pos.saturating_add(len) <= from + n
    }

    /// [`missing_pages`] of `len` bytes at `pos`; where there are none, the
    /// [`ASK_AHEAD`] bytes from there are asked about too, and noted when
    /// the cache holds them all.
    fn missing_pages(&mut self, pos: u64, len: u64) -> Option<Vec<(u64, u64)>> {
        let missing = missing_pages(&self.file, pos, len)?;
        if missing.is_empty() && len < ASK_AHEAD {
            let (first, _) = whole_pages(pos, pos + 1);
            let ahead = ASK_AHEAD.min(self.len.saturating_sub(first));
            if ahead > 0 {
                let (_, span) = whole_pages(first, first + ahead);
                if cachestat(&self.file, first, span).is_some_and(|c| c >= span / page_size()) {
                    self.all_cached = (first, ahead);
                }
            }
        }
        Some(missing)
    }

    /// Drops the pages klf brought into the cache so far.
    fn drop_brought(&mut self) {
        for (from, len) in self.brought.drain(..) {
            if drop_cached(&self.file, from, len) {
                DROPPED.fetch_add(len, Ordering::Relaxed);
            }
        }
        self.brought_bytes = 0;
    }
}

/// The pages holding the bytes `from..end`: their first byte and length.
fn whole_pages(from: u64, end: u64) -> (u64, u64) {
    let page = page_size();
    let first = from - from % page;
    let last = end.div_ceil(page).saturating_mul(page);
    (first, last - first)
}

/// The page size (4 KiB where the system does not say).
fn page_size() -> u64 {
    static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        #[cfg(unix)]
        {
            // SAFETY: sysconf reads a system constant; it touches no memory
            // of this process.
            let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if let Ok(n) = u64::try_from(n) {
                if n.is_power_of_two() {
                    return n;
                }
            }
        }
        4096
    })
}

impl Drop for Careful {
    fn drop(&mut self) {
        self.drop_brought();
    }
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match f.read_at(buf, at) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

#[cfg(not(unix))]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = f;
    f.seek(SeekFrom::Start(at))?;
    f.read(buf)
}

/// The pages of the bytes `pos..pos + len` (`len` > 0) the page cache
/// does not hold now (runs of them: first byte, length), as `cachestat(2)`
/// counts them (it reads nothing); `None` where the kernel cannot say.
#[cfg(target_os = "linux")]
fn missing_pages(f: &File, pos: u64, len: u64) -> Option<Vec<(u64, u64)>> {
    let page = page_size();
    let (first, span) = whole_pages(pos, pos.checked_add(len)?);
    let pages = span / page;
    let cached = cachestat(f, first, span)?;
    if cached >= pages {
        return Some(Vec::new());
    }
    if cached == 0 {
        return Some(vec![(first, span)]);
    }
    // some of them: a page at a time
    let mut out: Vec<(u64, u64)> = Vec::new();
    for i in 0..pages {
        let at = first + i * page;
        if cachestat(f, at, page)? == 0 {
            match out.last_mut() {
                Some((from, n)) if *from + *n == at => *n += page,
                _ => out.push((at, page)),
            }
        }
    }
    Some(out)
}

#[cfg(not(target_os = "linux"))]
fn missing_pages(_: &File, _: u64, _: u64) -> Option<Vec<(u64, u64)>> {
    None
}

/// How many pages of `len` (> 0) bytes at `off` the page cache holds
/// (`cachestat(2)`); `None` where the kernel cannot say.
#[cfg(target_os = "linux")]
fn cachestat(f: &File, off: u64, len: u64) -> Option<u64> {
    use std::os::unix::io::AsRawFd;
    /// The same number on every architecture (a system call added since
    /// the numbers were unified).
    const SYS_CACHESTAT: libc::c_long = 451;
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct Stat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    static UNSUPPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if len == 0 || UNSUPPORTED.load(Ordering::Relaxed) {
        return None;
    }
    let range = Range { off, len };
    let mut stat = Stat::default();
    // SAFETY: cachestat reads `range` and writes one `Stat`, both live
    // locals of the layout the kernel defines; the descriptor is the open
    // file's. It reads no page of the file.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            f.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut Stat,
            0 as libc::c_uint,
        )
    };
    if r != 0 {
        if matches!(
            io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOSYS | libc::EPERM | libc::EOPNOTSUPP)
        ) {
            UNSUPPORTED.store(true, Ordering::Relaxed);
        }
        return None;
    }
    Some(stat.nr_cache)
}

/// Asks the kernel to read no more of the file than klf asks for (its
/// read-ahead would bring pages klf does not read, and does not drop).
#[cfg(target_os = "linux")]
fn no_read_ahead(f: &File) {
    use std::os::unix::io::AsRawFd;
    // SAFETY: posix_fadvise only takes the descriptor of the open file and
    // two integers; it touches no memory of this process. It applies to
    // this open file only.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM);
    }
}

#[cfg(not(target_os = "linux"))]
fn no_read_ahead(_: &File) {}

/// Drops the pages of `len` bytes at `from` from the page cache (clean
/// pages only: a file klf only reads has no dirty pages of klf's).
#[cfg(target_os = "linux")]
fn drop_cached(f: &File, from: u64, len: u64) -> bool {
    use std::os::unix::io::AsRawFd;
    let (Ok(off), Ok(n)) = (libc::off_t::try_from(from), libc::off_t::try_from(len)) else {
        return false;
    };
    // SAFETY: posix_fadvise only takes the descriptor of the open file and
    // two integers; it touches no memory of this process.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), off, n, libc::POSIX_FADV_DONTNEED) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn drop_cached(_: &File, _: u64, _: u64) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_of_a_range_are_whole() {
        let p = page_size();
        assert_eq!(whole_pages(0, 1), (0, p));
        assert_eq!(whole_pages(p - 1, p + 1), (0, 2 * p));
        assert_eq!(whole_pages(p, 2 * p), (p, p));
        assert_eq!(whole_pages(3 * p + 5, 3 * p + 66), (3 * p, p));
    }
}
