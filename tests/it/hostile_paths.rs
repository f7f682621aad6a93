//! Hostile file trees through the `klf` binary: symlink loops, dangling
//! symlinks, directories named like segments, empty files, names that are
//! not UTF-8, FIFOs (in a directory and given by name), unreadable files.
//! Each gets a clear message naming it, klf never hangs or dies, and the
//! real segment next to them is still read.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]
// mkfifo(3): the one call the standard library does not offer.
#![allow(unsafe_code)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::common::klf_hostile;

struct Tree(PathBuf);

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SEG: &str = "00000000000000000000.log";

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    assert_eq!(
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {}",
        p.display()
    );
}

/// broker-1/ with meta.properties and t-0/ holding one real segment and
/// every kind of hostile entry.
fn hostile_tree(tag: &str) -> Tree {
    let root = std::env::temp_dir().join(format!("klf-hostile-paths-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/divergence/broker-1");
    let b = root.join("broker-1");
    let p = b.join("t-0");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::copy(data.join("meta.properties"), b.join("meta.properties")).unwrap();
    std::fs::copy(data.join("diverge-0").join(SEG), p.join(SEG)).unwrap();
    // A directory named like a segment.
    std::fs::create_dir(p.join("00000000000000000100.log")).unwrap();
    // Empty segment and index (what a fresh roll leaves).
    std::fs::write(p.join("00000000000000000200.log"), b"").unwrap();
    std::fs::write(p.join("00000000000000000200.index"), b"").unwrap();
    // A symlink to itself, a two-link loop, a dangling link.
    std::os::unix::fs::symlink(
        "00000000000000000300.log",
        p.join("00000000000000000300.log"),
    )
    .unwrap();
    std::os::unix::fs::symlink("loop-b", p.join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", p.join("loop-b")).unwrap();
    std::os::unix::fs::symlink("nowhere", p.join("00000000000000000400.log")).unwrap();
    // A FIFO named like a segment: opening it would block forever.
    mkfifo(&p.join("00000000000000000500.log"));
    // Names that are not UTF-8, for a file and for a partition directory.
    std::fs::write(p.join(OsStr::from_bytes(b"\xff\xfe.log")), b"x").unwrap();
    std::fs::create_dir(b.join(OsStr::from_bytes(b"bad\xffname-0"))).unwrap();
    // An unreadable checkpoint (still readable when running as root).
    let hw = b.join("replication-offset-checkpoint");
    std::fs::write(&hw, b"0\n1\nt 0 5\n").unwrap();
    std::fs::set_permissions(&hw, std::fs::Permissions::from_mode(0o000)).unwrap();
    Tree(root)
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// Each hostile entry is named in a warning that says what is wrong with it.
fn assert_each_reported(stderr: &str) {
    for (name, what) in [
        ("00000000000000000100.log", "directory named like a segment"),
        (
            "00000000000000000300.log",
            "symlink that cannot be followed",
        ),
        ("loop-a", "symlink that cannot be followed"),
        (
            "00000000000000000400.log",
            "symlink that cannot be followed",
        ),
        (
            "00000000000000000500.log",
            "neither a regular file nor a directory",
        ),
        ("\u{fffd}\u{fffd}.log", "not valid UTF-8"),
        ("bad\u{fffd}name-0", "not valid UTF-8"),
    ] {
        assert!(
            stderr.lines().any(|l| l.contains(name) && l.contains(what)),
            "no message for {name} ({what}) in:\n{stderr}"
        );
    }
}

#[test]
fn directory_walks_report_each_hostile_entry_and_go_on() {
    let t = hostile_tree("walk");
    let b = t.0.join("broker-1");
    let part = b.join("t-0");
    // dump json on the broker directory: the real segment is still dumped;
    // the links that cannot be followed (what they stood for cannot be
    // read) make it exit 2, and so does the checkpoint made unreadable for
    // anyone but root (named with its reason).
    let hw = b.join("replication-offset-checkpoint");
    let readable = std::fs::File::open(&hw).is_ok();
    let (code, out, err) = klf_hostile(&[os("dump"), os("--format"), os("json"), b.as_os_str()]);
    assert_eq!(code, 2, "{err}");
    if !readable {
        assert!(
            err.lines()
                .any(|l| l.contains("replication-offset-checkpoint") && l.contains("ermission")),
            "{err}"
        );
    }
    assert_each_reported(&err);
    assert!(
        out.contains(SEG) && out.contains("\"type\":\"batch\""),
        "real segment not dumped:\n{out}"
    );
    // kafka format on the partition directory.
    let (code, out, err) =
        klf_hostile(&[os("dump"), os("--format"), os("kafka"), part.as_os_str()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        out.contains(&format!("Dumping {}", part.join(SEG).display())),
        "{out}"
    );
    assert!(out.contains("baseOffset: 0 lastOffset:"), "{out}");
    assert!(err.contains("symlink that cannot be followed"), "{err}");
    // check, timeline, diff: they finish and describe the partition.
    let (_, out, _) = klf_hostile(&[os("check"), os("--format"), os("json"), b.as_os_str()]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let msgs = v["findings"].to_string();
    assert!(
        msgs.contains("symlink that cannot be followed") && msgs.contains("not valid UTF-8"),
        "{msgs}"
    );
    let (_, out, err) = klf_hostile(&[os("timeline"), b.as_os_str()]);
    assert!(out.contains("t-0") || out.contains("t "), "{out}\n{err}");
    assert_each_reported(&err);
    let (code, _, err) = klf_hostile(&[os("diff"), b.as_os_str()]);
    assert_eq!(code, 2, "one replica: nothing to diff");
    assert!(err.contains("only one replica of t-0 found"), "{err}");
    // The unreadable checkpoint: read as root, else reported by name.
    let (_, out, err) = klf_hostile(&[os("dump"), os("--format"), os("json"), hw.as_os_str()]);
    if std::fs::File::open(&hw).is_ok() {
        assert!(
            out.contains("\"offset\": 5") || out.contains("\"offset\":5"),
            "{out}\n{err}"
        );
    } else {
        assert!(
            err.contains("replication-offset-checkpoint") && err.contains("ermission"),
            "{err}"
        );
    }
    std::fs::set_permissions(&hw, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn hostile_files_named_on_the_command_line_are_reported_not_waited_on() {
    let t = hostile_tree("named");
    let part = t.0.join("broker-1/t-0");
    let fifo = part.join("00000000000000000500.log");
    let looped = part.join("00000000000000000300.log");
    let dangling = part.join("00000000000000000400.log");
    let empty = part.join("00000000000000000200.log");
    let real = part.join(SEG);
    for fmt in ["kafka", "json", "table"] {
        let (code, out, err) = klf_hostile(&[
            os("dump"),
            os("--format"),
            os(fmt),
            fifo.as_os_str(),
            looped.as_os_str(),
            dangling.as_os_str(),
            empty.as_os_str(),
            real.as_os_str(),
        ]);
        assert_eq!(code, 2, "{fmt}: I/O problems exit 2: {err}");
        assert!(err.lines().any(|l| l.contains("00000000000000000500.log") && l.contains("not a regular file")), "{fmt}: {err}");
        assert!(
            err.lines()
                .any(|l| l.contains("00000000000000000300.log") && l.contains("symbolic links")),
            "{fmt}: {err}"
        );
        assert!(
            err.lines()
                .any(|l| l.contains("00000000000000000400.log") && l.contains("No such file")),
            "{fmt}: {err}"
        );
        // ... and the real segment after them is still dumped.
        let dumped = match fmt {
            "kafka" => out.contains("baseOffset: 0 lastOffset: 18"),
            "json" => out.contains("\"type\":\"batch\"") && out.contains("\"last_offset\":18"),
            _ => out.contains(SEG) && out.contains("batches:"),
        };
        assert!(dumped, "{fmt}: the real segment was not dumped:\n{out}");
    }
}
