//! Kafka's own log files (`server.log`, `controller.log`,
//! `state-change.log` and their rotated `.yyyy-MM-dd-HH` siblings) in the
//! default layout of every release from 2.8 to 4.4, `[%d] %p %m (%c)%n`:
//!
//! ```text
//! [2026-12-06 02:28:55,118] INFO [UnifiedLog partition=unclean-0, dir=/d] Truncating to offset 100 (org.apache.kafka.storage.internals.log.UnifiedLog)
//! ```
//!
//! [`entries`] cuts the bytes into [`Entry`]s: a record starts with
//! `[yyyy-MM-dd HH:mm:ss,SSS] LEVEL `; every other line continues the record
//! before it. The ` (logger)` closes the message: it ends the first line of
//! a one-line message, but the last line of a message that holds newlines
//! (`KafkaConfig values:` …); lines after it (a stack trace) are the entry's
//! [`Entry::continuation`]. [`event`] then reads the message of an entry
//! for the few statements a post-mortem needs (truncations, ISR changes,
//! leader and follower transitions, unclean elections, fencing, session
//! expiry, producer append errors); any other message is an entry without
//! an event.
//!
//! The input is untrusted: lines are cut at [`MAX_LINE`] bytes, an entry
//! keeps at most a given number of extra lines (the rest are counted),
//! invalid UTF-8 is read lossily, and a line that neither starts a record
//! nor follows one is reported as [`Unreadable`] while reading goes on.

use std::borrow::Cow;

/// The longest line kept, in bytes; a longer line is cut here and the cut
/// counted in [`Entry::lines_cut`].
pub const MAX_LINE: usize = 64 * 1024;

/// How many lines after the first an entry keeps by default (message lines
/// and continuation lines together); see [`entries_with`].
pub const DEFAULT_MAX_EXTRA_LINES: usize = 64;

/// A log4j level as `%p` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// `TRACE`
    Trace,
    /// `DEBUG`
    Debug,
    /// `INFO`
    Info,
    /// `WARN`
    Warn,
    /// `ERROR`
    Error,
    /// `FATAL`
    Fatal,
}

impl Level {
    /// The level as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
            Level::Fatal => "FATAL",
        }
    }

    fn parse(s: &[u8]) -> Option<Level> {
        Some(match s {
            b"TRACE" => Level::Trace,
            b"DEBUG" => Level::Debug,
            b"INFO" => Level::Info,
            b"WARN" => Level::Warn,
            b"ERROR" => Level::Error,
            b"FATAL" => Level::Fatal,
            _ => return None,
        })
    }
}

/// One log record: its first line and the lines that continue it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based number of the record's first line in the input.
    pub line: u64,
    /// The timestamp as written, e.g. `2026-12-06 02:28:55,118`.
    pub timestamp: String,
    /// Milliseconds since 1970-01-01 00:00 of that wall-clock time, read
    /// as if it were UTC. Kafka prints no zone (the time is in the JVM's
    /// default zone): this value is naive, and the caller who knows the
    /// zone subtracts its offset.
    pub time_ms: i64,
    /// `%p`.
    pub level: Level,
    /// `%m`: the text between the level and the logger; the lines of a
    /// message that holds newlines are joined with `\n`.
    pub message: String,
    /// `%c`, the text of the last ` (…)` that closes the message; `None`
    /// when no line of the record closed it (a torn record, or a layout
    /// without the logger).
    pub logger: Option<String>,
    /// Lines after the one that closed the message (a stack trace: the
    /// exception's `Class: message`, `\tat …`, `Caused by: …`).
    pub continuation: Vec<String>,
    /// Lines of the record not kept (beyond the cap on extra lines).
    pub lines_dropped: u64,
    /// Lines of the record cut at [`MAX_LINE`] bytes.
    pub lines_cut: u32,
    /// The record's last line has no line end: the file ends inside it
    /// (a torn write or a copy taken while Kafka was writing).
    pub torn: bool,
}

/// A run of lines that are not part of any record: they come before the
/// first record of the input and do not start one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// 1-based number of the run's first line.
    pub line: u64,
    /// How many lines the run holds.
    pub lines: u64,
    /// Why they were not read.
    pub reason: &'static str,
}

/// What the reader yields: a record, or lines it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A record.
    Entry(Entry),
    /// Lines before the first record that do not start one.
    Unreadable(Unreadable),
}

/// The records of a Kafka log file, in file order; see [`entries`].
#[derive(Debug, Clone)]
pub struct Entries<'a> {
    data: &'a [u8],
    pos: usize,
    /// Number of the next line to read (1-based).
    line: u64,
    max_extra: usize,
}

/// The records of `data` (the bytes of one log file), keeping at most
/// [`DEFAULT_MAX_EXTRA_LINES`] lines after each record's first.
pub fn entries(data: &[u8]) -> Entries<'_> {
    entries_with(data, DEFAULT_MAX_EXTRA_LINES)
}

/// The records of `data`, keeping at most `max_extra_lines` lines after each
/// record's first (lines beyond are counted in [`Entry::lines_dropped`]).
pub fn entries_with(data: &[u8], max_extra_lines: usize) -> Entries<'_> {
    Entries {
        data,
        pos: 0,
        line: 1,
        max_extra: max_extra_lines,
    }
}

/// One physical line: its bytes (without `\n` and a `\r` before it), cut at
/// [`MAX_LINE`], whether it was cut, whether it had a line end.
struct RawLine<'a> {
    bytes: &'a [u8],
    cut: bool,
    ended: bool,
}

impl<'a> Entries<'a> {
    fn peek_line(&self) -> Option<(RawLine<'a>, usize)> {
        let rest = self.data.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let (mut line, next, ended) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], self.pos + i + 1, true),
            None => (rest, self.data.len(), false),
        };
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        let cut = line.len() > MAX_LINE;
        if cut {
            line = &line[..MAX_LINE];
        }
        Some((
            RawLine {
                bytes: line,
                cut,
                ended,
            },
            next,
        ))
    }

    fn advance(&mut self, next: usize) {
        self.pos = next;
        self.line = self.line.saturating_add(1);
    }
}

impl Iterator for Entries<'_> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        let (first, next) = self.peek_line()?;
        let first_no = self.line;
        let Some(head) = header(first.bytes) else {
            // lines before any record: one item for the whole run
            self.advance(next);
            let mut lines = 1u64;
            while let Some((l, n)) = self.peek_line() {
                if header(l.bytes).is_some() {
                    break;
                }
                self.advance(n);
                lines += 1;
            }
            return Some(Item::Unreadable(Unreadable {
                line: first_no,
                lines,
                reason: "does not start with `[yyyy-MM-dd HH:mm:ss,SSS] LEVEL` and no record comes before it",
            }));
        };
        self.advance(next);
        let rest = lossy(&first.bytes[head.len..]);
        let mut entry = Entry {
            line: first_no,
            timestamp: head.timestamp,
            time_ms: head.time_ms,
            level: head.level,
            message: String::new(),
            logger: None,
            continuation: Vec::new(),
            lines_dropped: 0,
            lines_cut: u32::from(first.cut),
            torn: !first.ended,
        };
        match split_logger(&rest) {
            Some((m, lg)) if !first.cut => {
                entry.message = m.to_string();
                entry.logger = Some(lg.to_string());
            }
            _ => entry.message = rest.into_owned(),
        }
        let mut kept = 0usize;
        while let Some((l, n)) = self.peek_line() {
            if header(l.bytes).is_some() {
                break;
            }
            self.advance(n);
            entry.torn = !l.ended;
            if l.cut {
                entry.lines_cut = entry.lines_cut.saturating_add(1);
            }
            let text = lossy(l.bytes);
            let keep = kept < self.max_extra;
            if keep {
                kept += 1;
            } else {
                entry.lines_dropped = entry.lines_dropped.saturating_add(1);
            }
            if entry.logger.is_none() {
                // still inside a message that holds newlines
                let closed = if l.cut { None } else { split_logger(&text) };
                if let Some((m, lg)) = closed {
                    entry.logger = Some(lg.to_string());
                    if keep {
                        entry.message.push('\n');
                        entry.message.push_str(m);
                    }
                } else if keep {
                    entry.message.push('\n');
                    entry.message.push_str(&text);
                }
            } else if keep {
                entry.continuation.push(text.into_owned());
            }
        }
        Some(Item::Entry(entry))
    }
}

fn lossy(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(b)
}

struct Header {
    /// Bytes of the line the header takes (`[…] LEVEL `).
    len: usize,
    timestamp: String,
    time_ms: i64,
    level: Level,
}

/// `[yyyy-MM-dd HH:mm:ss,SSS] LEVEL ` at the start of a line.
fn header(line: &[u8]) -> Option<Header> {
    // "[" + 23 + "] "
    let ts = line.get(1..24)?;
    if line.first() != Some(&b'[') || line.get(24..26) != Some(b"] ") {
        return None;
    }
    let time_ms = timestamp_ms(ts)?;
    let rest = &line[26..];
    let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
    let level = Level::parse(&rest[..end])?;
    let len = 26 + end + usize::from(end < rest.len());
    Some(Header {
        len,
        timestamp: String::from_utf8_lossy(ts).into_owned(),
        time_ms,
        level,
    })
}

/// `yyyy-MM-dd HH:mm:ss,SSS` as naive milliseconds since the epoch.
fn timestamp_ms(ts: &[u8]) -> Option<i64> {
    if ts.len() != 23 {
        return None;
    }
    let num = |a: usize, b: usize| -> Option<i64> {
        let s = ts.get(a..b)?;
        let mut v = 0i64;
        for &c in s {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(c - b'0');
        }
        Some(v)
    };
    let seps = [
        (4, b'-'),
        (7, b'-'),
        (10, b' '),
        (13, b':'),
        (16, b':'),
        (19, b','),
    ];
    if seps.iter().any(|&(i, c)| ts.get(i) != Some(&c)) {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s, ms) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let dim = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > dim || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    // days from civil (H. Hinnant)
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms)
}

/// The message and the logger of a line that ends with ` (logger)`: the
/// last ` (` whose tail up to the final `)` is a logger name.
fn split_logger(line: &str) -> Option<(&str, &str)> {
    let body = line.strip_suffix(')')?;
    let open = body.rfind('(')?;
    let name = &body[open + 1..];
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$' | b'-'));
    if !ok {
        return None;
    }
    let before = &body[..open];
    // the layout puts one space before the `(`; a message that ended with a
    // newline leaves the `(` after a line that holds only that space
    let msg = before.strip_suffix(' ')?;
    Some((msg, name))
}

