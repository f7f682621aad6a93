//! klf against what real Kafka did: for every capture whose scenario.json
//! records the truncation a rejoining broker performed (taken from that
//! broker's own log), `klf diff` on the capture taken before the rejoin must
//! predict exactly that offset.
//!
//! The committed captures under testdata/kafka/ are always checked; CI also
//! sets KLF_FRESH_CAPTURES to a folder of captures its own fresh Kafka run
//! just made.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::Value;

use crate::common::{finish, klf_command, scenario_dirs};

/// `klf diff` as an operator runs it: no --leader, klf finds the leader at
/// capture time in the capture's metadata log.
/// With `leader`, the reference is given (`--leader`).
/// The default read (the window where replicas can differ) must give the
/// same answer as `--verify` (every batch read), scan facts aside.
fn klf_diff_json(dir: &Path, topic: &str, partition: i64, leader: Option<i64>) -> Value {
    klf_diff_json_with(dir, topic, partition, leader, &[])
}

/// [`klf_diff_json`] with more options.
fn klf_diff_json_with(
    dir: &Path,
    topic: &str,
    partition: i64,
    leader: Option<i64>,
    extra: &[&str],
) -> Value {
    let run = |verify: bool| -> Value {
        let mut cmd = klf_command();
        cmd.args(["diff", "--format", "json", "--topic", topic])
            .args(["--partition", &partition.to_string()])
            .args(extra);
        if let Some(l) = leader {
            cmd.args(["--leader", &l.to_string()]);
        }
        if verify {
            cmd.arg("--verify");
        }
        let out = finish(cmd.arg(dir));
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "klf diff {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("klf diff prints JSON")
    };
    let window = run(false);
    let full = run(true);
    let without_scan = |v: &Value| {
        let mut v = v.clone();
        for p in v["partitions"].as_array_mut().into_iter().flatten() {
            p.as_object_mut().map(|o| o.remove("scan"));
        }
        v
    };
    assert_eq!(
        without_scan(&window),
        without_scan(&full),
        "{}: the window read and --verify disagree",
        dir.display()
    );
    assert_eq!(full["partitions"][0]["scan"]["mode"], "full");
    window
}

