//! Kafka's text checkpoint files, read the way Kafka 4.x reads them.
//!
//! Five files share one layout (`CheckpointFile` in Kafka's `server-common`):
//!
//! ```text
//! <version>\n
//! <entry count>\n
//! <entry>\n          (count times)
//! ```
//!
//! | file | where | entry |
//! |---|---|---|
//! | `leader-epoch-checkpoint` | each partition directory | `<epoch> <startOffset>` |
//! | `replication-offset-checkpoint` | log directory root | `<topic> <partition> <high watermark>` |
//! | `recovery-point-offset-checkpoint` | log directory root | `<topic> <partition> <recovery point>` |
//! | `log-start-offset-checkpoint` | log directory root | `<topic> <partition> <log start offset>` |
//! | `cleaner-offset-checkpoint` | log directory root | `<topic> <partition> <first dirty offset>` |
//!
//! Every parser here runs in one pass and collects every [`CheckpointProblem`]
//! it meets, in file order, so that a torn or corrupt checkpoint still yields
//! the entries that could be read ([`parse_offset_checkpoint_lenient`],
//! [`parse_leader_epoch_checkpoint_lenient`]). The strict parsers
//! ([`parse_offset_checkpoint`], [`parse_leader_epoch_checkpoint`]) accept
//! exactly what Kafka's reader accepts and fail with the first problem Kafka's
//! reader would fail on. Problems Kafka's reader tolerates but its writer
//! never produces (a missing final line terminator, duplicate partitions, ...)
//! are kept in [`Checkpoint::problems`] with [`ProblemKind::kafka_rejects`]
//! false.
//!
//! Kafka's reading rules, as implemented by `CheckpointFile.CheckpointReadBuffer`
//! and the entry formatters of `OffsetCheckpointFile` and
//! `LeaderEpochCheckpointFile`:
//!
//! - Text is UTF-8; lines end with `\n`, `\r` or `\r\n` (`BufferedReader.readLine`);
//!   a last line without terminator is still a line.
//! - An empty file is an empty checkpoint; so is a file with a version line only.
//! - The version and count lines go through `Integer.parseInt` with no trimming;
//!   a non-integer is "Malformed line". A version other than 0 is
//!   "Unrecognised version". A negative count makes `new ArrayList(count)` throw.
//! - Each further line is split on the regex `\s+` (Java's `String.split`: a
//!   leading separator yields an empty first token, trailing empty tokens are
//!   dropped). Offset entries need exactly 3 tokens, epoch entries exactly 2;
//!   otherwise "Malformed line". The numbers go through `Integer.parseInt` /
//!   `Long.parseLong`; a bad number throws `NumberFormatException`.
//! - All lines to the end of the file are read; the number of entries must
//!   equal the count line (`Expected [N] entries ... but found only [M]`).
//!
//! Java's `Integer.parseInt` also accepts non-ASCII Unicode decimal digits;
//! this parser accepts ASCII digits only (Kafka never writes anything else).
//!
//! `.kafka_cleanshutdown` (not a checkpoint in this format, but read beside
//! them) is handled by [`parse_clean_shutdown`].
//!
//! Every reader takes its bytes a line at a time from any [`BufRead`] (the
//! `parse_*` functions from a slice already in memory), so a file is never
//! held whole: [`read_offset_checkpoint`] and [`read_leader_epoch_checkpoint`]
//! keep the entries (within klf's caps, [`Limits`]: a file over them is not
//! read, [`OverCap`]), [`stream_offset_checkpoint`] and
//! [`stream_leader_epoch_checkpoint`] hand each entry and problem on as it is
//! met and keep nothing. No count read from a file sizes an allocation.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead};

use super::ParseError;

/// Name of the per-partition leader epoch checkpoint file.
pub const LEADER_EPOCH_CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";

/// Name of the clean shutdown marker in a log directory root.
pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";

/// The version every checkpoint file of this layout carries (Kafka 0.10 to 4.x).
pub const CHECKPOINT_VERSION: i32 = 0;

/// The four offset checkpoint files found in a log directory root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OffsetCheckpointKind {
    /// `replication-offset-checkpoint`: high watermark per partition.
    ReplicationOffset,
    /// `recovery-point-offset-checkpoint`: offset below which data is known flushed.
    RecoveryPoint,
    /// `log-start-offset-checkpoint`: log start offset, for partitions whose start
    /// is above the base offset of their first segment.
    LogStartOffset,
    /// `cleaner-offset-checkpoint`: first dirty offset of compacted partitions.
    CleanerOffset,
}

impl OffsetCheckpointKind {
    /// All four kinds, in a fixed order.
    pub const ALL: [OffsetCheckpointKind; 4] = [
        OffsetCheckpointKind::ReplicationOffset,
        OffsetCheckpointKind::RecoveryPoint,
        OffsetCheckpointKind::LogStartOffset,
        OffsetCheckpointKind::CleanerOffset,
    ];

    /// The file name Kafka gives this checkpoint.
    pub fn file_name(self) -> &'static str {
        match self {
            OffsetCheckpointKind::ReplicationOffset => "replication-offset-checkpoint",
            OffsetCheckpointKind::RecoveryPoint => "recovery-point-offset-checkpoint",
            OffsetCheckpointKind::LogStartOffset => "log-start-offset-checkpoint",
            OffsetCheckpointKind::CleanerOffset => "cleaner-offset-checkpoint",
        }
    }

    /// The kind whose file is called `name`, if any.
    pub fn from_file_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.file_name() == name)
    }
}

impl fmt::Display for OffsetCheckpointKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.file_name())
    }
}

/// One line of an offset checkpoint: `<topic> <partition> <offset>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OffsetEntry {
    /// Topic name as written (any run of non-whitespace characters).
    pub topic: String,
    /// Partition number.
    pub partition: i32,
    /// The checkpointed offset.
    pub offset: i64,
    /// 1-based line number in the file.
    pub line: u32,
}

/// One line of a `leader-epoch-checkpoint`: `<epoch> <startOffset>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EpochEntry {
    /// Leader epoch.
    pub epoch: i32,
    /// First offset written in that epoch.
    pub start_offset: i64,
    /// 1-based line number in the file.
    pub line: u32,
}

/// What went wrong (or looks wrong) in a checkpoint file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProblemKind {
    /// Bytes that are not UTF-8 (Kafka: `MalformedInputException`, an I/O error).
    InvalidUtf8,
    /// Version or count line that is not an `int`, or an entry line with the
    /// wrong number of fields (Kafka: "Malformed line in checkpoint file").
    MalformedLine,
    /// Version line other than 0 (Kafka: "Unrecognised version").
    UnsupportedVersion,
    /// Negative count line (Kafka: `IllegalArgumentException` from the list
    /// allocation, not wrapped as an I/O error).
    NegativeCount,
    /// Partition, offset or epoch field that is not a 32/64-bit integer
    /// (Kafka: `NumberFormatException`, not wrapped as an I/O error).
    BadNumber,
    /// Number of entries differs from the count line (Kafka: `Expected [N]
    /// entries ... but found only [M]`).
    CountMismatch,
    /// The last line has no line terminator. Kafka reads it, but its writer
    /// ends every line: the file was cut short or written by something else.
    MissingLineTerminator,
    /// Version line present but no count line. Kafka reads an empty
    /// checkpoint; its writer never produces this.
    MissingCountLine,
    /// A topic-partition listed more than once; Kafka keeps the last value.
    DuplicateEntry,
    /// An offset entry whose topic is empty (a line starting with whitespace
    /// and having two more fields); Kafka accepts it.
    EmptyTopic,
    /// Leader epoch entry with a negative epoch or start offset: the file
    /// parses, but Kafka's `LeaderEpochFileCache` throws on load.
    NegativeEpochEntry,
    /// Leader epoch entry whose epoch or start offset does not increase over
    /// the previous one: Kafka's cache silently drops the earlier entries on load.
    NonMonotonicEpochEntry,
}

impl ProblemKind {
    /// True when Kafka's checkpoint reader (or, for leader epochs, the cache
    /// that loads it) fails on this; false for oddities Kafka accepts.
    pub fn kafka_rejects(self) -> bool {
        matches!(
            self,
            ProblemKind::InvalidUtf8
                | ProblemKind::MalformedLine
                | ProblemKind::UnsupportedVersion
                | ProblemKind::NegativeCount
                | ProblemKind::BadNumber
                | ProblemKind::CountMismatch
                | ProblemKind::NegativeEpochEntry
        )
    }
}

/// A problem in a checkpoint file, with the 1-based line number (when it is
/// about one line) and the byte position in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointProblem {
    /// 1-based line number; `None` for problems about the whole file.
    pub line: Option<u32>,
    /// Category of the problem.
    pub kind: ProblemKind,
    /// Byte position in the file and human-readable reason.
    pub error: ParseError,
}

