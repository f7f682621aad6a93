//! Hostile input: real segments, indexes, snapshots and checkpoints captured
//! from Kafka, damaged in the ways disks and people damage them (bit flips,
//! truncation at every batch boundary, zeroed 4 KiB pages, huge and negative
//! length fields, overlong varints, decompression bombs), then read through
//! the library and through the `klf` binary.
//!
//! Every case must: not panic; finish in bounded time; allocate no more
//! than the decompression cap for a batch; and, where the input is invalid,
//! say so with the file, the byte position (inside the damaged batch) and a
//! reason. Case counts are bounded so the file runs in seconds in debug.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::common::klf_hostile;

use klf::format::batch::{encode_batch, Batch, SegmentIter, V2_HEADER_SIZE};
use klf::format::checkpoint::{
    parse_leader_epoch_checkpoint_lenient, parse_offset_checkpoint_lenient,
};
use klf::format::index::{OffsetIndex, TimeIndex};
use klf::format::snapshot::parse_producer_snapshot;
use klf::format::txnindex::parse_txn_index;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const CAP: usize = 1 << 20;
const TIME_LIMIT: Duration = Duration::from_secs(10);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka")
}

/// First segments of partitions covering every batch shape Kafka wrote in
/// the captures: uncompressed and the four codecs (v2), v0/v1 message sets
/// with compressed wrappers, transactions with control batches, the
/// consumer-offsets and metadata logs.
const SEGMENTS: &[&str] = &[
    "codecs/broker-1/codec-none-0/00000000000000000000.log",
    "codecs/broker-1/codec-gzip-0/00000000000000000000.log",
    "codecs/broker-1/codec-snappy-0/00000000000000000000.log",
    "codecs/broker-1/codec-lz4-0/00000000000000000000.log",
    "codecs/broker-1/codec-zstd-0/00000000000000000000.log",
    "legacy-formats/broker-1/legacy-v0-snappy-0/00000000000000000000.log",
    "legacy-formats/broker-1/legacy-v1-gzip-0/00000000000000000000.log",
    "legacy-formats/broker-1/legacy-v1-lz4-0/00000000000000000000.log",
    "transactions/broker-1/txn-0/00000000000000000000.log",
    "internal-topics/broker-1/__consumer_offsets-0/00000000000000000000.log",
    "internal-topics/broker-1/__cluster_metadata-0/00000000000000000000.log",
];

fn segments() -> Vec<(String, Vec<u8>)> {
    SEGMENTS
        .iter()
        .map(|rel| {
            let data = std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
            assert!(data.len() > 200, "{rel} too small to be a useful seed");
            (rel.to_string(), data)
        })
        .collect()
}

/// (position, total size) of every complete entry of an intact segment.
fn entries(data: &[u8]) -> Vec<(usize, usize)> {
    SegmentIter::new(data)
        .strict()
        .map(|b| {
            let b = b.expect("intact capture");
            (b.position() as usize, b.size_in_bytes() as usize)
        })
        .collect()
}

/// What reading `data` the way klf does produced.
#[derive(Debug, Default)]
struct Walk {
    /// Position of the first error or tail of the strict iteration.
    first_problem: Option<u64>,
    /// Every error position seen (strict iteration and record iteration).
    positions: Vec<u64>,
}

