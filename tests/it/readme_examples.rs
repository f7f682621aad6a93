//! Every `klf` command in the examples of the README, of `--help` and of
//! the man pages runs on the committed captures, from a scratch folder:
//! the README's see the repository's `testdata/`; `--help`'s and the man
//! pages' placeholder names (`capture/`, `broker-1`, topic `orders`,
//! `capture.tar.gz`) are laid out there from a real capture. What the
//! examples write lands in the scratch, never in an input.

use std::process::Command;

use crate::common::{finish, klf_command, root, scratch, KLF};

/// A PATH on which `klf` is the binary under test (a link in `dir/bin`).
fn klf_on_path(dir: &std::path::Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(KLF, bin.join("klf")).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The `klf ...` lines of the README's `sh` blocks, comments removed.
fn examples() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if in_sh && line.starts_with("klf ") {
            let cmd = line.split(" # ").next().unwrap_or(line).trim().to_string();
            out.push(cmd);
        }
    }
    out
}

#[test]
fn every_readme_example_runs_on_the_committed_captures() {
    let cmds = examples();
    assert!(cmds.len() >= 10, "{cmds:?}");
    let dir = scratch("readme");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(root().join("testdata"), dir.join("testdata")).unwrap();
    let path = klf_on_path(&dir);
    // what an example writes under ~ (the man pages) lands in the scratch
    std::fs::create_dir_all(dir.join("home")).unwrap();
    for cmd in &cmds {
        let o = Command::new("sh")
            .args(["-c", &format!("{cmd} > stdout.txt")])
            .current_dir(&dir)
            .env("PATH", &path)
            .env("HOME", dir.join("home"))
            .output()
            .unwrap();
        let code = o.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "README example `{cmd}` exited {code:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let printed = std::fs::metadata(dir.join("stdout.txt")).map_or(0, |m| m.len());
        let wrote = [
            "salvaged",
            "incident.html",
            "klf-check.xml",
            "accepted.json",
            "broker-1.klfd",
            "broker-2.klfd",
            "broker-3.klfd",
        ]
        .iter()
        .any(|f| cmd.contains(f) && dir.join(f).exists());
        assert!(
            printed > 0 || wrote,
            "README example `{cmd}` printed and wrote nothing"
        );
    }
    assert!(dir.join("salvaged").is_dir() && dir.join("incident.html").is_file());
    assert!(dir.join("home/.cargo/share/man/man1/klf-diff.1").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The subcommands with a man page of their own (`man/klf-NAME.1`), and
/// the top level (`""`, `man/klf.1`).
fn commands() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| {
            let stem = n.strip_suffix(".1")?;
            Some(stem.strip_prefix("klf-").unwrap_or("").to_string())
        })
        .collect();
    out.sort();
    out
}

/// The `klf ...` lines of an `Examples:` section, in order.
fn examples_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.trim_end() == "Examples:" {
            inside = true;
            continue;
        }
        if inside && !line.starts_with(' ') && !line.trim().is_empty() {
            inside = false;
        }
        if inside {
            if let Some(cmd) = line.strip_prefix("  klf ") {
                out.push(format!("klf {}", cmd.trim_end()));
            }
        }
    }
    out
}

