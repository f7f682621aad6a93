//! Capture discovery against real Kafka captures (`testdata/kafka/<scenario>/`,
//! written by a real Kafka cluster, with `scenario.json` saying what exists)
//! and against copies and synthetic log directories with broken bits.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use klf::capture::discover::discover;
use klf::format::checkpoint::ProblemKind;
use klf::format::names::{PendingState, ReplicaKind, SegmentFileKind};
use klf::model::{Capture, Level, NodeIdSource};
use serde_json::Value;

// ------------------------------------------------------------------ helpers

fn testdata_kafka() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join("kafka")
}

/// Scenario folders holding a `scenario.json`, sorted.
fn scenarios() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(testdata_kafka())
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("scenario.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn real_scenarios() -> Vec<PathBuf> {
    let s = scenarios();
    assert!(
        !s.is_empty(),
        "no real capture with scenario.json under {}",
        testdata_kafka().display()
    );
    s
}

fn load_json(p: &Path) -> Value {
    serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "klf-discovery-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Copies a tree, keeping symlinks as symlinks.
fn copy_tree(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    let mut entries: Vec<_> = fs::read_dir(src).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let ft = e.file_type().unwrap();
        let to = dst.join(e.file_name());
        if ft.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &to).unwrap();
        } else if ft.is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// Every entry under `dir`: relative path → (type, length, mtime, content hash
/// or link target). Compared before and after discovery to prove it wrote nothing.
fn fingerprint(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let meta = fs::symlink_metadata(&p).unwrap();
            let mtime = meta.modified().ok();
            if meta.file_type().is_symlink() {
                out.insert(rel, format!("link {:?}", fs::read_link(&p).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, format!("dir {mtime:?}"));
                walk(root, &p, out);
            } else if meta.is_file() {
                let mut h = DefaultHasher::new();
                h.write(&fs::read(&p).unwrap_or_default());
                out.insert(
                    rel,
                    format!("file {} {mtime:?} {:016x}", meta.len(), h.finish()),
                );
            } else {
                out.insert(rel, "other".into());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn has_diag(cap: &Capture, path: &Path, level: Level, needle: &str) -> bool {
    cap.warnings
        .iter()
        .any(|d| d.path == path && d.level == level && d.message.contains(needle))
}

fn diags_text(cap: &Capture) -> String {
    cap.warnings
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The broker folders a capture folder holds, by the number in their name.
fn broker_folders(capture: &Path) -> BTreeMap<i32, PathBuf> {
    fs::read_dir(capture)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            // broker-N, and controller-N for a KRaft controller's directory
            let n: i32 = name
                .strip_prefix("broker-")
                .or_else(|| name.strip_prefix("controller-"))?
                .parse()
                .ok()?;
            // a folder holding only a node's Kafka logs is not a broker
            let p = e.path();
            let holds_data = p.join("meta.properties").is_file()
                || fs::read_dir(&p)
                    .unwrap()
                    .flatten()
                    .any(|c| c.path().join("meta.properties").is_file());
            holds_data.then_some((n, p))
        })
        .collect()
}

/// A node folder's log directories: itself when it holds
/// `meta.properties`, else (a node with several log directories,
/// `broker-1/d1` and `broker-1/d2`) its folders that do.
fn node_log_dirs(folder: &Path) -> Vec<PathBuf> {
    if folder.join("meta.properties").is_file() {
        return vec![folder.to_path_buf()];
    }
    let mut v: Vec<PathBuf> = fs::read_dir(folder)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("meta.properties").is_file())
        .collect();
    v.sort();
    v
}

/// The node folder of the capture `capture` a log directory is in (the
/// folder itself, or the node folder holding it).
fn node_folder_of<'a>(capture: &Path, log_dir: &'a Path) -> &'a Path {
    if log_dir.parent() == Some(capture) {
        log_dir
    } else {
        log_dir.parent().unwrap()
    }
}

// ------------------------------------------------------------------ real captures

/// Every file with a transitional suffix on disk is reported as pending, and
/// nothing else is.
fn assert_pending_matches_disk(cap: &Capture) {
    for r in cap.partitions.values().flatten() {
        let on_disk: BTreeSet<PathBuf> = fs::read_dir(&r.dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.ends_with(".deleted") || n.ends_with(".cleaned") || n.ends_with(".swap")
            })
            .collect();
        let found: BTreeSet<PathBuf> = r.pending.iter().map(|p| p.path.clone()).collect();
        assert_eq!(found, on_disk, "{}", r.dir.display());
        for p in &r.pending {
            assert!(has_diag(cap, &p.path, Level::Note, "on next load"));
        }
    }
}

