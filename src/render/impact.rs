//! `klf impact` output: the wire document (`{"partitions": [...]}`, or one
//! `{"type": "partition", ...}` line per partition) and the tables.

use std::io::Write;

use serde::Serialize;

use crate::render::json;

use crate::model::impact::{
    DeliveryState, GroupState, PartitionImpact, ShareGroupImpact, ShareGroupState, ShareLost,
    TxnOutcome,
};
use crate::render::overview::{folded, Overview};
use crate::render::style::{cell, paint, Look, Paint, Sheet};
use crate::render::text::sanitize;

/// One partition on the wire (`docs/json.md`, `klf impact`).
#[derive(Serialize)]
struct Partition<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    topic: &'a str,
    partition: i32,
    leader: i32,
    log_start_offset: i64,
    new_log_end: i64,
    first_lost_offset: Option<i64>,
    records_lost: u64,
    last_stable_offset: Option<i64>,
    groups: Vec<Group<'a>>,
    groups_unknown: Option<&'a str>,
    share_groups: Vec<ShareGroup<'a>>,
    share_groups_unknown: Option<&'a str>,
    transactions: Vec<Txn<'a>>,
    transactions_unknown: Option<&'a str>,
    producers: Vec<Producer<'a>>,
    producers_unknown: Option<&'a str>,
    config: Vec<Config<'a>>,
    affected: Option<bool>,
}

/// A value under each `auto.offset.reset`.
#[derive(Serialize)]
struct PerReset<T> {
    earliest: T,
    latest: T,
    none: T,
}

impl<T: Copy> From<&crate::model::impact::PerReset<T>> for PerReset<T> {
    fn from(p: &crate::model::impact::PerReset<T>) -> Self {
        PerReset {
            earliest: p.earliest,
            latest: p.latest,
            none: p.none,
        }
    }
}

#[derive(Serialize)]
struct Range {
    start: i64,
    end: i64,
}

#[derive(Serialize)]
struct Group<'a> {
    group: &'a str,
    protocol: Option<&'a str>,
    committed_offset: Option<i64>,
    committed_leader_epoch: Option<i32>,
    #[serde(serialize_with = "crate::model::time::millis")]
    commit_timestamp: Option<i64>,
    coordinator_broker: i32,
    state: GroupState,
    divergence_offset: Option<i64>,
    next_fetch_offset: PerReset<Option<i64>>,
    error: PerReset<Option<&'static str>>,
    records_skipped: PerReset<Option<u64>>,
    records_reread: PerReset<Option<u64>>,
    phantom_records: u64,
    phantom_offsets: Vec<Range>,
    #[serde(serialize_with = "crate::model::time::millis")]
    phantom_first_timestamp: Option<i64>,
    #[serde(serialize_with = "crate::model::time::millis")]
    phantom_last_timestamp: Option<i64>,
    detail: &'a str,
}

#[derive(Serialize)]
struct Batch {
    first_offset: i64,
    last_offset: i64,
    state: DeliveryState,
    delivery_state: i8,
    delivery_count: i16,
}

#[derive(Serialize)]
struct ShareGroup<'a> {
    group: &'a str,
    topic_id: &'a str,
    coordinator_broker: i32,
    state_partition: i32,
    state_log_offset: i64,
    state_epoch: Option<i32>,
    leader_epoch: i32,
    start_offset: i64,
    effective_start_offset: Option<i64>,
    next_delivered_offset: Option<i64>,
    delivery_complete_count: Option<i32>,
    lag: Option<i64>,
    state: ShareGroupState,
    lost: &'a ShareLost<u64>,
    lost_offsets: ShareLost<Vec<Range>>,
    records_skipped: u64,
    skipped_offsets: Vec<Range>,
    in_flight: Vec<Batch>,
    detail: &'a str,
}

fn ranges(v: &[(i64, i64)]) -> Vec<Range> {
    v.iter().map(|&(start, end)| Range { start, end }).collect()
}

