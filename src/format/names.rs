//! Kafka's file and directory names, parsed as Kafka parses them: partition
//! directories (`<topic>-<partition>`, `-delete`/`-future`/`-stray`,
//! `__cluster_metadata-0`), segment, index and snapshot files with their
//! transitional suffixes, and the broker folders of a capture
//! (`broker-3`). Pure functions over names; nothing here touches a file.

/// Name of the KRaft metadata topic.
pub const METADATA_TOPIC: &str = "__cluster_metadata";

/// What a partition directory's name says it is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReplicaKind {
    /// `<topic>-<partition>`: a live replica.
    Live,
    /// `<topic>-<partition>.<uid>-delete`: deleted, awaiting removal. The
    /// topic name may have been cut to keep the name within 255 characters.
    Delete {
        /// The 32-hex-digit unique id.
        uid: String,
    },
    /// `<topic>-<partition>.<uid>-future`: target of an intra-broker move.
    Future {
        /// The 32-hex-digit unique id.
        uid: String,
    },
    /// `<topic>-<partition>.<uid>-stray`: a replica the metadata no longer
    /// assigns to this broker (3.7+). The topic may have been cut.
    Stray {
        /// The 32-hex-digit unique id.
        uid: String,
    },
    /// `__cluster_metadata-0`: the KRaft metadata log.
    Metadata,
}

/// A partition directory name, parsed as Kafka's `LocalLog.parseTopicPartitionName`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionDirName {
    /// Topic (possibly cut for `-delete` and `-stray` names).
    pub topic: String,
    /// Partition number.
    pub partition: i32,
    /// Live, delete, future, stray or metadata.
    pub kind: ReplicaKind,
}

/// Parses a partition directory name as Kafka does. The error says why Kafka
/// would refuse it (Kafka aborts startup on such a directory).
pub fn parse_partition_dir_name(name: &str) -> Result<PartitionDirName, String> {
    if !name.contains('-') {
        return Err("no '-' in the name".into());
    }
    let mut kind = ReplicaKind::Live;
    let mut base = name;
    for (suffix, make) in [
        (
            "-delete",
            (|uid| ReplicaKind::Delete { uid }) as fn(String) -> ReplicaKind,
        ),
        ("-future", |uid| ReplicaKind::Future { uid }),
        ("-stray", |uid| ReplicaKind::Stray { uid }),
    ] {
        if let Some(stem) = name.strip_suffix(suffix) {
            // Kafka: ^(\S+)-(\S+)\.(\S+)<suffix>$, then cut at the last '.'.
            let Some(dot) = stem.rfind('.') else {
                return Err(format!("ends with {suffix} but has no '.<uid>' before it"));
            };
            let (tp, uid) = (&stem[..dot], &stem[dot + 1..]);
            // Java's \S: anything but [ \t\n\x0B\f\r].
            let non_ws = |s: &str| {
                !s.is_empty()
                    && !s
                        .bytes()
                        .any(|b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
            };
            let dash_ok = tp
                .char_indices()
                .any(|(i, c)| c == '-' && non_ws(&tp[..i]) && non_ws(&tp[i + 1..]));
            if !dash_ok || !non_ws(uid) {
                return Err(format!("not of the form <topic>-<partition>.<uid>{suffix}"));
            }
            kind = make(uid.to_owned());
            base = tp;
            break;
        }
    }
    let Some(dash) = base.rfind('-') else {
        return Err("no '-' before the partition number".into());
    };
    let (topic, part) = (&base[..dash], &base[dash + 1..]);
    if topic.is_empty() {
        return Err("empty topic name".into());
    }
    let partition = crate::format::checkpoint::java_parse_int(part)
        .map_err(|why| format!("partition {part:?} is not an int ({why})"))?;
    if topic == METADATA_TOPIC && kind == ReplicaKind::Live {
        kind = ReplicaKind::Metadata;
    }
    Ok(PartitionDirName {
        topic: topic.to_owned(),
        partition,
        kind,
    })
}

/// The kind of a segment-related file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentFileKind {
    /// `.log`: record batches.
    Log,
    /// `.index`: offset index.
    Index,
    /// `.timeindex`: time index.
    TimeIndex,
    /// `.txnindex`: aborted transaction index.
    TxnIndex,
    /// `.snapshot`: producer state snapshot.
    Snapshot,
    /// `<end offset>-<epoch>.checkpoint`: KRaft metadata snapshot.
    KraftSnapshot,
}

