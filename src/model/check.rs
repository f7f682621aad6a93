//! The plain data of `klf check`: findings with their code, severity,
//! family and location, and the report of a capture (counts, what was
//! checked, each compared partition's reference and loss). The rules that
//! make findings are `analysis::check`; `render::check` writes them.

use std::borrow::Cow;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::diff::ReferenceChoice;

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; normal in a healthy capture.
    Info,
    /// The mark of an unclean shutdown or of an event with consequences;
    /// Kafka copes with it.
    Warning,
    /// Damage, or loss of committed data.
    Error,
}

impl Severity {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Groups of checks (one JUnit test case per replica and family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Files found, checkpoint files readable.
    Capture,
    /// Batch framing, checksums, offsets, segment names, torn tails.
    Segments,
    /// `.index` and `.timeindex` files.
    Indexes,
    /// Leader epochs in batches and `leader-epoch-checkpoint`.
    Epochs,
    /// Log start, high watermark, recovery point, log end.
    Offsets,
    /// The replicas of a partition against each other.
    Replication,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 6] = [
        Family::Capture,
        Family::Segments,
        Family::Indexes,
        Family::Epochs,
        Family::Offsets,
        Family::Replication,
    ];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Capture => "capture",
            Family::Segments => "segments",
            Family::Indexes => "indexes",
            Family::Epochs => "epochs",
            Family::Offsets => "offsets",
            Family::Replication => "replication",
        }
    }
}

/// One entry of the code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// Stable kebab-case code.
    pub code: &'static str,
    /// Severity of every finding with this code.
    pub severity: Severity,
    /// Family.
    pub family: Family,
    /// What the finding means.
    pub meaning: &'static str,
    /// What to do about it.
    pub hint: &'static str,
}

/// Where a finding is. Fields that do not apply are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Location {
    /// Broker (node id), when the finding is about one replica.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker: Option<i32>,
    /// Topic.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub topic: Option<String>,
    /// Partition.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub partition: Option<i32>,
    /// The file, as found under the given paths.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// Byte position in the file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub position: Option<u64>,
    /// Kafka offset concerned.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub offset: Option<i64>,
}

impl Location {
    /// The identity a baseline matches on: every field, with the file reduced
    /// to its name (broker, topic and partition already say where it is, and
    /// the capture may move between runs).
    pub fn baseline_key(&self) -> Location {
        Location {
            file: self.file.as_deref().map(|f| file_name_of(f).to_string()),
            ..self.clone()
        }
    }
}

fn file_name_of(f: &str) -> &str {
    Path::new(f)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(f)
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable code (see `analysis::check::CHECKS`).
    pub code: Cow<'static, str>,
    /// Severity.
    pub severity: Severity,
    /// Family of the check.
    pub family: Family,
    /// Where.
    #[serde(flatten)]
    pub location: Location,
    /// What is wrong, with the numbers.
    pub message: Cow<'static, str>,
    /// What it means and what to do.
    pub hint: Cow<'static, str>,
    /// Accepted by the baseline (set by [`CheckReport::accept`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
}

/// A replica (or partition) the checks ran on; JUnit renders one test case
/// per subject and family.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subject {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Broker; `None` for the partition as a whole (replication checks).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker: Option<i32>,
}

/// Counts over a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Partitions checked (metadata logs included).
    pub partitions: u64,
    /// Replicas checked.
    pub replicas: u64,
    /// Segments read.
    pub segments: u64,
    /// Batches read.
    pub batches: u64,
    /// Bytes of segment data read.
    pub bytes: u64,
    /// Findings by severity (baselined ones included).
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Infos.
    pub infos: u64,
    /// Findings accepted by a baseline.
    pub baselined: u64,
    /// Partitions whose replicas were compared (two or more read).
    #[serde(default)]
    pub partitions_compared: u64,
    /// Of those, partitions that lose data (a loss verdict other than
    /// `nothing-lost`).
    #[serde(default)]
    pub partitions_losing_data: u64,
    /// Replicas the metadata log assigns to the data partitions checked
    /// that are not in the capture (0 without a metadata log: unknown).
    #[serde(default)]
    pub replicas_not_captured: u64,
}

/// Everything `check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// Findings, sorted by location then code.
    pub findings: Vec<Finding>,
    /// Counts.
    pub summary: Summary,
    /// Per partition with two or more replicas: the reference replica and
    /// the loss, as `klf diff` computes them.
    pub partitions: Vec<PartitionCheck>,
    /// What was checked.
    #[serde(skip)]
    pub subjects: Vec<Subject>,
}

