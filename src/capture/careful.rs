//! Reads that are safe on a live production broker: positioned reads of
//! exactly the bytes asked for (no mapping, no read-ahead beyond them), at
//! most `--max-rate` bytes a second over all threads, and the page cache
//! left as it was: a range that was not cached before klf read it is
//! dropped from the cache afterwards (`posix_fadvise(DONTNEED)`), a range
//! that was (the consumers' hot data) is left alone. Whether it was is
//! asked of the kernel with a non-blocking read (`preadv2` with
//! `RWF_NOWAIT`), which answers from the cache or not at all.
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
/// Bytes dropped from the page cache after klf read them.
static DROPPED: AtomicU64 = AtomicU64::new(0);
static BUCKET: Mutex<Option<(Instant, u64)>> = Mutex::new(None);

/// Sets the I/O budget in bytes a second (0: none).
pub fn set_max_rate(bytes_per_second: u64) {
    RATE.store(bytes_per_second, Ordering::Relaxed);
}

/// Bytes read so far, and bytes of them dropped from the page cache.
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
    /// the number read.
    pub fn read_at(&mut self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        pace(buf.len() as u64);
        let mut done = 0;
        // from the cache, if it is there
        done += cached_read(&self.file, buf, pos);
        let mut brought_from = None;
        while done < buf.len() {
            let n = read_at(&self.file, &mut buf[done..], pos + done as u64)?;
            if n == 0 {
                break;
            }
            brought_from.get_or_insert(pos + done as u64);
            done += n;
        }
        if let Some(from) = brought_from {
            self.brought.push((from, pos + done as u64 - from));
        }
        Ok(done)
    }
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
/// waiting for the disk: the number of bytes (0 when none are cached, or
/// the kernel cannot tell).
#[cfg(target_os = "linux")]
fn cached_read(f: &File, buf: &mut [u8], at: u64) -> usize {
    use std::os::unix::io::AsRawFd;
    let Ok(off) = libc::off_t::try_from(at) else {
        return 0;
    };
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: `iov` describes `buf`, a live, writable buffer of
    // `buf.len()` bytes borrowed mutably for the call; the descriptor is
    // the open file's. preadv2 writes at most that many bytes into it.
    let n = unsafe { libc::preadv2(f.as_raw_fd(), &iov, 1, off, libc::RWF_NOWAIT) };
    usize::try_from(n).unwrap_or(0)
}

#[cfg(not(target_os = "linux"))]
fn cached_read(_: &File, _: &mut [u8], _: u64) -> usize {
    0
}

/// Drops `len` bytes at `from` from the page cache (clean pages only: a
/// file klf only reads has no dirty pages of klf's).
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