/// Checks one real capture folder against scenario.json.
fn check_real_capture(capture_dir: &Path, scenario: &Value) {
    let cap = discover(&[capture_dir]);
    let ctx = capture_dir.display().to_string();

    // Brokers: exactly the broker-N folders (each one log directory, or
    // a folder of the node's several), node ids from meta.properties.
    let folders = broker_folders(capture_dir);
    assert!(!folders.is_empty(), "{ctx}: no broker-N folder");
    assert_eq!(
        cap.node_ids(),
        folders.keys().copied().collect::<Vec<_>>(),
        "{ctx}: brokers"
    );
    let log_dirs: Vec<PathBuf> = folders.values().flat_map(|f| node_log_dirs(f)).collect();
    assert_eq!(cap.brokers.len(), log_dirs.len(), "{ctx}");
    for b in &cap.brokers {
        let meta = b
            .meta
            .as_ref()
            .expect("meta.properties read")
            .as_ref()
            .unwrap();
        assert_eq!(b.node_id_source, NodeIdSource::MetaProperties, "{ctx}");
        assert_eq!(meta.node_id, b.node_id);
        let folder = node_folder_of(capture_dir, &b.path);
        assert_eq!(
            folders.get(&b.node_id.unwrap()).map(PathBuf::as_path),
            Some(folder),
            "{ctx}"
        );
        assert!(log_dirs.contains(&b.path), "{ctx}: {}", b.path.display());
        if meta.version == 1 {
            assert!(
                meta.cluster_id.is_some(),
                "{ctx}: KRaft meta.properties has cluster.id"
            );
        }
        // The clean shutdown marker is read when there is one.
        assert_eq!(
            b.clean_shutdown.is_some(),
            b.path.join(".kafka_cleanshutdown").is_file(),
            "{ctx}"
        );
        // A controller's directory holds the metadata log only: no offset
        // checkpoints.
        if folder
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("controller-"))
        {
            assert!(b.checkpoints.replication_offset.is_none(), "{ctx}");
            continue;
        }
        let hw = b
            .checkpoints
            .replication_offset
            .as_ref()
            .unwrap_or_else(|| {
                panic!(
                    "{ctx}: {} has no replication-offset-checkpoint",
                    b.path.display()
                )
            });
        assert!(
            hw.checkpoint.kafka_accepts(),
            "{ctx}: {:?}",
            hw.checkpoint.problems
        );
        assert_eq!(hw.checkpoint.version, Some(0));
        for f in [
            &b.checkpoints.recovery_point,
            &b.checkpoints.log_start_offset,
            &b.checkpoints.cleaner_offset,
        ]
        .into_iter()
        .flatten()
        {
            assert!(
                f.checkpoint.kafka_accepts(),
                "{}: {:?}",
                f.path.display(),
                f.checkpoint.problems
            );
        }
        assert!(!b.partial);
    }
    // One cluster.
    let clusters: BTreeSet<_> = cap
        .brokers
        .iter()
        .filter_map(|b| b.meta.as_ref()?.as_ref().ok()?.cluster_id.clone())
        .collect();
    assert_eq!(clusters.len(), 1, "{ctx}: cluster ids {clusters:?}");

    // Partitions: for every topic scenario.json names, exactly the listed
    // partitions, each with exactly its listed replicas.
    let listed = scenario["partitions"].as_array().expect("partitions");
    let listed_topics: BTreeSet<&str> = listed
        .iter()
        .map(|p| p["topic"].as_str().unwrap())
        .collect();
    let mut expected: BTreeMap<(String, i32), BTreeSet<i32>> = BTreeMap::new();
    for p in listed {
        let key = (
            p["topic"].as_str().unwrap().to_owned(),
            p["partition"].as_i64().unwrap() as i32,
        );
        let replicas: BTreeSet<i32> = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_i64().unwrap() as i32)
            .filter(|n| folders.contains_key(n))
            .collect();
        expected.insert(key, replicas);
    }
    let found: BTreeMap<(String, i32), BTreeSet<i32>> = cap
        .partitions
        .iter()
        .filter(|((t, _), _)| listed_topics.contains(t.as_str()))
        .map(|(k, rs)| (k.clone(), rs.iter().map(|r| r.node_id.unwrap()).collect()))
        .collect();
    assert_eq!(found, expected, "{ctx}: partitions and replicas");

    // Topic ids came with inter.broker.protocol.version 2.8 (KIP-516).
    let zookeeper_below_2_8 = scenario["mode"] == "zookeeper"
        && scenario["broker_config"]["inter.broker.protocol.version"]
            .as_str()
            .and_then(|v| {
                let mut it = v.split(['.', '-']).map(|x| x.parse::<u32>().ok());
                Some((it.next()??, it.next()??))
            })
            .is_some_and(|v| v < (2, 8));
    for p in listed {
        let topic = p["topic"].as_str().unwrap();
        let partition = p["partition"].as_i64().unwrap() as i32;
        let replicas = cap.replicas(topic, partition);
        let mut topic_ids = BTreeSet::new();
        for r in replicas {
            let node = r.node_id.unwrap();
            let rctx = format!("{ctx}: {topic}-{partition} on {node}");
            // Segments with their .log, ascending.
            assert!(!r.segments.is_empty(), "{rctx}: no segment");
            assert!(r.segments.iter().all(|s| s.log.is_some()), "{rctx}");
            assert!(r
                .segments
                .windows(2)
                .all(|w| w[0].base_offset < w[1].base_offset));
            // Leader epochs parse and Kafka would load them. (Kafka keeps no
            // leader-epoch-checkpoint for message formats below v2.)
            let on_disk = r.dir.join("leader-epoch-checkpoint").is_file();
            assert_eq!(r.leader_epoch_checkpoint.is_some(), on_disk, "{rctx}");
            if let Some(lec) = &r.leader_epoch_checkpoint {
                assert!(
                    lec.checkpoint.problems.is_empty(),
                    "{rctx}: {:?}",
                    lec.checkpoint.problems
                );
                assert_eq!(lec.checkpoint.version, Some(0));
                assert_eq!(
                    lec.checkpoint.declared_count,
                    Some(lec.checkpoint.entries.len() as i32)
                );
                assert!(
                    !lec.checkpoint.entries.is_empty(),
                    "{rctx}: epoch cache empty"
                );
            }
            // Topic id (none below inter.broker.protocol.version 2.8: a
            // ZooKeeper-mode capture at 2.6 has no partition.metadata).
            let on_disk = r.dir.join("partition.metadata").is_file();
            assert_eq!(r.partition_metadata.is_some(), on_disk, "{rctx}");
            if !zookeeper_below_2_8 {
                assert!(on_disk, "{rctx}: no partition.metadata");
            }
            if let Some(pm) = &r.partition_metadata {
                topic_ids.insert(pm.as_ref().as_ref().unwrap().topic_id);
            }
            // High watermark as the oracle read it from the captured checkpoint.
            let state = &p["replica_state"][node.to_string()];
            if let Some(hw) = state
                .get("high_watermark_checkpoint")
                .and_then(Value::as_i64)
            {
                assert_eq!(r.high_watermark, Some(hw), "{rctx}: high watermark");
            }
            assert!(
                r.high_watermark.is_some(),
                "{rctx}: not in replication-offset-checkpoint"
            );
        }
        assert_eq!(
            topic_ids.len(),
            usize::from(!zookeeper_below_2_8),
            "{ctx}: {topic}-{partition}: replicas disagree on topic id"
        );

        // The leader at capture time holds an epoch entry for its epoch
        // (when it keeps leader epochs at all: message format v2).
        let leader = p["leader_at_capture"].as_i64().map(|n| n as i32);
        let epoch = p["leader_epoch_at_capture"].as_i64();
        let start = p["leader_start_offset_at_capture"].as_i64();
        if let (Some(leader), Some(epoch), Some(start)) = (leader, epoch, start) {
            let leader_replica = replicas.iter().find(|r| r.node_id == Some(leader));
            // retention past the epoch's start (tiered storage expiring
            // remote segments) moves the entry to the log start offset
            let start = start.max(
                leader_replica
                    .and_then(|r| r.log_start_offset)
                    .unwrap_or(start),
            );
            if let Some(lec) = leader_replica.and_then(|r| r.leader_epoch_checkpoint.as_ref()) {
                let entries = &lec.checkpoint.entries;
                assert!(
                    entries
                        .iter()
                        .any(|e| i64::from(e.epoch) == epoch && e.start_offset == start),
                    "{ctx}: {topic}-{partition}: leader {leader} has no entry epoch {epoch} at {start}: {entries:?}"
                );
            }
        }
    }

    // Every log directory holding a metadata log (KRaft) gives one.
    let with_metadata_log = log_dirs
        .iter()
        .filter(|f| f.join("__cluster_metadata-0").is_dir())
        .count();
    assert_eq!(
        cap.metadata_logs.len(),
        with_metadata_log,
        "{ctx}: metadata logs"
    );
    for m in &cap.metadata_logs {
        assert_eq!((m.topic.as_str(), m.partition), ("__cluster_metadata", 0));
        assert!(!m.segments.is_empty());
        assert!(m.high_watermark.is_none());
    }
    assert_pending_matches_disk(&cap);
    // A capture of healthy brokers carries no warning.
    let warnings: Vec<_> = cap.warnings_only().map(|d| d.to_string()).collect();
    assert!(
        warnings.is_empty(),
        "{ctx}: unexpected warnings:\n{}",
        warnings.join("\n")
    );
}

