//! The digest pipeline on the node: the capture layer's walk of the node's
//! files ([`crate::capture::digest::make`]), with `klf check`'s index
//! checks of each data segment run there, where the indexes are.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::model::digest::{Made, Options};

/// Sets the pace of the digest's reads, in bytes a second (0: as fast as
/// the disk goes), so that a busy broker's disk is shared.
pub fn set_max_rate(bytes_per_second: u64) {
    crate::capture::careful::set_max_rate(bytes_per_second);
}

/// Makes the digest of the node whose log directories (or node folder) are
/// `inputs` and writes it to `out`; `progress` gets (files done, files).
/// Every file on disk is read carefully from then on, discovery's reads
/// and the index checks' included ([`crate::capture::careful`]): a digest
/// is made on a live broker.
pub fn make(
    inputs: &[PathBuf],
    opts: &Options,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> io::Result<Made> {
    crate::capture::careful::read_everything_carefully();
    let mut capture = crate::capture::discover::discover(inputs);
    add_given_logs(&mut capture, &opts.logs)?;
    let segments = crate::engine::check::digested::SegmentsOf::new(&capture);
    crate::capture::digest::make::make(&capture, inputs, opts, out, progress, &|p, w, e| {
        crate::engine::check::digested::node_index_findings(&capture, &segments, p, w, e)
    })
}

/// Adds the logs given with `--logs [NODE=]PATH` to the node's capture: a
/// digest is one node's, and NODE, when given, must be its id. A refusal
/// is an [`io::ErrorKind::InvalidInput`] error, before anything is written.
fn add_given_logs(
    capture: &mut crate::model::Capture,
    given: &[(Option<i32>, PathBuf)],
) -> io::Result<()> {
    if given.is_empty() {
        return Ok(());
    }
    let refuse = |m: String| io::Error::new(io::ErrorKind::InvalidInput, format!("--logs: {m}"));
    let node = match capture.node_ids()[..] {
        [one] => one,
        [] => {
            return Err(refuse(
                "no node id in the log directories given (no meta.properties read): the logs would be no node's in the digest".to_string(),
            ))
        }
        ref ids => {
            return Err(refuse(format!(
                "the paths given hold {} nodes ({}); a digest is one node's",
                ids.len(),
                ids.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")
            )))
        }
    };
    for (n, p) in given {
        if let Some(n) = n.filter(|&n| n != node) {
            return Err(refuse(format!(
                "{n}={}: node {n} is not the node digested (node {node})",
                p.display()
            )));
        }
    }
    crate::engine::input::add_given_logs(capture, given).map_err(refuse)
}