impl CheckpointProblem {
    fn new(
        line: Option<u32>,
        kind: ProblemKind,
        pos: u64,
        reason: impl Into<Cow<'static, str>>,
    ) -> Self {
        CheckpointProblem {
            line,
            kind,
            error: ParseError::new(pos, reason),
        }
    }
}

impl fmt::Display for CheckpointProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}, {}", self.error),
            None => write!(f, "{}", self.error),
        }
    }
}

impl std::error::Error for CheckpointProblem {}

/// What could be read from a checkpoint file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint<T> {
    /// The version line, if the file had a parsable one (`None` for an empty file).
    pub version: Option<i32>,
    /// The count line, if the file had a parsable one.
    pub declared_count: Option<i32>,
    /// Entries in file order (lines that could not be parsed are left out).
    pub entries: Vec<T>,
    /// Every problem met, in file order (a reader with a cap on problems,
    /// [`Limits::max_problems`], keeps the first ones and the one Kafka fails
    /// on, and counts the rest in `more_problems`). After a strict parse this
    /// holds only problems Kafka accepts ([`ProblemKind::kafka_rejects`]
    /// false).
    pub problems: Vec<CheckpointProblem>,
    /// Problems met but not kept in `problems`.
    pub more_problems: u64,
    /// Index in `problems` of the one Kafka fails on first, if any. This is
    /// usually the first rejecting problem in file order, except for bytes
    /// that are not UTF-8: Java decodes the file in chunks of 8192
    /// characters and fails on the whole chunk before handing out its lines.
    pub kafka_failure: Option<usize>,
    /// Indexes of `entries` sorted by topic, partition and line (offset
    /// checkpoints), for [`Checkpoint::offset_of`].
    by_key: Vec<u32>,
}

impl<T> Checkpoint<T> {
    /// True when Kafka would read this file without error.
    pub fn kafka_accepts(&self) -> bool {
        self.kafka_failure.is_none()
    }

    /// The problem Kafka would fail on, if any.
    pub fn first_rejection(&self) -> Option<&CheckpointProblem> {
        self.kafka_failure.and_then(|i| self.problems.get(i))
    }

    /// Every problem met: those kept in [`Checkpoint::problems`] and those
    /// only counted ([`Checkpoint::more_problems`]).
    pub fn problem_count(&self) -> u64 {
        self.problems.len() as u64 + self.more_problems
    }

    fn into_strict(mut self) -> Result<Self, CheckpointProblem> {
        if let Some(idx) = self.kafka_failure {
            if idx < self.problems.len() {
                return Err(self.problems.swap_remove(idx));
            }
        }
        Ok(self)
    }

    fn empty() -> Self {
        Checkpoint {
            version: None,
            declared_count: None,
            entries: Vec::new(),
            problems: Vec::new(),
            more_problems: 0,
            kafka_failure: None,
            by_key: Vec::new(),
        }
    }
}

impl Checkpoint<OffsetEntry> {
    /// The entries as Kafka's reader maps them: one offset per topic-partition,
    /// the last line winning.
    pub fn offsets(&self) -> BTreeMap<(String, i32), i64> {
        self.entries
            .iter()
            .map(|e| ((e.topic.clone(), e.partition), e.offset))
            .collect()
    }

    /// The offset Kafka would take for `topic`/`partition` (last line wins).
    /// A lookup in the reader's index of the entries (a scan when the
    /// entries were changed since).
    pub fn offset_of(&self, topic: &str, partition: i32) -> Option<i64> {
        if self.by_key.len() != self.entries.len() {
            return self
                .entries
                .iter()
                .rev()
                .find(|e| e.partition == partition && e.topic == topic)
                .map(|e| e.offset);
        }
        let key = |i: u32| {
            self.entries
                .get(i as usize)
                .map(|e| (e.topic.as_str(), e.partition))
        };
        // The index is sorted by (topic, partition, line): the last entry
        // of the key is the one just before the first greater key.
        let after = self
            .by_key
            .partition_point(|&i| key(i).is_some_and(|k| k <= (topic, partition)));
        let i = *self.by_key.get(after.checked_sub(1)?)?;
        let e = self.entries.get(i as usize)?;
        (e.topic == topic && e.partition == partition).then_some(e.offset)
    }

    fn index_by_key(&mut self) {
        let n = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        let mut idx: Vec<u32> = (0..n).collect();
        let entries = &self.entries;
        idx.sort_by(|&a, &b| {
            let k = |i: u32| {
                entries
                    .get(i as usize)
                    .map(|e| (e.topic.as_str(), e.partition))
            };
            (k(a), a).cmp(&(k(b), b))
        });
        self.by_key = idx;
    }
}

/// Longest line, in bytes, klf reads in a checkpoint file. Kafka's longest
/// line is under 300 bytes (a topic name of at most 249 characters and two
/// numbers); a longer line is not something Kafka wrote, and a file that has
/// one is not read ([`OverCap::Line`]).
pub const MAX_LINE_BYTES: usize = 4096;

/// Most entries klf reads from a `leader-epoch-checkpoint`. Kafka writes one
/// entry per leader epoch that wrote to the partition and drops the entries
/// of deleted segments: a real file has a handful, and a partition whose
/// leader changed every second for eleven days would have a million.
pub const MAX_EPOCH_ENTRIES: u64 = 1_000_000;

/// Most entries klf reads from an offset checkpoint. Kafka writes one entry
/// per partition of the log directory: a broker with 200,000 partitions is
/// extreme, and this is five times that.
pub const MAX_OFFSET_ENTRIES: u64 = 1_000_000;

/// Problems a capped reader keeps whole; the rest are counted
/// ([`Checkpoint::more_problems`]), except the one Kafka fails on, which is
/// always kept.
pub const KEPT_PROBLEMS: usize = 100;

/// What a checkpoint reader takes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most entry lines (the lines after the version and count lines).
    pub max_entries: u64,
    /// Longest line, without its terminator.
    pub max_line: usize,
    /// Most problems kept whole (see [`KEPT_PROBLEMS`]).
    pub max_problems: usize,
}

impl Limits {
    /// Everything is read and kept (what the `parse_*` functions over
    /// bytes already in memory use).
    pub const NONE: Limits = Limits {
        max_entries: u64::MAX,
        max_line: usize::MAX,
        max_problems: usize::MAX,
    };
    /// klf's caps for a `leader-epoch-checkpoint`.
    pub const EPOCHS: Limits = Limits {
        max_entries: MAX_EPOCH_ENTRIES,
        max_line: MAX_LINE_BYTES,
        max_problems: KEPT_PROBLEMS,
    };
    /// klf's caps for an offset checkpoint.
    pub const OFFSETS: Limits = Limits {
        max_entries: MAX_OFFSET_ENTRIES,
        max_line: MAX_LINE_BYTES,
        max_problems: KEPT_PROBLEMS,
    };
}

/// Why a checkpoint file was not read: it is over one of klf's caps
/// ([`Limits`]), which no file Kafka writes reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverCap {
    /// More entry lines than `cap`; `pos` is where the first line over the
    /// cap starts, `declared` what the count line says.
    Entries {
        /// The cap.
        cap: u64,
        /// The count line, if it parsed.
        declared: Option<i32>,
        /// Byte position of the first line over the cap.
        pos: u64,
    },
    /// A line longer than `cap` bytes.
    Line {
        /// The cap.
        cap: usize,
        /// 1-based line number.
        line: u32,
        /// Byte position where the line starts.
        pos: u64,
    },
}

impl OverCap {
    /// Byte position the refusal is about.
    pub fn pos(&self) -> u64 {
        match self {
            OverCap::Entries { pos, .. } | OverCap::Line { pos, .. } => *pos,
        }
    }
}

impl fmt::Display for OverCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverCap::Entries { cap, declared, .. } => {
                write!(f, "more than {cap} entries")?;
                if let Some(n) = declared {
                    write!(f, " (its count line says {n})")?;
                }
                write!(
                    f,
                    ", over klf's cap of {cap} entries for this checkpoint (a real one has far fewer)"
                )
            }
            OverCap::Line { cap, line, .. } => write!(
                f,
                "line {line} is longer than {cap} bytes, over klf's cap for a checkpoint line (the longest Kafka writes is under 300 bytes)"
            ),
        }
    }
}

/// Why a streaming read of a checkpoint stopped.
#[derive(Debug)]
pub enum ReadError<E = std::convert::Infallible> {
    /// Reading the bytes failed.
    Read(io::Error),
    /// The file is over a cap (nothing of it is to be used).
    OverCap(OverCap),
    /// The consumer of the items failed (a write, say).
    Sink(E),
}

