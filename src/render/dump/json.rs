//! `klf dump --format json`: JSON Lines, one object per file, batch, record,
//! index entry, tail, skipped range or problem (and, through
//! [`super::files`], per transaction index entry, producer, checkpoint
//! entry, properties file, topic id, quorum state or clean shutdown marker),
//! each with a `type` field. Byte strings are `{"text": ...}` when valid
//! UTF-8, else `{"base64": ...}`. docs/json.md lists every object type.

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::format::batch::{Batch, SegmentSource, TailKind};
use crate::format::index::{IndexBytes, OffsetIndex, TimeIndex};
use crate::format::names::base_offset_of;
use crate::format::seek::Pick;
use crate::format::walk::{Checksums, Step};
use crate::format::ParseError;
use crate::model::dump::{DecoderKind, Item, Kind, Opened};
use crate::render::release::Release;

use super::kafka::{base64_std, control_record_text, hex, Encoding, FileNames, Options};
use super::kafka_aux::AuxDecoder;
use super::{files, index_rest, kind_name, log_pick, Outcome, Part};

/// A byte string as JSON: `{"text"}` (where valid UTF-8, else
/// `{"base64"}`), `{"hex"}` or `{"base64"}` as `encoding` says.
pub fn bytes_json(b: Option<&[u8]>, encoding: Encoding) -> Value {
    match (b, encoding) {
        (None, _) => Value::Null,
        (Some(b), Encoding::Hex) => json!({ "hex": hex(b) }),
        (Some(b), Encoding::Base64) => json!({ "base64": base64_std(b) }),
        (Some(b), Encoding::Utf8) => match std::str::from_utf8(b) {
            Ok(s) => json!({ "text": s }),
            Err(_) => json!({ "base64": base64_std(b) }),
        },
    }
}

struct Ctx<'a> {
    opts: &'a Options,
    file: &'a str,
    /// Topic and partition of the file's partition directory, if known.
    topic: Option<&'a str>,
    partition: Option<i32>,
    scratch: Vec<u8>,
    problems: usize,
    /// Applied to the key and value of non-control records.
    decoder: Option<AuxDecoder>,
}

/// The decoded key and value of a record: `decoded_key` and `decoded_value`
/// (the decoder's text, as JSON when it is JSON), or `decode_error`.
fn decode_into(
    m: &mut Map<String, Value>,
    d: AuxDecoder,
    release: Release,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) {
    let as_value = |t: Option<String>| match t {
        None => Value::Null,
        Some(t) => serde_json::from_str::<Value>(&t).unwrap_or(Value::String(t)),
    };
    match d.decode_structured(release, offset, key, value) {
        Ok(kp) => {
            m.insert("decoded_key".into(), as_value(kp.key));
            m.insert("decoded_value".into(), as_value(kp.payload));
        }
        Err(e) => {
            m.insert("decode_error".into(), json!(e.reason));
        }
    }
}

/// Writes one JSON line; `type` and `file` lead, the other keys follow in
/// the order they were put in, each time field followed by its `NAME_utc`.
fn emit(w: &mut impl Write, v: &Value) -> std::io::Result<()> {
    // Untrusted text (keys, values, file names) never reaches a terminal raw.
    let w = &mut crate::render::text::JsonSafe(w);
    let Value::Object(m) = v else {
        serde_json::to_writer(&mut *w, v)?;
        return w.write_all(b"\n");
    };
    const LEAD: [&str; 2] = ["type", "file"];
    // the objects are built with `type` and `file` first: written in
    // order, without a lookup per field
    let in_order = m
        .keys()
        .take(2)
        .eq(LEAD.iter().copied().filter(|k| m.contains_key(*k)));
    w.write_all(b"{")?;
    let mut field = |i: usize, k: &str, x: &Value| -> std::io::Result<()> {
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut *w, k)?;
        w.write_all(b":")?;
        serde_json::to_writer(&mut *w, x)?;
        if crate::render::text::is_time_field(k) {
            w.write_all(b",\"")?;
            w.write_all(k.as_bytes())?;
            w.write_all(b"_utc\":")?;
            match x.as_i64().and_then(crate::format::text::iso_time_bytes) {
                Some(t) => {
                    w.write_all(b"\"")?;
                    w.write_all(&t)?;
                    w.write_all(b"\"")?;
                }
                None => w.write_all(b"null")?,
            }
        }
        Ok(())
    };
    if in_order {
        for (i, (k, x)) in m.iter().enumerate() {
            field(i, k, x)?;
        }
    } else {
        let keys = LEAD
            .iter()
            .copied()
            .filter(|k| m.contains_key(*k))
            .chain(m.keys().map(String::as_str).filter(|k| !LEAD.contains(k)));
        for (i, k) in keys.enumerate() {
            field(i, k, &m[k])?;
        }
    }
    w.write_all(b"}\n")
}

