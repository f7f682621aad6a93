//! The transaction coordinator's view from the capture's
//! `__transaction_state` replicas: the latest record of every transactional
//! id (its producer id and epoch, state and partitions), in log order.
//!
//! Beside it, every record of each transactional id folded
//! ([`transaction_log`]): how many transactions the coordinator prepared
//! to commit or abort, and those that ended with nothing written.
//!
//! Of the replicas of one `__transaction_state` partition, the one a
//! caller prefers (the leader at capture time) is used, else the one whose
//! log reaches furthest; what is kept is bounded by the transactional ids.

use crate::model::ReplicaProblem;
use std::collections::BTreeMap;

use crate::capture::replica::{for_each_data_batch, for_each_record};
use crate::format::internal::{decode_transaction_record, TxnState};
use crate::model::transactions::{CoordinatorCounts, CoordinatorTxns, PartitionRef};
use crate::model::{Capture, CoordinatorTxn, Replica};

/// The internal topic of the transaction coordinator.
pub const TRANSACTION_STATE: &str = "__transaction_state";

/// What the capture's `__transaction_state` replicas say.
#[derive(Debug, Clone, Default)]
pub struct CoordinatorView {
    /// Latest state per producer id (of the transactional id that last used it).
    pub by_producer: BTreeMap<i64, CoordinatorTxn>,
    /// Whether the capture holds any `__transaction_state` replica.
    pub topic_present: bool,
    /// Problems met while reading.
    pub problems: Vec<ReplicaProblem>,
}

/// The transaction-log entry a record of `__transaction_state` (in the
/// batch at byte `position` of `path`) holds; `None` for a record without
/// a key or of another kind, and for one that does not decode, which goes
/// into `bad`.
fn transaction_entry(
    rec: &crate::format::record::Record<'_>,
    path: &std::path::Path,
    position: u64,
    bad: &mut Vec<ReplicaProblem>,
) -> Option<crate::format::internal::TransactionLogEntry> {
    let key = rec.key?;
    match decode_transaction_record(key, rec.value) {
        Ok(d) => d.transaction_log_entry(),
        Err(e) => {
            bad.push(ReplicaProblem {
                path: path.to_path_buf(),
                position: Some(position),
                message: format!(
                    "transaction record at offset {} does not decode: {e}",
                    rec.offset
                ),
                io: false,
            });
            None
        }
    }
}

/// Kafka's name of a transaction state.
pub fn state_name(s: TxnState) -> String {
    match (s, s.name()) {
        (_, Some(name)) => name.to_string(),
        (TxnState::Unknown(n), None) => format!("Unknown({n})"),
        (_, None) => "Unknown".to_string(),
    }
}

/// Reads the `__transaction_state` replicas of `capture`; `prefer` names
/// the broker whose replica of a partition to use (the leader at capture).
pub fn coordinator_view(capture: &Capture, prefer: &dyn Fn(i32) -> Option<i32>) -> CoordinatorView {
    let mut out = CoordinatorView::default();
    for ((topic, partition), reps) in &capture.partitions {
        if topic != TRANSACTION_STATE || reps.is_empty() {
            continue;
        }
        out.topic_present = true;
        let mut read: Vec<(i32, i64, BTreeMap<String, Option<CoordinatorTxn>>)> = Vec::new();
        for (i, r) in reps.iter().enumerate() {
            let broker = r.node_id.unwrap_or(-(i as i32) - 1);
            let (last, ids) = read_replica(r, broker, &mut out.problems);
            read.push((broker, last, ids));
        }
        let want = prefer(*partition);
        let chosen = read
            .iter()
            .position(|(b, _, _)| Some(*b) == want)
            .or_else(|| {
                read.iter()
                    .enumerate()
                    .max_by_key(|(_, (b, last, _))| (*last, -*b))
                    .map(|(i, _)| i)
            });
        let Some(i) = chosen else { continue };
        for (_, txn) in std::mem::take(&mut read[i].2) {
            let Some(txn) = txn else { continue };
            match out.by_producer.get(&txn.producer_id) {
                Some(old) if old.last_update_timestamp > txn.last_update_timestamp => {}
                _ => {
                    out.by_producer.insert(txn.producer_id, txn);
                }
            }
        }
    }
    out
}

