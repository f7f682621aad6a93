//! Reading the entries of a segment file, whatever holds its bytes.
//!
//! A [`SegmentFile`] is a `.log` (or a KRaft `.checkpoint`, which has the
//! same framing) opened read-only. Its bytes are mapped, held by an
//! archive, or, when the file cannot be mapped (a live log directory,
//! `--no-mmap`: see [`crate::capture::mmap`]), not held at all: a
//! [`SegmentReader`] then reads the file a window at a time, so memory does
//! not grow with the size of the file. The window starts at 64 KiB and
//! doubles as reading goes on, up to [`read_window`] bytes
//! (`KLF_READ_WINDOW`, 8 MiB by default); it grows past that only to hold
//! one entry whole, up to [`MAX_UNMAPPED_ENTRY`] bytes.
//!
//! Both ways run the same [`Scan`] over the bytes, so they give the same
//! entries, errors, tails and resyncs for the same file: a window that ends
//! inside an entry is never mistaken for the end of the segment.
//!
//! A read that fails (EIO, the file vanished) is an [`EntryError::Io`],
//! never a fact about the data. So is a file that changes while it is read
//! (it shrinks or grows, or its modification time moves: something writes
//! to it): a read that comes back short, and an iteration that ends (the
//! last entry, a torn tail, a damaged entry) while the file's size or time
//! is no longer what it was when opened, give an [`EntryError::Io`] saying
//! the file changed while klf read it, never a torn tail or damage in the
//! evidence. Every such error is noted with
//! [`crate::capture::vfs::read_failed`].

use std::fs::File;
use std::io;
use std::path::Path;

use crate::capture::mmap::{read_window, FileBytes, Opened};
use crate::format::batch::{
    Batch, Entries, EntryError, Resync, Scan, SegmentIter, SegmentSource, Skipped, Tail, Window,
};

/// Largest entry read into memory from a file that is not mapped. A larger
/// declared entry (that fits in the file) is refused with
/// [`EntryError::Io`] of kind `OutOfMemory`: klf does not hold it, and
/// says how to read it (with a mapping).
pub const MAX_UNMAPPED_ENTRY: usize = 128 << 20;

/// First read of a window: lookups of one entry stay cheap.
const FIRST_READ: usize = 64 << 10;

enum Src {
    Bytes(FileBytes),
    Unmapped(File),
}

/// A segment file opened read-only; see the module docs.
pub struct SegmentFile {
    src: Src,
    len: u64,
    /// A file on disk: its path and what it was when opened, to tell
    /// whether it changed while read (`None` for bytes held in memory).
    stable: Option<Stable>,
}

/// What a file on disk was when it was opened.
struct Stable {
    path: std::path::PathBuf,
    modified: Option<std::time::SystemTime>,
}

use crate::capture::mmap::changed_while_read;

impl SegmentFile {
    /// `Ok` when the file is still what it was when opened (its size and
    /// modification time; bytes held in memory always are); else the error
    /// saying it changed while read, noted as a failed read. A reader that
    /// meets damage asks this before reporting it: bytes that moved under
    /// klf are not evidence.
    pub fn unchanged(&self) -> io::Result<()> {
        self.changed().map_or(Ok(()), Err)
    }

    /// Whether the file changed since it was opened (see the module docs):
    /// the error saying so, noted as a failed read.
    fn changed(&self) -> Option<io::Error> {
        let st = self.stable.as_ref()?;
        let e = match std::fs::metadata(&st.path) {
            Ok(m) if m.len() == self.len && m.modified().ok() == st.modified => return None,
            Ok(m) => changed_while_read(self.len, Some(m.len())),
            Err(_) => changed_while_read(self.len, None),
        };
        crate::capture::vfs::read_failed(&st.path, &e);
        Some(e)
    }
}

impl SegmentFile {
    /// Opens `path` (a real path or one inside a mounted archive).
    pub fn open(path: &Path) -> io::Result<SegmentFile> {
        let mut f = match crate::capture::vfs::open_segment(path)? {
            Opened::Bytes(b) => SegmentFile::from_bytes(b),
            Opened::Unmapped { file, len } => SegmentFile {
                src: Src::Unmapped(file),
                len,
                stable: None,
            },
        };
        if !crate::capture::vfs::is_virtual(path) {
            let modified = match &f.src {
                Src::Unmapped(file) => file.metadata(),
                Src::Bytes(_) => std::fs::metadata(path),
            }
            .ok()
            .and_then(|m| m.modified().ok());
            crate::capture::vfs::opened(path, f.len, modified)?;
            f.stable = Some(Stable {
                path: path.to_path_buf(),
                modified,
            });
        }
        Ok(f)
    }

