//! `klf check` on real Kafka captures and on corrupted copies of them.
//!
//! Clean captures must pass; incident captures must report what Kafka did to
//! them; each corruption made to a temporary copy must be reported with the
//! right code and location. testdata is never written: corruptions are made
//! to copies under the system temporary directory.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::common::{finish, kafka, klf, klf_command, Ran};
use serde_json::Value;

/// Runs `klf check ARGS... PATHS...`.
fn check_run(args: &[&str], paths: &[&Path]) -> Ran {
    let mut c = klf_command();
    c.arg("check").args(args).args(paths);
    Ran::from(finish(&mut c))
}

/// Runs `klf check --format json` and returns (exit code, findings, document).
fn check_json(paths: &[&Path], extra: &[&str]) -> (Option<i32>, Vec<Value>, Value) {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(extra);
    let r = check_run(&args, paths);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("JSON output does not parse: {e}\nstderr: {}", r.stderr));
    let findings = doc["findings"].as_array().expect("findings array").clone();
    (r.code, findings, doc)
}

fn with_code<'a>(findings: &'a [Value], code: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["code"] == code).collect()
}

fn file_name(f: &Value) -> String {
    f["file"]
        .as_str()
        .and_then(|p| Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A fresh copy of a capture (or one broker of it) under the temp directory.
struct Copy {
    root: PathBuf,
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn copy_dir(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            copy_dir(&e.path(), &to);
        } else if ft.is_file() {
            fs::copy(e.path(), &to).unwrap();
            // Copies of read-only files must stay writable for the test.
            let mut perm = fs::metadata(&to).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            fs::set_permissions(&to, perm).unwrap();
        }
    }
}

fn copy_capture(name: &str) -> Copy {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let root = std::env::temp_dir().join(format!(
        "klf-check-test-{}-{n}-{}",
        std::process::id(),
        name.replace('/', "-")
    ));
    let _ = fs::remove_dir_all(&root);
    copy_dir(&kafka(name), &root);
    Copy { root }
}

/// Start positions of the entries of a segment (walks size fields).
fn entry_positions(log: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut p = 0usize;
    while p + 17 <= log.len() {
        let size = i32::from_be_bytes(log[p + 8..p + 12].try_into().unwrap());
        if size < 14 || p + 12 + size as usize > log.len() {
            break;
        }
        v.push(p);
        p += 12 + size as usize;
    }
    v
}

fn base_offset_at(log: &[u8], p: usize) -> i64 {
    i64::from_be_bytes(log[p..p + 8].try_into().unwrap())
}

/// Segment `.log` files of a partition directory, by base offset.
fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    v.sort();
    v
}

fn scenario(name: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(kafka(name).join("scenario.json")).unwrap()).unwrap()
}

#[test]
fn clean_captures_pass() {
    let clean = [
        "codecs",
        "transactions",
        "compaction",
        "elections",
        "internal-topics",
        "legacy-formats",
        "follower-returns/after",
        "divergence/after",
        "double-divergence/after",
        "lag-window/after",
        "unclean/after",
    ];
    let mut checked = 0;
    for name in clean {
        let dir = kafka(name);
        assert!(dir.exists(), "{name}: a committed capture is missing");
        checked += 1;
        let (code, findings, doc) = check_json(&[&dir], &[]);
        let errors: Vec<&Value> = findings
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(
            errors.is_empty(),
            "{name}: errors on a clean capture: {errors:#?}"
        );
        assert_eq!(code, Some(0), "{name}: exit code");
        assert!(
            doc["summary"]["batches"].as_u64().unwrap() > 0,
            "{name}: read batches"
        );
        assert_eq!(doc["summary"]["errors"], 0);
    }
    assert!(checked >= 6, "most clean captures are present");
}

#[test]
fn legacy_formats_have_no_epoch_findings() {
    let (code, findings, doc) = check_json(&[&kafka("legacy-formats")], &["--fail-on", "warning"]);
    assert_eq!(code, Some(0), "{findings:#?}");
    assert!(doc["summary"]["partitions"].as_u64().unwrap() >= 8);
    assert!(findings.iter().all(|f| f["family"] != "epochs"));
}

