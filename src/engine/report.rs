//! The report pipeline: everything `klf report`'s page shows, gathered
//! from the engine's diff of the capture (the same reference, truncation
//! and loss as `klf diff`): each replica's timeline, the lost records it
//! holds, the elections of the metadata log placed on offsets. The page
//! itself is drawn by the `report` module, which computes nothing.

use crate::analysis::diff::{diff_partition, PartitionReplicas};

use crate::analysis::incident::keep_entries;
use crate::analysis::loss::{partition_loss, share_loss, LossContext};
use crate::analysis::timeline::timeline;
use crate::engine::diff::DiffRun;
use crate::engine::evidence::reference_hint;
use crate::engine::impact::ImpactRun;
use crate::engine::timeline::IncidentContext;
use crate::model::diff::DiffOptions;
use crate::model::diff::PartitionDiff;
use crate::model::loss::{LostRange, PartitionLoss};
use crate::model::report::{
    CheckpointSpan, ElectionMark, LostSpan, PartitionReport, ReplicaView, Report, INCIDENT_ENTRIES,
};
use crate::model::timeline::Timeline;
use crate::model::{HighWatermarkFact, Level, PartitionHistory, ReplicaLog};

/// Gathers the facts of the page from an engine impact run over the
/// capture (its diff read with [`crate::engine::ReadMode::Full`]: the page
/// draws every batch), each partition with who its loss hurts. `inputs`
/// are the paths given, for the page header. Returns `Err` with a message
/// when no partition has two or more replicas.
pub fn build(impact: &ImpactRun<'_>, inputs: Vec<String>) -> Result<Report, String> {
    let mut report = build_diff(&impact.diff, inputs)?;
    for i in &impact.partitions {
        if let Some(p) = report
            .partitions
            .iter_mut()
            .find(|p| p.diff.topic == i.topic && p.diff.partition == i.partition)
        {
            p.impact = Some(i.clone());
        }
    }
    Ok(report)
}

/// [`build`] from a diff run alone (no impact).
pub fn build_diff(run: &DiffRun<'_>, inputs: Vec<String>) -> Result<Report, String> {
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
    let incidents = IncidentContext::new(&run.evidence, &[]);
    if run.evidence.logs().is_some() {
        report.zones = incidents.zones.clone();
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
        if p.loss.any() {
            let mut incident = incidents.partition(run, p);
            part.incident_left_out = keep_entries(&mut incident, INCIDENT_ENTRIES);
            part.incident = Some(incident);
        }
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
        impact: None,
        left_out: Vec::new(),
        incident: None,
        incident_left_out: 0,
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
    share_loss(&mut diff, &loss);
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
    let mut held: Vec<&LostRange> = loss
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
    use crate::model::records::Committed;
    use crate::model::BatchSummary;

    fn batch(base: i64, last: i64, epoch: i32, crc: u32) -> BatchSummary {
        BatchSummary::dense(base, last, epoch, crc)
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
        let (a, b) = crate::render::report::svg::zoom_window(&p).expect("a zoomed panel");
        assert!(
            a <= 1_000_000 && b >= 1_000_020 && b - a < 100,
            "zoom [{a}, {b}]"
        );
        let picture = crate::render::report::svg::partition_svg(&p, "t");
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
