//! Reads that are safe on a live production broker: positioned reads of
//! exactly the bytes asked for (no mapping, and no read-ahead beyond them:
//! each file is opened with `posix_fadvise(RANDOM)`), at most `--max-rate`
//! bytes a second over all threads, and the page cache left as it was: the
//! pages a read found missing from the cache are dropped from it once the
//! file is done (`posix_fadvise(DONTNEED)`, whole pages), the pages it
//! found there (the consumers' hot data) are left alone. What the cache
//! holds is asked of the kernel with a non-blocking read (`preadv2` with
//! `RWF_NOWAIT`), which copies what is cached and stops at the first page
//! that is not; a kernel or file system that cannot answer it leaves the
//! cache as klf's reads make it (klf drops nothing it cannot tell it
//! brought).
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
    /// Ranges klf brought into the cache, to drop when done.
    brought: Vec<(u64, u64)>,
}

impl Careful {
    /// Opens `path` read-only (a regular file only).
    pub fn open(path: &Path) -> io::Result<Careful> {
        let (file, meta) = crate::capture::mmap::open_regular(path)?;
        no_read_ahead(&file);
        Ok(Careful {
            file,
            len: meta.len(),
            brought: Vec::new(),
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
    /// the number read. What the cache holds is copied from it; from the
    /// first page it does not hold, the rest is read from the file, and
    /// those pages are dropped from the cache when the file is done (a
    /// page after that one that the cache held too is dropped with them:
    /// the kernel tells where the cached run stops, not where the next
    /// one starts).
    pub fn read_at(&mut self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        // what the file holds of it (a buffered reader asks for more than
        // a small file has)
        pace((buf.len() as u64).min(self.len.saturating_sub(pos)));
        // from the cache, if it is there
        let (mut done, known) = match cached_read(&self.file, buf, pos) {
            Cached::Bytes(n) => (n, true),
            Cached::End => return Ok(0),
            Cached::Missing => (0, true),
            Cached::Unknown => (0, false),
        };
        let from = pos + done as u64;
        while done < buf.len() {
            let n = read_at(&self.file, &mut buf[done..], pos + done as u64)?;
            if n == 0 {
                break;
            }
            done += n;
        }
        let end = pos + done as u64;
        if known && end > from {
            self.brought.push(whole_pages(from, end));
        }
        Ok(done)
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

/// What a non-blocking read found in the page cache.
#[derive(Debug, PartialEq, Eq)]
enum Cached {
    /// This many bytes from the start (up to the first page it does not
    /// hold, or all of them).
    Bytes(usize),
    /// The end of the file.
    End,
    /// Not the first page.
    Missing,
    /// The kernel cannot tell (no `RWF_NOWAIT` here, or an error).
    Unknown,
}

impl Drop for Careful {
    fn drop(&mut self) {
        for &(from, len) in &self.brought {
            if drop_cached(&self.file, from, len) {
                DROPPED.fetch_add(len, Ordering::Relaxed);
            }
        }
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

/// Reads what the page cache holds of `buf.len()` bytes at `at`, without
/// waiting for the disk.
#[cfg(target_os = "linux")]
fn cached_read(f: &File, buf: &mut [u8], at: u64) -> Cached {
    use std::os::unix::io::AsRawFd;
    let Ok(off) = libc::off_t::try_from(at) else {
        return Cached::Unknown;
    };
    if buf.is_empty() {
        return Cached::Bytes(0);
    }
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    loop {
        // SAFETY: `iov` describes `buf`, a live, writable buffer of
        // `buf.len()` bytes borrowed mutably for the call; the descriptor
        // is the open file's. preadv2 writes at most that many bytes into
        // it.
        let n = unsafe { libc::preadv2(f.as_raw_fd(), &iov, 1, off, libc::RWF_NOWAIT) };
        return match usize::try_from(n) {
            Ok(0) => Cached::End,
            Ok(n) => Cached::Bytes(n),
            Err(_) => match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => Cached::Missing,
                _ => Cached::Unknown,
            },
        };
    }
}

#[cfg(not(target_os = "linux"))]
fn cached_read(_: &File, _: &mut [u8], _: u64) -> Cached {
    Cached::Unknown
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
