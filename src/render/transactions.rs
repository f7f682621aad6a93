//! `klf transactions` output: the JSON document (the report as the model
//! holds it), JSON Lines (one object per producer, partition,
//! transactional id and odd marker, then a summary), and the tables.

use std::io::Write;

use serde::Serialize;

use crate::model::transactions::{
    CoordinatorTxns, OddMarker, OutcomeCounts, PartitionTxns, ProducerTxns, Spread, TxnReport,
};
use crate::render::json;
use crate::render::style::{paint, Look, Paint, Sheet};
use crate::render::text::{counted, human_bytes, sanitize, time_or_millis};

/// Idempotent producers the table lists (the most records first); the
/// others are counted under it.
pub const IDEMPOTENT_ROWS: usize = 20;

/// Odd markers the table lists.
pub const ODD_ROWS: usize = 20;

/// One JSON line: its type, then the object's fields.
#[derive(Serialize)]
struct Line<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    item: &'a T,
}

/// The last line of `jsonl`.
#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    coordinator_unknown: Option<&'a str>,
    odd_markers_total: u64,
}

/// `--format json` (one pretty document: the report) or `jsonl` (a
/// `producer` line per producer, a `partition` line per partition, a
/// `transactional_id` line per id of `__transaction_state`, an
/// `odd_marker` line per odd marker kept, then one `summary` line).
pub fn write_json(r: &TxnReport, lines: bool, w: &mut impl Write) -> std::io::Result<()> {
    if !lines {
        return json::document(w, r);
    }
    for p in &r.producers {
        json::line(
            w,
            &Line {
                kind: "producer",
                item: p,
            },
        )?;
    }
    for p in &r.partitions {
        json::line(
            w,
            &Line {
                kind: "partition",
                item: p,
            },
        )?;
    }
    for c in &r.coordinator {
        json::line(
            w,
            &Line {
                kind: "transactional_id",
                item: c,
            },
        )?;
    }
    for m in &r.odd_markers {
        json::line(
            w,
            &Line {
                kind: "odd_marker",
                item: m,
            },
        )?;
    }
    json::line(
        w,
        &Summary {
            kind: "summary",
            coordinator_unknown: r.coordinator_unknown.as_deref(),
            odd_markers_total: r.odd_markers_total,
        },
    )
}

/// Whether a partition holds anything transactional.
fn transactional(p: &PartitionTxns) -> bool {
    p.committed + p.aborted + p.markers_without_data > 0 || !p.open.is_empty()
}

/// `N (R records, B)` of one outcome: whole transactions when they can be
/// told, else the count per partition.
fn outcome(o: &OutcomeCounts) -> String {
    if o.partition_transactions == 0 {
        return "0".to_string();
    }
    let n = match o.transactions {
        Some(n) if n == o.partition_transactions => n.to_string(),
        Some(n) => format!("{n} ({} partition-txns)", o.partition_transactions),
        None => format!("? ({} partition-txns)", o.partition_transactions),
    };
    format!(
        "{n}: {}, {}",
        counted(o.records, "record"),
        human_bytes(o.bytes)
    )
}

fn spread(s: Option<&Spread>) -> String {
    match s {
        None => "-".to_string(),
        Some(s) => format!(
            "{}/{}{}/{}",
            s.min,
            if s.median_exact { "" } else { "~" },
            s.median,
            s.max
        ),
    }
}

fn partitions_cell(p: &ProducerTxns) -> String {
    const SHOWN: usize = 3;
    let mut names: Vec<String> = p
        .partitions
        .iter()
        .take(SHOWN)
        .map(|r| sanitize(&format!("{}-{}", r.topic, r.partition)).into_owned())
        .collect();
    if p.partitions.len() > SHOWN {
        names.push(format!("+{}", p.partitions.len() - SHOWN));
    }
    names.join(", ")
}

/// How the producer's markers carry their epochs.
fn markers(p: &ProducerTxns) -> String {
    let closed = p.epoch_bumped + p.same_epoch + p.odd_epoch;
    if closed == 0 {
        return "-".to_string();
    }
    if p.epoch_bumped == closed {
        return "epoch+1 (TV2)".to_string();
    }
    if p.same_epoch == closed {
        return "same epoch".to_string();
    }
    let mut parts = Vec::new();
    if p.epoch_bumped > 0 {
        parts.push(format!("{} epoch+1", p.epoch_bumped));
    }
    if p.same_epoch > 0 {
        parts.push(format!("{} same", p.same_epoch));
    }
    if p.odd_epoch > 0 {
        parts.push(format!("{} odd", p.odd_epoch));
    }
    parts.join(", ")
}

