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

use crate::model::ReplicaProblem;
use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::capture::replica::{for_each_data_batch, for_each_record};
use crate::format::internal::decode_group_record;
use crate::model::{Capture, GroupCommit, LatestCommit, Replica};

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
    /// Per `__consumer_offsets` replica: its partition, broker, the offset
    /// of its last record, and the latest record (in log order) of each
    /// group for each wanted partition.
    pub latest: Vec<ReplicaLatest>,
    /// The kind of each group from its latest metadata record (on the
    /// replica that read it furthest): `classic` (GroupMetadata),
    /// `consumer` (ConsumerGroupMetadata, KIP-848), `share`, `streams`.
    pub protocols: BTreeMap<String, String>,
}

/// What one `__consumer_offsets` replica says last about each group.
#[derive(Debug, Clone, Default)]
pub struct ReplicaLatest {
    /// The `__consumer_offsets` partition.
    pub offsets_partition: i32,
    /// Broker of the replica.
    pub broker: i32,
    /// Offset of the last record read.
    pub last_offset: i64,
    /// Latest record per (topic, partition, group).
    pub latest: BTreeMap<(String, i32, String), LatestCommit>,
}

impl GroupCommits {
    /// The latest commit of every group for one partition: per
    /// `__consumer_offsets` partition, from the replica `prefer` names (the
    /// leader at capture time), else from the replica whose log reaches
    /// furthest.
    pub fn latest_for(
        &self,
        topic: &str,
        partition: i32,
        prefer: &dyn Fn(i32) -> Option<i32>,
    ) -> Vec<LatestCommit> {
        let mut parts: BTreeMap<i32, Vec<&ReplicaLatest>> = BTreeMap::new();
        for r in &self.latest {
            parts.entry(r.offsets_partition).or_default().push(r);
        }
        let mut out = Vec::new();
        for (p, reps) in parts {
            let want = prefer(p);
            let chosen = reps
                .iter()
                .find(|r| Some(r.broker) == want)
                .or_else(|| reps.iter().max_by_key(|r| (r.last_offset, -r.broker)));
            let Some(r) = chosen else { continue };
            out.extend(
                r.latest
                    .iter()
                    .filter(|((t, pp, _), _)| t == topic && *pp == partition)
                    .map(|(_, c)| c.clone()),
            );
        }
        out.sort_by(|a, b| a.group.cmp(&b.group));
        out
    }

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
    let replicas = crate::capture::replica::replicas_of_topic(capture, CONSUMER_OFFSETS);
    let mut out = GroupCommits {
        topic_present: !replicas.is_empty(),
        replicas_read: replicas.len(),
        ..Default::default()
    };
    if wanted.is_empty() {
        return out;
    }
    let read: Vec<Read> = replicas
        .par_iter()
        .map(|(i, p, r)| read_replica(r, *p, r.node_id.unwrap_or(-(*i as i32) - 1), wanted))
        .collect();
    let mut best: BTreeMap<Key, GroupCommit> = BTreeMap::new();
    let mut kinds: BTreeMap<String, (i64, String)> = BTreeMap::new();
    for Read {
        best: commits,
        problems,
        latest,
        protocols,
    } in read
    {
        out.problems.extend(problems);
        out.latest.push(latest);
        for (g, (off, kind)) in protocols {
            // the same group on several replicas of its partition: the
            // record furthest in the log is the latest
            match kinds.get(&g) {
                Some((o, _)) if *o >= off => {}
                _ => {
                    kinds.insert(g, (off, kind));
                }
            }
        }
        for (k, c) in commits {
            keep_highest(&mut best, k, c);
        }
    }
    out.protocols = kinds.into_iter().map(|(g, (_, k))| (g, k)).collect();
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

struct Read {
    best: BTreeMap<Key, GroupCommit>,
    problems: Vec<ReplicaProblem>,
    latest: ReplicaLatest,
    protocols: BTreeMap<String, (i64, String)>,
}

/// The kind of group a metadata record type belongs to.
fn group_kind(record_type: i16) -> Option<&'static str> {
    match record_type {
        2 => Some("classic"),
        3 => Some("consumer"),
        11 => Some("share"),
        17 => Some("streams"),
        _ => None,
    }
}

