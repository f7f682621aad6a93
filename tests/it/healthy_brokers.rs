//! No alarm about the files of a healthy broker: every capture whose
//! scenario.json lists its healthy nodes (`healthy_nodes` for the capture,
//! `healthy_nodes_after` for its `after/`; the oracle derives them: Kafka
//! wrote the files, Kafka did not cut records from that replica when it
//! rejoined, the harness altered nothing) is run through `klf check`, and
//! no error or warning may be about the files of a healthy node. Findings
//! about what a partition lost and about the replicas against each other
//! (the replication family) are left out: they are about the partition,
//! not about one node's files. A false error on a healthy broker sends an
//! operator hunting for corruption that is not there.
//!
//! The committed captures under testdata/kafka/ are always checked; CI
//! also sets KLF_FRESH_CAPTURES to a folder of captures its own fresh
//! Kafka run just made.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{klf, text};

/// The families whose findings are about one node's files: what
/// discovery found, segments, indexes, leader epochs, offsets and
/// checkpoints. The replication family compares replicas and counts what a
/// partition lost.
const FILE_FAMILIES: [&str; 5] = ["capture", "segments", "indexes", "epochs", "offsets"];

/// The node id of a `broker-<id>` or `controller-<id>` folder name.
fn node_folder(name: &str) -> Option<i64> {
    let id = name
        .strip_prefix("broker-")
        .or_else(|| name.strip_prefix("controller-"))?;
    id.parse().ok()
}

/// The node a finding is about: the node folder its file lies in (the
/// first one under the checked folder), else the broker it names.
fn node_of(checked: &Path, finding: &Value) -> Option<i64> {
    if let Some(file) = finding["file"].as_str() {
        let path = Path::new(file);
        let inside = path.strip_prefix(checked).unwrap_or(path);
        if let Some(n) = inside
            .components()
            .find_map(|c| node_folder(&c.as_os_str().to_string_lossy()))
        {
            return Some(n);
        }
    }
    finding["broker"].as_i64()
}

#[test]
fn node_of_reads_the_folder_under_the_checked_one() {
    let checked = Path::new("/c/broker-7/x");
    let f = serde_json::json!({"file": "/c/broker-7/x/broker-2/t-0/0.index", "broker": 2});
    assert_eq!(node_of(checked, &f), Some(2));
    let f = serde_json::json!({"file": "/c/after/controller-100/__cluster_metadata-0/0.log"});
    assert_eq!(node_of(Path::new("/c/after"), &f), Some(100));
    let f = serde_json::json!({"file": null, "broker": 3});
    assert_eq!(node_of(Path::new("/c"), &f), Some(3));
    let f = serde_json::json!({"file": null, "broker": null});
    assert_eq!(node_of(Path::new("/c"), &f), None);
}

/// One error or warning about a healthy node's files.
struct Offence {
    capture: String,
    node: i64,
    code: String,
    severity: String,
    file: String,
    message: String,
}

#[test]
fn klf_check_raises_no_alarm_about_a_healthy_nodes_files() {
    let mut checked = Vec::new();
    let mut offences = Vec::new();
    for dir in crate::common::scenario_dirs() {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for (key, sub) in [
            ("healthy_nodes", None),
            ("healthy_nodes_after", Some("after")),
        ] {
            let Some(healthy) = s.get(key).and_then(Value::as_array) else {
                continue;
            };
            let healthy: Vec<i64> = healthy.iter().filter_map(Value::as_i64).collect();
            let target = sub.map_or_else(|| dir.clone(), |x| dir.join(x));
            let label = sub.map_or_else(|| name.clone(), |x| format!("{name}/{x}"));
            let out = klf(&["check", "--format", "json", target.to_str().unwrap()]);
            assert!(
                matches!(out.status.code(), Some(0) | Some(1)),
                "klf check {label} failed ({:?}): {}",
                out.status.code(),
                text(&out.stderr)
            );
            let report: Value = serde_json::from_slice(&out.stdout).expect("klf check prints JSON");
            for f in report["findings"].as_array().unwrap() {
                let severity = f["severity"].as_str().unwrap_or_default();
                let family = f["family"].as_str().unwrap_or_default();
                if !matches!(severity, "error" | "warning") || !FILE_FAMILIES.contains(&family) {
                    continue;
                }
                let Some(node) = node_of(&target, f) else {
                    continue;
                };
                if healthy.contains(&node) {
                    let file = f["file"].as_str().unwrap_or("-");
                    let file = Path::new(file)
                        .strip_prefix(&target)
                        .map_or_else(|_| file.to_string(), |p| p.display().to_string());
                    offences.push(Offence {
                        capture: label.clone(),
                        node,
                        code: f["code"].as_str().unwrap_or_default().to_string(),
                        severity: severity.to_string(),
                        file,
                        message: f["message"].as_str().unwrap_or_default().to_string(),
                    });
                }
            }
            checked.push(format!("{label} (healthy {healthy:?})"));
        }
    }
    assert!(
        !checked.is_empty(),
        "no capture lists its healthy nodes (healthy_nodes in scenario.json)"
    );
    if offences.is_empty() {
        return;
    }
    let mut counts: BTreeMap<(&str, i64, &str, &str), usize> = BTreeMap::new();
    for o in &offences {
        *counts
            .entry((&o.capture, o.node, &o.code, &o.severity))
            .or_default() += 1;
    }
    let mut msg = format!(
        "{} errors and warnings about the files of healthy nodes, in {} of {} captures checked\n\
         by capture, node, code:\n",
        offences.len(),
        counts
            .keys()
            .map(|k| k.0)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        checked.len()
    );
    for ((capture, node, code, severity), n) in &counts {
        msg.push_str(&format!(
            "  {capture} node {node}: {code} ({severity}) x{n}\n"
        ));
    }
    msg.push_str("every finding:\n");
    for o in &offences {
        msg.push_str(&format!(
            "  {} node {}: {} {} {}: {}\n",
            o.capture, o.node, o.code, o.severity, o.file, o.message
        ));
    }
    panic!("{msg}");
}
