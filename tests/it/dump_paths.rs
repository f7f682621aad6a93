//! `klf dump` on directories of the real Kafka captures in testdata/kafka:
//! partition directories, broker log directories and folders of brokers.
//!
//! - kafka format on a partition directory: the concatenation of
//!   kafka-dump-log's golden output for each of its files, in klf's order
//!   (segment files by base offset: `.log`, `.index`, `.timeindex`,
//!   `.txnindex`, `.snapshot`);
//! - json on a broker directory: a `file` object for every segment file, and
//!   checkpoint, properties and topic-id objects whose values are what the
//!   library's parsers read from the same files;
//! - table on a broker directory: a section for every file;
//! - decoders chosen by topic in json (the decoded key and value equal what
//!   kafka-dump-log printed with the decoder flag), not in kafka format;
//! - exit statuses: 0 clean, 1 corruption, 2 usage or I/O error.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use super::common::{finish, klf_command, root};
use klf::format::checkpoint::{
    parse_clean_shutdown, parse_leader_epoch_checkpoint_lenient, parse_offset_checkpoint_lenient,
    CleanShutdown, OffsetCheckpointKind,
};
use klf::format::props::{parse_meta_properties, parse_partition_metadata, parse_properties};
use serde_json::Value;

fn kafka_dir() -> PathBuf {
    root().join("testdata").join("kafka")
}

/// Runs `klf dump ARGS...` from the repository root (as kafka-dump-log was run).
fn dump(args: &[&str]) -> Output {
    finish(klf_command().current_dir(root()).arg("dump").args(args))
}

fn no_panic(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert!(out.status.code().is_some(), "{what}: killed by a signal");
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Repository-relative text of a path.
fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// `(scenario, broker directory)` for every captured broker, `after/` ones included.
fn brokers() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for scenario in sorted_entries(&kafka_dir()) {
        if !scenario.is_dir() {
            continue;
        }
        for folder in [scenario.clone(), scenario.join("after")] {
            for b in sorted_entries(&folder) {
                if b.join("meta.properties").is_file() {
                    out.push((scenario.clone(), b));
                }
            }
        }
    }
    out
}

fn partition_dirs(broker: &Path) -> Vec<PathBuf> {
    sorted_entries(broker)
        .into_iter()
        .filter(|p| p.is_dir() && name(p).contains('-'))
        .collect()
}

/// Rank of a segment file's kind in klf's order; `None` for other files.
fn segment_rank(name: &str) -> Option<(i64, u8)> {
    let (stem, ext) = name.split_once('.')?;
    let rank = match ext {
        "log" => 0,
        "index" => 1,
        "timeindex" => 2,
        "txnindex" => 3,
        "snapshot" => 4,
        "checkpoint" => 5,
        _ => return None,
    };
    let offset = stem.split('-').next()?.parse().ok()?;
    Some((offset, rank))
}

/// Segment files of a partition directory in the order klf dumps them.
fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<((i64, u8), PathBuf)> = sorted_entries(dir)
        .into_iter()
        .filter_map(|p| segment_rank(&name(&p)).map(|r| (r, p)))
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

/// The golden text klf's default release (4.4) must print for `file`.
fn golden_of(scenario: &Path, file: &Path, mode: &str) -> Vec<u8> {
    let r = file.strip_prefix(scenario).unwrap();
    crate::common::golden_bytes(
        scenario,
        &format!("{}.{mode}.txt", r.to_string_lossy()),
        "4.4",
    )
}

fn internal_decoder(dir: &Path) -> Option<&'static str> {
    let n = name(dir);
    if n.starts_with("__cluster_metadata-") {
        Some("--cluster-metadata-decoder")
    } else if n.starts_with("__consumer_offsets-") {
        Some("--offsets-decoder")
    } else if n.starts_with("__transaction_state-") {
        Some("--transaction-log-decoder")
    } else if n.starts_with("__share_group_state-") {
        Some("--share-group-state-decoder")
    } else if n.starts_with("__remote_log_metadata-") {
        Some("--remote-log-metadata-decoder")
    } else {
        None
    }
}

