//! `klf timeline` on real captures: the epochs rebuilt from batch headers
//! agree with Kafka's own leader-epoch-checkpoint files, and the leader's
//! latest epoch is the one Kafka logged when it became leader.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use super::common::{finish, klf_command};
use serde_json::Value;

fn timeline(dir: &Path, topic: &str) -> (Option<i32>, Value) {
    let out = finish(
        klf_command()
            .args(["timeline", "--format", "json", "--topic", topic])
            .arg(dir),
    );
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        }),
    )
}

#[test]
fn elections_timeline_matches_checkpoints_and_kafka() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/elections");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let p = &s["partitions"][0];
    let topic = p["topic"].as_str().unwrap();
    let (code, report) = timeline(&dir, topic);
    assert_eq!(
        code,
        Some(0),
        "a clean capture has no disagreement: {report:#}"
    );
    let replicas = report["partitions"][0]["replicas"].as_array().unwrap();
    assert_eq!(replicas.len(), 3);
    for r in replicas {
        let spans = r["from_batches"].as_array().unwrap();
        let cp = r["checkpoint"].as_array().unwrap();
        // every epoch with batches is in the checkpoint at the same start offset
        for sp in spans {
            let e = sp["epoch"].as_i64().unwrap();
            let start = sp["start_offset"].as_i64().unwrap();
            assert!(
                cp.iter()
                    .any(|c| c[0].as_i64() == Some(e) && c[1].as_i64() == Some(start)),
                "broker {}: epoch {e} from {start} not in checkpoint {cp:?}",
                r["broker"]
            );
        }
        assert!(
            spans.len() >= 4,
            "several leaderships wrote data: {spans:?}"
        );
        // the broker's recovery-point-offset-checkpoint lists the partition
        let rp = r["recovery_point"].as_i64().expect("recovery point");
        assert!(rp >= 0 && rp <= r["log_end_offset"].as_i64().unwrap());
    }
    // The leader's latest epoch is what Kafka logged when it became leader.
    let leader = p["leader_at_capture"].as_i64().unwrap();
    let epoch = p["leader_epoch_at_capture"].as_i64().unwrap();
    let lr = replicas
        .iter()
        .find(|r| r["broker"].as_i64() == Some(leader))
        .unwrap();
    let last_cp = lr["checkpoint"].as_array().unwrap().last().unwrap()[0].as_i64();
    assert_eq!(last_cp, Some(epoch));
    let start = p["leader_start_offset_at_capture"].as_i64().unwrap();
    let last_span = lr["from_batches"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last_span["epoch"].as_i64(), Some(epoch));
    assert_eq!(last_span["start_offset"].as_i64(), Some(start));
}

#[test]
fn divergence_timeline_shows_the_old_leaders_tail() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/divergence");
    let (_, report) = timeline(&dir, "diverge");
    let replicas = report["partitions"][0]["replicas"].as_array().unwrap();
    let b1 = replicas.iter().find(|r| r["broker"] == 1).unwrap();
    let b2 = replicas.iter().find(|r| r["broker"] == 2).unwrap();
    let e1 = b1["from_batches"].as_array().unwrap().last().unwrap()["epoch"]
        .as_i64()
        .unwrap();
    let e2 = b2["from_batches"].as_array().unwrap().last().unwrap()["epoch"]
        .as_i64()
        .unwrap();
    assert!(e2 > e1, "the new leader wrote in a later epoch");
}

#[test]
fn elections_controller_view_matches_what_kafka_did() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/elections");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let p = &s["partitions"][0];
    let (_, report) = timeline(&dir, p["topic"].as_str().unwrap());
    let changes = report["partitions"][0]["controller"]["changes"]
        .as_array()
        .unwrap();
    // the leaders elected, in order, are the ones the harness caused
    let mut leaders: Vec<i64> = Vec::new();
    for c in changes.iter().filter(|c| c["leader_changed"] == true) {
        let l = c["leader"].as_i64().unwrap();
        if l >= 0 && leaders.last() != Some(&l) {
            leaders.push(l);
        }
    }
    let expected: Vec<i64> = p["leaders_in_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(leaders, expected);
    let last = changes.last().unwrap();
    assert_eq!(last["leader"].as_i64(), p["leader_at_capture"].as_i64());
    assert_eq!(
        last["leader_epoch"].as_i64(),
        p["leader_epoch_at_capture"].as_i64()
    );
    assert!(changes.iter().all(|c| c["unclean"] == false));
}

