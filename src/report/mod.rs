//! `klf report`: one self-contained HTML page for a post-mortem of a
//! capture. The page opens on the whole capture ([`Overview`]: partitions
//! compared, partitions losing data, records lost, the committed bounds,
//! replicas not captured), then the partitions that lose data, worst first,
//! each with an SVG timeline with one lane per replica (leader epochs over
//! offsets, high watermark, log end, divergence, the truncation Kafka will
//! perform, the records it cuts and how many of them were committed), the
//! controller's elections from the metadata log, and the story `klf diff
//! --explain` tells; the partitions that lose nothing are folded into one
//! list.
//!
//! This module gathers the facts ([`build`]) from the engine's diff of the
//! capture ([`crate::engine::diff_capture`]: the same reference, truncation
//! and loss as `klf diff`); [`svg`] draws a partition and [`html`]
//! assembles the page. It reads nothing itself; epochs come from
//! [`crate::analysis::timeline::timeline`].

pub mod html;
pub mod svg;

use std::cmp::Reverse;
use std::collections::BTreeMap;

use crate::analysis::diff::{
    diff_partition, DiffOptions, DivergenceKind, PartitionDiff, PartitionReplicas, ReplicaLog,
};
use crate::analysis::explain::{epoch_leaders, loss_story, story};
use crate::analysis::loss::{partition_loss, LossContext, PartitionLoss, Verdict};
use crate::analysis::timeline::{timeline, Timeline};
use crate::engine::evidence::reference_hint;
use crate::engine::DiffRun;
use crate::model::records::Committed;
use crate::model::HighWatermarkFact;
use crate::model::Level;
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
    /// The `klf diff --explain` story.
    pub story: Vec<String>,
    /// Who the loss hurts (`klf impact`), when the partition loses records.
    pub impact: Option<crate::analysis::impact::PartitionImpact>,
    /// Brokers whose replica could not be read (left out of the diff).
    pub left_out: Vec<i32>,
}

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
        let counts = |f: &&crate::analysis::diff::Finding| {
            f.kind != crate::analysis::diff::FindingKind::AmbiguousReference
        };
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
}

impl Report {
    /// Attaches each partition's impact (`klf impact`) to its section.
    pub fn attach_impacts(&mut self, impacts: Vec<crate::analysis::impact::PartitionImpact>) {
        for i in impacts {
            if let Some(p) = self
                .partitions
                .iter_mut()
                .find(|p| p.diff.topic == i.topic && p.diff.partition == i.partition)
            {
                p.impact = Some(i);
            }
        }
    }

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

/// Gathers the facts of the page from an engine diff of the capture (read
/// with [`crate::engine::ReadMode::Full`]: the page draws every batch).
/// `inputs` are the paths given, for the page header. Returns `Err` with a
/// message when no partition has two or more replicas.
pub fn build(run: &DiffRun<'_>, inputs: Vec<String>) -> Result<Report, String> {
    let capture = run.evidence.capture();
    let mut report = Report {
        inputs,
        ..Default::default()
    };
    for w in &capture.warnings {
        if w.level == Level::Warning {
            report
                .problems
                .push(format!("warning: {}: {}", w.path.display(), w.message));
        }
    }
    if run.partitions.is_empty() {
        return Err(
            "no partition with two or more replicas under the given paths \
                    (give the broker directories of one capture, or the folder holding them)"
                .into(),
        );
    }
    if let Some(c) = &run.evidence.controller {
        for p in &c.problems {
            report.problems.push(format!("metadata log: {p}"));
        }
    }
    for p in &run.partitions {
        for pr in &p.problems {
            report.damaged = true;
            report.problems.push(pr.to_string());
        }
        let history = run
            .evidence
            .history(&p.diff.topic, p.diff.partition)
            .cloned();
        let recovery: Vec<Option<i64>> = run.replicas(p).iter().map(|r| r.recovery_point).collect();
        let mut part = section(p.diff.clone(), p.loss.clone(), &p.logs, &recovery, history);
        part.left_out = p.left_out.clone();
        report.partitions.push(part);
    }
    Ok(report)
}

/// The facts of one partition's section from its diff and loss, the logs
/// they were computed from (with each replica's recovery point, if known)
/// and its history in the metadata log.
pub fn section(
    diff: PartitionDiff,
    loss: PartitionLoss,
    logs: &[ReplicaLog],
    recovery: &[Option<i64>],
    history: Option<PartitionHistory>,
) -> PartitionReport {
    let timelines: Vec<Timeline> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            let mut t = timeline(log);
            t.recovery_point = recovery.get(i).copied().flatten();
            t
        })
        .collect();
    let mut story_lines = loss_story(&loss);
    story_lines.extend(story(&diff, &epoch_leaders(history.as_ref())));
    let replicas = timelines
        .into_iter()
        .map(|t| ReplicaView {
            checkpoint_disagreements: checkpoint_disagreements(&t),
            lost: lost_spans(&loss, t.broker),
            timeline: t,
        })
        .collect();
    let mut part = PartitionReport {
        diff,
        loss,
        replicas,
        history,
        elections: Vec::new(),
        story: story_lines,
        impact: None,
        left_out: Vec::new(),
    };
    part.elections = election_marks(&part);
    part
}

