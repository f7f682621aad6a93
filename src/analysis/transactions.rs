//! Transactions as a whole, folded from one pass over each partition's
//! batch headers ([`PartitionFold`]): a producer's transactional data
//! opens a transaction in the partition, its COMMIT or ABORT marker closes
//! it (records, bytes, duration from the first data batch's timestamp to
//! the marker's), data with no marker after it is open and holds the last
//! stable offset back. Nothing is kept per batch: what a fold holds is
//! bounded by the producers (per producer, [`SAMPLES_KEPT`] values of each
//! spread, then a histogram, and a bit per epoch of its markers: a few
//! KiB). The partitions' folds
//! are merged ([`Folded::merge`]) and set beside the coordinator's log
//! ([`report`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::format::record::control::ControlType;
use crate::model::transactions::{
    CoordinatorCounts, CoordinatorTxns, DataCounts, OddMarker, OpenTxn, OutcomeCounts,
    PartitionRef, PartitionTxns, ProducerTxns, Spread, TxnReport, ODD_MARKERS_KEPT,
};
use crate::model::BatchSummary;

/// Values of a spread kept exactly per producer; past it the median comes
/// from a histogram of 1% buckets.
pub const SAMPLES_KEPT: usize = 256;

/// Values below this are their own histogram bucket.
const EXACT_BELOW: i64 = 100;

/// A spread being gathered: count, min and max exact, the values
/// themselves up to [`SAMPLES_KEPT`], then a histogram.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpreadAcc {
    count: u64,
    min: i64,
    max: i64,
    samples: Vec<i64>,
    histogram: Option<BTreeMap<i32, u64>>,
}

/// The histogram bucket of `v`: itself below [`EXACT_BELOW`], else one of
/// 1% width; negative values mirror.
fn bucket(v: i64) -> i32 {
    let a = v.unsigned_abs();
    let i = if a < EXACT_BELOW as u64 {
        a as i32
    } else {
        let steps = ((a as f64) / EXACT_BELOW as f64).ln() / 1.01f64.ln();
        EXACT_BELOW as i32 + steps.floor() as i32
    };
    if v < 0 {
        -i - 1
    } else {
        i
    }
}

/// The smallest value of a bucket (its representative).
fn bucket_value(i: i32) -> i64 {
    if i < 0 {
        return -bucket_value(-i - 1);
    }
    if i < EXACT_BELOW as i32 {
        return i64::from(i);
    }
    let v = EXACT_BELOW as f64 * 1.01f64.powi(i - EXACT_BELOW as i32);
    if v >= i64::MAX as f64 {
        i64::MAX
    } else {
        v.round() as i64
    }
}

impl SpreadAcc {
    /// Adds a value.
    pub fn add(&mut self, v: i64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        }
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        match &mut self.histogram {
            Some(h) => *h.entry(bucket(v)).or_default() += 1,
            None if self.samples.len() < SAMPLES_KEPT => self.samples.push(v),
            None => {
                self.make_histogram();
                if let Some(h) = &mut self.histogram {
                    *h.entry(bucket(v)).or_default() += 1;
                }
            }
        }
    }

    fn make_histogram(&mut self) {
        let mut h = self.histogram.take().unwrap_or_default();
        for v in self.samples.drain(..) {
            *h.entry(bucket(v)).or_default() += 1;
        }
        self.samples = Vec::new();
        self.histogram = Some(h);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, mut other: SpreadAcc) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other;
            return;
        }
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let fits = self.histogram.is_none()
            && other.histogram.is_none()
            && self.samples.len() + other.samples.len() <= SAMPLES_KEPT;
        if fits {
            self.samples.append(&mut other.samples);
            return;
        }
        self.make_histogram();
        other.make_histogram();
        if let (Some(h), Some(o)) = (&mut self.histogram, other.histogram) {
            for (k, n) in o {
                *h.entry(k).or_default() += n;
            }
        }
    }

    /// The spread (`None`: no value).
    pub fn spread(&self) -> Option<Spread> {
        if self.count == 0 {
            return None;
        }
        let rank = (self.count - 1) / 2;
        let (median, exact) = match &self.histogram {
            None if self.samples.is_empty() => return None,
            None => {
                let mut v = self.samples.clone();
                let r = (rank as usize).min(v.len().saturating_sub(1));
                let (_, m, _) = v.select_nth_unstable(r);
                (*m, true)
            }
            Some(h) => {
                let mut seen = 0u64;
                let mut at = self.min;
                for (k, n) in h {
                    seen += n;
                    if seen > rank {
                        at = bucket_value(*k);
                        break;
                    }
                }
                (at.clamp(self.min, self.max), false)
            }
        };
        Some(Spread {
            count: self.count,
            min: self.min,
            median,
            max: self.max,
            median_exact: exact,
        })
    }
}

