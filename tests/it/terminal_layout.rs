//! On a terminal, results fit its width: tables that fit stay tables,
//! others become one block per row, long lines are broken at spaces, and
//! a path or a name too long for a line stands whole on a line of its own
//! (it can be pasted back into klf). The commands run under a
//! pseudo-terminal (`script`) of a set size; piped output is never
//! reshaped. Expectations are built from the paths the tests use, so they
//! hold at any checkout path.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use crate::common::{copy_tree, kafka, klf, scratch, text, KLF};

/// stdout of `klf ARGS` on a terminal `cols` wide (stderr to a file, so
/// progress bars are not in it), lines without their `\r`, colour
/// escapes removed.
fn on_terminal(cols: usize, args: &[&str]) -> String {
    on_terminal_of(cols, 50, args)
}

/// [`on_terminal`] on a terminal `rows` lines high.
fn on_terminal_of(cols: usize, rows: usize, args: &[&str]) -> String {
    // a folder of its own: tests run at the same time, and so do runs
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = scratch(&format!("pty-{n}"));
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
        // a shell that says nothing of its own on the terminal (bash warns
        // there of a locale the machine lacks)
        .env("SHELL", "/bin/sh")
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env_remove("LINES")
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

fn width(l: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(l)
}

/// Every line of `out` fits `cols` columns, or holds one word alone (a
/// path or a name kept whole, past the edge).
fn assert_fits(out: &str, cols: usize, what: &str) {
    for l in out.lines().filter(|l| width(l) > cols) {
        assert!(
            !l.trim().contains(' '),
            "{what}: a line of {} with more than one word: {l}\n{out}",
            width(l)
        );
    }
}

/// `klf` on many terminals at once (two at a time): the output of each.
fn on_terminals(runs: &[(usize, Vec<String>)]) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<String>> = runs
        .iter()
        .map(|_| std::sync::Mutex::new(String::new()))
        .collect();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((cols, args)) = runs.get(i) else {
                    break;
                };
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                *slots[i].lock().unwrap() = on_terminal(*cols, &args);
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().unwrap()).collect()
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
    let mut runs = Vec::new();
    for name in captures {
        let dir = kafka(name);
        let dir = dir.to_str().unwrap();
        for args in [
            vec!["check", dir],
            vec!["diff", dir],
            vec!["diff", dir, "--explain"],
            vec!["diff", dir, "--records", "--records-limit", "20"],
            vec!["timeline", dir],
            vec!["timeline", dir, "--incident", "--all"],
        ] {
            runs.push((80, args.into_iter().map(String::from).collect::<Vec<_>>()));
        }
    }
    // an incident told from the nodes' own logs too
    let logged = crate::incident::fixture("pty");
    let logged = logged.to_str().unwrap();
    for cols in [80, 37] {
        runs.push((
            cols,
            ["timeline", logged, "--incident"]
                .into_iter()
                .map(String::from)
                .collect(),
        ));
    }
    for ((cols, args), out) in runs.iter().zip(on_terminals(&runs)) {
        assert!(!out.trim().is_empty(), "klf {args:?} printed nothing");
        assert_fits(&out, *cols, &format!("klf {args:?} at {cols} columns"));
    }
    let _ = std::fs::remove_dir_all(std::path::Path::new(logged).parent().unwrap());
}

