//! `klf timeline` output: the tables, and the JSON wire types (the schema
//! of `--format json` and `jsonl`).

use std::io::Write;

use serde::Serialize;

use crate::render::json;

use crate::format::text::human_time;
use crate::model::history::QuorumChangeKind;
use crate::model::timeline::{
    Disagreement, EntrySource, EpochSpan, IncidentEntry, IsrChange, IsrVerdict, NodeZone,
    PartitionIncident, PartitionTimelines, QuorumEventKind, QuorumHistory, Timeline, ZoneSource,
};
use crate::model::Election;
use crate::render::style::{cell, paint, Look, Paint, Sheet};
use crate::render::text::sanitize;

/// `{"partitions": [...]}`.
#[derive(Serialize)]
pub struct TimelineDocument<'a> {
    /// One per partition.
    pub partitions: Vec<TimelinePartition<'a>>,
}

/// One partition.
#[derive(Serialize)]
pub struct TimelinePartition<'a> {
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// One per replica.
    pub replicas: Vec<ReplicaTimeline<'a>>,
    /// The controller's view from the metadata log; `null` without one.
    pub controller: Option<Controller<'a>>,
    /// Without it, why (who led each epoch, the ISR and the elections are
    /// then not in the capture); `null` with one.
    pub controller_missing: Option<&'a str>,
    /// The KRaft quorum's history: for `__cluster_metadata-0` only, `null`
    /// for every other partition.
    pub quorum: Option<&'a QuorumHistory>,
}

/// The quorum's history as a `jsonl` line: `"type": "quorum"`, the topic
/// and the partition first.
#[derive(Serialize)]
pub struct QuorumLine<'a> {
    /// `"quorum"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// The history.
    #[serde(flatten)]
    pub history: &'a QuorumHistory,
}

/// One replica's timeline (a `jsonl` line has `"type": "replica"`, the
/// topic and the partition first).
#[derive(Serialize)]
pub struct ReplicaTimeline<'a> {
    /// `"replica"` in `jsonl`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Topic (`jsonl` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<&'a str>,
    /// Partition (`jsonl` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// Broker id.
    pub broker: i32,
    /// Epoch spans from the batch headers.
    pub from_batches: &'a [EpochSpan],
    /// `[epoch, start_offset]` entries of `leader-epoch-checkpoint`; `null`
    /// when missing or unreadable.
    pub checkpoint: Option<&'a [(i32, i64)]>,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// High watermark.
    pub high_watermark: Option<i64>,
    /// Recovery point.
    pub recovery_point: Option<i64>,
    /// Disagreements between batches and checkpoint.
    pub disagreements: Vec<DisagreementOut<'a>>,
}

/// One disagreement.
#[derive(Serialize)]
pub struct DisagreementOut<'a> {
    /// The code.
    pub code: &'static str,
    /// The epoch concerned; `null` when none.
    pub epoch: Option<i32>,
    /// In words.
    pub message: &'a str,
}

/// The controller's view (a `jsonl` line has `"type": "controller"`, the
/// topic and the partition first).
#[derive(Serialize)]
pub struct Controller<'a> {
    /// `"controller"` in `jsonl`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// Topic (`jsonl` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<&'a str>,
    /// Partition (`jsonl` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// Assigned replicas.
    pub replicas: &'a [i32],
    /// Whether the history starts at the partition's creation.
    pub from_creation: bool,
    /// Every PartitionRecord and PartitionChangeRecord, in log order.
    pub changes: &'a [Election],
}

fn replica<'a>(t: &'a Timeline, line: Option<(&'a str, i32)>) -> ReplicaTimeline<'a> {
    ReplicaTimeline {
        kind: line.map(|_| "replica"),
        topic: line.map(|l| l.0),
        partition: line.map(|l| l.1),
        broker: t.broker,
        from_batches: &t.from_batches,
        checkpoint: t.checkpoint.as_deref(),
        log_start_offset: t.log_start_offset,
        log_end_offset: t.log_end_offset,
        high_watermark: t.high_watermark,
        recovery_point: t.recovery_point,
        disagreements: t.disagreements.iter().map(disagreement).collect(),
    }
}

fn disagreement(d: &Disagreement) -> DisagreementOut<'_> {
    DisagreementOut {
        code: d.code,
        epoch: d.epoch,
        message: &d.message,
    }
}

