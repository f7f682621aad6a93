//! Making a digest on the node: what `klf digest` writes.
//!
//! Every file under the given paths is in the digest, in one of three ways:
//!
//! - **shipped whole** (compressed): checkpoints, properties, markers,
//!   producer snapshots, `quorum-state`, KRaft snapshots, and the segments
//!   of the internal topics (`__cluster_metadata`, `__consumer_offsets`,
//!   `__transaction_state`, `__share_group_state`), whose records are the
//!   cluster's bookkeeping, not its users' data; any other file up to
//!   [`Options::max_file`];
//! - **summarised**: a data topic's `.log`, as one summary per batch read
//!   from the batch's 61-byte header (no record is read), the control
//!   batches' marker types, and how the file ends (a torn tail, an entry
//!   that does not frame). Checksums are checked where Kafka's own reads
//!   would meet them: from the lower of the partition's high watermark and
//!   log end, and, in a log directory a broker left without its clean
//!   shutdown marker and that no broker holds now, from its recovery point
//!   (what Kafka's recovery re-reads); `--verify` checks every batch;
//! - **listed**: length and time only: indexes, files of a segment being
//!   deleted, cleaned or swapped, and files over the cap;
//! - **reduced**: the node's Kafka logs (`server.log`, `controller.log`,
//!   `state-change.log`, `kafkaServer.out`, rotated, gzip), found as
//!   discovery finds them, and those given with `--logs` (in the `logs/`
//!   folder of the node's first log directory): the lines of the records
//!   that state an event klf reads, every other line left empty
//!   ([`crate::capture::logs::reduce`]), so that file and line stay those
//!   of the node's file.
//!
//! Entries are made a chunk of files at a time in parallel and written in
//! file order as each chunk is done: memory does not grow with the node.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::capture::careful::{self, Careful};
use crate::capture::vfs;
use crate::format::batch::{
    Batch, RecordBatch, HEADER_SIZE_UP_TO_MAGIC, MIN_SIZE_FIELD, V2_HEADER_SIZE,
};
use crate::format::digest::{self as fmt, CrcCheck, DigestBatch, WalkEnd};
use crate::format::kafka_log::log_file_kind;
use crate::format::legacy::LegacyEntry;
use crate::format::names::SegmentFileKind;
use crate::format::names::{parse_partition_dir_name, parse_segment_file_name};
use crate::model::digest::{Made, Options};

/// Topics whose segments are shipped whole.
pub const INTERNAL_TOPICS: &[&str] = &[
    "__cluster_metadata",
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

/// Largest number of files and directories a digest lists.
pub const MAX_ENTRIES: usize = 4_000_000;

/// How deep under a given path files are looked for (a node folder, its
/// log directories, their partition directories, their files: 4).
const MAX_DEPTH: usize = 6;

/// What one partition directory's segments need to know.
#[derive(Debug, Clone, Copy)]
struct Crc {
    /// Check batches whose last offset is at or above this.
    from_offset: i64,
}

/// One file to put in the digest.
struct Item {
    abs: PathBuf,
    rel: PathBuf,
    /// A Kafka log, shipped reduced: whether it is gzip compressed, and
    /// whether it was given with `--logs`.
    log: Option<LogItem>,
}

/// How a Kafka log is shipped.
#[derive(Debug, Clone, Copy)]
struct LogItem {
    gzip: bool,
    given: bool,
}

/// A sink counting what goes through it.
struct Counted<'a> {
    out: &'a mut dyn Write,
    n: u64,
}

impl Counted<'_> {
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.n += b.len() as u64;
        Ok(())
    }
}

/// What the caller adds to a data segment's summaries once it is walked
/// (`klf check`'s index checks, which run on the node): the segment, what
/// the walk kept of its batches, how it ended.
pub type SegmentHook<'a> =
    dyn Fn(&Path, &[Walked], &WalkEnd) -> Option<Vec<fmt::ShippedFinding>> + Sync + 'a;

/// What the walk of a segment keeps of each batch for the index checks
/// (a few bytes a batch: the summaries themselves are compressed as they
/// are walked).
#[derive(Debug, Clone, Copy)]
pub struct Walked {
    /// Byte position.
    pub position: u64,
    /// First offset.
    pub base_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// A control batch.
    pub is_control: bool,
    /// Magic byte.
    pub magic: i8,
    /// Its checksum was checked and fails.
    pub crc_bad: bool,
}