/// Sections of the stdout of one kafka-format dump of several directories:
/// for each directory, its files' text from their first `Dumping` line on.
fn sections_by_dir(stdout: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut out: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in stdout.split_inclusive(|&b| b == b'\n') {
        if let Some(dir) = line
            .strip_prefix(b"Dumping ")
            .and_then(|l| std::str::from_utf8(l).ok())
            .and_then(|l| l.trim_end().rsplit_once('/'))
            .map(|(dir, _)| dir.to_string())
        {
            current = Some(dir);
        }
        if let Some(d) = &current {
            out.entry(d.clone()).or_default().extend_from_slice(line);
        }
    }
    out
}

#[test]
fn partition_directory_in_kafka_format_is_the_goldens_concatenated() {
    let mut compared = 0;
    let mut failures = Vec::new();
    // (mode, decoder) -> (scenario, partition directory): dumped a hundred
    // directories a run, each directory's text then cut out by its files'
    // `Dumping` lines
    type Dirs = Vec<(PathBuf, PathBuf)>;
    let mut groups: BTreeMap<(&str, Option<&str>), Dirs> = BTreeMap::new();
    for (scenario, broker) in brokers() {
        for dir in partition_dirs(&broker) {
            if segment_files(&dir).is_empty() {
                continue;
            }
            for mode in ["shallow", "deep"] {
                let decoder = internal_decoder(&dir).filter(|_| mode == "deep");
                groups
                    .entry((mode, decoder))
                    .or_default()
                    .push((scenario.clone(), dir.clone()));
            }
        }
    }
    for ((mode, decoder), dirs) in &groups {
        for chunk in dirs.chunks(100) {
            let names: Vec<String> = chunk.iter().map(|(_, d)| rel(d)).collect();
            let mut args = vec!["--format", "kafka"];
            args.extend(names.iter().map(String::as_str));
            if *mode == "deep" {
                args.extend(["--deep-iteration", "--print-data-log"]);
                args.extend(*decoder);
            }
            let out = dump(&args);
            no_panic(&out, &names.join(" "));
            if !matches!(out.status.code(), Some(0) | Some(1)) {
                failures.push(format!(
                    "[{mode}] {} directories from {}: exit {:?}",
                    names.len(),
                    names[0],
                    out.status.code()
                ));
                continue;
            }
            let sections = sections_by_dir(&out.stdout);
            for ((scenario, dir), d) in chunk.iter().zip(&names) {
                let files = segment_files(dir);
                let expected: Vec<u8> = files
                    .iter()
                    .flat_map(|f| golden_of(scenario, f, mode))
                    .collect();
                compared += 1;
                // kafka-dump-log prints a `Dumping` line for a file it then
                // ignores: the partition's text files.
                let mut stdout =
                    String::from_utf8_lossy(sections.get(d).map_or(&[][..], Vec::as_slice))
                        .into_owned();
                for text in [
                    "leader-epoch-checkpoint",
                    "partition.metadata",
                    "quorum-state",
                ] {
                    if dir.join(text).is_file() {
                        let line = format!("Dumping {d}/{text}\n");
                        if stdout.contains(&line) {
                            stdout = stdout.replacen(&line, "", 1);
                        } else {
                            failures.push(format!("{d} [{mode}]: stdout lacks {line:?}"));
                        }
                    }
                }
                if stdout.as_bytes() != expected.as_slice() {
                    failures.push(format!(
                        "{d} [{mode}]: output differs from the {} goldens concatenated",
                        files.len()
                    ));
                }
            }
            let stderr = String::from_utf8_lossy(&out.stderr);
            // The partitions' text files are said on stderr to be skipped:
            // the first few by path, the rest counted by name at the end.
            for text in ["leader-epoch-checkpoint", "partition.metadata"] {
                let want: Vec<String> = names
                    .iter()
                    .filter(|d| root().join(d).join(text).is_file())
                    .map(|d| format!("{d}/{text}: skipped in kafka format"))
                    .collect();
                let named = want.iter().filter(|w| stderr.contains(w.as_str())).count();
                let counted: usize = stderr
                    .lines()
                    .filter_map(|l| l.split_once("more files skipped in kafka format: "))
                    .flat_map(|(_, list)| list.split(", "))
                    .filter_map(|item| item.strip_prefix(&format!("{text} ×")))
                    .map(|n| n.parse::<usize>().unwrap())
                    .sum();
                if named + counted != want.len() {
                    failures.push(format!(
                        "[{mode}] {} directories from {}: {} {text} files, {named} said skipped by path and {counted} counted:\n{stderr}",
                        names.len(),
                        names[0],
                        want.len()
                    ));
                }
            }
        }
    }
    assert!(
        compared > 50,
        "only {compared} partition directories compared"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!("{compared} partition directory dumps identical to the goldens");
}

fn json_lines(out: &Output, what: &str) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .expect("UTF-8 JSON")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {l}")))
        .collect()
}

