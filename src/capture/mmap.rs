//! Opening a file read-only and getting at its bytes.
//!
//! Regular files above [`MMAP_THRESHOLD`] bytes are memory-mapped (read-only,
//! private); smaller files, and anything that is not a regular file, are read
//! into memory. Both paths give the same bytes; [`FileBytes::read`] forces the
//! plain read.
//!
//! # SIGBUS
//!
//! A mapping is only as stable as the file under it. If another process
//! truncates the file while it is mapped (a broker's active segment being
//! truncated during recovery, log cleaning, a retention deletion followed by
//! reuse), touching a page past the new end raises SIGBUS and kills the
//! process; no Rust code can catch that. klf is meant for captured (copied)
//! log directories, where nothing writes. For live files use
//! [`FileBytes::read`] (a snapshot copy), which cannot fault; handling live
//! files is a separate concern.
//!
//! Nothing here ever opens a file for writing.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;

/// Files at least this large are memory-mapped by [`FileBytes::open`].
pub const MMAP_THRESHOLD: u64 = 64 * 1024;

enum Inner {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// The bytes of a file, mapped or read.
pub struct FileBytes {
    inner: Inner,
}

impl FileBytes {
    /// Opens `path` read-only: memory-mapped when it is a regular file of at
    /// least [`MMAP_THRESHOLD`] bytes, else read. See the module docs for the
    /// SIGBUS risk of mapping a file that shrinks.
    pub fn open(path: &Path) -> io::Result<FileBytes> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.len() >= MMAP_THRESHOLD {
            // SAFETY: the mapping is read-only and private. Its contents can
            // still change (or vanish, SIGBUS) if another process modifies
            // the file; klf reads captured files that nothing writes, as the
            // module docs state.
            let map = unsafe { memmap2::MmapOptions::new().map(&file)? };
            #[cfg(unix)]
            {
                let _ = map.advise(memmap2::Advice::Sequential);
            }
            return Ok(FileBytes {
                inner: Inner::Mapped(map),
            });
        }
        Self::read_file(file, meta.len())
    }

    /// Reads the whole file into memory (no mapping).
    pub fn read(path: &Path) -> io::Result<FileBytes> {
        let file = File::open(path)?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        Self::read_file(file, len)
    }

    fn read_file(mut file: File, len_hint: u64) -> io::Result<FileBytes> {
        // The hint only sizes the first allocation; a file that grew or
        // shrank meanwhile is still read correctly.
        let mut v = Vec::with_capacity(len_hint.min(1 << 30) as usize);
        file.read_to_end(&mut v)?;
        Ok(FileBytes {
            inner: Inner::Owned(v),
        })
    }

    /// Bytes already in memory (a file read from an archive, say).
    pub fn from_vec(bytes: Vec<u8>) -> FileBytes {
        FileBytes {
            inner: Inner::Owned(bytes),
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
        let Inner::Mapped(map) = &self.inner else {
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

/// Granularity of [`FileBytes::consumed`] (a multiple of the page size).
pub const RELEASE_STEP: usize = 8 << 20;

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.inner {
            Inner::Mapped(m) => m,
            Inner::Owned(v) => v,
        }
    }
}

impl AsRef<[u8]> for FileBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn mapped_and_read_give_same_bytes() {
        let dir = std::env::temp_dir().join(format!("klf-mmap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for len in [0usize, 10, MMAP_THRESHOLD as usize + 17] {
            let p = dir.join(format!("f{len}"));
            let data: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            std::fs::File::create(&p).unwrap().write_all(&data).unwrap();
            let a = FileBytes::open(&p).unwrap();
            let b = FileBytes::read(&p).unwrap();
            assert_eq!(&a[..], &data[..]);
            assert_eq!(&b[..], &data[..]);
            assert_eq!(a.is_mapped(), len >= MMAP_THRESHOLD as usize);
            assert!(!b.is_mapped());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_is_an_error() {
        assert!(FileBytes::open(Path::new("/nonexistent/klf/file.log")).is_err());
    }
}
