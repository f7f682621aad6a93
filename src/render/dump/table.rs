//! `klf dump --format table`: per file, a header line (`path (kind, topic,
//! decoder)`) and its tables: batches (plus records with
//! `--deep-iteration`), index entries, or the objects of [`super::files`]
//! grouped by type.

use std::io::Write;

use serde_json::{Map, Value};

use crate::format::batch::{Batch, SegmentSource};
use crate::format::index::{IndexBytes, OffsetIndex, TimeIndex};
use crate::format::names::base_offset_of;
use crate::format::seek::Pick;
use crate::format::text::human_time;
use crate::format::walk::{Checksums, Step};
use crate::format::ParseError;
use crate::model::dump::{DecoderKind, Item, Kind, Opened};
use crate::render::style::StreamTable;

use super::kafka::{Encoding, FileNames, Options};
use super::kafka_aux::AuxDecoder;
use super::{files, index_rest, kind_name, log_pick, Outcome, Part};

/// A table's header and rows, written by [`write_object_table`].
type ObjectTable = (Vec<String>, Vec<Vec<String>>);

/// A table fitted to the terminal's width when stdout is one (cells wrap
/// at spaces, a word is never cut), at natural width otherwise, like every
/// klf table.
fn write_object_table(w: &mut dyn Write, (header, rows): &ObjectTable) -> std::io::Result<()> {
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = StreamTable::new(&header, crate::render::style::terminal_width());
    for r in rows {
        t.row(w, r.clone())?;
    }
    t.finish(w)
}

/// Printable text of bytes: UTF-8 (malformed bytes as U+FFFD) through the
/// one sanitiser, so record contents cannot drive the terminal.
fn printable(b: Option<&[u8]>, limit: usize) -> String {
    let Some(b) = b else {
        return "null".into();
    };
    let s = String::from_utf8_lossy(b);
    let cut: String = s.chars().take(limit).collect();
    let mut out = crate::render::text::sanitize(&cut).into_owned();
    if s.chars().count() > limit {
        out.push('…');
    }
    out
}

/// Bytes as `--encoding` writes them in a table, cut after `limit`
/// characters (`…`): text through the one sanitiser, hex or base64.
fn encoded(b: Option<&[u8]>, encoding: Encoding, limit: usize) -> String {
    let cut = |s: String| {
        if s.len() > limit {
            format!("{}…", &s[..limit])
        } else {
            s
        }
    };
    match (b, encoding) {
        (None, _) => "null".into(),
        (Some(_), Encoding::Utf8) => printable(b, limit),
        (Some(b), Encoding::Hex) => cut(super::kafka::hex(&b[..b.len().min(limit)])),
        (Some(b), Encoding::Base64) => cut(super::kafka::base64_std(&b[..b.len().min(limit)])),
    }
}

/// The headers cell of a record: the keys, with `--show headers` each
/// `key=value` (the value as `--encoding` says).
fn headers_cell<'h>(
    opts: &Options,
    headers: impl Iterator<Item = (&'h [u8], Option<&'h [u8]>)>,
) -> String {
    let cells: Vec<String> = headers
        .map(|(k, v)| {
            let key = printable(Some(k), 40);
            if opts.show.headers {
                format!("{key}={}", encoded(v, opts.encoding, 60))
            } else {
                key
            }
        })
        .collect();
    cells.join(if opts.show.headers { ", " } else { "," })
}

/// Key and value cells of a record: decoded text or the bytes where
/// `--show` asks for them, else their sizes.
fn key_value_cells(
    opts: &Options,
    decoder: Option<AuxDecoder>,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> (String, String) {
    let size = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64).to_string();
    let show = opts.show;
    if !show.key && !show.value {
        return (size(key), size(value));
    }
    let (k, v) = match decoder.map(|d| d.decode(opts.release, offset, key, value)) {
        Some(Ok(kp)) => (
            kp.key
                .map_or_else(String::new, |k| printable(Some(k.as_bytes()), 120)),
            kp.payload
                .map_or_else(String::new, |p| printable(Some(p.as_bytes()), 120)),
        ),
        Some(Err(e)) => (
            format!("(cannot decode: {})", e.reason),
            encoded(value, opts.encoding, 60),
        ),
        None => (
            encoded(key, opts.encoding, 60),
            encoded(value, opts.encoding, 60),
        ),
    };
    (
        if show.key { k } else { size(key) },
        if show.value { v } else { size(value) },
    )
}

