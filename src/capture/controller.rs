//! The controller's view of partition leadership, rebuilt from a KRaft
//! `__cluster_metadata` log found in a capture: every leader election of
//! every partition (leader, leader epoch, ISR, leader recovery state), with
//! unclean elections flagged, and the leader at the end of the log.
//!
//! Every broker keeps a replica of the metadata log; the most complete one
//! in the capture (the highest log end) is used.

use std::collections::BTreeMap;

use crate::capture::replica::SegmentsFrom;
use crate::capture::segment::SegmentFile;
use crate::format::batch::{Batch, RecordBatch};
use crate::format::metadata::leader_epoch_after_partition_change;
use crate::format::metadata::{decode_metadata_record, TypedMetadata, LEADER_UNCHANGED};
use crate::format::walk::{Checksums, Step, Walk};
use crate::model::history::{BrokerChange, BrokerChangeKind};
use crate::model::{Capture, ControllerView, Election, PartitionHistory, ReadProblem, Replica};

fn log_end(r: &Replica) -> i64 {
    r.segments.last().map(|s| s.base_offset).unwrap_or(-1)
}

/// The records of `batch` (of the segment `path`) that `what` says were not
/// read.
fn unread(path: &std::path::Path, batch: &RecordBatch<'_>, what: String) -> ReadProblem {
    ReadProblem {
        file: path.display().to_string(),
        position: Some(batch.position),
        message: format!(
            "the records of the batch at offsets [{}, {}) {what}",
            batch.base_offset(),
            batch.last_offset().saturating_add(1)
        ),
        io: false,
    }
}

/// The quorum's changes a control batch of the metadata log states: its
/// `LeaderChangeMessage` and `VotersRecord` records (a record that does not
/// decode says nothing).
fn quorum_changes(
    batch: &crate::format::batch::RecordBatch<'_>,
    scratch: &mut Vec<u8>,
    out: &mut Vec<crate::model::history::QuorumChange>,
) {
    use crate::format::metadata::{decode_kraft_control, KraftControlType};
    use crate::format::record::control::parse_type_id;
    use crate::model::history::{QuorumChange, QuorumChangeKind};
    let Ok(records) = batch.records(scratch, crate::format::codec::decompressed_cap()) else {
        return;
    };
    for rec in records.flatten() {
        let Ok(id) = parse_type_id(rec.key) else {
            continue;
        };
        let (kind, ctype) = match KraftControlType::from_type_id(id) {
            Some(KraftControlType::LeaderChange) => (
                QuorumChangeKind::LeaderChange,
                KraftControlType::LeaderChange,
            ),
            Some(KraftControlType::KRaftVoters) => {
                (QuorumChangeKind::Voters, KraftControlType::KRaftVoters)
            }
            _ => continue,
        };
        let Some(value) = rec.value else { continue };
        let Ok(msg) = decode_kraft_control(ctype, value) else {
            continue;
        };
        let ids = |name: &str| -> Vec<i32> {
            msg.structs(name)
                .iter()
                .filter_map(|v| v.int("voterId").and_then(|i| i32::try_from(i).ok()))
                .collect()
        };
        out.push(QuorumChange {
            metadata_offset: rec.offset,
            epoch: batch.partition_leader_epoch(),
            timestamp: batch.max_timestamp(),
            kind,
            leader: match kind {
                QuorumChangeKind::LeaderChange => {
                    msg.int("leaderId").and_then(|i| i32::try_from(i).ok())
                }
                QuorumChangeKind::Voters => None,
            },
            voters: ids("voters"),
            granting_voters: match kind {
                QuorumChangeKind::LeaderChange => ids("grantingVoters"),
                QuorumChangeKind::Voters => Vec::new(),
            },
        });
    }
}