impl<E: fmt::Display> fmt::Display for ReadError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Read(e) => write!(f, "{e}"),
            ReadError::OverCap(c) => write!(f, "{c}"),
            ReadError::Sink(e) => write!(f, "{e}"),
        }
    }
}

/// One item of a streaming read ([`stream_offset_checkpoint`],
/// [`stream_leader_epoch_checkpoint`]): entries and problems, each in file
/// order (and the problems sorted as [`Checkpoint::problems`] is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item<T> {
    /// An entry that parsed.
    Entry(T),
    /// A problem.
    Problem(CheckpointProblem),
}

/// What a streaming read found, besides its items.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    /// The version line, if it parsed.
    pub version: Option<i32>,
    /// The count line, if it parsed.
    pub declared_count: Option<i32>,
    /// Entries that parsed.
    pub entries: u64,
    /// Problems met.
    pub problems: u64,
    /// The problem Kafka's reader fails on first (see
    /// [`Checkpoint::kafka_failure`]), and its number among the problems.
    pub kafka_failure: Option<(u64, CheckpointProblem)>,
    /// Bytes read.
    pub bytes: u64,
}

impl Summary {
    /// True when Kafka would read the file without error.
    pub fn kafka_accepts(&self) -> bool {
        self.kafka_failure.is_none()
    }
}

/// Parses an offset checkpoint (`replication-offset-checkpoint`,
/// `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
/// `cleaner-offset-checkpoint`) exactly as Kafka does: the first problem
/// Kafka fails on is returned as the error.
pub fn parse_offset_checkpoint(bytes: &[u8]) -> Result<Checkpoint<OffsetEntry>, CheckpointProblem> {
    parse_offset_checkpoint_lenient(bytes).into_strict()
}

/// Parses an offset checkpoint, keeping every entry that could be read and
/// recording every problem (including those Kafka would fail on).
pub fn parse_offset_checkpoint_lenient(bytes: &[u8]) -> Checkpoint<OffsetEntry> {
    read_offset_checkpoint(bytes, &Limits::NONE).unwrap_or_else(|_| Checkpoint::empty())
}

/// Reads an offset checkpoint a line at a time from `r` (a file, say),
/// within `limits`: the entries, the first problems (and the one Kafka fails
/// on), and an index for [`Checkpoint::offset_of`]. What is held is the
/// entries, never the file.
pub fn read_offset_checkpoint<R: BufRead>(
    r: R,
    limits: &Limits,
) -> Result<Checkpoint<OffsetEntry>, ReadError> {
    let mut cp = collect(r, limits, |r, l, sink| stream_offset_checkpoint(r, l, sink))?;
    cp.index_by_key();
    Ok(cp)
}

/// Reads an offset checkpoint a line at a time from `r`, handing each entry
/// and problem to `sink` as it is met (nothing is kept: memory is that of
/// one line, and of the topic-partitions seen, to find duplicates).
pub fn stream_offset_checkpoint<R: BufRead, E>(
    r: R,
    limits: &Limits,
    sink: impl FnMut(Item<OffsetEntry>) -> Result<(), E>,
) -> Result<Summary, ReadError<E>> {
    drive(r, limits, &mut OffsetShape::default(), sink)
}

/// Parses a `leader-epoch-checkpoint` exactly as Kafka's checkpoint reader
/// does; the entries are not checked against the rules of Kafka's epoch cache
/// (see [`epoch_cache_problems`]).
pub fn parse_leader_epoch_checkpoint(
    bytes: &[u8],
) -> Result<Checkpoint<EpochEntry>, CheckpointProblem> {
    collect(bytes, &Limits::NONE, |r, l, sink| {
        drive(r, l, &mut EpochShape::file_rules_only(), sink)
    })
    .unwrap_or_else(|_| Checkpoint::empty())
    .into_strict()
}

/// Parses a `leader-epoch-checkpoint`, keeping every entry that could be read
/// and recording every problem, including those of [`epoch_cache_problems`].
pub fn parse_leader_epoch_checkpoint_lenient(bytes: &[u8]) -> Checkpoint<EpochEntry> {
    read_leader_epoch_checkpoint(bytes, &Limits::NONE).unwrap_or_else(|_| Checkpoint::empty())
}

/// Reads a `leader-epoch-checkpoint` a line at a time from `r` within
/// `limits`, as [`parse_leader_epoch_checkpoint_lenient`] reads bytes.
pub fn read_leader_epoch_checkpoint<R: BufRead>(
    r: R,
    limits: &Limits,
) -> Result<Checkpoint<EpochEntry>, ReadError> {
    collect(r, limits, |r, l, sink| {
        stream_leader_epoch_checkpoint(r, l, sink)
    })
}

/// Reads a `leader-epoch-checkpoint` a line at a time from `r`, handing each
/// entry and problem (those of the epoch cache's rules included) to `sink`
/// as it is met; memory is that of one line.
pub fn stream_leader_epoch_checkpoint<R: BufRead, E>(
    r: R,
    limits: &Limits,
    sink: impl FnMut(Item<EpochEntry>) -> Result<(), E>,
) -> Result<Summary, ReadError<E>> {
    drive(r, limits, &mut EpochShape::with_cache_rules(), sink)
}

/// Runs a streaming read, keeping its entries and its first problems.
fn collect<R, T, F>(r: R, limits: &Limits, run: F) -> Result<Checkpoint<T>, ReadError>
where
    F: FnOnce(
        R,
        &Limits,
        &mut dyn FnMut(Item<T>) -> Result<(), std::convert::Infallible>,
    ) -> Result<Summary, ReadError>,
{
    let mut cp = Checkpoint::empty();
    let keep = limits.max_problems;
    let summary = {
        let (entries, problems, more) = (&mut cp.entries, &mut cp.problems, &mut cp.more_problems);
        run(r, limits, &mut |item| {
            match item {
                Item::Entry(e) => entries.push(e),
                Item::Problem(p) if problems.len() < keep => problems.push(p),
                Item::Problem(_) => *more += 1,
            }
            Ok(())
        })?
    };
    cp.version = summary.version;
    cp.declared_count = summary.declared_count;
    cp.kafka_failure = match summary.kafka_failure {
        None => None,
        Some((n, _)) if n < cp.problems.len() as u64 => Some(n as usize),
        Some((_, p)) => {
            // Kept beyond the first problems: it comes after all of them.
            cp.problems.push(p);
            cp.more_problems = cp.more_problems.saturating_sub(1);
            Some(cp.problems.len() - 1)
        }
    };
    Ok(cp)
}

