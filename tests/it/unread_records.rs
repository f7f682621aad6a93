//! Never silently partial: records a command counts but cannot read back
//! (a batch that inflates past the decompression cap), and a batch whose
//! last offset overflows, on a copy of the real `divergence` capture
//! (Kafka 4.1.1) with one batch appended to the tail only broker 1 holds.
//! Every command says what it could not read, with file and byte, and
//! exits 1; the headline, the lists and the summaries agree.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::{copy_tree, kafka, klf, scratch, text};
use klf::format::batch::encode_batch;
use klf::format::record::encode_record;
use serde_json::Value;

/// The divergence capture copied, with `batch` appended to broker 1's
/// last segment (its tail, offsets [134, 150), is what the partition
/// loses).
fn with_batch(tag: &str, batch: &[u8]) -> (PathBuf, PathBuf) {
    let dir = scratch(tag);
    copy_tree(&kafka("divergence"), &dir);
    let _ = std::fs::remove_dir_all(dir.join("after"));
    let seg = dir.join("broker-1/diverge-0/00000000000000000134.log");
    let mut f = std::fs::OpenOptions::new().append(true).open(&seg).unwrap();
    f.write_all(batch).unwrap();
    (dir, seg)
}

/// A gzip batch of `n` records at `base` (leader epoch 0, as the tail's),
/// each a 64 KiB value of zeros: 64 KiB x n inflated, a few KiB on disk.
fn gzip_batch(base: i64, n: i32) -> Vec<u8> {
    let value = vec![0u8; 64 << 10];
    let mut recs = Vec::new();
    for i in 0..n {
        let key = format!("inflated-{i}");
        encode_record(&mut recs, 0, i, Some(key.as_bytes()), Some(&value), &[]);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&recs).unwrap();
    let body = gz.finish().unwrap();
    encode_batch(base, 0, 1, n - 1, 0, 0, (-1, -1, -1), n, &body)
}