#[test]
fn divergence_reports_the_old_leaders_uncommitted_tail() {
    let s = scenario("divergence");
    let phases = &s["partitions"][0]["acked_by_phase"];
    let old_leader = phases["old_leader_acks_1"]["leader"].as_i64().unwrap();
    let new_leader = phases["new_leader_acks_all"]["leader"].as_i64().unwrap();
    let (code, findings, _) = check_json(&[&kafka("divergence")], &[]);
    assert_eq!(
        code,
        Some(0),
        "an uncommitted tail is a warning: {findings:#?}"
    );
    let tails = with_code(&findings, "divergent-tail");
    assert_eq!(tails.len(), 1, "{findings:#?}");
    let t = tails[0];
    assert_eq!(t["broker"].as_i64(), Some(old_leader));
    assert_eq!(t["severity"], "info");
    assert!(t["file"].as_str().unwrap().ends_with(".log"));
    assert!(t["position"].as_u64().is_some());
    // The partition's loss, once: where Kafka truncated the old leader (the
    // new leader's epoch began there), none of it committed.
    let lost = with_code(&findings, "uncommitted-records-lost");
    assert_eq!(lost.len(), 1, "{findings:#?}");
    assert_eq!(lost[0]["severity"], "warning");
    assert!(lost[0]["broker"].is_null(), "a partition-level finding");
    let truncated_to = s["partitions"][0]["kafka_truncation"][old_leader.to_string()]
        ["truncated_to"]
        .as_i64()
        .unwrap();
    assert_eq!(t["offset"].as_i64(), Some(truncated_to));
    assert_eq!(lost[0]["offset"].as_i64(), Some(truncated_to));
    assert!(with_code(&findings, "committed-records-lost").is_empty());
    assert!(with_code(&findings, "possibly-committed-records-lost").is_empty());
    assert_ne!(old_leader, new_leader);
    // --fail-on warning turns it into a failure.
    let (code, _, _) = check_json(&[&kafka("divergence")], &["--fail-on", "warning"]);
    assert_eq!(code, Some(1));
}

#[test]
fn unclean_election_loses_committed_records() {
    let s = scenario("unclean");
    let p = &s["partitions"][0];
    let leader = p["leader_at_capture"].as_i64().unwrap();
    let (code, findings, _) = check_json(&[&kafka("unclean")], &[]);
    assert_eq!(code, Some(1));
    let lost = with_code(&findings, "committed-records-lost");
    assert_eq!(lost.len(), 1, "counted once per partition: {findings:#?}");
    let f = lost[0];
    assert_eq!(f["severity"], "error");
    assert!(f["broker"].is_null());
    assert_eq!(f["topic"], p["topic"]);
    // Lost from where the unclean leader began writing.
    assert_eq!(
        f["offset"].as_i64(),
        p["leader_start_offset_at_capture"].as_i64()
    );
    // The check's reference and loss are diff's.
    let (_, _, doc) = check_json(&[&kafka("unclean")], &[]);
    let part = &doc["partitions"][0];
    assert_eq!(part["reference"]["broker"].as_i64(), Some(leader));
    assert_eq!(part["reference"]["reason"], "metadata_leader");
    let diff = klf_diff_json(&kafka("unclean"));
    assert_eq!(
        part["loss"]["records"],
        diff["partitions"][0]["loss"]["records"]
    );
    assert_eq!(
        part["loss"]["committed_proven"],
        diff["partitions"][0]["loss"]["committed_proven"]
    );
}

