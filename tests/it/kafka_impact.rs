//! `klf impact` against what real Kafka did after an unclean election
//! (`impact_truth` in scenario.json, recorded by the oracle before any
//! replica rejoined): where a restarted consumer of each group fetched
//! first under each auto.offset.reset, the hanging transaction
//! `kafka-transactions.sh find-hanging` names, where a read_committed
//! consumer stopped, and the sequence errors the new leader answered.
//! klf is given only the capture taken before the rejoin. The committed
//! captures are checked always; CI adds its fresh run (KLF_FRESH_CAPTURES).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{copy_tree, golden_records, klf, root, scratch, text};

fn impact_dirs() -> Vec<PathBuf> {
    crate::common::scenario_dirs_with("impact_truth")
}

fn brokers(dir: &Path) -> Vec<String> {
    crate::common::broker_folders(dir)
}

fn impact_json(args: &[&str]) -> (Value, String, Option<i32>) {
    let mut a = vec!["impact", "--format", "json"];
    a.extend_from_slice(args);
    let out = klf(&a);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("klf impact {args:?}: {e}: {}", text(&out.stderr)));
    (doc, text(&out.stderr), out.status.code())
}

/// The first offset a restarted consumer fetched: the first record it was
/// given, else the position it settled at.
fn fetched(r: &Value) -> Option<i64> {
    r["first_offset"]
        .as_i64()
        .or(r["position_when_idle"].as_i64())
}

/// Offsets -> record numbers (keys key-N) of a replica's data records, as
/// Kafka's own kafka-dump-log printed them (golden output).
fn golden_ids(dir: &Path, broker: &str, part: &str) -> Vec<(i64, Option<i64>)> {
    golden_records(dir, broker, part)
        .into_iter()
        .map(|(o, k, _)| (o, k.strip_prefix("key-").and_then(|n| n.parse().ok())))
        .collect()
}

fn runs(v: &Value) -> BTreeSet<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r[0].as_i64().unwrap()..=r[1].as_i64().unwrap())
        .collect()
}