fn name(p: &ProducerTxns) -> String {
    match &p.transactional_id {
        Some(id) => format!("{} (producer {})", sanitize(id), p.producer_id),
        None => format!("producer {}", p.producer_id),
    }
}

/// What the table says of a producer beyond its row.
fn notes(p: &ProducerTxns, r: &TxnReport) -> Vec<String> {
    let mut out = Vec::new();
    let closed = p.epoch_bumped + p.same_epoch + p.odd_epoch;
    if closed > 0 && p.epoch_bumped == closed {
        out.push(format!(
            "TV2: epoch bumped at each commit/abort ({} of {} markers carry their data's epoch + 1)",
            p.epoch_bumped, closed
        ));
    } else if p.epoch_bumped > 0 {
        out.push(format!(
            "{} of {} markers carry their data's epoch + 1 (an abort the coordinator wrote after a timeout or a fence, or transaction version 2)",
            p.epoch_bumped, closed
        ));
    }
    if p.odd_epoch > 0 {
        out.push(format!(
            "{} marker(s) carry an epoch neither their data's nor one more (below)",
            p.odd_epoch
        ));
    }
    if p.count_rule == "per-partition" {
        out.push(format!(
            "its transactions over {} partitions share an epoch: which markers close one transaction cannot be told, counted per partition",
            p.partitions.len()
        ));
    }
    if p.markers_without_data > 0 {
        out.push(format!(
            "{} with no data of it before them (a transaction that wrote nothing there, or data below the log start)",
            counted(p.markers_without_data, "marker")
        ));
    }
    for part in &r.partitions {
        for o in part.open.iter().filter(|o| o.producer_id == p.producer_id) {
            out.push(format!(
                "open in {}-{} from offset {} ({}, {}) since {}{}",
                sanitize(&part.topic),
                part.partition,
                o.first_offset,
                counted(o.records, "record"),
                human_bytes(o.bytes),
                time_or_millis(o.first_timestamp),
                if o.first_offset == part.last_stable_offset {
                    ": it holds the last stable offset"
                } else {
                    ""
                }
            ));
            let state = o.coordinator_state.as_deref().unwrap_or("expired");
            match o.hanging {
                Some(true) => {
                    out.push(format!(
                        "HANGING: the coordinator has finished with it ({state}): no marker will come, read_committed consumers stop at offset {} until it is aborted",
                        o.first_offset
                    ));
                    if let Some(r) = &o.remedy {
                        out.push(format!("remedy (not run): {}", sanitize(r)));
                    }
                }
                Some(false) => out.push(format!(
                    "the coordinator has it in progress ({state}): it will be completed, or aborted when it times out"
                )),
                None => {}
            }
        }
    }
    match (&p.coordinator, &p.empty_unknown) {
        (Some(c), _) => {
            let id = r
                .coordinator
                .iter()
                .find(|t| t.producers.iter().any(|x| x.producer_id == p.producer_id));
            let state = id.map(coordinator_state).unwrap_or_default();
            out.push(format!(
                "coordinator: {} prepared to commit, {} to abort, {} empty{}{}",
                c.committed,
                c.aborted,
                c.empty,
                if c.fenced > 0 {
                    format!(", {} fenced", c.fenced)
                } else {
                    String::new()
                },
                state
            ));
        }
        (None, Some(why)) if p.transactional => {
            out.push(format!("empty transactions unknown: {}", sanitize(why)))
        }
        _ => {}
    }
    out
}

/// `; now STATE at epoch E, transaction version V` of a transactional id.
fn coordinator_state(t: &CoordinatorTxns) -> String {
    let state = t.state.as_deref().unwrap_or("expired (tombstone)");
    let tv = t
        .transaction_version
        .map(|v| format!(", transaction version {v}"))
        .unwrap_or_default();
    format!("; now {state} at epoch {}{tv}", t.producer_epoch)
}

fn reference_words(why: &str) -> &'static str {
    match why {
        "only-replica" => "the only replica",
        "explicit" => "--leader",
        "metadata-leader" => "leader at capture",
        "highest-latest-epoch" => "highest latest epoch",
        "longest-log" => "longest log",
        _ => "ambiguous: lowest broker id",
    }
}

