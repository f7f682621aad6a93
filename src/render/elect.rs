//! `klf elect` output: the wire document and the tables.

use std::io::Write;

use serde::Serialize;

use crate::render::text::Utc;

use crate::engine::elect::{commands, PartitionElection};
use crate::render::style::{cell, paint, Look, Paint, Sheet};
use crate::render::text::{sanitize, JsonSafe};

#[derive(Serialize)]
struct Loss {
    records: u64,
    committed_proven: u64,
    committed_possible: Option<u64>,
    committed_unknown: u64,
}

#[derive(Serialize)]
struct Cut {
    broker: i32,
    truncation_offset: i64,
    records_to_truncate: i64,
    records_only_here: i64,
}

#[derive(Serialize)]
struct Candidate<'a> {
    broker: i32,
    rank: usize,
    loss: Loss,
    cuts: Vec<Cut>,
    hanging_transactions: usize,
    groups_affected: usize,
    kafka_would_pick: bool,
    reason: &'a str,
}

#[derive(Serialize)]
struct Partition<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    topic: &'a str,
    partition: i32,
    assignment: &'a [i32],
    isr: &'a Option<Vec<i32>>,
    elr: &'a Option<Vec<i32>>,
    kafka_rule: &'a str,
    candidates: Vec<Candidate<'a>>,
    commands: Vec<String>,
}

#[derive(Serialize)]
struct Document<'a> {
    partitions: Vec<Utc<Partition<'a>>>,
}

fn wire<'a>(p: &'a PartitionElection, kind: Option<&'static str>) -> Partition<'a> {
    Partition {
        kind,
        topic: &p.topic,
        partition: p.partition,
        assignment: &p.assignment,
        isr: &p.isr,
        elr: &p.elr,
        kafka_rule: &p.kafka_rule,
        candidates: p
            .candidates
            .iter()
            .map(|c| Candidate {
                broker: c.broker,
                rank: c.rank,
                loss: Loss {
                    records: c.result.loss.records,
                    committed_proven: c.result.loss.committed_proven,
                    committed_possible: c.result.loss.committed_possible,
                    committed_unknown: c.result.loss.committed_unknown,
                },
                cuts: c
                    .result
                    .diff
                    .replicas
                    .iter()
                    .filter(|r| r.broker != c.broker)
                    .map(|r| Cut {
                        broker: r.broker,
                        truncation_offset: r.truncation_offset,
                        records_to_truncate: r.records_to_truncate,
                        records_only_here: r.records_only_here,
                    })
                    .collect(),
                hanging_transactions: c.hanging_transactions(),
                groups_affected: c.groups_affected(),
                kafka_would_pick: c.kafka_would_pick,
                reason: &c.reason,
            })
            .collect(),
        commands: p
            .candidates
            .first()
            .map_or_else(Vec::new, |c| commands(p, c.broker)),
    }
}

/// Writes the elections as one JSON document, or as JSON Lines.
pub fn write_json(
    parts: &[PartitionElection],
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let w = &mut JsonSafe(w);
    if lines {
        for p in parts {
            crate::render::text::write_value(&mut *w, false, &wire(p, Some("partition")))
                .map_err(std::io::Error::from)?;
            writeln!(w)?;
        }
        return Ok(());
    }
    let doc = Document {
        partitions: parts.iter().map(|p| Utc(wire(p, None))).collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(std::io::Error::from)?;
    writeln!(w)
}

/// Writes the elections as tables.
pub fn write_table(
    parts: &[PartitionElection],
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    for p in parts {
        writeln!(
            w,
            "{}-{}: replicas {:?}, ISR {}, ELR {}",
            sanitize(&p.topic),
            p.partition,
            p.assignment,
            p.isr
                .as_ref()
                .map_or("unknown".into(), |i| format!("{i:?}")),
            p.elr.as_ref().map_or("none".into(), |i| format!("{i:?}")),
        )?;
        let mut t = Sheet::new(look);
        t.set_header([
            "rank",
            "candidate",
            "records lost",
            "proven",
            "possibly",
            "hanging txns",
            "groups affected",
            "Kafka picks",
            "reason",
        ]);
        for c in &p.candidates {
            let l = &c.result.loss;
            let bad = (l.committed_possible.unwrap_or(l.records) > 0).then_some(Paint::Bad);
            t.add_row(vec![
                cell(color, c.rank.to_string(), None),
                cell(color, c.broker.to_string(), None),
                cell(color, l.records.to_string(), bad),
                cell(color, l.committed_proven.to_string(), None),
                cell(
                    color,
                    l.committed_possible.map_or("-".into(), |v| v.to_string()),
                    None,
                ),
                cell(color, c.hanging_transactions().to_string(), None),
                cell(color, c.groups_affected().to_string(), None),
                cell(color, if c.kafka_would_pick { "yes" } else { "" }, None),
                cell(color, sanitize(&c.reason).into_owned(), None),
            ]);
        }
        writeln!(w, "{t}")?;
        writeln!(w, "Kafka's rule: {}", sanitize(&p.kafka_rule))?;
        if let Some(c) = p.candidates.first() {
            let cmds = commands(p, c.broker);
            if !cmds.is_empty() {
                writeln!(
                    w,
                    "{}",
                    paint(
                        color,
                        &format!("To elect broker {} (printed, never run):", c.broker),
                        Paint::Warn
                    )
                )?;
                for cmd in cmds {
                    writeln!(w, "  {cmd}")?;
                }
            }
        }
        writeln!(w)?;
    }
    Ok(())
}
