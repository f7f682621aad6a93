//! On a terminal, results fit its width: tables that fit stay tables,
//! others become one block per row, long lines are broken at spaces. The
//! commands run under a pseudo-terminal (`script`) of a set size; piped
//! output is never reshaped.

use std::process::Command;

use crate::common::{kafka, klf, text, KLF};

/// stdout of `klf ARGS` on a terminal `cols` wide (stderr to a file, so
/// progress bars are not in it), lines without their `\r`, colour
/// escapes removed.
fn on_terminal(cols: usize, args: &[&str]) -> String {
    on_terminal_of(cols, 50, args)
}

/// [`on_terminal`] on a terminal `rows` lines high.
fn on_terminal_of(cols: usize, rows: usize, args: &[&str]) -> String {
    let dir = crate::common::scratch("pty");
    let err = dir.join("stderr");
    let quoted: Vec<String> = std::iter::once(KLF)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let inner = format!(
        "stty cols {cols} rows {rows}; exec {} 2>'{}'",
        quoted.join(" "),
        err.display()
    );
    let o = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .env_remove("NO_COLOR")
        .output()
        .expect("run script (util-linux) to give klf a terminal");
    let code = o.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "klf {args:?} on a terminal exited {code:?}: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let _ = std::fs::remove_dir_all(&dir);
    let mut s = String::new();
    let mut esc = false;
    for c in text(&o.stdout).chars() {
        if esc {
            esc = !c.is_ascii_alphabetic();
        } else if c == '\x1b' {
            esc = true;
        } else if c != '\r' {
            s.push(c);
        }
    }
    s
}

fn widest(s: &str) -> (usize, String) {
    s.lines()
        .map(|l| (unicode_width::UnicodeWidthStr::width(l), l.to_string()))
        .max_by_key(|(w, _)| *w)
        .unwrap_or_default()
}

#[test]
fn every_line_fits_eighty_columns() {
    let captures = [
        "unclean",
        "divergence",
        "double-divergence",
        "elections",
        "impact",
        "transactions",
        "follower-returns",
        "divergence-zk-2.8",
        "unclean-4.4",
        "unclean-zk-3.9",
        "coordinators-4.4",
    ];
    for name in captures {
        let dir = kafka(name);
        let dir = dir.to_str().unwrap();
        for args in [
            vec!["check", dir],
            vec!["diff", dir],
            vec!["diff", dir, "--explain"],
            vec!["diff", dir, "--records", "--records-limit", "20"],
            vec!["timeline", dir],
        ] {
            let out = on_terminal(80, &args);
            assert!(!out.trim().is_empty(), "klf {args:?} printed nothing");
            let (w, line) = widest(&out);
            assert!(w <= 80, "klf {args:?} at 80 columns: a line of {w}: {line}");
        }
    }
}

#[test]
fn a_narrow_terminal_gets_blocks_a_wide_one_tables_a_pipe_the_table() {
    let dir = kafka("unclean");
    let dir = dir.to_str().unwrap();
    let narrow = on_terminal(80, &["diff", dir]);
    assert!(
        narrow.contains("broker 1\n  log end: 250  high watermark: 250"),
        "{narrow}"
    );
    assert!(!narrow.contains('┌'), "{narrow}");
    let wide = on_terminal(220, &["diff", dir]);
    assert!(
        wide.contains("│ broker ┆ log end ┆ high watermark"),
        "{wide}"
    );
    let piped = text(&klf(&["diff", dir]).stdout);
    assert!(
        piped.contains("│ broker ┆ log end ┆ high watermark"),
        "{piped}"
    );
    assert_eq!(wide, piped, "a table that fits is the table a pipe gets");

    // check: one block per finding, headed by severity and code, the path
    // whole (it can be pasted into klf dump)
    let narrow = on_terminal(80, &["check", dir]);
    assert!(
        narrow.contains("error  committed-records-lost\n  partition: unclean-0  offset: 100\n"),
        "{narrow}"
    );
    assert!(
        narrow.contains("file: testdata/kafka/unclean/broker-3/__cluster_metadata-0")
            || narrow.contains(&format!("file: {dir}/broker-3/__cluster_metadata-0")),
        "{narrow}"
    );
}