/// Reads `data` as klf dump/check do: lenient and strict framing (with
/// resync after each error), every record of every batch through the capped
/// decompression. Asserts the invariants that hold for any input.
fn walk(data: &[u8]) -> Result<Walk, TestCaseError> {
    let started = Instant::now();
    let mut w = Walk::default();
    let mut scratch = Vec::new();
    for b in SegmentIter::new(data) {
        let Ok(b) = b else { break };
        let _ = b.check_crc();
        match b {
            Batch::V2(rb) => {
                if let Ok(recs) = rb.records(&mut scratch, CAP) {
                    for r in recs {
                        match r {
                            Ok(r) => {
                                let _ = r.headers().count();
                            }
                            Err(e) => {
                                prop_assert!(!e.reason.is_empty());
                                w.positions.push(e.pos);
                                break;
                            }
                        }
                    }
                }
            }
            Batch::Legacy(e) => {
                if let Ok(msgs) = e.records(&mut scratch, CAP) {
                    for m in msgs {
                        if m.is_err() {
                            break;
                        }
                    }
                }
            }
        }
        prop_assert!(
            scratch.len() <= CAP + 1,
            "decompressed {} bytes past the cap",
            scratch.len()
        );
    }
    let mut it = SegmentIter::new(data).strict();
    let mut steps = 0usize;
    loop {
        match it.next() {
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                prop_assert!(!e.reason.is_empty(), "error without a reason");
                prop_assert!(
                    e.pos <= data.len() as u64,
                    "error position {} past the end {}",
                    e.pos,
                    data.len()
                );
                w.first_problem.get_or_insert(e.pos);
                w.positions.push(e.pos);
                if it.resync().is_none() {
                    break;
                }
            }
            None => break,
        }
        steps += 1;
        prop_assert!(steps <= data.len() + 2, "iteration does not progress");
    }
    for p in &w.positions {
        prop_assert!(*p <= data.len() as u64);
    }
    prop_assert!(
        started.elapsed() < TIME_LIMIT,
        "took {:?}",
        started.elapsed()
    );
    Ok(w)
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn bit_flips_never_panic_and_errors_stay_in_the_file() {
    let segs = segments();
    runner(96)
        .run(
            &(
                0..segs.len(),
                prop::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..12),
            ),
            |(i, flips)| {
                let mut d = segs[i].1.clone();
                for (at, bit) in flips {
                    let p = at.index(d.len());
                    d[p] ^= 1 << bit;
                }
                walk(&d)?;
                Ok(())
            },
        )
        .unwrap();
}

/// Truncation at, and a few bytes past, the start of every entry, and one
/// byte short of its end: the strict reader stops exactly at the cut entry.
#[test]
fn truncation_at_every_batch_boundary_is_reported_at_that_batch() {
    for (name, data) in segments() {
        let ents = entries(&data);
        assert!(ents.len() >= 2, "{name}");
        for &(start, size) in &ents {
            for cut in [0, 1, 8, 11, 12, 16, 17, 21, 57, 61, size - 1] {
                if cut >= size {
                    continue;
                }
                let d = &data[..start + cut];
                let w = walk(d).unwrap();
                if cut == 0 {
                    assert_eq!(w.first_problem, None, "{name}: cut at entry {start}");
                } else {
                    assert_eq!(
                        w.first_problem,
                        Some(start as u64),
                        "{name}: cut {cut} bytes into the entry at {start}"
                    );
                }
            }
        }
    }
}

/// A zeroed 4 KiB page (a page the filesystem never wrote): reported in
/// the entry where the damage starts or in one after it, never before.
#[test]
fn zeroed_pages_are_reported_where_they_are() {
    for (name, data) in segments() {
        let ents = entries(&data);
        for page in 0..data.len().div_ceil(4096) {
            let from = page * 4096;
            let to = (from + 4096).min(data.len());
            let mut d = data.clone();
            d[from..to].fill(0);
            if d == data {
                continue;
            }
            let w = walk(&d).unwrap();
            // Entries before the one holding the page start are intact:
            // the damage cannot be reported before that entry.
            let lower = ents
                .iter()
                .map(|e| e.0)
                .filter(|&s| s <= from)
                .max()
                .unwrap_or(0) as u64;
            let p = w
                .first_problem
                .unwrap_or_else(|| panic!("{name}: zeroed page {page} not reported"));
            assert!(
                p >= lower,
                "{name}: page {page} reported at {p}, before the damaged entry at {lower}"
            );
            assert!(
                p <= to as u64,
                "{name}: page {page} ({from}..{to}) reported only at {p}"
            );
        }
    }
}