/// What Kafka's `LeaderEpochFileCache` makes of parsed entries when it loads
/// them: a negative epoch or start offset makes it throw
/// ([`ProblemKind::NegativeEpochEntry`]); an entry whose epoch or start offset
/// does not exceed an earlier one makes it drop the earlier entries
/// ([`ProblemKind::NonMonotonicEpochEntry`]). `line_starts` gives the byte
/// position of each line (index 0 = line 1), as computed from the file;
/// positions fall back to 0 when it is shorter.
pub fn epoch_cache_problems(entries: &[EpochEntry], line_starts: &[u64]) -> Vec<CheckpointProblem> {
    let pos_of = |line: u32| {
        line_starts
            .get((line as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0)
    };
    let mut rules = EpochRules::default();
    let mut out = Vec::new();
    for e in entries {
        out.extend(rules.check(e, pos_of(e.line)));
    }
    out
}

/// The epoch cache's rules, one entry at a time.
#[derive(Default)]
struct EpochRules {
    prev: Option<EpochEntry>,
}

impl EpochRules {
    fn check(&mut self, e: &EpochEntry, pos: u64) -> Option<CheckpointProblem> {
        if e.epoch < 0 || e.start_offset < 0 {
            // Kafka throws here; later entries are not compared with this one.
            return Some(CheckpointProblem::new(
                Some(e.line),
                ProblemKind::NegativeEpochEntry,
                pos,
                format!(
                    "epoch {} start offset {}: Kafka's leader epoch cache refuses negative values and fails to load",
                    e.epoch, e.start_offset
                ),
            ));
        }
        let out = match self.prev {
            Some(p) if e.epoch <= p.epoch || e.start_offset <= p.start_offset => {
                Some(CheckpointProblem::new(
                    Some(e.line),
                    ProblemKind::NonMonotonicEpochEntry,
                    pos,
                    format!(
                        "epoch {} at offset {} does not follow epoch {} at offset {} (line {}); \
                         Kafka's cache drops the earlier entries it conflicts with",
                        e.epoch, e.start_offset, p.epoch, p.start_offset, p.line
                    ),
                ))
            }
            _ => None,
        };
        self.prev = Some(*e);
        out
    }
}

/// Byte position of the start of each line, as Kafka's line reader splits
/// them (`\n`, `\r` or `\r\n`). Index 0 is line 1.
pub fn line_starts(bytes: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut lines = LineReader::new(bytes, usize::MAX);
    while let Ok(Some(l)) = lines.next_line() {
        out.push(l.start);
    }
    out
}

/// The entry lines of one kind of checkpoint.
trait Shape {
    type Entry;
    /// Fields an entry line has.
    const FIELDS: usize;
    /// The entry of a line split into exactly [`Shape::FIELDS`] tokens, and
    /// the problems of that line (in position order) pushed to `problems`.
    fn entry(
        &mut self,
        tokens: &[(u64, &str)],
        line_no: u32,
        line_start: u64,
        problems: &mut Vec<CheckpointProblem>,
    ) -> Option<Self::Entry>;
}

/// Offset checkpoint lines, and the duplicates among them.
#[derive(Default)]
struct OffsetShape {
    /// Hash of each topic-partition seen → its last line. Two 64-bit hashes
    /// under random keys: a false duplicate is out of reach, and the topic
    /// names are not held.
    seen: std::collections::HashMap<(u64, u64), u32>,
    keys: Option<(
        std::collections::hash_map::RandomState,
        std::collections::hash_map::RandomState,
    )>,
}

impl Shape for OffsetShape {
    type Entry = OffsetEntry;
    const FIELDS: usize = 3;

    fn entry(
        &mut self,
        tokens: &[(u64, &str)],
        line_no: u32,
        line_start: u64,
        problems: &mut Vec<CheckpointProblem>,
    ) -> Option<OffsetEntry> {
        let (&(tpos, topic), &(ppos, ptok), &(opos, otok)) =
            (tokens.first()?, tokens.get(1)?, tokens.get(2)?);
        let partition = match java_parse_int(ptok) {
            Ok(v) => v,
            Err(why) => {
                problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::BadNumber,
                    ppos,
                    format!("partition {:?} is not a 32-bit integer ({why})", clip(ptok)),
                ));
                return None;
            }
        };
        let offset = match java_parse_long(otok) {
            Ok(v) => v,
            Err(why) => {
                problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::BadNumber,
                    opos,
                    format!("offset {:?} is not a 64-bit integer ({why})", clip(otok)),
                ));
                return None;
            }
        };
        if topic.is_empty() {
            problems.push(CheckpointProblem::new(
                Some(line_no),
                ProblemKind::EmptyTopic,
                tpos,
                "entry starts with whitespace: Kafka reads an empty topic name",
            ));
        }
        // Duplicates: Kafka's map keeps the last line.
        use std::hash::BuildHasher;
        let (k1, k2) = self.keys.get_or_insert_with(Default::default);
        let hash = (
            k1.hash_one((topic, partition)),
            k2.hash_one((topic, partition)),
        );
        if let Some(prev) = self.seen.insert(hash, line_no) {
            problems.push(CheckpointProblem::new(
                Some(line_no),
                ProblemKind::DuplicateEntry,
                line_start,
                format!(
                    "{}-{partition} already listed on line {prev}; Kafka keeps this later value",
                    clip(topic)
                ),
            ));
        }
        Some(OffsetEntry {
            topic: topic.to_owned(),
            partition,
            offset,
            line: line_no,
        })
    }
}

/// Leader epoch checkpoint lines, with or without the epoch cache's rules.
struct EpochShape {
    rules: Option<EpochRules>,
}

impl EpochShape {
    fn file_rules_only() -> Self {
        EpochShape { rules: None }
    }

    fn with_cache_rules() -> Self {
        EpochShape {
            rules: Some(EpochRules::default()),
        }
    }
}

impl Shape for EpochShape {
    type Entry = EpochEntry;
    const FIELDS: usize = 2;

    fn entry(
        &mut self,
        tokens: &[(u64, &str)],
        line_no: u32,
        line_start: u64,
        problems: &mut Vec<CheckpointProblem>,
    ) -> Option<EpochEntry> {
        let (&(epos, etok), &(opos, otok)) = (tokens.first()?, tokens.get(1)?);
        let epoch = match java_parse_int(etok) {
            Ok(v) => v,
            Err(why) => {
                problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::BadNumber,
                    epos,
                    format!("epoch {:?} is not a 32-bit integer ({why})", clip(etok)),
                ));
                return None;
            }
        };
        let start_offset = match java_parse_long(otok) {
            Ok(v) => v,
            Err(why) => {
                problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::BadNumber,
                    opos,
                    format!(
                        "start offset {:?} is not a 64-bit integer ({why})",
                        clip(otok)
                    ),
                ));
                return None;
            }
        };
        let e = EpochEntry {
            epoch,
            start_offset,
            line: line_no,
        };
        if let Some(rules) = &mut self.rules {
            problems.extend(rules.check(&e, line_start));
        }
        Some(e)
    }
}

/// One line as Kafka's `BufferedReader.readLine` splits them.
struct RawLine<'a> {
    /// Byte position where the line starts.
    start: u64,
    /// The line without its terminator (its first `max_line` bytes when
    /// `too_long`).
    text: &'a [u8],
    /// Whether a terminator (`\n`, `\r` or `\r\n`) ends it.
    terminated: bool,
    /// Whether that terminator is a `\r\n` read whole.
    crlf: bool,
    /// Whether the `\n` of a `\r\n` split between two reads of the source
    /// was taken just before this line (at `start - 1`).
    lf_before: bool,
    /// The line is longer than the reader's `max_line`.
    too_long: bool,
}

/// Lines of a byte stream, one at a time: a line wholly inside the
/// source's buffer is lent from it, one across two reads is copied (up to
/// `max_line` bytes).
struct LineReader<R> {
    r: R,
    /// Position of the next byte of the source.
    pos: u64,
    /// Bytes of the source's buffer lent out by the last line, consumed on
    /// the next call.
    lent: usize,
    buf: Vec<u8>,
    max_line: usize,
    /// The last line ended with a `\r` at the end of the source's buffer: a
    /// `\n` starting the next read belongs to it.
    after_cr: bool,
}

/// The source's buffered bytes (empty at its end), a read interrupted by a
/// signal tried again.
fn fill<R: BufRead>(r: &mut R) -> io::Result<&[u8]> {
    loop {
        match r.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            Ok(_) => break,
        }
    }
    // Buffered now: this returns the same bytes without reading.
    r.fill_buf()
}

impl<R: BufRead> LineReader<R> {
    fn new(r: R, max_line: usize) -> Self {
        LineReader {
            r,
            pos: 0,
            lent: 0,
            buf: Vec::new(),
            max_line,
            after_cr: false,
        }
    }

    fn next_line(&mut self) -> io::Result<Option<RawLine<'_>>> {
        if self.lent > 0 {
            self.r.consume(self.lent);
            self.lent = 0;
        }
        self.buf.clear();
        let mut lf_before = false;
        if self.after_cr {
            self.after_cr = false;
            if fill(&mut self.r)?.first() == Some(&b'\n') {
                self.r.consume(1);
                self.pos += 1;
                lf_before = true;
            }
        }
        let start = self.pos;
        let is_eol = |b: &u8| *b == b'\n' || *b == b'\r';
        // The common case: the whole line is in the source's buffer.
        let (found, avail_len) = {
            let avail = fill(&mut self.r)?;
            (avail.iter().position(is_eol), avail.len())
        };
        if avail_len == 0 {
            return Ok(None);
        }
        if let Some(i) = found {
            let avail = fill(&mut self.r)?;
            let cr = avail.get(i) == Some(&b'\r');
            let crlf = cr && avail.get(i + 1) == Some(&b'\n');
            let used = if crlf { i + 2 } else { i + 1 };
            self.after_cr = cr && !crlf && used == avail.len();
            self.pos += used as u64;
            self.lent = used;
            let too_long = i > self.max_line;
            let text = avail.get(..i.min(self.max_line)).unwrap_or(&[]);
            return Ok(Some(RawLine {
                start,
                text,
                terminated: true,
                crlf,
                lf_before,
                too_long,
            }));
        }
        // A line across reads: copied, up to the cap.
        loop {
            let avail = fill(&mut self.r)?;
            if avail.is_empty() {
                return Ok(Some(RawLine {
                    start,
                    text: &self.buf,
                    terminated: false,
                    crlf: false,
                    lf_before,
                    too_long: false,
                }));
            }
            let (take, used, end, crlf) = match avail.iter().position(is_eol) {
                Some(i) => {
                    let cr = avail.get(i) == Some(&b'\r');
                    let crlf = cr && avail.get(i + 1) == Some(&b'\n');
                    let used = if crlf { i + 2 } else { i + 1 };
                    self.after_cr = cr && !crlf && used == avail.len();
                    (i, used, true, crlf)
                }
                None => (avail.len(), avail.len(), false, false),
            };
            let room = self.max_line.saturating_sub(self.buf.len());
            let too_long = take > room;
            self.buf
                .extend_from_slice(avail.get(..take.min(room)).unwrap_or(&[]));
            self.r.consume(used);
            self.pos += used as u64;
            if too_long {
                self.after_cr = false;
                return Ok(Some(RawLine {
                    start,
                    text: &self.buf,
                    terminated: end,
                    crlf,
                    lf_before,
                    too_long,
                }));
            }
            if end {
                return Ok(Some(RawLine {
                    start,
                    text: &self.buf,
                    terminated: true,
                    crlf,
                    lf_before,
                    too_long: false,
                }));
            }
        }
    }
}

