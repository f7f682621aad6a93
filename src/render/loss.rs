//! The evidence of a partition's loss in words: what each fact the
//! commitment bounds used says (`detail` in the JSON, `evidence (...)` in
//! `klf diff --explain`), and why a bound is unknown (`reason`).
//! `analysis::loss` computes the facts (`model::loss::EvidenceFact`,
//! `BoundGap`); only the sentences are made here.

use crate::model::evidence::HW_CHECKPOINT_INTERVAL_DEFAULT_MS;
use crate::model::loss::{BoundGap, EvidenceFact, LossEvidence};
use crate::render::text::human_ms;

/// `-` for a value that is not there.
fn or_dash<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// What piece of evidence `e` says, in one sentence.
pub fn evidence_detail(e: &LossEvidence) -> String {
    let broker = or_dash(e.broker);
    let isr = e.isr.as_deref().unwrap_or_default();
    match &e.fact {
        EvidenceFact::HighWatermarkCheckpoint {
            used,
            written_before_newest_lost_ms,
        } => {
            let mut s = match e.offset {
                Some(v) if e.records == 0 => format!(
                    "broker {broker}'s replication-offset-checkpoint says {v}{}: no lost record lies below it, so it gives no proof that any of them was committed, and none that they were not (a checkpoint can lag the high watermark)",
                    match used {
                        Some(u) if *u != v => format!(" (used as {u})"),
                        _ => String::new(),
                    },
                ),
                Some(v) => format!(
                    "broker {broker}'s replication-offset-checkpoint says {v}{}: {} lost records below it are committed",
                    match used {
                        Some(u) if *u != v => format!(" (used as {u})"),
                        _ => String::new(),
                    },
                    e.records
                ),
                None => format!(
                    "broker {broker}'s replication-offset-checkpoint does not list the partition: it proves nothing"
                ),
            };
            s.push_str(&format!(
                "; Kafka writes that file every replica.high.watermark.checkpoint.interval.ms (default {} s), so it may miss the last writes before a kill",
                HW_CHECKPOINT_INTERVAL_DEFAULT_MS / 1000
            ));
            if let Some(ms) = written_before_newest_lost_ms {
                s.push_str(&format!(
                    "; it was last written {} before the newest lost batch's timestamp",
                    human_ms(*ms)
                ));
            }
            s
        }
        EvidenceFact::ConsumerGroupCommit { lineage } => {
            let group = e.group.as_deref().unwrap_or_default();
            let offset = e.offset.unwrap_or_default();
            let last = offset - 1;
            let on = match e.leader_epoch {
                Some(epoch) => format!("leader epoch {epoch} at offset {last}"),
                None => format!("no leader epoch; offset {last}"),
            };
            let names: Vec<String> = lineage.iter().map(i32::to_string).collect();
            if lineage.is_empty() {
                format!(
                    "group {group:?} committed offset {offset} ({on}), which no captured replica's log matches: it proves nothing here"
                )
            } else if e.records == 0 {
                format!(
                    "group {group:?} committed offset {offset} ({on}, the log of broker(s) {}), which does not hold the lost records",
                    names.join(", ")
                )
            } else {
                format!(
                    "group {group:?} committed offset {offset} ({on}, the log of broker(s) {}): a consumer reads only below the high watermark, so the {} lost records below it were committed",
                    names.join(", "),
                    e.records
                )
            }
        }
        EvidenceFact::IsrStateRulesOut { never_held, lost } => {
            let who: Vec<String> = never_held.iter().map(i32::to_string).collect();
            format!(
                "the metadata log (offset {}) records ISR {isr:?} under leader {broker} in epoch {}: broker(s) {} never held {lost} of the lost records (and followed no later leader that could have made them truncate them), so the high watermark could not pass them in this ISR",
                or_dash(e.metadata_offset),
                or_dash(e.leader_epoch),
                who.join(", ")
            )
        }
        EvidenceFact::IsrState => format!(
            "the metadata log (offset {}) records ISR {isr:?} under leader {broker} in epoch {}: every member holds (or may have held) {} of the lost records, so the leader's high watermark may have passed them",
            or_dash(e.metadata_offset),
            or_dash(e.leader_epoch),
            e.records
        ),
        EvidenceFact::Unbounded(gap) => gap_reason(gap),
        EvidenceFact::ReplicaNotCaptured => format!(
            "broker {broker} is an assigned replica whose log is not in the capture: it may hold records counted here as lost, and is taken as possibly holding any of them"
        ),
        EvidenceFact::NoConsumerOffsets => {
            "the capture holds no __consumer_offsets replica: consumer group commits could not be used as proof".to_string()
        }
    }
}

