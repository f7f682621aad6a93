//! `klf report`: one self-contained HTML page for a post-mortem of a
//! capture. The page holds a summary table of every partition, then per
//! partition an SVG timeline with one lane per replica (leader epochs over
//! offsets, high watermark, log end, divergence, the truncation Kafka will
//! perform and the records it cuts), the controller's elections from the
//! metadata log, and the story `klf diff --explain` tells.
//!
//! This module gathers the facts ([`build`]); [`svg`] draws a partition and
//! [`html`] assembles the page. Nothing here computes anything the other
//! analyses do not: divergence and truncation come from
//! [`crate::analysis::diff::diff_partition`], epochs from
//! [`crate::analysis::timeline::timeline`], elections from
//! [`crate::capture::controller::controller_view`].

pub mod html;
pub mod svg;

use std::collections::HashSet;
use std::path::Path;

use rayon::prelude::*;

use crate::analysis::diff::{
    diff_partition, BatchSummary, DiffOptions, DivergenceKind, PartitionDiff, PartitionReplicas,
    ReplicaLog,
};
use crate::analysis::explain::{epoch_leaders, story};
use crate::analysis::timeline::{timeline, Timeline};
use crate::capture::controller::{controller_view, reference_hint, PartitionHistory};
use crate::capture::discover::{discover, Level};
use crate::capture::replica::load_replica;

/// What to report on.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Take this broker as the reference leader (default: the metadata
    /// log's leader at capture time, else the highest latest epoch).
    pub leader: Option<i32>,
    /// Only this topic.
    pub topic: Option<String>,
    /// Only this partition number.
    pub partition: Option<i32>,
}

/// A half-open offset range `[start, end)` with the records it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetRange {
    /// First offset.
    pub start: i64,
    /// One past the last offset.
    pub end: i64,
    /// Records in the range.
    pub records: i64,
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
    /// Ranges of the cut records that are committed (sum of `records` =
    /// the diff's `committed_records_to_truncate`).
    pub committed_lost: Vec<OffsetRange>,
}

/// One partition of the report.
#[derive(Debug, Clone)]
pub struct PartitionReport {
    /// The diff (replicas in the same order as `replicas`).
    pub diff: PartitionDiff,
    /// Per replica, what the picture needs beyond the diff.
    pub replicas: Vec<ReplicaView>,
    /// The controller's history of the partition, if the capture has a metadata log.
    pub history: Option<PartitionHistory>,
    /// Leader elections placed on offsets.
    pub elections: Vec<ElectionMark>,
    /// The `klf diff --explain` story.
    pub story: Vec<String>,
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

    /// Records every truncation cuts, summed over replicas.
    pub fn records_lost(&self) -> i64 {
        self.diff
            .replicas
            .iter()
            .map(|r| r.records_to_truncate)
            .sum()
    }

