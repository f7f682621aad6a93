//! Replica-diff model on small constructed replicas: the legacy-truncation
//! scenarios L1–L3 of the notes (§5), the returning old leader (§4.8), the
//! reference rules, disagreement findings and malformed input.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use klf::analysis::diff::{diff_partition, diff_partitions, PartitionReplicas, ReferenceHint};
use klf::model::diff::{
    DiffOptions, DivergenceKind, FindingKind, PartitionDiff, ReferenceReason, ReplicaDiff,
};
use klf::model::truncation::{Outcome, ReplicationProtocol, RoundKind};
use klf::model::{BatchSummary, ReplicaLog};

/// A v2 batch covering `base..=last` (dense, not compacted). The CRC stands for
/// the content: equal CRC = same records.
fn batch(base: i64, last: i64, epoch: i32, crc: u32) -> BatchSummary {
    BatchSummary {
        base_offset: base,
        last_offset: last,
        partition_leader_epoch: epoch,
        crc,
        record_count: last.saturating_sub(base).saturating_add(1) as i32,
        is_control: false,
        is_transactional: false,
        first_timestamp: base.saturating_add(1_000),
        max_timestamp: last.saturating_add(1_000),
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
    }
}

/// Single-record batch `name@offset:epoch`; `name` is hashed into the CRC.
fn rec(name: &str, offset: i64, epoch: i32) -> BatchSummary {
    let crc = name.bytes().fold(2166136261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16777619)
    });
    batch(offset, offset, epoch, crc)
}

fn replica(
    broker: i32,
    batches: Vec<BatchSummary>,
    leo: i64,
    hw: Option<i64>,
    checkpoint: Option<&[(i32, i64)]>,
) -> ReplicaLog {
    ReplicaLog {
        broker,
        batches,
        log_start_offset: 0,
        log_end_offset: leo,
        high_watermark: hw,
        checkpoint_epochs: checkpoint.map(|c| c.to_vec()),
        first_segment_base: None,
        window_start: None,
    }
}

fn partition(replicas: Vec<ReplicaLog>, reference: ReferenceHint) -> PartitionReplicas {
    PartitionReplicas {
        topic: "t".to_string(),
        partition: 0,
        replicas,
        reference,
    }
}

fn get(p: &PartitionDiff, broker: i32) -> &ReplicaDiff {
    p.replicas
        .iter()
        .find(|r| r.broker == broker)
        .expect("replica in output")
}

fn has(r: &ReplicaDiff, kind: FindingKind) -> bool {
    r.findings.iter().any(|f| f.kind == kind)
}

const A: i32 = 1;
const B: i32 = 2;

// ---------------------------------------------------------------------------
// §5.1 L1 — committed data loss under legacy truncation
// ---------------------------------------------------------------------------

/// Capture at step 4/5: A (leader, HW 2) and B (HW 1) both hold m0, m1.
/// Epochs keep B's m1; legacy truncation to B's HW would cut the committed m1.
#[test]
fn l1_before_failover_epochs_keep_what_legacy_would_cut() {
    let a = replica(
        A,
        vec![rec("m0", 0, 0), rec("m1", 1, 0)],
        2,
        Some(2),
        Some(&[(0, 0)]),
    );
    let b = replica(
        B,
        vec![rec("m0", 0, 0), rec("m1", 1, 0)],
        2,
        Some(1),
        Some(&[(0, 0)]),
    );
    let p = diff_partition(
        &partition(
            vec![a, b],
            ReferenceHint::MetadataLeader {
                broker: A,
                leader_epoch: Some(0),
            },
        ),
        &DiffOptions::default(),
    );
    assert_eq!(p.reference.broker, A);
    assert_eq!(p.reference.reason, ReferenceReason::MetadataLeader);
    let rb = get(&p, B);
    assert_eq!(rb.divergence_kind, DivergenceKind::Identical);
    assert_eq!(rb.divergence_offset, None);
    assert_eq!(rb.truncation_offset, 2, "epochs: nothing removed");
    assert_eq!(rb.records_to_truncate, 0);
    assert_eq!(rb.hw_truncation_offset, 1, "legacy: truncate to HW 1");
    assert_eq!(rb.hw_records_to_truncate, 1);
    assert_eq!(
        rb.hw_checkpointed_records_to_truncate, 1,
        "m1 is below A's HW 2 and A holds the identical batch"
    );
    assert!(has(
        rb,
        FindingKind::HighWatermarkTruncationCutsCommittedRecords
    ));
    assert!(!has(rb, FindingKind::ProtocolCutsMatchingRecords));
    // The reference is reported as such, nothing cut.
    let ra = get(&p, A);
    assert_eq!(ra.divergence_kind, DivergenceKind::Reference);
    assert_eq!(ra.truncation_offset, 2);
    assert_eq!(ra.records_to_truncate, 0);
}

