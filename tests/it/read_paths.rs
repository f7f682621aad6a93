//! The two ways klf reads a segment give the same answers: bytes held in
//! memory (mapped, or a small file read whole) and a file read a window at
//! a time (a live log directory, `--no-mmap`). Every segment of every
//! committed capture is iterated both ways at many window sizes, damaged
//! copies too; every command is run on every capture both ways; and a
//! large segment read without a mapping costs memory of the window, not of
//! the file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use klf::capture::segment::SegmentFile;
use klf::format::batch::{Batch, Entries, EntryError, SegmentIter};
use klf::format::walk::{Checksums, Step, Walk};

use super::common::{captures, klf_env, klf_measured_env, root, scratch};

/// Every entry, error, resync and the tail of an iteration, as text.
fn trace(e: &mut dyn Entries) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        match e.next_entry() {
            None => break,
            Some(Ok(b)) => {
                let bytes = match &b {
                    Batch::V2(r) => r.bytes(),
                    Batch::Legacy(l) => l.bytes(),
                };
                out.push(format!(
                    "entry at {} offset {} size {} crc-ok {} bytes {:08x}",
                    b.position(),
                    b.offset_field(),
                    b.size_in_bytes(),
                    b.check_crc().is_ok(),
                    crc32c::crc32c(bytes)
                ));
            }
            Some(Err(EntryError::Bad(err))) => {
                out.push(format!("error at {}: {}", err.pos, err.reason));
                match e.resync() {
                    Ok(Some(s)) => out.push(format!("skipped [{}, {})", s.from, s.to)),
                    Ok(None) => break,
                    Err(x) => panic!("resync failed: {x:?}"),
                }
            }
            Some(Err(EntryError::Io(x))) => panic!("read failed: {x}"),
        }
    }
    out.push(format!("tail {:?} next {}", e.tail(), e.position()));
    out
}

/// Every step of a walk that marks checksums and resyncs, as text.
fn walk_trace<E: Entries>(mut w: Walk<E>) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(step) = w.next() {
        out.push(match step {
            Step::Batch(b) => format!("batch at {} offset {}", b.position(), b.offset_field()),
            Step::BadCrc(b, e) => format!("crc at {}: {}", b.position(), e.reason),
            Step::Skipped(s) => format!("skipped [{}, {})", s.from, s.to),
            Step::Bad(e) => format!("error at {}: {}", e.pos, e.reason),
            Step::Tail(t) => format!("tail at {}: {}", t.position, t.describe()),
            Step::Io(e) => panic!("read failed: {e}"),
        });
    }
    out.push(format!("next {}", w.position()));
    out
}

/// A walk that marks checksums and resyncs.
fn marking<E: Entries>(e: E) -> Walk<E> {
    Walk::new(e).checksums(Checksums::Mark).resync(true)
}

/// Files framed as log entries: segments and KRaft snapshots.
fn framed_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            framed_files(&p, out);
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let snapshot =
            name.ends_with(".checkpoint") && name.starts_with(|c: char| c.is_ascii_digit());
        if name.ends_with(".log") || snapshot || name == "bootstrap.checkpoint" {
            out.push(p);
        }
    }
}

/// The bytes as given, and damaged as real files get damaged: cut short,
/// with a flipped byte in an entry header, with zeros appended (a
/// preallocated tail), and with garbage in the middle.
fn variants(d: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut v = vec![("as captured", d.to_vec())];
    if d.len() > 40 {
        v.push(("cut at half", d[..d.len() / 2].to_vec()));
        v.push(("cut by one", d[..d.len() - 1].to_vec()));
        let mut flip = d.to_vec();
        let at = d.len() / 3;
        flip[at] ^= 0x5a;
        v.push(("byte flipped", flip));
        let mut garbage = d[..d.len() / 2].to_vec();
        garbage.extend(std::iter::repeat_n(0x41, 300));
        garbage.extend_from_slice(&d[d.len() / 2..]);
        v.push(("garbage inside", garbage));
    }
    let mut zeros = d.to_vec();
    zeros.extend(std::iter::repeat_n(0, 100));
    v.push(("zeros appended", zeros));
    v
}

