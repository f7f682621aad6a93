//! A capture as real clusters lay out their nodes' log directories. The
//! `jbod` capture (brokers with two log directories each, `broker-N/d1` and
//! `broker-N/d2`, and the controller's `controller-100/`) is copied into
//! the layouts operators bring: the capture folder itself, `NAME/data-0`
//! nodes, Strimzi-like pods (`pod-N/data-0/kafka-log0`) and a folder of
//! per-node archives. Each must read exactly as its node folders given one
//! by one, with no complaint about folder names; two copies of a capture
//! side by side are refused with a command that works; and a KRaft capture
//! missing an assigned replica says so.
//!
//! The committed capture is always laid out; in CI also the `jbod` capture
//! a fresh Kafka run just made (`KLF_FRESH_CAPTURES`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{copy_tree, finish, kafka, klf, klf_command, node_folders, scratch, text};

/// The scenario whose captures these tests lay out.
const CAPTURE: &str = "jbod";

/// The `jbod` captures: the committed one, then a fresh run's
/// (`KLF_FRESH_CAPTURES/jbod`) where there is one.
fn jbod_captures() -> Vec<PathBuf> {
    let mut v = vec![kafka(CAPTURE)];
    if let Ok(fresh) = std::env::var("KLF_FRESH_CAPTURES") {
        let d = Path::new(&fresh).join(CAPTURE);
        if d.join("scenario.json").is_file() {
            v.push(d);
        }
    }
    v
}

fn facts(cap: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(cap.join("scenario.json")).unwrap()).unwrap()
}

/// A node folder's log directories: itself (it holds `meta.properties`),
/// else its folders that do, sorted.
fn log_dirs(node: &Path) -> Vec<PathBuf> {
    if node.join("meta.properties").is_file() {
        return vec![node.to_path_buf()];
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(node)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("meta.properties").is_file())
        .collect();
    v.sort();
    v
}