#[test]
fn unclean_election_is_flagged_from_the_metadata_log() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/unclean");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let p = &s["partitions"][0];
    let (_, report) = timeline(&dir, p["topic"].as_str().unwrap());
    let changes = report["partitions"][0]["controller"]["changes"]
        .as_array()
        .unwrap();
    let unclean: Vec<&Value> = changes.iter().filter(|c| c["unclean"] == true).collect();
    assert_eq!(unclean.len(), 1, "{changes:#?}");
    assert_eq!(
        unclean[0]["leader"].as_i64(),
        p["leader_at_capture"].as_i64()
    );
    assert_eq!(
        unclean[0]["leader_epoch"].as_i64(),
        p["leader_epoch_at_capture"].as_i64()
    );
}

#[test]
fn a_log_of_v0_v1_messages_needs_no_epoch_checkpoint() {
    // Kafka writes no leader-epoch-checkpoint entries for messages that
    // carry no epoch: timeline agrees with check that nothing is missing.
    let cap = crate::common::kafka("legacy-formats");
    let o = crate::common::klf(&["timeline", "--format", "json", cap.to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut replicas = 0;
    for p in doc["partitions"].as_array().unwrap() {
        for r in p["replicas"].as_array().unwrap() {
            let spans = r["from_batches"].as_array().unwrap();
            if spans.iter().all(|s| s["epoch"].as_i64() == Some(-1)) && r["checkpoint"].is_null() {
                replicas += 1;
                assert_eq!(r["disagreements"], serde_json::json!([]), "{r}");
            }
        }
    }
    assert!(
        replicas > 0,
        "the capture has v0/v1 replicas without a checkpoint"
    );
}

/// The metadata log's own timeline, on every committed KRaft capture: the
/// epochs its batches were written in agree with the leader-epoch-checkpoint
/// Kafka kept beside them, none is above the epoch the broker's
/// quorum-state records, and a folder holding only the metadata log (and
/// its broker's meta.properties) shows the same timeline instead of
/// "no partition".
#[test]
fn metadata_log_timeline_agrees_with_kafkas_checkpoint_and_quorum_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka");
    let mut logs = 0;
    let mut names: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for cap in names {
        // Broker folders (`broker-N`) and, where the capture has one, the
        // controller's (`controller-N`, a higher node id: last): the log
        // directory holding the metadata log, the node folder itself or,
        // for a node with several log directories, the one of them that
        // holds it (`broker-1/d1`).
        let mut nodes: Vec<(String, PathBuf)> = Vec::new();
        for b in std::fs::read_dir(&cap).unwrap().map(|e| e.unwrap().path()) {
            let name = b.file_name().unwrap().to_string_lossy().into_owned();
            if b.join("__cluster_metadata-0").is_dir() {
                nodes.push((name, b));
            } else if b.is_dir() && (name.starts_with("broker-") || name.starts_with("controller-"))
            {
                for d in std::fs::read_dir(&b).unwrap().map(|e| e.unwrap().path()) {
                    if d.join("__cluster_metadata-0").is_dir() {
                        nodes.push((name.clone(), d));
                    }
                }
            }
        }
        nodes.sort_by_key(|(name, _)| (name.starts_with("controller"), name.clone()));
        let brokers: Vec<PathBuf> = nodes.into_iter().map(|(_, d)| d).collect();
        if brokers.is_empty() {
            continue;
        }
        let (code, v) = timeline(&cap, "__cluster_metadata");
        assert!(matches!(code, Some(0 | 1)), "{}", cap.display());
        let part = &v["partitions"][0];
        assert_eq!(part["topic"], "__cluster_metadata", "{}", cap.display());
        assert!(part["controller"].is_null());
        let replicas = part["replicas"].as_array().unwrap();
        assert_eq!(replicas.len(), brokers.len(), "{}", cap.display());
        for (r, dir) in replicas.iter().zip(&brokers) {
            logs += 1;
            let meta = dir.join("__cluster_metadata-0");
            // Kafka's checkpoint: the first offset of each epoch.
            let text = std::fs::read_to_string(meta.join("leader-epoch-checkpoint")).unwrap();
            let kafka: Vec<(i64, i64)> = text
                .lines()
                .skip(2)
                .filter_map(|l| {
                    let mut f = l.split_whitespace().map(|x| x.parse::<i64>().unwrap());
                    Some((f.next()?, f.next()?))
                })
                .collect();
            let from_batches: Vec<(i64, i64)> = r["from_batches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["epoch"].as_i64().unwrap(),
                        e["start_offset"].as_i64().unwrap(),
                    )
                })
                .collect();
            // Every epoch the batches hold starts where Kafka's checkpoint
            // says (the checkpoint may hold later epochs that wrote nothing
            // yet on this replica).
            for e in &from_batches {
                assert!(
                    kafka.contains(e),
                    "{}: {e:?} not in {kafka:?}",
                    meta.display()
                );
            }
            assert_eq!(
                r["disagreements"].as_array().unwrap().len(),
                0,
                "{}: {r}",
                meta.display()
            );
            let qs: Value =
                serde_json::from_str(&std::fs::read_to_string(meta.join("quorum-state")).unwrap())
                    .unwrap();
            let quorum_epoch = qs["leaderEpoch"].as_i64().unwrap();
            for (epoch, _) in &from_batches {
                assert!(
                    *epoch <= quorum_epoch,
                    "{}: {epoch} > {quorum_epoch}",
                    meta.display()
                );
            }
        }
        // The metadata log alone: its own timeline, not "no partition".
        let alone = super::common::scratch(&format!(
            "metadata-alone-{}",
            cap.file_name().unwrap().to_string_lossy()
        ));
        let b = alone.join("broker-1");
        super::common::copy_tree(
            &brokers[0].join("__cluster_metadata-0"),
            &b.join("__cluster_metadata-0"),
        );
        if brokers[0].join("meta.properties").is_file() {
            std::fs::copy(
                brokers[0].join("meta.properties"),
                b.join("meta.properties"),
            )
            .unwrap();
        }
        let out = finish(klf_command().args(["timeline", "--format", "json"]).arg(&b));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let w: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            w["partitions"][0]["replicas"][0]["from_batches"],
            replicas[0]["from_batches"],
            "{}",
            cap.display()
        );
        let _ = std::fs::remove_dir_all(&alone);
    }
    assert!(logs >= 20, "only {logs} metadata logs");
}