fn controller(p: &PartitionTimelines, line: bool) -> Option<Controller<'_>> {
    p.controller.as_ref().map(|h| Controller {
        kind: line.then_some("controller"),
        topic: line.then_some(p.topic.as_str()),
        partition: line.then_some(p.partition),
        replicas: &h.replicas,
        from_creation: h.from_creation,
        changes: &h.changes,
    })
}

/// `--format json` (one pretty document) or `jsonl` (per partition, its
/// controller's view, then a line per replica).
pub fn write_json(
    parts: &[PartitionTimelines],
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    if lines {
        for p in parts {
            if let Some(c) = controller(p, true) {
                json::line(w, &c)?;
            }
            if let Some(q) = &p.quorum {
                json::line(
                    w,
                    &QuorumLine {
                        kind: "quorum",
                        topic: &p.topic,
                        partition: p.partition,
                        history: q,
                    },
                )?;
            }
            for t in &p.replicas {
                json::line(w, &replica(t, Some((&p.topic, p.partition))))?;
            }
        }
        return Ok(());
    }
    json::document(
        w,
        &TimelineDocument {
            partitions: parts
                .iter()
                .map(|p| TimelinePartition {
                    topic: &p.topic,
                    partition: p.partition,
                    replicas: p.replicas.iter().map(|t| replica(t, None)).collect(),
                    controller: controller(p, false),
                    controller_missing: p.controller_missing.as_deref(),
                    quorum: p.quorum.as_ref(),
                })
                .collect(),
        },
    )
}

/// A list of node ids as the tables write them: `[100, 101]`, `-` when
/// there is none.
fn ids(v: &[i32]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        format!("{v:?}")
    }
}

/// What a quorum event is, in words.
fn quorum_event_words(e: &crate::model::timeline::QuorumEvent) -> String {
    let leader = e.change.leader.map_or("-".into(), |l| l.to_string());
    let prev = e.previous_leader.map_or("-".into(), |l| l.to_string());
    let signed =
        |sign: char, v: &[i32]| -> Vec<String> { v.iter().map(|n| format!("{sign}{n}")).collect() };
    match e.event {
        QuorumEventKind::Elected => format!("controller {leader} elected"),
        QuorumEventKind::Failover => format!("failover: controller {prev} -> {leader}"),
        QuorumEventKind::Reelected => format!("controller {leader} elected again"),
        QuorumEventKind::Voters => "voter set".into(),
        QuorumEventKind::VotersChanged => {
            let mut parts = signed('+', &e.added);
            parts.extend(signed('-', &e.removed));
            format!("voters changed: {}", parts.join(" "))
        }
        QuorumEventKind::VotersRewritten => "voter set written again, unchanged".into(),
    }
}

/// The quorum's history table, then each node's `quorum-state`.
fn write_quorum(
    topic: &str,
    partition: i32,
    q: &QuorumHistory,
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    let source = q
        .source
        .as_ref()
        .map_or("no metadata log read".into(), |s| {
            sanitize(&s.display().to_string()).into_owned()
        });
    if q.changes.is_empty() {
        writeln!(
            w,
            "{}-{partition}: quorum history: no controller election or voter set in the metadata log read ({source})",
            sanitize(topic)
        )?;
    } else {
        let kinds = |k: QuorumChangeKind, one: &str, many: &str| {
            let n = q.changes.iter().filter(|e| e.change.kind == k).count();
            crate::format::text::count(n as u64, one, many)
        };
        writeln!(
            w,
            "{}-{partition}: quorum history ({}, {}; from {source})",
            sanitize(topic),
            kinds(
                QuorumChangeKind::LeaderChange,
                "controller election",
                "controller elections"
            ),
            kinds(QuorumChangeKind::Voters, "voter set", "voter sets"),
        )?;
        let mut t = Sheet::new(look);
        t.set_header(vec![
            "metadata offset",
            "quorum epoch",
            "event",
            "voters",
            "granting voters",
            "time (UTC, epoch ms)",
        ]);
        for e in &q.changes {
            t.add_row(vec![
                cell(color, e.change.metadata_offset.to_string(), None),
                cell(color, e.change.epoch.to_string(), None),
                cell(
                    color,
                    quorum_event_words(e),
                    (e.event == QuorumEventKind::Failover).then_some(Paint::Warn),
                ),
                cell(color, ids(&e.change.voters), None),
                cell(color, ids(&e.change.granting_voters), None),
                cell(color, human_time(e.change.timestamp), None),
            ]);
        }
        writeln!(w, "{t}")?;
    }
    for s in &q.states {
        let node = s.node.map_or("a node".into(), |n| format!("node {n}"));
        let file = sanitize(&s.file.display().to_string()).into_owned();
        match &s.problem {
            Some(why) => writeln!(
                w,
                "  quorum-state of {node}: not read: {} ({file})",
                sanitize(why)
            )?,
            None => writeln!(
                w,
                "  quorum-state of {node}: leader {}, epoch {}, voted for {}, voters {}",
                s.leader.map_or("none".into(), |l| l.to_string()),
                s.leader_epoch.map_or("-".into(), |l| l.to_string()),
                s.voted_for.map_or("none".into(), |l| l.to_string()),
                s.voters
                    .as_deref()
                    .map_or("not in the file (kept in the log)".into(), ids),
            )?,
        }
    }
    Ok(())
}