/// Where Java's decoder stops on the first bytes that are not UTF-8: it
/// decodes 8192 characters at a time and fails on a whole chunk before
/// handing out its lines. Fed every character up to the first bad byte,
/// it knows where the chunk holding it starts, and on which line.
#[derive(Default)]
struct Utf8Chunks {
    chars: u64,
    /// Line of the first character of the current chunk (the line whose
    /// content or first terminator byte holds it).
    chunk_line: u64,
    stopped: bool,
}

impl Utf8Chunks {
    const CHUNK: u64 = 8192;

    fn feed(&mut self, bytes: &[u8], line: u64) {
        if self.stopped {
            return;
        }
        for &b in bytes {
            if b & 0xc0 != 0x80 {
                if self.chars.is_multiple_of(Self::CHUNK) {
                    self.chunk_line = line;
                }
                self.chars += 1;
            }
        }
    }

    /// The line Kafka's reader stops before, for the first bad byte, met
    /// on `line` after `valid` (the valid start of that line's text, fed
    /// here first); `cut_at_end`: the bad bytes are a sequence the end of
    /// the file cuts short (found only at end of input).
    fn stop_line(&mut self, valid: &[u8], line: u64, cut_at_end: bool) -> u64 {
        self.feed(valid, line);
        self.stopped = true;
        if cut_at_end || self.chars.is_multiple_of(Self::CHUNK) {
            line
        } else {
            self.chunk_line
        }
    }
}

/// Which problem Kafka fails on first: the smallest key, the first of
/// equals in file order.
fn failure_key(p: &CheckpointProblem, utf8_stop: Option<u64>) -> (u64, u8, u64) {
    match (p.kind, utf8_stop) {
        (ProblemKind::InvalidUtf8, Some(stop)) => (stop, 0, p.error.pos),
        (ProblemKind::NegativeEpochEntry, _) => (u64::MAX, 2, p.error.pos),
        _ => (p.line.map(u64::from).unwrap_or(u64::MAX), 1, p.error.pos),
    }
}

/// The driver every checkpoint reader shares: version line, count line,
/// entry lines of `S::FIELDS` tokens, each line read and parsed on its
/// own; items go to `sink` as they are met.
fn drive<R: BufRead, S: Shape, E>(
    r: R,
    limits: &Limits,
    shape: &mut S,
    mut sink: impl FnMut(Item<S::Entry>) -> Result<(), E>,
) -> Result<Summary, ReadError<E>> {
    let mut lines = LineReader::new(r, limits.max_line);
    let mut s = Summary::default();
    let mut best: Option<(u64, u8, u64)> = None;
    let mut utf8 = Utf8Chunks::default();
    let mut first_bad_seen = false;
    let mut entry_lines: u64 = 0;
    let mut count_line_ok = false;
    let mut line_count: u64 = 0;
    let mut last_terminated = true;
    let mut line_problems: Vec<CheckpointProblem> = Vec::new();
    // Hands one problem on, noting whether Kafka fails on it first.
    let mut give = |p: CheckpointProblem,
                    utf8_stop: Option<u64>,
                    s: &mut Summary,
                    sink: &mut dyn FnMut(Item<S::Entry>) -> Result<(), E>|
     -> Result<(), ReadError<E>> {
        if p.kind.kafka_rejects() {
            let key = failure_key(&p, utf8_stop);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
                s.kafka_failure = Some((s.problems, p.clone()));
            }
        }
        s.problems += 1;
        sink(Item::Problem(p)).map_err(ReadError::Sink)
    };
    loop {
        let line = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => return Err(ReadError::Read(e)),
        };
        line_count += 1;
        let line_no = u32::try_from(line_count).unwrap_or(u32::MAX);
        if line.too_long {
            return Err(ReadError::OverCap(OverCap::Line {
                cap: limits.max_line,
                line: line_no,
                pos: line.start,
            }));
        }
        if line_count >= 3 {
            entry_lines += 1;
            if entry_lines > limits.max_entries {
                return Err(ReadError::OverCap(OverCap::Entries {
                    cap: limits.max_entries,
                    declared: s.declared_count,
                    pos: line.start,
                }));
            }
        }
        last_terminated = line.terminated;
        if line.lf_before {
            utf8.feed(b"\n", line_count);
        }
        let pos = line.start;
        let text = match std::str::from_utf8(line.text) {
            Ok(t) => t,
            Err(e) => {
                let valid = e.valid_up_to();
                let stop = if first_bad_seen {
                    None
                } else {
                    first_bad_seen = true;
                    let rest = line.text.get(valid..).unwrap_or(&[]);
                    let cut_at_end = !line.terminated
                        && matches!(std::str::from_utf8(rest), Err(e) if e.valid_up_to() == 0 && e.error_len().is_none());
                    Some(utf8.stop_line(
                        line.text.get(..valid).unwrap_or(&[]),
                        line_count,
                        cut_at_end,
                    ))
                };
                let p = CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::InvalidUtf8,
                    pos + valid as u64,
                    "bytes that are not UTF-8; Kafka's reader fails with MalformedInputException",
                );
                give(p, stop, &mut s, &mut sink)?;
                continue;
            }
        };
        utf8.feed(text.as_bytes(), line_count);
        if line.terminated {
            // \r or \n: the character right after the text, on this line
            // for the decoder's chunks; the \n of a \r\n is the next line's.
            utf8.feed(b"\n", line_count);
            if line.crlf {
                utf8.feed(b"\n", line_count + 1);
            }
        }
        match line_count {
            1 => match java_parse_int(text) {
                Ok(v) => {
                    s.version = Some(v);
                    if v != CHECKPOINT_VERSION {
                        let p = CheckpointProblem::new(
                            Some(line_no),
                            ProblemKind::UnsupportedVersion,
                            pos,
                            format!("unrecognised version {v}, expected {CHECKPOINT_VERSION}"),
                        );
                        give(p, None, &mut s, &mut sink)?;
                    }
                }
                Err(why) => {
                    let p = CheckpointProblem::new(
                        Some(line_no),
                        ProblemKind::MalformedLine,
                        pos,
                        format!("version line {:?} is not an integer ({why})", clip(text)),
                    );
                    give(p, None, &mut s, &mut sink)?;
                }
            },
            2 => match java_parse_int(text) {
                Ok(v) => {
                    s.declared_count = Some(v);
                    if v < 0 {
                        let p = CheckpointProblem::new(
                            Some(line_no),
                            ProblemKind::NegativeCount,
                            pos,
                            format!("negative entry count {v}"),
                        );
                        give(p, None, &mut s, &mut sink)?;
                    } else {
                        count_line_ok = true;
                    }
                }
                Err(why) => {
                    let p = CheckpointProblem::new(
                        Some(line_no),
                        ProblemKind::MalformedLine,
                        pos,
                        format!("count line {:?} is not an integer ({why})", clip(text)),
                    );
                    give(p, None, &mut s, &mut sink)?;
                }
            },
            _ => {
                let (tokens, total) = java_ws_split(text, pos, S::FIELDS + 1);
                if total != S::FIELDS {
                    let p = CheckpointProblem::new(
                        Some(line_no),
                        ProblemKind::MalformedLine,
                        pos,
                        format!(
                            "malformed entry {:?}: {total} whitespace-separated fields, expected {}",
                            clip(text),
                            S::FIELDS
                        ),
                    );
                    give(p, None, &mut s, &mut sink)?;
                    continue;
                }
                let entry = shape.entry(&tokens, line_no, pos, &mut line_problems);
                for p in line_problems.drain(..) {
                    give(p, None, &mut s, &mut sink)?;
                }
                if let Some(e) = entry {
                    s.entries += 1;
                    sink(Item::Entry(e)).map_err(ReadError::Sink)?;
                }
            }
        }
    }
    s.bytes = lines.pos;
    let len = lines.pos;
    if line_count > 0 && !last_terminated {
        let p = CheckpointProblem::new(
            u32::try_from(line_count).ok(),
            ProblemKind::MissingLineTerminator,
            len,
            "last line has no line terminator: the file looks cut short",
        );
        give(p, None, &mut s, &mut sink)?;
    }
    if line_count == 1 && s.version.is_some() {
        let p = CheckpointProblem::new(
            Some(2),
            ProblemKind::MissingCountLine,
            len,
            "no count line after the version: Kafka reads an empty checkpoint, its writer never leaves this",
        );
        give(p, None, &mut s, &mut sink)?;
    }
    if count_line_ok {
        if let Some(expected) = s.declared_count {
            // Kafka counts the entries it parsed; a line it fails on stops it
            // earlier, so the mismatch only matters once every line parsed.
            // Here we compare the lines present with the count.
            if entry_lines != expected as u64 {
                let p = CheckpointProblem::new(
                    None,
                    ProblemKind::CountMismatch,
                    len,
                    format!("count line says {expected} entries, the file has {entry_lines} entry lines"),
                );
                give(p, None, &mut s, &mut sink)?;
            }
        }
    }
    Ok(s)
}