#[test]
fn impact_predicts_what_kafka_did() {
    let dirs = impact_dirs();
    assert!(!dirs.is_empty(), "no capture with impact_truth");
    for dir in dirs {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        let p = s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p.get("impact_truth").is_some())
            .unwrap();
        let truth = &p["impact_truth"];
        let (topic, part) = (
            p["topic"].as_str().unwrap(),
            p["partition"].as_i64().unwrap(),
        );
        let b = brokers(&dir);
        let args: Vec<&str> = b.iter().map(String::as_str).collect();
        let (doc, stderr, code) = impact_json(&args);
        assert_eq!(code, Some(1), "affected: exit 1; {stderr}");
        let imp = doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == topic && x["partition"] == part)
            .unwrap_or_else(|| panic!("{}: no impact for {topic}-{part}", dir.display()));
        println!("{}: {topic}-{part}", dir.display());
        // consumer groups: the restarted consumer's first fetch, per policy
        for (g, t) in truth["groups"].as_object().unwrap() {
            let k = imp["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["group"] == g.as_str())
                .unwrap_or_else(|| panic!("klf names no group {g}"));
            let committed = &t["committed"]["offsets"][0];
            assert_eq!(
                k["committed_offset"], committed["offset"],
                "{g}: committed offset"
            );
            assert_eq!(
                k["committed_leader_epoch"], committed["leader_epoch"],
                "{g}: committed epoch"
            );
            for reset in ["earliest", "latest", "none"] {
                let kafka = &t[reset];
                if kafka["error"].is_null() {
                    assert_eq!(
                        k["next_fetch_offset"][reset].as_i64(),
                        fetched(kafka),
                        "{g} {reset}: {k}"
                    );
                } else {
                    assert!(
                        k["next_fetch_offset"][reset].is_null(),
                        "{g} {reset}: Kafka failed, klf says {k}"
                    );
                    assert_eq!(k["error"][reset], kafka["error"], "{g} {reset}");
                }
            }
            let proto = t["protocol"].as_str().unwrap();
            if !k["protocol"].is_null() {
                assert_eq!(k["protocol"].as_str().unwrap(), proto, "{g}: protocol");
            }
            println!(
                "  {g}: committed {} -> earliest {:?} latest {:?} none {} (Kafka: {:?} {:?} {}), phantom {}",
                k["committed_offset"], k["next_fetch_offset"]["earliest"].as_i64(), k["next_fetch_offset"]["latest"].as_i64(),
                k["error"]["none"], fetched(&t["earliest"]), fetched(&t["latest"]), t["none"]["error"], k["phantom_records"]
            );
        }
        // the hanging transaction find-hanging reports, and the LSO
        let rows = truth["find_hanging"]["rows"].as_array().unwrap();
        let hanging: Vec<&Value> = imp["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["state"] == "hanging")
            .collect();
        assert_eq!(
            hanging.len(),
            rows.len(),
            "hanging transactions: klf {hanging:?}, find-hanging {rows:?}"
        );
        for r in rows {
            let pid: i64 = r["ProducerId"].as_str().unwrap().parse().unwrap();
            let k = hanging
                .iter()
                .find(|t| t["producer_id"] == pid)
                .unwrap_or_else(|| panic!("find-hanging names {pid}"));
            assert_eq!(
                k["first_offset"].as_i64().unwrap(),
                r["StartOffset"].as_str().unwrap().parse::<i64>().unwrap()
            );
            assert_eq!(
                k["producer_epoch"].as_i64().unwrap(),
                r["ProducerEpoch"].as_str().unwrap().parse::<i64>().unwrap()
            );
            assert!(k["remedy"]
                .as_str()
                .unwrap()
                .contains(&format!("--start-offset {}", k["first_offset"])));
        }
        assert_eq!(
            imp["last_stable_offset"], truth["offsets_after"]["last_stable_offset"],
            "LSO"
        );
        assert_eq!(
            imp["last_stable_offset"], truth["read_committed"]["end_offset"],
            "where read_committed stopped"
        );
        assert_eq!(
            imp["new_log_end"], truth["offsets_after"]["high_watermark"],
            "new log end"
        );
        // producers: the sequence errors the new leader answered, and no other
        let errors = truth["leader_sequence_errors"].as_array().unwrap();
        let on_leader = truth["producers_on_leader"]["producers"]
            .as_array()
            .unwrap();
        for k in imp["producers"].as_array().unwrap() {
            let pid = k["producer_id"].as_i64().unwrap();
            let e = errors.iter().find(|e| e["producer_id"] == pid);
            let kafka_state = on_leader.iter().find(|x| x["producer_id"] == pid);
            match k["expected_error"].as_str() {
                Some("OUT_OF_ORDER_SEQUENCE_NUMBER") => {
                    let e = e.unwrap_or_else(|| {
                        panic!("klf predicts a sequence error for {pid}; the leader logged none")
                    });
                    assert_eq!(k["last_sequence_kept"], e["current_end_sequence"]);
                    assert_eq!(
                        k["last_sequence_cut"].as_i64().unwrap() + 1,
                        e["incoming_sequence"].as_i64().unwrap()
                    );
                }
                None => {
                    assert!(
                        e.is_none(),
                        "klf says {pid} is accepted; the leader refused: {e:?}"
                    );
                    assert!(
                        kafka_state.is_none(),
                        "klf says the leader has no state for {pid}: {kafka_state:?}"
                    );
                }
                Some(other) => panic!("unexpected prediction {other} for {pid}"),
            }
            if let Some(ks) = kafka_state {
                assert_eq!(
                    k["last_sequence_kept"], ks["last_sequence"],
                    "{pid}: the leader's last sequence"
                );
            }
        }
        for e in errors {
            assert!(
                imp["producers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["producer_id"] == e["producer_id"]),
                "the leader refused {e}; klf did not predict it"
            );
        }
        // counts, against kafka-dump-log's own output of the committed capture
        if dir.join("golden").is_dir() {
            let pname = format!("{topic}-{part}");
            let lost = runs(&p["loss_truth"]["lost_ids"]);
            let old = golden_ids(&dir, "broker-1", &pname);
            let new = golden_ids(&dir, &format!("broker-{}", imp["leader"]), &pname);
            for g in imp["groups"].as_array().unwrap() {
                let c = g["committed_offset"].as_i64().unwrap();
                let phantom = old
                    .iter()
                    .filter(|(o, id)| *o < c && id.is_some_and(|i| lost.contains(&i)))
                    .count() as u64;
                assert_eq!(
                    g["phantom_records"].as_u64().unwrap(),
                    phantom,
                    "{}: phantom records",
                    g["group"]
                );
                let parted = g["divergence_offset"].as_i64().unwrap_or(c).min(c);
                for reset in ["earliest", "latest"] {
                    let Some(at) = g["next_fetch_offset"][reset].as_i64() else {
                        continue;
                    };
                    let reread = new.iter().filter(|(o, _)| *o >= at && *o < parted).count() as u64;
                    let skipped =
                        new.iter().filter(|(o, _)| *o >= parted && *o < at).count() as u64;
                    assert_eq!(
                        g["records_reread"][reset].as_u64().unwrap(),
                        reread,
                        "{} {reset}: re-read",
                        g["group"]
                    );
                    assert_eq!(
                        g["records_skipped"][reset].as_u64().unwrap(),
                        skipped,
                        "{} {reset}: skipped",
                        g["group"]
                    );
                }
            }
        }
    }
}

/// Without the coordinators' topics, impact says what it cannot compute
/// and still computes the rest.
#[test]
fn impact_without_internal_topics_names_what_is_unknown() {
    let src = root().join("testdata/kafka/impact");
    let d = scratch("impact-no-internal");
    copy_tree(&src, &d);
    for b in ["broker-1", "broker-2", "broker-3"] {
        for t in ["__consumer_offsets-0", "__transaction_state-0"] {
            let _ = std::fs::remove_dir_all(d.join(b).join(t));
        }
    }
    let b = brokers(&d);
    let args: Vec<&str> = b.iter().map(String::as_str).collect();
    let (doc, stderr, code) = impact_json(&args);
    assert_eq!(code, Some(1), "{stderr}");
    let p = &doc["partitions"][0];
    assert!(
        p["groups_unknown"]
            .as_str()
            .unwrap()
            .contains("__consumer_offsets"),
        "{p}"
    );
    assert!(
        p["transactions_unknown"]
            .as_str()
            .unwrap()
            .contains("__transaction_state"),
        "{p}"
    );
    // the cut COMMIT marker is still seen on the old leader: still hanging
    assert!(
        p["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["state"] == "hanging" && t["marker_cut"] == "COMMIT"),
        "{p}"
    );
    assert!(!p["producers"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

/// A damaged `__consumer_offsets` batch is named with file and byte; the
/// rest of the impact is computed.
#[test]
fn impact_with_a_corrupt_consumer_offsets_batch() {
    let src = root().join("testdata/kafka/impact");
    let d = scratch("impact-corrupt-offsets");
    copy_tree(&src, &d);
    let co = d.join("broker-2/__consumer_offsets-0");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&co)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let seg = logs
        .iter()
        .find(|p| std::fs::metadata(p).unwrap().len() > 200)
        .unwrap()
        .clone();
    let mut bytes = std::fs::read(&seg).unwrap();
    // the last byte of the first batch (inside its records): its checksum
    // no longer holds
    let len = u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[12 + len - 1] ^= 0xff;
    std::fs::write(&seg, &bytes).unwrap();
    let b = brokers(&d);
    let args: Vec<&str> = b.iter().map(String::as_str).collect();
    let (doc, stderr, code) = impact_json(&args);
    assert_eq!(code, Some(1));
    let name = seg.display().to_string();
    assert!(
        stderr.contains(&format!("{name}:0")) && stderr.contains("checksum"),
        "{stderr}"
    );
    let p = &doc["partitions"][0];
    assert!(p["groups_unknown"].is_null());
    assert!(p["groups"].as_array().unwrap().len() >= 5, "{p}");
    assert!(p["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["state"] == "hanging"));
    let _ = std::fs::remove_dir_all(&d);
}

/// Table and JSON Lines on the same capture, and --fail-on never.
#[test]
fn impact_formats_and_fail_on() {
    let b = brokers(&root().join("testdata/kafka/impact"));
    let args: Vec<&str> = b.iter().map(String::as_str).collect();
    let mut a = vec!["impact"];
    a.extend_from_slice(&args);
    let out = klf(&a);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out.stdout);
    assert!(
        t.contains("hanging")
            && t.contains("--start-offset")
            && t.contains("LogTruncationException"),
        "{t}"
    );
    let mut a = vec!["impact", "--format", "jsonl", "--fail-on", "never"];
    a.extend_from_slice(&args);
    let out = klf(&a);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "partition");
    // a loss in a capture without __consumer_offsets: whether a group is
    // hurt cannot be told, which is never "nothing affected"
    let out = klf(&[
        "impact",
        "--format",
        "json",
        &root()
            .join("testdata/kafka/divergence")
            .display()
            .to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["partitions"][0]["affected"].is_null(), "{doc}");
    assert!(doc["partitions"][0]["groups_unknown"].is_string());
    // a capture that loses nothing: no partition, exit 0
    let out = klf(&[
        "impact",
        "--format",
        "json",
        &root()
            .join("testdata/kafka/elections")
            .display()
            .to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["partitions"].as_array().unwrap().len(), 0);
}

/// `klf check`, `klf diff --explain` and `klf report` carry the same facts.
#[test]
fn impact_in_check_diff_explain_and_report() {
    let dir = root().join("testdata/kafka/impact");
    let d = dir.display().to_string();
    let (doc, _, _) = impact_json(&[&d]);
    let imp = &doc["partitions"][0];
    let out = klf(&["check", "--format", "json", &d]);
    assert_eq!(out.status.code(), Some(1));
    let check: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes = |c: &str| -> Vec<&Value> {
        check["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == c)
            .collect()
    };
    let hanging = codes("hanging-transaction");
    let kafka_hanging: Vec<&Value> = imp["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["state"] == "hanging")
        .collect();
    assert_eq!(hanging.len(), kafka_hanging.len());
    assert_eq!(hanging[0]["severity"], "error");
    assert_eq!(hanging[0]["offset"], kafka_hanging[0]["first_offset"]);
    let reset: usize = imp["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| {
            matches!(
                g["state"].as_str(),
                Some("diverged" | "past-log-end" | "epoch-unknown")
            )
        })
        .count();
    assert_eq!(codes("consumer-group-reset").len(), reset);
    assert_eq!(
        codes("producer-sequences-cut").len(),
        imp["producers"].as_array().unwrap().len()
    );
    let out = klf(&["diff", "--explain", &d]);
    let t = text(&out.stdout);
    assert!(
        t.contains("Who the losses hurt (klf impact):") && t.contains("hanging"),
        "{t}"
    );
    let out = klf(&["report", &d, "--html", "-"]);
    let page = text(&out.stdout);
    for g in imp["groups"].as_array().unwrap() {
        let row = format!(
            "data-kind=\"group-impact\" data-group=\"{}\" data-state=\"{}\"",
            g["group"].as_str().unwrap(),
            g["state"].as_str().unwrap()
        );
        assert!(page.contains(&row), "report lacks {row}");
    }
    assert!(page.contains("data-kind=\"transaction-impact\" data-state=\"hanging\""));
}

/// A group's latest commit whose value has an unknown version is named
/// with file and byte; that group's position is unknown (not its earlier
/// commit), and every other group is still computed.
#[test]
fn impact_with_an_unknown_commit_value_version() {
    let src = root().join("testdata/kafka/impact");
    let d = scratch("impact-unknown-version");
    copy_tree(&src, &d);
    let group = "past-classic";
    let seg = d.join("broker-2/__consumer_offsets-0/00000000000000000000.log");
    let mut b = std::fs::read(&seg).unwrap();
    // the group's offset commit key for orders-0: type 1, group, topic, partition
    let mut key = vec![0u8, 1];
    key.extend_from_slice(&(group.len() as i16).to_be_bytes());
    key.extend_from_slice(group.as_bytes());
    key.extend_from_slice(&6i16.to_be_bytes());
    key.extend_from_slice(b"orders");
    key.extend_from_slice(&0i32.to_be_bytes());
    let at = b
        .windows(key.len())
        .rposition(|w| w == key.as_slice())
        .expect("the group's commit");
    // after the key: the value length (a zigzag varint), then the value's version
    let mut j = at + key.len();
    while b[j] & 0x80 != 0 {
        j += 1;
    }
    j += 1;
    b[j..j + 2].copy_from_slice(&99i16.to_be_bytes());
    // the batch holding it gets a valid CRC again: only the version is wrong
    let mut pos = 0usize;
    let batch = loop {
        let len = u32::from_be_bytes(b[pos + 8..pos + 12].try_into().unwrap()) as usize;
        if at < pos + 12 + len {
            break pos;
        }
        pos += 12 + len;
    };
    let end =
        batch + 12 + u32::from_be_bytes(b[batch + 8..batch + 12].try_into().unwrap()) as usize;
    let crc = crc32c::crc32c(&b[batch + 21..end]);
    b[batch + 17..batch + 21].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(&seg, &b).unwrap();
    let brokers = brokers(&d);
    let args: Vec<&str> = brokers.iter().map(String::as_str).collect();
    let (doc, stderr, code) = impact_json(&args);
    assert_eq!(code, Some(1));
    let name = seg.display().to_string();
    assert!(
        stderr.contains(&format!("{name}:{batch}: offset commit at offset"))
            && stderr.contains("does not decode"),
        "{stderr}"
    );
    let groups = doc["partitions"][0]["groups"].as_array().unwrap();
    let g = groups.iter().find(|g| g["group"] == group).unwrap();
    assert_eq!(g["state"], "unreadable", "{g}");
    assert!(g["committed_offset"].is_null() && g["next_fetch_offset"]["earliest"].is_null());
    let other = groups
        .iter()
        .find(|g| g["group"] == "inside-classic")
        .unwrap();
    assert_eq!(other["state"], "diverged");
    let _ = std::fs::remove_dir_all(&d);
}

/// The table opens with the whole capture (partitions compared, those that
/// lose records and whether they hurt anyone, the records lost with their
/// commitment, the assigned replicas not captured), then the partitions
/// that lose records worst first; those that lose nothing fold into one
/// line, or one line each with --all. A capture that loses nothing is one
/// sentence.
#[test]
fn impact_opens_with_an_overview_worst_first_and_folds_the_rest() {
    let dir = root().join("testdata/kafka/impact");
    let d = dir.display().to_string();
    // the figures, from klf diff's JSON
    let diff: Value =
        serde_json::from_slice(&klf(&["diff", "--format", "json", &d]).stdout).unwrap();
    let parts = diff["partitions"].as_array().unwrap();
    let lost: u64 = parts
        .iter()
        .map(|p| p["loss"]["records"].as_u64().unwrap())
        .sum();
    let lossy = parts
        .iter()
        .filter(|p| p["loss"]["records"].as_u64().unwrap() > 0)
        .count();
    let quiet: Vec<String> = parts
        .iter()
        .filter(|p| p["loss"]["records"].as_u64().unwrap() == 0)
        .map(|p| format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]))
        .collect();
    assert!(lossy == 1 && !quiet.is_empty(), "{diff}");
    let out = klf(&["impact", &d]);
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "{} partitions compared, 1 loses records: it hurts a consumer group, transaction or producer.",
            parts.len()
        ),
        "{table}"
    );
    assert!(
        lines[1].starts_with(&format!("In all: {lost} records lost"))
            && lines[1].ends_with("every assigned replica captured."),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "{} partitions: nothing lost (--all lists them)",
            quiet.len()
        )),
        "{table}"
    );
    for q in &quiet {
        assert!(!table.contains(q.as_str()), "{q}: {table}");
    }
    let all = text(&klf(&["impact", &d, "--all"]).stdout);
    for q in &quiet {
        assert!(all.contains(&format!("{q}: nothing lost\n")), "{all}");
    }

    // worst first: the partition losing the most records heads the table
    let jbod = root().join("testdata/kafka/jbod").display().to_string();
    let diff: Value =
        serde_json::from_slice(&klf(&["diff", "--format", "json", &jbod]).stdout).unwrap();
    let mut want: Vec<(std::cmp::Reverse<u64>, String)> = diff["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                std::cmp::Reverse(p["loss"]["records"].as_u64().unwrap()),
                format!("{}-{}:", p["topic"].as_str().unwrap(), p["partition"]),
            )
        })
        .collect();
    want.sort();
    let table = text(&klf(&["impact", &jbod]).stdout);
    let got: Vec<&str> = table
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()
                .filter(|w| w.starts_with("jbod-"))
        })
        .collect();
    let want: Vec<&str> = want.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(got, want, "{table}");

    // nothing lost: one sentence
    let elections = root()
        .join("testdata/kafka/elections")
        .display()
        .to_string();
    let out = klf(&["impact", &elections]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "1 partition compared: none loses records, so no consumer group, transaction or producer is hurt.\n"
    );
}