/// Epoch ranges are half-open, as `klf diff` and `klf dump` write ranges:
/// in JSON `[start_offset, end)`, in the table `[start, end)`; the spans of
/// a replica follow one another without overlap, each holds no more
/// records than offsets, and the last ends at the log end offset `klf diff`
/// reports for the replica.
#[test]
fn epoch_ranges_are_half_open_and_the_last_ends_at_the_log_end() {
    let mut replicas = 0;
    for name in [
        "divergence",
        "unclean-stale-hw",
        "compaction",
        "transactions",
        "tiered",
    ] {
        let dir = crate::common::kafka(name);
        let d = dir.to_str().unwrap();
        let tl: Value = serde_json::from_slice(
            &crate::common::klf(&["timeline", "--format", "json", d]).stdout,
        )
        .unwrap();
        let diff: Value =
            serde_json::from_slice(&crate::common::klf(&["diff", "--format", "json", d]).stdout)
                .unwrap();
        let table = crate::common::text(&crate::common::klf(&["timeline", d]).stdout);
        for p in diff["partitions"].as_array().unwrap() {
            let t = tl["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["topic"] == p["topic"] && t["partition"] == p["partition"])
                .unwrap_or_else(|| panic!("{name}: {} not in the timeline", p["topic"]));
            for r in p["replicas"].as_array().unwrap() {
                let leo = r["log_end_offset"].as_i64().unwrap();
                let tr = t["replicas"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["broker"] == r["broker"])
                    .unwrap();
                let spans = tr["from_batches"].as_array().unwrap();
                let what = format!(
                    "{name} {}-{} broker {}",
                    p["topic"], p["partition"], r["broker"]
                );
                assert!(
                    spans.iter().all(|s| s.get("end_offset").is_none()),
                    "{what}"
                );
                let ranges: Vec<(i64, i64, i64)> = spans
                    .iter()
                    .map(|s| {
                        (
                            s["start_offset"].as_i64().unwrap(),
                            s["end"].as_i64().unwrap(),
                            s["records"].as_i64().unwrap(),
                        )
                    })
                    .collect();
                let Some(&(start, end, _)) = ranges.last() else {
                    continue;
                };
                replicas += 1;
                assert_eq!(end, leo, "{what}: the last range ends at the log end");
                for &(a, b, n) in &ranges {
                    assert!(a < b && n <= b - a, "{what}: [{a}, {b}) of {n} records");
                }
                for w in ranges.windows(2) {
                    assert!(w[0].1 <= w[1].0, "{what}: {w:?} overlap");
                }
                // the table prints the same range, half-open
                let head = format!(
                    "{}-{} broker {}: log start",
                    p["topic"].as_str().unwrap(),
                    p["partition"],
                    r["broker"]
                );
                let block = &table[table
                    .find(&head)
                    .unwrap_or_else(|| panic!("{what}: {table}"))..];
                let block = &block[..block.find("\n\n").unwrap_or(block.len())];
                assert!(
                    block.contains(&format!("[{start}, {leo})")),
                    "{what}: no [{start}, {leo}) in\n{block}"
                );
            }
        }
    }
    assert!(replicas >= 20, "only {replicas} replicas with batches");
}