/// Length fields set to what no writer produces: negative, below the
/// minimum, past the end, i32::MAX. The strict reader stops at that entry
/// with a reason; nothing is allocated from the bogus size.
#[test]
fn huge_and_negative_length_fields() {
    for (name, data) in segments() {
        for &(start, _) in entries(&data).iter().take(6) {
            for v in [-1i32, i32::MIN, 0, 1, 13, i32::MAX, (data.len() * 2) as i32] {
                let mut d = data.clone();
                d[start + 8..start + 12].copy_from_slice(&v.to_be_bytes());
                let w = walk(&d).unwrap();
                assert_eq!(
                    w.first_problem,
                    Some(start as u64),
                    "{name}: size {v} at {start}"
                );
            }
        }
    }
}

fn fix_crc(d: &mut [u8], start: usize, size: usize) {
    let crc = crc32c::crc32c(&d[start + 21..start + size]);
    d[start + 17..start + 21].copy_from_slice(&crc.to_be_bytes());
}

/// Record counts and varints that overflow, in otherwise valid v2 batches
/// (CRC recomputed, so only the record layer can object).
#[test]
fn record_counts_and_varint_overflows() {
    let (_, data) = segments().remove(0); // codec-none: records readable in place
    let ents = entries(&data);
    let mut scratch = Vec::new();
    for &(start, size) in ents.iter().take(8) {
        // Overlong varint at the first record's length.
        let mut d = data.clone();
        d[start + V2_HEADER_SIZE..start + V2_HEADER_SIZE + 10].fill(0xff);
        fix_crc(&mut d, start, size);
        let b = SegmentIter::new(&d[start..start + size])
            .next()
            .unwrap()
            .unwrap();
        let Batch::V2(rb) = b else {
            panic!("v2 expected")
        };
        let errs: Vec<_> = rb
            .records(&mut scratch, CAP)
            .unwrap()
            .filter_map(Result::err)
            .collect();
        assert_eq!(errs.len(), 1, "one error, then the iteration stops");
        assert_eq!(
            errs[0].pos, V2_HEADER_SIZE as u64,
            "overlong varint reported at the record"
        );
        assert!(
            errs[0].reason.contains("varint") || errs[0].reason.contains("Varint"),
            "{}",
            errs[0].reason
        );
        // Record counts: huge, negative.
        for count in [i32::MAX, -1, i32::MIN] {
            let mut d = data.clone();
            d[start + 57..start + 61].copy_from_slice(&count.to_be_bytes());
            fix_crc(&mut d, start, size);
            let b = SegmentIter::new(&d[start..start + size])
                .next()
                .unwrap()
                .unwrap();
            let Batch::V2(rb) = b else { panic!() };
            let t = Instant::now();
            match rb.records(&mut scratch, CAP) {
                Err(e) => assert!(e.reason.contains("record count"), "{}", e.reason),
                Ok(recs) => {
                    let n = recs.take(1_000_000).count();
                    assert!(n < 100_000, "{n} records from a {size}-byte batch");
                }
            }
            assert!(t.elapsed() < TIME_LIMIT);
        }
    }
}

/// A batch that inflates past the cap is an error naming the cap, and
/// never holds more than the cap in memory.
#[test]
fn decompression_bombs_stop_at_the_cap() {
    use std::io::Write;
    // One record with a 4 MiB value of zeros: 4 KiB of gzip.
    let value = vec![0u8; 4 << 20];
    let mut rec = Vec::new();
    klf::format::record::encode_record(&mut rec, 0, 0, None, Some(&value), &[]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&rec).unwrap();
    let body = gz.finish().unwrap();
    let batch = encode_batch(0, 0, 1, 0, 0, 0, (-1, -1, -1), 1, &body);
    let b = SegmentIter::new(&batch).next().unwrap().unwrap();
    let Batch::V2(rb) = b else { panic!() };
    let mut scratch = Vec::new();
    let e = rb.records(&mut scratch, 1 << 20).unwrap_err();
    assert!(e.reason.contains("cap"), "{}", e.reason);
    assert!(scratch.len() <= (1 << 20) + 1);
    assert!(
        scratch.capacity() <= (1 << 20) + 64,
        "buffer grew to {} bytes past the cap",
        scratch.capacity()
    );
    // A record count the cap cannot hold (7 bytes is the smallest record)
    // is refused before anything is inflated, at the count field.
    let many = encode_batch(0, 0, 1, 0, 0, 0, (-1, -1, -1), 200_000, &body);
    let Batch::V2(rm) = SegmentIter::new(&many).next().unwrap().unwrap() else {
        panic!()
    };
    let mut fresh = Vec::new();
    let e = rm.records(&mut fresh, 1 << 20).unwrap_err();
    assert_eq!(e.pos, 57);
    assert!(
        e.reason
            .contains("200000 records need at least 1400000 decompressed bytes"),
        "{}",
        e.reason
    );
    assert_eq!(fresh.capacity(), 0, "nothing inflated");
    // Under a cap that fits, the record reads.
    let mut recs = rb.records(&mut scratch, 8 << 20).unwrap();
    assert_eq!(recs.next().unwrap().unwrap().value.unwrap().len(), 4 << 20);
}

