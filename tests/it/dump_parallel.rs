//! `klf dump` renders the batches of a large segment on every core and
//! writes them in order: what it prints (stdout, stderr, exit status) is
//! what one thread rendering them in order prints, byte for byte, on real
//! Kafka batches of every codec, control batches, legacy message sets,
//! offset gaps and damage, mapped and read a window at a time.

use std::io::Write;
use std::path::Path;

use klf::format::batch::{Batch, SegmentIter};

use super::common::{klf_env, root, scratch};

/// Every entry (v2 batch or legacy message set) of the segments of these
/// committed partitions, as bytes.
fn real_entries() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let dirs = [
        "codecs/broker-2/codec-none-0",
        "codecs/broker-2/codec-gzip-0",
        "codecs/broker-2/codec-lz4-0",
        "codecs/broker-2/codec-snappy-0",
        "codecs/broker-2/codec-zstd-0",
        "transactions/broker-1/txn-0",
        "legacy-formats/broker-1/legacy-v0-gzip-0",
        "legacy-formats/broker-1/legacy-v1-none-0",
        "legacy-formats/broker-1/legacy-v1-lz4-0",
    ];
    for d in dirs {
        let dir = root().join("testdata/kafka").join(d);
        let mut logs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        for log in logs {
            let data = std::fs::read(&log).unwrap();
            for e in SegmentIter::new(&data) {
                match e.unwrap() {
                    Batch::V2(b) => out.push(b.bytes().to_vec()),
                    Batch::Legacy(l) => out.push(l.bytes().to_vec()),
                }
            }
        }
    }
    assert!(out.len() > 50, "{} entries", out.len());
    out
}

/// A segment of at least `bytes` bytes: the real entries over and over,
/// each rebased to follow the one before (the offset is outside the
/// checksums), with a gap of 5 offsets every 97th entry. Returns where each
/// entry starts.
fn mixed_segment(path: &Path, bytes: usize) -> Vec<usize> {
    let entries = real_entries();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let (mut next, mut written, mut starts) = (0i64, 0usize, Vec::new());
    let mut i = 0;
    while written < bytes {
        let mut e = entries[i % entries.len()].clone();
        let span = match SegmentIter::new(&e).next() {
            Some(Ok(Batch::V2(b))) => i64::from(b.last_offset_delta()) + 1,
            _ => 1,
        };
        e[..8].copy_from_slice(&next.to_be_bytes());
        next += span + if i % 97 == 96 { 5 } else { 0 };
        starts.push(written);
        f.write_all(&e).unwrap();
        written += e.len();
        i += 1;
    }
    f.flush().unwrap();
    starts
}

#[test]
fn a_dump_rendered_on_every_core_is_the_dump_rendered_in_order() {
    let dir = scratch("dump-parallel");
    std::fs::create_dir_all(&dir).unwrap();
    let clean = dir.join("00000000000000000000.log");
    let starts = mixed_segment(&clean, 3 << 20);
    let data = std::fs::read(&clean).unwrap();
    // A checksum broken in the middle (a byte of the last entry's payload
    // before the middle), a framing broken at two thirds (a size no entry
    // has).
    let crc = dir.join("crc/00000000000000000000.log");
    let framing = dir.join("framing/00000000000000000000.log");
    for p in [&crc, &framing] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    let mut d = data.clone();
    let mid = starts[starts.partition_point(|&s| s < data.len() / 2)];
    d[mid - 3] ^= 0x5a;
    std::fs::write(&crc, &d).unwrap();
    let mut d = data.clone();
    let at = starts[starts.partition_point(|&s| s < data.len() * 2 / 3)];
    d[at + 8..at + 12].copy_from_slice(&0x7fff_fff0i32.to_be_bytes());
    std::fs::write(&framing, &d).unwrap();

    // 4.4's offset-gap rule and 4.1's, 2.8's record lines, --resync.
    let modes: [&[&str]; 4] = [
        &[],
        &["--deep-iteration", "--print-data-log"],
        &[
            "--deep-iteration",
            "--print-data-log",
            "--kafka-version",
            "4.1",
        ],
        &["--deep-iteration", "--kafka-version", "2.8", "--resync"],
    ];
    // Two ways to render on several cores: mapped on 2 threads, and read
    // a window at a time on 3. Each segment and each mode meets both (they
    // take turns), so every pairing is compared with half the runs.
    let parallel: [&[(&str, &str)]; 2] = [
        &[("RAYON_NUM_THREADS", "2")],
        &[
            ("RAYON_NUM_THREADS", "3"),
            ("KLF_NO_MMAP", "1"),
            ("KLF_READ_WINDOW", "1M"),
        ],
    ];
    let mut compared = 0;
    for (i, seg) in [&clean, &crc, &framing].into_iter().enumerate() {
        let s = seg.to_str().unwrap();
        for (j, mode) in modes.into_iter().enumerate() {
            let mut args = vec!["dump", "--format", "kafka"];
            args.extend_from_slice(mode);
            args.push(s);
            let env = parallel[(i + j) % 2];
            // the sequential and the parallel run side by side
            let (one, many) = std::thread::scope(|t| {
                let one = t.spawn(|| klf_env(&args, &[("RAYON_NUM_THREADS", "1")]));
                let many = klf_env(&args, env);
                (one.join().unwrap(), many)
            });
            assert!(!one.1.is_empty(), "{args:?}: no output");
            assert_eq!(many.0, one.0, "{args:?} {env:?}: exit status");
            assert!(many.1 == one.1, "{args:?} {env:?}: stdout differs");
            assert_eq!(
                String::from_utf8_lossy(&many.2),
                String::from_utf8_lossy(&one.2),
                "{args:?} {env:?}: stderr differs"
            );
            compared += 1;
        }
    }
    // The damage and the gaps are in what was compared.
    let (_, _, err) = klf_env(&["dump", "--deep-iteration", crc.to_str().unwrap()], &[]);
    let err = String::from_utf8_lossy(&err);
    assert!(err.contains("Non-consecutive offsets"), "{err}");
    assert!(err.contains(&format!("{}:", crc.display())), "{err}");
    eprintln!("{compared} parallel dumps matched the sequential ones");
    let _ = std::fs::remove_dir_all(&dir);
}
