//! Helpers every test module shares.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub const KLF: &str = env!("CARGO_BIN_EXE_klf");

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A committed real-Kafka capture: `testdata/kafka/NAME`.
pub fn kafka(name: &str) -> PathBuf {
    root().join("testdata/kafka").join(name)
}

/// Every committed capture (a folder with a `scenario.json`), sorted.
pub fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/kafka"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("scenario.json").is_file())
        .collect();
    v.sort();
    v
}

/// Every capture with a `scenario.json`: the committed ones, then those of
/// a fresh Kafka run CI made (`KLF_FRESH_CAPTURES`), each set sorted.
pub fn scenario_dirs() -> Vec<PathBuf> {
    let mut roots = vec![root().join("testdata/kafka")];
    if let Ok(extra) = std::env::var("KLF_FRESH_CAPTURES") {
        roots.push(PathBuf::from(extra));
    }
    let mut out = Vec::new();
    for r in roots {
        let Ok(rd) = std::fs::read_dir(&r) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("scenario.json").is_file())
            .collect();
        dirs.sort();
        out.extend(dirs);
    }
    out
}

/// The one way a test starts klf: a command for the binary under test, to
/// which a test adds what it needs (arguments, environment, folder, pipes),
/// then runs with [`finish`] (or spawns itself when it talks to klf while
/// it runs).
/// Every `.rs` file under `dir` of the sources (`src/model`, ...), in
/// path order.
pub fn rust_sources(dir: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root().join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no sources under {dir}");
    files
}

pub fn klf_command() -> Command {
    let mut c = Command::new(KLF);
    c.stdin(Stdio::null());
    c
}

/// How long a klf run in a test may take before it is taken for a hang:
/// long enough for the slowest command on a loaded machine, so that only a
/// klf that never ends fails on it.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs `cmd` (made by [`klf_command`]) to its end and returns what it
/// wrote. A run that outlasts [`HANG`] is killed and fails the test, as
/// does one ended by a signal (a crash is never an answer).
pub fn finish(cmd: &mut Command) -> Output {
    finish_within(cmd, HANG)
}

/// [`finish`] with another deadline (a hostile input that must not make
/// klf loop is given less).
pub fn finish_within(cmd: &mut Command, hang: std::time::Duration) -> Output {
    let shown = format!("{:?}", cmd.get_args().collect::<Vec<_>>());
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run klf");
    let pid = child.id();
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if wait.recv_timeout(hang).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            return true;
        }
        false
    });
    let out = child.wait_with_output().expect("wait for klf");
    let _ = done.send(());
    assert!(
        !watchdog.join().unwrap(),
        "klf {shown} hung: killed after {hang:?}"
    );
    assert!(
        out.status.code().is_some(),
        "klf {shown} was ended by a signal ({:?}); stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `klf ARGS...` (colour as on a pipe) and waits for it.
pub fn klf<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    let mut c = klf_command();
    c.args(args).env_remove("NO_COLOR");
    finish(&mut c)
}

/// Runs klf on hostile input: it must end within a minute, with one of its
/// exit codes (0, 1, 2) and without a panic. Exit code, stdout, stderr.
pub fn klf_hostile<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(
    args: &[S],
) -> (i32, String, String) {
    let mut c = klf_command();
    c.args(args);
    let out = Ran::from(finish_within(&mut c, std::time::Duration::from_secs(60)));
    let code = out.code.unwrap_or(-1);
    assert!(
        !out.stderr.contains("panicked"),
        "klf {args:?} panicked: {}",
        out.stderr
    );
    assert!(matches!(code, 0..=2), "klf {args:?} exited {code}");
    (code, out.stdout, out.stderr)
}

/// What a klf run ended with, as text.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Ran {
    fn from(o: Output) -> Ran {
        Ran {
            code: o.status.code(),
            stdout: text(&o.stdout),
            stderr: text(&o.stderr),
        }
    }
}

/// Runs `klf ARGS...` and returns its exit code, stdout and stderr as text.
pub fn ran<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Ran {
    Ran::from(klf(args))
}