/// A man page's text with the roff escapes its examples use undone.
fn unroff(page: &str) -> String {
    page.replace("\\-", "-")
        .replace("\\*(Aq", "'")
        .replace("\\(aq", "'")
        .replace("\\e", "\\")
        .lines()
        .filter_map(|l| match l.strip_prefix(".SH ") {
            // a section heading ends the one before it
            Some("EXAMPLES") => Some("Examples:"),
            Some(title) => Some(title),
            None => (!l.starts_with('.')).then_some(l),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names the examples use, laid out from the real `impact` capture
/// (Kafka 4.1.1; topic `orders`, three brokers): `capture/` holds
/// `broker-1..3`, which are also in the working folder, with
/// `capture.tar.gz` and `capture.tar.zst` archives of `capture/` and the
/// first segment's files named bare. HOME is a folder of the scratch, with
/// the folders the completion examples write into.
fn lay_out_example_names(dir: &std::path::Path) {
    use std::os::unix::fs::symlink;
    let capture = dir.join("capture");
    for b in ["broker-1", "broker-2", "broker-3"] {
        crate::common::copy_tree(&crate::common::kafka("impact").join(b), &capture.join(b));
        symlink(std::path::Path::new("capture").join(b), dir.join(b)).unwrap();
    }
    for f in ["00000000000000000000.log", "00000000000000000000.index"] {
        symlink(
            std::path::Path::new("capture/broker-1/orders-0").join(f),
            dir.join(f),
        )
        .unwrap();
    }
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all("capture", &capture).unwrap();
    let tar = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    std::fs::write(dir.join("capture.tar.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(
        dir.join("capture.tar.zst"),
        zstd::encode_all(&tar[..], 1).unwrap(),
    )
    .unwrap();
    for d in [
        ".local/share/bash-completion/completions",
        ".zfunc",
        ".config/fish/completions",
    ] {
        std::fs::create_dir_all(dir.join("home").join(d)).unwrap();
    }
}

/// Every file under `dir` (links not followed) with its size: what a
/// command wrote shows as a new or changed entry.
fn listing(dir: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, u64> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path(), e.metadata().unwrap().len());
            }
        }
    }
    out
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

#[test]
fn every_help_and_man_page_example_runs_on_a_real_capture() {
    let mut cmds = Vec::new();
    for name in commands() {
        let mut args: Vec<&str> = Vec::new();
        if !name.is_empty() {
            args.push(&name);
        }
        args.push("--help");
        let o = finish(klf_command().args(&args));
        assert_eq!(o.status.code(), Some(0), "klf {args:?}");
        let help = examples_in(&String::from_utf8(o.stdout).unwrap());
        let page = if name.is_empty() {
            "klf.1".to_string()
        } else {
            format!("klf-{name}.1")
        };
        let man = std::fs::read_to_string(root().join("man").join(&page)).unwrap();
        assert_eq!(
            examples_in(&unroff(&man)),
            help,
            "man/{page} shows the examples `klf {name} --help` shows"
        );
        assert!(!help.is_empty(), "`klf {name} --help` has no example");
        for c in &help {
            assert!(
                name.is_empty() || c.starts_with(&format!("klf {name} ")),
                "an example of `klf {name}` runs another command: {c}"
            );
        }
        cmds.extend(help);
    }
    assert!(cmds.len() >= 25, "{cmds:?}");

    let dir = scratch("help-examples");
    std::fs::create_dir_all(&dir).unwrap();
    lay_out_example_names(&dir);
    let path = klf_on_path(&dir);
    let jq = on_path("jq");
    for cmd in &cmds {
        // without jq, the part of a pipeline klf runs
        let run = match cmd.split_once(" | jq ") {
            Some((left, _)) if !jq => left.to_string(),
            _ => cmd.clone(),
        };
        let before = listing(&dir);
        let redirected = run.contains(" > ");
        let line = if redirected {
            run.clone()
        } else {
            format!("{run} > stdout.txt")
        };
        // a pipeline fails when klf does, not only when its last command does
        let o = Command::new("bash")
            .args(["-o", "pipefail", "-c", &line])
            .current_dir(&dir)
            .env("PATH", &path)
            .env("HOME", dir.join("home"))
            .output()
            .unwrap();
        let code = o.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "example `{cmd}` exited {code:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let target = match run.split_once(" > ") {
            Some((_, to)) => {
                let to = to.split_whitespace().next().unwrap();
                match to.strip_prefix("~/") {
                    Some(rest) => dir.join("home").join(rest),
                    None => dir.join(to),
                }
            }
            None => dir.join("stdout.txt"),
        };
        // a dump prints more than its files' header lines: what it picked
        // (a digest is binary: some bytes are what it printed)
        let bytes = std::fs::read(&target).unwrap();
        let printed = bytes.starts_with(b"KLFDIGST")
            || String::from_utf8_lossy(&bytes).lines().any(|l| {
                !l.is_empty()
                    && !l.starts_with("Dumping ")
                    && !l.starts_with("Log starting offset")
                    && !l.starts_with("KRaft bootstrap snapshot")
            });
        let _ = std::fs::remove_file(&target);
        let after = listing(&dir);
        let wrote = after
            .iter()
            .any(|(p, n)| !p.ends_with("stdout.txt") && before.get(p) != Some(n));
        assert!(
            printed || wrote,
            "example `{cmd}` printed and wrote nothing"
        );
    }
    for written in ["klf-baseline.json", "incident.html"] {
        assert!(dir.join(written).is_file(), "{written}");
    }
    assert!(dir.join("salvaged").is_dir());
    let _ = std::fs::remove_dir_all(&dir);
}