#[test]
fn real_captures_match_scenario_json() {
    for dir in real_scenarios() {
        let scenario = load_json(&dir.join("scenario.json"));
        check_real_capture(&dir, &scenario);
    }
}

#[test]
fn scenario_folder_takes_direct_brokers_and_reports_after() {
    for dir in real_scenarios() {
        let after = dir.join("after");
        let cap = discover(&[&dir]);
        assert!(cap
            .brokers
            .iter()
            .all(|b| node_folder_of(&dir, &b.path).parent() == Some(dir.as_path())));
        if after.is_dir() && !broker_folders(&after).is_empty() {
            assert_eq!(cap.excluded, vec![after.clone()], "{}", dir.display());
            assert!(
                has_diag(&cap, &after, Level::Note, "not included"),
                "{}",
                diags_text(&cap)
            );
            // Passing after/ reads those brokers.
            let cap_after = discover(&[&after]);
            assert_eq!(
                cap_after.node_ids(),
                broker_folders(&after).keys().copied().collect::<Vec<_>>()
            );
            assert!(cap_after
                .brokers
                .iter()
                .all(|b| node_folder_of(&after, &b.path).parent() == Some(after.as_path())));
            assert!(cap_after.excluded.is_empty());
            assert_pending_matches_disk(&cap_after);
            assert!(
                cap_after.warnings_only().next().is_none(),
                "{}",
                diags_text(&cap_after)
            );
            let scenario = load_json(&dir.join("scenario.json"));
            // after/ holds the same partitions of the scenario's topics.
            for p in scenario["partitions"].as_array().unwrap() {
                let t = p["topic"].as_str().unwrap();
                let n = p["partition"].as_i64().unwrap() as i32;
                assert!(
                    !cap_after.replicas(t, n).is_empty(),
                    "{}: {t}-{n} in after/",
                    dir.display()
                );
            }
        } else {
            assert!(cap.excluded.is_empty());
        }
    }
}

