//! Which Kafka release's kafka-dump-log text to reproduce.
//!
//! kafka-dump-log's output changed between releases (the tool was rewritten
//! from Scala to Java for 4.3, and the transaction-log decoder names states
//! from 4.4). Lines 3.8 to 4.4 are reproduced (3.8 and 3.9 print as 4.0 does,
//! knowing fewer record types and versions: generated from each release's
//! schemas); 2.8 to 3.7 are refused with the reason (an older offsets
//! decoder, and up to 3.3 other batch lines). Every difference
//! klf reproduces is one predicate here, named after what it changes and
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
                } else if (major, minor) >= (2, 8) && (major, minor) < (3, 8) {
                    Err(format!(
                        "Kafka {s}'s kafka-dump-log text is not reproduced yet: its \
                         --offsets-decoder prints the Scala text (offset_commit::group=...) \
                         and unknown::version=N for consumer-protocol records, and up to 3.3 \
                         its batch and record lines differ; known: {}",
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
        assert!(Release::parse("3.7")
            .unwrap_err()
            .contains("not reproduced yet"));
        assert!(Release::parse("4.9")
            .unwrap_err()
            .contains("not a release line"));
        assert!(Release::parse("4")
            .unwrap_err()
            .contains("not a Kafka version"));
        assert!(Release::parse("4.1.1.1").is_err());
        assert!(Release::parse("four").is_err());
        assert_eq!(Release::default(), Release::NEWEST);
        assert_eq!(RELEASES.last(), Some(&Release::NEWEST));
    }
}
