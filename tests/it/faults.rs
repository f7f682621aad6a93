//! A failing machine is an error, never an answer: faults injected into
//! the real binary's own system calls, in every command.
//!
//! `tests/faults/shim.c` is built here with the C compiler into a shared
//! object and loaded with `LD_PRELOAD` into `klf`: it makes the C library
//! calls Rust's std and memmap2 make on glibc (`open64`, `read`, `pread64`,
//! `opendir`, `readdir64`, `mmap64`, `madvise`, `write`, `writev`, `fsync`)
//! fail on the file a test names, the way a failing disk or a short
//! machine does (EIO mid-file, EMFILE at open, a directory that cannot be
//! listed, a file truncated or grown under klf's feet, a short write and
//! then ENOSPC or EFBIG). Links that cannot be followed, `ulimit -f`,
//! `ulimit -n`, `ulimit -v` and `/dev/full` are real. Each run asserts:
//! exit status 2, the file named on stderr, no temporary file and no
//! output file left, the inputs byte-identical; a fault the command never
//! reached (the shim logs each one it injects) must leave the answer as it
//! is without the fault.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::common::{kafka, klf_command, KLF};

/// The shim, built once per test run into cargo's scratch folder for
/// integration tests; `None` (said loudly) when there is no C compiler.
fn shim() -> Option<&'static Path> {
    static SHIM: OnceLock<Option<PathBuf>> = OnceLock::new();
    SHIM.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faults/shim.c");
        // Built beside the others' under a name of its own, then renamed
        // into place: one file, whatever ran before.
        // (the system's temporary folder when cargo's is not writable: a
        // test binary run by another user than the one who built it)
        let cargo_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let probe = cargo_tmp.join(format!(".klf-probe-{}", std::process::id()));
        let dir = if std::fs::write(&probe, b"").is_ok() {
            let _ = std::fs::remove_file(&probe);
            cargo_tmp.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let out = dir.join(format!("klf-fault-shim-{}.so", user_id()));
        let tmp = dir.join(format!("klf-fault-shim.so.{}", std::process::id()));
        let built = Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-o"])
            .arg(&tmp)
            .arg(&src)
            .args(["-ldl", "-lpthread"])
            .output();
        match built {
            Ok(o) if o.status.success() => {
                std::fs::rename(&tmp, &out).unwrap();
                Some(out)
            }
            Ok(o) => panic!(
                "building the fault shim failed:\n{}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => {
                // CI installs a C compiler (.ci/run): there this is a failure.
                assert!(
                    std::env::var_os("CI").is_none(),
                    "no C compiler (cc) to build the fault shim: {e}"
                );
                eprintln!(
                    "SKIPPED: no C compiler (cc) to build tests/faults/shim.c ({e}); \
                     the fault-injection tests did not run"
                );
                None
            }
        }
    })
    .as_deref()
}

/// The user running the tests (the shim built by one user is not replaced
/// by another's).
fn user_id() -> u32 {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the process's user
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
}

/// A scratch copy of the `unclean` capture (its brokers, without goldens
/// or the `after/` capture), in a folder of its own.
fn capture_copy(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("klf-faults-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let cap = d.join("cap");
    for b in ["broker-1", "broker-2", "broker-3"] {
        copy_dir(&kafka("unclean").join(b), &cap.join(b));
    }
    std::fs::create_dir_all(d.join("out")).unwrap();
    d
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
}

/// Every file under `dir` with its bytes (symlinks as their target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_symlink() {
                let to = std::fs::read_link(e.path()).unwrap();
                out.insert(e.path(), to.into_os_string().into_encoded_bytes());
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// The regular files under `dir` (none for a folder that is gone).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    snapshot(dir).into_keys().collect()
}

/// A fault for the shim.
#[derive(Clone)]
struct Fault {
    name: &'static str,
    /// `KLF_FAULT`.
    kind: &'static str,
    /// `KLF_FAULT_PATH`: the file (or folder) as klf names it.
    path: String,
    errno: &'static str,
    after: u64,
    /// More environment (`KLF_NO_MMAP`, `KLF_READ_WINDOW`).
    env: Vec<(&'static str, &'static str)>,
}

