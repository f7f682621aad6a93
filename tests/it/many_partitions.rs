//! Captures of many partition folders: `diff` writes partitions as they are
//! diffed, a range at a time, and the document is the same whichever way it
//! is written; `check` settles each partition as it is checked. The real
//! capture (Kafka 4.1.1's `divergence`) gets 300 empty partition folders on
//! each broker (more than one range), as a broker whose segments were not
//! copied would show them.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::{copy_tree, kafka, klf, scratch, text};

const EMPTY: usize = 300;

/// The divergence capture with `EMPTY` empty partition folders of topic
/// `bare` on every broker.
fn capture_with_empty_folders(tag: &str) -> PathBuf {
    let root = scratch(tag);
    copy_tree(&kafka("divergence"), &root);
    for b in fs::read_dir(&root).unwrap() {
        let b = b.unwrap().path();
        if !b.join("meta.properties").exists() {
            continue;
        }
        for p in 0..EMPTY {
            fs::create_dir_all(b.join(format!("bare-{p}"))).unwrap();
        }
    }
    root
}

fn run(args: &[&str], capture: &Path) -> (Option<i32>, String, String) {
    let mut a = args.to_vec();
    let c = capture.to_str().unwrap();
    a.push(c);
    let out = klf(&a);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// `v` without the paths and file times that differ between a copy and
/// its original.
fn placeless(mut v: Value) -> Value {
    match &mut v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if matches!(k.as_str(), "file" | "time" | "time_utc") {
                    *x = Value::Null;
                } else {
                    *x = placeless(x.take());
                }
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = placeless(x.take());
            }
        }
        _ => {}
    }
    v
}

#[test]
fn diff_written_as_partitions_come_is_the_same_document_in_every_format() {
    let root = capture_with_empty_folders("many-partitions-diff");
    let (code, json, _) = run(&["diff", "--format", "json"], &root);
    let (code_l, lines, _) = run(&["diff", "--format", "jsonl"], &root);
    let (code_t, table, _) = run(&["diff", "--format", "table", "--all"], &root);
    let (_, folded, _) = run(&["diff", "--format", "table"], &root);
    let (code_o, original, _) = run(&["diff", "--format", "json"], &kafka("divergence"));
    // the status is the real partitions' however many are added
    assert!(matches!(code_o, Some(0 | 1)));
    assert_eq!((code, code_l, code_t), (code_o, code_o, code_o));
    let doc: Value = serde_json::from_str(&json).unwrap();
    let parts = doc["partitions"].as_array().unwrap();
    let orig: Value = serde_json::from_str(&original).unwrap();
    let orig = orig["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), EMPTY + orig.len());
    // in topic/partition order, each partition once
    let keys: Vec<(String, i64)> = parts
        .iter()
        .map(|p| {
            (
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
    // the real partitions read as they do alone (but for where the copy
    // is and when its files were written)
    for o in orig {
        let same = parts
            .iter()
            .find(|p| p["topic"] == o["topic"] && p["partition"] == o["partition"])
            .unwrap();
        assert_eq!(placeless(same.clone()), placeless(o.clone()));
    }
    // an empty folder on every broker loses nothing
    for p in parts.iter().filter(|p| p["topic"] == "bare") {
        assert_eq!(p["loss"]["records"], 0, "{p}");
        assert_eq!(p["loss"]["verdict"], "nothing-lost");
    }
    // JSON Lines: the same partitions, line by line
    let lines: Vec<Value> = lines
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["type"], "partition");
            v.as_object_mut().unwrap().remove("type");
            v
        })
        .collect();
    assert_eq!(&lines, parts);
    // the table with --all: one block per partition, those losing data
    // first (worst first), the rest in topic/partition order
    let heads: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(": reference broker "))
        .collect();
    assert_eq!(heads.len(), parts.len());
    let losing = |p: &Value| p["loss"]["records"].as_u64().unwrap() > 0;
    let mut expected: Vec<&Value> = parts.iter().filter(|p| losing(p)).collect();
    assert!(!expected.is_empty(), "the real partition loses data");
    expected.extend(parts.iter().filter(|p| !losing(p)));
    for (h, p) in heads.iter().zip(&expected) {
        let (t, n) = (p["topic"].as_str().unwrap(), &p["partition"]);
        assert!(h.starts_with(&format!("{t}-{n}: ")), "{h} for {t}-{n}");
    }
    // without it: the overview counts the partitions, names the losing
    // ones, folds the rest into one line, and writes only the losing ones
    let first = folded.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("{} partitions compared, ", parts.len())),
        "{first}"
    );
    let quiet = parts.iter().filter(|p| !losing(p)).count();
    assert!(
        folded.contains(&format!("{quiet} partitions: nothing lost"))
            && folded.contains("(--all lists them)"),
        "{folded}"
    );
    let shown = folded
        .lines()
        .filter(|l| l.contains(": reference broker "))
        .count();
    assert_eq!(shown, parts.len() - quiet, "{folded}");
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn check_of_many_partition_folders_counts_each_once_and_says_what_each_empty_one_lacks() {
    let root = capture_with_empty_folders("many-partitions-check");
    let (code, json, stderr) = run(&["check", "--format", "json"], &root);
    let (code_o, original, _) = run(&["check", "--format", "json"], &kafka("divergence"));
    let doc: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let orig: Value = serde_json::from_str(&original).unwrap();
    // warnings about the empty folders fail nothing (--fail-on error)
    assert!(matches!(code_o, Some(0 | 1)));
    assert_eq!(code, code_o);
    let findings = doc["findings"].as_array().unwrap();
    let bare: Vec<&Value> = findings.iter().filter(|f| f["topic"] == "bare").collect();
    let n_brokers = fs::read_dir(&root)
        .unwrap()
        .filter(|b| b.as_ref().unwrap().path().join("meta.properties").exists())
        .count();
    // one warning per empty folder; no high-watermark-missing for an empty
    // log, whose high watermark can only be its start
    assert_eq!(bare.len(), EMPTY * n_brokers, "{bare:?}");
    for f in &bare {
        assert_eq!(f["code"], "capture-warning", "{f}");
        assert_eq!(f["severity"], "warning");
        assert!(f["broker"].is_i64(), "{f}");
    }
    assert_eq!(
        doc["summary"]["partitions"].as_u64().unwrap(),
        orig["summary"]["partitions"].as_u64().unwrap() + EMPTY as u64
    );
    assert_eq!(
        doc["summary"]["replicas"].as_u64().unwrap(),
        orig["summary"]["replicas"].as_u64().unwrap() + (EMPTY * n_brokers) as u64
    );
    // the real findings are the ones found without the empty folders
    let real: Vec<&Value> = findings.iter().filter(|f| f["topic"] != "bare").collect();
    let strip = |f: &Value| {
        let mut f = f.clone();
        if let Some(p) = f.get("file").and_then(Value::as_str) {
            let name = Path::new(p)
                .components()
                .rev()
                .take(2)
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            f["file"] = Value::String(name);
        }
        f["message"] = Value::Null;
        f
    };
    let want: Vec<Value> = orig["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(strip)
        .collect();
    let got: Vec<Value> = real.into_iter().map(strip).collect();
    assert_eq!(got, want);
    assert_eq!(
        doc["partitions"].as_array().unwrap().len(),
        orig["partitions"].as_array().unwrap().len() + EMPTY
    );
    let _ = fs::remove_dir_all(&root);
}