fn klf_diff_json(dir: &Path) -> Value {
    let out = klf(&["diff", "--format", "json", dir.to_str().unwrap()]);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn torn_write_shows_an_unclean_shutdown() {
    let dir = kafka("torn-write");
    assert!(
        dir.join("scenario.json").exists(),
        "the committed torn-write capture is missing"
    );
    let (_, findings, _) = check_json(&[&dir], &[]);
    let marks: Vec<&Value> = findings
        .iter()
        .filter(|f| {
            [
                "index-preallocated",
                "segment-torn-tail",
                "recovery-point-behind-log-end",
            ]
            .contains(&f["code"].as_str().unwrap_or(""))
        })
        .collect();
    assert!(!marks.is_empty(), "{findings:#?}");
    // Kafka rebuilds these indexes on its next start: a fact, not a fault
    for f in with_code(&findings, "index-preallocated") {
        assert_eq!(f["severity"], "info");
    }
}

/// Index entries Kafka left after the valid prefix (a follower's
/// truncation moved the index back without clearing the bytes after it:
/// broker 2 of `lag-window`) are leftovers while Kafka rebuilds the
/// segment's indexes on its next start, and errors once the broker is
/// marked as having shut down cleanly (Kafka then reads the index as it
/// stands). The same bytes, read two ways by what Kafka will do.
#[test]
fn index_leftovers_count_only_where_kafka_reads_the_index() {
    let c = copy_capture("lag-window");
    let index = c.root.join("broker-2/lag-0/00000000000000000000.index");
    let (code, findings, _) = check_json(&[&c.root], &[]);
    let of_index = |findings: &[Value], name: &str| -> Vec<(String, String)> {
        findings
            .iter()
            .filter(|f| f["broker"] == 2 && f["topic"] == "lag" && file_name(f) == name)
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let name = index.file_name().unwrap().to_string_lossy().into_owned();
    let mut lenient = of_index(&findings, &name);
    lenient.sort();
    assert_eq!(
        lenient,
        [
            ("index-preallocated".to_string(), "info".to_string()),
            ("index-stale-entries".to_string(), "info".to_string())
        ],
        "{findings:#?}"
    );
    let stale = findings
        .iter()
        .find(|f| f["code"] == "index-stale-entries" && file_name(f) == name)
        .unwrap();
    assert!(
        stale["message"]
            .as_str()
            .unwrap()
            .starts_with("1 entry from entry 2 on is a leftover that does not fit the log"),
        "{stale}"
    );
    assert_eq!(code, Some(0), "leftovers alone never fail the gate");

    // the broker marked as shut down cleanly: Kafka would read every slot
    fs::write(c.root.join("broker-2/.kafka_cleanshutdown"), b"").unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    let strict = of_index(&findings, &name);
    assert!(
        strict.contains(&("index-untrimmed".to_string(), "warning".to_string()))
            && strict.contains(&("index-outside-segment".to_string(), "error".to_string())),
        "{findings:#?}"
    );
    assert_eq!(code, Some(1));
}

/// Every code `klf check` emits is in docs/findings.md with its severity.
#[test]
fn every_code_is_documented_with_its_severity() {
    let doc = fs::read_to_string(super::common::root().join("docs/findings.md")).unwrap();
    for c in klf::analysis::check::CHECKS {
        let row = format!("| `{}` | {} |", c.code, c.severity.name());
        assert!(doc.contains(&row), "docs/findings.md lacks {row}");
    }
}

#[test]
fn flipped_byte_in_a_batch_is_a_crc_mismatch() {
    let c = copy_capture("codecs");
    let dir = c.root.join("broker-1/codec-none-0");
    let seg = &segments(&dir)[0];
    let mut log = fs::read(seg).unwrap();
    let pos = entry_positions(&log)[2];
    let offset = base_offset_at(&log, pos);
    log[pos + 70] ^= 0x40;
    fs::write(seg, &log).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "batch-crc-mismatch");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 1);
    assert_eq!(f[0]["topic"], "codec-none");
    assert_eq!(file_name(f[0]), seg.file_name().unwrap().to_string_lossy());
    assert_eq!(f[0]["position"].as_u64(), Some(pos as u64));
    assert_eq!(f[0]["offset"].as_i64(), Some(offset));
    // Index entries past the damage are not blamed for it.
    let index_errors: Vec<&Value> = findings
        .iter()
        .filter(|f| f["family"] == "indexes" && f["severity"] == "error")
        .collect();
    assert!(index_errors.is_empty(), "{index_errors:#?}");
}

