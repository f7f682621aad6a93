//! The election pipeline: for a partition whose in-sync replicas are gone,
//! every captured replica as the candidate leader. Each candidate is the
//! diff's reference in turn: what the other replicas would truncate, what
//! the partition would lose (counted once, with its commitment), and whom
//! that loss hurts (hanging transactions, consumer groups). Candidates are
//! ranked least loss first; the one Kafka's own rules would pick is marked.

use crate::analysis::diff::ReferenceHint;
use crate::engine::diff::{diff_partition_replicas, DiffRequest};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::engine::impact::{coordinator, impact_of};
use crate::format::names::is_legal_topic_name;
use crate::model::elect::{Candidate, PartitionElection};
use crate::model::Capture;
use crate::model::ReplicaProblem;

/// The loss part of the ranking key: the committed records a candidate
/// may lose (the upper bound, or every lost record when the bound is
/// unknown), then the proven ones, then every lost record.
fn loss_key(c: &Candidate) -> (u64, u64, u64) {
    let l = &c.loss;
    (
        l.committed_possible.unwrap_or(l.records),
        l.committed_proven,
        l.records,
    )
}

/// The ranking key: the loss, then the applications it hurts, then
/// Kafka's own pick before the others (of two that lose the same, the
/// one Kafka elects by itself, cleanly when it is in the ELR, needs no
/// command), then the broker id.
fn key(c: &Candidate) -> ((u64, u64, u64), usize, usize, bool, i32) {
    (
        loss_key(c),
        c.hanging_transactions(),
        c.groups_affected(),
        !c.kafka_would_pick,
        c.broker,
    )
}

/// The elections of a capture ([`elect_capture`]).
pub struct ElectRun<'c> {
    /// One per selected partition with two or more replicas.
    pub partitions: Vec<PartitionElection>,
    /// Problems met reading, partition by partition (each once, whoever
    /// leads).
    pub problems: Vec<ReplicaProblem>,
    /// The evidence used.
    pub evidence: Evidence<'c>,
}

/// Every selected partition with two or more replicas, each candidate in
/// turn.
pub fn elect_capture<'c>(capture: &'c Capture, req: &DiffRequest) -> ElectRun<'c> {
    let evidence = Evidence::gather(capture);
    let options = evidence.diff_options(req.protocol);
    let coord = coordinator(&evidence);
    let mut out = Vec::new();
    let mut all_problems = Vec::new();
    for ((topic, partition), reps) in &capture.partitions {
        if reps.len() < 2
            || req.topic.as_ref().is_some_and(|t| t != topic)
            || req.partition.is_some_and(|p| p != *partition)
        {
            continue;
        }
        let ids = broker_ids(reps);
        let history = evidence.history(topic, *partition);
        let assignment = history.map_or_else(|| ids.clone(), |h| h.replicas.clone());
        let current = history.and_then(|h| h.current());
        let isr = current.map(|e| e.isr.clone());
        let elr = current
            .and_then(|e| e.elr.clone())
            .filter(|e| !e.is_empty());
        let captured = |b: &i32| ids.contains(b);
        let leader = current
            .map(|e| (e.leader, e.leader_epoch, e.metadata_offset))
            .filter(|l| l.0 >= 0);
        let (pick, rule) = match (&isr, &elr) {
            _ if leader.is_some() => {
                let (l, e, m) = leader.unwrap_or_default();
                (
                    Some(l),
                    format!("already elected: broker {l} leads (leader epoch {e}, metadata offset {m}): no election to make; the ranking says what another leader would have cost"),
                )
            }
            (_, Some(elr)) => (
                assignment.iter().find(|b| elr.contains(b) && captured(b)).copied(),
                format!(
                    "clean: the first eligible leader replica (ELR {elr:?}, KIP-966) in assignment order that is alive; if none is, unclean: the first live replica in assignment order"
                ),
            ),
            (Some(isr), None) => (
                assignment.iter().find(|b| !isr.contains(b) && captured(b)).copied(),
                format!(
                    "no leader, the ISR {isr:?} gone: unclean, the first replica in assignment order {assignment:?} that is alive, with unclean.leader.election.enable=true or kafka-leader-election --election-type unclean"
                ),
            ),
            (None, None) => (
                None,
                "unknown: the capture holds no metadata log that knows the partition, so its leader, assignment order, ISR and ELR are unknown (an unclean election takes the first live replica in assignment order)".to_string(),
            ),
        };
        let mut problems = Vec::new();
        let mut read_problems: Option<Vec<ReplicaProblem>> = None;
        let mut candidates: Vec<Candidate> = ids
            .iter()
            .map(|&b| {
                let result = diff_partition_replicas(
                    &evidence,
                    topic,
                    *partition,
                    reps,
                    ReferenceHint::Explicit { broker: b },
                    &options,
                    req.mode,
                );
                let impact = result.loss.any().then(|| {
                    impact_of(
                        &evidence,
                        reps,
                        &result.diff,
                        &result.loss,
                        &result.logs,
                        &coord,
                        &mut problems,
                    )
                });
                // the reading problems are the same whoever leads: once
                if read_problems.is_none() {
                    read_problems = Some(result.problems);
                }
                Candidate {
                    broker: b,
                    diff: result.diff,
                    loss: result.loss,
                    impact: impact.flatten(),
                    rank: 0,
                    kafka_would_pick: Some(b) == pick,
                    least_loss: false,
                }
            })
            .collect();
        problems.extend(read_problems.unwrap_or_default());
        candidates.sort_by_key(key);
        let best = candidates.first().map(loss_key);
        for (i, c) in candidates.iter_mut().enumerate() {
            c.rank = i + 1;
            c.least_loss = Some(loss_key(c)) == best;
        }
        let mut election = PartitionElection {
            topic: topic.clone(),
            partition: *partition,
            assignment,
            isr,
            elr,
            kafka_rule: rule,
            leader: leader.map(|l| l.0),
            leader_since: leader.map(|l| (l.1, l.2)),
            leader_unknown: history
                .is_none()
                .then(|| evidence.history_missing(topic, *partition))
                .flatten(),
            candidates,
            commands: Vec::new(),
        };
        election.commands = election
            .candidates
            .first()
            .map_or_else(Vec::new, |c| commands(&election, c.broker));
        out.push(election);
        all_problems.append(&mut problems);
    }
    ElectRun {
        partitions: out,
        problems: all_problems,
        evidence,
    }
}

