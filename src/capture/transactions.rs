//! The transaction coordinator's view from the capture's
//! `__transaction_state` replicas: the latest record of every transactional
//! id (its producer id and epoch, state and partitions), in log order.
//!
//! Of the replicas of one `__transaction_state` partition, the one a
//! caller prefers (the leader at capture time) is used, else the one whose
//! log reaches furthest; what is kept is bounded by the transactional ids.

use crate::model::ReplicaProblem;
use std::collections::BTreeMap;

use crate::capture::replica::{for_each_data_batch, for_each_record};
use crate::format::internal::{decode_transaction_record, TxnState};
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
                let Some(key) = rec.key else { return true };
                let decoded = match decode_transaction_record(key, rec.value) {
                    Ok(d) => d,
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
                        return true;
                    }
                };
                let Some(entry) = decoded.transaction_log_entry() else {
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