    /// Bytes already held.
    pub fn from_bytes(b: FileBytes) -> SegmentFile {
        SegmentFile {
            len: <[u8]>::len(&b) as u64,
            src: Src::Bytes(b),
            stable: None,
        }
    }

    /// Opens `path` and reads it a window at a time whatever its size or
    /// place (no mapping): for tests of the unmapped path.
    pub fn open_unmapped(path: &Path) -> io::Result<SegmentFile> {
        let (file, meta) = crate::capture::mmap::open_regular(path)?;
        let len = meta.len();
        Ok(SegmentFile {
            src: Src::Unmapped(file),
            len,
            stable: Some(Stable {
                path: path.to_path_buf(),
                modified: meta.modified().ok(),
            }),
        })
    }

    /// Size in bytes when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the bytes are read a window at a time (not mapped or held).
    pub fn is_unmapped(&self) -> bool {
        matches!(self.src, Src::Unmapped(_))
    }

    /// The entries starting in `[start, end)` (`end` past the file: to its
    /// end).
    pub fn reader(&self, start: u64, end: u64) -> SegmentReader<'_> {
        SegmentReader {
            src: self,
            buf: Vec::new(),
            base: 0,
            complete: false,
            scan: Scan::new(start, end.min(self.len)),
            released: std::cell::Cell::new(0),
            next_read: FIRST_READ,
            window: read_window(),
            failed: false,
        }
    }

    /// All its entries.
    pub fn entries(&self) -> SegmentReader<'_> {
        self.reader(0, self.len)
    }
}

/// The entries of a [`SegmentFile`], read as [`SegmentIter`] reads bytes in
/// memory. Not an `Iterator`: each entry borrows the reader's window, so
/// it is read through a [`crate::format::walk::Walk`] (`while let Some(step)
/// = walk.next()`).
pub struct SegmentReader<'a> {
    src: &'a SegmentFile,
    /// The window of an unmapped file: segment bytes `[base, base + len)`.
    buf: Vec<u8>,
    base: u64,
    /// Whether the file's bytes end where `buf` ends.
    complete: bool,
    scan: Scan,
    /// Mapped bytes before this were released (see
    /// [`FileBytes::consumed`]).
    released: std::cell::Cell<usize>,
    /// Size of the next read (doubles up to `window`).
    next_read: usize,
    window: usize,
    /// A read failed: the iteration is over.
    failed: bool,
}

fn window_of<'s>(src: &'s SegmentFile, buf: &'s [u8], base: u64, complete: bool) -> Window<'s> {
    match &src.src {
        Src::Bytes(b) => Window::whole(b),
        Src::Unmapped(_) => Window {
            data: buf,
            base,
            complete,
        },
    }
}

impl<'a> SegmentReader<'a> {
    /// Strict mode (see [`SegmentIter::strict`]).
    pub fn strict(mut self) -> Self {
        self.scan = self.scan.strict();
        self
    }

    /// Reads at most `n` bytes at once (at least 1), instead of
    /// [`read_window`]: for tests of window edges.
    pub fn window_size(mut self, n: usize) -> Self {
        self.window = n.max(1);
        self.next_read = self.next_read.min(self.window);
        self
    }

    /// Position of the next entry.
    pub fn position(&self) -> u64 {
        self.scan.position()
    }

    /// The tail that ended the iteration, if it ended on one.
    pub fn tail(&self) -> Option<Tail> {
        self.scan.tail()
    }