/// The commands that carry out electing `chosen` (printed, never run):
/// when Kafka's rule already picks it, the unclean election; else a
/// reassignment that puts it first, then the election. None when the
/// partition has a leader already, or when the capture cannot tell whether
/// it has one (what to check first is said instead).
fn commands(p: &PartitionElection, chosen: i32) -> Vec<String> {
    if !is_legal_topic_name(&p.topic) {
        return Vec::new();
    }
    // Who leads now is unknown: an election may not be needed at all, and
    // the assignment order a reassignment would change is unknown too.
    if p.leader_unknown.is_some() {
        return Vec::new();
    }
    let elect = format!(
        "kafka-leader-election.sh --bootstrap-server BROKER --election-type unclean --topic {} --partition {}",
        p.topic, p.partition
    );
    // Already elected: moving leadership is a decision with the leader up,
    // not an election; nothing to print.
    if p.leader.is_some() {
        return Vec::new();
    }
    // A member of the ISR (or ELR) needs no unclean election: back up, it
    // is elected cleanly.
    let member = |s: &Option<Vec<i32>>| s.as_ref().is_some_and(|s| s.contains(&chosen));
    if member(&p.isr) || member(&p.elr) {
        return vec![format!(
            "# broker {chosen} is in the {}: if it is down, start it again; Kafka elects it cleanly, losing nothing it acknowledged (no unclean election)",
            if member(&p.isr) { "ISR" } else { "ELR (eligible leader replicas)" }
        )];
    }
    let picks = p
        .candidates
        .iter()
        .any(|c| c.broker == chosen && c.kafka_would_pick);
    if picks {
        return vec![elect];
    }
    let mut order = vec![chosen];
    order.extend(p.assignment.iter().copied().filter(|b| *b != chosen));
    let json = format!(
        "{{\"version\":1,\"partitions\":[{{\"topic\":{},\"partition\":{},\"replicas\":{:?}}}]}}",
        serde_json::Value::String(p.topic.clone()),
        p.partition,
        order
    );
    vec![
        format!("echo '{json}' > reorder.json"),
        "kafka-reassign-partitions.sh --bootstrap-server BROKER --reassignment-json-file reorder.json --execute".to_string(),
        elect,
    ]
}
