//! The plain data of `klf report`'s page: per partition its diff and loss,
//! each replica's timeline and the lost records it holds, the elections of
//! the metadata log placed on offsets, and who the loss hurts; over the
//! capture, the figures the page opens with. `engine::report` gathers it;
//! the `report` module draws it.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use crate::model::diff::{DiffFinding, DivergenceKind, FindingKind, PartitionDiff};
use crate::model::impact::PartitionImpact;
use crate::model::loss::{PartitionLoss, Verdict};
use crate::model::records::Committed;
use crate::model::timeline::Timeline;
use crate::model::PartitionHistory;

/// Lost records a replica holds, a half-open offset range `[start, end)`
/// of one commitment (the partition's `loss.offsets` held by the replica).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostSpan {
    /// First offset.
    pub start: i64,
    /// One past the last offset.
    pub end: i64,
    /// Data records in the range.
    pub records: u64,
    /// Whether they had been committed.
    pub committed: Committed,
}

/// An epoch as the `leader-epoch-checkpoint` has it, where that disagrees
/// with the batch headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSpan {
    /// Leader epoch.
    pub epoch: i32,
    /// Start offset according to the checkpoint.
    pub start: i64,
    /// The next entry's start, or the log end.
    pub end: i64,
}

/// One election of the metadata log, placed on the partition's offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionMark {
    /// Leader epoch it opened.
    pub epoch: i32,
    /// The broker elected.
    pub leader: i32,
    /// The leader was not in the ISR before the change.
    pub unclean: bool,
    /// Offset of the record in the metadata log.
    pub metadata_offset: i64,
    /// Record timestamp (ms).
    pub timestamp: i64,
    /// First offset the epoch wrote, from the leader's own batches, else the
    /// reference's epoch cache; `None` when no replica shows it.
    pub offset: Option<i64>,
}

/// One replica as the page shows it.
#[derive(Debug, Clone)]
pub struct ReplicaView {
    /// Epochs from batch headers, HW, offsets.
    pub timeline: Timeline,
    /// Checkpoint epochs that disagree with the batch headers.
    pub checkpoint_disagreements: Vec<CheckpointSpan>,
    /// The lost records this replica holds (all cut by its truncation), by
    /// commitment: the sum of the proven ones' `records` is the replica's
    /// `committed_proven_cut`, of the proven and possible ones its
    /// `committed_possible_cut` (when known).
    pub lost: Vec<LostSpan>,
}

/// One partition of the report.
#[derive(Debug, Clone)]
pub struct PartitionReport {
    /// The diff (replicas in the same order as `replicas`).
    pub diff: PartitionDiff,
    /// What the partition loses, counted once.
    pub loss: PartitionLoss,
    /// Per replica, what the picture needs beyond the diff.
    pub replicas: Vec<ReplicaView>,
    /// The controller's history of the partition, if the capture has a metadata log.
    pub history: Option<PartitionHistory>,
    /// Leader elections placed on offsets.
    pub elections: Vec<ElectionMark>,
    /// Who the loss hurts (`klf impact`), when the partition loses records.
    pub impact: Option<PartitionImpact>,
    /// Brokers whose replica could not be read (left out of the diff).
    pub left_out: Vec<i32>,
    /// Its incident timeline (`klf timeline --incident`), when it loses
    /// data: at most [`INCIDENT_ENTRIES`] entries, the rest counted in
    /// `incident_left_out`.
    pub incident: Option<crate::model::timeline::PartitionIncident>,
    /// Entries of the incident timeline left off the page.
    pub incident_left_out: u64,
}

/// The most entries of a partition's incident timeline the page shows.
pub const INCIDENT_ENTRIES: usize = 40;

impl PartitionReport {
    /// The first offset where a replica's batches part from the
    /// reference's (over replicas that truly diverged, not lagging ones).
    pub fn divergence_offset(&self) -> Option<i64> {
        self.diff
            .replicas
            .iter()
            .filter(|r| r.divergence_kind == DivergenceKind::Diverged)
            .filter_map(|r| r.divergence_offset)
            .min()
    }

    /// Records the partition loses (on no replica once all follow the
    /// reference), counted once.
    pub fn records_lost(&self) -> u64 {
        self.loss.records
    }