/// The outcomes of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Committed = 0,
    Aborted = 1,
    Open = 2,
}

/// A set of producer epochs (0 to 32767), one bit each: at most 4 KiB
/// however many transactions a producer made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct EpochSet {
    words: Vec<u64>,
}

impl EpochSet {
    /// Adds `e` (a negative epoch, no producer's, is left out).
    fn insert(&mut self, e: i16) {
        let Ok(e) = usize::try_from(e) else { return };
        let w = e / 64;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (e % 64);
    }

    fn len(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    fn union(&mut self, o: &EpochSet) {
        if self.words.len() < o.words.len() {
            self.words.resize(o.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&o.words) {
            *a |= b;
        }
    }
}

/// One outcome's data, summed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct OutcomeAcc {
    partition_transactions: u64,
    batches: u64,
    records: u64,
    bytes: u64,
    /// The epochs that identify its transactions: a closing marker's, an
    /// open transaction's data's.
    epochs: EpochSet,
}

impl OutcomeAcc {
    fn merge(&mut self, o: OutcomeAcc) {
        self.partition_transactions += o.partition_transactions;
        self.batches += o.batches;
        self.records += o.records;
        self.bytes += o.bytes;
        self.epochs.union(&o.epochs);
    }
}

/// One producer id's transactions, being gathered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProducerAcc {
    first_epoch: i16,
    last_epoch: i16,
    transactional: bool,
    outcomes: [OutcomeAcc; 3],
    idempotent: DataCounts,
    markers_without_data: u64,
    epoch_bumped: u64,
    same_epoch: u64,
    odd_epoch: u64,
    durations: SpreadAcc,
    sizes: SpreadAcc,
    partitions: BTreeSet<PartitionRef>,
    /// Partitions of its transactional data.
    txn_partitions: BTreeSet<PartitionRef>,
}

impl ProducerAcc {
    fn new(epoch: i16) -> ProducerAcc {
        ProducerAcc {
            first_epoch: epoch,
            last_epoch: epoch,
            ..ProducerAcc::default()
        }
    }

    fn merge(&mut self, o: ProducerAcc) {
        self.first_epoch = self.first_epoch.min(o.first_epoch);
        self.last_epoch = self.last_epoch.max(o.last_epoch);
        self.transactional |= o.transactional;
        for (a, b) in self.outcomes.iter_mut().zip(o.outcomes) {
            a.merge(b);
        }
        self.idempotent.batches += o.idempotent.batches;
        self.idempotent.records += o.idempotent.records;
        self.idempotent.bytes += o.idempotent.bytes;
        self.markers_without_data += o.markers_without_data;
        self.epoch_bumped += o.epoch_bumped;
        self.same_epoch += o.same_epoch;
        self.odd_epoch += o.odd_epoch;
        self.durations.merge(o.durations);
        self.sizes.merge(o.sizes);
        self.partitions.extend(o.partitions);
        self.txn_partitions.extend(o.txn_partitions);
    }
}

/// A producer's data since its last marker in one partition.
#[derive(Debug, Clone)]
struct Running {
    first_offset: i64,
    last_offset: i64,
    first_timestamp: i64,
    epoch: i16,
    batches: u64,
    records: u64,
    bytes: u64,
}

/// One partition's log, folded a batch at a time, in log order.
#[derive(Debug, Clone)]
pub struct PartitionFold {
    topic: String,
    partition: i32,
    open: BTreeMap<i64, Running>,
    producers: BTreeMap<i64, ProducerAcc>,
    committed: u64,
    aborted: u64,
    markers_without_data: u64,
    transactional_records: u64,
    idempotent_records: u64,
    plain_records: u64,
    odd: Vec<OddMarker>,
    odd_total: u64,
}

