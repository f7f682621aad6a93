//! `klf dump`'s pipeline up to the text: the PATHs expanded into the files
//! to dump, in a fixed order ([`walk`]); each file's kind from its name and
//! what its dump reads, opened read-only ([`open`]); the part of each
//! segment a selection picks, found with its indexes ([`select`]); the
//! bytes read metered for a progress bar ([`meter`]); the release whose text a file
//! gets with `--kafka-version auto` and the decoder its records are read
//! with (here). The renderers (`render::dump`) write the text of what this
//! opens; nothing here writes any.

pub mod meter;
pub mod open;
pub mod select;
pub mod walk;

use std::path::{Path, PathBuf};

use crate::capture::vfs;
use crate::model::dump::{DecoderKind, Item};

/// The decoder the json and table formats apply to a file: the one a flag
/// forces, else the one of the partition directory's topic (KRaft
/// `.checkpoint` files, `bootstrap.checkpoint` included, hold metadata
/// records wherever they lie).
pub fn decoder_for(forced: Option<DecoderKind>, item: &Item) -> Option<DecoderKind> {
    forced
        .or_else(|| item.topic().and_then(DecoderKind::for_topic))
        .or_else(|| {
            item.path
                .ends_with(".checkpoint")
                .then_some(DecoderKind::ClusterMetadata)
        })
}

/// Whether a PATH is read into memory before it is walked: an archive or
/// digest file, or a path inside one (`ARCHIVE!/PATH`).
pub fn is_archive_input(p: &Path) -> bool {
    vfs::split_virtual(p).is_some()
        || ((vfs::is_archive_name(p) || crate::capture::digest::is_digest_name(p))
            && std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

/// The `metadata.version` recorded where a file lies, for
/// `--kafka-version auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedVersion {
    /// The log directory holding the file (the file's own directory or
    /// its parent) records one.
    Found {
        /// The feature level.
        level: i16,
        /// Its name (`3.9-IV0`), when klf knows the level.
        name: Option<&'static str>,
        /// The metadata log file it was last set in.
        file: PathBuf,
        /// The log directory.
        dir: String,
    },
    /// None recorded (a ZooKeeper-mode broker, or files away from their
    /// log directory): `folder` holds the file's directory.
    None {
        /// The folder holding the file's directory (with
        /// `in_partition`, the partition directory's parent).
        folder: String,
    },
}

impl RecordedVersion {
    /// The folder a note about it names, once.
    pub fn dir(&self) -> &str {
        match self {
            RecordedVersion::Found { dir, .. } => dir,
            RecordedVersion::None { folder } => folder,
        }
    }
}

/// The `metadata.version` recorded in the log directory holding `path`
/// (the file's own directory or its parent); `in_partition`: the file lies
/// in a partition directory.
pub fn recorded_version(path: &str, in_partition: bool) -> RecordedVersion {
    let p = Path::new(path);
    for dir in p.ancestors().skip(1).take(2) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        if let Some(found) = crate::capture::controller::metadata_version(dir) {
            return RecordedVersion::Found {
                level: found.level,
                name: crate::format::metadata::metadata_version_name(found.level),
                file: found.file,
                dir: dir.to_string_lossy().into_owned(),
            };
        }
    }
    let folder = p
        .ancestors()
        .nth(if in_partition { 2 } else { 1 })
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    RecordedVersion::None { folder }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders_by_topic_unless_forced() {
        let item = |path: &str, tp: Option<(&str, i32)>| Item {
            path: path.to_string(),
            kind: open::classify(path.rsplit('/').next().unwrap_or(path)),
            topic_partition: tp.map(|(t, p)| (t.to_string(), p)),
            named: true,
        };
        let offsets = item(
            "d/__consumer_offsets-3/00000000000000000000.log",
            Some(("__consumer_offsets", 3)),
        );
        let plain = item("d/events-0/00000000000000000000.log", Some(("events", 0)));
        let boot = item("d/bootstrap.checkpoint", None);
        assert_eq!(decoder_for(None, &offsets), Some(DecoderKind::Offsets));
        assert_eq!(decoder_for(None, &plain), None);
        assert_eq!(decoder_for(None, &boot), Some(DecoderKind::ClusterMetadata));
        assert_eq!(
            decoder_for(Some(DecoderKind::TransactionLog), &plain),
            Some(DecoderKind::TransactionLog)
        );
    }
}
