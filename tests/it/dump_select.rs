//! `klf dump --offsets/--since/--until/--key/--count` on real segments:
//! exactly the records asked for, found with the segment's indexes.

use serde_json::Value;

use crate::common::{kafka, klf, scratch, text};

/// The JSON lines of type `kind` of `klf ARGS` (which must succeed).
fn lines(args: &[&str], kind: &str) -> Vec<Value> {
    let o = klf(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "klf {args:?}: {}",
        text(&o.stderr)
    );
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == kind)
        .collect()
}

fn offsets(v: &[Value]) -> Vec<i64> {
    v.iter().map(|r| r["offset"].as_i64().unwrap()).collect()
}

#[test]
fn offsets_a_to_b_are_exactly_those_records() {
    let seg = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let all = offsets(&lines(
        &["dump", "--format", "json", "--deep-iteration", seg],
        "record",
    ));
    for (a, b) in [(100i64, 110i64), (0, 1), (33, 35), (130, 10_000)] {
        let range = format!("{a}..{b}");
        let got = offsets(&lines(
            &[
                "dump",
                "--format",
                "json",
                "--deep-iteration",
                "--offsets",
                &range,
                seg,
            ],
            "record",
        ));
        let want: Vec<i64> = all.iter().copied().filter(|o| (a..b).contains(o)).collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "--offsets {range}");
    }
    // open ends, and --count
    let tail = offsets(&lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--offsets",
            "120..",
            seg,
        ],
        "record",
    ));
    assert_eq!(
        tail,
        all.iter()
            .copied()
            .filter(|&o| o >= 120)
            .collect::<Vec<_>>()
    );
    let five = offsets(&lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--offsets",
            "..200",
            "--count",
            "5",
            seg,
        ],
        "record",
    ));
    assert_eq!(five, all[..5].to_vec());
    // shallow: the batches holding the range
    let batches = lines(
        &["dump", "--format", "json", "--offsets", "100..110", seg],
        "batch",
    );
    assert!(!batches.is_empty());
    for b in &batches {
        assert!(
            b["base_offset"].as_i64().unwrap() < 110 && b["last_offset"].as_i64().unwrap() >= 100
        );
    }
    // table: the same records
    let o = klf(&[
        "dump",
        "--format",
        "table",
        "--deep-iteration",
        "--offsets",
        "100..103",
        seg,
    ]);
    let t = text(&o.stdout);
    let rows: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with("records:"))
        .filter(|l| l.starts_with("│ 1") || l.starts_with("│ 9"))
        .collect();
    assert_eq!(rows.len(), 3, "{t}");
    assert!(
        rows[0].starts_with("│ 100 ") && rows[2].starts_with("│ 102 "),
        "{t}"
    );
    // the kafka format is kafka-dump-log's: no selection there
    let o = klf(&["dump", "--offsets", "1..2", seg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--format json"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_key_selects_its_records() {
    let seg = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let all = lines(
        &["dump", "--format", "json", "--print-data-log", seg],
        "record",
    );
    let key = all[42]["key"]["text"].as_str().unwrap().to_string();
    let want: Vec<i64> = offsets(
        &all.iter()
            .filter(|r| r["key"]["text"].as_str() == Some(key.as_str()))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let got = offsets(&lines(
        &["dump", "--format", "json", "--key", &key, seg],
        "record",
    ));
    assert_eq!(got, want);
}

#[test]
fn since_and_until_follow_kafkas_offset_for_a_time() {
    let seg = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let batches = lines(&["dump", "--format", "json", seg], "batch");
    let records = offsets(&lines(
        &["dump", "--format", "json", "--deep-iteration", seg],
        "record",
    ));
    assert!(batches.len() >= 3);
    // Kafka's offset for time T: the first batch whose max timestamp is at
    // least T (worked out here from the batch headers).
    let offset_for = |t: i64| {
        batches
            .iter()
            .find(|b| b["max_timestamp"].as_i64().unwrap() >= t)
            .map_or(i64::MAX, |b| b["base_offset"].as_i64().unwrap())
    };
    let t1 = batches[1]["max_timestamp"].as_i64().unwrap();
    let t2 = batches[batches.len() - 1]["max_timestamp"]
        .as_i64()
        .unwrap();
    let (from, to) = (offset_for(t1), offset_for(t2));
    let iso1 = klf::render::text::iso_time(t1).unwrap();
    let got = offsets(&lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--since",
            &iso1,
            "--until",
            &t2.to_string(),
            seg,
        ],
        "record",
    ));
    let want: Vec<i64> = records
        .iter()
        .copied()
        .filter(|&o| o >= from && o < to)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    // a time past every batch selects nothing
    let none = lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--since",
            &(t2 + 1).to_string(),
            seg,
        ],
        "record",
    );
    assert!(none.is_empty());
}

