//! The json and table dumps of the files that are not record batches or
//! offset/time indexes: `.txnindex`, producer `.snapshot`, the checkpoint
//! files, `meta.properties`, `partition.metadata`, `quorum-state` and
//! `.kafka_cleanshutdown`. Each becomes a list of JSON objects (the json
//! format writes them as lines, the table format groups them into tables);
//! problems are objects of type `problem` among them, in file order.

use serde_json::{json, Map, Value};

use klf::format::checkpoint::{
    parse_clean_shutdown, parse_leader_epoch_checkpoint_lenient, parse_offset_checkpoint_lenient,
    Checkpoint, CheckpointProblem, CleanShutdown,
};
use klf::format::props::{parse_partition_metadata, parse_properties, MetaProperties, PropsError};
use klf::format::snapshot::parse_producer_snapshot;
use klf::format::txnindex::{parse_txn_index, CURRENT_VERSION, ENTRY_SIZE};
use klf::format::ParseError;
use klf::format::names::base_offset_of;

use super::{Kind, TextKind};

/// Builds the objects of one file, each with `type` and `file` set.
struct Objects<'a> {
    file: &'a str,
    list: Vec<Value>,
}

impl Objects<'_> {
    fn push(&mut self, ty: &str, fields: Value) {
        let mut m = Map::new();
        m.insert("type".into(), json!(ty));
        m.insert("file".into(), json!(self.file));
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        self.list.push(Value::Object(m));
    }

    fn problem(&mut self, e: &ParseError, line: Option<u32>) {
        let mut f = json!({"position": e.pos, "reason": e.reason});
        if let Some(l) = line {
            f["line"] = json!(l);
        }
        self.push("problem", f);
    }

    fn checkpoint_problem(&mut self, p: &CheckpointProblem) {
        self.push(
            "problem",
            json!({"position": p.error.pos, "reason": p.error.reason, "line": p.line,
                   "kafka_rejects": p.kind.kafka_rejects()}),
        );
    }

    fn props_problem(&mut self, p: &PropsError) {
        self.problem(&p.error, p.line);
    }

    fn checkpoint_header<T>(&mut self, name: &str, cp: &Checkpoint<T>) {
        self.push(
            "checkpoint",
            json!({"checkpoint": name, "version": cp.version, "declared_count": cp.declared_count,
                   "entries": cp.entries.len(), "kafka_accepts": cp.kafka_accepts()}),
        );
    }
}

/// The objects for one file of `kind` called `name` (its last path
/// component), shown as `file`, with contents `data`. `sanity_is_problem`:
/// a failed index sanity check counts as a problem (`--index-sanity-check`).
pub fn objects(
    file: &str,
    name: &str,
    kind: Kind,
    data: &[u8],
    sanity_is_problem: bool,
) -> Vec<Value> {
    let mut o = Objects {
        file,
        list: Vec::new(),
    };
    match kind {
        Kind::Aux if name.ends_with(".txnindex") => {
            txn_index(&mut o, name, data, sanity_is_problem)
        }
        Kind::Aux => producer_snapshot(&mut o, data),
        Kind::Text(t) => text(&mut o, t, data),
        _ => {}
    }
    o.list
}

fn txn_index(o: &mut Objects<'_>, name: &str, data: &[u8], sanity_is_problem: bool) {
    // parse_txn_index does not fail on content.
    let idx = match parse_txn_index(data) {
        Ok(i) => i,
        Err(e) => return o.problem(&e, None),
    };
    for e in &idx.entries {
        o.push(
            "txn_index_entry",
            json!({"position": e.position, "version": e.version, "producer_id": e.producer_id,
                   "first_offset": e.first_offset, "last_offset": e.last_offset,
                   "last_stable_offset": e.last_stable_offset}),
        );
        if !e.version_supported() {
            o.problem(
                &ParseError::new(
                    e.position,
                    format!(
                        "unexpected aborted transaction version {}, current version is {CURRENT_VERSION}",
                        e.version
                    ),
                ),
                None,
            );
        }
    }
    if idx.trailing_bytes > 0 {
        let pos = (idx.entries.len() * ENTRY_SIZE) as u64;
        o.push(
            "index_rest",
            json!({"first_slot": idx.entries.len(), "slots": 0, "partial_bytes": idx.trailing_bytes,
                   "all_zero": data[pos as usize..].iter().all(|&b| b == 0)}),
        );
        o.problem(
            &ParseError::new(
                pos,
                format!("{} bytes after the last complete entry", idx.trailing_bytes),
            ),
            None,
        );
    }
    let r = idx.sanity_check(base_offset_of(name).unwrap_or(0));
    o.push(
        "sanity_check",
        json!({"passed": r.is_ok(), "reason": r.as_ref().err().map(|e| e.reason.clone())}),
    );
    if let (Err(e), true) = (r, sanity_is_problem) {
        o.problem(&e, None);
    }
}

