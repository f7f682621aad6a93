//! `klf elect` output: the wire document and the tables.

use std::io::Write;

use serde::Serialize;

use crate::render::json;

use crate::format::names::is_legal_topic_name;
use crate::model::elect::{Candidate as Ranked, PartitionElection};
use crate::render::overview::{count, folded, partition_loss_words, Overview};
use crate::render::style::{cell, paint, Look, Paint, Sheet};
use crate::render::text::sanitize;

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
struct Candidate {
    broker: i32,
    rank: usize,
    loss: Loss,
    cuts: Vec<Cut>,
    hanging_transactions: usize,
    groups_affected: usize,
    kafka_would_pick: bool,
    reason: String,
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
    candidates: Vec<Candidate>,
    commands: &'a [String],
    check_first: Option<String>,
}

#[derive(Serialize)]
struct Document<'a> {
    partitions: Vec<Partition<'a>>,
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
                    records: c.loss.records,
                    committed_proven: c.loss.committed_proven,
                    committed_possible: c.loss.committed_possible,
                    committed_unknown: c.loss.committed_unknown,
                },
                cuts: c
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
                reason: reason(c),
            })
            .collect(),
        commands: &p.commands,
        check_first: check_first(p),
    }
}

/// What to check before electing, when the capture cannot tell who leads
/// now (`None` when it can).
fn check_first(p: &PartitionElection) -> Option<String> {
    p.leader_unknown.as_ref()?;
    let topic = if is_legal_topic_name(&p.topic) {
        p.topic.as_str()
    } else {
        "TOPIC"
    };
    let best = p.candidates.first().map(|c| c.broker);
    Some(format!(
        "who leads {t}-{p} now cannot be told from the capture, so no command is printed. \
Check its leader and ISR first: kafka-topics.sh --bootstrap-server BROKER --describe --topic {topic} \
(or in ZooKeeper: get /brokers/topics/{topic}/partitions/{p}/state). If it has a leader, or a \
replica of its ISR can be started again, no unclean election is needed{rest}",
        t = p.topic,
        p = p.partition,
        rest = match best {
            Some(b) if p.any_loss() => format!("; if not, broker {b} loses least (rank 1)"),
            _ => String::new(),
        }
    ))
}

/// Why a candidate ranks where it does: its loss in words, and whom it
/// hurts.
fn reason(c: &Ranked) -> String {
    let mut hurt = Vec::new();
    match c.hanging_transactions() {
        0 => {}
        t => hurt.push(format!(
            "{} left hanging",
            count(t as u64, "transaction", "transactions")
        )),
    }
    match c.groups_affected() {
        0 => {}
        g => hurt.push(format!(
            "{} affected",
            count(g as u64, "consumer group", "consumer groups")
        )),
    }
    format!(
        "{}{}{}",
        if c.least_loss { "least loss: " } else { "" },
        partition_loss_words(&c.loss),
        if hurt.is_empty() {
            String::new()
        } else {
            format!("; {}", hurt.join(", "))
        }
    )
}

/// Writes the elections as one JSON document, or as JSON Lines.
pub fn write_json(
    parts: &[PartitionElection],
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    if lines {
        for p in parts {
            json::line(w, &wire(p, Some("partition")))?;
        }
        return Ok(());
    }
    json::document(
        w,
        &Document {
            partitions: parts.iter().map(|p| wire(p, None)).collect(),
        },
    )
}

/// How bad a partition's election is, worst first: what the first-ranked
/// candidate loses (committed, then every record), then what the worst
/// candidate would.
fn severity(p: &PartitionElection) -> impl Ord {
    let of = |c: &Ranked| {
        let l = &c.loss;
        (l.possibly_committed_or_unknown(), l.records)
    };
    let best = p.candidates.first().map(of).unwrap_or_default();
    let worst = p.candidates.iter().map(of).max().unwrap_or_default();
    std::cmp::Reverse((best, worst))
}

