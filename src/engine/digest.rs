//! The digest pipeline on the node: the capture layer's walk of the node's
//! files ([`crate::capture::digest::make`]), with `klf check`'s index
//! checks of each data segment run there, where the indexes are.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::capture::digest::make::{Made, Options};

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