/// Makes the digest of the node whose log directories (or node folder) are
/// `inputs`, as discovery found them (`capture`), and writes it to `out`.
/// `progress` gets (files done, files); `hook` sees each data segment's
/// walk before its summaries are written.
pub fn make(
    capture: &crate::model::Capture,
    inputs: &[PathBuf],
    opts: &Options,
    out: &mut dyn Write,
    progress: &(dyn Fn(u64, u64) + Sync),
    hook: &SegmentHook<'_>,
) -> io::Result<Made> {
    let mut made = Made::default();
    let crc = crc_plan(capture, opts.verify);
    // the digest's root holds the one input's content, or each input
    // under its own name
    let mut items = Vec::new();
    let mut dirs = Vec::new();
    let mut notes: Vec<(PathBuf, String)> = Vec::new();
    let unders = under_names(inputs);
    for (input, under) in inputs.iter().zip(&unders) {
        let prefix = PathBuf::from(under);
        let mut acc = PathBuf::new();
        for c in prefix.components() {
            acc.push(c);
            if !dirs.contains(&acc) {
                dirs.push(acc.clone());
            }
        }
        walk(input, &prefix, 0, &mut items, &mut dirs, &mut notes)?;
    }
    mark_logs(capture, inputs, &mut items);
    given_logs(capture, inputs, &unders, &mut items, &mut dirs)?;
    let mut sink = Counted { out, n: 0 };
    sink.put(&fmt::header())?;
    let mut count = 0u64;
    for d in &dirs {
        if d.as_os_str().is_empty() {
            continue;
        }
        sink.put(&fmt::frame(fmt::tag::DIR, &fmt::dir_body(d)))?;
        count += 1;
    }
    let total = items.len() as u64;
    let mut done = 0u64;
    let mut logs = Vec::new();
    for chunk in items.chunks(256) {
        let made_chunk: Vec<(Vec<u8>, Outcome)> = chunk
            .par_iter()
            .map(|it| entry_of(it, opts, &crc, hook))
            .collect::<io::Result<_>>()?;
        for (bytes, o) in made_chunk {
            sink.put(&bytes)?;
            count += 1;
            made.bytes_on_node += o.len;
            match o.kind {
                Kind::Shipped => made.files_shipped += 1,
                Kind::Listed => made.files_listed += 1,
                Kind::Segment(batches) => {
                    made.segments += 1;
                    made.batches += batches;
                    made.segment_bytes += o.len;
                }
                Kind::Log(log) => {
                    made.logs += 1;
                    made.log_lines += log["lines"].as_u64().unwrap_or(0);
                    made.log_lines_kept += log["lines_kept"].as_u64().unwrap_or(0);
                    logs.push(log);
                }
            }
            if let Some(n) = o.note {
                notes.push(n);
            }
        }
        done += chunk.len() as u64;
        progress(done, total);
    }
    for (p, m) in &notes {
        sink.put(&fmt::frame(fmt::tag::NOTE, &fmt::note_body(p, m)))?;
        count += 1;
    }
    let (read, dropped) = careful::counters();
    made.bytes_read = read;
    made.bytes_dropped_from_cache = dropped;
    made.notes = notes
        .iter()
        .map(|(p, m)| {
            let p = if p.as_os_str().is_empty() {
                ".".to_string()
            } else {
                p.display().to_string()
            };
            (p, m.clone())
        })
        .collect();
    let node = serde_json::json!({
        "klf": env!("CARGO_PKG_VERSION"),
        "format": format!("{}.{}", fmt::MAJOR, fmt::MINOR),
        "inputs": inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "under": unders,
        "verify": opts.verify,
        "logs": logs,
        "made": {
            "files_shipped": made.files_shipped,
            "files_listed": made.files_listed,
            "logs": made.logs,
            "log_lines": made.log_lines,
            "log_lines_kept": made.log_lines_kept,
            "segments": made.segments,
            "batches": made.batches,
            "bytes_on_node": made.bytes_on_node,
            "segment_bytes": made.segment_bytes,
            "bytes_read": made.bytes_read,
        },
    });
    let json = serde_json::to_vec(&node).map_err(io::Error::other)?;
    sink.put(&fmt::frame(fmt::tag::NODE, &json))?;
    count += 1;
    sink.put(&fmt::end_entry(count))?;
    made.digest_bytes = sink.n;
    Ok(made)
}

/// Where each input's files go in the digest: the one input's at its root;
/// several inputs each under its path from the folder they share
/// (`data-0/kafka-log3` and `data-1/kafka-log3` of a node's two volumes),
/// or under its own name where that is not unique.
fn under_names(inputs: &[PathBuf]) -> Vec<String> {
    if inputs.len() == 1 {
        return vec![String::new()];
    }
    let abs: Vec<PathBuf> = inputs
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .map(|p| p.components().collect())
        .collect();
    let mut common: PathBuf = abs[0].clone();
    while !abs.iter().all(|p| p.starts_with(&common)) {
        if !common.pop() {
            break;
        }
    }
    let rel: Vec<String> = abs
        .iter()
        .map(|p| {
            p.strip_prefix(&common)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let unique = rel.iter().collect::<std::collections::BTreeSet<_>>().len() == rel.len();
    // nested inputs (one inside another) share nothing cleanly: each under
    // its own name, made unique
    if unique
        && rel.iter().all(|r| !r.is_empty())
        && !rel
            .iter()
            .any(|a| rel.iter().any(|b| a != b && Path::new(b).starts_with(a)))
    {
        return rel;
    }
    let mut seen = std::collections::BTreeSet::new();
    inputs
        .iter()
        .map(|p| {
            let base = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "node".to_string());
            let mut name = base.clone();
            let mut i = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}-{i}");
                i += 1;
            }
            name
        })
        .collect()
}