/// A transitional suffix appended to a segment or snapshot file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PendingState {
    /// `.deleted`: scheduled for deletion; Kafka deletes it on next load.
    Deleted,
    /// `.cleaned`: output of an unfinished compaction; deleted on next load.
    Cleaned,
    /// `.swap`: compaction or split output being swapped in; completed (or, at
    /// or above the lowest `.cleaned` offset, deleted) on next load.
    Swap,
    /// `.part`: KRaft snapshot being written.
    Part,
}

/// A segment-like file name, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentFileName {
    /// The offset in the name (base offset; for snapshots the end offset).
    pub offset: i64,
    /// For KRaft snapshots, the epoch in the name.
    pub epoch: Option<i32>,
    /// Which file of the segment.
    pub kind: SegmentFileKind,
    /// A transitional suffix, if any.
    pub pending: Option<PendingState>,
    /// True when the offset is written with exactly 20 digits (and the epoch
    /// with 10), as Kafka writes it.
    pub canonical: bool,
}

/// Parses `00000000000000000042.log`, `...timeindex.deleted`,
/// `00000000000000000100-0000000003.checkpoint`, and the like. `None` for
/// names that are not segment, index or snapshot files.
pub fn parse_segment_file_name(name: &str) -> Option<SegmentFileName> {
    let mut pending = None;
    let mut rest = name;
    for (suffix, state) in [
        (".deleted", PendingState::Deleted),
        (".cleaned", PendingState::Cleaned),
        (".swap", PendingState::Swap),
        (".part", PendingState::Part),
    ] {
        if let Some(r) = name.strip_suffix(suffix) {
            pending = Some(state);
            rest = r;
            break;
        }
    }
    let (stem, ext) = rest.split_once('.')?;
    let kind = match ext {
        "log" => SegmentFileKind::Log,
        "index" => SegmentFileKind::Index,
        "timeindex" => SegmentFileKind::TimeIndex,
        "txnindex" => SegmentFileKind::TxnIndex,
        "snapshot" => SegmentFileKind::Snapshot,
        "checkpoint" => SegmentFileKind::KraftSnapshot,
        _ => return None,
    };
    if pending == Some(PendingState::Part) && kind != SegmentFileKind::KraftSnapshot {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if kind == SegmentFileKind::KraftSnapshot {
        let (off, epoch) = stem.split_once('-')?;
        if !digits(off) || !digits(epoch) {
            return None;
        }
        return Some(SegmentFileName {
            offset: off.parse().ok()?,
            epoch: Some(epoch.parse().ok()?),
            kind,
            pending,
            canonical: off.len() == 20 && epoch.len() == 10,
        });
    }
    if !digits(stem) {
        return None;
    }
    Some(SegmentFileName {
        offset: stem.parse().ok()?,
        epoch: None,
        kind,
        pending,
        canonical: stem.len() == 20,
    })
}

/// A node id from a folder name: `broker-3`, `broker_3`, `kafka3`, `node-12`, `3`.
pub fn node_id_from_folder_name(name: &str) -> Option<i32> {
    let digits_start = name
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit())
        .last()
        .map(|(i, _)| i)?;
    let prefix = &name[..digits_start];
    let prefix = prefix.strip_suffix(['-', '_']).unwrap_or(prefix);
    if !prefix.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    name[digits_start..].parse().ok()
}

/// The base offset of a segment file name: the text before the first `.`,
/// as a long (Kafka's rule), or the offset of a remote segment's name (see
/// [`parse_remote_segment_name`]), which kafka-dump-log cannot read.
pub fn base_offset_of(name: &str) -> Option<i64> {
    crate::format::checkpoint::java_parse_long(name.split('.').next().unwrap_or(""))
        .ok()
        .or_else(|| parse_remote_segment_name(name).map(|r| r.offset))
}

