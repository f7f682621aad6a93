//! Captures read straight from `.tar`, `.tar.gz` and `.tar.zst` files.
//!
//! The archives are built at test time (in the system temporary directory)
//! from the committed real-Kafka captures; `diff`, `check`, `timeline` and
//! `dump` on an archive must report exactly what they report on the
//! directory, with paths inside the archive written `ARCHIVE!/inner/path`.
//! Archives whose entries would land outside their root are refused whole
//! (exit 2), as are unreadable archives and ones over `--archive-limit`.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use super::common::{kafka, ran as klf};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "klf-archives-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Tar,
    Gz,
    Zst,
}

impl Kind {
    fn ext(self) -> &'static str {
        match self {
            Kind::Tar => "tar",
            Kind::Gz => "tar.gz",
            Kind::Zst => "tar.zst",
        }
    }
}

/// Writes `bytes` (an uncompressed tar stream) compressed as `kind`.
fn compress(kind: Kind, tar: Vec<u8>, dest: &Path) {
    let bytes = match kind {
        Kind::Tar => tar,
        Kind::Gz => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&tar).unwrap();
            e.finish().unwrap()
        }
        Kind::Zst => zstd::encode_all(&tar[..], 1).unwrap(),
    };
    fs::write(dest, bytes).unwrap();
}

/// A tar of the contents of `dir` (entries relative to it, as
/// `tar -C dir -cf x.tar .` writes them), under `prefix` if given.
fn tar_of(dir: &Path, prefix: &str, kind: Kind, dest: &Path) {
    let mut b = tar::Builder::new(Vec::new());
    b.follow_symlinks(false);
    b.append_dir_all(prefix, dir).unwrap();
    compress(kind, b.into_inner().unwrap(), dest);
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn diff_check_timeline_read_archives_as_directories() {
    let tmp = temp_dir("same");
    for scenario in ["divergence", "double-divergence"] {
        let dir = kafka(scenario);
        for kind in [Kind::Tar, Kind::Gz, Kind::Zst] {
            let archive = tmp.join(format!("{scenario}.{}", kind.ext()));
            tar_of(&dir, ".", kind, &archive);
            let root = format!("{}!", archive.display());
            for (cmd, extra) in [("diff", &[][..]), ("timeline", &[][..]), ("check", &[][..])] {
                let mut a = vec![cmd, "--format", "json"];
                a.extend_from_slice(extra);
                let mut on_dir = a.clone();
                on_dir.push(s(&dir));
                let mut on_archive = a.clone();
                on_archive.push(&root[..root.len() - 1]);
                let d = klf(&on_dir);
                let r = klf(&on_archive);
                assert_eq!(
                    d.code, r.code,
                    "{cmd} {scenario} {kind:?}: exit codes differ\n{}",
                    r.stderr
                );
                assert!(!d.stdout.is_empty(), "{cmd} {scenario}: no output");
                // Paths inside the archive are written ARCHIVE!/inner.
                let expected = d.stdout.replace(s(&dir), &root);
                assert_eq!(
                    r.stdout, expected,
                    "{cmd} {scenario} {kind:?}: JSON differs from the directory's"
                );
                // The archive is reported once on stderr with its size.
                assert!(
                    r.stderr.contains("read into memory from a"),
                    "{cmd}: no archive summary on stderr: {}",
                    r.stderr
                );
                // --quiet drops it.
                let mut quiet = on_archive.clone();
                quiet.push("--quiet");
                let q = klf(&quiet);
                assert!(!q.stderr.contains("read into memory"), "{}", q.stderr);
                assert_eq!(q.stdout, r.stdout);
            }
        }
    }
    let _ = fs::remove_dir_all(&tmp);
}

#[test]
fn a_tar_of_one_folder_reads_that_folder_and_inner_paths_work() {
    let tmp = temp_dir("folder");
    let dir = kafka("divergence");
    let archive = tmp.join("capture.tgz");
    tar_of(&dir, "divergence", Kind::Gz, &archive);
    let d = klf(&["diff", "--format", "json", s(&dir)]);
    let r = klf(&["diff", "--format", "json", s(&archive)]);
    assert_eq!(r.code, d.code, "{}", r.stderr);
    // The evidence names files: inside the archive, ARCHIVE!/divergence/...
    let inside = format!("{}!/divergence", archive.display());
    assert_eq!(r.stdout, d.stdout.replace(s(&dir), &inside));
    // One broker directory inside the archive, by its virtual path.
    let inner = format!("{}!/divergence/broker-1", archive.display());
    let t = klf(&["timeline", "--format", "json", &inner]);
    let td = klf(&["timeline", "--format", "json", s(&dir.join("broker-1"))]);
    assert_eq!(t.code, td.code, "{}", t.stderr);
    assert_eq!(t.stdout, td.stdout);
    // A path that is not in the archive says so and how to list it.
    let missing = format!("{}!/divergence/broker-9", archive.display());
    let m = klf(&["timeline", &missing]);
    assert_eq!(m.code, Some(2));
    assert!(m.stderr.contains("tar -tf"), "{}", m.stderr);
    let _ = fs::remove_dir_all(&tmp);
}

#[test]
fn dump_reads_files_inside_archives() {
    let tmp = temp_dir("dump");
    let dir = kafka("divergence");
    let archive = tmp.join("capture.tar.zst");
    tar_of(&dir, ".", Kind::Zst, &archive);
    let seg = "broker-1/diverge-0/00000000000000000000.log";
    let real = dir.join(seg);
    let virt = format!("{}!/{seg}", archive.display());
    for format in ["kafka", "json"] {
        let d = klf(&["dump", "--format", format, "--deep-iteration", s(&real)]);
        let r = klf(&["dump", "--format", format, "--deep-iteration", &virt]);
        assert_eq!(d.code, Some(0), "{}", d.stderr);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.stdout, d.stdout.replace(s(&real), &virt), "{format}");
    }
    // The .index beside it is checked against the .log inside the archive.
    let idx = format!(
        "{}!/broker-1/diverge-0/00000000000000000000.index",
        archive.display()
    );
    let r = klf(&["dump", "--format", "kafka", &idx]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("offset:"), "{}", r.stdout);
    // A whole archive: every file of the capture, as for the directory.
    let d = klf(&["dump", "--format", "json", s(&dir)]);
    let r = klf(&["dump", "--format", "json", s(&archive)]);
    assert_eq!(r.code, d.code);
    let root = format!("{}!", archive.display());
    assert_eq!(r.stdout, d.stdout.replace(s(&dir), &root));
    let _ = fs::remove_dir_all(&tmp);
}

