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
    let mut quorum_compared = 0;
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
            // klf's reading of the node's quorum-state is the file's
            let state = part["quorum"]["states"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| Path::new(s["file"].as_str().unwrap()) == meta.join("quorum-state"))
                .unwrap_or_else(|| panic!("{}: no quorum-state read", meta.display()));
            let id = |v: &Value| {
                v.as_i64()
                    .filter(|n| *n >= 0)
                    .map_or(Value::Null, Value::from)
            };
            assert_eq!(state["leader"], id(&qs["leaderId"]), "{}", meta.display());
            assert_eq!(
                state["leader_epoch"],
                qs["leaderEpoch"],
                "{}",
                meta.display()
            );
            assert_eq!(state["voted_for"], id(&qs["votedId"]), "{}", meta.display());
            let voters = qs["currentVoters"].as_array().map_or(Value::Null, |a| {
                a.iter()
                    .map(|v| v["voterId"].clone())
                    .collect::<Vec<_>>()
                    .into()
            });
            assert_eq!(state["voters"], voters, "{}", meta.display());
            assert!(state["problem"].is_null());
            let quorum_epoch = qs["leaderEpoch"].as_i64().unwrap();
            for (epoch, _) in &from_batches {
                assert!(
                    *epoch <= quorum_epoch,
                    "{}: {epoch} > {quorum_epoch}",
                    meta.display()
                );
            }
        }
        // The quorum's history is the control records Kafka's own
        // kafka-dump-log printed for the replica klf read.
        let source = PathBuf::from(part["quorum"]["source"].as_str().unwrap());
        if let Some(kafka) = kafka_quorum_records(&cap, &source) {
            let klf: Vec<QuorumRecord> = part["quorum"]["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| QuorumRecord {
                    offset: c["metadata_offset"].as_i64().unwrap(),
                    epoch: c["epoch"].as_i64().unwrap(),
                    kind: if c["kind"] == "leader-change" {
                        "LeaderChange"
                    } else {
                        "KRaftVoters"
                    },
                    leader: c["leader"].as_i64(),
                    voters: ids(&c["voters"]),
                    granting: ids(&c["granting_voters"]),
                })
                .collect();
            assert_eq!(klf, kafka, "{}", source.display());
            quorum_compared += 1;
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
    assert!(
        quorum_compared >= 10,
        "only {quorum_compared} quorum histories held to kafka-dump-log"
    );
}

