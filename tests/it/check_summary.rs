//! `klf check`'s table summarises: errors first, at most three findings of
//! one code in one partition (then how many more), `--max-findings`; the
//! JSON keeps every finding; the file column is a path `klf dump` takes.

use serde_json::Value;

use crate::common::{kafka, klf, text};

#[test]
fn the_table_groups_a_code_per_partition_and_json_keeps_all() {
    let cap = kafka("torn-write");
    let p = cap.to_str().unwrap();
    let doc: Value =
        serde_json::from_slice(&klf(&["check", "--format", "json", p]).stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    // the biggest group of one code in one partition
    let mut groups: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for f in findings {
        let part = format!("{}-{}", f["topic"].as_str().unwrap_or(""), f["partition"]);
        *groups
            .entry((f["code"].as_str().unwrap().to_string(), part))
            .or_default() += 1;
    }
    let ((code, part), n) = groups.iter().max_by_key(|(_, n)| **n).unwrap();
    assert!(
        *n > 3,
        "the capture has a code found more than 3 times in one partition"
    );
    let table = text(&klf(&["check", p]).stdout);
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(&format!("┆ {code} ")) && l.contains(&format!("┆ {part} ")))
        .collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(
        rows[2].contains(&format!("(and {} more like this in {part})", n - 3)),
        "{table}"
    );
    // errors and warnings before infos
    let sev: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("│ "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|s| ["error", "warning", "info"].contains(s))
        .collect();
    let rank = |s: &str| {
        ["error", "warning", "info"]
            .iter()
            .position(|x| *x == s)
            .unwrap()
    };
    assert!(sev.windows(2).all(|w| rank(w[0]) <= rank(w[1])), "{sev:?}");
    // the file column holds the path as found, which klf dump accepts
    let file = findings
        .iter()
        .find_map(|f| f["file"].as_str().filter(|f| f.ends_with(".log")))
        .unwrap();
    assert!(table.contains(file), "{table}");
    assert_eq!(
        klf(&["dump", "--format", "json", file]).status.code(),
        Some(0)
    );
    // --max-findings: that many rows, and the rest counted
    let two = text(&klf(&["check", "--max-findings", "2", p]).stdout);
    let rows = two
        .lines()
        .filter(|l| l.starts_with("│ ") && !l.starts_with("│ severity"))
        .count();
    assert_eq!(rows, 2, "{two}");
    assert!(
        two.contains("more findings not shown (--max-findings N shows more"),
        "{two}"
    );
    // the exit status and JSON do not depend on it
    let all = klf(&["check", "--format", "json", "--max-findings", "2", p]);
    let doc2: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(doc2["findings"].as_array().unwrap().len(), findings.len());
}
