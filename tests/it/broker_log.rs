//! Kafka's own logs beside the data: every truncation a broker logged after
//! starting from the captured state is held against klf's prediction, and
//! must agree; a line edited to disagree is the finding
//! `prediction-disagrees-with-broker-log`; hostile logs are read with a
//! note, within bounded memory.
//!
//! The captures are the committed ones that hold their nodes' logs (the
//! harness copies each node's `server.log` in), and in CI those of the
//! fresh Kafka run (`KLF_FRESH_CAPTURES`).

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{copy_tree, finish, klf_command, klf_measured, scratch, text};

/// The captures that hold their nodes' logs.
fn diff_json(dir: &Path) -> (Option<i32>, Value) {
    let out = finish(
        klf_command()
            .args(["diff", "--format", "json", "-q"])
            .arg(dir),
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", dir.display(), text(&out.stderr)));
    (out.status.code(), v)
}

/// `(topic, partition, entry)` of every `broker_log` entry.
fn entries(v: &Value) -> Vec<(String, i64, Value)> {
    let mut out = Vec::new();
    for p in v["partitions"].as_array().unwrap() {
        for c in p["broker_log"].as_array().into_iter().flatten() {
            out.push((
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
                c.clone(),
            ));
        }
    }
    out
}

#[test]
fn every_truncation_logged_after_the_capture_agrees_with_the_prediction() {
    let dirs = crate::common::captures_with_logs();
    assert!(
        dirs.iter()
            .any(|d| d.starts_with(crate::common::root().join("testdata"))),
        "no committed capture holds its nodes' logs"
    );
    let mut total_agreed = 0;
    for dir in dirs {
        let (_, v) = diff_json(&dir);
        let all = entries(&v);
        let mut agreed = 0;
        for (t, p, c) in &all {
            assert_ne!(
                c["verdict"],
                "disagrees",
                "{}: {t}-{p}: broker {} logged a truncation klf did not predict: {c}",
                dir.display(),
                c["broker"]
            );
            if c["verdict"] == "agrees" || c["verdict"] == "agrees-with-alternative" {
                agreed += 1;
                // the line named holds the offset
                let l = &c["logged"];
                let line = nth_line(
                    Path::new(l["source"]["file"].as_str().unwrap()),
                    l["source"]["line"].as_u64().unwrap(),
                );
                assert!(
                    line.contains(&format!("offset={}", l["logged_offset"]))
                        || line.contains(&format!("to offset {}", l["logged_offset"]))
                        || line.contains(&format!("to {} has no effect", l["logged_offset"])),
                    "{}: the line named does not state the truncation: {line}",
                    dir.display()
                );
            }
        }
        // what the harness read from the same logs when it ran the scenario
        let scenario: Value =
            serde_json::from_slice(&std::fs::read(dir.join("scenario.json")).unwrap()).unwrap();
        let wanted = truncations_after_capture(&scenario);
        let mut matched = 0;
        for ((broker, topic, partition), lines) in &wanted {
            let hit = all.iter().find(|(t, p, c)| {
                t == topic && p == partition && c["broker"].as_i64() == Some(*broker)
            });
            let Some((_, _, c)) = hit else {
                panic!(
                    "{}: broker {broker} logged a truncation of {topic}-{partition} after the capture ({lines:?}); klf read none",
                    dir.display()
                );
            };
            // klf's is one the harness read, at the same line and offset
            let line = c["logged"]["source"]["line"].as_u64();
            let theirs = lines.iter().find(|(l, _)| Some(*l) == line);
            assert_eq!(
                theirs.map(|(_, o)| *o),
                c["logged"]["offset"].as_i64(),
                "{}: {topic}-{partition} broker {broker}: klf read {c}; the harness read {lines:?}",
                dir.display()
            );
            // agrees, or followed another leader than klf's reference (a
            // scenario that restores the capture and elects each replica
            // in turn)
            let other_leader = c["why_not_compared"]["reason"] == "other-leader";
            assert!(
                c["verdict"] == "agrees"
                    || c["verdict"] == "agrees-with-alternative"
                    || other_leader,
                "{}: {c}",
                dir.display()
            );
            matched += 1;
        }
        assert_eq!(matched, wanted.len());
        total_agreed += agreed;
    }
    assert!(total_agreed > 0, "no logged truncation agrees anywhere");
}

/// (broker, topic, partition) and the `(line, offset)` pairs logged for it.
type LoggedAfterCapture = ((i64, String, i64), Vec<(u64, i64)>);

/// The truncations the harness recorded in scenario.json as logged after
/// the capture (`logged_truncations_after_capture`: per broker, per
/// `topic-partition`, the lines it read from the broker's log after it
/// restarted from the captured state): per (broker, topic, partition), the
/// `(line, offset)` of the fetcher's decisions (each start-up from the
/// captured state makes one; the log's own line follows each).
fn truncations_after_capture(scenario: &Value) -> Vec<LoggedAfterCapture> {
    let mut out = Vec::new();
    let Some(m) = scenario
        .get("logged_truncations_after_capture")
        .and_then(Value::as_object)
    else {
        return out;
    };
    for (broker, parts) in m {
        let broker: i64 = broker.parse().unwrap();
        for (name, lines) in parts.as_object().unwrap() {
            let (topic, partition) = name.rsplit_once('-').unwrap();
            let lines: Vec<(u64, i64)> = lines
                .as_array()
                .unwrap()
                .iter()
                .map(|l| (l["line"].as_u64().unwrap(), l["offset"].as_i64().unwrap()))
                .collect();
            if !lines.is_empty() {
                out.push((
                    (broker, topic.to_string(), partition.parse().unwrap()),
                    lines,
                ));
            }
        }
    }
    out
}

/// Line `n` (1-based) of a log file, plain or gzip.
fn nth_line(path: &Path, n: u64) -> String {
    let bytes = read_log(path);
    String::from_utf8_lossy(&bytes)
        .lines()
        .nth(n as usize - 1)
        .unwrap_or_default()
        .to_string()
}

fn read_log(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

fn write_log(path: &Path, text: &[u8]) {
    if path.extension().is_some_and(|e| e == "gz") {
        let mut enc =
            flate2::write::GzEncoder::new(std::fs::File::create(path).unwrap(), Default::default());
        enc.write_all(text).unwrap();
        enc.finish().unwrap();
    } else {
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn a_log_line_edited_to_disagree_yields_the_finding() {
    // the first capture with logs in which a broker logged a truncation
    // that agrees (a capture such as quorum-4.4 has logs but no rejoin)
    let (dir, (topic, partition, c)) = crate::common::captures_with_logs()
        .into_iter()
        .find_map(|dir| {
            let (_, v) = diff_json(&dir);
            entries(&v)
                .into_iter()
                .find(|(_, _, c)| c["verdict"] == "agrees")
                .map(|e| (dir, e))
        })
        .expect("a capture holding its nodes' logs with a truncation that agrees");
    let work = scratch("broker-log-edit");
    let copy = work.join("capture");
    copy_tree(&dir, &copy);
    let logged = &c["logged"];
    let file = PathBuf::from(logged["source"]["file"].as_str().unwrap());
    let rel = file.strip_prefix(&dir).unwrap();
    let line_no = logged["source"]["line"].as_u64().unwrap() as usize;
    let off = logged["logged_offset"].as_i64().unwrap();
    let target = copy.join(rel);
    let text_now = read_log(&target);
    let mut lines: Vec<Vec<u8>> = text_now
        .split(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    let old = String::from_utf8(lines[line_no - 1].clone()).unwrap();
    let new = old
        .replace(&format!("offset={off},"), &format!("offset={},", off - 1))
        .replace(
            &format!("to offset {off}"),
            &format!("to offset {}", off - 1),
        );
    assert_ne!(old, new, "the line does not state offset {off}: {old}");
    lines[line_no - 1] = new.into_bytes();
    write_log(&target, &lines.join(&b'\n'));

    let (code, v) = diff_json(&copy);
    let p = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == topic.as_str() && p["partition"] == partition)
        .unwrap();
    let mine = p["broker_log"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["broker"] == c["broker"])
        .unwrap();
    assert_eq!(mine["verdict"], "disagrees", "{mine}");
    assert_eq!(mine["logged"]["offset"].as_i64(), Some(off - 1));
    assert!(
        p["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "prediction-disagrees-with-broker-log"),
        "{p}"
    );
    assert!(code.is_some_and(|c| c != 2), "{code:?}");
    // check: an error, and the gate fails
    let out = finish(
        klf_command()
            .args(["check", "--format", "json", "-q"])
            .arg(&copy),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "prediction-disagrees-with-broker-log")
        .unwrap_or_else(|| panic!("no finding: {report}"));
    assert_eq!(f["severity"], "error");
    // the table says so beside the partition
    let out = finish(klf_command().args(["diff", "-q"]).arg(&copy));
    let table = text(&out.stdout);
    assert!(table.contains("Kafka's log DISAGREES"), "{table}");
    // the unedited capture: no such finding
    let out = finish(
        klf_command()
            .args(["check", "--format", "json", "-q"])
            .arg(&dir),
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "prediction-disagrees-with-broker-log"));
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn hostile_logs_are_read_with_a_note_within_bounded_memory() {
    let dir = crate::common::captures_with_logs()
        .into_iter()
        .next()
        .expect("a capture holding its nodes' logs");
    let work = scratch("broker-log-hostile");
    let copy = work.join("capture");
    copy_tree(&dir, &copy);
    // every log of the copy replaced by hostile ones
    let logs = crate::common::kafka_log_files(&copy);
    let first = logs[0].clone();
    let real = read_log(&first);
    for l in &logs {
        std::fs::remove_file(l).unwrap();
    }
    let node_dir = first.parent().unwrap().to_path_buf();
    let mut hostile = Vec::new();
    hostile.extend_from_slice(b"not a log line at all\n");
    hostile.extend_from_slice(
        b"[2026-12-06 02:28:55,116] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition \x1b[31mevil\x1b[0m-0 with TruncationState(offset=1, completed=true) due to local high watermark 1 (kafka.server.ReplicaFetcherThread)\n",
    );
    hostile.extend_from_slice(b"[2026-12-06 02:28:55,117] INFO ");
    hostile.extend(std::iter::repeat_n(b'x', 10 << 20));
    hostile.extend_from_slice(b" (kafka.Kafka)\n");
    hostile.extend_from_slice(
        b"[2026-12-06 02:28:55,118] WARN \xff\xfe invalid UTF-8 \xc3 (kafka.Kafka)\n",
    );
    std::fs::write(node_dir.join("server.log"), &hostile).unwrap();
    // a gzip stream cut short
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), Default::default());
    enc.write_all(&real).unwrap();
    let gz = enc.finish().unwrap();
    std::fs::write(node_dir.join("server.log.1.gz"), &gz[..gz.len() / 2]).unwrap();

    let out = finish(klf_command().args(["diff"]).arg(&copy));
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{err}");
    assert!(!out.stderr.contains(&0x1b) && !out.stdout.contains(&0x1b));
    assert!(err.contains("gzip stream damaged or cut short"), "{err}");
    assert!(err.contains("cut there"), "{err}");
    assert!(err.contains("not in Kafka's log layout"), "{err}");
    // check names the cut gzip file; nothing reads as a disagreement
    let out = finish(
        klf_command()
            .args(["check", "--format", "json", "-q"])
            .arg(&copy),
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"].as_str().is_some_and(|p| p.contains("server.log")))
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["capture-warning"], "{report}");
    // memory: the 10 MiB line is never held whole
    let run = klf_measured(&["diff", "-q", copy.to_str().unwrap()]);
    assert!(
        run.max_rss_kib < 64 * 1024,
        "peak {} KiB: {}",
        run.max_rss_kib,
        run.stderr
    );
    let _ = std::fs::remove_dir_all(&work);
}
