//! The rules over what a capture holds: discovery's diagnostics as
//! findings, the epoch and offset rules of one replica, the cross-replica
//! rules of a partition (over the engine's diff and loss) and the rules
//! against the controller's view. Pure functions over model values.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::codes::{code, finding};
use super::report::{display, BatchKey, BatchPlace, ReplicaResult};
use crate::analysis::timeline::timeline_of_spans;
use crate::format::checkpoint::{OffsetCheckpointKind, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::model::check::{Finding, Location, LossBrief, PartitionCheck};
use crate::model::diff::{DivergenceKind, FindingKind, PartitionDiff};
use crate::model::loss::{bounds_words, PartitionLoss, Verdict};
use crate::model::{Capture, ControllerView, Level, Replica};

/// The base offset of the first segment whose indexes Kafka rebuilds from
/// the log when the broker next starts (`None`: it loads every segment's
/// indexes as they are). Kafka skips recovery when the log directory holds
/// `.kafka_cleanshutdown`; otherwise it recovers every segment from the one
/// holding the checkpointed recovery point (0 when the partition is not
/// listed) to the end, resetting and rebuilding its `.index` and
/// `.timeindex`. The metadata log is opened with no recovery point and as
/// not cleanly shut down, so all of it is recovered. Index bytes of such a
/// segment are never read by Kafka: entries past the valid prefix are
/// leftovers (an index's truncation moves its position back without
/// clearing the bytes after it), not damage.
///
/// `clean_shutdown`: `Some(true)` when the replica's log directory holds the
/// marker, `Some(false)` when the directory was read and does not, `None`
/// when the directory itself is not in the capture (a partition directory
/// copied on its own: Kafka's next start cannot be known, and the lenient
/// reading is taken, as for a broker that crashed).
pub fn rebuilt_on_restart(
    is_metadata_log: bool,
    clean_shutdown: Option<bool>,
    recovery_point: Option<i64>,
    segment_bases: &[i64],
) -> Option<i64> {
    if is_metadata_log {
        return Some(i64::MIN);
    }
    if clean_shutdown == Some(true) {
        return None;
    }
    let rp = recovery_point.unwrap_or(0);
    // the segment holding the recovery point: the last whose base is at or
    // below it (every segment when none is)
    Some(
        segment_bases
            .iter()
            .copied()
            .filter(|&b| b <= rp)
            .max()
            .unwrap_or(i64::MIN),
    )
}

/// Discovery's diagnostics as findings: checkpoint files Kafka cannot read,
/// and every warning.
pub fn capture_findings(capture: &Capture, out: &mut Vec<Finding>) {
    // Replica identity of a path inside a partition directory.
    let mut dirs: BTreeMap<&Path, (i32, &str, i32)> = BTreeMap::new();
    for r in capture
        .partitions
        .values()
        .flatten()
        .chain(&capture.metadata_logs)
        .chain(&capture.set_aside)
    {
        if let Some(n) = r.node_id {
            dirs.insert(&r.dir, (n, &r.topic, r.partition));
        }
    }
    let brokers: BTreeMap<&Path, i32> = capture
        .brokers
        .iter()
        .filter_map(|b| Some((b.path.as_path(), b.node_id?)))
        .collect();
    for d in &capture.warnings {
        let name = d.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_checkpoint = name == LEADER_EPOCH_CHECKPOINT_FILE
            || OffsetCheckpointKind::from_file_name(name).is_some();
        // (both sorted, by discovery)
        let unreadable = capture.unreadable.binary_search(&d.path).is_ok();
        let refused = capture.refused.binary_search(&d.path).is_ok();
        let code = match (is_checkpoint, d.level) {
            _ if unreadable && d.level == Level::Warning => code::FILE_UNREADABLE,
            _ if refused && d.level == Level::Warning => code::FILE_TOO_LARGE,
            (true, Level::Warning) if d.message.contains("Kafka would fail to read it") => {
                code::CHECKPOINT_UNREADABLE
            }
            (true, Level::Note) if d.message.contains("its writer never leaves this") => {
                code::CHECKPOINT_ODDITY
            }
            (_, Level::Warning) => code::CAPTURE_WARNING,
            (_, Level::Note) if name.ends_with(".tmp") => code::WRITE_INTERRUPTED,
            (_, Level::Note) => continue,
        };
        let mut loc = Location {
            file: Some(display(&d.path)),
            ..Location::default()
        };
        let parent = d.path.parent();
        if let Some(&(b, t, p)) = parent
            .and_then(|p| dirs.get(p))
            .or_else(|| dirs.get(d.path.as_path()))
        {
            loc.broker = Some(b);
            loc.topic = Some(t.to_string());
            loc.partition = Some(p);
        } else if let Some(&b) = parent
            .and_then(|p| brokers.get(p))
            .or_else(|| brokers.get(d.path.as_path()))
        {
            loc.broker = Some(b);
        }
        out.push(finding(code, loc, d.message.clone()));
    }
}

/// The capture holds no metadata log: one finding saying what that leaves
/// unknown, with the brokers' mode as their `meta.properties` give it.
pub fn no_metadata_log(capture: &Capture) -> Finding {
    let versions = capture.meta_versions();
    let mode = match (versions.contains(&0), versions.contains(&1)) {
        (true, false) => "the brokers' meta.properties say ZooKeeper mode (version 0): the controller's state is in ZooKeeper, not in the log directories",
        (false, true) => "the brokers' meta.properties say KRaft (version 1): the metadata log was not copied",
        (true, true) => "the brokers' meta.properties mix ZooKeeper and KRaft versions",
        (false, false) => "no readable meta.properties says the cluster's mode",
    };
    finding(
        code::NO_METADATA_LOG,
        Location::default(),
        format!(
            "the capture holds no __cluster_metadata log; {mode}. Unknown from it: the leader and ISR of each partition (the reference is chosen by leader epochs), the ISR history (lost records cannot be bounded), unclean elections, the topic settings, and inter.broker.protocol.version (the truncation protocol is assumed)"
        ),
    )
}

/// A partition compared with no other replica (one replica captured, or
/// one read) whose assigned replicas (metadata log) are not all in the
/// capture: `missing` names them. A partition whose replicas were compared
/// has the diff's finding instead.
pub fn not_captured_uncompared(topic: &str, partition: i32, missing: &[i32]) -> Option<Finding> {
    if missing.is_empty() {
        return None;
    }
    let list: Vec<String> = missing.iter().map(i32::to_string).collect();
    Some(finding(
        code::REPLICA_NOT_CAPTURED,
        Location {
            topic: Some(topic.to_string()),
            partition: Some(partition),
            ..Location::default()
        },
        format!(
            "assigned replicas not in the capture (metadata log): {} {}; with fewer than two replicas read, nothing is compared and no loss is computed: capture every assigned replica",
            if missing.len() == 1 { "broker" } else { "brokers" },
            list.join(", ")
        ),
    ))
}

/// Checks against the controller's view, when the capture holds a metadata
/// log: what it could not give, and unclean elections (the replicas' epochs
/// are checked against it partition by partition, in
/// [`epoch_beyond_controller`]).
pub fn controller_findings(view: &ControllerView) -> Vec<Finding> {
    let mut out = Vec::new();
    let source = view.source.as_ref().map(|p| display(p));
    // What the metadata log could not give: the histories lack it.
    for p in &view.problems {
        out.push(finding(
            if p.io {
                code::FILE_UNREADABLE
            } else {
                code::RECORDS_UNREADABLE
            },
            Location {
                file: Some(p.file.clone()),
                position: p.position,
                topic: Some(crate::format::names::METADATA_TOPIC.to_string()),
                partition: Some(0),
                ..Default::default()
            },
            p.message.clone(),
        ));
    }
    for ((topic, partition), history) in &view.partitions {
        for e in history.changes.iter().filter(|e| e.unclean) {
            out.push(finding(
                code::UNCLEAN_ELECTION,
                Location {
                    topic: Some(topic.clone()),
                    partition: Some(*partition),
                    file: source.clone(),
                    offset: Some(e.metadata_offset),
                    ..Default::default()
                },
                format!(
                    "the controller elected broker {} leader in epoch {} from outside the ISR (metadata log offset {})",
                    e.leader, e.leader_epoch, e.metadata_offset
                ),
            ));
        }
    }
    out
}

/// The controller's rule about one partition's replicas (`reps`): a batch
/// whose leader epoch is above every epoch the controller assigned the
/// partition in the metadata log (`view`).
pub fn epoch_beyond_controller(
    view: &ControllerView,
    topic: &str,
    partition: i32,
    reps: &[&ReplicaResult],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(history) = view.partitions.get(&(topic.to_string(), partition)) else {
        return out;
    };
    let Some(max_epoch) = history.changes.iter().map(|e| e.leader_epoch).max() else {
        return out;
    };
    let base = Location {
        topic: Some(topic.to_string()),
        partition: Some(partition),
        ..Default::default()
    };
    for r in reps {
        // the first batch of an epoch above it starts a span
        let Some((s, place)) = r
            .spans
            .spans
            .iter()
            .zip(&r.span_starts)
            .find(|(s, _)| s.epoch > max_epoch)
        else {
            continue;
        };
        let mut l = base.clone();
        l.broker = Some(r.log.broker);
        r.place(&mut l, *place);
        l.offset = Some(s.start_offset);
        out.push(finding(
            code::EPOCH_BEYOND_CONTROLLER,
            l,
            format!(
                "batch at offset {} has leader epoch {}, but the controller's highest epoch for the partition is {max_epoch}",
                s.start_offset, s.epoch
            ),
        ));
    }
    out
}

/// When a read of one of `r`'s files failed: keeps only what says so
/// (`file-unreadable` findings) and marks it [`ReplicaResult::unreadable`],
/// so that nothing else is inferred from it.
pub fn settle_unreadable(r: &mut ReplicaResult) {
    if r.findings.iter().any(|f| f.code == code::FILE_UNREADABLE) {
        r.findings.retain(|f| f.code == code::FILE_UNREADABLE);
        r.unreadable = true;
    }
}

/// Leader epochs in the batches and the `leader-epoch-checkpoint`, through
/// [`crate::analysis::timeline::timeline_of_spans`].
pub fn check_epochs(replica: &Replica, base: &Location, r: &mut ReplicaResult) {
    let t = timeline_of_spans(&r.log, r.spans.clone());
    let has_epochs = r.spans.spans.iter().any(|s| s.epoch >= 0);
    let cp_loc = || Location {
        file: replica
            .leader_epoch_checkpoint
            .as_ref()
            .map(|c| display(&c.path))
            .or_else(|| Some(display(&replica.dir.join(LEADER_EPOCH_CHECKPOINT_FILE)))),
        ..base.clone()
    };
    for d in &t.disagreements {
        let (code, loc) = match d.code {
            "epoch-regression" => {
                let loc = match r.regressions.iter().find(|(_, e, _)| Some(*e) == d.epoch) {
                    Some(&(o, _, place)) => {
                        let mut l = base.clone();
                        l.offset = Some(o);
                        r.place(&mut l, place);
                        l
                    }
                    None => base.clone(),
                };
                (code::EPOCH_REGRESSION, loc)
            }
            "checkpoint-missing" => {
                if !has_epochs {
                    // v0/v1 logs and empty logs carry no epochs to record.
                    continue;
                }
                (code::CHECKPOINT_MISSING, cp_loc())
            }
            "checkpoint-not-monotonic" => (code::CHECKPOINT_NOT_MONOTONIC, cp_loc()),
            "checkpoint-past-log-end" => (code::CHECKPOINT_PAST_LOG_END, cp_loc()),
            "epoch-missing-from-checkpoint" => {
                let mut l = cp_loc();
                l.offset = t
                    .from_batches
                    .iter()
                    .find(|s| Some(s.epoch) == d.epoch)
                    .map(|s| s.start_offset);
                (code::EPOCH_MISSING_FROM_CHECKPOINT, l)
            }
            "epoch-start-mismatch" => {
                let mut l = cp_loc();
                l.offset = t
                    .from_batches
                    .iter()
                    .find(|s| Some(s.epoch) == d.epoch)
                    .map(|s| s.start_offset);
                (code::EPOCH_START_MISMATCH, l)
            }
            "checkpoint-epoch-without-batches" => {
                (code::CHECKPOINT_EPOCH_WITHOUT_BATCHES, cp_loc())
            }
            _ => continue,
        };
        r.findings.push(finding(code, loc, d.message.clone()));
    }
}

/// Log start ≤ high watermark ≤ log end; recovery point ≤ log end.
pub fn check_offsets(replica: &Replica, base: &Location, r: &mut ReplicaResult) {
    let lso = r.log.log_start_offset;
    let leo = r.log.log_end_offset;
    let cp_file = |name: &str| Location {
        file: Some(display(&replica.log_dir.join(name))),
        ..base.clone()
    };
    let hw_file = OffsetCheckpointKind::ReplicationOffset.file_name();
    let rp_file = OffsetCheckpointKind::RecoveryPoint.file_name();
    if lso > leo {
        r.findings.push(finding(
            code::LOG_START_BEYOND_LOG_END,
            Location {
                offset: Some(lso),
                ..base.clone()
            },
            format!("log start offset {lso} is above the log end offset {leo}"),
        ));
    }
    match replica.high_watermark {
        // an empty log: its high watermark can only be its start, nothing
        // is unknown (and a capture can hold very many such directories)
        None if leo <= lso => {}
        None => r.findings.push(finding(
            code::HIGH_WATERMARK_MISSING,
            cp_file(hw_file),
            format!("{hw_file} has no entry for this partition"),
        )),
        Some(hw) => {
            if hw < lso {
                r.findings.push(finding(
                    code::HIGH_WATERMARK_BELOW_LOG_START,
                    Location {
                        offset: Some(hw),
                        ..cp_file(hw_file)
                    },
                    format!("high watermark {hw} is below the log start offset {lso}"),
                ));
            }
            if hw > leo {
                r.findings.push(finding(
                    code::HIGH_WATERMARK_BEYOND_LOG_END,
                    Location {
                        offset: Some(hw),
                        ..cp_file(hw_file)
                    },
                    format!(
                        "high watermark {hw} is above the log end offset {leo}: {} not on disk",
                        crate::format::text::count(
                            u64::try_from(hw.saturating_sub(leo)).unwrap_or(0),
                            "committed offset is",
                            "committed offsets are"
                        )
                    ),
                ));
            }
        }
    }
    if replica.recovery_point.is_none() && leo > lso {
        r.findings.push(finding(
            code::RECOVERY_POINT_MISSING,
            cp_file(rp_file),
            format!("{rp_file} has no entry for this partition"),
        ));
    }
    if let Some(rp) = replica.recovery_point {
        if rp > leo {
            r.findings.push(finding(
                code::RECOVERY_POINT_BEYOND_LOG_END,
                Location {
                    offset: Some(rp),
                    ..cp_file(rp_file)
                },
                format!("recovery point {rp} is above the log end offset {leo}"),
            ));
        } else if rp < leo {
            r.findings.push(finding(
                code::RECOVERY_POINT_BEHIND_LOG_END,
                Location {
                    offset: Some(rp),
                    ..cp_file(rp_file)
                },
                format!(
                    "recovery point {rp} is below the log end offset {leo}: offsets [{rp}, {leo}) were not known flushed"
                ),
            ));
        }
    }
}

/// The replicas' offsets that bound the log-matching check of a partition:
/// `[lo, min_hw)`, below the smallest high watermark and above every log
/// start and the highest cleaned offset (each broker's cleaner compacts on
/// its own schedule: below it, replicas legitimately hold different
/// batches). Empty when `lo >= min_hw`.
pub fn agreement_range(reps: &[&ReplicaResult]) -> (i64, i64) {
    let min_hw = reps
        .iter()
        .map(|r| {
            r.log
                .high_watermark
                .unwrap_or(r.log.log_start_offset)
                .clamp(
                    r.log.log_start_offset,
                    r.log.log_end_offset.max(r.log.log_start_offset),
                )
        })
        .min()
        .unwrap_or(0);
    let cleaned_to = reps.iter().filter_map(|r| r.cleaned_to).max();
    let lo = reps
        .iter()
        .map(|r| r.log.log_start_offset)
        .chain(cleaned_to)
        .max()
        .unwrap_or(0);
    (lo, min_hw)
}

/// What one replica holds at an offset where some replica starts a batch:
/// the batch starting there, else the batch spanning it (each with where it
/// is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtOffset {
    /// Index of the replica in the partition's replicas.
    pub replica: usize,
    /// The batch starting at the offset.
    pub starts: Option<(BatchKey, BatchPlace)>,
    /// Without one, the batch holding the offset.
    pub holds: Option<(BatchKey, BatchPlace)>,
}