/// Writes the elections as tables: an overview of the whole capture, then
/// the partitions where the choice of leader loses data, worst first; the
/// others fold into one line unless `all`.
pub fn write_table(
    parts: &[PartitionElection],
    all: bool,
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    let mut overview = Overview::new();
    for p in parts {
        if let Some(c) = p.candidates.first() {
            overview.add(
                &format!("{}-{}", p.topic, p.partition),
                &c.loss,
                p.leader_unknown.is_none(),
            );
        }
    }
    let always = parts
        .iter()
        .filter(|p| p.candidates.first().is_some_and(|c| c.loss.any()))
        .count();
    let some = parts.iter().filter(|p| p.any_loss()).count() - always;
    let compared = overview.compared_words();
    if always + some == 0 {
        writeln!(
            w,
            "{}",
            paint(
                color,
                &format!("{compared}: whichever captured replica leads, nothing is lost."),
                Paint::Good
            )
        )?;
    } else {
        let partitions = |n: usize| {
            if n == 1 && overview.compared == 1 {
                "it loses".to_string()
            } else if n == 1 {
                "1 partition loses".to_string()
            } else {
                format!("{n} partitions lose")
            }
        };
        let mut said = Vec::new();
        if always > 0 {
            said.push(format!(
                "{} data whichever replica leads",
                partitions(always)
            ));
        }
        if some > 0 {
            said.push(format!(
                "{} data unless a least-loss replica leads",
                partitions(some)
            ));
        }
        // what needs doing: a leaderless partition needs an election; one
        // whose leader the capture cannot tell needs a look first
        let lossy = parts.iter().filter(|p| p.any_loss());
        let leaderless = lossy
            .clone()
            .filter(|p| p.leader.is_none() && p.leader_unknown.is_none())
            .count();
        let unknown = lossy.filter(|p| p.leader_unknown.is_some()).count();
        let one = always + some == 1;
        if leaderless > 0 {
            said.push(if one {
                "it has no leader".to_string()
            } else if leaderless == 1 {
                "1 of them has no leader".to_string()
            } else {
                format!("{leaderless} of them have no leader")
            });
        }
        if unknown > 0 {
            said.push(if one {
                "who leads it now cannot be told (no metadata log)".to_string()
            } else if unknown == always + some {
                format!("for all {unknown}, who leads now cannot be told (no metadata log)")
            } else {
                format!("for {unknown} of them, who leads now cannot be told (no metadata log)")
            });
        }
        let mut line = format!("{compared}: {}", said.join("; "));
        line.push('.');
        writeln!(w, "{}", paint(color, &line, Paint::Bad))?;
        writeln!(
            w,
            "With the first-ranked replica of each leading: {}; {}.",
            overview.loss_words(),
            overview.not_captured_words()
        )?;
    }
    let mut shown: Vec<&PartitionElection> = parts.iter().filter(|p| all || p.any_loss()).collect();
    shown.sort_by_key(|p| severity(p));
    for p in &shown {
        writeln!(w)?;
        write_partition(p, look, w)?;
    }
    let folded_n = parts.len() - shown.len();
    if folded_n > 0 && always + some > 0 {
        writeln!(w)?;
        writeln!(
            w,
            "{}",
            folded(folded_n, "nothing lost whichever replica leads")
        )?;
    }
    Ok(())
}

