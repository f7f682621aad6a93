//! Archives built to exhaust memory, hang or mislead: extension headers
//! claiming gigabytes, names too long or too deep, a size claim beyond the
//! budget, a limit that would overflow, a pipe named like an archive,
//! duplicate entries, many hard links to one big file. Each run ends
//! quickly, within bounded memory (measured with `wait4`), with exit 2 and
//! the entry's byte position where the archive is refused.

// mkfifo(3): the one call the standard library does not offer.
#![allow(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::{finish, kafka, klf_command, klf_measured, scratch, Run};

/// A 512-byte ustar header: `name` (at most 100 bytes), `typeflag`, `size`
/// (octal, or base-256 when it does not fit in 11 octal digits).
fn header(name: &[u8], typeflag: u8, size: u64) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    if size < 0o77777777777 {
        h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    } else {
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = typeflag;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

fn entry(out: &mut Vec<u8>, name: &[u8], typeflag: u8, body: &[u8]) {
    out.extend_from_slice(&header(name, typeflag, body.len() as u64));
    out.extend_from_slice(body);
    let pad = (512 - body.len() % 512) % 512;
    out.extend(std::iter::repeat_n(0u8, pad));
}

fn pax(records: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in records {
        // "%d %s=%s\n", the length counting itself.
        let rest = k.len() + v.len() + 3;
        let mut len = rest + 1;
        while format!("{len}").len() + rest != len {
            len += 1;
        }
        out.extend_from_slice(format!("{len} {k}=").as_bytes());
        out.extend_from_slice(v);
        out.push(b'\n');
    }
    out
}

/// A tar's end: two zero blocks (and more, as tar pads).
fn end_of_archive(mut v: Vec<u8>) -> Vec<u8> {
    v.extend(std::iter::repeat_n(0u8, 1024));
    v
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

fn refused(run: &Run, why: &str) {
    eprintln!("refused ({why}): peak {} KiB", run.max_rss_kib);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains(why), "{}", run.stderr);
    assert!(
        run.max_rss_kib < 256 * 1024,
        "peak memory {} KiB: {}",
        run.max_rss_kib,
        run.stderr
    );
}

#[test]
fn extension_header_bombs_are_refused_before_reading() {
    let tmp = scratch("bombs");
    // A claim of 64 GiB, a megabyte of it there, the rest cut off.
    for (name, flag) in [("pax", b'x'), ("longname", b'L'), ("longlink", b'K')] {
        let mut v = header(b"././@LongLink", flag, 64 << 30).to_vec();
        v.extend(std::iter::repeat_n(b'a', 1 << 20));
        let p = write(&tmp, &format!("{name}.tar"), &v);
        let run = klf_measured(&["check", p.to_str().unwrap()]);
        refused(&run, "extension header");
        assert!(
            run.stderr.contains(&format!("{}:0:", p.display())),
            "{}",
            run.stderr
        );
    }
    // A PAX size far past the budget over a ustar size of 0.
    let mut v = Vec::new();
    entry(
        &mut v,
        b"PaxHeader",
        b'x',
        &pax(&[("size", b"1099511627776")]),
    );
    entry(&mut v, b"big.log", b'0', b"");
    let p = write(&tmp, "paxsize.tar", &end_of_archive(v));
    refused(&klf_measured(&["check", p.to_str().unwrap()]), "PAX size");
    // A size claim beyond --archive-limit, refused before reading.
    let mut v = header(b"broker-1/t-0/00000000000000000000.log", b'0', 1 << 40).to_vec();
    v.extend(std::iter::repeat_n(0u8, 4096));
    let p = write(&tmp, "claim.tar", &v);
    refused(
        &klf_measured(&["--archive-limit", "1M", "check", p.to_str().unwrap()]),
        "more than",
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn names_too_long_or_too_deep_are_refused() {
    let tmp = scratch("names");
    let long = vec![b'n'; 10_000];
    let mut v = Vec::new();
    entry(&mut v, b"PaxHeader", b'x', &pax(&[("path", &long)]));
    entry(&mut v, b"x", b'0', b"data");
    let p = write(&tmp, "long.tar", &end_of_archive(v));
    refused(
        &klf_measured(&["check", p.to_str().unwrap()]),
        "names longer than 4096",
    );
    // 1,000 entries each 2,000 directories deep (4,000-byte names).
    let mut v = Vec::new();
    for i in 0..1000 {
        let mut name = format!("d{i}").into_bytes();
        for _ in 0..2000 {
            name.extend_from_slice(b"/a");
        }
        name.truncate(4000);
        entry(&mut v, b"PaxHeader", b'x', &pax(&[("path", &name)]));
        entry(&mut v, b"x", b'0', b"");
    }
    let p = write(&tmp, "deep.tar", &end_of_archive(v));
    refused(
        &klf_measured(&["check", p.to_str().unwrap()]),
        "directories deep",
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Duplicate names: the later entry wins whatever its kind, as extraction
/// does, and a note names both positions. A limit of u64::MAX bytes reads
/// the archive as any other.
#[test]
fn duplicates_follow_extraction_and_huge_limits_do_not_overflow() {
    let tmp = scratch("dups");
    let mut v = Vec::new();
    entry(&mut v, b"dir/f.txt", b'0', b"first");
    entry(&mut v, b"dir/f.txt", b'0', b"second");
    let p = write(&tmp, "dups.tar", &end_of_archive(v));
    let inner = format!("{}!/dir/f.txt", p.display());
    let o = finish(klf_command().args(["dump", "--format", "json", &inner]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("byte 0") && err.contains("byte 1024"), "{err}");
    // The capture through an archive, with the largest limit there is.
    let cap = kafka("divergence");
    let archive = tmp.join("cap.tar");
    let st = Command::new("tar")
        .args(["-C", cap.to_str().unwrap(), "--exclude", "golden", "-cf"])
        .arg(&archive)
        .arg(".")
        .status()
        .unwrap();
    assert!(st.success());
    let big = finish(
        klf_command()
            .args([
                "--archive-limit",
                "18446744073709551615",
                "diff",
                "--format",
                "json",
            ])
            .arg(&archive),
    );
    let dir = finish(klf_command().args(["diff", "--format", "json"]).arg(&cap));
    assert_eq!(big.status.code(), dir.status.code());
    let v: serde_json::Value = serde_json::from_slice(&big.stdout).unwrap();
    assert_eq!(
        v["partitions"][0]["loss"]["records"], 16,
        "every file read whole"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// One 20 MiB file and 30 hard links to it: the links share its bytes,
/// nothing is copied on open.
#[test]
fn hard_links_share_one_copy() {
    let tmp = scratch("links");
    let big = vec![0u8; 20 << 20];
    let mut v = Vec::new();
    entry(
        &mut v,
        b"broker-1/meta.properties",
        b'0',
        b"node.id=1\nversion=1\ncluster.id=c\n",
    );
    entry(&mut v, b"broker-1/t-0/00000000000000000000.log", b'0', &big);
    for i in 1..=30 {
        let mut h = header(
            format!("broker-1/t-0/{:020}.log", i * 1000).as_bytes(),
            b'1',
            0,
        );
        let target = b"broker-1/t-0/00000000000000000000.log";
        h[157..157 + target.len()].copy_from_slice(target);
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        v.extend_from_slice(&h);
    }
    let p = write(&tmp, "links.tar", &end_of_archive(v));
    let run = klf_measured(&["--archive-limit", "30M", "check", p.to_str().unwrap()]);
    eprintln!(
        "20 MiB segment and 30 hard links: peak {} KiB",
        run.max_rss_kib
    );
    assert!(matches!(run.code, Some(0) | Some(1)), "{}", run.stderr);
    assert!(
        run.max_rss_kib < 128 * 1024,
        "peak memory {} KiB: {}",
        run.max_rss_kib,
        run.stderr
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A pipe named like an archive is refused, not waited on.
#[test]
fn a_pipe_named_like_an_archive_is_refused() {
    let tmp = scratch("fifo");
    let p = tmp.join("capture.tar.gz");
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    for args in [
        vec!["check".to_string(), p.display().to_string()],
        vec!["timeline".to_string(), format!("{}!/broker-1", p.display())],
        vec!["dump".to_string(), format!("{}!/broker-1/t-0", p.display())],
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = klf_measured(&a);
        assert_eq!(run.code, Some(2), "{a:?}: {}", run.stderr);
        assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}