fn of_file<'a>(objs: &'a [Value], ty: &str, file: &str) -> Vec<&'a Value> {
    objs.iter()
        .filter(|v| v["type"] == ty && v["file"] == file)
        .collect()
}

/// Every file of a broker directory klf dumps: `(repository-relative path,
/// expected kind)`.
fn broker_files(broker: &Path) -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for p in sorted_entries(broker) {
        let n = name(&p);
        let kind = if OffsetCheckpointKind::from_file_name(&n).is_some() {
            "offset_checkpoint"
        } else if n == "meta.properties" {
            "meta_properties"
        } else if n == "bootstrap.checkpoint" {
            "metadata_snapshot"
        } else if n == ".kafka_cleanshutdown" {
            "clean_shutdown"
        } else {
            continue;
        };
        v.push((rel(&p), kind));
    }
    for dir in partition_dirs(broker) {
        for f in segment_files(&dir) {
            let n = name(&f);
            let kind = match n.split_once('.').map(|(_, e)| e) {
                Some("log") => "log",
                Some("index") => "index",
                Some("timeindex") => "timeindex",
                Some("txnindex") => "txnindex",
                Some("snapshot") => "producer_snapshot",
                _ => "metadata_snapshot",
            };
            v.push((rel(&f), kind));
        }
        for (n, kind) in [
            ("leader-epoch-checkpoint", "leader_epoch_checkpoint"),
            ("partition.metadata", "partition_metadata"),
            ("quorum-state", "quorum_state"),
        ] {
            if dir.join(n).is_file() {
                v.push((rel(&dir.join(n)), kind));
            }
        }
    }
    v
}