/// Byte offset where the chunk of 8192 characters holding byte `bad` starts
/// (Java's `StreamDecoder` fails on the whole chunk). Bytes before `bad` are
/// valid UTF-8.
pub(crate) fn utf8_chunk_start(bytes: &[u8], bad: usize) -> usize {
    const CHUNK: usize = 8192;
    // A sequence cut by the end of the file is only found at end of input,
    // after every earlier character was handed out.
    if let Some(Err(e)) = bytes.get(bad..).map(std::str::from_utf8) {
        if e.valid_up_to() == 0 && e.error_len().is_none() {
            return bad;
        }
    }
    let valid = bytes
        .get(..bad)
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("");
    let chars_before = valid.chars().count();
    let chunk_first_char = (chars_before / CHUNK) * CHUNK;
    valid
        .char_indices()
        .nth(chunk_first_char)
        .map(|(i, _)| i)
        .unwrap_or(bad.min(bytes.len()))
}

/// Java's `Pattern.compile("\\s+").split(line)`: the first `keep` tokens,
/// each with its byte position in the file, and how many tokens there are.
/// A leading separator yields an empty first token; trailing empty tokens
/// are dropped.
fn java_ws_split<'a>(line: &'a str, base: u64, keep: usize) -> (Vec<(u64, &'a str)>, usize) {
    // Java's \s without UNICODE_CHARACTER_CLASS: [ \t\n\x0B\f\r].
    let is_ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let bytes = line.as_bytes();
    let mut tokens: Vec<(u64, &'a str)> = Vec::new();
    // Tokens met, and how many of them end with the last non-empty one.
    let (mut raw, mut upto_last_nonempty) = (0usize, 0usize);
    let mut note = |start: usize, end: usize, tokens: &mut Vec<(u64, &'a str)>| {
        let t = line.get(start..end).unwrap_or("");
        raw += 1;
        if !t.is_empty() {
            upto_last_nonempty = raw;
        }
        if tokens.len() < keep {
            tokens.push((base + start as u64, t));
        }
    };
    let mut start = 0usize;
    let mut i = 0usize;
    let mut matched = false;
    while i < bytes.len() {
        if bytes.get(i).copied().is_some_and(is_ws) {
            let ws_start = i;
            while bytes.get(i).copied().is_some_and(is_ws) {
                i += 1;
            }
            matched = true;
            note(start, ws_start, &mut tokens);
            start = i;
        } else {
            i += 1;
        }
    }
    if !matched {
        return (vec![(base, line)].into_iter().take(keep).collect(), 1);
    }
    note(start, bytes.len(), &mut tokens);
    tokens.truncate(upto_last_nonempty);
    (tokens, upto_last_nonempty)
}

/// Java's `Integer.parseInt(s)` for ASCII digits: optional `+`/`-`, then at
/// least one digit, in range.
pub fn java_parse_int(s: &str) -> Result<i32, &'static str> {
    let v = java_parse_long(s)?;
    i32::try_from(v).map_err(|_| "out of 32-bit range")
}

/// Java's `Long.parseLong(s)` for ASCII digits.
pub fn java_parse_long(s: &str) -> Result<i64, &'static str> {
    let bytes = s.as_bytes();
    let (neg, digits) = match bytes.first() {
        None => return Err("empty"),
        Some(b'-') => (true, bytes.get(1..).unwrap_or(&[])),
        Some(b'+') => (false, bytes.get(1..).unwrap_or(&[])),
        Some(_) => (false, bytes),
    };
    if digits.is_empty() {
        return Err("sign without digits");
    }
    // Accumulate negatively so that i64::MIN parses.
    let mut acc: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err("not a decimal number");
        }
        acc = acc
            .checked_mul(10)
            .and_then(|a| a.checked_sub(i64::from(b - b'0')))
            .ok_or("out of 64-bit range")?;
    }
    if neg {
        Ok(acc)
    } else {
        acc.checked_neg().ok_or("out of 64-bit range")
    }
}

/// At most 80 characters of untrusted text, for messages.
pub(crate) fn clip(s: &str) -> Cow<'_, str> {
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        Cow::Borrowed(s)
    } else {
        let mut out: String = s.chars().take(MAX).collect();
        out.push('…');
        Cow::Owned(out)
    }
}

/// The content of a `.kafka_cleanshutdown` marker.
///
/// The marker's presence is what matters to Kafka: it skips log recovery for
/// the whole log directory. Kafka up to 3.6 writes it empty; 3.7+ (KIP-966)
/// writes `{"version":0,"brokerEpoch":N}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CleanShutdown {
    /// Zero-length marker (Kafka 3.6 and earlier).
    Empty,
    /// JSON marker.
    Marker {
        /// The `version` field, if present and an integer.
        version: Option<i64>,
        /// The `brokerEpoch` field, if present and an integer (-1 = unknown).
        broker_epoch: Option<i64>,
    },
    /// Content Kafka cannot read (it then reports no broker epoch; the
    /// marker still counts as a clean shutdown).
    Unreadable(ParseError),
}

/// Parses a `.kafka_cleanshutdown` marker. Never fails: unreadable content is
/// [`CleanShutdown::Unreadable`].
pub fn parse_clean_shutdown(bytes: &[u8]) -> CleanShutdown {
    if bytes.is_empty() {
        return CleanShutdown::Empty;
    }
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            let pos = line_col_to_pos(bytes, e.line(), e.column());
            return CleanShutdown::Unreadable(ParseError::new(pos, format!("not JSON: {e}")));
        }
    };
    let Some(obj) = value.as_object() else {
        return CleanShutdown::Unreadable(ParseError::new(0, "JSON value is not an object"));
    };
    CleanShutdown::Marker {
        version: obj.get("version").and_then(|v| v.as_i64()),
        broker_epoch: obj.get("brokerEpoch").and_then(|v| v.as_i64()),
    }
}