fn share_wire(g: &ShareGroupImpact) -> ShareGroup<'_> {
    let o = &g.lost_offsets;
    ShareGroup {
        group: &g.group,
        topic_id: &g.topic_id,
        coordinator_broker: g.coordinator_broker,
        state_partition: g.state_partition,
        state_log_offset: g.state_log_offset,
        state_epoch: g.state_epoch,
        leader_epoch: g.leader_epoch,
        start_offset: g.start_offset,
        effective_start_offset: g.effective_start_offset,
        next_delivered_offset: g.next_delivered_offset,
        delivery_complete_count: g.delivery_complete_count,
        lag: g.lag,
        state: g.state,
        lost: &g.lost,
        lost_offsets: ShareLost {
            acknowledged: ranges(&o.acknowledged),
            archived: ranges(&o.archived),
            acquired: ranges(&o.acquired),
            available: ranges(&o.available),
            not_delivered: ranges(&o.not_delivered),
            other: ranges(&o.other),
        },
        records_skipped: g.records_skipped,
        skipped_offsets: ranges(&g.skipped_offsets),
        in_flight: g
            .in_flight
            .iter()
            .map(|b| Batch {
                first_offset: b.first_offset,
                last_offset: b.last_offset,
                state: b.state,
                delivery_state: b.state_id,
                delivery_count: b.delivery_count,
            })
            .collect(),
        detail: &g.detail,
    }
}

#[derive(Serialize)]
struct Txn<'a> {
    producer_id: i64,
    producer_epoch: i16,
    transactional_id: Option<&'a str>,
    first_offset: i64,
    state: TxnOutcome,
    lso: Option<i64>,
    marker_cut: Option<&'static str>,
    marker_cut_offset: Option<i64>,
    coordinator_state: Option<&'a str>,
    records: u64,
    abort_hides_committed: bool,
    remedy: Option<&'a str>,
    detail: &'a str,
}

#[derive(Serialize)]
struct Producer<'a> {
    producer_id: i64,
    producer_epoch: i16,
    transactional: bool,
    last_sequence_kept: Option<i32>,
    last_sequence_cut: i32,
    records_lost: u64,
    expected_error: Option<&'static str>,
    state: &'static str,
    detail: &'a str,
}

#[derive(Serialize)]
struct Config<'a> {
    name: &'a str,
    value: Option<&'a str>,
    source: &'static str,
    metadata_offset: Option<i64>,
    effect: &'a str,
}

fn wire<'a>(p: &'a PartitionImpact, kind: Option<&'static str>) -> Partition<'a> {
    Partition {
        kind,
        topic: &p.topic,
        partition: p.partition,
        leader: p.leader,
        log_start_offset: p.log_start_offset,
        new_log_end: p.new_log_end,
        first_lost_offset: p.first_lost_offset,
        records_lost: p.records_lost,
        last_stable_offset: p.last_stable_offset,
        groups: p
            .groups
            .iter()
            .map(|g| Group {
                group: &g.group,
                protocol: g.protocol.as_deref(),
                committed_offset: g.committed_offset,
                committed_leader_epoch: g.committed_leader_epoch,
                commit_timestamp: g.commit_timestamp,
                coordinator_broker: g.coordinator_broker,
                state: g.state,
                divergence_offset: g.divergence_offset,
                next_fetch_offset: (&g.next_fetch_offset).into(),
                error: (&g.error).into(),
                records_skipped: (&g.records_skipped).into(),
                records_reread: (&g.records_reread).into(),
                phantom_records: g.phantom_records,
                phantom_offsets: g
                    .phantom_offsets
                    .iter()
                    .map(|&(start, end)| Range { start, end })
                    .collect(),
                phantom_first_timestamp: g.phantom_first_timestamp,
                phantom_last_timestamp: g.phantom_last_timestamp,
                detail: &g.detail,
            })
            .collect(),
        groups_unknown: p.groups_unknown.as_deref(),
        share_groups: p.share_groups.iter().map(share_wire).collect(),
        share_groups_unknown: p.share_groups_unknown.as_deref(),
        transactions: p
            .transactions
            .iter()
            .map(|t| Txn {
                producer_id: t.producer_id,
                producer_epoch: t.producer_epoch,
                transactional_id: t.transactional_id.as_deref(),
                first_offset: t.first_offset,
                state: t.state,
                lso: t.lso,
                marker_cut: t.marker_cut,
                marker_cut_offset: t.marker_cut_offset,
                coordinator_state: t.coordinator_state.as_deref(),
                records: t.records,
                abort_hides_committed: t.abort_hides_committed,
                remedy: t.remedy.as_deref(),
                detail: &t.detail,
            })
            .collect(),
        transactions_unknown: p.transactions_unknown.as_deref(),
        producers: p
            .producers
            .iter()
            .map(|x| Producer {
                producer_id: x.producer_id,
                producer_epoch: x.producer_epoch,
                transactional: x.transactional,
                last_sequence_kept: x.last_sequence_kept,
                last_sequence_cut: x.last_sequence_cut,
                records_lost: x.records_lost,
                expected_error: x.expected_error,
                state: x.state,
                detail: &x.detail,
            })
            .collect(),
        producers_unknown: p.producers_unknown.as_deref(),
        config: p
            .config
            .iter()
            .map(|c| Config {
                name: &c.name,
                value: c.value.as_deref(),
                source: c.source,
                metadata_offset: c.metadata_offset,
                effect: &c.effect,
            })
            .collect(),
        affected: p.affected,
    }
}