#[test]
fn segment_renamed_above_its_first_offset() {
    let c = copy_capture("codecs");
    let dir = c.root.join("broker-1/codec-none-0");
    let segs = segments(&dir);
    let seg = &segs[1];
    let log = fs::read(seg).unwrap();
    let first = base_offset_at(&log, 0);
    let stem = format!("{:020}", first);
    assert_eq!(seg.file_stem().unwrap().to_str(), Some(stem.as_str()));
    let renamed = format!("{:020}", first + 1);
    for ext in ["log", "index", "timeindex"] {
        let from = dir.join(format!("{stem}.{ext}"));
        if from.exists() {
            fs::rename(&from, dir.join(format!("{renamed}.{ext}"))).unwrap();
        }
    }
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "segment-name-mismatch");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(file_name(f[0]), format!("{renamed}.log"));
    assert_eq!(f[0]["offset"].as_i64(), Some(first));
    assert_eq!(f[0]["position"].as_u64(), Some(0));
}

#[test]
fn txn_index_entry_off_its_abort_marker() {
    let c = copy_capture("transactions");
    let path = c.root.join("broker-1/txn-0/00000000000000000000.txnindex");
    let mut idx = fs::read(&path).unwrap();
    assert!(idx.len() >= 2 * 34, "aborted transactions are indexed");
    // Move the second entry's abort marker one offset back, onto a data batch.
    let last = i64::from_be_bytes(idx[34 + 18..34 + 26].try_into().unwrap());
    idx[34 + 18..34 + 26].copy_from_slice(&(last - 1).to_be_bytes());
    fs::write(&path, &idx).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "txn-index-invalid");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 1);
    assert_eq!(file_name(f[0]), "00000000000000000000.txnindex");
    assert_eq!(f[0]["position"].as_u64(), Some(34));
    assert_eq!(f[0]["offset"].as_i64(), Some(last - 1));
}

#[test]
fn index_entry_pointing_elsewhere_is_reported() {
    let c = copy_capture("codecs");
    let dir = c.root.join("broker-1/codec-none-0");
    let index = dir.join("00000000000000000000.index");
    let mut idx = fs::read(&index).unwrap();
    assert!(idx.len() >= 8);
    let p = i32::from_be_bytes(idx[4..8].try_into().unwrap());
    idx[4..8].copy_from_slice(&(p + 7).to_be_bytes());
    fs::write(&index, &idx).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "index-entry-mismatch");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(file_name(f[0]), "00000000000000000000.index");
    assert_eq!(f[0]["broker"], 1);
    assert_eq!(f[0]["position"].as_u64(), Some(0));
    let rel = i32::from_be_bytes(idx[0..4].try_into().unwrap());
    assert_eq!(f[0]["offset"].as_i64(), Some(i64::from(rel)));
}

#[test]
fn a_time_index_going_back_in_time_names_both_times() {
    // two entries of a real time index swapped: the finding carries the
    // times as a person reads them beside Kafka's milliseconds
    let c = copy_capture("impact");
    let ti = c
        .root
        .join("broker-1/orders-0/00000000000000000000.timeindex");
    let mut b = fs::read(&ti).unwrap();
    let ts = |b: &[u8], i: usize| i64::from_be_bytes(b[i * 12..i * 12 + 8].try_into().unwrap());
    assert!(ts(&b, 2) > ts(&b, 1), "a rising index");
    let (first, second) = (ts(&b, 1), ts(&b, 2));
    let (head, tail) = b.split_at_mut(24);
    head[12..24].swap_with_slice(&mut tail[..12]);
    fs::write(&ti, &b).unwrap();
    // on a broker that shut down cleanly Kafka reads the index as it
    // stands (without the marker it rebuilds the segment's indexes on its
    // next start, and the swap is a leftover: see the next test)
    fs::write(c.root.join("broker-1/.kafka_cleanshutdown"), b"").unwrap();
    let (_, findings, _) = check_json(&[&c.root], &[]);
    let f = with_code(&findings, "index-not-monotonic");
    assert_eq!(f.len(), 1, "{findings:#?}");
    let msg = f[0]["message"].as_str().unwrap();
    for t in [first, second] {
        let iso = klf::format::text::iso_time(t).unwrap();
        assert!(msg.contains(&format!("{iso} ({t})")), "{msg}");
    }
}