#[test]
fn indexes_snapshots_and_checkpoints_under_mutation() {
    let base = root().join("divergence/broker-1/diverge-0");
    let index = std::fs::read(base.join("00000000000000000000.index")).unwrap();
    let tindex = std::fs::read(base.join("00000000000000000000.timeindex")).unwrap();
    let snap = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "snapshot")
                && std::fs::metadata(p).unwrap().len() > 6
        })
        .map(|p| std::fs::read(p).unwrap())
        .unwrap_or_else(|| {
            std::fs::read(
                root()
                    .join("transactions/broker-1/txn-0")
                    .read_dir()
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .find(|p| p.extension().is_some_and(|e| e == "snapshot"))
                    .unwrap(),
            )
            .unwrap()
        });
    let epochs = std::fs::read(base.join("leader-epoch-checkpoint")).unwrap();
    let hw =
        std::fs::read(root().join("divergence/broker-1/replication-offset-checkpoint")).unwrap();
    let files = [index, tindex, snap, epochs, hw];
    runner(128)
        .run(
            &(
                0..files.len(),
                prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
                any::<prop::sample::Index>(),
                prop::option::of(any::<prop::sample::Index>()),
            ),
            |(i, writes, cut, page)| {
                let mut d = files[i].clone();
                for (at, v) in writes {
                    if !d.is_empty() {
                        let p = at.index(d.len());
                        d[p] = v;
                    }
                }
                if let Some(pg) = page {
                    let from = pg.index(d.len().max(1)) & !4095;
                    let to = (from + 4096).min(d.len());
                    if from < to {
                        d[from..to].fill(0);
                    }
                }
                let n = cut.index(d.len() + 1);
                d.truncate(n);
                let t = Instant::now();
                let oi = OffsetIndex::new(&d, 0);
                prop_assert!(oi.entries() <= d.len() / 8);
                let _ = (
                    oi.iter().count(),
                    oi.sanity_check(),
                    oi.lookup(50),
                    oi.valid_entries(Some(1000)),
                );
                let ti = TimeIndex::new(&d, 0);
                let _ = (
                    ti.iter().count(),
                    ti.sanity_check(),
                    ti.lookup(i64::MAX),
                    ti.valid_entries(),
                );
                match parse_producer_snapshot(&d) {
                    Ok(s) => prop_assert!(s.entries.len() <= d.len() / 46 + 1),
                    Err(e) => prop_assert!(e.pos <= d.len() as u64 && !e.reason.is_empty()),
                }
                if let Err(e) = parse_txn_index(&d) {
                    prop_assert!(e.pos <= d.len() as u64);
                }
                for p in parse_offset_checkpoint_lenient(&d).problems {
                    prop_assert!(p.to_string().len() > 3);
                }
                let _ = parse_leader_epoch_checkpoint_lenient(&d);
                prop_assert!(t.elapsed() < TIME_LIMIT);
                Ok(())
            },
        )
        .unwrap();
}