/// A ZooKeeper-mode capture (scenario.json `"mode": "zookeeper"`) has no
/// metadata log: klf does not know the leader at capture, picks the
/// reference by epochs, and assumes the truncation protocol (the brokers'
/// inter.broker.protocol.version is not in the capture), predicting the
/// other one beside it. Its truncation must be Kafka's without being told,
/// and again when told the brokers' inter.broker.protocol.version
/// (`broker_config`), where followers below 2.7 truncate through
/// OffsetsForLeaderEpoch: the leader's answer klf models in the first round
/// must be the EpochEndOffset the broker logged.
#[test]
fn klf_predicts_the_truncation_kafka_performed() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for dir in scenario_dirs() {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        let zookeeper = s["mode"].as_str() == Some("zookeeper");
        let ibp = s["broker_config"]["inter.broker.protocol.version"].as_str();
        for p in s["partitions"].as_array().unwrap() {
            let Some(truncation) = p.get("kafka_truncation").and_then(Value::as_object) else {
                continue;
            };
            let topic = p["topic"].as_str().unwrap();
            let partition = p["partition"].as_i64().unwrap();
            // The leader the rejoining brokers followed: the leader at
            // capture, which klf must find in the metadata log, with the
            // epoch the leader itself logged. Where every replica was down
            // (torn-write), the leader elected after the restart, which no
            // capture can know: it is given.
            let restart_leader = p.get("leader_after_restart").and_then(Value::as_i64);
            let leader = restart_leader.unwrap_or_else(|| p["leader_at_capture"].as_i64().unwrap());
            let report = klf_diff_json(&dir, topic, partition, restart_leader);
            let part = &report["partitions"][0];
            if zookeeper {
                let tp = &part["truncation_protocol"];
                assert_eq!(tp["cluster_mode"], "zookeeper", "{}", dir.display());
                assert_eq!(tp["source"], "assumed", "{}", dir.display());
                assert_eq!(
                    tp["alternative"],
                    "offsets_for_leader_epoch",
                    "{}",
                    dir.display()
                );
                // without a metadata log the reference comes from the
                // epochs: the leader, or a replica whose log is the leader's
                let chosen = part["reference"]["broker"].as_i64().unwrap();
                if chosen != leader && restart_leader.is_none() {
                    let kafkas = part["replicas"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|r| r["broker"].as_i64() == Some(leader))
                        .unwrap();
                    assert_eq!(
                        kafkas["divergence_kind"], "identical",
                        "{}: klf took broker {chosen} as the reference; Kafka's leader {leader}'s log differs from it",
                        dir.display()
                    );
                }
                let ibp = ibp.expect("a ZooKeeper capture keeps inter.broker.protocol.version");
                let told = klf_diff_json_with(
                    &dir,
                    topic,
                    partition,
                    restart_leader,
                    &["--inter-broker-protocol", ibp],
                );
                let told_part = &told["partitions"][0];
                assert_eq!(told_part["truncation_protocol"]["source"], "given");
                for (broker, kafka) in truncation {
                    let Some(expected) = kafka["truncated_to"].as_i64() else {
                        continue;
                    };
                    let replica = told_part["replicas"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|r| r["broker"].as_i64() == broker.parse().ok())
                        .unwrap();
                    let got = replica["truncation_offset"].as_i64();
                    compared += 1;
                    let line = format!(
                        "{} {topic}-{partition} broker {broker} (inter.broker.protocol.version {ibp}, {}): Kafka truncated to {expected}, klf predicts {got:?}",
                        dir.display(),
                        replica["protocol"]
                    );
                    eprintln!("{line}");
                    if got != Some(expected) {
                        failures.push(line.clone());
                    }
                    // the leader's OffsetsForLeaderEpoch answer Kafka logged
                    let logged = kafka["truncation_log"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|t| t["reason"].as_str())
                        .find_map(epoch_end_offset);
                    if replica["protocol"] == "offsets_for_leader_epoch" {
                        if let Some((e, o)) = logged {
                            let first = replica["truncation_rounds"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .find(|r| r["kind"] == "offsets_for_leader_epoch")
                                .unwrap_or_else(|| {
                                    panic!("{line}: no OffsetsForLeaderEpoch round")
                                });
                            assert_eq!(
                                (
                                    first["answer"]["epoch"].as_i64(),
                                    first["answer"]["end_offset"].as_i64()
                                ),
                                (Some(e), Some(o)),
                                "{line}: the leader's answer"
                            );
                            eprintln!(
                                "  the leader answered (epoch {e}, end offset {o}), as klf models"
                            );
                        }
                    }
                }
            } else {
                assert_eq!(
                    part["reference"]["broker"].as_i64(),
                    Some(leader),
                    "{}",
                    dir.display()
                );
            }
            if restart_leader.is_none() && !zookeeper {
                assert_eq!(
                    part["reference"]["reason"],
                    "metadata_leader",
                    "{}",
                    dir.display()
                );
                assert_eq!(
                    part["reference"]["leader_epoch"].as_i64(),
                    p["leader_epoch_at_capture"].as_i64(),
                    "{}: leader epoch from the metadata log",
                    dir.display()
                );
            }
            for (broker, kafka) in truncation {
                let Some(expected) = kafka["truncated_to"].as_i64() else {
                    continue;
                };
                let replica = part["replicas"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["broker"].as_i64() == broker.parse().ok())
                    .unwrap_or_else(|| panic!("{}: no replica {broker}", dir.display()));
                let got = replica["truncation_offset"].as_i64();
                compared += 1;
                let line = format!(
                    "{} {topic}-{partition} broker {broker}: Kafka truncated to {expected}, klf predicts {got:?}",
                    dir.display()
                );
                eprintln!("{line}");
                if got != Some(expected) {
                    failures.push(line);
                }
            }
        }
    }
    assert!(compared > 0, "no capture records a Kafka truncation");
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    eprintln!("{compared} truncations compared, all equal");
}