#[test]
fn leader_epoch_checkpoint_line_removed() {
    let c = copy_capture("elections");
    let cp = c.root.join("broker-2/elect-0/leader-epoch-checkpoint");
    let text = fs::read_to_string(&cp).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let count: usize = lines[1].parse().unwrap();
    assert!(count >= 3);
    // Drop the second entry and fix the count: Kafka reads the file, but
    // the epoch's batches have no entry.
    let removed: Vec<i64> = lines[3]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let mut out = format!("0\n{}\n", count - 1);
    for (i, l) in lines[2..].iter().enumerate() {
        if i != 1 {
            out.push_str(l);
            out.push('\n');
        }
    }
    fs::write(&cp, out).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(
        code,
        Some(0),
        "a checkpoint that lags is a warning: {findings:#?}"
    );
    let f = with_code(&findings, "epoch-missing-from-checkpoint");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 2);
    assert_eq!(file_name(f[0]), "leader-epoch-checkpoint");
    assert_eq!(f[0]["offset"].as_i64(), Some(removed[1]));
    assert!(f[0]["message"]
        .as_str()
        .unwrap()
        .contains(&format!("epoch {}", removed[0])));

    // Without fixing the count Kafka cannot read the file at all.
    let c2 = copy_capture("elections");
    let cp2 = c2.root.join("broker-3/elect-0/leader-epoch-checkpoint");
    let mut kept: Vec<&str> = lines.clone();
    kept.remove(3);
    fs::write(&cp2, kept.join("\n") + "\n").unwrap();
    let (code, findings, _) = check_json(&[&c2.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "checkpoint-unreadable");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 3);
    assert_eq!(f[0]["topic"], "elect");
    assert_eq!(file_name(f[0]), "leader-epoch-checkpoint");
}

#[test]
fn leader_epoch_checkpoint_past_the_log_end() {
    let c = copy_capture("elections");
    let dir = c.root.join("broker-1/elect-0");
    let cp = dir.join("leader-epoch-checkpoint");
    let text = fs::read_to_string(&cp).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let count: usize = lines[1].parse().unwrap();
    let last_epoch: i32 = lines[1 + count]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    lines[1] = (count + 1).to_string();
    lines.push(format!("{} 100000", last_epoch + 1));
    fs::write(&cp, lines.join("\n") + "\n").unwrap();
    let (_, findings, _) = check_json(&[&c.root], &[]);
    let f = with_code(&findings, "checkpoint-past-log-end");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 1);
    assert_eq!(file_name(f[0]), "leader-epoch-checkpoint");
    assert!(f[0]["message"].as_str().unwrap().contains("100000"));
}

#[test]
fn batch_changed_below_the_high_watermark_breaks_log_matching() {
    let c = copy_capture("codecs");
    let dir = c.root.join("broker-3/codec-none-0");
    let seg = &segments(&dir)[0];
    let mut log = fs::read(seg).unwrap();
    let pos = entry_positions(&log)[3];
    let offset = base_offset_at(&log, pos);
    let size = i32::from_be_bytes(log[pos + 8..pos + 12].try_into().unwrap()) as usize;
    // Change the last byte of the batch (inside a record value) and fix the
    // CRC-32C so the batch is valid on its own.
    let end = pos + 12 + size;
    log[end - 1] ^= 0x01;
    let crc = crc32c::crc32c(&log[pos + 21..end]);
    log[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
    fs::write(seg, &log).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    assert!(with_code(&findings, "batch-crc-mismatch").is_empty());
    let f: Vec<&Value> = with_code(&findings, "log-matching-violation")
        .into_iter()
        .filter(|f| f["topic"] == "codec-none")
        .collect();
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 3);
    assert_eq!(f[0]["offset"].as_i64(), Some(offset));
    assert_eq!(f[0]["position"].as_u64(), Some(pos as u64));
    assert_eq!(file_name(f[0]), seg.file_name().unwrap().to_string_lossy());
    // The same when the replicas are streamed (as large ones are): the
    // fingerprints differ, and a merge of the streams finds where.
    let run = |env: Option<&str>| {
        let mut cmd = std::process::Command::new(crate::common::KLF);
        cmd.args(["check", "--format", "json"]).arg(&c.root);
        if let Some(v) = env {
            cmd.env("KLF_KEEP_LOG_BYTES", v);
        }
        cmd.output().expect("run klf").stdout
    };
    assert_eq!(run(None), run(Some("0")));
}

