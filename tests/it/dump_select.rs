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
}

/// The golden kafka-dump-log text of a segment as its batches: each batch
/// line with its offsets and the record lines after it, with theirs.
type GoldenBatch = (String, i64, i64, Vec<(i64, String)>);

fn golden_batches(golden: &str) -> (Vec<String>, Vec<GoldenBatch>) {
    let field = |l: &str, name: &str| -> i64 {
        let at = l.find(name).unwrap() + name.len();
        l[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let mut head = Vec::new();
    let mut out: Vec<GoldenBatch> = Vec::new();
    for l in golden.lines() {
        if l.starts_with("baseOffset: ") {
            out.push((
                l.to_string(),
                field(l, "baseOffset: "),
                field(l, "lastOffset: "),
                vec![],
            ));
        } else if l.starts_with("| offset: ") {
            out.last_mut()
                .unwrap()
                .3
                .push((field(l, "| offset: "), l.to_string()));
        } else if out.is_empty() {
            head.push(l.to_string());
        }
    }
    (head, out)
}

#[test]
fn kafka_format_selections_are_kafka_dump_logs_own_lines() {
    let cap = kafka("divergence");
    let seg = cap.join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let golden = |mode: &str| {
        std::fs::read_to_string(cap.join(format!(
            "golden/broker-2/diverge-0/00000000000000000000.log.{mode}.txt"
        )))
        .unwrap()
    };
    let (mut head, deep) = golden_batches(&golden("deep"));
    let (_, shallow) = golden_batches(&golden("shallow"));
    assert!(deep.len() > 3 && head.len() == 2, "{head:?}");
    // the golden names the file as given to kafka-dump-log
    head[0] = format!("Dumping {seg}");
    let keys = |b: &GoldenBatch| b.3.iter().map(|r| r.0).collect::<Vec<_>>();
    for (a, b) in [(100, 103), (0, 1), (17, 40), (120, 1000), (140, 1000)] {
        // deep: each batch holding a record of [a, b), then those records
        let mut want = head.clone();
        for g in &deep {
            let rs: Vec<&String> =
                g.3.iter()
                    .filter(|r| r.0 >= a && r.0 < b)
                    .map(|r| &r.1)
                    .collect();
            if !rs.is_empty() {
                want.push(g.0.clone());
                want.extend(rs.into_iter().cloned());
            }
        }
        let range = format!("{a}..{b}");
        let args = [
            "dump",
            "--format",
            "kafka",
            "--deep-iteration",
            "--print-data-log",
            "--offsets",
            &range,
            seg,
        ];
        let o = klf(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
        assert_eq!(got, want, "klf {args:?}");
        // shallow: the batches whose offsets meet [a, b)
        let mut want = head.clone();
        want.extend(
            shallow
                .iter()
                .filter(|g| g.2 >= a && g.1 < b)
                .map(|g| g.0.clone()),
        );
        let o = klf(&["dump", "--format", "kafka", "--offsets", &range, seg]);
        let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
        assert_eq!(got, want, "shallow {range}");
    }
    // --key and --count pick records (deep) and batches (shallow)
    let key_of = |l: &str| {
        l.split(" key: ")
            .nth(1)
            .and_then(|k| k.split(' ').next())
            .map(str::to_string)
    };
    let (_, with_key) = deep
        .iter()
        .flat_map(|g| g.3.iter().map(move |r| (g, r)))
        .find(|(_, r)| r.0 == 101)
        .unwrap();
    let key = key_of(&with_key.1).unwrap();
    let o = klf(&[
        "dump",
        "--format",
        "kafka",
        "--print-data-log",
        "--key",
        &key,
        seg,
    ]);
    let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    let mut want = head.clone();
    for g in &deep {
        let rs: Vec<&String> =
            g.3.iter()
                .filter(|r| key_of(&r.1).as_deref() == Some(key.as_str()))
                .map(|r| &r.1)
                .collect();
        if !rs.is_empty() {
            want.push(g.0.clone());
            want.extend(rs.into_iter().cloned());
        }
    }
    assert!(want.len() > 3, "{want:?}");
    assert_eq!(got, want, "--key {key}");
    let o = klf(&["dump", "--format", "kafka", "--count", "2", seg]);
    let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    let mut want = head.clone();
    want.extend(shallow.iter().take(2).map(|g| g.0.clone()));
    assert_eq!(got, want);
    assert!(keys(&deep[0]).contains(&0));
    // deep --count: the first N records, each after its batch's line
    let o = klf(&[
        "dump",
        "--format",
        "kafka",
        "--print-data-log",
        "--count",
        "3",
        "--offsets",
        "17..",
        seg,
    ]);
    let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    let mut want = head.clone();
    let mut left = 3;
    for g in &deep {
        let rs: Vec<String> =
            g.3.iter()
                .filter(|r| r.0 >= 17)
                .take(left)
                .map(|r| r.1.clone())
                .collect();
        if !rs.is_empty() {
            left -= rs.len();
            want.push(g.0.clone());
            want.extend(rs);
        }
    }
    assert_eq!(got, want, "deep --count 3 from 17");
    // --since: from the first batch whose max timestamp (the batch line's
    // CreateTime) is at least T, Kafka's offset for a time
    let max_ts = |l: &str| -> i64 {
        l.split(" CreateTime: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let t = max_ts(&shallow[2].0);
    let o = klf(&["dump", "--format", "kafka", "--since", &t.to_string(), seg]);
    let got: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    let first = shallow.iter().position(|g| max_ts(&g.0) >= t).unwrap();
    let mut want = head.clone();
    want.extend(shallow[first..].iter().map(|g| g.0.clone()));
    assert_eq!(got, want, "--since {t}");
}

#[test]
fn kafka_format_selections_report_damage_as_a_whole_dump_does() {
    let cap = kafka("divergence");
    let src = cap.join("broker-2/diverge-0/00000000000000000000.log");
    let bytes = std::fs::read(&src).unwrap();
    let dir = scratch("kafka-pick").join("diverge-0");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("00000000000000000000.log");
    let positions: Vec<usize> = klf::format::batch::SegmentIter::new(&bytes[..])
        .map_while(Result::ok)
        .map(|b| b.position() as usize)
        .collect();
    assert!(positions.len() >= 3);
    // a torn last batch: the whole dump and a selection to the end exit 1
    std::fs::write(&log, &bytes[..bytes.len() - 7]).unwrap();
    let log_s = log.to_str().unwrap();
    for args in [
        vec!["dump", "--format", "kafka", log_s],
        vec!["dump", "--format", "kafka", "--offsets", "0..", log_s],
    ] {
        let o = klf(&args);
        assert_eq!(
            o.status.code(),
            Some(1),
            "klf {args:?}: {}",
            text(&o.stderr)
        );
        assert!(
            text(&o.stderr).contains(&format!("{log_s}:{}", positions.last().unwrap())),
            "{}",
            text(&o.stderr)
        );
    }
    // a range that ends before the damage does not read it
    let o = klf(&["dump", "--format", "kafka", "--offsets", "0..1", log_s]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // --resync, deep: a damaged batch inside the range keeps its line
    let mut bad = bytes.clone();
    bad[positions[1] + 22] |= 7; // compression id 7: not a codec
    std::fs::write(&log, &bad).unwrap();
    let o = klf(&[
        "dump",
        "--format",
        "kafka",
        "--deep-iteration",
        "--resync",
        "--offsets",
        "0..",
        log_s,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    let base = i64::from_be_bytes(bytes[positions[1]..positions[1] + 8].try_into().unwrap());
    assert!(out.contains(&format!("baseOffset: {base} ")), "{out}");
    assert!(
        text(&o.stderr).contains("compression"),
        "{}",
        text(&o.stderr)
    );
    // damage before the batch a time names: reported, nothing shown
    let mut framed_badly = bytes.clone();
    framed_badly[positions[1] + 8..positions[1] + 12]
        .copy_from_slice(&0x7fff_ff00u32.to_be_bytes());
    std::fs::write(&log, &framed_badly).unwrap();
    let late = klf::format::batch::SegmentIter::new(&bytes[..])
        .map_while(Result::ok)
        .filter_map(|b| match b {
            klf::format::batch::Batch::V2(v) => Some(v.max_timestamp()),
            _ => None,
        })
        .max()
        .unwrap();
    for format in ["kafka", "json", "table"] {
        let o = klf(&[
            "dump",
            "--format",
            format,
            "--since",
            &late.to_string(),
            log_s,
        ]);
        assert_eq!(o.status.code(), Some(1), "{format}: {}", text(&o.stderr));
        let said = format!("{log_s}:{}", positions[1]);
        assert!(
            text(&o.stderr).contains(&said) || text(&o.stdout).contains("\"problem\""),
            "{format}: {} {}",
            text(&o.stderr),
            text(&o.stdout)
        );
    }
    // a KRaft snapshot: a selection of its batches, after its own header
    let snap = kafka("impact").join("broker-1/bootstrap.checkpoint");
    let snap = snap.to_str().unwrap();
    let whole = text(&klf(&["dump", "--format", "kafka", snap]).stdout);
    let o = klf(&["dump", "--format", "kafka", "--count", "2", snap]);
    assert_eq!(o.status.code(), Some(0));
    let want: Vec<&str> = whole.lines().take(4).collect();
    assert_eq!(text(&o.stdout).lines().collect::<Vec<_>>(), want);
    assert!(want[1] == "KRaft bootstrap snapshot" && want[3].starts_with("baseOffset: "));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
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
    let iso1 = klf::format::text::iso_time(t1).unwrap();
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

#[test]
fn show_and_encoding_give_a_records_bytes_as_kafka_wrote_them() {
    // a real segment whose records carry headers (one with a null value)
    let cap = kafka("codecs-4.4");
    let seg = cap.join("broker-3/codec-gzip-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let golden = std::fs::read_to_string(
        cap.join("golden/broker-3/codec-gzip-0/00000000000000000000.log.deep.txt"),
    )
    .unwrap();
    // kafka-dump-log's key, payload and header keys per offset
    let mut want: std::collections::BTreeMap<i64, (Option<String>, Option<String>, String)> =
        Default::default();
    for l in golden.lines().filter(|l| l.starts_with("| offset: ")) {
        let offset: i64 = l[10..].split(' ').next().unwrap().parse().unwrap();
        let key = l
            .split(" key: ")
            .nth(1)
            .map(|k| k.split(' ').next().unwrap().to_string());
        let payload = l.split(" payload: ").nth(1).map(str::to_string);
        let headers = l
            .split("headerKeys: [")
            .nth(1)
            .unwrap()
            .split(']')
            .next()
            .unwrap()
            .to_string();
        want.insert(offset, (key, payload, headers));
    }
    assert!(
        want.values().any(|w| !w.2.is_empty()),
        "the segment has headers"
    );
    let unhex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let records = lines(
        &[
            "dump",
            "--format",
            "json",
            "--show",
            "key,value,headers",
            "--encoding",
            "hex",
            seg,
        ],
        "record",
    );
    assert_eq!(records.len(), want.len());
    for r in &records {
        let (key, payload, headers) = &want[&r["offset"].as_i64().unwrap()];
        match key {
            Some(k) => assert_eq!(unhex(r["key"]["hex"].as_str().unwrap()), k.as_bytes()),
            None => assert!(r["key"].is_null(), "{r}"),
        }
        match payload {
            Some(p) => assert_eq!(unhex(r["value"]["hex"].as_str().unwrap()), p.as_bytes()),
            None => assert!(r["value"].is_null(), "{r}"),
        }
        let names: Vec<&str> = r["headers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["key"].as_str().unwrap())
            .collect();
        assert_eq!(names.join(","), *headers);
        for h in r["headers"].as_array().unwrap() {
            assert!(h["value"].is_null() || h["value"]["hex"].is_string(), "{h}");
        }
    }
    // only what --show names: the key, by size the value
    let records = lines(
        &["dump", "--format", "json", "--show", "key", seg],
        "record",
    );
    assert_eq!(records.len(), want.len());
    assert!(records
        .iter()
        .all(|r| r.get("value").is_none() && r.get("key").is_some() && r["value_size"].is_i64()));
    assert!(records.iter().all(|r| r["headers"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h.get("value").is_none())));
    // base64 decodes back to the same header values the text table shows
    let records = lines(
        &[
            "dump",
            "--format",
            "json",
            "--show",
            "headers",
            "--encoding",
            "base64",
            seg,
        ],
        "record",
    );
    let with_value = records
        .iter()
        .flat_map(|r| r["headers"].as_array().unwrap().iter().map(move |h| (r, h)))
        .find(|(_, h)| h["value"]["base64"].is_string())
        .unwrap();
    let offset = with_value.0["offset"].as_i64().unwrap();
    let b64 = with_value.1["value"]["base64"]
        .as_str()
        .unwrap()
        .to_string();
    let table = text(
        &klf(&[
            "dump",
            "--format",
            "table",
            "--show",
            "key,headers",
            "--offsets",
            &format!("{offset}..{}", offset + 1),
            seg,
        ])
        .stdout,
    );
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("records:"))
        .find(|l| l.starts_with(&format!("│ {offset} ")))
        .unwrap_or_else(|| panic!("{table}"));
    let hname = with_value.1["key"].as_str().unwrap();
    let one = format!("{offset}..{}", offset + 1);
    let as_text = lines(
        &[
            "dump",
            "--format",
            "json",
            "--show",
            "headers",
            "--offsets",
            &one,
            seg,
        ],
        "record",
    );
    let hvalue = as_text[0]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["key"] == hname)
        .unwrap()["value"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let decoded = base64_decode(&b64);
    assert_eq!(decoded, hvalue.as_bytes());
    assert!(row.contains(&format!("{hname}={hvalue}")), "{row}");
    // the kafka format is kafka-dump-log's: --show and --encoding are refused
    let o = klf(&["dump", "--format", "kafka", "--show", "key", seg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--print-data-log"),
        "{}",
        text(&o.stderr)
    );
    let o = klf(&["dump", "--format", "json", "--show", "keys", seg]);
    assert_eq!(o.status.code(), Some(2));
}

/// Standard base64, padded.
fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let mut out = Vec::new();
    for chunk in s.as_bytes().chunks(4) {
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let n = chunk
            .iter()
            .filter(|&&c| c != b'=')
            .fold(0u32, |n, &c| n << 6 | val(c))
            << (6 * pad);
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    out
}

/// Offsets, batch leader epochs and the end offset of a partition
/// directory (or segment), from its whole JSON dump.
fn records_of(path: &str) -> (Vec<Value>, i64) {
    let recs = lines(
        &["dump", "--format", "json", "--deep-iteration", path],
        "record",
    );
    let end = recs.last().unwrap()["offset"].as_i64().unwrap() + 1;
    (recs, end)
}

#[test]
fn a_selection_matching_nothing_says_what_the_log_holds() {
    let dir = kafka("divergence").join("broker-2/diverge-0");
    let seg = dir.join("00000000000000000000.log");
    let (seg, dir) = (seg.to_str().unwrap(), dir.to_str().unwrap());
    let (seg_recs, seg_end) = records_of(seg);
    let (_, dir_end) = records_of(dir);
    let first = seg_recs[0]["offset"].as_i64().unwrap();
    // past the end, in every format: nothing on stdout but the file's
    // heading, exit 0, and stderr names the offsets the log holds
    let past = format!("{}..{}", dir_end + 5000, dir_end + 6000);
    for format in ["kafka", "json", "table"] {
        let o = klf(&["dump", "--format", format, "--offsets", &past, seg]);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!(
                "{seg}: nothing matches --offsets {past}: the segment holds offsets {first} to {} (end offset {seg_end})",
                seg_end - 1
            )),
            "{format}: {err}"
        );
        let out = text(&o.stdout);
        assert!(
            !out.contains("baseOffset") && !out.contains("\"batch\""),
            "{out}"
        );
    }
    // a directory: its segments together; a time past every batch names
    // the batches' max timestamps
    let batches = lines(&["dump", "--format", "json", dir], "batch");
    let last_ts = batches.last().unwrap()["max_timestamp_utc"]
        .as_str()
        .unwrap()
        .to_string();
    let first_ts = batches[0]["max_timestamp_utc"]
        .as_str()
        .unwrap()
        .to_string();
    let o = klf(&["dump", "--since", "2100-01-01", dir]);
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "{dir}: nothing matches --since 2100-01-01T00:00:00.000Z: its 2 segments hold offsets {first} to {} (end offset {dir_end}), batch max timestamps {first_ts} (first batch) to {last_ts} (last)",
            dir_end - 1
        )),
        "{err}"
    );
    // a selection that matches says nothing of the kind
    let o = klf(&["dump", "--offsets", "100..101", dir]);
    assert!(
        !text(&o.stderr).contains("nothing matches"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_selection_dumps_only_the_batches_and_records_it_picks() {
    let dir = kafka("divergence").join("broker-2/diverge-0");
    let d = dir.to_str().unwrap();
    // json: only the .log files' objects
    let o = klf(&[
        "dump",
        "--format",
        "json",
        "--deep-iteration",
        "--offsets",
        "100..103",
        d,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let objs: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(objs
        .iter()
        .filter(|v| v["type"] == "file")
        .all(|v| v["kind"] == "log"));
    let types: std::collections::BTreeSet<&str> =
        objs.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        types.into_iter().collect::<Vec<_>>(),
        ["batch", "file", "record"]
    );
    assert_eq!(
        offsets(
            &objs
                .iter()
                .filter(|v| v["type"] == "record")
                .cloned()
                .collect::<Vec<_>>()
        ),
        [100, 101, 102]
    );
    // the files left out are counted on stderr
    let files = std::fs::read_dir(&dir).unwrap().count();
    let logs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".log")
        })
        .count();
    assert!(
        text(&o.stderr).contains(&format!("note: {} other files", files - logs)),
        "{}",
        text(&o.stderr)
    );
    // table: no index, checkpoint or metadata tables
    let t = text(
        &klf(&[
            "dump",
            "--format",
            "table",
            "--deep-iteration",
            "--offsets",
            "100..103",
            d,
        ])
        .stdout,
    );
    for absent in [
        "index entries",
        "checkpoint",
        "partition_metadata",
        "time index",
    ] {
        assert!(!t.contains(absent), "{absent}: {t}");
    }
    // a file named is dumped whatever the selection
    let index = dir.join("00000000000000000000.index");
    let o = klf(&[
        "dump",
        "--format",
        "json",
        "--offsets",
        "100..103",
        d,
        index.to_str().unwrap(),
    ]);
    assert!(
        text(&o.stdout).contains("\"index_entry\""),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn offsets_counted_back_from_the_log_end() {
    let dir = kafka("divergence").join("broker-2/diverge-0");
    let seg = dir.join("00000000000000000000.log");
    let (seg, dir) = (seg.to_str().unwrap(), dir.to_str().unwrap());
    let (all, end) = records_of(dir);
    let all = offsets(&all);
    let (_, seg_end) = records_of(seg);
    let json = |range: &str, path: &str| {
        let o = klf(&[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--offsets",
            range,
            path,
        ]);
        assert_eq!(o.status.code(), Some(0), "{range}: {}", text(&o.stderr));
        let recs: Vec<Value> = text(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == "record")
            .collect();
        (offsets(&recs), text(&o.stderr))
    };
    let within = |a: i64, b: i64| -> Vec<i64> {
        all.iter().copied().filter(|o| (a..b).contains(o)).collect()
    };
    // the last 40 offsets of the partition's log, across its segments
    let (got, err) = json("-40..", dir);
    assert_eq!(got, within(end - 40, i64::MAX));
    assert!(
        got.first() < Some(&134) && got.last() > Some(&134),
        "{got:?}"
    );
    assert!(
        err.contains(&format!(
            "{dir}: --offsets -40.. is {}.. (end offset {end})",
            end - 40
        )),
        "{err}"
    );
    assert_eq!(json("-40..-10", dir).0, within(end - 40, end - 10));
    assert_eq!(json("..-150", dir).0, within(0, end - 150));
    assert_eq!(json("5..-150", dir).0, within(5, end - 150));
    // more than the log holds: all of it
    assert_eq!(json("-100000..", dir).0, all);
    // a segment alone: counted back from its own end
    assert_eq!(
        json("-3..", seg).0,
        within(seg_end - 3, seg_end),
        "the last 3 of the segment"
    );
    // in kafka format, kafka-dump-log's lines of those records
    let o = klf(&["dump", "--deep-iteration", "--offsets=-2..", dir]);
    let recs: Vec<String> = text(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("| offset: "))
        .map(str::to_string)
        .collect();
    assert_eq!(recs.len(), 2, "{}", text(&o.stdout));
    assert!(
        recs[1].starts_with(&format!("| offset: {} ", end - 1)),
        "{recs:?}"
    );
    // an end before the start is refused
    let o = klf(&["dump", "--offsets", "-10..-20", dir]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn records_in_json_name_their_topic_partition_and_leader_epoch() {
    let dir = kafka("divergence").join("broker-2/diverge-0");
    let o = klf(&[
        "dump",
        "--format",
        "json",
        "--deep-iteration",
        dir.to_str().unwrap(),
    ]);
    let objs: Vec<Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut epoch = None;
    let mut epochs = std::collections::BTreeSet::new();
    let mut n = 0;
    for v in &objs {
        match v["type"].as_str().unwrap() {
            "batch" => epoch = Some(v["partition_leader_epoch"].clone()),
            "record" => {
                assert_eq!(v["topic"], "diverge");
                assert_eq!(v["partition"], 0);
                assert_eq!(Some(&v["leader_epoch"]), epoch.as_ref(), "{v}");
                epochs.insert(v["leader_epoch"].as_i64().unwrap());
                n += 1;
            }
            _ => {}
        }
    }
    assert!(n > 100 && epochs.len() >= 2, "{epochs:?}");
    // a segment away from its partition directory: not known
    let tmp = scratch("json-topic");
    // (a folder whose name is not `<topic>-<partition>`)
    std::fs::create_dir_all(tmp.join("copies")).unwrap();
    let copy = tmp.join("copies/00000000000000000000.log");
    std::fs::copy(dir.join("00000000000000000000.log"), &copy).unwrap();
    let rec = &lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--count",
            "1",
            copy.to_str().unwrap(),
        ],
        "record",
    )[0];
    assert!(
        rec["topic"].is_null() && rec["partition"].is_null(),
        "{rec}"
    );
    assert_eq!(rec["leader_epoch"], 0);
    // v0/v1 messages carry no leader epoch
    let legacy = kafka("legacy-formats").join("broker-1/legacy-v0-gzip-0/00000000000000000000.log");
    let rec = &lines(
        &[
            "dump",
            "--format",
            "json",
            "--deep-iteration",
            "--count",
            "1",
            legacy.to_str().unwrap(),
        ],
        "record",
    )[0];
    assert!(
        rec["leader_epoch"].is_null() && rec["topic"] == "legacy-v0-gzip",
        "{rec}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn since_takes_the_time_kafkas_logs_print() {
    let seg = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let batches = lines(&["dump", "--format", "json", seg], "batch");
    // a batch's max timestamp as ISO-8601 and as Kafka's log4j prints it
    let iso = batches[2]["max_timestamp_utc"]
        .as_str()
        .unwrap()
        .to_string();
    let log4j = iso.replace('T', " ").replace('.', ",").replace('Z', "");
    let ms: i64 = batches[2]["max_timestamp"].as_i64().unwrap();
    let hour_ahead = klf::format::text::iso_time(ms + 3_600_000)
        .unwrap()
        .replace('Z', "+01:00");
    let pick = |t: &str| {
        offsets(&lines(
            &[
                "dump",
                "--format",
                "json",
                "--deep-iteration",
                "--since",
                t,
                seg,
            ],
            "record",
        ))
    };
    let want = pick(&ms.to_string());
    assert!(!want.is_empty() && want[0] > 0, "{want:?}");
    for t in [iso.clone(), log4j.clone(), format!("[{log4j}]"), hour_ahead] {
        assert_eq!(pick(&t), want, "--since {t}");
    }
    // --until too, and a time that is neither is refused naming the forms
    let until = lines(
        &["dump", "--format", "json", "--until", &log4j, seg],
        "batch",
    );
    assert_eq!(until.len(), 2);
    let o = klf(&["dump", "--since", "yesterday", seg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("2026-11-29 22:56:05,313"),
        "{}",
        text(&o.stderr)
    );
}
