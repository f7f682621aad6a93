//! The leader-epoch timeline of one replica: which epochs wrote which offset
//! ranges according to the batch headers, beside what the replica's
//! `leader-epoch-checkpoint` says, with every disagreement named.

use crate::model::history::{QuorumChange, QuorumChangeKind};
use crate::model::timeline::{Disagreement, EpochSpan, QuorumEvent, QuorumEventKind, Timeline};
use crate::model::{BatchSummary, ReplicaLog};

/// The quorum's control records in log order, each with what it changed:
/// an election is a failover when the last election before it chose
/// another controller (a re-election when the same), a voter set names
/// the voters it adds and removes against the last voter set before it.
pub fn quorum_events(changes: &[QuorumChange]) -> Vec<QuorumEvent> {
    let mut leader: Option<i32> = None;
    let mut voters: Option<&[i32]> = None;
    let mut out = Vec::with_capacity(changes.len());
    for c in changes {
        let (event, previous_leader, added, removed) = match c.kind {
            QuorumChangeKind::LeaderChange => {
                let before = leader;
                // a record without a leader says nothing of who led
                if c.leader.is_some() {
                    leader = c.leader;
                }
                let event = match before {
                    None => QuorumEventKind::Elected,
                    Some(b) if c.leader.is_some_and(|l| l != b) => QuorumEventKind::Failover,
                    Some(_) => QuorumEventKind::Reelected,
                };
                (event, before, Vec::new(), Vec::new())
            }
            QuorumChangeKind::Voters => {
                let (event, added, removed) = match voters {
                    None => (QuorumEventKind::Voters, Vec::new(), Vec::new()),
                    Some(before) => {
                        let mut added: Vec<i32> = c
                            .voters
                            .iter()
                            .filter(|v| !before.contains(v))
                            .copied()
                            .collect();
                        let mut removed: Vec<i32> = before
                            .iter()
                            .filter(|v| !c.voters.contains(v))
                            .copied()
                            .collect();
                        added.sort_unstable();
                        added.dedup();
                        removed.sort_unstable();
                        removed.dedup();
                        let event = if added.is_empty() && removed.is_empty() {
                            QuorumEventKind::VotersRewritten
                        } else {
                            QuorumEventKind::VotersChanged
                        };
                        (event, added, removed)
                    }
                };
                voters = Some(&c.voters);
                (event, None, added, removed)
            }
        };
        out.push(QuorumEvent {
            change: c.clone(),
            event,
            previous_leader,
            added,
            removed,
        });
    }
    out
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
        mut spans,
        regressions: mut disagreements,
    } = spans;
    // The latest epoch runs to the log end, as Kafka's epoch cache answers
    // for it (the log end is past the last batch when the active segment
    // starts above it).
    if let Some(last) = spans.last_mut() {
        last.end = last.end.max(log.log_end_offset);
    }
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

/// How many disagreements of one code are told one by one; the rest are
/// counted in one more (a checkpoint of a million entries past the log end
/// is one fact, not a million).
pub const TOLD_PER_CODE: usize = 10;

/// Collects disagreements, at most [`TOLD_PER_CODE`] of each code, counting
/// the rest.
struct Told<'o> {
    out: &'o mut Vec<Disagreement>,
    more: std::collections::BTreeMap<&'static str, (u64, i32, i32)>,
    told: std::collections::BTreeMap<&'static str, usize>,
}

impl Told<'_> {
    fn push(&mut self, code: &'static str, epoch: i32, message: impl FnOnce() -> String) {
        let n = self.told.entry(code).or_default();
        if *n < TOLD_PER_CODE {
            *n += 1;
            self.out.push(Disagreement {
                code,
                epoch: Some(epoch),
                message: message(),
            });
        } else {
            let m = self.more.entry(code).or_insert((0, epoch, epoch));
            m.0 += 1;
            m.1 = m.1.min(epoch);
            m.2 = m.2.max(epoch);
        }
    }

    fn finish(self) {
        for (code, (n, lo, hi)) in self.more {
            self.out.push(Disagreement {
                code,
                epoch: None,
                message: format!(
                    "{} like the above (epochs {lo} to {hi})",
                    crate::format::text::count(n, "more", "more")
                ),
            });
        }
    }
}

