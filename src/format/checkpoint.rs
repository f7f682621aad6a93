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

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

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
    /// Every problem met, in file order. After a strict parse this holds only
    /// problems Kafka accepts ([`ProblemKind::kafka_rejects`] false).
    pub problems: Vec<CheckpointProblem>,
    /// Index in `problems` of the one Kafka fails on first, if any. This is
    /// usually the first rejecting problem in file order, except for bytes
    /// that are not UTF-8: Java decodes the file in chunks of 8192
    /// characters and fails on the whole chunk before handing out its lines.
    pub kafka_failure: Option<usize>,
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

    fn into_strict(mut self) -> Result<Self, CheckpointProblem> {
        if let Some(idx) = self.kafka_failure {
            if idx < self.problems.len() {
                return Err(self.problems.swap_remove(idx));
            }
        }
        Ok(self)
    }

    /// Sorts the problems into file order and works out which one Kafka
    /// meets first.
    fn settle(&mut self, bytes: &[u8]) {
        sort_problems(&mut self.problems);
        let lines = split_lines(bytes);
        // Line number before which the first non-UTF-8 chunk stops Kafka.
        let utf8_stop = self
            .problems
            .iter()
            .filter(|p| p.kind == ProblemKind::InvalidUtf8)
            .map(|p| p.error.pos)
            .min()
            .map(|bad| {
                let chunk_start = utf8_chunk_start(bytes, bad as usize);
                lines
                    .iter()
                    .position(|l| !l.terminated || l.end >= chunk_start)
                    .map(|i| i as u64 + 1)
                    .unwrap_or(u64::MAX)
            });
        let first_bad = self.first_invalid_utf8();
        let key = |p: &CheckpointProblem| -> (u64, u8, u64) {
            match p.kind {
                ProblemKind::InvalidUtf8 if Some(p.error.pos) == first_bad => {
                    (utf8_stop.unwrap_or(u64::MAX), 0, p.error.pos)
                }
                ProblemKind::NegativeEpochEntry => (u64::MAX, 2, p.error.pos),
                _ => (p.line.map(u64::from).unwrap_or(u64::MAX), 1, p.error.pos),
            }
        };
        self.kafka_failure = self
            .problems
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind.kafka_rejects())
            .min_by_key(|(_, p)| key(p))
            .map(|(i, _)| i);
    }

    fn first_invalid_utf8(&self) -> Option<u64> {
        self.problems
            .iter()
            .filter(|p| p.kind == ProblemKind::InvalidUtf8)
            .map(|p| p.error.pos)
            .min()
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
    pub fn offset_of(&self, topic: &str, partition: i32) -> Option<i64> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.partition == partition && e.topic == topic)
            .map(|e| e.offset)
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
    let mut cp = parse_layout(bytes, 3, |tokens, line_no, problems| {
        let (ppos, ptok) = tokens[1];
        let (opos, otok) = tokens[2];
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
        let (tpos, topic) = tokens[0];
        if topic.is_empty() {
            problems.push(CheckpointProblem::new(
                Some(line_no),
                ProblemKind::EmptyTopic,
                tpos,
                "entry starts with whitespace: Kafka reads an empty topic name",
            ));
        }
        Some(OffsetEntry {
            topic: topic.to_owned(),
            partition,
            offset,
            line: line_no,
        })
    });
    // Duplicates: Kafka's map keeps the last line.
    let mut seen: BTreeMap<(&str, i32), u32> = BTreeMap::new();
    let mut dups = Vec::new();
    for e in &cp.entries {
        if let Some(prev) = seen.insert((e.topic.as_str(), e.partition), e.line) {
            dups.push(CheckpointProblem::new(
                Some(e.line),
                ProblemKind::DuplicateEntry,
                0,
                format!(
                    "{}-{} already listed on line {prev}; Kafka keeps this later value",
                    clip(&e.topic),
                    e.partition
                ),
            ));
        }
    }
    if !dups.is_empty() {
        // Fill in byte positions from the line table.
        let starts = line_starts(bytes);
        for d in &mut dups {
            if let Some(l) = d.line {
                d.error.pos = starts
                    .get((l as usize).saturating_sub(1))
                    .copied()
                    .unwrap_or(0);
            }
        }
        cp.problems.extend(dups);
    }
    cp.settle(bytes);
    cp
}

