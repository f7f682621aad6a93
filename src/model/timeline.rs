//! The plain data of a replica's leader-epoch timeline: which epochs wrote
//! which offset ranges according to the batch headers, beside what its
//! `leader-epoch-checkpoint` says, with every disagreement named; and a
//! partition's timelines with the controller's history.
//! `analysis::timeline` builds them.

use serde::Serialize;

use crate::model::history::QuorumChange;
use crate::model::{BatchSummary, PartitionHistory};

/// One leader epoch as the batch headers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpochSpan {
    /// The leader epoch (`partitionLeaderEpoch` of the batches).
    pub epoch: i32,
    /// First offset written in this epoch (base offset of its first batch).
    pub start_offset: i64,
    /// One past the last offset written in this epoch: the span is the
    /// half-open range `[start_offset, end)`, as `klf diff` and `klf dump`
    /// write ranges. A log's last span ends at the log end offset
    /// (`analysis::timeline::timeline_of_spans`).
    pub end: i64,
    /// Batches.
    pub batches: u64,
    /// Records (control records included).
    pub records: i64,
    /// Earliest `baseTimestamp` of its batches.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: i64,
    /// Latest `maxTimestamp` of its batches.
    #[serde(serialize_with = "crate::model::time::millis")]
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

impl EpochSpan {
    /// The span of one batch.
    pub fn of(b: &BatchSummary) -> EpochSpan {
        EpochSpan {
            epoch: b.partition_leader_epoch,
            start_offset: b.base_offset,
            end: b.last_offset.saturating_add(1),
            batches: 1,
            records: i64::from(b.record_count.max(0)),
            first_timestamp: b.first_timestamp,
            last_timestamp: b.max_timestamp,
        }
    }

    /// Extends this span by the next span of the same epoch.
    pub fn join(&mut self, next: &EpochSpan) {
        self.end = self.end.max(next.end);
        self.batches += next.batches;
        self.records += next.records;
        self.first_timestamp = self.first_timestamp.min(next.first_timestamp);
        self.last_timestamp = self.last_timestamp.max(next.last_timestamp);
    }
}

/// One partition's timelines.
#[derive(Debug, Clone)]
pub struct PartitionTimelines {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// One per replica, in broker order.
    pub replicas: Vec<Timeline>,
    /// The controller's history of the partition, if the capture has a
    /// metadata log that knows it.
    pub controller: Option<PartitionHistory>,
    /// Without it, why (no metadata log: a ZooKeeper-mode cluster, or not
    /// captured; or a log that does not know the partition).
    pub controller_missing: Option<String>,
    /// The KRaft quorum's history: for the metadata log's own partition
    /// (`__cluster_metadata-0`) only.
    pub quorum: Option<QuorumHistory>,
}

/// The KRaft controller quorum's history, read from the metadata log's
/// control records, and what each node's `quorum-state` says now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuorumHistory {
    /// The metadata log replica the records were read from (the most
    /// complete one of the capture).
    pub source: Option<std::path::PathBuf>,
    /// Each controller election and voter set written, in log order.
    pub changes: Vec<QuorumEvent>,
    /// Each node's `quorum-state` file, in node order.
    pub states: Vec<NodeQuorumState>,
}

/// One control record of the metadata log, with what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuorumEvent {
    /// The record.
    #[serde(flatten)]
    pub change: QuorumChange,
    /// What it means next to the records before it.
    pub event: QuorumEventKind,
    /// A controller election: the controller the last election before it
    /// chose (`null` for the first one read).
    pub previous_leader: Option<i32>,
    /// A voter set: the voters it adds to the last voter set read (empty
    /// for the first one).
    pub added: Vec<i32>,
    /// A voter set: the voters it removes from the last one.
    pub removed: Vec<i32>,
}

/// What a [`QuorumEvent`] is next to the records before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuorumEventKind {
    /// The first controller election the log holds (its start, or the
    /// first after the log's start was moved past older ones).
    Elected,
    /// A controller elected where another one led before: a failover.
    Failover,
    /// The same controller elected again at a new epoch.
    Reelected,
    /// The first voter set the log holds.
    Voters,
    /// A voter set that adds or removes voters.
    VotersChanged,
    /// A voter set the same as the one before.
    VotersRewritten,
}