#[test]
fn broker_directory_in_json_matches_the_parsers() {
    let mut checked_entries = 0usize;
    let mut brokers_seen = 0usize;
    for (_, broker) in brokers() {
        let b = rel(&broker);
        let out = dump(&["--format", "json", &b]);
        no_panic(&out, &b);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{b}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let objs = json_lines(&out, &b);
        brokers_seen += 1;
        // A file object for every file, in the walk's order, nothing else.
        let files: Vec<(String, String)> = objs
            .iter()
            .filter(|v| v["type"] == "file")
            .map(|v| {
                (
                    v["file"].as_str().unwrap().to_string(),
                    v["kind"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let expected: Vec<(String, String)> = broker_files(&broker)
            .into_iter()
            .map(|(f, k)| (f, k.to_string()))
            .collect();
        let got: BTreeSet<_> = files.iter().cloned().collect();
        let want: BTreeSet<_> = expected.iter().cloned().collect();
        assert_eq!(got, want, "{b}: file objects");
        assert_eq!(files.len(), expected.len(), "{b}: a file dumped twice");
        for (file, kind) in &expected {
            let path = root().join(file);
            let data = std::fs::read(&path).unwrap();
            match kind.as_str() {
                "offset_checkpoint" => {
                    let cp = parse_offset_checkpoint_lenient(&data);
                    let got: Vec<(String, i64, i64)> = of_file(&objs, "checkpoint_entry", file)
                        .iter()
                        .map(|v| {
                            (
                                v["topic"].as_str().unwrap().to_string(),
                                v["partition"].as_i64().unwrap(),
                                v["offset"].as_i64().unwrap(),
                            )
                        })
                        .collect();
                    let want: Vec<(String, i64, i64)> = cp
                        .entries
                        .iter()
                        .map(|e| (e.topic.clone(), i64::from(e.partition), e.offset))
                        .collect();
                    assert_eq!(got, want, "{file}");
                    checked_entries += want.len();
                    let head = of_file(&objs, "checkpoint", file);
                    assert_eq!(head.len(), 1, "{file}");
                    assert_eq!(head[0]["entries"], cp.entries.len(), "{file}");
                    assert_eq!(head[0]["version"], serde_json::json!(cp.version), "{file}");
                }
                "leader_epoch_checkpoint" => {
                    let cp = parse_leader_epoch_checkpoint_lenient(&data);
                    let got: Vec<(i64, i64)> = of_file(&objs, "checkpoint_entry", file)
                        .iter()
                        .map(|v| {
                            (
                                v["epoch"].as_i64().unwrap(),
                                v["start_offset"].as_i64().unwrap(),
                            )
                        })
                        .collect();
                    let want: Vec<(i64, i64)> = cp
                        .entries
                        .iter()
                        .map(|e| (i64::from(e.epoch), e.start_offset))
                        .collect();
                    assert_eq!(got, want, "{file}");
                    checked_entries += want.len();
                }
                "meta_properties" => {
                    let props = parse_properties(&data).unwrap();
                    let p = of_file(&objs, "properties", file);
                    assert_eq!(p.len(), 1, "{file}");
                    let got: BTreeMap<String, String> =
                        serde_json::from_value(p[0]["properties"].clone()).unwrap();
                    assert_eq!(got, props.to_map(), "{file}");
                    let meta = parse_meta_properties(&data).unwrap();
                    let m = of_file(&objs, "meta_properties", file);
                    assert_eq!(m[0]["node_id"], serde_json::json!(meta.node_id), "{file}");
                    assert_eq!(
                        m[0]["cluster_id"],
                        serde_json::json!(meta.cluster_id),
                        "{file}"
                    );
                }
                "partition_metadata" => {
                    let pm = parse_partition_metadata(&data).unwrap();
                    let p = of_file(&objs, "partition_metadata", file);
                    assert_eq!(p.len(), 1, "{file}");
                    assert_eq!(p[0]["topic_id"], pm.topic_id.to_string(), "{file}");
                }
                "clean_shutdown" => {
                    let c = of_file(&objs, "clean_shutdown", file);
                    assert_eq!(c.len(), 1, "{file}");
                    match parse_clean_shutdown(&data) {
                        CleanShutdown::Marker { broker_epoch, .. } => {
                            assert_eq!(
                                c[0]["broker_epoch"],
                                serde_json::json!(broker_epoch),
                                "{file}"
                            )
                        }
                        CleanShutdown::Empty => assert_eq!(c[0]["content"], "empty", "{file}"),
                        CleanShutdown::Unreadable(_) => {
                            panic!("{file}: unreadable marker in a capture")
                        }
                    }
                }
                "log" | "metadata_snapshot" if !data.is_empty() => {
                    assert!(
                        !of_file(&objs, "batch", file).is_empty(),
                        "{file}: no batch"
                    );
                }
                "index" | "timeindex" | "txnindex" => {
                    assert_eq!(of_file(&objs, "sanity_check", file).len(), 1, "{file}");
                }
                "producer_snapshot" => {
                    let s = of_file(&objs, "producer_snapshot", file);
                    assert_eq!(s.len(), 1, "{file}");
                    let n = s[0]["entries"].as_u64().unwrap() as usize;
                    assert_eq!(of_file(&objs, "producer_entry", file).len(), n, "{file}");
                }
                _ => {}
            }
        }
    }
    assert!(brokers_seen >= 30, "only {brokers_seen} brokers");
    assert!(
        checked_entries > 100,
        "only {checked_entries} checkpoint entries compared"
    );
    println!("{brokers_seen} brokers, {checked_entries} checkpoint entries equal to the parsers'");
}

#[test]
fn folder_of_brokers_dumps_each_broker() {
    let scenario = kafka_dir().join("lag-window");
    let s = rel(&scenario);
    let out = dump(&["--format", "json", &s]);
    no_panic(&out, &s);
    assert_eq!(out.status.code(), Some(0));
    let objs = json_lines(&out, &s);
    let files: Vec<&str> = objs
        .iter()
        .filter(|v| v["type"] == "file")
        .map(|v| v["file"].as_str().unwrap())
        .collect();
    let mut expected = Vec::new();
    for b in sorted_entries(&scenario) {
        if b.join("meta.properties").is_file() {
            expected.extend(broker_files(&b).into_iter().map(|(f, _)| f));
        }
    }
    assert!(!expected.is_empty());
    assert_eq!(files, expected, "brokers in order, after/ left out");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("after"),
        "nested capture not mentioned: {stderr}"
    );
}

#[test]
fn table_format_shows_every_file() {
    for (_, broker) in brokers().into_iter().take(6) {
        let b = rel(&broker);
        let out = dump(&["--format", "table", "--deep-iteration", &b]);
        no_panic(&out, &b);
        assert!(matches!(out.status.code(), Some(0) | Some(1)), "{b}");
        let text = String::from_utf8_lossy(&out.stdout);
        let headers: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("testdata/"))
            .collect();
        let files = broker_files(&broker);
        assert_eq!(headers.len(), files.len(), "{b}: {headers:?}");
        for ((f, kind), h) in files.iter().zip(&headers) {
            assert!(h.starts_with(&format!("{f} ({kind}")), "{b}: {h:?} for {f}");
        }
        // Every section has a table below its header.
        assert!(text.matches('┌').count() >= files.len(), "{b}");
    }
}

/// `(offset, key text, payload text)` of the record lines of a golden.
fn golden_records(text: &str) -> BTreeMap<i64, (Option<String>, Option<String>)> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("| offset: ") else {
            continue;
        };
        let offset: i64 = rest.split(' ').next().unwrap().parse().unwrap();
        let Some(i) = rest.find("headerKeys: [") else {
            continue;
        };
        let after = &rest[i..];
        let Some(j) = after.find("] ") else { continue };
        let data = &after[j + 2..];
        let (key, payload) = match (data.strip_prefix("key: "), data.find(" payload: ")) {
            (Some(_), Some(p)) => (
                Some(data[5..p].to_string()),
                Some(data[p + 10..].to_string()),
            ),
            (Some(k), None) => (Some(k.to_string()), None),
            (None, _) => match data.strip_prefix("payload: ") {
                Some(p) => (None, Some(p.to_string())),
                None => continue,
            },
        };
        m.insert(offset, (key, payload));
    }
    m
}