fn read_replica(
    replica: &Replica,
    broker: i32,
    problems: &mut Vec<ReplicaProblem>,
) -> (i64, BTreeMap<String, Option<CoordinatorTxn>>) {
    let mut ids: BTreeMap<String, Option<CoordinatorTxn>> = BTreeMap::new();
    let mut last = -1i64;
    let mut scratch = Vec::new();
    for_each_data_batch(
        replica,
        "transaction records",
        problems,
        &mut |b, path, problems| {
            last = last.max(b.last_offset());
            let position = b.position;
            let mut bad = Vec::new();
            for_each_record(b, &mut scratch, path, problems, &mut |rec| {
                let Some(entry) = transaction_entry(&rec, path, position, &mut bad) else {
                    return true;
                };
                let txn = entry.state.map(|s| CoordinatorTxn {
                    transactional_id: entry.transactional_id.clone(),
                    producer_id: s.producer_id,
                    producer_epoch: s.producer_epoch,
                    state: state_name(s.state),
                    partitions: s.partitions,
                    last_update_timestamp: s.last_update_timestamp_ms,
                    broker,
                    log_offset: rec.offset,
                });
                ids.insert(entry.transactional_id, txn);
                true
            });
            problems.append(&mut bad);
        },
    );
    (last, ids)
}

/// Every transactional id of the capture's `__transaction_state`, with
/// the coordinator's count of its transactions from every record of it
/// (not only the latest): what `klf transactions` sets beside the logs.
#[derive(Debug, Clone, Default)]
pub struct TransactionLogView {
    /// One per transactional id, in id order.
    pub ids: Vec<CoordinatorTxns>,
    /// Whether the capture holds any `__transaction_state` replica.
    pub topic_present: bool,
    /// The `__transaction_state` partitions whose replica read does not
    /// hold every record since offset 0 (cleaned by compaction, or its
    /// log start moved): the counts there may be short.
    pub trimmed: Vec<i32>,
    /// Problems met while reading.
    pub problems: Vec<ReplicaProblem>,
}

impl TransactionLogView {
    /// The producer ids the coordinator's records give `transactional_id`.
    pub fn producers_of(&self, transactional_id: &str) -> Vec<i64> {
        self.ids
            .iter()
            .filter(|t| t.transactional_id == transactional_id)
            .flat_map(|t| t.producers.iter().map(|p| p.producer_id))
            .collect()
    }
}

/// Reads every record of the capture's `__transaction_state` replicas (of
/// each partition the one `prefer` names, else the one whose log reaches
/// furthest); what is kept is bounded by the transactional ids and their
/// producer ids.
pub fn transaction_log(
    capture: &Capture,
    prefer: &dyn Fn(i32) -> Option<i32>,
) -> TransactionLogView {
    let mut out = TransactionLogView::default();
    for ((topic, partition), reps) in &capture.partitions {
        if topic != TRANSACTION_STATE || reps.is_empty() {
            continue;
        }
        out.topic_present = true;
        let mut read: Vec<(i32, IdsRead)> = Vec::new();
        for (i, r) in reps.iter().enumerate() {
            let broker = r.node_id.unwrap_or(-(i as i32) - 1);
            let ids = read_history(r, broker, *partition, &mut out.problems);
            read.push((broker, ids));
        }
        let want = prefer(*partition);
        let chosen = read.iter().position(|(b, _)| Some(*b) == want).or_else(|| {
            read.iter()
                .enumerate()
                .max_by_key(|(_, (b, r))| (r.last, -*b))
                .map(|(i, _)| i)
        });
        let Some(i) = chosen else { continue };
        let chosen = std::mem::take(&mut read[i].1);
        if chosen.trimmed {
            out.trimmed.push(*partition);
        }
        out.ids
            .extend(chosen.ids.into_values().map(|f| f.into_model()));
    }
    out.ids
        .sort_by(|a, b| a.transactional_id.cmp(&b.transactional_id));
    out
}