impl PartitionFold {
    /// An empty fold of `topic`-`partition`.
    pub fn new(topic: &str, partition: i32) -> PartitionFold {
        PartitionFold {
            topic: topic.to_string(),
            partition,
            open: BTreeMap::new(),
            producers: BTreeMap::new(),
            committed: 0,
            aborted: 0,
            markers_without_data: 0,
            transactional_records: 0,
            idempotent_records: 0,
            plain_records: 0,
            odd: Vec::new(),
            odd_total: 0,
        }
    }

    /// The next batch of the log: its header, its control type (a control
    /// batch) and its size on disk.
    pub fn batch(&mut self, b: &BatchSummary, control: Option<ControlType>, size: u64) {
        let records = u64::try_from(b.record_count).unwrap_or(0);
        if b.producer_id < 0 {
            if !b.is_control {
                self.plain_records += records;
            }
            return;
        }
        let pid = b.producer_id;
        let acc = self
            .producers
            .entry(pid)
            .or_insert_with(|| ProducerAcc::new(b.producer_epoch));
        acc.first_epoch = acc.first_epoch.min(b.producer_epoch);
        acc.last_epoch = acc.last_epoch.max(b.producer_epoch);
        let here = PartitionRef {
            topic: self.topic.clone(),
            partition: self.partition,
        };
        if b.is_control {
            let outcome = match control {
                Some(ControlType::Commit) => Outcome::Committed,
                Some(ControlType::Abort) => Outcome::Aborted,
                _ => return,
            };
            acc.transactional = true;
            let Some(run) = self.open.remove(&pid) else {
                acc.markers_without_data += 1;
                self.markers_without_data += 1;
                return;
            };
            let marker_epoch = b.producer_epoch;
            if marker_epoch == run.epoch {
                acc.same_epoch += 1;
            } else if i32::from(marker_epoch) == i32::from(run.epoch) + 1 {
                acc.epoch_bumped += 1;
            } else {
                acc.odd_epoch += 1;
                self.odd_total += 1;
                if self.odd.len() < ODD_MARKERS_KEPT {
                    self.odd.push(OddMarker {
                        topic: self.topic.clone(),
                        partition: self.partition,
                        offset: b.base_offset,
                        producer_id: pid,
                        marker: if outcome == Outcome::Committed {
                            "COMMIT"
                        } else {
                            "ABORT"
                        },
                        marker_epoch,
                        data_epoch: run.epoch,
                    });
                }
            }
            match outcome {
                Outcome::Committed => self.committed += 1,
                _ => self.aborted += 1,
            }
            let o = &mut acc.outcomes[outcome as usize];
            o.partition_transactions += 1;
            o.batches += run.batches;
            o.records += run.records;
            o.bytes += run.bytes;
            o.epochs.insert(marker_epoch);
            acc.durations
                .add(b.max_timestamp.saturating_sub(run.first_timestamp));
            acc.sizes
                .add(i64::try_from(run.records).unwrap_or(i64::MAX));
            return;
        }
        if !b.is_transactional {
            self.idempotent_records += records;
            acc.idempotent.batches += 1;
            acc.idempotent.records += records;
            acc.idempotent.bytes += size;
            acc.partitions.insert(here);
            return;
        }
        acc.transactional = true;
        acc.txn_partitions.insert(here.clone());
        acc.partitions.insert(here);
        self.transactional_records += records;
        let run = self.open.entry(pid).or_insert_with(|| Running {
            first_offset: b.base_offset,
            last_offset: b.last_offset,
            first_timestamp: b.first_timestamp,
            epoch: b.producer_epoch,
            batches: 0,
            records: 0,
            bytes: 0,
        });
        run.last_offset = b.last_offset;
        run.epoch = b.producer_epoch;
        run.batches += 1;
        run.records += records;
        run.bytes += size;
    }

