//! Baselines: the findings accepted as known, by code and location.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::model::check::{CheckReport, Location};

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

/// Marks the findings `baseline` accepts; returns how many were accepted.
pub fn apply_baseline(report: &mut CheckReport, baseline: &Baseline) -> u64 {
    let known: BTreeSet<(&str, Location)> = baseline
        .findings
        .iter()
        .map(|e| (e.code.as_str(), e.location.baseline_key()))
        .collect();
    for f in &mut report.findings {
        if known.contains(&(&*f.code, f.location.baseline_key())) {
            f.baselined = true;
        }
    }
    report.recount();
    report.summary.baselined
}
