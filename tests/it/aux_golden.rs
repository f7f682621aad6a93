//! Golden tests against real kafka-dump-log output captured from Kafka 4.1.
//!
//! * `.txnindex` and `.snapshot` files: the whole stdout of the tool for the
//!   file is rendered by the library and compared byte for byte.
//! * Records of `__cluster_metadata`, `__consumer_offsets` and
//!   `__transaction_state` (deep goldens, produced with the matching decoder
//!   flag): key and value bytes are pulled out of the segment by a minimal v2
//!   batch walker below, decoded by the library, and the resulting
//!   ` key: … payload: …` text is compared with the tail of the record line
//!   of the same offset.
//!
//! Layout: `testdata/kafka/<scenario>/<broker>/<partition dir>/<file>` with
//! golden text in `testdata/kafka/<scenario>/golden/<same relative path>.<mode>.txt`.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use klf::format::metadata::{format_kraft_control, KraftControlType};
use klf::render::dump::kafka_aux::{dump_producer_snapshot, dump_txn_index, AuxDecoder};
use klf::render::release::Release;

fn testdata_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join("kafka")
}

/// Every golden file: (scenario dir, path relative to the scenario, mode, golden path).
fn goldens() -> Vec<(PathBuf, String, String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(scenarios) = fs::read_dir(testdata_root()) else {
        return out;
    };
    for sc in scenarios.flatten() {
        let golden_dir = sc.path().join("golden");
        let mut stack = vec![golden_dir.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let Ok(rel) = p.strip_prefix(&golden_dir) else {
                    continue;
                };
                let rel = rel.to_string_lossy().to_string();
                let Some(stem) = rel.strip_suffix(".txt") else {
                    continue;
                };
                let Some((file, mode)) = stem.rsplit_once('.') else {
                    continue;
                };
                out.push((sc.path(), file.to_string(), mode.to_string(), p.clone()));
            }
        }
    }
    out.sort();
    out
}

/// The path the tool printed in its `Dumping` line (the golden's first line).
fn dumped_path(golden: &str) -> Option<&str> {
    golden.lines().next()?.strip_prefix("Dumping ")
}

