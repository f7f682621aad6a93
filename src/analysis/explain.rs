//! The plain-language story of a partition diff (`klf diff --explain`, and
//! the story text of `klf report`): who led each epoch and from which
//! offset, then what happens to each replica when it follows the reference.

use std::collections::BTreeMap;

use crate::analysis::diff::PartitionDiff;
use crate::capture::controller::PartitionHistory;

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

/// The plain-language story of one partition: one line per epoch of the
/// reference (with its leader from `leaders`, see [`epoch_leaders`]), then
/// one line per other replica followed by its truncation rounds.
pub fn story(p: &PartitionDiff, leaders: &BTreeMap<i32, (i32, bool)>) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(reference) = p.replicas.iter().find(|r| r.broker == p.reference.broker) else {
        return lines;
    };
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
            "broker {} holds offsets up to {} (latest epoch {})",
            r.broker,
            r.log_end_offset - 1,
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
            if r.committed_records_to_truncate > 0 {
                s.push_str(&format!(
                    ", {} of them below the high watermark (acknowledged writes lost)",
                    r.committed_records_to_truncate
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
    }
    lines
}
