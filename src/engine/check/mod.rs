//! The check pipeline: every replica checked on its own in parallel
//! (segments, indexes, snapshots, transaction indexes, epochs, offsets: the
//! reading is here, the rules in `analysis::check`), then every partition
//! across its replicas with the same diff and loss as `klf diff` (the
//! reference from the metadata log, the capture's evidence), and the
//! controller rules.

mod replica;

use rayon::prelude::*;

use crate::analysis::check::{assemble, impact_findings, CheckReport, Checked};
use crate::analysis::diff::PartitionReplicas;
use crate::analysis::truncation::ReplicationProtocol;
use crate::capture::discover::Capture;
use crate::engine::evidence::{broker_ids, Evidence};
use crate::engine::impact::{coordinator, impact_of};

/// Runs every check on `capture`; `progress` is called once per replica
/// checked (from worker threads).
/// `protocol` is the truncation protocol the operator gave
/// (`--inter-broker-protocol`), else it comes from the capture
/// ([`Evidence::diff_options`]).
pub fn check(
    capture: &Capture,
    protocol: Option<ReplicationProtocol>,
    progress: &(dyn Fn() + Sync),
) -> CheckReport {
    let evidence = Evidence::gather(capture);
    let options = evidence.diff_options(protocol);
    let mut jobs = Vec::new();
    for ((topic, partition), reps) in &capture.partitions {
        for (r, id) in reps.iter().zip(broker_ids(reps)) {
            jobs.push((r, id, Some((topic.clone(), *partition))));
        }
    }
    for (r, id) in capture
        .metadata_logs
        .iter()
        .zip(broker_ids(&capture.metadata_logs))
    {
        jobs.push((r, id, None));
    }
    let checked: Vec<Checked<'_>> = jobs
        .into_par_iter()
        .map(|(r, broker, partition_key)| {
            let result = replica::check_replica(r, broker);
            progress();
            Checked {
                topic: &r.topic,
                partition: r.partition,
                broker,
                partition_key,
                result,
            }
        })
        .collect();
    // The impact of each loss (klf impact's): computed here, beside the
    // diff, while the replica logs are at hand.
    let coord = std::sync::OnceLock::new();
    let impacts = std::sync::Mutex::new(Vec::new());
    let analyze = |topic: &str, partition: i32, logs| {
        let input = PartitionReplicas {
            topic: topic.to_string(),
            partition,
            replicas: logs,
            reference: evidence.reference(None, topic, partition),
        };
        let replicas = capture.replicas(topic, partition);
        let (diff, loss) = evidence.analyze(&input, replicas, &options);
        if loss.any() {
            let coord = coord.get_or_init(|| coordinator(&evidence));
            let mut problems = Vec::new();
            if let Some(i) = impact_of(
                &evidence,
                replicas,
                &diff,
                &loss,
                &input.replicas,
                coord,
                &mut problems,
            ) {
                if let Ok(mut v) = impacts.lock() {
                    v.push(i);
                }
            }
        }
        (diff, loss)
    };
    let mut report = assemble(capture, &checked, &analyze, evidence.controller.as_ref());
    let impacts = impacts.into_inner().unwrap_or_default();
    if !impacts.is_empty() {
        for i in &impacts {
            report.findings.extend(impact_findings(i));
        }
        report.findings.sort_by(|a, b| {
            (&a.location, &a.code, &a.message).cmp(&(&b.location, &b.code, &b.message))
        });
        report.recount();
    }
    report
}