    /// Committed records every truncation cuts, summed over replicas.
    pub fn committed_lost(&self) -> i64 {
        self.diff
            .replicas
            .iter()
            .map(|r| r.committed_records_to_truncate)
            .sum()
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
    /// Whether a truncation cuts committed records anywhere.
    pub fn committed_loss(&self) -> bool {
        self.partitions.iter().any(|p| p.committed_lost() > 0)
    }
}

/// Reads the capture under `paths` and gathers the facts of the page.
/// Returns `Err` with a message when no partition has two or more replicas.
pub fn build<P: AsRef<Path> + Sync>(
    paths: &[P],
    options: &ReportOptions,
) -> Result<Report, String> {
    let capture = discover(paths);
    let mut report = Report {
        inputs: paths
            .iter()
            .map(|p| p.as_ref().display().to_string())
            .collect(),
        ..Default::default()
    };
    for w in &capture.warnings {
        if w.level == Level::Warning {
            report
                .problems
                .push(format!("warning: {}: {}", w.path.display(), w.message));
        }
    }
    let wanted: Vec<_> = capture
        .partitions
        .iter()
        .filter(|((t, p), reps)| {
            options.topic.as_ref().is_none_or(|x| x == t)
                && options.partition.is_none_or(|x| x == *p)
                && reps.len() >= 2
        })
        .collect();
    if wanted.is_empty() {
        return Err(
            "no partition with two or more replicas under the given paths \
                    (give the broker directories of one capture, or the folder holding them)"
                .into(),
        );
    }
    let controller = controller_view(&capture);
    if let Some(c) = &controller {
        for p in &c.problems {
            report.problems.push(format!("metadata log: {p}"));
        }
    }
    let loaded: Vec<_> = wanted
        .par_iter()
        .map(|((topic, partition), reps)| {
            let loaded: Vec<_> = reps
                .par_iter()
                .enumerate()
                .map(|(i, r)| {
                    (
                        load_replica(r, r.node_id.unwrap_or(-(i as i32) - 1)),
                        r.recovery_point,
                    )
                })
                .collect();
            (topic.clone(), *partition, loaded)
        })
        .collect();
    for (topic, partition, loaded) in loaded {
        let history = controller
            .as_ref()
            .and_then(|c| c.partitions.get(&(topic.clone(), partition)))
            .cloned();
        let mut logs = Vec::new();
        for (l, recovery_point) in loaded {
            for p in &l.problems {
                report.damaged = true;
                report.problems.push(p.to_string());
            }
            logs.push((l.log, recovery_point));
        }
        report.partitions.push(partition_report(
            topic,
            partition,
            logs,
            history,
            options.leader,
        ));
    }
    Ok(report)
}

/// The facts of one partition's section from its replicas' logs (with each
/// replica's recovery point, if known) and its history in the metadata log.
/// The reference is `leader` if given, else the metadata log's leader at
/// capture time, else the diff's own rule.
pub fn partition_report(
    topic: String,
    partition: i32,
    logs: Vec<(ReplicaLog, Option<i64>)>,
    history: Option<PartitionHistory>,
    leader: Option<i32>,
) -> PartitionReport {
    let reference = reference_hint(leader, history.as_ref());
    let mut timelines = Vec::new();
    let mut replica_logs = Vec::new();
    for (log, recovery_point) in logs {
        let mut t = timeline(&log);
        t.recovery_point = recovery_point;
        timelines.push(t);
        replica_logs.push(log);
    }
    let input = PartitionReplicas {
        topic,
        partition,
        replicas: replica_logs,
        reference,
    };
    let diff = diff_partition(&input, &DiffOptions::default());
    let story = story(&diff, &epoch_leaders(history.as_ref()));
    let replicas = timelines
        .into_iter()
        .enumerate()
        .map(|(i, t)| ReplicaView {
            checkpoint_disagreements: checkpoint_disagreements(&t),
            committed_lost: committed_lost_ranges(&input.replicas, &diff, i),
            timeline: t,
        })
        .collect();
    let mut part = PartitionReport {
        diff,
        replicas,
        history,
        elections: Vec::new(),
        story,
    };
    part.elections = election_marks(&part);
    part
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
                && s.end_offset + 1 == end
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

/// Where the committed records among those replica `idx` loses lie: a cut
/// record is committed when some replica holding the identical batch (this
/// one included) has a high watermark above it (the diff's "committed-any"
/// rule, with the high watermarks the diff used).
pub fn committed_lost_ranges(
    logs: &[ReplicaLog],
    diff: &PartitionDiff,
    idx: usize,
) -> Vec<OffsetRange> {
    let (Some(r), Some(log)) = (diff.replicas.get(idx), logs.get(idx)) else {
        return Vec::new();
    };
    let cut = r.truncation_offset;
    let leo = r.log_end_offset;
    if cut >= leo || r.committed_records_to_truncate == 0 {
        return Vec::new();
    }
    let key_sets: Vec<HashSet<(i64, i64, i32, u32)>> = logs
        .iter()
        .map(|l| l.batches.iter().map(BatchSummary::key).collect())
        .collect();
    let mut batches: Vec<&BatchSummary> = log.batches.iter().collect();
    batches.sort_by_key(|b| b.base_offset);
    let mut out: Vec<OffsetRange> = Vec::new();
    for b in batches {
        if b.records_in(cut, leo) == 0 {
            continue;
        }
        let key = b.key();
        let best_hw = diff
            .replicas
            .iter()
            .enumerate()
            .filter(|(k, _)| *k == idx || key_sets.get(*k).is_some_and(|s| s.contains(&key)))
            .filter_map(|(_, o)| o.high_watermark)
            .max();
        let Some(h) = best_hw else { continue };
        let hi = h.min(leo);
        let records = b.records_in(cut, hi);
        if records == 0 {
            continue;
        }
        let start = cut.max(b.base_offset);
        let end = hi.min(b.last_offset.saturating_add(1));
        match out.last_mut() {
            Some(prev) if prev.end == start => {
                prev.end = end;
                prev.records += records;
            }
            _ => out.push(OffsetRange {
                start,
                end,
                records,
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
    /// picture gets a zoomed panel around it, and the committed part of the
    /// cut is located.
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
        assert_eq!(r2.committed_records_to_truncate, 15);
        assert_eq!(
            p.replicas[1].committed_lost,
            vec![OffsetRange {
                start: 1_000_000,
                end: 1_000_015,
                records: 15
            }]
        );
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