/// Reads the most complete `__cluster_metadata` replica of the capture.
/// Returns `None` when the capture holds no metadata log.
pub fn controller_view(capture: &Capture) -> Option<ControllerView> {
    let best = capture.metadata_logs.iter().max_by_key(|r| {
        let size: u64 = r
            .segments
            .iter()
            .filter_map(|s| s.log.as_ref())
            .filter_map(|p| crate::capture::vfs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        (log_end(r), size)
    })?;
    let mut view = ControllerView {
        source: Some(best.dir.clone()),
        ..Default::default()
    };
    let mut topics: BTreeMap<[u8; 16], String> = BTreeMap::new();
    let mut by_id: BTreeMap<([u8; 16], i32), PartitionHistory> = BTreeMap::new();
    let mut scratch = Vec::new();
    for seg in SegmentsFrom::new(best, None, None) {
        let path = seg.log;
        let seg_index = u32::try_from(view.segment_files.len()).unwrap_or(u32::MAX);
        view.segment_files.push(path.to_path_buf());
        let seg_file = match seg.open() {
            Ok(b) => b,
            Err(e) => {
                view.problems.push(ReadProblem {
                    file: path.display().to_string(),
                    position: None,
                    message: format!("cannot read: {e}"),
                    io: true,
                });
                continue;
            }
        };
        let mut walk = seg.walk(&seg_file).checksums(Checksums::Mark);
        while let Some(step) = walk.next() {
            let batch = match step {
                Step::Batch(Batch::V2(b)) => b,
                // a batch whose checksum fails is not used
                Step::Batch(Batch::Legacy(_))
                | Step::BadCrc(..)
                | Step::Skipped(_)
                | Step::Tail(_) => continue,
                Step::Bad(e) => {
                    view.problems.push(ReadProblem {
                        file: path.display().to_string(),
                        position: Some(e.pos),
                        message: format!("{}; the rest of the segment is not read", e.reason),
                        io: false,
                    });
                    break;
                }
                Step::Io(e) => {
                    view.problems.push(ReadProblem {
                        file: path.display().to_string(),
                        position: Some(walk.position()),
                        message: format!("cannot read: {e}"),
                        io: true,
                    });
                    break;
                }
            };
            if batch.is_control() {
                let before = view.quorum.len();
                quorum_changes(&batch, &mut scratch, &mut view.quorum);
                for q in &view.quorum[before..] {
                    view.record_at
                        .insert(q.metadata_offset, (seg_index, batch.position));
                }
                continue;
            }
            let records = match batch
                .records(&mut scratch, crate::format::codec::decompressed_cap())
            {
                Ok(r) => r,
                Err(e) => {
                    view.problems
                        .push(unread(path, &batch, format!("are not read: {}", e.reason)));
                    continue;
                }
            };
            for rec in records {
                let rec = match rec {
                    Ok(r) => r,
                    Err(e) => {
                        view.problems.push(unread(
                            path,
                            &batch,
                            format!(
                                "from a record that does not parse ({}) on are not read",
                                e.reason
                            ),
                        ));
                        break;
                    }
                };
                let Some(value) = rec.value else { continue };
                let Ok(decoded) = decode_metadata_record(value) else {
                    continue;
                };
                if decoded.api_key == 4 {
                    // ConfigRecord: resource type 2 topic, 4 broker
                    let b = &decoded.body;
                    let name = b.str("name").unwrap_or_default();
                    if crate::model::history::IMPACT_CONFIGS.contains(&name) {
                        let scope = match b.int("resourceType") {
                            Some(2) => "topic",
                            Some(4) => "broker",
                            _ => "other",
                        };
                        view.configs.push(crate::model::ConfigFact {
                            scope: scope.to_string(),
                            resource: b.str("resourceName").unwrap_or_default().to_string(),
                            name: name.to_string(),
                            value: b.str("value").map(str::to_string),
                            metadata_offset: rec.offset,
                            timestamp: rec.timestamp,
                        });
                    }
                    continue;
                }
                let typed = decoded.typed();
                let broker_change = match &typed {
                    Some(TypedMetadata::RegisterBroker(r)) => {
                        Some((r.broker_id, r.broker_epoch, BrokerChangeKind::Registered))
                    }
                    Some(TypedMetadata::UnregisterBroker {
                        broker_id,
                        broker_epoch,
                    }) => Some((*broker_id, *broker_epoch, BrokerChangeKind::Unregistered)),
                    Some(TypedMetadata::FenceBroker {
                        broker_id,
                        broker_epoch,
                    }) => Some((*broker_id, *broker_epoch, BrokerChangeKind::Fenced)),
                    Some(TypedMetadata::UnfenceBroker {
                        broker_id,
                        broker_epoch,
                    }) => Some((*broker_id, *broker_epoch, BrokerChangeKind::Unfenced)),
                    Some(TypedMetadata::BrokerRegistrationChange {
                        broker_id,
                        broker_epoch,
                        fenced,
                        in_controlled_shutdown,
                        ..
                    }) => match (*fenced, *in_controlled_shutdown) {
                        (1, _) => Some((*broker_id, *broker_epoch, BrokerChangeKind::Fenced)),
                        (-1, _) => Some((*broker_id, *broker_epoch, BrokerChangeKind::Unfenced)),
                        (_, 1) => Some((
                            *broker_id,
                            *broker_epoch,
                            BrokerChangeKind::ControlledShutdown,
                        )),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some((broker, broker_epoch, kind)) = broker_change {
                    view.record_at
                        .insert(rec.offset, (seg_index, batch.position));
                    view.brokers.push(BrokerChange {
                        metadata_offset: rec.offset,
                        timestamp: rec.timestamp,
                        broker,
                        broker_epoch,
                        kind,
                    });
                    continue;
                }
                if matches!(
                    typed,
                    Some(TypedMetadata::Partition(_) | TypedMetadata::PartitionChange(_))
                ) {
                    view.record_at
                        .insert(rec.offset, (seg_index, batch.position));
                }
                match typed {
                    Some(TypedMetadata::FeatureLevel {
                        name,
                        feature_level,
                    }) => {
                        view.configs.push(crate::model::ConfigFact {
                            scope: "feature".to_string(),
                            resource: String::new(),
                            name,
                            value: Some(feature_level.to_string()),
                            metadata_offset: rec.offset,
                            timestamp: rec.timestamp,
                        });
                    }
                    Some(TypedMetadata::Topic(t)) => {
                        topics.insert(t.topic_id, t.name);
                    }
                    Some(TypedMetadata::RemoveTopic { topic_id }) => {
                        topics.remove(&topic_id);
                        by_id.retain(|(id, _), _| *id != topic_id);
                    }
                    Some(TypedMetadata::Partition(p)) => {
                        by_id.insert(
                            (p.topic_id, p.partition_id),
                            PartitionHistory {
                                replicas: p.replicas.clone(),
                                from_creation: p.leader_epoch == 0 && p.partition_epoch == 0,
                                changes: vec![Election {
                                    metadata_offset: rec.offset,
                                    leader: p.leader,
                                    leader_epoch: p.leader_epoch,
                                    partition_epoch: p.partition_epoch,
                                    isr: p.isr.clone(),
                                    elr: p.eligible_leader_replicas.clone(),
                                    last_known_elr: p.last_known_elr.clone(),
                                    leader_recovery_state: p.leader_recovery_state,
                                    leader_changed: true,
                                    unclean: false,
                                    timestamp: rec.timestamp,
                                }],
                            },
                        );
                    }
                    Some(TypedMetadata::PartitionChange(c)) => {
                        let Some(h) = by_id.get_mut(&(c.topic_id, c.partition_id)) else {
                            continue;
                        };
                        let Some(prev) = h.changes.last().cloned() else {
                            continue;
                        };
                        if let Some(r) = &c.replicas {
                            h.replicas = r.clone();
                        }
                        let leader_changed = c.leader != LEADER_UNCHANGED;
                        let leader = if leader_changed {
                            c.leader
                        } else {
                            prev.leader
                        };
                        let isr = c.isr.clone().unwrap_or_else(|| prev.isr.clone());
                        let unclean = leader_changed && leader >= 0 && !prev.isr.contains(&leader);
                        // A leader recovery state of -1 in the change means "unchanged".
                        let lrs = if c.leader_recovery_state < 0 {
                            prev.leader_recovery_state
                        } else {
                            c.leader_recovery_state
                        };
                        h.changes.push(Election {
                            metadata_offset: rec.offset,
                            leader,
                            leader_epoch: leader_epoch_after_partition_change(
                                prev.leader_epoch,
                                c.leader,
                            ),
                            partition_epoch: prev.partition_epoch.saturating_add(1),
                            isr,
                            elr: c.eligible_leader_replicas.clone().or(prev.elr.clone()),
                            last_known_elr: c
                                .last_known_elr
                                .clone()
                                .or(prev.last_known_elr.clone()),
                            leader_recovery_state: lrs,
                            leader_changed,
                            unclean: unclean || (leader_changed && lrs == 1),
                            timestamp: rec.timestamp,
                        });
                    }
                    _ => {}
                }
            }
        }
    }
    for ((id, p), h) in by_id {
        if let Some(name) = topics.get(&id) {
            view.partitions.insert((name.clone(), p), h);
        }
    }
    Some(view)
}

/// Where a broker's `metadata.version` was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataVersionFound {
    /// The feature level (`FeatureLevelRecord` `metadata.version`).
    pub level: i16,
    /// The file it was last set in.
    pub file: std::path::PathBuf,
}

/// The `metadata.version` a KRaft log directory records: the last
/// `FeatureLevelRecord` for it in the directory's `__cluster_metadata-0`
/// (its snapshots, then its log segments, oldest first), else in its
/// `bootstrap.checkpoint`. `None` for a directory without either (a
/// ZooKeeper-mode broker) or where none reads.
pub fn metadata_version(log_dir: &std::path::Path) -> Option<MetadataVersionFound> {
    use crate::capture::vfs;
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    let meta = log_dir.join("__cluster_metadata-0");
    if let Ok(rd) = vfs::read_dir(&meta) {
        let mut names: Vec<std::path::PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension()
                    .is_some_and(|x| x == "log" || x == "checkpoint")
            })
            .collect();
        // snapshots before segments (a snapshot sums the log up to its
        // offset); each kind in offset order (the names are zero-padded)
        names.sort_by_key(|p| {
            (
                p.extension().is_some_and(|x| x == "log"),
                p.file_name().map(|n| n.to_os_string()),
            )
        });
        files = names;
    }
    let mut found = last_metadata_version(&files);
    if found.is_none() {
        found = last_metadata_version(&[log_dir.join("bootstrap.checkpoint")]);
    }
    found
}