    /// The partition's transactions once its log is read: the replica read
    /// (`broker`, chosen by `reference`), its log start and end offsets and
    /// high watermark give the last stable offset.
    pub fn finish(mut self, replica: ReplicaRead) -> Folded {
        let mut open = Vec::new();
        for (pid, run) in std::mem::take(&mut self.open) {
            let acc = self
                .producers
                .entry(pid)
                .or_insert_with(|| ProducerAcc::new(run.epoch));
            let o = &mut acc.outcomes[Outcome::Open as usize];
            o.partition_transactions += 1;
            o.batches += run.batches;
            o.records += run.records;
            o.bytes += run.bytes;
            o.epochs.insert(run.epoch);
            open.push(OpenTxn {
                producer_id: pid,
                producer_epoch: run.epoch,
                transactional_id: None,
                first_offset: run.first_offset,
                last_offset: run.last_offset,
                first_timestamp: run.first_timestamp,
                batches: run.batches,
                records: run.records,
                bytes: run.bytes,
                coordinator_state: None,
                hanging: None,
                remedy: None,
            });
        }
        open.sort_by_key(|o| (o.first_offset, o.producer_id));
        let (last_stable_offset, lso_bound) = last_stable_offset(
            open.first().map(|o| o.first_offset),
            replica.high_watermark,
            replica.log_end_offset,
        );
        let partition = PartitionTxns {
            topic: self.topic,
            partition: self.partition,
            broker: replica.broker,
            reference: replica.reference,
            log_start_offset: replica.log_start_offset,
            log_end_offset: replica.log_end_offset,
            high_watermark: replica.high_watermark,
            last_stable_offset,
            lso_bound,
            committed: self.committed,
            aborted: self.aborted,
            markers_without_data: self.markers_without_data,
            transactional_records: self.transactional_records,
            idempotent_records: self.idempotent_records,
            plain_records: self.plain_records,
            open,
        };
        Folded {
            producers: self.producers,
            partitions: vec![partition],
            odd: self.odd,
            odd_total: self.odd_total,
        }
    }
}

/// The replica a partition's fold read, and the offsets it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaRead {
    /// Broker.
    pub broker: i32,
    /// Why it was read (see [`PartitionTxns::reference`]).
    pub reference: &'static str,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// High watermark, when the capture holds it.
    pub high_watermark: Option<i64>,
}

/// Kafka's last stable offset: the first offset of the earliest open
/// transaction when below the high watermark, else the high watermark
/// (the log end offset when it is unknown); with what sets it.
pub fn last_stable_offset(
    first_unstable: Option<i64>,
    high_watermark: Option<i64>,
    log_end: i64,
) -> (i64, &'static str) {
    let (bound, name) = match high_watermark {
        Some(h) => (h, "high-watermark"),
        None => (log_end, "log-end"),
    };
    match first_unstable {
        Some(f) if f < bound => (f, "open-transaction"),
        _ => (bound, name),
    }
}

/// Partitions' folds merged.
#[derive(Debug, Clone, Default)]
pub struct Folded {
    producers: BTreeMap<i64, ProducerAcc>,
    partitions: Vec<PartitionTxns>,
    odd: Vec<OddMarker>,
    odd_total: u64,
}

impl Folded {
    /// Adds `other`'s partitions and producers.
    pub fn merge(mut self, other: Folded) -> Folded {
        for (pid, acc) in other.producers {
            match self.producers.get_mut(&pid) {
                Some(a) => a.merge(acc),
                None => {
                    self.producers.insert(pid, acc);
                }
            }
        }
        self.partitions.extend(other.partitions);
        for m in other.odd {
            if self.odd.len() < ODD_MARKERS_KEPT {
                self.odd.push(m);
            }
        }
        self.odd_total += other.odd_total;
        self
    }
}

/// The coordinator's log as [`report`] takes it: every transactional id,
/// and the `__transaction_state` partitions whose records since offset 0
/// are not all there; or why there is none.
pub type CoordinatorLog<'a> = Result<(&'a [CoordinatorTxns], &'a [i32]), String>;