/// Runs `klf ARGS...` with the read-path variables unset and then `env`
/// set: exit code, stdout, stderr.
pub fn klf_env(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let mut c = klf_command();
    c.args(args)
        .env_remove("KLF_NO_MMAP")
        .env_remove("KLF_READ_WINDOW")
        .envs(env.iter().copied());
    let o = finish(&mut c);
    (o.status.code(), o.stdout, o.stderr)
}

/// A new, empty folder under the system's temporary directory, unique to
/// this process and `tag`.
pub fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("klf-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A copy of the tree at `src` in `dst`, without `golden/` folders.
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "golden" {
                copy_tree(&e.path(), &to);
            }
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// Bytes as text, lossily.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A klf run measured by [`klf_measured`].
pub struct Run {
    pub code: Option<i32>,
    pub stderr: String,
    pub max_rss_kib: i64,
}

/// Runs klf, with its peak resident memory. The run is started by a small
/// Python process, not by this test binary: a child's peak memory counts
/// the pages of the process it was forked from, and this one holds other
/// tests' buffers.
pub fn klf_measured(args: &[&str]) -> Run {
    klf_measured_env(args, &[])
}

/// [`klf_measured`] with environment variables set for klf.
pub fn klf_measured_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    const MEASURE: &str = "import resource, subprocess, sys\n\
        p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n\
        print('klf-test-maxrss', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n\
        sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)\n";
    let o = Command::new("python3")
        .arg("-c")
        .arg(MEASURE)
        .arg(KLF)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let max_rss_kib = stderr
        .lines()
        .find_map(|l| l.strip_prefix("klf-test-maxrss "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(i64::MAX);
    Run {
        code: o.status.code(),
        stderr,
        max_rss_kib,
    }
}

/// The data records (control batches left out) of a captured replica as
/// Kafka's own kafka-dump-log printed them (`golden/BROKER/PARTITION/*.log.deep.txt`,
/// or `golden/BROKER/DIR/PARTITION/` for a node with several log
/// directories, `broker-1/d2`): (offset, key, payload), in file order.
pub fn golden_records(dir: &Path, broker: &str, part: &str) -> Vec<(i64, String, String)> {
    let node = dir.join("golden").join(broker);
    let g = std::iter::once(node.join(part))
        .chain(
            std::fs::read_dir(&node)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path().join(part)),
        )
        .find(|p| p.is_dir())
        .unwrap_or_else(|| node.join(part));
    let Ok(rd) = std::fs::read_dir(&g) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".log.deep.txt"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let mut control = false;
        for line in std::fs::read_to_string(f).unwrap().lines() {
            if line.starts_with("baseOffset:") {
                control = line.contains("isControl: true");
            } else if let Some(rest) = line.strip_prefix("| offset: ") {
                if control {
                    continue;
                }
                let off: i64 = rest.split(' ').next().unwrap().parse().unwrap();
                let key = rest
                    .split(" key: ")
                    .nth(1)
                    .and_then(|k| k.split(" payload: ").next());
                let payload = rest.split(" payload: ").nth(1);
                out.push((
                    off,
                    key.unwrap_or("").to_string(),
                    payload.unwrap_or("").to_string(),
                ));
            }
        }
    }
    out
}

/// The release line ("4.1") whose kafka-dump-log made a capture's `golden/`:
/// `golden_kafka_version` of its `scenario.json`, else the writer's
/// `kafka_version`. Read once per capture.
pub fn golden_release(scenario: &Path) -> String {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = cache.lock().unwrap().get(scenario) {
        return v.clone();
    }
    let v = read_golden_release(scenario);
    cache
        .lock()
        .unwrap()
        .insert(scenario.to_path_buf(), v.clone());
    v
}

