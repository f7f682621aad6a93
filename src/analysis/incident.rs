//! One partition's incident as a story in time: the metadata log's records
//! of the partition and of its brokers, the first batch of each leader
//! epoch its replicas hold, the modification times of their checkpoints,
//! and what the nodes logged about it, merged in time order, each entry
//! with its source.
//!
//! Kafka logs its nodes' local time without naming the zone. A node's
//! offset from UTC is inferred where its statements state records of the
//! metadata log ([`infer_zones`]): the logged time less the record's
//! timestamp, when every such distance lies within [`ZONE_TOLERANCE_MS`]
//! of one whole quarter hour, is the node's offset. Without that the
//! times are read as UTC and said to be assumed.
//!
//! The ISR changes the logs state are held against the metadata log's
//! records, by partition epoch ([`compare_isr`]): the leader's `ISR
//! updated to ... and version updated to P`, the controller's `UNCLEAN
//! partition change`, a new leader's `starts at leader epoch E ... with
//! partition epoch P ... ISR [..]`, and a broker's `Skipped the
//! become-leader state change ... partitionEpoch=P` (how a broker states
//! an ISR change the controller made), with Kafka's reason where one was
//! logged.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::format::kafka_log::{Event, ProducerErrorKind, TruncationReason};
use crate::format::text::count;
use crate::model::broker_log::{LogSource, LoggedEvent};
use crate::model::history::{BrokerChange, BrokerChangeKind};
use crate::model::timeline::{
    offset_text, CheckpointTime, EntrySource, EpochBoundary, IncidentEntry, IsrChange,
    IsrComparison, IsrStatement, IsrVerdict, NodeZone, PartitionIncident, ZoneSource,
};
use crate::model::timeline::{QuorumEvent, QuorumEventKind};
use crate::model::{ControllerView, Election, PartitionHistory};

/// The most log lines one partition's timeline takes (each node's first
/// in the order logged, an equal share each); the rest are counted. A
/// hostile log may hold a million statements of one partition.
pub const MAX_LOG_LINES: usize = 100_000;

/// Offsets from UTC are whole quarter hours (every zone in use is).
pub const ZONE_STEP_MS: i64 = 15 * 60 * 1000;

/// How far a statement may be logged from its record's timestamp, after
/// the offset, for the offset to be inferred: a live node logs a record it
/// applies within moments; clocks of different machines differ a little.
pub const ZONE_TOLERANCE_MS: i64 = 60_000;

/// A removed replica's controlled shutdown this long before an ISR change
/// (or a fencing as long as [`REASON_AFTER_MS`] after) is the change's
/// reason.
pub const SHUTDOWN_BEFORE_MS: i64 = 30_000;

/// See [`SHUTDOWN_BEFORE_MS`]: a fencing for a timed-out session this long
/// before or after an ISR change that removes the broker is its reason.
pub const REASON_AFTER_MS: i64 = 5_000;

fn same_set(a: &[i32], b: &[i32]) -> bool {
    let a: BTreeSet<i32> = a.iter().copied().collect();
    let b: BTreeSet<i32> = b.iter().copied().collect();
    a == b
}

/// The record of `history` a partition statement states, if it states one
/// the moment it happens (a start-up's replay of the partition's latest
/// state is not such a statement: a follower or leader line names a
/// previous leader epoch below its own only when it changed while the
/// node ran).
fn stated_record<'h>(
    node: i32,
    event: &Event,
    history: &'h PartitionHistory,
) -> Option<&'h Election> {
    let at = |pe: i32| history.changes.iter().find(|r| r.partition_epoch == pe);
    match event {
        Event::IsrUpdated { isr, version, .. } => {
            let r = at(i32::try_from(*version).ok()?)?;
            (r.leader == node && same_set(&r.isr, isr)).then_some(r)
        }
        Event::BecameLeader {
            leader_epoch,
            partition_epoch: Some(pe),
            previous_leader_epoch: Some(prev),
            ..
        } if (0..*leader_epoch).contains(prev) => {
            let r = at(*pe)?;
            (r.leader == node && r.leader_epoch == *leader_epoch).then_some(r)
        }
        Event::BecameFollower {
            leader_epoch,
            partition_epoch: Some(pe),
            leader: Some(l),
            previous_leader_epoch: Some(prev),
            ..
        } if (0..*leader_epoch).contains(prev) => {
            let r = at(*pe)?;
            (r.leader == *l && r.leader_epoch == *leader_epoch).then_some(r)
        }
        Event::RegistrationApplied {
            partition_epoch: Some(pe),
            leader_epoch,
            isr,
            ..
        } => {
            let r = at(*pe)?;
            let epoch_ok = leader_epoch.is_none_or(|e| e == r.leader_epoch);
            let isr_ok = isr.as_ref().is_none_or(|i| same_set(i, &r.isr));
            (epoch_ok && isr_ok).then_some(r)
        }
        Event::UncleanPartitionChange {
            partition_epoch: Some((_, pe)),
            ..
        } => at(*pe),
        _ => None,
    }
}

/// Each node's offset from UTC: given (`given`: node, minutes), else
/// inferred from the statements of `events` (every node's, per node in
/// the order logged) that state records of `controller`'s metadata log,
/// else assumed 0. One per node that has statements or is given, by node.
pub fn infer_zones(
    events: &[LoggedEvent],
    controller: Option<&ControllerView>,
    given: &[(i32, i32)],
) -> Vec<NodeZone> {
    // per node: the distances (naive logged ms - record ms) of its matches,
    // and the span of its statements
    let mut residuals: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    let mut span: BTreeMap<i32, (i64, i64)> = BTreeMap::new();
    // the broker records by (broker, epoch, fenced), to match the k-th
    // replayed line of a node with the k-th record
    let mut broker_records: HashMap<(i32, i64, bool), Vec<&BrokerChange>> = HashMap::new();
    if let Some(c) = controller {
        for b in &c.brokers {
            let fenced = match b.kind {
                BrokerChangeKind::Fenced => true,
                BrokerChangeKind::Unfenced => false,
                _ => continue,
            };
            broker_records
                .entry((b.broker, b.broker_epoch, fenced))
                .or_default()
                .push(b);
        }
    }
    let mut replayed: HashMap<(i32, i32, i64, bool), usize> = HashMap::new();
    for e in events {
        let s = span.entry(e.node).or_insert((e.time_ms, e.time_ms));
        s.0 = s.0.min(e.time_ms);
        s.1 = s.1.max(e.time_ms);
        let Some(c) = controller else { continue };
        let record_time = match &e.event {
            Event::BrokerFencing {
                broker,
                epoch: Some(epoch),
                fenced,
                session_timeout: false,
            } => {
                let k = replayed
                    .entry((e.node, *broker, *epoch, *fenced))
                    .or_default();
                let r = broker_records
                    .get(&(*broker, *epoch, *fenced))
                    .and_then(|v| v.get(*k))
                    .map(|b| b.timestamp);
                *k += 1;
                r
            }
            ev => ev.partition().and_then(|p| {
                let h = c.partitions.get(&(p.topic.clone(), p.partition))?;
                stated_record(e.node, ev, h).map(|r| r.timestamp)
            }),
        };
        if let Some(t) = record_time.filter(|&t| t >= 0) {
            residuals
                .entry(e.node)
                .or_default()
                .push(e.time_ms.saturating_sub(t));
        }
    }
    let mut nodes: BTreeSet<i32> = span.keys().copied().collect();
    nodes.extend(given.iter().map(|g| g.0));
    nodes
        .into_iter()
        .map(|node| {
            let found = residuals.get(&node).map(Vec::as_slice).unwrap_or(&[]);
            let mut z = zone_of(node, found, controller.is_some());
            if let Some(&(_, minutes)) = given.iter().rev().find(|g| g.0 == node) {
                z = NodeZone {
                    utc_offset_minutes: minutes,
                    utc_offset: offset_text(minutes),
                    how: ZoneSource::Given,
                    max_residual_ms: found
                        .iter()
                        .map(|d| distance(*d, i64::from(minutes) * 60_000))
                        .max(),
                    text: format!(
                        "times read as UTC{}, as given (--log-utc-offset)",
                        offset_text(minutes)
                    ),
                    ..z
                };
            }
            if let Some(&(a, b)) = span.get(&node) {
                let off = i64::from(z.utc_offset_minutes) * 60_000;
                z.first_timestamp = Some(a.saturating_sub(off));
                z.last_timestamp = Some(b.saturating_sub(off));
            }
            z
        })
        .collect()
}

