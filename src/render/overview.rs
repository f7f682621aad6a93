//! The overview that opens the tables of `klf elect` and `klf impact`: the
//! whole capture in one or two lines (partitions compared, partitions
//! losing data, records lost with their commitment, assigned replicas not
//! captured), and the words every loss is said in, so that the overview,
//! the partitions under it and the ranking of candidates say a loss the
//! same way.

use crate::model::loss::PartitionLoss;

/// `n` and the noun, singular or plural: `1 record`, `2 records`.
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a loss is, in words: how many data records, and how many of them
/// were committed (proven, at most, or not known).
///
/// `possible` is the upper bound (`None` when some records cannot be
/// bounded: `unknown` counts those).
pub fn loss_words(records: u64, proven: u64, possible: Option<u64>, unknown: u64) -> String {
    if records == 0 {
        return "nothing lost".to_string();
    }
    let lost = format!("{} lost", count(records, "record", "records"));
    match possible {
        Some(0) => format!("{lost}, none committed"),
        Some(p) if p == proven && p == records => {
            if records == 1 {
                format!("{lost}, committed")
            } else {
                format!("{lost}, all committed")
            }
        }
        Some(p) if p == proven => format!("{lost}, {proven} of them committed"),
        Some(p) if proven == 0 => format!("{lost}: none proven committed, up to {p} possibly"),
        Some(p) => format!("{lost}: {proven} proven committed, up to {p} possibly"),
        None if proven == 0 && unknown >= records => format!(
            "{lost}; whether {} committed cannot be told",
            if records == 1 { "it was" } else { "any was" }
        ),
        None if proven == 0 => format!(
            "{lost}: none proven committed; for {unknown} of them whether committed cannot be told"
        ),
        None => format!(
            "{lost}: {proven} proven committed; for {unknown} more whether committed cannot be told"
        ),
    }
}

/// [`loss_words`] of a partition's loss.
pub fn partition_loss_words(l: &PartitionLoss) -> String {
    loss_words(
        l.records,
        l.committed_proven,
        l.committed_possible,
        l.committed_unknown,
    )
}

/// Totals over a capture's partitions.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Partitions compared.
    pub compared: usize,
    /// Partitions that lose records.
    pub losing: usize,
    /// Data records lost, over every partition.
    pub records: u64,
    /// Of those, proven committed.
    pub committed_proven: u64,
    /// The upper bound of the committed ones (`None`: some records of some
    /// partition cannot be bounded).
    pub committed_possible: Option<u64>,
    /// Records whose commitment cannot be bounded.
    pub committed_unknown: u64,
    /// Assigned replicas not captured, as `T-P broker B`.
    pub not_captured: Vec<String>,
    /// Partitions whose assignment is unknown (no metadata log that knows
    /// them): whether a replica of theirs is missing cannot be told.
    pub assignment_unknown: usize,
}

impl Overview {
    /// An empty overview.
    pub fn new() -> Overview {
        Overview {
            committed_possible: Some(0),
            ..Overview::default()
        }
    }

    /// Counts one compared partition whose loss is `loss`;
    /// `assignment_known` when a metadata log holds its assignment.
    pub fn add(&mut self, name: &str, loss: &PartitionLoss, assignment_known: bool) {
        self.compared += 1;
        if loss.any() {
            self.losing += 1;
        }
        self.records += loss.records;
        self.committed_proven += loss.committed_proven;
        self.committed_possible = match (self.committed_possible, loss.committed_possible) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self.committed_unknown += loss.committed_unknown;
        if assignment_known {
            self.not_captured.extend(
                loss.replicas_not_captured
                    .iter()
                    .map(|b| format!("{name} broker {b}")),
            );
        } else {
            self.assignment_unknown += 1;
        }
    }

    /// `N partitions compared`.
    pub fn compared_words(&self) -> String {
        format!(
            "{} compared",
            count(self.compared as u64, "partition", "partitions")
        )
    }

    /// The records lost over every partition, in words.
    pub fn loss_words(&self) -> String {
        loss_words(
            self.records,
            self.committed_proven,
            self.committed_possible,
            self.committed_unknown,
        )
    }

    /// Which assigned replicas the capture lacks, or why it cannot tell.
    pub fn not_captured_words(&self) -> String {
        const SHOWN: usize = 3;
        let mut s = match self.not_captured.len() {
            0 if self.assignment_unknown >= self.compared => {
                return "assigned replicas not captured: unknown (no metadata log holds the assignment)"
                    .to_string();
            }
            0 => "every assigned replica captured".to_string(),
            n => {
                let mut s = format!(
                    "{} not captured: {}",
                    count(n as u64, "assigned replica", "assigned replicas"),
                    self.not_captured
                        .iter()
                        .take(SHOWN)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                if n > SHOWN {
                    s.push_str(&format!(" and {} more", n - SHOWN));
                }
                s
            }
        };
        if self.assignment_unknown > 0 {
            s.push_str(&format!(
                " (unknown for {}: no metadata log holds their assignment)",
                count(self.assignment_unknown as u64, "partition", "partitions")
            ));
        }
        s
    }
}

/// The line that stands for the partitions with nothing to report, when
/// they are not listed (`--all` lists them).
pub fn folded(n: usize, what: &str) -> String {
    format!(
        "{}: {what} (--all lists {})",
        count(n as u64, "partition", "partitions"),
        if n == 1 { "it" } else { "them" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_is_said_in_plain_words() {
        assert_eq!(loss_words(0, 0, Some(0), 0), "nothing lost");
        assert_eq!(
            loss_words(16, 0, Some(0), 0),
            "16 records lost, none committed"
        );
        assert_eq!(
            loss_words(20, 20, Some(20), 0),
            "20 records lost, all committed"
        );
        assert_eq!(loss_words(1, 1, Some(1), 0), "1 record lost, committed");
        assert_eq!(
            loss_words(40, 30, Some(30), 0),
            "40 records lost, 30 of them committed"
        );
        assert_eq!(
            loss_words(30, 10, Some(25), 0),
            "30 records lost: 10 proven committed, up to 25 possibly"
        );
        assert_eq!(
            loss_words(16, 0, None, 16),
            "16 records lost; whether any was committed cannot be told"
        );
        assert_eq!(
            loss_words(100, 50, None, 50),
            "100 records lost: 50 proven committed; for 50 more whether committed cannot be told"
        );
        assert_eq!(
            loss_words(40, 0, None, 10),
            "40 records lost: none proven committed; for 10 of them whether committed cannot be told"
        );
        // never the garbled "N whose commitment cannot be bounded possibly committed"
        assert!(!loss_words(300, 0, None, 300).contains("possibly committed"));
    }

    #[test]
    fn folded_partitions_are_one_line() {
        assert_eq!(
            folded(5, "nothing lost"),
            "5 partitions: nothing lost (--all lists them)"
        );
        assert_eq!(
            folded(1, "nothing lost"),
            "1 partition: nothing lost (--all lists it)"
        );
    }
}