/// Capture after step 6 of the legacy run: B truncated to m0 and now leads
/// epoch 1 (checkpoint ends with `(1, 1)`, nothing written yet); A still holds
/// the committed m1. When A follows, the epoch protocol cuts m1 too: committed
/// loss, present on no other replica.
#[test]
fn l1_after_failover_committed_loss_is_reported() {
    let a = replica(
        A,
        vec![rec("m0", 0, 0), rec("m1", 1, 0)],
        2,
        Some(2),
        Some(&[(0, 0)]),
    );
    let b = replica(
        B,
        vec![rec("m0", 0, 0)],
        1,
        Some(1),
        Some(&[(0, 0), (1, 1)]),
    );
    let p = diff_partition(
        &partition(vec![a, b], ReferenceHint::Auto),
        &DiffOptions::default(),
    );
    assert_eq!(
        p.reference.broker, B,
        "highest latest epoch (kept trailing entry)"
    );
    assert_eq!(p.reference.reason, ReferenceReason::HighestLatestEpoch);
    assert_eq!(p.reference.leader_epoch, Some(1));
    let rb = get(&p, B);
    assert!(has(rb, FindingKind::CheckpointTrailingEmptyEpoch));
    let ra = get(&p, A);
    assert_eq!(ra.divergence_kind, DivergenceKind::Extends);
    assert_eq!(ra.divergence_offset, Some(1));
    assert_eq!(ra.truncation_offset, 1);
    assert_eq!(ra.records_to_truncate, 1);
    assert_eq!(ra.checkpointed_records_to_truncate, 1);
    assert_eq!(ra.records_only_here, 1);
    assert!(has(ra, FindingKind::CommittedDataTruncated));
    assert_eq!(ra.truncation_outcome, Outcome::Converged);
    assert_eq!(ra.truncation_rounds[0].kind, RoundKind::FetchDiverging);
    assert_eq!(ra.truncation_rounds[0].sent_epoch, Some(0));
}

// ---------------------------------------------------------------------------
// §5.2 L2 — divergence after a double failure
// ---------------------------------------------------------------------------