/// Walks the part of the segment `pick` selects as the table dump reads
/// it (see [`Part`]), calling `each` for every batch with, under
/// `checksums`, why its checksum fails. With `framing`, damage to the
/// framing and a torn tail are recorded there (the first walk does; the
/// second, for the records, walks the same entries again).
fn walk_batches(
    log: &dyn SegmentSource,
    opts: &Options,
    pick: &Pick,
    checksums: Checksums,
    mut framing: Option<&mut Vec<ParseError>>,
    read_error: &mut Option<std::io::Error>,
    each: &mut dyn FnMut(&Batch<'_>, Option<ParseError>) -> std::io::Result<bool>,
) -> std::io::Result<()> {
    let Part { walk, to_the_end } = Part::of(log, opts, pick);
    let mut walk = walk.checksums(checksums);
    let mut bad = |e: ParseError| {
        if let Some(f) = framing.as_deref_mut() {
            f.push(e);
        }
    };
    while let Some(step) = walk.next() {
        let more = match step {
            Step::Batch(b) => each(&b, None)?,
            Step::BadCrc(b, e) => each(&b, Some(e))?,
            // without --resync the walk ends after it
            Step::Bad(e) => {
                bad(e);
                true
            }
            Step::Skipped(_) => true,
            Step::Tail(t) => {
                if to_the_end {
                    bad(ParseError::new(t.position, t.describe()));
                }
                true
            }
            Step::Io(e) => {
                *read_error = Some(e);
                false
            }
        };
        if !more {
            break;
        }
    }
    Ok(())
}

/// The cells of a batch's row in the batches table.
fn batch_row(b: &Batch<'_>, crc: &str) -> Vec<String> {
    match b {
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
            vec![
                v.position.to_string(),
                format!(
                    "[{}, {})",
                    v.base_offset(),
                    v.last_offset().saturating_add(1)
                ),
                v.records_count().to_string(),
                b.size_in_bytes().to_string(),
                v.magic().to_string(),
                v.compression().map_or_else(
                    || format!("?{}", v.compression_id()),
                    |c| c.name().to_string(),
                ),
                human_time(v.max_timestamp()),
                v.producer_id().to_string(),
                v.partition_leader_epoch().to_string(),
                flags.join(","),
                crc.to_string(),
            ]
        }
        Batch::Legacy(e) => {
            let r = e.record();
            vec![
                e.position.to_string(),
                e.offset.to_string(),
                String::new(),
                b.size_in_bytes().to_string(),
                e.magic.to_string(),
                r.compression()
                    .map_or_else(|| "?".to_string(), |c| c.name().to_string()),
                human_time(r.timestamp()),
                String::new(),
                String::new(),
                String::new(),
                crc.to_string(),
            ]
        }
    }
}

/// The widest cell of each numeric column, known before the tables are
/// written: the batches table's from every batch's row, the records
/// table's offset and timestamp from the batches' offsets and timestamps.
struct Widths {
    batches: Vec<usize>,
    record_offset: usize,
    record_timestamp: usize,
}

fn digits(n: i64) -> usize {
    n.to_string().len()
}

fn widths(log: &dyn SegmentSource, opts: &Options, pick: &Pick) -> Widths {
    let mut w = Widths {
        batches: vec![0; 11],
        record_offset: 0,
        record_timestamp: 0,
    };
    let mut ignored = None;
    let mut pick = pick.clone();
    let shallow = !opts.deep;
    let _ = walk_batches(
        log,
        opts,
        &pick.clone(),
        Checksums::Unchecked,
        None,
        &mut ignored,
        &mut |b, _| {
            if shallow && !pick.take() {
                return Ok(false);
            }
            for (m, c) in w.batches.iter_mut().zip(batch_row(b, "BAD")) {
                *m = (*m).max(c.len());
            }
            let (first, last, ts) = match b {
                Batch::V2(v) => (
                    v.base_offset(),
                    v.last_offset(),
                    [v.base_timestamp(), v.max_timestamp()],
                ),
                Batch::Legacy(e) => (e.offset, e.offset, [e.record().timestamp(), -1]),
            };
            w.record_offset = w.record_offset.max(digits(first)).max(digits(last));
            w.record_timestamp = ts
                .iter()
                .fold(w.record_timestamp, |m, &t| m.max(human_time(t).len()));
            Ok(true)
        },
    );
    w
}

