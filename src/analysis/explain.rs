//! The plain-language story of a partition diff (`klf diff --explain`, and
//! the story text of `klf report`): who led each epoch and from which
//! offset, then what happens to each replica when it follows the reference.

use std::collections::BTreeMap;

use crate::analysis::diff::{ClusterMode, PartitionDiff, ProtocolSource};
use crate::analysis::loss::PartitionLoss;
use crate::model::PartitionHistory;

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// Who led each leader epoch and whether that election was unclean, from a
/// partition's history in the metadata log: `epoch -> (leader, unclean)`.
/// Empty when there is no history.
pub fn epoch_leaders(history: Option<&PartitionHistory>) -> BTreeMap<i32, (i32, bool)> {
    history
        .map(|h| {
            h.changes
                .iter()
                .filter(|e| e.leader_changed && e.leader >= 0)
                .map(|e| (e.leader_epoch, (e.leader, e.unclean)))
                .collect()
        })
        .unwrap_or_default()
}

/// Which truncation protocol a diff modelled and why, in one line; for
/// an assumed protocol, what the alternative predicts.
pub fn protocol_line(p: &PartitionDiff) -> String {
    let o = &p.protocol;
    match o.source {
        ProtocolSource::Given => format!(
            "truncation protocol: {}, as --inter-broker-protocol gives",
            o.protocol.describe()
        ),
        ProtocolSource::Kraft => format!(
            "truncation protocol: {}, as every KRaft cluster runs",
            o.protocol.describe()
        ),
        ProtocolSource::Assumed => {
            let why = match o.mode {
                ClusterMode::Zookeeper => {
                    "a ZooKeeper-mode capture does not hold inter.broker.protocol.version"
                }
                ClusterMode::Mixed => {
                    "the brokers' meta.properties disagree on the mode and no metadata log was read"
                }
                _ => "the capture does not show the cluster's mode",
            };
            let mut s = format!(
                "truncation protocol assumed: {}, the default since Kafka 2.7; {why} (give --inter-broker-protocol)",
                o.protocol.describe()
            );
            if let Some(alt) = o.alternative {
                let differ: Vec<String> = p
                    .replicas
                    .iter()
                    .filter_map(|r| {
                        r.alternative_truncation_offset
                            .filter(|a| *a != r.truncation_offset)
                            .map(|a| format!("broker {} to {a}", r.broker))
                    })
                    .collect();
                if differ.is_empty() {
                    s.push_str(&format!(
                        "; {} truncates every replica at the same offset",
                        alt.describe()
                    ));
                } else {
                    s.push_str(&format!(
                        "; {} would truncate {}",
                        alt.describe(),
                        differ.join(", ")
                    ));
                }
            }
            s
        }
    }
}

/// The plain-language story of one partition: the truncation protocol,
/// one line per epoch of the reference (with its leader from `leaders`,
/// see [`epoch_leaders`]), then one line per other replica followed by its
/// truncation rounds (and, where an assumed protocol's alternative cuts
/// elsewhere, the alternative's rounds).
pub fn story(p: &PartitionDiff, leaders: &BTreeMap<i32, (i32, bool)>) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(reference) = p.replicas.iter().find(|r| r.broker == p.reference.broker) else {
        return lines;
    };
    lines.push(protocol_line(p));
    for e in &reference.epoch_cache {
        match leaders.get(&e.epoch) {
            Some((leader, unclean)) => lines.push(format!(
                "broker {leader} became leader in epoch {}{} and wrote from offset {} (metadata log; offsets as broker {} records them)",
                e.epoch,
                if *unclean { " by an UNCLEAN election" } else { "" },
                e.start_offset,
                reference.broker
            )),
            None => lines.push(format!(
                "epoch {} began at offset {} (as broker {} records it)",
                e.epoch, e.start_offset, reference.broker
            )),
        }
    }
    for r in &p.replicas {
        if r.broker == reference.broker {
            continue;
        }
        let mut s = format!(
            "broker {} holds offsets [{}, {}) (latest epoch {})",
            r.broker,
            r.log_start_offset,
            r.log_end_offset,
            opt(r.latest_epoch)
        );
        match r.divergence_offset {
            None => s.push_str("; identical to the reference"),
            Some(d) => s.push_str(&format!("; it parts from the reference at offset {d}")),
        }
        if r.truncation_offset < r.log_end_offset {
            s.push_str(&format!(
                "; following broker {}, Kafka truncates it to {} and {} records are cut",
                reference.broker, r.truncation_offset, r.records_to_truncate
            ));
            if r.lost_cut > 0 {
                s.push_str(&format!(
                    ", {} of them on no replica once all follow it (committed: {})",
                    r.lost_cut,
                    bounds_words(r.committed_proven_cut, r.committed_possible_cut)
                ));
            }
            if r.records_only_here > 0 {
                s.push_str(&format!(
                    "; {} of the cut records exist on no other replica",
                    r.records_only_here
                ));
            }
        } else {
            s.push_str("; nothing is truncated");
        }
        if r.hw_truncation_offset != r.truncation_offset {
            s.push_str(&format!(
                "; high-watermark truncation (before Kafka 0.11) would have cut to {}",
                r.hw_truncation_offset
            ));
        }
        lines.push(s);
        for round in &r.truncation_rounds {
            lines.push(format!("    {}", round.describe()));
        }
        if let (Some(alt), Some(at)) = (p.protocol.alternative, r.alternative_truncation_offset) {
            if at != r.truncation_offset {
                lines.push(format!(
                    "  under {} instead, Kafka truncates broker {} to {at}:",
                    alt.describe(),
                    r.broker
                ));
                for round in &r.alternative_rounds {
                    lines.push(format!("    {}", round.describe()));
                }
            }
        }
    }
    lines
}