#[test]
fn times_read_as_utc_beside_the_epoch_milliseconds() {
    let dir = kafka("unclean");
    let dir = dir.to_str().unwrap();
    let out = text(&klf(&["diff", dir, "--records", "--records-limit", "3"]).stdout);
    // the time of each lost record and of the loss, from the batch headers
    let iso = |s: &str| {
        s.split_whitespace().any(|w| {
            let b = w.as_bytes();
            b.len() == 24 && b[4] == b'-' && b[10] == b'T' && b[19] == b'.' && b[23] == b'Z'
        })
    };
    let record = out
        .lines()
        .find(|l| l.contains("┆ key-100 ┆"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(iso(record), "{record}");
    let summary = out
        .lines()
        .find(|l| l.contains("records the partition loses"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(iso(summary), "{summary}");
    let timeline = text(&klf(&["timeline", dir]).stdout);
    let election = timeline
        .lines()
        .find(|l| l.contains("UNCLEAN election"))
        .unwrap_or_else(|| panic!("{timeline}"));
    assert!(iso(election), "{election}");
}

#[test]
fn check_shows_a_screenful_of_findings_on_a_terminal_and_every_one_into_a_pipe() {
    let dir = kafka("unclean");
    let dir = dir.to_str().unwrap();
    let piped = text(&klf(&["check", dir]).stdout);
    assert!(!piped.contains("not shown"), "{piped}");
    let total = piped.matches("error").count() + piped.matches("warning").count();
    for (cols, rows) in [(80, 16), (80, 30), (200, 12)] {
        let out = on_terminal_of(cols, rows, &["check", dir]);
        let lines = out.lines().count();
        assert!(lines < rows, "{rows} rows, {lines} lines:\n{out}");
        assert!(
            out.contains("more findings not shown (--max-findings N"),
            "{out}"
        );
        assert!(out.contains("FAIL (2 at or above error)"), "{out}");
    }
    // more rows, more findings; --max-findings overrides the height
    let short = on_terminal_of(80, 16, &["check", dir]);
    let tall = on_terminal_of(80, 30, &["check", dir]);
    let blocks = |s: &str| {
        s.lines()
            .filter(|l| {
                ["error  ", "warning  ", "info  "]
                    .iter()
                    .any(|h| l.starts_with(h))
            })
            .count()
    };
    assert!(blocks(&tall) > blocks(&short), "{short}\n----\n{tall}");
    let all = on_terminal_of(80, 16, &["check", dir, "--max-findings", "1000"]);
    assert!(!all.contains("not shown"), "{all}");
    assert!(total > 0);
}

/// Every time field of `v` at any depth, as (name, ms, the `_utc` beside
/// it), and whether each `_utc` came right after its field.
fn time_fields(
    v: &serde_json::Value,
    out: &mut Vec<(String, serde_json::Value, serde_json::Value)>,
) {
    match v {
        serde_json::Value::Object(m) => {
            let keys: Vec<&String> = m.keys().collect();
            for (i, k) in keys.iter().enumerate() {
                let time = matches!(k.as_str(), "timestamp" | "time" | "delete_horizon_ms")
                    || k.ends_with("_timestamp");
                if time {
                    let utc = format!("{k}_utc");
                    assert_eq!(
                        keys.get(i + 1).map(|s| s.as_str()),
                        Some(utc.as_str()),
                        "{v}"
                    );
                    out.push(((*k).clone(), m[*k].clone(), m[&utc].clone()));
                }
            }
            m.values().for_each(|x| time_fields(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| time_fields(x, out)),
        _ => {}
    }
}

#[test]
fn every_time_in_json_has_its_utc_time_beside_it() {
    let unclean = kafka("unclean");
    let impact = kafka("impact");
    let segment = unclean.join("broker-1/unclean-0/00000000000000000000.log");
    let snapshot = impact.join("broker-1/orders-0/00000000000000000143.snapshot");
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "diff",
            unclean.to_str().unwrap(),
            "--records",
            "--format",
            "json",
        ],
        vec!["timeline", unclean.to_str().unwrap(), "--format", "jsonl"],
        vec!["impact", impact.to_str().unwrap(), "--format", "json"],
        vec![
            "dump",
            segment.to_str().unwrap(),
            "--deep-iteration",
            "--format",
            "json",
        ],
        vec!["dump", snapshot.to_str().unwrap(), "--format", "json"],
    ];
    let mut names = std::collections::BTreeSet::new();
    for args in runs {
        let o = klf(&args);
        let out = text(&o.stdout);
        let docs: Vec<serde_json::Value> = match serde_json::from_str(&out) {
            Ok(v) => vec![v],
            Err(_) => out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        };
        let mut fields = Vec::new();
        docs.iter().for_each(|d| time_fields(d, &mut fields));
        assert!(!fields.is_empty(), "klf {args:?}: no time field");
        for (name, ms, utc) in fields {
            names.insert(name.clone());
            match ms.as_i64().filter(|&t| t >= 0) {
                Some(t) => assert_eq!(
                    klf::render::text::parse_time(utc.as_str().unwrap()),
                    Some(t),
                    "klf {args:?}: {name} {ms} {utc}"
                ),
                None => assert!(utc.is_null(), "klf {args:?}: {name} {ms} {utc}"),
            }
        }
    }
    for name in [
        "timestamp",
        "time",
        "first_timestamp",
        "last_timestamp",
        "max_timestamp",
        "base_timestamp",
        "delete_horizon_ms",
        "commit_timestamp",
    ] {
        assert!(names.contains(name), "{name} not seen: {names:?}");
    }
}