#[derive(Serialize)]
struct Document<'a> {
    partitions: Vec<Partition<'a>>,
}

/// Writes the impacts as one JSON document, or as JSON Lines.
pub fn write_json(
    parts: &[PartitionImpact],
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

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

fn fetch(v: Option<i64>, e: Option<&str>) -> String {
    match (v, e) {
        (Some(o), _) => o.to_string(),
        (None, Some(e)) => format!("fails: {e}"),
        (None, None) => "-".into(),
    }
}

/// Writes `klf impact`'s tables: an overview of the whole capture
/// (`overview`, every partition compared), then the partitions that lose
/// records in the order given (worst first), then the partitions that lose
/// nothing (`nothing_lost`, their names) folded into one line, or one line
/// each with `all`.
pub fn write_report(
    overview: &Overview,
    parts: &[&PartitionImpact],
    nothing_lost: &[String],
    all: bool,
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    let compared = overview.compared_words();
    if parts.is_empty() {
        writeln!(
            w,
            "{}",
            paint(
                color,
                &format!(
                    "{compared}: none loses records, so no consumer group, transaction or producer is hurt."
                ),
                Paint::Good
            )
        )?;
    } else {
        let affected = parts.iter().filter(|p| p.affected == Some(true)).count();
        let unknown = parts.iter().filter(|p| p.affected.is_none()).count();
        let n = parts.len();
        let what = "a consumer group, transaction or producer";
        let mut hurt = Vec::new();
        if affected > 0 {
            hurt.push(if n == 1 {
                format!("it hurts {what}")
            } else if affected == 1 {
                format!("1 hurts {what}")
            } else {
                format!("{affected} hurt {what}")
            });
        }
        if unknown > 0 {
            hurt.push(if n == 1 {
                format!("whether it hurts {what} cannot be told")
            } else if affected > 0 {
                format!("for {unknown} more whether one is hurt cannot be told")
            } else {
                format!("for {unknown} of them whether {what} is hurt cannot be told")
            });
        }
        if hurt.is_empty() {
            hurt.push(if n == 1 {
                "it hurts no consumer group, transaction or producer".to_string()
            } else {
                "none hurts a consumer group, transaction or producer".to_string()
            });
        }
        let paint_as = if affected > 0 {
            Paint::Bad
        } else {
            Paint::Warn
        };
        writeln!(
            w,
            "{}",
            paint(
                color,
                &format!(
                    "{compared}, {} records: {}.",
                    if n == 1 {
                        "1 loses".to_string()
                    } else {
                        format!("{n} lose")
                    },
                    hurt.join("; ")
                ),
                paint_as
            )
        )?;
        writeln!(
            w,
            "In all: {}; {}.",
            overview.loss_words(),
            overview.not_captured_words()
        )?;
        writeln!(w)?;
        for p in parts {
            write_partition(p, look, w)?;
        }
    }
    if all {
        for name in nothing_lost {
            writeln!(w, "{}: nothing lost", sanitize(name))?;
        }
    } else if !nothing_lost.is_empty() && !parts.is_empty() {
        writeln!(w, "{}", folded(nothing_lost.len(), "nothing lost"))?;
    }
    Ok(())
}

/// Writes the impacts as tables, one block per partition.
pub fn write_table(
    parts: &[PartitionImpact],
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    if parts.is_empty() {
        writeln!(
            w,
            "{}",
            paint(
                color,
                "No partition loses records: nothing to impact.",
                Paint::Good
            )
        )?;
        return Ok(());
    }
    for p in parts {
        write_partition(p, look, w)?;
    }
    Ok(())
}

/// The share groups of a partition, when it has any (or they cannot be
/// read): nothing at all otherwise.
fn write_share_groups(p: &PartitionImpact, look: Look, w: &mut impl Write) -> std::io::Result<()> {
    let color = look.color;
    if p.share_groups.is_empty() && p.share_groups_unknown.is_none() {
        return Ok(());
    }
    writeln!(w, "Share groups")?;
    if let Some(why) = &p.share_groups_unknown {
        writeln!(w, "  unknown: {}", sanitize(why))?;
        return Ok(());
    }
    let mut t = Sheet::new(look);
    t.set_header([
        "group",
        "start offset",
        "starts at",
        "next given",
        "state",
        "lost: acked",
        "archived",
        "acquired",
        "available",
        "never given",
        "skipped",
        "lag",
    ]);
    for g in &p.share_groups {
        let paint_state = match g.state {
            ShareGroupState::Unaffected => Some(Paint::Good),
            ShareGroupState::Uninitialized | ShareGroupState::Unreadable => None,
            _ => Some(Paint::Bad),
        };
        t.add_row(vec![
            cell(color, sanitize(&g.group).into_owned(), None),
            cell(color, g.start_offset.to_string(), None),
            cell(color, opt(g.effective_start_offset), None),
            cell(color, opt(g.next_delivered_offset), None),
            cell(
                color,
                serde_json::to_value(g.state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                paint_state,
            ),
            cell(color, g.lost.acknowledged.to_string(), None),
            cell(color, g.lost.archived.to_string(), None),
            cell(color, g.lost.acquired.to_string(), None),
            cell(color, g.lost.available.to_string(), None),
            cell(color, g.lost.not_delivered.to_string(), None),
            cell(
                color,
                g.records_skipped.to_string(),
                (g.records_skipped > 0).then_some(Paint::Bad),
            ),
            cell(color, opt(g.lag), None),
        ]);
    }
    writeln!(w, "{t}")?;
    for g in p
        .share_groups
        .iter()
        .filter(|g| g.state != ShareGroupState::Unaffected)
    {
        writeln!(w, "  {}: {}", sanitize(&g.group), sanitize(&g.detail))?;
    }
    Ok(())
}

/// One partition's impact: the headline, then groups, transactions,
/// producers and the settings behind it.
fn write_partition(p: &PartitionImpact, look: Look, w: &mut impl Write) -> std::io::Result<()> {
    let color = look.color;
    let name = sanitize(&format!("{}-{}", p.topic, p.partition)).into_owned();
    let verdict = match p.affected {
            Some(true) => paint(color, "affected", Paint::Bad),
            Some(false) => paint(color, "nothing affected", Paint::Good),
            None => paint(
                color,
                "no affected group, transaction or producer found, but part of the impact is unknown (below)",
                Paint::Warn,
            ),
        };
    writeln!(
            w,
            "{name}: {} records lost from offset {}; new leader {} ends at {}, last stable offset {}: {verdict}",
            p.records_lost,
            opt(p.first_lost_offset),
            p.leader,
            p.new_log_end,
            opt(p.last_stable_offset)
        )?;
    writeln!(w, "Consumer groups")?;
    if let Some(why) = &p.groups_unknown {
        writeln!(w, "  unknown: {}", sanitize(why))?;
    } else if p.groups.is_empty() {
        writeln!(w, "  no group has a commit for this partition")?;
    } else {
        let mut t = Sheet::new(look);
        t.set_header([
            "group",
            "protocol",
            "committed",
            "epoch",
            "state",
            "earliest",
            "latest",
            "none",
            "skipped (latest)",
            "re-read (earliest)",
            "phantom",
        ]);
        for g in &p.groups {
            let paint_state = match g.state {
                GroupState::Unaffected => Some(Paint::Good),
                GroupState::NoOffset | GroupState::Unreadable => None,
                _ => Some(Paint::Bad),
            };
            t.add_row(vec![
                cell(color, sanitize(&g.group).into_owned(), None),
                cell(
                    color,
                    g.protocol.clone().unwrap_or_else(|| "-".into()),
                    None,
                ),
                cell(color, opt(g.committed_offset), None),
                cell(color, opt(g.committed_leader_epoch), None),
                cell(
                    color,
                    serde_json::to_value(g.state)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    paint_state,
                ),
                cell(
                    color,
                    fetch(g.next_fetch_offset.earliest, g.error.earliest),
                    None,
                ),
                cell(
                    color,
                    fetch(g.next_fetch_offset.latest, g.error.latest),
                    None,
                ),
                cell(color, fetch(g.next_fetch_offset.none, g.error.none), None),
                cell(color, opt(g.records_skipped.latest), None),
                cell(color, opt(g.records_reread.earliest), None),
                cell(
                    color,
                    g.phantom_records.to_string(),
                    (g.phantom_records > 0).then_some(Paint::Bad),
                ),
            ]);
        }
        writeln!(w, "{t}")?;
        for g in p
            .groups
            .iter()
            .filter(|g| g.state != GroupState::Unaffected)
        {
            writeln!(w, "  {}: {}", sanitize(&g.group), sanitize(&g.detail))?;
        }
    }
    write_share_groups(p, look, w)?;
    writeln!(w, "Transactions")?;
    if let Some(why) = &p.transactions_unknown {
        writeln!(w, "  note: {}", sanitize(why))?;
    }
    if p.transactions.is_empty() {
        writeln!(w, "  none open on the new leader or lost")?;
    } else {
        let mut t = Sheet::new(look);
        t.set_header([
            "producer id",
            "epoch",
            "transactional id",
            "first offset",
            "state",
            "marker cut",
            "coordinator",
            "LSO",
            "records",
        ]);
        for x in &p.transactions {
            let bad =
                matches!(x.state, TxnOutcome::Hanging | TxnOutcome::Lost).then_some(Paint::Bad);
            t.add_row(vec![
                cell(color, x.producer_id.to_string(), None),
                cell(color, x.producer_epoch.to_string(), None),
                cell(
                    color,
                    sanitize(x.transactional_id.as_deref().unwrap_or("-")).into_owned(),
                    None,
                ),
                cell(color, x.first_offset.to_string(), None),
                cell(
                    color,
                    serde_json::to_value(x.state)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    bad,
                ),
                cell(color, x.marker_cut.unwrap_or("-"), None),
                cell(
                    color,
                    x.coordinator_state.clone().unwrap_or_else(|| "-".into()),
                    None,
                ),
                cell(color, opt(x.lso), None),
                cell(color, x.records.to_string(), None),
            ]);
        }
        writeln!(w, "{t}")?;
        for x in &p.transactions {
            writeln!(w, "  {}", sanitize(&x.detail))?;
            if let Some(r) = &x.remedy {
                writeln!(w, "    remedy: {}", sanitize(r))?;
            }
        }
    }
    writeln!(w, "Producers")?;
    if let Some(why) = &p.producers_unknown {
        writeln!(w, "  unknown: {}", sanitize(why))?;
    } else if p.producers.is_empty() {
        writeln!(w, "  no idempotent or transactional producer loses records")?;
    } else {
        let mut t = Sheet::new(look);
        t.set_header([
            "producer id",
            "epoch",
            "last seq kept",
            "last seq cut",
            "records lost",
            "state",
            "next batch gets",
        ]);
        for x in &p.producers {
            t.add_row(vec![
                cell(color, x.producer_id.to_string(), None),
                cell(color, x.producer_epoch.to_string(), None),
                cell(color, opt(x.last_sequence_kept), None),
                cell(color, x.last_sequence_cut.to_string(), None),
                cell(color, x.records_lost.to_string(), None),
                cell(color, x.state, Some(Paint::Warn)),
                cell(color, x.expected_error.unwrap_or("accepted"), None),
            ]);
        }
        writeln!(w, "{t}")?;
        for x in &p.producers {
            writeln!(w, "  {}", sanitize(&x.detail))?;
        }
    }
    writeln!(w, "Why it could happen")?;
    for c in &p.config {
        let at = c
            .metadata_offset
            .map_or(String::new(), |o| format!(" (metadata offset {o})"));
        match &c.value {
            Some(v) => writeln!(
                w,
                "  {} = {} [{}{at}]: {}",
                c.name,
                sanitize(v),
                c.source,
                sanitize(&c.effect)
            )?,
            // not in the metadata log: the effect says why, once
            None => writeln!(
                w,
                "  {}: unknown: {}",
                c.name,
                sanitize(c.effect.strip_prefix("unknown: ").unwrap_or(&c.effect))
            )?,
        }
    }
    writeln!(w)?;
    Ok(())
}