fn json(args: &[&str]) -> (Option<i32>, Value, String) {
    let o = klf(args);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, text(&o.stderr))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn records_past_the_decompression_cap_are_counted_listed_as_left_out_and_fail_the_run() {
    // 64 records of 64 KiB: 4 MiB inflated, over a 1 MiB cap
    let (dir, seg) = with_batch("unread-cap", &gzip_batch(150, 64));
    let d = s(&dir);
    let pos = std::fs::metadata(&seg).unwrap().len() - gzip_batch(150, 64).len() as u64;
    let cap = ["--max-decompressed-bytes", "1M"];

    let mut args = vec!["diff", d, "--records", "--format", "json"];
    args.extend(cap);
    let (code, v, err) = json(&args);
    assert_eq!(code, Some(1), "{err}");
    let p = &v["partitions"][0];
    let loss = &p["loss"];
    assert_eq!(loss["records"], 80, "the headline counts from the headers");
    let listed = loss["lost_records"].as_array().unwrap().len() as u64;
    let left = &loss["lost_records_left_out"];
    assert_eq!(listed, 16);
    assert_eq!(left["records"], 64);
    assert_eq!(listed + left["records"].as_u64().unwrap(), 80);
    let b = &left["batches"][0];
    assert_eq!(b["position"].as_u64(), Some(pos));
    assert_eq!(
        (b["start"].as_i64(), b["end"].as_i64()),
        (Some(150), Some(214))
    );
    assert!(b["file"]
        .as_str()
        .unwrap()
        .ends_with("00000000000000000134.log"));
    assert!(b["reason"].as_str().unwrap().contains("cap"), "{b}");
    // broker 1's own list: its summary and what it left out add up too
    let r1 = p["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["broker"] == 1)
        .unwrap();
    assert_eq!(
        r1["lost_summary"]["records"].as_u64().unwrap()
            + r1["lost_records_left_out"]["records"].as_u64().unwrap(),
        80
    );
    assert!(err.contains("00000000000000000134.log"), "{err}");

    // the table says it under the list, with file and byte
    let mut args = vec!["diff", d, "--records"];
    args.extend(cap);
    let o = klf(&args);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("64 records not read back")
            && out.contains(&format!("00000000000000000134.log:{pos}")),
        "{out}"
    );

    // dump reports the batch and exits 1; salvage says what it could not
    let o = klf(&["dump", "--deep-iteration", s(&seg), cap[0], cap[1]]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out_dir = scratch("unread-cap-salvage");
    let _ = std::fs::remove_dir_all(&out_dir);
    let o = klf(&["salvage", d, "--out", s(&out_dir), cap[0], cap[1]]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("16 of 80"), "{}", text(&o.stderr));

    // a cap that holds the batch reads every record: nothing left out
    let (code, v, err) = json(&[
        "diff",
        d,
        "--records",
        "--format",
        "json",
        "--max-decompressed-bytes",
        "8M",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let loss = &v["partitions"][0]["loss"];
    assert_eq!(loss["lost_records"].as_array().unwrap().len(), 80);
    assert_eq!(loss["lost_records_left_out"]["records"], 0);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn a_last_offset_that_overflows_is_damage_in_every_command() {
    let mut recs = Vec::new();
    for i in 0..3 {
        encode_record(&mut recs, 0, i, Some(b"k"), Some(b"v"), &[]);
    }
    let base = i64::MAX - 5;
    let batch = encode_batch(base, 0, 0, 10, 0, 0, (-1, -1, -1), 3, &recs);
    let (dir, seg) = with_batch("unread-overflow", &batch);
    let d = s(&dir);
    let pos = std::fs::metadata(&seg).unwrap().len() - batch.len() as u64;
    let out_dir = scratch("unread-overflow-salvage");
    let _ = std::fs::remove_dir_all(&out_dir);
    let html = out_dir.with_extension("html");
    let seg_name = "00000000000000000134.log";
    for args in [
        vec!["dump", "--deep-iteration", s(&seg)],
        vec!["dump", "--format", "json", s(&seg)],
        vec!["check", d],
        vec!["timeline", d],
        vec!["diff", d, "--records"],
        vec!["salvage", d, "--out", s(&out_dir)],
        vec!["report", d, "--html", s(&html)],
    ] {
        let o = klf(&args);
        let err = text(&o.stderr);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "klf {args:?}: {err}");
        // the file and the byte (FILE:POS on stderr, columns in check)
        let all = err + &out;
        assert!(
            all.contains(seg_name) && all.contains(&pos.to_string()) && all.contains("overflows"),
            "klf {args:?} does not name the batch:\n{all}"
        );
        assert!(
            !out.contains("-9223372036854775"),
            "klf {args:?}: a wrapped offset"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out_dir);
    let _ = std::fs::remove_file(&html);
}

/// A metadata-log batch klf cannot read the records of (over the cap) on
/// the broker whose metadata log is read: every command that builds on the
/// controller's history says so with file and byte and exits 1; `check`
/// has a `records-unreadable` finding.
#[test]
fn metadata_records_not_read_are_never_a_clean_answer() {
    use klf::format::batch::{Batch, SegmentIter};
    let dir = scratch("unread-metadata");
    copy_tree(&kafka("unclean"), &dir);
    let _ = std::fs::remove_dir_all(dir.join("after"));
    let mut positions = Vec::new();
    for b in 1..=3 {
        let seg = dir.join(format!(
            "broker-{b}/__cluster_metadata-0/00000000000000000000.log"
        ));
        let Ok(data) = std::fs::read(&seg) else {
            continue;
        };
        let (mut next, mut epoch) = (0, 0);
        for item in SegmentIter::new(&data) {
            if let Ok(Batch::V2(rb)) = item {
                next = rb.last_offset() + 1;
                epoch = rb.partition_leader_epoch();
            }
        }
        let mut batch = gzip_batch(next, 32);
        batch[12..16].copy_from_slice(&epoch.to_be_bytes());
        let crc = crc32c::crc32c(&batch[21..]);
        batch[17..21].copy_from_slice(&crc.to_be_bytes());
        positions.push(data.len().to_string());
        let mut f = std::fs::OpenOptions::new().append(true).open(&seg).unwrap();
        f.write_all(&batch).unwrap();
    }
    let d = s(&dir);
    let out_dir = scratch("unread-metadata-salvage");
    let _ = std::fs::remove_dir_all(&out_dir);
    let html = out_dir.with_extension("html");
    for args in [
        vec!["timeline", d],
        vec!["elect", d],
        vec!["diff", d, "--fail-on", "never"],
        vec!["impact", d, "--fail-on", "never"],
        vec!["check", d],
        vec!["salvage", d, "--out", s(&out_dir)],
        vec!["report", d, "--html", s(&html)],
    ] {
        let mut a = vec!["--max-decompressed-bytes", "1M"];
        a.extend(&args);
        let o = klf(&a);
        let all = text(&o.stderr) + &text(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "klf {args:?}: {all}");
        assert!(
            all.contains("__cluster_metadata-0/00000000000000000000.log")
                && positions.iter().any(|p| all.contains(p.as_str()))
                && all.contains("cap"),
            "klf {args:?} does not name the batch:\n{all}"
        );
        if args[0] == "check" {
            assert!(all.contains("records-unreadable"), "{all}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&out_dir);
    let _ = std::fs::remove_file(&html);
}