#[test]
fn broker_dirs_and_partition_dirs_can_be_passed_directly() {
    let dir = &real_scenarios()[0];
    let folders = broker_folders(dir);
    let (&node, broker_dir) = folders.iter().next().unwrap();
    let whole = discover(&[dir]);

    // One broker log directory.
    let cap = discover(&[broker_dir]);
    assert_eq!(cap.node_ids(), vec![node]);
    let own: BTreeMap<_, _> = whole
        .partitions
        .iter()
        .filter_map(|(k, rs)| {
            rs.iter()
                .find(|r| r.node_id == Some(node))
                .map(|r| (k.clone(), r.clone()))
        })
        .collect();
    let alone: BTreeMap<_, _> = cap
        .partitions
        .iter()
        .map(|(k, rs)| {
            assert_eq!(rs.len(), 1);
            (k.clone(), rs[0].clone())
        })
        .collect();
    assert_eq!(alone, own);

    // One partition directory: read with its broker's checkpoints.
    let ((topic, partition), replica) = own
        .iter()
        .find(|(_, r)| r.high_watermark.is_some())
        .unwrap();
    let cap = discover(&[&replica.dir]);
    assert_eq!(cap.partitions.len(), 1);
    let r = &cap.replicas(topic, *partition)[0];
    assert_eq!(r, replica);
    assert_eq!(cap.brokers.len(), 1);
    assert!(cap.brokers[0].partial);

    // The same directory twice, and a partition inside a broker also passed: read once.
    let cap2 = discover(&[broker_dir.clone(), replica.dir.clone(), broker_dir.clone()]);
    assert_eq!(cap2.brokers.len(), 1);
    assert!(!cap2.brokers[0].partial);
    assert_eq!(cap2.partitions.len(), own.len());
}

#[test]
fn discovery_is_deterministic_and_order_independent() {
    let dirs = real_scenarios();
    let dir = &dirs[0];
    let folders: Vec<PathBuf> = broker_folders(dir).into_values().collect();
    let a = discover(&folders);
    let mut rev = folders.clone();
    rev.reverse();
    let b = discover(&rev);
    assert_eq!(a, b);
    assert_eq!(discover(&[dir]).partitions, a.partitions);
    assert_eq!(discover(&[dir]), discover(&[dir]));
}

/// Fingerprints of the captures of every scenario (its `golden/` dumps and
/// `scenario.json` left out: they are not inputs of discovery).
fn capture_fingerprints(dirs: &[PathBuf]) -> BTreeMap<PathBuf, BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    for d in dirs {
        for e in fs::read_dir(d).unwrap().flatten() {
            let name = e.file_name();
            if e.path().is_dir() && name != "golden" {
                out.insert(e.path(), fingerprint(&e.path()));
            }
        }
    }
    out
}

#[test]
fn real_inputs_are_untouched() {
    let root = testdata_kafka();
    let dirs = real_scenarios();
    let before = capture_fingerprints(&dirs);
    assert!(before.values().all(|f| !f.is_empty()));
    for d in &dirs {
        let cap = discover(&[d]);
        for b in &cap.brokers {
            let _ = discover(&[&b.path]);
        }
        for rs in cap.partitions.values() {
            for r in rs {
                let _ = discover(&[&r.dir]);
            }
        }
        let _ = discover(&[d.join("after")]);
    }
    let _ = discover(&[&root]);
    assert_eq!(before, capture_fingerprints(&dirs));
}

// ------------------------------------------------------------------ broken copies of a real capture

