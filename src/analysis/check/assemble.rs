//! The report of a whole capture from its replicas' own checks, the
//! cross-replica rules and the controller rules.

use std::collections::{BTreeMap, BTreeSet};

use super::report::{
    CheckReport, Checked, Finding, PartitionCheck, ReplicaResult, Subject, Summary,
};
use super::rules::{capture_findings, controller_findings, no_metadata_log};
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

/// The report of a capture: discovery's diagnostics, each replica's
/// findings (`partitions`' and the metadata logs' in `metadata`), the
/// cross-replica findings of every partition, and the controller rules
/// (from `view`, the metadata log).
pub fn assemble(
    capture: &Capture,
    partitions: &[PartitionChecked<'_>],
    metadata: &[Checked<'_>],
    view: Option<&ControllerView>,
) -> CheckReport {
    let mut findings = capture_findings(capture);
    let mut summary = Summary::default();
    let mut subjects = BTreeSet::new();
    let mut by_partition: BTreeMap<(String, i32), Vec<&ReplicaResult>> = BTreeMap::new();
    let mut names = BTreeSet::new();
    let mut partition_checks = Vec::new();
    let all = partitions
        .iter()
        .flat_map(|p| p.replicas.iter())
        .chain(metadata);
    for j in all {
        let r = &j.result;
        summary.replicas += 1;
        summary.segments += r.segments;
        summary.batches += r.batches;
        summary.bytes += r.bytes;
        findings.extend(r.findings.iter().cloned());
        subjects.insert(Subject {
            topic: j.topic.to_string(),
            partition: j.partition,
            broker: Some(j.broker),
        });
        names.insert((j.topic.to_string(), j.partition));
        if let Some(k) = &j.partition_key {
            by_partition.entry(k.clone()).or_default().push(r);
        }
    }
    summary.partitions = names.len() as u64;
    for p in partitions {
        let Some((cross, check)) = &p.cross else {
            continue;
        };
        subjects.insert(Subject {
            topic: check.topic.clone(),
            partition: check.partition,
            broker: None,
        });
        findings.extend(cross.iter().cloned());
        partition_checks.push(check.clone());
    }
    partition_checks.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
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
