//! `klf dump` on damaged copies of real captured segments: exit status 1, a
//! `file:byte: reason` diagnostic, no panic, and inputs left untouched.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use super::common::{finish, klf_command};

use klf::format::batch::{Batch, SegmentIter};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "golden") {
                continue;
            }
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Batch positions and sizes of a segment.
fn batches(data: &[u8]) -> Vec<(usize, usize, bool)> {
    SegmentIter::new(data)
        .map_while(Result::ok)
        .map(|b| {
            let compressed = match &b {
                Batch::V2(v) => v.compression_id() != 0,
                Batch::Legacy(e) => e.record().attributes() & 7 != 0,
            };
            (
                b.position() as usize,
                b.size_in_bytes() as usize,
                compressed,
            )
        })
        .collect()
}

/// A real captured segment with at least three complete, CRC-valid batches
/// and nothing after them.
fn real_segment() -> (PathBuf, Vec<u8>) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join("kafka");
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut best: Option<(PathBuf, Vec<u8>)> = None;
    for f in files {
        if f.extension().is_none_or(|e| e != "log") {
            continue;
        }
        let Ok(data) = std::fs::read(&f) else {
            continue;
        };
        let bs = batches(&data);
        let whole = bs.last().is_some_and(|&(p, s, _)| p + s == data.len());
        let valid = SegmentIter::new(&data).all(|b| b.is_ok_and(|b| b.check_crc().is_ok()));
        if bs.len() >= 3
            && whole
            && valid
            && best.as_ref().is_none_or(|(_, d)| d.len() > data.len())
        {
            best = Some((f, data));
        }
    }
    best.expect("a captured .log with at least three batches under testdata/kafka")
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "klf-dump-corrupt-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn write(&self, name: &str, data: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, data).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `klf dump ARGS... PATH`.
fn dump(args: &[&str], path: &Path) -> Output {
    let mut c = klf_command();
    c.arg("dump").args(args).arg(path);
    finish(&mut c)
}

fn assert_no_panic(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert!(out.status.code().is_some(), "{what}: killed by a signal");
}

const NAME: &str = "00000000000000000000.log";

#[test]
fn flipped_byte_inside_a_batch() {
    let (_, data) = real_segment();
    let bs = batches(&data);
    let (pos, size, _) = bs[1];
    let mut bad = data.clone();
    bad[pos + size - 3] ^= 0x5a;
    let s = Scratch::new("flip");
    let p = s.write(NAME, &bad);
    let out = dump(&["--format", "kafka"], &p);
    assert_no_panic(&out, "flip");
    assert_eq!(out.status.code(), Some(1), "{:?}", out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!("{}:{pos}:", p.display());
    assert!(stderr.contains(&want), "stderr lacks {want:?}: {stderr}");
    assert!(stderr.contains("CRC"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("isvalid: false").count(), 1, "{stdout}");
    assert_eq!(std::fs::read(&p).unwrap(), bad, "input modified");
    // JSON reports the same problem and status.
    let out = dump(&["--format", "json"], &p);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"type\":\"problem\""));
    assert_eq!(std::fs::read(&p).unwrap(), bad, "input modified");
}

#[test]
fn truncated_tail() {
    let (_, data) = real_segment();
    let bs = batches(&data);
    let (pos, size, _) = *bs.last().unwrap();
    let cut = &data[..pos + size / 2];
    let s = Scratch::new("trunc");
    let p = s.write(NAME, cut);
    let out = dump(&["--format", "kafka", "--deep-iteration"], &p);
    assert_no_panic(&out, "truncate");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!("{}:{pos}:", p.display());
    assert!(stderr.contains(&want), "stderr lacks {want:?}: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tail = cut.len() - pos;
    assert!(
        stdout.ends_with(&format!(
            "Found {tail} invalid bytes at the end of {NAME}\n"
        )),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&p).unwrap(), cut, "input modified");
}

#[test]
fn zero_filled_tail_stops_with_position() {
    let (_, data) = real_segment();
    let mut z = data.clone();
    z.extend_from_slice(&[0u8; 4096]);
    let s = Scratch::new("zero");
    let p = s.write(NAME, &z);
    let out = dump(&["--format", "kafka"], &p);
    assert_no_panic(&out, "zero tail");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!("{}:{}:", p.display(), data.len());
    assert!(stderr.contains(&want), "stderr lacks {want:?}: {stderr}");
    // Every batch before the zeros is still printed.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.contains(" position: ")).count(),
        batches(&data).len()
    );
}

#[test]
fn resync_skips_garbage_and_reports_it() {
    let (_, data) = real_segment();
    let bs = batches(&data);
    let (pos, size, _) = bs[1];
    let mut bad = data.clone();
    // Wreck the second batch's framing: a size field below the minimum.
    bad[pos + 8..pos + 12].copy_from_slice(&3i32.to_be_bytes());
    let s = Scratch::new("resync");
    let p = s.write(NAME, &bad);
    let plain = dump(&["--format", "kafka"], &p);
    assert_eq!(plain.status.code(), Some(1));
    let printed = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.contains(" position: "))
            .count()
    };
    assert_eq!(printed(&plain), 1);
    let out = dump(&["--format", "kafka", "--resync"], &p);
    assert_no_panic(&out, "resync");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(printed(&out), bs.len() - 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("skipped {size} bytes, resuming at {}", pos + size)),
        "{stderr}"
    );
}

#[test]
fn lone_timeindex_creates_no_files() {
    let s = Scratch::new("lone");
    // 2 entries: (ts 1000, rel 0), (ts 2000, rel 5).
    let mut t = Vec::new();
    for (ts, rel) in [(1000i64, 0i32), (2000, 5)] {
        t.extend_from_slice(&ts.to_be_bytes());
        t.extend_from_slice(&rel.to_be_bytes());
    }
    let p = s.write("00000000000000000000.timeindex", &t);
    let out = dump(&["--format", "kafka"], &p);
    assert_no_panic(&out, "lone timeindex");
    assert_eq!(out.status.code(), Some(2), "missing .log is an I/O error");
    let names: Vec<_> = std::fs::read_dir(&s.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 1, "klf created files: {names:?}");
    assert_eq!(std::fs::read(&p).unwrap(), t);
}

#[test]
fn random_damage_never_panics() {
    let (_, data) = real_segment();
    let s = Scratch::new("fuzz");
    let mut seed: u64 = 0x243f_6a88_85a3_08d3;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..40 {
        let mut bad = data.clone();
        for _ in 0..(1 + round % 5) {
            let i = (next() as usize) % bad.len();
            bad[i] = next() as u8;
        }
        if round % 3 == 0 {
            let keep = (next() as usize) % bad.len();
            bad.truncate(keep);
        }
        let p = s.write(NAME, &bad);
        for args in [
            &["--format", "kafka", "--deep-iteration", "--print-data-log"][..],
            &["--format", "json", "--deep-iteration", "--resync"][..],
        ] {
            let out = dump(args, &p);
            assert_no_panic(&out, &format!("round {round} {args:?}"));
            assert!(
                matches!(out.status.code(), Some(0) | Some(1)),
                "round {round}: {out:?}"
            );
        }
        assert_eq!(std::fs::read(&p).unwrap(), bad);
    }
}