/// Rows a replica's table gives to checkpoint epochs no batch carries; the
/// rest are counted under it.
pub const CHECKPOINT_ROWS: usize = 20;

/// The tables of `klf timeline`: the controller's view, then per replica
/// its epochs from the batches (each a half-open range `[start, end)` of
/// offsets, the last ending at the log end) beside the checkpoint, and the
/// disagreements.
pub fn write_table(
    parts: &[PartitionTimelines],
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    for p in parts {
        if let Some(h) = &p.controller {
            writeln!(
                w,
                "{}-{}: controller's view (metadata log), replicas {:?}",
                sanitize(&p.topic),
                p.partition,
                h.replicas
            )?;
            let mut t = Sheet::new(look);
            t.set_header(vec![
                "metadata offset",
                "leader",
                "leader epoch",
                "ISR",
                "recovery",
                "note",
                "time (UTC, epoch ms)",
            ]);
            for e in &h.changes {
                let note = if e.unclean {
                    "UNCLEAN election"
                } else if e.leader_changed {
                    "leader elected"
                } else {
                    "ISR change"
                };
                t.add_row(vec![
                    cell(color, e.metadata_offset.to_string(), None),
                    cell(color, e.leader.to_string(), None),
                    cell(color, e.leader_epoch.to_string(), None),
                    cell(color, format!("{:?}", e.isr), None),
                    cell(
                        color,
                        if e.leader_recovery_state == 1 {
                            "recovering"
                        } else {
                            "recovered"
                        },
                        None,
                    ),
                    cell(color, note, e.unclean.then_some(Paint::Bad)),
                    cell(color, human_time(e.timestamp), None),
                ]);
            }
            writeln!(w, "{t}")?;
        } else if let Some(why) = &p.controller_missing {
            if p.topic == crate::format::names::METADATA_TOPIC {
                writeln!(
                    w,
                    "{}-{}: {}",
                    sanitize(&p.topic),
                    p.partition,
                    sanitize(why)
                )?;
                if let Some(q) = &p.quorum {
                    write_quorum(&p.topic, p.partition, q, look, w)?;
                }
            } else {
                writeln!(
                    w,
                    "{}-{}: no controller's view: {}; who led each epoch, the ISR and the elections are not in the capture",
                    sanitize(&p.topic),
                    p.partition,
                    sanitize(why)
                )?;
            }
        }
        for r in &p.replicas {
            writeln!(
                w,
                "{}-{} broker {}: log start {}, log end {}, high watermark {}, recovery point {}",
                sanitize(&p.topic),
                p.partition,
                r.broker,
                r.log_start_offset,
                r.log_end_offset,
                r.high_watermark.map_or("-".into(), |h| h.to_string()),
                r.recovery_point.map_or("-".into(), |h| h.to_string())
            )?;
            let mut t = Sheet::new(look);
            t.set_header(vec![
                "epoch",
                "offsets",
                "batches",
                "records",
                "first time (UTC, epoch ms)",
                "last time (UTC, epoch ms)",
                "checkpoint start",
            ]);
            let cp_start: std::collections::HashMap<i32, i64> = r
                .checkpoint
                .iter()
                .flatten()
                .rev()
                .map(|&(e, o)| (e, o))
                .collect();
            for s in &r.from_batches {
                let cp = cp_start.get(&s.epoch).map_or("-".into(), |o| o.to_string());
                t.add_row(vec![
                    s.epoch.to_string(),
                    format!("[{}, {})", s.start_offset, s.end),
                    s.batches.to_string(),
                    s.records.to_string(),
                    human_time(s.first_timestamp),
                    human_time(s.last_timestamp),
                    cp,
                ]);
            }
            // Checkpoint epochs no batch carries: a few rows, the rest
            // counted (a checkpoint can list a million; JSON lists them all).
            let in_batches: std::collections::HashSet<i32> =
                r.from_batches.iter().map(|s| s.epoch).collect();
            let mut only_checkpoint = r
                .checkpoint
                .iter()
                .flatten()
                .filter(|(e, _)| !in_batches.contains(e));
            for (e, o) in only_checkpoint.by_ref().take(CHECKPOINT_ROWS) {
                t.add_row(vec![
                    e.to_string(),
                    "-".into(),
                    "0".into(),
                    "0".into(),
                    "-".into(),
                    "-".into(),
                    o.to_string(),
                ]);
            }
            let rest: Vec<i32> = only_checkpoint.map(|(e, _)| *e).collect();
            writeln!(w, "{t}")?;
            if let (Some(lo), Some(hi)) = (rest.iter().min(), rest.iter().max()) {
                writeln!(
                    w,
                    "  and {} more checkpoint {} that no batch carries (epochs {lo} to {hi}; --format json lists every one)",
                    rest.len(),
                    if rest.len() == 1 { "entry" } else { "entries" }
                )?;
            }
            for d in &r.disagreements {
                writeln!(
                    w,
                    "  {} {}: {}",
                    paint(color, "!", Paint::Warn),
                    d.code,
                    sanitize(&d.message)
                )?;
            }
            writeln!(w)?;
        }
    }
    Ok(())
}

