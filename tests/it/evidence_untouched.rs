//! Evidence is never modified: every subcommand, with every main flag
//! combination, leaves the capture it reads byte-identical (every file's
//! contents, size, modification time and permissions; no file or directory
//! created or removed). And the source opens nothing for writing but the
//! baseline file the user names.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use super::common::{finish, klf_command};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What is recorded of each entry of the tree.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    kind: &'static str,
    len: u64,
    mode: u32,
    modified: SystemTime,
    /// SHA-free but exact: the bytes themselves (the captures are small).
    bytes: Vec<u8>,
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let (kind, bytes) = if meta.is_dir() {
                stack.push(p.clone());
                ("dir", Vec::new())
            } else if meta.is_file() {
                ("file", std::fs::read(&p).unwrap())
            } else {
                ("other", Vec::new())
            };
            out.insert(
                p,
                Entry {
                    kind,
                    len: meta.len(),
                    mode: meta.mode(),
                    modified: meta.modified().unwrap(),
                    bytes,
                },
            );
        }
    }
    out
}

fn assert_same(before: &BTreeMap<PathBuf, Entry>, after: &BTreeMap<PathBuf, Entry>, what: &str) {
    let created: Vec<_> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    let removed: Vec<_> = before.keys().filter(|p| !after.contains_key(*p)).collect();
    assert!(created.is_empty(), "{what} created {created:?}");
    assert!(removed.is_empty(), "{what} removed {removed:?}");
    for (p, v) in before {
        let a = &after[p];
        assert!(
            a == v,
            "{what} changed {} ({} -> {} bytes, mode {:o} -> {:o}, mtime {:?} -> {:?})",
            p.display(),
            v.len,
            a.len,
            v.mode,
            a.mode,
            v.modified,
            a.modified
        );
    }
}

fn path_of(map: &BTreeMap<PathBuf, Entry>, pred: impl Fn(&str) -> bool) -> String {
    map.keys()
        .find(|p| pred(&p.to_string_lossy()))
        .unwrap_or_else(|| panic!("no such file in the capture"))
        .display()
        .to_string()
}