    /// Lost records proven committed.
    pub fn committed_lost(&self) -> u64 {
        self.loss.committed_proven
    }

    /// Whether the capture lacks a replica of the partition: an assigned
    /// replica not captured, or one that could not be read. Its loss is
    /// then that of the replicas it has, and may be larger.
    pub fn incomplete(&self) -> bool {
        !self.left_out.is_empty() || !self.loss.replicas_not_captured.is_empty()
    }

    /// Whether the page heads with the partition (in the table of
    /// partitions that lose data, drawn first): it loses records, or its
    /// loss is not known whole ([`PartitionReport::incomplete`]).
    pub fn headlined(&self) -> bool {
        self.loss.any() || self.incomplete()
    }

    /// Rank for "worst first" (lower is worse): committed losses, then
    /// possibly committed, unbounded, uncommitted, then partitions losing
    /// nothing; within a rank, more records that may have been committed,
    /// then more records lost.
    pub fn severity(&self) -> (u8, Reverse<u64>, Reverse<u64>) {
        let rank = match self.loss.verdict {
            Verdict::CommittedLost => 0,
            Verdict::PossiblyCommittedLost => 1,
            Verdict::UnknownLost => 2,
            Verdict::UncommittedLost => 3,
            Verdict::NothingLost => 4,
        };
        (
            rank,
            Reverse(self.loss.possibly_committed_or_unknown()),
            Reverse(self.loss.records + self.loss.control_records),
        )
    }

    /// Number of findings (partition and replicas).
    pub fn finding_count(&self) -> usize {
        self.diff.findings.len()
            + self
                .diff
                .replicas
                .iter()
                .map(|r| r.findings.len())
                .sum::<usize>()
    }

    /// Whether there is nothing to draw: every replica holds the
    /// reference's batches and log end, nothing is lost or cut, no finding
    /// (but that the replicas tie as the reference, which does not matter
    /// when they are the same), no replica left out. Such partitions are
    /// listed in one table, not drawn one by one.
    pub fn agrees(&self) -> bool {
        let counts = |f: &&DiffFinding| f.kind != FindingKind::AmbiguousReference;
        self.loss.verdict == Verdict::NothingLost
            && self.loss.records == 0
            && self.loss.control_records == 0
            && !self.diff.findings.iter().any(|f| counts(&f))
            && self.diff.replicas.iter().all(|r| r.findings.is_empty())
            && self.left_out.is_empty()
            && self.diff.replicas.iter().all(|r| {
                matches!(
                    r.divergence_kind,
                    DivergenceKind::Identical | DivergenceKind::Reference
                ) && r.records_to_truncate == 0
                    && r.truncation_offset == r.log_end_offset
            })
    }

    /// The offsets the page draws: lowest log start to highest log end.
    pub fn offset_range(&self) -> (i64, i64) {
        let lo = self
            .diff
            .replicas
            .iter()
            .map(|r| r.log_start_offset)
            .min()
            .unwrap_or(0);
        let hi = self
            .diff
            .replicas
            .iter()
            .map(|r| r.log_end_offset)
            .max()
            .unwrap_or(lo);
        (lo, hi.max(lo + 1))
    }
}

/// The whole report.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The paths given, as text, for the page header.
    pub inputs: Vec<String>,
    /// Partitions with two or more replicas, in topic/partition order.
    pub partitions: Vec<PartitionReport>,
    /// Warnings of discovery and problems met while reading (also shown on the page).
    pub problems: Vec<String>,
    /// Whether reading a replica's segments met damage.
    pub damaged: bool,
    /// Each node's offset from UTC its log times were read with (the
    /// incident timelines'); empty without logs.
    pub zones: Vec<crate::model::timeline::NodeZone>,
}

impl Report {
    /// Whether a partition loses records that were or may have been
    /// committed (the default `--fail-on committed` of `klf diff`).
    pub fn committed_loss(&self) -> bool {
        self.partitions
            .iter()
            .any(|p| p.loss.possibly_committed_or_unknown() > 0)
    }