fn problem(
    ctx: &mut Ctx<'_>,
    w: &mut impl Write,
    out_err: &mut Vec<ParseError>,
    e: ParseError,
) -> std::io::Result<()> {
    ctx.problems += 1;
    emit(
        w,
        &json!({"type": "problem", "file": ctx.file, "position": e.pos, "reason": e.reason}),
    )?;
    out_err.push(e);
    Ok(())
}

/// The `batch` object of `b`; `crc_valid`: whether its checksum matches.
fn batch_json(file: &str, b: &Batch<'_>, crc_valid: bool) -> Value {
    let mut m = Map::with_capacity(24);
    m.insert("type".into(), json!("batch"));
    m.insert("file".into(), json!(file));
    m.insert("position".into(), json!(b.position()));
    m.insert("size".into(), json!(b.size_in_bytes()));
    m.insert("magic".into(), json!(b.magic()));
    m.insert("crc_valid".into(), json!(crc_valid));
    match b {
        Batch::V2(v) => {
            m.insert("base_offset".into(), json!(v.base_offset()));
            m.insert("last_offset".into(), json!(v.last_offset()));
            m.insert("count".into(), json!(v.records_count()));
            m.insert(
                "partition_leader_epoch".into(),
                json!(v.partition_leader_epoch()),
            );
            m.insert("crc".into(), json!(v.crc()));
            m.insert(
                "compression".into(),
                v.compression()
                    .map_or(json!(v.compression_id()), |c| json!(c.name())),
            );
            m.insert("timestamp_type".into(), json!(v.timestamp_type().name()));
            m.insert("base_timestamp".into(), json!(v.base_timestamp()));
            m.insert("max_timestamp".into(), json!(v.max_timestamp()));
            m.insert("producer_id".into(), json!(v.producer_id()));
            m.insert("producer_epoch".into(), json!(v.producer_epoch()));
            m.insert("base_sequence".into(), json!(v.base_sequence()));
            m.insert("last_sequence".into(), json!(v.last_sequence()));
            m.insert("transactional".into(), json!(v.is_transactional()));
            m.insert("control".into(), json!(v.is_control()));
            m.insert("delete_horizon_ms".into(), json!(v.delete_horizon_ms()));
        }
        Batch::Legacy(e) => {
            let r = e.record();
            m.insert("offset".into(), json!(e.offset));
            m.insert("last_offset".into(), json!(e.offset));
            m.insert("crc".into(), json!(r.crc()));
            m.insert(
                "compression".into(),
                r.compression()
                    .map_or(json!(r.attributes() & 7), |c| json!(c.name())),
            );
            if e.check_magic().is_ok() {
                m.insert("timestamp_type".into(), json!(r.timestamp_type().name()));
                m.insert("max_timestamp".into(), json!(r.timestamp()));
            }
        }
    }
    Value::Object(m)
}