/// The partition the log-matching rule judges: its replicas, the smallest
/// high watermark and the diff's reference broker.
#[derive(Clone, Copy)]
pub struct LogMatching<'a> {
    /// Topic.
    pub topic: &'a str,
    /// Partition.
    pub partition: i32,
    /// The smallest high watermark (the rule's range ends there).
    pub min_hw: i64,
    /// The replicas.
    pub reps: &'a [&'a ReplicaResult],
    /// The diff's reference broker (it wins a tie).
    pub reference: i32,
}

/// The log-matching rule at one offset `o` below the smallest high
/// watermark `min_hw` where some replica starts a batch: every replica
/// holding the offset (`at`, one entry each) must start the same batch
/// there. The largest group of replicas agreeing is right (on a tie, the
/// one holding the diff's `reference`); each other replica gets one
/// finding, the first time (`reported` keeps who has one).
pub fn log_matching_at(
    rule: &LogMatching<'_>,
    o: i64,
    at: &[AtOffset],
    reported: &mut BTreeSet<i32>,
    out: &mut Vec<Finding>,
) {
    let LogMatching {
        topic,
        partition,
        min_hw,
        reps,
        reference,
    } = *rule;
    let mut groups: BTreeMap<Option<BatchKey>, Vec<usize>> = BTreeMap::new();
    for a in at {
        groups
            .entry(a.starts.map(|(k, _)| k))
            .or_default()
            .push(a.replica);
    }
    if groups.len() < 2 {
        return;
    }
    let Some(best) = groups
        .iter()
        .max_by_key(|(_, v)| (v.len(), v.iter().any(|&i| reps[i].log.broker == reference)))
        .map(|(k, _)| *k)
    else {
        return;
    };
    let holders: Vec<String> = groups
        .get(&best)
        .map(|v| v.iter().map(|&i| reps[i].log.broker.to_string()).collect())
        .unwrap_or_default();
    for (key, members) in &groups {
        if *key == best {
            continue;
        }
        for &i in members {
            let r = reps[i];
            if !reported.insert(r.log.broker) {
                continue;
            }
            let mut l = Location {
                broker: Some(r.log.broker),
                topic: Some(topic.to_string()),
                partition: Some(partition),
                offset: Some(o),
                ..Location::default()
            };
            let mine = at
                .iter()
                .find(|a| a.replica == i)
                .and_then(|a| a.starts.or(a.holds));
            let what = match mine {
                Some(((b, last, e, crc), place)) => {
                    r.place(&mut l, place);
                    format!(
                        "batch [{b}, {}) (epoch {e}, crc {crc:#010x})",
                        last.saturating_add(1)
                    )
                }
                None => format!("no batch boundary at offset {o}"),
            };
            let theirs = match best {
                Some((b, last, e, crc)) => {
                    format!(
                        "batch [{b}, {}) (epoch {e}, crc {crc:#010x})",
                        last.saturating_add(1)
                    )
                }
                None => "no batch starting there".to_string(),
            };
            out.push(finding(
                code::LOG_MATCHING_VIOLATION,
                l,
                format!(
                    "{what} differs from {} {}, which {} {theirs}, below the smallest high watermark {min_hw}",
                    if holders.len() == 1 { "broker" } else { "brokers" },
                    holders.join(", "),
                    if holders.len() == 1 { "holds" } else { "hold" }
                ),
            ));
        }
    }
}