/// Where each partition directory's checksums are checked from.
fn crc_plan(capture: &crate::model::Capture, verify: bool) -> BTreeMap<PathBuf, Crc> {
    let mut plan = BTreeMap::new();
    // one probe of the lock a log directory, not one a partition
    let mut live: BTreeMap<PathBuf, bool> = BTreeMap::new();
    let replicas = capture
        .partitions
        .values()
        .flatten()
        .chain(&capture.set_aside)
        .chain(&capture.metadata_logs);
    for r in replicas {
        let from_offset = if verify {
            i64::MIN
        } else {
            let broker = capture.brokers.iter().find(|b| b.path == r.log_dir);
            let recovering = broker.is_some_and(|b| b.clean_shutdown.is_none())
                && !*live
                    .entry(r.log_dir.clone())
                    .or_insert_with(|| crate::capture::mmap::log_dir_is_live(&r.log_dir));
            let mut t = r.high_watermark.unwrap_or(i64::MIN);
            if recovering {
                t = t.min(r.recovery_point.unwrap_or(i64::MIN));
            }
            // the window of a diff starts one below
            t.saturating_sub(1)
        };
        plan.insert(r.dir.clone(), Crc { from_offset });
    }
    plan
}

fn walk(
    dir: &Path,
    prefix: &Path,
    depth: usize,
    items: &mut Vec<Item>,
    dirs: &mut Vec<PathBuf>,
    notes: &mut Vec<(PathBuf, String)>,
) -> io::Result<()> {
    let rd = match vfs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if depth == 0 => {
            return Err(io::Error::new(e.kind(), format!("{}: {e}", dir.display())))
        }
        Err(e) => {
            notes.push((prefix.to_path_buf(), format!("cannot list: {e}")));
            return Ok(());
        }
    };
    let mut entries: Vec<_> = rd.collect::<io::Result<Vec<_>>>().unwrap_or_default();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if items.len() + dirs.len() >= MAX_ENTRIES {
            return Err(io::Error::other(format!(
                "{}: more than {MAX_ENTRIES} files and folders; digest the log directories one at a time",
                dir.display()
            )));
        }
        let name = e.file_name();
        let rel = prefix.join(&name);
        // a digest's paths are plain UTF-8 (no control character): a name
        // that is not is no name Kafka writes, and is left out, noted
        match name.to_str() {
            Some(n) if !n.chars().any(char::is_control) && n != "." && n != ".." => {}
            _ => {
                notes.push((
                    prefix.to_path_buf(),
                    format!(
                        "an entry named {:?} (not UTF-8, or with a control character) is not in the digest",
                        name
                    ),
                ));
                continue;
            }
        }
        let abs = e.path();
        let is_link = e.file_type().is_ok_and(|t| t.is_symlink());
        match vfs::metadata(&abs) {
            Ok(m) if m.is_dir() => {
                if is_link {
                    notes.push((rel, "a symbolic link to a folder; not followed".to_string()));
                } else if depth + 1 >= MAX_DEPTH {
                    notes.push((rel, format!("more than {MAX_DEPTH} folders deep; not read")));
                } else {
                    dirs.push(rel.clone());
                    walk(&abs, &rel, depth + 1, items, dirs, notes)?;
                }
            }
            Ok(m) if m.is_file() => items.push(Item {
                abs,
                rel,
                log: None,
            }),
            Ok(_) => notes.push((rel, "not a regular file; not read".to_string())),
            Err(e) => notes.push((rel, format!("cannot read: {e}"))),
        }
    }
    Ok(())
}

enum Kind {
    Shipped,
    Listed,
    Segment(u64),
    /// A Kafka log's reduced copy: what the node entry says of it.
    Log(serde_json::Value),
}

struct Outcome {
    kind: Kind,
    len: u64,
    note: Option<(PathBuf, String)>,
}

fn modified_ms(p: &Path) -> Option<i64> {
    vfs::modified_ms(p)
}

