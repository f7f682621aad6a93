//! The plain data of `klf elect`: for a partition whose in-sync replicas
//! are gone, every captured replica as the candidate leader, ranked least
//! loss first, with the commands that would elect the first (printed,
//! never run). `engine::elect` computes it.

use crate::model::diff::PartitionDiff;
use crate::model::impact::{GroupState, PartitionImpact, TxnOutcome};
use crate::model::loss::PartitionLoss;

/// One candidate leader.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Its broker.
    pub broker: i32,
    /// The diff with it as the leader (the reference).
    pub diff: PartitionDiff,
    /// What the partition loses with it as the leader.
    pub loss: PartitionLoss,
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
                .filter(|t| t.state == TxnOutcome::Hanging)
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
}

/// The candidates of one partition.
#[derive(Debug, Clone)]
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
    /// command is printed, and what to look at first is said instead.
    pub leader_unknown: Option<String>,
    /// Ranked, least loss first.
    pub candidates: Vec<Candidate>,
    /// The commands that carry out electing the first-ranked candidate
    /// (printed, never run); empty when there is nothing to run (a leader
    /// already, a leader the capture cannot tell, a topic name no shell
    /// should read).
    pub commands: Vec<String>,
}

impl PartitionElection {
    /// Whether some candidate would lose records (a partition where none
    /// does has nothing to decide).
    pub fn any_loss(&self) -> bool {
        self.candidates.iter().any(|c| c.loss.any())
    }
}