fn producer_snapshot(o: &mut Objects<'_>, data: &[u8]) {
    let snap = match parse_producer_snapshot(data) {
        Ok(s) => s,
        Err(e) => return o.problem(&e, None),
    };
    o.push(
        "producer_snapshot",
        json!({"version": snap.version, "crc": snap.crc, "computed_crc": snap.computed_crc,
               "crc_valid": snap.check_crc().is_ok(), "entries": snap.entries.len(),
               "trailing_bytes": snap.trailing_bytes}),
    );
    if let Err(e) = snap.check_crc() {
        o.problem(&e, None);
    }
    for e in &snap.entries {
        let batch = e.has_batch_metadata();
        o.push(
            "producer_entry",
            json!({"producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
                   "coordinator_epoch": e.coordinator_epoch,
                   "current_txn_first_offset": e.current_txn_first_offset(),
                   "last_timestamp": e.timestamp, "last_sequence": e.last_sequence,
                   "last_offset": e.last_offset, "offset_delta": e.offset_delta,
                   "first_sequence": batch.then(|| e.first_sequence()),
                   "first_offset": batch.then(|| e.first_offset())}),
        );
    }
}

fn text(o: &mut Objects<'_>, kind: TextKind, data: &[u8]) {
    match kind {
        TextKind::OffsetCheckpoint(k) => {
            let cp = parse_offset_checkpoint_lenient(data);
            o.checkpoint_header(k.file_name(), &cp);
            for e in &cp.entries {
                o.push(
                    "checkpoint_entry",
                    json!({"checkpoint": k.file_name(), "line": e.line, "topic": e.topic,
                           "partition": e.partition, "offset": e.offset}),
                );
            }
            cp.problems.iter().for_each(|p| o.checkpoint_problem(p));
        }
        TextKind::LeaderEpochCheckpoint => {
            let cp = parse_leader_epoch_checkpoint_lenient(data);
            let name = klf::format::checkpoint::LEADER_EPOCH_CHECKPOINT_FILE;
            o.checkpoint_header(name, &cp);
            for e in &cp.entries {
                o.push(
                    "checkpoint_entry",
                    json!({"checkpoint": name, "line": e.line, "epoch": e.epoch,
                           "start_offset": e.start_offset}),
                );
            }
            cp.problems.iter().for_each(|p| o.checkpoint_problem(p));
        }
        TextKind::MetaProperties => match parse_properties(data) {
            Ok(props) => {
                o.push("properties", json!({"properties": props.to_map()}));
                match MetaProperties::from_properties(props) {
                    Ok(m) => o.push(
                        "meta_properties",
                        json!({"version": m.version, "node_id": m.node_id, "cluster_id": m.cluster_id,
                               "directory_id": m.directory_id.map(|d| d.to_string())}),
                    ),
                    Err(e) => o.props_problem(&e),
                }
            }
            Err(e) => o.props_problem(&e),
        },
        TextKind::PartitionMetadata => match parse_partition_metadata(data) {
            Ok(pm) => o.push(
                "partition_metadata",
                json!({"version": pm.version, "topic_id": pm.topic_id.to_string()}),
            ),
            Err(e) => o.props_problem(&e),
        },
        TextKind::QuorumState => match serde_json::from_slice::<Value>(data) {
            Ok(v) => o.push("quorum_state", json!({ "state": v })),
            Err(e) => o.problem(&ParseError::new(0, format!("not JSON: {e}")), None),
        },
        TextKind::CleanShutdown => match parse_clean_shutdown(data) {
            CleanShutdown::Empty => o.push(
                "clean_shutdown",
                json!({"content": "empty", "version": null, "broker_epoch": null}),
            ),
            CleanShutdown::Marker {
                version,
                broker_epoch,
            } => o.push(
                "clean_shutdown",
                json!({"content": "json", "version": version, "broker_epoch": broker_epoch}),
            ),
            CleanShutdown::Unreadable(e) => o.problem(&e, None),
        },
    }
}

/// Whether an object is a problem; its position and reason.
pub fn as_problem(v: &Value) -> Option<(u64, String)> {
    if v["type"] != "problem" {
        return None;
    }
    Some((
        v["position"].as_u64().unwrap_or(0),
        v["reason"].as_str().unwrap_or_default().to_string(),
    ))
}