/// A partition as Kafka names it, `topic-partition`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Partition {
    /// The topic (may hold `-` and `.`).
    pub topic: String,
    /// The partition number.
    pub partition: i32,
}

/// Which of Kafka's own log files a file name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogFileKind {
    /// `server.log`: the broker's (and a ZooKeeper-mode controller's) log.
    Server,
    /// `controller.log`: the controller's own log (KRaft from 3.4, and the
    /// ZooKeeper-mode controller).
    Controller,
    /// `state-change.log`: leader and follower transitions.
    StateChange,
    /// `kafkaServer.out`, `controller.out`: the console of a broker or
    /// controller started with `-daemon`, the same lines as its logs.
    Console,
}

/// The kind of Kafka log a file name is, and whether it is gzip
/// compressed: `server.log`, `controller.log`, `state-change.log`,
/// `kafkaServer.out`, each possibly rotated (`server.log.2026-12-06-04`,
/// `server.log.1`) and possibly compressed (`….gz`).
pub fn log_file_kind(name: &str) -> Option<(LogFileKind, bool)> {
    const BASES: [(&str, LogFileKind); 5] = [
        ("server.log", LogFileKind::Server),
        ("controller.log", LogFileKind::Controller),
        ("state-change.log", LogFileKind::StateChange),
        ("kafkaServer.out", LogFileKind::Console),
        ("controller.out", LogFileKind::Console),
    ];
    let (rest, gz) = match name.strip_suffix(".gz") {
        Some(r) => (r, true),
        None => (name, false),
    };
    for (base, kind) in BASES {
        let Some(suffix) = rest.strip_prefix(base) else {
            continue;
        };
        let rotated = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || b == b'-' || b == b'.')
        };
        if suffix.is_empty() || suffix.strip_prefix('.').is_some_and(rotated) {
            return Some((kind, gz));
        }
    }
    None
}

/// `topic-partition` (the last `-` splits), or the 4.1+ `topicId:topic-partition`
/// form with its topic id.
pub fn partition_name(s: &str) -> Option<(Option<&str>, Partition)> {
    let (id, name) = match s.split_once(':') {
        Some((id, name)) => (Some(id), name),
        None => (None, s),
    };
    let (topic, p) = name.rsplit_once('-')?;
    if topic.is_empty() || p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let partition = p.parse().ok()?;
    Some((
        id,
        Partition {
            topic: topic.to_string(),
            partition,
        },
    ))
}

/// Why a follower's fetcher truncated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TruncationReason {
    /// `… to local high watermark H` (2.8, 3.0) or `… due to local high
    /// watermark H` (3.1+): no leader-epoch answer, truncated to its own HW.
    LocalHighWatermark(i64),
    /// `… due to leader epoch and offset EpochEndOffset(…, leaderEpoch=E,
    /// endOffset=O)` (3.1+): the leader's answer for the follower's epoch.
    LeaderEpoch {
        /// The leader epoch the leader answered for.
        leader_epoch: i32,
        /// The end offset of that epoch on the leader.
        end_offset: i64,
    },
}

/// What a producer append failed with, from the exception's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProducerErrorKind {
    /// `Out of order sequence number for producer …: S (incoming seq.
    /// number), L (current end sequence number)` (or `(earliest seen
    /// sequence)`, 3.6+).
    OutOfOrderSequence {
        /// The incoming sequence number.
        incoming: i64,
        /// The broker's current end (or earliest seen) sequence number.
        current: i64,
    },
    /// `Invalid sequence number for new epoch of producer …: E (request
    /// epoch), S (seq. number), C (current producer epoch)`.
    InvalidSequenceForNewEpoch {
        /// The epoch of the request.
        request_epoch: i64,
        /// Its first sequence number.
        sequence: i64,
        /// The broker's current epoch for the producer.
        current_epoch: i64,
    },
    /// `Epoch of producer … is E, which is smaller than the last seen epoch C`.
    InvalidProducerEpoch {
        /// The epoch of the request.
        epoch: i64,
        /// The last epoch the broker saw.
        last_epoch: i64,
    },
    /// Any other exception: its text.
    Other,
}

/// A statement of Kafka's a post-mortem needs, read from one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A follower's fetcher truncates a partition (`[ReplicaFetcher …]
    /// Truncating partition T-P …`).
    FetcherTruncation {
        /// The partition.
        partition: Partition,
        /// The offset truncated to (`TruncationState(offset=O, …)`, or the
        /// high watermark on 2.8/3.0).
        offset: i64,
        /// `completed=` of the truncation state (3.1+).
        completed: Option<bool>,
        /// Why.
        reason: TruncationReason,
        /// The leader fetched from (`leaderId=L` of the fetcher's prefix).
        leader: Option<i32>,
    },
    /// The log itself truncates (`[Log|UnifiedLog partition=T-P, dir=D]
    /// Truncating to offset O`).
    LogTruncation {
        /// The partition.
        partition: Partition,
        /// The log directory named in the prefix.
        dir: Option<String>,
        /// The offset truncated to.
        offset: i64,
    },
    /// A broker loaded a partition's log at start-up (`Completed load of
    /// Log(dir=…, topic=T, partition=P, highWatermark=H, …,
    /// logStartOffset=S, logEndOffset=E) with N segments …`): the state
    /// it starts from, which a capture of the stopped broker holds.
    LogLoaded {
        /// The partition.
        partition: Partition,
        /// `logStartOffset`.
        log_start_offset: i64,
        /// `logEndOffset`.
        log_end_offset: i64,
        /// `highWatermark` as loaded.
        high_watermark: i64,
    },
    /// `Truncating to O has no effect as the largest offset in the log is N`.
    LogTruncationNoEffect {
        /// The partition.
        partition: Partition,
        /// The offset asked.
        offset: i64,
        /// The largest offset in the log.
        largest: i64,
    },
    /// `Truncating T-P to offset O below high watermark H` (WARN): committed
    /// records are removed.
    TruncationBelowHighWatermark {
        /// The partition.
        partition: Partition,
        /// The offset truncated to.
        offset: i64,
        /// The high watermark it is below.
        high_watermark: i64,
    },
    /// `[Partition T-P broker=N] Shrinking ISR from A to B. … Out of sync
    /// replicas: (brokerId: R, …).`
    IsrShrink {
        /// The partition.
        partition: Partition,
        /// The ISR before.
        from: Vec<i32>,
        /// The ISR after.
        to: Vec<i32>,
        /// The reason Kafka states (`Out of sync replicas`).
        reason: String,
        /// The brokers it names as out of sync.
        out_of_sync: Vec<i32>,
    },
    /// ZooKeeper controller (state-change log, 2.8-3.9): `Partition T-P
    /// state changed to (Leader:L,ISR:…,LeaderEpoch:E,…) after removing
    /// replica R from the ISR as part of transition to OfflineReplica`.
    IsrReplicaRemoved {
        /// The partition.
        partition: Partition,
        /// The replica removed.
        replica: i32,
        /// The leader after (-1: none).
        leader: i32,
        /// The ISR after.
        isr: Vec<i32>,
        /// The leader epoch after (the controller bumps it).
        leader_epoch: i32,
    },
    /// `[Partition T-P broker=N] ISR updated to A and version updated to V`
    /// (expansion or committed shrink; the direction is the previous ISR's).
    IsrUpdated {
        /// The partition.
        partition: Partition,
        /// The ISR now.
        isr: Vec<i32>,
        /// The partition epoch (3.1+) or ZooKeeper version (2.8, 3.0: `[V]`).
        version: i64,
        /// `(under-min-isr)` was stated (3.5+).
        under_min_isr: bool,
    },
    /// `Leader T-P … starts at leader epoch E from offset O …` (state change).
    BecameLeader {
        /// The partition.
        partition: Partition,
        /// The new leader epoch.
        leader_epoch: i32,
        /// The offset the epoch starts at (the log end offset).
        start_offset: i64,
        /// The high watermark.
        high_watermark: Option<i64>,
        /// The partition epoch (3.x+).
        partition_epoch: Option<i32>,
        /// The ISR.
        isr: Option<Vec<i32>>,
        /// The previous leader epoch.
        previous_leader_epoch: Option<i32>,
    },
    /// `Follower T-P starts at leader epoch E from offset O …`.
    BecameFollower {
        /// The partition.
        partition: Partition,
        /// The new leader epoch.
        leader_epoch: i32,
        /// The follower's log end offset then.
        start_offset: i64,
        /// The high watermark.
        high_watermark: Option<i64>,
        /// The partition epoch (3.x+).
        partition_epoch: Option<i32>,
        /// `Current leader is L` (3.x+).
        leader: Option<i32>,
        /// The previous leader epoch.
        previous_leader_epoch: Option<i32>,
    },
    /// KRaft controller: `UNCLEAN partition change for T-P with topic ID ID:
    /// isr: [A] -> [B], leader: X -> Y, …` (fields only when changed).
    UncleanPartitionChange {
        /// The partition.
        partition: Partition,
        /// The topic id (base64).
        topic_id: String,
        /// ISR before and after.
        isr: Option<(Vec<i32>, Vec<i32>)>,
        /// Leader before and after.
        leader: Option<(i32, i32)>,
        /// Leader epoch before and after.
        leader_epoch: Option<(i32, i32)>,
        /// Partition epoch before and after.
        partition_epoch: Option<(i32, i32)>,
    },
    /// `Setting new leader for topicId ID, partition P to N using an unclean
    /// election` (3.6+).
    UncleanElection {
        /// The topic id.
        topic_id: String,
        /// The partition number.
        partition: i32,
        /// The new leader.
        leader: i32,
    },
    /// A broker fenced or unfenced by the KRaft controller.
    BrokerFencing {
        /// The broker.
        broker: i32,
        /// Its broker epoch, when stated.
        epoch: Option<i64>,
        /// true: fenced; false: unfenced.
        fenced: bool,
        /// true: `Fencing broker B … because its session has timed out.`;
        /// false: a replayed `BrokerRegistrationChangeRecord(… fenced=±1 …)`.
        session_timeout: bool,
    },
    /// ZooKeeper mode: `[ZooKeeperClient …] Session expired.`
    SessionExpired {
        /// The prefix naming the client (`ZooKeeperClient Kafka server`).
        client: String,
    },
    /// A broker begins a controlled shutdown (`[KafkaServer id=B] Starting
    /// controlled shutdown`, `[BrokerLifecycleManager id=B] Beginning
    /// controlled shutdown.`).
    ControlledShutdown {
        /// The broker.
        broker: i32,
    },
    /// `Error processing append operation on partition [ID:]T-P` with the
    /// exception on the next line, or the producer-state WARN `Epoch of
    /// producer …`.
    ProducerAppendError {
        /// The partition.
        partition: Partition,
        /// The topic id (4.1+ `ID:T-P`).
        topic_id: Option<String>,
        /// The producer id, when the exception names it.
        producer_id: Option<i64>,
        /// The offset the exception names.
        offset: Option<i64>,
        /// What failed.
        kind: ProducerErrorKind,
        /// The exception line (`Class: message`), when there is one.
        exception: Option<String>,
    },
    /// A broker applied a change of the partition's registration that kept
    /// its role and leader epoch (`[Broker id=N] Skipped the become-leader
    /// state change for T-P with topic id … partition registration
    /// PartitionRegistration(… isr=[1, 2], … leader=1, …, leaderEpoch=0,
    /// partitionEpoch=1) …`; before 3.7 `… partition state
    /// LeaderAndIsrPartitionState(…)`): how a broker states an ISR change
    /// the controller made (a replica fenced or shut down), which no
    /// `ISR updated` line states.
    RegistrationApplied {
        /// The partition.
        partition: Partition,
        /// `become-leader` (the broker leads) or `become-follower`.
        as_leader: bool,
        /// `leader=` of the registration.
        leader: Option<i32>,
        /// `leaderEpoch=`.
        leader_epoch: Option<i32>,
        /// `isr=[…]`.
        isr: Option<Vec<i32>>,
        /// `partitionEpoch=` (KRaft), or `zkVersion=` (ZooKeeper mode).
        partition_epoch: Option<i32>,
    },
}