/// Findings about the nodes' own logs: a file not read whole (a gzip
/// stream cut short, a cap reached) is a capture warning, one whose read
/// failed is unreadable; a file holding no record in Kafka's layout is a
/// capture warning.
pub fn broker_log_findings(logs: &crate::model::broker_log::BrokerLogs, out: &mut Vec<Finding>) {
    for f in &logs.files {
        let loc = Location {
            file: Some(display(&f.path)),
            broker: f.node,
            ..Location::default()
        };
        if let Some(why) = &f.stopped {
            let c = if f.io_error {
                code::FILE_UNREADABLE
            } else {
                code::CAPTURE_WARNING
            };
            out.push(finding(c, loc, format!("Kafka log: {why}")));
        } else if f.entries == 0 && f.lines > 0 {
            out.push(finding(
                code::CAPTURE_WARNING,
                loc,
                "Kafka log with no record in Kafka's layout ([%d] %p %m (%c)): nothing read from it"
                    .to_string(),
            ));
        }
    }
}

/// Cross-replica checks of one partition over the engine's diff and loss:
/// the predicted truncation, divergence and loss. `reported`: the brokers
/// the log-matching check ([`log_matching_at`]) already reported.
pub fn check_partition(
    topic: &str,
    partition: i32,
    reps: &[&ReplicaResult],
    diff: &PartitionDiff,
    loss: &PartitionLoss,
    reported: &BTreeSet<i32>,
) -> (Vec<Finding>, PartitionCheck) {
    let mut out = Vec::new();
    let base_of = |r: &ReplicaResult| Location {
        broker: Some(r.log.broker),
        topic: Some(topic.to_string()),
        partition: Some(partition),
        ..Location::default()
    };
    let mismatch_reported = reported;
    if let Some(f) = crate::analysis::loss::not_captured_finding(loss) {
        out.push(finding(
            code::REPLICA_NOT_CAPTURED,
            Location {
                topic: Some(topic.to_string()),
                partition: Some(partition),
                ..Location::default()
            },
            f.detail,
        ));
    }
    for f in crate::analysis::broker_log::disagreements(&diff.broker_log) {
        out.push(finding(
            code::PREDICTION_DISAGREES_WITH_BROKER_LOG,
            Location {
                topic: Some(topic.to_string()),
                partition: Some(partition),
                ..Location::default()
            },
            f.detail,
        ));
    }
    if let Some(alt) = diff.protocol.alternative {
        for rd in &diff.replicas {
            let Some(at) = rd
                .alternative_truncation_offset
                .filter(|a| *a != rd.truncation_offset)
            else {
                continue;
            };
            let Some(r) = reps.iter().find(|r| r.log.broker == rd.broker) else {
                continue;
            };
            out.push(finding(
                code::TRUNCATION_DEPENDS_ON_PROTOCOL,
                r.loc_of_offset(&base_of(r), rd.truncation_offset.min(at)),
                format!(
                    "following broker {}, Kafka truncates it to {} under {} and to {at} under {}; the capture does not say which the cluster runs (give --inter-broker-protocol)",
                    diff.reference.broker,
                    rd.truncation_offset,
                    diff.protocol.protocol.describe(),
                    alt.describe()
                ),
            ));
        }
    }
    for rd in &diff.replicas {
        let Some(r) = reps.iter().find(|r| r.log.broker == rd.broker) else {
            continue;
        };
        let base = base_of(r);
        for f in &rd.findings {
            match f.kind {
                FindingKind::LogMatchingViolation => {
                    if mismatch_reported.contains(&rd.broker) {
                        continue;
                    }
                    let off = rd.divergence_offset.unwrap_or(rd.log_start_offset);
                    out.push(finding(
                        code::LOG_MATCHING_VIOLATION,
                        r.loc_of_offset(&base, off),
                        format!("{} (reference broker {})", f.detail, diff.reference.broker),
                    ));
                }
                FindingKind::ProtocolKeepsDivergentRecords => out.push(finding(
                    code::PROTOCOL_KEEPS_DIVERGENT,
                    r.loc_of_offset(&base, rd.divergence_offset.unwrap_or(rd.truncation_offset)),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                FindingKind::ReferenceBehindReplicaEpoch => out.push(finding(
                    code::REPLICA_EPOCH_AHEAD,
                    base.clone(),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                FindingKind::DisjointLogs => out.push(finding(
                    code::REPLICAS_DISJOINT,
                    base.clone(),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                FindingKind::TruncationNotConverged | FindingKind::LogReset => out.push(finding(
                    code::TRUNCATION_UNRESOLVED,
                    base.clone(),
                    format!("{} (reference broker {})", f.detail, diff.reference.broker),
                )),
                _ => {}
            }
        }
        if rd.records_to_truncate > 0 || rd.divergence_kind == DivergenceKind::Diverged {
            out.push(finding(
                code::DIVERGENT_TAIL,
                r.loc_of_offset(&base, rd.divergence_offset.unwrap_or(rd.truncation_offset)),
                format!(
                    "diverges from broker {} at offset {}; Kafka truncates it to offset {}, cutting {} ({} on no other replica; {} lost, committed: {})",
                    diff.reference.broker,
                    rd.divergence_offset.map_or("-".to_string(), |d| d.to_string()),
                    rd.truncation_offset,
                    crate::format::text::count(
                        u64::try_from(rd.records_to_truncate).unwrap_or(0),
                        "record",
                        "records"
                    ),
                    rd.records_only_here,
                    rd.lost_cut,
                    bounds_words(
                        rd.committed_proven_cut,
                        rd.committed_possible_cut
                    )
                ),
            ));
        } else if rd.divergence_kind == DivergenceKind::Prefix {
            out.push(finding(
                code::REPLICA_BEHIND,
                Location {
                    offset: Some(rd.log_end_offset),
                    ..base.clone()
                },
                format!(
                    "log ends at {} while the reference broker {} ends at {}",
                    rd.log_end_offset,
                    diff.reference.broker,
                    diff.replicas
                        .iter()
                        .find(|x| x.broker == diff.reference.broker)
                        .map_or(0, |x| x.log_end_offset)
                ),
            ));
        }
    }
    // The partition's loss, counted once.
    let code = match loss.verdict {
        Verdict::CommittedLost => Some(code::COMMITTED_RECORDS_LOST),
        Verdict::PossiblyCommittedLost | Verdict::UnknownLost => {
            Some(code::POSSIBLY_COMMITTED_RECORDS_LOST)
        }
        Verdict::UncommittedLost => Some(code::UNCOMMITTED_RECORDS_LOST),
        Verdict::NothingLost => None,
    };
    if let Some(code) = code {
        let location = Location {
            topic: Some(topic.to_string()),
            partition: Some(partition),
            offset: loss.offsets.iter().map(|r| r.start).min(),
            ..Location::default()
        };
        out.push(finding(
            code,
            location,
            format!(
                "following broker {}: {}",
                diff.reference.broker,
                loss.headline()
            ),
        ));
    }
    let summary = PartitionCheck {
        left_out: Vec::new(),
        topic: topic.to_string(),
        partition,
        reference: diff.reference.clone(),
        loss: LossBrief {
            records: loss.records,
            control_records: loss.control_records,
            committed_proven: loss.committed_proven,
            committed_possible: loss.committed_possible,
            committed_unknown: loss.committed_unknown,
            verdict: loss.verdict.name().to_string(),
        },
    };
    (out, summary)
}

/// The findings of one partition's impact (`klf impact`): hanging
/// transactions, consumer groups that reset or skip records, producers
/// whose sequences are cut.
pub fn impact_findings(i: &crate::model::impact::PartitionImpact) -> Vec<Finding> {
    use crate::model::impact::{GroupState, TxnOutcome};
    let mut out = Vec::new();
    let at = |offset: Option<i64>| Location {
        topic: Some(i.topic.clone()),
        partition: Some(i.partition),
        offset,
        ..Location::default()
    };
    for t in i
        .transactions
        .iter()
        .filter(|t| t.state == TxnOutcome::Hanging)
    {
        out.push(finding(
            code::HANGING_TRANSACTION,
            at(Some(t.first_offset)),
            t.detail.clone(),
        ));
    }
    for g in &i.groups {
        let code = match g.state {
            GroupState::Diverged | GroupState::PastLogEnd | GroupState::EpochUnknown => {
                code::CONSUMER_GROUP_RESET
            }
            GroupState::SilentSkip => code::CONSUMER_GROUP_SKIPS_RECORDS,
            GroupState::Unaffected | GroupState::NoOffset | GroupState::Unreadable => continue,
        };
        out.push(finding(
            code,
            at(g.committed_offset),
            format!("group {}: {}", g.group, g.detail),
        ));
    }
    for p in i.producers.iter().filter(|p| p.state != "sent-again") {
        out.push(finding(
            code::PRODUCER_SEQUENCES_CUT,
            at(i.first_lost_offset),
            p.detail.clone(),
        ));
    }
    out
}