/// The tables of `klf transactions`: the whole in a few lines, the
/// transactional producers (with what each row does not say under the
/// table), the idempotent ones, the partitions with transactional data
/// (their last stable offset and what holds it), and the odd markers.
pub fn write_table(r: &TxnReport, look: Look, w: &mut impl Write) -> std::io::Result<()> {
    let color = look.color;
    let txn: Vec<&ProducerTxns> = r.producers.iter().filter(|p| p.transactional).collect();
    let idem: Vec<&ProducerTxns> = r.producers.iter().filter(|p| !p.transactional).collect();
    let with_txn: Vec<&PartitionTxns> = r.partitions.iter().filter(|p| transactional(p)).collect();
    let ids = txn
        .iter()
        .filter_map(|p| p.transactional_id.as_deref())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let sum = |f: &dyn Fn(&ProducerTxns) -> &OutcomeCounts| -> (u64, u64, bool) {
        let mut n = 0;
        let mut recs = 0;
        let mut whole = true;
        for p in &txn {
            let o = f(p);
            match o.transactions {
                Some(t) => n += t,
                None => {
                    whole = false;
                    n += o.partition_transactions;
                }
            }
            recs += o.records;
        }
        (n, recs, whole)
    };
    let (c, cr, cw) = sum(&|p| &p.committed);
    let (a, ar, aw) = sum(&|p| &p.aborted);
    let (o, or, _) = sum(&|p| &p.open);
    writeln!(
        w,
        "{} ({} transactional {}), {}, over {} of {} read.",
        counted(txn.len() as u64, "transactional producer"),
        ids,
        if ids == 1 { "id" } else { "ids" },
        counted(idem.len() as u64, "idempotent producer"),
        counted(with_txn.len() as u64, "partition"),
        r.partitions.len()
    )?;
    let whole = |n: u64, full: bool| {
        if full {
            n.to_string()
        } else {
            format!("{n} (counted per partition)")
        }
    };
    let held: Vec<String> = with_txn
        .iter()
        .filter(|p| p.lso_bound == "open-transaction")
        .map(|p| {
            format!(
                "{}-{} at {}",
                sanitize(&p.topic),
                p.partition,
                p.last_stable_offset
            )
        })
        .collect();
    let open_words = if o == 0 {
        "open 0".to_string()
    } else {
        format!(
            "open {o} ({}), holding the last stable offset of {}",
            counted(or, "record"),
            if held.is_empty() {
                "none (past the high watermark)".to_string()
            } else {
                held.join(", ")
            }
        )
    };
    let line = format!(
        "Committed {} ({}), aborted {} ({}), {open_words}.",
        whole(c, cw),
        counted(cr, "record"),
        whole(a, aw),
        counted(ar, "record"),
    );
    writeln!(
        w,
        "{}",
        paint(color, &line, if o > 0 { Paint::Warn } else { Paint::Good })
    )?;
    match &r.coordinator_unknown {
        Some(why) if r.coordinator.is_empty() => writeln!(
            w,
            "{}",
            paint(
                color,
                &format!(
                    "Coordinator: {}: transactional ids and empty transactions cannot be told.",
                    sanitize(why)
                ),
                Paint::Warn
            )
        )?,
        Some(why) => writeln!(
            w,
            "Coordinator: __transaction_state, {}; {}.",
            counted(r.coordinator.len() as u64, "transactional id"),
            sanitize(why)
        )?,
        None => writeln!(
            w,
            "Coordinator: __transaction_state, {}.",
            counted(r.coordinator.len() as u64, "transactional id")
        )?,
    }
    if !txn.is_empty() {
        writeln!(w)?;
        let mut t = Sheet::new(look);
        t.set_header(vec![
            "transactional id",
            "producer",
            "epochs",
            "committed",
            "aborted",
            "open",
            "empty",
            "markers",
            "duration ms min/median/max",
            "partitions",
        ]);
        t.title(2);
        for p in &txn {
            t.add_row(vec![
                p.transactional_id
                    .as_deref()
                    .map_or_else(|| "-".to_string(), |s| sanitize(s).into_owned()),
                p.producer_id.to_string(),
                if p.first_epoch == p.last_epoch {
                    p.first_epoch.to_string()
                } else {
                    format!("{}-{}", p.first_epoch, p.last_epoch)
                },
                outcome(&p.committed),
                outcome(&p.aborted),
                outcome(&p.open),
                p.empty.map_or_else(|| "?".to_string(), |n| n.to_string()),
                markers(p),
                spread(p.duration_ms.as_ref()),
                partitions_cell(p),
            ]);
        }
        writeln!(w, "{t}")?;
        for p in &txn {
            let notes = notes(p, r);
            if notes.is_empty() {
                continue;
            }
            writeln!(w, "{}:", name(p))?;
            for n in notes {
                writeln!(w, "  {n}")?;
            }
        }
    }
    if !idem.is_empty() {
        writeln!(w)?;
        let mut most = idem.clone();
        most.sort_by_key(|p| (std::cmp::Reverse(p.idempotent.records), p.producer_id));
        let mut t = Sheet::new(look);
        t.set_header(vec![
            "idempotent producer",
            "epochs",
            "batches",
            "records",
            "bytes",
            "partitions",
        ]);
        for p in most.iter().take(IDEMPOTENT_ROWS) {
            t.add_row(vec![
                p.producer_id.to_string(),
                if p.first_epoch == p.last_epoch {
                    p.first_epoch.to_string()
                } else {
                    format!("{}-{}", p.first_epoch, p.last_epoch)
                },
                p.idempotent.batches.to_string(),
                p.idempotent.records.to_string(),
                human_bytes(p.idempotent.bytes),
                partitions_cell(p),
            ]);
        }
        writeln!(w, "{t}")?;
        if most.len() > IDEMPOTENT_ROWS {
            writeln!(
                w,
                "{} not shown (--format json lists every one)",
                counted(
                    (most.len() - IDEMPOTENT_ROWS) as u64,
                    "more idempotent producer"
                )
            )?;
        }
    }
    if !with_txn.is_empty() {
        writeln!(w)?;
        let mut t = Sheet::new(look);
        t.set_header(vec![
            "partition",
            "read from",
            "log start",
            "last stable offset",
            "high watermark",
            "log end",
            "committed",
            "aborted",
            "open",
            "held back by",
        ]);
        for p in &with_txn {
            let held = p.open.first().map_or_else(
                || "-".to_string(),
                |o| {
                    let who = o.transactional_id.as_deref().map_or_else(
                        || format!("producer {}", o.producer_id),
                        |id| format!("{} (producer {})", sanitize(id), o.producer_id),
                    );
                    let more = if p.open.len() > 1 {
                        format!(" and {} more", p.open.len() - 1)
                    } else {
                        String::new()
                    };
                    format!("{who} from {}{more}", o.first_offset)
                },
            );
            t.add_row(vec![
                sanitize(&format!("{}-{}", p.topic, p.partition)).into_owned(),
                format!("broker {} ({})", p.broker, reference_words(p.reference)),
                p.log_start_offset.to_string(),
                format!(
                    "{} ({})",
                    p.last_stable_offset,
                    p.lso_bound.replace('-', " ")
                ),
                p.high_watermark
                    .map_or_else(|| "?".to_string(), |h| h.to_string()),
                p.log_end_offset.to_string(),
                p.committed.to_string(),
                p.aborted.to_string(),
                p.open.len().to_string(),
                held,
            ]);
        }
        writeln!(w, "{t}")?;
    }
    let quiet = r.partitions.len() - with_txn.len();
    if quiet > 0 {
        writeln!(
            w,
            "{} no transactional data (the last stable offset is the high watermark).",
            if quiet == 1 {
                "1 more partition holds".to_string()
            } else {
                format!("{quiet} more partitions hold")
            }
        )?;
    }
    if r.odd_markers_total > 0 {
        writeln!(w)?;
        writeln!(
            w,
            "{}",
            paint(
                color,
                &format!(
                    "{} whose epoch is neither its data's nor one more:",
                    counted(r.odd_markers_total, "marker")
                ),
                Paint::Warn
            )
        )?;
        for m in r.odd_markers.iter().take(ODD_ROWS) {
            writeln!(w, "  {}", odd(m))?;
        }
        let shown = r.odd_markers.len().min(ODD_ROWS) as u64;
        if r.odd_markers_total > shown {
            writeln!(w, "  {} more", r.odd_markers_total - shown)?;
        }
    }
    Ok(())
}

fn odd(m: &OddMarker) -> String {
    format!(
        "{}-{} offset {}: {} of producer {} at epoch {}, its data at epoch {}",
        sanitize(&m.topic),
        m.partition,
        m.offset,
        m.marker,
        m.producer_id,
        m.marker_epoch,
        m.data_epoch
    )
}