fn read_golden_release(scenario: &Path) -> String {
    let facts: serde_json::Value = serde_json::from_slice(
        &std::fs::read(scenario.join("scenario.json")).expect("scenario.json"),
    )
    .expect("scenario.json is JSON");
    let v = facts["golden_kafka_version"]
        .as_str()
        .or_else(|| facts["kafka_version"].as_str())
        .expect("a kafka_version");
    v.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// The archive a capture's per-release golden folders (`golden-X.Y/`) are
/// packed in (`oracle.py golden-pack`): a tar, zstd-compressed, of those
/// folders (their text is mostly the same, so together they compress to a
/// few hundred KB where the folders take megabytes).
pub const GOLDEN_ARCHIVE: &str = "golden-releases.tar.zst";

/// Golden files by path.
pub type GoldenFiles = std::collections::BTreeMap<String, Vec<u8>>;

/// Every file of a capture's per-release golden folders, by its path
/// (`golden-3.2/broker-1/t-0/00000000000000000000.log.shallow.txt`): from
/// the packed archive and from plain `golden-X.Y/` folders beside it.
/// Read once per capture.
pub fn release_goldens(scenario: &Path) -> std::sync::Arc<GoldenFiles> {
    use std::collections::{BTreeMap, HashMap};
    use std::sync::{Arc, Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<GoldenFiles>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(m) = cache.lock().unwrap().get(scenario) {
        return m.clone();
    }
    let mut files = BTreeMap::new();
    let archive = scenario.join(GOLDEN_ARCHIVE);
    if archive.is_file() {
        let f = std::fs::File::open(&archive).expect("open the golden archive");
        let mut dec = zstd::stream::read::Decoder::new(f).expect("zstd");
        dec.window_log_max(31).expect("window");
        let mut tar = tar::Archive::new(dec);
        for entry in tar.entries().expect("tar entries") {
            let mut entry = entry.expect("tar entry");
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let name = entry
                .path()
                .expect("entry path")
                .to_string_lossy()
                .into_owned();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).expect("read entry");
            files.insert(name, data);
        }
    }
    fn walk(dir: &Path, prefix: &str, files: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = format!("{prefix}/{}", e.file_name().to_string_lossy());
            if e.path().is_dir() {
                walk(&e.path(), &name, files);
            } else {
                files.insert(name, std::fs::read(e.path()).expect("read golden"));
            }
        }
    }
    for line in plain_release_dirs(scenario) {
        let dir = format!("golden-{line}");
        walk(&scenario.join(&dir), &dir, &mut files);
    }
    let m = Arc::new(files);
    cache
        .lock()
        .unwrap()
        .insert(scenario.to_path_buf(), m.clone());
    m
}

/// The `X.Y` of a `golden-X.Y` name.
fn release_of(dir: &str) -> Option<String> {
    let line = dir.strip_prefix("golden-")?;
    (line.split('.').count() == 2 && line.split('.').all(|p| p.parse::<u8>().is_ok()))
        .then(|| line.to_string())
}

fn plain_release_dirs(scenario: &Path) -> Vec<String> {
    std::fs::read_dir(scenario)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| release_of(&e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default()
}

/// The other releases' kafka-dump-log compared on a capture: the `X.Y` of
/// each `golden-X.Y/` holding an `index.json`, sorted. Found once per
/// capture.
pub fn compared_releases(scenario: &Path) -> Vec<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Vec<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = cache.lock().unwrap().get(scenario) {
        return v.clone();
    }
    let v = find_compared_releases(scenario);
    cache
        .lock()
        .unwrap()
        .insert(scenario.to_path_buf(), v.clone());
    v
}