fn as_json(t: &Option<String>) -> Value {
    match t {
        None => Value::Null,
        Some(t) => serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone())),
    }
}

#[test]
fn decoders_follow_the_topic_in_json_but_not_in_kafka_format() {
    let scenario = kafka_dir().join("internal-topics");
    let broker = scenario.join("broker-1");
    let b = rel(&broker);
    let out = dump(&["--format", "json", "--print-data-log", &b]);
    no_panic(&out, &b);
    assert_eq!(out.status.code(), Some(0));
    let objs = json_lines(&out, &b);
    let mut decoded = BTreeMap::<&str, usize>::new();
    for dir in partition_dirs(&broker) {
        let log = dir.join("00000000000000000000.log");
        let file = rel(&log);
        let fobj = of_file(&objs, "file", &file);
        assert_eq!(fobj.len(), 1, "{file}");
        let want_decoder = match name(&dir).as_str() {
            "__consumer_offsets-0" => Some("offsets"),
            "__transaction_state-0" => Some("transaction_log"),
            "__cluster_metadata-0" => Some("cluster_metadata"),
            _ => None,
        };
        assert_eq!(fobj[0]["decoder"].as_str(), want_decoder, "{file}");
        let golden = String::from_utf8(golden_of(&scenario, &log, "deep")).unwrap();
        let expected = golden_records(&golden);
        for r in of_file(&objs, "record", &file) {
            if r.get("control").is_some() {
                assert!(
                    r.get("decoded_value").is_none(),
                    "{file}: control record decoded"
                );
                continue;
            }
            let offset = r["offset"].as_i64().unwrap();
            match want_decoder {
                None => {
                    assert!(r.get("decoded_value").is_none(), "{file}@{offset}: decoded");
                }
                Some(d) => {
                    let (k, p) = expected
                        .get(&offset)
                        .unwrap_or_else(|| panic!("{file}@{offset}: not in the golden"));
                    assert_eq!(r["decoded_key"], as_json(k), "{file}@{offset} key");
                    assert_eq!(r["decoded_value"], as_json(p), "{file}@{offset} value");
                    *decoded.entry(d).or_default() += 1;
                }
            }
        }
    }
    for d in ["offsets", "transaction_log", "cluster_metadata"] {
        assert!(
            decoded.get(d).copied().unwrap_or(0) > 0,
            "no record decoded by {d}: {decoded:?}"
        );
    }
    // kafka format: raw bytes unless the flag is given, as kafka-dump-log.
    for (dir, flag) in [
        ("__consumer_offsets-0", "--offsets-decoder"),
        ("__cluster_metadata-0", "--cluster-metadata-decoder"),
    ] {
        let d = rel(&broker.join(dir));
        let plain = dump(&["--format", "kafka", "--print-data-log", &d]);
        let flagged = dump(&["--format", "kafka", "--print-data-log", flag, &d]);
        assert_eq!(plain.status.code(), Some(0), "{d}");
        assert_eq!(flagged.status.code(), Some(0), "{d}");
        let plain = String::from_utf8_lossy(&plain.stdout);
        let flagged = String::from_utf8_lossy(&flagged.stdout);
        assert!(flagged.contains("payload: {\""), "{d}: decoder did not run");
        assert!(
            !plain.contains("payload: {\""),
            "{d}: decoded without {flag}"
        );
        assert_ne!(plain, flagged);
    }
}

