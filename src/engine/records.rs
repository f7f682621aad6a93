//! The records behind the loss figures, read back from the segments: the
//! records a replica's truncation cuts, and the records the partition loses
//! (each read once, from one replica holding it). Lists are cut at a limit;
//! the summaries count every record.

use std::collections::{BTreeMap, HashMap};

use crate::analysis::diff::ReplicaDiff;
use crate::analysis::loss::{lost_batch_index, LostBatch, PartitionLoss};
use crate::analysis::lost::{LossSummary, LostRecord, SummaryBuilder};
use crate::capture::discover::Replica;
use crate::capture::replica::{visit_records, ReplicaProblem};
use crate::engine::evidence::broker_ids;

/// Records read back, at most a limit of them listed.
#[derive(Debug, Clone)]
pub struct RecordList {
    /// The records, in offset order, at most the limit.
    pub records: Vec<LostRecord>,
    /// Every record, counted.
    pub summary: LossSummary,
    /// Records counted but not listed (beyond the limit).
    pub omitted: u64,
    /// Problems met while reading.
    pub problems: Vec<ReplicaProblem>,
}

/// The records replica `r` loses to its truncation (`[truncation_offset,
/// log_end_offset)`), each marked with its commitment when no replica keeps
/// it.
pub fn cut_records(
    replica: &Replica,
    r: &ReplicaDiff,
    loss: &PartitionLoss,
    limit: usize,
) -> RecordList {
    let index = lost_batch_index(loss);
    let mut summary = SummaryBuilder::default();
    let mut records = Vec::new();
    let problems = visit_records(
        replica,
        r.truncation_offset,
        r.log_end_offset,
        &mut |key, mut rec| {
            if let Some(lb) = index.get(&key).filter(|lb| rec.offset >= lb.from) {
                rec.committed = Some(lb.committed_at(rec.offset));
            }
            summary.add(&rec);
            if records.len() < limit {
                records.push(rec);
            }
            true
        },
    );
    finish(records, summary, problems)
}

/// The records the partition loses, each read from the first replica in
/// `replicas` that holds its batch, in offset order.
pub fn lost_records(replicas: &[Replica], loss: &PartitionLoss, limit: usize) -> RecordList {
    let ids = broker_ids(replicas);
    // Each lost batch, assigned to one holder to read it from.
    let mut by_holder: BTreeMap<usize, Vec<&LostBatch>> = BTreeMap::new();
    let mut unread = 0u64;
    for lb in &loss.batches {
        match lb
            .held_by
            .iter()
            .find_map(|h| ids.iter().position(|i| i == h))
        {
            Some(i) => by_holder.entry(i).or_default().push(lb),
            None => unread += 1,
        }
    }
    let mut all: Vec<LostRecord> = Vec::new();
    let mut summary = SummaryBuilder::default();
    let mut problems = Vec::new();
    for (i, lbs) in by_holder {
        let keys: HashMap<(i64, i64, i32, u32), &LostBatch> =
            lbs.iter().map(|l| (l.batch.key(), *l)).collect();
        let from = lbs.iter().map(|l| l.from).min().unwrap_or(0);
        let to = lbs
            .iter()
            .map(|l| l.batch.last_offset.saturating_add(1))
            .max()
            .unwrap_or(from);
        let mut kept = 0usize;
        problems.extend(visit_records(
            &replicas[i],
            from,
            to,
            &mut |key, mut rec| {
                let Some(lb) = keys.get(&key).filter(|lb| rec.offset >= lb.from) else {
                    return true;
                };
                rec.committed = Some(lb.committed_at(rec.offset));
                let mut held = lb.held_by.clone();
                held.sort_unstable();
                rec.held_by = Some(held);
                summary.add(&rec);
                // Each holder keeps its first `limit`: the merge below keeps
                // the first `limit` of all.
                if kept < limit {
                    kept += 1;
                    all.push(rec);
                }
                true
            },
        ));
    }
    all.sort_by_key(|r| (r.offset, r.epoch));
    all.truncate(limit);
    if unread > 0 {
        problems.push(ReplicaProblem {
            path: replicas.first().map(|r| r.dir.clone()).unwrap_or_default(),
            position: None,
            message: format!(
                "{unread} lost batches are held by no replica of the capture that can be read"
            ),
            io: false,
        });
    }
    finish(all, summary, problems)
}

fn finish(
    records: Vec<LostRecord>,
    summary: SummaryBuilder,
    problems: Vec<ReplicaProblem>,
) -> RecordList {
    let summary = summary.finish();
    RecordList {
        omitted: summary.records.saturating_sub(records.len() as u64),
        records,
        summary,
        problems,
    }
}

/// The records behind one partition's figures: what the partition loses,
/// and per broker what its truncation cuts.
#[derive(Debug, Clone)]
pub struct PartitionRecords {
    /// The partition's lost records.
    pub lost: RecordList,
    /// Per broker, the records its truncation cuts.
    pub cut: BTreeMap<i32, RecordList>,
}

/// Reads the records behind a diffed partition (`replicas` are its replicas
/// in the capture), at most `limit` per list.
pub fn partition_records(
    replicas: &[Replica],
    result: &crate::engine::PartitionResult,
    limit: usize,
) -> PartitionRecords {
    let ids = broker_ids(replicas);
    let lost = lost_records(replicas, &result.loss, limit);
    let mut cut = BTreeMap::new();
    for r in &result.diff.replicas {
        if r.truncation_offset >= r.log_end_offset {
            continue;
        }
        if let Some(i) = ids.iter().position(|b| *b == r.broker) {
            cut.insert(r.broker, cut_records(&replicas[i], r, &result.loss, limit));
        }
    }
    PartitionRecords { lost, cut }
}