#[test]
fn txnindex_and_snapshot_goldens() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for (scenario, rel, mode, golden_path) in goldens() {
        let is_txn = rel.ends_with(".txnindex");
        let is_snap = rel.ends_with(".snapshot");
        if !is_txn && !is_snap {
            continue;
        }
        let Ok(data) = fs::read(scenario.join(&rel)) else {
            failures.push(format!("{rel}: data file missing for golden {mode}"));
            continue;
        };
        // The release that made golden/, then every release compared on it.
        let own = crate::common::golden_release(&scenario);
        let mut lines = vec![own.clone()];
        lines.extend(
            crate::common::compared_releases(&scenario)
                .into_iter()
                .filter(|l| *l != own),
        );
        let name = golden_path
            .strip_prefix(scenario.join("golden"))
            .expect("under golden/")
            .to_string_lossy()
            .into_owned();
        for line in lines {
            let release = Release::parse(&line).expect("a known release");
            let golden = String::from_utf8(crate::common::golden_bytes(&scenario, &name, &line))
                .expect("golden is UTF-8");
            let path = dumped_path(&golden).unwrap_or(&rel).to_string();
            let dump = if is_txn {
                dump_txn_index(&path, &data)
            } else {
                dump_producer_snapshot(&path, &data, release)
            };
            compared += 1;
            if dump.stdout != golden {
                failures.push(format!(
                    "{} [{mode}] Kafka {line}\n--- expected\n{golden}--- got\n{}",
                    scenario.join(&rel).display(),
                    dump.stdout
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        compared > 0,
        "no .txnindex/.snapshot golden file was compared"
    );
    eprintln!("txnindex/snapshot goldens compared: {compared}");
}

// ---- minimal v2 batch walker (test only) ----

struct RawRecord {
    offset: i64,
    control: bool,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
}

fn varint(b: &[u8], pos: &mut usize) -> Option<i64> {
    let mut raw: u64 = 0;
    for i in 0..10 {
        let byte = *b.get(*pos)?;
        *pos += 1;
        raw |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((raw >> 1) as i64 ^ -((raw & 1) as i64));
        }
    }
    None
}

fn bytes_field(b: &[u8], pos: &mut usize) -> Option<Option<Vec<u8>>> {
    let len = varint(b, pos)?;
    if len < 0 {
        return Some(None);
    }
    let end = pos.checked_add(usize::try_from(len).ok()?)?;
    let s = b.get(*pos..end)?.to_vec();
    *pos = end;
    Some(Some(s))
}

/// Records of the uncompressed v2 batches of a segment, plus the number of
/// batches skipped (compressed).
fn walk_records(data: &[u8]) -> (Vec<RawRecord>, usize) {
    let mut out = Vec::new();
    let mut skipped = 0;
    let mut pos = 0usize;
    while pos + 61 <= data.len() {
        let be64 =
            |o: usize| i64::from_be_bytes(data[pos + o..pos + o + 8].try_into().unwrap_or([0; 8]));
        let be32 =
            |o: usize| i32::from_be_bytes(data[pos + o..pos + o + 4].try_into().unwrap_or([0; 4]));
        let base_offset = be64(0);
        let Ok(batch_len) = usize::try_from(be32(8)) else {
            break;
        };
        let end = pos + 12 + batch_len;
        if batch_len < 49 || end > data.len() || data[pos + 16] != 2 {
            break;
        }
        let attrs = i16::from_be_bytes([data[pos + 21], data[pos + 22]]);
        let count = be32(57);
        let control = attrs & 0x20 != 0;
        if attrs & 0x7 != 0 {
            skipped += 1;
            pos = end;
            continue;
        }
        let body = &data[pos + 61..end];
        let mut p = 0usize;
        for _ in 0..count.max(0) {
            let Some(len) = varint(body, &mut p).and_then(|l| usize::try_from(l).ok()) else {
                break;
            };
            let rec_end = p + len;
            p += 1; // attributes
            let _ts = varint(body, &mut p);
            let Some(delta) = varint(body, &mut p) else {
                break;
            };
            let Some(key) = bytes_field(body, &mut p) else {
                break;
            };
            let Some(value) = bytes_field(body, &mut p) else {
                break;
            };
            out.push(RawRecord {
                offset: base_offset + delta,
                control,
                key,
                value,
            });
            p = rec_end;
        }
        pos = end;
    }
    (out, skipped)
}

/// Whether the golden ends with the record line of `offset` cut right
/// after its metadata (`... headerKeys: []` with nothing after it), which
/// is what the tool leaves when a decoder aborts the run at that record.
fn line_prefix_only(golden: &str, offset: i64) -> bool {
    let prefix = format!("| offset: {offset} ");
    match golden.lines().last() {
        Some(l) => l.starts_with(&prefix) && l.ends_with(']'),
        None => false,
    }
}

/// Record lines of a deep golden, by offset.
fn record_lines(golden: &str) -> HashMap<i64, &str> {
    let mut m = HashMap::new();
    for line in golden.lines() {
        let Some(rest) = line.strip_prefix("| offset: ") else {
            continue;
        };
        let Some(num) = rest.split(' ').next() else {
            continue;
        };
        if let Ok(o) = num.parse::<i64>() {
            m.insert(o, line);
        }
    }
    m
}

fn decoder_for(rel: &str) -> Option<AuxDecoder> {
    if rel.ends_with(".checkpoint") {
        return Some(AuxDecoder::ClusterMetadata);
    }
    let dir = Path::new(rel)
        .parent()?
        .file_name()?
        .to_string_lossy()
        .to_string();
    let topic = dir.rsplit_once('-')?.0.to_string();
    match topic.as_str() {
        "__cluster_metadata" => Some(AuxDecoder::ClusterMetadata),
        "__consumer_offsets" => Some(AuxDecoder::Offsets),
        "__transaction_state" => Some(AuxDecoder::TransactionLog),
        "__share_group_state" => Some(AuxDecoder::ShareGroupState),
        "__remote_log_metadata" => Some(AuxDecoder::RemoteLogMetadata),
        _ => None,
    }
}

#[test]
fn internal_record_decoders_match_goldens() {
    let mut compared: HashMap<&'static str, usize> = HashMap::new();
    let mut failures = Vec::new();
    for (scenario, rel, mode, golden_path) in goldens() {
        if mode != "deep" || !(rel.ends_with(".log") || rel.ends_with(".checkpoint")) {
            continue;
        }
        let Some(decoder) = decoder_for(&rel) else {
            continue;
        };
        let golden = fs::read_to_string(&golden_path).expect("golden readable");
        let Ok(data) = fs::read(scenario.join(&rel)) else {
            continue;
        };
        let own = Release::parse(&crate::common::golden_release(&scenario)).expect("known release");
        let lines = record_lines(&golden);
        let (records, _skipped) = walk_records(&data);
        for r in records {
            let decoded = if r.control {
                None
            } else {
                Some(decoder.decode(own, r.offset, r.key.as_deref(), r.value.as_deref()))
            };
            if let Some(Err(e)) = &decoded {
                // The tool aborts the run at this record: its line is cut
                // after the record metadata and nothing follows.
                if !line_prefix_only(&golden, r.offset) {
                    failures.push(format!(
                        "{rel}: offset {}: library aborts ({}) but the tool did not",
                        r.offset, e.reason
                    ));
                }
                *compared.entry("aborts").or_default() += 1;
                break;
            }
            let Some(line) = lines.get(&r.offset) else {
                failures.push(format!(
                    "{rel}: offset {} has no record line in the golden",
                    r.offset
                ));
                continue;
            };
            let Some(tail_start) = line
                .find("headerKeys: [")
                .and_then(|i| line[i..].find(']').map(|j| i + j + 1))
            else {
                failures.push(format!("{rel}: unexpected record line {line}"));
                continue;
            };
            let tail = &line[tail_start..];
            if r.control {
                let type_id = r
                    .key
                    .as_deref()
                    .and_then(|k| k.get(2..4))
                    .map(|b| i16::from_be_bytes([b[0], b[1]]));
                let Some(kind) = type_id.and_then(KraftControlType::from_type_id) else {
                    continue;
                };
                *compared.entry("kraft-control").or_default() += 1;
                let got = format_kraft_control(kind, r.value.as_deref().unwrap_or(&[]))
                    .unwrap_or_else(|e| format!("<run aborted: {}>", e.reason));
                if tail != got {
                    failures.push(format!(
                        "{rel} offset {}\n  expected:{tail}\n  got:     {got}",
                        r.offset
                    ));
                }
                continue;
            };
            let expected = match decoded.expect("non-control record was decoded") {
                Ok(kp) => {
                    let mut s = String::new();
                    if let Some(k) = kp.key {
                        s.push_str(" key: ");
                        s.push_str(&k);
                    }
                    if let Some(p) = kp.payload {
                        s.push_str(" payload: ");
                        s.push_str(&p);
                    }
                    s
                }
                Err(e) => format!("<run aborted: {}>", e.reason),
            };
            let kind = match decoder {
                AuxDecoder::ClusterMetadata => "metadata",
                AuxDecoder::Offsets => "offsets",
                AuxDecoder::TransactionLog => "transaction-log",
                AuxDecoder::ShareGroupState => "share-group-state",
                AuxDecoder::RemoteLogMetadata => "remote-log-metadata",
            };
            *compared.entry(kind).or_default() += 1;
            if tail != expected {
                failures.push(format!(
                    "{} offset {}\n  expected:{tail}\n  got:     {expected}",
                    scenario.join(&rel).display(),
                    r.offset
                ));
            }
        }
    }
    let total: usize = compared.values().sum();
    let shown: Vec<_> = failures.iter().take(20).cloned().collect();
    assert!(
        failures.is_empty(),
        "{} of {total} records differ:\n{}",
        failures.len(),
        shown.join("\n")
    );
    assert!(total > 0, "no internal-topic record was compared");
    eprintln!("internal-topic records compared: {compared:?}");
}

/// Every strict prefix and many single-byte corruptions of real records and
/// files: the decoders must return (never panic), and a truncated input must
/// never decode to the same text as the complete one unless nothing was cut
/// that the schema reads.
#[test]
fn decoders_survive_truncation_and_corruption() {
    let mut checked = 0usize;
    // Records of each distinct shape (decoder, decoded type and size) once
    // keep the run short: idle controllers write thousands of NoOps, and
    // every capture's metadata log holds the same kinds of records.
    let mut seen = std::collections::HashSet::new();
    for (scenario, rel, mode, _golden) in goldens() {
        if mode != "deep" {
            continue;
        }
        let Ok(data) = fs::read(scenario.join(&rel)) else {
            continue;
        };
        if rel.ends_with(".txnindex") || rel.ends_with(".snapshot") {
            let is_snap = rel.ends_with(".snapshot");
            // Prefixes of a file the tool accepts: a snapshot prefix always
            // fails its checks; a txnindex prefix shows its complete entries.
            let full_ok = if is_snap {
                dump_producer_snapshot("f.snapshot", &data, Release::NEWEST)
                    .stderr
                    .is_empty()
            } else {
                dump_txn_index("f.txnindex", &data).aborted.is_none()
            };
            for cut in (0..data.len()).filter(|_| full_ok) {
                let part = &data[..cut];
                if is_snap {
                    let d = dump_producer_snapshot("f.snapshot", part, Release::NEWEST);
                    assert!(
                        !d.stderr.is_empty(),
                        "{rel}: truncated to {cut} bytes yet no error"
                    );
                } else {
                    let d = dump_txn_index("f.txnindex", part);
                    assert_eq!(d.stdout.lines().count(), 1 + cut / 34, "{rel}: cut {cut}");
                }
                checked += 1;
            }
            for i in 0..data.len() {
                let mut v = data.clone();
                v[i] ^= 0xff;
                // Must return without panicking.
                let _ = if is_snap {
                    dump_producer_snapshot("f.snapshot", &v, Release::NEWEST)
                } else {
                    dump_txn_index("f.txnindex", &v)
                };
                checked += 1;
            }
            continue;
        }
        let Some(decoder) = decoder_for(&rel) else {
            continue;
        };
        let (records, _) = walk_records(&data);
        for r in records.iter().filter(|r| !r.control) {
            let shape = (
                format!("{decoder:?}"),
                r.value
                    .as_deref()
                    .map(|v| v.iter().take(3).copied().collect::<Vec<u8>>()),
                r.key
                    .as_deref()
                    .map(|k| k.iter().take(2).copied().collect::<Vec<u8>>()),
                r.value.as_deref().map(<[u8]>::len),
            );
            if !seen.insert(shape) {
                continue;
            }
            let full = decoder.decode(
                Release::NEWEST,
                r.offset,
                r.key.as_deref(),
                r.value.as_deref(),
            );
            // Only records that decode completely say anything about their prefixes.
            let full_ok = match &full {
                Ok(kp) => kp
                    .payload
                    .as_deref()
                    .is_some_and(|p| !p.starts_with("Error at ")),
                Err(_) => false,
            };
            let Some(value) = r.value.as_deref() else {
                continue;
            };
            for cut in (0..value.len()).filter(|_| full_ok) {
                let got = decoder.decode(
                    Release::NEWEST,
                    r.offset,
                    r.key.as_deref(),
                    Some(&value[..cut]),
                );
                match decoder {
                    AuxDecoder::ClusterMetadata | AuxDecoder::RemoteLogMetadata => {
                        let p = got
                            .expect("metadata decoding never aborts")
                            .payload
                            .unwrap_or_default();
                        assert!(
                            p.starts_with("Error at "),
                            "{rel} offset {} cut {cut}: {p}",
                            r.offset
                        );
                    }
                    _ => {
                        let kp = got.expect("record has a key");
                        assert!(
                            kp.payload.is_none() || Ok(&kp) == full.as_ref(),
                            "{rel} offset {} cut {cut}: {kp:?}",
                            r.offset
                        );
                    }
                }
                checked += 1;
            }
            for i in 0..value.len() {
                for b in [0x00u8, 0xff] {
                    let mut v = value.to_vec();
                    v[i] = b;
                    // Must return without panicking; the content may or may not decode.
                    let _ = decoder.decode(Release::NEWEST, r.offset, r.key.as_deref(), Some(&v));
                    checked += 1;
                }
            }
            if let Some(key) = r.key.as_deref().filter(|_| full_ok) {
                for cut in 0..key.len() {
                    let kp = decoder
                        .decode(
                            Release::NEWEST,
                            r.offset,
                            Some(&key[..cut]),
                            r.value.as_deref(),
                        )
                        .expect("key present");
                    assert!(
                        kp.payload.is_none(),
                        "{rel} offset {} key cut {cut}: {kp:?}",
                        r.offset
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0, "nothing was checked");
    eprintln!("truncated/corrupted inputs checked: {checked}");
}

/// The typed metadata structs a timeline builds on agree with the JSON the
/// real tool printed for the same record.
#[test]
fn typed_metadata_matches_tool_json() {
    use klf::format::metadata::schema::uuid_string;
    use klf::format::metadata::{decode_metadata_record, TypedMetadata, LEADER_UNCHANGED};
    use serde_json::Value;

    fn ints(v: Option<&Value>) -> Option<Vec<i32>> {
        v.and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(|x| x.as_i64())
                .map(|x| x as i32)
                .collect()
        })
    }
    fn uuids(v: Option<&Value>) -> Option<Vec<String>> {
        v.and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .map(str::to_string)
                .collect()
        })
    }
    let mut checked = 0usize;
    for (scenario, rel, mode, golden_path) in goldens() {
        if mode != "deep" || decoder_for(&rel) != Some(AuxDecoder::ClusterMetadata) {
            continue;
        }
        let golden = fs::read_to_string(&golden_path).expect("golden readable");
        let Ok(data) = fs::read(scenario.join(&rel)) else {
            continue;
        };
        let lines = record_lines(&golden);
        for r in walk_records(&data).0.iter().filter(|r| !r.control) {
            let Some(line) = lines.get(&r.offset) else {
                continue;
            };
            let Some(json) = line.split_once(" payload: ").map(|x| x.1) else {
                continue;
            };
            let Ok(j) = serde_json::from_str::<Value>(json) else {
                continue;
            };
            let Ok(rec) = decode_metadata_record(r.value.as_deref().unwrap_or(&[])) else {
                continue;
            };
            let d = &j["data"];
            let int = |k: &str| d.get(k).and_then(Value::as_i64);
            let ctx = format!("{rel} offset {}", r.offset);
            match rec.typed() {
                Some(TypedMetadata::Partition(p)) => {
                    assert_eq!(Some(i64::from(p.partition_id)), int("partitionId"), "{ctx}");
                    assert_eq!(
                        Some(uuid_string(&p.topic_id).as_str()),
                        d["topicId"].as_str(),
                        "{ctx}"
                    );
                    assert_eq!(Some(p.replicas.clone()), ints(d.get("replicas")), "{ctx}");
                    assert_eq!(Some(p.isr.clone()), ints(d.get("isr")), "{ctx}");
                    assert_eq!(Some(i64::from(p.leader)), int("leader"), "{ctx}");
                    assert_eq!(Some(i64::from(p.leader_epoch)), int("leaderEpoch"), "{ctx}");
                    assert_eq!(
                        Some(i64::from(p.partition_epoch)),
                        int("partitionEpoch"),
                        "{ctx}"
                    );
                    assert_eq!(
                        i64::from(p.leader_recovery_state),
                        int("leaderRecoveryState").unwrap_or(0),
                        "{ctx}"
                    );
                    assert_eq!(
                        p.eligible_leader_replicas,
                        ints(d.get("eligibleLeaderReplicas")),
                        "{ctx}"
                    );
                    assert_eq!(p.last_known_elr, ints(d.get("lastKnownElr")), "{ctx}");
                    let dirs: Vec<String> = p.directories.iter().map(uuid_string).collect();
                    assert_eq!(
                        dirs,
                        uuids(d.get("directories")).unwrap_or_default(),
                        "{ctx}"
                    );
                }
                Some(TypedMetadata::PartitionChange(c)) => {
                    assert_eq!(Some(i64::from(c.partition_id)), int("partitionId"), "{ctx}");
                    assert_eq!(
                        Some(uuid_string(&c.topic_id).as_str()),
                        d["topicId"].as_str(),
                        "{ctx}"
                    );
                    assert_eq!(c.isr, ints(d.get("isr")), "{ctx}");
                    assert_eq!(c.replicas, ints(d.get("replicas")), "{ctx}");
                    assert_eq!(
                        i64::from(c.leader),
                        int("leader").unwrap_or(i64::from(LEADER_UNCHANGED)),
                        "{ctx}"
                    );
                    assert_eq!(
                        i64::from(c.leader_recovery_state),
                        int("leaderRecoveryState").unwrap_or(-1),
                        "{ctx}"
                    );
                    assert_eq!(
                        c.eligible_leader_replicas,
                        ints(d.get("eligibleLeaderReplicas")),
                        "{ctx}"
                    );
                    assert_eq!(c.last_known_elr, ints(d.get("lastKnownElr")), "{ctx}");
                    assert_eq!(
                        c.directories.map(|v| v.iter().map(uuid_string).collect()),
                        uuids(d.get("directories")),
                        "{ctx}"
                    );
                }
                Some(TypedMetadata::Topic(t)) => {
                    assert_eq!(Some(t.name.as_str()), d["name"].as_str(), "{ctx}");
                    assert_eq!(
                        Some(uuid_string(&t.topic_id).as_str()),
                        d["topicId"].as_str(),
                        "{ctx}"
                    );
                }
                Some(TypedMetadata::RegisterBroker(b)) => {
                    assert_eq!(Some(i64::from(b.broker_id)), int("brokerId"), "{ctx}");
                    assert_eq!(Some(b.broker_epoch), int("brokerEpoch"), "{ctx}");
                    assert_eq!(
                        Some(uuid_string(&b.incarnation_id).as_str()),
                        d["incarnationId"].as_str(),
                        "{ctx}"
                    );
                    assert_eq!(Some(b.fenced), d["fenced"].as_bool(), "{ctx}");
                    assert_eq!(
                        Some(b.end_points.len()),
                        d["endPoints"].as_array().map(Vec::len),
                        "{ctx}"
                    );
                    assert_eq!(b.rack.as_deref(), d["rack"].as_str(), "{ctx}");
                }
                _ => continue,
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no typed metadata record was checked");
    eprintln!("typed metadata records checked: {checked}");
}