/// `leaderEpoch=E, endOffset=O` of the `EpochEndOffset(...)` a broker
/// logged with its truncation.
fn epoch_end_offset(reason: &str) -> Option<(i64, i64)> {
    let rest = reason.split("EpochEndOffset(").nth(1)?;
    let field = |name: &str| -> Option<i64> {
        let v = rest.split(&format!("{name}=")).nth(1)?;
        v.split([',', ')']).next()?.trim().parse().ok()
    };
    Some((field("leaderEpoch")?, field("endOffset")?))
}

/// Acknowledged records at offsets `>= from` according to what the producers
/// were told in each phase (each phase's acknowledged offsets are contiguous:
/// checked).
fn acked_at_or_above(phases: &serde_json::Map<String, Value>, from: i64, upto: i64) -> i64 {
    let mut n = 0;
    for (name, r) in phases {
        let acked = r["acked"].as_i64().unwrap();
        if acked == 0 {
            continue;
        }
        let (lo, hi) = (
            r["min_offset"].as_i64().unwrap(),
            r["max_offset"].as_i64().unwrap(),
        );
        assert_eq!(
            hi - lo + 1,
            acked,
            "phase {name}: acknowledged offsets not contiguous"
        );
        let (a, b) = (lo.max(from), hi.min(upto - 1));
        if b >= a {
            n += b - a + 1;
        }
    }
    n
}

/// A replica's `committed_records_to_truncate` (cut records below a high
/// watermark a replica holding them checkpointed) never exceeds what the
/// producers were told succeeded (acks=all) in the range Kafka cut: it is a
/// lower bound. It is no more than that: in unclean-stale-hw both replicas
/// were killed before their checkpoints moved, and it says 0 of 100
/// acknowledged records (the partition's `loss` bounds them, see
/// `loss_bounds_contain_what_kafka_lost`).
#[test]
fn replica_committed_cut_is_a_lower_bound_of_what_producers_were_told() {
    let mut compared = 0;
    for dir in scenario_dirs() {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        for p in s["partitions"].as_array().unwrap() {
            let (Some(truncation), Some(phases)) = (
                p.get("kafka_truncation").and_then(Value::as_object),
                p.get("acked_by_phase").and_then(Value::as_object),
            ) else {
                continue;
            };
            let topic = p["topic"].as_str().unwrap();
            let partition = p["partition"].as_i64().unwrap();
            let leader = p["leader_at_capture"].as_i64().unwrap();
            let report = klf_diff_json(&dir, topic, partition, None);
            for (broker, kafka) in truncation {
                let Some(cut_at) = kafka["truncated_to"].as_i64() else {
                    continue;
                };
                let Some(leo) = kafka["log_end_offset_loaded"].as_i64() else {
                    continue;
                };
                let replica = report["partitions"][0]["replicas"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["broker"].as_i64() == broker.parse().ok())
                    .unwrap()
                    .clone();
                // Only acks=all phases: an acks=1 acknowledgement says the
                // leader appended, not that the record was committed.
                // Phases the reference leader acknowledged are in the log
                // that survives.
                let before: serde_json::Map<String, Value> = phases
                    .iter()
                    .filter(|(_, r)| matches!(r["acks"].as_str(), Some("all") | Some("-1")))
                    .filter(|(_, r)| r["max_offset"].as_i64().unwrap_or(-1) < leo)
                    .filter(|(_, r)| r["leader"].as_i64() != Some(leader))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let told = acked_at_or_above(&before, cut_at, leo);
                // Producers are told of data records; a transaction marker
                // the truncation cuts is committed too, but no producer was
                // told of it.
                let klf = replica["checkpointed_records_to_truncate"]
                    .as_i64()
                    .unwrap()
                    - replica["control_records_to_truncate"].as_i64().unwrap_or(0);
                eprintln!(
                    "{} {topic}-{partition} broker {broker}: producers were told {told} records at offsets {cut_at}..{leo} succeeded; klf says {klf} committed records are cut",
                    dir.display()
                );
                assert!(
                    klf <= told,
                    "{}: broker {broker}: {klf} > {told}",
                    dir.display()
                );
                compared += 1;
            }
        }
    }
    assert!(
        compared > 0,
        "no capture records acknowledged phases and a truncation"
    );
}