impl Event {
    /// The partition the statement is about, when it names one.
    pub fn partition(&self) -> Option<&Partition> {
        match self {
            Event::FetcherTruncation { partition, .. }
            | Event::LogTruncation { partition, .. }
            | Event::LogLoaded { partition, .. }
            | Event::LogTruncationNoEffect { partition, .. }
            | Event::TruncationBelowHighWatermark { partition, .. }
            | Event::IsrShrink { partition, .. }
            | Event::IsrReplicaRemoved { partition, .. }
            | Event::IsrUpdated { partition, .. }
            | Event::BecameLeader { partition, .. }
            | Event::BecameFollower { partition, .. }
            | Event::UncleanPartitionChange { partition, .. }
            | Event::ProducerAppendError { partition, .. }
            | Event::RegistrationApplied { partition, .. } => Some(partition),
            Event::UncleanElection { .. }
            | Event::BrokerFencing { .. }
            | Event::SessionExpired { .. }
            | Event::ControlledShutdown { .. } => None,
        }
    }
}

/// The event an entry states, if it is one [`Event`] knows. An entry whose
/// message no line closed with ` (logger)` ([`Entry::logger`] is `None`: a
/// torn or cut record) states none: its numbers may be cut short.
pub fn event(entry: &Entry) -> Option<Event> {
    entry.logger.as_ref()?;
    let (prefix, msg) = split_prefix(&entry.message);
    if let Some(rest) = msg.strip_prefix("Truncating ") {
        return truncation(prefix, rest);
    }
    if let Some(rest) = msg.strip_prefix("Completed load of Log(") {
        return loaded(rest);
    }
    if let Some(e) = isr(prefix, msg) {
        return Some(e);
    }
    if let Some(rest) = msg.strip_prefix("Partition ") {
        return replica_removed(rest);
    }
    if let Some(rest) = msg.strip_prefix("Leader ") {
        return became(rest, true);
    }
    if let Some(rest) = msg.strip_prefix("Follower ") {
        return became(rest, false);
    }
    if let Some(rest) = msg.strip_prefix("Skipped the become-") {
        return registration_applied(rest);
    }
    if let Some(rest) = msg.strip_prefix("UNCLEAN partition change for ") {
        return unclean(rest);
    }
    if let Some(rest) = msg.strip_prefix("Setting new leader for topicId ") {
        let (id, rest) = rest.split_once(", partition ")?;
        let (p, rest) = rest.split_once(" to ")?;
        let (leader, rest) = rest.split_once(' ')?;
        if !rest.starts_with("using an unclean election") {
            return None;
        }
        return Some(Event::UncleanElection {
            topic_id: id.to_string(),
            partition: p.parse().ok()?,
            leader: leader.parse().ok()?,
        });
    }
    if let Some(rest) = msg.strip_prefix("Fencing broker ") {
        if !rest.ends_with("because its session has timed out.") {
            return None;
        }
        let (b, _) = rest.split_once(' ')?;
        return Some(Event::BrokerFencing {
            broker: b.parse().ok()?,
            epoch: num_after(rest, "at epoch "),
            fenced: true,
            session_timeout: true,
        });
    }
    if msg.starts_with("Replayed BrokerRegistrationChangeRecord ") {
        let fenced = num_after(msg, " fenced=")?;
        if fenced == 0 {
            return None;
        }
        return Some(Event::BrokerFencing {
            broker: i32::try_from(num_after(msg, "(brokerId=")?).ok()?,
            epoch: num_after(msg, " brokerEpoch="),
            fenced: fenced > 0,
            session_timeout: false,
        });
    }
    if msg == "Session expired." {
        return Some(Event::SessionExpired {
            client: prefix?.to_string(),
        });
    }
    if msg == "Starting controlled shutdown" || msg == "Beginning controlled shutdown." {
        let id = num_after(prefix?, "id=")?;
        return Some(Event::ControlledShutdown {
            broker: i32::try_from(id).ok()?,
        });
    }
    if let Some(rest) = msg.strip_prefix("Error processing append operation on partition ") {
        let (topic_id, partition) = partition_name(rest.trim_end())?;
        // the exception is the line after the message; an empty line is
        // none (nor is it in a digest's reduced copy, where the lines of
        // the records after are left empty)
        let exception = entry.continuation.first().filter(|x| !x.trim().is_empty());
        let (producer_id, offset, kind) = match exception {
            Some(x) => producer_error(x),
            None => (None, None, ProducerErrorKind::Other),
        };
        return Some(Event::ProducerAppendError {
            partition,
            topic_id: topic_id.map(str::to_string),
            producer_id,
            offset,
            kind,
            exception: exception.cloned(),
        });
    }
    if msg.starts_with("Epoch of producer ") {
        let (_, t) = msg.split_once(" in ")?;
        let (p, _) = t.split_once(' ')?;
        let (topic_id, partition) = partition_name(p)?;
        let (producer_id, offset, kind) = producer_error(msg);
        return Some(Event::ProducerAppendError {
            partition,
            topic_id: topic_id.map(str::to_string),
            producer_id,
            offset,
            kind,
            exception: None,
        });
    }
    None
}

/// `[prefix] rest` → (prefix, rest); a message without one is all rest.
fn split_prefix(msg: &str) -> (Option<&str>, &str) {
    if let Some(r) = msg.strip_prefix('[') {
        if let Some(i) = r.find("] ") {
            return (Some(&r[..i]), &r[i + 2..]);
        }
    }
    (None, msg)
}

/// The integer right after `key` in `s` (an optional `-`, then digits).
fn num_after(s: &str, key: &str) -> Option<i64> {
    let i = s.find(key)? + key.len();
    leading_num(&s[i..])
}

fn leading_num(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let neg = b.first() == Some(&b'-');
    let start = usize::from(neg);
    let end = start
        + b.get(start..)?
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
    if end == start {
        return None;
    }
    s.get(..end)?.parse().ok()
}

fn num32_after(s: &str, key: &str) -> Option<i32> {
    i32::try_from(num_after(s, key)?).ok()
}

/// `1,2,3` or `1, 2, 3` (an empty string is the empty list).
fn id_list(s: &str) -> Option<Vec<i32>> {
    let s = s.trim();
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split(',').map(|x| x.trim().parse().ok()).collect()
}

/// `[1,2,3]` after `key`.
fn bracket_list_after(s: &str, key: &str) -> Option<Vec<i32>> {
    let i = s.find(key)? + key.len();
    let r = s[i..].strip_prefix('[')?;
    let end = r.find(']')?;
    id_list(&r[..end])
}

/// The partition named by a `Log`/`UnifiedLog` prefix and its directory.
fn log_prefix(prefix: Option<&str>) -> Option<(Partition, Option<String>)> {
    let p = prefix?;
    let rest = p
        .strip_prefix("UnifiedLog partition=")
        .or_else(|| p.strip_prefix("Log partition="))?;
    let (name, dir) = match rest.split_once(", dir=") {
        Some((n, d)) => (n, Some(d.to_string())),
        None => (rest, None),
    };
    Some((partition_name(name)?.1, dir))
}

fn truncation(prefix: Option<&str>, rest: &str) -> Option<Event> {
    if let Some(r) = rest.strip_prefix("partition ") {
        // fetcher: `[ReplicaFetcher replicaId=R, leaderId=L, fetcherId=F]`
        let leader = prefix.and_then(|p| num32_after(p, "leaderId="));
        let (name, r) = r.split_once(' ')?;
        let partition = partition_name(name)?.1;
        if let Some(hw) = r.strip_prefix("to local high watermark ") {
            let hw = leading_num(hw)?;
            return Some(Event::FetcherTruncation {
                partition,
                offset: hw,
                completed: None,
                reason: TruncationReason::LocalHighWatermark(hw),
                leader,
            });
        }
        let offset = num_after(r, "TruncationState(offset=")?;
        let completed = if r.contains("completed=true") {
            Some(true)
        } else if r.contains("completed=false") {
            Some(false)
        } else {
            None
        };
        let reason = if let Some(hw) = num_after(r, "due to local high watermark ") {
            TruncationReason::LocalHighWatermark(hw)
        } else if r.contains("due to leader epoch and offset ") {
            TruncationReason::LeaderEpoch {
                leader_epoch: num32_after(r, "leaderEpoch=")?,
                end_offset: num_after(r, "endOffset=")?,
            }
        } else {
            return None;
        };
        return Some(Event::FetcherTruncation {
            partition,
            offset,
            completed,
            reason,
            leader,
        });
    }
    if let Some(r) = rest.strip_prefix("to offset ") {
        let (partition, dir) = log_prefix(prefix)?;
        return Some(Event::LogTruncation {
            partition,
            dir,
            offset: leading_num(r)?,
        });
    }
    if let Some(r) = rest.strip_prefix("to ") {
        if r.contains(" has no effect as the largest offset in the log is ") {
            let (partition, _) = log_prefix(prefix)?;
            return Some(Event::LogTruncationNoEffect {
                partition,
                offset: leading_num(r)?,
                largest: num_after(r, "the largest offset in the log is ")?,
            });
        }
        return None;
    }
    // `Truncating [future ]T-P to offset O below high watermark H`
    let r = rest.strip_prefix("future ").unwrap_or(rest);
    let (name, r) = r.split_once(" to offset ")?;
    let partition = partition_name(name)?.1;
    Some(Event::TruncationBelowHighWatermark {
        partition,
        offset: leading_num(r)?,
        high_watermark: num_after(r, " below high watermark ")?,
    })
}