#[test]
fn windowed_reads_frame_every_captured_segment_as_bytes_in_memory_do() {
    let mut files = Vec::new();
    framed_files(&root().join("testdata"), &mut files);
    files.sort();
    assert!(files.len() > 100, "{} segment files", files.len());
    let dir = scratch("read-paths-iter");
    let copy = dir.join("00000000000000000000.log");
    let mut compared = 0;
    for f in &files {
        let data = std::fs::read(f).unwrap();
        for (what, bytes) in variants(&data) {
            std::fs::write(&copy, &bytes).unwrap();
            let seg = SegmentFile::open_unmapped(&copy).unwrap();
            assert!(seg.is_unmapped());
            for strict in [false, true] {
                let mut whole = SegmentIter::new(&bytes);
                if strict {
                    whole = whole.strict();
                }
                let want = trace(&mut whole);
                for window in [1, 17, 61, 100, 4096, 1 << 20] {
                    let mut r = seg.entries().window_size(window);
                    if strict {
                        r = r.strict();
                    }
                    assert_eq!(
                        trace(&mut r),
                        want,
                        "{} ({what}, strict {strict}, window {window})",
                        f.display()
                    );
                    compared += 1;
                }
            }
            // The walk over each: the same steps.
            let want = walk_trace(marking(SegmentIter::new(&bytes)));
            for window in [1, 61, 4096] {
                assert_eq!(
                    walk_trace(marking(seg.entries().window_size(window))),
                    want,
                    "{} ({what}, walk, window {window})",
                    f.display()
                );
            }
            // A range inside the file, as dump --max-bytes and index
            // lookups read it.
            let mid = bytes.len() as u64 / 2;
            let want = trace(&mut SegmentIter::with_range(&bytes, 0, mid as usize));
            assert_eq!(
                trace(&mut seg.reader(0, mid).window_size(13)),
                want,
                "{} ({what}, range [0, {mid}))",
                f.display()
            );
        }
    }
    eprintln!(
        "{} files, {compared} windowed iterations compared",
        files.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Digests of every file under `dir`, to show it was not touched.
fn digests(dir: &Path, out: &mut BTreeMap<PathBuf, (u64, u32)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            digests(&p, out);
        } else {
            let b = std::fs::read(&p).unwrap();
            out.insert(p, (b.len() as u64, crc32c::crc32c(&b)));
        }
    }
}

#[test]
fn every_command_answers_the_same_on_every_capture_read_either_way() {
    // Windows of 1 byte and 4 KiB force every segment (the committed ones
    // are small) through the windowed reader, with window edges inside
    // headers and batches.
    let ways: [&[(&str, &str)]; 2] = [
        &[("KLF_NO_MMAP", "1"), ("KLF_READ_WINDOW", "1")],
        &[("KLF_READ_WINDOW", "4K")],
    ];
    let mut runs = 0;
    for cap in captures() {
        let mut before = BTreeMap::new();
        digests(&cap, &mut before);
        let c = cap.to_str().unwrap();
        let commands: Vec<Vec<&str>> = vec![
            vec!["diff", "--format", "json", "--records", c],
            vec!["check", "--format", "json", c],
            vec!["timeline", "--format", "json", c],
            vec!["dump", "--deep-iteration", c],
            vec!["dump", "--format", "json", "--print-data-log", c],
            vec!["dump", "--format", "table", c],
        ];
        for args in &commands {
            let want = klf_env(args, &[]);
            assert!(
                !want.1.is_empty() || !want.2.is_empty(),
                "{args:?}: no output"
            );
            for env in ways {
                let got = klf_env(args, env);
                assert_eq!(got.0, want.0, "{args:?} {env:?}: exit code");
                assert!(got.1 == want.1, "{args:?} {env:?}: stdout differs");
                assert_eq!(
                    String::from_utf8_lossy(&got.2),
                    String::from_utf8_lossy(&want.2),
                    "{args:?} {env:?}: stderr differs"
                );
                runs += 1;
            }
        }
        let mut after = BTreeMap::new();
        digests(&cap, &mut after);
        assert_eq!(before, after, "{c} changed");
    }
    eprintln!("{runs} windowed runs matched the in-memory runs");
}

