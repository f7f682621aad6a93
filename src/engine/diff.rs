//! The diff pipeline: per partition, read the replicas (by default only the
//! window where they can differ, see [`crate::capture::scan`]), diff them,
//! fall back to reading every batch when the window's answer cannot be
//! trusted, and compute the partition's loss with the capture's evidence.

use crate::model::ReplicaProblem;
use rayon::prelude::*;

use crate::analysis::diff::{PartitionReplicas, ReferenceHint};
use crate::analysis::epochs::EpochCache;
use crate::capture::replica::LoadedReplica;
use crate::capture::scan::{load_all, tail_end};
use crate::engine::evidence::{broker_ids, Evidence};
use crate::model::diff::{DiffOptions, DiffedPartition, PartitionDiff, ScanInfo, ScanMode};
use crate::model::loss::PartitionLoss;
use crate::model::truncation::ReplicationProtocol;
use crate::model::{Capture, Replica, ReplicaLog};

/// How a diff reads the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// The window where replicas can differ (falls back to full when needed).
    #[default]
    Window,
    /// Every batch (`klf diff --verify`).
    Full,
}

/// What to diff.
#[derive(Debug, Clone, Default)]
pub struct DiffRequest {
    /// Take this broker as the reference leader.
    pub leader: Option<i32>,
    /// Only this topic.
    pub topic: Option<String>,
    /// Only this partition number.
    pub partition: Option<i32>,
    /// Window or every batch.
    pub mode: ReadMode,
    /// The truncation protocol the operator gave
    /// (`--inter-broker-protocol`); `None`: from the capture
    /// ([`Evidence::diff_options`]).
    pub protocol: Option<ReplicationProtocol>,
    /// Drop each replica's batch summaries once its partition's diff and
    /// loss are made (every [`PartitionResult::logs`] is left with no
    /// batches): what a run holds is then a few KiB a partition, whatever
    /// its batches. For callers that only render the diff.
    pub drop_logs: bool,
}

/// One partition's diff, loss and what was read for it.
#[derive(Debug, Clone)]
pub struct PartitionResult {
    /// The diff, its [`PartitionDiff::scan`] filled in.
    pub diff: PartitionDiff,
    /// What the partition loses, counted once.
    pub loss: PartitionLoss,
    /// The replica logs as read (in the order of `diff.replicas`).
    pub logs: Vec<ReplicaLog>,
    /// Problems met while reading (bad batches, torn tails, unreadable files).
    pub problems: Vec<ReplicaProblem>,
    /// Brokers whose replica could not be read (the machine's failure, a
    /// problem with `io` says where): left out of the diff and the loss,
    /// which are the other replicas'.
    pub left_out: Vec<i32>,
}

impl PartitionResult {
    /// What the outputs write of it: the diff, the loss, the brokers left
    /// out.
    pub fn view(&self) -> DiffedPartition<'_> {
        DiffedPartition {
            diff: &self.diff,
            loss: &self.loss,
            left_out: &self.left_out,
        }
    }
}

/// A diff of a capture.
pub struct DiffRun<'c> {
    /// Partitions with two or more replicas that match the request, in
    /// topic/partition order.
    pub partitions: Vec<PartitionResult>,
    /// Partitions that match the request but have one replica only.
    pub single_replica: Vec<(String, i32)>,
    /// Partitions not compared: fewer than two of their replicas could be
    /// read (the machine's failure): topic, partition, and the problems
    /// that say why.
    pub not_compared: Vec<NotCompared>,
    /// The evidence used.
    pub evidence: Evidence<'c>,
}

impl DiffRun<'_> {
    /// The replicas of a result's partition in the capture.
    pub fn replicas(&self, p: &PartitionResult) -> &[Replica] {
        self.evidence
            .capture()
            .replicas(&p.diff.topic, p.diff.partition)
    }
}