/// A JSON document with the values of the keys that hold paths or file
/// times (`file`, `time`, `time_utc`) blanked: what a copy elsewhere
/// changes.
fn blank(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if matches!(k.as_str(), "file" | "time" | "time_utc") {
                    *x = Value::Null;
                } else {
                    blank(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(blank),
        _ => {}
    }
}

/// `klf diff --format json PATHS...`: the document (paths and file times
/// blanked) and stderr; the run must succeed (0, or 1 for a loss).
fn diff(paths: &[PathBuf]) -> (Value, String) {
    let mut args = vec!["diff".to_string(), "--format".into(), "json".into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = klf(&args);
    let stderr = text(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "klf {args:?}: {:?}\n{stderr}",
        out.status.code()
    );
    let mut v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("klf {args:?}: not JSON ({e})\n{stderr}"));
    blank(&mut v);
    (v, stderr)
}

/// No warning on stderr that comes from how the folders are named or
/// nested.
fn assert_no_folder_complaint(what: &str, stderr: &str) {
    for needle in [
        "folder name",
        "separate captures",
        "several log directories claim",
    ] {
        assert!(
            !stderr.contains(needle),
            "{what}: stderr says {needle:?}:\n{stderr}"
        );
    }
}

/// The capture `src` copied to `root/CAPTURE` (its `golden/` left out):
/// layout (a), and the source of the others.
fn capture_copy(src: &Path, root: &Path) -> PathBuf {
    let dst = root.join(CAPTURE);
    copy_tree(src, &dst);
    dst
}

/// Each node of `cap` laid out by `place(node name, node id, index of its
/// log directory)`, the relative path of that log directory's copy under
/// `root`; returns the node folders made (the first component of each
/// path), sorted.
fn lay_out(cap: &Path, root: &Path, place: impl Fn(&str, u32, usize) -> PathBuf) -> Vec<PathBuf> {
    let mut nodes = BTreeSet::new();
    for (name, node) in node_folders(cap) {
        let id: u32 = name.rsplit('-').next().unwrap().parse().unwrap();
        for (i, dir) in log_dirs(&node).iter().enumerate() {
            let rel = place(&name, id, i);
            copy_tree(dir, &root.join(&rel));
            nodes.insert(root.join(rel.components().next().unwrap()));
            // the node's Kafka logs beside its log directories go to its
            // new folder
            if i == 0 && *dir != node {
                let top = root.join(rel.components().next().unwrap());
                for e in std::fs::read_dir(&node).unwrap().flatten() {
                    if e.path().is_file() {
                        std::fs::copy(e.path(), top.join(e.file_name())).unwrap();
                    }
                }
            }
        }
    }
    nodes.into_iter().collect()
}

/// The committed capture is what the layouts below are made of: every
/// broker folder holds two log directories (each with its own
/// meta.properties and directory id), the topic's replicas are spread over
/// both, and the node folders read one by one give every partition of the
/// scenario with the replicas Kafka assigned.
#[test]
fn jbod_capture_spreads_partitions_over_two_log_directories() {
    for cap in jbod_captures() {
        spreads_partitions_over_two_log_directories(&cap);
    }
}

fn spreads_partitions_over_two_log_directories(cap: &Path) {
    let s = facts(cap);
    let topics: BTreeSet<&str> = s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["topic"].as_str().unwrap())
        .collect();
    let mut brokers = 0;
    for (name, node) in node_folders(cap) {
        let dirs = log_dirs(&node);
        if !name.starts_with("broker-") {
            continue;
        }
        brokers += 1;
        assert!(dirs.len() >= 2, "{name}: {dirs:?}");
        let mut ids = BTreeSet::new();
        for d in &dirs {
            let meta = std::fs::read_to_string(d.join("meta.properties")).unwrap();
            let id = meta
                .lines()
                .find_map(|l| l.strip_prefix("directory.id="))
                .unwrap_or_else(|| panic!("{}: no directory.id", d.display()));
            ids.insert(id.to_string());
            let holds = std::fs::read_dir(d).unwrap().flatten().any(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                topics.iter().any(|t| {
                    n.strip_prefix(&format!("{t}-"))
                        .is_some_and(|p| p.parse::<u32>().is_ok())
                })
            });
            assert!(holds, "{}: holds no partition of {topics:?}", d.display());
        }
        assert_eq!(ids.len(), dirs.len(), "{name}: directory ids {ids:?}");
    }
    assert_eq!(brokers, 3);
    let nodes: Vec<PathBuf> = node_folders(cap).into_iter().map(|(_, p)| p).collect();
    let (doc, stderr) = diff(&nodes);
    assert_no_folder_complaint("the node folders", &stderr);
    for p in s["partitions"].as_array().unwrap() {
        let part = doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == p["topic"] && x["partition"] == p["partition"])
            .unwrap_or_else(|| panic!("{}-{} not read", p["topic"], p["partition"]));
        let read: BTreeSet<i64> = part["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["broker"].as_i64().unwrap())
            .collect();
        let assigned: BTreeSet<i64> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_i64().unwrap())
            .collect();
        assert_eq!(read, assigned, "{}-{}", p["topic"], p["partition"]);
        assert_eq!(
            part["reference"]["broker"].as_i64(),
            p["leader_at_capture"].as_i64()
        );
    }
}

#[test]
fn every_layout_reads_as_its_node_folders() {
    for (i, cap) in jbod_captures().iter().enumerate() {
        layouts_read_as_node_folders(cap, &scratch(&format!("layouts-{i}")));
    }
}