/// The batches table (and with `--deep-iteration` the records table) of a
/// segment, each written as its rows come: the segment is walked once for
/// the batches and once more for the records.
fn write_log_tables(
    w: &mut dyn Write,
    log: &dyn SegmentSource,
    pick: &Pick,
    opts: &Options,
    decoder: Option<AuxDecoder>,
    errs: &mut Vec<ParseError>,
    read_error: &mut Option<std::io::Error>,
) -> std::io::Result<()> {
    let width = crate::render::style::terminal_width();
    let known = widths(log, opts, pick);
    writeln!(w, "batches:")?;
    let mut batches = StreamTable::new(
        &[
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
        ],
        width,
    )
    .at_least(&known.batches)
    .no_wrap(&[0, 1, 2, 3, 4, 6, 7, 8, 10]);
    let mut batch_errs = Vec::new();
    let mut crc_errs = Vec::new();
    let mut counted = pick.clone();
    let shallow = !opts.deep;
    walk_batches(
        log,
        opts,
        pick,
        Checksums::Mark,
        Some(&mut batch_errs),
        read_error,
        &mut |b, bad_crc| {
            if shallow && !counted.take() {
                return Ok(false);
            }
            let crc = match bad_crc {
                None => "ok",
                Some(e) => {
                    crc_errs.push(e);
                    "BAD"
                }
            };
            let row = batch_row(b, crc);
            batches.row(w, row).map(|()| true)
        },
    )?;
    batches.finish(w)?;
    errs.extend(batch_errs);
    errs.extend(crc_errs);
    if !opts.deep {
        errs.sort_by_key(|e| e.pos);
        return Ok(());
    }
    writeln!(w, "records:")?;
    let mut records = StreamTable::new(
        &[
            "offset",
            "timestamp",
            if opts.show.key { "key" } else { "key size" },
            if opts.show.value {
                "value"
            } else {
                "value size"
            },
            "headers",
        ],
        width,
    )
    .at_least(&[known.record_offset, known.record_timestamp])
    .no_wrap(&[0, 1])
    // record bytes, cut to a length anyway; a key stays whole (`--key`)
    .cut_words(&[3, 4]);
    let mut scratch = Vec::new();
    let mut record_errs = Vec::new();
    let mut shown = pick.clone();
    walk_batches(
        log,
        opts,
        pick,
        Checksums::Unchecked,
        None,
        read_error,
        &mut |b, _| {
            if shown.done() {
                return Ok(false);
            }
            match b {
                Batch::V2(v) => match v.records(&mut scratch, opts.decompress_cap) {
                    Ok(rs) => {
                        for r in rs {
                            match r {
                                Ok(r) if !shown.record(r.offset, r.key) => {}
                                Ok(_) if !shown.take() => break,
                                Ok(r) => {
                                    let hk =
                                        headers_cell(opts, r.headers().map(|h| (h.key, h.value)));
                                    let d = decoder.filter(|_| !v.is_control());
                                    let (k, val) = if v.is_control() {
                                        // a control record by name, in every format
                                        let text =
                                            super::kafka::control_record_text(r.key, r.value)
                                                .map_or_else(
                                                    |e| format!("(control record: {e})"),
                                                    |t| t.trim().to_string(),
                                                );
                                        (text, String::new())
                                    } else {
                                        key_value_cells(opts, d, r.offset, r.key, r.value)
                                    };
                                    records.row(
                                        w,
                                        vec![
                                            r.offset.to_string(),
                                            human_time(r.timestamp),
                                            k,
                                            val,
                                            hk,
                                        ],
                                    )?;
                                }
                                Err(e) => {
                                    record_errs.push(e);
                                    break;
                                }
                            }
                        }
                    }
                    Err(e) => record_errs.push(e),
                },
                Batch::Legacy(e) => match e.records(&mut scratch, opts.decompress_cap) {
                    Ok(msgs) => {
                        for m in msgs {
                            match m {
                                Ok(m) if !shown.record(m.offset, m.record.key().ok().flatten()) => {
                                }
                                Ok(_) if !shown.take() => break,
                                Ok(m) => {
                                    let r = m.record;
                                    let (key, value) =
                                        (r.key().ok().flatten(), r.value().ok().flatten());
                                    let (k, val) =
                                        key_value_cells(opts, decoder, m.offset, key, value);
                                    records.row(
                                        w,
                                        vec![
                                            m.offset.to_string(),
                                            human_time(r.timestamp()),
                                            k,
                                            val,
                                            String::new(),
                                        ],
                                    )?;
                                }
                                Err(e) => {
                                    record_errs.push(e);
                                    break;
                                }
                            }
                        }
                    }
                    Err(e) => record_errs.push(e),
                },
            }
            Ok(true)
        },
    )?;
    records.finish(w)?;
    errs.extend(record_errs);
    errs.sort_by_key(|e| e.pos);
    Ok(())
}