/// Diffs every partition of `capture` that `req` selects; `progress` is
/// called once per partition diffed (from worker threads).
pub fn diff_capture<'c>(
    capture: &'c Capture,
    req: &DiffRequest,
    progress: &(dyn Fn() + Sync),
) -> DiffRun<'c> {
    let plan = DiffPlan::new(capture, req);
    let (partitions, not_compared) = plan.diff(0..plan.len(), req, progress);
    DiffRun {
        partitions,
        single_replica: plan.single_replica,
        not_compared,
        evidence: plan.evidence,
    }
}

/// A partition not compared: topic, partition, and the problems that say
/// why (fewer than two of its replicas could be read).
pub type NotCompared = (String, i32, Vec<ReplicaProblem>);

/// The partitions a diff request selects, with the capture's evidence: a
/// caller diffs them a range at a time ([`DiffPlan::diff`]) and keeps what
/// it needs of each range, so that what a run holds need not grow with the
/// number of partitions.
pub struct DiffPlan<'c> {
    /// The evidence used.
    pub evidence: Evidence<'c>,
    options: DiffOptions,
    wanted: Vec<(&'c (String, i32), &'c Vec<Replica>)>,
    /// Partitions that match the request but have one replica only.
    pub single_replica: Vec<(String, i32)>,
}