#[test]
fn a_range_near_the_end_is_read_from_the_index_position() {
    // A copy of a real segment whose first bytes (before the position its
    // .index gives for the range) are overwritten: read through the index
    // the range comes out whole and clean, so those bytes were never read;
    // without the .index the damage is found at byte 0.
    let src = kafka("impact").join("after/broker-1/__consumer_offsets-0");
    let dir = scratch("seek").join("__consumer_offsets-0");
    std::fs::create_dir_all(&dir).unwrap();
    for f in [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
    ] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let log = dir.join("00000000000000000000.log");
    let log_s = log.to_str().unwrap().to_string();
    let entries = lines(
        &[
            "dump",
            "--format",
            "json",
            dir.join("00000000000000000000.index").to_str().unwrap(),
        ],
        "index_entry",
    );
    let last = entries.last().unwrap();
    let (at_offset, at_position) = (
        last["offset"].as_i64().unwrap(),
        last["position"].as_u64().unwrap(),
    );
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(
        at_position > size / 2,
        "the range is near the end: {at_position} of {size}"
    );
    let range = format!("{}..", at_offset + 1);
    let clean = offsets(&lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--offsets",
            &range,
            src.join("00000000000000000000.log").to_str().unwrap(),
        ],
        "record",
    ));
    assert!(!clean.is_empty());
    let mut bytes = std::fs::read(&log).unwrap();
    for b in &mut bytes[..at_position as usize] {
        *b = 0xff;
    }
    std::fs::write(&log, &bytes).unwrap();
    let o = klf(&[
        "dump",
        "--format",
        "json",
        "--deep-iteration",
        "--offsets",
        &range,
        &log_s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(!out.contains("\"problem\""), "{out}");
    let got: Vec<i64> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "record")
        .map(|v| v["offset"].as_i64().unwrap())
        .collect();
    assert_eq!(got, clean);
    std::fs::remove_file(dir.join("00000000000000000000.index")).unwrap();
    let o = klf(&[
        "dump",
        "--format",
        "json",
        "--deep-iteration",
        "--offsets",
        &range,
        &log_s,
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the damage at byte 0 is read without the index"
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn control_records_are_named_in_the_table_as_in_json() {
    let dir = kafka("transactions").join("broker-1");
    let mut checked = 0;
    for part in std::fs::read_dir(&dir).unwrap().flatten() {
        let seg = part.path().join("00000000000000000000.log");
        if !seg.is_file() || part.file_name().to_string_lossy().starts_with("__") {
            continue;
        }
        let seg = seg.to_str().unwrap();
        let controls: Vec<(i64, String)> = lines(
            &["dump", "--format", "json", "--deep-iteration", seg],
            "record",
        )
        .iter()
        .filter_map(|r| Some((r["offset"].as_i64()?, r["control"].as_str()?.to_string())))
        .collect();
        let table = text(&klf(&["dump", "--format", "table", "--deep-iteration", seg]).stdout);
        for (offset, name) in &controls {
            let row = table
                .lines()
                .find(|l| l.starts_with(&format!("│ {offset} ")))
                .unwrap_or_else(|| panic!("{table}"));
            assert!(row.contains(name.trim()), "{row} / {name}");
            checked += 1;
        }
    }
    assert!(checked > 0, "the capture has transaction markers");
}