/// The facts of one partition's section from its replicas' logs (with each
/// replica's recovery point, if known) and its history in the metadata log,
/// with no other evidence (no consumer group commits, no checkpoint file
/// times). The reference is `leader` if given, else the metadata log's
/// leader at capture time, else the diff's own rule.
pub fn partition_report(
    topic: String,
    partition: i32,
    logs: Vec<(ReplicaLog, Option<i64>)>,
    history: Option<PartitionHistory>,
    leader: Option<i32>,
) -> PartitionReport {
    let reference = reference_hint(leader, history.as_ref());
    let (logs, recovery): (Vec<ReplicaLog>, Vec<Option<i64>>) = logs.into_iter().unzip();
    let input = PartitionReplicas {
        topic,
        partition,
        replicas: logs,
        reference,
    };
    let mut diff = diff_partition(&input, &DiffOptions::default());
    let hws: Vec<HighWatermarkFact> = input
        .replicas
        .iter()
        .map(|l| HighWatermarkFact {
            broker: l.broker,
            raw: l.high_watermark,
            file: None,
            mtime_ms: None,
        })
        .collect();
    let ctx = LossContext {
        history: history.as_ref(),
        history_missing: None,
        commits: &[],
        commits_searched: false,
        high_watermarks: &hws,
    };
    let loss = partition_loss(&diff, &input.replicas, &ctx);
    crate::analysis::loss::share_loss(&mut diff, &loss);
    section(diff, loss, &input.replicas, &recovery, history)
}

/// Checkpoint entries whose span differs from the batch headers' span of
/// the same epoch (or whose epoch no batch carries).
pub fn checkpoint_disagreements(t: &Timeline) -> Vec<CheckpointSpan> {
    let Some(cp) = &t.checkpoint else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, &(epoch, start)) in cp.iter().enumerate() {
        let end = cp
            .get(i + 1)
            .map(|n| n.1)
            .unwrap_or(t.log_end_offset)
            .min(t.log_end_offset);
        let start_c = start.max(t.log_start_offset);
        if end <= start_c {
            continue;
        }
        let first = t.from_batches.first().map(|s| s.epoch) == Some(epoch);
        let agrees = t.from_batches.iter().any(|s| {
            s.epoch == epoch
                && (s.start_offset == start || (first && start <= s.start_offset))
                && s.end == end
        });
        if !agrees {
            out.push(CheckpointSpan {
                epoch,
                start: start_c,
                end,
            });
        }
    }
    out
}

/// The lost records broker `broker` holds, from the partition's lost
/// ranges, adjacent ranges of one commitment joined.
pub fn lost_spans(loss: &PartitionLoss, broker: i32) -> Vec<LostSpan> {
    let mut out: Vec<LostSpan> = Vec::new();
    let mut held: Vec<&crate::analysis::loss::LostRange> = loss
        .offsets
        .iter()
        .filter(|r| r.held_by.contains(&broker))
        .collect();
    held.sort_by_key(|r| r.start);
    for r in held {
        match out.last_mut() {
            Some(prev) if prev.end == r.start && prev.committed == r.committed => {
                prev.end = r.end;
                prev.records += r.records;
            }
            _ => out.push(LostSpan {
                start: r.start,
                end: r.end,
                records: r.records,
                committed: r.committed,
            }),
        }
    }
    out
}

