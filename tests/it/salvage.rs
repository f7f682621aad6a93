//! `klf salvage` on real-Kafka captures: the records it writes are exactly
//! the records Kafka lost (`loss_truth`, from kafka-dump-log on the capture
//! and what consumers read after recovery), with the key, value and offset
//! kafka-dump-log printed for them; the copy of the batches reads back; the
//! output rule holds; damage is named and the rest is salvaged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{captures, copy_tree, golden_records, klf, root, scratch, text};

fn lost_ids(truth: &Value) -> BTreeSet<i64> {
    truth["lost_ids"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r[0].as_i64().unwrap()..=r[1].as_i64().unwrap())
        .collect()
}

/// (offset -> (key, payload)) of a replica's data records as kafka-dump-log
/// printed them (golden output).
fn golden(dir: &Path, broker: i64, part: &str) -> BTreeMap<i64, (String, String)> {
    golden_records(dir, &format!("broker-{broker}"), part)
        .into_iter()
        .map(|(o, k, v)| (o, (k, v)))
        .collect()
}

fn salvage(dir: &Path, out: &Path, extra: &[&str]) -> (Option<i32>, String, Value) {
    let d = dir.display().to_string();
    let o = out.display().to_string();
    let mut args = vec!["salvage", &d, "--out", &o];
    args.extend_from_slice(extra);
    let r = klf(&args);
    let manifest = std::fs::read(out.join("manifest.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or(Value::Null);
    (r.status.code(), text(&r.stderr), manifest)
}

fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn salvage_writes_exactly_what_kafka_lost() {
    let mut compared = 0;
    for dir in captures() {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scenario.json")).unwrap())
                .unwrap();
        let parts: Vec<&Value> = s["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p.get("loss_truth").is_some())
            .collect();
        if parts.is_empty() {
            continue;
        }
        let out = scratch(&format!(
            "salvage-{}",
            dir.file_name().unwrap().to_string_lossy()
        ));
        let target = out.join("s");
        let (code, stderr, manifest) = salvage(&dir, &target, &["--log"]);
        assert_eq!(code, Some(0), "{}: {stderr}", dir.display());
        for p in parts {
            let (t, n) = (
                p["topic"].as_str().unwrap(),
                p["partition"].as_i64().unwrap(),
            );
            let name = format!("{t}-{n}");
            let truth = &p["loss_truth"];
            let m = manifest["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["topic"] == t && x["partition"] == n);
            let want = lost_ids(truth);
            let Some(m) = m else {
                assert!(
                    want.is_empty(),
                    "{name}: Kafka lost {want:?}; klf salvaged nothing"
                );
                continue;
            };
            let recs = lines(&target.join(m["files"]["records"].as_str().unwrap()));
            let data: Vec<&Value> = recs.iter().filter(|r| r["control"].is_null()).collect();
            let ids: BTreeSet<i64> = data
                .iter()
                .filter_map(|r| r["key"]["text"].as_str())
                .filter_map(|k| k.strip_prefix("key-"))
                .filter_map(|k| k.parse().ok())
                .collect();
            assert_eq!(ids, want, "{name}: salvaged ids against what Kafka lost");
            assert_eq!(m["records"].as_u64().unwrap(), data.len() as u64);
            assert_eq!(
                m["records"], m["records_lost"],
                "{name}: every lost record salvaged"
            );
            // key and value as kafka-dump-log printed them on the replica holding them
            for r in &data {
                let holder = r["held_by"][0].as_i64().unwrap();
                let g = golden(&dir, holder, &name);
                let Some((k, v)) = g.get(&r["offset"].as_i64().unwrap()) else {
                    continue;
                };
                assert_eq!(
                    r["key"]["text"].as_str(),
                    Some(k.as_str()),
                    "{name} offset {}",
                    r["offset"]
                );
                assert_eq!(
                    r["value"]["text"].as_str(),
                    Some(v.as_str()),
                    "{name} offset {}",
                    r["offset"]
                );
                compared += 1;
            }
            // offsets strictly in order, none twice
            let offs: Vec<(i64, i64)> = recs
                .iter()
                .map(|r| {
                    (
                        r["offset"].as_i64().unwrap(),
                        r["leader_epoch"].as_i64().unwrap(),
                    )
                })
                .collect();
            assert!(offs.windows(2).all(|w| w[0] < w[1]), "{name}: order");
            // the replay file: one line per replayable record
            let replay =
                std::fs::read_to_string(target.join(m["files"]["replay"].as_str().unwrap()))
                    .unwrap();
            assert_eq!(
                replay.lines().count() as u64,
                m["replay_records"].as_u64().unwrap()
            );
            // the batch copy reads back, every batch valid, the same records
            let log = target.join(m["files"]["log"].as_str().unwrap());
            // and each batch in it is byte for byte a batch of a segment read
            let copy = std::fs::read(&log).unwrap();
            let sources: Vec<Vec<u8>> = m["inputs_read"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| std::fs::read(f["file"].as_str().unwrap()).unwrap())
                .collect();
            let mut pos = 0usize;
            while pos < copy.len() {
                let len =
                    12 + u32::from_be_bytes(copy[pos + 8..pos + 12].try_into().unwrap()) as usize;
                let batch = &copy[pos..pos + len];
                assert!(
                    sources.iter().any(|s| s.windows(len).any(|w| w == batch)),
                    "{name}: the batch at byte {pos} of the copy is in no segment read"
                );
                pos += len;
            }
            let r = klf(&[
                "dump",
                "--format",
                "json",
                "--deep-iteration",
                &log.display().to_string(),
            ]);
            assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
            let dump = text(&r.stdout);
            assert_eq!(
                dump.matches("\"crc_valid\":true").count()
                    + dump.matches("\"crc_valid\": true").count(),
                m["batches"].as_u64().unwrap() as usize,
                "{name}: batches in the copy"
            );
            for line in
                std::fs::read_to_string(target.join(m["files"]["records"].as_str().unwrap()))
                    .unwrap()
                    .lines()
                    .take(3)
            {
                let _: Value = serde_json::from_str(line).unwrap();
            }
            // the manifest's checksums are those of the segment files read
            for f in m["inputs_read"].as_array().unwrap() {
                let bytes = std::fs::read(f["file"].as_str().unwrap()).unwrap();
                assert_eq!(f["bytes"].as_u64().unwrap(), bytes.len() as u64);
                assert_eq!(
                    f["crc32c"].as_str().unwrap(),
                    format!("{:08x}", crc32c::crc32c(&bytes))
                );
            }
            println!(
                "{name}: {} records salvaged, {} lost by Kafka",
                data.len(),
                want.len()
            );
        }
        let _ = std::fs::remove_dir_all(&out);
    }
    assert!(
        compared > 100,
        "compared {compared} records with kafka-dump-log"
    );
}

#[test]
fn salvage_refuses_evidence_and_non_empty_folders() {
    let dir = root().join("testdata/kafka/unclean");
    let inside = dir.join("broker-1/salvaged");
    let (code, stderr, _) = salvage(&dir, &inside, &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("inside the input"), "{stderr}");
    assert!(!inside.exists());
    let out = scratch("salvage-nonempty");
    std::fs::write(out.join("keep.txt"), b"x").unwrap();
    let (code, stderr, _) = salvage(&dir, &out, &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--force"), "{stderr}");
    let (code, stderr, m) = salvage(&dir, &out, &["--force"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        m["partitions"][0]["records"],
        m["partitions"][0]["records_lost"]
    );
    assert_eq!(std::fs::read(out.join("keep.txt")).unwrap(), b"x");
    let _ = std::fs::remove_dir_all(&out);
}

/// A corrupt batch inside the lost range: named with file and byte, in the
/// manifest's `damaged`; the lost records before it are still salvaged.
#[test]
fn salvage_with_a_corrupt_lost_batch() {
    let src = root().join("testdata/kafka/unclean");
    let d = scratch("salvage-corrupt");
    copy_tree(&src, &d.join("c"));
    let cap = d.join("c");
    let (_, _, clean) = salvage(&cap, &d.join("clean"), &[]);
    let lost = clean["partitions"][0]["records"].as_u64().unwrap();
    // the last batch of broker 1's last segment: lost, and after every other lost one
    let part = cap.join("broker-1/unclean-0");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&part)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let seg = logs.last().unwrap().clone();
    let mut b = std::fs::read(&seg).unwrap();
    let mut pos = 0usize;
    let mut last = 0usize;
    while pos + 12 <= b.len() {
        let len = u32::from_be_bytes(b[pos + 8..pos + 12].try_into().unwrap()) as usize;
        last = pos;
        pos += 12 + len;
    }
    let end = pos.min(b.len());
    b[end - 1] ^= 0xff;
    std::fs::write(&seg, &b).unwrap();
    let (code, stderr, m) = salvage(&cap, &d.join("out"), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    let name = seg.display().to_string();
    assert!(stderr.contains(&format!("{name}:{last}")), "{stderr}");
    let p = &m["partitions"][0];
    let damaged = p["damaged"].as_array().unwrap();
    assert!(
        damaged
            .iter()
            .any(|x| x["file"] == name.as_str() && x["position"] == last as u64),
        "{p}"
    );
    let got = p["records"].as_u64().unwrap();
    assert!(got > 0 && got < lost, "salvaged {got} of {lost}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The replay check of a fresh Kafka run (`oracle.py run --klf`, in CI):
/// `klf salvage` on the capture taken before the rejoin, replayed into the
/// recovered cluster with Kafka's own producer, then read back. Every
/// acknowledged record Kafka lost is back, with its key and value, and no
/// record is there twice.
///
/// It needs that run: without it the test is ignored (counted as such),
/// and CI runs it after each fresh run with `--include-ignored`.
#[test]
#[ignore = "needs KLF_FRESH_CAPTURES: a fresh Kafka run with replay (CI runs it with --include-ignored)"]
fn salvage_replayed_brings_back_what_kafka_lost() {
    let fresh = std::env::var("KLF_FRESH_CAPTURES")
        .expect("KLF_FRESH_CAPTURES: the folder of a fresh Kafka run's captures");
    let mut checked = 0;
    for e in std::fs::read_dir(&fresh).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("scenario.json")) else {
            continue;
        };
        let s: Value = serde_json::from_str(&text).unwrap();
        for p in s["partitions"].as_array().unwrap() {
            let Some(r) = p.get("salvage_replay") else {
                continue;
            };
            let runs = |v: &Value| -> BTreeSet<i64> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|r| r[0].as_i64().unwrap()..=r[1].as_i64().unwrap())
                    .collect()
            };
            let after = runs(&r["after_replay"]["ids"]);
            let acked_lost = runs(&p["loss_truth"]["acked_all_lost_ids"]);
            let survived = runs(&p["after_recovery"]["ids"]);
            let name = format!("{}: {}-{}", e.path().display(), p["topic"], p["partition"]);
            assert!(
                acked_lost.is_subset(&after),
                "{name}: acknowledged and lost, not back: {:?}",
                acked_lost.difference(&after).collect::<Vec<_>>()
            );
            assert!(survived.is_subset(&after), "{name}");
            assert!(
                runs(&r["after_replay"]["duplicate_ids"]).is_empty(),
                "{name}: replayed twice: {}",
                r["after_replay"]["duplicate_ids"]
            );
            assert!(
                r["replayed"].as_u64().unwrap() <= r["salvaged"].as_u64().unwrap(),
                "{name}: {r}"
            );
            println!(
                "{name}: {} salvaged, {} acknowledged-lost all back, no duplicate",
                r["salvaged"],
                acked_lost.len()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no salvage_replay in {fresh}");
}

/// stderr says why records are not in the replay file: per reason, under
/// the manifest's own name for it (`replay_skipped`). Real cases: the lost
/// `__consumer_offsets` records of `unclean-stale-hw` with broker 3 as the
/// leader (binary keys and values), and the lost transaction marker of
/// `impact`.
#[test]
fn salvage_says_why_records_are_not_in_the_replay_file() {
    let out = scratch("salvage-reasons");
    let mut checked = 0;
    for (capture, extra) in [
        (
            "unclean-stale-hw",
            &["--leader", "3", "--topic", "__consumer_offsets"][..],
        ),
        ("impact", &[][..]),
    ] {
        let target = out.join(capture);
        let (code, stderr, manifest) = salvage(&crate::common::kafka(capture), &target, extra);
        assert_eq!(code, Some(0), "{stderr}");
        for m in manifest["partitions"].as_array().unwrap() {
            let name = format!("{}-{}", m["topic"].as_str().unwrap(), m["partition"]);
            let line = stderr
                .lines()
                .find(|l| l.starts_with(&format!("klf: {name}: salvaged ")))
                .unwrap_or_else(|| panic!("{name}: {stderr}"));
            let (records, replayed) = (
                m["records"].as_u64().unwrap(),
                m["replay_records"].as_u64().unwrap(),
            );
            let skipped = m["replay_skipped"].as_object().unwrap();
            // every data record is in the replay file or left out for a reason
            let data_skipped: u64 = skipped
                .iter()
                .filter(|(k, _)| *k != "control")
                .map(|(_, v)| v.as_u64().unwrap())
                .sum();
            assert_eq!(records, replayed + data_skipped, "{name}: {m}");
            for (reason, n) in skipped {
                let n = n.as_u64().unwrap();
                assert_eq!(
                    line.contains(&format!(" {reason} {n} (")),
                    n > 0,
                    "{name}: {reason} {n}: {line}"
                );
                checked += usize::from(n > 0);
            }
            if skipped.values().all(|v| v == 0) {
                assert!(
                    line.ends_with(&format!("all {replayed} in the replay file")),
                    "{line}"
                );
            } else {
                assert!(line.contains(&format!("; {replayed} in the replay file, left out of it (replay_skipped in manifest.json): ")), "{line}");
            }
        }
    }
    assert!(checked >= 2, "no record left out of a replay file");
    let _ = std::fs::remove_dir_all(&out);
}