/// The report: the folds' producers with their transactional ids and the
/// coordinator's counts, the partitions with their open transactions named.
pub fn report(folded: Folded, coordinator: CoordinatorLog<'_>) -> TxnReport {
    let (ids, trimmed): (&[CoordinatorTxns], &[i32]) = match &coordinator {
        Ok((ids, trimmed)) => (ids, trimmed),
        Err(_) => (&[], &[]),
    };
    // producer id -> (transactional id, the coordinator's counts)
    let mut by_pid: BTreeMap<i64, (&str, i64, &CoordinatorCounts)> = BTreeMap::new();
    for t in ids {
        for c in &t.producers {
            match by_pid.get(&c.producer_id) {
                Some((_, at, _)) if *at > t.last_update_timestamp => {}
                _ => {
                    by_pid.insert(
                        c.producer_id,
                        (&t.transactional_id, t.last_update_timestamp, c),
                    );
                }
            }
        }
    }
    let trimmed_note = (!trimmed.is_empty()).then(|| {
        let list: Vec<String> = trimmed.iter().map(|p| format!("__transaction_state-{p}")).collect();
        format!(
            "{} no longer holds every record since offset 0 (compacted, or its log start moved): the coordinator's counts may be short",
            list.join(", ")
        )
    });
    let mut producers: Vec<ProducerTxns> = folded
        .producers
        .into_iter()
        .map(|(pid, acc)| {
            let known = by_pid.get(&pid);
            let (empty, empty_unknown) = match (&coordinator, known) {
                (Err(why), _) if acc.transactional => (
                    None,
                    Some(format!(
                        "{why}: a transaction that wrote nothing leaves no trace in the partitions' logs"
                    )),
                ),
                (Ok(_), Some((_, _, c))) => (Some(c.empty), trimmed_note.clone()),
                (Ok(_), None) if acc.transactional => (
                    None,
                    Some(format!(
                        "__transaction_state holds no record of producer id {pid} (its transactional id expired, or its records were cleaned)"
                    )),
                ),
                _ => (None, None),
            };
            producer(pid, acc, known.map(|(id, _, c)| (*id, *c)), empty, empty_unknown)
        })
        .collect();
    producers.sort_by(|a, b| {
        (
            !a.transactional,
            a.transactional_id.is_none(),
            &a.transactional_id,
            a.producer_id,
        )
            .cmp(&(
                !b.transactional,
                b.transactional_id.is_none(),
                &b.transactional_id,
                b.producer_id,
            ))
    });
    let names: BTreeMap<i64, &Option<String>> = producers
        .iter()
        .map(|p| (p.producer_id, &p.transactional_id))
        .collect();
    let mut partitions = folded.partitions;
    for p in &mut partitions {
        for o in &mut p.open {
            o.transactional_id = names.get(&o.producer_id).and_then(|n| (*n).clone());
            let Some(t) = o
                .transactional_id
                .as_deref()
                .and_then(|id| ids.iter().find(|t| t.transactional_id == id))
            else {
                continue;
            };
            let in_progress = matches!(
                t.state.as_deref(),
                Some("Ongoing" | "PrepareCommit" | "PrepareAbort")
            ) && t.producer_id == o.producer_id
                && t.partitions
                    .iter()
                    .any(|r| r.topic == p.topic && r.partition == p.partition);
            o.coordinator_state = t.state.clone();
            o.hanging = Some(!in_progress);
            o.remedy = (!in_progress).then(|| {
                format!(
                    "kafka-transactions.sh --bootstrap-server BROKER abort --topic {} --partition {} --start-offset {}",
                    p.topic, p.partition, o.first_offset
                )
            });
        }
    }
    partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    let mut odd_markers = folded.odd;
    odd_markers
        .sort_by(|a, b| (&a.topic, a.partition, a.offset).cmp(&(&b.topic, b.partition, b.offset)));
    TxnReport {
        producers,
        partitions,
        coordinator: ids.to_vec(),
        coordinator_unknown: match coordinator {
            Err(why) => Some(why),
            Ok(_) => trimmed_note,
        },
        odd_markers,
        odd_markers_total: folded.odd_total,
    }
}

