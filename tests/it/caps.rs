//! klf's caps on what it reads (docs/hostile-input.md): a properties or
//! state file over 1 MiB, a checkpoint with a line over 4 KiB or more than
//! 1,000,000 entries is not read (a warning, `file-too-large` in `check`,
//! a problem in `dump`, exit 1, never 0); below the caps a large checkpoint
//! costs little memory, and `dump` streams it. Every file is built in a
//! scratch copy of a real capture, sparse where it is large.

use std::fs;
use std::path::{Path, PathBuf};

use super::common::{copy_tree, kafka, klf, klf_measured, scratch, text};

/// A copy of the divergence capture's three brokers under `tag`.
fn capture(tag: &str) -> PathBuf {
    let dir = scratch(tag);
    for b in ["broker-1", "broker-2", "broker-3"] {
        copy_tree(&kafka("divergence").join(b), &dir.join(b));
    }
    dir
}

/// Makes `path` `len` bytes long, the bytes past its content a hole.
fn sparse(path: &Path, len: u64) {
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `klf check --format json`: exit code and (code, file, message) of each finding.
fn check(dir: &Path) -> (Option<i32>, Vec<(String, String, String)>) {
    let o = klf(&["check", "--format", "json", s(dir)]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let findings = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let field = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (field("code"), field("file"), field("message"))
        })
        .collect();
    (o.status.code(), findings)
}

/// The objects `klf dump --format json FILE` writes, its exit code and stderr.
fn dump_json(file: &Path) -> (Option<i32>, Vec<serde_json::Value>, String) {
    let o = klf(&["dump", "--format", "json", s(file)]);
    let objs = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (o.status.code(), objs, text(&o.stderr))
}