/// The entry of one file.
fn entry_of(
    it: &Item,
    opts: &Options,
    crc: &BTreeMap<PathBuf, Crc>,
    hook: &SegmentHook<'_>,
) -> io::Result<(Vec<u8>, Outcome)> {
    let name = it
        .abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = it.abs.parent().map(Path::to_path_buf).unwrap_or_default();
    let topic = parent
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| parse_partition_dir_name(n).ok())
        .map(|p| p.topic);
    let seg = parse_segment_file_name(&name);
    let mtime = modified_ms(&it.abs);
    let len = vfs::metadata(&it.abs).map(|m| m.len()).unwrap_or(0);
    if let Some(log) = it.log {
        return log_entry(it, log, mtime, len);
    }
    let listed = |note: Option<String>| -> io::Result<(Vec<u8>, Outcome)> {
        Ok((
            fmt::frame(fmt::tag::LISTED, &fmt::listed_body(&it.rel, mtime, len)),
            Outcome {
                kind: Kind::Listed,
                len,
                note: note.map(|n| (it.rel.clone(), n)),
            },
        ))
    };
    let internal = topic
        .as_deref()
        .is_some_and(|t| INTERNAL_TOPICS.contains(&t));
    match seg {
        Some(s) if s.pending.is_some() => return listed(None),
        Some(s)
            if matches!(
                s.kind,
                SegmentFileKind::Index | SegmentFileKind::TimeIndex | SegmentFileKind::TxnIndex
            ) =>
        {
            // a data segment's indexes stay on the node (klf check's index
            // checks run there); an internal topic's are shipped up to the
            // end of their data, as its segments are
            if !internal || len > opts.max_file {
                return listed(None);
            }
            let bytes = match read_data(&it.abs, len) {
                Ok(b) => b,
                Err(e) => return listed(Some(format!("cannot read: {e}"))),
            };
            let body = fmt::file_body(&it.rel, mtime, len.max(bytes.len() as u64), &bytes)?;
            return Ok((
                fmt::frame(fmt::tag::FILE, &body),
                Outcome {
                    kind: Kind::Shipped,
                    len,
                    note: None,
                },
            ));
        }
        Some(s) if s.kind == SegmentFileKind::Log && topic.is_some() => {
            if !internal || len > opts.max_internal {
                let from = crc.get(&parent).map_or(i64::MIN, |c| c.from_offset);
                let mut enc = fmt::SegmentEncoder::new()?;
                let mut walked: Vec<Walked> = Vec::new();
                let (end, read) = walk_segment(&it.abs, from, &mut |b| {
                    crate::format::memory::fallible(|| walked.try_reserve(1))
                        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
                    walked.push(Walked {
                        position: b.position,
                        base_offset: b.summary.base_offset,
                        last_offset: b.summary.last_offset,
                        is_control: b.summary.is_control,
                        magic: b.magic,
                        crc_bad: matches!(b.crc, CrcCheck::Bad(_)),
                    });
                    enc.push(&b)
                })?;
                let findings = hook(&it.abs, &walked, &end);
                let n = walked.len() as u64;
                drop(walked);
                let (z, raw_len) = enc.finish(&end, read, findings.as_deref())?;
                let body = fmt::segment_body(&it.rel, mtime, len, &z, raw_len);
                let note = (internal).then(|| {
                    (
                        it.rel.clone(),
                        format!(
                            "an internal topic's segment of {len} bytes, over the {} shipped whole: summarised (its records are not in the digest)",
                            opts.max_internal
                        ),
                    )
                });
                return Ok((
                    fmt::frame(fmt::tag::SEGMENT, &body),
                    Outcome {
                        kind: Kind::Segment(n),
                        len,
                        note,
                    },
                ));
            }
        }
        _ => {
            if len > opts.max_file {
                return listed(Some(format!(
                    "{len} bytes, over the {} a digest ships whole: listed only",
                    opts.max_file
                )));
            }
        }
    }
    let bytes = match read_whole(&it.abs, len) {
        Ok(b) => b,
        Err(e) => {
            return listed(Some(format!("cannot read: {e}")));
        }
    };
    let body = fmt::file_body(&it.rel, mtime, len.max(bytes.len() as u64), &bytes)?;
    Ok((
        fmt::frame(fmt::tag::FILE, &body),
        Outcome {
            kind: Kind::Shipped,
            len,
            note: None,
        },
    ))
}

/// Marks the Kafka logs among `items`: those discovery found as the
/// node's (in a log directory's root and its `logs/` folder, in a node
/// folder), and those in the root of a path given and its `logs/`.
fn mark_logs(capture: &crate::model::Capture, inputs: &[PathBuf], items: &mut [Item]) {
    let mut found: BTreeMap<PathBuf, bool> = capture
        .logs
        .iter()
        .filter(|l| !l.given)
        .map(|l| (l.path.clone(), l.gzip))
        .collect();
    for input in inputs {
        for (path, _, gzip) in crate::capture::discover::log_files_in(input) {
            found.insert(path, gzip);
        }
    }
    // the same file reached by another spelling of its path
    let canonical: BTreeMap<PathBuf, bool> = found
        .iter()
        .filter_map(|(p, &gz)| vfs::canonicalize(p).ok().map(|c| (c, gz)))
        .collect();
    for it in items.iter_mut() {
        let is_log_name = it
            .abs
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| log_file_kind(n).is_some());
        if !is_log_name {
            continue;
        }
        let gzip = found.get(&it.abs).copied().or_else(|| {
            vfs::canonicalize(&it.abs)
                .ok()
                .and_then(|c| canonical.get(&c).copied())
        });
        if let Some(gzip) = gzip {
            it.log = Some(LogItem { gzip, given: false });
        }
    }
}