fn compare(spans: &[EpochSpan], cp: &[(i32, i64)], log: &ReplicaLog, out: &mut Vec<Disagreement>) {
    let mut told = Told {
        out,
        more: std::collections::BTreeMap::new(),
        told: std::collections::BTreeMap::new(),
    };
    for w in cp.windows(2) {
        if w[1].0 <= w[0].0 || w[1].1 < w[0].1 {
            told.push("checkpoint-not-monotonic", w[1].0, || {
                format!(
                    "checkpoint entry (epoch {}, offset {}) follows (epoch {}, offset {})",
                    w[1].0, w[1].1, w[0].0, w[0].1
                )
            });
        }
    }
    for &(epoch, start) in cp {
        if start > log.log_end_offset {
            told.push("checkpoint-past-log-end", epoch, || {
                format!(
                    "checkpoint says epoch {epoch} starts at {start}, past the log end {}",
                    log.log_end_offset
                )
            });
        }
    }
    // the first entry of each epoch, as a lookup (a linear search per span
    // was quadratic in the epochs)
    let mut cp_start: std::collections::HashMap<i32, i64> =
        std::collections::HashMap::with_capacity(cp.len().min(1 << 20));
    for &(e, start) in cp {
        cp_start.entry(e).or_insert(start);
    }
    // Epochs of -1 are batches written without an epoch (old formats).
    let first_epoch = spans.first().map(|f| f.epoch);
    for s in spans.iter().filter(|s| s.epoch >= 0) {
        match cp_start.get(&s.epoch) {
            None => told.push("epoch-missing-from-checkpoint", s.epoch, || {
                format!(
                    "batches of epoch {} (offsets [{}, {})) have no checkpoint entry",
                    s.epoch, s.start_offset, s.end
                )
            }),
            Some(&start) => {
                // The first span of the log may start after the epoch's real
                // start when older segments were deleted or compacted away.
                let is_first = first_epoch == Some(s.epoch);
                let ok = start == s.start_offset || (is_first && start <= s.start_offset);
                if !ok {
                    told.push("epoch-start-mismatch", s.epoch, || {
                        format!(
                            "checkpoint says epoch {} starts at {start}, its first batch is at {}",
                            s.epoch, s.start_offset
                        )
                    });
                }
            }
        }
    }
    let in_batches: std::collections::HashSet<i32> = spans.iter().map(|s| s.epoch).collect();
    for &(epoch, start) in cp {
        if !in_batches.contains(&epoch)
            && start < log.log_end_offset
            && start >= log.log_start_offset
        {
            told.push("checkpoint-epoch-without-batches", epoch, || {
                format!(
                    "checkpoint has epoch {epoch} from offset {start}, but no batch in the log carries it"
                )
            });
        }
    }
    told.finish();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(
        offset: i64,
        epoch: i32,
        kind: QuorumChangeKind,
        leader: Option<i32>,
        voters: &[i32],
    ) -> QuorumChange {
        QuorumChange {
            metadata_offset: offset,
            epoch,
            timestamp: 1_000 + offset,
            kind,
            leader,
            voters: voters.to_vec(),
            granting_voters: Vec::new(),
        }
    }

    #[test]
    fn quorum_events_name_failovers_reelections_and_voter_changes() {
        use QuorumChangeKind::{LeaderChange, Voters};
        let got = quorum_events(&[
            change(0, 1, LeaderChange, Some(100), &[100]),
            change(1, 1, Voters, None, &[100]),
            change(7, 1, Voters, None, &[100, 101]),
            change(9, 1, Voters, None, &[100, 101, 102]),
            change(40, 2, LeaderChange, Some(101), &[100, 101, 102]),
            change(41, 2, Voters, None, &[100, 101, 102]),
            change(60, 3, LeaderChange, Some(101), &[100, 101, 102]),
            change(70, 3, Voters, None, &[101, 102]),
        ]);
        let kinds: Vec<QuorumEventKind> = got.iter().map(|e| e.event).collect();
        use QuorumEventKind as E;
        assert_eq!(
            kinds,
            [
                E::Elected,
                E::Voters,
                E::VotersChanged,
                E::VotersChanged,
                E::Failover,
                E::VotersRewritten,
                E::Reelected,
                E::VotersChanged
            ]
        );
        assert_eq!(got[0].previous_leader, None);
        assert_eq!(got[4].previous_leader, Some(100));
        assert_eq!(got[6].previous_leader, Some(101));
        assert_eq!(
            (got[2].added.as_slice(), got[2].removed.as_slice()),
            (&[101][..], &[][..])
        );
        assert_eq!(
            (got[7].added.as_slice(), got[7].removed.as_slice()),
            (&[][..], &[100][..])
        );
        // a voter set names no previous leader
        assert!(got
            .iter()
            .filter(|e| e.change.kind == Voters)
            .all(|e| e.previous_leader.is_none()));
    }

    #[test]
    fn a_million_checkpoint_entries_past_the_log_end_are_one_counted_fact() {
        let log = ReplicaLog {
            broker: 1,
            batches: Vec::new(),
            log_start_offset: 0,
            log_end_offset: 0,
            high_watermark: None,
            checkpoint_epochs: Some((0..1_000_000).map(|i| (i, i64::from(i) + 1)).collect()),
            first_segment_base: None,
            window_start: None,
        };
        let t = timeline(&log);
        let past: Vec<&Disagreement> = t
            .disagreements
            .iter()
            .filter(|d| d.code == "checkpoint-past-log-end")
            .collect();
        assert_eq!(past.len(), TOLD_PER_CODE + 1);
        assert_eq!(
            past[TOLD_PER_CODE].message,
            format!(
                "{} more like the above (epochs {TOLD_PER_CODE} to 999999)",
                1_000_000 - TOLD_PER_CODE
            )
        );
        assert_eq!(past[TOLD_PER_CODE].epoch, None);
    }
}