fn read_replica(
    replica: &Replica,
    offsets_partition: i32,
    broker: i32,
    wanted: &BTreeSet<(String, i32)>,
) -> Read {
    let mut best = BTreeMap::new();
    let mut problems = Vec::new();
    let mut latest = ReplicaLatest {
        offsets_partition,
        broker,
        last_offset: -1,
        latest: BTreeMap::new(),
    };
    let mut protocols: BTreeMap<String, (i64, String)> = BTreeMap::new();
    let mut scratch = Vec::new();
    for_each_data_batch(
        replica,
        "commits",
        &mut problems,
        &mut |batch, path, problems| {
            let file = path.display().to_string();
            let position = batch.position;
            latest.last_offset = latest.last_offset.max(batch.last_offset());
            let mut undecoded = Vec::new();
            for_each_record(batch, &mut scratch, path, problems, &mut |rec| {
                let Some(key) = rec.key else { return true };
                if key.len() < 2 {
                    return true;
                }
                let record_type = i16::from_be_bytes([key[0], key[1]]);
                if let Some(kind) = group_kind(record_type) {
                    if rec.value.is_some() {
                        if let Ok(d) = decode_group_record(key, None) {
                            let g = d.key.str("group").or_else(|| d.key.str("groupId"));
                            if let Some(g) = g {
                                protocols.insert(g.to_string(), (rec.offset, kind.to_string()));
                            }
                        }
                    }
                    return true;
                }
                if !matches!(record_type, 0 | 1) {
                    return true;
                }
                if rec.value.is_none() {
                    // A tombstone deletes the group's offset: its latest record.
                    if let Ok(d) = decode_group_record(key, None) {
                        if let Some((group, topic, partition)) = d.offset_commit_key() {
                            if wanted.contains(&(topic.clone(), partition)) {
                                latest.latest.insert(
                                    (topic, partition, group.clone()),
                                    LatestCommit {
                                        group,
                                        commit: None,
                                        broker,
                                        offsets_partition,
                                        log_offset: rec.offset,
                                        unreadable: None,
                                    },
                                );
                            }
                        }
                    }
                    return true;
                }
                let decoded = match decode_group_record(key, rec.value) {
                    Ok(d) => d,
                    Err(e) => {
                        let problem = ReplicaProblem {
                            path: path.to_path_buf(),
                            position: Some(position),
                            message: format!(
                                "offset commit at offset {} does not decode: {e}",
                                rec.offset
                            ),
                            io: false,
                        };
                        // The group's latest record is unreadable: what it
                        // committed is unknown, not the commit before it.
                        if let Some((group, topic, partition)) = decode_group_record(key, None)
                            .ok()
                            .and_then(|d| d.offset_commit_key())
                        {
                            if wanted.contains(&(topic.clone(), partition)) {
                                latest.latest.insert(
                                    (topic, partition, group.clone()),
                                    LatestCommit {
                                        group,
                                        commit: None,
                                        broker,
                                        offsets_partition,
                                        log_offset: rec.offset,
                                        unreadable: Some(problem.to_string()),
                                    },
                                );
                            }
                        }
                        undecoded.push(problem);
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
                let commit = GroupCommit {
                    group: group.clone(),
                    topic: topic.clone(),
                    partition,
                    offset,
                    leader_epoch,
                    commit_timestamp,
                    broker,
                    file: file.clone(),
                    position,
                };
                latest.latest.insert(
                    (topic, partition, group.clone()),
                    LatestCommit {
                        group,
                        commit: Some(commit.clone()),
                        broker,
                        offsets_partition,
                        log_offset: rec.offset,
                        unreadable: None,
                    },
                );
                keep_highest(&mut best, k, commit);
                true
            });
            problems.append(&mut undecoded);
        },
    );
    Read {
        best,
        problems,
        latest,
        protocols,
    }
}
