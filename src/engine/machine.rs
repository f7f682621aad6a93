//! A run's dealings with the machine, for the binary: the reads that
//! failed (the run names them at its end and exits 2: the machine's
//! failure, never evidence about the data), and a folder to write into,
//! checked against the inputs before anything is written there.

use std::path::{Path, PathBuf};

use crate::capture::output::{OutputDir, Refused};

/// Every read that failed so far, after a look at whether the files read
/// are still what they were: (path, reason), one per path, in the order
/// they failed.
pub fn failed_reads() -> Vec<(PathBuf, String)> {
    crate::capture::vfs::failed_reads()
}

/// `dir` as a folder to write into: created when missing; an existing one
/// only with `force`, and never one inside (or holding) an input.
pub fn check_output_dir(dir: &Path, inputs: &[PathBuf], force: bool) -> Result<OutputDir, Refused> {
    crate::capture::output::check_output_dir(dir, inputs, force)
}