fn layouts_read_as_node_folders(src: &Path, root: &Path) {
    // (a) the capture folder itself: broker-N/d1, broker-N/d2, controller-100
    let a = capture_copy(src, &root.join("a"));
    let a_nodes: Vec<PathBuf> = node_folders(&a).into_iter().map(|(_, p)| p).collect();
    let (reference, stderr) = diff(&a_nodes);
    assert_no_folder_complaint("(a) node folders", &stderr);
    assert!(
        !reference["partitions"].as_array().unwrap().is_empty(),
        "{reference}"
    );

    let mut layouts: Vec<(&str, Vec<PathBuf>, PathBuf)> = Vec::new();
    layouts.push(("(a) the capture folder", a_nodes.clone(), a.clone()));
    // (b) NAME/data-N: b1/data-0, b1/data-1, ..., c100/data-0
    let b = root.join("b").join("capture");
    let b_nodes = lay_out(&a, &b, |name, id, i| {
        let short = if name.starts_with("broker-") {
            "b"
        } else {
            "c"
        };
        PathBuf::from(format!("{short}{id}")).join(format!("data-{i}"))
    });
    layouts.push(("(b) NAME/data-N", b_nodes, b));
    // (c) Strimzi-like: pod-N/data-0/kafka-log0, pod-N/data-1/kafka-log0
    let c = root.join("c").join("capture");
    let c_nodes = lay_out(&a, &c, |_, id, i| {
        PathBuf::from(format!("pod-{id}"))
            .join(format!("data-{i}"))
            .join("kafka-log0")
    });
    layouts.push(("(c) pod-N/data-N/kafka-log0", c_nodes, c));
    // (d) a folder of per-node archives, each holding that node's folder
    let d = root.join("d");
    std::fs::create_dir_all(&d).unwrap();
    let mut d_nodes = Vec::new();
    for (name, _) in node_folders(&a) {
        let archive = d.join(format!("{name}.tar.gz"));
        let st = Command::new("tar")
            .arg("-czf")
            .arg(&archive)
            .arg("-C")
            .arg(&a)
            .arg(&name)
            .status()
            .expect("run tar");
        assert!(st.success(), "tar {name}");
        d_nodes.push(archive);
    }
    layouts.push(("(d) per-node archives", d_nodes, d));

    for (what, nodes, whole) in &layouts {
        let (one_by_one, stderr) = diff(nodes);
        assert_no_folder_complaint(&format!("{what}: node folders"), &stderr);
        assert_eq!(
            one_by_one, reference,
            "{what}: its node folders given one by one read otherwise than the capture's"
        );
        let (together, stderr) = diff(std::slice::from_ref(whole));
        assert_no_folder_complaint(what, &stderr);
        assert_eq!(
            together,
            reference,
            "{what}: {} reads otherwise than its node folders",
            whole.display()
        );
    }

    // klf check on the capture folder: no warning from discovery at all,
    // so none about folder names (a node's log directories `d1` and `d2`
    // are not nodes 1 and 2)
    let out = klf(&["check", "--format", "json", a.to_str().unwrap()]);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{}",
        text(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let capture_warnings: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "capture-warning")
        .collect();
    assert!(capture_warnings.is_empty(), "{capture_warnings:?}");
    // and it checked every replica in every log directory of every node
    let mut replicas = 0;
    let mut partitions = BTreeSet::new();
    for (_, node) in node_folders(&a) {
        for dir in log_dirs(&node) {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let numbered = name
                    .rsplit_once('-')
                    .is_some_and(|(_, n)| n.parse::<u32>().is_ok());
                if e.path().is_dir() && numbered {
                    replicas += 1;
                    partitions.insert(name);
                }
            }
        }
    }
    assert_eq!(
        report["summary"]["replicas"], replicas,
        "{}",
        report["summary"]
    );
    assert_eq!(
        report["summary"]["partitions"],
        partitions.len(),
        "{}",
        report["summary"]
    );
    let _ = std::fs::remove_dir_all(root);
}

/// A folder holding two copies of the whole capture (`before/` and
/// `after/`: the same nodes, the same log directories) is not one capture:
/// klf reads nothing, exits 2, and names a command that works.
#[test]
fn two_copies_of_a_capture_are_refused_with_a_command_that_works() {
    for (i, cap) in jbod_captures().iter().enumerate() {
        two_copies_refused(cap, &scratch(&format!("layouts-two-{i}")));
    }
}