#[test]
fn truncated_last_segment_is_a_torn_tail() {
    let c = copy_capture("codecs");
    let dir = c.root.join("broker-2/codec-none-0");
    let segs = segments(&dir);
    let seg = segs.last().unwrap();
    let log = fs::read(seg).unwrap();
    let positions = entry_positions(&log);
    let last = *positions.last().unwrap();
    let cut = log.len() - 5;
    fs::write(seg, &log[..cut]).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    let f = with_code(&findings, "segment-torn-tail");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(f[0]["broker"], 2);
    assert_eq!(f[0]["position"].as_u64(), Some(last as u64));
    assert!(f[0]["message"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{} bytes", cut - last)));
    // The cut batch was below the high watermark: committed data is gone.
    assert_eq!(code, Some(1));
    let hw = with_code(&findings, "high-watermark-beyond-log-end");
    assert_eq!(hw.len(), 1, "{findings:#?}");
    assert_eq!(hw[0]["broker"], 2);
    assert_eq!(hw[0]["topic"], "codec-none");
    assert_eq!(hw[0]["offset"].as_i64(), Some(183));

    // The same cut in a segment that is not the last is an error.
    let first = &segs[0];
    let log = fs::read(first).unwrap();
    fs::write(first, &log[..log.len() - 5]).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "segment-torn-middle");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(
        file_name(f[0]),
        first.file_name().unwrap().to_string_lossy()
    );
}

#[test]
fn partition_directory_alone_is_checked() {
    let dir = kafka("codecs/broker-1/codec-zstd-0");
    let (code, findings, doc) = check_json(&[&dir], &[]);
    assert_eq!(code, Some(0), "{findings:#?}");
    assert_eq!(doc["summary"]["replicas"], 1);
    assert_eq!(doc["summary"]["partitions"], 1);
}

/// Minimal XML well-formedness: balanced tags, quoted attributes, no raw `<`
/// or `&` in text. Returns (testcase count, failure count).
fn parse_xml(s: &str) -> (usize, usize) {
    let body = s
        .strip_prefix(r#"<?xml version="1.0" encoding="UTF-8"?>"#)
        .expect("XML declaration");
    let mut stack: Vec<String> = Vec::new();
    let (mut cases, mut failures) = (0, 0);
    let mut rest = body;
    while let Some(i) = rest.find(['<', '&']) {
        let text = &rest[..i];
        assert!(
            !text.contains('>') || !stack.is_empty(),
            "stray text {text:?}"
        );
        rest = &rest[i..];
        if rest.starts_with('&') {
            let end = rest.find(';').expect("entity end");
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#39;"].contains(&&rest[..=end]),
                "bad entity {}",
                &rest[..=end]
            );
            rest = &rest[end + 1..];
            continue;
        }
        let end = rest.find('>').expect("tag end");
        let tag = &rest[1..end];
        assert!(!tag.contains('<'), "bad tag {tag}");
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes in {tag}"
        );
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
        } else {
            let name = tag.split_whitespace().next().unwrap().trim_end_matches('/');
            match name {
                "testcase" => cases += 1,
                "failure" => failures += 1,
                _ => {}
            }
            if !tag.ends_with('/') {
                stack.push(name.to_string());
            }
        }
        rest = &rest[end + 1..];
    }
    assert!(rest.trim().is_empty());
    assert!(stack.is_empty(), "unclosed {stack:?}");
    (cases, failures)
}

#[test]
fn junit_is_well_formed_and_fails_where_findings_are() {
    let r = check_run(&["--format", "junit"], &[&kafka("unclean")]);
    assert_eq!(r.code, Some(1));
    let (cases, failures) = parse_xml(&r.stdout);
    assert!(r.stdout.contains("<testsuites"));
    assert!(cases > 3 * 4, "a case per replica and family: {cases}");
    assert!(failures >= 1);
    assert!(r.stdout.contains("committed-records-lost"));
    let r = check_run(&["--format", "junit"], &[&kafka("codecs")]);
    assert_eq!(r.code, Some(0));
    let (cases, failures) = parse_xml(&r.stdout);
    assert!(cases > 5 * 3 * 4);
    assert_eq!(failures, 0);
}