#[test]
fn l2_epochs_remove_divergent_record_legacy_keeps_it() {
    let a = replica(
        A,
        vec![rec("m0", 0, 0), rec("m1", 1, 0)],
        2,
        Some(2),
        Some(&[(0, 0)]),
    );
    let b = replica(
        B,
        vec![rec("m0", 0, 0), rec("m2", 1, 1)],
        2,
        Some(1),
        Some(&[(0, 0), (1, 1)]),
    );
    let p = diff_partition(
        &partition(vec![a, b], ReferenceHint::Auto),
        &DiffOptions::default(),
    );
    assert_eq!(p.reference.broker, B);
    let ra = get(&p, A);
    assert_eq!(ra.divergence_kind, DivergenceKind::Diverged);
    assert_eq!(ra.divergence_offset, Some(1));
    assert!(
        !has(ra, FindingKind::LogMatchingViolation),
        "epochs differ at 1"
    );
    assert_eq!(
        ra.truncation_offset, 1,
        "A asks epoch 0 → (0,1); T = min(2,1,2)"
    );
    assert_eq!(ra.records_to_truncate, 1);
    assert_eq!(
        ra.checkpointed_records_to_truncate, 1,
        "m1 was committed (HW 2)"
    );
    assert_eq!(ra.records_only_here, 1);
    assert_eq!(ra.hw_truncation_offset, 2, "legacy: HW 2, nothing removed");
    assert_eq!(ra.hw_records_to_truncate, 0);
    assert!(has(
        ra,
        FindingKind::HighWatermarkTruncationKeepsDivergentRecords
    ));
    assert!(!has(ra, FindingKind::ProtocolKeepsDivergentRecords));
    // Same answer through the OffsetsForLeaderEpoch path.
    let p = diff_partition(
        &partition(p_replicas_l2(), ReferenceHint::Auto),
        &DiffOptions {
            protocol: ReplicationProtocol::OffsetsForLeaderEpoch,
            ..Default::default()
        },
    );
    assert_eq!(get(&p, A).truncation_offset, 1);
}

fn p_replicas_l2() -> Vec<ReplicaLog> {
    vec![
        replica(
            A,
            vec![rec("m0", 0, 0), rec("m1", 1, 0)],
            2,
            Some(2),
            Some(&[(0, 0)]),
        ),
        replica(
            B,
            vec![rec("m0", 0, 0), rec("m2", 1, 1)],
            2,
            Some(1),
            Some(&[(0, 0), (1, 1)]),
        ),
    ]
}

// ---------------------------------------------------------------------------
// §5.3 L3 — fast leader changes (KIP-279)
// ---------------------------------------------------------------------------

fn l3_replicas() -> Vec<ReplicaLog> {
    vec![
        replica(
            A,
            vec![rec("m0", 0, 1), rec("m1", 1, 1), rec("a2", 2, 3)],
            3,
            Some(1),
            Some(&[(1, 0), (3, 2)]),
        ),
        replica(
            B,
            vec![rec("m0", 0, 1), rec("b1", 1, 2)],
            2,
            Some(1),
            Some(&[(1, 0), (2, 1)]),
        ),
    ]
}

#[test]
fn l3_kip_279_versus_v0_reply() {
    let input = partition(l3_replicas(), ReferenceHint::Auto);
    // KIP-279 and later (both paths): B looks up epoch 1 → T = 1.
    for protocol in [
        ReplicationProtocol::OffsetsForLeaderEpoch,
        ReplicationProtocol::DivergingEpoch,
    ] {
        let p = diff_partition(
            &input,
            &DiffOptions {
                protocol,
                ..Default::default()
            },
        );
        assert_eq!(p.reference.broker, A);
        let rb = get(&p, B);
        assert_eq!(rb.divergence_offset, Some(1));
        assert_eq!(rb.truncation_offset, 1, "{protocol:?}");
        assert_eq!(rb.records_to_truncate, 1);
        assert_eq!(rb.records_only_here, 1, "b1 exists only on B");
        assert_eq!(
            rb.checkpointed_records_to_truncate, 0,
            "b1 is above B's HW 1"
        );
        assert!(!has(rb, FindingKind::ProtocolKeepsDivergentRecords));
    }
    // v0 reply (0.11.0-IV2 .. 2.0-IV0): T = min(2, 2) = 2, b1 kept: divergence.
    let p = diff_partition(
        &input,
        &DiffOptions {
            protocol: ReplicationProtocol::OffsetsForLeaderEpochV0,
            ..Default::default()
        },
    );
    let rb = get(&p, B);
    assert_eq!(rb.truncation_offset, 2);
    assert_eq!(rb.records_to_truncate, 0);
    assert!(has(rb, FindingKind::ProtocolKeepsDivergentRecords));
}