/// The metadata log's leader elections, each placed at the first offset
/// its epoch wrote.
fn election_marks(p: &PartitionReport) -> Vec<ElectionMark> {
    let Some(h) = &p.history else {
        return Vec::new();
    };
    let reference = p
        .diff
        .replicas
        .iter()
        .find(|r| r.broker == p.diff.reference.broker);
    h.changes
        .iter()
        .filter(|e| e.leader_changed && e.leader >= 0)
        .map(|e| {
            let own = p
                .replicas
                .iter()
                .find(|v| v.timeline.broker == e.leader)
                .and_then(|v| {
                    v.timeline
                        .from_batches
                        .iter()
                        .find(|s| s.epoch == e.leader_epoch)
                })
                .map(|s| s.start_offset);
            let from_ref = reference.and_then(|r| {
                r.epoch_cache
                    .iter()
                    .find(|c| c.epoch == e.leader_epoch)
                    .map(|c| c.start_offset)
            });
            ElectionMark {
                epoch: e.leader_epoch,
                leader: e.leader,
                unclean: e.unclean,
                metadata_offset: e.metadata_offset,
                timestamp: e.timestamp,
                offset: own.or(from_ref),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::BatchSummary;

    fn batch(base: i64, last: i64, epoch: i32, crc: u32) -> BatchSummary {
        BatchSummary {
            base_offset: base,
            last_offset: last,
            partition_leader_epoch: epoch,
            crc,
            record_count: (last - base + 1) as i32,
            is_control: false,
            is_transactional: false,
            first_timestamp: 0,
            max_timestamp: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
        }
    }

    fn log(broker: i32, batches: Vec<BatchSummary>, hw: i64, cp: Vec<(i32, i64)>) -> ReplicaLog {
        let leo = batches.iter().map(|b| b.last_offset + 1).max().unwrap_or(0);
        ReplicaLog {
            broker,
            batches,
            log_start_offset: 0,
            log_end_offset: leo,
            high_watermark: Some(hw),
            checkpoint_epochs: Some(cp),
            first_segment_base: Some(0),
            window_start: None,
        }
    }

    /// A million offsets in common, then a divergence of a few dozen: the
    /// picture gets a zoomed panel around it, and the lost records the cut
    /// takes are located by commitment.
    #[test]
    fn small_divergence_in_a_long_log_is_zoomed() {
        let common: Vec<BatchSummary> = (0..10)
            .map(|i| batch(i * 100_000, i * 100_000 + 99_999, 0, i as u32))
            .collect();
        let mut leader = common.clone();
        leader.push(batch(1_000_000, 1_000_009, 1, 77));
        let mut follower = common.clone();
        follower.push(batch(1_000_000, 1_000_019, 0, 99));
        let logs = vec![
            (
                log(1, leader.clone(), 1_000_010, vec![(0, 0), (1, 1_000_000)]),
                None,
            ),
            (log(2, follower, 1_000_015, vec![(0, 0)]), None),
            (
                log(3, leader, 1_000_010, vec![(0, 0), (1, 1_000_000)]),
                None,
            ),
        ];
        let p = partition_report("t".into(), 0, logs, None, Some(1));
        assert_eq!(p.divergence_offset(), Some(1_000_000));
        let r2 = &p.diff.replicas[1];
        assert_eq!(r2.truncation_offset, 1_000_000);
        assert_eq!(r2.records_to_truncate, 20);
        assert_eq!(r2.checkpointed_records_to_truncate, 15);
        // below its own high watermark proven committed; above it, no
        // ISR history bounds them
        assert_eq!(
            p.replicas[1].lost,
            vec![
                LostSpan {
                    start: 1_000_000,
                    end: 1_000_015,
                    records: 15,
                    committed: Committed::Proven
                },
                LostSpan {
                    start: 1_000_015,
                    end: 1_000_020,
                    records: 5,
                    committed: Committed::Unknown
                }
            ]
        );
        assert_eq!(
            (r2.committed_proven_cut, r2.committed_possible_cut),
            (15, None)
        );
        assert!(p.replicas[0].lost.is_empty());
        let (a, b) = svg::zoom_window(&p).expect("a zoomed panel");
        assert!(
            a <= 1_000_000 && b >= 1_000_020 && b - a < 100,
            "zoom [{a}, {b}]"
        );
        let picture = svg::partition_svg(&p, "t");
        assert!(picture.contains(r#"data-panel="zoom""#));
        assert_eq!(
            picture.matches(r#"data-kind="lost""#).count(),
            2,
            "cut drawn in both panels"
        );
    }

    #[test]
    fn checkpoint_spans_that_disagree_with_the_batches() {
        let batches = vec![batch(0, 59, 0, 1), batch(60, 99, 2, 2)];
        let agreeing = timeline(&log(1, batches.clone(), 100, vec![(0, 0), (2, 60)]));
        assert!(checkpoint_disagreements(&agreeing).is_empty());
        let stale = timeline(&log(1, batches, 100, vec![(0, 0), (1, 50), (2, 80)]));
        assert_eq!(
            checkpoint_disagreements(&stale),
            vec![
                CheckpointSpan {
                    epoch: 0,
                    start: 0,
                    end: 50
                },
                CheckpointSpan {
                    epoch: 1,
                    start: 50,
                    end: 80
                },
                CheckpointSpan {
                    epoch: 2,
                    start: 80,
                    end: 100
                },
            ]
        );
    }
}
