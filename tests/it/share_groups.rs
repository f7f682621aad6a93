//! Share groups (KIP-932) and streams groups (KIP-1071) against what real
//! Kafka wrote and reported:
//! - `__share_group_state` of `internal-topics-4.4` read as the share
//!   coordinator folds it: the share group the scenario ran has
//!   acknowledged what it consumed, and its start offset is the one Kafka's
//!   own kafka-dump-log shows last;
//! - `klf impact` on the `share-unclean` captures (committed, and CI's fresh
//!   run through `KLF_FRESH_CAPTURES`) against `share_truth`, Kafka's own
//!   view once the old leader rejoined: the group's start offset, leader
//!   epoch and lag (listShareGroupOffsets, kafka-share-groups --describe
//!   --offsets), the lost records the consumer had accepted, rejected and
//!   released, what a share consumer of the group was given then (nothing,
//!   the start offset past the log end, and the refusals the new leader
//!   logged) and once more records were written (which offsets of the new
//!   log it skipped);
//! - the streams group of `coordinators-4.4` is named so.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{kafka, klf, text};
use klf::capture::discover::discover;
use klf::capture::groups::group_commits;
use klf::capture::share_groups::share_states;
use klf::model::impact::DeliveryState;

fn scenario(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap()).unwrap()
}

/// Offsets of inclusive runs `[[a, b], ...]`.
fn runs(v: &Value) -> BTreeSet<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not runs: {v}"))
        .iter()
        .flat_map(|r| r[0].as_i64().unwrap()..=r[1].as_i64().unwrap())
        .collect()
}

/// Offsets of half-open ranges `[{"start", "end"}, ...]`.
fn ranges(v: &Value) -> BTreeSet<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not ranges: {v}"))
        .iter()
        .flat_map(|r| r["start"].as_i64().unwrap()..r["end"].as_i64().unwrap())
        .collect()
}

fn phase(p: &Value, name: &str) -> BTreeSet<i64> {
    let ph = &p["acked_by_phase"][name];
    (ph["min_offset"].as_i64().unwrap()..=ph["max_offset"].as_i64().unwrap()).collect()
}

/// The data records of a replica as Kafka's kafka-dump-log printed them
/// (golden output): their offsets.
fn golden_offsets(dir: &Path, broker: &str, part: &str) -> BTreeSet<i64> {
    crate::common::golden_records(dir, broker, part)
        .into_iter()
        .map(|(o, _, _)| o)
        .collect()
}

#[test]
fn share_group_state_is_what_the_group_acknowledged() {
    let dir = kafka("internal-topics-4.4");
    let s = scenario(&dir);
    let p = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("share_groups").is_some())
        .expect("internal-topics-4.4 has a share group");
    let (topic, part) = (
        p["topic"].as_str().unwrap(),
        i32::try_from(p["partition"].as_i64().unwrap()).unwrap(),
    );
    let capture = discover(&[dir.as_path()]);
    let wanted = BTreeSet::from([(topic.to_string(), part)]);
    let read = share_states(&capture, &wanted, &|_| None);
    assert!(read.topic_present && read.problems.is_empty(), "{read:?}");
    let states = read.for_partition(topic, part);
    let leader = format!("broker-{}", p["leader_at_capture"]);
    let data = golden_offsets(&dir, &leader, &format!("{topic}-{part}"));
    let log_end = p["replica_state"][p["leader_at_capture"].to_string()]["log_end_offset"]
        .as_i64()
        .unwrap();
    // the share coordinator's last record for the group, as kafka-dump-log
    // printed it: its start offset
    let state_part = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "__share_group_state")
        .unwrap();
    let state_dump = crate::common::golden_records(
        &dir,
        &format!("broker-{}", state_part["leader_at_capture"]),
        &format!("__share_group_state-{}", state_part["partition"]),
    );
    for (g, facts) in p["share_groups"].as_object().unwrap() {
        let st = states
            .iter()
            .find(|x| x.group == *g)
            .unwrap_or_else(|| panic!("no state for share group {g}"));
        assert!(st.unreadable.is_none(), "{st:?}");
        // every data record it was given, it acknowledged
        let acked: BTreeSet<i64> = data
            .iter()
            .copied()
            .filter(|&o| {
                o < st.start_offset
                    || st
                        .state_of(o)
                        .is_some_and(|b| b.state == DeliveryState::Acknowledged)
            })
            .collect();
        assert_eq!(
            acked.len() as i64,
            facts["consumed"].as_i64().unwrap(),
            "{g}: acknowledged {acked:?}"
        );
        // the transaction markers between them are archived, as Kafka does
        for o in (0..log_end).filter(|o| !data.contains(o)) {
            assert_eq!(
                st.state_of(o).map(|b| b.state),
                Some(DeliveryState::Archived),
                "{g}: marker at {o}"
            );
        }
        let last = state_dump
            .iter()
            .rev()
            .find(|(_, k, _)| k.contains(&format!("\"groupId\":\"{g}\"")))
            .unwrap_or_else(|| panic!("{g}: no record in the golden dump"));
        let start: i64 = last
            .2
            .split("\"startOffset\":")
            .nth(1)
            .and_then(|r| r.split([',', '}']).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no startOffset in {}", last.2));
        assert_eq!(st.start_offset, start, "{g}: start offset");
        // the group has finished the whole log: Kafka starts it at the end
        assert_eq!(st.effective_start(), Some(log_end), "{g}");
        assert_eq!(st.next_delivered(), Some(log_end), "{g}");
    }
}