// ------------------------------------------------------------------ CLI

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("klf-hostile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `file:pos: reason` lines of a dump's stderr, checked against the file.
fn problem_positions(stderr: &str, file: &str, len: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix(file).and_then(|r| r.strip_prefix(':')) {
            let (pos, reason) = rest
                .split_once(": ")
                .unwrap_or_else(|| panic!("malformed line {line:?}"));
            let pos: u64 = pos
                .parse()
                .unwrap_or_else(|_| panic!("no position in {line:?}"));
            assert!(pos <= len, "{line:?}: position past the end ({len})");
            assert!(!reason.trim().is_empty(), "{line:?}: no reason");
            out.push(pos);
        }
    }
    out
}

/// Mutated real segments through `klf dump` (kafka and json) and
/// `klf check --format json`: exit 0/1/2, never a signal; a damaged batch
/// is reported as `file:pos: reason` at the batch, and by check with the
/// file and position.
#[test]
fn cli_reports_damage_with_file_position_and_reason() {
    let segs = segments();
    let dir = Scratch::new("cli");
    let part = dir.0.join("broker-1/t-0");
    std::fs::create_dir_all(&part).unwrap();
    let file = part.join("00000000000000000000.log");
    let file_s = file.display().to_string();
    let mut runner = runner(20);
    runner
        .run(
            &(
                0..segs.len(),
                0u8..4,
                any::<prop::sample::Index>(),
                any::<u32>(),
            ),
            |(i, kind, at, v)| {
                let (name, data) = &segs[i];
                let ents = entries(data);
                let (start, size) = ents[at.index(ents.len())];
                let mut d = data.clone();
                match kind {
                    0 => d[start + 21 + (v as usize % (size - 21))] ^= 0x5a, // CRC-covered byte
                    1 => d[start + 8..start + 12]
                        .copy_from_slice(&(v as i32 | i32::MIN).to_be_bytes()),
                    2 => d.truncate(start + 1 + v as usize % (size - 1)),
                    _ => d[start + 8..start + 12].copy_from_slice(&i32::MAX.to_be_bytes()),
                }
                std::fs::write(&file, &d).unwrap();
                let (code, _, err) =
                    klf_hostile(&["dump", "--format", "kafka", "--deep-iteration", &file_s]);
                let pos = problem_positions(&err, &file_s, d.len() as u64);
                if kind != 2 {
                    prop_assert_eq!(code, 1, "{}: {}", name, err);
                    prop_assert!(
                        pos.contains(&(start as u64)),
                        "{}: kind {} at {} not reported: {}",
                        name,
                        kind,
                        start,
                        err
                    );
                }
                let (code, _, err) = klf_hostile(&["dump", "--format", "json", &file_s]);
                let pos = problem_positions(&err, &file_s, d.len() as u64);
                if kind != 2 {
                    prop_assert_eq!(code, 1, "{}: {}", name, err);
                    prop_assert!(
                        pos.contains(&(start as u64)),
                        "{}: json dump did not report {}: {}",
                        name,
                        start,
                        err
                    );
                }
                let (code, out, _) =
                    klf_hostile(&["check", "--format", "json", &dir.0.display().to_string()]);
                if kind >= 2 {
                    // A torn tail (cut, or a size running past the end) on
                    // the last segment is what a crash leaves and what
                    // Kafka's recovery truncates quietly: check reports it
                    // below error level.
                    prop_assert!(code <= 1);
                    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                    let hit = v["findings"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|f| f["position"].as_u64() == Some(start as u64));
                    prop_assert!(
                        hit,
                        "{}: check does not mention the torn tail at {}: {}",
                        name,
                        start,
                        out
                    );
                    return Ok(());
                }
                prop_assert_eq!(code, 1, "{}: check passed a damaged segment", name);
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                let hit = v["findings"].as_array().unwrap().iter().any(|f| {
                    f["severity"] == "error"
                        && f["file"]
                            .as_str()
                            .is_some_and(|n| n.ends_with("00000000000000000000.log"))
                        && f["position"].as_u64() == Some(start as u64)
                });
                prop_assert!(hit, "{}: check names no error at {}: {}", name, start, out);
                Ok(())
            },
        )
        .unwrap();
}
