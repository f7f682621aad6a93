//! Share groups' state (KIP-932) from the capture's `__share_group_state`
//! replicas: per share group and partition, the share-partition start
//! offset, the state and leader epochs, and the in-flight batches (offset
//! ranges with their delivery state and count), as Kafka's share
//! coordinator rebuilds them when it loads the topic
//! (`ShareCoordinatorShard.replay`):
//!
//! - a `ShareSnapshot` holds the whole state of a (group, topic id,
//!   partition) and replaces what came before; its tombstone deletes it;
//! - a `ShareUpdate` is applied to the state before it: its start offset and
//!   leader epoch where set (not `-1`), its delivery-complete count, and its
//!   batches combined with the old ones (`PersisterStateBatchCombiner`):
//!   batches ending below the start offset are dropped, one that straddles
//!   it is cut there, and where batches overlap the one delivered more often
//!   wins, then the higher state (ARCHIVED over ACKNOWLEDGED over ACQUIRED
//!   over AVAILABLE); adjacent batches alike are joined. An update with no
//!   state before it is the state.
//!
//! States are keyed by topic id; the ids of the partitions asked for are
//! read from their replicas' `partition.metadata`. Of the replicas of one
//! `__share_group_state` partition, the one a caller prefers (the leader at
//! capture time) is used, else the one whose log reaches furthest. What is
//! kept is bounded by the share groups of the partitions asked for, and
//! each state by [`MAX_BATCHES`].

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::capture::replica::{for_each_data_batch, for_each_record};
use crate::format::internal::decode_share_state_record;
use crate::format::metadata::schema::Msg;
use crate::format::names::ReplicaKind;
use crate::model::impact::{DeliveryState, ShareBatch, SharePartitionState};
use crate::model::{Capture, Replica, ReplicaProblem};

/// The internal topic of the share coordinator.
pub const SHARE_GROUP_STATE: &str = "__share_group_state";

/// The in-flight batches klf keeps of one share partition's state; a state
/// with more is reported unreadable.
pub const MAX_BATCHES: usize = 1 << 16;

/// What the capture's `__share_group_state` replicas say about the
/// partitions asked for.
#[derive(Debug, Clone, Default)]
pub struct ShareStates {
    /// Whether the capture holds any `__share_group_state` replica.
    pub topic_present: bool,
    /// Replicas of `__share_group_state` read.
    pub replicas_read: usize,
    /// Problems met while reading (damaged batches, undecodable records).
    pub problems: Vec<ReplicaProblem>,
    /// The share groups' states per (topic, partition), by group.
    pub states: BTreeMap<(String, i32), Vec<SharePartitionState>>,
    /// Topics asked for whose topic id no replica's `partition.metadata`
    /// gives: their share groups cannot be told.
    pub unknown_ids: BTreeSet<String>,
}

impl ShareStates {
    /// The share groups' states for one partition (empty when none).
    pub fn for_partition(&self, topic: &str, partition: i32) -> &[SharePartitionState] {
        self.states
            .get(&(topic.to_string(), partition))
            .map_or(&[], Vec::as_slice)
    }
}

type Key = (String, [u8; 16], i32);

/// One replica's fold: its broker, the offset of its last record, the
/// states it ends with.
struct ReplicaStates {
    broker: i32,
    last: i64,
    states: BTreeMap<Key, SharePartitionState>,
}