/// What a run gave.
struct Ran {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    /// Lines the shim logged, one per fault it injected.
    fired: usize,
}

/// Runs `klf ARGS` with `fault` injected (none: a plain run), two worker
/// threads, and the read-path variables only as the fault sets them.
fn run(args: &[String], fault: Option<&Fault>, log: &Path) -> Ran {
    let _ = std::fs::remove_file(log);
    let mut c = klf_command();
    c.args(args)
        .stdin(Stdio::null())
        .env("RAYON_NUM_THREADS", "2")
        .env_remove("KLF_NO_MMAP")
        .env_remove("KLF_READ_WINDOW")
        .env_remove("NO_COLOR");
    if let Some(f) = fault {
        c.env("LD_PRELOAD", shim().unwrap())
            .env("KLF_FAULT", f.kind)
            .env("KLF_FAULT_PATH", &f.path)
            .env("KLF_FAULT_ERRNO", f.errno)
            .env("KLF_FAULT_AFTER", f.after.to_string())
            .env("KLF_FAULT_LOG", log)
            .envs(f.env.iter().copied());
    }
    let o = c.output().expect("run klf");
    Ran {
        code: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        fired: std::fs::read_to_string(log).map_or(0, |s| s.lines().count()),
    }
}

/// Every command that reads a capture, as (name, arguments): `part` is
/// the partition directory `dump` reads, `out` a folder for what the
/// writing commands write.
fn commands(cap: &Path, part: &Path, out: &Path) -> Vec<(&'static str, Vec<String>)> {
    let c = cap.display().to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "dump",
            s(&["dump", "--deep-iteration", &part.display().to_string()]),
        ),
        ("diff", s(&["diff", &c])),
        ("impact", s(&["impact", &c])),
        (
            "salvage",
            s(&[
                "salvage",
                &c,
                "--out",
                &out.join("salvaged").display().to_string(),
            ]),
        ),
        ("elect", s(&["elect", &c])),
        ("timeline", s(&["timeline", &c])),
        ("check", s(&["check", &c])),
        ("check-junit", s(&["check", "--format", "junit", &c])),
        (
            "check-baseline",
            s(&[
                "check",
                &c,
                "--write-baseline",
                &out.join("baseline.json").display().to_string(),
            ]),
        ),
        (
            "report",
            s(&[
                "report",
                &c,
                "--html",
                &out.join("report.html").display().to_string(),
            ]),
        ),
    ]
}

/// What must hold after a run a read fault reached: exit 2, the file
/// named, no temporary file anywhere, nothing written under `out` by a
/// command that writes only on success (report, check's baseline).
fn assert_failed_read(what: &str, r: &Ran, named: &str, out: &Path) {
    assert_eq!(
        r.code,
        Some(2),
        "{what}: a failed read must exit 2:\n{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(named),
        "{what}: {named} is not named on stderr:\n{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{what}:\n{}", r.stderr);
    let left: Vec<PathBuf> = files_under(out)
        .into_iter()
        .filter(|p| {
            let n = p.to_string_lossy();
            n.contains(".klf-") || n.ends_with("report.html") || n.ends_with("baseline.json")
        })
        .collect();
    assert!(left.is_empty(), "{what}: left behind {left:?}");
}