/// A node's zone from the distances of its matched statements.
fn zone_of(node: i32, found: &[i64], metadata: bool) -> NodeZone {
    let assumed = |text: String| NodeZone {
        node,
        utc_offset_minutes: 0,
        utc_offset: offset_text(0),
        how: ZoneSource::Assumed,
        statements: found.len() as u64,
        max_residual_ms: None,
        text,
        first_timestamp: None,
        last_timestamp: None,
    };
    if !metadata {
        return assumed(
            "times read as UTC (assumed): the capture holds no metadata log to match the node's statements with"
                .to_string(),
        );
    }
    if found.is_empty() {
        return assumed(
            "times read as UTC (assumed): no statement of the node could be matched with the metadata log"
                .to_string(),
        );
    }
    // the nearest quarter hour (a float's cast saturates; so does the
    // product)
    let step =
        |d: i64| ((d as f64 / ZONE_STEP_MS as f64).round() as i64).saturating_mul(ZONE_STEP_MS);
    let candidate = step(found[0]);
    let agree = found
        .iter()
        .all(|&d| step(d) == candidate && distance(d, candidate) < ZONE_TOLERANCE_MS);
    let minutes = i32::try_from(candidate / 60_000).ok();
    match minutes.filter(|m| agree && m.unsigned_abs() <= 18 * 60) {
        Some(m) => {
            let worst = found.iter().map(|&d| distance(d, candidate)).max();
            NodeZone {
                node,
                utc_offset_minutes: m,
                utc_offset: offset_text(m),
                how: ZoneSource::Inferred,
                statements: found.len() as u64,
                max_residual_ms: worst,
                text: format!(
                    "times read as UTC{}, inferred from {} matched with the metadata log ({}within {} ms of its record)",
                    offset_text(m),
                    count(found.len() as u64, "statement", "statements"),
                    if found.len() == 1 { "" } else { "each " },
                    worst.unwrap_or(0)
                ),
                first_timestamp: None,
                last_timestamp: None,
            }
        }
        None => {
            let lo = found.iter().min().copied().unwrap_or(0);
            let hi = found.iter().max().copied().unwrap_or(0);
            assumed(format!(
                "times read as UTC (assumed): {} matched with the metadata log lie {} to {} from their records, not within {} s of one whole quarter hour (logs of another run, or a clock that moved)",
                count(found.len() as u64, "statement", "statements"),
                signed_seconds(lo),
                signed_seconds(hi),
                ZONE_TOLERANCE_MS / 1000
            ))
        }
    }
}

/// How far apart two times are (ms), at most `i64::MAX`.
fn distance(a: i64, b: i64) -> i64 {
    i64::try_from(a.abs_diff(b)).unwrap_or(i64::MAX)
}

fn signed_seconds(ms: i64) -> String {
    format!(
        "{}{:.1} s",
        if ms < 0 { "-" } else { "+" },
        ms.unsigned_abs() as f64 / 1000.0
    )
}

/// The zone of `node`, when `zones` has it.
fn zone(zones: &[NodeZone], node: i32) -> Option<&NodeZone> {
    zones.iter().find(|z| z.node == node)
}

fn known(z: Option<&NodeZone>) -> bool {
    z.is_some_and(|z| z.how != ZoneSource::Assumed)
}

/// A statement's time in UTC, read with its node's offset.
fn utc(e: &LoggedEvent, zones: &[NodeZone]) -> i64 {
    let off = zone(zones, e.node).map_or(0, |z| i64::from(z.utc_offset_minutes) * 60_000);
    e.time_ms.saturating_sub(off)
}

/// The ISR and partition epoch a statement states, with its leader epoch
/// when it names one, and its preference as the statement of a record
/// led by `leader` (lower first).
fn isr_stated(e: &LoggedEvent, leader: Option<i32>) -> Option<(i32, Vec<i32>, Option<i32>, u8)> {
    // without a record, the statement of a node that says it leads
    let own = match leader {
        Some(l) => e.node == l,
        None => matches!(
            e.event,
            Event::IsrUpdated { .. }
                | Event::BecameLeader { .. }
                | Event::RegistrationApplied {
                    as_leader: true,
                    ..
                }
        ),
    };
    match &e.event {
        Event::IsrUpdated { isr, version, .. } => Some((
            i32::try_from(*version).ok()?,
            isr.clone(),
            None,
            if own { 0 } else { 5 },
        )),
        Event::UncleanPartitionChange {
            isr: Some((_, after)),
            partition_epoch: Some((_, pe)),
            leader_epoch,
            ..
        } => Some((*pe, after.clone(), leader_epoch.map(|l| l.1), 1)),
        Event::BecameLeader {
            partition_epoch: Some(pe),
            isr: Some(isr),
            leader_epoch,
            ..
        } => Some((
            *pe,
            isr.clone(),
            Some(*leader_epoch),
            if own { 2 } else { 6 },
        )),
        Event::RegistrationApplied {
            partition_epoch: Some(pe),
            isr: Some(isr),
            leader_epoch,
            as_leader,
            ..
        } => Some((
            *pe,
            isr.clone(),
            *leader_epoch,
            if own && *as_leader { 3 } else { 4 },
        )),
        _ => None,
    }
}

/// A statement of a partition epoch's ISR, with its preference and its
/// position in the run's statements.
struct Stated<'e> {
    rank: u8,
    at: usize,
    event: &'e LoggedEvent,
    isr: Vec<i32>,
    leader_epoch: Option<i32>,
}