#[test]
fn default_format_off_a_terminal_is_kafka() {
    let d = rel(&kafka_dir()
        .join("lag-window")
        .join("broker-1")
        .join("lag-0"));
    let default = dump(&[&d]);
    let kafka = dump(&["--format", "kafka", &d]);
    assert_eq!(default.status.code(), Some(0));
    assert!(!default.stdout.is_empty());
    assert_eq!(default.stdout, kafka.stdout);
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("klf-dump-paths-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    for p in sorted_entries(dir) {
        if p.is_dir() {
            v.extend(listing(&p));
        } else {
            let data = std::fs::read(&p).unwrap();
            v.push((p, data));
        }
    }
    v
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    finish(klf_command().current_dir(dir).arg("dump").args(args))
}

#[test]
fn exit_statuses() {
    // Clean directory: 0.
    let d = rel(&kafka_dir().join("codecs").join("broker-1"));
    for f in ["kafka", "json", "table"] {
        let out = dump(&["--format", f, &d]);
        no_panic(&out, f);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A missing path: 2, in every format.
    for f in ["kafka", "json", "table"] {
        let out = dump(&["--format", f, "testdata/kafka/no-such-dir/broker-9"]);
        no_panic(&out, f);
        assert_eq!(out.status.code(), Some(2), "{f}");
        assert!(!out.stderr.is_empty(), "{f}: nothing said");
    }
    // No PATH at all: 2.
    assert_eq!(dump(&[]).status.code(), Some(2));

    // A copy of a real partition directory with one damaged batch: 1; and
    // nothing written to it.
    let src = kafka_dir()
        .join("lag-window")
        .join("broker-1")
        .join("lag-0");
    let s = Scratch::new("corrupt");
    let dir = s.0.join("lag-0");
    std::fs::create_dir_all(&dir).unwrap();
    for p in sorted_entries(&src) {
        std::fs::copy(&p, dir.join(name(&p))).unwrap();
    }
    let log = dir.join("00000000000000000000.log");
    let mut data = std::fs::read(&log).unwrap();
    let last = data.len() - 3;
    data[last] ^= 0x5a;
    std::fs::write(&log, &data).unwrap();
    let before = listing(&s.0);
    for f in ["kafka", "json", "table"] {
        let out = run_in(&s.0, &["--format", f, "lag-0"]);
        no_panic(&out, f);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("lag-0/00000000000000000000.log:"),
            "{f}: {stderr}"
        );
    }
    // A lone .timeindex: its .log is missing (2); no .index is created.
    std::fs::remove_file(&log).unwrap();
    std::fs::remove_file(dir.join("00000000000000000000.index")).unwrap();
    let before_lone = listing(&s.0);
    for f in ["kafka", "json", "table"] {
        let out = run_in(&s.0, &["--format", f, "lag-0"]);
        no_panic(&out, f);
        assert_eq!(out.status.code(), Some(2), "{f}");
    }
    assert_eq!(listing(&s.0), before_lone, "files created or changed");
    assert_ne!(before, before_lone);
}

