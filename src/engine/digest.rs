//! The digest pipeline on the node: the capture layer's walk of the node's
//! files ([`crate::capture::digest::make`]), with `klf check`'s index
//! checks of each data segment run there, where the indexes are.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::model::digest::{Made, Options};

/// Sets the pace of the digest's reads, in bytes a second (0: as fast as
/// the disk goes), so that a busy broker's disk is shared.
pub fn set_max_rate(bytes_per_second: u64) {
    crate::capture::digest::careful::set_max_rate(bytes_per_second);
}

/// Makes the digest of the node whose log directories (or node folder) are
/// `inputs` and writes it to `out`; `progress` gets (files done, files).
pub fn make(
    inputs: &[PathBuf],
    opts: &Options,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> io::Result<Made> {
    let capture = crate::capture::discover::discover(inputs);
    let segments = crate::engine::check::digested::SegmentsOf::new(&capture);
    crate::capture::digest::make::make(&capture, inputs, opts, out, progress, &|p, w, e| {
        crate::engine::check::digested::node_index_findings(&capture, &segments, p, w, e)
    })
}