/// Holds the ISR changes of `history` against what the nodes logged of
/// the partition (`logged`, per node in the order logged, each with its
/// position in the run's statements): by partition epoch, with Kafka's
/// reason where one was logged (`node_wide`: the fencings, session
/// expiries and controlled shutdowns logged of the partition's nodes).
/// Only the statements of nodes whose offset from UTC is known
/// ([`infer_zones`]) are used: the others' times cannot be placed against
/// the metadata log. `brokers` (the metadata log's broker records, in log
/// order) tells which replicas were down when a record was written: a
/// change no running replica could state is `replicas-down`, not
/// `not-logged`.
pub fn compare_isr(
    history: Option<&PartitionHistory>,
    history_missing: Option<&str>,
    logged: &[(usize, &LoggedEvent)],
    node_wide: &[(usize, &LoggedEvent)],
    zones: &[NodeZone],
    brokers: &[crate::model::history::BrokerChange],
) -> IsrComparison {
    let not = |why: String| IsrComparison {
        compared: false,
        why_not: Some(why),
        changes: Vec::new(),
    };
    let Some(history) = history else {
        return not(format!(
            "no controller's view: {}; the ISR lines are shown as logged",
            history_missing.unwrap_or("the capture holds no metadata log")
        ));
    };
    if zones.is_empty() {
        return not("no log of the nodes was read".to_string());
    }
    if !zones.iter().any(|z| known(Some(z))) {
        return not(
            "no node's log times could be placed against the metadata log (every zone assumed): its statements are shown, not compared"
                .to_string(),
        );
    }
    let usable: Vec<(usize, &LoggedEvent)> = logged
        .iter()
        .filter(|(_, e)| known(zone(zones, e.node)))
        .copied()
        .collect();
    let record_at: BTreeMap<i32, &Election> = history
        .changes
        .iter()
        .map(|r| (r.partition_epoch, r))
        .collect();
    // the statements of each partition epoch, preferred first
    let mut by_epoch: BTreeMap<i32, Vec<Stated<'_>>> = BTreeMap::new();
    for &(at, event) in &usable {
        let Some((pe, ..)) = isr_stated(event, None) else {
            continue;
        };
        let leader = record_at.get(&pe).map(|r| r.leader);
        if let Some((pe, isr, leader_epoch, rank)) = isr_stated(event, leader) {
            by_epoch.entry(pe).or_default().push(Stated {
                rank,
                at,
                event,
                isr,
                leader_epoch,
            });
        }
    }
    for v in by_epoch.values_mut() {
        v.sort_by_key(|s| (s.rank, s.at));
    }
    let covers = |t: i64| {
        zones.iter().any(|z| {
            known(Some(z))
                && matches!((z.first_timestamp, z.last_timestamp), (Some(a), Some(b)) if a <= t && t <= b)
        })
    };
    let statement = |s: &Stated<'_>| IsrStatement {
        node: s.event.node,
        kind: kind_of(&s.event.event),
        isr: s.isr.clone(),
        leader_epoch: s.leader_epoch,
        logged_at: s.event.time.clone(),
        time: utc(s.event, zones),
        source: s.event.source.clone(),
    };
    // whether every broker that could state the change (the replicas, and
    // the ISR before it) was fenced or unregistered when it was written: a
    // broker that is down logs nothing then, and applies only the latest
    // state when it starts
    // (a fencing the controller wrote with the change, in the same event
    // and so at the same time, counts: it is why the ISR changed)
    let replicas_down = |before: &[i32], replicas: &[i32], r: &Election| {
        use crate::model::history::BrokerChangeKind::{Fenced, Unregistered};
        let down = |b: i32| {
            let with_the_change = brokers.iter().any(|c| {
                c.broker == b
                    && c.metadata_offset > r.metadata_offset
                    && c.timestamp == r.timestamp
                    && matches!(c.kind, Fenced | Unregistered)
            });
            with_the_change
                || brokers
                    .iter()
                    .rev()
                    .find(|c| c.broker == b && c.metadata_offset < r.metadata_offset)
                    .is_some_and(|c| matches!(c.kind, Fenced | Unregistered))
        };
        let mut nodes: Vec<i32> = replicas.iter().chain(before).copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        !nodes.is_empty() && nodes.into_iter().all(down)
    };
    let mut changes = Vec::new();
    for w in history.changes.windows(2) {
        let (prev, r) = (&w[0], &w[1]);
        if same_set(&prev.isr, &r.isr) {
            continue;
        }
        let stated = by_epoch.get(&r.partition_epoch);
        let agreeing = stated.and_then(|v| {
            v.iter().find(|s| {
                same_set(&s.isr, &r.isr) && s.leader_epoch.is_none_or(|le| le == r.leader_epoch)
            })
        });
        let (verdict, logged) = match (agreeing, stated.and_then(|v| v.first())) {
            (Some(s), _) => (IsrVerdict::Agrees, Some(s)),
            (None, Some(s)) => (IsrVerdict::Differs, Some(s)),
            (None, None) if replicas_down(&prev.isr, &history.replicas, r) => {
                (IsrVerdict::ReplicasDown, None)
            }
            (None, None) if covers(r.timestamp) => (IsrVerdict::NotLogged, None),
            (None, None) => (IsrVerdict::NotCovered, None),
        };
        let reason = logged
            .and_then(|s| shrink_reason(s.at, s.event, &r.isr, &usable))
            .or_else(|| removal_reason(prev, r, node_wide, zones));
        changes.push(IsrChange {
            partition_epoch: r.partition_epoch,
            verdict,
            metadata_offset: Some(r.metadata_offset),
            timestamp: Some(r.timestamp),
            isr: Some(r.isr.clone()),
            leader_epoch: Some(r.leader_epoch),
            logged: logged.map(statement),
            reason: reason.as_ref().map(|x| x.0.clone()),
            reason_source: reason.map(|x| x.1),
        });
    }
    let first = history.changes.first().map(|r| r.partition_epoch);
    let last = history.changes.last().map(|r| r.partition_epoch);
    for (pe, v) in &by_epoch {
        if record_at.contains_key(pe) {
            continue;
        }
        let Some(s) = v.first() else { continue };
        let verdict = if last.is_some_and(|l| *pe > l) {
            IsrVerdict::AfterMetadataLog
        } else if first.is_some_and(|f| *pe < f) && !history.from_creation {
            IsrVerdict::BeforeMetadataLog
        } else {
            IsrVerdict::NoRecord
        };
        changes.push(IsrChange {
            partition_epoch: *pe,
            verdict,
            metadata_offset: None,
            timestamp: None,
            isr: None,
            leader_epoch: None,
            logged: Some(statement(s)),
            reason: shrink_reason(s.at, s.event, &s.isr, &usable).map(|x| x.0),
            reason_source: None,
        });
    }
    changes.sort_by_key(|c| c.partition_epoch);
    IsrComparison {
        compared: true,
        why_not: None,
        changes,
    }
}

/// The leader's `Shrinking ISR ... Out of sync replicas: ...` that the
/// `ISR updated` at position `at` commits: the last shrink to `isr` the
/// same node logged of the partition before it, after its previous `ISR
/// updated`.
fn shrink_reason(
    at: usize,
    updated: &LoggedEvent,
    isr: &[i32],
    logged: &[(usize, &LoggedEvent)],
) -> Option<(String, LogSource)> {
    if !matches!(updated.event, Event::IsrUpdated { .. }) {
        return None;
    }
    let mine = logged
        .iter()
        .filter(|(i, e)| *i < at && e.node == updated.node)
        .rev();
    for (_, e) in mine {
        match &e.event {
            Event::IsrUpdated { .. } => return None,
            Event::IsrShrink { to, .. } if same_set(to, isr) => {
                let text = match e.text.find("Out of sync replicas") {
                    Some(i) => e.text[i..].to_string(),
                    None => e.text.clone(),
                };
                return Some((text, e.source.clone()));
            }
            _ => {}
        }
    }
    None
}