fn records_json(
    ctx: &mut Ctx<'_>,
    w: &mut impl Write,
    b: &Batch<'_>,
    pick: &mut Pick,
) -> Result<(), Result<ParseError, std::io::Error>> {
    let show = ctx.opts.show;
    let enc = ctx.opts.encoding;
    let file = ctx.file;
    let (topic, partition) = (ctx.topic, ctx.partition);
    match b {
        Batch::V2(v) => {
            let control = v.is_control();
            let recs = v
                .records(&mut ctx.scratch, ctx.opts.decompress_cap)
                .map_err(Ok)?;
            for r in recs {
                let r = r.map_err(Ok)?;
                if !pick.record(r.offset, r.key) {
                    continue;
                }
                if !pick.take() {
                    break;
                }
                let mut m = Map::with_capacity(24);
                m.insert("type".into(), json!("record"));
                m.insert("file".into(), json!(file));
                m.insert("topic".into(), json!(topic));
                m.insert("partition".into(), json!(partition));
                m.insert("batch_position".into(), json!(v.position));
                m.insert("leader_epoch".into(), json!(v.partition_leader_epoch()));
                m.insert("offset".into(), json!(r.offset));
                m.insert("timestamp".into(), json!(r.timestamp));
                m.insert("sequence".into(), json!(r.sequence));
                m.insert("key_size".into(), json!(r.key_size()));
                m.insert("value_size".into(), json!(r.value_size()));
                let headers: Vec<Value> = r
                    .headers()
                    .map(|h| {
                        let mut o = Map::new();
                        o.insert("key".into(), json!(String::from_utf8_lossy(h.key)));
                        if show.headers {
                            o.insert("value".into(), bytes_json(h.value, enc));
                        }
                        Value::Object(o)
                    })
                    .collect();
                m.insert("headers".into(), Value::Array(headers));
                if control {
                    match control_record_text(r.key, r.value) {
                        Ok(t) => m.insert("control".into(), json!(t.trim_start())),
                        Err(e) => m.insert("control_error".into(), json!(e)),
                    };
                }
                if show.key {
                    m.insert("key".into(), bytes_json(r.key, enc));
                }
                if show.value {
                    m.insert("value".into(), bytes_json(r.value, enc));
                }
                if show.key || show.value {
                    if let (Some(d), false) = (ctx.decoder, control) {
                        decode_into(&mut m, d, ctx.opts.release, r.offset, r.key, r.value);
                    }
                }
                emit(w, &Value::Object(m)).map_err(Err)?;
            }
        }
        Batch::Legacy(e) => {
            let msgs = e
                .records(&mut ctx.scratch, ctx.opts.decompress_cap)
                .map_err(Ok)?;
            for msg in msgs {
                let msg = msg.map_err(Ok)?;
                let r = msg.record;
                if !pick.record(msg.offset, r.key().ok().flatten()) {
                    continue;
                }
                if !pick.take() {
                    break;
                }
                let mut m = Map::with_capacity(24);
                m.insert("type".into(), json!("record"));
                m.insert("file".into(), json!(file));
                m.insert("topic".into(), json!(topic));
                m.insert("partition".into(), json!(partition));
                m.insert("batch_position".into(), json!(e.position));
                // v0/v1 messages carry no leader epoch
                m.insert("leader_epoch".into(), Value::Null);
                m.insert("offset".into(), json!(msg.offset));
                m.insert("timestamp".into(), json!(r.timestamp()));
                m.insert("magic".into(), json!(r.magic()));
                m.insert("crc".into(), json!(r.crc()));
                m.insert("crc_valid".into(), json!(r.is_valid()));
                m.insert("key_size".into(), json!(r.key_size().ok()));
                m.insert("value_size".into(), json!(r.value_size().ok()));
                if show.key || show.value {
                    let (key, value) = (r.key().ok().flatten(), r.value().ok().flatten());
                    if show.key {
                        m.insert("key".into(), bytes_json(key, enc));
                    }
                    if show.value {
                        m.insert("value".into(), bytes_json(value, enc));
                    }
                    if let Some(d) = ctx.decoder {
                        decode_into(&mut m, d, ctx.opts.release, msg.offset, key, value);
                    }
                }
                emit(w, &Value::Object(m)).map_err(Err)?;
            }
        }
    }
    Ok(())
}

