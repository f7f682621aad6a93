//! The plain-language story of a partition diff (`klf diff --explain`, and
//! the story text of `klf report`): who led each epoch and from which
//! offset, then what happens to each replica when it follows the reference.

use std::collections::BTreeMap;

use crate::model::diff::{ClusterMode, PartitionDiff, ProtocolSource};
use crate::model::loss::{bounds_words, brokers, PartitionLoss};
use crate::model::PartitionHistory;
use crate::render::loss::{evidence_detail, gap_reason};

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

/// The loss in detail: one line per lost range (epoch, holders, whether
/// committed), per producer, then each piece of evidence.
pub fn loss_story(loss: &PartitionLoss) -> Vec<String> {
    let mut lines = Vec::new();
    if !loss.any() {
        return lines;
    }
    for r in &loss.offsets {
        let what = if r.control_records > 0 && r.records == 0 {
            crate::format::text::count(r.control_records, "control record", "control records")
        } else {
            crate::format::text::count(r.records, "record", "records")
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
            crate::format::text::count(p.records, "record", "records"),
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
        lines.push(format!("unknown {}: {}", u.bound, gap_reason(&u.reason)));
    }
    for e in &loss.evidence {
        lines.push(format!(
            "evidence ({}): {}",
            e.kind().name(),
            evidence_detail(e)
        ));
    }
    lines
}