/// Why the controller removed replicas from the ISR (`prev` to `r`), when a
/// node logged it: its fencing of a removed broker whose session timed out
/// (within [`REASON_AFTER_MS`] of the record), else a removed broker's
/// controlled shutdown (up to [`SHUTDOWN_BEFORE_MS`] before it).
fn removal_reason(
    prev: &Election,
    r: &Election,
    node_wide: &[(usize, &LoggedEvent)],
    zones: &[NodeZone],
) -> Option<(String, LogSource)> {
    let removed: Vec<i32> = prev
        .isr
        .iter()
        .filter(|b| !r.isr.contains(b))
        .copied()
        .collect();
    if removed.is_empty() {
        return None;
    }
    let placed = node_wide
        .iter()
        .filter(|(_, e)| known(zone(zones, e.node)))
        .map(|(_, e)| (utc(e, zones).saturating_sub(r.timestamp), *e));
    let mut best: Option<(u8, i64, &LoggedEvent)> = None;
    for (d, e) in placed {
        let rank = match e.event {
            Event::BrokerFencing {
                broker,
                fenced: true,
                session_timeout: true,
                ..
            } if removed.contains(&broker) && d.saturating_abs() <= REASON_AFTER_MS => 0,
            Event::ControlledShutdown { broker }
                if removed.contains(&broker)
                    && (-SHUTDOWN_BEFORE_MS..=REASON_AFTER_MS).contains(&d) =>
            {
                1
            }
            _ => continue,
        };
        if best.is_none_or(|b| (rank, d.saturating_abs()) < (b.0, b.1)) {
            best = Some((rank, d.saturating_abs(), e));
        }
    }
    best.map(|(_, _, e)| (e.text.clone(), e.source.clone()))
}

/// The entry kind of a logged statement.
pub fn kind_of(e: &Event) -> &'static str {
    match e {
        Event::FetcherTruncation { .. } => "log-fetcher-truncation",
        Event::LogTruncation { .. } => "log-truncation",
        Event::LogLoaded { .. } => "log-loaded",
        Event::LogTruncationNoEffect { .. } => "log-truncation-no-effect",
        Event::TruncationBelowHighWatermark { .. } => "log-truncation-below-hw",
        Event::IsrShrink { .. } => "log-isr-shrink",
        Event::IsrReplicaRemoved { .. } => "log-isr-replica-removed",
        Event::IsrUpdated { .. } => "log-isr-updated",
        Event::BecameLeader { .. } => "log-leader",
        Event::BecameFollower { .. } => "log-follower",
        Event::UncleanPartitionChange { .. } => "log-unclean-partition-change",
        Event::UncleanElection { .. } => "log-unclean-election",
        Event::BrokerFencing { fenced: true, .. } => "log-fenced",
        Event::BrokerFencing { fenced: false, .. } => "log-unfenced",
        Event::SessionExpired { .. } => "log-session-expired",
        Event::ControlledShutdown { .. } => "log-controlled-shutdown",
        Event::ProducerAppendError { .. } => "log-producer-error",
        Event::RegistrationApplied { .. } => "log-registration-applied",
    }
}

fn list(v: &[i32]) -> String {
    format!("{v:?}")
}

/// klf's words for a logged statement.
pub fn words(e: &Event) -> String {
    match e {
        Event::FetcherTruncation {
            offset,
            reason,
            leader,
            ..
        } => {
            let from = leader.map_or(String::new(), |l| format!(" following {l}"));
            match reason {
                TruncationReason::LocalHighWatermark(hw) => {
                    format!("fetcher truncates to offset {offset}{from} (its high watermark {hw})")
                }
                TruncationReason::LeaderEpoch {
                    leader_epoch,
                    end_offset,
                } => format!(
                    "fetcher truncates to offset {offset}{from} (the leader ends epoch {leader_epoch} at {end_offset})"
                ),
            }
        }
        Event::LogTruncation { offset, .. } => format!("log truncated to offset {offset}"),
        Event::LogLoaded {
            log_start_offset,
            log_end_offset,
            high_watermark,
            ..
        } => format!(
            "log loaded at start-up: offsets [{log_start_offset}, {log_end_offset}), high watermark {high_watermark}"
        ),
        Event::LogTruncationNoEffect {
            offset, largest, ..
        } => format!("truncation to {offset} has no effect (largest offset {largest})"),
        Event::TruncationBelowHighWatermark {
            offset,
            high_watermark,
            ..
        } => format!(
            "truncates to {offset}, below its high watermark {high_watermark}: committed records removed"
        ),
        Event::IsrShrink {
            from,
            to,
            out_of_sync,
            ..
        } => format!(
            "leader shrinks the ISR {} -> {} (out of sync: {})",
            list(from),
            list(to),
            list(out_of_sync)
        ),
        Event::IsrReplicaRemoved {
            replica,
            leader,
            isr,
            leader_epoch,
            ..
        } => format!(
            "controller removes {replica} from the ISR: leader {leader}, ISR {}, leader epoch {leader_epoch}",
            list(isr)
        ),
        Event::IsrUpdated {
            isr,
            version,
            under_min_isr,
            ..
        } => format!(
            "ISR updated to {} (partition epoch {version}){}",
            list(isr),
            if *under_min_isr { ", under min ISR" } else { "" }
        ),
        Event::BecameLeader {
            leader_epoch,
            start_offset,
            partition_epoch,
            isr,
            ..
        } => {
            let mut s = format!("becomes leader in epoch {leader_epoch} from offset {start_offset}");
            if let Some(pe) = partition_epoch {
                s.push_str(&format!(", partition epoch {pe}"));
            }
            if let Some(isr) = isr {
                s.push_str(&format!(", ISR {}", list(isr)));
            }
            s
        }
        Event::BecameFollower {
            leader_epoch,
            start_offset,
            partition_epoch,
            leader,
            ..
        } => {
            let mut s = match leader {
                Some(l) => format!("follows {l} in epoch {leader_epoch}"),
                None => format!("becomes follower in epoch {leader_epoch}"),
            };
            s.push_str(&format!(" from offset {start_offset}"));
            if let Some(pe) = partition_epoch {
                s.push_str(&format!(", partition epoch {pe}"));
            }
            s
        }
        Event::UncleanPartitionChange {
            isr,
            leader,
            partition_epoch,
            ..
        } => {
            let mut s = "controller: UNCLEAN partition change".to_string();
            if let Some((a, b)) = leader {
                s.push_str(&format!(", leader {a} -> {b}"));
            }
            if let Some((a, b)) = isr {
                s.push_str(&format!(", ISR {} -> {}", list(a), list(b)));
            }
            if let Some((a, b)) = partition_epoch {
                s.push_str(&format!(", partition epoch {a} -> {b}"));
            }
            s
        }
        Event::UncleanElection { leader, .. } => {
            format!("controller elects {leader} leader uncleanly")
        }
        Event::BrokerFencing {
            broker,
            fenced,
            session_timeout,
            ..
        } => match (fenced, session_timeout) {
            (true, true) => format!("controller fences broker {broker}: its session timed out"),
            (true, false) => format!("controller: broker {broker} fenced"),
            (false, _) => format!("controller: broker {broker} unfenced"),
        },
        Event::SessionExpired { .. } => "ZooKeeper session expired".to_string(),
        Event::ControlledShutdown { broker } => {
            format!("broker {broker} begins a controlled shutdown")
        }
        Event::ProducerAppendError {
            producer_id,
            offset,
            kind,
            ..
        } => {
            let what = match kind {
                ProducerErrorKind::OutOfOrderSequence { .. } => "out of order sequence",
                ProducerErrorKind::InvalidSequenceForNewEpoch { .. } => {
                    "invalid sequence for a new producer epoch"
                }
                ProducerErrorKind::InvalidProducerEpoch { .. } => "producer epoch fenced",
                ProducerErrorKind::Other => "append failed",
            };
            let mut s = format!("producer append error: {what}");
            if let Some(p) = producer_id {
                s.push_str(&format!(", producer {p}"));
            }
            if let Some(o) = offset {
                s.push_str(&format!(", offset {o}"));
            }
            s
        }
        Event::RegistrationApplied {
            as_leader,
            leader,
            leader_epoch,
            isr,
            partition_epoch,
            ..
        } => {
            let mut s = format!(
                "applies a change as {}",
                if *as_leader { "leader" } else { "follower" }
            );
            if let Some(pe) = partition_epoch {
                s.push_str(&format!(": partition epoch {pe}"));
            }
            if let Some(isr) = isr {
                s.push_str(&format!(", ISR {}", list(isr)));
            }
            if let Some(l) = leader {
                s.push_str(&format!(", leader {l}"));
            }
            if let Some(le) = leader_epoch {
                s.push_str(&format!(" in epoch {le}"));
            }
            s
        }
    }
}