#[test]
fn directory_of_loose_segment_files() {
    // Segment files copied into a folder with no Kafka name: read flat.
    let src = kafka_dir().join("codecs").join("broker-1");
    let part = partition_dirs(&src)
        .into_iter()
        .find(|d| name(d).starts_with("codec-"))
        .expect("a codec partition");
    let s = Scratch::new("loose");
    let dir = s.0.join("copied");
    std::fs::create_dir_all(&dir).unwrap();
    let mut copied = Vec::new();
    for p in segment_files(&part) {
        std::fs::copy(&p, dir.join(name(&p))).unwrap();
        copied.push(name(&p));
    }
    std::fs::write(dir.join("notes.txt"), b"operator notes").unwrap();
    let out = run_in(&s.0, &["--format", "json", "copied"]);
    no_panic(&out, "loose");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objs = json_lines(&out, "loose");
    let mut files: Vec<String> = objs
        .iter()
        .filter(|v| v["type"] == "file")
        .map(|v| {
            v["file"]
                .as_str()
                .unwrap()
                .trim_start_matches("copied/")
                .to_string()
        })
        .collect();
    files.sort();
    copied.sort();
    assert_eq!(files, copied);
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.txt"));
    // An empty folder has nothing to dump: 2.
    std::fs::create_dir_all(s.0.join("empty")).unwrap();
    assert_eq!(run_in(&s.0, &["empty"]).status.code(), Some(2));
}

#[test]
fn notes_said_once_per_file_are_summarised_after_the_first_three() {
    let b = "testdata/kafka/coordinators-4.4/broker-1";
    let out = dump(&[b]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let each: Vec<&str> = err
        .lines()
        .filter(|l| l.ends_with("skipped in kafka format (kafka-dump-log has no output for it; use --format json or table)"))
        .collect();
    assert_eq!(each.len(), 3, "{err}");
    // Every text file of the broker and its partitions is named or counted.
    let dir = super::common::root().join(b);
    let mut text_files = 0;
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    let mut walk = vec![dir.clone()];
    while let Some(d) = walk.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with("checkpoint") && !name.ends_with(".checkpoint")
                || ["partition.metadata", "meta.properties", "quorum-state"]
                    .contains(&name.as_str())
            {
                text_files += 1;
                *by_name.entry(name).or_default() += 1;
            }
        }
    }
    let summary = err
        .lines()
        .find(|l| l.starts_with("klf dump: note: and "))
        .unwrap_or_else(|| panic!("no summary: {err}"));
    let more: usize = summary["klf dump: note: and ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(more + 3, text_files, "{summary}");
    assert!(
        summary.contains(&format!(
            "leader-epoch-checkpoint ×{}",
            by_name["leader-epoch-checkpoint"]
        )),
        "{summary}"
    );
    // --quiet drops them all.
    let quiet = dump(&["--quiet", b]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("skipped in kafka format"));
}
