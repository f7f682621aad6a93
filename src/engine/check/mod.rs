//! The check pipeline, one partition at a time (partitions in parallel).
//! Each replica's segments are read once, in parallel: framing, checksums,
//! indexes, and what the order-dependent rules need of them (epochs,
//! producers, transactions), folded per segment and combined in log order
//! (the reading is here, the rules in `analysis::check`, fed what was
//! read). A small replica keeps its batches' headers; a large one keeps a
//! fingerprint of its batches below the smallest high watermark. Then the partition's diff and
//! loss as `klf diff` computes them (the reference from the metadata log,
//! the capture's evidence; a large replica's logs read in the window where
//! replicas can differ), and the log-matching rule: where fingerprints
//! differ, one merge of the replicas' batch streams in offset order finds
//! where, and the diff reads every batch. Then the controller rules. What a
//! partition leaves behind is its findings and a few summaries: memory does
//! not grow with the batches of a capture.

pub mod digested;
mod replica;
mod segment;
mod stream;

use crate::analysis::check::settle_unreadable;
use std::collections::BTreeSet;

use rayon::prelude::*;

use crate::analysis::check::{
    agreement_range, assemble, check_partition, code, display, finding, impact_findings,
    log_matching_at, not_captured_uncompared, settle, settle_metadata, AtOffset, BatchAt, Checked,
    LogMatching, PartitionChecked, ReplicaResult, Settled,
};
use crate::analysis::diff::PartitionReplicas;
use crate::capture::scan::tail_end;
use crate::capture::transactions::CoordinatorView;
use crate::engine::diff::{diff_partition_adjusted, PartitionResult, ReadMode};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::engine::impact::{coordinator, impact_of};
use crate::format::names::METADATA_TOPIC;
use crate::model::check::{CheckReport, Location};
use crate::model::truncation::ReplicationProtocol;
use crate::model::{Capture, Replica, ReplicaLog};

use replica::{base_location, check_replica, keeps_batches, scan_replica, Scanned};
use stream::{Batches, HeldBatches, ReplicaBatches};

/// The partitions a check reads and reports (`--topic`, `--partition`;
/// every one when both are `None`). The metadata log is among them when
/// `topic` names it, or when no filter is given. The evidence (the
/// metadata log, `__consumer_offsets`) is read whatever the filter: the
/// loss of a partition is the same filtered or not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Only {
    /// Only this topic.
    pub topic: Option<String>,
    /// Only this partition number.
    pub partition: Option<i32>,
}

impl Only {
    /// Whether no filter is given.
    pub fn all(&self) -> bool {
        self.topic.is_none() && self.partition.is_none()
    }

    /// Whether the metadata log is selected.
    pub fn metadata(&self) -> bool {
        self.all()
            || (self.topic.as_deref() == Some(METADATA_TOPIC)
                && self.partition.is_none_or(|p| p == 0))
    }

    /// Whether partition `partition` of `topic` is selected.
    pub fn selects(&self, topic: &str, partition: i32) -> bool {
        if topic == METADATA_TOPIC {
            return self.metadata();
        }
        self.topic.as_ref().is_none_or(|t| t == topic)
            && self.partition.is_none_or(|p| p == partition)
    }

    /// Whether a finding at `l` is reported: one about a selected
    /// partition, or about no partition (a broker's file, the capture).
    pub fn keeps(&self, l: &Location) -> bool {
        match (&l.topic, l.partition) {
            (None, _) => true,
            (Some(t), Some(p)) => self.selects(t, p),
            (Some(t), None) => {
                if t == METADATA_TOPIC {
                    self.metadata()
                } else {
                    self.topic.as_ref().is_none_or(|x| x == t)
                }
            }
        }
    }