/// A partition's reference and loss, as `klf diff` reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionCheck {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The reference replica the cross-replica checks compared against.
    pub reference: ReferenceChoice,
    /// What the partition loses.
    pub loss: LossBrief,
    /// Brokers whose replica could not be read (a `file-unreadable`
    /// finding names the file): left out of the comparison and the loss,
    /// which are the other replicas'.
    #[serde(default)]
    pub left_out: Vec<i32>,
}

/// The figures of a partition's loss (see `klf diff`'s `loss`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossBrief {
    /// Data records lost.
    pub records: u64,
    /// Control records lost.
    pub control_records: u64,
    /// Of the data records, proven committed.
    pub committed_proven: u64,
    /// Possibly committed (upper bound); `null` when it cannot be computed.
    pub committed_possible: Option<u64>,
    /// Neither proven nor bounded.
    pub committed_unknown: u64,
    /// `committed-lost`, `possibly-committed-lost`, `unknown-lost`,
    /// `uncommitted-lost` or `nothing-lost`.
    pub verdict: String,
}

impl CheckReport {
    /// Findings at or above `level` that no baseline accepted.
    pub fn failing(&self, level: Severity) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(move |f| f.severity >= level && !f.baselined)
    }

    /// Marks the findings `baseline` accepts (same code, same location
    /// reduced to the file's name; the message may differ); returns how
    /// many were accepted.
    pub fn accept(&mut self, baseline: &Baseline) -> u64 {
        let known: std::collections::BTreeSet<(&str, Location)> = baseline
            .findings
            .iter()
            .map(|e| (e.code.as_str(), e.location.baseline_key()))
            .collect();
        for f in &mut self.findings {
            if known.contains(&(&*f.code, f.location.baseline_key())) {
                f.baselined = true;
            }
        }
        self.recount();
        self.summary.baselined
    }

    /// Counts the findings by severity again.
    pub fn recount(&mut self) {
        let s = &mut self.summary;
        s.errors = 0;
        s.warnings = 0;
        s.infos = 0;
        s.baselined = 0;
        for f in &self.findings {
            match f.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
            if f.baselined {
                s.baselined += 1;
            }
        }
    }
}

/// A baseline: the findings accepted as known, by code and location.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    /// Format version (1).
    pub version: u32,
    /// Accepted findings.
    pub findings: Vec<BaselineEntry>,
}

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// Code.
    pub code: String,
    /// Location (file reduced to its name).
    #[serde(flatten)]
    pub location: Location,
}

impl Baseline {
    /// The baseline accepting every finding of `report`.
    pub fn from_report(report: &CheckReport) -> Baseline {
        let mut findings: Vec<BaselineEntry> = report
            .findings
            .iter()
            .map(|f| BaselineEntry {
                code: f.code.to_string(),
                location: f.location.baseline_key(),
            })
            .collect();
        findings.sort();
        findings.dedup();
        Baseline {
            version: 1,
            findings,
        }
    }
}

/// What the checks of a segment's indexes keep of each of its batches
/// (read from its `.log`, or from a digest's summaries), in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentBatch {
    /// Byte position of the batch in the `.log`.
    pub position: u64,
    /// Its base offset.
    pub base_offset: i64,
    /// Its last offset.
    pub last_offset: i64,
    /// Whether it is a control batch (a transaction marker).
    pub is_control: bool,
}

/// Which of a segment's two indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// `.index`: offset to position.
    Offset,
    /// `.timeindex`: timestamp to offset.
    Time,
}

impl IndexKind {
    /// The size of one entry.
    pub fn entry_size(self) -> usize {
        match self {
            IndexKind::Offset => crate::format::index::OFFSET_ENTRY_SIZE,
            IndexKind::Time => crate::format::index::TIME_ENTRY_SIZE,
        }
    }

    /// The file's extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            IndexKind::Offset => "index",
            IndexKind::Time => "timeindex",
        }
    }
}

/// One slot of a segment's `.index` or `.timeindex`, as stored (offsets
/// relative to the segment's base offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexEntry {
    /// A `.index` slot.
    Offset {
        /// Offset relative to the segment's base offset.
        relative: i32,
        /// Byte position in the `.log`, signed as stored.
        position: i32,
    },
    /// A `.timeindex` slot.
    Time {
        /// Timestamp (ms).
        timestamp: i64,
        /// Offset relative to the segment's base offset.
        relative: i32,
    },
}

impl IndexEntry {
    /// Whether every byte of the slot is zero.
    pub fn is_zero(self) -> bool {
        match self {
            IndexEntry::Offset { relative, position } => relative == 0 && position == 0,
            IndexEntry::Time {
                timestamp,
                relative,
            } => timestamp == 0 && relative == 0,
        }
    }
}
