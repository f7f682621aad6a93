//! The leader-epoch timeline of one replica: which epochs wrote which offset
//! ranges according to the batch headers, beside what the replica's
//! `leader-epoch-checkpoint` says, with every disagreement named.

use serde::Serialize;

use crate::analysis::diff::{BatchSummary, ReplicaLog};

/// One leader epoch as the batch headers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpochSpan {
    /// The leader epoch (`partitionLeaderEpoch` of the batches).
    pub epoch: i32,
    /// First offset written in this epoch (base offset of its first batch).
    pub start_offset: i64,
    /// Last offset written in this epoch.
    pub end_offset: i64,
    /// Batches.
    pub batches: u64,
    /// Records (control records included).
    pub records: i64,
    /// Earliest `baseTimestamp` of its batches.
    pub first_timestamp: i64,
    /// Latest `maxTimestamp` of its batches.
    pub last_timestamp: i64,
}

/// A disagreement between the batches and the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disagreement {
    /// Stable code.
    pub code: &'static str,
    /// The epoch concerned, where one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i32>,
    /// What is wrong, in words.
    pub message: String,
}

/// The timeline of one replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// Node id.
    pub broker: i32,
    /// Epoch spans from the batch headers, in log order.
    pub from_batches: Vec<EpochSpan>,
    /// `(epoch, start_offset)` entries of `leader-epoch-checkpoint`; `None`
    /// when the file is missing or unreadable.
    pub checkpoint: Option<Vec<(i32, i64)>>,
    /// Log start offset.
    pub log_start_offset: i64,
    /// Log end offset.
    pub log_end_offset: i64,
    /// High watermark from `replication-offset-checkpoint`.
    pub high_watermark: Option<i64>,
    /// Recovery point from `recovery-point-offset-checkpoint` (set by the
    /// caller, which has the broker's checkpoints; `None` when unknown).
    pub recovery_point: Option<i64>,
    /// Disagreements between the two views.
    pub disagreements: Vec<Disagreement>,
}

/// The epoch spans of a log, built one batch at a time in log order (a
/// reader streaming a replica's batches keeps this, not the batches), with
/// every place the epochs go backwards.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochSpans {
    /// Spans so far, in log order.
    pub spans: Vec<EpochSpan>,
    /// `epoch-regression` disagreements so far.
    pub regressions: Vec<Disagreement>,
}

impl EpochSpans {
    /// Adds the next batch of the log; returns whether it starts a span.
    pub fn push(&mut self, b: &BatchSummary) -> bool {
        self.push_span(EpochSpan::of(b))
    }

    /// Adds the next run of batches of one epoch (the spans of a part of
    /// the log read on its own, in order): it joins the last span when the
    /// epoch is the same, else starts one. Returns whether it starts one.
    pub fn push_span(&mut self, next: EpochSpan) -> bool {
        match self.spans.last_mut() {
            Some(s) if s.epoch == next.epoch => {
                s.join(&next);
                false
            }
            prev => {
                if let Some(p) = prev {
                    if next.epoch < p.epoch {
                        self.regressions.push(Disagreement {
                            code: "epoch-regression",
                            epoch: Some(next.epoch),
                            message: format!(
                                "batch at offset {} has leader epoch {} after epoch {}: epochs go backwards",
                                next.start_offset, next.epoch, p.epoch
                            ),
                        });
                    }
                }
                self.spans.push(next);
                true
            }
        }
    }
}

impl EpochSpan {
    /// The span of one batch.
    pub fn of(b: &BatchSummary) -> EpochSpan {
        EpochSpan {
            epoch: b.partition_leader_epoch,
            start_offset: b.base_offset,
            end_offset: b.last_offset,
            batches: 1,
            records: i64::from(b.record_count.max(0)),
            first_timestamp: b.first_timestamp,
            last_timestamp: b.max_timestamp,
        }
    }

    /// Extends this span by the next span of the same epoch.
    pub fn join(&mut self, next: &EpochSpan) {
        self.end_offset = self.end_offset.max(next.end_offset);
        self.batches += next.batches;
        self.records += next.records;
        self.first_timestamp = self.first_timestamp.min(next.first_timestamp);
        self.last_timestamp = self.last_timestamp.max(next.last_timestamp);
    }
}