fn producer(
    pid: i64,
    acc: ProducerAcc,
    known: Option<(&str, &CoordinatorCounts)>,
    empty: Option<u64>,
    empty_unknown: Option<String>,
) -> ProducerTxns {
    let closed = acc.outcomes[0].partition_transactions + acc.outcomes[1].partition_transactions;
    let any = closed + acc.outcomes[2].partition_transactions;
    let data_partitions = acc.txn_partitions.len();
    let rule = if any == 0 {
        "none"
    } else if data_partitions <= 1 {
        "one-partition"
    } else if closed > 0 && acc.epoch_bumped == closed {
        "epoch-per-transaction"
    } else if closed == 0 {
        // only open transactions: one per producer epoch
        "epoch-per-transaction"
    } else {
        "per-partition"
    };
    let counts = |o: &OutcomeAcc, open: bool| OutcomeCounts {
        transactions: match rule {
            "none" => Some(0),
            "one-partition" => Some(o.partition_transactions),
            // one open transaction per producer epoch at a time, whatever
            // the transaction version
            _ if open => Some(o.epochs.len()),
            "epoch-per-transaction" => Some(o.epochs.len()),
            _ => None,
        },
        partition_transactions: o.partition_transactions,
        batches: o.batches,
        records: o.records,
        bytes: o.bytes,
    };
    ProducerTxns {
        transactional_id: known.map(|(id, _)| id.to_string()),
        producer_id: pid,
        first_epoch: acc.first_epoch,
        last_epoch: acc.last_epoch,
        transactional: acc.transactional,
        committed: counts(&acc.outcomes[0], false),
        aborted: counts(&acc.outcomes[1], false),
        open: counts(&acc.outcomes[2], true),
        idempotent: acc.idempotent,
        empty,
        empty_unknown,
        markers_without_data: acc.markers_without_data,
        count_rule: rule,
        epoch_bumped: acc.epoch_bumped,
        same_epoch: acc.same_epoch,
        odd_epoch: acc.odd_epoch,
        duration_ms: acc.durations.spread(),
        records_per_transaction: acc.sizes.spread(),
        partitions: acc.partitions.into_iter().collect(),
        coordinator: known.map(|(_, c)| c.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch of producer `pid` at `epoch`: data (`control` None,
    /// transactional or not) or a marker.
    fn batch(base: i64, records: i32, pid: i64, epoch: i16, txn: bool, ts: i64) -> BatchSummary {
        let mut b = BatchSummary::dense(base, base + i64::from(records) - 1, 0, 0);
        b.producer_id = pid;
        b.producer_epoch = epoch;
        b.is_transactional = txn;
        b.first_timestamp = ts;
        b.max_timestamp = ts;
        b
    }

    fn marker(base: i64, pid: i64, epoch: i16, ts: i64) -> BatchSummary {
        let mut b = batch(base, 1, pid, epoch, true, ts);
        b.is_control = true;
        b
    }

    fn read(hw: Option<i64>, end: i64) -> ReplicaRead {
        ReplicaRead {
            broker: 1,
            reference: "only-replica",
            log_start_offset: 0,
            log_end_offset: end,
            high_watermark: hw,
        }
    }

    fn one(r: &TxnReport, pid: i64) -> &ProducerTxns {
        r.producers.iter().find(|p| p.producer_id == pid).unwrap()
    }

    #[test]
    fn commits_aborts_and_an_open_transaction_fold_with_the_lso_at_its_first_offset() {
        let mut f = PartitionFold::new("t", 0);
        // producer 7, transaction version 2: each marker carries epoch + 1
        f.batch(&batch(0, 10, 7, 0, true, 1_000), None, 500);
        f.batch(&batch(10, 5, 7, 0, true, 1_010), None, 300);
        f.batch(&marker(15, 7, 1, 1_100), Some(ControlType::Commit), 78);
        // an idempotent producer and a plain batch between
        f.batch(&batch(16, 4, 9, 0, false, 1_200), None, 200);
        f.batch(&batch(20, 2, -1, -1, false, 1_200), None, 100);
        f.batch(&batch(22, 3, 7, 1, true, 2_000), None, 150);
        f.batch(&marker(25, 7, 2, 2_050), Some(ControlType::Abort), 78);
        f.batch(&batch(26, 4, 7, 2, true, 3_000), None, 160);
        let r = report(
            f.finish(read(Some(30), 30)),
            Err("no __transaction_state".to_string()),
        );
        let p = one(&r, 7);
        assert!(p.transactional);
        assert_eq!(p.committed.transactions, Some(1));
        assert_eq!(
            (p.committed.batches, p.committed.records, p.committed.bytes),
            (2, 15, 800)
        );
        assert_eq!(p.aborted.transactions, Some(1));
        assert_eq!(p.aborted.records, 3);
        assert_eq!(p.open.transactions, Some(1));
        assert_eq!(p.open.records, 4);
        assert_eq!((p.first_epoch, p.last_epoch), (0, 2));
        assert_eq!((p.epoch_bumped, p.same_epoch, p.odd_epoch), (2, 0, 0));
        assert_eq!(p.count_rule, "one-partition");
        let d = p.duration_ms.unwrap();
        assert_eq!((d.count, d.min, d.median, d.max), (2, 50, 50, 100));
        assert!(d.median_exact);
        assert_eq!(p.empty, None);
        assert!(p
            .empty_unknown
            .as_deref()
            .unwrap()
            .contains("no __transaction_state"));
        let idem = one(&r, 9);
        assert!(!idem.transactional);
        assert_eq!(idem.idempotent.records, 4);
        assert_eq!(idem.count_rule, "none");
        assert_eq!(r.producers[0].producer_id, 7, "transactional first");
        let part = &r.partitions[0];
        assert_eq!((part.committed, part.aborted), (1, 1));
        assert_eq!(
            (
                part.transactional_records,
                part.idempotent_records,
                part.plain_records
            ),
            (22, 4, 2)
        );
        assert_eq!(part.open.len(), 1);
        assert_eq!(part.open[0].first_offset, 26);
        assert_eq!(
            (part.last_stable_offset, part.lso_bound),
            (26, "open-transaction")
        );
        assert_eq!(
            r.coordinator_unknown.as_deref(),
            Some("no __transaction_state")
        );
    }

    #[test]
    fn the_lso_is_the_high_watermark_else_the_log_end() {
        assert_eq!(
            last_stable_offset(Some(5), Some(10), 12),
            (5, "open-transaction")
        );
        // an open transaction past the high watermark does not hold it
        assert_eq!(
            last_stable_offset(Some(11), Some(10), 12),
            (10, "high-watermark")
        );
        assert_eq!(
            last_stable_offset(None, Some(10), 12),
            (10, "high-watermark")
        );
        assert_eq!(last_stable_offset(None, None, 12), (12, "log-end"));
        assert_eq!(
            last_stable_offset(Some(3), None, 12),
            (3, "open-transaction")
        );
    }

    #[test]
    fn markers_of_the_same_epoch_over_two_partitions_are_counted_per_partition() {
        // transaction version 1: every marker carries its data's epoch, so
        // which markers of two partitions close one transaction is unknown
        let mut a = PartitionFold::new("t", 0);
        let mut b = PartitionFold::new("t", 1);
        for (i, f) in [&mut a, &mut b].into_iter().enumerate() {
            let i = i as i64;
            f.batch(&batch(0, 2, 5, 3, true, 10 + i), None, 90);
            f.batch(&marker(2, 5, 3, 20), Some(ControlType::Commit), 78);
            f.batch(&batch(3, 2, 5, 3, true, 30), None, 90);
            f.batch(&marker(5, 5, 3, 40), Some(ControlType::Commit), 78);
        }
        let folded = a.finish(read(Some(6), 6)).merge(b.finish(read(Some(6), 6)));
        let r = report(folded, Ok((&[], &[])));
        let p = one(&r, 5);
        assert_eq!(p.count_rule, "per-partition");
        assert_eq!(p.committed.transactions, None);
        assert_eq!(p.committed.partition_transactions, 4);
        assert_eq!(p.committed.records, 8);
        assert_eq!(p.same_epoch, 4);
        assert_eq!(p.partitions.len(), 2);
        assert!(p
            .empty_unknown
            .as_deref()
            .unwrap()
            .contains("no record of producer id 5"));
    }

    #[test]
    fn with_an_epoch_per_transaction_markers_of_one_epoch_are_one_transaction() {
        let mut a = PartitionFold::new("t", 0);
        let mut b = PartitionFold::new("u", 0);
        for f in [&mut a, &mut b] {
            f.batch(&batch(0, 2, 5, 0, true, 10), None, 90);
            f.batch(&marker(2, 5, 1, 20), Some(ControlType::Commit), 78);
            f.batch(&batch(3, 2, 5, 1, true, 30), None, 90);
            f.batch(&marker(5, 5, 2, 40), Some(ControlType::Abort), 78);
            // open in both: one transaction
            f.batch(&batch(6, 1, 5, 2, true, 50), None, 70);
        }
        let r = report(
            a.finish(read(None, 7)).merge(b.finish(read(None, 7))),
            Ok((&[], &[])),
        );
        let p = one(&r, 5);
        assert_eq!(p.count_rule, "epoch-per-transaction");
        assert_eq!(p.committed.transactions, Some(1));
        assert_eq!(p.committed.partition_transactions, 2);
        assert_eq!(p.aborted.transactions, Some(1));
        assert_eq!(p.open.transactions, Some(1));
        assert_eq!(p.open.partition_transactions, 2);
        assert_eq!(r.partitions.len(), 2);
        assert!(r
            .partitions
            .iter()
            .all(|x| x.last_stable_offset == 6 && x.lso_bound == "open-transaction"));
    }

    #[test]
    fn an_odd_epoch_and_a_marker_without_data_are_said() {
        let mut f = PartitionFold::new("t", 0);
        // a marker with no data before it (an abort of a transaction that
        // wrote nothing here)
        f.batch(&marker(0, 4, 0, 5), Some(ControlType::Abort), 78);
        f.batch(&batch(1, 3, 4, 1, true, 10), None, 90);
        // epoch 1 data closed by a marker at epoch 5
        f.batch(&marker(4, 4, 5, 20), Some(ControlType::Commit), 78);
        // a control batch that is no transaction marker is no transaction
        f.batch(&marker(5, 4, 5, 20), Some(ControlType::LeaderChange), 78);
        let r = report(f.finish(read(Some(6), 6)), Ok((&[], &[])));
        let p = one(&r, 4);
        assert_eq!(p.markers_without_data, 1);
        assert_eq!(p.odd_epoch, 1);
        assert_eq!(p.committed.partition_transactions, 1);
        assert_eq!(r.odd_markers_total, 1);
        let m = &r.odd_markers[0];
        assert_eq!(
            (m.offset, m.marker, m.marker_epoch, m.data_epoch),
            (4, "COMMIT", 5, 1)
        );
        assert_eq!(r.partitions[0].markers_without_data, 1);
        assert_eq!(r.partitions[0].lso_bound, "high-watermark");
    }

    #[test]
    fn the_coordinator_names_producers_and_counts_empty_transactions() {
        let mut f = PartitionFold::new("t", 0);
        f.batch(&batch(0, 2, 11, 0, true, 10), None, 90);
        f.batch(&marker(2, 11, 0, 20), Some(ControlType::Commit), 78);
        let ids = [CoordinatorTxns {
            transactional_id: "app-1".to_string(),
            broker: 2,
            state_partition: 0,
            state: Some("CompleteCommit".to_string()),
            producer_id: 11,
            producer_epoch: 0,
            partitions: Vec::new(),
            last_update_timestamp: 30,
            transaction_version: None,
            producers: vec![CoordinatorCounts {
                producer_id: 11,
                committed: 1,
                empty: 2,
                ..CoordinatorCounts::default()
            }],
        }];
        let trimmed = [0];
        let r = report(f.finish(read(Some(3), 3)), Ok((&ids, &trimmed)));
        let p = one(&r, 11);
        assert_eq!(p.transactional_id.as_deref(), Some("app-1"));
        assert_eq!(p.empty, Some(2));
        assert!(p.empty_unknown.as_deref().unwrap().contains("may be short"));
        assert_eq!(p.coordinator.as_ref().unwrap().committed, 1);
        assert_eq!(r.coordinator.len(), 1);
        assert!(r
            .coordinator_unknown
            .as_deref()
            .unwrap()
            .contains("__transaction_state-0"));
    }

    #[test]
    fn a_spread_is_exact_up_to_its_bound_then_close() {
        let mut s = SpreadAcc::default();
        assert_eq!(s.spread(), None);
        for v in [5, 1, 9, 3] {
            s.add(v);
        }
        let x = s.spread().unwrap();
        assert_eq!(
            (x.count, x.min, x.median, x.max, x.median_exact),
            (4, 1, 3, 9, true)
        );
        // past the bound: a histogram of 1% buckets
        let mut big = SpreadAcc::default();
        let n = SAMPLES_KEPT as i64 * 2 + 1;
        for v in 0..n {
            big.add(v * 10);
        }
        let x = big.spread().unwrap();
        assert!(!x.median_exact);
        assert_eq!((x.count, x.min, x.max), (n as u64, 0, (n - 1) * 10));
        let exact = (n - 1) / 2 * 10;
        assert!(
            (x.median - exact).abs() <= exact / 100 + 1,
            "{} vs {exact}",
            x.median
        );
        // merging two halves gives the same count, min and max
        let mut a = SpreadAcc::default();
        let mut b = SpreadAcc::default();
        for v in 0..n {
            if v % 2 == 0 {
                a.add(v * 10)
            } else {
                b.add(v * 10)
            }
        }
        a.merge(b);
        let y = a.spread().unwrap();
        assert_eq!((y.count, y.min, y.max), (x.count, x.min, x.max));
        // negative durations (clocks apart) keep their sign
        let mut neg = SpreadAcc::default();
        neg.add(-250);
        assert_eq!(neg.spread().unwrap().median, -250);
        assert_eq!(bucket_value(bucket(-5)), -5);
    }
}
