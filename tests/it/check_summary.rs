//! `klf check`'s table: the overview of the capture first, errors before
//! warnings before infos, a code with many findings folded into one row
//! counting them, `--max-findings` (0 shows none), `--topic` and
//! `--partition`, baseline counts that agree, words in the plural only
//! where the number is not 1. The JSON keeps every finding; the file
//! column is a path `klf dump` takes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::common::{kafka, klf, scratch, text};

fn json(args: &[&str]) -> Value {
    let mut a = vec!["check", "--format", "json"];
    a.extend_from_slice(args);
    serde_json::from_slice(&klf(&a).stdout).unwrap()
}

/// The table's rows (piped: one table line per row) as (severity, code,
/// message), the separators dropped.
fn rows(table: &str) -> Vec<(String, String, String)> {
    table
        .lines()
        .filter_map(|l| l.strip_prefix("│ "))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_end_matches('│')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect();
            (
                cells[0].clone(),
                cells[1].clone(),
                cells.last().cloned().unwrap_or_default(),
            )
        })
        .filter(|(s, _, _)| s != "severity")
        .collect()
}

fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[test]
fn a_code_found_in_many_files_is_one_row_and_json_keeps_every_finding() {
    let cap = kafka("coordinators-4.4");
    let p = cap.to_str().unwrap();
    let doc = json(&[p]);
    let findings = doc["findings"].as_array().unwrap();
    let mut by_code: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for f in findings {
        by_code
            .entry(f["code"].as_str().unwrap())
            .or_default()
            .push(f);
    }
    let pre = &by_code["index-preallocated"];
    assert!(pre.len() > 3, "{}", pre.len());
    let files: BTreeSet<&str> = pre.iter().filter_map(|f| f["file"].as_str()).collect();
    let parts: BTreeSet<String> = pre
        .iter()
        .map(|f| format!("{}-{}", f["topic"].as_str().unwrap(), f["partition"]))
        .collect();
    let brokers: BTreeSet<i64> = pre.iter().filter_map(|f| f["broker"].as_i64()).collect();
    assert_eq!(files.len(), pre.len(), "one finding per index file");
    let named: Vec<&str> = parts.iter().take(3).map(String::as_str).collect();
    let list: Vec<String> = brokers.iter().map(i64::to_string).collect();
    let expected = format!(
        "{} files in {} partitions ({} and {} more) on brokers {}",
        pre.len(),
        parts.len(),
        named.join(", "),
        parts.len() - 3,
        list.join(", ")
    );
    let table = text(&klf(&["check", p]).stdout);
    let rows = rows(&table);
    let folded: Vec<_> = rows
        .iter()
        .filter(|(_, c, _)| c == "index-preallocated")
        .collect();
    assert_eq!(folded.len(), 1, "{table}");
    assert_eq!(folded[0].2, expected, "{table}");
    // a code with three findings or fewer has a row each; every row is
    // one code's fold or one finding: together they are every finding
    let mut stood_for = 0;
    for (code, fs) in &by_code {
        let n = rows.iter().filter(|(_, c, _)| c == code).count();
        if fs.len() <= 3 {
            assert_eq!(n, fs.len(), "{code}: {table}");
        } else {
            assert_eq!(n, 1, "{code}: {table}");
        }
        stood_for += fs.len();
    }
    assert_eq!(stood_for, findings.len());
    assert!(
        !table.contains("not shown"),
        "a pipe gets every row: {table}"
    );
    // JSON Lines and JUnit list every finding too
    let lines = text(&klf(&["check", "--format", "jsonl", p]).stdout);
    assert_eq!(
        lines.matches(r#"{"type":"finding""#).count(),
        findings.len()
    );
    let junit = text(&klf(&["check", "--format", "junit", p]).stdout);
    assert_eq!(
        junit.matches("[info] index-preallocated: ").count(),
        pre.len()
    );
}

#[test]
fn the_table_opens_with_the_capture_and_lists_errors_then_warnings_then_infos() {
    let cap = kafka("unclean-stale-hw");
    let p = cap.to_str().unwrap();
    let doc = json(&[p]);
    let s = &doc["summary"];
    let n = |k: &str| s[k].as_u64().unwrap() as usize;
    let losing = doc["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["loss"]["verdict"] != "nothing-lost")
        .count();
    assert!(losing > 0);
    assert_eq!(n("partitions_losing_data"), losing);
    assert_eq!(
        n("partitions_compared"),
        doc["partitions"].as_array().unwrap().len()
    );
    assert_eq!(n("replicas_not_captured"), 0);
    let table = text(&klf(&["check", p]).stdout);
    let mut lines = table.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "{} ({}) checked: {}, {}, {}.",
            counted(n("partitions"), "partition", "partitions"),
            counted(n("replicas"), "replica", "replicas"),
            counted(n("errors"), "error", "errors"),
            counted(n("warnings"), "warning", "warnings"),
            counted(n("infos"), "info", "infos"),
        )
    );
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "{} compared, {losing} losing data.",
            n("partitions_compared")
        )
    );
    assert!(lines.next().unwrap().starts_with('┌'), "{table}");
    let rank = |s: &str| ["error", "warning", "info"].iter().position(|x| *x == s);
    let sev: Vec<usize> = rows(&table).iter().filter_map(|r| rank(&r.0)).collect();
    assert!(sev.windows(2).all(|w| w[0] <= w[1]), "{table}");
    assert_eq!(sev.iter().filter(|&&r| r == 0).count(), n("errors"));

    // a healthy capture says so in one sentence
    let healthy = text(&klf(&["check", kafka("codecs").to_str().unwrap()]).stdout);
    let first = healthy.lines().next().unwrap();
    assert!(
        first.starts_with("Healthy: 6 partitions (18 replicas) checked, 5 compared: nothing lost, no error or warning (")
            && first.ends_with(" infos below)."),
        "{healthy}"
    );
}

