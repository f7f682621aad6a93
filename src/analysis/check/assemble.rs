//! The report of a whole capture from its replicas' own checks, the
//! cross-replica rules and the controller rules.
//!
//! Each partition is settled as soon as it is checked ([`settle`]): the
//! controller's rules about it run then, and what it leaves behind is its
//! findings, its replicas' counts and its summary — not the replicas'
//! checked state, so memory at the end of a run is the findings', whatever
//! the number of partitions.

use super::report::{Checked, ReplicaResult};
use super::rules::{
    capture_findings, controller_findings, epoch_beyond_controller, no_metadata_log,
};
use crate::model::check::{CheckReport, Finding, PartitionCheck, Subject, Summary};
use crate::model::{Capture, ControllerView};

/// One partition checked: its replicas' own checks and, for a partition
/// with two or more replicas, what the cross-replica rules found and the
/// partition's summary.
pub struct PartitionChecked<'a> {
    /// Each replica's own checks.
    pub replicas: Vec<Checked<'a>>,
    /// The cross-replica findings and summary (`None`: one replica).
    pub cross: Option<(Vec<Finding>, PartitionCheck)>,
}

/// What a partition (or a metadata log) leaves for the report once its
/// checks are done.
#[derive(Default)]
pub struct Settled {
    /// Every finding about it: its replicas' own, the cross-replica and
    /// the controller rules'.
    pub findings: Vec<Finding>,
    /// Its replicas, as subjects of the report.
    pub replicas: Vec<Subject>,
    /// Segments, batches and bytes read.
    pub segments: u64,
    /// Batches read.
    pub batches: u64,
    /// Bytes read.
    pub bytes: u64,
    /// The partition's cross-replica summary (`None`: fewer than two
    /// replicas compared).
    pub check: Option<PartitionCheck>,
    /// Replicas the metadata log assigns to the partition that are not in
    /// the capture.
    pub not_captured: u64,
}

impl Settled {
    fn add(&mut self, j: Checked<'_>) {
        let r = j.result;
        self.segments += r.segments;
        self.batches += r.batches;
        self.bytes += r.bytes;
        self.findings.extend(r.findings);
        self.replicas.push(Subject {
            topic: j.topic.to_string(),
            partition: j.partition,
            broker: Some(j.broker),
        });
    }
}

/// Settles one data partition: the controller's rules about its replicas
/// (from `view`, the metadata log) run, and only what the report needs is
/// kept.
pub fn settle(p: PartitionChecked<'_>, view: Option<&ControllerView>) -> Settled {
    let mut out = Settled::default();
    if let (Some(v), Some(first)) = (view, p.replicas.first()) {
        let results: Vec<&ReplicaResult> = p.replicas.iter().map(|j| &j.result).collect();
        out.findings.extend(epoch_beyond_controller(
            v,
            first.topic,
            first.partition,
            &results,
        ));
    }
    for j in p.replicas {
        out.add(j);
    }
    if let Some((cross, check)) = p.cross {
        out.findings.extend(cross);
        out.check = Some(check);
    }
    out
}

/// Settles a metadata log's own checks.
pub fn settle_metadata(j: Checked<'_>) -> Settled {
    let mut out = Settled::default();
    out.add(j);
    out
}

/// The report of a capture: discovery's diagnostics, each settled
/// partition and metadata log, and the controller's rules about the
/// cluster (from `view`, the metadata log).
pub fn assemble(
    capture: &Capture,
    settled: Vec<Settled>,
    view: Option<&ControllerView>,
    logs: Option<&crate::model::broker_log::BrokerLogs>,
) -> CheckReport {
    // sized once: a capture's findings can be most of a run's memory
    let mut findings = Vec::with_capacity(
        capture.warnings.len() + settled.iter().map(|s| s.findings.len()).sum::<usize>() + 1,
    );
    capture_findings(capture, &mut findings);
    if let Some(logs) = logs {
        crate::analysis::check::rules::broker_log_findings(logs, &mut findings);
    }
    let mut summary = Summary::default();
    let mut subjects = Vec::with_capacity(
        settled
            .iter()
            .map(|s| s.replicas.len() + usize::from(s.check.is_some()))
            .sum(),
    );
    let mut partition_checks = Vec::new();
    for mut s in settled {
        summary.segments += s.segments;
        summary.batches += s.batches;
        summary.bytes += s.bytes;
        summary.replicas += s.replicas.len() as u64;
        summary.replicas_not_captured += s.not_captured;
        findings.append(&mut s.findings);
        subjects.append(&mut s.replicas);
        if let Some(check) = s.check {
            subjects.push(Subject {
                topic: check.topic.clone(),
                partition: check.partition,
                broker: None,
            });
            partition_checks.push(check);
        }
    }
    subjects.sort_unstable();
    subjects.dedup();
    // partitions (and metadata logs) with a replica checked
    let mut names = 0;
    let mut last: Option<(&str, i32)> = None;
    for r in subjects.iter().filter(|r| r.broker.is_some()) {
        if last != Some((r.topic.as_str(), r.partition)) {
            names += 1;
            last = Some((r.topic.as_str(), r.partition));
        }
    }
    summary.partitions = names;
    partition_checks.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    summary.partitions_compared = partition_checks.len() as u64;
    summary.partitions_losing_data = partition_checks
        .iter()
        .filter(|p| p.loss.verdict != crate::model::loss::Verdict::NothingLost.name())
        .count() as u64;
    match view {
        Some(v) => findings.extend(controller_findings(v)),
        None if !capture.partitions.is_empty() => findings.push(no_metadata_log(capture)),
        None => {}
    }
    findings.sort_by(|a, b| {
        (&a.location, &a.code, &a.message).cmp(&(&b.location, &b.code, &b.message))
    });
    findings
        .dedup_by(|a, b| a.code == b.code && a.location == b.location && a.message == b.message);
    findings.shrink_to_fit();
    let mut report = CheckReport {
        findings,
        summary,
        partitions: partition_checks,
        subjects,
    };
    report.recount();
    report
}