/// Why a commitment bound is unknown, in one sentence.
pub fn gap_reason(gap: &BoundGap) -> String {
    match gap {
        BoundGap::NoIsrHistory { why } => format!(
            "{}: without the ISR history no record can be ruled out as committed",
            why.as_deref()
                .unwrap_or("the capture holds no __cluster_metadata log with this partition")
        ),
        BoundGap::IsrHistoryIncomplete { first_epoch } => format!(
            "the metadata log's history of the partition starts at leader epoch {} (its start was deleted after a snapshot): the ISR of earlier epochs is unknown",
            or_dash(*first_epoch)
        ),
        BoundGap::MetadataBehindReplicas {
            history_epoch,
            replica_epoch,
        } => format!(
            "the metadata log's history of the partition ends at leader epoch {}, below epoch {} that a replica holds: the ISR of the later epochs is unknown",
            or_dash(*history_epoch),
            or_dash(*replica_epoch)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(fact: EvidenceFact) -> LossEvidence {
        LossEvidence::note(fact)
    }

    #[test]
    fn a_checkpoint_says_what_it_proves_and_how_stale_it_may_be() {
        let e = LossEvidence {
            broker: Some(1),
            offset: Some(120),
            records: 20,
            ..evidence(EvidenceFact::HighWatermarkCheckpoint {
                used: Some(110),
                written_before_newest_lost_ms: Some(65_400),
            })
        };
        assert_eq!(
            evidence_detail(&e),
            "broker 1's replication-offset-checkpoint says 120 (used as 110): 20 lost records below it are committed; \
             Kafka writes that file every replica.high.watermark.checkpoint.interval.ms (default 5 s), so it may miss \
             the last writes before a kill; it was last written 1 min 5 s before the newest lost batch's timestamp"
        );
        let below_none = LossEvidence {
            broker: Some(1),
            offset: Some(100),
            records: 0,
            ..evidence(EvidenceFact::HighWatermarkCheckpoint {
                used: None,
                written_before_newest_lost_ms: None,
            })
        };
        assert!(evidence_detail(&below_none).starts_with(
            "broker 1's replication-offset-checkpoint says 100: no lost record lies below it, so it gives no proof that any of them was committed, and none that they were not (a checkpoint can lag the high watermark)"
        ));
        let unlisted = LossEvidence {
            broker: Some(2),
            ..evidence(EvidenceFact::HighWatermarkCheckpoint {
                used: None,
                written_before_newest_lost_ms: None,
            })
        };
        assert!(evidence_detail(&unlisted).starts_with(
            "broker 2's replication-offset-checkpoint does not list the partition: it proves nothing; Kafka writes"
        ));
    }

    #[test]
    fn a_commit_names_its_lineage_and_what_it_proves() {
        let commit = |lineage: Vec<i32>, records: u64, epoch: Option<i32>| LossEvidence {
            broker: Some(2),
            group: Some("g".into()),
            offset: Some(13),
            leader_epoch: epoch,
            records,
            ..evidence(EvidenceFact::ConsumerGroupCommit { lineage })
        };
        assert_eq!(
            evidence_detail(&commit(vec![], 0, Some(4))),
            "group \"g\" committed offset 13 (leader epoch 4 at offset 12), which no captured replica's log matches: it proves nothing here"
        );
        assert_eq!(
            evidence_detail(&commit(vec![1, 3], 0, None)),
            "group \"g\" committed offset 13 (no leader epoch; offset 12, the log of broker(s) 1, 3), which does not hold the lost records"
        );
        assert_eq!(
            evidence_detail(&commit(vec![1], 3, Some(0))),
            "group \"g\" committed offset 13 (leader epoch 0 at offset 12, the log of broker(s) 1): a consumer reads only below the high watermark, so the 3 lost records below it were committed"
        );
    }

    #[test]
    fn isr_states_say_who_held_what() {
        let state = |fact, records| LossEvidence {
            broker: Some(2),
            leader_epoch: Some(3),
            isr: Some(vec![1, 2]),
            metadata_offset: Some(40),
            records,
            ..evidence(fact)
        };
        assert_eq!(
            evidence_detail(&state(EvidenceFact::IsrState, 7)),
            "the metadata log (offset 40) records ISR [1, 2] under leader 2 in epoch 3: every member holds (or may have held) 7 of the lost records, so the leader's high watermark may have passed them"
        );
        let out = EvidenceFact::IsrStateRulesOut {
            never_held: vec![2],
            lost: 5,
        };
        assert_eq!(
            evidence_detail(&state(out, 0)),
            "the metadata log (offset 40) records ISR [1, 2] under leader 2 in epoch 3: broker(s) 2 never held 5 of the lost records (and followed no later leader that could have made them truncate them), so the high watermark could not pass them in this ISR"
        );
    }

    #[test]
    fn kind_names_are_the_json_names() {
        use crate::model::loss::EvidenceKind::*;
        for k in [
            HighWatermarkCheckpoint,
            ConsumerGroupCommit,
            IsrState,
            IsrStateRulesOut,
            NoIsrHistory,
            IsrHistoryIncomplete,
            MetadataBehindReplicas,
            ReplicaNotCaptured,
            NoConsumerOffsets,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }

    #[test]
    fn an_unknown_bound_says_why() {
        assert_eq!(
            gap_reason(&BoundGap::NoIsrHistory { why: None }),
            "the capture holds no __cluster_metadata log with this partition: without the ISR history no record can be ruled out as committed"
        );
        assert_eq!(
            gap_reason(&BoundGap::NoIsrHistory {
                why: Some("ZooKeeper mode".into())
            }),
            "ZooKeeper mode: without the ISR history no record can be ruled out as committed"
        );
        assert_eq!(
            gap_reason(&BoundGap::MetadataBehindReplicas {
                history_epoch: None,
                replica_epoch: Some(5)
            }),
            "the metadata log's history of the partition ends at leader epoch -, below epoch 5 that a replica holds: the ISR of the later epochs is unknown"
        );
        let gap = BoundGap::IsrHistoryIncomplete {
            first_epoch: Some(2),
        };
        assert_eq!(
            evidence_detail(&evidence(EvidenceFact::Unbounded(gap.clone()))),
            gap_reason(&gap)
        );
    }
}