// ---------------------------------------------------------------------------
// §4.8 — an old leader returns
// ---------------------------------------------------------------------------

fn old_leader_replicas(a_checkpoint: Option<&[(i32, i64)]>) -> Vec<ReplicaLog> {
    let common = |v: &mut Vec<BatchSummary>| {
        v.push(batch(0, 94, 2, 7));
        for o in 95..105 {
            v.push(rec(&format!("x{o}"), o, 3));
        }
    };
    let mut a = Vec::new();
    common(&mut a);
    for o in 105..110 {
        a.push(rec(&format!("a{o}"), o, 3));
    }
    let mut b = Vec::new();
    common(&mut b);
    for o in 105..120 {
        b.push(rec(&format!("b{o}"), o, 4));
    }
    vec![
        replica(A, a, 110, Some(105), a_checkpoint),
        replica(B, b, 120, Some(105), Some(&[(2, 0), (3, 95), (4, 105)])),
    ]
}

#[test]
fn old_leader_returns() {
    for checkpoint in [Some(&[(2, 0), (3, 95)][..]), None] {
        let p = diff_partition(
            &partition(
                old_leader_replicas(checkpoint),
                ReferenceHint::MetadataLeader {
                    broker: B,
                    leader_epoch: Some(4),
                },
            ),
            &DiffOptions::default(),
        );
        let ra = get(&p, A);
        assert_eq!(ra.latest_epoch, Some(3));
        assert_eq!(ra.divergence_offset, Some(105));
        assert_eq!(ra.truncation_offset, 105);
        assert_eq!(ra.records_to_truncate, 5);
        assert_eq!(ra.checkpointed_records_to_truncate, 0, "105 >= HW 105");
        assert_eq!(ra.records_only_here, 5);
        assert_eq!(ra.hw_truncation_offset, 105);
        let r0 = &ra.truncation_rounds[0];
        assert_eq!(r0.kind, RoundKind::FetchDiverging);
        assert_eq!((r0.position, r0.sent_epoch), (110, Some(3)));
        assert_eq!(r0.answer.map(|a| (a.epoch, a.end_offset)), Some((3, 105)));
        assert!(!has(ra, FindingKind::ProtocolKeepsDivergentRecords));
        assert!(!has(ra, FindingKind::ProtocolCutsMatchingRecords));
        assert_eq!(
            has(ra, FindingKind::CheckpointMissing),
            checkpoint.is_none()
        );
        // The lagging-behind view from B's side: B is the reference, nothing cut.
        let rb = get(&p, B);
        assert_eq!(rb.truncation_offset, 120);
    }
}

/// A stale checkpoint (entries beyond the LEO, left by an async flush) is
/// repaired as Kafka's log load does, and does not change the result.
#[test]
fn stale_checkpoint_is_repaired() {
    let mut reps = old_leader_replicas(Some(&[(2, 0), (3, 95), (5, 200)]));
    reps[0].checkpoint_epochs = Some(vec![(2, 0), (3, 95), (5, 200)]);
    let p = diff_partition(
        &partition(reps, ReferenceHint::Explicit { broker: B }),
        &DiffOptions::default(),
    );
    assert_eq!(p.reference.reason, ReferenceReason::Explicit);
    let ra = get(&p, A);
    assert!(has(ra, FindingKind::CheckpointStaleEntries));
    assert_eq!(ra.latest_epoch, Some(3));
    assert_eq!(ra.truncation_offset, 105);
}

// ---------------------------------------------------------------------------
// Disagreements between the epoch protocol and the bytes
// ---------------------------------------------------------------------------

