//! klf's predicted truncations held against the ones the brokers logged.
//!
//! A capture is a replica's state at one moment; a broker's log runs on
//! past it. The moment is found in the log, not in the clocks: when a
//! broker starts it logs each partition's state as loaded (`Completed load
//! of Log(… logEndOffset=E)`), and the last such start-up whose log end
//! offset is the captured one is the broker starting from the captured
//! state. The first truncation of the partition it logs after that (before
//! it loads the partition again) is the one klf predicts; truncations
//! logged before it are history the data already shows.
//!
//! Kafka logs a follower's truncation twice: the fetcher's decision
//! (`Truncating partition T-P with TruncationState(offset=O, completed=C)`,
//! once per round; `completed=false` only between rounds of the older
//! protocol) and the log's own act (`Truncating to offset O`, or `…has no
//! effect` when O is at or past the log end). The fetcher's completed line
//! is the answer when the log holds one; else the log's first line.

use crate::format::kafka_log::Event;
use crate::model::broker_log::{
    LogSource, LoggedEvent, LoggedTruncation, NotCompared, TruncationCheck, Verdict,
};
use crate::model::diff::{DiffFinding, FindingKind, PartitionDiff};
use crate::model::truncation::Outcome;

/// For each replica of `diff` whose broker logged something of its
/// truncation, what the log says against klf's prediction. `events` are
/// the statements of every node about this partition, per node in the
/// order it logged them.
pub fn check_truncations(diff: &PartitionDiff, events: &[&LoggedEvent]) -> Vec<TruncationCheck> {
    let mut out = Vec::new();
    for r in &diff.replicas {
        let mine: Vec<&LoggedEvent> = events
            .iter()
            .copied()
            .filter(|e| e.node == r.broker)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let truncations: Vec<usize> = (0..mine.len())
            .filter(|&i| is_truncation(&mine[i].event))
            .collect();
        // the last start-up from the captured state
        let anchor = mine.iter().rposition(|e| {
            matches!(e.event, Event::LogLoaded { log_end_offset, .. } if log_end_offset == r.log_end_offset)
        });
        // the last time it became leader in an epoch whose records the
        // capture holds: what it logged before is history
        let led = mine.iter().rposition(|e| {
            matches!(e.event, Event::BecameLeader { leader_epoch, .. }
                if r.epoch_cache.iter().any(|x| x.epoch == leader_epoch))
        });
        if let Some(led) = led.filter(|&l| anchor.is_none_or(|a| a < l)) {
            let before = truncations
                .iter()
                .filter(|&&i| i < led && matches!(mine[i].event, Event::LogTruncation { .. }))
                .count() as u64;
            let after = truncations
                .iter()
                .find(|&&i| i > led && matches!(mine[i].event, Event::LogTruncation { .. }));
            if before > 0 || after.is_some() {
                let Event::BecameLeader { leader_epoch, .. } = mine[led].event else {
                    continue;
                };
                out.push(TruncationCheck {
                    broker: r.broker,
                    predicted: r.truncation_offset,
                    loaded_at: None,
                    logged: after.and_then(|&i| logged(&mine, i, None, None)),
                    verdict: Verdict::NotCompared,
                    why_not_compared: Some(NotCompared::LedInCapturedEpoch {
                        epoch: leader_epoch,
                        source: mine[led].source.clone(),
                    }),
                    logged_before_capture: before,
                });
            }
            continue;
        }
        let Some(anchor) = anchor else {
            // a truncation that cut something, when the log cannot say
            // whether it came before or after the capture
            let last = truncations
                .iter()
                .rev()
                .find(|&&i| matches!(mine[i].event, Event::LogTruncation { .. }));
            if let Some(&last) = last {
                out.push(TruncationCheck {
                    broker: r.broker,
                    predicted: r.truncation_offset,
                    loaded_at: None,
                    logged: logged(&mine, last, None, None),
                    verdict: Verdict::NotCompared,
                    why_not_compared: Some(NotCompared::NoLoadOfCapturedState),
                    logged_before_capture: 0,
                });
            }
            continue;
        };
        // one `Truncating to offset O` line per truncation the log made
        let before = truncations
            .iter()
            .filter(|&&i| i < anchor && matches!(mine[i].event, Event::LogTruncation { .. }))
            .count() as u64;
        // until the partition is loaded again (another start-up)
        let end = mine[anchor + 1..]
            .iter()
            .position(|e| matches!(e.event, Event::LogLoaded { .. }))
            .map_or(mine.len(), |i| anchor + 1 + i);
        let window = anchor + 1..end;
        let chosen = window
            .clone()
            .find(|&i| {
                matches!(
                    mine[i].event,
                    Event::FetcherTruncation {
                        completed: Some(true) | None,
                        ..
                    }
                )
            })
            .or_else(|| {
                window.clone().find(|&i| {
                    matches!(
                        mine[i].event,
                        Event::LogTruncation { .. } | Event::LogTruncationNoEffect { .. }
                    )
                })
            });
        let Some(chosen) = chosen else {
            if before > 0 {
                out.push(TruncationCheck {
                    broker: r.broker,
                    predicted: r.truncation_offset,
                    loaded_at: Some(mine[anchor].source.clone()),
                    logged: None,
                    verdict: Verdict::NotCompared,
                    why_not_compared: Some(NotCompared::NothingLoggedAfterStartUp),
                    logged_before_capture: before,
                });
            }
            continue;
        };
        // the leader followed: the fetcher's, else the follower line's
        let follower_leader = mine[anchor + 1..=chosen]
            .iter()
            .rev()
            .find_map(|e| match e.event {
                Event::BecameFollower { leader, .. } => leader,
                _ => None,
            });
        let logged = logged(&mine, chosen, follower_leader, Some(r.log_end_offset));
        let leader = logged.as_ref().and_then(|l| l.leader);
        let (verdict, why) = match leader {
            Some(l) if l != diff.reference.broker => (
                Verdict::NotCompared,
                Some(NotCompared::OtherLeader {
                    logged: l,
                    reference: diff.reference.broker,
                }),
            ),
            _ if r.truncation_outcome != Outcome::Converged => {
                (Verdict::NotCompared, Some(NotCompared::NoPrediction))
            }
            _ => {
                let at = logged.as_ref().map_or(r.log_end_offset, |l| l.offset);
                if at == r.truncation_offset {
                    (Verdict::Agrees, None)
                } else if r.alternative_truncation_offset == Some(at) {
                    (Verdict::AgreesWithAlternative, None)
                } else {
                    (Verdict::Disagrees, None)
                }
            }
        };
        out.push(TruncationCheck {
            broker: r.broker,
            predicted: r.truncation_offset,
            loaded_at: Some(mine[anchor].source.clone()),
            logged,
            verdict,
            why_not_compared: why,
            logged_before_capture: before,
        });
    }
    out
}