fn two_copies_refused(src: &Path, root: &Path) {
    let two = root.join("incident");
    copy_tree(src, &two.join("before"));
    copy_tree(src, &two.join("after"));
    let out = klf(&["diff", two.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("separate captures"), "{stderr}");
    let start = stderr.find("`klf diff ").expect("a klf diff command") + 1;
    let len = stderr[start..].find('`').expect("the command's end");
    let command = &stderr[start..start + len];
    let path = command.strip_prefix("klf diff ").unwrap();
    assert!(
        Path::new(path).starts_with(&two) && Path::new(path).is_dir(),
        "{command}"
    );
    let run = finish(klf_command().args(["diff", path]));
    assert!(
        matches!(run.status.code(), Some(0) | Some(1)),
        "{command}: {:?}\n{}",
        run.status.code(),
        text(&run.stderr)
    );
    // and it reads one copy's nodes, as that copy's node folders do
    let (doc, _) = diff(&[PathBuf::from(path)]);
    let nodes: Vec<PathBuf> = node_folders(Path::new(path))
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(doc, diff(&nodes).0, "{command}");
    let _ = std::fs::remove_dir_all(root);
}

/// Two of the three brokers of a KRaft capture: every partition assigned
/// to the third says it was not captured, in diff's JSON and table and as
/// a check warning. The assignment is the scenario's (scenario.json).
#[test]
fn a_replica_left_out_of_a_kraft_capture_is_named() {
    for cap in jbod_captures() {
        replica_left_out_is_named(&cap);
    }
}

fn replica_left_out_is_named(cap: &Path) {
    let s = facts(cap);
    assert_eq!(s["mode"], "kraft");
    let given = [1i64, 2];
    let paths: Vec<String> = given
        .iter()
        .map(|n| cap.join(format!("broker-{n}")).display().to_string())
        .collect();
    let args = |cmd: &'static str, json: bool| -> Vec<String> {
        let mut v = vec![cmd.to_string()];
        if json {
            v.extend(["--format".to_string(), "json".to_string()]);
        }
        v.extend(paths.iter().cloned());
        v
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = klf(&a);
        assert!(
            matches!(out.status.code(), Some(0) | Some(1)),
            "klf {a:?}: {}",
            text(&out.stderr)
        );
        out
    };
    let diff_json: Value = serde_json::from_slice(&run(args("diff", true)).stdout).unwrap();
    let table = text(&run(args("diff", false)).stdout);
    let check: Value = serde_json::from_slice(&run(args("check", true)).stdout).unwrap();
    let mut named = 0;
    for p in s["partitions"].as_array().unwrap() {
        let (topic, partition) = (
            p["topic"].as_str().unwrap(),
            p["partition"].as_i64().unwrap(),
        );
        let missing: Vec<i64> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_i64().unwrap())
            .filter(|r| !given.contains(r))
            .collect();
        assert!(!missing.is_empty());
        let list = missing
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let part = diff_json["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == topic && x["partition"] == partition)
            .unwrap_or_else(|| panic!("{topic}-{partition} not in the diff"));
        let finding = part["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "replica-not-captured")
            .unwrap_or_else(|| panic!("{topic}-{partition}: {}", part["findings"]));
        assert!(
            finding["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("broker {list}")),
            "{finding}"
        );
        assert_eq!(
            part["loss"]["replicas_not_captured"],
            serde_json::json!(missing),
            "{topic}-{partition}"
        );
        // the table: the partition's headline names what is missing
        let block: String = table
            .split(&format!("{topic}-{partition}: reference broker "))
            .nth(1)
            .unwrap_or_else(|| panic!("{topic}-{partition} not in the table:\n{table}"))
            .lines()
            .take(2)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            block.contains(&format!("broker {list} assigned but not captured")),
            "{topic}-{partition}:\n{block}"
        );
        // check: a warning for the partition
        assert!(
            check["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == "replica-not-captured"
                    && f["severity"] == "warning"
                    && f["topic"] == topic
                    && f["partition"] == partition),
            "{topic}-{partition}: no replica-not-captured warning"
        );
        named += 1;
    }
    assert!(named > 0);
}
