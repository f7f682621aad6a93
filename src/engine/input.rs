//! What the user named on the command line, made readable: a directory as
//! it is; an archive (`.tar`, `.tar.gz`/`.tgz`, `.tar.zst`/`.tzst`) read
//! into memory and mounted under its virtual root (`x.tar.gz!`); a digest
//! (`.klfd`) mounted the same way; a folder of per-node archives as its
//! archives. The binary says what each step did; the capture is then
//! discovered under the readable paths.

use std::io;
use std::path::{Path, PathBuf};

use crate::capture::{digest, discover, vfs};
use crate::model::{ArchiveCompression, ArchiveMount, Capture, DigestMount};

/// What a path named on the command line is.
#[derive(Debug)]
pub enum Named {
    /// A directory: read as it is.
    Dir,
    /// An archive file.
    Archive,
    /// A digest file (by its name, or by its first bytes).
    Digest,
    /// A path inside an archive or a digest (`x.tar.gz!/broker-1`).
    Inside {
        /// The archive or digest.
        archive: PathBuf,
        /// The path inside it.
        inner: PathBuf,
        /// The container is a digest.
        digest: bool,
    },
    /// A regular file that is neither an archive nor a digest.
    File,
    /// Neither a regular file nor a directory (a pipe, socket or device).
    Special,
    /// The path cannot be used.
    Unusable(io::Error),
}

/// What `p` is.
pub fn name(p: &Path) -> Named {
    if let Some((archive, inner)) = vfs::split_virtual(p) {
        let digest = digest::is_digest_name(&archive);
        return Named::Inside {
            archive,
            inner,
            digest,
        };
    }
    match std::fs::metadata(p) {
        Ok(m) if !m.is_file() && !m.is_dir() => Named::Special,
        Ok(m) if m.is_file() && vfs::is_archive_name(p) => Named::Archive,
        Ok(m) if m.is_file() && is_digest(p) => Named::Digest,
        Ok(m) if m.is_file() => Named::File,
        Ok(_) => Named::Dir,
        Err(e) => Named::Unusable(e),
    }
}

/// Whether `p` is there: a real path, or a path inside a mounted archive
/// or digest.
pub fn exists(p: &Path) -> bool {
    vfs::metadata(p).is_ok()
}

/// The archives and digests in a folder that holds no log directory
/// itself: a capture made of one archive per node, in name order. `None`
/// for anything else (a log directory, a capture folder, an archive, a
/// path inside one).
pub fn node_archives(p: &Path) -> Option<Vec<PathBuf>> {
    if vfs::split_virtual(p).is_some() || !std::fs::metadata(p).ok()?.is_dir() {
        return None;
    }
    if discover::holds_log_directories(p) {
        return None;
    }
    let mut archives: Vec<PathBuf> = std::fs::read_dir(p)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|a| (vfs::is_archive_name(a) || digest::is_digest_name(a)) && a.is_file())
        .collect();
    archives.sort();
    (!archives.is_empty()).then_some(archives)
}

/// Reads `archive` into memory (at most `limit` bytes; `progress` is told
/// the bytes read so far) and mounts it. `Err` is the reason, naming the
/// file.
pub fn mount_archive(
    archive: &Path,
    limit: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<ArchiveMount, String> {
    let m = vfs::mount_with_progress(archive, limit, progress).map_err(|e| e.to_string())?;
    Ok(ArchiveMount {
        root: one_folder(&m.root, false).unwrap_or(m.root),
        compression: match m.compression {
            vfs::Compression::None => ArchiveCompression::None,
            vfs::Compression::Gzip => ArchiveCompression::Gzip,
            vfs::Compression::Zstd => ArchiveCompression::Zstd,
        },
        files: m.files,
        bytes: m.bytes,
        limit: m.limit,
        skipped: m.skipped,
    })
}

/// Reads the digest at `path` (at most `limit` bytes of it and of the
/// files it ships) and mounts it. `Err` is the reason, naming the file.
pub fn mount_digest(path: &Path, limit: u64) -> Result<DigestMount, String> {
    digest::mount(path, limit)
        .map(digest_mount)
        .map_err(|e| e.to_string())
}

/// [`mount_digest`] of each of `paths`: read and checked on every core,
/// mounted in the order given.
pub fn mount_digests(paths: &[PathBuf], limit: u64) -> Vec<Result<DigestMount, String>> {
    use rayon::prelude::*;
    let prepared: Vec<_> = paths
        .par_iter()
        .map(|p| digest::prepare(p, limit))
        .collect();
    prepared
        .into_iter()
        .map(|p| {
            p.map(|p| digest_mount(p.register()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn digest_mount(m: digest::Mounted) -> DigestMount {
    let segment_bytes = m
        .node
        .get("made")
        .and_then(|v| v.get("segment_bytes"))
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    DigestMount {
        root: one_folder(&m.root, true).unwrap_or(m.root),
        files: m.files,
        segments: m.segments,
        segment_bytes,
        notes: m.notes,
    }
}

/// The one folder a mounted root holds, when it holds nothing else (and,
/// with `unless_log_dirs`, when the root is not a log directory itself).
fn one_folder(root: &Path, unless_log_dirs: bool) -> Option<PathBuf> {
    let only: Vec<_> = vfs::read_dir(root)
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    match only.as_slice() {
        [one]
            if one.file_type().is_ok_and(|t| t.is_dir())
                && !(unless_log_dirs && discover::holds_log_directories(root)) =>
        {
            Some(one.path())
        }
        _ => None,
    }
}

/// The capture under `paths` (made readable first: archives and digests
/// mounted).
pub fn discover<P: AsRef<Path>>(paths: &[P]) -> Capture {
    discover::discover(paths)
}

/// Adds the nodes' logs given with `--logs [NODE=]PATH` to `capture`: a
/// path without a node is the node's when the capture holds one node.
pub fn add_given_logs(
    capture: &mut Capture,
    given: &[(Option<i32>, std::path::PathBuf)],
) -> Result<(), String> {
    for (node, path) in given {
        let node = match node {
            Some(n) => *n,
            None => match capture.node_ids()[..] {
                [one] => one,
                ref ids => {
                    return Err(format!(
                        "{}: the capture holds {} nodes; say whose logs these are: --logs NODE={}",
                        path.display(),
                        ids.len(),
                        path.display()
                    ))
                }
            },
        };
        capture
            .logs
            .extend(crate::capture::logs::given_logs(node, path)?);
    }
    capture.logs.sort();
    capture.logs.dedup_by(|a, b| a.path == b.path);
    Ok(())
}

/// Whether a digest has been mounted in this run.
pub fn digests_mounted() -> bool {
    digest::any_mounted()
}

/// For a replica directory inside a mounted digest: the digest, and the
/// directory's path on the node it was made on.
pub fn digest_of(dir: &Path) -> Option<(PathBuf, String)> {
    digest::on_node(dir)
}

/// Batches read from digests so far whose CRCs the node did not check.
pub fn unchecked_digest_batches() -> u64 {
    digest::unchecked_used()
}

/// The mounted digests made without `--verify`.
pub fn unverified_digests() -> Vec<PathBuf> {
    digest::unverified()
}

/// Whether the file at `p` is a digest: by its name, or by its first bytes.
fn is_digest(p: &Path) -> bool {
    if digest::is_digest_name(p) {
        return true;
    }
    let mut head = [0u8; 8];
    std::fs::File::open(p)
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| digest::looks_like_digest(&head))
}