/// Builds the timeline of one replica from its batch summaries.
pub fn timeline(log: &ReplicaLog) -> Timeline {
    let mut batches: Vec<_> = log.batches.iter().collect();
    batches.sort_by_key(|b| b.base_offset);
    let mut spans = EpochSpans::default();
    for b in batches {
        spans.push(b);
    }
    timeline_of_spans(log, spans)
}

/// The timeline of a replica whose epoch spans were built as its batches
/// were read ([`EpochSpans`]); `log` gives its offsets and checkpoint (its
/// batches are not read).
pub fn timeline_of_spans(log: &ReplicaLog, spans: EpochSpans) -> Timeline {
    let EpochSpans {
        spans,
        regressions: mut disagreements,
    } = spans;
    // v0/v1 messages and empty logs carry no epoch to record
    let has_epochs = spans.iter().any(|s| s.epoch >= 0);
    match &log.checkpoint_epochs {
        None if !has_epochs => {}
        None => disagreements.push(Disagreement {
            code: "checkpoint-missing",
            epoch: None,
            message: "no readable leader-epoch-checkpoint".into(),
        }),
        Some(cp) => compare(&spans, cp, log, &mut disagreements),
    }
    Timeline {
        broker: log.broker,
        from_batches: spans,
        checkpoint: log.checkpoint_epochs.clone(),
        log_start_offset: log.log_start_offset,
        log_end_offset: log.log_end_offset,
        high_watermark: log.high_watermark,
        recovery_point: None,
        disagreements,
    }
}

fn compare(spans: &[EpochSpan], cp: &[(i32, i64)], log: &ReplicaLog, out: &mut Vec<Disagreement>) {
    for w in cp.windows(2) {
        if w[1].0 <= w[0].0 || w[1].1 < w[0].1 {
            out.push(Disagreement {
                code: "checkpoint-not-monotonic",
                epoch: Some(w[1].0),
                message: format!(
                    "checkpoint entry (epoch {}, offset {}) follows (epoch {}, offset {})",
                    w[1].0, w[1].1, w[0].0, w[0].1
                ),
            });
        }
    }
    for &(epoch, start) in cp {
        if start > log.log_end_offset {
            out.push(Disagreement {
                code: "checkpoint-past-log-end",
                epoch: Some(epoch),
                message: format!(
                    "checkpoint says epoch {epoch} starts at {start}, past the log end {}",
                    log.log_end_offset
                ),
            });
        }
    }
    // Epochs of -1 are batches written without an epoch (old formats).
    for s in spans.iter().filter(|s| s.epoch >= 0) {
        match cp.iter().find(|(e, _)| *e == s.epoch) {
            None => out.push(Disagreement {
                code: "epoch-missing-from-checkpoint",
                epoch: Some(s.epoch),
                message: format!(
                    "batches of epoch {} (offsets [{}, {})) have no checkpoint entry",
                    s.epoch,
                    s.start_offset,
                    s.end_offset.saturating_add(1)
                ),
            }),
            Some(&(_, start)) => {
                // The first span of the log may start after the epoch's real
                // start when older segments were deleted or compacted away.
                let is_first = spans.first().map(|f| f.epoch) == Some(s.epoch);
                let ok = start == s.start_offset || (is_first && start <= s.start_offset);
                if !ok {
                    out.push(Disagreement {
                        code: "epoch-start-mismatch",
                        epoch: Some(s.epoch),
                        message: format!(
                            "checkpoint says epoch {} starts at {start}, its first batch is at {}",
                            s.epoch, s.start_offset
                        ),
                    });
                }
            }
        }
    }
    for &(epoch, start) in cp {
        let in_batches = spans.iter().any(|s| s.epoch == epoch);
        if !in_batches && start < log.log_end_offset && start >= log.log_start_offset {
            out.push(Disagreement {
                code: "checkpoint-epoch-without-batches",
                epoch: Some(epoch),
                message: format!(
                    "checkpoint has epoch {epoch} from offset {start}, but no batch in the log carries it"
                ),
            });
        }
    }
}
