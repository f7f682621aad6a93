//! A run's dealings with the machine, for the binary: the reads that
//! failed (the run names them at its end and exits 2: the machine's
//! failure, never evidence about the data), and the files left unread
//! because they are over one of klf's caps.

use std::path::PathBuf;

/// Every read that failed so far, after a look at whether the files read
/// are still what they were: (path, reason), one per path, in the order
/// they failed.
pub fn failed_reads() -> Vec<(PathBuf, String)> {
    crate::capture::vfs::failed_reads()
}

/// Files left unread so far because they are over one of klf's caps (a
/// properties file larger than Kafka writes, a checkpoint with more
/// entries than klf reads): (path, reason).
pub fn refused() -> Vec<(PathBuf, String)> {
    crate::capture::vfs::refused()
}