#[test]
fn broken_copy_of_a_real_capture() {
    let src = &real_scenarios()[0];
    let tmp = TempDir::new("realcopy");
    let cap_dir = tmp.path().join("capture");
    for (_, b) in broker_folders(src) {
        copy_tree(&b, &cap_dir.join(b.file_name().unwrap()));
    }
    let clean = discover(&[&cap_dir]);
    assert!(
        clean.warnings_only().next().is_none(),
        "{}",
        diags_text(&clean)
    );
    let nodes = clean.node_ids();
    let (first, second) = (nodes[0], nodes[1]);
    let b1 = cap_dir.join(format!("broker-{first}"));
    let b2 = cap_dir.join(format!("broker-{second}"));

    // Torn replication-offset-checkpoint on the first broker: cut mid-way
    // through its last entry line.
    let hw_path = b1.join("replication-offset-checkpoint");
    let hw_bytes = fs::read(&hw_path).unwrap();
    let text = String::from_utf8(hw_bytes.clone()).unwrap();
    let last_line_start = text.trim_end_matches('\n').rfind('\n').unwrap() + 1;
    let last_line = &text[last_line_start..].trim_end().to_owned();
    let cut = last_line_start + last_line.find(' ').unwrap();
    fs::write(&hw_path, &hw_bytes[..cut]).unwrap();
    // meta.properties of the second broker gone.
    fs::remove_file(b2.join("meta.properties")).unwrap();
    // A torn leader-epoch-checkpoint in one partition of the first broker.
    let (tp, victim) = clean
        .partitions
        .iter()
        .find_map(|(k, rs)| {
            rs.iter()
                .find(|r| r.node_id == Some(first))
                .map(|r| (k.clone(), r.clone()))
        })
        .unwrap();
    let copy_dir = b1.join(victim.dir.file_name().unwrap());
    let lec = copy_dir.join("leader-epoch-checkpoint");
    let lec_bytes = fs::read(&lec).unwrap();
    fs::write(&lec, [&lec_bytes[..], b"7 x\n"].concat()).unwrap();

    let before = fingerprint(tmp.path());
    let cap = discover(&[&cap_dir]);
    assert_eq!(
        before,
        fingerprint(tmp.path()),
        "discovery changed the copy"
    );

    // Discovery went on: same brokers and partitions.
    assert_eq!(cap.node_ids(), nodes);
    assert_eq!(
        cap.partitions.keys().collect::<Vec<_>>(),
        clean.partitions.keys().collect::<Vec<_>>()
    );
    // Torn checkpoint: reported with line and byte, earlier entries kept.
    assert!(
        has_diag(
            &cap,
            &hw_path,
            Level::Warning,
            "Kafka would fail to read it"
        ),
        "{}",
        diags_text(&cap)
    );
    let broker1 = cap
        .brokers
        .iter()
        .find(|b| b.node_id == Some(first))
        .unwrap();
    let hw = broker1.checkpoints.replication_offset.as_ref().unwrap();
    let clean_hw = &clean
        .brokers
        .iter()
        .find(|b| b.node_id == Some(first))
        .unwrap()
        .checkpoints
        .replication_offset
        .as_ref()
        .unwrap()
        .checkpoint;
    assert!(!hw.checkpoint.kafka_accepts());
    assert_eq!(hw.checkpoint.entries.len(), clean_hw.entries.len() - 1);
    assert_eq!(
        hw.checkpoint.entries[..],
        clean_hw.entries[..clean_hw.entries.len() - 1]
    );
    let rej = hw.checkpoint.first_rejection().unwrap();
    assert_eq!(rej.kind, ProblemKind::MalformedLine);
    assert_eq!(rej.line, Some(clean_hw.entries.len() as u32 + 2));
    assert_eq!(rej.error.pos, last_line_start as u64);
    // Missing meta.properties: node id from the folder name, with a warning.
    let broker2 = cap.brokers.iter().find(|b| b.path == b2).unwrap();
    assert_eq!(broker2.node_id, Some(second));
    assert_eq!(broker2.node_id_source, NodeIdSource::FolderName);
    assert!(broker2.meta.is_none());
    assert!(has_diag(&cap, &b2, Level::Warning, "no meta.properties"));
    assert!(has_diag(&cap, &b2, Level::Warning, "folder name"));
    // Torn epoch checkpoint: its entries are kept, the bad line reported.
    let r = cap
        .replicas(&tp.0, tp.1)
        .iter()
        .find(|r| r.node_id == Some(first))
        .unwrap();
    let lc = &r.leader_epoch_checkpoint.as_ref().unwrap().checkpoint;
    assert_eq!(
        lc.entries,
        victim
            .leader_epoch_checkpoint
            .as_ref()
            .unwrap()
            .checkpoint
            .entries
    );
    assert!(lc.problems.iter().any(|p| p.kind == ProblemKind::BadNumber));
    assert!(has_diag(&cap, &lec, Level::Warning, "Kafka would fail"));
}

// ------------------------------------------------------------------ synthetic log directories

const META: &str = "#\n#Sun Nov 29 21:00:00 UTC 2026\nnode.id={N}\ndirectory.id=Tf9J3lq1RFCNiPOnq0Ayjw\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n";
const TOPIC_ID: &str = "version: 0\ntopic_id: 3zYk0wS1T-2x9ZpVq4cT5A";

fn seg(offset: i64) -> String {
    format!("{offset:020}")
}

/// A small log directory in Kafka's layout, with made-up segment bytes.
fn make_broker(dir: &Path, node: i32, partitions: &[(&str, i32, i64)]) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("meta.properties"),
        META.replace("{N}", &node.to_string()),
    )
    .unwrap();
    let mut hw = format!("0\n{}\n", partitions.len());
    for (t, p, off) in partitions {
        hw.push_str(&format!("{t} {p} {off}\n"));
        let pd = dir.join(format!("{t}-{p}"));
        fs::create_dir_all(&pd).unwrap();
        fs::write(pd.join(format!("{}.log", seg(0))), b"batch bytes").unwrap();
        fs::write(pd.join(format!("{}.index", seg(0))), b"").unwrap();
        fs::write(pd.join(format!("{}.timeindex", seg(0))), b"").unwrap();
        fs::write(pd.join(format!("{}.log", seg(*off))), b"more").unwrap();
        fs::write(pd.join(format!("{}.index", seg(*off))), b"12345678").unwrap();
        fs::write(pd.join(format!("{}.snapshot", seg(*off))), b"snap").unwrap();
        fs::write(
            pd.join("leader-epoch-checkpoint"),
            format!("0\n2\n0 0\n{node} {off}\n"),
        )
        .unwrap();
        fs::write(pd.join("partition.metadata"), TOPIC_ID).unwrap();
    }
    for name in [
        "replication-offset-checkpoint",
        "recovery-point-offset-checkpoint",
    ] {
        fs::write(dir.join(name), &hw).unwrap();
    }
    fs::write(dir.join("log-start-offset-checkpoint"), "0\n0\n").unwrap();
    fs::write(dir.join("cleaner-offset-checkpoint"), "0\n0\n").unwrap();
    let md = dir.join("__cluster_metadata-0");
    fs::create_dir_all(&md).unwrap();
    fs::write(md.join(format!("{}.log", seg(0))), b"raft").unwrap();
    fs::write(md.join("quorum-state"), b"{}").unwrap();
    fs::write(
        md.join(format!("{}-{:010}.checkpoint", seg(42), 3)),
        b"snapshot",
    )
    .unwrap();
    fs::write(
        md.join("partition.metadata"),
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ",
    )
    .unwrap();
}