/// A node's `quorum-state` file: its view of the quorum when it last
/// wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeQuorumState {
    /// The node (`null` when its folder does not say).
    pub node: Option<i32>,
    /// The file.
    pub file: std::path::PathBuf,
    /// The leader it knew (`null`: none, `leaderId` -1).
    pub leader: Option<i32>,
    /// The epoch it was in.
    pub leader_epoch: Option<i32>,
    /// The candidate it voted for in that epoch (`null`: none).
    pub voted_for: Option<i32>,
    /// The voters it lists (`currentVoters`, written by static quorums);
    /// `null` where the file has none (dynamic quorums keep the voter set
    /// in the log).
    pub voters: Option<Vec<i32>>,
    /// Why the file could not be read; `null` when it was.
    pub problem: Option<String>,
}

/// Where an entry of an incident timeline comes from: a file, and in it
/// the line (a node's own log) or the byte (the batch of a segment or of
/// the metadata log); neither for a file's modification time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntrySource {
    /// The file.
    pub file: std::path::PathBuf,
    /// The 1-based line of a log statement; `null` otherwise.
    pub line: Option<u64>,
    /// The byte a batch starts at; `null` otherwise.
    pub byte: Option<u64>,
}

/// How the offset from UTC of a node's log times is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneSource {
    /// From the node's statements matched with the metadata log's records.
    Inferred,
    /// Given with `--log-utc-offset`.
    Given,
    /// Not known: the times are read as UTC.
    Assumed,
}

/// The offset from UTC one node's log times are read with, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeZone {
    /// The node.
    pub node: i32,
    /// Minutes east of UTC (`+02:00` is 120).
    pub utc_offset_minutes: i32,
    /// The same as `+HH:MM`.
    pub utc_offset: String,
    /// How it is known.
    pub how: ZoneSource,
    /// Statements of the node matched with the metadata log's records.
    pub statements: u64,
    /// Of the matched statements, the largest distance (ms) between the
    /// logged time (read with the offset) and its record's timestamp;
    /// `null` without matches.
    pub max_residual_ms: Option<i64>,
    /// In words.
    pub text: String,
    /// The node's first statement klf read, in UTC (read with the
    /// offset); `null` without one.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub first_timestamp: Option<i64>,
    /// Its last one.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub last_timestamp: Option<i64>,
}

/// One entry of an incident timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IncidentEntry {
    /// When, in UTC: a log line's time read with its node's offset from
    /// UTC ([`NodeZone`]), a record's or a batch's timestamp, a file's
    /// modification time.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub time: i64,
    /// The node that logged it, whose batch or file it is; `null` for the
    /// metadata log's records.
    pub node: Option<i32>,
    /// The topic it is about; `null` for node-wide events (a fencing, a
    /// session expiry, a controlled shutdown, a broker record).
    pub topic: Option<String>,
    /// The partition it is about; `null` with `topic`.
    pub partition: Option<i32>,
    /// What it is: a kebab-case code.
    pub kind: &'static str,
    /// klf's words.
    pub text: String,
    /// Where it comes from.
    pub source: EntrySource,
    /// A log line's time as written (local, no zone); `null` otherwise.
    pub logged_at: Option<String>,
    /// A log line's message as logged (its first line, at most 1 KiB);
    /// `null` otherwise.
    pub logged: Option<String>,
    /// The offset from UTC a log line's time was read with (`+HH:MM`);
    /// `null` otherwise.
    pub utc_offset: Option<String>,
    /// How that offset is known (`assumed`: the time is the line's as if
    /// it were UTC); `null` for what is not a log line.
    pub zone: Option<ZoneSource>,
    /// A metadata record that changes the ISR: Kafka's reason for it, as a
    /// node logged it; `null` when none was logged (or for other entries).
    pub reason: Option<String>,
}

/// How a change of the ISR the logs state compares with the metadata log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IsrVerdict {
    /// A statement of the record's partition epoch states its ISR.
    Agrees,
    /// The statements of the record's partition epoch state another ISR
    /// or leader epoch.
    Differs,
    /// No statement of the record's partition epoch, while the logs cover
    /// its time.
    NotLogged,
    /// No statement, and the logs do not cover the record's time.
    NotCovered,
    /// No statement, and every broker that could have stated it (the
    /// replicas and the ISR before the change) was fenced or unregistered
    /// when the record was written: a broker that is down logs nothing
    /// then, and applies only the latest state when it starts.
    ReplicasDown,
    /// A logged partition epoch within the metadata log's that no record
    /// has.
    NoRecord,
    /// A logged partition epoch past the metadata log's last (logged after
    /// the capture, or a metadata log cut short).
    AfterMetadataLog,
    /// A logged partition epoch before the metadata log's first (its start
    /// was snapshotted away).
    BeforeMetadataLog,
}

