//! `klf dump --format table`: per file, a header line (`path (kind, topic,
//! decoder)`) and its tables: batches (plus records with
//! `--deep-iteration`), index entries, or the objects of [`super::files`]
//! grouped by type.

use std::io::Write;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

use klf::format::batch::{Batch, EntryError, SegmentSource};
use klf::format::index::{OffsetIndex, TimeIndex};
use klf::format::ParseError;
use klf::format::names::base_offset_of;
use klf::render::kafka::{FileNames, Options};
use klf::render::kafka_aux::AuxDecoder;
use serde_json::{Map, Value};

use super::walk::Item;
use super::{files, kind_name, open_item, DecoderKind, Kind};
use crate::cli::common::{Output, Status};

/// A table fitted to the terminal's width when stdout is one (cells wrap),
/// at natural width otherwise, like every klf table.
fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.iter().copied());
    t
}

/// Printable text of bytes: UTF-8 (malformed bytes as U+FFFD) through the
/// one sanitiser, so record contents cannot drive the terminal.
fn printable(b: Option<&[u8]>, limit: usize) -> String {
    let Some(b) = b else {
        return "null".into();
    };
    let s = String::from_utf8_lossy(b);
    let cut: String = s.chars().take(limit).collect();
    let mut out = klf::render::text::sanitize(&cut).into_owned();
    if s.chars().count() > limit {
        out.push('…');
    }
    out
}

/// Key and value cells of a record: decoded text, the bytes, or their sizes.
fn key_value_cells(
    opts: &Options,
    decoder: Option<AuxDecoder>,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> (String, String) {
    let size = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64).to_string();
    if !opts.print_data {
        return (size(key), size(value));
    }
    match decoder.map(|d| d.decode(opts.release, offset, key, value)) {
        Some(Ok(kp)) => (
            kp.key
                .map_or_else(String::new, |k| printable(Some(k.as_bytes()), 120)),
            kp.payload
                .map_or_else(String::new, |p| printable(Some(p.as_bytes()), 120)),
        ),
        Some(Err(e)) => (
            format!("(cannot decode: {})", e.reason),
            printable(value, 60),
        ),
        None => (printable(key, 60), printable(value, 60)),
    }
}