/// Same epoch and offset, different content: the epoch protocol sees nothing
/// to cut, the bytes differ (log-matching violation, e.g. corruption).
#[test]
fn log_matching_violation_is_flagged() {
    let a = replica(
        A,
        vec![rec("m0", 0, 0), rec("m1", 1, 0), rec("m2", 2, 0)],
        3,
        Some(3),
        Some(&[(0, 0)]),
    );
    let b = replica(
        B,
        vec![rec("m0", 0, 0), rec("zz", 1, 0), rec("m2", 2, 0)],
        3,
        Some(3),
        Some(&[(0, 0)]),
    );
    let p = diff_partition(
        &partition(vec![a, b], ReferenceHint::Explicit { broker: A }),
        &DiffOptions::default(),
    );
    let rb = get(&p, B);
    assert_eq!(rb.divergence_offset, Some(1));
    assert_eq!(rb.truncation_offset, 3);
    assert!(has(rb, FindingKind::LogMatchingViolation));
    assert!(has(rb, FindingKind::ProtocolKeepsDivergentRecords));
}

/// A checkpoint that disagrees with the batches (here: the file claims epoch 1
/// started at 1 while the batches say 2): the model uses the repaired file,
/// like Kafka, and flags the difference.
#[test]
fn checkpoint_differs_from_batches_is_flagged() {
    let a = replica(
        A,
        vec![rec("m0", 0, 0), rec("m1", 1, 0), rec("m2", 2, 1)],
        3,
        Some(1),
        Some(&[(0, 0), (1, 1)]),
    );
    let b = replica(
        B,
        vec![rec("m0", 0, 0), rec("m1", 1, 0), rec("m2", 2, 1)],
        3,
        Some(1),
        Some(&[(0, 0), (1, 2)]),
    );
    let p = diff_partition(
        &partition(vec![a, b], ReferenceHint::Explicit { broker: B }),
        &DiffOptions::default(),
    );
    let ra = get(&p, A);
    assert!(has(ra, FindingKind::CheckpointDiffersFromBatches));
    assert_eq!(ra.divergence_kind, DivergenceKind::Identical);
    assert_eq!(ra.truncation_offset, 3, "same latest epoch 1: nothing cut");
}

// ---------------------------------------------------------------------------
// Reference rules
// ---------------------------------------------------------------------------

#[test]
fn reference_rules() {
    let same = || vec![rec("m0", 0, 0), rec("m1", 1, 0)];
    // Tie on epoch, longer log wins.
    let p = diff_partition(
        &partition(
            vec![
                replica(A, vec![rec("m0", 0, 0)], 1, Some(1), Some(&[(0, 0)])),
                replica(B, same(), 2, Some(1), Some(&[(0, 0)])),
            ],
            ReferenceHint::Auto,
        ),
        &DiffOptions::default(),
    );
    assert_eq!(
        (p.reference.broker, p.reference.reason),
        (B, ReferenceReason::LongestLog)
    );
    assert_eq!(get(&p, A).divergence_kind, DivergenceKind::Prefix);
    assert_eq!(get(&p, A).divergence_offset, Some(1));
    assert_eq!(
        get(&p, A).truncation_offset,
        1,
        "lagging follower: nothing cut"
    );
    // Full tie: ambiguous, lowest broker id, flagged.
    let p = diff_partition(
        &partition(
            vec![
                replica(B, same(), 2, Some(2), Some(&[(0, 0)])),
                replica(A, same(), 2, Some(2), Some(&[(0, 0)])),
            ],
            ReferenceHint::Auto,
        ),
        &DiffOptions::default(),
    );
    assert_eq!(
        (p.reference.broker, p.reference.reason),
        (A, ReferenceReason::Ambiguous)
    );
    assert!(p
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::AmbiguousReference));
    // Explicit broker that is absent: fall back to automatic choice, flagged.
    let p = diff_partition(
        &partition(
            vec![replica(A, same(), 2, Some(2), Some(&[(0, 0)]))],
            ReferenceHint::Explicit { broker: 9 },
        ),
        &DiffOptions::default(),
    );
    assert_eq!(p.reference.broker, A);
    assert!(p
        .findings
        .iter()
        .any(|f| f.kind == FindingKind::ReferenceNotFound));
}