#[test]
fn table_output_lists_codes_and_a_verdict() {
    let r = check_run(&[], &[&kafka("unclean")]);
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("committed-records-lost"));
    assert!(r.stdout.contains("FAIL"));
    let r = check_run(&[], &[&kafka("legacy-formats")]);
    assert_eq!(r.code, Some(0));
    assert!(r.stdout.contains("PASS"));
}

#[test]
fn baseline_round_trip() {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let file = std::env::temp_dir().join(format!(
        "klf-check-baseline-{}-{n}.json",
        std::process::id()
    ));
    let b = file.to_str().unwrap();
    let r = check_run(&["--write-baseline", b], &[&kafka("unclean")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let written: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert!(written["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "committed-records-lost"));
    let (code, findings, doc) = check_json(&[&kafka("unclean")], &["--baseline", b]);
    assert_eq!(code, Some(0), "{findings:#?}");
    assert!(doc["summary"]["baselined"].as_u64().unwrap() > 0);
    assert!(findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .all(|f| f["baselined"] == true));
    // A baseline of one capture does not hide a new problem.
    let c = copy_capture("unclean");
    let seg = segments(&c.root.join("broker-3/unclean-0"))[0].clone();
    let mut log = fs::read(&seg).unwrap();
    let pos = entry_positions(&log)[1];
    log[pos + 80] ^= 0xff;
    fs::write(&seg, &log).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &["--baseline", b]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "batch-crc-mismatch");
    assert_eq!(f.len(), 1);
    assert_ne!(f[0]["baselined"], true);
    let _ = fs::remove_file(&file);
}

#[test]
fn usage_and_io_errors_exit_2() {
    let r = check_run(&[], &[Path::new("/nonexistent/klf/capture")]);
    assert_eq!(r.code, Some(2));
    assert!(r.stdout.is_empty());
    assert!(!r.stderr.is_empty());
    let r = check_run(
        &["--baseline", "/nonexistent/klf/baseline.json"],
        &[&kafka("codecs")],
    );
    assert_eq!(r.code, Some(2));
    let r = check_run(&["--fail-on", "sometimes"], &[&kafka("codecs")]);
    assert_eq!(r.code, Some(2));
}

#[test]
fn unclean_election_is_reported_from_the_metadata_log() {
    let s = scenario("unclean");
    let p = &s["partitions"][0];
    let (_, findings, _) = check_json(&[&kafka("unclean")], &[]);
    let f = with_code(&findings, "unclean-election");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(f[0]["topic"], p["topic"]);
    assert!(f[0]["message"].as_str().unwrap().contains(&format!(
        "broker {} leader in epoch {}",
        p["leader_at_capture"], p["leader_epoch_at_capture"]
    )));
    // clean leader changes are not unclean
    let (_, findings, _) = check_json(&[&kafka("elections")], &[]);
    assert!(with_code(&findings, "unclean-election").is_empty());
}

#[test]
fn replica_epoch_the_controller_never_assigned() {
    let c = copy_capture("elections");
    let dir = c.root.join("broker-2/elect-0");
    let seg = segments(&dir).last().unwrap().clone();
    let mut log = fs::read(&seg).unwrap();
    let pos = *entry_positions(&log).last().unwrap();
    let offset = base_offset_at(&log, pos);
    let size = i32::from_be_bytes(log[pos + 8..pos + 12].try_into().unwrap()) as usize;
    // partitionLeaderEpoch (bytes 12..16 of the batch) far above any epoch
    // the controller assigned; CRC-32C fixed so the batch is valid.
    log[pos + 12..pos + 16].copy_from_slice(&999i32.to_be_bytes());
    let crc = crc32c::crc32c(&log[pos + 21..pos + 12 + size]);
    log[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
    fs::write(&seg, &log).unwrap();
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "epoch-beyond-controller");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 2);
    assert_eq!(f[0]["offset"].as_i64(), Some(offset));
    assert_eq!(f[0]["position"].as_u64(), Some(pos as u64));
    assert_eq!(file_name(f[0]), seg.file_name().unwrap().to_string_lossy());
}

#[test]
fn transaction_left_open_by_the_producer_is_reported() {
    // klf-txn-2 exited in the middle of a transaction (scenario.json: open 3)
    let s = scenario("transactions");
    let p = &s["partitions"][0];
    assert_eq!(p["transactions"]["klf-txn-2"]["open"].as_i64(), Some(3));
    let (code, findings, _) = check_json(&[&kafka("transactions")], &[]);
    assert_eq!(
        code,
        Some(0),
        "an open transaction is information, not a failure"
    );
    let f = with_code(&findings, "transaction-open");
    let brokers: Vec<i64> = f.iter().filter_map(|f| f["broker"].as_i64()).collect();
    assert_eq!(brokers.len(), 3, "{f:#?}");
    // the same offset on every replica
    assert!(f.windows(2).all(|w| w[0]["offset"] == w[1]["offset"]));
}

#[test]
fn corrupt_producer_snapshot_is_refused() {
    let c = copy_capture("transactions");
    let dir = c.root.join("broker-1/txn-0");
    let mut snaps: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "snapshot") && fs::metadata(p).unwrap().len() > 10
        })
        .collect();
    snaps.sort();
    let snap = snaps.last().expect("a non-empty producer snapshot").clone();
    let mut data = fs::read(&snap).unwrap();
    let last = data.len() - 1;
    data[last] ^= 0x40;
    fs::write(&snap, &data).unwrap();
    // Kafka deletes such a snapshot on load and rebuilds producer state
    // from an earlier one and the log: a warning, not damage
    let (code, findings, _) = check_json(&[&c.root], &[]);
    assert_eq!(code, Some(0), "{findings:#?}");
    let (code, findings, _) = check_json(&[&c.root], &["--fail-on", "warning"]);
    assert_eq!(code, Some(1));
    let f = with_code(&findings, "producer-snapshot-invalid");
    assert_eq!(f.len(), 1, "{findings:#?}");
    assert_eq!(f[0]["broker"], 1);
    assert_eq!(f[0]["severity"], "warning");
    assert_eq!(file_name(f[0]), snap.file_name().unwrap().to_string_lossy());
    // an empty one (a broker killed while writing it) is the same finding,
    // and only that one
    fs::write(&snap, b"").unwrap();
    let (_, findings, _) = check_json(&[&c.root], &[]);
    let about: Vec<&Value> = findings
        .iter()
        .filter(|f| file_name(f) == snap.file_name().unwrap().to_string_lossy())
        .filter(|f| f["severity"] != "info")
        .collect();
    assert_eq!(about.len(), 1, "{about:#?}");
    assert_eq!(about[0]["code"], "producer-snapshot-invalid");
}

