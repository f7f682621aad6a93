//! A name from the capture cannot drive the terminal: a topic whose name
//! holds ESC (a colour or title escape), BEL, a line break and a
//! right-to-left override comes out escaped from every command, in every
//! format, on stdout and on stderr.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use super::common::{finish, klf_command};
use std::path::{Path, PathBuf};

const EVIL: &str = "di\u{1b}]0;owned\u{7}ver\u{202e}ge\nFAKE:0: forged";

fn copy_renaming(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "golden" || name == "after" {
            continue;
        }
        let to = if name == "diverge-0" {
            dst.join(format!("{EVIL}-0"))
        } else {
            dst.join(&name)
        };
        if e.file_type().unwrap().is_dir() {
            copy_renaming(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn raw_unsafe(b: &[u8]) -> Option<&'static str> {
    let s = String::from_utf8_lossy(b);
    if s.contains('\u{1b}') {
        return Some("ESC");
    }
    if s.contains('\u{7}') {
        return Some("BEL");
    }
    if s.contains('\u{202e}') {
        return Some("RLO");
    }
    if s.lines().any(|l| l.starts_with("FAKE:0")) {
        return Some("a forged line");
    }
    None
}

#[test]
fn a_crafted_topic_name_is_escaped_everywhere() {
    let tmp: PathBuf = std::env::temp_dir().join(format!("klf-evil-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_renaming(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/divergence"),
        &tmp,
    );
    let cap = tmp.display().to_string();
    let part = tmp.join(format!("broker-1/{EVIL}-0")).display().to_string();
    let seg = format!("{part}/00000000000000000000.log");
    let missing = format!("{part}/nope.log");
    let page = std::env::temp_dir()
        .join(format!("klf-evil-{}.html", std::process::id()))
        .display()
        .to_string();
    let runs: Vec<Vec<&str>> = vec![
        vec!["diff", &cap],
        vec!["diff", "--explain", "--records", &cap],
        vec!["diff", "--format", "json", "--records", &cap],
        vec!["diff", "--format", "jsonl", &cap],
        vec!["timeline", &cap],
        vec!["timeline", "--format", "json", &cap],
        vec!["timeline", "--format", "jsonl", &cap],
        vec!["check", &cap],
        vec!["check", "--format", "json", &cap],
        vec!["check", "--format", "jsonl", &cap],
        vec!["check", "--format", "junit", &cap],
        vec!["report", &cap, "--html", "-"],
        vec!["report", &cap, "--html", &page],
        vec!["dump", "--format", "kafka", &part],
        vec!["dump", "--format", "kafka", "--deep-iteration", &seg],
        vec!["dump", "--format", "json", "--print-data-log", &part],
        vec!["dump", "--format", "table", &part],
        vec!["dump", "--format", "kafka", &missing],
    ];
    let mut seen_name = 0;
    for args in &runs {
        let o = finish(klf_command().args(args));
        assert!(
            matches!(o.status.code(), Some(0..=2)),
            "{args:?}: {:?}",
            o.status
        );
        for (stream, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            if let Some(what) = raw_unsafe(bytes) {
                panic!(
                    "klf {args:?}: {what} raw on {stream}:\n{}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        let text = String::from_utf8_lossy(&all);
        if text.contains("u{1b}") || text.contains("u001b") || text.contains("\\u{1b}") {
            seen_name += 1;
        }
    }
    assert!(
        seen_name >= runs.len() - 3,
        "the escaped name shows in {seen_name} of {} outputs",
        runs.len()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(raw_unsafe(html.as_bytes()).is_none());
    let _ = std::fs::remove_file(&page);
    std::fs::remove_dir_all(&tmp).unwrap();
}