fn share_dirs() -> Vec<PathBuf> {
    crate::common::scenario_dirs_with("share_truth")
}

fn brokers(dir: &Path) -> Vec<String> {
    crate::common::broker_folders(dir)
}

#[test]
fn impact_names_what_the_share_group_lost_and_where_kafka_resumes_it() {
    let dirs = share_dirs();
    assert!(!dirs.is_empty(), "no capture with share_truth");
    for dir in dirs {
        println!("{}", dir.display());
        let s = scenario(&dir);
        let p = s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p.get("share_truth").is_some())
            .unwrap();
        let truth = &p["share_truth"];
        let (topic, part) = (
            p["topic"].as_str().unwrap(),
            p["partition"].as_i64().unwrap(),
        );
        let mut args = vec!["impact", "--format", "json"];
        let b = brokers(&dir);
        args.extend(b.iter().map(String::as_str));
        let out = klf(&args);
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let imp = doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == topic && x["partition"] == part)
            .unwrap_or_else(|| panic!("no impact for {topic}-{part}"));
        assert_eq!(imp["affected"], true);
        // what the old leader alone held, and the new leader wrote instead
        let lost = phase(p, "isr_1");
        let rewritten = phase(p, "unclean_leader_3");
        let new_end = p["replica_state"][p["leader_at_capture"].to_string()]["log_end_offset"]
            .as_i64()
            .unwrap();
        assert_eq!(imp["new_log_end"].as_i64(), Some(new_end));
        assert_eq!(imp["first_lost_offset"].as_i64(), lost.first().copied());
        for (g, consumed) in p["share_groups"].as_object().unwrap() {
            let k = imp["share_groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["group"] == g.as_str())
                .unwrap_or_else(|| panic!("klf names no share group {g}: {imp}"));
            let of = |what: &str| -> BTreeSet<i64> {
                consumed
                    .as_object()
                    .unwrap()
                    .values()
                    .flat_map(|c| runs(&c[what]))
                    .filter(|o| lost.contains(o))
                    .collect()
            };
            let (accepted, rejected, released) = (of("accepted"), of("rejected"), of("released"));
            assert!(
                !accepted.is_empty(),
                "{g}: the scenario acknowledged lost records"
            );
            // the lost records it had acknowledged, archived, released
            let lo = &k["lost_offsets"];
            assert_eq!(ranges(&lo["acknowledged"]), accepted, "{g}: acknowledged");
            assert_eq!(ranges(&lo["archived"]), rejected, "{g}: archived");
            let available = ranges(&lo["available"]);
            assert!(available.is_superset(&released), "{g}: released");
            assert!(available.is_disjoint(&accepted) && available.is_disjoint(&rejected));
            for (what, set) in [("acknowledged", &accepted), ("archived", &rejected)] {
                assert_eq!(
                    k["lost"][what].as_u64(),
                    Some(set.len() as u64),
                    "{g} {what}"
                );
            }
            // its start offset, leader epoch and lag as Kafka reports them
            let admin = &truth["share_group_offsets_after"]["offsets"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["topic"] == topic && o["partition"] == part)
                .unwrap()
                .clone();
            let row = truth["describe_after"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| {
                    r["GROUP"] == g.as_str() && r["PARTITION"].as_str() == Some(&part.to_string())
                })
                .unwrap_or_else(|| panic!("kafka-share-groups printed no row for {g}"));
            assert_eq!(
                k["start_offset"], admin["start_offset"],
                "{g}: start offset"
            );
            assert_eq!(
                k["start_offset"].to_string(),
                row["START-OFFSET"].as_str().unwrap(),
                "{g}: START-OFFSET"
            );
            assert_eq!(
                k["leader_epoch"], admin["leader_epoch"],
                "{g}: leader epoch"
            );
            let lag = k["lag"].as_i64().expect("klf computes Kafka's lag");
            if lag < 0 {
                assert!(admin["lag"].is_null(), "{g}: {admin}");
                assert_eq!(row["LAG"], "-", "{g}");
            } else {
                assert_eq!(admin["lag"].as_i64(), Some(lag), "{g}");
                assert_eq!(row["LAG"].as_str(), Some(lag.to_string().as_str()), "{g}");
            }
            // where it points: past the new log end, Kafka gave the group
            // nothing and refused to move its start offset back
            let eff = k["effective_start_offset"].as_i64().unwrap();
            let past = eff > new_end;
            assert_eq!(k["state"] == "past-log-end", past, "{g}: {k}");
            let after = &truth["consume_after"];
            assert_eq!(after["consumed"].as_i64() == Some(0), past, "{g}: {after}");
            let refusals = truth["leader_start_offset_refusals"].as_array().unwrap();
            assert_eq!(!refusals.is_empty(), past, "{g}");
            for r in refusals {
                assert_eq!(r["start_offset"].as_i64(), Some(eff), "{g}: {r}");
            }
            // once the log passed it: the offsets of the new log it was
            // given are all but those klf says it skips
            let more = &truth["consume_after_more"];
            let given = runs(&more["accepted"]);
            let end = truth["offsets_after_more"]["high_watermark"]
                .as_i64()
                .unwrap();
            let first = lost.first().copied().unwrap();
            let skipped = ranges(&k["skipped_offsets"]);
            let expect: BTreeSet<i64> = (first..end).filter(|o| !skipped.contains(o)).collect();
            let seen: BTreeSet<i64> = given.range(first..end).copied().collect();
            assert_eq!(seen, expect, "{g}: delivered after more records");
            assert_eq!(
                k["next_delivered_offset"].as_i64(),
                given.first().copied(),
                "{g}: first delivered"
            );
            // the records the new leader wrote in their place that it skips
            let n = rewritten.iter().filter(|o| skipped.contains(o)).count();
            assert_eq!(k["records_skipped"].as_u64(), Some(n as u64), "{g}");
        }
    }
}

