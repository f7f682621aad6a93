//! `klf timeline --incident`: the incident of each partition that loses
//! data told in time order, the nodes' log lines placed with the offset
//! from UTC inferred from what they state of the metadata log, and the
//! ISR changes the logs state held against the metadata log's
//! PartitionChangeRecords.
//!
//! Run on every capture that holds its nodes' logs (the committed ones
//! whose harness copied them in, and in CI those of the fresh Kafka run,
//! `KLF_FRESH_CAPTURES`), and on a copy of the committed `unclean-4.4`
//! given logs written here in Kafka 4.4's words, each node in another time
//! zone, so that the inference is put to the test whatever is committed.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{copy_tree, finish, kafka, klf_command, scratch, text};

fn read_text(path: &Path) -> String {
    let raw = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        return text(&out);
    }
    text(&raw)
}

fn incident_json(dir: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let out = finish(
        klf_command()
            .args(["timeline", "--incident", "--format", "json", "-q"])
            .args(extra)
            .arg(dir),
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", dir.display(), text(&out.stderr)));
    (out.status.code(), v)
}

/// `klf timeline --format json`'s controller's view of each partition.
fn histories(dir: &Path) -> Value {
    let out = finish(
        klf_command()
            .args(["timeline", "--format", "json", "-q"])
            .arg(dir),
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn set(v: &Value) -> BTreeSet<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// The ISR changes klf reads from the logs equal the metadata log's
/// records that change the ISR, in order and partition epoch, for every
/// record within the time the logs cover; each agreeing statement is the
/// line it names; the leader's reason is given where it logged one.
/// Returns how many records were held against a statement.
fn isr_changes_match_the_metadata_log(dir: &Path) -> usize {
    let (_, v) = incident_json(dir, &["--all"]);
    let history = histories(dir);
    let mut compared = 0;
    for p in v["partitions"].as_array().unwrap() {
        let name = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
        let cmp = &p["isr_changes"];
        if cmp["compared"] != true {
            assert!(
                cmp["why_not"].is_string(),
                "{}: {name}: not compared, and not said why: {cmp}",
                dir.display()
            );
            continue;
        }
        // the records that change the ISR, from the timeline's own read of
        // the metadata log
        let h = history["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["topic"] == p["topic"] && h["partition"] == p["partition"])
            .unwrap();
        let records: Vec<&Value> = h["controller"]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .collect();
        let changing: Vec<(i64, BTreeSet<i64>)> = records
            .windows(2)
            .filter(|w| set(&w[0]["isr"]) != set(&w[1]["isr"]))
            .map(|w| (w[1]["partition_epoch"].as_i64().unwrap(), set(&w[1]["isr"])))
            .collect();
        let rows: Vec<&Value> = cmp["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["metadata_offset"].is_i64())
            .collect();
        assert_eq!(
            rows.iter()
                .map(|c| c["partition_epoch"].as_i64().unwrap())
                .collect::<Vec<_>>(),
            changing.iter().map(|c| c.0).collect::<Vec<_>>(),
            "{}: {name}: the ISR changes are not the metadata log's",
            dir.display()
        );
        let mut last_time = i64::MIN;
        for (c, (pe, isr)) in rows.iter().zip(&changing) {
            let verdict = c["verdict"].as_str().unwrap();
            assert!(
                verdict == "agrees" || verdict == "not-covered" || verdict == "replicas-down",
                "{}: {name}: partition epoch {pe}: {verdict}: {c}",
                dir.display()
            );
            if verdict != "agrees" {
                continue;
            }
            compared += 1;
            let l = &c["logged"];
            assert_eq!(&set(&l["isr"]), isr, "{}: {name}: {c}", dir.display());
            assert_eq!(&set(&c["isr"]), isr);
            // logged in the order of the records
            let t = l["time"].as_i64().unwrap();
            assert!(
                t >= last_time,
                "{}: {name}: partition epoch {pe} logged before the one before it: {c}",
                dir.display()
            );
            last_time = t;
            // the line named states the partition epoch
            let file = Path::new(l["source"]["file"].as_str().unwrap());
            let lines = read_text(file);
            let line = lines
                .lines()
                .nth(l["source"]["line"].as_u64().unwrap() as usize - 1)
                .unwrap();
            assert!(
                line.contains(&format!("partitionEpoch={pe})"))
                    || line.contains(&format!("version updated to {pe}"))
                    || line.contains(&format!("partition epoch {pe}"))
                    || line.contains(&format!("partitionEpoch: {} -> {pe}", pe - 1)),
                "{}: {name}: the line named does not state partition epoch {pe}: {line}",
                dir.display()
            );
            // where the leader logged why it shrank the ISR, that is the
            // reason given
            if l["kind"] == "log-isr-updated" {
                let before: Vec<&str> = lines
                    .lines()
                    .take(l["source"]["line"].as_u64().unwrap() as usize - 1)
                    .collect();
                let partition = format!("[Partition {name} ");
                let shrink = before
                    .iter()
                    .rev()
                    .take_while(|x| !(x.contains(&partition) && x.contains("ISR updated to")))
                    .find(|x| x.contains(&partition) && x.contains("Shrinking ISR from"));
                if let Some(s) = shrink {
                    let reason = c["reason"].as_str().unwrap_or_else(|| {
                        panic!(
                            "{}: {name}: the leader logged {s}, no reason given: {c}",
                            dir.display()
                        )
                    });
                    assert!(s.contains(reason), "{reason} is not in {s}");
                }
            }
        }
    }
    // every record within the time a placed log covers was held against a
    // statement
    let spans: Vec<(i64, i64)> = v["zones"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|z| z["how"] != "assumed")
        .filter_map(|z| {
            Some((
                z["first_timestamp"].as_i64()?,
                z["last_timestamp"].as_i64()?,
            ))
        })
        .collect();
    for p in v["partitions"].as_array().unwrap() {
        for c in p["isr_changes"]["changes"].as_array().unwrap() {
            let Some(t) = c["timestamp"].as_i64() else {
                continue;
            };
            if !spans.iter().any(|&(a, b)| a <= t && t <= b) {
                continue;
            }
            if c["verdict"] == "replicas-down" {
                // no replica's broker logged a line within 2 s of it
                let h = history["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|h| h["topic"] == p["topic"] && h["partition"] == p["partition"])
                    .unwrap();
                for b in h["controller"]["replicas"].as_array().unwrap() {
                    let b = b.as_i64().unwrap();
                    let Some(zone) = v["zones"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|z| z["node"] == b && z["how"] != "assumed")
                    else {
                        continue;
                    };
                    let minutes = offset_minutes(zone["utc_offset"].as_str().unwrap());
                    let seconds: Vec<String> = (-2..=2)
                        .map(|k| format!("[{}", &local(t + k * 1000, minutes)[..19]))
                        .collect();
                    for f in node_logs(dir, b) {
                        let text = read_text(&f);
                        let near = text
                            .lines()
                            .find(|l| seconds.iter().any(|s| l.starts_with(s.as_str())));
                        assert!(
                            near.is_none(),
                            "{}: {c}: broker {b} was running then: {}",
                            dir.display(),
                            near.unwrap_or_default()
                        );
                    }
                }
                continue;
            }
            assert_eq!(c["verdict"], "agrees", "{}: {c}", dir.display());
        }
    }
    compared
}

/// Every entry in time order, each with a source that exists: a file
/// there, its line within the file, its byte within it.
fn entries_in_time_order_with_their_sources(dir: &Path) {
    let (_, v) = incident_json(dir, &["--all"]);
    for p in v["partitions"].as_array().unwrap() {
        let entries = p["entries"].as_array().unwrap();
        let mut last = i64::MIN;
        for e in entries {
            let t = e["time"].as_i64().unwrap();
            // a node's clock may step back: its own order is kept
            assert!(
                t >= last || e["zone"].is_string(),
                "{}: out of time order: {e}",
                dir.display()
            );
            last = last.max(t);
            assert!(e["time_utc"].is_string() || t < 0, "{e}");
            let file = Path::new(e["source"]["file"].as_str().unwrap());
            let meta = std::fs::metadata(file)
                .unwrap_or_else(|err| panic!("{}: {err}: {e}", file.display()));
            if let Some(line) = e["source"]["line"].as_u64() {
                let n = read_text(file).lines().count() as u64;
                assert!(line >= 1 && line <= n, "{e}: {n} lines");
                assert!(e["logged_at"].is_string() && e["zone"].is_string(), "{e}");
            }
            if let Some(byte) = e["source"]["byte"].as_u64() {
                assert!(byte < meta.len(), "{e}: {} bytes", meta.len());
            }
            assert!(!e["kind"].as_str().unwrap().is_empty());
        }
    }
}

/// Minutes east of UTC in `+HH:MM`.
fn offset_minutes(z: &str) -> i64 {
    let sign = if z.starts_with('-') { -1 } else { 1 };
    let (h, m) = z[1..].split_once(':').unwrap();
    sign * (h.parse::<i64>().unwrap() * 60 + m.parse::<i64>().unwrap())
}

/// The log files of node `b` in the capture at `dir` (`broker-B/` or
/// `controller-B/`).
fn node_logs(dir: &Path, b: i64) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in [format!("broker-{b}"), format!("controller-{b}")] {
        let Ok(rd) = std::fs::read_dir(dir.join(folder)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("server.log") {
                out.push(e.path());
            }
        }
    }
    out
}

/// `2026-12-02 07:46:16,704`: epoch milliseconds as a node `minutes` east
/// of UTC writes them.
fn local(ms: i64, minutes: i64) -> String {
    let iso = klf::format::text::iso_time(ms + minutes * 60_000).unwrap();
    format!("{} {},{}", &iso[..10], &iso[11..19], &iso[20..23])
}

/// A copy of `unclean-4.4` with logs for its nodes and its controller,
/// each line written moments after the record it states, in the node's
/// own zone (node 2 at -05:30, the others at +02:00).
pub fn fixture(tag: &str) -> PathBuf {
    let dir = scratch(&format!("incident-{tag}")).join("unclean-4.4");
    copy_tree(&kafka("unclean-4.4"), &dir);
    // the capture's own logs out: this fixture's lines are the only ones
    for node in ["broker-1", "broker-2", "broker-3"] {
        let _ = std::fs::remove_file(dir.join(node).join("server.log.gz"));
    }
    let _ = std::fs::remove_dir_all(dir.join("controller-100"));
    let meta = std::fs::read_to_string(dir.join("broker-1/unclean-0/partition.metadata")).unwrap();
    let id = meta
        .lines()
        .find_map(|l| l.strip_prefix("topic_id: "))
        .unwrap()
        .trim()
        .to_string();
    let h = histories(&dir);
    let changes = h["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "unclean")
        .unwrap()["controller"]["changes"]
        .as_array()
        .unwrap()
        .clone();
    let at = |pe: i64| {
        changes.iter().find(|c| c["partition_epoch"] == pe).unwrap()["timestamp"]
            .as_i64()
            .unwrap()
    };
    let (t1, t2, t3) = (at(1), at(2), at(3));
    let line = |ms: i64, zone: i64, msg: &str, logger: &str| {
        format!("[{}] INFO {msg} ({logger})\n", local(ms, zone))
    };
    let registration = |isr: &str, pe: i64| {
        format!("partition registration PartitionRegistration(replicas=[1, 2, 3], directories=[AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], isr=[{isr}], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch={pe})")
    };
    let b1 = [
        line(t1 - 20_000, 120, "[KafkaServer id=1] started", "kafka.server.KafkaRaftServer"),
        line(
            t1 + 41,
            120,
            &format!("[Broker id=1] Skipped the become-leader state change for unclean-0 with topic id Some({id}), {} and isNew=false since it is already the leader with leader epoch 0. Current high watermark 100, ISR [1,2], adding replicas [] and removing replicas [].", registration("1, 2", 1)),
            "state.change.logger",
        ),
        line(
            t2 - 30,
            120,
            "[Partition unclean-0 broker=1] Shrinking ISR from 1,2 to 1. Leader: (highWatermark: 150, endOffset: 200). Out of sync replicas: (brokerId: 2, endOffset: 150, lastCaughtUpTimeMs: 1796190368380).",
            "kafka.cluster.Partition",
        ),
        line(
            t2 + 12,
            120,
            "[Partition unclean-0 broker=1] ISR updated to 1 and version updated to 2",
            "kafka.cluster.Partition",
        ),
    ]
    .concat();
    let b2 = [
        line(
            t1 + 35,
            -330,
            &format!("[Broker id=2] Skipped the become-follower state change for unclean-0 with topic id Some({id}), {} and isNew=false since it is already a follower with leader epoch 0.", registration("1, 2", 1)),
            "state.change.logger",
        ),
        line(
            t2 + 300_000,
            -330,
            "[BrokerLifecycleManager id=2] Beginning controlled shutdown.",
            "org.apache.kafka.server.BrokerLifecycleManager",
        ),
    ]
    .concat();
    let b3 = line(
        t3 + 40,
        120,
        &format!("[Broker id=3] Leader unclean-0 with topic id Some({id}) starts at leader epoch 1 from offset 100 with partition epoch 3, high watermark 71, ISR [3], adding replicas [] and removing replicas [] . Previous leader Some(1) and previous leader epoch was 0."),
        "state.change.logger",
    );
    let c = [
        line(
            t3 - 7,
            120,
            "[QuorumController id=100] Fencing broker 1 at epoch 17 because its session has timed out.",
            "org.apache.kafka.controller.ReplicationControlManager",
        ),
        line(
            t3,
            120,
            &format!("[QuorumController id=100] UNCLEAN partition change for unclean-0 with topic ID {id}: isr: [1] -> [3], leader: 1 -> 3, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 0 -> 1, partitionEpoch: 2 -> 3"),
            "org.apache.kafka.controller.ReplicationControlManager",
        ),
    ]
    .concat();
    std::fs::write(dir.join("broker-1/server.log"), b1).unwrap();
    std::fs::write(dir.join("broker-2/server.log"), b2).unwrap();
    std::fs::write(dir.join("broker-3/server.log"), b3).unwrap();
    std::fs::create_dir_all(dir.join("controller-100")).unwrap();
    std::fs::write(dir.join("controller-100/server.log"), c).unwrap();
    dir
}

#[test]
fn each_nodes_zone_is_inferred_from_its_statements_of_the_metadata_log() {
    let dir = fixture("zones");
    let (code, v) = incident_json(&dir, &[]);
    assert_eq!(code, Some(1), "the partition loses data");
    let zones: Vec<(i64, &str, &str)> = v["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| {
            (
                z["node"].as_i64().unwrap(),
                z["utc_offset"].as_str().unwrap(),
                z["how"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        zones,
        vec![
            (1, "+02:00", "inferred"),
            (2, "-05:30", "inferred"),
            (3, "+02:00", "inferred"),
            (100, "+02:00", "inferred"),
        ]
    );
    let p = &v["partitions"][0];
    assert_eq!(p["topic"], "unclean");
    assert_eq!(p["loses_data"], true);
    // the ISR changes, with Kafka's reasons: the leader's for the one it
    // made, the controller's fencing for the unclean election
    let changes = p["isr_changes"]["changes"].as_array().unwrap();
    let got: Vec<(i64, &str, i64)> = changes
        .iter()
        .map(|c| {
            (
                c["partition_epoch"].as_i64().unwrap(),
                c["verdict"].as_str().unwrap(),
                c["logged"]["node"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![(1, "agrees", 1), (2, "agrees", 1), (3, "agrees", 100)]
    );
    assert!(changes[1]["reason"]
        .as_str()
        .unwrap()
        .starts_with("Out of sync replicas: (brokerId: 2,"));
    assert!(changes[2]["reason"]
        .as_str()
        .unwrap()
        .contains("Fencing broker 1 at epoch 17 because its session has timed out."));
    // the record's entry carries the reason; the lines are placed in UTC
    let entries = p["entries"].as_array().unwrap();
    let unclean = entries
        .iter()
        .find(|e| e["kind"] == "unclean-election")
        .unwrap();
    assert!(unclean["reason"]
        .as_str()
        .unwrap()
        .contains("Fencing broker 1"));
    let t3 = unclean["time"].as_i64().unwrap();
    let leader = entries.iter().find(|e| e["kind"] == "log-leader").unwrap();
    assert_eq!(leader["time"].as_i64().unwrap(), t3 + 40);
    assert_eq!(leader["utc_offset"], "+02:00");
    assert_eq!(leader["zone"], "inferred");
    // node 2's follower line, written at -05:30, lands 35 ms after its record
    let follower = entries
        .iter()
        .find(|e| e["kind"] == "log-registration-applied" && e["node"] == 2)
        .unwrap();
    let isr_change = entries.iter().find(|e| e["kind"] == "isr-changed").unwrap();
    assert_eq!(
        follower["time"].as_i64().unwrap(),
        isr_change["time"].as_i64().unwrap() + 35
    );
    // its controlled shutdown, five minutes after the record, is no reason
    assert!(changes[1]["reason_source"]["file"]
        .as_str()
        .unwrap()
        .ends_with("broker-1/server.log"));
    entries_in_time_order_with_their_sources(&dir);
    assert_eq!(isr_changes_match_the_metadata_log(&dir), 3);
    // an offset given is used as given
    let (_, g) = incident_json(&dir, &["--log-utc-offset", "2=+01:00"]);
    let z2 = g["zones"]
        .as_array()
        .unwrap()
        .iter()
        .find(|z| z["node"] == 2)
        .unwrap();
    assert_eq!(
        (z2["how"].as_str(), z2["utc_offset"].as_str()),
        (Some("given"), Some("+01:00"))
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn isr_changes_read_from_the_logs_equal_the_metadata_logs_records() {
    for dir in crate::common::captures_with_logs() {
        isr_changes_match_the_metadata_log(&dir);
    }
}

#[test]
fn entries_are_in_time_order_and_every_source_exists() {
    let mut dirs = crate::common::captures_with_logs();
    dirs.push(kafka("unclean-4.4"));
    dirs.push(kafka("divergence-zk-3.9"));
    for dir in dirs {
        entries_in_time_order_with_their_sources(&dir);
    }
}

/// The table on a terminal tells the partition, its entries and the
/// zones; JSON Lines carry one object per zone, partition, entry and ISR
/// change; a partition that loses nothing is told only with --all.
#[test]
fn table_and_json_lines() {
    let dir = fixture("table");
    let out = finish(klf_command().args(["timeline", "--incident"]).arg(&dir));
    let t = text(&out.stdout);
    assert!(
        t.starts_with("unclean-0: 150 records lost, all committed; incident timeline"),
        "{t}"
    );
    assert!(
        t.contains("ISR changes, the logs against the metadata log:"),
        "{t}"
    );
    assert!(
        t.contains("node 2: times read as UTC-05:30, inferred from 1 statement"),
        "{t}"
    );
    let lines = finish(
        klf_command()
            .args(["timeline", "--incident", "--format", "jsonl"])
            .arg(&dir),
    );
    let kinds: Vec<String> = text(&lines.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["type"] != "zone" {
                assert_eq!(v["incident_topic"], "unclean", "{v}");
            }
            v["type"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(kinds.iter().filter(|k| *k == "zone").count(), 4);
    assert_eq!(kinds.iter().filter(|k| *k == "partition").count(), 1);
    assert_eq!(kinds.iter().filter(|k| *k == "isr-change").count(), 3);
    assert!(kinds.iter().filter(|k| *k == "entry").count() > 10);
    // nothing lost among the partitions of a topic: said, exit 0
    let none = finish(
        klf_command()
            .args(["timeline", "--incident", "--topic", "__consumer_offsets"])
            .arg(kafka("internal-topics-4.4")),
    );
    assert_eq!(none.status.code(), Some(0), "{}", text(&none.stderr));
    assert!(text(&none.stdout).is_empty());
    assert!(
        text(&none.stderr).contains("nothing lost; --all tells"),
        "{}",
        text(&none.stderr)
    );
    // the report draws the timeline in its section
    let page = finish(klf_command().arg("report").arg(&dir).args(["--html", "-"]));
    let page = text(&page.stdout);
    assert!(
        page.contains("data-kind=\"incident\""),
        "no incident section"
    );
    assert_eq!(
        page.matches("data-kind=\"isr-change\" data-partition-epoch=")
            .count(),
        3
    );
    assert!(page.contains("data-kind=\"zone\" data-node=\"2\" data-utc-offset=\"-05:30\""));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn options_of_incident_alone_are_refused_without_it_and_a_bad_offset_is_named() {
    let dir = kafka("unclean-4.4");
    let o = finish(klf_command().args(["timeline", "--all"]).arg(&dir));
    assert_eq!(o.status.code(), Some(2));
    let o = finish(
        klf_command()
            .args(["timeline", "--incident", "--log-utc-offset", "1=+25:00"])
            .arg(&dir),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("at most 18 hours"),
        "{}",
        text(&o.stderr)
    );
}