/// `klf diff --records` lists, for the old leader of the unclean election,
/// exactly the offsets the producers were told were written and that Kafka
/// then cut, and summarises them by producer and time range.
#[test]
fn records_lists_the_lost_acknowledged_records() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/unclean");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let p = &s["partitions"][0];
    let out = finish(
        klf_command()
            .args(["diff", "--records", "--format", "json"])
            .arg(&dir),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "committed records are lost: exit 1"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (broker, kafka) in p["kafka_truncation"].as_object().unwrap() {
        let cut_at = kafka["truncated_to"].as_i64().unwrap();
        let leo = kafka["log_end_offset_loaded"].as_i64().unwrap();
        let r = report["partitions"][0]["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["broker"].as_i64() == broker.parse().ok())
            .unwrap();
        let offsets: Vec<i64> = r["lost_records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["offset"].as_i64().unwrap())
            .collect();
        // every offset Kafka cut, once, in order
        assert_eq!(
            offsets,
            (cut_at..leo).collect::<Vec<_>>(),
            "broker {broker}"
        );
        assert_eq!(r["records_to_truncate"].as_i64(), Some(leo - cut_at));
        let summary = &r["lost_summary"];
        assert_eq!(summary["records"].as_i64(), Some(leo - cut_at));
        // the producers of the harness are not idempotent: one producer id -1
        let producers = summary["by_producer"].as_array().unwrap();
        assert_eq!(producers.len(), 1);
        assert_eq!(producers[0]["producer_id"].as_i64(), Some(-1));
        assert_eq!(producers[0]["first_offset"].as_i64(), Some(cut_at));
        assert_eq!(producers[0]["last_offset"].as_i64(), Some(leo - 1));
        // acknowledged (acks=all) phases of the old leader cover the lost range
        let phases = p["acked_by_phase"].as_object().unwrap();
        let told = acked_at_or_above(
            &phases
                .iter()
                .filter(|(_, v)| v["leader"].as_i64() == Some(1))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            cut_at,
            leo,
        );
        assert_eq!(
            told,
            leo - cut_at,
            "broker {broker}: every lost record had been acknowledged"
        );
    }
}

/// `--explain` tells the unclean capture's story with what Kafka did: the
/// out-of-sync broker became leader by an unclean election, in the epoch its
/// own log line gave, and the old leader is cut back to where it began.
#[test]
fn explain_tells_the_unclean_story() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/unclean");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap();
    let p = &s["partitions"][0];
    let out = finish(klf_command().args(["diff", "--explain"]).arg(&dir));
    let text = String::from_utf8(out.stdout).unwrap();
    let leader = p["leader_at_capture"].as_i64().unwrap();
    let epoch = p["leader_epoch_at_capture"].as_i64().unwrap();
    let start = p["leader_start_offset_at_capture"].as_i64().unwrap();
    assert!(
        text.contains(&format!(
            "broker {leader} became leader in epoch {epoch} by an UNCLEAN election and wrote from offset {start}"
        )),
        "{text}"
    );
    let cut = p["kafka_truncation"]["1"]["truncated_to"].as_i64().unwrap();
    assert!(
        text.contains(&format!("Kafka truncates it to {cut}")),
        "{text}"
    );
}

/// Inclusive runs `[[a, b], ...]` as a sorted list of numbers.
fn from_runs(v: &Value) -> Vec<i64> {
    let mut out = Vec::new();
    for r in v.as_array().into_iter().flatten() {
        let (a, b) = (r[0].as_i64().unwrap(), r[1].as_i64().unwrap());
        out.extend(a..=b);
    }
    out
}

/// What the partition loses, against what Kafka lost. For every capture
/// whose scenario.json records `loss_truth` (the records on any captured
/// replica that Kafka no longer had after recovery, by kafka-dump-log and a
/// consumer; the acks=all acknowledgements among them, as the producers
/// were told): klf's `loss.records` are exactly those records (the keys
/// `--records` lists are theirs), `committed_proven <= acknowledged and lost
/// <= committed_possible`, and the exit status follows `--fail-on`.
#[test]
fn loss_bounds_contain_what_kafka_lost() {
    let mut compared = 0;
    for dir in scenario_dirs() {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        for p in s["partitions"].as_array().unwrap() {
            let Some(truth) = p.get("loss_truth") else {
                continue;
            };
            let topic = p["topic"].as_str().unwrap();
            let partition = p["partition"].as_i64().unwrap();
            let where_ = format!("{} {topic}-{partition}", dir.display());
            let report = klf_diff_json(&dir, topic, partition, None);
            let loss = &report["partitions"][0]["loss"];
            let lost = truth["records_lost"].as_u64().unwrap();
            let acked_lost = truth["acked_all_lost"].as_u64().unwrap();
            let records = loss["records"].as_u64().unwrap();
            let proven = loss["committed_proven"].as_u64().unwrap();
            let possible = loss["committed_possible"].as_u64();
            eprintln!(
                "{where_}: Kafka lost {lost} records, {acked_lost} acknowledged (acks=all); klf: {records} lost, committed proven {proven}, possible {possible:?}"
            );
            assert_eq!(records, lost, "{where_}: lost records");
            assert!(
                proven <= acked_lost,
                "{where_}: proven {proven} > acknowledged {acked_lost}"
            );
            let unknown = loss["committed_unknown"].as_u64().unwrap();
            let possible = if s["mode"].as_str() == Some("zookeeper") {
                // no metadata log: no ISR history to bound the loss with;
                // a lost record is proven committed (a high watermark
                // checkpoint) or unknown, never "not committed", and the
                // upper bound is null as soon as one is unknown
                assert_eq!(proven + unknown, records, "{where_}: proven + unknown");
                assert_eq!(possible.is_none(), unknown > 0, "{where_}: {possible:?}");
                assert!(acked_lost <= proven + unknown, "{where_}");
                proven + unknown
            } else {
                let possible =
                    possible.unwrap_or_else(|| panic!("{where_}: a KRaft capture bounds the loss"));
                assert!(
                    acked_lost <= possible,
                    "{where_}: acknowledged {acked_lost} > possible {possible}"
                );
                possible
            };
            // The records klf lists are the ones Kafka lost, by producer record number.
            let out = finish(
                klf_command()
                    .args(["diff", "--records", "--format", "json", "--topic", topic])
                    .args(["--partition", &partition.to_string()])
                    .arg(&dir),
            );
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut keys: Vec<i64> = v["partitions"][0]["loss"]["lost_records"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r["key"]["text"].as_str())
                .filter_map(|k| k.strip_prefix("key-")?.parse().ok())
                .collect();
            keys.sort_unstable();
            assert_eq!(
                keys,
                from_runs(&truth["lost_ids"]),
                "{where_}: the lost records"
            );
            // Exit status: --fail-on committed (default), any, never.
            let code = |extra: &[&str]| {
                finish(
                    klf_command()
                        .args(["diff", "--format", "json", "--topic", topic])
                        .args(["--partition", &partition.to_string()])
                        .args(extra)
                        .arg(&dir),
                )
                .status
                .code()
            };
            assert_eq!(
                code(&[]),
                Some(i32::from(possible > 0)),
                "{where_}: default"
            );
            assert_eq!(
                code(&["--fail-on", "any"]),
                Some(i32::from(records > 0)),
                "{where_}: any"
            );
            assert_eq!(code(&["--fail-on", "never"]), Some(0), "{where_}: never");
            compared += 1;
        }
    }
    assert!(compared >= 5, "{compared} partitions with a recorded loss");
}
