//! The json and table dumps of the files that are not record batches or
//! offset/time indexes: `.txnindex`, producer `.snapshot`, the checkpoint
//! files, `meta.properties`, `partition.metadata`, `quorum-state` and
//! `.kafka_cleanshutdown`. Each becomes a sequence of JSON objects, handed
//! one at a time to the format as it is made (the json format writes each
//! as a line, the table format groups them into tables as they come), so
//! memory does not grow with the entries of a file; problems are objects of
//! type `problem` among them, in file order.
//!
//! Checkpoints are read a line at a time, never whole: once for the
//! `checkpoint` object (its entry count and whether Kafka reads it come
//! first), once for the entries, and once more for the problems when there
//! are more than [`PROBLEMS_HELD`]. Properties and state files over
//! [`MAX_PROPERTIES_BYTES`] and checkpoints over klf's caps ([`Limits`])
//! are not read: one problem says so.

use std::io::{self, BufRead};

use serde_json::{json, Map, Value};

use crate::format::checkpoint::{
    parse_clean_shutdown, stream_leader_epoch_checkpoint, stream_offset_checkpoint,
    CheckpointProblem, CleanShutdown, EpochEntry, Item, Limits, OffsetEntry, ReadError, Summary,
    LEADER_EPOCH_CHECKPOINT_FILE,
};
use crate::format::names::base_offset_of;
use crate::format::props::{
    over_properties_cap, parse_partition_metadata, parse_properties, MetaProperties, PropsError,
    MAX_PROPERTIES_BYTES,
};
use crate::format::snapshot::view_producer_snapshot;
use crate::format::txnindex::{parse_txn_index, CURRENT_VERSION, ENTRY_SIZE};
use crate::format::ParseError;
use crate::model::dump::{Kind, Opened, Reread, TextKind};

use super::kafka::FileNames;

/// Problems of a checkpoint held from its first reading; with more, the
/// file is read once more for them.
pub const PROBLEMS_HELD: usize = 1000;

/// Problems of a file listed on stderr one by one; the rest are counted
/// (the json format's `problem` objects list every one).
pub const PROBLEMS_SHOWN: usize = 1000;

/// The problems of one file, for stderr: the first [`PROBLEMS_SHOWN`], and
/// how many more.
#[derive(Debug, Default)]
pub struct Problems {
    /// The first ones, in file order.
    pub shown: Vec<ParseError>,
    /// How many more.
    pub more: u64,
}

impl Problems {
    /// Adds one.
    pub fn push(&mut self, e: ParseError) {
        if self.shown.len() < PROBLEMS_SHOWN {
            self.shown.push(e);
        } else {
            self.more += 1;
        }
    }

    /// How many in all.
    pub fn count(&self) -> u64 {
        self.shown.len() as u64 + self.more
    }
}

/// Why the objects of a file stopped before the end.
#[derive(Debug)]
pub enum Stop {
    /// Writing an object failed.
    Write(io::Error),
    /// Reading the file failed (the machine's failure, or the file changed
    /// between two readings).
    Read(io::Error),
}

/// Where the objects go, one at a time.
pub type Sink<'s> = dyn FnMut(Value) -> io::Result<()> + 's;

/// Makes the objects of one file, each with `type` and `file` set.
struct Objects<'a, 's> {
    file: &'a str,
    sink: &'a mut Sink<'s>,
}

impl Objects<'_, '_> {
    fn push(&mut self, ty: &str, fields: Value) -> Result<(), Stop> {
        let mut m = Map::new();
        m.insert("type".into(), json!(ty));
        m.insert("file".into(), json!(self.file));
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        (self.sink)(Value::Object(m)).map_err(Stop::Write)
    }

    fn problem(&mut self, e: &ParseError, line: Option<u32>) -> Result<(), Stop> {
        let mut f = json!({"position": e.pos, "reason": e.reason});
        if let Some(l) = line {
            f["line"] = json!(l);
        }
        self.push("problem", f)
    }

    fn checkpoint_problem(&mut self, p: &CheckpointProblem) -> Result<(), Stop> {
        self.push(
            "problem",
            json!({"position": p.error.pos, "reason": p.error.reason, "line": p.line,
                   "kafka_rejects": p.kind.kafka_rejects()}),
        )
    }

    fn props_problem(&mut self, p: &PropsError) -> Result<(), Stop> {
        self.problem(&p.error, p.line)
    }
}

/// Hands the [`objects`] of the file `names` names to `sink`: a failed
/// read of the file, which ends them, is returned; a failed write is the
/// error.
pub fn write_objects(
    names: &FileNames,
    input: &mut Opened<'_>,
    sanity_is_problem: bool,
    sink: &mut Sink<'_>,
) -> io::Result<Option<io::Error>> {
    match objects(&names.display, &names.name, input, sanity_is_problem, sink) {
        Ok(()) => Ok(None),
        Err(Stop::Write(e)) => Err(e),
        Err(Stop::Read(e)) => Ok(Some(e)),
    }
}