/// `klf timeline --incident --format json`: `{"zones": [...],
/// "partitions": [...]}`.
#[derive(Serialize)]
pub struct IncidentDocument<'a> {
    /// Each node's offset from UTC, by node.
    pub zones: &'a [NodeZone],
    /// One timeline per partition told.
    pub partitions: &'a [PartitionIncident],
}

/// A `jsonl` line: its type, the partition whose timeline it belongs to
/// (none for a zone), then the item's own fields.
#[derive(Serialize)]
struct Line<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    incident_topic: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    incident_partition: Option<i32>,
    #[serde(flatten)]
    item: &'a T,
}

/// A partition's `jsonl` line: what it loses and whether its ISR changes
/// were compared (its entries and ISR changes follow on lines of their
/// own).
#[derive(Serialize)]
struct PartitionLine<'a> {
    topic: &'a str,
    partition: i32,
    loses_data: bool,
    records_lost: u64,
    committed_proven: u64,
    committed_possible: Option<u64>,
    committed_unknown: u64,
    entries: usize,
    log_lines_left_out: u64,
    isr_compared: bool,
    isr_why_not: Option<&'a str>,
}

/// `--incident --format json` (one pretty document) or `jsonl`: a
/// `"zone"` line per node, then per partition a `"partition"` line, an
/// `"entry"` line per entry and an `"isr-change"` line per ISR change.
pub fn write_incident_json(
    parts: &[PartitionIncident],
    zones: &[NodeZone],
    lines: bool,
    w: &mut impl Write,
) -> std::io::Result<()> {
    if !lines {
        return json::document(
            w,
            &IncidentDocument {
                zones,
                partitions: parts,
            },
        );
    }
    for z in zones {
        json::line(
            w,
            &Line {
                kind: "zone",
                incident_topic: None,
                incident_partition: None,
                item: z,
            },
        )?;
    }
    for p in parts {
        let of = |kind| (kind, Some(p.topic.as_str()), Some(p.partition));
        let (kind, incident_topic, incident_partition) = of("partition");
        json::line(
            w,
            &Line {
                kind,
                incident_topic,
                incident_partition,
                item: &PartitionLine {
                    topic: &p.topic,
                    partition: p.partition,
                    loses_data: p.loses_data,
                    records_lost: p.records_lost,
                    committed_proven: p.committed_proven,
                    committed_possible: p.committed_possible,
                    committed_unknown: p.committed_unknown,
                    entries: p.entries.len(),
                    log_lines_left_out: p.log_lines_left_out,
                    isr_compared: p.isr_changes.compared,
                    isr_why_not: p.isr_changes.why_not.as_deref(),
                },
            },
        )?;
        for e in &p.entries {
            let (kind, incident_topic, incident_partition) = of("entry");
            json::line(
                w,
                &Line {
                    kind,
                    incident_topic,
                    incident_partition,
                    item: e,
                },
            )?;
        }
        for c in &p.isr_changes.changes {
            let (kind, incident_topic, incident_partition) = of("isr-change");
            json::line(
                w,
                &Line {
                    kind,
                    incident_topic,
                    incident_partition,
                    item: c,
                },
            )?;
        }
    }
    Ok(())
}

