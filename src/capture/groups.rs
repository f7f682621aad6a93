//! Consumer group commits from the capture's `__consumer_offsets` replicas:
//! the offsets groups committed for the partitions an analysis asks about.
//!
//! A consumer fetches only below the high watermark (below the last stable
//! offset with `read_committed`), so an offset a group committed is evidence
//! that the partition's high watermark reached it on the lineage the
//! commit's leader epoch names (KIP-320). Every replica of every
//! `__consumer_offsets` partition is read, because a commit a replica holds
//! is evidence even when that replica's own tail is later lost.
//!
//! Of the commits of one group with one leader epoch, the highest offset is
//! kept (a higher commit on the same lineage proves at least as much), so
//! what is kept is bounded by groups × epochs, not by the size of the topic.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::capture::discover::{Capture, Replica};
use crate::capture::replica::{for_each_record, ReplicaProblem};
use crate::capture::segment::SegmentFile;
use crate::format::batch::{Batch, EntryError};
use crate::format::internal::decode_group_record;
use crate::model::GroupCommit;

/// The internal topic of the group coordinator.
pub const CONSUMER_OFFSETS: &str = "__consumer_offsets";

/// What the capture's `__consumer_offsets` replicas say.
#[derive(Debug, Clone, Default)]
pub struct GroupCommits {
    /// Commits per (topic, partition), by group then leader epoch.
    pub commits: BTreeMap<(String, i32), Vec<GroupCommit>>,
    /// Whether the capture holds any `__consumer_offsets` replica.
    pub topic_present: bool,
    /// Replicas of `__consumer_offsets` read.
    pub replicas_read: usize,
    /// Problems met while reading (damaged batches, undecodable records).
    pub problems: Vec<ReplicaProblem>,
}

impl GroupCommits {
    /// The commits for one partition (empty when none).
    pub fn for_partition(&self, topic: &str, partition: i32) -> &[GroupCommit] {
        self.commits
            .get(&(topic.to_string(), partition))
            .map_or(&[], Vec::as_slice)
    }
}

type Key = (String, i32, String, Option<i32>);

/// Reads every `__consumer_offsets` replica of `capture` and keeps the
/// commits for the partitions in `wanted`.
pub fn group_commits(capture: &Capture, wanted: &BTreeSet<(String, i32)>) -> GroupCommits {
    let replicas: Vec<(usize, &Replica)> = capture
        .partitions
        .iter()
        .filter(|((t, _), _)| t == CONSUMER_OFFSETS)
        .flat_map(|(_, reps)| reps.iter().enumerate())
        .collect();
    let mut out = GroupCommits {
        topic_present: !replicas.is_empty(),
        replicas_read: replicas.len(),
        ..Default::default()
    };
    if wanted.is_empty() {
        return out;
    }
    let read: Vec<(BTreeMap<Key, GroupCommit>, Vec<ReplicaProblem>)> = replicas
        .par_iter()
        .map(|(i, r)| read_replica(r, r.node_id.unwrap_or(-(*i as i32) - 1), wanted))
        .collect();
    let mut best: BTreeMap<Key, GroupCommit> = BTreeMap::new();
    for (commits, problems) in read {
        out.problems.extend(problems);
        for (k, c) in commits {
            keep_highest(&mut best, k, c);
        }
    }
    for ((topic, partition, _, _), c) in best {
        out.commits.entry((topic, partition)).or_default().push(c);
    }
    out
}

fn keep_highest(best: &mut BTreeMap<Key, GroupCommit>, k: Key, c: GroupCommit) {
    match best.get(&k) {
        Some(old)
            if (old.offset, old.commit_timestamp, old.broker)
                >= (c.offset, c.commit_timestamp, c.broker) => {}
        _ => {
            best.insert(k, c);
        }
    }
}

fn read_replica(
    replica: &Replica,
    broker: i32,
    wanted: &BTreeSet<(String, i32)>,
) -> (BTreeMap<Key, GroupCommit>, Vec<ReplicaProblem>) {
    let mut best = BTreeMap::new();
    let mut problems = Vec::new();
    let mut scratch = Vec::new();
    for seg in &replica.segments {
        let Some(path) = &seg.log else { continue };
        let seg_file = match SegmentFile::open(path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(ReplicaProblem::unreadable(path, None, &e));
                continue;
            }
        };
        let file = path.display().to_string();
        let mut it = seg_file.entries();
        while let Some(item) = it.next_entry() {
            let batch = match item {
                Ok(Batch::V2(b)) => b,
                Ok(Batch::Legacy(_)) => continue,
                Err(EntryError::Bad(e)) => {
                    problems.push(ReplicaProblem {
                        path: path.clone(),
                        position: Some(e.pos),
                        message: format!("{}; the rest of the segment is not read", e.reason),
                        io: false,
                    });
                    break;
                }
                Err(EntryError::Io(e)) => {
                    problems.push(ReplicaProblem::unreadable(path, None, &e));
                    break;
                }
            };
            let position = batch.position;
            if batch.is_control() {
                continue;
            }
            if !batch.is_valid() {
                problems.push(ReplicaProblem {
                    path: path.clone(),
                    position: Some(position),
                    message: "batch checksum mismatch; its commits are not used".into(),
                    io: false,
                });
                continue;
            }
            let mut undecoded = Vec::new();
            for_each_record(&batch, &mut scratch, path, &mut problems, &mut |rec| {
                let Some(key) = rec.key else { return true };
                // Only offset commits (record types 0 and 1) with a value
                // (a tombstone deletes an offset, it proves nothing).
                if key.len() < 2 || !matches!(key[..2], [0, 0] | [0, 1]) || rec.value.is_none() {
                    return true;
                }
                let decoded = match decode_group_record(key, rec.value) {
                    Ok(d) => d,
                    Err(e) => {
                        undecoded.push(ReplicaProblem {
                            path: path.clone(),
                            position: Some(position),
                            message: format!(
                                "offset commit at offset {} does not decode: {e}",
                                rec.offset
                            ),
                            io: false,
                        });
                        return true;
                    }
                };
                let Some((group, topic, partition)) = decoded.offset_commit_key() else {
                    return true;
                };
                if !wanted.contains(&(topic.clone(), partition)) {
                    return true;
                }
                let Some(v) = &decoded.value else { return true };
                let Some(offset) = v.msg.int("offset") else {
                    return true;
                };
                let leader_epoch = v
                    .msg
                    .int("leaderEpoch")
                    .and_then(|e| i32::try_from(e).ok())
                    .filter(|e| *e >= 0);
                let commit_timestamp = v.msg.int("commitTimestamp").unwrap_or(-1);
                let k = (topic.clone(), partition, group.clone(), leader_epoch);
                keep_highest(
                    &mut best,
                    k,
                    GroupCommit {
                        group,
                        topic,
                        partition,
                        offset,
                        leader_epoch,
                        commit_timestamp,
                        broker,
                        file: file.clone(),
                        position,
                    },
                );
                true
            });
            problems.append(&mut undecoded);
        }
        if let Some(tail) = it.tail() {
            // A torn tail of a killed coordinator: what came before is read.
            problems.push(ReplicaProblem {
                path: path.clone(),
                position: Some(tail.position),
                message: format!("torn tail: {}", tail.describe()),
                io: false,
            });
        }
    }
    (best, problems)
}