/// Parses a `leader-epoch-checkpoint` exactly as Kafka's checkpoint reader
/// does; the entries are not checked against the rules of Kafka's epoch cache
/// (see [`epoch_cache_problems`]).
pub fn parse_leader_epoch_checkpoint(
    bytes: &[u8],
) -> Result<Checkpoint<EpochEntry>, CheckpointProblem> {
    let mut cp = parse_leader_epoch_layout(bytes);
    cp.settle(bytes);
    cp.into_strict()
}

/// Parses a `leader-epoch-checkpoint`, keeping every entry that could be read
/// and recording every problem, including those of [`epoch_cache_problems`].
pub fn parse_leader_epoch_checkpoint_lenient(bytes: &[u8]) -> Checkpoint<EpochEntry> {
    let mut cp = parse_leader_epoch_layout(bytes);
    let extra = epoch_cache_problems(&cp.entries, &line_starts(bytes));
    cp.problems.extend(extra);
    cp.settle(bytes);
    cp
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
    let mut out = Vec::new();
    let mut prev: Option<&EpochEntry> = None;
    for e in entries {
        if e.epoch < 0 || e.start_offset < 0 {
            out.push(CheckpointProblem::new(
                Some(e.line),
                ProblemKind::NegativeEpochEntry,
                pos_of(e.line),
                format!(
                    "epoch {} start offset {}: Kafka's leader epoch cache refuses negative values and fails to load",
                    e.epoch, e.start_offset
                ),
            ));
            // Kafka throws here; later entries are not compared with this one.
            continue;
        }
        if let Some(p) = prev {
            if e.epoch <= p.epoch || e.start_offset <= p.start_offset {
                out.push(CheckpointProblem::new(
                    Some(e.line),
                    ProblemKind::NonMonotonicEpochEntry,
                    pos_of(e.line),
                    format!(
                        "epoch {} at offset {} does not follow epoch {} at offset {} (line {}); \
                         Kafka's cache drops the earlier entries it conflicts with",
                        e.epoch, e.start_offset, p.epoch, p.start_offset, p.line
                    ),
                ));
            }
        }
        prev = Some(e);
    }
    out
}

/// Byte position of the start of each line, as Kafka's line reader splits
/// them (`\n`, `\r` or `\r\n`). Index 0 is line 1.
pub fn line_starts(bytes: &[u8]) -> Vec<u64> {
    split_lines(bytes).iter().map(|l| l.start as u64).collect()
}

fn parse_leader_epoch_layout(bytes: &[u8]) -> Checkpoint<EpochEntry> {
    parse_layout(bytes, 2, |tokens, line_no, problems| {
        let (epos, etok) = tokens[0];
        let (opos, otok) = tokens[1];
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
        Some(EpochEntry {
            epoch,
            start_offset,
            line: line_no,
        })
    })
}

/// One line of the file: byte range of its content and whether a terminator followed.
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    terminated: bool,
}

/// Splits like `BufferedReader.readLine`: `\n`, `\r`, `\r\n` end a line; the
/// text after the last terminator is a line when non-empty.
fn split_lines(bytes: &[u8]) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b == b'\n' || b == b'\r' {
            out.push(Line {
                start,
                end: i,
                terminated: true,
            });
            i += 1;
            if b == b'\r' && bytes.get(i) == Some(&b'\n') {
                i += 1;
            }
            start = i;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        out.push(Line {
            start,
            end: bytes.len(),
            terminated: false,
        });
    }
    out
}

