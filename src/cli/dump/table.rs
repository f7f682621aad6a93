//! `klf dump --format table`: one table per file (batches, or index entries),
//! plus a record table with `--deep-iteration`.

use std::io::Write;

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

use klf::format::batch::{Batch, SegmentIter};
use klf::format::index::{OffsetIndex, TimeIndex};
use klf::format::ParseError;
use klf::render::kafka::{base_offset_of, FileNames, Options};

use super::{kind_of, load, Kind};
use crate::cli::common::{Output, Status};

fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().copied());
    t
}

/// Printable text of bytes: UTF-8 with control characters escaped, so
/// record contents cannot drive the terminal.
fn printable(b: Option<&[u8]>, limit: usize) -> String {
    let Some(b) = b else {
        return "null".into();
    };
    let s = String::from_utf8_lossy(b);
    let mut out: String = s.chars().take(limit).flat_map(char::escape_debug).collect();
    if s.chars().count() > limit {
        out.push('…');
    }
    out
}

fn log_tables(data: &[u8], opts: &Options, errs: &mut Vec<ParseError>) -> (Table, Option<Table>) {
    let mut batches = new_table(&[
        "position", "offsets", "count", "size", "magic", "codec", "max timestamp", "producer", "leader epoch", "flags", "crc",
    ]);
    let mut records = opts.deep.then(|| {
        if opts.print_data {
            new_table(&["offset", "timestamp", "key", "value", "headers"])
        } else {
            new_table(&["offset", "timestamp", "key size", "value size", "headers"])
        }
    });
    let end = (opts.max_bytes.max(0) as usize).min(data.len());
    let mut iter = SegmentIter::with_range(data, 0, end);
    let mut scratch = Vec::new();
    loop {
        let b = match iter.next() {
            None => break,
            Some(Ok(b)) => b,
            Some(Err(e)) => {
                errs.push(e);
                if opts.resync && iter.resync().is_some() {
                    continue;
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
                    format!("{}..{}", v.base_offset(), v.last_offset()),
                    v.records_count().to_string(),
                    b.size_in_bytes().to_string(),
                    v.magic().to_string(),
                    v.compression().map_or_else(|| format!("?{}", v.compression_id()), |c| c.name().to_string()),
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
                                        let hk: Vec<String> =
                                            r.headers().map(|h| printable(Some(h.key), 40)).collect();
                                        let (k, val) = if opts.print_data {
                                            (printable(r.key, 60), printable(r.value, 60))
                                        } else {
                                            (r.key_size().to_string(), r.value_size().to_string())
                                        };
                                        t.add_row(vec![r.offset.to_string(), r.timestamp.to_string(), k, val, hk.join(",")]);
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
                    r.compression().map_or_else(|| "?".to_string(), |c| c.name().to_string()),
                    r.timestamp().to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    crc.to_string(),
                ]);
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

/// Runs the table dump of `files`.
pub fn run(files: &[String], cwd: &str, opts: &Options, out: &mut Output) -> Status {
    let mut status = Status::Clean;
    for arg in files {
        let names = FileNames::new(arg, cwd);
        let kind = kind_of(&names.name);
        if !matches!(kind, Kind::Log | Kind::Index | Kind::TimeIndex) {
            out.diag(format_args!("{}: not a .log, .index or .timeindex file; skipped", names.display));
            continue;
        }
        let inputs = match load(&names, kind) {
            Ok(i) => i,
            Err((path, e)) => {
                out.diag(format_args!("{path}: {e}"));
                status = status.worst(Status::Failure);
                continue;
            }
        };
        let base = base_offset_of(&names.name).unwrap_or(0);
        let mut errs = Vec::new();
        let tables: Vec<Table> = match kind {
            Kind::Log => {
                let (b, r) = log_tables(&inputs.main, opts, &mut errs);
                std::iter::once(b).chain(r).collect()
            }
            Kind::Index => {
                let idx = OffsetIndex::new(&inputs.main, base);
                let valid = idx.valid_entries(inputs.log.as_ref().map(|l| l.len() as u64));
                if let Err(e) = idx.sanity_check() {
                    if opts.index_sanity_only {
                        errs.push(ParseError::new(0, e.0));
                    }
                }
                let mut t = new_table(&["slot", "offset", "position"]);
                for (i, e) in idx.iter().enumerate().take(valid) {
                    t.add_row(vec![i.to_string(), e.offset.to_string(), e.position.to_string()]);
                }
                rest_row(&mut t, &inputs.main, valid, 8);
                vec![t]
            }
            _ => {
                let idx = TimeIndex::new(&inputs.main, base);
                let valid = idx.valid_entries();
                if let Err(e) = idx.sanity_check() {
                    if opts.index_sanity_only {
                        errs.push(ParseError::new(0, e.0));
                    }
                }
                let mut t = new_table(&["slot", "timestamp", "offset"]);
                for (i, e) in idx.iter().enumerate().take(valid) {
                    t.add_row(vec![i.to_string(), e.timestamp.to_string(), e.offset.to_string()]);
                }
                rest_row(&mut t, &inputs.main, valid, 12);
                vec![t]
            }
        };
        let w = out.out();
        let r = (|| -> std::io::Result<()> {
            writeln!(w, "{}", names.display)?;
            for t in &tables {
                writeln!(w, "{t}")?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            return status.worst(out.write_failed(e));
        }
        for e in &errs {
            out.problem(&names.display, e.pos, &e.reason);
        }
        if !errs.is_empty() {
            status = status.worst(Status::Corruption);
        }
    }
    status
}