/// A segment of `n` copies of a real batch (the largest uncompressed one of
/// the codecs capture), each rebased to follow the one before: offsets are
/// outside the checksum, so every copy stays valid.
fn big_segment(path: &Path, n: usize) {
    let src = root().join("testdata/kafka/codecs/broker-2/codec-none-0/00000000000000000121.log");
    let d = std::fs::read(src).unwrap();
    let Some(Ok(Batch::V2(b))) = SegmentIter::new(&d).next() else {
        panic!("no batch")
    };
    let one = b.bytes().to_vec();
    let step = i64::from(b.last_offset_delta()) + 1;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut copy = one.clone();
    for i in 0..n {
        copy[..8].copy_from_slice(&(i as i64 * step).to_be_bytes());
        f.write_all(&copy).unwrap();
    }
    f.flush().unwrap();
}

#[test]
fn a_large_segment_reads_the_same_mapped_and_unmapped() {
    let dir = scratch("read-paths-big");
    let part = dir.join("broker-1/big-0");
    std::fs::create_dir_all(&part).unwrap();
    let seg = part.join("00000000000000000000.log");
    big_segment(&seg, 400);
    let len = std::fs::metadata(&seg).unwrap().len();
    assert!(len > 4 << 20, "{len} bytes");
    // Mapped by default (no .lock, not written in a live directory).
    assert!(!SegmentFile::open(&seg).unwrap().is_unmapped());
    let s = seg.to_str().unwrap();
    let b = dir.join("broker-1");
    let b = b.to_str().unwrap();
    for args in [
        vec!["dump", "--deep-iteration", s],
        vec!["dump", "--format", "json", s],
        vec!["check", "--format", "json", b],
    ] {
        let mapped = klf_env(&args, &[]);
        let mut unmapped_args = vec!["--no-mmap"];
        unmapped_args.extend(&args);
        let unmapped = klf_env(&unmapped_args, &[]);
        assert_eq!(mapped.0, unmapped.0, "{args:?}");
        assert!(mapped.1 == unmapped.1, "{args:?}: stdout differs");
        let small = klf_env(&unmapped_args, &[("KLF_READ_WINDOW", "100K")]);
        assert!(
            mapped.1 == small.1,
            "{args:?}: stdout differs with 100 KiB windows"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unmapped_reads_take_memory_of_the_window_not_of_the_file() {
    let dir = scratch("read-paths-memory");
    let part = dir.join("broker-1/big-0");
    std::fs::create_dir_all(&part).unwrap();
    // A broker's log directory that still has its lock file, freshly
    // written: klf reads it without a mapping, as after `cp -r` of a killed
    // broker.
    std::fs::write(dir.join("broker-1/.lock"), b"").unwrap();
    let seg = part.join("00000000000000000000.log");
    big_segment(&seg, 12_000);
    let len = std::fs::metadata(&seg).unwrap().len();
    assert!(len > 120 << 20, "{len} bytes");
    let s = seg.to_str().unwrap();
    let b = dir.join("broker-1");
    let b = b.to_str().unwrap();
    for args in [
        vec!["check", b],
        vec!["dump", s],
        vec!["--no-mmap", "dump", s],
    ] {
        let run = klf_measured_env(&args, &[]);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        eprintln!("{args:?}: {len} bytes, peak {} KiB", run.max_rss_kib);
        assert!(
            run.max_rss_kib < 64 * 1024,
            "{args:?}: peak memory {} KiB for a {len}-byte segment",
            run.max_rss_kib
        );
    }
    // A sparse 2 GiB segment: read, refused at its first bytes, in little
    // memory.
    let sparse = part.join("00000000000000012000.log");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let s = sparse.to_str().unwrap();
    for args in [vec!["--no-mmap", "dump", s], vec!["--no-mmap", "check", b]] {
        let run = klf_measured_env(&args, &[]);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        if args[1] == "dump" {
            assert!(
                run.stderr
                    .contains(":0: found record size 0 smaller than minimum record overhead"),
                "{}",
                run.stderr
            );
        }
        assert!(
            run.max_rss_kib < 64 * 1024,
            "{args:?}: peak memory {} KiB",
            run.max_rss_kib
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_klf_will_not_hold_without_a_mapping_is_refused_with_exit_2() {
    let dir = scratch("read-paths-refused");
    let part = dir.join("broker-1/huge-0");
    std::fs::create_dir_all(&part).unwrap();
    // An entry header declaring 150 MiB (v2 magic) at the start of a
    // 200 MiB sparse segment: the entry fits in the file, so it would have
    // to be held whole.
    let seg = part.join("00000000000000000000.log");
    let f = std::fs::File::create(&seg).unwrap();
    f.set_len(200 << 20).unwrap();
    let mut header = [0u8; 17];
    header[8..12].copy_from_slice(&(150i32 << 20).to_be_bytes());
    header[16] = 2;
    std::os::unix::fs::FileExt::write_all_at(&f, &header, 0).unwrap();
    drop(f);
    let s = seg.to_str().unwrap();
    let b = dir.join("broker-1");
    let b = b.to_str().unwrap();
    for args in [vec!["--no-mmap", "dump", s], vec!["--no-mmap", "check", b]] {
        let run = klf_measured_env(&args, &[]);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        if args[1] == "dump" {
            assert!(
                run.stderr
                    .contains("cannot read: the entry at byte 0 declares 157286412 bytes"),
                "{}",
                run.stderr
            );
        }
        assert!(
            run.max_rss_kib < 64 * 1024,
            "{args:?}: peak {} KiB",
            run.max_rss_kib
        );
    }
    let out = klf_env(&["--no-mmap", "check", "--format", "json", b], &[]);
    assert_eq!(out.0, Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.1).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"file-unreadable"), "{codes:?}");
    assert!(!codes.contains(&"batch-framing"), "{codes:?}");
    // The same segment mapped is read as Kafka would: the entry is framed
    // and its checksum fails (evidence about the data, exit 1).
    let mapped = klf_env(&["check", "--format", "json", b], &[]);
    assert_eq!(mapped.0, Some(1), "{}", String::from_utf8_lossy(&mapped.2));

    // A sparse preallocated index (a hole after its entries, as Kafka
    // leaves the active segment's) costs its data, however long it is.
    std::fs::write(&seg, b"").unwrap();
    let idx = part.join("00000000000000000000.index");
    std::fs::File::create(&idx)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let run = klf_measured_env(&["--no-mmap", "check", b], &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.max_rss_kib < 64 * 1024, "peak {} KiB", run.max_rss_kib);
    // An index whose data runs to its end, too large to read whole
    // without a mapping.
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&idx).unwrap();
        f.seek(SeekFrom::Start((300 << 20) - 8)).unwrap();
        f.write_all(&[0, 0, 0, 1, 0, 0, 0, 1]).unwrap();
    }
    let run = klf_measured_env(&["--no-mmap", "check", b], &[]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.max_rss_kib < 64 * 1024, "peak {} KiB", run.max_rss_kib);
    let out = klf_env(&["--no-mmap", "check", "--format", "json", b], &[]);
    let text = String::from_utf8_lossy(&out.1);
    assert!(
        text.contains("more than klf reads into memory without a memory mapping"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