/// On an 80x30 terminal, `klf elect` and `klf impact` open with the
/// whole capture in a few lines, and the first screen reaches the worst
/// partition and what to do about it; every line fits.
#[test]
fn elect_and_impact_open_with_the_overview_on_an_80_by_30_terminal() {
    let zk = kafka("unclean-zk-3.9").display().to_string();
    let imp = kafka("impact").display().to_string();
    let runs: Vec<(usize, Vec<String>)> = [
        vec!["elect", zk.as_str()],
        vec!["elect", imp.as_str(), "--all"],
        vec!["impact", imp.as_str()],
    ]
    .into_iter()
    .map(|a| (80, a.into_iter().map(String::from).collect()))
    .collect();
    let outs = on_terminals(&runs);
    for ((_, args), out) in runs.iter().zip(&outs) {
        assert_fits(out, 80, &format!("klf {args:?} at 80 columns"));
    }
    let screen = |out: &str| out.lines().take(30).collect::<Vec<_>>().join("\n");
    let elect = screen(&outs[0]);
    assert!(
        elect.starts_with("1 partition compared: it loses data whichever replica leads")
            && elect.contains("unclean-0: captured replicas")
            && elect.contains("Least loss: broker")
            && elect.contains("Before electing: who leads unclean-0 now"),
        "{elect}"
    );
    let all = &outs[1];
    assert!(all.starts_with("3 partitions compared: "), "{all}");
    assert!(all.contains("__consumer_offsets-0: replicas"), "{all}");
    let impact = screen(&outs[2]);
    assert!(
        impact.starts_with("3 partitions compared, 1 loses records: ")
            && impact.contains("In all: ")
            && impact.contains("orders-0: "),
        "{impact}"
    );
}

/// A copy of capture `name` in a scratch folder deeper than a terminal is
/// wide, as in a clone at a long path: (the scratch folder to remove, the
/// copy).
fn deep_copy(name: &str) -> (PathBuf, PathBuf) {
    let base = scratch(&format!("layout-{name}"));
    let mut deep = base.clone();
    for part in ["an-incident-from-last-night", "copied-off-every-broker"] {
        deep.push(format!("{part}-{}", "x".repeat(40)));
    }
    deep.push(name);
    copy_tree(&kafka(name), &deep);
    assert!(deep.to_str().unwrap().len() > 120, "{}", deep.display());
    (base, deep)
}

/// Whether `name` is on a line of `out` as a word, whole (not cut at a
/// line's end).
fn whole(out: &str, name: &str) -> bool {
    out.lines().any(|l| {
        l.split(' ')
            .any(|w| w.trim_matches(|c: char| "(),:;".contains(c)) == name)
    })
}