/// A reference named with `--leader` whose latest epoch is behind a
/// follower's (notes §4.10 example 6b). Left in its old epoch, Kafka would
/// loop on OFFSET_OUT_OF_RANGE without cutting (the model's own vector,
/// `truncation_vectors`); but a replica only leads once elected, and the
/// election gives it an epoch above every earlier one (5 here, at its log
/// end 70). The follower's epoch 4 is then answered with epoch 2's end,
/// 70; the follower's epoch 2 ends at 60: it truncates to 60, keeping
/// [58, 60), which differs from the reference's batch of the same epoch (a
/// log-matching violation the epoch protocol cannot see).
#[test]
fn reference_behind_follower_epoch_leads_in_a_new_epoch() {
    let common: Vec<BatchSummary> = vec![batch(0, 49, 0, 1), batch(50, 57, 2, 2)];
    let mut l = common.clone();
    l.push(batch(58, 69, 2, 3));
    let mut f = common;
    f.push(batch(58, 59, 2, 3 + 100));
    f.push(batch(60, 64, 4, 4));
    let p = diff_partition(
        &partition(
            vec![
                replica(A, l, 70, Some(55), Some(&[(0, 0), (2, 50)])),
                replica(B, f, 65, Some(55), Some(&[(0, 0), (2, 50), (4, 60)])),
            ],
            ReferenceHint::Explicit { broker: A },
        ),
        &DiffOptions::default(),
    );
    // the named replica's own latest epoch is reported, not the new one
    assert_eq!(p.reference.leader_epoch, Some(2));
    let rb = get(&p, B);
    assert_eq!(rb.truncation_outcome, Outcome::Converged);
    assert_eq!(rb.truncation_offset, 60);
    assert_eq!(rb.records_to_truncate, 5);
    assert!(has(rb, FindingKind::ProtocolKeepsDivergentRecords));
    assert!(!has(rb, FindingKind::TruncationNotConverged));
    assert_eq!(rb.divergence_offset, Some(58));
    assert_eq!(rb.hw_truncation_offset, 55);
    assert_eq!(rb.hw_records_to_truncate, 10);
}

// ---------------------------------------------------------------------------
// Record counting
// ---------------------------------------------------------------------------

#[test]
fn partial_batch_and_control_records() {
    let mut ctrl = batch(10, 10, 1, 99);
    ctrl.is_control = true;
    let f_batches = vec![batch(0, 9, 0, 1), batch(10, 19, 1, 2)];
    let l_batches = vec![batch(0, 9, 0, 1), batch(10, 14, 1, 2 + 50), ctrl.clone()];
    // Leader cache ends at 15 with epoch 2 from 15; the follower's epoch 1 ends at 15 on the leader.
    let p = diff_partition(
        &partition(
            vec![
                replica(
                    A,
                    l_batches,
                    15,
                    Some(10),
                    Some(&[(0, 0), (1, 10), (2, 15)]),
                ),
                replica(B, f_batches, 20, Some(12), Some(&[(0, 0), (1, 10)])),
            ],
            ReferenceHint::Explicit { broker: A },
        ),
        &DiffOptions::default(),
    );
    let rb = get(&p, B);
    // Leader answers (1, 15): the cut falls inside B's batch 10..=19.
    assert_eq!(rb.truncation_offset, 15);
    assert!(has(rb, FindingKind::TruncationInsideBatch));
    assert_eq!(rb.records_to_truncate, 5, "offsets 15..=19");
    assert_eq!(rb.checkpointed_records_to_truncate, 0, "B's HW 12 < 15");
    assert_eq!(rb.records_only_here, 5);
    assert_eq!(rb.hw_truncation_offset, 12);
    assert_eq!(rb.hw_records_to_truncate, 8, "offsets 12..=19");
    assert_eq!(rb.control_records_to_truncate, 0);
    let ra = get(&p, A);
    assert_eq!(ra.control_records_to_truncate, 0);
}

// ---------------------------------------------------------------------------
// Output shape and robustness
// ---------------------------------------------------------------------------