    /// The whole capture in figures: what the page opens with.
    pub fn overview(&self) -> Overview {
        let mut o = Overview::default();
        for p in &self.partitions {
            o.compared += 1;
            o.left_out += p.left_out.len() as u64;
            for b in &p.loss.replicas_not_captured {
                *o.not_captured.entry(*b).or_default() += 1;
            }
            let l = &p.loss;
            if !l.any() {
                o.nothing_lost += 1;
                continue;
            }
            o.losing += 1;
            o.records += l.records;
            o.control_records += l.control_records;
            o.committed_proven += l.committed_proven;
            match l.committed_possible {
                Some(x) => o.committed_possible += x,
                None => {
                    o.committed_possible += l.possibly_committed_or_unknown() - l.committed_unknown;
                    o.committed_unknown += l.committed_unknown;
                }
            }
        }
        o
    }

    /// The partitions the page heads with ([`PartitionReport::headlined`]),
    /// worst first, with their index in [`Report::partitions`].
    pub fn headlined(&self) -> Vec<(usize, &PartitionReport)> {
        let mut v: Vec<(usize, &PartitionReport)> = self
            .partitions
            .iter()
            .enumerate()
            .filter(|(_, p)| p.headlined())
            .collect();
        v.sort_by_key(|(i, p)| (p.severity(), *i));
        v
    }

    /// The partitions that lose nothing (and whose replicas are all
    /// captured), in topic/partition order, with their index in
    /// [`Report::partitions`]; and which of them are drawn: those whose
    /// replicas differ ([`PartitionReport::agrees`] is false), at most
    /// [`DRAWN_NOTHING_LOST`] (the most records cut first, then the most
    /// findings).
    pub fn nothing_lost(&self) -> NothingLost<'_> {
        let all: Vec<(usize, &PartitionReport)> = self
            .partitions
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.headlined())
            .collect();
        let mut differ: Vec<(usize, &PartitionReport)> =
            all.iter().copied().filter(|(_, p)| !p.agrees()).collect();
        let differing = differ.len();
        differ.sort_by_key(|(i, p)| {
            let cut: i64 = p.diff.replicas.iter().map(|r| r.records_to_truncate).sum();
            (Reverse(cut), Reverse(p.finding_count()), *i)
        });
        differ.truncate(DRAWN_NOTHING_LOST);
        differ.sort_by_key(|(i, _)| *i);
        NothingLost {
            all,
            drawn: differ,
            differing,
        }
    }
}

/// How many partitions that lose nothing but whose replicas differ the page
/// draws; the rest are listed only (`--topic`/`--partition` draw one):
/// 3 brokers x 2,000 such partitions drawn were a page of 20 MB.
pub const DRAWN_NOTHING_LOST: usize = 50;

/// The partitions that lose nothing ([`Report::nothing_lost`]).
#[derive(Debug, Clone)]
pub struct NothingLost<'r> {
    /// All of them, in topic/partition order (index in the report).
    pub all: Vec<(usize, &'r PartitionReport)>,
    /// Those drawn, in topic/partition order.
    pub drawn: Vec<(usize, &'r PartitionReport)>,
    /// How many of them have replicas that differ (drawn or not).
    pub differing: usize,
}

/// The whole capture in figures ([`Report::overview`]), as `klf diff`'s
/// overview counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    /// Partitions compared (two or more replicas).
    pub compared: u64,
    /// Partitions losing data.
    pub losing: u64,
    /// Partitions losing nothing.
    pub nothing_lost: u64,
    /// Data records lost, over all partitions.
    pub records: u64,
    /// Control records lost.
    pub control_records: u64,
    /// Lost data records proven committed.
    pub committed_proven: u64,
    /// Lost data records possibly committed, over the records that can be
    /// bounded (the proven ones included).
    pub committed_possible: u64,
    /// Lost data records whose commitment cannot be bounded.
    pub committed_unknown: u64,
    /// Assigned brokers whose replica is not in the capture, with how many
    /// partitions each.
    pub not_captured: BTreeMap<i32, u64>,
    /// Replicas that could not be read (left out of their partition).
    pub left_out: u64,
}

impl Overview {
    /// Replicas assigned (metadata log) but not in the capture.
    pub fn replicas_not_captured(&self) -> u64 {
        self.not_captured.values().sum()
    }
}