/// Hands the objects for one file called `name` (its last path
/// component), shown as `file`, to `sink` as they are made. `input` holds
/// the file's bytes (none for a checkpoint, which is read through its
/// `lines` a line at a time, and for a properties file over the cap) and
/// its size. `sanity_is_problem`: a failed index sanity check counts as a
/// problem (`--index-sanity-check`).
pub fn objects(
    file: &str,
    name: &str,
    input: &mut Opened<'_>,
    sanity_is_problem: bool,
    sink: &mut Sink<'_>,
) -> Result<(), Stop> {
    let mut o = Objects { file, sink };
    let data = input.data;
    match input.kind {
        Kind::Aux if name.ends_with(".txnindex") => {
            txn_index(&mut o, name, data, sanity_is_problem)
        }
        Kind::Aux => producer_snapshot(&mut o, data),
        Kind::Text(t) => text(&mut o, t, input, data),
        _ => Ok(()),
    }
}

fn txn_index(
    o: &mut Objects<'_, '_>,
    name: &str,
    data: &[u8],
    sanity_is_problem: bool,
) -> Result<(), Stop> {
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
        )?;
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
            )?;
        }
    }
    if idx.trailing_bytes > 0 {
        let pos = idx.entries.len() * ENTRY_SIZE;
        let rest = data.get(pos..).unwrap_or(&[]);
        o.push(
            "index_rest",
            json!({"first_slot": idx.entries.len(), "slots": 0, "partial_bytes": idx.trailing_bytes,
                   "all_zero": rest.iter().all(|&b| b == 0)}),
        )?;
        o.problem(
            &ParseError::new(
                pos as u64,
                format!("{} bytes after the last complete entry", idx.trailing_bytes),
            ),
            None,
        )?;
    }
    let r = idx.sanity_check(base_offset_of(name).unwrap_or(0));
    o.push(
        "sanity_check",
        json!({"passed": r.is_ok(), "reason": r.as_ref().err().map(|e| e.reason.clone())}),
    )?;
    if let (Err(e), true) = (r, sanity_is_problem) {
        o.problem(&e, None)?;
    }
    Ok(())
}

fn producer_snapshot(o: &mut Objects<'_, '_>, data: &[u8]) -> Result<(), Stop> {
    // The entries are read from the bytes as they are written, not held.
    let snap = match view_producer_snapshot(data) {
        Ok(s) => s,
        Err(e) => return o.problem(&e, None),
    };
    o.push(
        "producer_snapshot",
        json!({"version": snap.version, "crc": snap.crc, "computed_crc": snap.computed_crc,
               "crc_valid": snap.check_crc().is_ok(), "entries": snap.count,
               "trailing_bytes": snap.trailing_bytes}),
    )?;
    if let Err(e) = snap.check_crc() {
        o.problem(&e, None)?;
    }
    for e in snap.entries() {
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
        )?;
    }
    Ok(())
}