    /// The replicas of `capture` it selects (the metadata logs included
    /// when selected).
    pub fn replicas(&self, capture: &Capture) -> usize {
        let data: usize = capture
            .partitions
            .iter()
            .filter(|((t, p), _)| self.selects(t, *p))
            .map(|(_, r)| r.len())
            .sum();
        data + if self.metadata() {
            capture.metadata_logs.len()
        } else {
            0
        }
    }
}

/// Runs every check on the partitions of `capture` that `only` selects;
/// `progress` is called once per replica checked (from worker threads).
/// `protocol` is the truncation protocol the operator gave
/// (`--inter-broker-protocol`), else it comes from the capture
/// ([`Evidence::diff_options`]).
pub fn check(
    capture: &Capture,
    protocol: Option<ReplicationProtocol>,
    only: &Only,
    progress: &(dyn Fn() + Sync),
) -> CheckReport {
    let evidence = Evidence::gather(capture);
    let options = evidence.diff_options(protocol);
    let coord = std::sync::OnceLock::new();
    let impacts = std::sync::Mutex::new(Vec::new());
    let partitions: Vec<(&(String, i32), &Vec<Replica>)> = capture
        .partitions
        .iter()
        .filter(|((t, p), _)| only.selects(t, *p))
        .collect();
    let view = evidence.controller.as_ref();
    let mut checked: Vec<Settled> = partitions
        .par_iter()
        .map(|((topic, partition), reps)| {
            let ids = broker_ids(reps);
            // The log-matching range, from what the replicas' checkpoints
            // and tails say: the scans take a fingerprint of it.
            // (small replicas keep their batches: nothing to plan)
            let planned = if reps.len() >= 2 && !reps.iter().all(keeps_batches) {
                planned_range(reps)
            } else {
                None
            };
            let scanned: Vec<Scanned> = reps
                .par_iter()
                .zip(&ids)
                .map(|(r, &id)| {
                    let mut s = scan_replica(r, id, planned, clean_shutdown(capture, r));
                    if capture.unreadable_for(r).is_some() {
                        // what it needs could not be read: the capture's
                        // file-unreadable finding names it
                        s.result.findings.clear();
                        s.result.unreadable = true;
                    }
                    progress();
                    s
                })
                .collect();
            // A replica a read of which failed is left out of the
            // cross-replica rules (nothing is inferred from it).
            let readable: Vec<usize> = (0..scanned.len())
                .filter(|&i| !scanned[i].result.unreadable)
                .collect();
            // Assigned replicas (metadata log) not in the capture.
            let missing: Vec<i32> = evidence
                .history(topic, *partition)
                .map(|h| {
                    h.replicas
                        .iter()
                        .copied()
                        .filter(|b| !ids.contains(b))
                        .collect()
                })
                .unwrap_or_default();
            let (results, cross) = if readable.len() >= 2 {
                let left_out: Vec<i32> = (0..scanned.len())
                    .filter(|i| !readable.contains(i))
                    .map(|i| ids[i])
                    .collect();
                let subset: Vec<Replica>;
                let sub: &[Replica] = if left_out.is_empty() {
                    reps
                } else {
                    subset = readable.iter().map(|&i| reps[i].clone()).collect();
                    &subset
                };
                let mut slots: Vec<Option<ReplicaResult>> = vec![None; scanned.len()];
                let mut taken = Vec::with_capacity(readable.len());
                for (i, s) in scanned.into_iter().enumerate() {
                    if readable.contains(&i) {
                        taken.push(s);
                    } else {
                        slots[i] = Some(s.result);
                    }
                }
                let (results, mut cross, impact) = cross_check(
                    &evidence, &options, &coord, topic, *partition, sub, planned, taken,
                );
                cross.1.left_out = left_out;
                // the diff could not read them all (memory, I/O): nothing is
                // concluded about the partition
                let compared = !results.iter().any(|r| r.unreadable);
                if let Some(i) = impact {
                    if let Ok(mut v) = impacts.lock() {
                        v.push(i);
                    }
                }
                for (&i, r) in readable.iter().zip(results) {
                    slots[i] = Some(r);
                }
                (
                    slots.into_iter().flatten().collect::<Vec<_>>(),
                    compared.then_some(cross),
                )
            } else {
                (scanned.into_iter().map(|s| s.result).collect(), None)
            };
            let done = PartitionChecked {
                replicas: results
                    .into_iter()
                    .zip(reps.iter().zip(&ids))
                    .map(|(result, (r, &broker))| Checked {
                        topic: &r.topic,
                        partition: r.partition,
                        broker,
                        partition_key: Some((topic.clone(), *partition)),
                        result,
                    })
                    .collect(),
                cross,
            };
            let compared = done.cross.is_some();
            // what the report needs of it, and nothing else
            let mut settled = settle(done, view);
            settled.not_captured = missing.len() as u64;
            if !compared {
                // the diff's finding says it where replicas are compared
                settled
                    .findings
                    .extend(not_captured_uncompared(topic, *partition, &missing));
            }
            settled
        })
        .collect();
    let metadata_logs: &[Replica] = if only.metadata() {
        &capture.metadata_logs
    } else {
        &[]
    };
    let metadata: Vec<Settled> = metadata_logs
        .par_iter()
        .zip(broker_ids(metadata_logs))
        .map(|(r, broker)| {
            let mut result = check_replica(r, broker, clean_shutdown(capture, r));
            if capture.unreadable_for(r).is_some() {
                result.findings.clear();
                result.unreadable = true;
            }
            progress();
            settle_metadata(Checked {
                topic: &r.topic,
                partition: r.partition,
                broker,
                partition_key: None,
                result,
            })
        })
        .collect();
    checked.extend(metadata);
    let mut report = assemble(capture, checked, view, evidence.logs().map(|l| &l.read));
    let impacts = impacts.into_inner().unwrap_or_default();
    if !impacts.is_empty() {
        for i in &impacts {
            report.findings.extend(impact_findings(i));
        }
        report.findings.sort_by(|a, b| {
            (&a.location, &a.code, &a.message).cmp(&(&b.location, &b.code, &b.message))
        });
    }
    if !only.all() {
        // the capture's and the controller's findings about partitions not
        // selected
        report.findings.retain(|f| only.keeps(&f.location));
    }
    report.recount();
    report
}