#[test]
fn synthetic_capture_is_read_whole() {
    let tmp = TempDir::new("synthetic");
    let cap_dir = tmp.path().join("incident");
    let parts = [
        ("orders", 0, 10),
        ("my.topic-with-dashes", 11, 5),
        ("a_b", 2, 0),
    ];
    for n in 1..=3 {
        make_broker(&cap_dir.join(format!("broker-{n}")), n, &parts);
    }
    fs::write(cap_dir.join("scenario.json"), b"{}").unwrap();
    let cap = discover(&[&cap_dir]);
    assert!(cap.warnings_only().next().is_none(), "{}", diags_text(&cap));
    assert_eq!(cap.node_ids(), vec![1, 2, 3]);
    let keys: Vec<(String, i32)> = cap.partitions.keys().cloned().collect();
    assert_eq!(
        keys,
        vec![
            ("a_b".to_string(), 2),
            ("my.topic-with-dashes".to_string(), 11),
            ("orders".to_string(), 0)
        ]
    );
    let rs = cap.replicas("my.topic-with-dashes", 11);
    assert_eq!(
        rs.iter().map(|r| r.node_id.unwrap()).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    let r = &rs[1];
    assert_eq!(r.high_watermark, Some(5));
    assert_eq!(r.recovery_point, Some(5));
    assert_eq!(r.log_start_offset, None);
    assert_eq!(
        r.segments.iter().map(|s| s.base_offset).collect::<Vec<_>>(),
        vec![0, 5]
    );
    assert!(r.segments[0].timeindex.is_some() && r.segments[1].timeindex.is_none());
    assert!(r.segments.iter().all(|s| s.txnindex.is_none()));
    assert_eq!(r.snapshots.len(), 1);
    assert_eq!(r.snapshots[0].offset, 5);
    let lec = &r.leader_epoch_checkpoint.as_ref().unwrap().checkpoint;
    assert_eq!(
        lec.entries
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect::<Vec<_>>(),
        vec![(0, 0), (2, 5)]
    );
    assert_eq!(
        r.partition_metadata
            .as_ref()
            .unwrap()
            .as_ref()
            .as_ref()
            .unwrap()
            .topic_id
            .to_string(),
        "3zYk0wS1T-2x9ZpVq4cT5A"
    );
    // Empty indexes are notes, not warnings.
    assert!(has_diag(
        &cap,
        &r.segments[0].index.clone().unwrap(),
        Level::Note,
        "empty index"
    ));
    // Metadata logs, one per broker, with their KRaft snapshot.
    assert_eq!(cap.metadata_logs.len(), 3);
    let m = &cap.metadata_logs[0];
    assert_eq!(m.kind, ReplicaKind::Metadata);
    assert!(m.quorum_state.is_some());
    assert_eq!(m.kraft_snapshots.len(), 1);
    assert_eq!(
        (m.kraft_snapshots[0].end_offset, m.kraft_snapshots[0].epoch),
        (42, 3)
    );
    // Several log directories of one node share a directory.id here: reported.
    let dup = tmp.path().join("dup");
    make_broker(&dup.join("broker-1"), 1, &parts);
    make_broker(&dup.join("broker-1-copy"), 1, &parts);
    let cap = discover(&[&dup]);
    assert!(cap
        .warnings_only()
        .any(|d| d.message.contains("several log directories claim node 1")));
}

#[test]
fn weird_names_each_get_a_warning_and_discovery_goes_on() {
    let tmp = TempDir::new("weird");
    let cap_dir = tmp.path().join("cap");
    let b1 = cap_dir.join("broker-1");
    make_broker(&b1, 1, &[("orders", 0, 10), ("orders", 1, 3)]);
    make_broker(&cap_dir.join("broker-2"), 2, &[("orders", 0, 10)]);
    let outside = TempDir::new("outside");
    make_broker(outside.path(), 9, &[("elsewhere", 0, 1)]);
    let p0 = b1.join("orders-0");

    // In the log directory root.
    fs::create_dir(b1.join("not_a_partition")).unwrap();
    fs::write(b1.join("replication-offset-checkpoint.tmp"), b"0\n").unwrap();
    fs::write(b1.join("stray-file.txt"), b"?").unwrap();
    fs::create_dir(b1.join("remote-log-index-cache")).unwrap();
    let deleted = b1.join("orders-5.0123456789abcdef0123456789abcdef-delete");
    fs::create_dir(&deleted).unwrap();
    fs::write(deleted.join(format!("{}.log", seg(0))), b"x").unwrap();
    let future = b1.join("orders-1.fedcba9876543210fedcba9876543210-future");
    fs::create_dir(&future).unwrap();
    fs::write(future.join(format!("{}.log", seg(0))), b"x").unwrap();
    std::os::unix::fs::symlink(outside.path().join("elsewhere-0"), b1.join("elsewhere-0")).unwrap();
    std::os::unix::fs::symlink(b1.join("loop-b-0"), b1.join("loop-a-0")).unwrap();
    std::os::unix::fs::symlink(b1.join("loop-a-0"), b1.join("loop-b-0")).unwrap();
    // In a partition directory.
    fs::create_dir(p0.join(format!("{}.log", seg(77)))).unwrap();
    fs::write(p0.join(format!("{}.snapshot", seg(99))), b"").unwrap();
    fs::write(p0.join(format!("{}.log.deleted", seg(3))), b"old").unwrap();
    fs::write(p0.join(format!("{}.index.swap", seg(4))), b"").unwrap();
    fs::write(p0.join(format!("{}.log.cleaned", seg(4))), b"").unwrap();
    fs::write(p0.join("42.log"), b"short name").unwrap();
    fs::write(p0.join(format!("{}.timeindex", seg(500))), b"orphan").unwrap();
    fs::write(p0.join("notes.md"), b"?").unwrap();
    std::os::unix::fs::symlink(p0.join("nowhere"), p0.join(format!("{}.txnindex", seg(0))))
        .unwrap();
    let bad_name = {
        use std::os::unix::ffi::OsStrExt;
        p0.join(std::ffi::OsStr::from_bytes(b"\xff\xfe.log"))
    };
    fs::write(&bad_name, b"x").unwrap();
    // A torn, zero-filled and a broken partition.metadata elsewhere.
    let p1 = b1.join("orders-1");
    fs::write(p1.join("leader-epoch-checkpoint"), [0u8; 32]).unwrap();
    fs::write(
        p1.join("partition.metadata"),
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
    )
    .unwrap();
    // Broken meta.properties on broker 2: Kafka rejects it, node.id still readable.
    let b2 = cap_dir.join("broker-2");
    fs::write(b2.join("meta.properties"), b"version=1\nnode.id=2\n").unwrap();

    let before = fingerprint(tmp.path());
    let cap = discover(&[&cap_dir]);
    assert_eq!(before, fingerprint(tmp.path()));
    let text = diags_text(&cap);

    let w = |p: &Path, needle: &str| {
        assert!(
            has_diag(&cap, p, Level::Warning, needle),
            "no warning {needle:?} for {}:\n{text}",
            p.display()
        )
    };
    let n = |p: &Path, needle: &str| {
        assert!(
            has_diag(&cap, p, Level::Note, needle),
            "no note {needle:?} for {}:\n{text}",
            p.display()
        )
    };
    w(&b1.join("not_a_partition"), "not a partition directory");
    n(&b1.join("replication-offset-checkpoint.tmp"), "mid-write");
    w(&b1.join("stray-file.txt"), "unrecognised file");
    n(&b1.join("remote-log-index-cache"), "tiered storage");
    n(&deleted, "-delete");
    n(&future, "-future");
    w(&b1.join("elsewhere-0"), "outside the capture");
    w(&b1.join("loop-a-0"), "cannot be followed");
    w(&b1.join("loop-b-0"), "cannot be followed");
    w(
        &p0.join(format!("{}.log", seg(77))),
        "directory named like a segment",
    );
    n(
        &p0.join(format!("{}.snapshot", seg(99))),
        "empty producer snapshot",
    );
    n(&p0.join(format!("{}.log.deleted", seg(3))), ".deleted");
    n(&p0.join(format!("{}.index.swap", seg(4))), ".swap");
    n(&p0.join(format!("{}.log.cleaned", seg(4))), ".cleaned");
    w(&p0.join("42.log"), "20 digits");
    w(
        &p0.join(format!("{}.timeindex", seg(500))),
        "without its .log",
    );
    w(&p0.join("notes.md"), "unrecognised file");
    w(
        &p0.join(format!("{}.txnindex", seg(0))),
        "cannot be followed",
    );
    w(&bad_name, "not valid UTF-8");
    w(&p1.join("leader-epoch-checkpoint"), "Kafka would fail");
    w(&p1.join("partition.metadata"), "zero UUID");
    w(&b2.join("meta.properties"), "cluster.id");
    w(&b2, "meta.properties Kafka would reject");

    // Discovery went on.
    assert_eq!(cap.node_ids(), vec![1, 2]);
    let b2b = cap.brokers.iter().find(|b| b.path == b2).unwrap();
    assert_eq!(
        (b2b.node_id, b2b.node_id_source),
        (Some(2), NodeIdSource::MetaPropertiesHint)
    );
    assert!(b2b.meta.as_ref().unwrap().is_err());
    let keys: Vec<_> = cap.partitions.keys().cloned().collect();
    assert_eq!(
        keys,
        vec![
            ("elsewhere".to_string(), 0),
            ("orders".to_string(), 0),
            ("orders".to_string(), 1)
        ]
    );
    assert_eq!(cap.replicas("orders", 0).len(), 2);
    let r = &cap.replicas("orders", 0)[0];
    assert_eq!(r.node_id, Some(1));
    assert_eq!(
        r.segments.iter().map(|s| s.base_offset).collect::<Vec<_>>(),
        vec![0, 10, 42, 500]
    );
    assert_eq!(
        r.snapshots.iter().map(|s| s.offset).collect::<Vec<_>>(),
        vec![10, 99]
    );
    let pending: Vec<_> = r
        .pending
        .iter()
        .map(|p| (p.offset, p.kind, p.state))
        .collect();
    assert_eq!(
        pending,
        vec![
            (3, SegmentFileKind::Log, PendingState::Deleted),
            (4, SegmentFileKind::Log, PendingState::Cleaned),
            (4, SegmentFileKind::Index, PendingState::Swap)
        ]
    );
    // Set-aside replicas are reported, not live.
    let kinds: Vec<_> = cap
        .set_aside
        .iter()
        .map(|r| (r.topic.as_str(), r.partition, r.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (
                "orders",
                1,
                ReplicaKind::Future {
                    uid: "fedcba9876543210fedcba9876543210".into()
                }
            ),
            (
                "orders",
                5,
                ReplicaKind::Delete {
                    uid: "0123456789abcdef0123456789abcdef".into()
                }
            ),
        ]
    );
    // The torn epoch checkpoint is kept with its problem.
    let r1 = &cap.replicas("orders", 1)[0];
    let lec = &r1.leader_epoch_checkpoint.as_ref().unwrap().checkpoint;
    assert!(lec.entries.is_empty());
    assert_eq!(lec.first_rejection().unwrap().line, Some(1));
    assert!(r1.partition_metadata.as_ref().unwrap().is_err());
    // Warnings are sorted by path and stable.
    assert!(cap.warnings.windows(2).all(|w| w[0].path <= w[1].path));
    assert_eq!(cap, discover(&[&cap_dir]));
}

#[test]
fn nested_captures_and_odd_inputs() {
    let tmp = TempDir::new("nested");
    let scen = tmp.path().join("divergence");
    for n in 1..=3 {
        make_broker(&scen.join(format!("broker-{n}")), n, &[("t", 0, 4)]);
        make_broker(
            &scen.join("after").join(format!("broker-{n}")),
            n,
            &[("t", 0, 9)],
        );
    }
    // A folder holding one capture reads it (its after/ reported, not read).
    let cap = discover(&[tmp.path()]);
    assert_eq!(cap.node_ids(), vec![1, 2, 3]);
    assert_eq!(cap.excluded, vec![scen.join("after")]);
    assert!(has_diag(
        &cap,
        &scen.join("after"),
        Level::Note,
        "another capture"
    ));
    // A folder of two captures of the same nodes is not itself a capture:
    // nothing is read, and the message names them and a command that works.
    let other = tmp.path().join("lag-window");
    for n in 1..=3 {
        make_broker(&other.join(format!("broker-{n}")), n, &[("t", 0, 2)]);
    }
    let cap = discover(&[tmp.path()]);
    assert!(cap.brokers.is_empty());
    assert_eq!(cap.excluded, vec![scen.clone(), other.clone()]);
    assert!(has_diag(
        &cap,
        tmp.path(),
        Level::Warning,
        "separate captures"
    ));
    assert!(has_diag(&cap, tmp.path(), Level::Warning, "e.g. `klf "));
    std::fs::remove_dir_all(&other).unwrap();
    // The scenario: its three brokers; after/ reported.
    let cap = discover(&[&scen]);
    assert_eq!(cap.node_ids(), vec![1, 2, 3]);
    assert_eq!(cap.excluded, vec![scen.join("after")]);
    assert!(cap
        .replicas("t", 0)
        .iter()
        .all(|r| r.high_watermark == Some(4)));
    // after/ on its own.
    let cap = discover(&[scen.join("after")]);
    assert_eq!(cap.node_ids(), vec![1, 2, 3]);
    assert!(cap
        .replicas("t", 0)
        .iter()
        .all(|r| r.high_watermark == Some(9)));
    // A broker directory without meta.properties, passed directly.
    let lone = tmp.path().join("kafka-7");
    make_broker(&lone, 7, &[("t", 0, 1)]);
    fs::remove_file(lone.join("meta.properties")).unwrap();
    let cap = discover(&[&lone]);
    assert_eq!(cap.node_ids(), vec![7]);
    assert_eq!(cap.brokers[0].node_id_source, NodeIdSource::FolderName);
    // A partition directory outside any log directory.
    let loose = tmp.path().join("evidence");
    fs::create_dir_all(&loose).unwrap();
    copy_tree(&lone.join("t-0"), &loose.join("t-0"));
    let cap = discover(&[loose.join("t-0")]);
    assert_eq!(cap.replicas("t", 0).len(), 1);
    assert_eq!(cap.replicas("t", 0)[0].node_id, None);
    assert!(cap.brokers.is_empty());
    assert!(has_diag(
        &cap,
        &loose.join("t-0"),
        Level::Warning,
        "outside a broker log directory"
    ));
    // Paths that are not directories or do not exist.
    let file = tmp.path().join("file.txt");
    fs::write(&file, b"x").unwrap();
    let missing = tmp.path().join("missing");
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let cap = discover(&[&file, &missing, &empty]);
    assert!(cap.brokers.is_empty() && cap.partitions.is_empty());
    assert!(has_diag(&cap, &file, Level::Warning, "not a directory"));
    assert!(has_diag(&cap, &missing, Level::Warning, "cannot read"));
    assert!(has_diag(
        &cap,
        &empty,
        Level::Warning,
        "no Kafka log directory"
    ));
}

#[test]
fn unreadable_files_are_reported() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("perm");
    let b = tmp.path().join("broker-1");
    make_broker(&b, 1, &[("t", 0, 2)]);
    let hw = b.join("replication-offset-checkpoint");
    fs::set_permissions(&hw, fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = fs::File::open(&hw).is_ok(); // true when running as root
    let cap = discover(&[&b]);
    fs::set_permissions(&hw, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(cap.replicas("t", 0).len(), 1);
    if readable_anyway {
        assert_eq!(cap.replicas("t", 0)[0].high_watermark, Some(2));
    } else {
        assert!(has_diag(&cap, &hw, Level::Warning, "cannot open"));
        assert_eq!(cap.replicas("t", 0)[0].high_watermark, None);
    }
}