/// Commitment bounds in words: `50 proven, at most 100 possible`.
pub fn bounds_words(proven: u64, possible: Option<u64>) -> String {
    match possible {
        Some(0) => "none".to_string(),
        Some(p) if p == proven => format!("{p} proven"),
        Some(p) => format!("{proven} proven, at most {p} possible"),
        None => format!("{proven} proven, the rest unknown"),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    crate::format::text::count(n, one, many)
}

fn brokers(list: &[i32]) -> String {
    let v: Vec<String> = list.iter().map(i32::to_string).collect();
    match v.len() {
        0 => "no broker".to_string(),
        1 => format!("broker {}", v[0]),
        _ => format!("brokers {}", v.join(", ")),
    }
}

/// The partition's loss in one line, the figures a post-mortem quotes
/// first: what no replica will keep, counted once, and the two bounds of
/// what had been committed.
pub fn loss_headline(loss: &PartitionLoss) -> String {
    let mut s = loss_figures(loss);
    if !loss.replicas_not_captured.is_empty() {
        s.push_str(&format!(
            "; {} assigned but not captured: {}",
            brokers(&loss.replicas_not_captured),
            crate::analysis::loss::NOT_CAPTURED_WEAKENS
        ));
    }
    s
}

/// [`loss_headline`] but for the replicas the capture lacks.
fn loss_figures(loss: &PartitionLoss) -> String {
    use crate::analysis::loss::Verdict;
    if !loss.any() {
        return "nothing lost: every record is kept by the reference or fetched again from it"
            .into();
    }
    let mut s = format!(
        "{} lost on every replica",
        plural(loss.records, "record", "records")
    );
    if loss.control_records > 0 {
        s.push_str(&format!(
            " (and {})",
            plural(loss.control_records, "control record", "control records")
        ));
    }
    let mut spans: Vec<(i64, i64)> = loss.offsets.iter().map(|r| (r.start, r.end)).collect();
    spans.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    let mut ranges: Vec<String> = merged.iter().map(|(a, b)| format!("[{a}, {b})")).collect();
    if ranges.len() > 4 {
        let n = ranges.len() - 3;
        ranges.truncate(3);
        ranges.push(format!("{n} more ranges"));
    }
    s.push_str(&format!(
        ", offsets {}, held now only by {}",
        ranges.join(" "),
        brokers(&loss.held_by)
    ));
    match loss.verdict {
        Verdict::UncommittedLost => s.push_str(
            "; none committed (never below a high watermark: acks=1, acks=0 or unacknowledged writes)",
        ),
        Verdict::NothingLost => {}
        _ => {
            s.push_str(&format!("; committed: {} proven", loss.committed_proven));
            match loss.committed_possible {
                Some(p) => s.push_str(&format!(", at most {p} possible")),
                None => s.push_str(&format!(
                    ", at most {} possible ({} cannot be bounded)",
                    loss.possibly_committed_or_unknown(),
                    loss.committed_unknown
                )),
            }
        }
    }
    s
}

/// The loss in detail: one line per lost range (epoch, holders, whether
/// committed), per producer, then each piece of evidence.
pub fn loss_story(loss: &PartitionLoss) -> Vec<String> {
    let mut lines = Vec::new();
    if !loss.any() {
        return lines;
    }
    for r in &loss.offsets {
        let what = if r.control_records > 0 && r.records == 0 {
            plural(r.control_records, "control record", "control records")
        } else {
            plural(r.records, "record", "records")
        };
        lines.push(format!(
            "lost [{}, {}): {what} of epoch {}, held by {}, committed: {}",
            r.start,
            r.end,
            r.leader_epoch,
            brokers(&r.held_by),
            r.committed.name()
        ));
    }
    for p in &loss.producers {
        let who = if p.producer_id < 0 {
            "records without a producer id".to_string()
        } else {
            format!(
                "producer {} (epochs {:?})",
                p.producer_id, p.producer_epochs
            )
        };
        let seq = if p.first_sequence >= 0 {
            format!(", sequences {} to {}", p.first_sequence, p.last_sequence)
        } else {
            String::new()
        };
        lines.push(format!(
            "{who}: {} lost, offsets [{}, {}){seq}{}",
            plural(p.records, "record", "records"),
            p.first_offset,
            p.last_offset.saturating_add(1),
            if p.transactional {
                " (transactional)"
            } else {
                ""
            }
        ));
    }
    for u in &loss.unknown {
        lines.push(format!("unknown {}: {}", u.bound, u.reason));
    }
    for e in &loss.evidence {
        lines.push(format!("evidence ({}): {}", kind_name(e.kind), e.detail));
    }
    lines
}

fn kind_name(k: crate::analysis::loss::EvidenceKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