/// A control record of the metadata log as kafka-dump-log prints it.
#[derive(Debug, PartialEq, Eq)]
struct QuorumRecord {
    offset: i64,
    epoch: i64,
    kind: &'static str,
    leader: Option<i64>,
    voters: Vec<i64>,
    granting: Vec<i64>,
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.get("voterId").unwrap_or(x).as_i64().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// The `LeaderChange` and `KRaftVoters` control records of the metadata
/// log replica `source` of capture `cap`, in log order, from the deep
/// dumps (`--deep-iteration --print-data-log`) Kafka's kafka-dump-log made
/// of its segments (`golden/`); `None` when a segment has none.
fn kafka_quorum_records(cap: &Path, source: &Path) -> Option<Vec<QuorumRecord>> {
    let rel = source.strip_prefix(cap).ok()?;
    let mut segments: Vec<PathBuf> = std::fs::read_dir(source)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    let mut out = Vec::new();
    for seg in segments {
        let golden = cap.join("golden").join(rel).join(format!(
            "{}.deep.txt",
            seg.file_name().unwrap().to_string_lossy()
        ));
        let text = std::fs::read_to_string(golden).ok()?;
        let mut epoch = None;
        for line in text.lines() {
            if line.starts_with("baseOffset: ") {
                epoch = line
                    .split(" partitionLeaderEpoch: ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .map(|e| e.parse::<i64>().unwrap());
                continue;
            }
            for kind in ["LeaderChange", "KRaftVoters"] {
                // 4.4 prints `LeaderChange: {...}` and `KRaftVoters {...}`
                let Some(at) = [format!(" {kind}: "), format!(" {kind} ")]
                    .iter()
                    .find_map(|m| line.find(m.as_str()).map(|at| (at, m.len())))
                else {
                    continue;
                };
                let (head, json) = (&line[..at.0], &line[at.0 + at.1..]);
                let v: Value = serde_json::from_str(json).unwrap();
                let offset = head
                    .strip_prefix("| offset: ")
                    .and_then(|r| r.split(' ').next())
                    .unwrap()
                    .parse()
                    .unwrap();
                out.push(QuorumRecord {
                    offset,
                    epoch: epoch.unwrap(),
                    kind,
                    leader: v["leaderId"].as_i64(),
                    voters: ids(&v["voters"]),
                    granting: ids(&v["grantingVoters"]),
                });
            }
        }
    }
    Some(out)
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

/// The table of the metadata log's timeline says who the quorum elected
/// and what each node's quorum-state holds, as the JSON does.
#[test]
fn the_quorum_history_table_names_each_election_and_each_nodes_state() {
    let cap = super::common::kafka("unclean-4.4");
    let out = finish(
        klf_command()
            .args(["timeline", "--topic", "__cluster_metadata"])
            .arg(&cap),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let (_, v) = timeline(&cap, "__cluster_metadata");
    let q = &v["partitions"][0]["quorum"];
    let elections: Vec<&Value> = q["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "leader-change")
        .collect();
    assert!(!elections.is_empty(), "{q:#}");
    assert_eq!(elections[0]["event"], "elected");
    let first = elections[0]["leader"].as_i64().unwrap();
    assert!(
        text.contains(&format!("controller {first} elected")),
        "{text}"
    );
    for s in q["states"].as_array().unwrap() {
        let line = format!(
            "quorum-state of node {}: leader {}, epoch {}",
            s["node"], s["leader"], s["leader_epoch"]
        );
        assert!(text.contains(&line), "{line} not in {text}");
    }
    // every other partition's quorum is null
    let (_, all) = timeline(&cap, "unclean");
    assert!(all["partitions"][0]["quorum"].is_null());
}

/// On a real dynamic quorum (quorum-4.4: three controllers, voters added
/// one at a time, the leader killed, the next one stopped, a voter removed
/// and added back), the quorum's history klf reads from the metadata log
/// is what Kafka's Admin API reported after each step: the same leaders at
/// the same epochs, a failover away from each leader killed or stopped,
/// the same voter sets in order, and every node's quorum-state on the
/// leader and epoch Kafka reported at the capture.
#[test]
fn the_quorum_history_is_what_kafka_reported_after_each_step() {
    let cap = super::common::kafka("quorum-4.4");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(cap.join("scenario.json")).unwrap()).unwrap();
    let truth = &s["quorum_truth"];
    let (code, v) = timeline(&cap, "__cluster_metadata");
    assert_eq!(code, Some(0), "{v:#}");
    let q = &v["partitions"][0]["quorum"];
    let changes = q["changes"].as_array().unwrap();
    // leaders: Kafka's (leader, epoch) after each step, consecutive
    // repeats folded, are klf's elections in order
    let mut kafka_leaders: Vec<(i64, i64)> = Vec::new();
    let mut kafka_voters: Vec<Vec<i64>> = Vec::new();
    for p in truth["phases"].as_array().unwrap() {
        let l = (
            p["leader_id"].as_i64().unwrap(),
            p["leader_epoch"].as_i64().unwrap(),
        );
        if kafka_leaders.last() != Some(&l) {
            kafka_leaders.push(l);
        }
        let mut set = ids(&p["voters"]);
        set.sort_unstable();
        if kafka_voters.last() != Some(&set) {
            kafka_voters.push(set);
        }
    }
    let elections: Vec<&Value> = changes
        .iter()
        .filter(|c| c["kind"] == "leader-change")
        .collect();
    let klf_leaders: Vec<(i64, i64)> = elections
        .iter()
        .map(|c| (c["leader"].as_i64().unwrap(), c["epoch"].as_i64().unwrap()))
        .collect();
    assert_eq!(klf_leaders, kafka_leaders, "{q:#}");
    assert!(kafka_leaders.len() >= 3, "the scenario made two failovers");
    // each leader Kafka lost (killed or stopped while leading) is the
    // previous leader of a failover klf names
    let mut lost = 0;
    for e in truth["events"].as_array().unwrap() {
        if e["was_leader"] == true {
            lost += 1;
            let epoch = e["leader_epoch_before"].as_i64().unwrap();
            let next = elections
                .iter()
                .find(|c| c["epoch"].as_i64().unwrap() > epoch)
                .unwrap_or_else(|| panic!("no election after {e}"));
            assert_eq!(next["event"], "failover", "{next}");
            assert_eq!(next["previous_leader"], e["node"], "{next}");
        }
    }
    assert_eq!(lost, 2);
    // voter sets: the sets Kafka reported, in order, are the sets the log's
    // voter records hold, consecutive repeats folded; each change names the
    // voter added or removed
    let mut klf_voters: Vec<Vec<i64>> = Vec::new();
    for c in changes.iter().filter(|c| c["kind"] == "voters") {
        let mut set = ids(&c["voters"]);
        set.sort_unstable();
        if klf_voters.last() != Some(&set) {
            klf_voters.push(set);
        }
        if c["event"] == "voters-changed" {
            assert_eq!(
                ids(&c["added"]).len() + ids(&c["removed"]).len(),
                1,
                "one voter a request: {c}"
            );
        }
    }
    assert_eq!(klf_voters, kafka_voters, "{q:#}");
    // every node's quorum-state: the leader and epoch at the capture
    let at = truth["phases"].as_array().unwrap().last().unwrap();
    let states = q["states"].as_array().unwrap();
    assert_eq!(states.len(), 6, "three brokers and three controllers");
    for st in states {
        assert_eq!(st["leader"], at["leader_id"], "{st}");
        assert_eq!(st["leader_epoch"], at["leader_epoch"], "{st}");
    }
    // the failovers after the topic's creation are in its incident story
    let out = finish(
        klf_command()
            .args(["timeline", "--incident", "--all", "--format", "json"])
            .arg(&cap),
    );
    let inc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failovers: Vec<&Value> = inc["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "quorum")
        .unwrap_or_else(|| panic!("{inc:#}"))["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "controller-failover")
        .collect();
    assert_eq!(failovers.len(), 2, "{failovers:#?}");
}
