//! `klf elect` on real-Kafka captures: for the replica Kafka did elect,
//! klf's prediction of what the partition loses equals what Kafka lost
//! (`loss_truth`), and it is the one marked as Kafka's pick; every
//! candidate's figures are those of `klf diff --leader N`; the ranking is
//! by committed loss.

use serde_json::Value;

use crate::common::{captures, klf, text};

#[test]
fn elect_agrees_with_what_kafka_did_and_with_diff() {
    let mut checked = 0;
    for dir in captures() {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        for p in s["partitions"].as_array().unwrap() {
            let Some(truth) = p.get("loss_truth") else {
                continue;
            };
            let (t, n) = (
                p["topic"].as_str().unwrap(),
                p["partition"].as_i64().unwrap(),
            );
            let leader = p["leader_at_capture"].as_i64().unwrap();
            let d = dir.display().to_string();
            let out = klf(&[
                "elect",
                "--format",
                "json",
                "--topic",
                t,
                "--partition",
                &n.to_string(),
                &d,
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            let part = &doc["partitions"][0];
            let cands = part["candidates"].as_array().unwrap();
            let elected = cands.iter().find(|c| c["broker"] == leader).unwrap();
            assert_eq!(
                elected["loss"]["records"], truth["records_lost"],
                "{t}-{n}: the elected replica's loss against Kafka's"
            );
            if s["mode"] == "zookeeper" {
                // no metadata log: the assignment, ISR and so Kafka's own
                // pick are unknown, and klf says so
                assert!(
                    cands.iter().all(|c| c["kafka_would_pick"] == false),
                    "{t}-{n}: {part}"
                );
                assert!(
                    part["kafka_rule"].as_str().unwrap().starts_with("unknown"),
                    "{t}-{n}: {part}"
                );
            } else {
                assert_eq!(elected["kafka_would_pick"], true, "{t}-{n}: {part}");
                assert_eq!(
                    cands
                        .iter()
                        .filter(|c| c["kafka_would_pick"] == true)
                        .count(),
                    1
                );
            }
            // each candidate as klf diff --leader counts it
            for c in cands {
                let b = c["broker"].as_i64().unwrap().to_string();
                let out = klf(&[
                    "diff",
                    "--format",
                    "json",
                    "--leader",
                    &b,
                    "--topic",
                    t,
                    "--partition",
                    &n.to_string(),
                    &d,
                ]);
                let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
                let loss = &diff["partitions"][0]["loss"];
                for k in ["records", "committed_proven", "committed_possible"] {
                    assert_eq!(c["loss"][k], loss[k], "{t}-{n} candidate {b}: {k}");
                }
            }
            // ranks 1.., least committed loss first
            let key = |c: &Value| {
                (
                    c["loss"]["committed_possible"]
                        .as_u64()
                        .unwrap_or(c["loss"]["records"].as_u64().unwrap()),
                    c["loss"]["committed_proven"].as_u64().unwrap(),
                )
            };
            assert!(
                cands.windows(2).all(|w| key(&w[0]) <= key(&w[1])),
                "{t}-{n}: ranking"
            );
            assert!(cands.iter().enumerate().all(|(i, c)| c["rank"] == i + 1));
            println!(
                "{t}-{n}: Kafka elected {leader} and lost {}; klf predicts {} for it, ranks it {}",
                truth["records_lost"], elected["loss"]["records"], elected["rank"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 5, "checked {checked}");
}

/// The incident that elects each out-of-sync candidate for real
/// (`election_outcomes` of scenario elect-choice): klf's loss per candidate
/// equals what Kafka lost when that candidate was elected, its ranking puts
/// the real least-loss one first among them, and Kafka's own unclean pick
/// is the one marked.
#[test]
fn elect_predicts_each_real_election() {
    let mut dirs = vec![crate::common::root().join("testdata/kafka/elect-choice")];
    if let Ok(extra) = std::env::var("KLF_FRESH_CAPTURES") {
        dirs.push(std::path::PathBuf::from(extra).join("elect-choice"));
    }
    let mut checked = 0;
    for dir in dirs
        .into_iter()
        .filter(|d| d.join("scenario.json").is_file())
    {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        let p = &s["partitions"][0];
        let outcomes = p["election_outcomes"].as_object().unwrap();
        let out = klf(&["elect", "--format", "json", &dir.display().to_string()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let part = doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == p["topic"])
            .unwrap();
        let cands = part["candidates"].as_array().unwrap();
        let mut ranked: Vec<(i64, i64)> = Vec::new();
        for (broker, o) in outcomes {
            let c = cands
                .iter()
                .find(|c| c["broker"].as_i64() == broker.parse().ok())
                .unwrap();
            assert_eq!(
                c["loss"]["records"],
                o["records_lost"],
                "{}: candidate {broker}: klf {} Kafka {}",
                dir.display(),
                c["loss"],
                o["records_lost"]
            );
            ranked.push((
                c["rank"].as_i64().unwrap(),
                o["records_lost"].as_i64().unwrap(),
            ));
            println!(
                "{}: electing {broker}: Kafka lost {}, klf predicts {} (rank {})",
                dir.display(),
                o["records_lost"],
                c["loss"]["records"],
                c["rank"]
            );
        }
        ranked.sort();
        assert!(
            ranked.windows(2).all(|w| w[0].1 <= w[1].1),
            "ranking against Kafka's outcomes: {ranked:?}"
        );
        // Kafka's rule on the metadata log's last state: an eligible leader
        // replica when the ELR has one (KIP-966: the last ISR member, fenced,
        // moved there), else the first replica in assignment order outside
        // the ISR
        let pick: Vec<&Value> = cands
            .iter()
            .filter(|c| c["kafka_would_pick"] == true)
            .collect();
        assert_eq!(pick.len(), 1);
        let listed = |k: &str, b: &Value| part[k].as_array().is_some_and(|v| v.contains(b));
        let want = part["assignment"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| {
                if part["elr"].is_null() {
                    !listed("isr", b)
                } else {
                    listed("elr", b)
                }
            })
            .unwrap();
        assert_eq!(&pick[0]["broker"], want, "{part}");
        assert!(
            !part["commands"].as_array().unwrap().is_empty(),
            "a leaderless partition gets the commands"
        );
        checked += 1;
    }
    assert!(checked > 0, "no elect-choice capture");
}

/// `klf elect`'s JSON on `capture`, and its table (piped: no terminal).
fn elect_both(capture: &str, extra: &[&str]) -> (Value, String) {
    let d = crate::common::kafka(capture).display().to_string();
    let mut args = vec!["elect", "--format", "json", d.as_str()];
    args.extend_from_slice(extra);
    let out = klf(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut args = vec!["elect", d.as_str()];
    args.extend_from_slice(extra);
    let out = klf(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (doc, text(&out.stdout))
}

/// A ZooKeeper-mode capture holds no metadata log: who leads now cannot be
/// told, so klf prints no election command (the partition may have a
/// leader, or an ISR replica that can come back), says what to check first
/// and ranks the candidates in plain words.
#[test]
fn elect_without_a_metadata_log_prints_what_to_check_not_commands() {
    for capture in ["unclean-zk-3.9", "divergence-zk-2.8"] {
        let (doc, table) = elect_both(capture, &[]);
        for p in doc["partitions"].as_array().unwrap() {
            assert_eq!(p["commands"], serde_json::json!([]), "{capture}: {p}");
            let check = p["check_first"].as_str().unwrap();
            let topic = p["topic"].as_str().unwrap();
            assert!(
                check.contains(&format!("--describe --topic {topic}"))
                    && check.contains(&format!(
                        "/brokers/topics/{topic}/partitions/{}/state",
                        p["partition"]
                    )),
                "{capture}: {check}"
            );
            for c in p["candidates"].as_array().unwrap() {
                let reason = c["reason"].as_str().unwrap();
                assert!(
                    !reason.contains("cannot be bounded possibly"),
                    "{capture}: {reason}"
                );
                // the figures the reason says are the candidate's own
                let records = c["loss"]["records"].as_u64().unwrap();
                assert!(
                    reason.contains(&format!("{records} records lost")),
                    "{capture}: {reason}"
                );
                if c["loss"]["committed_possible"].is_null() {
                    assert!(reason.contains("cannot be told"), "{capture}: {reason}");
                }
            }
        }
        assert!(
            !table.contains("kafka-leader-election")
                && !table.contains("reorder.json")
                && !table.contains("kafka-reassign"),
            "{capture}: {table}"
        );
        assert!(
            table.contains("Before electing: who leads")
                && table.contains("kafka-topics.sh --bootstrap-server BROKER --describe"),
            "{capture}: {table}"
        );
        assert!(
            table
                .lines()
                .next()
                .unwrap()
                .contains("who leads it now cannot be told (no metadata log)"),
            "{capture}: {table}"
        );
    }
    // with a metadata log the capture tells: nothing to check first
    let (doc, _) = elect_both("elect-choice", &[]);
    assert!(doc["partitions"][0]["check_first"].is_null());
}

/// The table opens with the whole capture: partitions compared, those that
/// lose data, the records lost with the first-ranked candidate of each and
/// their commitment, the assigned replicas not captured. Then the
/// partitions that lose data, worst first; the others fold into one line
/// unless --all. A capture where no candidate loses anything is one
/// sentence.
#[test]
fn elect_opens_with_an_overview_worst_first_and_folds_the_rest() {
    let (doc, table) = elect_both("impact", &[]);
    let parts = doc["partitions"].as_array().unwrap();
    let lossy: Vec<&Value> = parts
        .iter()
        .filter(|p| {
            p["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["loss"]["records"].as_u64().unwrap() > 0)
        })
        .collect();
    let lost: u64 = parts
        .iter()
        .map(|p| p["candidates"][0]["loss"]["records"].as_u64().unwrap())
        .sum();
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with(&format!("{} partitions compared: ", parts.len())),
        "{table}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "With the first-ranked replica of each leading: {lost} records lost"
        )) && lines[1].contains("every assigned replica captured"),
        "{table}"
    );
    let quiet = parts.len() - lossy.len();
    assert!(quiet > 0);
    assert!(
        table.contains(&format!(
            "{quiet} partitions: nothing lost whichever replica leads (--all lists them)"
        )),
        "{table}"
    );
    for p in &lossy {
        assert!(table.contains(&format!(
            "{}-{}: replicas",
            p["topic"].as_str().unwrap(),
            p["partition"]
        )));
    }
    assert!(!table.contains("__consumer_offsets-0"), "{table}");
    let (_, all) = elect_both("impact", &["--all"]);
    assert!(
        all.contains("__consumer_offsets-0: replicas") && !all.contains("--all lists"),
        "{all}"
    );

    // worst first: by what the first-ranked candidate loses
    let (doc, table) = elect_both("jbod", &[]);
    let mut want: Vec<(std::cmp::Reverse<u64>, String)> = doc["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                std::cmp::Reverse(p["candidates"][0]["loss"]["records"].as_u64().unwrap()),
                format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]),
            )
        })
        .collect();
    want.sort();
    let got: Vec<&str> = table
        .lines()
        .filter_map(|l| l.split_once(": replicas").map(|(n, _)| n))
        .collect();
    let want: Vec<&str> = want.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(got, want, "{table}");

    // nothing to decide: one sentence
    let (doc, table) = elect_both("codecs", &[]);
    let n = doc["partitions"].as_array().unwrap().len();
    assert_eq!(
        table,
        format!("{n} partitions compared: whichever captured replica leads, nothing is lost.\n")
    );
}

/// Of candidates that lose the same, the one Kafka picks by itself (here
/// the eligible leader replica, elected cleanly) ranks first, and the
/// advice is to let Kafka elect it, not an unclean election of another.
#[test]
fn elect_prefers_kafkas_own_pick_among_equal_losses() {
    let (doc, table) = elect_both("unclean-stale-hw", &["--topic", "__consumer_offsets"]);
    let p = &doc["partitions"][0];
    let cands = p["candidates"].as_array().unwrap();
    let pick = cands
        .iter()
        .find(|c| c["kafka_would_pick"] == true)
        .unwrap();
    assert!(
        p["elr"].as_array().unwrap().contains(&pick["broker"]),
        "{p}"
    );
    let tied = cands
        .iter()
        .filter(|c| c["loss"] == cands[0]["loss"])
        .count();
    assert!(tied >= 2, "the capture has a tie to break: {p}");
    assert_eq!(pick["rank"], 1, "{p}");
    let cmds = p["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 1, "{p}");
    assert!(
        cmds[0].as_str().unwrap().contains("elects it cleanly"),
        "{p}"
    );
    assert!(!table.contains("--election-type unclean"), "{table}");
}