/// `dir=D/T-P, [topicId=ID, ]topic=T, partition=P, highWatermark=H,
/// lastStableOffset=L, logStartOffset=S, logEndOffset=E) with …`
fn loaded(rest: &str) -> Option<Event> {
    let (fields, _) = rest.split_once(") with ")?;
    let topic_at = fields.rfind(", topic=")? + ", topic=".len();
    let (topic, after) = fields[topic_at..].split_once(", partition=")?;
    let partition = i32::try_from(leading_num(after)?).ok()?;
    if topic.is_empty() || partition < 0 {
        return None;
    }
    Some(Event::LogLoaded {
        partition: Partition {
            topic: topic.to_string(),
            partition,
        },
        log_start_offset: num_after(after, "logStartOffset=")?,
        log_end_offset: num_after(after, "logEndOffset=")?,
        high_watermark: num_after(after, "highWatermark=")?,
    })
}

fn isr(prefix: Option<&str>, msg: &str) -> Option<Event> {
    let p = prefix?.strip_prefix("Partition ")?;
    let (name, _) = p.split_once(' ')?;
    let partition = partition_name(name)?.1;
    if let Some(r) = msg.strip_prefix("Shrinking ISR from ") {
        let (from, r) = r.split_once(" to ")?;
        let (to, r) = r.split_once(". ")?;
        let (reason, oos) = match r.find("Out of sync replicas: ") {
            Some(i) => {
                let t = &r[i + "Out of sync replicas: ".len()..];
                let mut ids = Vec::new();
                for part in t.split("brokerId: ").skip(1) {
                    ids.push(i32::try_from(leading_num(part)?).ok()?);
                }
                ("Out of sync replicas".to_string(), ids)
            }
            None => (String::new(), Vec::new()),
        };
        return Some(Event::IsrShrink {
            partition,
            from: id_list(from)?,
            to: id_list(to)?,
            reason,
            out_of_sync: oos,
        });
    }
    let r = msg.strip_prefix("ISR updated to ")?;
    let (isr, v) = r.split_once(" and version updated to ")?;
    let under = isr.contains("(under-min-isr)");
    let isr = isr.replace("(under-min-isr)", "");
    let version = leading_num(v.strip_prefix('[').unwrap_or(v))?;
    Some(Event::IsrUpdated {
        partition,
        isr: id_list(&isr)?,
        version,
        under_min_isr: under,
    })
}

fn replica_removed(rest: &str) -> Option<Event> {
    let (name, r) = rest.split_once(" state changed to (")?;
    let (state, r) = r.split_once(") after removing replica ")?;
    if !r.contains(" from the ISR") {
        return None;
    }
    let isr = {
        let i = state.find("ISR:")? + "ISR:".len();
        let t = &state[i..];
        let end = t.find(",Leader").unwrap_or(t.len());
        id_list(&t[..end])?
    };
    Some(Event::IsrReplicaRemoved {
        partition: partition_name(name)?.1,
        replica: i32::try_from(leading_num(r)?).ok()?,
        leader: num32_after(state, "Leader:")?,
        isr,
        leader_epoch: num32_after(state, "LeaderEpoch:")?,
    })
}

fn became(rest: &str, leader: bool) -> Option<Event> {
    let (name, r) = rest.split_once(' ')?;
    if !r.contains("starts at leader epoch ") {
        return None;
    }
    let partition = partition_name(name)?.1;
    let leader_epoch = num32_after(r, "starts at leader epoch ")?;
    let start_offset = num_after(r, " from offset ")?;
    let high_watermark = num_after(r, "high watermark ");
    let partition_epoch = num32_after(r, "with partition epoch ");
    let previous_leader_epoch = num32_after(r, "revious leader epoch was ");
    Some(if leader {
        Event::BecameLeader {
            partition,
            leader_epoch,
            start_offset,
            high_watermark,
            partition_epoch,
            isr: bracket_list_after(r, "ISR "),
            previous_leader_epoch,
        }
    } else {
        Event::BecameFollower {
            partition,
            leader_epoch,
            start_offset,
            high_watermark,
            partition_epoch,
            leader: num32_after(r, "Current leader is "),
            previous_leader_epoch,
        }
    })
}

/// `leader state change for T-P … Registration(k=v, …)` (or
/// `…PartitionState(k=v, …)`): the fields of the registration a broker
/// applied without changing its role.
fn registration_applied(rest: &str) -> Option<Event> {
    let (role, r) = rest.split_once(" state change for ")?;
    let as_leader = match role {
        "leader" => true,
        "follower" => false,
        _ => return None,
    };
    let (name, r) = r.split_once(' ')?;
    let partition = partition_name(name)?.1;
    let open = ["Registration(", "PartitionState("]
        .iter()
        .filter_map(|k| r.find(k).map(|i| i + k.len()))
        .min()?;
    let fields = top_level_fields(&r[open..]);
    let get = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let int = |key: &str| {
        get(key)
            .and_then(leading_num)
            .and_then(|n| i32::try_from(n).ok())
    };
    Some(Event::RegistrationApplied {
        partition,
        as_leader,
        leader: int("leader"),
        leader_epoch: int("leaderEpoch"),
        isr: get("isr").and_then(|v| bracket_list_after(v, "")),
        partition_epoch: int("partitionEpoch").or_else(|| int("zkVersion")),
    })
}

/// The `key=value` fields of `k1=v1, k2=[a, b], k3=X(…))…` up to the `)`
/// that closes them: commas inside brackets or parentheses do not split.
fn top_level_fields(s: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' if depth > 0 => depth -= 1,
            ')' if depth == 0 => {
                out.extend(s[start..i].split_once('='));
                return out.into_iter().map(|(k, v)| (k.trim(), v.trim())).collect();
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.extend(s[start..i].split_once('='));
                start = i + 1;
            }
            _ => {}
        }
    }
    // no closing parenthesis: a cut line, whose last field may be cut
    // short and is not kept
    out.into_iter().map(|(k, v)| (k.trim(), v.trim())).collect()
}

fn unclean(rest: &str) -> Option<Event> {
    let (name, r) = rest.split_once(" with topic ID ")?;
    let partition = partition_name(name)?.1;
    let (id, fields) = r.split_once(": ")?;
    let fields = format!(", {fields}");
    let pair = |key: &str| -> Option<(i32, i32)> {
        let i = fields.find(key)? + key.len();
        let t = &fields[i..];
        let a = leading_num(t)?;
        let (_, b) = t.split_once(" -> ")?;
        Some((i32::try_from(a).ok()?, i32::try_from(leading_num(b)?).ok()?))
    };
    let isr = (|| {
        let before = bracket_list_after(&fields, ", isr: ")?;
        let i = fields.find(", isr: ")?;
        let t = &fields[i..];
        let (_, after) = t.split_once("] -> ")?;
        let after = bracket_list_after(after, "")?;
        Some((before, after))
    })();
    Some(Event::UncleanPartitionChange {
        partition,
        topic_id: id.to_string(),
        isr,
        leader: pair(", leader: "),
        leader_epoch: pair(", leaderEpoch: "),
        partition_epoch: pair(", partitionEpoch: "),
    })
}