/// Where an entry comes from, for a person: `FILE:LINE`, `FILE at byte
/// N`, or the file alone.
pub fn source_text(s: &EntrySource) -> String {
    let file = s.file.display();
    match (s.line, s.byte) {
        (Some(l), _) => format!("{file}:{l}"),
        (None, Some(b)) => format!("{file} at byte {b}"),
        (None, None) => file.to_string(),
    }
}

fn log_source_text(s: &crate::model::broker_log::LogSource) -> String {
    format!("{}:{}", s.file.display(), s.line)
}

/// The marker after a time read as UTC because its node's zone is not
/// known.
pub const ASSUMED_MARK: &str = "*";

/// An incident entry's time for a person: ISO-8601 UTC, marked when it is
/// a log line's read as UTC for want of its node's zone.
pub fn entry_time(e: &IncidentEntry) -> String {
    let t = crate::format::text::iso_time(e.time).unwrap_or_else(|| e.time.to_string());
    if e.zone == Some(ZoneSource::Assumed) {
        format!("{t} {ASSUMED_MARK}")
    } else {
        t
    }
}

/// A verdict of the ISR comparison in words.
pub fn isr_verdict_words(v: IsrVerdict) -> &'static str {
    match v {
        IsrVerdict::Agrees => "agrees",
        IsrVerdict::Differs => "DIFFERS",
        IsrVerdict::NotLogged => "not logged",
        IsrVerdict::NotCovered => "not logged (the logs do not cover its time)",
        IsrVerdict::ReplicasDown => "not logged (every replica's broker was down then)",
        IsrVerdict::NoRecord => "NO RECORD in the metadata log",
        IsrVerdict::AfterMetadataLog => "logged after the metadata log ends",
        IsrVerdict::BeforeMetadataLog => "logged before the metadata log starts",
    }
}

/// A verdict's code, as the JSON writes it.
pub fn isr_verdict_code(v: IsrVerdict) -> &'static str {
    match v {
        IsrVerdict::Agrees => "agrees",
        IsrVerdict::Differs => "differs",
        IsrVerdict::NotLogged => "not-logged",
        IsrVerdict::NotCovered => "not-covered",
        IsrVerdict::ReplicasDown => "replicas-down",
        IsrVerdict::NoRecord => "no-record",
        IsrVerdict::AfterMetadataLog => "after-metadata-log",
        IsrVerdict::BeforeMetadataLog => "before-metadata-log",
    }
}