fn log_tables(
    log: &dyn SegmentSource,
    opts: &Options,
    decoder: Option<AuxDecoder>,
    errs: &mut Vec<ParseError>,
    read_error: &mut Option<std::io::Error>,
) -> (Table, Option<Table>) {
    let mut batches = new_table(&[
        "position",
        "offsets",
        "count",
        "size",
        "magic",
        "codec",
        "max timestamp",
        "producer",
        "leader epoch",
        "flags",
        "crc",
    ]);
    let mut records = opts.deep.then(|| {
        if opts.print_data {
            new_table(&["offset", "timestamp", "key", "value", "headers"])
        } else {
            new_table(&["offset", "timestamp", "key size", "value size", "headers"])
        }
    });
    let end = (opts.max_bytes.max(0) as u64).min(log.len());
    let mut iter = log.entries(0, end);
    let mut scratch = Vec::new();
    loop {
        let b = match iter.next_entry() {
            None => break,
            Some(Ok(b)) => b,
            Some(Err(EntryError::Io(e))) => {
                *read_error = Some(e);
                break;
            }
            Some(Err(EntryError::Bad(e))) => {
                errs.push(e);
                if opts.resync {
                    match iter.resync() {
                        Ok(Some(_)) => continue,
                        Ok(None) => {}
                        Err(EntryError::Io(e)) => *read_error = Some(e),
                        Err(EntryError::Bad(e)) => errs.push(e),
                    }
                }
                break;
            }
        };
        let crc = if b.check_crc().is_ok() { "ok" } else { "BAD" };
        if let Err(e) = b.check_crc() {
            errs.push(e);
        }
        match &b {
            Batch::V2(v) => {
                let mut flags = Vec::new();
                if v.is_transactional() {
                    flags.push("txn");
                }
                if v.is_control() {
                    flags.push("control");
                }
                if v.delete_horizon_ms().is_some() {
                    flags.push("horizon");
                }
                batches.add_row(vec![
                    v.position.to_string(),
                    format!("[{}, {})", v.base_offset(), v.last_offset().saturating_add(1)),
                    v.records_count().to_string(),
                    b.size_in_bytes().to_string(),
                    v.magic().to_string(),
                    v.compression().map_or_else(
                        || format!("?{}", v.compression_id()),
                        |c| c.name().to_string(),
                    ),
                    v.max_timestamp().to_string(),
                    v.producer_id().to_string(),
                    v.partition_leader_epoch().to_string(),
                    flags.join(","),
                    crc.to_string(),
                ]);
                if let Some(t) = records.as_mut() {
                    match v.records(&mut scratch, opts.decompress_cap) {
                        Ok(rs) => {
                            for r in rs {
                                match r {
                                    Ok(r) => {
                                        let hk: Vec<String> = r
                                            .headers()
                                            .map(|h| printable(Some(h.key), 40))
                                            .collect();
                                        let d = decoder.filter(|_| !v.is_control());
                                        let (k, val) =
                                            key_value_cells(opts, d, r.offset, r.key, r.value);
                                        t.add_row(vec![
                                            r.offset.to_string(),
                                            r.timestamp.to_string(),
                                            k,
                                            val,
                                            hk.join(","),
                                        ]);
                                    }
                                    Err(e) => {
                                        errs.push(e);
                                        break;
                                    }
                                }
                            }
                        }
                        Err(e) => errs.push(e),
                    }
                }
            }
            Batch::Legacy(e) => {
                let r = e.record();
                batches.add_row(vec![
                    e.position.to_string(),
                    e.offset.to_string(),
                    String::new(),
                    b.size_in_bytes().to_string(),
                    e.magic.to_string(),
                    r.compression()
                        .map_or_else(|| "?".to_string(), |c| c.name().to_string()),
                    r.timestamp().to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    crc.to_string(),
                ]);
                if let Some(t) = records.as_mut() {
                    match e.records(&mut scratch, opts.decompress_cap) {
                        Ok(msgs) => {
                            for m in msgs {
                                match m {
                                    Ok(m) => {
                                        let r = m.record;
                                        let (key, value) =
                                            (r.key().ok().flatten(), r.value().ok().flatten());
                                        let (k, val) =
                                            key_value_cells(opts, decoder, m.offset, key, value);
                                        t.add_row(vec![
                                            m.offset.to_string(),
                                            r.timestamp().to_string(),
                                            k,
                                            val,
                                            String::new(),
                                        ]);
                                    }
                                    Err(e) => {
                                        errs.push(e);
                                        break;
                                    }
                                }
                            }
                        }
                        Err(e) => errs.push(e),
                    }
                }
            }
        }
    }
    if opts.max_bytes == i32::MAX {
        if let Some(t) = iter.tail() {
            errs.push(ParseError::new(t.position, t.describe()));
        }
    }
    (batches, records)
}

/// One row summarising the slots after the valid entries.
fn rest_row(t: &mut Table, data: &[u8], valid: usize, entry: usize) {
    let slots = data.len() / entry;
    if valid >= slots && data.len() % entry == 0 {
        return;
    }
    let tail = data.get(valid * entry..).unwrap_or(&[]);
    let what = if tail.iter().all(|&b| b == 0) {
        "zero padding"
    } else {
        "not a valid entry"
    };
    t.add_row(vec![
        format!("{valid}.."),
        format!("{} slots", slots.saturating_sub(valid)),
        what.to_string(),
    ]);
}

/// A cell for a JSON value: strings bare, `null` empty, the rest as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => printable(Some(s.as_bytes()), 200),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// Flattens an object's fields into `(name, value)` rows, nested objects as
/// `outer.inner`.
fn flatten(prefix: &str, m: &Map<String, Value>, rows: &mut Vec<(String, String)>) {
    for (k, v) in m {
        let name = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) if !inner.is_empty() => flatten(&name, inner, rows),
            v => rows.push((name, cell(v))),
        }
    }
}

/// Tables for the objects of [`files::objects`]: consecutive objects of one
/// type form a table (one row each); a type seen once is shown as
/// field/value rows. Problems are left out (they go to stderr).
fn object_tables(objs: &[Value]) -> Vec<(String, Table)> {
    let fields = |v: &Value| -> Map<String, Value> {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.remove("type");
        m.remove("file");
        m
    };
    let mut out = Vec::new();
    let objs: Vec<&Value> = objs
        .iter()
        .filter(|v| files::as_problem(v).is_none())
        .collect();
    let mut i = 0;
    while i < objs.len() {
        let ty = objs[i]["type"].as_str().unwrap_or_default().to_string();
        let mut j = i;
        while j < objs.len() && objs[j]["type"] == ty.as_str() {
            j += 1;
        }
        let group = &objs[i..j];
        if group.len() == 1 {
            let mut rows = Vec::new();
            flatten("", &fields(group[0]), &mut rows);
            let mut t = new_table(&["field", "value"]);
            for (k, v) in rows {
                t.add_row(vec![k, v]);
            }
            out.push((ty, t));
        } else {
            let head: Vec<String> = fields(group[0]).keys().cloned().collect();
            let mut t = new_table(&head.iter().map(String::as_str).collect::<Vec<_>>());
            for v in group {
                let f = fields(v);
                t.add_row(
                    head.iter()
                        .map(|k| f.get(k).map(cell).unwrap_or_default())
                        .collect::<Vec<_>>(),
                );
            }
            out.push((ty, t));
        }
        i = j;
    }
    out
}