/// Adds the logs given with `--logs` (in `capture.logs`, marked given) to
/// `items`: in the `logs/` folder of the node's first log directory in the
/// digest, where discovery reads a node's logs, each under its own name
/// (a name that is no Kafka log's is named for its kind, `server.log`; a
/// name taken gets `.1`, `.2`, ... before its `.gz`). A file the digest
/// ships already as one of the node's logs is not shipped twice.
fn given_logs(
    capture: &crate::model::Capture,
    inputs: &[PathBuf],
    unders: &[String],
    items: &mut Vec<Item>,
    dirs: &mut Vec<PathBuf>,
) -> io::Result<()> {
    let given: Vec<&crate::model::LogFile> = capture.logs.iter().filter(|l| l.given).collect();
    if given.is_empty() {
        return Ok(());
    }
    let first = capture.brokers.iter().find_map(|b| {
        inputs.iter().zip(unders).find_map(|(input, under)| {
            b.path
                .strip_prefix(input)
                .ok()
                .map(|rest| Path::new(under).join(rest))
        })
    });
    let Some(first) = first else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "--logs: no log directory among the paths given: a digest carries a node's logs in the logs/ folder of one of its log directories",
        ));
    };
    let folder = first.join(crate::capture::discover::LOGS_FOLDER);
    let shipped: std::collections::BTreeSet<PathBuf> = items
        .iter()
        .filter(|it| it.log.is_some())
        .filter_map(|it| vfs::canonicalize(&it.abs).ok())
        .collect();
    let mut taken: std::collections::BTreeSet<PathBuf> = items
        .iter()
        .map(|it| it.rel.clone())
        .chain(dirs.iter().cloned())
        .collect();
    if !taken.contains(&folder) {
        dirs.push(folder.clone());
        taken.insert(folder.clone());
    }
    for l in given {
        if vfs::canonicalize(&l.path).is_ok_and(|c| shipped.contains(&c)) {
            continue;
        }
        let rel = folder.join(given_name(l, &folder, &taken));
        taken.insert(rel.clone());
        items.push(Item {
            abs: l.path.clone(),
            rel,
            log: Some(LogItem {
                gzip: l.gzip,
                given: true,
            }),
        });
    }
    Ok(())
}

/// The name a log given with `--logs` has in the digest: its own, when it
/// is a Kafka log's name and free in `folder`.
fn given_name(
    l: &crate::model::LogFile,
    folder: &Path,
    taken: &std::collections::BTreeSet<PathBuf>,
) -> String {
    use crate::format::kafka_log::LogFileKind;
    let own = l
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| log_file_kind(n).is_some() && !n.chars().any(char::is_control));
    let gz = if l.gzip { ".gz" } else { "" };
    let name = match own {
        Some(n) => n.to_string(),
        None => {
            let base = match l.kind {
                LogFileKind::Server => "server.log",
                LogFileKind::Controller => "controller.log",
                LogFileKind::StateChange => "state-change.log",
                LogFileKind::Console => "kafkaServer.out",
            };
            format!("{base}{gz}")
        }
    };
    if !taken.contains(&folder.join(&name)) {
        return name;
    }
    let stem = name.strip_suffix(".gz").unwrap_or(&name).to_string();
    let gz = if name.ends_with(".gz") { ".gz" } else { "" };
    (1u64..)
        .map(|n| format!("{stem}.{n}{gz}"))
        .find(|n| !taken.contains(&folder.join(n)))
        .unwrap_or(name)
}

/// The entry of a Kafka log: its reduced copy ([`crate::capture::logs::reduce`]),
/// read carefully on the node; listed, with a note, where it cannot be read.
fn log_entry(
    it: &Item,
    log: LogItem,
    mtime: Option<i64>,
    len: u64,
) -> io::Result<(Vec<u8>, Outcome)> {
    let listed = |why: String| -> io::Result<(Vec<u8>, Outcome)> {
        Ok((
            fmt::frame(fmt::tag::LISTED, &fmt::listed_body(&it.rel, mtime, len)),
            Outcome {
                kind: Kind::Listed,
                len,
                note: Some((it.rel.clone(), why)),
            },
        ))
    };
    let mut src: Box<dyn io::Read> = if vfs::is_virtual(&it.abs) {
        match vfs::open_file(&it.abs) {
            Ok((f, _)) => Box::new(f),
            Err(e) => return listed(format!("cannot read: {e}")),
        }
    } else {
        match Careful::open(&it.abs) {
            Ok(c) => Box::new(CarefulReader { file: c, pos: 0 }),
            Err(e) => return listed(format!("cannot read: {e}")),
        }
    };
    let mut enc = fmt::FileEncoder::new()?;
    let reduced = match crate::capture::logs::reduce(&mut src, log.gzip, &mut enc) {
        Ok(r) => r,
        Err(e) => return listed(format!("cannot read: {e}")),
    };
    drop(src);
    let shipped = enc.len();
    let body = enc.finish(&it.rel, mtime)?;
    let info = serde_json::json!({
        "path": it.rel.to_string_lossy(),
        "on_node": it.abs.to_string_lossy(),
        "given": log.given,
        "bytes_on_node": len,
        "bytes_shipped": shipped,
        "lines": reduced.lines,
        "lines_kept": reduced.kept,
    });
    Ok((
        fmt::frame(fmt::tag::FILE, &body),
        Outcome {
            kind: Kind::Log(info),
            len,
            note: reduced.stopped.map(|s| (it.rel.clone(), s)),
        },
    ))
}

/// A file read front to back with [`Careful`] reads.
struct CarefulReader {
    file: Careful,
    pos: u64,
}

