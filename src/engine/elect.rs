//! The election pipeline: for a partition whose in-sync replicas are gone,
//! every captured replica as the candidate leader. Each candidate is the
//! diff's reference in turn: what the other replicas would truncate, what
//! the partition would lose (counted once, with its commitment), and whom
//! that loss hurts (hanging transactions, consumer groups). Candidates are
//! ranked least loss first; the one Kafka's own rules would pick is marked.

use crate::analysis::diff::ReferenceHint;
use crate::analysis::impact::{GroupState, PartitionImpact, TxnState};
use crate::capture::discover::Capture;
use crate::capture::replica::ReplicaProblem;
use crate::engine::diff::{diff_partition_replicas, DiffRequest, PartitionResult};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::engine::impact::{coordinator, impact_of};

/// One candidate leader.
pub struct Candidate {
    /// Its broker.
    pub broker: i32,
    /// The diff and loss with it as the leader.
    pub result: PartitionResult,
    /// Whom that loss hurts (`None` when it loses nothing).
    pub impact: Option<PartitionImpact>,
    /// 1 for the least loss.
    pub rank: usize,
    /// Whether Kafka's own rule would pick it (or it leads already).
    pub kafka_would_pick: bool,
    /// Whether its loss is the least (rank 1, and those that tie with it
    /// on the records lost and their commitment).
    pub least_loss: bool,
}

impl Candidate {
    /// Transactions its election leaves hanging.
    pub fn hanging_transactions(&self) -> usize {
        self.impact.as_ref().map_or(0, |i| {
            i.transactions
                .iter()
                .filter(|t| t.state == TxnState::Hanging)
                .count()
        })
    }

    /// Consumer groups its election affects.
    pub fn groups_affected(&self) -> usize {
        self.impact.as_ref().map_or(0, |i| {
            i.groups
                .iter()
                .filter(|g| !matches!(g.state, GroupState::Unaffected | GroupState::NoOffset))
                .count()
        })
    }

    /// The loss part of the ranking key: the committed records it may lose
    /// (the upper bound, or every lost record when the bound is unknown),
    /// then the proven ones, then every lost record.
    fn loss_key(&self) -> (u64, u64, u64) {
        let l = &self.result.loss;
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
    fn key(&self) -> ((u64, u64, u64), usize, usize, bool, i32) {
        (
            self.loss_key(),
            self.hanging_transactions(),
            self.groups_affected(),
            !self.kafka_would_pick,
            self.broker,
        )
    }
}

/// The candidates of one partition.
pub struct PartitionElection {
    /// The partition.
    pub topic: String,
    /// See `topic`.
    pub partition: i32,
    /// Assigned replicas, in order (from the metadata log; else the
    /// captured ones).
    pub assignment: Vec<i32>,
    /// The ISR and ELR the metadata log ends with (`None`: no metadata log).
    pub isr: Option<Vec<i32>>,
    /// See `isr`.
    pub elr: Option<Vec<i32>>,
    /// Kafka's rule, as it applies here.
    pub kafka_rule: String,
    /// The leader the metadata log ends with, when it has one (the
    /// election has happened).
    pub leader: Option<i32>,
    /// Its leader epoch and the metadata offset of the record that made it
    /// the leader (with `leader`).
    pub leader_since: Option<(i32, i64)>,
    /// Why the capture cannot tell who leads the partition now (no
    /// metadata log, or one that does not know the partition): then no
    /// command is printed, and `check_first` says what to look at.
    pub leader_unknown: Option<String>,
    /// Ranked, least loss first.
    pub candidates: Vec<Candidate>,
    /// Problems met reading.
    pub problems: Vec<ReplicaProblem>,
}

impl PartitionElection {
    /// Whether some candidate would lose records (a partition where none
    /// does has nothing to decide).
    pub fn any_loss(&self) -> bool {
        self.candidates.iter().any(|c| c.result.loss.any())
    }

    /// What to check before electing, when the capture cannot tell who
    /// leads now (`None` when it can).
    pub fn check_first(&self) -> Option<String> {
        self.leader_unknown.as_ref()?;
        let topic = if shell_safe(&self.topic) {
            self.topic.as_str()
        } else {
            "TOPIC"
        };
        let best = self.candidates.first().map(|c| c.broker);
        Some(format!(
            "who leads {t}-{p} now cannot be told from the capture, so no command is printed. \
Check its leader and ISR first: kafka-topics.sh --bootstrap-server BROKER --describe --topic {topic} \
(or in ZooKeeper: get /brokers/topics/{topic}/partitions/{p}/state). If it has a leader, or a \
replica of its ISR can be started again, no unclean election is needed{rest}",
            t = self.topic,
            p = self.partition,
            rest = match best {
                Some(b) if self.any_loss() => format!("; if not, broker {b} loses least (rank 1)"),
                _ => String::new(),
            }
        ))
    }
}

/// Every selected partition with two or more replicas, each candidate in
/// turn.
pub fn elect_capture<'c>(
    capture: &'c Capture,
    req: &DiffRequest,
) -> (Vec<PartitionElection>, Evidence<'c>) {
    let evidence = Evidence::gather(capture);
    let options = evidence.diff_options(req.protocol);
    let coord = coordinator(&evidence);
    let mut out = Vec::new();
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
                Candidate {
                    broker: b,
                    result,
                    impact: impact.flatten(),
                    rank: 0,
                    kafka_would_pick: Some(b) == pick,
                    least_loss: false,
                }
            })
            .collect();
        // the reading problems are the same whoever leads: once
        if let Some(c) = candidates.first() {
            problems.extend(c.result.problems.iter().cloned());
        }
        candidates.sort_by_key(Candidate::key);
        let best = candidates.first().map(Candidate::loss_key);
        for (i, c) in candidates.iter_mut().enumerate() {
            c.rank = i + 1;
            c.least_loss = Some(c.loss_key()) == best;
        }
        out.push(PartitionElection {
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
            problems,
        });
    }
    (out, evidence)
}

/// Kafka's legal topic names only: anything else is printed nowhere a
/// shell would read it.
fn shell_safe(topic: &str) -> bool {
    !topic.is_empty()
        && topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The commands that carry out electing `chosen` (printed, never run):
/// when Kafka's rule already picks it, the unclean election; else a
/// reassignment that puts it first, then the election. None when the
/// partition has a leader already, or when the capture cannot tell whether
/// it has one ([`PartitionElection::check_first`] says what to check).
pub fn commands(p: &PartitionElection, chosen: i32) -> Vec<String> {
    if !shell_safe(&p.topic) {
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