/// What one metadata record of the partition says, and its kind.
fn record_words(
    prev: Option<&Election>,
    r: &Election,
    from_creation: bool,
) -> (&'static str, String) {
    let at = format!(
        "partition epoch {}, metadata offset {}",
        r.partition_epoch, r.metadata_offset
    );
    let Some(prev) = prev else {
        let kind = if from_creation {
            "partition-created"
        } else {
            "partition-state"
        };
        let what = if from_creation {
            "partition created"
        } else {
            "partition state (the metadata log's first record of it)"
        };
        return (
            kind,
            format!(
                "{what}: leader {}, leader epoch {}, ISR {} ({at})",
                r.leader,
                r.leader_epoch,
                list(&r.isr)
            ),
        );
    };
    let isr = if same_set(&prev.isr, &r.isr) {
        format!("ISR {}", list(&r.isr))
    } else {
        format!("ISR {} -> {}", list(&prev.isr), list(&r.isr))
    };
    if !r.leader_changed {
        return ("isr-changed", format!("{isr}, leader {} ({at})", r.leader));
    }
    if r.leader < 0 {
        return (
            "no-leader",
            format!("no leader in epoch {}, {isr} ({at})", r.leader_epoch),
        );
    }
    if r.unclean {
        return (
            "unclean-election",
            format!(
                "UNCLEAN election: {} leads epoch {} from outside the ISR {}; {isr} ({at})",
                r.leader,
                r.leader_epoch,
                list(&prev.isr)
            ),
        );
    }
    (
        "leader-elected",
        format!(
            "{} elected leader in epoch {}, {isr} ({at})",
            r.leader, r.leader_epoch
        ),
    )
}

/// An incident entry's code and words for a quorum event; `None` for a
/// voter set that changes nothing.
fn quorum_words(q: &QuorumEvent) -> Option<(&'static str, String)> {
    let c = &q.change;
    let at = format!(
        "quorum epoch {}, metadata offset {}",
        c.epoch, c.metadata_offset
    );
    let leader = c.leader.map_or("-".to_string(), |l| l.to_string());
    let ids = |v: &[i32]| format!("{v:?}");
    Some(match q.event {
        QuorumEventKind::Elected => (
            "controller-elected",
            format!(
                "controller {leader} elected by voters {} ({at})",
                ids(&c.voters)
            ),
        ),
        QuorumEventKind::Reelected => (
            "controller-elected",
            format!("controller {leader} elected again ({at})"),
        ),
        QuorumEventKind::Failover => (
            "controller-failover",
            format!(
                "controller failover: {} -> {leader} ({at})",
                q.previous_leader.map_or("-".to_string(), |l| l.to_string())
            ),
        ),
        QuorumEventKind::Voters => (
            "quorum-voters",
            format!("voter set {} ({at})", ids(&c.voters)),
        ),
        QuorumEventKind::VotersChanged => (
            "quorum-voters",
            format!(
                "voter set {} (added {}, removed {}; {at})",
                ids(&c.voters),
                ids(&q.added),
                ids(&q.removed)
            ),
        ),
        QuorumEventKind::VotersRewritten => return None,
    })
}

fn broker_words(b: &BrokerChange) -> (&'static str, String) {
    let (kind, what) = match b.kind {
        BrokerChangeKind::Registered => ("broker-registered", "registered"),
        BrokerChangeKind::Unregistered => ("broker-unregistered", "unregistered"),
        BrokerChangeKind::Fenced => ("broker-fenced", "fenced"),
        BrokerChangeKind::Unfenced => ("broker-unfenced", "unfenced"),
        BrokerChangeKind::ControlledShutdown => {
            ("broker-controlled-shutdown", "in controlled shutdown")
        }
    };
    (
        kind,
        format!(
            "broker {} {what} (broker epoch {}, metadata offset {})",
            b.broker, b.broker_epoch, b.metadata_offset
        ),
    )
}

/// Everything one partition's incident timeline is built from.
pub struct IncidentInput<'a> {
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// Its topic id (`partition.metadata`), to find the controller's
    /// unclean elections, which name the topic by id.
    pub topic_id: Option<[u8; 16]>,
    /// What it loses (`klf diff`'s loss); `None`: not diffed.
    pub loss: Option<&'a crate::model::loss::PartitionLoss>,
    /// Its history in the metadata log.
    pub history: Option<&'a PartitionHistory>,
    /// Without one, why.
    pub history_missing: Option<&'a str>,
    /// The metadata log read (record sources, broker records).
    pub controller: Option<&'a ControllerView>,
    /// The nodes holding its replicas (captured or assigned).
    pub nodes: BTreeSet<i32>,
    /// The first batch of each epoch its replicas hold, where read.
    pub boundaries: Vec<EpochBoundary>,
    /// Its checkpoints' modification times.
    pub checkpoints: Vec<CheckpointTime>,
    /// The statements the nodes logged about it, per node in the order
    /// logged, each with its position in the run's statements.
    pub logged: Vec<(usize, &'a LoggedEvent)>,
    /// The run's node-wide statements (fencings, session expiries,
    /// controlled shutdowns, unclean elections by topic id), with their
    /// positions: those of its nodes are taken.
    pub node_wide: &'a [(usize, &'a LoggedEvent)],
    /// Each node's offset from UTC.
    pub zones: &'a [NodeZone],
}

/// An entry before it is placed: its order key within its node.
struct Pending {
    key: i64,
    entry: IncidentEntry,
}