/// `tar -czf capture.tar.gz capture/` holds one folder: a path inside
/// the archive may leave the folder's name out, as the capture is read as
/// that folder; spelled with it, it reads the same bytes.
#[test]
fn an_archive_of_one_folder_is_addressed_without_its_name() {
    let tmp = temp_dir("one-folder");
    let dir = kafka("divergence");
    let archive = tmp.join("capture.tar.gz");
    tar_of(&dir, "capture", Kind::Gz, &archive);
    let seg = "broker-1/diverge-0/00000000000000000000.log";
    let real = klf(&[
        "dump",
        "--format",
        "json",
        "--deep-iteration",
        s(&dir.join(seg)),
    ]);
    assert_eq!(real.code, Some(0), "{}", real.stderr);
    let short = format!("{}!/{seg}", archive.display());
    let long = format!("{}!/capture/{seg}", archive.display());
    for virt in [&short, &long] {
        let r = klf(&["dump", "--format", "json", "--deep-iteration", virt]);
        assert_eq!(r.code, Some(0), "{virt}: {}", r.stderr);
        assert_eq!(
            r.stdout,
            real.stdout.replace(s(&dir.join(seg)), virt),
            "{virt}"
        );
    }
    // A broker directory named without the folder is a capture klf diffs.
    let broker_dirs: Vec<String> = ["broker-1", "broker-2", "broker-3"]
        .iter()
        .map(|b| format!("{}!/{b}", archive.display()))
        .collect();
    let mut args = vec!["diff", "--format", "json"];
    args.extend(broker_dirs.iter().map(String::as_str));
    let r = klf(&args);
    let d = klf(&["diff", "--format", "json", s(&dir)]);
    assert_eq!(r.code, d.code, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let w: serde_json::Value = serde_json::from_str(&d.stdout).unwrap();
    for field in [
        "records",
        "verdict",
        "committed_proven",
        "committed_possible",
    ] {
        assert_eq!(
            v["partitions"][0]["loss"][field], w["partitions"][0]["loss"][field],
            "{field}"
        );
    }
    // A name that is in neither place is still refused, naming the archive.
    let missing = format!(
        "{}!/broker-9/x-0/00000000000000000000.log",
        archive.display()
    );
    let r = klf(&["dump", &missing]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("tar -tf"), "{}", r.stderr);
    let _ = fs::remove_dir_all(&tmp);
}

/// A tar header with a raw name (the tar crate refuses to write `..` and
/// absolute names through its checked setters).
fn raw_header(name: &[u8], kind: tar::EntryType, size: u64, link: &[u8]) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(0o644);
    {
        let old = h.as_old_mut();
        old.name[..name.len()].copy_from_slice(name);
        old.linkname[..link.len()].copy_from_slice(link);
    }
    h.set_cksum();
    h
}