/// Whether `r`'s log directory holds Kafka's clean-shutdown marker (`None`:
/// the log directory is not in the capture).
fn clean_shutdown(capture: &Capture, r: &Replica) -> Option<bool> {
    capture
        .brokers
        .iter()
        .find(|b| b.path == r.log_dir)
        .map(|b| b.clean_shutdown.is_some())
}

/// The log-matching range `[lo, min_hw)` of a partition as its replicas'
/// checkpoints and the tails of their logs give it before their batches are
/// read (`None` where a tail does not read cleanly).
fn planned_range(reps: &[Replica]) -> Option<(i64, i64)> {
    let tails: Vec<Result<(i64, u64), String>> = reps.par_iter().map(tail_end).collect();
    let mut min_hw = i64::MAX;
    let mut lo = i64::MIN;
    for (r, tail) in reps.iter().zip(tails) {
        let (leo, _) = tail.ok()?;
        let first_base = r.segments.first().map(|s| s.base_offset);
        let lso = match (r.log_start_offset, first_base) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(0),
        };
        let hw = r.high_watermark.unwrap_or(lso).clamp(lso, leo.max(lso));
        min_hw = min_hw.min(hw);
        lo = lo.max(lso);
    }
    if let Some(c) = reps.iter().filter_map(|r| r.cleaner_offset).max() {
        lo = lo.max(c);
    }
    Some((lo, min_hw))
}

/// A stream's read that failed, as a finding.
fn unreadable(
    base: &Location,
    failed: Option<(std::path::PathBuf, String)>,
) -> Option<crate::model::check::Finding> {
    failed.map(|(path, e)| {
        finding(
            code::FILE_UNREADABLE,
            Location {
                file: Some(display(&path)),
                ..base.clone()
            },
            format!("cannot read: {e}"),
        )
    })
}