/// The incident timeline of one partition.
pub fn partition_incident(input: IncidentInput<'_>) -> PartitionIncident {
    let IncidentInput {
        topic,
        partition,
        topic_id,
        loss,
        history,
        history_missing,
        controller,
        nodes,
        boundaries,
        checkpoints,
        logged,
        node_wide,
        zones,
    } = input;
    // the node-wide statements that concern this partition
    let concerns = |e: &LoggedEvent| match &e.event {
        Event::BrokerFencing { broker, .. } | Event::ControlledShutdown { broker } => {
            nodes.contains(broker)
        }
        Event::SessionExpired { .. } => nodes.contains(&e.node),
        Event::UncleanElection {
            topic_id: id,
            partition: p,
            ..
        } => {
            *p == partition
                && topic_id
                    .is_some_and(|t| crate::format::props::Uuid::parse(id).is_ok_and(|u| u.0 == t))
        }
        _ => false,
    };
    let wide: Vec<(usize, &LoggedEvent)> = node_wide
        .iter()
        .filter(|(_, e)| concerns(e))
        .copied()
        .collect();
    let brokers = controller.map(|c| c.brokers.as_slice()).unwrap_or(&[]);
    let isr_changes = compare_isr(history, history_missing, &logged, &wide, zones, brokers);
    let creation = history
        .filter(|h| h.from_creation)
        .and_then(|h| h.changes.first())
        .map(|r| r.timestamp);
    let mut pending: Vec<Pending> = Vec::new();
    let metadata_source = |offset: i64| -> EntrySource {
        let c = controller;
        match c.and_then(|c| c.record_source(offset)) {
            Some((file, byte)) => EntrySource {
                file: file.to_path_buf(),
                line: None,
                byte: Some(byte),
            },
            None => EntrySource {
                file: c.and_then(|c| c.source.clone()).unwrap_or_default(),
                line: None,
                byte: None,
            },
        }
    };
    let blank = |time: i64, kind: &'static str, text: String, source: EntrySource| IncidentEntry {
        time,
        node: None,
        topic: None,
        partition: None,
        kind,
        text,
        source,
        logged_at: None,
        logged: None,
        utc_offset: None,
        zone: None,
        reason: None,
    };
    if let Some(h) = history {
        let mut prev: Option<&Election> = None;
        for r in &h.changes {
            let (kind, text) = record_words(prev, r, h.from_creation);
            let mut e = blank(r.timestamp, kind, text, metadata_source(r.metadata_offset));
            e.topic = Some(topic.to_string());
            e.partition = Some(partition);
            e.reason = isr_changes
                .changes
                .iter()
                .find(|c| c.metadata_offset == Some(r.metadata_offset))
                .and_then(|c| c.reason.clone());
            pending.push(Pending {
                key: r.timestamp,
                entry: e,
            });
            prev = Some(r);
        }
    }
    if let Some(c) = controller {
        for b in c
            .brokers
            .iter()
            .filter(|b| nodes.contains(&b.broker) && creation.is_none_or(|t| b.timestamp >= t))
        {
            let (kind, text) = broker_words(b);
            let mut e = blank(b.timestamp, kind, text, metadata_source(b.metadata_offset));
            e.node = None;
            pending.push(Pending {
                key: b.timestamp,
                entry: e,
            });
        }
    }
    if let Some(c) = controller {
        // the quorum's elections and voter changes from the partition's
        // creation on: a controller failover is when the controller that
        // elects the partition's leaders changed hands
        for q in crate::analysis::timeline::quorum_events(&c.quorum)
            .iter()
            .filter(|q| creation.is_none_or(|t| q.change.timestamp >= t))
        {
            let Some((kind, text)) = quorum_words(q) else {
                continue;
            };
            let e = blank(
                q.change.timestamp,
                kind,
                text,
                metadata_source(q.change.metadata_offset),
            );
            pending.push(Pending {
                key: q.change.timestamp,
                entry: e,
            });
        }
    }
    for b in boundaries {
        let mut e = blank(
            b.timestamp,
            "epoch-first-batch",
            format!(
                "broker {}: first batch of epoch {} at offset {} (its first timestamp)",
                b.broker, b.epoch, b.offset
            ),
            b.source,
        );
        e.node = Some(b.broker);
        e.topic = Some(topic.to_string());
        e.partition = Some(partition);
        pending.push(Pending {
            key: b.timestamp,
            entry: e,
        });
    }
    for c in checkpoints {
        let (kind, name) = if c.high_watermarks {
            ("hw-checkpoint-modified", "replication-offset-checkpoint")
        } else {
            ("epoch-checkpoint-modified", "leader-epoch-checkpoint")
        };
        let mut e = blank(
            c.modified,
            kind,
            format!("broker {}'s {name} last modified: {}", c.broker, c.says),
            EntrySource {
                file: c.file,
                line: None,
                byte: None,
            },
        );
        e.node = Some(c.broker);
        if !c.high_watermarks {
            e.topic = Some(topic.to_string());
            e.partition = Some(partition);
        }
        pending.push(Pending {
            key: c.modified,
            entry: e,
        });
    }
    // the log lines: each node's in the order it logged them (a key that
    // never goes back within a node keeps that order through the sort)
    let mut lines: Vec<(usize, &LoggedEvent, bool)> =
        logged.iter().map(|&(i, e)| (i, e, true)).collect();
    lines.extend(wide.iter().map(|&(i, e)| (i, e, false)));
    lines.sort_by_key(|l| l.0);
    lines.dedup_by_key(|l| l.0);
    // past the cap, each node's first lines, an equal share each
    let mut lines_left_out = 0u64;
    if lines.len() > MAX_LOG_LINES {
        let nodes: BTreeSet<i32> = lines.iter().map(|l| l.1.node).collect();
        let share = MAX_LOG_LINES / nodes.len().max(1);
        let mut taken: HashMap<i32, usize> = HashMap::new();
        lines.retain(|l| {
            let n = taken.entry(l.1.node).or_default();
            *n += 1;
            let keep = *n <= share;
            lines_left_out += u64::from(!keep);
            keep
        });
    }
    let mut latest: HashMap<i32, i64> = HashMap::new();
    for (_, e, about) in lines {
        let time = utc(e, zones);
        if !about && creation.is_some_and(|t| time < t) {
            continue;
        }
        let key = latest.entry(e.node).or_insert(i64::MIN);
        *key = (*key).max(time);
        let z = zone(zones, e.node);
        let mut entry = blank(
            time,
            kind_of(&e.event),
            words(&e.event),
            EntrySource {
                file: e.source.file.clone(),
                line: Some(e.source.line),
                byte: None,
            },
        );
        entry.node = Some(e.node);
        if about {
            entry.topic = Some(topic.to_string());
            entry.partition = Some(partition);
        }
        if matches!(e.event, Event::UncleanElection { .. }) {
            entry.topic = Some(topic.to_string());
            entry.partition = Some(partition);
        }
        entry.logged_at = Some(e.time.clone());
        entry.logged = Some(e.text.clone());
        entry.utc_offset = Some(z.map_or_else(|| offset_text(0), |z| z.utc_offset.clone()));
        entry.zone = Some(z.map_or(ZoneSource::Assumed, |z| z.how));
        pending.push(Pending { key: *key, entry });
    }
    pending.sort_by_key(|p| p.key);
    PartitionIncident {
        topic: topic.to_string(),
        partition,
        loses_data: loss.is_some_and(|l| l.any()),
        records_lost: loss.map_or(0, |l| l.records),
        committed_proven: loss.map_or(0, |l| l.committed_proven),
        committed_possible: loss.map_or(Some(0), |l| l.committed_possible),
        committed_unknown: loss.map_or(0, |l| l.committed_unknown),
        entries: pending.into_iter().map(|p| p.entry).collect(),
        log_lines_left_out: lines_left_out,
        isr_changes,
    }
}