/// A file of a segment copied to remote storage (tiered storage, KIP-405),
/// named by its base offset and the remote segment's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteSegmentName<'a> {
    /// The segment's base offset.
    pub offset: i64,
    /// The remote log segment id (a base64url UUID, 22 characters).
    pub segment_id: &'a str,
    /// The suffix, without its dot (`log`, `index`, `timeindex`,
    /// `txnindex`, `snapshot`, `leader_epoch_checkpoint`).
    pub suffix: &'a str,
    /// `true` for the broker's cache of remote indexes
    /// (`remote-log-index-cache/<offset>_<id>.index`), `false` for the
    /// remote store's own name (`<20 digits>-<id>.log`, as Kafka's
    /// LocalTieredStorage writes it).
    pub index_cache: bool,
}

/// Parses the names remote segments' files take: `<offset>-<id>.<suffix>`
/// (the remote store, as Kafka's LocalTieredStorage names them) and
/// `<offset>_<id>.<suffix>` (a broker's `remote-log-index-cache`), where
/// the id is a remote log segment id (22 base64url characters).
pub fn parse_remote_segment_name(name: &str) -> Option<RemoteSegmentName<'_>> {
    let (stem, suffix) = name.split_once('.')?;
    if !matches!(
        suffix,
        "log" | "index" | "timeindex" | "txnindex" | "snapshot" | "leader_epoch_checkpoint"
    ) {
        return None;
    }
    let (offset, id, index_cache) = match (stem.split_once('-'), stem.split_once('_')) {
        (Some((o, id)), _) if o.bytes().all(|b| b.is_ascii_digit()) => (o, id, false),
        (_, Some((o, id))) => (o, id, true),
        _ => return None,
    };
    let id_ok = id.len() == 22
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if offset.is_empty()
        || offset.len() > 20
        || !offset.bytes().all(|b| b.is_ascii_digit())
        || !id_ok
    {
        return None;
    }
    Some(RemoteSegmentName {
        offset: offset.parse().ok()?,
        segment_id: id,
        suffix,
        index_cache,
    })
}

/// Whether `topic` is written in the characters Kafka allows in a topic
/// name (ASCII letters and digits, `.`, `_`, `-`; not empty): a name that
/// is not is printed nowhere a shell would read it.
pub fn is_legal_topic_name(topic: &str) -> bool {
    !topic.is_empty()
        && topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// (end offset, epoch) of a KRaft snapshot name, `<20 digits>-<10
/// digits>.checkpoint`.
pub fn parse_checkpoint_name(file_name: &str) -> Option<(i64, i32)> {
    let stem = file_name.strip_suffix(".checkpoint")?;
    let (o, e) = stem.split_once('-')?;
    if o.len() != 20
        || e.len() != 10
        || !o.bytes().all(|b| b.is_ascii_digit())
        || !e.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((o.parse().ok()?, e.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_segment_names() {
        let r =
            parse_remote_segment_name("00000000000000000504-MZmHnMqQTbGENrHpNBbvBQ.log").unwrap();
        assert_eq!(
            (r.offset, r.segment_id, r.suffix, r.index_cache),
            (504, "MZmHnMqQTbGENrHpNBbvBQ", "log", false)
        );
        let r = parse_remote_segment_name("72_ckfVq6ZiTT2YcPWzWgpTmQ.timeindex").unwrap();
        assert_eq!((r.offset, r.index_cache, r.suffix), (72, true, "timeindex"));
        let r = parse_remote_segment_name(
            "00000000000000000000-Z1oTNUpGQ_aVmiU_Zy5l2w.leader_epoch_checkpoint",
        )
        .unwrap();
        assert_eq!(r.segment_id, "Z1oTNUpGQ_aVmiU_Zy5l2w");
        assert_eq!(
            base_offset_of("00000000000000000504-MZmHnMqQTbGENrHpNBbvBQ.index"),
            Some(504)
        );
        assert_eq!(base_offset_of("00000000000000000504.index"), Some(504));
        for bad in [
            "00000000000000000504-short.log",
            "00000000000000000504-MZmHnMqQTbGENrHpNBbvBQ.json",
            "x-MZmHnMqQTbGENrHpNBbvBQ.log",
            "-MZmHnMqQTbGENrHpNBbvBQ.log",
            "000000000000000000000504-MZmHnMqQTbGENrHpNBbvBQ.log",
            "00000000000000000504-MZmHnMqQTbGENrHpNB!vBQ.log",
            "00000000000000000100-0000000003.checkpoint",
        ] {
            assert!(parse_remote_segment_name(bad).is_none(), "{bad}");
        }
    }
}