/// Runs every command under each of `faults` on the capture in `dir`
/// (shared: the faults do not change it) and checks the runs; returns
/// how many runs the faults reached.
fn read_faults_on_shared_copy(dir: &Path, faults: &[Fault], every: &[&str]) -> usize {
    let cap = dir.join("cap");
    let part = cap.join("broker-3/unclean-0");
    let before = snapshot(&cap);
    // Without a fault: what each command answers.
    let base_out = dir.join("out/base");
    std::fs::create_dir_all(&base_out).unwrap();
    let base: BTreeMap<&str, (Option<i32>, Vec<u8>)> = commands(&cap, &part, &base_out)
        .into_iter()
        .map(|(name, args)| {
            let r = run(&args, None, &dir.join("base.log"));
            assert!(matches!(r.code, Some(0 | 1)), "{name}: {}", r.stderr);
            (name, (r.code, r.stdout))
        })
        .collect();
    let mut reached = 0;
    for f in faults {
        let results: Vec<(&str, Ran, PathBuf)> = std::thread::scope(|s| {
            let handles: Vec<_> = commands(&cap, &part, &dir.join("out"))
                .into_iter()
                .map(|(name, _)| {
                    let out = dir.join("out").join(format!("{}-{name}", f.name));
                    std::fs::create_dir_all(&out).unwrap();
                    let args = commands(&cap, &part, &out)
                        .into_iter()
                        .find(|(n, _)| *n == name)
                        .unwrap()
                        .1;
                    let log = dir.join(format!("{}-{name}.log", f.name));
                    s.spawn(move || (name, run(&args, Some(f), &log), out))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (name, r, out) in results {
            let what = format!("{} under {}", name, f.name);
            if r.fired == 0 {
                // Never reached: the answer is the one without the fault.
                assert!(
                    !every.contains(&f.name),
                    "{what}: the fault was never injected (the shim missed the call)"
                );
                let (code, stdout) = &base[name];
                assert_eq!(&r.code, code, "{what}: {}", r.stderr);
                assert!(
                    &r.stdout == stdout,
                    "{what}: stdout differs from a run without the fault"
                );
                continue;
            }
            reached += 1;
            assert_failed_read(&what, &r, &f.path, &out);
        }
    }
    assert!(snapshot(&cap) == before, "the capture changed");
    reached
}

#[test]
fn read_faults_in_every_command_exit_2_naming_the_file() {
    if shim().is_none() {
        return;
    }
    let dir = capture_copy("reads");
    let cap = dir.join("cap");
    let p3 = cap.join("broker-3/unclean-0");
    let seg = p3.join("00000000000000000000.log").display().to_string();
    let f = |name, kind, path: String, errno, after| Fault {
        name,
        kind,
        path,
        errno,
        after,
        env: Vec::new(),
    };
    let mut eio_windowed = f("eio-segment-windowed", "read", seg.clone(), "EIO", 4000);
    eio_windowed.env = vec![("KLF_NO_MMAP", "1"), ("KLF_READ_WINDOW", "1K")];
    let faults = vec![
        f("eio-segment", "read", seg.clone(), "EIO", 4000),
        eio_windowed,
        f("emfile-segment", "open", seg.clone(), "EMFILE", 0),
        f("enfile-segment", "open", seg.clone(), "ENFILE", 0),
        f(
            "eio-index",
            "read",
            p3.join("00000000000000000000.index").display().to_string(),
            "EIO",
            0,
        ),
        f(
            "eio-leader-epoch-checkpoint",
            "read",
            p3.join("leader-epoch-checkpoint").display().to_string(),
            "EIO",
            0,
        ),
        f(
            "eio-high-watermark-checkpoint",
            "read",
            cap.join("broker-3/replication-offset-checkpoint")
                .display()
                .to_string(),
            "EIO",
            0,
        ),
        f(
            "unlistable-partition",
            "opendir",
            p3.display().to_string(),
            "EACCES",
            0,
        ),
        f(
            "listing-fails",
            "readdir",
            p3.display().to_string(),
            "EIO",
            0,
        ),
    ];
    // Every command reads the segment and lists the partition folder.
    let every = [
        "eio-segment",
        "eio-segment-windowed",
        "emfile-segment",
        "enfile-segment",
        "unlistable-partition",
        "listing-fails",
        "eio-leader-epoch-checkpoint",
    ];
    let reached = read_faults_on_shared_copy(&dir, &faults, &every);
    eprintln!("{reached} runs reached their fault");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_segment_that_is_a_dangling_link_or_a_loop_is_unreadable_not_empty() {
    let dir = capture_copy("links");
    let cap = dir.join("cap");
    let seg = cap.join("broker-3/unclean-0/00000000000000000000.log");
    let part = cap.join("broker-3/unclean-0");
    for (kind, target) in [("dangling", dir.join("nowhere.log")), ("loop", seg.clone())] {
        std::fs::remove_file(&seg).unwrap();
        std::os::unix::fs::symlink(&target, &seg).unwrap();
        let before = snapshot(&cap);
        std::fs::create_dir_all(dir.join("out").join(kind)).unwrap();
        for (name, args) in commands(&cap, &part, &dir.join("out").join(kind)) {
            let r = run(&args, None, &dir.join("links.log"));
            let what = format!("{name} with a {kind} link for the only segment of a replica");
            assert_failed_read(
                &what,
                &r,
                &seg.display().to_string(),
                &dir.join("out").join(kind),
            );
            if name == "diff" {
                assert!(!r.stderr.contains("nothing lost"), "{what}: {}", r.stderr);
            }
        }
        assert!(snapshot(&cap) == before, "{kind}: the capture changed");
        std::fs::remove_file(&seg).unwrap();
        std::fs::copy(
            kafka("unclean").join("broker-3/unclean-0/00000000000000000000.log"),
            &seg,
        )
        .unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A copy whose broker-3 segment is the real one five times over: 70 KB,
/// over the size from which klf maps a file, and old (mapped whatever
/// the `.lock` rule says).
fn mapped_copy(tag: &str) -> PathBuf {
    let dir = capture_copy(tag);
    let seg = dir.join("cap/broker-3/unclean-0/00000000000000000000.log");
    let one = std::fs::read(&seg).unwrap();
    std::fs::write(&seg, one.repeat(5)).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_modified(old)
        .unwrap();
    dir
}

#[test]
fn a_file_that_shrinks_or_grows_while_read_is_an_io_error_not_damage() {
    if shim().is_none() {
        return;
    }
    // Each run changes its copy (that is the fault): a copy per run.
    // (case, shim fault, byte it happens at, environment, mapped)
    type Case = (
        &'static str,
        &'static str,
        u64,
        Vec<(&'static str, &'static str)>,
        bool,
    );
    let cases: Vec<Case> = vec![
        (
            "shrink-read",
            "shrink",
            4000,
            vec![("KLF_NO_MMAP", "1")],
            false,
        ),
        (
            "shrink-windowed",
            "shrink",
            4000,
            vec![("KLF_NO_MMAP", "1"), ("KLF_READ_WINDOW", "1K")],
            false,
        ),
        (
            "grow-windowed",
            "grow",
            4000,
            vec![("KLF_NO_MMAP", "1"), ("KLF_READ_WINDOW", "1K")],
            false,
        ),
        ("shrink-mapped", "shrink-mapped", 4000, vec![], true),
        ("shrink-mapped-late", "shrink-mapped", 60000, vec![], true),
    ];
    let names: Vec<&str> = {
        let d = Path::new("/nonexistent");
        commands(d, d, d).into_iter().map(|(n, _)| n).collect()
    };
    std::thread::scope(|s| {
        for (case, kind, after, env, mapped) in &cases {
            for name in &names {
                s.spawn(move || {
                    let tag = format!("{case}-{name}");
                    let dir = if *mapped {
                        mapped_copy(&tag)
                    } else {
                        capture_copy(&tag)
                    };
                    let cap = dir.join("cap");
                    let part = cap.join("broker-3/unclean-0");
                    let seg = part.join("00000000000000000000.log").display().to_string();
                    let out = dir.join("out");
                    let args = commands(&cap, &part, &out)
                        .into_iter()
                        .find(|(n, _)| n == name)
                        .unwrap()
                        .1;
                    let f = Fault {
                        name: case,
                        kind,
                        path: seg.clone(),
                        errno: "EIO",
                        after: *after,
                        env: env.clone(),
                    };
                    let r = run(&args, Some(&f), &dir.join("fault.log"));
                    let what = format!("{name} under {case}");
                    assert!(r.fired > 0, "{what}: the fault was never injected");
                    assert_failed_read(&what, &r, &seg, &out);
                    assert!(
                        r.stderr.contains("changed while klf read it"),
                        "{what}: the change is not said:\n{}",
                        r.stderr
                    );
                    // Never taken for damage in the evidence.
                    for damage in [
                        "torn tail",
                        "CRC mismatch",
                        "segment-torn-tail",
                        "smaller than minimum",
                    ] {
                        let said = String::from_utf8_lossy(&r.stdout).contains(damage)
                            || r.stderr.contains(damage);
                        assert!(
                            !said,
                            "{what}: reported as damage ({damage}):\n{}",
                            r.stderr
                        );
                    }
                    std::fs::remove_dir_all(&dir).unwrap();
                });
            }
        }
    });
}

/// The writing commands, each with the file or folder it writes.
fn writers(cap: &Path, out: &Path) -> Vec<(&'static str, Vec<String>, PathBuf)> {
    let c = cap.display().to_string();
    let report = out.join("report.html");
    let salvaged = out.join("salvaged");
    let baseline = out.join("baseline.json");
    vec![
        (
            "report",
            vec![
                "report".into(),
                c.clone(),
                "--html".into(),
                report.display().to_string(),
            ],
            report,
        ),
        (
            "salvage",
            vec![
                "salvage".into(),
                c.clone(),
                "--out".into(),
                salvaged.display().to_string(),
            ],
            salvaged,
        ),
        (
            "check-baseline",
            vec![
                "check".into(),
                c,
                "--write-baseline".into(),
                baseline.display().to_string(),
            ],
            baseline,
        ),
    ]
}

#[test]
fn a_failed_write_leaves_no_file_and_exits_2_naming_the_output() {
    if shim().is_none() {
        return;
    }
    let dir = capture_copy("writes");
    let cap = dir.join("cap");
    let before = snapshot(&cap);
    let faults: Vec<(&str, &str, &str, u64)> = vec![
        ("efbig", "write", "EFBIG", 100),
        ("enospc", "write", "ENOSPC", 100),
        ("eio-at-sync", "fsync", "EIO", 0),
    ];
    for (fname, kind, errno, after) in &faults {
        for (name, args, target) in writers(&cap, &dir.join("out").join(fname)) {
            let out = dir.join("out").join(fname);
            std::fs::create_dir_all(&out).unwrap();
            let f = Fault {
                name: fname,
                kind,
                path: out.display().to_string(),
                errno,
                after: *after,
                env: Vec::new(),
            };
            let r = run(&args, Some(&f), &dir.join("write.log"));
            let what = format!("{name} under {fname}");
            assert!(r.fired > 0, "{what}: the fault was never injected");
            assert_eq!(r.code, Some(2), "{what}:\n{}", r.stderr);
            let shown = target.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                r.stderr.contains(&shown),
                "{what}: the output is not named:\n{}",
                r.stderr
            );
            let left = files_under(&out);
            assert!(left.is_empty(), "{what}: left behind {left:?}");
            std::fs::remove_dir_all(&out).unwrap();
        }
    }
    // The real file size limit: SIGXFSZ ignored, EFBIG reported.
    for (name, args, target) in writers(&cap, &dir.join("out/ulimit")) {
        let out = dir.join("out/ulimit");
        std::fs::create_dir_all(&out).unwrap();
        let o = Command::new("sh")
            .arg("-c")
            .arg("ulimit -f 1; exec \"$@\"")
            .arg("sh")
            .arg(KLF)
            .args(&args)
            .env("RAYON_NUM_THREADS", "2")
            .stdout(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{name} under ulimit -f: {:?}\n{err}",
            o.status
        );
        assert!(err.contains("File too large"), "{name}: {err}");
        let shown = target.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            err.contains(&shown),
            "{name}: the output is not named: {err}"
        );
        let left = files_under(&out);
        assert!(
            left.is_empty(),
            "{name} under ulimit -f: left behind {left:?}"
        );
        std::fs::remove_dir_all(&out).unwrap();
    }
    assert!(snapshot(&cap) == before, "the capture changed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_write_to_stdout_exits_2() {
    let dir = capture_copy("stdout");
    let cap = dir.join("cap");
    let part = cap.join("broker-3/unclean-0");
    let mut runs: Vec<(&str, Vec<String>)> = commands(&cap, &part, &dir.join("out"))
        .into_iter()
        .filter(|(n, _)| !matches!(*n, "salvage" | "report" | "check-baseline"))
        .collect();
    runs.push((
        "report-stdout",
        vec![
            "report".into(),
            cap.display().to_string(),
            "--html".into(),
            "-".into(),
        ],
    ));
    runs.push(("completions", vec!["completions".into(), "bash".into()]));
    for (name, args) in &runs {
        // A full disk: /dev/full refuses every write.
        let o = klf_command()
            .args(args)
            .env("RAYON_NUM_THREADS", "2")
            .stdout(
                std::fs::File::options()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name} > /dev/full: {err}");
        assert_eq!(
            err.matches("cannot write to stdout").count(),
            1,
            "{name} > /dev/full: said once: {err}"
        );
        // A short write, then EFBIG (the shim).
        if shim().is_some() {
            let f = Fault {
                name: "stdout",
                kind: "write",
                path: "<stdout>".into(),
                errno: "EFBIG",
                after: 100,
                env: Vec::new(),
            };
            let r = run(args, Some(&f), &dir.join("stdout.log"));
            assert!(r.fired > 0, "{name}: the fault was never injected");
            assert_eq!(r.code, Some(2), "{name}: {}", r.stderr);
            assert!(r.stdout.len() <= 100, "{name}: more than the short write");
            assert!(
                r.stderr.contains("cannot write to stdout: File too large"),
                "{name}: {}",
                r.stderr
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn too_few_file_descriptors_never_give_a_partial_answer_exit_0_or_1() {
    let dir = capture_copy("fds");
    let cap = dir.join("cap");
    let c = cap.display().to_string();
    let mut refused = 0;
    for cmd in ["dump", "timeline", "elect"] {
        let want = run(&[cmd.into(), c.clone()], None, &dir.join("fds.log"));
        assert!(matches!(want.code, Some(0 | 1)), "{cmd}: {}", want.stderr);
        for (i, threads) in [2, 16, 16, 16].iter().enumerate() {
            let o = Command::new("sh")
                .arg("-c")
                .arg("ulimit -n 4; exec \"$@\"")
                .arg("sh")
                .arg(KLF)
                .args([cmd, &c])
                .env("RAYON_NUM_THREADS", threads.to_string())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            if o.status.code() == Some(2) {
                assert!(err.contains("Too many open files"), "{cmd} run {i}: {err}");
                refused += 1;
            } else {
                assert_eq!(o.status.code(), want.code, "{cmd} run {i}: {err}");
                assert!(
                    o.stdout == want.stdout,
                    "{cmd} run {i}: exit {:?} with a partial answer",
                    o.status.code()
                );
            }
        }
    }
    eprintln!("{refused} of 12 runs under ulimit -n 4 ended with exit 2");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn memory_refused_ends_with_klfs_one_line_and_no_backtrace() {
    let cap = kafka("unclean");
    let under = |mib: u64, args: &[&str]| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {}; exec \"$@\"", mib * 1024))
            .arg("sh")
            .arg(KLF)
            .args(args)
            .env("RAYON_NUM_THREADS", "2")
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap()
    };
    // From where the binary barely starts to where it runs in full.
    let base = (8..256)
        .step_by(4)
        .find(|&m| under(m, &["--version"]).status.code() == Some(0))
        .expect("klf starts under 256 MiB");
    let c = cap.display().to_string();
    let mut refused = 0;
    for mib in (base..base + 40).step_by(4) {
        let o = under(mib, &["diff", "--records", &c]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code().is_some(),
            "{mib} MiB: killed by a signal: {err}"
        );
        if o.status.code() == Some(2) {
            refused += 1;
            // Rust's own lines (the allocation that failed, a backtrace)
            // never show; klf's line ends the output. (A refusal inside
            // the C library, such as glibc's "failed to register TLS
            // destructor", is glibc's line, then klf's.)
            assert!(!err.contains("memory allocation of"), "{mib} MiB: {err}");
            assert!(!err.contains("backtrace"), "{mib} MiB: {err}");
            assert!(!err.contains("panicked"), "{mib} MiB: {err}");
            assert!(
                err.trim_end()
                    .lines()
                    .last()
                    .is_some_and(|l| l.starts_with("klf: ")),
                "{mib} MiB: klf's line is not the last: {err}"
            );
        }
    }
    assert!(refused > 0, "no limit from {base} MiB refused memory");
}