/// A replica too large to keep its batches in memory is checked another
/// way: its segments streamed again, the log-matching rule by fingerprint
/// and, where fingerprints differ, a merge of the replicas' streams, the
/// diff over the window where replicas can differ. `KLF_KEEP_LOG_BYTES=0`
/// sends every replica that way; on every capture (and the same again
/// reading files a kilobyte at a time, unmapped) the report is the same,
/// byte for byte, as the in-memory way's.
#[test]
fn large_replica_way_reports_the_same_as_the_small_one() {
    let mut dirs = Vec::new();
    for c in crate::common::captures() {
        dirs.push(c.clone());
        if c.join("after").is_dir() {
            dirs.push(c.join("after"));
        }
    }
    let run = |dir: &Path, env: &[(&str, &str)], extra: &[&str]| {
        let mut cmd = klf_command();
        cmd.args(extra).args(["check", "--format", "json"]).arg(dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = finish(&mut cmd);
        (out.status.code(), out.stdout)
    };
    let mut compared = 0;
    for d in &dirs {
        let small = run(d, &[], &[]);
        let large = run(d, &[("KLF_KEEP_LOG_BYTES", "0")], &[]);
        assert_eq!(small, large, "{}", d.display());
        compared += 1;
    }
    // streamed through the unmapped reader, a kilobyte at a time
    for d in dirs.iter().take(6) {
        let small = run(d, &[], &[]);
        let large = run(
            d,
            &[("KLF_KEEP_LOG_BYTES", "0"), ("KLF_READ_WINDOW", "1K")],
            &["--no-mmap"],
        );
        assert_eq!(small, large, "{} (unmapped)", d.display());
    }
    assert!(compared > 20, "{compared}");
}