fn evil_archive(dest: &Path, name: &[u8], kind: tar::EntryType, link: &[u8]) {
    let mut b = tar::Builder::new(Vec::new());
    // A good capture first, so the refusal is about the bad entry alone.
    b.append_dir_all("capture", kafka("divergence")).unwrap();
    let body: &[u8] = if kind == tar::EntryType::Regular {
        b"owned\n"
    } else {
        b""
    };
    let h = raw_header(name, kind, body.len() as u64, link);
    b.append(&h, body).unwrap();
    compress(Kind::Gz, b.into_inner().unwrap(), dest);
}

#[test]
fn entries_escaping_the_root_are_refused() {
    let tmp = temp_dir("evil");
    /// (tag, entry name, entry type, link target, expected reason)
    type Case = (
        &'static str,
        &'static [u8],
        tar::EntryType,
        &'static [u8],
        &'static str,
    );
    let cases: [Case; 5] = [
        ("dotdot", b"../evil", tar::EntryType::Regular, b"", "'..'"),
        (
            "nested-dotdot",
            b"capture/../../evil",
            tar::EntryType::Regular,
            b"",
            "'..'",
        ),
        (
            "absolute",
            b"/tmp/evil",
            tar::EntryType::Regular,
            b"",
            "absolute path",
        ),
        (
            "symlink-out",
            b"capture/link",
            tar::EntryType::Symlink,
            b"../../etc/passwd",
            "symlink pointing out",
        ),
        (
            "symlink-abs",
            b"capture/link",
            tar::EntryType::Symlink,
            b"/etc/passwd",
            "symlink to the absolute path",
        ),
    ];
    for (tag, name, kind, link, why) in cases {
        let archive = tmp.join(format!("{tag}.tar.gz"));
        evil_archive(&archive, name, kind, link);
        for cmd in ["diff", "check", "timeline", "dump"] {
            let r = klf(&[cmd, s(&archive)]);
            assert_eq!(r.code, Some(2), "{tag} {cmd}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "{tag} {cmd}: {}", r.stdout);
            assert!(
                r.stderr.contains("refusing the archive") && r.stderr.contains(why),
                "{tag} {cmd}: {}",
                r.stderr
            );
            assert!(r.stderr.contains(s(&archive)), "{}", r.stderr);
        }
    }
    // Nothing was written next to the archive or above it.
    assert!(!tmp.join("evil").exists() && !tmp.parent().unwrap().join("evil").exists());
    // A hard link to a file inside reads as that file; one out is refused.
    let archive = tmp.join("hardlink.tar");
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all(".", kafka("divergence")).unwrap();
    let h = raw_header(b"broker-1/x", tar::EntryType::Link, 0, b"../outside");
    b.append(&h, &b""[..]).unwrap();
    compress(Kind::Tar, b.into_inner().unwrap(), &archive);
    let r = klf(&["check", s(&archive)]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("hard link pointing out"), "{}", r.stderr);
    let _ = fs::remove_dir_all(&tmp);
}

#[test]
fn in_archive_links_read_as_their_target() {
    let tmp = temp_dir("links");
    let dir = kafka("divergence");
    let archive = tmp.join("links.tar");
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all(".", &dir).unwrap();
    let h = raw_header(
        b"copy.log",
        tar::EntryType::Symlink,
        0,
        b"broker-1/diverge-0/00000000000000000000.log",
    );
    b.append(&h, &b""[..]).unwrap();
    compress(Kind::Tar, b.into_inner().unwrap(), &archive);
    let via_link = format!("{}!/copy.log", archive.display());
    let r = klf(&["dump", "--format", "json", &via_link]);
    let d = klf(&[
        "dump",
        "--format",
        "json",
        s(&dir.join("broker-1/diverge-0/00000000000000000000.log")),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let batches = |out: &str| {
        out.lines()
            .filter(|l| l.contains("\"type\":\"batch\""))
            .count()
    };
    assert!(batches(&d.stdout) > 0);
    assert_eq!(batches(&r.stdout), batches(&d.stdout));
    let _ = fs::remove_dir_all(&tmp);
}

#[test]
fn unreadable_and_oversized_archives_exit_2() {
    let tmp = temp_dir("bad");
    // Not an archive at all.
    let junk = tmp.join("junk.tar.gz");
    fs::write(&junk, b"\x1f\x8bthis is not gzip data at all").unwrap();
    let r = klf(&["diff", s(&junk)]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("cannot read this archive"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(s(&junk)), "{}", r.stderr);
    // Cut short.
    let full = tmp.join("full.tar.gz");
    tar_of(&kafka("divergence"), ".", Kind::Gz, &full);
    let bytes = fs::read(&full).unwrap();
    let cut = tmp.join("cut.tar.gz");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let r = klf(&["check", s(&cut)]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("cannot read this archive"),
        "{}",
        r.stderr
    );
    // Over the cap.
    let r = klf(&["diff", "--archive-limit", "64K", s(&full)]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("more than 64.0 KiB") && r.stderr.contains("--archive-limit"),
        "{}",
        r.stderr
    );
    // A bad cap is a usage error.
    let r = klf(&["diff", "--archive-limit", "lots", s(&full)]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("byte count"), "{}", r.stderr);
    let _ = fs::remove_dir_all(&tmp);
}

#[test]
fn library_discovery_over_a_mounted_archive() {
    use klf::capture::discover::discover;
    use klf::capture::vfs;
    let tmp = temp_dir("lib");
    let dir = kafka("double-divergence");
    let archive = tmp.join("capture.tar");
    tar_of(&dir, ".", Kind::Tar, &archive);
    let m = vfs::mount(&archive, vfs::DEFAULT_LIMIT).expect("mount");
    assert_eq!(m.root, vfs::root_of(&archive));
    assert!(m.files > 0 && m.bytes > 0 && m.skipped.is_empty());
    let on_disk = discover(&[&dir]);
    let in_memory = discover(&[&m.root]);
    assert_eq!(on_disk.brokers.len(), in_memory.brokers.len());
    assert_eq!(
        on_disk.partitions.keys().collect::<Vec<_>>(),
        in_memory.partitions.keys().collect::<Vec<_>>()
    );
    for (k, reps) in &on_disk.partitions {
        let other = &in_memory.partitions[k];
        assert_eq!(reps.len(), other.len());
        for (a, b) in reps.iter().zip(other) {
            assert_eq!(a.node_id, b.node_id);
            assert_eq!(a.segments.len(), b.segments.len());
            assert_eq!(a.high_watermark, b.high_watermark);
            assert!(b.dir.starts_with(&m.root), "{}", b.dir.display());
            // The bytes read through the layer are the file's bytes.
            let seg = a.segments[0].log.as_ref().unwrap();
            let vseg = b.segments[0].log.as_ref().unwrap();
            assert_eq!(&vfs::open(vseg).unwrap()[..], &fs::read(seg).unwrap()[..]);
        }
    }
    assert_eq!(on_disk.excluded.len(), in_memory.excluded.len());
    // The same notes and warnings, about the same files.
    let strip = |c: &klf::model::Capture, root: &Path| -> Vec<String> {
        c.warnings
            .iter()
            .map(|d| {
                format!(
                    "{:?} {} {}",
                    d.level,
                    d.path.strip_prefix(root).unwrap_or(&d.path).display(),
                    d.message
                )
            })
            .collect()
    };
    assert_eq!(strip(&on_disk, &dir), strip(&in_memory, &m.root));
    // Real paths still go to the file system.
    assert!(!vfs::is_virtual(&dir));
    assert!(vfs::is_virtual(&m.root.join("broker-1")));
    let _ = fs::remove_dir_all(&tmp);
}
