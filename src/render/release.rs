//! Which Kafka release's kafka-dump-log text to reproduce.
//!
//! kafka-dump-log's output changed between releases: its batch and record
//! lines up to 3.3, the Scala group coordinator's `--offsets-decoder` text
//! up to 3.7, the Scala transaction-log text up to 4.0, the Java rewrite of
//! the tool in 4.3, the state names of 4.4. Lines 2.8 to 4.4 are reproduced;
//! what each line knows of the metadata, group and transaction records
//! (record types, versions, tagged fields, field names and layouts) is
//! generated from that release's own schemas. Every other difference klf
//! reproduces is one predicate here, named after what it changes and
//! checked against that release's own tool by the per-release golden files
//! (`testdata/kafka/*/golden-X.Y/`).

use std::fmt;

/// A Kafka release line, `major.minor` (patch releases do not change the
/// text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    /// Major version.
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

/// Every release line `--kafka-version` accepts, oldest first.
pub const RELEASES: &[Release] = &[
    Release::new(2, 8),
    Release::new(3, 0),
    Release::new(3, 1),
    Release::new(3, 2),
    Release::new(3, 3),
    Release::new(3, 4),
    Release::new(3, 5),
    Release::new(3, 6),
    Release::new(3, 7),
    Release::new(3, 8),
    Release::new(3, 9),
    Release::new(4, 0),
    Release::new(4, 1),
    Release::new(4, 2),
    Release::new(4, 3),
    Release::new(4, 4),
];

impl Release {
    /// `major.minor`.
    pub const fn new(major: u8, minor: u8) -> Release {
        Release { major, minor }
    }

    /// The newest release line klf knows: the default.
    pub const NEWEST: Release = Release::new(4, 4);

