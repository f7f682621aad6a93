//! What every subcommand shares: man pages that match `--help` and render,
//! shell completions, `--quiet`, `--color` and NO_COLOR, results on stdout
//! and diagnostics on stderr, errors that name the path and the fix.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use super::common::{finish, kafka, klf, klf_command, root, text, KLF};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The subcommands `klf --help` lists; every one must have a man page.
fn subcommands() -> Vec<String> {
    let help = text(&klf(&["--help"]).stdout);
    let v: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    for s in ["dump", "diff", "timeline", "check", "completions"] {
        assert!(
            v.iter().any(|x| x == s),
            "klf --help does not list {s}: {v:?}"
        );
    }
    v
}

/// Long options in `--help` output: `--name` at the start of an option line.
fn help_options(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t
                .strip_prefix("-")
                .filter(|r| !r.starts_with('-'))
                .map_or(t, |r| r.split_once(", ").map_or(t, |(_, rest)| rest));
            let name = t.strip_prefix("--")?;
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// Long options of a man page: `.TP` items whose tag is `\fB\-\-name\fR`.
fn man_options(page: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = page.lines().collect();
    let mut v = BTreeSet::new();
    for w in lines.windows(2) {
        if w[0] != ".TP" {
            continue;
        }
        let tag = w[1]
            .replace("\\-", "-")
            .replace("\\fB", "")
            .replace("\\fR", "");
        for part in tag.split([',', ' ']) {
            if let Some(name) = part.strip_prefix("--") {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if !name.is_empty() {
                    v.insert(name);
                }
            }
        }
    }
    v
}

#[test]
fn every_subcommand_help_and_man_page_list_the_same_options() {
    let subs = subcommands();
    for sub in &subs {
        let sub = sub.as_str();
        let out = klf(&[sub, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{sub} --help");
        let help = text(&out.stdout);
        // The long help carries what the page carries beyond options.
        assert!(
            help.contains("Exit status:"),
            "{sub} --help: no exit status"
        );
        let page = std::fs::read_to_string(root().join(format!("man/klf-{sub}.1")))
            .unwrap_or_else(|e| panic!("man/klf-{sub}.1: {e}"));
        let from_help = help_options(&help);
        let from_man = man_options(&page);
        assert!(
            from_help.contains("help") && from_help.contains("quiet"),
            "{sub}: {from_help:?}"
        );
        assert_eq!(
            from_help, from_man,
            "{sub}: --help and man/klf-{sub}.1 differ"
        );
    }
    let out = klf(&["--help"]);
    let page = std::fs::read_to_string(root().join("man/klf.1")).unwrap();
    assert_eq!(
        help_options(&text(&out.stdout)),
        man_options(&page),
        "klf --help vs klf.1"
    );
    for sub in &subs {
        assert!(
            page.contains(&format!("klf\\-{sub}(1)")),
            "klf.1 does not list {sub}"
        );
    }
}

#[test]
fn man_pages_render_with_man() {
    let dir = root().join("man");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "1"))
        .collect();
    pages.sort();
    // klf.1 and one page per subcommand, no more.
    let mut expected: Vec<PathBuf> = subcommands()
        .iter()
        .map(|s| dir.join(format!("klf-{s}.1")))
        .chain([dir.join("klf.1")])
        .collect();
    expected.sort();
    assert_eq!(pages, expected);
    for p in &pages {
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(p)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("man is installed (man-db; .ci/run installs it)");
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "man -l {}: {}",
            p.display(),
            text(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "man -l {}: {}",
            p.display(),
            text(&out.stderr)
        );
        for section in ["NAME", "SYNOPSIS", "OPTIONS", "EXIT STATUS", "EXAMPLES"] {
            assert!(
                stdout.contains(section),
                "{}: no {section}:\n{stdout}",
                p.display()
            );
        }
    }
}

/// `klf man --install DIR` writes every page of `man/` into DIR/man1, the
/// same bytes, where man finds them (`MANPATH=DIR man -w klf-diff`); `klf
/// man CMD` prints one page.
#[test]
fn man_install_puts_every_page_where_man_finds_it() {
    let scratch = super::common::scratch("man-install");
    let dir = scratch.join("share/man");
    let out = klf(&["man", "--install", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut checked_in: Vec<String> = std::fs::read_dir(root().join("man"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    checked_in.sort();
    let written: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    let want: Vec<String> = checked_in
        .iter()
        .map(|n| dir.join("man1").join(n).display().to_string())
        .collect();
    assert_eq!(written, want);
    for n in &checked_in {
        assert_eq!(
            std::fs::read(dir.join("man1").join(n)).unwrap(),
            std::fs::read(root().join("man").join(n)).unwrap(),
            "{n}"
        );
    }
    let found = Command::new("man")
        .args(["-w", "klf-diff"])
        .env("MANPATH", &dir)
        .output()
        .expect("man is installed (man-db; .ci/run installs it)");
    assert_eq!(
        text(&found.stdout).trim(),
        dir.join("man1/klf-diff.1").display().to_string(),
        "{}",
        text(&found.stderr)
    );
    // again, into a folder named man1: the pages go there, replaced
    let out = klf(&["man", "--install", dir.join("man1").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().collect::<Vec<_>>(), want);
    // one page on stdout, and a command klf does not have
    assert_eq!(
        klf(&["man", "diff"]).stdout,
        std::fs::read(root().join("man/klf-diff.1")).unwrap()
    );
    assert_eq!(
        klf(&["man"]).stdout,
        std::fs::read(root().join("man/klf.1")).unwrap()
    );
    let out = klf(&["man", "no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("klf man takes one of"));
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn bash_completion_loads_and_others_generate() {
    let script = format!(
        "source <({} completions bash) && complete -p klf",
        quoted(KLF)
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert!(
        line.starts_with("complete ") && line.trim_end().ends_with(" klf"),
        "{line}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = klf(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let s = text(&out.stdout);
        for sub in ["dump", "diff", "timeline", "check"] {
            assert!(s.contains(sub), "{shell} completion lacks {sub}");
        }
        assert!(
            s.contains("archive-limit"),
            "{shell} completion lacks global options"
        );
    }
    let out = klf(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn color_follows_flag_and_no_color() {
    let cap = kafka("unclean");
    let p = cap.to_str().unwrap();
    let esc = |o: &Output| o.stdout.contains(&0x1b);
    // Into a pipe, auto does not colour; always does; never does not.
    let auto = klf(&["check", p]);
    let always = klf(&["check", "--color", "always", p]);
    let never = klf(&["check", "--color=never", p]);
    assert!(!esc(&auto) && esc(&always) && !esc(&never));
    assert_eq!(auto.stdout, never.stdout);
    assert_eq!(auto.status.code(), always.status.code());
    // NO_COLOR does not override an explicit --color always.
    let forced = finish(
        klf_command()
            .args(["diff", "--color", "always", p])
            .env("NO_COLOR", "1"),
    );
    assert!(esc(&forced));
    // JSON is never coloured.
    let json = klf(&["diff", "--color", "always", "--format", "json", p]);
    assert!(!esc(&json));
    serde_json::from_slice::<serde_json::Value>(&json.stdout).expect("valid JSON");
    // Options go before or after the subcommand.
    let before = klf(&["--color", "always", "timeline", p]);
    let after = klf(&["timeline", p, "--color", "always"]);
    assert_eq!(before.stdout, after.stdout);
}

#[test]
fn quiet_keeps_results_and_drops_notes() {
    let b1 = kafka("divergence").join("broker-1");
    let p = b1.to_str().unwrap();
    let loud = klf(&["dump", "--format", "kafka", p]);
    let quiet = klf(&["dump", "--format", "kafka", "--quiet", p]);
    // The notes go; kafka-dump-log's own summaries (index mismatches) are
    // part of the result and stay.
    let loud_err = text(&loud.stderr);
    let quiet_err = text(&quiet.stderr);
    assert!(loud_err.contains("skipped in kafka format"));
    assert!(!quiet_err.contains("note:"), "{quiet_err}");
    let kept: Vec<&str> = loud_err.lines().filter(|l| !l.contains("note:")).collect();
    assert_eq!(quiet_err.lines().collect::<Vec<_>>(), kept);
    assert_eq!(loud.stdout, quiet.stdout);
    assert_eq!(loud.status.code(), quiet.status.code());
    // Errors still show.
    let missing = klf(&["check", "-q", "/nonexistent/klf/capture"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(!missing.stderr.is_empty());
    // A baseline note is dropped, the baseline still written.
    let file = std::env::temp_dir().join(format!("klf-quiet-baseline-{}.json", std::process::id()));
    let cap = kafka("unclean");
    let out = klf(&[
        "check",
        "-q",
        "--write-baseline",
        file.to_str().unwrap(),
        cap.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert!(file.exists());
    let _ = std::fs::remove_file(&file);
}

#[test]
fn errors_name_the_path_and_the_fix() {
    let cap = kafka("divergence");
    // A missing broker directory: the siblings are listed.
    let wrong = cap.join("broker-9");
    let out = klf(&["diff", wrong.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(
        e.contains("broker-9") && e.contains("broker-1, broker-2, broker-3"),
        "{e}"
    );
    // A file where a directory was expected.
    let seg = cap.join("broker-1/diverge-0/00000000000000000000.log");
    for cmd in ["diff", "timeline", "check"] {
        let out = klf(&[cmd, seg.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let e = text(&out.stderr);
        assert!(
            e.contains("a file, not a directory") && e.contains("klf dump"),
            "{cmd}: {e}"
        );
    }
    // One partition directory to diff: pass it from every broker.
    let part = cap.join("broker-1/diverge-0");
    let out = klf(&["diff", part.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("only one replica of diverge-0"),
        "{}",
        text(&out.stderr)
    );
    // An index without its .log.
    let tmp = std::env::temp_dir().join(format!("klf-lone-index-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let idx = tmp.join("00000000000000000000.index");
    std::fs::copy(
        cap.join("broker-1/diverge-0/00000000000000000000.index"),
        &idx,
    )
    .unwrap();
    let out = klf(&["dump", "--format", "json", idx.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(
        e.contains("00000000000000000000.log") && e.contains("copy the .log beside it"),
        "{e}"
    );
    assert!(!tmp.join("00000000000000000000.log").exists());
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn results_on_stdout_diagnostics_on_stderr() {
    // A capture with a checkpoint left mid-write and a folder that is not
    // a log directory: the JSON lines on stdout, the notes on stderr.
    let p = kafka("torn-write");
    let out = klf(&["dump", "--format", "json", p.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(stdout.lines().count() > 10, "{stdout}");
    for line in stdout.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("stdout line not JSON ({e}): {line}"));
    }
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("replication-offset-checkpoint.tmp"),
        "the note on the half-written checkpoint is on stderr: {stderr}"
    );
    for line in stderr.lines() {
        assert!(
            line.starts_with("klf"),
            "stderr line without klf prefix: {line}"
        );
    }
}

/// `s` as one word for sh, whatever the checkout path holds.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs klf under a pseudo-terminal of `cols` columns (util-linux
/// `script`): stdout and stderr are both the terminal, merged. `args` is
/// sh text (paths in it [`quoted`]).
fn on_terminal(cols: u16, args: &str) -> String {
    let cmd = format!("stty cols {cols} rows 50; {} {args}", quoted(KLF));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        // a shell that says nothing of its own on the terminal
        .env("SHELL", "/bin/sh")
        .env_remove("NO_COLOR")
        .output()
        .expect("script (util-linux) runs klf on a terminal");
    text(&out.stdout).replace('\r', "")
}

#[test]
fn on_a_terminal_tables_fit_and_progress_shows_unless_quiet() {
    let cap = kafka("divergence");
    let p = cap.to_str().unwrap();
    let q = quoted(p);
    // Into a pipe the table keeps its natural width, wider than 70 columns.
    let piped = text(&klf(&["diff", p]).stdout);
    assert!(piped.lines().any(|l| l.chars().count() > 70));
    // On a 70-column terminal the table becomes one block per replica and
    // every line fits, prose broken at spaces (terminal_layout.rs has more).
    let shown = on_terminal(70, &format!("diff --color never --quiet {q}"));
    assert!(shown.contains("reference broker"), "{shown}");
    assert!(shown.contains("\nbroker 1\n  log end: 150"), "{shown}");
    assert!(!shown.contains('┌'), "{shown}");
    for l in shown.lines() {
        // (but for a line holding the capture's path, one word that no
        // break can shorten, as long as the checkout's path is)
        let unbreakable = l.split_whitespace().any(|w| w == p);
        assert!(
            l.chars().count() <= 70 || unbreakable,
            "wider than the terminal: {l}"
        );
    }
    // On a terminal, auto colour is on and a progress bar is drawn on
    // stderr; --quiet drops the bar, --color never the colour.
    let loud = on_terminal(200, &format!("diff {q}"));
    assert!(loud.contains("partitions diffed"), "{loud}");
    assert!(loud.contains('\u{1b}'), "no colour on a terminal");
    let quiet = on_terminal(200, &format!("diff --quiet --color never {q}"));
    assert!(
        !quiet.contains("partitions diffed") && !quiet.contains('\u{1b}'),
        "{quiet}"
    );
    // NO_COLOR turns auto colour off on a terminal too.
    let cmd = format!("stty cols 200; {} diff --quiet {q}", quoted(KLF));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!out.stdout.contains(&0x1b), "{}", text(&out.stdout));
}

#[test]
fn a_selection_that_matches_nothing_says_what_exists_and_exits_2() {
    let cap = kafka("divergence");
    let p = cap.to_str().unwrap();
    for cmd in ["diff", "impact", "elect"] {
        let o = klf(&[cmd, p, "--topic", "orders"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let e = text(&o.stderr);
        assert!(
            e.contains("no partition matches --topic orders; the capture holds ")
                && e.contains("diverge-0 (3 replicas)"),
            "{cmd}: {e}"
        );
    }
    // a --leader that holds no replica is an error, not a fall-back
    let o = klf(&["diff", p, "--leader", "9"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("--leader 9: broker 9 holds no replica") && e.contains("brokers 1, 2, 3"),
        "{e}"
    );
    assert!(o.stdout.is_empty());
    // a leader that exists still works
    assert!(matches!(
        klf(&["diff", p, "--leader", "2"]).status.code(),
        Some(0 | 1)
    ));
}

#[test]
fn flags_are_never_abbreviated_and_sizes_take_suffixes() {
    let seg = kafka("divergence").join("broker-2/diverge-0/00000000000000000000.log");
    let seg = seg.to_str().unwrap();
    // `--offset` is not `--offsets`, nor `--offsets-decoder`
    let o = klf(&["dump", "--offset", seg]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("unexpected argument '--offset'"),
        "{}",
        text(&o.stderr)
    );
    let o = klf(&["diff", "--expl", kafka("divergence").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    // --max-bytes 4K is --max-bytes 4096
    let a = klf(&["dump", "--max-bytes", "4K", seg]);
    let b = klf(&["dump", "--max-bytes", "4096", seg]);
    assert_eq!(a.status.code(), Some(0));
    assert_eq!(a.stdout, b.stdout);
}
