//! What the nodes' own logs say (`server.log` and its siblings), as klf
//! reads them beside the data: the statements a post-mortem needs, each
//! with the file and line it came from, and klf's prediction held against
//! them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::format::kafka_log::{Event, Level};

/// The most statements of the nodes' logs klf keeps from one capture.
pub const MAX_EVENTS: usize = 1_000_000;

/// Where a statement was logged: the file and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LogSource {
    /// The log file.
    pub file: PathBuf,
    /// The line the statement starts on.
    pub line: u64,
}

/// One statement of a node's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The node whose log it is.
    pub node: i32,
    /// Where it was logged.
    pub source: LogSource,
    /// The time as written (`2026-12-06 02:28:55,118`, in the zone the
    /// node's JVM ran in: Kafka does not print it).
    pub time: String,
    /// That wall-clock time in milliseconds, read as if it were UTC (see
    /// [`crate::format::kafka_log::Entry::time_ms`]).
    pub time_ms: i64,
    /// The log level.
    pub level: Level,
    /// What it says.
    pub event: Event,
    /// The message as logged (first line), for the evidence.
    pub text: String,
}

/// How one log file was read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogFileRead {
    /// The file.
    pub path: PathBuf,
    /// The node it belongs to.
    pub node: Option<i32>,
    /// Lines read.
    pub lines: u64,
    /// Log records read.
    pub entries: u64,
    /// Statements klf knows among them.
    pub events: u64,
    /// Lines that are not part of any record (another layout, or bytes
    /// that are not a log).
    pub unreadable_lines: u64,
    /// Lines longer than klf keeps, cut.
    pub lines_cut: u64,
    /// Why reading stopped before the end, or the file could not be read
    /// at all (a cap reached, a gzip stream cut short, an I/O error).
    pub stopped: Option<String>,
    /// The read failed for the machine's reason (an I/O error): nothing is
    /// inferred from what the file would have said.
    pub io_error: bool,
}

/// Everything read from a capture's Kafka logs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrokerLogs {
    /// The files, as read.
    pub files: Vec<LogFileRead>,
    /// The statements, per node in the order the node logged them
    /// (rotated files merged by time, each file's own order kept).
    pub events: Vec<LoggedEvent>,
    /// Statements dropped past the cap on what klf keeps.
    pub events_dropped: u64,
}

impl BrokerLogs {
    /// Whether no log was read.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A truncation a broker logged, as klf reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedTruncation {
    /// The offset the log ended at after it: the offset logged, or the log
    /// end when that is above it (Kafka then truncates nothing).
    pub offset: i64,
    /// The offset as logged.
    pub logged_offset: i64,
    /// The leader it followed, when the log says (`leaderId=` of the
    /// fetcher, or the `Current leader is` of its follower line).
    pub leader: Option<i32>,
    /// The time as logged (`2026-12-06 02:28:55,116`), in the zone the
    /// node's JVM ran in, which Kafka does not print: not converted.
    pub logged_at: String,
    /// Where.
    pub source: LogSource,
    /// The line as logged (message only).
    pub text: String,
}

/// What a broker's log says of klf's prediction for one replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Kafka truncated where klf predicts.
    Agrees,
    /// Kafka truncated where klf's alternative protocol predicts (a
    /// ZooKeeper capture whose protocol is not known): the log says which
    /// protocol the cluster ran.
    AgreesWithAlternative,
    /// Kafka truncated elsewhere: klf's prediction is wrong, or the
    /// capture is not what the broker restarted from.
    Disagrees,
    /// The truncation was not compared (why is in
    /// [`TruncationCheck::why_not_compared`]).
    NotCompared,
}

/// Why a logged truncation was not compared with klf's prediction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum NotCompared {
    /// The log holds no start-up that loaded the captured state of the
    /// replica (a log end offset equal to the captured one): its
    /// truncations cannot be placed before or after the capture.
    NoLoadOfCapturedState,
    /// After loading the captured state the broker followed another
    /// leader than the one klf's prediction follows.
    OtherLeader {
        /// The leader in the log.
        logged: i32,
        /// klf's reference leader.
        reference: i32,
    },
    /// klf's prediction for the replica is not one offset (the prediction
    /// did not converge).
    NoPrediction,
    /// The broker became the partition's leader in an epoch whose records
    /// the capture holds: the truncations it logged before are history
    /// the data shows, and any after it are past the capture.
    LedInCapturedEpoch {
        /// The epoch.
        epoch: i32,
        /// Where it logged that.
        source: LogSource,
    },
    /// The broker loaded the captured state and logged no truncation of
    /// the partition after it (Kafka logs none when a follower has nothing
    /// to cut, and the log may end before the follower fetched).
    NothingLoggedAfterStartUp,
}

/// A replica's truncation as its broker logged it, held against klf's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncationCheck {
    /// The broker.
    pub broker: i32,
    /// klf's prediction: the offset the replica's log ends at after its
    /// truncation (its log end offset when nothing is cut).
    pub predicted: i64,
    /// The start-up at which the broker loaded the state the capture
    /// holds, when the log shows one.
    pub loaded_at: Option<LogSource>,
    /// The first truncation logged after that start-up (or, without one,
    /// the last one logged).
    pub logged: Option<LoggedTruncation>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why not compared, when not.
    pub why_not_compared: Option<NotCompared>,
    /// Truncations of the partition the broker logged before it loaded
    /// the captured state: history the data already shows.
    pub logged_before_capture: u64,
}