fn text(
    o: &mut Objects<'_, '_>,
    kind: TextKind,
    input: &mut Opened<'_>,
    data: &[u8],
) -> Result<(), Stop> {
    let size = input.size;
    if !kind.is_checkpoint() && size > MAX_PROPERTIES_BYTES {
        let why = format!("not read: {}", over_properties_cap(size));
        return o.problem(&ParseError::new(0, why), None);
    }
    match kind {
        TextKind::OffsetCheckpoint(k) => {
            let entry = |e: &OffsetEntry| {
                json!({"checkpoint": k.file_name(), "line": e.line, "topic": e.topic,
                       "partition": e.partition, "offset": e.offset})
            };
            checkpoint(
                o,
                input,
                k.file_name(),
                &Limits::OFFSETS,
                read_offsets,
                entry,
            )
        }
        TextKind::LeaderEpochCheckpoint => {
            let name = LEADER_EPOCH_CHECKPOINT_FILE;
            let entry = |e: &EpochEntry| {
                json!({"checkpoint": name, "line": e.line, "epoch": e.epoch,
                       "start_offset": e.start_offset})
            };
            checkpoint(o, input, name, &Limits::EPOCHS, read_epochs, entry)
        }
        TextKind::MetaProperties => match parse_properties(data) {
            Ok(props) => {
                o.push("properties", json!({"properties": props.to_map()}))?;
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

/// One reading of a checkpoint file: its items to a sink.
type Reading<T> = fn(
    &mut dyn BufRead,
    &Limits,
    &mut dyn FnMut(Item<T>) -> Result<(), Stop>,
) -> Result<Summary, ReadError<Stop>>;

fn read_offsets(
    r: &mut dyn BufRead,
    limits: &Limits,
    sink: &mut dyn FnMut(Item<OffsetEntry>) -> Result<(), Stop>,
) -> Result<Summary, ReadError<Stop>> {
    stream_offset_checkpoint(r, limits, sink)
}

fn read_epochs(
    r: &mut dyn BufRead,
    limits: &Limits,
    sink: &mut dyn FnMut(Item<EpochEntry>) -> Result<(), Stop>,
) -> Result<Summary, ReadError<Stop>> {
    stream_leader_epoch_checkpoint(r, limits, sink)
}

/// A checkpoint, read from its file a line at a time (see the module
/// documentation): its `checkpoint` object, its entries, its problems.
fn checkpoint<T>(
    o: &mut Objects<'_, '_>,
    input: &mut Opened<'_>,
    name: &str,
    limits: &Limits,
    read: Reading<T>,
    entry: impl Fn(&T) -> Value,
) -> Result<(), Stop> {
    let Some(lines) = input.lines.as_mut() else {
        return Err(Stop::Read(io::Error::other(
            "the checkpoint's text was not opened",
        )));
    };
    let lines: &mut dyn Reread = lines.as_mut();
    let stop = |e: ReadError<Stop>| match e {
        ReadError::Read(e) => Stop::Read(e),
        ReadError::Sink(s) => s,
        ReadError::OverCap(c) => Stop::Read(io::Error::other(format!(
            "the file changed while klf read it ({c} on another reading)"
        ))),
    };
    // First reading: what the `checkpoint` object says, and the problems
    // when they are few.
    let mut held: Vec<CheckpointProblem> = Vec::new();
    let r = lines.reread().map_err(Stop::Read)?;
    let first = read(r, limits, &mut |item| {
        if let Item::Problem(p) = item {
            if held.len() < PROBLEMS_HELD {
                held.push(p);
            }
        }
        Ok(())
    });
    let summary = match first {
        Ok(s) => s,
        Err(ReadError::OverCap(c)) => {
            return o.problem(&ParseError::new(c.pos(), format!("not read: {c}")), None);
        }
        Err(e) => return Err(stop(e)),
    };
    o.push(
        "checkpoint",
        json!({"checkpoint": name, "version": summary.version,
               "declared_count": summary.declared_count, "entries": summary.entries,
               "kafka_accepts": summary.kafka_accepts()}),
    )?;
    let r = lines.reread().map_err(Stop::Read)?;
    let second = read(r, limits, &mut |item| match item {
        Item::Entry(e) => o.push("checkpoint_entry", entry(&e)),
        Item::Problem(_) => Ok(()),
    })
    .map_err(stop)?;
    if second != summary {
        return Err(Stop::Read(io::Error::other(
            "the file changed while klf read it",
        )));
    }
    if summary.problems <= held.len() as u64 {
        return held.iter().try_for_each(|p| o.checkpoint_problem(p));
    }
    let r = lines.reread().map_err(Stop::Read)?;
    read(r, limits, &mut |item| match item {
        Item::Problem(p) => o.checkpoint_problem(&p),
        Item::Entry(_) => Ok(()),
    })
    .map_err(stop)?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The objects of a checkpoint held in memory (the renderer reads
    /// whatever text it is handed, a file or not).
    fn checkpoint_objects(text: &str) -> Vec<Value> {
        let mut input = Opened {
            kind: Kind::Text(TextKind::LeaderEpochCheckpoint),
            data: &[],
            size: text.len() as u64,
            log: None,
            sibling_index: None,
            lines: Some(Box::new(io::Cursor::new(text.as_bytes().to_vec()))),
        };
        let mut made = Vec::new();
        let mut sink = |v: Value| -> io::Result<()> {
            made.push(v);
            Ok(())
        };
        let r = objects(
            "p-0/leader-epoch-checkpoint",
            LEADER_EPOCH_CHECKPOINT_FILE,
            &mut input,
            false,
            &mut sink,
        );
        assert!(r.is_ok());
        made
    }

    #[test]
    fn a_checkpoint_is_its_summary_then_its_entries_then_its_problems() {
        let made = checkpoint_objects("0\n3\n0 0\n2 150\n1 90\n");
        let types: Vec<&str> = made.iter().filter_map(|v| v["type"].as_str()).collect();
        assert_eq!(
            types,
            [
                "checkpoint",
                "checkpoint_entry",
                "checkpoint_entry",
                "checkpoint_entry",
                "problem"
            ]
        );
        assert_eq!(made[0]["declared_count"], 3);
        assert_eq!(made[0]["entries"], 3);
        assert_eq!(made[2]["epoch"], 2);
        assert_eq!(made[2]["start_offset"], 150);
        // epochs go down at the third entry: Kafka's epoch cache refuses it
        assert_eq!(made[4]["line"], 5);
        assert!(as_problem(&made[4]).is_some());
    }
}