#[test]
fn paths_and_names_stay_whole_on_a_narrow_terminal_at_a_long_path() {
    let (base, deep) = deep_copy("unclean");
    let d = deep.to_str().unwrap();
    // what check names, from its JSON
    let json: serde_json::Value =
        serde_json::from_slice(&klf(&["check", "--format", "json", d]).stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let files: BTreeSet<&str> = findings.iter().filter_map(|f| f["file"].as_str()).collect();
    assert!(files.len() >= 3, "{json}");
    assert!(
        files.iter().all(|f| f.starts_with(d) && f.len() > 80),
        "{files:?}"
    );
    let at = |p: &str| format!("{d}/{p}");
    let segment = at("broker-1/unclean-0/00000000000000000000.log");
    let dumped = [
        segment.clone(),
        at("broker-1/unclean-0/00000000000000000134.index"),
        at("broker-1/unclean-0/00000000000000000134.snapshot"),
        at("broker-1/replication-offset-checkpoint"),
    ];
    let mut runs = Vec::new();
    for cols in [80, 37] {
        let check = ["check", d, "--max-findings", "1000"];
        runs.push((cols, check.map(String::from).to_vec()));
        let mut dump = vec![
            "dump",
            "--format",
            "table",
            "--deep-iteration",
            "--show",
            "key",
        ];
        dump.extend(dumped.iter().map(String::as_str));
        runs.push((cols, dump.into_iter().map(String::from).collect()));
        for cmd in ["diff", "timeline"] {
            runs.push((cols, vec![cmd.to_string(), d.to_string()]));
        }
    }
    let outs = on_terminals(&runs);
    for ((cols, args), out) in runs.iter().zip(&outs) {
        let what = format!("klf {} at {cols} columns", args[0]);
        match args[0].as_str() {
            "check" => {
                // every path shown is whole on one line (after its name or
                // alone), no piece of one is anywhere else; the partitions
                // whole too
                let shown: Vec<&str> = out.lines().filter(|l| l.contains(d)).collect();
                assert!(shown.len() >= 3, "{what}:\n{out}");
                for l in shown {
                    let t = l.trim();
                    let t = t.strip_prefix("file: ").unwrap_or(t);
                    assert!(files.contains(t), "{what}: {l}\n{out}");
                }
                assert!(
                    !out.lines()
                        .any(|l| l.contains("/broker-") && !l.contains(d)),
                    "{what}: a piece of a path:\n{out}"
                );
                for f in findings {
                    if let (Some(t), Some(p)) = (f["topic"].as_str(), f["partition"].as_i64()) {
                        assert!(whole(out, &format!("{t}-{p}")), "{what}: {t}-{p}:\n{out}");
                    }
                }
                assert_fits(out, *cols, &what);
            }
            "dump" => {
                // each file's heading starts with its path, whole
                for p in &dumped {
                    assert!(
                        out.lines().any(|l| l.starts_with(&format!("{p} ("))),
                        "{what}: {p}:\n{out}"
                    );
                }
                // names in cells are never cut, keys neither
                assert!(
                    whole(out, "replication-offset-checkpoint"),
                    "{what}:\n{out}"
                );
                assert!(whole(out, "key-100"), "{what}:\n{out}");
                // a line wider than the terminal is a heading or a table's
                // (whose numbers and times are never wrapped)
                for l in out.lines().filter(|l| width(l) > *cols) {
                    assert!(
                        dumped.iter().any(|p| l.starts_with(p.as_str()))
                            || l.starts_with(['┌', '│', '╞', '└']),
                        "{what}: {l}\n{out}"
                    );
                }
            }
            _ => {
                assert!(
                    whole(out, "unclean-0") || out.contains("unclean-0 "),
                    "{what}:\n{out}"
                );
                assert_fits(out, *cols, &what);
            }
        }
    }
    // a pipe gets the overview, then the table, every path in it whole
    let piped = text(&klf(&["check", d]).stdout);
    assert!(
        piped.starts_with("2 partitions (6 replicas) checked: 2 errors,")
            && piped.lines().nth(2).is_some_and(|l| l.starts_with('┌')),
        "{piped}"
    );
    let cells: Vec<&str> = piped
        .lines()
        .flat_map(|l| l.split(['│', '┆']))
        .map(str::trim)
        .filter(|c| c.contains(d))
        .collect();
    assert!(cells.len() >= 3, "{piped}");
    assert!(cells.iter().all(|c| files.contains(c)), "{cells:?}");
    let _ = std::fs::remove_dir_all(&base);
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
    // (but for the commands to run next, which name the capture's path:
    // as long as the checkout's, they wrap on a terminal)
    let commandless = |s: &str| -> String {
        let mut out = String::new();
        let mut skipping = false;
        for l in s.lines() {
            if l.starts_with("  next: klf impact ") {
                skipping = true;
                continue;
            }
            if skipping && l.starts_with("    ") && !l.starts_with("    │") {
                continue;
            }
            skipping = false;
            out.push_str(l);
            out.push('\n');
        }
        out
    };
    assert!(piped.contains("  next: klf impact "), "{piped}");
    assert_eq!(
        commandless(&wide),
        commandless(&piped),
        "a table that fits is the table a pipe gets"
    );

    // check: one block per finding, headed by severity and code, the path
    // whole (it can be pasted into klf dump): after its name when the two
    // fit the line, else alone on the next line
    let narrow = on_terminal(80, &["check", dir]);
    assert!(
        narrow.contains("error  committed-records-lost\n  partition: unclean-0  offset: 100\n"),
        "{narrow}"
    );
    let path = format!("{dir}/broker-3/__cluster_metadata-0");
    let item = format!("  file: {path}");
    let expected = if width(&item) <= 80 {
        format!("\n{item}\n")
    } else {
        format!("\n  file:\n    {path}\n")
    };
    assert!(narrow.contains(&expected), "{expected}\n{narrow}");
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

/// The blocks `klf check` wrote on a terminal, as their heading lines
/// (`SEVERITY  CODE`), in order.
fn check_blocks(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| {
            ["error  ", "warning  ", "info  "]
                .iter()
                .any(|h| l.starts_with(h))
        })
        .collect()
}

#[test]
fn check_shows_a_screenful_of_findings_on_a_terminal_and_every_one_into_a_pipe() {
    let dir = kafka("unclean");
    let dir = dir.to_str().unwrap();
    let piped = text(&klf(&["check", dir]).stdout);
    assert!(!piped.contains("not shown"), "{piped}");
    for (cols, rows) in [(80, 30), (200, 20)] {
        let out = on_terminal_of(cols, rows, &["check", dir]);
        let lines = out.lines().count();
        assert!(lines < rows, "{rows} rows, {lines} lines:\n{out}");
        assert!(
            out.contains("more findings not shown (--max-findings N"),
            "{out}"
        );
        assert!(out.contains("FAIL (2 at or above error)"), "{out}");
    }
    // a terminal too short for the errors still shows every one (the
    // lesser findings are cut first); more rows, more findings;
    // --max-findings overrides the height
    let short = on_terminal_of(80, 12, &["check", dir]);
    let tall = on_terminal_of(80, 45, &["check", dir]);
    let errors = |s: &str| {
        check_blocks(s)
            .iter()
            .filter(|b| b.starts_with("error  "))
            .count()
    };
    assert_eq!(errors(&short), 2, "{short}");
    assert_eq!(check_blocks(&short).len(), 2, "{short}");
    assert!(
        check_blocks(&tall).len() > check_blocks(&short).len(),
        "{short}\n----\n{tall}"
    );
    let all = on_terminal_of(80, 16, &["check", dir, "--max-findings", "1000"]);
    assert!(!all.contains("not shown"), "{all}");
}

#[test]
fn check_first_screen_at_80x30_holds_the_overview_and_every_error_before_any_warning() {
    // impact: 3 errors (a hanging transaction, the loss, a log-matching
    // violation), 8 warnings, 32 infos
    for name in ["impact", "unclean-stale-hw"] {
        let cap = kafka(name);
        let d = cap.to_str().unwrap();
        let doc: serde_json::Value =
            serde_json::from_slice(&klf(&["check", "--format", "json", d]).stdout).unwrap();
        let errors: Vec<String> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| format!("error  {}", f["code"].as_str().unwrap()))
            .collect();
        assert!(errors.len() >= 2, "{name}: {doc}");
        let out = on_terminal_of(80, 30, &["check", d]);
        let lines = out.lines().count();
        assert!(lines < 30, "{name}: {lines} lines:\n{out}");
        // the overview first: the summary's counts
        let s = &doc["summary"];
        assert!(
            out.starts_with(&format!(
                "{} partitions ({} replicas) checked: {} errors, ",
                s["partitions"], s["replicas"], s["errors"]
            )),
            "{name}:\n{out}"
        );
        // every error, each a block of its own, before any other block
        let blocks = check_blocks(&out);
        assert!(blocks.len() >= errors.len(), "{name}:\n{out}");
        let mut shown: Vec<&str> = blocks[..errors.len()].to_vec();
        let mut expected: Vec<&str> = errors.iter().map(String::as_str).collect();
        shown.sort_unstable();
        expected.sort_unstable();
        assert_eq!(shown, expected, "{name}:\n{out}");
        let rank = |b: &str| {
            ["error  ", "warning  ", "info  "]
                .iter()
                .position(|h| b.starts_with(h))
        };
        assert!(
            blocks.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
            "{name}:\n{out}"
        );
        assert!(out.contains(&format!("FAIL ({} at or above error)", errors.len())));
    }
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

/// At 80x30, the first screen of `klf diff` on a capture with an internal
/// topic (whose partition loses nothing) holds the totals and the first
/// losing partition, worst first, with why and what next; the partition
/// that loses nothing is folded into one line.
#[test]
fn diff_first_screen_holds_the_totals_and_the_worst_loss() {
    let dir = kafka("unclean-stale-hw");
    let out = on_terminal_of(80, 30, &["diff", dir.to_str().unwrap()]);
    let screen: Vec<&str> = out.lines().take(30).collect();
    let screen = screen.join("\n");
    assert!(
        screen.starts_with("3 partitions compared, 2 losing data: 200 records lost"),
        "{screen}"
    );
    // worst first: the proven committed loss before the possible one
    let worst = screen
        .find("stale-group-0: reference broker")
        .expect(&screen);
    assert!(
        !screen[..worst].contains("stale-0: reference broker"),
        "{screen}"
    );
    assert!(screen.contains("why: an UNCLEAN election"), "{screen}");
    assert!(screen.contains("next: klf impact"), "{screen}");
    assert!(
        screen.contains("1 partition: nothing lost, 1 with findings (--all lists it)"),
        "{screen}"
    );
    assert!(!out.contains("__consumer_offsets-0: reference"), "{out}");
}

#[test]
fn dump_on_a_terminal_prints_kafka_dump_logs_text() {
    let cap = kafka("divergence");
    let seg = cap.join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    let args = ["dump", "--deep-iteration", "--print-data-log", seg];
    let piped = text(&klf(&args).stdout);
    // kafka-dump-log's own text (its `Dumping` line names the file as given)
    let golden = std::fs::read_to_string(
        cap.join("golden/broker-2/diverge-0/00000000000000000000.log.deep.txt"),
    )
    .unwrap();
    let (_, rest) = golden.split_once('\n').unwrap();
    assert_eq!(piped, format!("Dumping {seg}\n{rest}"));
    // on an 80x30 terminal: the same text, not a table of squeezed columns
    let screen = on_terminal_of(80, 30, &args);
    assert_eq!(screen, piped);
    assert!(!screen.contains('┌'), "{screen}");
}

#[test]
fn record_bytes_cannot_drive_the_terminal_in_kafka_text() {
    // a real segment whose first key `key-0` is crafted to `key<ESC>0`,
    // its batch's checksum made good again: a key as a producer could send
    let src = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&src).unwrap();
    let at = bytes.windows(5).position(|w| w == b"key-0").unwrap();
    bytes[at + 3] = 0x1b;
    let size = i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize + 12;
    assert!(at < size);
    let crc = klf::format::crc::crc32c(&bytes[21..size]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    let dir = scratch("crafted-key").join("crafted-0");
    std::fs::create_dir_all(&dir).unwrap();
    let seg = dir.join("00000000000000000000.log");
    std::fs::write(&seg, &bytes).unwrap();
    let seg = seg.to_str().unwrap();
    let args = ["dump", "--print-data-log", "--count", "1", seg];
    // into a pipe, kafka-dump-log's bytes; on a terminal, the escape shown
    let piped = klf(&args);
    assert_eq!(piped.status.code(), Some(0), "{}", text(&piped.stderr));
    assert!(text(&piped.stdout).contains("key: key\u{1b}0 payload"));
    let screen = on_terminal(80, &args);
    assert!(screen.contains("key: key\\u{1b}0 payload"), "{screen}");
    assert_eq!(
        screen,
        text(&piped.stdout).replace('\u{1b}', "\\u{1b}"),
        "only the escape differs"
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn the_dumps_progress_counts_bytes() {
    // stdout into a file, stderr on a terminal: the bar shows, in bytes
    let seg = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let size = std::fs::metadata(&seg).unwrap().len();
    let dir = scratch("dump-progress");
    let inner = format!(
        "stty cols 80 rows 30; exec '{KLF}' dump --deep-iteration '{}' > '{}'",
        seg.display(),
        dir.join("out").display()
    );
    let o = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .output()
        .expect("run script (util-linux)");
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stdout);
    // indicatif's binary units, two decimals
    let total = format!("/{:.2} KiB", size as f64 / 1024.0);
    assert!(err.contains(&total), "{total}: {err:?}");
    assert!(!err.contains("files dumped"), "{err:?}");
    let out = std::fs::read_to_string(dir.join("out")).unwrap();
    assert!(out.contains("| offset: 0 "), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