/// What one replica of a `__transaction_state` partition gives.
#[derive(Default)]
struct IdsRead {
    ids: BTreeMap<String, IdFold>,
    /// Greatest offset read.
    last: i64,
    /// Whether records since offset 0 are missing.
    trimmed: bool,
}

/// One transactional id's records, folded.
struct IdFold {
    txn: CoordinatorTxns,
    producers: BTreeMap<i64, CoordinatorCounts>,
    /// State, producer id and epoch of its previous record (a record
    /// written again is not a new transaction).
    previous: Option<(TxnState, i64, i16)>,
}

impl IdFold {
    fn into_model(mut self) -> CoordinatorTxns {
        self.txn.producers = self.producers.into_values().collect();
        self.txn
    }
}

fn read_history(
    replica: &Replica,
    broker: i32,
    partition: i32,
    problems: &mut Vec<ReplicaProblem>,
) -> IdsRead {
    let mut out = IdsRead {
        last: -1,
        ..IdsRead::default()
    };
    let mut next = 0i64;
    let mut scratch = Vec::new();
    for_each_data_batch(
        replica,
        "transaction records",
        problems,
        &mut |b, path, problems| {
            out.last = out.last.max(b.last_offset());
            let position = b.position;
            let mut bad = Vec::new();
            for_each_record(b, &mut scratch, path, problems, &mut |rec| {
                if rec.offset > next {
                    out.trimmed = true;
                }
                next = next.max(rec.offset.saturating_add(1));
                let Some(entry) = transaction_entry(&rec, path, position, &mut bad) else {
                    return true;
                };
                fold_record(&mut out.ids, entry, broker, partition);
                true
            });
            problems.append(&mut bad);
        },
    );
    out
}