/// Reads every `__share_group_state` replica of `capture` and keeps the
/// states of the partitions in `wanted`; `prefer` names the broker whose
/// replica of a `__share_group_state` partition to use.
pub fn share_states(
    capture: &Capture,
    wanted: &BTreeSet<(String, i32)>,
    prefer: &dyn Fn(i32) -> Option<i32>,
) -> ShareStates {
    let replicas = crate::capture::replica::replicas_of_topic(capture, SHARE_GROUP_STATE);
    let mut out = ShareStates {
        topic_present: !replicas.is_empty(),
        replicas_read: replicas.len(),
        ..Default::default()
    };
    if wanted.is_empty() {
        return out;
    }
    // topic id -> name, for the topics asked for
    let topics: BTreeSet<&str> = wanted.iter().map(|(t, _)| t.as_str()).collect();
    let mut ids: BTreeMap<[u8; 16], String> = BTreeMap::new();
    for t in &topics {
        let mut found = false;
        for ((topic, _), reps) in capture.partitions.range((t.to_string(), i32::MIN)..) {
            if topic != t {
                break;
            }
            // live replicas: a deleted incarnation of the topic had another id
            for r in reps.iter().filter(|r| r.kind == ReplicaKind::Live) {
                if let Some(Ok(m)) = r.partition_metadata.as_deref() {
                    ids.insert(m.topic_id.0, (*t).to_string());
                    found = true;
                }
            }
        }
        if !found {
            out.unknown_ids.insert((*t).to_string());
        }
    }
    if ids.is_empty() {
        return out;
    }
    let want = |id: &[u8; 16], partition: i32| {
        ids.get(id)
            .is_some_and(|t| wanted.contains(&(t.clone(), partition)))
    };
    let read: Vec<(i32, ReplicaStates, Vec<ReplicaProblem>)> = replicas
        .par_iter()
        .map(|(i, p, r)| {
            let broker = r.node_id.unwrap_or(-(*i as i32) - 1);
            let (last, states, problems) = read_replica(r, *p, broker, &want);
            (
                *p,
                ReplicaStates {
                    broker,
                    last,
                    states,
                },
                problems,
            )
        })
        .collect();
    let mut by_part: BTreeMap<i32, Vec<ReplicaStates>> = BTreeMap::new();
    for (p, rs, problems) in read {
        out.problems.extend(problems);
        by_part.entry(p).or_default().push(rs);
    }
    for (p, mut reps) in by_part {
        let want = prefer(p);
        let chosen = reps
            .iter()
            .position(|r| Some(r.broker) == want)
            .or_else(|| {
                reps.iter()
                    .enumerate()
                    .max_by_key(|(_, r)| (r.last, -r.broker))
                    .map(|(i, _)| i)
            });
        let Some(i) = chosen else { continue };
        for ((_, id, partition), state) in std::mem::take(&mut reps[i].states) {
            let Some(topic) = ids.get(&id) else { continue };
            out.states
                .entry((topic.clone(), partition))
                .or_default()
                .push(state);
        }
    }
    for v in out.states.values_mut() {
        v.sort_by(|a, b| a.group.cmp(&b.group).then(a.topic_id.cmp(&b.topic_id)));
    }
    out
}

fn batches_of(msg: &Msg) -> Vec<ShareBatch> {
    msg.structs("stateBatches")
        .into_iter()
        .filter_map(|b| {
            let state_id = i8::try_from(b.int("deliveryState")?).ok()?;
            Some(ShareBatch {
                first_offset: b.int("firstOffset")?,
                last_offset: b.int("lastOffset")?,
                state: DeliveryState::from_id(i64::from(state_id)),
                state_id,
                delivery_count: i16::try_from(b.int("deliveryCount")?).ok()?,
            })
        })
        .collect()
}

fn int32(msg: &Msg, name: &str) -> Option<i32> {
    msg.int(name).and_then(|v| i32::try_from(v).ok())
}

/// The batches of `old` and `new` combined as the share coordinator does
/// (`PersisterStateBatchCombiner`): cut at `start` (unless `-1`), then per
/// offset the batch with the higher delivery count, then the higher state
/// byte, wins; adjacent batches alike are joined. Batches whose last offset
/// is below their first are dropped.
pub fn combine(old: &[ShareBatch], new: &[ShareBatch], start: i64) -> Vec<ShareBatch> {
    let mut all: Vec<ShareBatch> = old
        .iter()
        .chain(new)
        .filter(|b| b.last_offset >= b.first_offset)
        .filter(|b| start < 0 || b.last_offset >= start)
        .map(|b| {
            let mut b = *b;
            if start >= 0 && b.first_offset < start {
                b.first_offset = start;
            }
            b
        })
        .collect();
    if all.len() < 2 {
        return all;
    }
    all.sort_by_key(|b| (b.first_offset, b.last_offset));
    // every place the winner can change, ends as exclusive bounds
    let mut bounds: Vec<i128> = all
        .iter()
        .flat_map(|b| [i128::from(b.first_offset), i128::from(b.last_offset) + 1])
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut ends: Vec<(i128, usize)> = Vec::new();
    let mut active: BTreeSet<(i16, i8, usize)> = BTreeSet::new();
    let mut next = 0usize;
    let mut out: Vec<ShareBatch> = Vec::new();
    for w in bounds.windows(2) {
        let (from, to) = (w[0], w[1]);
        while next < all.len() && i128::from(all[next].first_offset) <= from {
            let b = &all[next];
            active.insert((b.delivery_count, b.state_id, next));
            ends.push((i128::from(b.last_offset) + 1, next));
            next += 1;
        }
        ends.retain(|&(end, i)| {
            if end <= from {
                active.remove(&(all[i].delivery_count, all[i].state_id, i));
                false
            } else {
                true
            }
        });
        let Some(&(count, state_id, _)) = active.iter().next_back() else {
            continue;
        };
        let (Ok(first), Ok(last)) = (i64::try_from(from), i64::try_from(to - 1)) else {
            continue;
        };
        match out.last_mut() {
            Some(p)
                if p.delivery_count == count
                    && p.state_id == state_id
                    && i128::from(p.last_offset) + 1 == from =>
            {
                p.last_offset = last;
            }
            _ => out.push(ShareBatch {
                first_offset: first,
                last_offset: last,
                state: DeliveryState::from_id(i64::from(state_id)),
                state_id,
                delivery_count: count,
            }),
        }
    }
    out
}