    /// Parses `X.Y` or `X.Y.Z` (the patch is ignored); only lines in
    /// [`RELEASES`] are accepted.
    pub fn parse(s: &str) -> Result<Release, String> {
        let known = || {
            RELEASES
                .iter()
                .map(Release::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = s.trim().split('.');
        let major = parts.next().and_then(|p| p.parse::<u8>().ok());
        let minor = parts.next().and_then(|p| p.parse::<u8>().ok());
        let patch_ok = parts.next().is_none_or(|p| p.parse::<u16>().is_ok());
        let extra = parts.next().is_some();
        match (major, minor) {
            (Some(major), Some(minor)) if patch_ok && !extra => {
                let r = Release::new(major, minor);
                if RELEASES.contains(&r) {
                    Ok(r)
                } else if (major, minor) < (2, 8) {
                    Err(format!(
                        "Kafka {s} is older than the lines klf reproduces (2.8 on: before it, \
                         kafka-dump-log's text is not checked against the release's own tool \
                         here); known: {}",
                        known()
                    ))
                } else {
                    Err(format!(
                        "Kafka {s} is not a release line klf reproduces (known: {})",
                        known()
                    ))
                }
            }
            _ => Err(format!(
                "'{s}' is not a Kafka version (X.Y or X.Y.Z; known: {})",
                known()
            )),
        }
    }

    /// kafka-dump-log is the Java rewrite (`org.apache.kafka.tools`, from
    /// 4.3; 4.2 still runs the Scala tool in `kafka.tools`): the
    /// non-consecutive offsets of a deep dump start from -1 (a segment whose
    /// first offset is not 0 reports `-1 is followed by N`), and the
    /// per-file findings are kept in sorted maps (index mismatches newest
    /// first, one per index offset; offset gaps by offset).
    pub fn java_tool(self) -> bool {
        self >= Release::new(4, 3)
    }

    /// Record lines of message format v0/v1 close the metadata with a stray
    /// `}` after `crc: N` (the Scala tool's string template).
    pub fn legacy_crc_brace(self) -> bool {
        !self.java_tool()
    }

    /// A producer-snapshot entry without batch metadata ends with a space
    /// after `lastTimestamp: N`.
    pub fn snapshot_trailing_space(self) -> bool {
        !self.java_tool()
    }

    /// A segment's dump starts `Log starting offset: N` (3.3 on) rather than
    /// `Starting offset: N`.
    pub fn log_start_label(self) -> &'static str {
        if self >= Release::new(3, 3) {
            "Log starting offset: "
        } else {
            "Starting offset: "
        }
    }

    /// A v2 batch line has `deleteHorizonMs` (3.2 on).
    pub fn batch_delete_horizon(self) -> bool {
        self >= Release::new(3, 2)
    }

    /// Compression is printed as the Java enum constant (`NONE`, up to
    /// 2.8) rather than its name (`none`).
    pub fn codec_constants(self) -> bool {
        self < Release::new(3, 0)
    }

    /// 2.8's record line: every record repeats its batch's fields
    /// (`offset: N isValid: B crc: C keySize: … baseOffset: … batchSize: …
    /// compressType: … position: …`) before the v2 sequence and headers or
    /// the v0/v1 `crc: C isvalid: B`.
    pub fn record_line_with_batch(self) -> bool {
        self < Release::new(3, 0)
    }

    /// KRaft snapshots (`.checkpoint`) are dumped (3.3 on; before, the tool
    /// ignores the file as unknown).
    pub fn dumps_kraft_snapshots(self) -> bool {
        self >= Release::new(3, 3)
    }

    /// kafka-dump-log has `--max-bytes` (3.3 on).
    pub fn has_max_bytes(self) -> bool {
        self >= Release::new(3, 3)
    }

    /// The name this release's `ControlRecordType` gives a control record
    /// type id, and whether its kafka-dump-log decodes such a record (else
    /// it prints `controlType: NAME(id)`). Up to 2.8 types 2 and 3 were
    /// `QUORUM_REASSIGNMENT` and `LEADER_CHANGE`; the snapshot header and
    /// footer are decoded from 3.3, the KRaft version and voters records
    /// (types 5 and 6, unknown before) from 3.8, a leader change from 4.1.
    pub fn control_type(self, id: i16) -> (&'static str, bool) {
        use crate::format::record::control::ControlType;
        if self < Release::new(3, 0) {
            return match id {
                0 => ("ABORT", true),
                1 => ("COMMIT", true),
                2 => ("QUORUM_REASSIGNMENT", false),
                3 => ("LEADER_CHANGE", false),
                _ => ("UNKNOWN", false),
            };
        }
        let ty = ControlType::from_id(id);
        let decoded = match ty {
            ControlType::Abort | ControlType::Commit => true,
            ControlType::LeaderChange => self.leader_change_decoded(),
            ControlType::SnapshotHeader | ControlType::SnapshotFooter => self >= Release::new(3, 3),
            ControlType::KRaftVersion | ControlType::KRaftVoters => {
                if self < Release::new(3, 8) {
                    return ("UNKNOWN", false);
                }
                true
            }
            ControlType::Unknown => false,
        };
        (ty.name(), decoded)
    }

    /// A producer-snapshot entry prints `currentTxnFirstOffset` as a Scala
    /// `Option` (`None`, `Some(5)`; before 3.5, when the producer state
    /// moved to Java) rather than an `OptionalLong`.
    pub fn snapshot_scala_option(self) -> bool {
        self < Release::new(3, 5)
    }

    /// A producer-snapshot entry prints `lastTimestamp` (3.1 on).
    pub fn snapshot_last_timestamp(self) -> bool {
        self >= Release::new(3, 1)
    }

    /// A KRaft `LeaderChange` control record is decoded
    /// (`LeaderChange: {...}`, 4.1 on) rather than named
    /// (`controlType: LEADER_CHANGE(2)`).
    pub fn leader_change_decoded(self) -> bool {
        self >= Release::new(4, 1)
    }

    /// `--transaction-log-decoder` prints the Scala coordinator's text
    /// (`transaction_metadata::transactionalId=...`, before 4.1) rather than
    /// the records as JSON.
    pub fn scala_transaction_text(self) -> bool {
        self < Release::new(4, 1)
    }

    /// `--offsets-decoder` prints the Scala group coordinator's text
    /// (`offset_commit::group=G,partition=T-P`, `group_metadata::...`,
    /// before 3.8) rather than the records as JSON.
    pub fn scala_offsets_text(self) -> bool {
        self < Release::new(3, 8)
    }

    /// The Scala offsets and transaction-log decoders stop the tool on a
    /// key version they do not know (before 3.4) rather than print
    /// `unknown::version=N`.
    pub fn scala_unknown_key_aborts(self) -> bool {
        self < Release::new(3, 4)
    }

    /// `--remote-log-metadata-decoder` prints a segment's `txnIdxEmpty`
    /// (4.0 on).
    pub fn remote_txn_idx_empty(self) -> bool {
        self >= Release::new(4, 0)
    }

    /// kafka-dump-log has `--remote-log-metadata-decoder` (3.9 on; before,
    /// the option is refused as unknown).
    pub fn has_remote_log_metadata_decoder(self) -> bool {
        self >= Release::new(3, 9)
    }

    /// kafka-dump-log has `--share-group-state-decoder` (4.0 on; before,
    /// the option is refused as unknown).
    pub fn has_share_group_state_decoder(self) -> bool {
        self >= Release::new(4, 0)
    }

    /// `--transaction-log-decoder` prints `transactionStatus` as the state's
    /// name (`"Empty"`, `"Ongoing"` …) rather than its number (4.4 on).
    pub fn transaction_status_names(self) -> bool {
        self >= Release::new(4, 4)
    }
}

/// `--kafka-version`: a release line, or `auto` (each file's from the
/// `metadata.version` of its log directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KafkaVersion {
    /// A release line.
    Line(Release),
    /// From the capture's `metadata.version` ([`Release::for_metadata_version`]).
    Auto,
}