/// The batches and records of the part of a `.log` that `pick` selects
/// (with `--deep-iteration`, each batch followed by its picked records),
/// the damage met (`problem` and, with `--resync`, `skipped` objects) and a
/// torn tail the file ends on. A failed read ends them in `read_error`.
fn dump_log(
    ctx: &mut Ctx<'_>,
    w: &mut impl Write,
    log: &dyn SegmentSource,
    pick: &mut Pick,
    errs: &mut Vec<ParseError>,
    read_error: &mut Option<std::io::Error>,
) -> std::io::Result<()> {
    let Part { walk, to_the_end } = Part::of(log, ctx.opts, pick);
    let mut walk = walk.checksums(Checksums::Mark);
    while !pick.done() {
        let Some(step) = walk.next() else { break };
        let (b, crc) = match step {
            Step::Batch(b) => (b, None),
            Step::BadCrc(b, e) => (b, Some(e)),
            // without --resync the walk ends after it
            Step::Bad(e) => {
                problem(ctx, w, errs, e)?;
                continue;
            }
            Step::Skipped(s) => {
                emit(
                    w,
                    &json!({"type": "skipped", "file": ctx.file, "from": s.from, "to": s.to, "bytes": s.to - s.from}),
                )?;
                continue;
            }
            Step::Tail(t) => {
                if to_the_end {
                    let (kind, declared) = match t.kind {
                        TailKind::Short => ("short", None),
                        TailKind::Truncated { declared } => ("truncated", Some(declared)),
                    };
                    emit(
                        w,
                        &json!({"type": "tail", "file": ctx.file, "position": t.position, "length": t.len, "kind": kind, "declared_size": declared}),
                    )?;
                    problem(ctx, w, errs, ParseError::new(t.position, t.describe()))?;
                }
                continue;
            }
            Step::Io(e) => {
                *read_error = Some(e);
                return Ok(());
            }
        };
        if !ctx.opts.deep && !pick.take() {
            break;
        }
        emit(w, &batch_json(ctx.file, &b, crc.is_none()))?;
        if let Some(e) = crc {
            problem(ctx, w, errs, e)?;
        }
        if ctx.opts.deep {
            match records_json(ctx, w, &b, pick) {
                Ok(()) => {}
                Err(Ok(e)) => {
                    problem(ctx, w, errs, e)?;
                    if !ctx.opts.resync {
                        break;
                    }
                }
                Err(Err(io)) => return Err(io),
            }
        }
    }
    Ok(())
}

/// The broker's sanity check of an index. A failure is a problem only when
/// the check was asked for (`--index-sanity-check`): the preallocated index
/// of an active segment fails it by design.
fn sanity(
    ctx: &mut Ctx<'_>,
    w: &mut impl Write,
    errs: &mut Vec<ParseError>,
    r: Result<(), String>,
) -> std::io::Result<()> {
    emit(
        w,
        &json!({"type": "sanity_check", "file": ctx.file, "passed": r.is_ok(), "reason": r.as_ref().err()}),
    )?;
    match r {
        Err(reason) if ctx.opts.index_sanity_only => {
            problem(ctx, w, errs, ParseError::new(0, reason))
        }
        _ => Ok(()),
    }
}

/// After the valid entries of an index: one object describing the remaining
/// slots (preallocated zeros, or entries that break the index's order).
fn rest(
    w: &mut impl Write,
    names: &FileNames,
    data: IndexBytes<'_>,
    valid: usize,
    entry: usize,
) -> std::io::Result<()> {
    let Some(r) = index_rest(data, valid, entry) else {
        return Ok(());
    };
    emit(
        w,
        &json!({"type": "index_rest", "file": names.display, "first_slot": r.first_slot, "slots": r.slots,
                "partial_bytes": r.partial_bytes, "all_zero": r.all_zero}),
    )
}