fn find_compared_releases(scenario: &Path) -> Vec<String> {
    let files = release_goldens(scenario);
    let mut v: Vec<String> = files
        .keys()
        .filter_map(|k| {
            let (dir, rest) = k.split_once('/')?;
            (rest == "index.json").then(|| release_of(dir)).flatten()
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The files of `golden-LINE/` whose name ends with `suffix`: (path under
/// the folder, bytes).
pub fn release_golden_files(scenario: &Path, line: &str, suffix: &str) -> Vec<(String, Vec<u8>)> {
    let prefix = format!("golden-{line}/");
    release_goldens(scenario)
        .iter()
        .filter_map(|(k, v)| {
            let rest = k.strip_prefix(&prefix)?;
            rest.ends_with(suffix)
                .then(|| (rest.to_string(), v.clone()))
        })
        .collect()
}

/// The golden text of `name` (a path under `golden/`, like
/// `broker-1/t-0/00000000000000000000.log.deep.txt`) as release `line`'s
/// kafka-dump-log prints it: `golden-LINE/NAME` where that release printed
/// something else, else the same under the release its `index.json` names
/// as `base` (a release whose text it shares), else `golden/NAME`.
pub fn golden_bytes(scenario: &Path, name: &str, line: &str) -> Vec<u8> {
    if line != golden_release(scenario) {
        let files = release_goldens(scenario);
        if let Some(b) = files.get(&format!("golden-{line}/{name}")) {
            return b.clone();
        }
        if let Some(b) = golden_base(scenario, line, &files) {
            return golden_bytes(scenario, name, &b);
        }
    }
    std::fs::read(scenario.join("golden").join(name)).expect("read golden")
}

/// The `base` that `golden-LINE/index.json` names, read once per capture
/// and release.
fn golden_base(scenario: &Path, line: &str, files: &GoldenFiles) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Bases = HashMap<(PathBuf, String), Option<String>>;
    static CACHE: OnceLock<Mutex<Bases>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (scenario.to_path_buf(), line.to_string());
    if let Some(v) = cache.lock().unwrap().get(&key) {
        return v.clone();
    }
    let base = files
        .get(&format!("golden-{line}/index.json"))
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
        .and_then(|v| v["base"].as_str().map(str::to_string));
    cache.lock().unwrap().insert(key, base.clone());
    base
}

/// Every entry under `dir` with its kind, length, mode, modification time
/// and bytes: two calls compare equal when nothing under `dir` changed.
pub fn tree_state(
    dir: &Path,
) -> std::collections::BTreeMap<PathBuf, (bool, u64, u32, std::time::SystemTime, Vec<u8>)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let bytes = if m.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                if m.is_dir() {
                    stack.push(p.clone());
                }
                Vec::new()
            };
            out.insert(
                p,
                (m.is_dir(), m.len(), m.mode(), m.modified().unwrap(), bytes),
            );
        }
    }
    out
}

/// Kafka's own log files under a capture folder `dir` (`server.log*`,
/// `controller.log*`, `state-change.log*` in its node folders, not in
/// `after/` or `golden/`), sorted.
pub fn kafka_log_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if depth < 3 && name != "after" && name != "golden" {
                    walk(&p, depth + 1, out);
                }
            } else if name.starts_with("server.log")
                || name.starts_with("controller.log")
                || name.starts_with("state-change.log")
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, 0, &mut out);
    out.sort();
    out
}

/// The captures of [`scenario_dirs`] that hold Kafka's own logs.
pub fn captures_with_logs() -> Vec<PathBuf> {
    scenario_dirs()
        .into_iter()
        .filter(|d| !kafka_log_files(d).is_empty())
        .collect()
}

/// The captures of [`scenario_dirs`] whose `scenario.json` holds `key`
/// (`"impact_truth"`, `"share_truth"`).
pub fn scenario_dirs_with(key: &str) -> Vec<PathBuf> {
    let quoted = format!("\"{key}\"");
    scenario_dirs()
        .into_iter()
        .filter(|d| {
            std::fs::read_to_string(d.join("scenario.json")).is_ok_and(|s| s.contains(&quoted))
        })
        .collect()
}

/// The `broker-N` folders of a capture folder, as paths in text, sorted.
pub fn broker_folders(dir: &Path) -> Vec<String> {
    node_folders(dir)
        .into_iter()
        .filter(|(n, _)| n.starts_with("broker-"))
        .map(|(_, p)| p.display().to_string())
        .collect()
}

/// The node folders of a capture folder (`broker-N`, `controller-N`), by
/// name, sorted.
pub fn node_folders(cap: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(cap)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(n, _)| {
            n.strip_prefix("broker-")
                .or_else(|| n.strip_prefix("controller-"))
                .is_some_and(|id| id.parse::<u32>().is_ok())
        })
        .collect();
    v.sort();
    v
}