/// Producer id, offset and kind from an exception line or message.
fn producer_error(x: &str) -> (Option<i64>, Option<i64>, ProducerErrorKind) {
    let producer_id = num_after(x, "producer ");
    let offset = num_after(x, "at offset ");
    // the numbers after the last `: `
    let tail = x.rfind(": ").map(|i| &x[i + 2..]).unwrap_or("");
    let kind = if x.contains("Out of order sequence number for producer ") {
        match (leading_num(tail), tail.split_once(", ")) {
            (Some(a), Some((_, b))) => match leading_num(b) {
                Some(b) => ProducerErrorKind::OutOfOrderSequence {
                    incoming: a,
                    current: b,
                },
                None => ProducerErrorKind::Other,
            },
            _ => ProducerErrorKind::Other,
        }
    } else if x.contains("Invalid sequence number for new epoch of producer ") {
        let nums: Option<Vec<i64>> = tail.split(", ").map(leading_num).collect();
        match nums.as_deref() {
            Some([e, s, c]) => ProducerErrorKind::InvalidSequenceForNewEpoch {
                request_epoch: *e,
                sequence: *s,
                current_epoch: *c,
            },
            _ => ProducerErrorKind::Other,
        }
    } else if x.contains("Epoch of producer ") {
        match (
            num_after(x, " is "),
            num_after(x, "smaller than the last seen epoch "),
        ) {
            (Some(epoch), Some(last_epoch)) => {
                ProducerErrorKind::InvalidProducerEpoch { epoch, last_epoch }
            }
            _ => ProducerErrorKind::Other,
        }
    } else {
        ProducerErrorKind::Other
    };
    (producer_id, offset, kind)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! Every literal below is copied verbatim from a `server.log` written by
    //! Kafka in klf's oracle harness (one console appender with Kafka's
    //! default pattern `[%d] %p %m (%c)%n`), unless a test says it is built
    //! from a template. "4.4.0" is a KRaft cluster, "3.9.2" and "2.8.2" are
    //! ZooKeeper-mode clusters; the scenario and node are named per test.
    use super::*;

    fn all(s: &str) -> Vec<Item> {
        entries(s.as_bytes()).collect()
    }

    fn only(s: &str) -> Entry {
        let mut v = all(s);
        assert_eq!(v.len(), 1, "{v:?}");
        match v.remove(0) {
            Item::Entry(e) => e,
            Item::Unreadable(u) => panic!("unreadable: {u:?}"),
        }
    }

    fn ev(s: &str) -> Event {
        event(&only(s)).unwrap()
    }

    #[test]
    fn log_loaded_at_start_up() {
        // 4.4.0, scenario unclean, node-1: the restart after the capture
        assert_eq!(
            ev(
                r#"[2026-12-06 02:28:55,005] INFO Completed load of Log(dir=/var/lib/kafka/data/unclean-0, topicId=masD5675SF6pMztuWz5hvw, topic=unclean, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=250) with 2 segments, local-log-start-offset 0 and log-end-offset 250 in 18ms (1/1 completed in /var/lib/kafka/data) (kafka.log.LogManager)"#
            ),
            Event::LogLoaded {
                partition: p("unclean", 0),
                log_start_offset: 0,
                log_end_offset: 250,
                high_watermark: 0,
            }
        );
        // 2.8's wording, built from its template (no topic id, no local
        // log start)
        assert_eq!(
            ev(
                r#"[2026-12-06 01:04:00,801] INFO Completed load of Log(dir=/var/lib/kafka/data/my.topic-name-12, topic=my.topic-name, partition=12, highWatermark=90, lastStableOffset=90, logStartOffset=10, logEndOffset=120) with 1 segments in 4ms (1/3 loaded in /var/lib/kafka/data) (kafka.log.LogManager)"#
            ),
            Event::LogLoaded {
                partition: p("my.topic-name", 12),
                log_start_offset: 10,
                log_end_offset: 120,
                high_watermark: 90,
            }
        );
        // a directory path that names another topic does not mislead it
        assert_eq!(
            ev(
                r#"[2026-12-06 01:04:00,801] INFO Completed load of Log(dir=/d/x, topic=evil, partition=1/a-0, topic=real, partition=3, highWatermark=1, lastStableOffset=1, logStartOffset=0, logEndOffset=2) with 1 segments in 4ms (kafka.log.LogManager)"#
            ),
            Event::LogLoaded {
                partition: p("real", 3),
                log_start_offset: 0,
                log_end_offset: 2,
                high_watermark: 1,
            }
        );
    }

    #[test]
    fn log_file_names() {
        use LogFileKind::*;
        for (name, want) in [
            ("server.log", Some((Server, false))),
            ("server.log.2026-12-06-04", Some((Server, false))),
            ("server.log.2026-12-06-04.gz", Some((Server, true))),
            ("server.log.1", Some((Server, false))),
            ("server.log.gz", Some((Server, true))),
            ("controller.log.2026-12-06-04", Some((Controller, false))),
            ("state-change.log", Some((StateChange, false))),
            ("kafkaServer.out", Some((Console, false))),
            ("server.log.swp", None),
            ("server.logs", None),
            ("log-cleaner.log", None),
            ("00000000000000000000.log", None),
            ("server.log.", None),
        ] {
            assert_eq!(log_file_kind(name), want, "{name}");
        }
    }

    fn p(topic: &str, partition: i32) -> Partition {
        Partition {
            topic: topic.to_string(),
            partition,
        }
    }

    #[test]
    fn entry_fields_and_naive_time() {
        // 4.4.0, scenario impact, node-100
        let e = only(
            r#"[2026-12-06 04:31:14,042] INFO [QuorumController id=100] Fencing broker 3 at epoch 20 because its session has timed out. (org.apache.kafka.controller.ReplicationControlManager)"#,
        );
        assert_eq!(e.line, 1);
        assert_eq!(e.timestamp, "2026-12-06 04:31:14,042");
        // 2026-12-06T04:31:14.042 read as UTC
        assert_eq!(e.time_ms, 1_796_531_474_042);
        assert_eq!(e.level, Level::Info);
        assert_eq!(
            e.message,
            "[QuorumController id=100] Fencing broker 3 at epoch 20 because its session has timed out."
        );
        assert_eq!(
            e.logger.as_deref(),
            Some("org.apache.kafka.controller.ReplicationControlManager")
        );
        assert!(e.continuation.is_empty());
        assert!(e.torn);
        assert_eq!(timestamp_ms(b"1970-01-01 00:00:00,000"), Some(0));
        assert_eq!(
            timestamp_ms(b"2024-02-29 23:59:59,999"),
            Some(1_709_251_199_999)
        );
        assert_eq!(timestamp_ms(b"2023-02-29 00:00:00,000"), None);
        assert_eq!(timestamp_ms(b"2023-13-01 00:00:00,000"), None);
    }

    #[test]
    fn kraft_4_4_follower_truncation_after_unclean_election() {
        // 4.4.0, scenario impact, node-1, four consecutive lines
        let items = all(concat!(
            r#"[2026-12-06 04:32:32,909] INFO [Broker id=1] Follower orders-0 starts at leader epoch 2 from offset 228 with partition epoch 3 and high watermark 228. Current leader is 3. Previous leader None and previous leader epoch was -1. (state.change.logger)"#,
            "\n",
            r#"[2026-12-06 04:32:32,984] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition orders-0 with TruncationState(offset=142, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=142) (kafka.server.ReplicaFetcherThread)"#,
            "\n",
            r#"[2026-12-06 04:32:32,986] INFO The cleaning for partition orders-0 is aborted and paused (org.apache.kafka.storage.internals.log.LogManager)"#,
            "\n",
            r#"[2026-12-06 04:32:32,989] WARN [UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating orders-0 to offset 142 below high watermark 228 (org.apache.kafka.storage.internals.log.UnifiedLog)"#,
            "\n",
            r#"[2026-12-06 04:32:32,989] INFO [UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 142 (org.apache.kafka.storage.internals.log.UnifiedLog)"#,
            "\n",
        ));
        let evs: Vec<Option<Event>> = items
            .iter()
            .map(|i| match i {
                Item::Entry(e) => event(e),
                Item::Unreadable(u) => panic!("{u:?}"),
            })
            .collect();
        assert_eq!(evs.len(), 5);
        assert_eq!(
            evs[0],
            Some(Event::BecameFollower {
                partition: p("orders", 0),
                leader_epoch: 2,
                start_offset: 228,
                high_watermark: Some(228),
                partition_epoch: Some(3),
                leader: Some(3),
                previous_leader_epoch: Some(-1),
            })
        );
        assert_eq!(
            evs[1],
            Some(Event::FetcherTruncation {
                partition: p("orders", 0),
                offset: 142,
                completed: Some(true),
                reason: TruncationReason::LeaderEpoch {
                    leader_epoch: 0,
                    end_offset: 142
                },
                leader: Some(3),
            })
        );
        assert_eq!(evs[2], None);
        assert_eq!(
            evs[3],
            Some(Event::TruncationBelowHighWatermark {
                partition: p("orders", 0),
                offset: 142,
                high_watermark: 228,
            })
        );
        match &evs[4] {
            Some(Event::LogTruncation {
                partition,
                dir,
                offset,
            }) => {
                assert_eq!(partition, &p("orders", 0));
                assert_eq!(*offset, 142);
                assert_eq!(dir.as_deref(), Some("/var/lib/kafka/data"));
            }
            other => panic!("{other:?}"),
        }
        match &items[3] {
            Item::Entry(e) => {
                assert_eq!(e.level, Level::Warn);
                assert_eq!(e.line, 4);
            }
            Item::Unreadable(u) => panic!("{u:?}"),
        }
    }

    #[test]
    fn kraft_4_4_unclean_change_and_election() {
        // 4.4.0, scenario impact, node-100 (the controller)
        assert_eq!(
            ev(
                r#"[2026-12-06 04:31:31,024] INFO [QuorumController id=100] UNCLEAN partition change for orders-0 with topic ID n22FCMDaQle6dxLF9dftgg: isr: [] -> [3], leader: -1 -> 3, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 1 -> 2, elr: [1] -> [], lastKnownElr: [1] -> [], partitionEpoch: 2 -> 3 (org.apache.kafka.controller.ReplicationControlManager)"#
            ),
            Event::UncleanPartitionChange {
                partition: p("orders", 0),
                topic_id: "n22FCMDaQle6dxLF9dftgg".to_string(),
                isr: Some((vec![], vec![3])),
                leader: Some((-1, 3)),
                leader_epoch: Some((1, 2)),
                partition_epoch: Some((2, 3)),
            }
        );
        assert_eq!(
            ev(
                r#"[2026-12-06 04:31:31,012] INFO Setting new leader for topicId n22FCMDaQle6dxLF9dftgg, partition 0 to 3 using an unclean election. Previous partition: PartitionRegistration(replicas=[1, 3], directories=[vZMijV4j74YXWqPRyTr4Aw, uIjI4yRCzv_jgDWzu0nvkQ], isr=[], removingReplicas=[], addingReplicas=[], elr=[1], lastKnownElr=[1], leader=-1, leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=2), change record: PartitionChangeRecord(partitionId=0, topicId=n22FCMDaQle6dxLF9dftgg, isr=null, leader=-2, replicas=null, removingReplicas=null, addingReplicas=null, leaderRecoveryState=-1, directories=null, eligibleLeaderReplicas=null, lastKnownElr=null) (org.apache.kafka.controller.PartitionChangeBuilder)"#
            ),
            Event::UncleanElection {
                topic_id: "n22FCMDaQle6dxLF9dftgg".to_string(),
                partition: 0,
                leader: 3,
            }
        );
        // research file §2.4, the 4.4.0 line of the `unclean` scenario
        // (a one-replica ISR on each side)
        assert_eq!(
            ev(
                r#"[2026-12-06 02:28:47,364] INFO [QuorumController id=100] UNCLEAN partition change for unclean-0 with topic ID masD5675SF6pMztuWz5hvw: isr: [1] -> [3], leader: 1 -> 3, leaderRecoveryState: RECOVERED -> RECOVERING, leaderEpoch: 0 -> 1, partitionEpoch: 2 -> 3 (org.apache.kafka.controller.ReplicationControlManager)"#
            ),
            Event::UncleanPartitionChange {
                partition: p("unclean", 0),
                topic_id: "masD5675SF6pMztuWz5hvw".to_string(),
                isr: Some((vec![1], vec![3])),
                leader: Some((1, 3)),
                leader_epoch: Some((0, 1)),
                partition_epoch: Some((2, 3)),
            }
        );
    }

    #[test]
    fn kraft_4_4_registration_applied_states_the_controllers_isr_change() {
        // 4.4.0, scenario unclean, node-1 (the leader, as broker 3 shut down)
        assert_eq!(
            ev(
                r#"[2026-12-06 02:28:21,907] INFO [Broker id=1] Skipped the become-leader state change for unclean-0 with topic id Some(masD5675SF6pMztuWz5hvw), partition registration PartitionRegistration(replicas=[1, 2, 3], directories=[ydgpZlTZvZRmp1v7suCp4Q, cXMUkKo7gcgcUvsXV8Rm9A, ZsU8d0iFdNhodKopclnj8w], isr=[1, 2], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, partitionEpoch=1) and isNew=false since it is already the leader with leader epoch 0. Current high watermark 100, ISR [1,2], adding replicas [] and removing replicas []. (state.change.logger)"#
            ),
            Event::RegistrationApplied {
                partition: p("unclean", 0),
                as_leader: true,
                leader: Some(1),
                leader_epoch: Some(0),
                isr: Some(vec![1, 2]),
                partition_epoch: Some(1),
            }
        );
        // 4.4.0, scenario unclean, node-2 (a follower)
        assert_eq!(
            ev(
                r#"[2026-12-06 02:28:56,239] INFO [Broker id=2] Skipped the become-follower state change for unclean-0 with topic id Some(masD5675SF6pMztuWz5hvw), partition registration PartitionRegistration(replicas=[1, 2, 3], directories=[ydgpZlTZvZRmp1v7suCp4Q, cXMUkKo7gcgcUvsXV8Rm9A, ZsU8d0iFdNhodKopclnj8w], isr=[1, 2, 3], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=3, leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=5) and isNew=false since it is already a follower with leader epoch 1. (state.change.logger)"#
            ),
            Event::RegistrationApplied {
                partition: p("unclean", 0),
                as_leader: false,
                leader: Some(3),
                leader_epoch: Some(1),
                isr: Some(vec![1, 2, 3]),
                partition_epoch: Some(5),
            }
        );
        // built from the 3.x template (Partition.makeLeader, a
        // LeaderAndIsrPartitionState; zkVersion in ZooKeeper mode)
        assert_eq!(
            ev("[2026-12-06 02:28:21,907] INFO [Broker id=1] Skipped the become-leader state change for orders-3 with topic id Some(n22FCMDaQle6dxLF9dftgg) and partition state LeaderAndIsrPartitionState(topicName='orders', partitionIndex=3, controllerEpoch=1, leader=1, leaderEpoch=4, isr=[1, 3], zkVersion=7, replicas=[1, 2, 3], addingReplicas=[], removingReplicas=[], isNew=false) since it is already the leader with leader epoch 4. (state.change.logger)"),
            Event::RegistrationApplied {
                partition: p("orders", 3),
                as_leader: true,
                leader: Some(1),
                leader_epoch: Some(4),
                isr: Some(vec![1, 3]),
                partition_epoch: Some(7),
            }
        );
        // a registration cut before it closes keeps only whole fields
        match ev("[2026-12-06 02:28:21,907] INFO [Broker id=1] Skipped the become-leader state change for t-0 with topic id Some(x), partition registration PartitionRegistration(replicas=[1, 2], isr=[1, 2], leader=1, leaderEpoch=0, partitionEpoch=12 (state.change.logger)") {
            Event::RegistrationApplied {
                isr,
                leader,
                partition_epoch,
                ..
            } => {
                assert_eq!(isr, Some(vec![1, 2]));
                assert_eq!(leader, Some(1));
                assert_eq!(partition_epoch, None);
            }
            e => panic!("{e:?}"),
        }
        // another role is no statement
        assert_eq!(
            event(&only("[2026-12-06 02:28:21,907] INFO [Broker id=1] Skipped the become-observer state change for t-0 with topic id Some(x), partition registration PartitionRegistration(isr=[1]) (state.change.logger)")),
            None
        );
    }

    #[test]
    fn kraft_4_4_fencing_and_shutdown() {
        // 4.4.0, scenario impact, node-100
        assert_eq!(
            ev(
                r#"[2026-12-06 04:31:14,042] INFO [QuorumController id=100] Fencing broker 3 at epoch 20 because its session has timed out. (org.apache.kafka.controller.ReplicationControlManager)"#
            ),
            Event::BrokerFencing {
                broker: 3,
                epoch: Some(20),
                fenced: true,
                session_timeout: true,
            }
        );
        assert_eq!(
            ev(
                r#"[2026-12-06 04:30:52,897] INFO [QuorumController id=100] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 3: BrokerRegistrationChangeRecord(brokerId=3, brokerEpoch=20, fenced=1, inControlledShutdown=0, logDirs=[], cordonedLogDirs=null) (org.apache.kafka.controller.ClusterControlManager)"#
            ),
            Event::BrokerFencing {
                broker: 3,
                epoch: Some(20),
                fenced: true,
                session_timeout: false,
            }
        );
        // 4.4.0, scenario impact, node-3
        assert_eq!(
            ev(
                r#"[2026-12-06 04:30:52,885] INFO [BrokerLifecycleManager id=3] Beginning controlled shutdown. (org.apache.kafka.server.BrokerLifecycleManager)"#
            ),
            Event::ControlledShutdown { broker: 3 }
        );
        // template of 3.0-3.9 (research file §2.5): no epoch
        assert_eq!(
            ev("[2026-12-06 02:28:47,364] INFO [QuorumController id=100] Fencing broker 2 because its session has timed out. (org.apache.kafka.controller.ReplicationControlManager)"),
            Event::BrokerFencing {
                broker: 2,
                epoch: None,
                fenced: true,
                session_timeout: true,
            }
        );
    }

    #[test]
    fn zookeeper_session_expiry_from_template() {
        // no session expired in the harness's runs: built from the 2.8.2
        // template (research file §2.5)
        assert_eq!(
            ev("[2026-12-06 01:03:35,695] INFO [ZooKeeperClient Kafka server] Session expired. (kafka.zookeeper.ZooKeeperClient)"),
            Event::SessionExpired {
                client: "ZooKeeperClient Kafka server".to_string()
            }
        );
    }

    #[test]
    fn kraft_4_4_out_of_order_sequence_is_two_lines() {
        // 4.4.0, scenario impact, node-3: the ApiException's line follows
        let items = all(concat!(
            r#"[2026-12-06 04:32:29,508] ERROR [ReplicaManager broker=3] Error processing append operation on partition n22FCMDaQle6dxLF9dftgg:orders-0 (kafka.server.ReplicaManager)"#,
            "\n",
            r#"org.apache.kafka.common.errors.OutOfOrderSequenceException: Out of order sequence number for producer 1 at offset 162 in partition orders-0: 50 (incoming seq. number), 19 (current end sequence number)"#,
            "\n",
            r#"[2026-12-06 04:32:33,538] INFO [Broker id=3] Transitioning 1 partition(s) to local followers. (state.change.logger)"#,
            "\n",
        ));
        assert_eq!(items.len(), 2);
        let Item::Entry(e) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(e.level, Level::Error);
        assert_eq!(e.logger.as_deref(), Some("kafka.server.ReplicaManager"));
        assert_eq!(e.continuation.len(), 1);
        match event(e).unwrap() {
            Event::ProducerAppendError {
                partition,
                topic_id,
                producer_id,
                offset,
                kind,
                exception,
            } => {
                assert_eq!(partition, p("orders", 0));
                assert_eq!(topic_id.as_deref(), Some("n22FCMDaQle6dxLF9dftgg"));
                assert_eq!(producer_id, Some(1));
                assert_eq!(offset, Some(162));
                assert_eq!(
                    kind,
                    ProducerErrorKind::OutOfOrderSequence {
                        incoming: 50,
                        current: 19
                    }
                );
                assert!(exception
                    .unwrap()
                    .starts_with("org.apache.kafka.common.errors.OutOfOrderSequenceException: "));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_line_after_a_producer_error_is_no_exception() {
        // built from the 4.4.0 line above, without its exception: the
        // empty lines after it (a digest's reduced copy leaves the lines
        // of other records empty) change nothing
        let head = "[2026-12-06 04:32:29,508] ERROR [ReplicaManager broker=3] Error processing append operation on partition orders-0 (kafka.server.ReplicaManager)\n";
        let alone = ev(head);
        assert_eq!(ev(&format!("{head}\n\n")), alone);
        assert!(
            matches!(
                &alone,
                Event::ProducerAppendError {
                    exception: None,
                    kind: ProducerErrorKind::Other,
                    ..
                }
            ),
            "{alone:?}"
        );
    }

    #[test]
    fn producer_epoch_errors_from_templates() {
        // built from the 3.5-4.3 template (no space in `PIDat`) and the
        // InvalidProducerEpochException one (research file §2.6)
        let two = concat!(
            "[2026-12-01 13:29:10,655] ERROR [ReplicaManager broker=1] Error processing append operation on partition my.topic-name-3 (kafka.server.ReplicaManager)\n",
            "org.apache.kafka.common.errors.OutOfOrderSequenceException: Invalid sequence number for new epoch of producer 4000at offset 512 in partition my.topic-name-3: 2 (request epoch), 5 (seq. number), 1 (current producer epoch)\n",
        );
        match ev(two) {
            Event::ProducerAppendError {
                partition,
                topic_id,
                producer_id,
                offset,
                kind,
                ..
            } => {
                assert_eq!(partition, p("my.topic-name", 3));
                assert_eq!(topic_id, None);
                assert_eq!((producer_id, offset), (Some(4000), Some(512)));
                assert_eq!(
                    kind,
                    ProducerErrorKind::InvalidSequenceForNewEpoch {
                        request_epoch: 2,
                        sequence: 5,
                        current_epoch: 1
                    }
                );
            }
            other => panic!("{other:?}"),
        }
        let epoch = concat!(
            "[2026-12-01 13:29:10,655] INFO [ReplicaManager broker=1] Error processing append operation on partition orders-0 (kafka.server.ReplicaManager)\n",
            "org.apache.kafka.common.errors.InvalidProducerEpochException: Epoch of producer 4000 at offset 512 in orders-0 is 2, which is smaller than the last seen epoch 3\n",
        );
        match ev(epoch) {
            Event::ProducerAppendError { kind, .. } => assert_eq!(
                kind,
                ProducerErrorKind::InvalidProducerEpoch {
                    epoch: 2,
                    last_epoch: 3
                }
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn isr_updated_4_4_and_3_9_two_spaces() {
        // 4.4.0, scenario impact, node-2 (topic with `_`, partition 0)
        assert_eq!(
            ev(
                r#"[2026-12-06 04:32:33,541] INFO [Partition __consumer_offsets-0 broker=2] ISR updated to 3,2,1  and version updated to 4 (kafka.cluster.Partition)"#
            ),
            Event::IsrUpdated {
                partition: p("__consumer_offsets", 0),
                isr: vec![3, 2, 1],
                version: 4,
                under_min_isr: false,
            }
        );
        // 3.9.2, scenario unclean, node-3
        assert_eq!(
            ev(
                r#"[2026-12-06 04:41:50,992] INFO [Partition unclean-0 broker=3] ISR updated to 3,1  and version updated to 5 (kafka.cluster.Partition)"#
            ),
            Event::IsrUpdated {
                partition: p("unclean", 0),
                isr: vec![3, 1],
                version: 5,
                under_min_isr: false,
            }
        );
        // 3.5+ template with the under-min-isr mark (research file §2.3)
        assert_eq!(
            ev("[2026-12-06 04:41:50,992] INFO [Partition a.b-c-7 broker=3] ISR updated to 3 (under-min-isr) and version updated to 6 (kafka.cluster.Partition)"),
            Event::IsrUpdated {
                partition: p("a.b-c", 7),
                isr: vec![3],
                version: 6,
                under_min_isr: true,
            }
        );
    }

    #[test]
    fn isr_updated_2_8_zk_version_in_brackets() {
        // 2.8.2, scenario unclean, node-3
        assert_eq!(
            ev(
                r#"[2026-12-06 01:04:00,933] INFO [Partition unclean-0 broker=3] ISR updated to 3,1 and version updated to [5] (kafka.cluster.Partition)"#
            ),
            Event::IsrUpdated {
                partition: p("unclean", 0),
                isr: vec![3, 1],
                version: 5,
                under_min_isr: false,
            }
        );
        // 2.8.2, scenario unclean-stale-hw, node-3: a topic with a `-`
        assert_eq!(
            ev(
                r#"[2026-12-06 01:05:45,309] INFO [Partition stale-group-0 broker=3] ISR updated to 3,1 and version updated to [5] (kafka.cluster.Partition)"#
            ),
            Event::IsrUpdated {
                partition: p("stale-group", 0),
                isr: vec![3, 1],
                version: 5,
                under_min_isr: false,
            }
        );
    }

    #[test]
    fn zk_controller_removes_replica_from_isr() {
        // 3.9.2, scenario divergence, node-2 (the controller)
        assert_eq!(
            ev(
                r#"[2026-12-06 04:39:47,151] INFO [Controller id=2 epoch=2] Partition diverge-0 state changed to (Leader:-1,ISR:2,3,LeaderRecoveryState:RECOVERED,LeaderEpoch:1,ZkVersion:1,ControllerEpoch:2) after removing replica 1 from the ISR as part of transition to OfflineReplica (state.change.logger)"#
            ),
            Event::IsrReplicaRemoved {
                partition: p("diverge", 0),
                replica: 1,
                leader: -1,
                isr: vec![2, 3],
                leader_epoch: 1,
            }
        );
        // 2.8.2, scenario divergence, node-2 (no LeaderRecoveryState)
        assert_eq!(
            ev(
                r#"[2026-12-06 01:02:03,437] INFO [Controller id=2 epoch=2] Partition diverge-0 state changed to (Leader:-1,ISR:2,3,LeaderEpoch:1,ZkVersion:1,ControllerEpoch:2) after removing replica 1 from the ISR as part of transition to OfflineReplica (state.change.logger)"#
            ),
            Event::IsrReplicaRemoved {
                partition: p("diverge", 0),
                replica: 1,
                leader: -1,
                isr: vec![2, 3],
                leader_epoch: 1,
            }
        );
    }

    #[test]
    fn isr_shrink_from_templates() {
        // no shrink in the harness's runs; the 2.8-3.5 and 3.6+ templates
        // (research file §2.3)
        assert_eq!(
            ev("[2026-12-06 04:41:50,992] INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1,3. Leader: (highWatermark: 120, endOffset: 130). Out of sync replicas: (brokerId: 2, endOffset: 100). (kafka.cluster.Partition)"),
            Event::IsrShrink {
                partition: p("orders", 0),
                from: vec![1, 2, 3],
                to: vec![1, 3],
                reason: "Out of sync replicas".to_string(),
                out_of_sync: vec![2],
            }
        );
        assert_eq!(
            ev("[2026-12-06 04:41:50,992] INFO [Partition orders-0 broker=1] Shrinking ISR from 1,2,3 to 1. Leader: (highWatermark: 120, endOffset: 130). Out of sync replicas: (brokerId: 2, endOffset: 100, lastCaughtUpTimeMs: 1796531474042) (brokerId: 3, endOffset: 90, lastCaughtUpTimeMs: 1796531474000). (kafka.cluster.Partition)"),
            Event::IsrShrink {
                partition: p("orders", 0),
                from: vec![1, 2, 3],
                to: vec![1],
                reason: "Out of sync replicas".to_string(),
                out_of_sync: vec![2, 3],
            }
        );
    }

    #[test]
    fn zk_3_9_leader_follower_and_truncation() {
        // 3.9.2, scenario unclean, node-1
        assert_eq!(
            ev(
                r#"[2026-12-06 04:41:21,758] INFO [Broker id=1] Leader unclean-0 with topic id None starts at leader epoch 0 from offset 0 with partition epoch 0, high watermark 0, ISR [1,2,3], adding replicas [] and removing replicas [] . Previous leader None and previous leader epoch was -1. (state.change.logger)"#
            ),
            Event::BecameLeader {
                partition: p("unclean", 0),
                leader_epoch: 0,
                start_offset: 0,
                high_watermark: Some(0),
                partition_epoch: Some(0),
                isr: Some(vec![1, 2, 3]),
                previous_leader_epoch: Some(-1),
            }
        );
        assert_eq!(
            ev(
                r#"[2026-12-06 04:41:50,868] INFO [Broker id=1] Follower unclean-0 starts at leader epoch 4 from offset 250 with partition epoch 4 and high watermark 250. Current leader is 3. Previous leader Some(3) and previous leader epoch was 4. (state.change.logger)"#
            ),
            Event::BecameFollower {
                partition: p("unclean", 0),
                leader_epoch: 4,
                start_offset: 250,
                high_watermark: Some(250),
                partition_epoch: Some(4),
                leader: Some(3),
                previous_leader_epoch: Some(4),
            }
        );
        let items = all(concat!(
            r#"[2026-12-06 04:41:50,914] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition unclean-0 with TruncationState(offset=100, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=100) (kafka.server.ReplicaFetcherThread)"#,
            "\n",
            r#"[2026-12-06 04:41:50,915] INFO The cleaning for partition unclean-0 is aborted and paused (kafka.log.LogManager)"#,
            "\n",
            r#"[2026-12-06 04:41:50,916] INFO [UnifiedLog partition=unclean-0, dir=/var/lib/kafka/data] Truncating to offset 100 (kafka.log.UnifiedLog)"#,
            "\n",
        ));
        let evs: Vec<Event> = items
            .iter()
            .filter_map(|i| match i {
                Item::Entry(e) => event(e),
                Item::Unreadable(_) => None,
            })
            .collect();
        assert_eq!(evs.len(), 2);
        assert!(matches!(
            &evs[0],
            Event::FetcherTruncation {
                offset: 100,
                completed: Some(true),
                reason: TruncationReason::LeaderEpoch {
                    leader_epoch: 0,
                    end_offset: 100
                },
                ..
            }
        ));
        assert!(matches!(&evs[1], Event::LogTruncation { offset: 100, .. }));
        // 3.9.2, scenario divergence, node-2
        assert_eq!(
            ev(
                r#"[2026-12-06 04:39:28,805] INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition diverge-0 with TruncationState(offset=0, completed=true) due to local high watermark 0 (kafka.server.ReplicaFetcherThread)"#
            ),
            Event::FetcherTruncation {
                partition: p("diverge", 0),
                offset: 0,
                completed: Some(true),
                reason: TruncationReason::LocalHighWatermark(0),
                leader: Some(1),
            }
        );
        // 3.9.2, scenario unclean, node-2
        assert_eq!(
            ev(
                r#"[2026-12-06 04:41:24,929] INFO [KafkaServer id=2] Starting controlled shutdown (kafka.server.KafkaServer)"#
            ),
            Event::ControlledShutdown { broker: 2 }
        );
    }

    #[test]
    fn zk_2_8_leader_follower_and_truncation() {
        // 2.8.2, scenario unclean, node-1
        assert_eq!(
            ev(
                r#"[2026-12-06 01:03:30,211] INFO [Broker id=1] Leader unclean-0 starts at leader epoch 0 from offset 0 with high watermark 0 ISR [1,2,3] addingReplicas [] removingReplicas []. Previous leader epoch was -1. (state.change.logger)"#
            ),
            Event::BecameLeader {
                partition: p("unclean", 0),
                leader_epoch: 0,
                start_offset: 0,
                high_watermark: Some(0),
                partition_epoch: None,
                isr: Some(vec![1, 2, 3]),
                previous_leader_epoch: Some(-1),
            }
        );
        assert_eq!(
            ev(
                r#"[2026-12-06 01:04:00,812] INFO [Broker id=1] Follower unclean-0 starts at leader epoch 4 from offset 250 with high watermark 250. Previous leader epoch was -1. (state.change.logger)"#
            ),
            Event::BecameFollower {
                partition: p("unclean", 0),
                leader_epoch: 4,
                start_offset: 250,
                high_watermark: Some(250),
                partition_epoch: None,
                leader: None,
                previous_leader_epoch: Some(-1),
            }
        );
        match ev(
            r#"[2026-12-06 01:04:00,859] INFO [Log partition=unclean-0, dir=/var/lib/kafka/data] Truncating to offset 100 (kafka.log.Log)"#,
        ) {
            Event::LogTruncation {
                partition, offset, ..
            } => {
                assert_eq!((partition, offset), (p("unclean", 0), 100));
            }
            other => panic!("{other:?}"),
        }
        // 2.8.2, scenario unclean-stale-hw, node-1
        match ev(
            r#"[2026-12-06 01:05:45,253] INFO [Log partition=stale-group-0, dir=/var/lib/kafka/data] Truncating to offset 100 (kafka.log.Log)"#,
        ) {
            Event::LogTruncation {
                partition, offset, ..
            } => {
                assert_eq!((partition, offset), (p("stale-group", 0), 100));
            }
            other => panic!("{other:?}"),
        }
        // 2.8.2, scenario divergence, node-2, two consecutive lines
        let items = all(concat!(
            r#"[2026-12-06 01:01:45,372] INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Truncating partition diverge-0 to local high watermark 0 (kafka.server.ReplicaFetcherThread)"#,
            "\n",
            r#"[2026-12-06 01:01:45,373] INFO [Log partition=diverge-0, dir=/var/lib/kafka/data] Truncating to 0 has no effect as the largest offset in the log is -1 (kafka.log.Log)"#,
            "\n",
        ));
        let evs: Vec<Event> = items
            .iter()
            .filter_map(|i| match i {
                Item::Entry(e) => event(e),
                Item::Unreadable(_) => None,
            })
            .collect();
        assert_eq!(
            evs,
            vec![
                Event::FetcherTruncation {
                    partition: p("diverge", 0),
                    offset: 0,
                    completed: None,
                    reason: TruncationReason::LocalHighWatermark(0),
                    leader: Some(1),
                },
                Event::LogTruncationNoEffect {
                    partition: p("diverge", 0),
                    offset: 0,
                    largest: -1,
                },
            ]
        );
        // 2.8.2, scenario unclean, node-2
        assert_eq!(
            ev(
                r#"[2026-12-06 01:03:35,695] INFO [KafkaServer id=2] Starting controlled shutdown (kafka.server.KafkaServer)"#
            ),
            Event::ControlledShutdown { broker: 2 }
        );
    }

    /// 3.9.2, scenario unclean, node-1: eight consecutive lines, a warning
    /// with its stack trace between two entries.
    const STACK_TRACE: &str = concat!(
        r#"[2026-12-06 04:41:16,780] INFO [Controller id=1] Skipping preferred replica election for partitions due to topic deletion:  (kafka.controller.KafkaController)"#,
        "\n",
        r#"[2026-12-06 04:41:16,780] WARN [RequestSendThread controllerId=1] Controller 1's connection to broker 127.0.0.1:38055 (id: 1 rack: null) was unsuccessful (kafka.controller.RequestSendThread)"#,
        "\n",
        r#"java.io.IOException: Connection to 127.0.0.1:38055 (id: 1 rack: null) failed."#,
        "\n",
        r#"	at org.apache.kafka.clients.NetworkClientUtils.awaitReady(NetworkClientUtils.java:71)"#,
        "\n",
        r#"	at kafka.controller.RequestSendThread.brokerReady(ControllerChannelManager.scala:299)"#,
        "\n",
        r#"	at kafka.controller.RequestSendThread.doWork(ControllerChannelManager.scala:252)"#,
        "\n",
        r#"	at org.apache.kafka.server.util.ShutdownableThread.run(ShutdownableThread.java:136)"#,
        "\n",
        r#"[2026-12-06 04:41:16,780] INFO [Controller id=1] Resuming preferred replica election for partitions:  (kafka.controller.KafkaController)"#,
        "\n",
    );

    #[test]
    fn stack_trace_is_continuation() {
        let items = all(STACK_TRACE);
        assert_eq!(items.len(), 3);
        let Item::Entry(e) = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!(e.line, 2);
        assert_eq!(e.level, Level::Warn);
        assert_eq!(
            e.logger.as_deref(),
            Some("kafka.controller.RequestSendThread")
        );
        assert!(e.message.ends_with("was unsuccessful"));
        assert_eq!(e.continuation.len(), 5);
        assert!(e.continuation[0].starts_with("java.io.IOException: "));
        assert!(e.continuation[4]
            .starts_with("\tat org.apache.kafka.server.util.ShutdownableThread.run("));
        assert!(matches!(&items[2], Item::Entry(e) if e.line == 8));
        // the cap: two extra lines kept, three counted
        let capped: Vec<Item> = entries_with(STACK_TRACE.as_bytes(), 2).collect();
        let Item::Entry(e) = &capped[1] else {
            panic!("{capped:?}")
        };
        assert_eq!(e.continuation.len(), 2);
        assert_eq!(e.lines_dropped, 3);
    }

    #[test]
    fn multi_line_message_takes_logger_from_its_last_line() {
        // 3.9.2, scenario unclean, node-1, lines 33-35 and 363-365 (the
        // configuration dump between them left out)
        let items = all(concat!(
            r#"[2026-12-06 04:41:16,111] INFO Cluster ID = -Gjg9-VZSRG9th1Ig0q5ag (kafka.server.KafkaServer)"#,
            "\n",
            r#"[2026-12-06 04:41:16,153] INFO KafkaConfig values: "#,
            "\n",
            r#"	advertised.listeners = PLAINTEXT://127.0.0.1:38055"#,
            "\n",
            r#"	zookeeper.ssl.truststore.type = null"#,
            "\n",
            r#" (kafka.server.KafkaConfig)"#,
            "\n",
            r#"[2026-12-06 04:41:16,175] INFO [ThrottledChannelReaper-Fetch]: Starting (kafka.server.ClientQuotaManager$ThrottledChannelReaper)"#,
            "\n",
        ));
        assert_eq!(items.len(), 3);
        let Item::Entry(e) = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!(e.logger.as_deref(), Some("kafka.server.KafkaConfig"));
        assert_eq!(
            e.message,
            "KafkaConfig values: \n\tadvertised.listeners = PLAINTEXT://127.0.0.1:38055\n\tzookeeper.ssl.truststore.type = null\n"
        );
        assert!(e.continuation.is_empty());
        assert_eq!(event(e), None);
        let Item::Entry(last) = &items[2] else {
            panic!("{items:?}")
        };
        assert_eq!(last.line, 6);
        assert_eq!(
            last.logger.as_deref(),
            Some("kafka.server.ClientQuotaManager$ThrottledChannelReaper")
        );
    }

    #[test]
    fn torn_last_line() {
        // 4.4.0, scenario impact, node-1: the second line cut mid-way, as a
        // copy taken while Kafka writes leaves it
        let whole = r#"[2026-12-06 04:32:32,989] WARN [UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating orders-0 to offset 142 below high watermark 228 (org.apache.kafka.storage.internals.log.UnifiedLog)"#;
        let torn = &whole[..whole.find(" below high").unwrap()];
        let text = format!(
            "{}\n{torn}",
            r#"[2026-12-06 04:32:32,984] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition orders-0 with TruncationState(offset=142, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=142) (kafka.server.ReplicaFetcherThread)"#
        );
        let items = all(&text);
        assert_eq!(items.len(), 2);
        let Item::Entry(e) = &items[1] else {
            panic!("{items:?}")
        };
        assert!(e.torn);
        assert_eq!(e.logger, None);
        assert_eq!(e.level, Level::Warn);
        // the statement is incomplete: no event claimed from it, even
        // where the cut leaves a well-formed but shorter number
        assert_eq!(event(e), None);
        let whole = r#"[2026-12-06 04:32:32,989] INFO [UnifiedLog partition=orders-0, dir=/var/lib/kafka/data] Truncating to offset 142 (org.apache.kafka.storage.internals.log.UnifiedLog)"#;
        let cut = &whole[..whole.find("142").unwrap() + 2];
        let e = only(cut);
        assert!(e.torn && e.message.ends_with("Truncating to offset 14"));
        assert_eq!(event(&e), None);
        let Item::Entry(first) = &items[0] else {
            panic!("{items:?}")
        };
        assert!(!first.torn);
        assert!(event(first).is_some());
    }

    #[test]
    fn garbage_before_and_inside() {
        // bytes that are no log line, then a real line (4.4.0, scenario
        // impact, node-100) followed by invalid UTF-8 and a CRLF line end
        let mut data = b"\x00\xff\xfe garbage\n\nnot [a] line\n".to_vec();
        data.extend_from_slice(r#"[2026-12-06 04:31:14,042] INFO [QuorumController id=100] Fencing broker 3 at epoch 20 because its session has timed out. (org.apache.kafka.controller.ReplicationControlManager)"#.as_bytes());
        data.extend_from_slice(
            b"\r\n\xc3\x28 \x80\r\n[2026-99-06 04:31:14,042] INFO bad date (x)\n",
        );
        let items: Vec<Item> = entries(&data).collect();
        assert_eq!(items.len(), 2, "{items:?}");
        assert_eq!(
            items[0],
            Item::Unreadable(Unreadable {
                line: 1,
                lines: 3,
                reason: "does not start with `[yyyy-MM-dd HH:mm:ss,SSS] LEVEL` and no record comes before it",
            })
        );
        let Item::Entry(e) = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!(e.line, 4);
        assert_eq!(
            e.logger.as_deref(),
            Some("org.apache.kafka.controller.ReplicationControlManager")
        );
        assert_eq!(e.continuation.len(), 2);
        assert_eq!(e.continuation[0], "\u{fffd}( \u{fffd}");
        assert!(!e.torn);
        assert!(event(e).is_some());
        // nothing at all, and lone separators
        assert!(entries(b"").next().is_none());
        for junk in [
            &b"["[..],
            b"[2026-12-06 04:31:14,042]",
            b"[2026-12-06 04:31:14,042] ",
            b"\n\n\n",
            b"[2026-12-06 04:31:14,042] INFO",
        ] {
            for item in entries(junk) {
                if let Item::Entry(e) = item {
                    let _ = event(&e);
                }
            }
        }
    }

    #[test]
    fn long_line_is_cut() {
        let mut data = b"[2026-12-06 04:31:14,042] INFO ".to_vec();
        data.extend(std::iter::repeat_n(b'x', MAX_LINE * 2));
        data.extend_from_slice(b" (a.b)\n\tat x\n");
        let items: Vec<Item> = entries(&data).collect();
        let Item::Entry(e) = &items[0] else {
            panic!("{items:?}")
        };
        assert_eq!(e.lines_cut, 1);
        assert!(e.message.len() < MAX_LINE);
        assert_eq!(e.logger, None);
        // the cut first line did not close the message: the next line is
        // taken as part of it
        assert!(e.message.ends_with("\n\tat x"));
    }

    #[test]
    fn partition_names() {
        assert_eq!(
            partition_name("my.topic-a-12"),
            Some((None, p("my.topic-a", 12)))
        );
        assert_eq!(
            partition_name("n22FCMDaQle6dxLF9dftgg:orders-0"),
            Some((Some("n22FCMDaQle6dxLF9dftgg"), p("orders", 0)))
        );
        assert_eq!(partition_name("orders"), None);
        assert_eq!(partition_name("-0"), None);
        assert_eq!(partition_name("t-"), None);
        assert_eq!(partition_name("t-99999999999"), None);
    }
}