/// One ISR change in a line: the record, the statement, the verdict and
/// Kafka's reason.
pub fn isr_change_line(c: &IsrChange) -> String {
    let mut s = format!("partition epoch {}", c.partition_epoch);
    if let (Some(isr), Some(off)) = (&c.isr, c.metadata_offset) {
        s.push_str(&format!(": ISR {isr:?} (metadata offset {off})"));
    }
    s.push_str(&format!(": {}", isr_verdict_words(c.verdict)));
    if let Some(l) = &c.logged {
        s.push_str(&format!(
            "; node {} logged {:?} at {} ({})",
            l.node,
            l.isr,
            crate::format::text::iso_time(l.time).unwrap_or_else(|| l.logged_at.clone()),
            log_source_text(&l.source)
        ));
    }
    if let Some(r) = &c.reason {
        s.push_str(&format!("; Kafka's reason: {r}"));
        if let Some(src) = &c.reason_source {
            s.push_str(&format!(" ({})", log_source_text(src)));
        }
    }
    s
}

/// The tables of `klf timeline --incident`: per partition what it loses,
/// its entries in time order (time, node, kind, what, source), and its ISR
/// changes held against the metadata log; then each node's offset from
/// UTC.
pub fn write_incident_table(
    parts: &[PartitionIncident],
    zones: &[NodeZone],
    look: Look,
    w: &mut impl Write,
) -> std::io::Result<()> {
    let color = look.color;
    for p in parts {
        let loss = crate::render::overview::loss_words(
            p.records_lost,
            p.committed_proven,
            p.committed_possible,
            p.committed_unknown,
        );
        writeln!(
            w,
            "{}-{}: {}; incident timeline, {} (times UTC)",
            sanitize(&p.topic),
            p.partition,
            paint(
                color,
                &loss,
                if p.loses_data {
                    Paint::Bad
                } else {
                    Paint::Good
                }
            ),
            crate::format::text::count(p.entries.len() as u64, "entry", "entries")
        )?;
        let mut t = Sheet::new(look);
        t.set_header(vec!["time (UTC)", "node", "kind", "what", "source"]);
        t.title(2).prose(3);
        for e in &p.entries {
            let mut what = sanitize(&e.text).into_owned();
            if let Some(r) = &e.reason {
                what.push_str(&format!("; Kafka's reason: {}", sanitize(r)));
            }
            let bad = matches!(
                e.kind,
                "unclean-election" | "log-unclean-partition-change" | "log-truncation-below-hw"
            );
            t.add_row(vec![
                cell(color, entry_time(e), None),
                cell(color, e.node.map_or(String::new(), |n| n.to_string()), None),
                cell(color, e.kind, bad.then_some(Paint::Bad)),
                cell(color, what, None),
                cell(color, sanitize(&source_text(&e.source)).into_owned(), None),
            ]);
        }
        if !t.is_empty() {
            writeln!(w, "{t}")?;
        }
        if p.log_lines_left_out > 0 {
            writeln!(
                w,
                "  and {} about it past klf's cap on one timeline, not shown",
                crate::format::text::count(p.log_lines_left_out, "more log line", "more log lines")
            )?;
        }
        match (&p.isr_changes.why_not, p.isr_changes.changes.is_empty()) {
            (Some(why), _) => writeln!(
                w,
                "  ISR changes not held against the metadata log: {}",
                sanitize(why)
            )?,
            (None, true) => writeln!(w, "  no ISR change in the metadata log or the logs")?,
            (None, false) => {
                writeln!(w, "  ISR changes, the logs against the metadata log:")?;
                for c in &p.isr_changes.changes {
                    let mark = match c.verdict {
                        IsrVerdict::Differs | IsrVerdict::NoRecord => paint(color, "!", Paint::Bad),
                        IsrVerdict::NotLogged => paint(color, "!", Paint::Warn),
                        _ => " ".to_string(),
                    };
                    writeln!(w, "  {mark} {}", sanitize(&isr_change_line(c)))?;
                }
            }
        }
        writeln!(w)?;
    }
    if !zones.is_empty() {
        writeln!(
            w,
            "The nodes' log times (Kafka writes local time and no zone):"
        )?;
        for z in zones {
            writeln!(w, "  node {}: {}", z.node, sanitize(&z.text))?;
        }
        if parts
            .iter()
            .flat_map(|p| &p.entries)
            .any(|e| e.zone == Some(ZoneSource::Assumed))
        {
            writeln!(
                w,
                "  {ASSUMED_MARK} a log line's time as written, read as UTC: its node's zone is not known (--log-utc-offset NODE=+HH:MM gives it)"
            )?;
        }
    }
    Ok(())
}