/// A partition's cross-replica checks: its diff and loss (and the impact of
/// a loss), then one pass over its replicas' batches in offset order, and
/// the cross-replica rules.
#[allow(clippy::too_many_arguments)]
fn cross_check(
    evidence: &Evidence<'_>,
    options: &crate::model::diff::DiffOptions,
    coord: &std::sync::OnceLock<CoordinatorView>,
    topic: &str,
    partition: i32,
    reps: &[Replica],
    planned: Option<(i64, i64)>,
    scanned: Vec<Scanned>,
) -> (
    Vec<ReplicaResult>,
    (
        Vec<crate::model::check::Finding>,
        crate::model::check::PartitionCheck,
    ),
    Option<crate::model::impact::PartitionImpact>,
) {
    let prints: Vec<_> = scanned.iter().map(|s| s.agree).collect();
    let all_kept = scanned.iter().all(|s| s.kept.is_some());
    let mut results = Vec::with_capacity(scanned.len());
    let mut plans = Vec::with_capacity(scanned.len());
    let mut kept = Vec::with_capacity(scanned.len());
    for s in scanned {
        results.push(s.result);
        plans.push(s.plans);
        kept.push(s.kept.unwrap_or_default());
    }
    // The diff and loss `klf diff` reports, over the logs read as it reads
    // them; below the highest cleaned offset the replicas' compacted logs
    // are not compared.
    let cleaned_to = results.iter().filter_map(|r| r.cleaned_to).max();
    let adjust = |log: &mut ReplicaLog| {
        if let Some(c) = cleaned_to {
            let start = log.log_start_offset.max(c.min(log.log_end_offset));
            log.log_start_offset = start;
            log.batches.retain(|b| b.last_offset >= start);
        }
    };
    let reference = evidence.reference(None, topic, partition);
    let mut pr = if all_kept {
        // small replicas: their batches are at hand, every one is compared
        let input = PartitionReplicas {
            topic: topic.to_string(),
            partition,
            replicas: results
                .iter()
                .zip(&kept)
                .map(|(r, k)| {
                    let mut log = r.log.clone();
                    log.batches = k.iter().map(|b| b.summary.clone()).collect();
                    adjust(&mut log);
                    log
                })
                .collect(),
            reference,
        };
        let (diff, loss) = evidence.analyze(&input, reps, options);
        PartitionResult {
            diff,
            loss,
            logs: input.replicas,
            problems: Vec::new(),
            left_out: Vec::new(),
        }
    } else {
        diff_partition_adjusted(
            evidence,
            topic,
            partition,
            reps,
            reference,
            options,
            ReadMode::Window,
            &adjust,
        )
    };
    // A read the diff made that failed (memory, I/O): those replicas are
    // unreadable, and nothing else is inferred from them.
    for p in pr.problems.iter().filter(|p| p.io) {
        for (r, res) in reps.iter().zip(results.iter_mut()) {
            if p.path.starts_with(&r.dir) {
                res.findings.push(finding(
                    code::FILE_UNREADABLE,
                    Location {
                        file: Some(display(&p.path)),
                        position: p.position,
                        ..base_location(r, res.log.broker)
                    },
                    p.message.clone(),
                ));
                settle_unreadable(res);
            }
        }
    }
    // Below the smallest high watermark every replica must hold the same
    // batches. Where the scans' fingerprints of that range agree, they do;
    // else one pass over the replicas' batches in offset order finds where
    // they differ.
    let (lo, min_hw) = {
        let refs: Vec<&ReplicaResult> = results.iter().collect();
        agreement_range(&refs)
    };
    let mut matching = Vec::new();
    let mut reported = BTreeSet::new();
    let agree = lo >= min_hw
        || (!all_kept && planned == Some((lo, min_hw)) && prints.iter().all(|p| *p == prints[0]));
    if !agree {
        let mut streams: Vec<Box<dyn Batches>> = if all_kept {
            kept.into_iter()
                .map(|k| Box::new(HeldBatches(k.into())) as Box<dyn Batches>)
                .collect()
        } else {
            plans
                .into_iter()
                .map(|p| Box::new(ReplicaBatches::new(p)) as Box<dyn Batches>)
                .collect()
        };
        // Each replica's last batch taken (the one spanning the next offsets).
        let mut last: Vec<Option<BatchAt>> = vec![None; streams.len()];
        let bounds: Vec<(i64, i64)> = results
            .iter()
            .map(|r| (r.log.log_start_offset, r.log.log_end_offset))
            .collect();
        let refs: Vec<&ReplicaResult> = results.iter().collect();
        loop {
            // the smallest next base offset below the range's end
            let mut next: Option<i64> = None;
            for s in streams.iter_mut() {
                if let Some(b) = s.peek() {
                    let o = b.summary.base_offset;
                    next = Some(next.map_or(o, |n| n.min(o)));
                }
            }
            let Some(o) = next.filter(|&o| o < min_hw) else {
                break;
            };
            let mut starts: Vec<Option<BatchAt>> = vec![None; streams.len()];
            for (i, s) in streams.iter_mut().enumerate() {
                while s.peek().is_some_and(|b| b.summary.base_offset == o) {
                    let Some(b) = s.next_batch() else { break };
                    if starts[i].is_none() {
                        starts[i] = Some(b.clone());
                    }
                    last[i] = Some(b);
                }
            }
            if o < lo {
                continue;
            }
            let at: Vec<AtOffset> = (0..streams.len())
                .filter(|&i| bounds[i].0 <= o && o < bounds[i].1)
                .map(|i| AtOffset {
                    replica: i,
                    starts: starts[i].as_ref().map(|b| (b.summary.key(), b.place)),
                    holds: last[i]
                        .as_ref()
                        .filter(|b| b.summary.base_offset <= o && o <= b.summary.last_offset)
                        .map(|b| (b.summary.key(), b.place)),
                })
                .collect();
            let rule = LogMatching {
                topic,
                partition,
                min_hw,
                reps: &refs,
                reference: pr.diff.reference.broker,
            };
            log_matching_at(&rule, o, &at, &mut reported, &mut matching);
        }
        for (i, s) in streams.iter_mut().enumerate() {
            let base = base_location(&reps[i], results[i].log.broker);
            matching.extend(unreadable(&base, s.failed()));
        }
    }
    // Replicas that differ below the high watermark break what the window
    // takes on trust (a shared prefix): the diff then reads every batch.
    if !all_kept && !reported.is_empty() {
        pr = diff_partition_adjusted(
            evidence,
            topic,
            partition,
            reps,
            evidence.reference(None, topic, partition),
            options,
            ReadMode::Full,
            &adjust,
        );
    }
    let impact = if pr.loss.any() {
        let coord = coord.get_or_init(|| coordinator(evidence));
        let mut problems = Vec::new();
        impact_of(
            evidence,
            reps,
            &pr.diff,
            &pr.loss,
            &pr.logs,
            coord,
            &mut problems,
        )
    } else {
        None
    };
    let refs: Vec<&ReplicaResult> = results.iter().collect();
    let (mut findings, check) =
        check_partition(topic, partition, &refs, &pr.diff, &pr.loss, &reported);
    matching.append(&mut findings);
    (results, (matching, check), impact)
}

/// Whether a file of the capture could not be read (a `file-unreadable`
/// finding): the machine's failure, not evidence about the data, so the
/// run exits 2 whatever `--fail-on` and the baseline say.
pub fn machine_failed(report: &CheckReport) -> bool {
    report
        .findings
        .iter()
        .any(|f| f.code == code::FILE_UNREADABLE)
}
