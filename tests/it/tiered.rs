//! A tiered-storage capture (`testdata/kafka/tiered`, Kafka 4.1.1 with
//! Kafka's own LocalTieredStorage): what klf tells from it. The brokers'
//! `__remote_log_metadata` replicas, decoded by `klf dump`, name every
//! segment Kafka copied to the remote store and what became of it; the
//! copy of the remote store (`remote-storage/`) must hold exactly the
//! segments the metadata says are there, each the size it records, and
//! `klf dump` reads those files, named as the store names them, as the
//! segments they are. The local log starts where the remote segments end,
//! and the partition's log start offset (the checkpoint) where the oldest
//! remote segment still there begins.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::common::{kafka, klf, text};

/// Every decoded `__remote_log_metadata` record of one broker's replica.
fn remote_metadata(broker: &str) -> Vec<Value> {
    let dir = kafka("tiered").join(broker).join("__remote_log_metadata-0");
    let out = klf(&[
        "dump",
        "--format",
        "json",
        "--deep-iteration",
        "--print-data-log",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "record")
        .map(|v| v["decoded_value"].clone())
        .collect()
}

#[derive(Debug, Default, Clone)]
struct Segment {
    topic: String,
    start: i64,
    end: i64,
    size: i64,
    state: i64,
}

/// Segment id -> what the metadata says of it, last state winning.
fn segments(records: &[Value]) -> BTreeMap<String, Segment> {
    let mut out: BTreeMap<String, Segment> = BTreeMap::new();
    for r in records {
        let d = &r["data"];
        let id = d["remoteLogSegmentId"]["id"].as_str().unwrap().to_string();
        match r["type"].as_str().unwrap() {
            "REMOTE_LOG_SEGMENT_METADATA_RECORD" => {
                out.insert(
                    id,
                    Segment {
                        topic: d["remoteLogSegmentId"]["topicIdPartition"]["name"]
                            .as_str()
                            .unwrap()
                            .to_string(),
                        start: d["startOffset"].as_i64().unwrap(),
                        end: d["endOffset"].as_i64().unwrap(),
                        size: d["segmentSizeInBytes"].as_i64().unwrap(),
                        state: d["remoteLogSegmentState"].as_i64().unwrap(),
                    },
                );
            }
            "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD" => {
                out.get_mut(&id)
                    .expect("an update follows its segment")
                    .state = d["remoteLogSegmentState"].as_i64().unwrap();
            }
            other => panic!("unexpected record type {other}"),
        }
    }
    out
}

/// The remote store's `.log` files: segment id -> (topic folder, path).
fn store_logs() -> BTreeMap<String, (String, PathBuf)> {
    let root = kafka("tiered").join("remote-storage/kafka-tiered-storage");
    let mut out = BTreeMap::new();
    for d in std::fs::read_dir(&root).unwrap().flatten() {
        let folder = d.file_name().to_string_lossy().to_string();
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if let Some(stem) = name.strip_suffix(".log") {
                let (_, id) = stem.split_once('-').unwrap();
                out.insert(id.to_string(), (folder.clone(), f.path()));
            }
        }
    }
    out
}

#[test]
fn remote_metadata_names_what_the_remote_store_holds() {
    let records = remote_metadata("broker-1");
    // every replica of __remote_log_metadata tells the same
    for b in ["broker-2", "broker-3"] {
        assert_eq!(remote_metadata(b), records, "{b}");
    }
    let segs = segments(&records);
    let store = store_logs();
    // copied and not deleted (COPY_SEGMENT_FINISHED, 1): in the store, the
    // size recorded; deleted (DELETE_SEGMENT_FINISHED, 3): gone
    let live: BTreeMap<&String, &Segment> = segs.iter().filter(|(_, s)| s.state == 1).collect();
    let deleted = segs.iter().filter(|(_, s)| s.state == 3).count();
    assert!(live.len() >= 3 && deleted >= 1, "{segs:?}");
    for (id, s) in &live {
        let (folder, path) = store
            .get(*id)
            .unwrap_or_else(|| panic!("segment {id} {s:?} is not in the store"));
        assert!(folder.starts_with(&format!("{}-0-", s.topic)));
        assert_eq!(
            std::fs::metadata(path).unwrap().len() as i64,
            s.size,
            "{id}: size"
        );
        // klf reads the file under the store's name as the segment it is
        let out = klf(&["dump", "--format", "json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let batches: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "batch")
            .collect();
        assert_eq!(batches[0]["base_offset"].as_i64(), Some(s.start), "{id}");
        assert_eq!(
            batches.last().unwrap()["last_offset"].as_i64(),
            Some(s.end),
            "{id}"
        );
    }
    for (id, s) in segs.iter().filter(|(_, s)| s.state == 3) {
        assert!(
            !store.contains_key(id),
            "deleted segment {id} {s:?} still in the store"
        );
    }
    assert_eq!(
        store.len(),
        live.len(),
        "the store holds a segment the metadata does not"
    );
    // the topic's remote segments run without a gap from the log start
    // offset (the checkpoint) to where the local log starts
    let scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(kafka("tiered").join("scenario.json")).unwrap(),
    )
    .unwrap();
    let offsets = &scenario["partitions"][0]["offsets"];
    let mut tiered: Vec<&Segment> = live
        .values()
        .filter(|s| s.topic == "tiered")
        .copied()
        .collect();
    tiered.sort_by_key(|s| s.start);
    assert_eq!(
        tiered[0].start,
        offsets["log_start_offset"].as_i64().unwrap()
    );
    for w in tiered.windows(2) {
        assert_eq!(w[0].end + 1, w[1].start);
    }
    assert_eq!(
        tiered.last().unwrap().end + 1,
        offsets["earliest_local_offset"].as_i64().unwrap()
    );
    let cp = std::fs::read_to_string(kafka("tiered").join("broker-1/log-start-offset-checkpoint"))
        .unwrap();
    assert!(
        cp.lines()
            .any(|l| l == format!("tiered 0 {}", tiered[0].start)),
        "{cp}"
    );
}

/// The replicas agree and nothing is lost: offsets below the local log
/// start are in remote storage, not missing.
#[test]
fn diff_of_a_tiered_capture_loses_nothing() {
    let out = klf(&[
        "diff",
        "--format",
        "json",
        "--topic",
        "tiered",
        kafka("tiered").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["partitions"][0];
    assert_eq!(p["loss"]["records"], 0);
    assert_eq!(p["truncation_protocol"]["source"], "kraft");
    for r in p["replicas"].as_array().unwrap() {
        assert_eq!(r["truncation_offset"], r["log_end_offset"]);
    }
}