/// The partition-level finding of each broker whose logged truncation
/// disagrees with klf's prediction.
pub fn disagreements(checks: &[TruncationCheck]) -> Vec<DiffFinding> {
    checks
        .iter()
        .filter(|c| c.verdict == Verdict::Disagrees)
        .filter_map(|c| {
            let l = c.logged.as_ref()?;
            Some(DiffFinding {
                kind: FindingKind::PredictionDisagreesWithBrokerLog,
                detail: format!(
                    "broker {} logged a truncation to offset {} ({}:{}) after starting from the captured state; klf predicts {}",
                    c.broker,
                    l.offset,
                    l.source.file.display(),
                    l.source.line,
                    c.predicted
                ),
            })
        })
        .collect()
}

fn is_truncation(e: &Event) -> bool {
    matches!(
        e,
        Event::FetcherTruncation { .. }
            | Event::LogTruncation { .. }
            | Event::LogTruncationNoEffect { .. }
    )
}

/// The truncation at `i`: with the log end offset it started from (the
/// captured one), as the offset the log ends at after it; without, as
/// logged.
fn logged(
    mine: &[&LoggedEvent],
    i: usize,
    follower_leader: Option<i32>,
    log_end: Option<i64>,
) -> Option<LoggedTruncation> {
    let e = mine[i];
    let end = log_end.unwrap_or(i64::MAX);
    let (logged_offset, offset, leader) = match e.event {
        Event::FetcherTruncation { offset, leader, .. } => {
            (offset, offset.min(end), leader.or(follower_leader))
        }
        Event::LogTruncation { offset, .. } => (offset, offset.min(end), follower_leader),
        Event::LogTruncationNoEffect { offset, .. } => {
            (offset, log_end.unwrap_or(offset), follower_leader)
        }
        _ => return None,
    };
    Some(LoggedTruncation {
        offset,
        logged_offset,
        leader,
        logged_at: e.time.clone(),
        source: LogSource {
            file: e.source.file.clone(),
            line: e.source.line,
        },
        text: e.text.clone(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::format::kafka_log::{entries, event, Item, Level};
    use crate::model::diff::{
        DiffOptions, DivergenceKind, ReferenceChoice, ReferenceReason, ReplicaDiff,
    };
    use crate::model::truncation::ReplicationProtocol;

    /// Lines of a real 4.4.0 broker log (scenario unclean, node 1, the
    /// restart after the capture), its data directory replaced.
    const NODE_1: &str = concat!(
        "[2026-12-06 02:28:20,931] INFO [LogLoader partition=unclean-0, dir=/var/lib/kafka/data] Loading producer state till offset 0 (org.apache.kafka.storage.internals.log.UnifiedLog)\n",
        "[2026-12-06 02:28:55,005] INFO Completed load of Log(dir=/var/lib/kafka/data/unclean-0, topicId=masD5675SF6pMztuWz5hvw, topic=unclean, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=250) with 2 segments, local-log-start-offset 0 and log-end-offset 250 in 18ms (1/1 completed in /var/lib/kafka/data) (kafka.log.LogManager)\n",
        "[2026-12-06 02:28:55,064] INFO [Broker id=1] Follower unclean-0 starts at leader epoch 1 from offset 250 with partition epoch 3 and high watermark 250. Current leader is 3. Previous leader None and previous leader epoch was -1. (state.change.logger)\n",
        "[2026-12-06 02:28:55,116] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition unclean-0 with TruncationState(offset=100, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=100) (kafka.server.ReplicaFetcherThread)\n",
        "[2026-12-06 02:28:55,118] WARN [UnifiedLog partition=unclean-0, dir=/var/lib/kafka/data] Truncating unclean-0 to offset 100 below high watermark 250 (org.apache.kafka.storage.internals.log.UnifiedLog)\n",
        "[2026-12-06 02:28:55,118] INFO [UnifiedLog partition=unclean-0, dir=/var/lib/kafka/data] Truncating to offset 100 (org.apache.kafka.storage.internals.log.UnifiedLog)\n",
    );

    fn read(node: i32, text: &str) -> Vec<LoggedEvent> {
        entries(text.as_bytes())
            .filter_map(|i| match i {
                Item::Entry(e) => {
                    let ev = event(&e)?;
                    Some(LoggedEvent {
                        node,
                        source: LogSource {
                            file: "server.log".into(),
                            line: e.line,
                        },
                        time: e.timestamp.clone(),
                        time_ms: e.time_ms,
                        level: Level::Info,
                        event: ev,
                        text: e.message.clone(),
                    })
                }
                Item::Unreadable(_) => None,
            })
            .collect()
    }

    fn replica(broker: i32, leo: i64, truncation: i64) -> ReplicaDiff {
        ReplicaDiff {
            broker,
            log_start_offset: 0,
            log_end_offset: leo,
            high_watermark: None,
            latest_epoch: Some(0),
            epoch_cache: Vec::new(),
            divergence_offset: None,
            divergence_kind: DivergenceKind::Diverged,
            truncation_offset: truncation,
            protocol: ReplicationProtocol::DivergingEpoch,
            alternative_truncation_offset: None,
            alternative_rounds: Vec::new(),
            hw_truncation_offset: truncation,
            records_to_truncate: leo - truncation,
            checkpointed_records_to_truncate: 0,
            records_only_here: 0,
            hw_records_to_truncate: 0,
            hw_checkpointed_records_to_truncate: 0,
            control_records_to_truncate: 0,
            lost_cut: 0,
            committed_proven_cut: 0,
            committed_possible_cut: Some(0),
            truncation_outcome: Outcome::Converged,
            truncation_rounds: Vec::new(),
            findings: Vec::new(),
        }
    }

    fn diff(reference: i32, replicas: Vec<ReplicaDiff>) -> PartitionDiff {
        PartitionDiff {
            topic: "unclean".into(),
            partition: 0,
            reference: ReferenceChoice {
                broker: reference,
                reason: ReferenceReason::Ambiguous,
                leader_epoch: Some(1),
            },
            replicas,
            findings: Vec::new(),
            protocol: DiffOptions::default(),
            scan: None,
            broker_log: Vec::new(),
        }
    }

    #[test]
    fn the_truncation_after_the_captured_start_up_agrees() {
        let evs = read(1, NODE_1);
        let refs: Vec<&LoggedEvent> = evs.iter().collect();
        let d = diff(3, vec![replica(1, 250, 100), replica(3, 120, 120)]);
        let checks = check_truncations(&d, &refs);
        assert_eq!(checks.len(), 1);
        let c = &checks[0];
        assert_eq!(c.broker, 1);
        assert_eq!(c.verdict, Verdict::Agrees);
        let l = c.logged.as_ref().unwrap();
        assert_eq!((l.offset, l.logged_offset, l.leader), (100, 100, Some(3)));
        assert_eq!(l.source.line, 4, "the fetcher's line is the answer");
        assert_eq!(c.loaded_at.as_ref().unwrap().line, 2);
    }

    #[test]
    fn a_prediction_elsewhere_disagrees() {
        let evs = read(1, NODE_1);
        let refs: Vec<&LoggedEvent> = evs.iter().collect();
        let d = diff(3, vec![replica(1, 250, 120)]);
        assert_eq!(check_truncations(&d, &refs)[0].verdict, Verdict::Disagrees);
        // the alternative protocol's prediction is named
        let mut r = replica(1, 250, 120);
        r.alternative_truncation_offset = Some(100);
        let d = diff(3, vec![r]);
        assert_eq!(
            check_truncations(&d, &refs)[0].verdict,
            Verdict::AgreesWithAlternative
        );
    }

    #[test]
    fn without_the_captured_state_loaded_nothing_is_compared() {
        let evs = read(1, NODE_1);
        let refs: Vec<&LoggedEvent> = evs.iter().collect();
        // the capture was taken later: its log end is not the one loaded
        let d = diff(3, vec![replica(1, 300, 100)]);
        let c = &check_truncations(&d, &refs)[0];
        assert_eq!(c.verdict, Verdict::NotCompared);
        assert_eq!(c.why_not_compared, Some(NotCompared::NoLoadOfCapturedState));
    }

    #[test]
    fn another_leader_is_not_compared() {
        let evs = read(1, NODE_1);
        let refs: Vec<&LoggedEvent> = evs.iter().collect();
        let d = diff(2, vec![replica(1, 250, 150)]);
        let c = &check_truncations(&d, &refs)[0];
        assert_eq!(c.verdict, Verdict::NotCompared);
        assert_eq!(
            c.why_not_compared,
            Some(NotCompared::OtherLeader {
                logged: 3,
                reference: 2
            })
        );
    }

    #[test]
    fn a_truncation_before_the_start_up_is_history() {
        // a truncation, then the broker stops and starts from the state
        // captured (log end 100) and follows without truncating
        let text = concat!(
            "[2026-12-06 02:20:00,000] INFO [UnifiedLog partition=unclean-0, dir=/d] Truncating to offset 100 (org.apache.kafka.storage.internals.log.UnifiedLog)\n",
            "[2026-12-06 02:28:55,005] INFO Completed load of Log(dir=/d/unclean-0, topicId=x, topic=unclean, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=100) with 1 segments, local-log-start-offset 0 and log-end-offset 100 in 1ms (kafka.log.LogManager)\n",
        );
        let evs = read(1, text);
        let refs: Vec<&LoggedEvent> = evs.iter().collect();
        let d = diff(3, vec![replica(1, 100, 100)]);
        let c = &check_truncations(&d, &refs)[0];
        assert_eq!(c.logged_before_capture, 1);
        assert_eq!(c.logged, None);
        assert_eq!(c.verdict, Verdict::NotCompared);
    }
}