#[test]
fn properties_and_state_files_over_the_cap_are_not_read() {
    let dir = capture("caps-props");
    const GIB: u64 = 1 << 30;
    let meta = dir.join("broker-2/meta.properties");
    let pm = dir.join("broker-3/diverge-0/partition.metadata");
    let marker = dir.join("broker-1/.kafka_cleanshutdown");
    sparse(&meta, GIB);
    sparse(&pm, GIB);
    sparse(&marker, 2 << 20);

    let (code, findings) = check(&dir);
    assert_eq!(code, Some(1), "{findings:#?}");
    for (f, len) in [(&meta, GIB), (&pm, GIB), (&marker, 2 << 20)] {
        let hits: Vec<_> = findings
            .iter()
            .filter(|(c, file, _)| c == "file-too-large" && file.ends_with(s(f)))
            .collect();
        assert_eq!(hits.len(), 1, "{f:?}: {findings:#?}");
        let want = format!("not read: {len} bytes, over klf's cap of 1048576 bytes");
        assert!(hits[0].2.starts_with(&want), "{}", hits[0].2);
    }
    // Read as a file Kafka could not use: the node id from the folder name.
    assert!(
        findings
            .iter()
            .any(|(_, _, m)| m.contains("node id 2 taken from the folder name")),
        "{findings:#?}"
    );

    // Every command says so and exits 1, in little memory and time.
    for cmd in ["check", "diff", "timeline", "elect"] {
        let t = std::time::Instant::now();
        let run = klf_measured(&[cmd, s(&dir)]);
        assert_eq!(run.code, Some(1), "{cmd}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("klf: 3 files left unread, over klf's caps"),
            "{cmd}: {}",
            run.stderr
        );
        assert!(
            run.max_rss_kib < 64 * 1024,
            "{cmd}: {} KiB",
            run.max_rss_kib
        );
        assert!(t.elapsed().as_secs() < 20, "{cmd}: {:?}", t.elapsed());
    }

    // dump says the same for each file, and exits 1.
    for f in [&meta, &pm, &marker] {
        let (code, objs, stderr) = dump_json(f);
        assert_eq!(code, Some(1), "{stderr}");
        let problems: Vec<_> = objs.iter().filter(|v| v["type"] == "problem").collect();
        assert_eq!(problems.len(), 1, "{objs:?}");
        assert_eq!(problems[0]["position"], 0);
        let reason = problems[0]["reason"].as_str().unwrap();
        assert!(
            reason.contains("over klf's cap of 1048576 bytes"),
            "{reason}"
        );
        assert!(
            stderr.contains(&format!("{}:0: not read: ", s(f))),
            "{stderr}"
        );
        let o = klf(&["dump", "--format", "table", s(f)]);
        assert_eq!(o.status.code(), Some(1));
    }
    let run = klf_measured(&["dump", "--format", "json", s(&meta)]);
    assert!(run.max_rss_kib < 64 * 1024, "{} KiB", run.max_rss_kib);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn checkpoints_over_the_cap_are_not_read() {
    let dir = capture("caps-checkpoints");
    // A line longer than any Kafka writes: a gigabyte of zeros after the
    // entries.
    let rp = dir.join("broker-2/recovery-point-offset-checkpoint");
    sparse(&rp, 1 << 30);
    // One entry more than the cap.
    let lec = dir.join("broker-3/diverge-0/leader-epoch-checkpoint");
    let n = 1_000_001;
    let mut body = format!("0\n{n}\n").into_bytes();
    body.extend(b"0 0\n".repeat(n));
    fs::write(&lec, &body).unwrap();

    let (code, findings) = check(&dir);
    assert_eq!(code, Some(1));
    let message = |f: &Path| {
        findings
            .iter()
            .find(|(c, file, _)| c == "file-too-large" && file.ends_with(s(f)))
            .map(|x| x.2.clone())
            .unwrap_or_else(|| panic!("{f:?}: {findings:#?}"))
    };
    assert!(
        message(&rp).starts_with("not read: line 4 is longer than 4096 bytes"),
        "{}",
        message(&rp)
    );
    assert!(
        message(&lec).starts_with(
            "not read: more than 1000000 entries (its count line says 1000001), over klf's cap of 1000000 entries"
        ),
        "{}",
        message(&lec)
    );
    // The epochs come from the batches, as without a checkpoint.
    assert!(
        findings
            .iter()
            .any(|(c, file, _)| c == "checkpoint-missing" && file.ends_with(s(&lec))),
        "{findings:#?}"
    );

    for f in [&rp, &lec] {
        let t = std::time::Instant::now();
        let run = klf_measured(&["dump", "--format", "json", s(f)]);
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert!(run.stderr.contains(": not read: "), "{}", run.stderr);
        assert!(run.max_rss_kib < 64 * 1024, "{} KiB", run.max_rss_kib);
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A `leader-epoch-checkpoint` of `n` entries `i i` (past the log end from
/// the 165th on, as the reproducer).
fn epochs(path: &Path, n: usize) {
    let mut body = format!("0\n{n}\n");
    for i in 0..n {
        body.push_str(&format!("{i} {i}\n"));
    }
    fs::write(path, body).unwrap();
}

/// An offset checkpoint of `n` entries, one per partition.
fn offsets(path: &Path, n: usize) {
    let mut body = format!("0\n{n}\n");
    for i in 0..n {
        body.push_str(&format!("topic-{} {} {i}\n", i / 64, i % 64));
    }
    fs::write(path, body).unwrap();
}

#[test]
fn dump_streams_large_checkpoints() {
    let dir = capture("caps-dump");
    let small = dir.join("broker-1/diverge-0/leader-epoch-checkpoint");
    let large = dir.join("broker-2/diverge-0/leader-epoch-checkpoint");
    epochs(&small, 1_000);
    epochs(&large, 25_000);
    let small_hw = dir.join("broker-1/replication-offset-checkpoint");
    let large_hw = dir.join("broker-2/replication-offset-checkpoint");
    offsets(&small_hw, 1_000);
    offsets(&large_hw, 15_000);
    // Each object is written as it is read: 24,000 more entries cost no
    // memory (they cost about 700 bytes each, 16 MiB, when every object
    // was held before any was written).
    let peak = |format: &str, f: &Path| {
        let run = klf_measured(&["dump", "--format", format, s(f)]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        run.max_rss_kib
    };
    for (format, a, b) in [
        ("json", &small, &large),
        ("table", &small, &large),
        ("json", &small_hw, &large_hw),
    ] {
        let (less, more) = (peak(format, a), peak(format, b));
        assert!(
            more - less < 4 * 1024,
            "{format}: {less} KiB for {a:?}, {more} KiB for {b:?}"
        );
    }
    let (code, objs, _) = dump_json(&small);
    assert_eq!(code, Some(0));
    assert_eq!(objs[1]["type"], "checkpoint");
    assert_eq!(objs[1]["entries"], 1_000);
    assert_eq!(objs.len(), 2 + 1_000);
    assert_eq!(objs[1_001]["epoch"], 999);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_large_epoch_checkpoint_costs_little_memory() {
    let dir = capture("caps-epochs");
    epochs(
        &dir.join("broker-2/diverge-0/leader-epoch-checkpoint"),
        100_000,
    );
    // Below the cap every command reads it: each keeps the epochs (16 to
    // 24 bytes each) and tells at most ten disagreements of a code and
    // twenty table rows of checkpoint-only epochs, counting the rest (about
    // 20 to 26 MiB for these 100,000 in the debug build; timeline's table
    // took 350 MiB, check 117 MiB before).
    let out = scratch("caps-epochs-report");
    let html = out.join("report.html");
    for args in [
        vec!["diff", s(&dir)],
        vec!["elect", s(&dir)],
        vec!["check", s(&dir)],
        vec!["report", s(&dir), "--html", s(&html)],
        vec!["timeline", s(&dir)],
        vec!["timeline", "--format", "json", s(&dir)],
    ] {
        let run = klf_measured(&args);
        assert!(matches!(run.code, Some(0 | 1)), "{args:?}: {}", run.stderr);
        assert!(
            run.max_rss_kib < 48 * 1024,
            "{args:?}: {} KiB",
            run.max_rss_kib
        );
    }
    let _ = fs::remove_dir_all(&dir);
    let _ = fs::remove_dir_all(&out);
}
