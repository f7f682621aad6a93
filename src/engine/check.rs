//! The check pipeline: every replica checked on its own, then every
//! partition across its replicas with the same diff and loss as `klf diff`
//! (the reference from the metadata log, the capture's evidence).

use crate::analysis::check::{check_capture, CheckReport};
use crate::analysis::diff::{DiffOptions, PartitionReplicas};
use crate::capture::discover::Capture;
use crate::engine::evidence::Evidence;

/// Runs every check on `capture`; `progress` is called once per replica
/// checked (from worker threads).
pub fn check(capture: &Capture, progress: &(dyn Fn() + Sync)) -> CheckReport {
    let evidence = Evidence::gather(capture);
    let analyze = |topic: &str, partition: i32, logs| {
        let input = PartitionReplicas {
            topic: topic.to_string(),
            partition,
            replicas: logs,
            reference: evidence.reference(None, topic, partition),
        };
        evidence.analyze(
            &input,
            capture.replicas(topic, partition),
            &DiffOptions::default(),
        )
    };
    check_capture(capture, &analyze, progress)
}