#[test]
fn streams_groups_are_named_as_their_records_say() {
    let dir = kafka("coordinators-4.4");
    let s = scenario(&dir);
    let offsets = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p.get("streams_groups").is_some())
        .expect("coordinators-4.4 has a streams group");
    let capture = discover(&[dir.as_path()]);
    // the streams application read every partition of `side`
    let wanted: BTreeSet<(String, i32)> = capture
        .partitions
        .keys()
        .filter(|(t, _)| t == "side")
        .cloned()
        .collect();
    assert!(!wanted.is_empty());
    let read = group_commits(&capture, &wanted);
    for (g, facts) in offsets["streams_groups"].as_object().unwrap() {
        assert!(facts["processed"].as_i64().unwrap() > 0);
        assert_eq!(
            read.protocols.get(g).map(String::as_str),
            Some("streams"),
            "{g}: {:?}",
            read.protocols
        );
        // its offset commits are read as a consumer group's
        let commits: usize = wanted
            .iter()
            .map(|(t, p)| {
                read.for_partition(t, *p)
                    .iter()
                    .filter(|c| c.group == *g)
                    .count()
            })
            .sum();
        assert!(commits > 0, "{g}: no offset commit read");
    }
    for (g, _) in offsets["groups"].as_object().unwrap() {
        assert_ne!(read.protocols.get(g).map(String::as_str), Some("streams"));
    }
}