/// A statement of a node's log that states a partition's ISR at a
/// partition epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IsrStatement {
    /// The node.
    pub node: i32,
    /// The entry kind of the statement (`log-isr-updated`, ...).
    pub kind: &'static str,
    /// The ISR it states.
    pub isr: Vec<i32>,
    /// The leader epoch it states; `null` when it states none.
    pub leader_epoch: Option<i32>,
    /// The time as written.
    pub logged_at: String,
    /// The time in UTC (read with the node's offset).
    #[serde(serialize_with = "crate::model::time::millis")]
    pub time: i64,
    /// Where.
    pub source: crate::model::broker_log::LogSource,
}

/// One ISR change, from the metadata log, the logs, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IsrChange {
    /// The partition epoch.
    pub partition_epoch: i32,
    /// How the logs and the metadata log compare.
    pub verdict: IsrVerdict,
    /// The record's offset in the metadata log; `null` without a record.
    pub metadata_offset: Option<i64>,
    /// The record's timestamp; `null` without a record.
    #[serde(serialize_with = "crate::model::time::millis")]
    pub timestamp: Option<i64>,
    /// The ISR the record sets; `null` without a record.
    pub isr: Option<Vec<i32>>,
    /// The leader epoch after the record; `null` without a record.
    pub leader_epoch: Option<i32>,
    /// The statement that states it (the leader's first), `null` when none.
    pub logged: Option<IsrStatement>,
    /// Kafka's reason for the change, as logged (the leader's `Out of sync
    /// replicas: ...`, the controller's fencing of a removed replica, a
    /// removed replica's controlled shutdown); `null` when none was.
    pub reason: Option<String>,
    /// Where the reason was logged.
    pub reason_source: Option<crate::model::broker_log::LogSource>,
}

/// The ISR changes of a partition: the metadata log's records against the
/// statements of the nodes' logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct IsrComparison {
    /// Whether they were compared.
    pub compared: bool,
    /// Why not, when not.
    pub why_not: Option<String>,
    /// In partition epoch order: every record that changes the ISR, and
    /// every logged partition epoch no record has.
    pub changes: Vec<IsrChange>,
}

/// A partition's incident timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionIncident {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Whether it loses data (as `klf diff` decides).
    pub loses_data: bool,
    /// Data records it loses (`klf diff`'s `loss.records`).
    pub records_lost: u64,
    /// Of those, proven committed.
    pub committed_proven: u64,
    /// At most possibly committed; `null` when some cannot be bounded.
    pub committed_possible: Option<u64>,
    /// Of those, the ones whose commitment cannot be bounded.
    pub committed_unknown: u64,
    /// The entries, in time order.
    pub entries: Vec<IncidentEntry>,
    /// Log lines about it past klf's cap on one timeline
    /// (`analysis::incident::MAX_LOG_LINES`), not among the entries.
    pub log_lines_left_out: u64,
    /// The ISR changes, the logs against the metadata log.
    pub isr_changes: IsrComparison,
}

/// The first batch of a leader epoch a replica holds, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochBoundary {
    /// The replica's node.
    pub broker: i32,
    /// The epoch.
    pub epoch: i32,
    /// Its first offset (the batch's base offset).
    pub offset: i64,
    /// The batch's first timestamp.
    pub timestamp: i64,
    /// The segment file and the byte the batch starts at.
    pub source: EntrySource,
}

/// A checkpoint file's modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointTime {
    /// The node.
    pub broker: i32,
    /// `replication-offset-checkpoint` (the broker's), else the replica's
    /// `leader-epoch-checkpoint`.
    pub high_watermarks: bool,
    /// The file.
    pub file: std::path::PathBuf,
    /// When it was last modified (ms, to the second).
    pub modified: i64,
    /// What it says of the partition, in words.
    pub says: String,
}

/// `+HH:MM` of an offset in minutes.
pub fn offset_text(minutes: i32) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// Parses `+HH:MM`, `-HH:MM`, `+HH` or `Z` into minutes east of UTC (at
/// most 18 hours either way, as java.time allows).
pub fn parse_offset(s: &str) -> Option<i32> {
    let s = s.trim();
    if s == "Z" || s == "z" {
        return Some(0);
    }
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = match rest.split_once(':') {
        Some((h, m)) => (h, m),
        None if rest.len() == 4 => rest.split_at(2),
        None => (rest, "0"),
    };
    let digits = |x: &str| !x.is_empty() && x.len() <= 2 && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return None;
    }
    let (h, m): (i32, i32) = (h.parse().ok()?, m.parse().ok()?);
    if m >= 60 || h * 60 + m > 18 * 60 {
        return None;
    }
    Some(sign * (h * 60 + m))
}