/// Shared driver: version line, count line, entry lines of `fields` tokens.
fn parse_layout<T>(
    bytes: &[u8],
    fields: usize,
    mut entry: impl FnMut(&[(u64, &str)], u32, &mut Vec<CheckpointProblem>) -> Option<T>,
) -> Checkpoint<T> {
    let lines = split_lines(bytes);
    let mut cp = Checkpoint {
        version: None,
        declared_count: None,
        entries: Vec::new(),
        problems: Vec::new(),
        kafka_failure: None,
    };
    let mut entry_lines = 0usize;
    let mut count_line_ok = false;
    for (idx, line) in lines.iter().enumerate() {
        let line_no = u32::try_from(idx + 1).unwrap_or(u32::MAX);
        let raw = bytes.get(line.start..line.end).unwrap_or(&[]);
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(e) => {
                cp.problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::InvalidUtf8,
                    (line.start + e.valid_up_to()) as u64,
                    "bytes that are not UTF-8; Kafka's reader fails with MalformedInputException",
                ));
                if idx >= 2 {
                    entry_lines += 1;
                }
                continue;
            }
        };
        let pos = line.start as u64;
        match idx {
            0 => match java_parse_int(text) {
                Ok(v) => {
                    cp.version = Some(v);
                    if v != CHECKPOINT_VERSION {
                        cp.problems.push(CheckpointProblem::new(
                            Some(line_no),
                            ProblemKind::UnsupportedVersion,
                            pos,
                            format!("unrecognised version {v}, expected {CHECKPOINT_VERSION}"),
                        ));
                    }
                }
                Err(why) => cp.problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::MalformedLine,
                    pos,
                    format!("version line {:?} is not an integer ({why})", clip(text)),
                )),
            },
            1 => match java_parse_int(text) {
                Ok(v) => {
                    cp.declared_count = Some(v);
                    if v < 0 {
                        cp.problems.push(CheckpointProblem::new(
                            Some(line_no),
                            ProblemKind::NegativeCount,
                            pos,
                            format!("negative entry count {v}"),
                        ));
                    } else {
                        count_line_ok = true;
                    }
                }
                Err(why) => cp.problems.push(CheckpointProblem::new(
                    Some(line_no),
                    ProblemKind::MalformedLine,
                    pos,
                    format!("count line {:?} is not an integer ({why})", clip(text)),
                )),
            },
            _ => {
                entry_lines += 1;
                let tokens = java_ws_split(text, pos);
                if tokens.len() != fields {
                    cp.problems.push(CheckpointProblem::new(
                        Some(line_no),
                        ProblemKind::MalformedLine,
                        pos,
                        format!(
                            "malformed entry {:?}: {} whitespace-separated fields, expected {fields}",
                            clip(text),
                            tokens.len()
                        ),
                    ));
                    continue;
                }
                if let Some(e) = entry(&tokens, line_no, &mut cp.problems) {
                    cp.entries.push(e);
                }
            }
        }
    }
    if lines.len() == 1 && cp.version.is_some() {
        cp.problems.push(CheckpointProblem::new(
            Some(2),
            ProblemKind::MissingCountLine,
            bytes.len() as u64,
            "no count line after the version: Kafka reads an empty checkpoint, its writer never leaves this",
        ));
    }
    if let Some(last) = lines.last() {
        if !last.terminated {
            cp.problems.push(CheckpointProblem::new(
                u32::try_from(lines.len()).ok(),
                ProblemKind::MissingLineTerminator,
                bytes.len() as u64,
                "last line has no line terminator: the file looks cut short",
            ));
        }
    }
    if count_line_ok {
        if let Some(expected) = cp.declared_count {
            // Kafka counts the entries it parsed; a line it fails on stops it
            // earlier, so the mismatch only matters once every line parsed.
            // Here we compare the lines present with the count.
            if entry_lines != expected as usize {
                cp.problems.push(CheckpointProblem::new(
                    None,
                    ProblemKind::CountMismatch,
                    bytes.len() as u64,
                    format!("count line says {expected} entries, the file has {entry_lines} entry lines"),
                ));
            }
        }
    }
    sort_problems(&mut cp.problems);
    cp
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

/// File order: by line (whole-file problems last), then by position.
fn sort_problems(problems: &mut [CheckpointProblem]) {
    problems.sort_by_key(|p| (p.line.unwrap_or(u32::MAX), p.error.pos));
}

/// Java's `Pattern.compile("\\s+").split(line)`: returns each token with its
/// byte position in the file. A leading separator yields an empty first token;
/// trailing empty tokens are dropped.
fn java_ws_split(line: &str, base: u64) -> Vec<(u64, &str)> {
    // Java's \s without UNICODE_CHARACTER_CLASS: [ \t\n\x0B\f\r].
    let is_ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let bytes = line.as_bytes();
    let mut tokens: Vec<(u64, &str)> = Vec::new();
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
            tokens.push((base + start as u64, line.get(start..ws_start).unwrap_or("")));
            start = i;
        } else {
            i += 1;
        }
    }
    if !matched {
        return vec![(base, line)];
    }
    tokens.push((base + start as u64, line.get(start..).unwrap_or("")));
    while tokens.last().is_some_and(|t| t.1.is_empty()) {
        tokens.pop();
    }
    tokens
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