/// One partition: who leads, its candidates ranked, and what to do.
fn write_partition(p: &PartitionElection, look: Look, w: &mut impl Write) -> std::io::Result<()> {
    let color = look.color;
    let name = sanitize(&format!("{}-{}", p.topic, p.partition)).into_owned();
    let list = |v: &Option<Vec<i32>>| v.as_ref().map_or("none".into(), |i| format!("{i:?}"));
    if p.leader_unknown.is_some() {
        writeln!(
            w,
            "{name}: captured replicas {:?}; leader, ISR and ELR unknown (no metadata log)",
            p.assignment
        )?;
    } else {
        writeln!(
            w,
            "{name}: replicas {:?}, ISR {}, ELR {}; {}",
            p.assignment,
            list(&p.isr),
            list(&p.elr),
            p.leader
                .map_or("no leader".to_string(), |l| format!("broker {l} leads"))
        )?;
    }
    let mut t = Sheet::new(look);
    t.title(2);
    t.set_header([
        "rank",
        "broker",
        "records lost",
        "proven",
        "possibly",
        "hanging txns",
        "groups affected",
        "Kafka",
    ]);
    // in blocks, a zero count says nothing the overview does not
    let n = |v: usize| {
        if v == 0 && look.list() {
            String::new()
        } else {
            v.to_string()
        }
    };
    let kafka = if p.leader.is_some() {
        "leads now"
    } else {
        "would pick"
    };
    for c in &p.candidates {
        let l = &c.loss;
        let bad = (l.possibly_committed_or_unknown() > 0).then_some(Paint::Bad);
        t.add_row(vec![
            cell(color, c.rank.to_string(), None),
            cell(color, c.broker.to_string(), None),
            cell(color, l.records.to_string(), bad),
            cell(color, l.committed_proven.to_string(), None),
            cell(
                color,
                l.committed_possible
                    .map_or("unknown".into(), |v| v.to_string()),
                None,
            ),
            cell(color, n(c.hanging_transactions()), None),
            cell(color, n(c.groups_affected()), None),
            cell(color, if c.kafka_would_pick { kafka } else { "" }, None),
        ]);
    }
    write!(w, "{t}")?;
    if !t.as_list() {
        writeln!(w)?;
    }
    let Some(best) = p.candidates.first() else {
        return Ok(());
    };
    let ties: Vec<String> = p
        .candidates
        .iter()
        .skip(1)
        .filter(|c| c.least_loss)
        .map(|c| c.broker.to_string())
        .collect();
    writeln!(
        w,
        "{}",
        paint(
            color,
            &format!(
                "Least loss: broker {}{}: {}.",
                best.broker,
                match ties.as_slice() {
                    [] => String::new(),
                    [one] => format!(" (as little with broker {one})"),
                    [first @ .., last] => {
                        format!(" (as little with brokers {} and {last})", first.join(", "))
                    }
                },
                partition_loss_words(&best.loss)
            ),
            if best.loss.possibly_committed_or_unknown() > 0 {
                Paint::Warn
            } else {
                Paint::Good
            }
        )
    )?;
    let pick = p.candidates.iter().find(|c| c.kafka_would_pick);
    match (p.leader, pick) {
        (Some(l), Some(c)) => {
            let since = p.leader_since.map_or(String::new(), |(e, m)| {
                format!(" (leader epoch {e}, metadata offset {m})")
            });
            writeln!(
                w,
                "Leads now: broker {l}{since}: {}; no election to make.",
                partition_loss_words(&c.loss)
            )?;
        }
        (Some(l), None) => writeln!(
            w,
            "Leads now: broker {l}, not captured; no election to make."
        )?,
        (None, Some(c)) => writeln!(
            w,
            "Kafka would pick broker {}: {}.",
            c.broker,
            partition_loss_words(&c.loss)
        )?,
        (None, None) => {}
    }
    if p.leader.is_none() && p.leader_unknown.is_none() {
        writeln!(w, "Kafka's rule: {}", sanitize(&p.kafka_rule))?;
    }
    if let Some(check) = check_first(p) {
        writeln!(
            w,
            "{} {}.",
            paint(color, "Before electing:", Paint::Warn),
            sanitize(&check)
        )?;
    }
    let cmds = &p.commands;
    if !cmds.is_empty() {
        writeln!(
            w,
            "{}",
            paint(
                color,
                &format!("To elect broker {} (printed, never run):", best.broker),
                Paint::Warn
            )
        )?;
        for cmd in cmds {
            writeln!(w, "  {cmd}")?;
        }
    }
    Ok(())
}