fn last_metadata_version(files: &[std::path::PathBuf]) -> Option<MetadataVersionFound> {
    let mut found = None;
    let mut scratch = Vec::new();
    for path in files {
        let Ok(seg_file) = SegmentFile::open(path) else {
            continue;
        };
        // up to the first entry that cannot be read; a batch whose
        // checksum fails is not used
        let mut walk = Walk::new(seg_file.entries()).checksums(Checksums::Mark);
        while let Some(step) = walk.next() {
            let batch = match step {
                Step::Batch(Batch::V2(b)) => b,
                Step::Batch(Batch::Legacy(_)) | Step::BadCrc(..) => continue,
                _ => break,
            };
            if batch.is_control() {
                continue;
            }
            let Ok(records) = batch.records(&mut scratch, crate::format::codec::decompressed_cap())
            else {
                continue;
            };
            for rec in records {
                let Ok(rec) = rec else { break };
                let Some(value) = rec.value else { continue };
                if let Ok(decoded) = decode_metadata_record(value) {
                    if let Some(TypedMetadata::FeatureLevel {
                        name,
                        feature_level,
                    }) = decoded.typed()
                    {
                        if name == "metadata.version" {
                            found = Some(MetadataVersionFound {
                                level: feature_level,
                                file: path.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    found
}
