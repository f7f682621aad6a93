//! The report of a whole capture from its replicas' own checks, the
//! cross-replica rules and the controller rules.

use std::collections::{BTreeMap, BTreeSet};

use super::report::{
    CheckReport, Checked, Finding, PartitionAnalyzer, PartitionCheck, ReplicaResult, Subject,
    Summary,
};
use super::rules::{capture_findings, check_partition, controller_findings, no_metadata_log};
use crate::model::{Capture, ControllerView};

/// The report of a capture from its replicas' own checks: discovery's
/// diagnostics, each replica's findings, the cross-replica rules of every
/// partition with two or more replicas (through `analyze`, the engine's
/// diff and loss) and the controller rules (from `view`, the metadata log).
pub fn assemble(
    capture: &Capture,
    checked: &[Checked<'_>],
    analyze: &PartitionAnalyzer<'_>,
    view: Option<&ControllerView>,
) -> CheckReport {
    use rayon::prelude::*;
    let mut findings = capture_findings(capture);
    let mut summary = Summary::default();
    let mut subjects = BTreeSet::new();
    let mut by_partition: BTreeMap<(String, i32), Vec<&ReplicaResult>> = BTreeMap::new();
    let mut partitions = BTreeSet::new();
    for j in checked {
        let r = &j.result;
        summary.replicas += 1;
        summary.segments += r.segments;
        summary.batches += r.batches.len() as u64;
        summary.bytes += r.bytes;
        findings.extend(r.findings.iter().cloned());
        subjects.insert(Subject {
            topic: j.topic.to_string(),
            partition: j.partition,
            broker: Some(j.broker),
        });
        partitions.insert((j.topic.to_string(), j.partition));
        if let Some(k) = &j.partition_key {
            by_partition.entry(k.clone()).or_default().push(r);
        }
    }
    summary.partitions = partitions.len() as u64;
    let cross: Vec<(Vec<Finding>, PartitionCheck)> = by_partition
        .par_iter()
        .filter(|(_, reps)| reps.len() >= 2)
        .map(|((topic, partition), reps)| check_partition(topic, *partition, reps, analyze))
        .collect();
    let (cross, partition_checks): (Vec<Vec<Finding>>, Vec<PartitionCheck>) =
        cross.into_iter().unzip();
    for ((topic, partition), reps) in &by_partition {
        if reps.len() >= 2 {
            subjects.insert(Subject {
                topic: topic.clone(),
                partition: *partition,
                broker: None,
            });
        }
    }
    findings.extend(cross.into_iter().flatten());
    match view {
        Some(v) => findings.extend(controller_findings(v, &by_partition)),
        None if !capture.partitions.is_empty() => findings.push(no_metadata_log(capture)),
        None => {}
    }
    findings.sort_by(|a, b| {
        (&a.location, &a.code, &a.message).cmp(&(&b.location, &b.code, &b.message))
    });
    findings
        .dedup_by(|a, b| a.code == b.code && a.location == b.location && a.message == b.message);
    let mut report = CheckReport {
        findings,
        summary,
        partitions: partition_checks,
        subjects: subjects.into_iter().collect(),
    };
    report.recount();
    report
}