impl KafkaVersion {
    /// `auto`, or what [`Release::parse`] accepts.
    pub fn parse(s: &str) -> Result<KafkaVersion, String> {
        if s.trim() == "auto" {
            return Ok(KafkaVersion::Auto);
        }
        Release::parse(s).map(KafkaVersion::Line)
    }
}

impl Release {
    /// The release line whose text `--kafka-version auto` picks for a
    /// cluster at `metadata.version` `version` (`4.1-IV1`): the line of that
    /// version, the oldest release that can have written it (a cluster is
    /// at most at its software's version, and stays at a lower one until
    /// the operator raises it), the newest klf knows for a version past it.
    /// `None` for a name that is not `X.Y-IVn`.
    pub fn for_metadata_version(version: &str) -> Option<Release> {
        let (line, _) = version.split_once("-IV")?;
        let (major, minor) = line.split_once('.')?;
        let r = Release::new(major.parse().ok()?, minor.parse().ok()?);
        Some(if r > Release::NEWEST {
            Release::NEWEST
        } else if r < RELEASES[0] {
            RELEASES[0]
        } else if RELEASES.contains(&r) {
            r
        } else {
            // a line klf skips: the newest one before it
            RELEASES
                .iter()
                .rev()
                .find(|l| **l < r)
                .copied()
                .unwrap_or(RELEASES[0])
        })
    }
}

impl Default for Release {
    fn default() -> Self {
        Release::NEWEST
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_patch_versions() {
        assert_eq!(Release::parse("4.1"), Ok(Release::new(4, 1)));
        assert_eq!(Release::parse("4.1.1"), Ok(Release::new(4, 1)));
        assert_eq!(Release::parse("4.0.2"), Ok(Release::new(4, 0)));
        assert_eq!(Release::parse("3.9.2"), Ok(Release::new(3, 9)));
        assert_eq!(Release::parse("3.7.2"), Ok(Release::new(3, 7)));
        assert_eq!(Release::parse("2.8"), Ok(Release::new(2, 8)));
        assert!(Release::parse("2.7").unwrap_err().contains("older than"));
        assert!(Release::parse("4.9")
            .unwrap_err()
            .contains("not a release line"));
        assert!(Release::parse("4")
            .unwrap_err()
            .contains("not a Kafka version"));
        assert!(Release::parse("4.1.1.1").is_err());
        assert!(Release::parse("four").is_err());
        assert_eq!(Release::default(), Release::NEWEST);
        assert_eq!(KafkaVersion::parse("auto"), Ok(KafkaVersion::Auto));
        assert_eq!(
            KafkaVersion::parse("3.9.2"),
            Ok(KafkaVersion::Line(Release::new(3, 9)))
        );
        assert_eq!(
            Release::for_metadata_version("4.1-IV1"),
            Some(Release::new(4, 1))
        );
        assert_eq!(
            Release::for_metadata_version("3.0-IV1"),
            Some(Release::new(3, 0))
        );
        assert_eq!(
            Release::for_metadata_version("4.5-IV0"),
            Some(Release::NEWEST)
        );
        assert_eq!(Release::for_metadata_version("latest"), None);
        assert_eq!(RELEASES.last(), Some(&Release::NEWEST));
    }
}
