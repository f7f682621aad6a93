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

/// Runs `klf ARGS...` (colour as on a pipe) and waits for it.
pub fn klf(args: &[&str]) -> Output {
    Command::new(KLF)
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run klf")
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
/// Kafka's own kafka-dump-log printed them (`golden/BROKER/PARTITION/*.log.deep.txt`):
/// (offset, key, payload), in file order.
pub fn golden_records(dir: &Path, broker: &str, part: &str) -> Vec<(i64, String, String)> {
    let g = dir.join("golden").join(broker).join(part);
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
/// `kafka_version`.
pub fn golden_release(scenario: &Path) -> String {
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

/// The other releases' kafka-dump-log compared on a capture: the `X.Y` of
/// each `golden-X.Y/` holding an `index.json`, sorted.
pub fn compared_releases(scenario: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(scenario)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let line = n.strip_prefix("golden-")?.to_string();
                    let is_release = line.split('.').count() == 2
                        && line.split('.').all(|p| p.parse::<u8>().is_ok());
                    (is_release && e.path().join("index.json").is_file()).then_some(line)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The golden text of `name` (a path under `golden/`, like
/// `broker-1/t-0/00000000000000000000.log.deep.txt`) as release `line`'s
/// kafka-dump-log prints it: `golden-LINE/NAME` where that release printed
/// something else, else the same under the release its `index.json` names
/// as `base` (a release whose text it shares), else `golden/NAME`.
pub fn golden_file_for(scenario: &Path, name: &str, line: &str) -> PathBuf {
    if line != golden_release(scenario) {
        let dir = scenario.join(format!("golden-{line}"));
        let own = dir.join(name);
        if own.is_file() {
            return own;
        }
        let base = std::fs::read(dir.join("index.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["base"].as_str().map(str::to_string));
        if let Some(b) = base {
            return golden_file_for(scenario, name, &b);
        }
    }
    scenario.join("golden").join(name)
}