impl io::Read for CarefulReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // up to the length the file had when opened (a live log grows
        // while it is read), at most 1 MiB a read: the ranges brought
        // into the cache are dropped again when the file is closed
        let left = self.file.len().saturating_sub(self.pos);
        let n = buf
            .len()
            .min(1 << 20)
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        let got = self.file.read_at(&mut buf[..n], self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

/// A file's bytes, read carefully (or from memory for a file of an archive).
fn read_whole(p: &Path, len: u64) -> io::Result<Vec<u8>> {
    if vfs::is_virtual(p) {
        return vfs::read(p);
    }
    careful::read_file(p, len)
}

/// A file's bytes up to the end of its data (a preallocated index's hole
/// is not read).
fn read_data(p: &Path, len: u64) -> io::Result<Vec<u8>> {
    if vfs::is_virtual(p) {
        return vfs::open_data(p).map(|(b, _)| b.to_vec());
    }
    let end = Careful::open(p)?.data_end();
    read_whole(p, end.min(len))
}

/// Where a segment's bytes come from.
enum Src {
    Disk(Careful),
    Memory(crate::capture::mmap::FileBytes),
}

impl Src {
    fn len(&self) -> u64 {
        match self {
            Src::Disk(c) => c.len(),
            Src::Memory(b) => b.len() as u64,
        }
    }

    /// Exactly `n` bytes at `pos`, or fewer at the end of the file.
    fn read(&mut self, pos: u64, n: usize, buf: &mut Vec<u8>) -> io::Result<usize> {
        buf.clear();
        crate::format::memory::fallible(|| buf.try_reserve(n))
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        buf.resize(n, 0);
        let got = match self {
            Src::Disk(c) => c.read_at(buf, pos)?,
            Src::Memory(b) => {
                careful::pace(n as u64);
                let start = (pos as usize).min(b.len());
                let end = start.saturating_add(n).min(b.len());
                buf[..end - start].copy_from_slice(&b[start..end]);
                end - start
            }
        };
        buf.truncate(got);
        Ok(got)
    }
}

/// Below this size a batch (a page), the next header is read with the
/// bytes after it ([`READ_AHEAD`]): where batches are smaller than a page
/// every page holds a header, so the headers' own reads would bring every
/// page in anyway (and a system call costs about what copying 8 KiB from
/// the page cache does): one read of a window costs far less than a read
/// per header.
const DENSE_BELOW: u64 = 4 << 10;

/// The window read where batches are small.
const READ_AHEAD: usize = 64 << 10;

/// The window read where whole batches are read (their CRC checked: from
/// the high watermark on, or every batch with `--verify`): what follows is
/// read anyway, and the kernel reads nothing ahead on klf's files (see
/// [`crate::capture::careful`]), so a batch at a time would be a disk
/// read a batch on a cold cache.
const WHOLE_WINDOW: usize = 1 << 20;

/// A segment's reads: exactly the bytes asked for where batches are large,
/// a window of the bytes that follow where they are small; `read` counts
/// what was read.
struct Reads {
    src: Src,
    /// Bytes read ahead, from `at`.
    window: Vec<u8>,
    at: u64,
    /// The last batch was smaller than [`DENSE_BELOW`].
    dense: bool,
    /// Whole batches are being read (to check their CRC): what follows is
    /// read in [`WHOLE_WINDOW`]s.
    whole: bool,
    /// Windows are read where batches are small (off: every read exact).
    read_ahead: bool,
    read: u64,
}

impl Reads {
    fn new(src: Src, read_ahead: bool) -> Reads {
        Reads {
            read_ahead: read_ahead && matches!(src, Src::Disk(_)),
            src,
            window: Vec::new(),
            at: 0,
            dense: false,
            whole: false,
            read: 0,
        }
    }

    /// `n` bytes at `pos` into `buf`, or fewer at the end of the file: the
    /// number.
    fn read(&mut self, pos: u64, n: usize, buf: &mut Vec<u8>) -> io::Result<usize> {
        if let Some(from) = pos
            .checked_sub(self.at)
            .and_then(|o| usize::try_from(o).ok())
        {
            if let Some(b) = from.checked_add(n).and_then(|to| self.window.get(from..to)) {
                buf.clear();
                buf.extend_from_slice(b);
                return Ok(n);
            }
        }
        let window = if self.whole {
            WHOLE_WINDOW
        } else if self.dense {
            READ_AHEAD
        } else {
            0
        };
        if self.read_ahead && n < window {
            // the window, or less at the end of the file, never less than asked
            let left = usize::try_from(self.src.len().saturating_sub(pos)).unwrap_or(usize::MAX);
            let want = window.min(left).max(n);
            let got = match self.src.read(pos, want, &mut self.window) {
                Ok(got) => got,
                Err(_) => {
                    // a failure ahead is not this read's: read it alone
                    self.window.clear();
                    let got = self.src.read(pos, n, buf)?;
                    self.read += got as u64;
                    return Ok(got);
                }
            };
            self.at = pos;
            self.read += got as u64;
            let k = n.min(got);
            buf.clear();
            buf.extend_from_slice(&self.window[..k]);
            return Ok(k);
        }
        let got = self.src.read(pos, n, buf)?;
        self.read += got as u64;
        Ok(got)
    }
}

/// Exactly `n` bytes at `pos` into `buf`, or how the walk ends: a read
/// that failed, or came back short (the file changed).
fn exactly(src: &mut Reads, pos: u64, n: usize, buf: &mut Vec<u8>) -> Result<(), WalkEnd> {
    let got = src.read(pos, n, buf).map_err(|e| WalkEnd::Io {
        pos: Some(pos),
        reason: e.to_string(),
    })?;
    if got < n {
        return Err(WalkEnd::Io {
            pos: Some(pos),
            reason: "the file changed while klf read it (a read came back short)".into(),
        });
    }
    Ok(())
}

/// Largest entry read whole to check its checksum or read its marker.
const MAX_ENTRY: u64 = 128 << 20;

/// Walks one segment: every entry's header, framed as Kafka frames it; the
/// checksum of the entries whose last offset is at or above `crc_from`.
pub fn walk_segment(
    path: &Path,
    crc_from: i64,
    visit: &mut dyn FnMut(DigestBatch) -> io::Result<()>,
) -> io::Result<(WalkEnd, u64)> {
    walk_segment_with(path, crc_from, true, visit)
}

/// [`walk_segment`], reading ahead where batches are small or not.
fn walk_segment_with(
    path: &Path,
    crc_from: i64,
    read_ahead: bool,
    visit: &mut dyn FnMut(DigestBatch) -> io::Result<()>,
) -> io::Result<(WalkEnd, u64)> {
    // Never mapped, even where that would be allowed: a header a page
    // costs a page fault, more than the positioned read (measured: 0.22 s
    // mapped against 0.14 s read for 65,762 batches of 16 KiB).
    let mut src = Reads::new(
        if vfs::is_virtual(path) {
            Src::Memory(vfs::open(path)?)
        } else {
            Src::Disk(Careful::open(path)?)
        },
        read_ahead,
    );
    let end = src.src.len();
    let mut pos = 0u64;
    let mut buf = Vec::new();
    let fail = |pos: u64, reason: String| WalkEnd::Bad { pos, reason };
    let walk_end = loop {
        // Kafka: fewer than 17 bytes left end the data
        if pos.saturating_add(HEADER_SIZE_UP_TO_MAGIC as u64) >= end {
            if end > pos {
                break WalkEnd::Tail {
                    pos,
                    len: end - pos,
                    declared: None,
                };
            }
            break WalkEnd::Clean;
        }
        let want = V2_HEADER_SIZE.min((end - pos) as usize);
        let got = match src.read(pos, want, &mut buf) {
            Ok(n) => n,
            Err(e) => {
                break WalkEnd::Io {
                    pos: Some(pos),
                    reason: e.to_string(),
                }
            }
        };
        if got < HEADER_SIZE_UP_TO_MAGIC {
            break WalkEnd::Io {
                pos: Some(pos),
                reason: "the file changed while klf read it (a read came back short)".into(),
            };
        }
        let offset = i64::from_be_bytes(buf[0..8].try_into().unwrap_or([0; 8]));
        let size = i32::from_be_bytes(buf[8..12].try_into().unwrap_or([0; 4]));
        let magic = buf[16] as i8;
        if size < MIN_SIZE_FIELD {
            break fail(
                pos,
                format!("found record size {size} smaller than minimum record overhead (14)"),
            );
        }
        let total = size as u64 + 12;
        if total > end - pos {
            break WalkEnd::Tail {
                pos,
                len: end - pos,
                declared: Some(total as i64),
            };
        }
        if magic >= 2 {
            if got < V2_HEADER_SIZE {
                break fail(pos, "file ends inside the 61-byte batch header".into());
            }
            let header = buf.clone();
            let Ok(rb) = RecordBatch::new(&header, 0, V2_HEADER_SIZE) else {
                break fail(pos, "file ends inside the 61-byte batch header".into());
            };
            if rb
                .base_offset()
                .checked_add(i64::from(rb.last_offset_delta()))
                .is_none()
            {
                break fail(
                    pos,
                    format!(
                        "batch at base offset {} declares last offset delta {}: its last offset overflows a 64-bit offset",
                        rb.base_offset(),
                        rb.last_offset_delta()
                    ),
                );
            }
            let summary = crate::capture::replica::summarize(&Batch::V2(rb));
            let mut crc = CrcCheck::Unchecked;
            let mut control_type = None;
            if total < V2_HEADER_SIZE as u64 {
                crc = CrcCheck::Bad(format!(
                    "batch size {total} is smaller than the minimum batch overhead 61"
                ));
            } else if (summary.last_offset >= crc_from || summary.is_control) && total <= MAX_ENTRY
            {
                // the whole entry: its checksum, a marker's type (the
                // header read already, the rest now)
                let rest = total as usize - V2_HEADER_SIZE;
                let mut more = Vec::new();
                let at = pos + V2_HEADER_SIZE as u64;
                // batches read whole from here on (a marker below the
                // checked ones is one read alone)
                src.whole = summary.last_offset >= crc_from;
                if let Err(e) = exactly(&mut src, at, rest, &mut more) {
                    break e;
                }
                buf.truncate(V2_HEADER_SIZE);
                buf.extend_from_slice(&more);
                if let Ok(whole) = RecordBatch::new(&buf, 0, total as usize) {
                    if summary.last_offset >= crc_from {
                        let b = Batch::V2(whole);
                        crc = match b.check_crc() {
                            Ok(()) => CrcCheck::Ok,
                            Err(e) => CrcCheck::Bad(e.reason.into_owned()),
                        };
                    }
                    if summary.is_control {
                        control_type = control_type_of(&whole);
                    }
                }
            }
            visit(DigestBatch {
                position: pos,
                size: total,
                magic,
                summary: super::header(&summary),
                control_type,
                crc,
            })?;
        } else {
            if total > MAX_ENTRY {
                break WalkEnd::Io {
                    pos: Some(pos),
                    reason: format!("an entry of {total} bytes, more than klf reads into memory"),
                };
            }
            if let Err(e) = exactly(&mut src, pos, total as usize, &mut buf) {
                break e;
            }
            let e = LegacyEntry::new(0, offset, magic, &buf);
            let b = Batch::Legacy(e);
            let summary = crate::capture::replica::summarize(&b);
            let crc = if summary.last_offset >= crc_from {
                match b.check_crc() {
                    Ok(()) => CrcCheck::Ok,
                    Err(e) => CrcCheck::Bad(e.reason.into_owned()),
                }
            } else {
                CrcCheck::Unchecked
            };
            visit(DigestBatch {
                position: pos,
                size: total,
                magic,
                summary: super::header(&summary),
                control_type: None,
                crc,
            })?;
        }
        src.dense = total < DENSE_BELOW;
        pos += total;
    };
    Ok((walk_end, src.read))
}

fn control_type_of(b: &RecordBatch<'_>) -> Option<i16> {
    let mut scratch = Vec::new();
    let mut records = b.records(&mut scratch, 1 << 20).ok()?;
    match records.next() {
        Some(Ok(r)) => crate::format::record::control::parse_type_id(r.key).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a walk saw: every entry, how it ended, the bytes read (the
    /// CRC of the batches from offset `crc_from` on checked).
    fn walked(path: &Path, crc_from: i64, read_ahead: bool) -> (Vec<DigestBatch>, WalkEnd, u64) {
        let mut seen = Vec::new();
        let (end, read) = walk_segment_with(path, crc_from, read_ahead, &mut |b| {
            seen.push(b);
            Ok(())
        })
        .expect("walk");
        (seen, end, read)
    }

    /// Reading ahead (where batches are small, and where whole batches are
    /// read) changes what is read, never what is seen: on Kafka's small
    /// batches repeated past several windows, whole, with a torn tail, a
    /// bad checksum, a size field too small and a legacy segment; headers
    /// only, every batch whole, and whole from the middle on.
    #[test]
    fn reading_ahead_sees_what_exact_reads_see() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka");
        let v2 = std::fs::read(root.join("divergence/broker-3/diverge-0/00000000000000000000.log"))
            .expect("a real segment");
        let v2: Vec<u8> = v2.iter().copied().cycle().take(v2.len() * 13).collect();
        assert!(v2.len() > 3 * READ_AHEAD);
        let mut variants = vec![("whole", v2.clone())];
        variants.push(("torn", v2[..v2.len() - 100].to_vec()));
        let mut bad_crc = v2.clone();
        let mid = bad_crc.len() * 2 / 3;
        bad_crc[mid] ^= 0x55;
        variants.push(("bad checksum", bad_crc));
        // a size field too small at the first batch past the middle
        let mut pos = 0usize;
        while pos < v2.len() / 2 {
            let size = i32::from_be_bytes(v2[pos + 8..pos + 12].try_into().unwrap());
            pos += size as usize + 12;
        }
        let mut bad_size = v2.clone();
        bad_size[pos + 8..pos + 12].copy_from_slice(&3i32.to_be_bytes());
        variants.push(("bad size", bad_size));
        let dir = std::env::temp_dir().join(format!("klf-walk-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &variants {
            let p = dir.join("00000000000000000000.log");
            std::fs::write(&p, bytes).unwrap();
            let middle = {
                let (all, _, _) = walked(&p, i64::MAX, false);
                all[all.len() / 2].summary.base_offset
            };
            for crc_from in [i64::MAX, i64::MIN, middle] {
                let (exact, exact_end, exact_read) = walked(&p, crc_from, false);
                let (ahead, ahead_end, ahead_read) = walked(&p, crc_from, true);
                assert!(exact.len() > 20, "{name}: {} batches", exact.len());
                assert!(
                    exact.iter().any(|b| b.crc != CrcCheck::Unchecked) == (crc_from != i64::MAX),
                    "{name} {crc_from}"
                );
                assert_eq!(exact, ahead, "{name} {crc_from}");
                assert_eq!(exact_end, ahead_end, "{name} {crc_from}");
                // headers only: the windows read more than the headers
                if crc_from == i64::MAX {
                    assert!(
                        ahead_read > exact_read,
                        "{name}: {ahead_read} <= {exact_read}"
                    );
                } else {
                    assert!(ahead_read >= exact_read, "{name} {crc_from}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