/// The table of an index's valid entries (two numbers each, after the
/// slot), then a row for the slots after them; the widths from the entries
/// themselves, read twice.
#[allow(clippy::too_many_arguments)]
fn index_table<I: Iterator<Item = (i64, i64)>>(
    w: &mut dyn Write,
    title: &str,
    header: [&str; 3],
    entries: impl Fn() -> I,
    first: fn(i64) -> String,
    data: IndexBytes<'_>,
    valid: usize,
    entry: usize,
) -> std::io::Result<()> {
    writeln!(w, "{title}:")?;
    let known = entries().fold([digits(valid as i64), 0, 0], |m, (a, b)| {
        [m[0], m[1].max(first(a).len()), m[2].max(digits(b))]
    });
    let mut t = StreamTable::new(&header, crate::render::style::terminal_width())
        .at_least(&known)
        .no_wrap(&[0, 1, 2]);
    for (i, (a, b)) in entries().enumerate() {
        t.row(w, vec![i.to_string(), first(a), b.to_string()])?;
    }
    rest_row(w, &mut t, data, valid, entry)?;
    t.finish(w)
}

/// One row summarising the slots after the valid entries.
fn rest_row(
    w: &mut dyn Write,
    t: &mut StreamTable,
    data: IndexBytes<'_>,
    valid: usize,
    entry: usize,
) -> std::io::Result<()> {
    let Some(r) = index_rest(data, valid, entry) else {
        return Ok(());
    };
    let what = if r.all_zero {
        "zero padding"
    } else {
        "not a valid entry"
    };
    t.row(
        w,
        vec![
            format!("{}..", r.first_slot),
            format!("{} slots", r.slots),
            what.to_string(),
        ],
    )
}

/// A cell for a JSON value: strings bare, `null` empty, the rest as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => printable(Some(s.as_bytes()), 200),
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

/// The cell of field `k`: a time field's epoch milliseconds shown with
/// their ISO-8601 UTC time, other values as [`cell`].
fn field_cell(k: &str, v: &Value) -> String {
    match v.as_i64() {
        Some(ms) if crate::render::text::is_time_field(k) => human_time(ms),
        _ => cell(v),
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
            v => rows.push((name, field_cell(k, v))),
        }
    }
}

/// The fields of an object shown in a table (`type` and `file` left out).
fn fields(v: &Value) -> Map<String, Value> {
    let mut m = v.as_object().cloned().unwrap_or_default();
    m.shift_remove("type");
    m.shift_remove("file");
    m
}

/// Tables for the objects of [`files::objects`], written as the objects
/// come: consecutive objects of one type form a table (one row each); a
/// type seen once is shown as field/value rows. Problems are left out
/// (they go to stderr). Holds one object, or one table's sample of rows.
struct ObjectTables {
    /// An object whose type's table has not started: shown as field/value
    /// rows unless the next object has its type.
    pending: Option<(String, Map<String, Value>)>,
    /// The table being written: its type, columns and rows so far.
    open: Option<(String, Vec<String>, StreamTable)>,
    /// Whether a table was written.
    any: bool,
}

impl ObjectTables {
    fn new() -> Self {
        ObjectTables {
            pending: None,
            open: None,
            any: false,
        }
    }

    fn add(&mut self, w: &mut dyn Write, v: &Value) -> std::io::Result<()> {
        let ty = v["type"].as_str().unwrap_or_default().to_string();
        if let Some((t, head, table)) = &mut self.open {
            if *t == ty {
                return table.row(w, row_of(head, &fields(v)));
            }
        }
        if let Some((t, first)) = self.pending.take() {
            if t == ty {
                let head: Vec<String> = first.keys().cloned().collect();
                writeln!(w, "{ty}:")?;
                let names: Vec<&str> = head.iter().map(String::as_str).collect();
                let mut table = StreamTable::new(&names, crate::render::style::terminal_width());
                table.row(w, row_of(&head, &first))?;
                table.row(w, row_of(&head, &fields(v)))?;
                self.open = Some((ty, head, table));
                self.any = true;
                return Ok(());
            }
            self.pending = Some((t, first));
        }
        self.close(w)?;
        self.pending = Some((ty, fields(v)));
        Ok(())
    }