#[test]
fn every_subcommand_and_flag_leaves_the_capture_byte_identical() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka");
    // Two captures: replicas that diverged (with after/), and internal
    // topics (offsets, transactions, metadata decoders).
    let div = root.join("divergence");
    let int = root.join("internal-topics");
    let before_div = snapshot(&div);
    let before_int = snapshot(&int);
    // and the impact incident (coordinators' topics, producer snapshots)
    let imp = root.join("impact");
    let before_imp = snapshot(&imp);
    assert!(before_div.len() > 20 && before_int.len() > 20 && before_imp.len() > 20);
    let m = imp.display().to_string();
    let d = div.display().to_string();
    let i = int.display().to_string();
    let b1 = div.join("broker-1").display().to_string();
    let part = div.join("broker-1/diverge-0").display().to_string();
    let seg = path_of(&before_div, |p| {
        p.contains("broker-1/diverge-0/") && p.ends_with("00000000000000000000.log")
    });
    let index = seg.replace(".log", ".index");
    let tindex = seg.replace(".log", ".timeindex");
    let snap = path_of(&before_div, |p| {
        p.contains("broker-1/diverge-0/") && p.ends_with(".snapshot")
    });
    let epochs = div
        .join("broker-1/diverge-0/leader-epoch-checkpoint")
        .display()
        .to_string();
    let hw = div
        .join("broker-1/replication-offset-checkpoint")
        .display()
        .to_string();
    let offsets = path_of(&before_int, |p| {
        p.contains("broker-1/__consumer_offsets-0/") && p.ends_with(".log")
    });
    let txn = path_of(&before_int, |p| {
        p.contains("broker-1/__transaction_state-0/") && p.ends_with(".log")
    });
    let meta = path_of(&before_int, |p| {
        p.contains("broker-1/__cluster_metadata-0/") && p.ends_with(".log")
    });
    let out = std::env::temp_dir().join(format!("klf-evidence-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let baseline = out.join("baseline.json").display().to_string();
    let page = out.join("report.html").display().to_string();
    let node_digest = out.join("broker-1.klfd").display().to_string();
    let int_digest = out.join("int-1.klfd").display().to_string();

    let mut runs: Vec<Vec<&str>> = Vec::new();
    for fmt in ["kafka", "json", "table"] {
        runs.push(vec!["dump", "--format", fmt, &seg]);
        runs.push(vec![
            "dump",
            "--format",
            fmt,
            "--deep-iteration",
            "--print-data-log",
            &seg,
            &index,
            &tindex,
            &snap,
        ]);
        runs.push(vec!["dump", "--format", fmt, &part]);
        runs.push(vec!["dump", "--format", fmt, &b1]);
        runs.push(vec![
            "dump",
            "--format",
            fmt,
            "--resync",
            "--deep-iteration",
            &seg,
        ]);
        runs.push(vec!["dump", "--format", fmt, "--offsets-decoder", &offsets]);
        runs.push(vec![
            "dump",
            "--format",
            fmt,
            "--transaction-log-decoder",
            &txn,
        ]);
        runs.push(vec![
            "dump",
            "--format",
            fmt,
            "--cluster-metadata-decoder",
            &meta,
        ]);
    }
    runs.push(vec!["dump", "--format", "json", &epochs, &hw]);
    runs.push(vec![
        "dump",
        "--format",
        "kafka",
        "--index-sanity-check",
        &index,
        &tindex,
    ]);
    runs.push(vec![
        "dump",
        "--format",
        "kafka",
        "--verify-index-only",
        &index,
        &tindex,
    ]);
    runs.push(vec!["dump", "--format", "kafka", "--files", &seg]);
    runs.push(vec![
        "dump",
        "--format",
        "kafka",
        "--skip-record-metadata",
        "--print-data-log",
        &seg,
    ]);
    runs.push(vec![
        "dump",
        "--format",
        "kafka",
        "--max-decompressed-bytes",
        "100",
        "--deep-iteration",
        &seg,
    ]);
    runs.push(vec!["--no-mmap", "dump", "--format", "json", &d]);
    runs.push(vec!["dump", "--format", "json", &i]);
    for fmt in ["table", "json"] {
        runs.push(vec!["timeline", "--format", fmt, &d]);
        runs.push(vec!["diff", "--format", fmt, &d]);
        runs.push(vec!["diff", "--format", fmt, "--records", &d]);
        runs.push(vec!["diff", "--format", fmt, "--verify", &d]);
        runs.push(vec!["diff", "--format", fmt, "--records", "--explain", &d]);
        runs.push(vec![
            "diff",
            "--format",
            fmt,
            "--leader",
            "2",
            "--topic",
            "diverge",
            "--partition",
            "0",
            &d,
        ]);
        runs.push(vec!["timeline", "--format", fmt, &i]);
        runs.push(vec!["impact", "--format", fmt, &d]);
        runs.push(vec!["impact", "--format", fmt, "--fail-on", "never", &i]);
        runs.push(vec!["impact", "--format", fmt, &m]);
        runs.push(vec!["check", "--format", fmt, &m]);
    }
    for fmt in ["table", "json", "junit"] {
        runs.push(vec!["check", "--format", fmt, &d]);
        runs.push(vec!["check", "--format", fmt, "--fail-on", "warning", &i]);
    }
    runs.push(vec!["check", "--write-baseline", &baseline, &d]);
    runs.push(vec!["check", "--baseline", &baseline, &d]);
    runs.push(vec!["--no-mmap", "check", &d, &i]);
    runs.push(vec!["report", &d, "--html", &page]);
    runs.push(vec!["digest", &b1, "-o", &node_digest]);
    runs.push(vec!["digest", "--verify", "--threads", "1", &d, "-o", "-"]);
    runs.push(vec!["digest", &i, "-o", &int_digest]);
    runs.push(vec!["diff", &node_digest, &d]);
    runs.push(vec!["check", &int_digest]);
    runs.push(vec!["report", &d, "--html", "-"]);
    runs.push(vec!["report", &m, "--html", "-"]);
    runs.push(vec!["diff", "--explain", &m]);
    runs.push(vec!["elect", &m]);
    runs.push(vec!["elect", "--format", "json", &d]);
    let salvaged = out.join("salvaged").display().to_string();
    runs.push(vec!["salvage", &m, "--out", &salvaged, "--log"]);
    runs.push(vec!["salvage", &d, "--out", &salvaged, "--force"]);
    let inside_dir = format!("{d}/broker-1/salvaged");
    runs.push(vec!["salvage", &d, "--out", &inside_dir]);
    runs.push(vec![
        "diff",
        "--fail-on",
        "any",
        "--records",
        "--records-limit",
        "3",
        &d,
    ]);
    // Outputs the one output rule refuses: an input file, a path inside one.
    let inside_meta = format!("{d}/broker-1/meta.properties");
    let inside_new = format!("{d}/broker-1/new.json");
    runs.push(vec!["check", "--write-baseline", &inside_meta, &d]);
    runs.push(vec!["check", "--write-baseline", &inside_new, &d]);
    runs.push(vec!["report", &d, "--html", &inside_meta]);
    for args in &runs {
        let o = finish(klf_command().args(args));
        let code = o.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "klf {args:?} ended with {:?}",
            o.status
        );
        assert_same(&before_div, &snapshot(&div), &format!("klf {args:?}"));
        assert_same(&before_int, &snapshot(&int), &format!("klf {args:?}"));
        assert_same(&before_imp, &snapshot(&imp), &format!("klf {args:?}"));
    }
    assert!(
        Path::new(&baseline).exists(),
        "--write-baseline wrote nothing"
    );
    assert!(Path::new(&page).exists(), "report --html wrote nothing");
    std::fs::remove_dir_all(&out).unwrap();
}