    /// The next entry; `None` at the end, after an error or a tail.
    #[allow(clippy::should_implement_trait)]
    pub fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
        if self.failed {
            return None;
        }
        loop {
            let w = window_of(self.src, &self.buf, self.base, self.complete);
            let Some((at, len)) = self.scan.needs(&w) else {
                break;
            };
            if let Err(e) = self.fill(at, len) {
                self.failed = true;
                return Some(Err(EntryError::Io(e)));
            }
        }
        self.release();
        let w = window_of(self.src, &self.buf, self.base, self.complete);
        match self.scan.next(w) {
            Some(Ok(b)) => Some(Ok(b)),
            // The end, a torn tail or damage: only if the file is still
            // what it was when opened (see the module docs).
            ended => match self.src.changed() {
                Some(e) => {
                    self.failed = true;
                    Some(Err(EntryError::Io(e)))
                }
                None => ended.map(|r| r.map_err(EntryError::Bad)),
            },
        }
    }

    /// Mapped bytes before the current position are not read again: let
    /// them leave resident memory (see [`FileBytes::consumed`]). Called
    /// before each entry is read and before a look ahead, so that the
    /// pages behind go before the pages ahead come.
    fn release(&self) {
        if let Src::Bytes(bytes) = &self.src.src {
            let mut r = self.released.get();
            bytes.consumed(
                usize::try_from(self.scan.position()).unwrap_or(usize::MAX),
                &mut r,
            );
            self.released.set(r);
        }
    }

    /// See [`SegmentIter::resync`].
    pub fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
        if self.failed {
            return Ok(None);
        }
        loop {
            let w = window_of(self.src, &self.buf, self.base, self.complete);
            match self.scan.resync(&w) {
                Resync::NotFailed => return Ok(None),
                Resync::Skipped(s) => return Ok(Some(s)),
                Resync::Needs { at, len } => {
                    if let Err(e) = self.fill(at, len) {
                        self.failed = true;
                        return Err(EntryError::Io(e));
                    }
                }
            }
        }
    }

    /// Reads segment bytes `[at, at + len)` (and more, up to the window
    /// size) into the window.
    fn fill(&mut self, at: u64, len: usize) -> io::Result<()> {
        let Src::Unmapped(file) = &self.src.src else {
            return Ok(());
        };
        if len > MAX_UNMAPPED_ENTRY {
            return Err(self.noted(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!(
                    "the entry at byte {at} declares {len} bytes, more than the {MAX_UNMAPPED_ENTRY} bytes klf holds in memory \
                     from a file it does not map (--no-mmap, KLF_NO_MMAP, or a log directory in use or just written); \
                     read a copy of the file with mapping on"
                ),
            )));
        }
        let want = len.max(self.next_read);
        self.next_read = self.next_read.saturating_mul(2).min(self.window);
        let avail = self.src.len.saturating_sub(at);
        let mut n = usize::try_from(avail).map_or(want, |a| a.min(want));
        self.buf.clear();
        // The memory is asked for: short of it, the window shrinks to the
        // entry; without even that, an I/O error (never an abort).
        if crate::format::memory::fallible(|| self.buf.try_reserve_exact(n)).is_err() {
            self.buf = Vec::new();
            self.window = len.max(1);
            self.next_read = self.window;
            n = usize::try_from(avail).map_or(len, |a| a.min(len));
            if crate::format::memory::fallible(|| self.buf.try_reserve_exact(n)).is_err() {
                return Err(self.noted(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("cannot allocate {n} bytes to read the entry at byte {at}"),
                )));
            }
        }
        self.buf.resize(n, 0);
        let mut got = 0;
        while got < n {
            match read_at(file, &mut self.buf[got..], at + got as u64) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.noted(e)),
            }
        }
        if got < n {
            // Fewer bytes than the file had when opened: it shrank under
            // klf. Not a torn tail: the machine's answer, not the data's.
            let now = file.metadata().map(|m| m.len()).unwrap_or(at + got as u64);
            return Err(self.noted(changed_while_read(self.src.len, Some(now))));
        }
        self.buf.truncate(got);
        self.base = at;
        self.complete = at + got as u64 >= self.src.len;
        Ok(())
    }
}

impl SegmentReader<'_> {
    /// `e`, noted as a failed read of the file (see the module docs).
    fn noted(&self, e: io::Error) -> io::Error {
        if let Some(st) = &self.src.stable {
            crate::capture::vfs::read_failed(&st.path, &e);
        }
        e
    }
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, at)
}

#[cfg(windows)]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, at)
}

impl Entries for SegmentReader<'_> {
    fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
        SegmentReader::next_entry(self)
    }
    fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
        SegmentReader::resync(self)
    }
    fn tail(&self) -> Option<Tail> {
        SegmentReader::tail(self)
    }
    fn position(&self) -> u64 {
        SegmentReader::position(self)
    }
    fn again(&self) -> Option<Batch<'_>> {
        self.scan
            .again(window_of(self.src, &self.buf, self.base, self.complete))
    }
    fn unchanged(&self) -> io::Result<()> {
        self.src.unchanged()
    }
    fn page_in(&self) -> Option<fn(&[u8])> {
        match &self.src.src {
            Src::Bytes(b) if b.is_mapped() => Some(crate::capture::mmap::populate),
            _ => None,
        }
    }
    fn ahead(&self) -> SegmentIter<'_> {
        self.release();
        let mut scan = Scan::new(self.scan.position(), self.scan.end());
        if self.scan.is_done() || self.failed {
            // An ended iteration has nothing ahead.
            scan = Scan::new(self.scan.end(), self.scan.end());
        }
        SegmentIter::in_window(
            window_of(self.src, &self.buf, self.base, self.complete),
            scan,
        )
    }
}

impl SegmentSource for SegmentFile {
    fn len(&self) -> u64 {
        self.len
    }
    fn entries(&self, start: u64, end: u64) -> Box<dyn Entries + '_> {
        Box::new(self.reader(start, end))
    }
}