    /// Ends the table or the object in hand.
    fn close(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        if let Some((_, _, table)) = self.open.take() {
            table.finish(w)?;
        }
        if let Some((ty, first)) = self.pending.take() {
            let mut rows = Vec::new();
            flatten("", &first, &mut rows);
            let rows = rows.into_iter().map(|(k, v)| vec![k, v]).collect();
            writeln!(w, "{ty}:")?;
            write_object_table(w, &(vec!["field".into(), "value".into()], rows))?;
            self.any = true;
        }
        Ok(())
    }

    fn finish(mut self, w: &mut dyn Write) -> std::io::Result<()> {
        self.close(w)?;
        if !self.any {
            writeln!(w, "(nothing to show)")?;
        }
        Ok(())
    }
}

/// The cells of an object's row under the columns `head` (a missing field
/// is an empty cell).
fn row_of(head: &[String], f: &Map<String, Value>) -> Vec<String> {
    head.iter()
        .map(|k| f.get(k).map(|v| field_cell(k, v)).unwrap_or_default())
        .collect()
}

/// Writes one file as tables: a header line (`path (kind, topic,
/// decoder)`), then its batches and records (the part `pick` selects of a
/// `.log`), index entries or the objects of [`files::objects`] grouped by
/// type. Problems are left for stderr, in the outcome; an error is a
/// failed write.
pub fn write_file(
    w: &mut dyn Write,
    names: &FileNames,
    item: &Item,
    mut input: Opened<'_>,
    opts: &Options,
    decoder: Option<DecoderKind>,
    pick: Option<Pick>,
) -> std::io::Result<Outcome> {
    let kind = item.kind;
    let base = base_offset_of(&names.name).unwrap_or(0);
    let mut errs = Vec::new();
    let mut aux_problems = files::Problems::default();
    let mut read_error = None;
    write!(w, "{} ({}", names.display, kind_name(kind, &names.name))?;
    if let Some((t, p)) = &item.topic_partition {
        write!(w, ", {t}-{p}")?;
    }
    if let Some(d) = decoder {
        write!(w, ", {} decoder", d.name())?;
    }
    writeln!(w, ")")?;
    match kind {
        Kind::Log => {
            let log = input.log();
            let pick = log_pick(log, opts, pick);
            write_log_tables(
                w,
                log,
                &pick,
                opts,
                decoder.map(AuxDecoder::from),
                &mut errs,
                &mut read_error,
            )?
        }
        Kind::Index => {
            let idx = OffsetIndex::of(input.index(), base);
            let valid = idx.valid_entries(input.log_len());
            if let Err(e) = idx.sanity_check() {
                if opts.index_sanity_only {
                    errs.push(ParseError::new(0, e.0));
                }
            }
            let pairs = || {
                idx.iter()
                    .take(valid)
                    .map(|e| (e.offset, i64::from(e.position)))
            };
            let header = ["slot", "offset", "position"];
            index_table(
                w,
                "index entries",
                header,
                pairs,
                |o| o.to_string(),
                input.index(),
                valid,
                8,
            )?
        }
        Kind::TimeIndex => {
            let idx = TimeIndex::of(input.index(), base);
            let valid = idx.valid_entries();
            if let Err(e) = idx.sanity_check() {
                if opts.index_sanity_only {
                    errs.push(ParseError::new(0, e.0));
                }
            }
            let pairs = || idx.iter().take(valid).map(|e| (e.timestamp, e.offset));
            let header = ["slot", "timestamp", "offset"];
            index_table(
                w,
                "time index entries",
                header,
                pairs,
                human_time,
                input.index(),
                valid,
                12,
            )?
        }
        _ => {
            // Each object goes into its table as it is made.
            let mut tables = ObjectTables::new();
            let mut sink = |v: Value| match files::as_problem(&v) {
                Some((pos, reason)) => {
                    aux_problems.push(ParseError::new(pos, reason));
                    Ok(())
                }
                None => tables.add(w, &v),
            };
            read_error =
                files::write_objects(names, &mut input, opts.index_sanity_only, &mut sink)?;
            tables.finish(w)?
        }
    }
    let corrupt = !errs.is_empty() || aux_problems.count() > 0;
    errs.extend(aux_problems.shown);
    Ok(Outcome {
        problems: errs,
        more: aux_problems.more,
        read_error,
        corrupt,
    })
}