/// The source opens files only for reading: the two writes are the
/// `--write-baseline` file of `klf check` and the page of `klf report
/// --html`, which the user names (and which may not lie in the evidence).
#[test]
fn source_opens_nothing_for_writing() {
    let mut writes = Vec::new();
    for p in crate::common::rust_sources("src") {
        let text = std::fs::read_to_string(&p).unwrap();
        // Unit tests at the end of a file may write their own temp files.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            for needle in [
                "OpenOptions",
                ".write(true)",
                ".append(true)",
                ".create(true)",
                ".create_new(true)",
                ".truncate(true)",
                "File::create",
                "fs::write",
                "set_permissions",
                "remove_file",
                "remove_dir",
                "fs::rename",
                "set_len",
                "MmapMut",
                "map_mut",
                "set_modified",
                "set_times",
            ] {
                if line.contains(needle) {
                    writes.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                }
            }
        }
    }
    // Every file klf writes goes through the one output rule.
    // The one input open that sets flags (non-blocking, so that a FIFO is
    // refused rather than waited on) asks for reading and nothing else: no
    // write, append, create or truncate flag appears in the file (checked
    // above, line by line).
    let mmap =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/capture/mmap.rs"))
            .unwrap();
    assert!(mmap.contains("options.read(true);"), "the input open reads");
    let allowed = |w: &String| {
        w.contains("src/engine/output.rs")
            // the man pages' test, which rewrites man/ in the sources
            || w.contains("src/man.rs")
            || (w.contains("src/capture/mmap.rs") && w.contains("OpenOptions"))
    };
    let unexpected: Vec<_> = writes.iter().filter(|w| !allowed(w)).collect();
    assert!(
        unexpected.is_empty(),
        "write access in the source: {unexpected:#?}"
    );
    assert!(
        writes.iter().any(|w| w.contains("src/engine/output.rs")),
        "the output rule's writer is gone or moved: {writes:#?}"
    );
}
