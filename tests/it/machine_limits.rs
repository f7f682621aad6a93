//! A machine that refuses memory, threads or file descriptors ends a run
//! with exit status 2 and a message, or does not change the answer; it is
//! never read as evidence about the data (a loss, a damaged file) and never
//! kills klf with a signal.

use std::process::Command;

use super::common::{kafka, KLF};

/// `klf ARGS CAPTURE` under the shell limits `limits` (e.g. `ulimit -v
/// 16384`), with `threads` worker threads asked for: exit code, stdout,
/// stderr.
fn limited(limits: &str, threads: usize, args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("{limits}; exec \"$@\""))
        .arg("sh")
        .arg(KLF)
        .args(args)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .env_remove("KLF_NO_MMAP")
        .env_remove("KLF_READ_WINDOW")
        .output()
        .expect("run sh");
    (
        o.status.code(),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The smallest address-space limit, in MiB, at which `klf --version`
/// starts at all (below it the loader cannot map the C library: the
/// shell's failure, not klf's).
fn smallest_limit_that_starts() -> u64 {
    (8..256)
        .step_by(2)
        .find(|mib| limited(&format!("ulimit -v {}", mib * 1024), 2, &["--version"]).0 == Some(0))
        .expect("klf starts under 256 MiB")
}

#[test]
fn too_little_memory_gives_the_same_answer_or_exit_2() {
    let cap = kafka("divergence");
    let c = cap.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["check", "--format", "json", c],
        &["diff", "--format", "json", "--records", c],
        &["timeline", "--format", "json", c],
        &["impact", "--format", "json", c],
        &["dump", "--deep-iteration", "--print-data-log", c],
    ];
    let base = smallest_limit_that_starts();
    let (mut same, mut refused) = (0, 0);
    for args in commands {
        let want = limited("true", 2, args);
        assert!(matches!(want.0, Some(0) | Some(1)), "{args:?}: {}", want.2);
        // Address-space limits from where the binary barely loads to where
        // it runs in full, with few and with many worker threads (each
        // thread's stack and heap arena take address space).
        for mib in [base, base + 8, base + 16, base + 48] {
            for threads in [2, 64] {
                let got = limited(&format!("ulimit -v {}", mib * 1024), threads, args);
                let what = format!("{args:?} at {mib} MiB, {threads} threads");
                assert!(got.0.is_some(), "{what}: killed by a signal: {}", got.2);
                if got.0 == want.0 {
                    assert!(got.1 == want.1, "{what}: stdout differs");
                    same += 1;
                } else {
                    assert_eq!(got.0, Some(2), "{what}: {}", got.2);
                    // Said on stderr, or (check) in a finding.
                    let said = !got.2.is_empty()
                        || String::from_utf8_lossy(&got.1).contains("file-unreadable");
                    assert!(said, "{what}: exit 2 without a message");
                    refused += 1;
                }
            }
        }
    }
    eprintln!("{same} limited runs answered as unlimited ones, {refused} ended with exit 2");
    assert!(same > 0);
}

/// (code, broker, topic-partition) of every finding of a check report.
fn finding_keys(v: &serde_json::Value) -> Vec<(String, String, String)> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or("").to_string(),
                f["broker"].to_string(),
                format!("{}-{}", f["topic"], f["partition"]),
            )
        })
        .collect()
}

/// The topic-partitions of a check report that left a replica out.
fn left_out(v: &serde_json::Value) -> Vec<String> {
    v["partitions"]
        .as_array()
        .expect("partitions")
        .iter()
        .filter(|p| p["left_out"].as_array().is_some_and(|a| !a.is_empty()))
        .map(|p| format!("{}-{}", p["topic"], p["partition"]))
        .collect()
}

/// A diff report's partitions, each without its `scan` (how it was read).
fn without_scan(mut v: serde_json::Value) -> Vec<serde_json::Value> {
    let mut parts = v["partitions"]
        .take()
        .as_array()
        .cloned()
        .unwrap_or_default();
    for p in &mut parts {
        if let Some(o) = p.as_object_mut() {
            o.remove("scan");
        }
    }
    parts
}

#[test]
fn too_few_file_descriptors_are_unreadable_files_not_damage_or_loss() {
    let cap = kafka("divergence");
    let c = cap.to_str().unwrap();
    let check = ["check", "--format", "json", c];
    let diff = ["diff", "--format", "json", c];
    let want_check = limited("true", 2, &check);
    let want_keys = finding_keys(&serde_json::from_slice(&want_check.1).unwrap());
    let want_diff = limited("true", 2, &diff);
    let want_parts = without_scan(serde_json::from_slice(&want_diff.1).unwrap());
    let (mut same, mut refused) = (0, 0);
    // Four descriptors: stdin, stdout, stderr and one more, so that which
    // reads fail depends on how the worker threads interleave; every run
    // must hold either way.
    for run in 0..8 {
        let threads = if run % 2 == 0 { 2 } else { 8 };
        let (code, out, err) = limited("ulimit -n 4", threads, &check);
        let v: serde_json::Value = serde_json::from_slice(&out).expect("check JSON");
        let keys = finding_keys(&v);
        if keys.iter().any(|k| k.0 == "file-unreadable") {
            assert_eq!(code, Some(2), "{err}");
            assert!(
                v.to_string().contains("Too many open files"),
                "the failure is named: {v}"
            );
            // A replica's own findings are ones found without the limit;
            // a partition's (its loss) may differ only where a replica was
            // left out, and the report says which.
            let partial = left_out(&v);
            for k in &keys {
                assert!(
                    k.0 == "file-unreadable"
                        || want_keys.contains(k)
                        || (k.1 == "null" && partial.contains(&k.2)),
                    "{k:?} is not found without the limit: {v}"
                );
            }
            refused += 1;
        } else {
            assert_eq!(code, want_check.0, "{err}");
            assert!(out == want_check.1, "stdout differs with no read failing");
            same += 1;
        }

        let (code, out, err) = limited("ulimit -n 4", threads, &diff);
        if out.is_empty() {
            // Nothing could be compared: an error, said on stderr.
            assert_eq!(code, Some(2), "{err}");
            assert!(err.contains("not compared"), "{err}");
            refused += 1;
            continue;
        }
        let parts = without_scan(serde_json::from_slice(&out).expect("diff JSON"));
        if code == want_diff.0 {
            // The answer is the same; how it was read may not be (a window
            // whose read failed is read again in full, and says why).
            assert_eq!(parts, want_parts, "{err}");
        } else {
            assert_eq!(code, Some(2), "{err}");
            assert!(err.contains("Too many open files"), "{err}");
            // A partition compared without some replica says which; one
            // compared in full answers as without the limit.
            for p in &parts {
                let left_out = p["left_out"].as_array().map_or(0, |a| a.len());
                if left_out == 0 {
                    assert!(want_parts.contains(p), "{p}");
                }
            }
            // One no two replicas of could be read is named, not answered.
            if parts.len() < want_parts.len() {
                assert!(err.contains("not compared"), "{err}");
            }
        }
    }
    eprintln!(
        "{same} runs under the descriptor limit answered in full, {refused} ended with exit 2"
    );
}