fn read_replica(
    replica: &Replica,
    state_partition: i32,
    broker: i32,
    want: &(dyn Fn(&[u8; 16], i32) -> bool + Sync),
) -> (i64, BTreeMap<Key, SharePartitionState>, Vec<ReplicaProblem>) {
    let mut states: BTreeMap<Key, SharePartitionState> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut last = -1i64;
    let mut scratch = Vec::new();
    for_each_data_batch(
        replica,
        "share group states",
        &mut problems,
        &mut |b, path, problems| {
            last = last.max(b.last_offset());
            let position = b.position;
            let mut bad = Vec::new();
            for_each_record(b, &mut scratch, path, problems, &mut |rec| {
                let Some(key) = rec.key else { return true };
                let key_only = match decode_share_state_record(key, None) {
                    Ok(d) => d,
                    Err(e) => {
                        bad.push(ReplicaProblem {
                            path: path.to_path_buf(),
                            position: Some(position),
                            message: format!(
                                "share state record at offset {} does not decode: {e}",
                                rec.offset
                            ),
                            io: false,
                        });
                        return true;
                    }
                };
                let record_type = key_only.record_type;
                let (Some(group), Some(id), Some(partition)) = (
                    key_only.key.str("groupId").map(str::to_string),
                    key_only.key.uuid("topicId"),
                    int32(&key_only.key, "partition"),
                ) else {
                    return true;
                };
                if !want(&id, partition) {
                    return true;
                }
                let k = (group.clone(), id, partition);
                let blank = |unreadable: Option<String>| SharePartitionState {
                    group: group.clone(),
                    topic_id: id,
                    partition,
                    start_offset: -1,
                    state_epoch: None,
                    leader_epoch: -1,
                    snapshot_epoch: -1,
                    delivery_complete_count: None,
                    batches: Vec::new(),
                    coordinator_broker: broker,
                    state_partition,
                    log_offset: rec.offset,
                    unreadable,
                };
                let Some(value) = rec.value else {
                    if record_type == 0 {
                        // a snapshot's tombstone deletes the state
                        states.remove(&k);
                    } else {
                        bad.push(ReplicaProblem {
                            path: path.to_path_buf(),
                            position: Some(position),
                            message: format!(
                                "share state update at offset {} has no value (Kafka's share coordinator expects one)",
                                rec.offset
                            ),
                            io: false,
                        });
                    }
                    return true;
                };
                let decoded = match decode_share_state_record(key, Some(value)) {
                    Ok(d) => d,
                    Err(e) => {
                        let problem = ReplicaProblem {
                            path: path.to_path_buf(),
                            position: Some(position),
                            message: format!(
                                "share state record at offset {} does not decode: {e}",
                                rec.offset
                            ),
                            io: false,
                        };
                        let why = problem.to_string();
                        match states.get_mut(&k) {
                            Some(s) => {
                                s.unreadable = Some(why);
                                s.log_offset = rec.offset;
                            }
                            None => {
                                states.insert(k, blank(Some(why)));
                            }
                        }
                        bad.push(problem);
                        return true;
                    }
                };
                let Some(v) = decoded.value.as_ref().map(|v| &v.msg) else {
                    return true;
                };
                let start = v.int("startOffset").unwrap_or(-1);
                let leader_epoch = int32(v, "leaderEpoch").unwrap_or(-1);
                let dcc = int32(v, "deliveryCompleteCount").filter(|c| *c >= 0);
                let batches = batches_of(v);
                let next = if record_type == 0 {
                    let mut s = blank(None);
                    s.start_offset = start;
                    s.state_epoch = int32(v, "stateEpoch");
                    s.leader_epoch = leader_epoch;
                    s.snapshot_epoch = int32(v, "snapshotEpoch").unwrap_or(-1);
                    s.delivery_complete_count = dcc;
                    s.batches = combine(&[], &batches, start);
                    s
                } else {
                    match states.remove(&k) {
                        None => {
                            let mut s = blank(None);
                            s.start_offset = start;
                            s.leader_epoch = leader_epoch;
                            s.snapshot_epoch = int32(v, "snapshotEpoch").unwrap_or(-1);
                            s.delivery_complete_count = dcc;
                            s.batches = combine(&[], &batches, start);
                            s
                        }
                        Some(mut s) => {
                            if start != -1 {
                                s.start_offset = start;
                            }
                            if leader_epoch != -1 {
                                s.leader_epoch = leader_epoch;
                            }
                            s.delivery_complete_count = dcc;
                            s.batches = combine(&s.batches, &batches, s.start_offset);
                            s.log_offset = rec.offset;
                            s
                        }
                    }
                };
                let mut next = next;
                if next.batches.len() > MAX_BATCHES {
                    next.batches.clear();
                    next.unreadable = Some(format!(
                        "{}: __share_group_state-{state_partition} offset {} leaves more than {MAX_BATCHES} in-flight batches, which klf does not keep",
                        path.display(),
                        rec.offset
                    ));
                }
                states.insert(k, next);
                true
            });
            problems.append(&mut bad);
        },
    );
    (last, states, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(first: i64, last: i64, state: i8, count: i16) -> ShareBatch {
        ShareBatch {
            first_offset: first,
            last_offset: last,
            state: DeliveryState::from_id(i64::from(state)),
            state_id: state,
            delivery_count: count,
        }
    }

    #[test]
    fn combine_prunes_below_the_start_offset() {
        let old = [b(0, 9, 2, 1), b(10, 19, 0, 1)];
        assert_eq!(combine(&old, &[], 15), vec![b(15, 19, 0, 1)]);
        // -1: nothing is cut
        assert_eq!(combine(&old, &[], -1), old.to_vec());
    }

    #[test]
    fn combine_lets_more_deliveries_then_the_higher_state_win() {
        // an AVAILABLE batch later acknowledged in part
        let old = [b(10, 19, 0, 1)];
        let new = [b(12, 14, 2, 1)];
        assert_eq!(
            combine(&old, &new, 10),
            vec![b(10, 11, 0, 1), b(12, 14, 2, 1), b(15, 19, 0, 1)]
        );
        // a record delivered twice wins over its older state, whatever it is
        let old = [b(10, 19, 4, 1)];
        let new = [b(15, 15, 0, 2)];
        assert_eq!(
            combine(&old, &new, 10),
            vec![b(10, 14, 4, 1), b(15, 15, 0, 2), b(16, 19, 4, 1)]
        );
        // same count: ARCHIVED over ACKNOWLEDGED, in either order
        assert_eq!(
            combine(&[b(0, 4, 4, 1)], &[b(0, 9, 2, 1)], 0),
            vec![b(0, 4, 4, 1), b(5, 9, 2, 1)]
        );
        // alike and adjacent: joined
        assert_eq!(
            combine(&[b(0, 4, 2, 1)], &[b(5, 9, 2, 1)], 0),
            vec![b(0, 9, 2, 1)]
        );
        // a batch ending below its start is dropped; i64::MAX does not overflow
        assert_eq!(
            combine(&[b(5, 4, 2, 1)], &[b(i64::MAX - 1, i64::MAX, 2, 1)], 0),
            vec![b(i64::MAX - 1, i64::MAX, 2, 1)]
        );
    }

    #[test]
    fn effective_start_passes_finished_batches_without_a_gap() {
        let mut s = SharePartitionState {
            group: "g".into(),
            topic_id: [0; 16],
            partition: 0,
            start_offset: 0,
            state_epoch: Some(0),
            leader_epoch: 0,
            snapshot_epoch: 0,
            delivery_complete_count: None,
            batches: vec![b(0, 104, 2, 1), b(105, 105, 4, 1), b(106, 111, 2, 1)],
            coordinator_broker: 1,
            state_partition: 0,
            log_offset: 1,
            unreadable: None,
        };
        assert_eq!(s.effective_start(), Some(112));
        assert_eq!(s.next_delivered(), Some(112));
        s.batches.push(b(120, 129, 0, 1));
        assert_eq!(s.effective_start(), Some(112));
        // the gap 112..119 is fetched first
        assert_eq!(s.next_delivered(), Some(112));
        s.batches = vec![b(0, 9, 2, 1), b(10, 14, 0, 1), b(15, 19, 4, 1)];
        assert_eq!(
            (s.effective_start(), s.next_delivered()),
            (Some(10), Some(10))
        );
        s.batches = vec![b(5, 9, 2, 1)];
        assert_eq!(
            (s.effective_start(), s.next_delivered()),
            (Some(0), Some(0))
        );
        s.start_offset = -1;
        assert_eq!(s.effective_start(), None);
        assert_eq!(
            s.state_of(7).map(|x| x.state),
            Some(DeliveryState::Acknowledged)
        );
        assert!(s.state_of(10).is_none());
    }
}