/// Byte position of a 1-based line and column as serde_json reports them.
fn line_col_to_pos(bytes: &[u8], line: usize, column: usize) -> u64 {
    let mut cur_line = 1usize;
    let mut line_start = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        if cur_line >= line {
            break;
        }
        if b == b'\n' {
            cur_line += 1;
            line_start = i + 1;
        }
    }
    let pos = line_start.saturating_add(column.saturating_sub(1));
    pos.min(bytes.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds<T>(cp: &Checkpoint<T>) -> Vec<ProblemKind> {
        cp.problems.iter().map(|p| p.kind).collect()
    }

    #[test]
    fn offset_checkpoint_as_kafka_writes_it() {
        let cp = parse_offset_checkpoint(
            b"0\n3\nfoo 0 12\nmy.topic-with-dash 11 0\n__consumer_offsets 49 7\n",
        )
        .unwrap();
        assert_eq!(cp.version, Some(0));
        assert_eq!(cp.declared_count, Some(3));
        assert!(cp.problems.is_empty());
        assert_eq!(cp.offset_of("my.topic-with-dash", 11), Some(0));
        assert_eq!(cp.offset_of("foo", 0), Some(12));
        assert_eq!(cp.offset_of("foo", 1), None);
        assert_eq!(cp.entries[2].line, 5);
    }

    #[test]
    fn empty_file_and_version_only_are_empty_checkpoints() {
        let cp = parse_offset_checkpoint(b"").unwrap();
        assert_eq!(cp.version, None);
        assert!(cp.entries.is_empty() && cp.problems.is_empty());
        let cp = parse_offset_checkpoint(b"0\n").unwrap();
        assert_eq!(kinds(&cp), vec![ProblemKind::MissingCountLine]);
        // Version-only but with a wrong version still fails, as in Kafka.
        let e = parse_offset_checkpoint(b"1\n").unwrap_err();
        assert_eq!(e.kind, ProblemKind::UnsupportedVersion);
    }

    #[test]
    fn line_terminators_like_readline() {
        let cp = parse_leader_epoch_checkpoint(b"0\r\n2\r1 5\n2 9").unwrap();
        assert_eq!(
            cp.entries
                .iter()
                .map(|e| (e.epoch, e.start_offset))
                .collect::<Vec<_>>(),
            vec![(1, 5), (2, 9)]
        );
        assert_eq!(kinds(&cp), vec![ProblemKind::MissingLineTerminator]);
        assert_eq!(cp.problems[0].line, Some(4));
    }

    #[test]
    fn version_and_count_are_not_trimmed() {
        let e = parse_offset_checkpoint(b"0 \n0\n").unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.error.pos),
            (ProblemKind::MalformedLine, Some(1), 0)
        );
        let e = parse_offset_checkpoint(b"0\n 0\n").unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.error.pos),
            (ProblemKind::MalformedLine, Some(2), 2)
        );
        let e = parse_offset_checkpoint(b"0\n-1\n").unwrap_err();
        assert_eq!(e.kind, ProblemKind::NegativeCount);
        let e = parse_offset_checkpoint(b"0\n2147483648\n").unwrap_err();
        assert_eq!(e.kind, ProblemKind::MalformedLine);
        let cp = parse_offset_checkpoint(b"+0\n+0\n").unwrap();
        assert_eq!((cp.version, cp.declared_count), (Some(0), Some(0)));
    }

    #[test]
    fn entry_splitting_follows_java_split() {
        // Trailing whitespace is dropped by Java's split: accepted.
        let cp = parse_offset_checkpoint(b"0\n1\nt 0 5 \t\n").unwrap();
        assert_eq!(cp.offset_of("t", 0), Some(5));
        // Leading whitespace gives an empty first token: wrong count for epochs...
        let e = parse_leader_epoch_checkpoint(b"0\n1\n 1 5\n").unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.error.pos),
            (ProblemKind::MalformedLine, Some(3), 4)
        );
        // ...but three tokens with an empty topic for offsets, which Kafka accepts.
        let cp = parse_offset_checkpoint(b"0\n1\n 0 5\n").unwrap();
        assert_eq!(cp.offset_of("", 0), Some(5));
        assert_eq!(kinds(&cp), vec![ProblemKind::EmptyTopic]);
        // A blank line is malformed.
        let e = parse_offset_checkpoint(b"0\n1\n\n").unwrap_err();
        assert_eq!(e.kind, ProblemKind::MalformedLine);
        // Vertical tab and form feed are separators for Java's \s.
        let cp = parse_offset_checkpoint(b"0\n1\nt\x0b0\x0c5\n").unwrap();
        assert_eq!(cp.offset_of("t", 0), Some(5));
    }

    #[test]
    fn bad_numbers_are_reported_at_the_field() {
        let e = parse_offset_checkpoint(b"0\n1\ntopic x 5\n").unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.error.pos),
            (ProblemKind::BadNumber, Some(3), 10)
        );
        let e = parse_leader_epoch_checkpoint(b"0\n1\n3 99999999999999999999\n").unwrap_err();
        assert_eq!((e.kind, e.error.pos), (ProblemKind::BadNumber, 6));
        let cp = parse_leader_epoch_checkpoint(b"0\n1\n3 -9223372036854775808\n").unwrap();
        assert_eq!(cp.entries[0].start_offset, i64::MIN);
    }

    #[test]
    fn count_mismatch_either_way() {
        let e = parse_offset_checkpoint(b"0\n2\nt 0 1\n").unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.error.pos),
            (ProblemKind::CountMismatch, None, 10)
        );
        let e = parse_offset_checkpoint(b"0\n0\nt 0 1\n").unwrap_err();
        assert_eq!(e.kind, ProblemKind::CountMismatch);
    }

    #[test]
    fn torn_checkpoint_keeps_what_it_can() {
        // Cut in the middle of the third entry.
        let full = b"0\n3\nalpha 0 100\nbeta 1 200\ngamma 2 3";
        let cp = parse_offset_checkpoint_lenient(full);
        assert_eq!(cp.entries.len(), 3);
        assert_eq!(cp.offset_of("gamma", 2), Some(3));
        assert_eq!(kinds(&cp), vec![ProblemKind::MissingLineTerminator]);
        let cut = &full[..full.len() - 4];
        let cp = parse_offset_checkpoint_lenient(cut);
        assert_eq!(cp.entries.len(), 2);
        assert_eq!(
            kinds(&cp),
            vec![
                ProblemKind::MalformedLine,
                ProblemKind::MissingLineTerminator
            ]
        );
        assert!(!cp.kafka_accepts());
        assert_eq!(cp.first_rejection().unwrap().line, Some(5));
        let strict = parse_offset_checkpoint(cut).unwrap_err();
        assert_eq!(strict.line, Some(5));
        assert!(
            strict.to_string().starts_with("line 5, byte 27: "),
            "{strict}"
        );
        // Cut after a whole line: fewer lines than the count says.
        let cp = parse_offset_checkpoint_lenient(&full[..27]);
        assert_eq!(cp.entries.len(), 2);
        assert_eq!(kinds(&cp), vec![ProblemKind::CountMismatch]);
    }

    #[test]
    fn invalid_utf8_and_zero_fill() {
        let cp = parse_offset_checkpoint_lenient(b"0\n2\nt 0 1\nt\xff 1 2\n");
        assert_eq!(cp.entries.len(), 1);
        assert_eq!(cp.problems[0].kind, ProblemKind::InvalidUtf8);
        assert_eq!(cp.problems[0].error.pos, 11);
        let zeros = [0u8; 64];
        let e = parse_offset_checkpoint(&zeros).unwrap_err();
        assert_eq!((e.kind, e.line), (ProblemKind::MalformedLine, Some(1)));
    }

    #[test]
    fn duplicates_last_wins() {
        let cp = parse_offset_checkpoint(b"0\n2\nt 0 1\nt 0 2\n").unwrap();
        assert_eq!(cp.offset_of("t", 0), Some(2));
        assert_eq!(cp.offsets().get(&("t".to_string(), 0)), Some(&2));
        assert_eq!(kinds(&cp), vec![ProblemKind::DuplicateEntry]);
        assert_eq!(cp.problems[0].error.pos, 10);
    }

    #[test]
    fn epoch_cache_rules() {
        let cp = parse_leader_epoch_checkpoint_lenient(b"0\n4\n0 0\n2 10\n1 20\n3 -1\n");
        assert_eq!(cp.entries.len(), 4);
        assert_eq!(
            kinds(&cp),
            vec![
                ProblemKind::NonMonotonicEpochEntry,
                ProblemKind::NegativeEpochEntry
            ]
        );
        // The strict reader only applies the file rules.
        assert!(parse_leader_epoch_checkpoint(b"0\n1\n3 -1\n").is_ok());
    }

    #[test]
    fn never_panics_on_short_garbage() {
        let samples: [&[u8]; 9] = [
            b"\r",
            b"\n\n\n",
            b"0\n1\n\r\n",
            b"-",
            b"+",
            b"0\n0\n \t ",
            b"\xff\xfe",
            b"0\n1\na b c d\n",
            b"0\n1\n\x0b",
        ];
        for s in samples {
            let _ = parse_offset_checkpoint_lenient(s);
            let _ = parse_leader_epoch_checkpoint_lenient(s);
            let _ = parse_clean_shutdown(s);
        }
        // Every prefix of a real file.
        let full = b"0\n2\n0 0\n5 1234\n";
        for n in 0..=full.len() {
            let cp = parse_leader_epoch_checkpoint_lenient(&full[..n]);
            assert!(cp.entries.len() <= 2);
        }
    }

    #[test]
    fn java_numbers() {
        assert_eq!(java_parse_int("-2147483648"), Ok(i32::MIN));
        assert!(java_parse_int("2147483648").is_err());
        assert_eq!(java_parse_long("+7"), Ok(7));
        assert!(java_parse_long("").is_err());
        assert!(java_parse_long("-").is_err());
        assert!(java_parse_long("1_0").is_err());
        assert!(java_parse_long("9223372036854775808").is_err());
    }

    #[test]
    fn clean_shutdown_marker() {
        assert_eq!(parse_clean_shutdown(b""), CleanShutdown::Empty);
        assert_eq!(
            parse_clean_shutdown(br#"{"version":0,"brokerEpoch":4294967342}"#),
            CleanShutdown::Marker {
                version: Some(0),
                broker_epoch: Some(4294967342)
            }
        );
        match parse_clean_shutdown(b"{\"version\":0,\n\"brokerEpoch\":") {
            CleanShutdown::Unreadable(e) => assert!(e.pos > 0 && e.pos <= 27, "{e}"),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// Every kind of line ending, a `\r\n` split between reads, bytes that
    /// are not UTF-8 on either side of a decoder chunk, a torn last line.
    fn samples() -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = vec![
            b"0\n3\nfoo 0 12\nmy.topic 11 0\n__consumer_offsets 49 7\n".to_vec(),
            b"0\r\n2\r1 5\n2 9".to_vec(),
            b"0\n2\nt 0 1\nt\xff 1 2\n".to_vec(),
            b"0\n2\nt 0 1\nt 0 2\n 0 5\n".to_vec(),
            b"0\n4\n0 0\n2 10\n1 20\n3 -1\n".to_vec(),
            vec![0u8; 64],
            b"".to_vec(),
            b"1".to_vec(),
        ];
        for tail in [&b"\xff"[..], b"\r\n\xff", b"\xe2\x82"] {
            let mut d = b"0\n1\n".to_vec();
            for i in 0..9000 {
                d.extend_from_slice(if i % 7 == 0 {
                    b"\r\n"
                } else {
                    "\u{e9}".as_bytes()
                });
            }
            d.extend_from_slice(tail);
            v.push(d);
        }
        v
    }

    #[test]
    fn a_reader_reads_as_the_bytes_do_whatever_its_buffer() {
        for data in samples() {
            let off = parse_offset_checkpoint_lenient(&data);
            let ep = parse_leader_epoch_checkpoint_lenient(&data);
            for cap in [1usize, 2, 3, 7, 8192] {
                let r = std::io::BufReader::with_capacity(cap, data.as_slice());
                let c = read_offset_checkpoint(r, &Limits::NONE).unwrap();
                assert!(
                    (&c.entries, &c.problems, c.kafka_failure)
                        == (&off.entries, &off.problems, off.kafka_failure),
                    "offsets, buffer {cap}"
                );
                let r = std::io::BufReader::with_capacity(cap, data.as_slice());
                let c = read_leader_epoch_checkpoint(r, &Limits::NONE).unwrap();
                assert!(
                    (&c.entries, &c.problems, c.kafka_failure)
                        == (&ep.entries, &ep.problems, ep.kafka_failure),
                    "epochs, buffer {cap}"
                );
            }
            // Streamed, the same items in the same order.
            let mut problems = Vec::new();
            let s = stream_leader_epoch_checkpoint(data.as_slice(), &Limits::NONE, |i| {
                if let Item::Problem(p) = i {
                    problems.push(p);
                }
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(problems, ep.problems);
            assert_eq!(s.entries, ep.entries.len() as u64);
            assert_eq!(s.kafka_accepts(), ep.kafka_accepts());
        }
    }

    #[test]
    fn more_entries_than_the_cap_are_not_read() {
        let limits = Limits {
            max_entries: 3,
            ..Limits::EPOCHS
        };
        let three = b"0\n3\n1 1\n2 2\n3 3\n";
        let cp = read_leader_epoch_checkpoint(&three[..], &limits).unwrap();
        assert_eq!(cp.entries.len(), 3);
        let four = b"0\n4\n1 1\n2 2\n3 3\n4 4\n";
        match read_leader_epoch_checkpoint(&four[..], &limits) {
            Err(ReadError::OverCap(c)) => {
                assert_eq!(
                    c,
                    OverCap::Entries {
                        cap: 3,
                        declared: Some(4),
                        pos: 16
                    }
                );
                assert!(
                    c.to_string().starts_with(
                        "more than 3 entries (its count line says 4), over klf's cap of 3 entries"
                    ),
                    "{c}"
                );
            }
            other => panic!("{other:?}"),
        }
        // Lines that do not parse count too: a file of blank lines stops
        // at the cap, not at its end.
        let blank = b"0\n1\n\n\n\n\n\n";
        assert!(matches!(
            read_offset_checkpoint(&blank[..], &limits),
            Err(ReadError::OverCap(OverCap::Entries {
                declared: Some(1),
                ..
            }))
        ));
        // The count line sizes nothing.
        let cp = read_offset_checkpoint(&b"0\n2147483647\nt 0 1\n"[..], &limits).unwrap();
        assert_eq!(cp.entries.len(), 1);
        assert_eq!(cp.problems[0].kind, ProblemKind::CountMismatch);
    }

    #[test]
    fn a_line_longer_than_the_cap_is_not_read() {
        let limits = Limits {
            max_line: 8,
            ..Limits::OFFSETS
        };
        let ok = b"0\n1\nt 0 1234\n";
        assert!(read_offset_checkpoint(&ok[..], &limits).is_ok());
        let long = b"0\n1\nt 0 123456\n";
        for cap in [1usize, 4, 64] {
            let r = std::io::BufReader::with_capacity(cap, &long[..]);
            match read_offset_checkpoint(r, &limits) {
                Err(ReadError::OverCap(c)) => {
                    assert_eq!(
                        c,
                        OverCap::Line {
                            cap: 8,
                            line: 3,
                            pos: 4
                        }
                    );
                    assert_eq!(c.pos(), 4);
                }
                other => panic!("buffer {cap}: {other:?}"),
            }
        }
        // A zero-filled file with no line end: refused at the cap.
        let zeros = vec![0u8; 100];
        assert!(matches!(
            read_leader_epoch_checkpoint(zeros.as_slice(), &limits),
            Err(ReadError::OverCap(OverCap::Line { line: 1, .. }))
        ));
    }

    #[test]
    fn problems_past_the_cap_are_counted_and_the_one_kafka_fails_on_is_kept() {
        let limits = Limits {
            max_problems: 2,
            ..Limits::OFFSETS
        };
        // Four duplicates (Kafka reads them), then a bad number.
        let data = b"0\n6\nt 0 1\nt 0 2\nt 0 3\nt 0 4\nt 0 5\nt x 6\n";
        let cp = read_offset_checkpoint(&data[..], &limits).unwrap();
        assert_eq!(cp.problems.len(), 3);
        assert_eq!(cp.more_problems, 2);
        assert_eq!(cp.problem_count(), 5);
        let p = cp.first_rejection().unwrap();
        assert_eq!((p.kind, p.line), (ProblemKind::BadNumber, Some(8)));
        assert_eq!(cp.offset_of("t", 0), Some(5));
        let all = parse_offset_checkpoint_lenient(data);
        assert_eq!(all.problem_count(), 5);
        assert_eq!(all.first_rejection(), cp.first_rejection());
    }

    #[test]
    fn offsets_are_looked_up_by_an_index_last_line_winning() {
        let mut text = String::from("0\n2001\n");
        for i in 0..1000 {
            text.push_str(&format!("t{} {} {}\n", i % 10, i, i * 2));
        }
        for i in 0..1000 {
            text.push_str(&format!("u {i} {i}\n"));
        }
        text.push_str("t3 3 77\n");
        let cp = parse_offset_checkpoint_lenient(text.as_bytes());
        assert_eq!(cp.offset_of("t3", 3), Some(77));
        assert_eq!(cp.offset_of("t3", 13), Some(26));
        assert_eq!(cp.offset_of("t4", 3), None);
        assert_eq!(cp.offset_of("u", 999), Some(999));
        assert_eq!(cp.offset_of("", 0), None);
        for e in &cp.entries {
            let scan = cp
                .entries
                .iter()
                .rev()
                .find(|x| x.topic == e.topic && x.partition == e.partition)
                .map(|x| x.offset);
            assert_eq!(cp.offset_of(&e.topic, e.partition), scan);
        }
        // Entries changed after reading: a scan, not a stale index.
        let mut changed = cp.clone();
        changed.entries.truncate(5);
        assert_eq!(changed.offset_of("t3", 3), Some(6));
        assert_eq!(changed.offset_of("u", 1), None);
    }

    #[test]
    fn a_sink_that_fails_stops_the_read() {
        let data = b"0\n3\n1 1\n2 2\n3 3\n";
        let mut seen = 0;
        let r = stream_leader_epoch_checkpoint(&data[..], &Limits::EPOCHS, |_| {
            seen += 1;
            if seen == 2 {
                Err("full")
            } else {
                Ok(())
            }
        });
        assert!(matches!(r, Err(ReadError::Sink("full"))));
        assert_eq!(seen, 2);
    }

    #[test]
    fn kind_names_round_trip() {
        for k in OffsetCheckpointKind::ALL {
            assert_eq!(OffsetCheckpointKind::from_file_name(k.file_name()), Some(k));
        }
        assert_eq!(
            OffsetCheckpointKind::from_file_name(LEADER_EPOCH_CHECKPOINT_FILE),
            None
        );
    }
}
