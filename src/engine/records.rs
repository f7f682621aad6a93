//! The records behind the loss figures, read back from the segments and
//! handed to a sink one at a time as they are read: the records a
//! replica's truncation cuts, and the records the partition loses (each
//! read once, from one replica holding it). The sink gets at most a limit
//! of them; the summary counts every record read; a batch whose records
//! are counted in the figures but cannot be read back (one that inflates
//! past the decompression cap, a record that does not parse, a segment
//! whose reading stopped before it) is listed with its file, byte and
//! reason, and its records counted as left out. Nothing is kept per
//! record: memory does not grow with the records listed.

use crate::model::ReplicaProblem;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io;

use crate::analysis::loss::lost_batch_index;
use crate::analysis::lost::SummaryBuilder;
use crate::capture::replica::visit_batch_records;
use crate::engine::evidence::broker_ids;
use crate::model::diff::ReplicaDiff;
use crate::model::loss::{LostBatch, PartitionLoss};
use crate::model::records::{LeftOut, LostRecord, RecordsRead};
use crate::model::{BatchSummary, Replica, UnreadBatch};

/// What streaming one list of records found.
#[derive(Debug, Clone)]
pub struct ListEnd {
    /// What was read, listed, omitted and left out.
    pub read: RecordsRead,
    /// Problems met while reading (for stderr).
    pub problems: Vec<ReplicaProblem>,
}

/// Where a list's records go: an error (a write that failed) stops the
/// reading and is returned.
pub type RecordSink<'s> = dyn FnMut(&LostRecord) -> io::Result<()> + 's;

/// Counts records into a summary and hands at most `limit` to `sink`,
/// keeping the sink's first error.
struct Lister<'s, 'k> {
    sink: &'s mut RecordSink<'k>,
    limit: usize,
    summary: SummaryBuilder,
    listed: u64,
    error: Option<io::Error>,
}

impl<'s, 'k> Lister<'s, 'k> {
    fn new(sink: &'s mut RecordSink<'k>, limit: usize) -> Self {
        Lister {
            sink,
            limit,
            summary: SummaryBuilder::default(),
            listed: 0,
            error: None,
        }
    }

    /// Takes `rec`; `false` when reading should stop (the sink failed).
    fn take(&mut self, rec: &LostRecord) -> bool {
        self.summary.add(rec);
        if (self.listed as usize) < self.limit {
            if let Err(e) = (self.sink)(rec) {
                self.error = Some(e);
                return false;
            }
            self.listed += 1;
        }
        true
    }

    fn finish(self, left_out: LeftOut, problems: Vec<ReplicaProblem>) -> io::Result<ListEnd> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let summary = self.summary.finish();
        Ok(ListEnd {
            read: RecordsRead {
                omitted: summary.records.saturating_sub(self.listed),
                listed: self.listed,
                summary,
                left_out,
            },
            problems,
        })
    }
}

/// Records of `batch` in `[from, to)` by its header.
fn header_records(batch: &BatchSummary, from: i64, to: i64) -> u64 {
    u64::try_from(batch.records_in(from, to)).unwrap_or(0)
}

/// Streams the records replica `r` (broker `broker`'s `replica`) loses to
/// its truncation (`[truncation_offset, log_end_offset)`) into `sink`, at
/// most `limit` of them, each marked with its commitment when no replica
/// keeps it.
pub fn stream_cut(
    replica: &Replica,
    r: &ReplicaDiff,
    loss: &PartitionLoss,
    limit: usize,
    sink: &mut RecordSink<'_>,
) -> io::Result<ListEnd> {
    let index = lost_batch_index(loss);
    let (from, to) = (r.truncation_offset, r.log_end_offset);
    let mut lister = Lister::new(sink, limit);
    let delivered: RefCell<HashMap<(i64, i64, i32, u32), u64>> = RefCell::new(HashMap::new());
    let mut left_out = LeftOut::default();
    let mut reached_to = from;
    let problems = visit_batch_records(
        replica,
        from,
        to,
        &mut |key, mut rec| {
            if let Some(lb) = index.get(&key).filter(|lb| rec.offset >= lb.from) {
                rec.committed = Some(lb.committed_at(rec.offset));
            }
            *delivered.borrow_mut().entry(key).or_default() += 1;
            lister.take(&rec)
        },
        &mut |batch, path, position, why| {
            reached_to = reached_to.max(batch.last_offset.saturating_add(1));
            if let Some(why) = why {
                let got = delivered.borrow().get(&batch.key()).copied().unwrap_or(0);
                left_out.add(UnreadBatch {
                    start: batch.base_offset.max(from),
                    end: batch.last_offset.saturating_add(1).min(to),
                    records: header_records(batch, from, to).saturating_sub(got),
                    broker: Some(r.broker),
                    file: Some(path.display().to_string()),
                    position: Some(position),
                    reason: why.to_string(),
                });
            }
        },
    );
    // reading stopped before the end of the range (damage or a failed read,
    // reported): what the figures count beyond it was not read
    if !problems.is_empty() && reached_to < to {
        let counted = u64::try_from(
            r.records_to_truncate
                .saturating_add(r.control_records_to_truncate),
        )
        .unwrap_or(0);
        let seen = lister.summary.count() + left_out.records;
        left_out.add(UnreadBatch {
            start: reached_to,
            end: to,
            records: counted.saturating_sub(seen),
            broker: Some(r.broker),
            file: None,
            position: None,
            reason: "not reached: reading of the replica's segments stopped before these offsets (see the problem reported)".to_string(),
        });
    }
    lister.finish(left_out, problems)
}