/// Writes one file as JSON Lines: its `file` object, then its batches
/// and records (the part `pick` selects of a `.log`), index entries or the
/// objects of [`files::objects`]. Each problem is also in the outcome, for
/// stderr; an error is a failed write.
pub fn write_file<W: Write>(
    w: &mut W,
    names: &FileNames,
    item: &Item,
    mut input: Opened<'_>,
    opts: &Options,
    decoder: Option<DecoderKind>,
    pick: Option<Pick>,
) -> std::io::Result<Outcome> {
    let kind = item.kind;
    let mut ctx = Ctx {
        opts,
        file: &names.display,
        topic: item.topic(),
        partition: item.topic_partition.as_ref().map(|(_, p)| *p),
        scratch: Vec::new(),
        problems: 0,
        decoder: decoder.map(AuxDecoder::from),
    };
    let mut errs = Vec::new();
    let mut aux_problems = files::Problems::default();
    let mut read_error = None;
    let base = match kind {
        Kind::Log | Kind::Index | Kind::TimeIndex | Kind::Aux => base_offset_of(&names.name),
        _ => None,
    };
    let (topic, partition) = match &item.topic_partition {
        Some((t, p)) => (Some(t.as_str()), Some(*p)),
        None => (None, None),
    };
    emit(
        w,
        &json!({"type": "file", "file": names.display, "kind": kind_name(kind, &names.name),
                "size": input.size, "base_offset": base, "topic": topic,
                "partition": partition, "decoder": decoder.map(DecoderKind::name)}),
    )?;
    match kind {
        Kind::Log => {
            let log = input.log();
            let mut pick = log_pick(log, opts, pick);
            dump_log(&mut ctx, w, log, &mut pick, &mut errs, &mut read_error)?
        }
        Kind::Index => {
            let idx = OffsetIndex::of(input.index(), base.unwrap_or(0));
            let valid = idx.valid_entries(input.log_len());
            sanity(&mut ctx, w, &mut errs, idx.sanity_check().map_err(|e| e.0))?;
            if !ctx.opts.index_sanity_only {
                for (slot, e) in idx.iter().enumerate().take(valid) {
                    emit(
                        w,
                        &json!({"type": "index_entry", "file": names.display, "slot": slot, "offset": e.offset, "position": e.position}),
                    )?;
                }
                rest(w, names, input.index(), valid, 8)?;
            }
        }
        Kind::TimeIndex => {
            let idx = TimeIndex::of(input.index(), base.unwrap_or(0));
            let valid = idx.valid_entries();
            sanity(&mut ctx, w, &mut errs, idx.sanity_check().map_err(|e| e.0))?;
            if !ctx.opts.index_sanity_only {
                for (slot, e) in idx.iter().enumerate().take(valid) {
                    emit(
                        w,
                        &json!({"type": "time_index_entry", "file": names.display, "slot": slot, "timestamp": e.timestamp, "offset": e.offset}),
                    )?;
                }
                rest(w, names, input.index(), valid, 12)?;
            }
        }
        _ => {
            // Each object is written as it is made.
            let mut sink = |v: Value| {
                if let Some((pos, reason)) = files::as_problem(&v) {
                    ctx.problems += 1;
                    aux_problems.push(ParseError::new(pos, reason));
                }
                emit(w, &v)
            };
            read_error =
                files::write_objects(names, &mut input, opts.index_sanity_only, &mut sink)?;
        }
    }
    let corrupt = ctx.problems > 0;
    errs.extend(aux_problems.shown);
    Ok(Outcome {
        problems: errs,
        more: aux_problems.more,
        read_error,
        corrupt,
    })
}
