//! `klf transactions` on the real captures of the transactions scenario
//! (Kafka 4.1.1 and 4.4.0, and a fresh run's): per transactional id the
//! records committed, aborted and left open equal what the scenario's
//! producers made (scenario.json), the transactions equal the scenario's
//! plan, the last stable offset equals the leader's, and the epoch bumps
//! of transaction version 2 are counted; then `klf dump --producer-id`
//! and `--transactional-id` against a filter of the unfiltered dump.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{kafka, klf, ran, scenario_dirs, scratch, text};

/// The transactions scenario's captures: the committed ones, then a fresh
/// run's.
fn captures() -> Vec<PathBuf> {
    let v: Vec<PathBuf> = scenario_dirs()
        .into_iter()
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("transactions"))
        })
        .collect();
    assert!(v.len() >= 2, "{v:?}");
    v
}

fn scenario(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap()
}

fn report(args: &[&str]) -> Value {
    let r = ran(args);
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// The transactions each producer of the scenario made: its
/// `transactions` object when the harness recorded it, else the plan of
/// tests/kafka-oracle/oracle.py's `transactions` scenario (klf-txn-1:
/// commit, abort, commit, abort, commit; klf-txn-2: abort, commit, then
/// one left open).
fn planned(id: &str, made: &Value) -> (u64, u64, u64) {
    if let Some(t) = made.get("transactions") {
        let n = |k: &str| t[k].as_u64().unwrap();
        return (n("committed"), n("aborted"), n("open"));
    }
    match id {
        "klf-txn-1" => (3, 2, 0),
        "klf-txn-2" => (1, 1, 1),
        other => panic!("no plan known for {other}"),
    }
}

#[test]
fn the_summary_equals_what_the_scenarios_producers_made() {
    for dir in captures() {
        let s = scenario(&dir);
        let d = dir.to_str().unwrap();
        let r = report(&["transactions", d, "--format", "json"]);
        for part in s["partitions"].as_array().unwrap() {
            let topic = part["topic"].as_str().unwrap();
            let n = part["partition"].as_i64().unwrap();
            let Some(made) = part["transactions"].as_object() else {
                continue;
            };
            let p = r["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["topic"] == topic && p["partition"] == n)
                .unwrap_or_else(|| panic!("{d}: no {topic}-{n}"));
            // the leader's replica, as diff takes it
            let leader = part["leader_at_capture"].as_i64().unwrap();
            assert_eq!(p["broker"].as_i64(), Some(leader), "{d}");
            assert_eq!(p["reference"], "metadata-leader", "{d}");
            let state = &part["replica_state"][leader.to_string()];
            if let Some(lso) = state["last_stable_offset"].as_i64() {
                assert_eq!(p["last_stable_offset"].as_i64(), Some(lso), "{d}: LSO");
            }
            let mut open_ids = 0;
            for (id, made) in made {
                if id == "idempotent_producer" {
                    let idem: u64 = r["producers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|x| x["transactional"] == false)
                        .map(|x| x["idempotent"]["records"].as_u64().unwrap())
                        .sum();
                    assert_eq!(Some(idem), made["acked"].as_u64(), "{d}: idempotent");
                    continue;
                }
                let mine: Vec<&Value> = r["producers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|x| x["transactional_id"] == id.as_str())
                    .collect();
                assert!(!mine.is_empty(), "{d}: {id} not found");
                let sum = |outcome: &str, field: &str| -> u64 {
                    mine.iter()
                        .map(|x| x[outcome][field].as_u64().unwrap())
                        .sum()
                };
                for outcome in ["committed", "aborted", "open"] {
                    assert_eq!(
                        Some(sum(outcome, "records")),
                        made[outcome].as_u64(),
                        "{d}: {id} {outcome} records"
                    );
                }
                let (c, a, o) = planned(id, made);
                assert_eq!(sum("committed", "transactions"), c, "{d}: {id} commits");
                assert_eq!(sum("aborted", "transactions"), a, "{d}: {id} aborts");
                assert_eq!(sum("open", "transactions"), o, "{d}: {id} open");
                open_ids += o;
                // the coordinator's own count agrees, and says nothing was
                // empty
                let coord: Vec<&Value> = mine.iter().map(|x| &x["coordinator"]).collect();
                let csum = |k: &str| -> u64 { coord.iter().map(|c| c[k].as_u64().unwrap()).sum() };
                assert_eq!((csum("committed"), csum("aborted")), (c, a), "{d}: {id}");
                assert_eq!(csum("empty"), 0, "{d}: {id}");
                for x in &mine {
                    assert_eq!(x["empty"].as_u64(), Some(0), "{d}: {id}");
                }
                // transaction version 2: each marker carries its data's
                // epoch + 1
                let id_rec = r["coordinator"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["transactional_id"] == id.as_str())
                    .unwrap();
                if id_rec["transaction_version"].as_i64() == Some(2) {
                    for x in &mine {
                        let closed = x["committed"]["partition_transactions"].as_u64().unwrap()
                            + x["aborted"]["partition_transactions"].as_u64().unwrap();
                        assert_eq!(x["epoch_bumped"].as_u64(), Some(closed), "{d}: {id}");
                        assert_eq!(x["same_epoch"].as_u64(), Some(0), "{d}: {id}");
                    }
                }
                let durations = mine[0]["duration_ms"]["count"].as_u64().unwrap_or(0);
                assert_eq!(durations, c + a, "{d}: {id}: one duration per transaction");
            }
            assert_eq!(
                p["open"].as_array().unwrap().len() as u64,
                open_ids,
                "{d}: open transactions"
            );
            if open_ids > 0 {
                assert_eq!(p["lso_bound"], "open-transaction", "{d}");
            }
        }
        assert_eq!(r["odd_markers_total"].as_u64(), Some(0), "{d}");
        assert!(r["coordinator_unknown"].is_null(), "{d}");
    }
}

#[test]
fn the_table_says_the_lso_the_open_transaction_and_tv2() {
    let r = ran(&["transactions", kafka("transactions-4.4").to_str().unwrap()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for want in [
        "2 transactional producers (2 transactional ids), 1 idempotent producer",
        "Committed 4 (63 records), aborted 3 (32 records), open 1 (3 records), holding the last stable offset of txn-0 at 182.",
        "TV2: epoch bumped at each commit/abort (5 of 5 markers",
        "open in txn-0 from offset 182 (3 records",
        "182 (open transaction)",
        "broker 1 (leader at capture)",
        "klf-txn-2 (producer 2) from 182",
        "now Ongoing at epoch 2, transaction version 2",
    ] {
        assert!(r.stdout.contains(want), "{want:?} not in:\n{}", r.stdout);
    }
}

#[test]
fn jsonl_has_a_typed_line_per_object_then_a_summary() {
    let r = ran(&[
        "transactions",
        kafka("transactions").to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "producer",
            "producer",
            "producer",
            "partition",
            "partition",
            "transactional_id",
            "transactional_id",
            "summary"
        ]
    );
    let open = &lines[4]["open"][0];
    assert_eq!(open["transactional_id"], "klf-txn-2");
    assert!(open["first_timestamp_utc"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn the_filters_keep_one_producer_and_an_unknown_id_is_refused() {
    let d = kafka("transactions-4.4");
    let d = d.to_str().unwrap();
    let r = report(&[
        "transactions",
        d,
        "--transactional-id",
        "klf-txn-2",
        "--format",
        "json",
    ]);
    let ids: Vec<&str> = r["producers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["transactional_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["klf-txn-2"]);
    assert_eq!(r["partitions"].as_array().unwrap().len(), 1);
    assert_eq!(r["coordinator"].as_array().unwrap().len(), 1);
    let r = report(&["transactions", d, "--producer-id", "0", "--format", "json"]);
    assert_eq!(r["producers"][0]["transactional_id"], "klf-txn-1");
    assert_eq!(r["producers"].as_array().unwrap().len(), 1);
    let bad = ran(&["transactions", d, "--transactional-id", "nobody"]);
    assert_eq!(bad.code, Some(2));
    assert!(
        bad.stderr.contains("klf-txn-1, klf-txn-2"),
        "{}",
        bad.stderr
    );
    let neg = ran(&["transactions", d, "--producer-id", "-1"]);
    assert_eq!(neg.code, Some(2), "{}", neg.stderr);
}

/// The JSON lines of `klf dump ARGS --format json --deep-iteration`.
fn dump_json(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["dump"];
    all.extend_from_slice(args);
    all.extend(["--format", "json", "--deep-iteration"]);
    let out = klf(&all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn dump_by_producer_is_the_unfiltered_dump_filtered() {
    let dir = kafka("transactions-4.4").join("broker-1/txn-0");
    for seg in ["00000000000000000000.log", "00000000000000000173.log"] {
        let path = dir.join(seg);
        let p = path.to_str().unwrap();
        let all = dump_json(&[p]);
        for pid in [0i64, 1, 2] {
            // the producer's batches, and the records of those batches
            let mut positions = Vec::new();
            let want: Vec<&Value> = all
                .iter()
                .filter(|l| match l["type"].as_str().unwrap() {
                    "file" => true,
                    "batch" if l["producer_id"] == pid => {
                        positions.push(l["position"].clone());
                        true
                    }
                    "record" => positions.contains(&l["batch_position"]),
                    _ => false,
                })
                .collect();
            let got = dump_json(&[p, "--producer-id", &pid.to_string()]);
            let got: Vec<&Value> = got.iter().collect();
            assert_eq!(got, want, "{seg} --producer-id {pid}");
        }
        // the transactional id resolves through the capture's
        // __transaction_state to producer 2 (klf-txn-2)
        let by_id = dump_json(&[p, "--transactional-id", "klf-txn-2"]);
        assert_eq!(by_id, dump_json(&[p, "--producer-id", "2"]), "{seg}");
    }
    // the kafka text: kafka-dump-log's lines of that producer's batches
    let seg = dir.join("00000000000000000000.log");
    let whole = ran(&["dump", seg.to_str().unwrap()]);
    let one = ran(&["dump", seg.to_str().unwrap(), "--producer-id", "0"]);
    assert_eq!(one.code, Some(0), "{}", one.stderr);
    let batches = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("baseOffset:"))
            .map(str::to_string)
            .collect()
    };
    let want: Vec<String> = batches(&whole.stdout)
        .into_iter()
        .filter(|l| l.contains(" producerId: 0 "))
        .collect();
    assert_eq!(want.len(), 10);
    assert_eq!(batches(&one.stdout), want);
    // the table too
    let t = ran(&[
        "dump",
        seg.to_str().unwrap(),
        "--format",
        "table",
        "--producer-id",
        "1",
    ]);
    assert_eq!(t.code, Some(0));
    assert!(t.stdout.contains("[80, 114)"), "{}", t.stdout);
    assert!(!t.stdout.contains("[0, 20)"), "{}", t.stdout);
}

#[test]
fn dump_by_transactional_id_of_a_file_alone_is_refused() {
    let dir = scratch("txn-alone");
    // a folder not named like a partition (`klf-test-txn-alone-PID` is:
    // klf would then look for the capture in the temporary folder, where
    // other tests' copies of captures may lie)
    let alone = dir.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let seg = alone.join("00000000000000000000.log");
    std::fs::copy(
        kafka("transactions-4.4").join("broker-1/txn-0/00000000000000000000.log"),
        &seg,
    )
    .unwrap();
    let r = ran(&[
        "dump",
        seg.to_str().unwrap(),
        "--transactional-id",
        "klf-txn-2",
    ]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("give its --producer-id"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hanging_transaction_is_the_one_impact_finds() {
    let d = kafka("impact");
    let d = d.to_str().unwrap();
    let r = report(&["transactions", d, "--format", "json"]);
    let imp = ran(&["impact", d, "--format", "json"]);
    let imp: Value = serde_json::from_str(&imp.stdout).unwrap();
    let mut hanging_here = Vec::new();
    for p in r["partitions"].as_array().unwrap() {
        for o in p["open"].as_array().unwrap() {
            if o["hanging"] == true {
                hanging_here.push((
                    p["topic"].clone(),
                    p["partition"].clone(),
                    o["transactional_id"].clone(),
                    o["first_offset"].clone(),
                    o["remedy"].clone(),
                ));
                assert_eq!(p["last_stable_offset"], o["first_offset"]);
            }
        }
    }
    let mut hanging_impact = Vec::new();
    for p in imp["partitions"].as_array().unwrap() {
        for t in p["transactions"].as_array().unwrap() {
            if t["state"] == "hanging" {
                hanging_impact.push((
                    p["topic"].clone(),
                    p["partition"].clone(),
                    t["transactional_id"].clone(),
                    t["first_offset"].clone(),
                    t["remedy"].clone(),
                ));
            }
        }
    }
    assert!(!hanging_here.is_empty());
    assert_eq!(hanging_here, hanging_impact);
}
