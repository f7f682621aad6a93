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