/// One record of a transactional id into its fold: the latest state, and a
/// `PrepareCommit`, `PrepareAbort` or `PrepareEpochFence` counted once.
fn fold_record(
    ids: &mut BTreeMap<String, IdFold>,
    entry: crate::format::internal::TransactionLogEntry,
    broker: i32,
    partition: i32,
) {
    let fold = ids
        .entry(entry.transactional_id.clone())
        .or_insert_with(|| IdFold {
            txn: CoordinatorTxns {
                transactional_id: entry.transactional_id.clone(),
                broker,
                state_partition: partition,
                state: None,
                producer_id: -1,
                producer_epoch: -1,
                partitions: Vec::new(),
                last_update_timestamp: -1,
                transaction_version: None,
                producers: Vec::new(),
            },
            producers: BTreeMap::new(),
            previous: None,
        });
    let Some(s) = entry.state else {
        // a tombstone: the id expired
        fold.txn.state = None;
        fold.txn.partitions.clear();
        fold.previous = None;
        return;
    };
    fold.txn.state = Some(state_name(s.state));
    fold.txn.producer_id = s.producer_id;
    fold.txn.producer_epoch = s.producer_epoch;
    fold.txn.partitions = s
        .partitions
        .iter()
        .flat_map(|(t, ps)| {
            ps.iter().map(|&p| PartitionRef {
                topic: t.clone(),
                partition: p,
            })
        })
        .collect();
    fold.txn.last_update_timestamp = s.last_update_timestamp_ms;
    if s.client_transaction_version.is_some() {
        fold.txn.transaction_version = s.client_transaction_version;
    }
    let counts = fold
        .producers
        .entry(s.producer_id)
        .or_insert_with(|| CoordinatorCounts {
            producer_id: s.producer_id,
            first_epoch: s.producer_epoch,
            last_epoch: s.producer_epoch,
            ..CoordinatorCounts::default()
        });
    counts.first_epoch = counts.first_epoch.min(s.producer_epoch);
    counts.last_epoch = counts.last_epoch.max(s.producer_epoch);
    let this = (s.state, s.producer_id, s.producer_epoch);
    if fold.previous != Some(this) {
        let empty = s.partitions.iter().all(|(_, ps)| ps.is_empty());
        match s.state {
            TxnState::PrepareCommit | TxnState::PrepareAbort if empty => counts.empty += 1,
            TxnState::PrepareCommit => counts.committed += 1,
            TxnState::PrepareAbort => counts.aborted += 1,
            TxnState::PrepareEpochFence => counts.fenced += 1,
            _ => {}
        }
    }
    fold.previous = Some(this);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::internal::{TransactionLogEntry, TransactionMetadata};

    fn rec(
        state: TxnState,
        pid: i64,
        epoch: i16,
        partitions: &[i32],
        tv: Option<i16>,
    ) -> TransactionLogEntry {
        TransactionLogEntry {
            transactional_id: "app".to_string(),
            state: Some(TransactionMetadata {
                producer_id: pid,
                producer_epoch: epoch,
                previous_producer_id: -1,
                next_producer_id: -1,
                timeout_ms: 60_000,
                state,
                partitions: if partitions.is_empty() {
                    Vec::new()
                } else {
                    vec![("t".to_string(), partitions.to_vec())]
                },
                last_update_timestamp_ms: 100,
                start_timestamp_ms: 90,
                client_transaction_version: tv,
            }),
        }
    }

    #[test]
    fn every_record_of_an_id_folds_into_its_counts_once() {
        use TxnState::*;
        let mut ids = BTreeMap::new();
        for r in [
            rec(Empty, 3, 0, &[], None),
            rec(Ongoing, 3, 0, &[0], Some(2)),
            rec(Ongoing, 3, 0, &[0, 1], Some(2)),
            rec(PrepareCommit, 3, 1, &[0, 1], Some(2)),
            // written again (a coordinator's retry): not a new transaction
            rec(PrepareCommit, 3, 1, &[0, 1], Some(2)),
            rec(CompleteCommit, 3, 1, &[], Some(2)),
            rec(Ongoing, 3, 1, &[1], Some(2)),
            rec(PrepareAbort, 3, 2, &[1], Some(2)),
            rec(CompleteAbort, 3, 2, &[], Some(2)),
            // ended with nothing written
            rec(PrepareAbort, 3, 3, &[], Some(2)),
            rec(CompleteAbort, 3, 3, &[], None),
            // a new producer id after a fence
            rec(PrepareEpochFence, 8, 0, &[], None),
            rec(Ongoing, 8, 0, &[2], None),
        ] {
            fold_record(&mut ids, r, 2, 0);
        }
        let t = ids.remove("app").unwrap().into_model();
        assert_eq!(t.state.as_deref(), Some("Ongoing"));
        assert_eq!((t.producer_id, t.producer_epoch), (8, 0));
        assert_eq!(
            t.transaction_version,
            Some(2),
            "the latest record carrying it"
        );
        assert_eq!(
            t.partitions,
            [PartitionRef {
                topic: "t".to_string(),
                partition: 2
            }]
        );
        let p3 = &t.producers[0];
        assert_eq!(p3.producer_id, 3);
        assert_eq!(
            (p3.committed, p3.aborted, p3.empty, p3.fenced),
            (1, 1, 1, 0)
        );
        assert_eq!((p3.first_epoch, p3.last_epoch), (0, 3));
        assert_eq!((t.producers[1].producer_id, t.producers[1].fenced), (8, 1));
        let view = TransactionLogView {
            ids: vec![t],
            topic_present: true,
            ..TransactionLogView::default()
        };
        assert_eq!(view.producers_of("app"), [3, 8]);
        assert!(view.producers_of("other").is_empty());
    }

    #[test]
    fn a_tombstone_leaves_the_id_expired() {
        let mut ids = BTreeMap::new();
        fold_record(
            &mut ids,
            rec(TxnState::CompleteCommit, 1, 0, &[], None),
            1,
            0,
        );
        fold_record(
            &mut ids,
            TransactionLogEntry {
                transactional_id: "app".to_string(),
                state: None,
            },
            1,
            0,
        );
        let t = ids.remove("app").unwrap().into_model();
        assert_eq!(t.state, None);
        assert_eq!(t.producers.len(), 1);
    }
}