/// Streams the records the partition loses into `sink`, each read from the
/// first replica in `replicas` that holds its batch, batch by batch in the
/// order of the loss (first lost offset, then leader epoch), at most
/// `limit` of them.
pub fn stream_lost(
    replicas: &[Replica],
    loss: &PartitionLoss,
    limit: usize,
    sink: &mut RecordSink<'_>,
) -> io::Result<ListEnd> {
    let ids = broker_ids(replicas);
    let mut lister = Lister::new(sink, limit);
    let mut left_out = LeftOut::default();
    let mut problems = Vec::new();
    // Runs of consecutive lost batches read from the same holder.
    let holder = |lb: &LostBatch| {
        lb.held_by
            .iter()
            .find_map(|h| ids.iter().position(|i| i == h))
    };
    let mut i = 0;
    while i < loss.batches.len() {
        let first = &loss.batches[i];
        let Some(h) = holder(first) else {
            left_out.add(UnreadBatch {
                start: first.from,
                end: first.batch.last_offset.saturating_add(1),
                records: header_records(
                    &first.batch,
                    first.from,
                    first.batch.last_offset.saturating_add(1),
                ),
                broker: None,
                file: None,
                position: None,
                reason: "held by no replica of the capture that can be read".to_string(),
            });
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while j < loss.batches.len() && holder(&loss.batches[j]) == Some(h) {
            j += 1;
        }
        let run = &loss.batches[i..j];
        let keys: HashMap<(i64, i64, i32, u32), &LostBatch> =
            run.iter().map(|l| (l.batch.key(), l)).collect();
        let from = run.iter().map(|l| l.from).min().unwrap_or(0);
        let to = run
            .iter()
            .map(|l| l.batch.last_offset.saturating_add(1))
            .max()
            .unwrap_or(from);
        let delivered: RefCell<HashMap<(i64, i64, i32, u32), u64>> = RefCell::new(HashMap::new());
        let mut reached: HashMap<(i64, i64, i32, u32), ()> = HashMap::new();
        let mut stopped = false;
        let broker = ids.get(h).copied();
        let mut found = visit_batch_records(
            &replicas[h],
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
                *delivered.borrow_mut().entry(key).or_default() += 1;
                let go_on = lister.take(&rec);
                stopped |= !go_on;
                go_on
            },
            &mut |batch, path, position, why| {
                let key = batch.key();
                let Some(lb) = keys.get(&key) else {
                    return;
                };
                reached.insert(key, ());
                if let Some(why) = why {
                    let end = batch.last_offset.saturating_add(1);
                    let got = delivered.borrow().get(&key).copied().unwrap_or(0);
                    left_out.add(UnreadBatch {
                        start: lb.from,
                        end,
                        records: header_records(batch, lb.from, end).saturating_sub(got),
                        broker,
                        file: Some(path.display().to_string()),
                        position: Some(position),
                        reason: why.to_string(),
                    });
                }
            },
        );
        if stopped {
            problems.append(&mut found);
            break;
        }
        for lb in run.iter().filter(|l| !reached.contains_key(&l.batch.key())) {
            let end = lb.batch.last_offset.saturating_add(1);
            left_out.add(UnreadBatch {
                start: lb.from,
                end,
                records: header_records(&lb.batch, lb.from, end),
                broker,
                file: None,
                position: None,
                reason: "not reached: reading of the replica's segments stopped before it (see the problem reported)".to_string(),
            });
        }
        problems.append(&mut found);
        i = j;
    }
    lister.finish(left_out, problems)
}

/// A list read whole into memory (at most `limit` records): for tests and
/// small callers; commands stream with [`stream_lost`] and [`stream_cut`].
#[derive(Debug, Clone)]
pub struct RecordList {
    /// The records listed.
    pub records: Vec<LostRecord>,
    /// How the list ended.
    pub end: ListEnd,
}

/// [`stream_lost`] into a list.
pub fn lost_records(replicas: &[Replica], loss: &PartitionLoss, limit: usize) -> RecordList {
    let mut records = Vec::new();
    let end = stream_lost(replicas, loss, limit, &mut |r| {
        records.push(r.clone());
        Ok(())
    });
    collected(records, end)
}

/// [`stream_cut`] into a list.
pub fn cut_records(
    replica: &Replica,
    r: &ReplicaDiff,
    loss: &PartitionLoss,
    limit: usize,
) -> RecordList {
    let mut records = Vec::new();
    let end = stream_cut(replica, r, loss, limit, &mut |rec| {
        records.push(rec.clone());
        Ok(())
    });
    collected(records, end)
}

fn collected(records: Vec<LostRecord>, end: io::Result<ListEnd>) -> RecordList {
    // a Vec sink never fails
    let end = end.unwrap_or_else(|_| ListEnd {
        read: RecordsRead {
            summary: SummaryBuilder::default().finish(),
            listed: 0,
            omitted: 0,
            left_out: LeftOut::default(),
        },
        problems: Vec::new(),
    });
    RecordList { records, end }
}