/// Dumps one file as tables; problems go to stderr.
pub fn dump_item(
    names: &FileNames,
    item: &Item,
    opts: &Options,
    decoder: Option<DecoderKind>,
    out: &mut Output,
) -> Status {
    let kind = item.kind;
    let (inputs, decoder) = match open_item(names, kind, opts, decoder, out) {
        Ok(x) => x,
        Err(status) => return status,
    };
    let base = base_offset_of(&names.name).unwrap_or(0);
    let mut errs = Vec::new();
    let mut read_error = None;
    let tables: Vec<(String, Table)> = match kind {
        Kind::Log => {
            let (b, r) = log_tables(
                inputs.log(),
                opts,
                decoder.map(DecoderKind::aux),
                &mut errs,
                &mut read_error,
            );
            std::iter::once(("batches".to_string(), b))
                .chain(r.map(|r| ("records".to_string(), r)))
                .collect()
        }
        Kind::Index => {
            let idx = OffsetIndex::new(&inputs.main, base);
            let valid = idx.valid_entries(inputs.log.as_ref().map(|l| l.len()));
            if let Err(e) = idx.sanity_check() {
                if opts.index_sanity_only {
                    errs.push(ParseError::new(0, e.0));
                }
            }
            let mut t = new_table(&["slot", "offset", "position"]);
            for (i, e) in idx.iter().enumerate().take(valid) {
                t.add_row(vec![
                    i.to_string(),
                    e.offset.to_string(),
                    e.position.to_string(),
                ]);
            }
            rest_row(&mut t, &inputs.main, valid, 8);
            vec![("index entries".to_string(), t)]
        }
        Kind::TimeIndex => {
            let idx = TimeIndex::new(&inputs.main, base);
            let valid = idx.valid_entries();
            if let Err(e) = idx.sanity_check() {
                if opts.index_sanity_only {
                    errs.push(ParseError::new(0, e.0));
                }
            }
            let mut t = new_table(&["slot", "timestamp", "offset"]);
            for (i, e) in idx.iter().enumerate().take(valid) {
                t.add_row(vec![
                    i.to_string(),
                    e.timestamp.to_string(),
                    e.offset.to_string(),
                ]);
            }
            rest_row(&mut t, &inputs.main, valid, 12);
            vec![("time index entries".to_string(), t)]
        }
        _ => {
            let objs = files::objects(
                &names.display,
                &names.name,
                kind,
                &inputs.main,
                opts.index_sanity_only,
            );
            errs.extend(
                objs.iter()
                    .filter_map(files::as_problem)
                    .map(|(p, r)| ParseError::new(p, r)),
            );
            object_tables(&objs)
        }
    };
    let w = out.out();
    let r = (|| -> std::io::Result<()> {
        write!(w, "{} ({}", names.display, kind_name(kind, &names.name))?;
        if let Some((t, p)) = &item.topic_partition {
            write!(w, ", {t}-{p}")?;
        }
        if let Some(d) = decoder {
            write!(w, ", {} decoder", d.name())?;
        }
        writeln!(w, ")")?;
        if tables.is_empty() {
            writeln!(w, "(nothing to show)")?;
        }
        for (title, t) in &tables {
            writeln!(w, "{title}:")?;
            writeln!(w, "{t}")?;
        }
        Ok(())
    })();
    if let Err(e) = r {
        return out.write_failed(e);
    }
    for e in &errs {
        out.problem(&names.display, e.pos, &e.reason);
    }
    if let Some(e) = read_error {
        out.diag(format_args!("{}: cannot read: {e}", names.display));
        return Status::Failure;
    }
    if errs.is_empty() {
        Status::Clean
    } else {
        Status::Corruption
    }
}