#[test]
fn replicas_not_captured_are_counted_and_named_even_where_nothing_is_compared() {
    let cap = kafka("unclean");
    // two of the three brokers: the partition is compared, broker 2 missing
    let two = json(&[
        cap.join("broker-1").to_str().unwrap(),
        cap.join("broker-3").to_str().unwrap(),
    ]);
    assert_eq!(two["summary"]["replicas_not_captured"], 1);
    assert_eq!(two["summary"]["partitions_compared"], 1);
    let missing: Vec<&Value> = two["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "replica-not-captured")
        .collect();
    assert_eq!(missing.len(), 1, "{two}");
    // one broker: nothing is compared, and the two missing replicas are
    // still said (a finding, the summary, the overview)
    let one = cap.join("broker-3");
    let one = one.to_str().unwrap();
    let doc = json(&[one]);
    assert_eq!(doc["summary"]["replicas_not_captured"], 2);
    assert_eq!(doc["summary"]["partitions_compared"], 0);
    let f: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "replica-not-captured")
        .collect();
    assert_eq!(f.len(), 1, "{doc}");
    assert!(
        f[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("assigned replicas not in the capture (metadata log): brokers 1, 2;"),
        "{}",
        f[0]
    );
    let table = text(&klf(&["check", one]).stdout);
    assert_eq!(
        table.lines().nth(1).unwrap(),
        "No partition has two replicas read: nothing compared, no loss computed; 2 replicas assigned but not captured.",
        "{table}"
    );
}

#[test]
fn max_findings_counts_rows_and_zero_shows_none() {
    let cap = kafka("torn-write");
    let p = cap.to_str().unwrap();
    let total = json(&[p])["findings"].as_array().unwrap().len();
    let none = text(&klf(&["check", "--max-findings", "0", p]).stdout);
    assert!(rows(&none).is_empty(), "{none}");
    assert!(!none.contains('┌'), "{none}");
    assert!(
        none.contains(&format!(
            "{total} more findings not shown (--max-findings N shows more"
        )),
        "{none}"
    );
    assert!(none.trim_end().ends_with("; PASS"), "{none}");
    let two = text(&klf(&["check", "--max-findings", "2", p]).stdout);
    let shown = rows(&two);
    assert_eq!(shown.len(), 2, "{two}");
    assert!(two.contains("more findings not shown"), "{two}");
    // the exit status and JSON do not depend on it
    let all = klf(&["check", "--format", "json", "--max-findings", "0", p]);
    let doc: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(doc["findings"].as_array().unwrap().len(), total);
    // the file column holds the path as found, which klf dump accepts
    let unclean = kafka("unclean");
    let table = text(&klf(&["check", unclean.to_str().unwrap()]).stdout);
    let file = table
        .lines()
        .flat_map(|l| l.split(['│', '┆']))
        .map(str::trim)
        .find(|c| c.ends_with(".log"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(file.starts_with(unclean.to_str().unwrap()), "{file}");
    assert_eq!(
        klf(&["dump", "--format", "json", file]).status.code(),
        Some(0)
    );
}

#[test]
fn topic_and_partition_select_what_is_checked_with_the_same_loss() {
    let cap = kafka("unclean-stale-hw");
    let p = cap.to_str().unwrap();
    let whole = json(&[p]);
    let loss_of = |doc: &Value, t: &str| {
        doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == t)
            .map(|x| x["loss"].clone())
    };
    // the consumer group's commit proves records of stale-group-0
    // committed: __consumer_offsets is read though not selected
    let doc = json(&[p, "--topic", "stale-group", "--partition", "0"]);
    assert_eq!(doc["summary"]["partitions"], 1, "{doc}");
    assert_eq!(doc["partitions"].as_array().unwrap().len(), 1);
    assert_eq!(
        loss_of(&doc, "stale-group"),
        loss_of(&whole, "stale-group"),
        "{doc}"
    );
    assert_eq!(
        loss_of(&doc, "stale-group").unwrap()["verdict"],
        "committed-lost"
    );
    for f in doc["findings"].as_array().unwrap() {
        assert!(
            f["topic"].is_null() || (f["topic"] == "stale-group" && f["partition"] == 0),
            "{f}"
        );
    }
    let expected: Vec<&Value> = whole["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["topic"] == "stale-group")
        .collect();
    assert_eq!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["topic"] == "stale-group")
            .count(),
        expected.len()
    );
    // the metadata log alone
    let meta = json(&[p, "--topic", "__cluster_metadata"]);
    assert_eq!(meta["summary"]["partitions"], 1);
    assert!(meta["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["topic"] == "__cluster_metadata" || f["topic"].is_null()));
    // nothing selected: named with what the capture holds, exit 2
    let none = klf(&["check", p, "--topic", "nope"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        text(&none.stderr).contains("no partition matches --topic nope; the capture holds"),
        "{}",
        text(&none.stderr)
    );
    assert!(none.stdout.is_empty());
}

#[test]
fn write_baseline_and_the_next_run_count_the_same_findings() {
    let cap = kafka("torn-write");
    let p = cap.to_str().unwrap();
    let total = json(&[p])["findings"].as_array().unwrap().len();
    let dir = scratch("check-baseline-count");
    let file = dir.join("baseline.json");
    let b = file.to_str().unwrap();
    let wrote = klf(&["check", p, "--write-baseline", b]);
    assert_eq!(wrote.status.code(), Some(0));
    let note = text(&wrote.stderr);
    assert!(
        note.contains(&format!(
            "klf: wrote baseline {b}: it accepts {total} findings"
        )),
        "{note}"
    );
    // findings of one code at one place share an entry: said, not hidden
    let entries = serde_json::from_str::<Value>(&std::fs::read_to_string(&file).unwrap()).unwrap()
        ["findings"]
        .as_array()
        .unwrap()
        .len();
    assert!(entries < total, "the capture has findings sharing an entry");
    assert!(note.contains(&format!("({entries} entries: ")), "{note}");
    let accepted = format!("({total} accepted by the baseline)");
    assert!(
        text(&wrote.stdout).contains(&accepted),
        "{}",
        text(&wrote.stdout)
    );
    let next = klf(&["check", p, "--baseline", b]);
    assert!(
        text(&next.stdout).contains(&accepted),
        "{}",
        text(&next.stdout)
    );
    let doc = json(&[p, "--baseline", b]);
    assert_eq!(doc["summary"]["baselined"].as_u64(), Some(total as u64));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn counts_are_singular_for_one() {
    // index files with one entry, messages counting records, bytes and
    // brokers: never "1 entries", "1 records", "broker(s)"
    let mut all = String::new();
    for name in ["unclean-stale-hw", "impact", "lag-window"] {
        let cap = kafka(name);
        let doc = json(&[cap.to_str().unwrap()]);
        for f in doc["findings"].as_array().unwrap() {
            all.push_str(f["message"].as_str().unwrap());
            all.push('\n');
        }
        all.push_str(&text(&klf(&["check", cap.to_str().unwrap()]).stdout));
        all.push_str(&text(
            &klf(&["check", "--format", "junit", cap.to_str().unwrap()]).stdout,
        ));
    }
    assert!(all.contains("after 1 entry:"), "{all}");
    for bad in [
        " 1 entries",
        " 1 records",
        " 1 bytes",
        " 1 files",
        " 1 slots",
        " 1 partitions",
        " 1 findings",
        " 1 brokers",
        " 1 replicas",
        "(s)",
    ] {
        assert!(!all.contains(bad), "{bad:?} in:\n{all}");
    }
}