impl<'c> DiffPlan<'c> {
    /// The partitions of `capture` that `req` selects.
    pub fn new(capture: &'c Capture, req: &DiffRequest) -> DiffPlan<'c> {
        let evidence = Evidence::gather(capture);
        let options = evidence.diff_options(req.protocol);
        let mut wanted: Vec<(&(String, i32), &Vec<Replica>)> = capture
            .partitions
            .iter()
            .filter(|((t, p), _)| {
                req.topic.as_ref().is_none_or(|x| x == t) && req.partition.is_none_or(|x| x == *p)
            })
            .collect();
        let single_replica = wanted
            .iter()
            .filter(|(_, reps)| reps.len() == 1)
            .map(|(k, _)| (*k).clone())
            .collect();
        wanted.retain(|(_, reps)| reps.len() >= 2);
        DiffPlan {
            evidence,
            options,
            wanted,
            single_replica,
        }
    }

    /// How many partitions with two or more replicas the request selects.
    pub fn len(&self) -> usize {
        self.wanted.len()
    }

    /// Whether the request selects no partition with two or more replicas.
    pub fn is_empty(&self) -> bool {
        self.wanted.is_empty()
    }

    /// Diffs the selected partitions in `range` (in topic/partition
    /// order), in parallel: the ones compared, and the ones not (fewer
    /// than two replicas could be read).
    pub fn diff(
        &self,
        range: std::ops::Range<usize>,
        req: &DiffRequest,
        progress: &(dyn Fn() + Sync),
    ) -> (Vec<PartitionResult>, Vec<NotCompared>) {
        let wanted = &self.wanted[range];
        let results: Vec<PartitionResult> = wanted
            .par_iter()
            .map(|((topic, partition), reps)| {
                let mut r =
                    diff_readable(&self.evidence, topic, *partition, reps, req, &self.options);
                if req.drop_logs {
                    for l in &mut r.logs {
                        l.batches = Vec::new();
                    }
                }
                progress();
                r
            })
            .collect();
        let mut partitions = Vec::with_capacity(results.len());
        let mut not_compared = Vec::new();
        for (r, (_, reps)) in results.into_iter().zip(wanted) {
            if reps.len() - r.left_out.len() < 2 {
                not_compared.push((r.diff.topic.clone(), r.diff.partition, r.problems));
            } else {
                partitions.push(r);
            }
        }
        (partitions, not_compared)
    }
}

/// Diffs one partition's readable replicas: a replica a read of which
/// failed (in discovery, or while its logs are read) is left out, and the
/// diff and loss are the others'. With fewer than two readable replicas the
/// result is the first read's, every replica left out that failed.
fn diff_readable(
    evidence: &Evidence<'_>,
    topic: &str,
    partition: i32,
    reps: &[Replica],
    req: &DiffRequest,
    options: &DiffOptions,
) -> PartitionResult {
    let ids = broker_ids(reps);
    let mut left_out: Vec<i32> = reps
        .iter()
        .zip(&ids)
        .filter(|(r, _)| evidence.capture().unreadable_for(r).is_some())
        .map(|(_, &id)| id)
        .collect();
    // A replica left out because discovery could not read its directory or
    // a file it needs: the failed read is the partition's problem (an I/O
    // error), said once here.
    let mut problems: Vec<ReplicaProblem> = reps
        .iter()
        .filter_map(|r| evidence.capture().unreadable_for(r))
        .map(|path| ReplicaProblem {
            path: path.to_path_buf(),
            position: None,
            message: "could not be read when the capture was listed; the replica is left out"
                .to_string(),
            io: true,
        })
        .collect();
    loop {
        // the replicas not left out (all of them, uncopied, when none is)
        let sub: Vec<Replica> = if left_out.is_empty() {
            Vec::new()
        } else {
            reps.iter()
                .zip(&ids)
                .filter(|(_, id)| !left_out.contains(id))
                .map(|(r, _)| r.clone())
                .collect()
        };
        let kept = if left_out.is_empty() {
            reps.len()
        } else {
            sub.len()
        };
        let use_all = kept < 2;
        let reading = if use_all || left_out.is_empty() {
            reps
        } else {
            &sub
        };
        let reference = evidence.reference(req.leader, topic, partition);
        let mut r = diff_partition_replicas(
            evidence, topic, partition, reading, reference, options, req.mode,
        );
        let reading_ids = broker_ids(reading);
        let failed: Vec<i32> = reading
            .iter()
            .zip(&reading_ids)
            .filter(|(rep, id)| {
                !left_out.contains(id)
                    && r.problems
                        .iter()
                        .any(|p| p.io && p.path.starts_with(&rep.dir))
            })
            .map(|(_, &id)| id)
            .collect();
        if failed.is_empty() || use_all {
            left_out.extend(failed);
            left_out.sort_unstable();
            left_out.dedup();
            problems.append(&mut r.problems);
            r.problems = problems;
            r.left_out = left_out;
            return r;
        }
        // what the failed reads reported stays; the diff goes again
        // without those replicas
        problems.extend(r.problems.into_iter().filter(|p| p.io));
        left_out.extend(failed);
    }
}

/// Reads the replicas of one partition and diffs them. See
/// [`crate::capture::scan`] for what is read.
pub fn diff_partition_replicas(
    evidence: &Evidence<'_>,
    topic: &str,
    partition: i32,
    replicas: &[Replica],
    reference: ReferenceHint,
    options: &DiffOptions,
    mode: ReadMode,
) -> PartitionResult {
    diff_partition_adjusted(
        evidence,
        topic,
        partition,
        replicas,
        reference,
        options,
        mode,
        &|_| {},
    )
}

/// [`diff_partition_replicas`] with each replica log changed by `adjust`
/// after it is read and before the diff (`klf check` moves log starts above
/// what a compacted log no longer compares).
#[allow(clippy::too_many_arguments)]
pub fn diff_partition_adjusted(
    evidence: &Evidence<'_>,
    topic: &str,
    partition: i32,
    replicas: &[Replica],
    reference: ReferenceHint,
    options: &DiffOptions,
    mode: ReadMode,
    adjust: &(dyn Fn(&mut ReplicaLog) + Sync),
) -> PartitionResult {
    let ids = broker_ids(replicas);
    // The logs' lengths now; in an archive or a digest (whose files do not
    // change) the lengths discovery listed
    let log_bytes: u64 = replicas
        .iter()
        .map(|r| {
            let held = crate::capture::vfs::is_virtual(&r.dir);
            r.segments
                .iter()
                .filter_map(|s| {
                    let p = s.log.as_ref()?;
                    match s.log_len {
                        Some(n) if held => Some(n),
                        _ => crate::capture::vfs::metadata(p).ok().map(|m| m.len()),
                    }
                })
                .sum::<u64>()
        })
        .sum();
    let input = |loaded: Vec<LoadedReplica>| -> (PartitionReplicas, Vec<ReplicaProblem>, u64) {
        let bytes: u64 = loaded.iter().map(|l| l.bytes_read).sum();
        let mut problems: Vec<ReplicaProblem> =
            loaded.iter().flat_map(|l| l.problems.clone()).collect();
        // The analysis copies, sorts and keys the headers read: the memory
        // for it is asked for first. Short of it, every replica is an I/O
        // failure (the partition is not compared), never an abort.
        let headers: usize = loaded.iter().map(|l| l.log.batches.len()).sum();
        let need = headers.saturating_mul(std::mem::size_of::<crate::model::BatchSummary>() * 4);
        let mut probe: Vec<u8> = Vec::new();
        let short = crate::format::memory::fallible(|| probe.try_reserve_exact(need)).is_err();
        drop(probe);
        let mut loaded = loaded;
        if short {
            for (l, r) in loaded.iter_mut().zip(replicas) {
                l.log.batches = Vec::new();
                problems.push(ReplicaProblem {
                    path: r.dir.clone(),
                    position: None,
                    message: format!(
                        "not enough memory to compare the {headers} batch headers read from the partition's replicas (about {} MiB)",
                        need >> 20
                    ),
                    io: true,
                });
            }
        }
        let input = PartitionReplicas {
            topic: topic.to_string(),
            partition,
            replicas: loaded
                .into_iter()
                .map(|l| {
                    let mut log = l.log;
                    adjust(&mut log);
                    log
                })
                .collect(),
            reference: reference.clone(),
        };
        (input, problems, bytes)
    };
    let finish = |input: PartitionReplicas, mut diff: PartitionDiff, scan: ScanInfo, problems| {
        diff.scan = Some(scan);
        let loss = evidence.complete(&mut diff, &input, replicas);
        PartitionResult {
            diff,
            loss,
            logs: input.replicas,
            problems,
            left_out: Vec::new(),
        }
    };
    let full = |reason: Option<String>, extra_bytes: u64| -> PartitionResult {
        let (input, problems, bytes) = input(load_all(replicas, &ids, None));
        let diff = crate::analysis::diff::diff_partition(&input, options);
        let scan = ScanInfo {
            mode: ScanMode::Full,
            window_start: None,
            full_reason: reason,
            bytes_read: bytes + extra_bytes,
            log_bytes,
        };
        finish(input, diff, scan, problems)
    };
    if mode == ReadMode::Full {
        return full(None, 0);
    }
    let (window, tail_bytes) = match plan_window(replicas, &ids) {
        Ok(w) => w,
        Err((reason, bytes)) => return full(Some(reason), bytes),
    };
    let loaded = load_all(replicas, &ids, Some(window));
    // A read that failed leaves a replica's window short: it is not
    // analysed; the replicas are read in full, and a read that fails again
    // is reported with the partition.
    let failed = loaded
        .iter()
        .flat_map(|l| l.problems.iter())
        .find(|p| p.io)
        .map(|p| {
            format!(
                "a read of the window failed ({}: {})",
                p.path.display(),
                p.message
            )
        });
    if let Some(reason) = failed.or_else(|| window_start_disagrees(replicas, &ids, &loaded)) {
        let bytes = tail_bytes + loaded.iter().map(|l| l.bytes_read).sum::<u64>();
        return full(Some(reason), bytes);
    }
    let (input, problems, bytes) = input(loaded);
    let diff = crate::analysis::diff::diff_partition(&input, options);
    let below = diff.replicas.iter().find_map(|r| {
        [
            Some(r.truncation_offset),
            Some(r.hw_truncation_offset),
            r.divergence_offset,
        ]
        .into_iter()
        .flatten()
        .find(|&o| o <= window && window > 0)
        .map(|o| (r.broker, o))
    });
    if let Some((broker, o)) = below {
        return full(
            Some(format!(
                "the answer for broker {broker} (offset {o}) is not above the window starting at {window}"
            )),
            tail_bytes + bytes,
        );
    }
    let scan = ScanInfo {
        mode: ScanMode::Window,
        window_start: Some(window),
        full_reason: None,
        bytes_read: tail_bytes + bytes,
        log_bytes,
    };
    finish(input, diff, scan, problems)
}

/// What the window plan knows of one replica before reading its batches.
struct Plan {
    broker: i32,
    leo: i64,
    hw: i64,
    cache: EpochCache,
}

/// The window's start, and the bytes read to find it; or why there is none
/// (with the bytes read so far).
pub fn plan_window(replicas: &[Replica], ids: &[i32]) -> Result<(i64, u64), (String, u64)> {
    let tails: Vec<Result<(i64, u64), String>> = replicas.par_iter().map(tail_end).collect();
    let mut bytes = 0;
    let mut plans = Vec::with_capacity(replicas.len());
    for ((r, &broker), tail) in replicas.iter().zip(ids).zip(tails) {
        let (leo, b) = tail.map_err(|e| (format!("broker {broker}: {e}"), bytes))?;
        bytes += b;
        let Some(cp) = &r.leader_epoch_checkpoint else {
            return Err((
                format!("broker {broker} has no leader-epoch-checkpoint"),
                bytes,
            ));
        };
        let (mut cache, rejected) = EpochCache::from_checkpoint_checked(
            cp.checkpoint
                .entries
                .iter()
                .map(|e| (e.epoch, e.start_offset)),
        );
        if !rejected.is_empty() || cp.checkpoint.entries.is_empty() {
            return Err((
                format!(
                    "broker {broker}'s leader-epoch-checkpoint is empty or has invalid entries"
                ),
                bytes,
            ));
        }
        let first_base = r.segments.first().map(|s| s.base_offset);
        let lso = match (r.log_start_offset, first_base) {
            (Some(a), Some(b)) => a.max(b),
            (a, b) => a.or(b).unwrap_or(0),
        }
        .max(0);
        let leo = leo.max(lso);
        cache.repair_on_load(leo, lso);
        let Some(hw) = r.high_watermark else {
            return Err((
                format!("broker {broker} has no high watermark checkpoint entry"),
                bytes,
            ));
        };
        plans.push(Plan {
            broker,
            leo,
            hw: hw.clamp(lso, leo),
            cache,
        });
    }
    let mut window = i64::MAX;
    for p in &plans {
        window = window.min(p.hw).min(p.leo);
        // The first epoch entry that another replica reaching it lacks.
        for e in p.cache.entries() {
            let disagrees = plans
                .iter()
                .any(|o| o.broker != p.broker && o.leo > e.start_offset && !o.cache.contains(e));
            if disagrees {
                window = window.min(e.start_offset);
                break;
            }
        }
    }
    if window == i64::MAX {
        return Err(("no replica to read".to_string(), bytes));
    }
    // One below: every answer the window supports lies strictly above its
    // start, so an answer at or below it means the window was too short.
    Ok(((window - 1).max(0), bytes))
}

/// Whether the first batch read of some replica carries another epoch than
/// its checkpoint gives that offset (the window would then misplace an
/// epoch's start): the reason, if so.
pub fn window_start_disagrees(
    replicas: &[Replica],
    ids: &[i32],
    loaded: &[LoadedReplica],
) -> Option<String> {
    for ((r, &broker), l) in replicas.iter().zip(ids).zip(loaded) {
        let (Some(first), Some(cp)) = (l.log.batches.first(), &r.leader_epoch_checkpoint) else {
            continue;
        };
        if first.partition_leader_epoch < 0 {
            continue;
        }
        let cache = EpochCache::from_checkpoint(
            cp.checkpoint
                .entries
                .iter()
                .map(|e| (e.epoch, e.start_offset)),
        );
        if cache.epoch_for_offset(first.base_offset) != Some(first.partition_leader_epoch) {
            return Some(format!(
                "broker {broker}: the batch at {} has epoch {}, its leader-epoch-checkpoint says {:?}",
                first.base_offset,
                first.partition_leader_epoch,
                cache.epoch_for_offset(first.base_offset)
            ));
        }
    }
    None
}