/// How much an entry tells of the incident when a timeline is cut short:
/// the partition's own records and the statements of truncations,
/// elections and ISR changes first (lower first).
fn weight(kind: &str) -> u8 {
    match kind {
        "partition-created" | "partition-state" | "isr-changed" | "leader-elected"
        | "unclean-election" | "no-leader" | "epoch-first-batch" => 0,
        "log-unclean-partition-change"
        | "log-unclean-election"
        | "log-truncation-below-hw"
        | "log-fetcher-truncation"
        | "log-truncation"
        | "log-isr-updated"
        | "log-isr-shrink"
        | "log-isr-replica-removed"
        | "log-leader"
        | "log-loaded" => 1,
        "broker-fenced"
        | "log-fenced"
        | "log-controlled-shutdown"
        | "log-session-expired"
        | "hw-checkpoint-modified"
        | "epoch-checkpoint-modified" => 2,
        _ => 3,
    }
}

/// Keeps at most `max` of `incident`'s entries, those that tell most of
/// it (each kind's earliest first), still in time order; returns how many
/// were left out.
pub fn keep_entries(incident: &mut PartitionIncident, max: usize) -> u64 {
    let n = incident.entries.len();
    if n <= max {
        return 0;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (weight(incident.entries[i].kind), i));
    let mut keep: Vec<usize> = order.into_iter().take(max).collect();
    keep.sort_unstable();
    let mut it = keep.into_iter().peekable();
    let mut i = 0;
    incident.entries.retain(|_| {
        let kept = it.peek() == Some(&i);
        if kept {
            it.next();
        }
        i += 1;
        kept
    });
    (n - max) as u64
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::format::kafka_log::{Level, Partition};
    use crate::model::history::{BrokerChange, BrokerChangeKind};
    use std::path::PathBuf;

    fn rec(offset: i64, leader: i32, le: i32, pe: i32, isr: &[i32], ts: i64) -> Election {
        Election {
            metadata_offset: offset,
            leader,
            leader_epoch: le,
            partition_epoch: pe,
            isr: isr.to_vec(),
            elr: None,
            last_known_elr: None,
            leader_recovery_state: 0,
            leader_changed: pe == 0,
            unclean: false,
            timestamp: ts,
        }
    }

    fn logged(node: i32, line: u64, naive: i64, event: Event) -> LoggedEvent {
        LoggedEvent {
            node,
            source: LogSource {
                file: PathBuf::from(format!("broker-{node}/server.log")),
                line,
            },
            time: format!("at {naive}"),
            time_ms: naive,
            level: Level::Info,
            event,
            text: format!("line {line}"),
        }
    }

    fn part() -> Partition {
        Partition {
            topic: "t".to_string(),
            partition: 0,
        }
    }

    fn history() -> PartitionHistory {
        PartitionHistory {
            replicas: vec![1, 2, 3],
            changes: vec![
                rec(10, 1, 0, 0, &[1, 2, 3], 1_000_000),
                rec(20, 1, 0, 1, &[1, 2], 2_000_000),
                rec(30, 1, 0, 2, &[1], 3_000_000),
            ],
            from_creation: true,
        }
    }

    fn view() -> ControllerView {
        let mut c = ControllerView::default();
        c.partitions.insert(("t".to_string(), 0), history());
        c
    }

    const TWO_HOURS: i64 = 2 * 3_600_000;

    #[test]
    fn offsets_read_and_written() {
        use crate::model::timeline::parse_offset;
        assert_eq!(parse_offset("+02:00"), Some(120));
        assert_eq!(parse_offset("-05:30"), Some(-330));
        assert_eq!(parse_offset("+0545"), Some(345));
        assert_eq!(parse_offset("Z"), Some(0));
        assert_eq!(parse_offset("+19:00"), None);
        assert_eq!(parse_offset("02:00"), None);
        assert_eq!(parse_offset("+2:60"), None);
        assert_eq!(offset_text(-330), "-05:30");
        assert_eq!(offset_text(0), "+00:00");
    }

    /// A leader two hours east of UTC: its `ISR updated` lines, logged
    /// moments after their records, give +02:00; its ISR changes agree
    /// with the records, the shrink's reason is Kafka's.
    #[test]
    fn a_zone_inferred_and_the_isr_changes_agree() {
        let events = vec![
            logged(
                1,
                5,
                1_990_000 + TWO_HOURS,
                Event::IsrShrink {
                    partition: part(),
                    from: vec![1, 2, 3],
                    to: vec![1, 2],
                    reason: "Out of sync replicas".to_string(),
                    out_of_sync: vec![3],
                },
            ),
            logged(
                1,
                6,
                2_000_040 + TWO_HOURS,
                Event::IsrUpdated {
                    partition: part(),
                    isr: vec![1, 2],
                    version: 1,
                    under_min_isr: false,
                },
            ),
            logged(
                1,
                9,
                3_000_020 + TWO_HOURS,
                Event::IsrUpdated {
                    partition: part(),
                    isr: vec![1],
                    version: 2,
                    under_min_isr: false,
                },
            ),
            logged(
                1,
                12,
                3_500_000 + TWO_HOURS,
                Event::IsrUpdated {
                    partition: part(),
                    isr: vec![1, 3],
                    version: 3,
                    under_min_isr: false,
                },
            ),
        ];
        let c = view();
        let zones = infer_zones(&events, Some(&c), &[]);
        assert_eq!(zones.len(), 1);
        assert_eq!(zones[0].how, ZoneSource::Inferred);
        assert_eq!(zones[0].utc_offset, "+02:00");
        assert_eq!(zones[0].statements, 2);
        assert_eq!(zones[0].max_residual_ms, Some(40));
        let with: Vec<(usize, &LoggedEvent)> = events.iter().enumerate().collect();
        let h = history();
        let cmp = compare_isr(Some(&h), None, &with, &[], &zones, &[]);
        assert!(cmp.compared);
        let verdicts: Vec<(i32, IsrVerdict)> = cmp
            .changes
            .iter()
            .map(|c| (c.partition_epoch, c.verdict))
            .collect();
        assert_eq!(
            verdicts,
            vec![
                (1, IsrVerdict::Agrees),
                (2, IsrVerdict::Agrees),
                (3, IsrVerdict::AfterMetadataLog)
            ]
        );
        assert_eq!(cmp.changes[0].reason.as_deref(), Some("line 5"));
        assert_eq!(cmp.changes[0].logged.as_ref().unwrap().time, 2_000_040);
        assert_eq!(cmp.changes[1].reason, None);
    }

    /// Statements two minutes from their records (logs of another run)
    /// give no offset: times are assumed, nothing is compared.
    #[test]
    fn statements_at_no_quarter_hour_leave_the_zone_assumed() {
        let events = vec![logged(
            1,
            6,
            2_000_000 + 124_000,
            Event::IsrUpdated {
                partition: part(),
                isr: vec![1, 2],
                version: 1,
                under_min_isr: false,
            },
        )];
        let c = view();
        let zones = infer_zones(&events, Some(&c), &[]);
        assert_eq!(zones[0].how, ZoneSource::Assumed);
        assert!(zones[0].text.contains("+124.0 s"), "{}", zones[0].text);
        let with: Vec<(usize, &LoggedEvent)> = events.iter().enumerate().collect();
        let h = history();
        let cmp = compare_isr(Some(&h), None, &with, &[], &zones, &[]);
        assert!(!cmp.compared);
        // given, the offset is used as it is
        let given = infer_zones(&events, Some(&c), &[(1, 0)]);
        assert_eq!(given[0].how, ZoneSource::Given);
        assert_eq!(given[0].max_residual_ms, Some(124_000));
    }

    /// A record no node stated while the logs span its time is
    /// `not-logged`; a statement of a partition epoch within the metadata
    /// log's that no record has is `no-record`; another ISR is `differs`.
    #[test]
    fn records_and_statements_that_do_not_meet() {
        let mut h = history();
        h.changes.push(rec(40, 1, 0, 4, &[1, 2], 5_000_000));
        let events = vec![
            logged(
                1,
                1,
                500_000,
                Event::BecameLeader {
                    partition: part(),
                    leader_epoch: 0,
                    start_offset: 0,
                    high_watermark: Some(0),
                    partition_epoch: Some(0),
                    isr: Some(vec![1, 2, 3]),
                    previous_leader_epoch: Some(-1),
                },
            ),
            logged(
                1,
                2,
                2_000_010,
                Event::IsrUpdated {
                    partition: part(),
                    isr: vec![1, 3],
                    version: 1,
                    under_min_isr: false,
                },
            ),
            logged(
                1,
                3,
                3_000_010,
                Event::RegistrationApplied {
                    partition: part(),
                    as_leader: true,
                    leader: Some(1),
                    leader_epoch: Some(0),
                    isr: Some(vec![1]),
                    partition_epoch: Some(2),
                },
            ),
            logged(
                1,
                4,
                5_500_000,
                Event::IsrUpdated {
                    partition: part(),
                    isr: vec![1, 2, 3],
                    version: 5,
                    under_min_isr: false,
                },
            ),
        ];
        let mut c = ControllerView::default();
        c.partitions.insert(("t".to_string(), 0), h.clone());
        let zones = infer_zones(&events, Some(&c), &[]);
        assert_eq!(zones[0].how, ZoneSource::Inferred, "{}", zones[0].text);
        let with: Vec<(usize, &LoggedEvent)> = events.iter().enumerate().collect();
        let cmp = compare_isr(Some(&h), None, &with, &[], &zones, &[]);
        let verdicts: Vec<(i32, IsrVerdict)> = cmp
            .changes
            .iter()
            .map(|c| (c.partition_epoch, c.verdict))
            .collect();
        assert_eq!(
            verdicts,
            vec![
                (1, IsrVerdict::Differs),
                (2, IsrVerdict::Agrees),
                (4, IsrVerdict::NotLogged),
                (5, IsrVerdict::AfterMetadataLog)
            ]
        );
        // every replica fenced before the record (broker 3 in the same
        // event, written with it): no running broker could state it
        let fence = |broker: i32, offset: i64, timestamp: i64| BrokerChange {
            metadata_offset: offset,
            timestamp,
            broker,
            broker_epoch: 7,
            kind: BrokerChangeKind::Fenced,
        };
        let down = [
            fence(1, 35, 4_000_000),
            fence(2, 36, 4_000_000),
            fence(3, 41, 5_000_000),
        ];
        let cmp = compare_isr(Some(&h), None, &with, &[], &zones, &down);
        assert_eq!(cmp.changes[2].verdict, IsrVerdict::ReplicasDown);
        // one replica running (broker 3 fenced later, in another event):
        // the record should have been stated
        let mut later = down.clone();
        later[2].timestamp = 6_000_000;
        let cmp = compare_isr(Some(&h), None, &with, &[], &zones, &later);
        assert_eq!(cmp.changes[2].verdict, IsrVerdict::NotLogged);
        // the controller's fencing of the removed broker is the reason
        let fencing = logged(
            100,
            7,
            3_000_001,
            Event::BrokerFencing {
                broker: 2,
                epoch: Some(9),
                fenced: true,
                session_timeout: true,
            },
        );
        let mut zones = zones;
        zones.push(NodeZone {
            node: 100,
            how: ZoneSource::Given,
            ..zones[0].clone()
        });
        let wide = vec![(99, &fencing)];
        let cmp = compare_isr(Some(&h), None, &with, &wide, &zones, &[]);
        assert_eq!(cmp.changes[1].reason.as_deref(), Some("line 7"));
    }

    /// A million statements of one partition: each node keeps an equal
    /// share of the cap, the rest counted.
    #[test]
    fn log_lines_past_the_cap_are_counted() {
        let events: Vec<LoggedEvent> = (0..(MAX_LOG_LINES + 10) as u64)
            .map(|i| {
                logged(
                    1 + (i % 2) as i32,
                    i + 1,
                    i as i64,
                    Event::LogTruncation {
                        partition: part(),
                        dir: None,
                        offset: 1,
                    },
                )
            })
            .collect();
        let with: Vec<(usize, &LoggedEvent)> = events.iter().enumerate().collect();
        let inc = partition_incident(IncidentInput {
            topic: "t",
            partition: 0,
            topic_id: None,
            loss: None,
            history: None,
            history_missing: None,
            controller: None,
            nodes: BTreeSet::new(),
            boundaries: Vec::new(),
            checkpoints: Vec::new(),
            logged: with,
            node_wide: &[],
            zones: &[],
        });
        assert_eq!(inc.entries.len(), MAX_LOG_LINES);
        assert_eq!(inc.log_lines_left_out, 10);
        assert_eq!(
            inc.entries.iter().filter(|e| e.node == Some(1)).count(),
            MAX_LOG_LINES / 2
        );
        assert!(!inc.isr_changes.compared);
    }

    /// Entries come in time order, each node's lines in its own order even
    /// where its clock stepped back.
    #[test]
    fn entries_in_time_order_each_nodes_own_order_kept() {
        let h = history();
        let c = view();
        let events = vec![
            logged(
                2,
                1,
                2_500_000,
                Event::LogTruncation {
                    partition: part(),
                    dir: None,
                    offset: 5,
                },
            ),
            // the clock steps back: still after line 1
            logged(
                2,
                2,
                1_500_000,
                Event::LogTruncation {
                    partition: part(),
                    dir: None,
                    offset: 4,
                },
            ),
        ];
        let zones = infer_zones(&events, Some(&c), &[]);
        let with: Vec<(usize, &LoggedEvent)> = events.iter().enumerate().collect();
        let inc = partition_incident(IncidentInput {
            topic: "t",
            partition: 0,
            topic_id: None,
            loss: None,
            history: Some(&h),
            history_missing: None,
            controller: Some(&c),
            nodes: [1, 2, 3].into_iter().collect(),
            boundaries: Vec::new(),
            checkpoints: Vec::new(),
            logged: with,
            node_wide: &[],
            zones: &zones,
        });
        let kinds: Vec<&str> = inc.entries.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![
                "partition-created",
                "isr-changed",
                "log-truncation",
                "log-truncation",
                "isr-changed"
            ]
        );
        assert_eq!(inc.entries[2].source.line, Some(1));
        assert_eq!(inc.entries[3].source.line, Some(2));
        assert_eq!(inc.entries[3].zone, Some(ZoneSource::Assumed));
    }
}