#[test]
fn report_names_the_reference_and_each_replicas_cut() {
    let report = diff_partitions(
        &[partition(l3_replicas(), ReferenceHint::Auto)],
        &DiffOptions::default(),
    );
    let p = &report.partitions[0];
    assert_eq!((p.topic.as_str(), p.partition), ("t", 0));
    assert_eq!(p.reference.broker, A);
    assert_eq!(p.reference.reason, ReferenceReason::HighestLatestEpoch);
    assert_eq!(p.replicas.len(), 2);
    let rb = &p.replicas[1];
    assert_eq!(rb.broker, B);
    assert_eq!(rb.divergence_offset, Some(1));
    assert_eq!(rb.truncation_offset, 1);
    // the reference is cut nowhere
    let ra = &p.replicas[0];
    assert_eq!((ra.broker, ra.records_to_truncate), (A, 0));
}

#[test]
fn malformed_input_does_not_panic() {
    // No replicas.
    let p = diff_partition(
        &partition(vec![], ReferenceHint::Auto),
        &DiffOptions::default(),
    );
    assert_eq!(p.reference.reason, ReferenceReason::NoReplicas);
    assert!(p.replicas.is_empty());
    // Negative offsets, unsorted and overlapping batches, HW beyond LEO,
    // invalid checkpoint entries, negative epochs, empty logs, compacted batch.
    let mut compacted = batch(3, 9, 0, 5);
    compacted.record_count = 2;
    let weird = ReplicaLog {
        broker: 7,
        batches: vec![
            batch(5, 6, 0, 1),
            batch(0, 5, -1, 2),
            compacted,
            batch(4, 2, 3, 3),
        ],
        log_start_offset: -5,
        log_end_offset: -1,
        high_watermark: Some(i64::MAX),
        checkpoint_epochs: Some(vec![(-1, 0), (3, -7), (2, 0), (1, 0)]),
        first_segment_base: Some(-3),
        window_start: None,
    };
    let empty = ReplicaLog {
        broker: 8,
        batches: vec![],
        log_start_offset: 0,
        log_end_offset: 0,
        high_watermark: None,
        checkpoint_epochs: None,
        first_segment_base: None,
        window_start: None,
    };
    let big = ReplicaLog {
        broker: 9,
        batches: vec![batch(i64::MAX - 10, i64::MAX - 1, i32::MAX, 0)],
        log_start_offset: i64::MAX - 10,
        log_end_offset: i64::MAX,
        high_watermark: Some(i64::MIN),
        checkpoint_epochs: Some(vec![(i32::MAX, i64::MAX)]),
        first_segment_base: None,
        window_start: None,
    };
    for protocol in ReplicationProtocol::ALL {
        for hint in [
            ReferenceHint::Auto,
            ReferenceHint::Explicit { broker: 7 },
            ReferenceHint::Explicit { broker: 8 },
            ReferenceHint::MetadataLeader {
                broker: 9,
                leader_epoch: Some(-4),
            },
        ] {
            let p = diff_partition(
                &partition(vec![weird.clone(), empty.clone(), big.clone()], hint),
                &DiffOptions {
                    protocol,
                    ..Default::default()
                },
            );
            assert_eq!(p.replicas.len(), 3);
            for r in &p.replicas {
                assert!(r.truncation_offset <= r.log_end_offset, "{r:?}");
                assert!(r.hw_truncation_offset <= r.log_end_offset, "{r:?}");
                assert!(r.records_to_truncate >= 0);
                assert!(r.checkpointed_records_to_truncate <= r.records_to_truncate);
                assert!(r.records_only_here <= r.records_to_truncate);
            }
            let w = get(&p, 7);
            assert!(has(w, FindingKind::BatchLayout));
            assert!(has(w, FindingKind::CheckpointInvalidEntries));
            assert!(get(&p, 8)
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::HighWatermarkUnknown));
        }
    }
}
