//! Every `klf` command in the README's examples runs on the committed
//! captures: from a scratch folder that sees the repository's `testdata/`,
//! so the files the examples write land there, never in an input.

use std::process::Command;

use crate::common::{root, scratch, KLF};

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
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(KLF, bin.join("klf")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for cmd in &cmds {
        let o = Command::new("sh")
            .args(["-c", &format!("{cmd} > stdout.txt")])
            .current_dir(&dir)
            .env("PATH", &path)
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
        ]
        .iter()
        .any(|f| cmd.contains(f) && dir.join(f).exists());
        assert!(
            printed > 0 || wrote,
            "README example `{cmd}` printed and wrote nothing"
        );
    }
    assert!(dir.join("salvaged").is_dir() && dir.join("incident.html").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
