//! Evidence is never modified: every subcommand leaves the capture it reads
//! byte-identical (contents, sizes and modification times).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                out.insert(
                    p.clone(),
                    (std::fs::read(&p).unwrap(), meta.modified().unwrap()),
                );
            }
        }
    }
    out
}

#[test]
fn every_subcommand_leaves_the_capture_byte_identical() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenario = root.join("testdata/kafka/divergence");
    let before = snapshot(&scenario);
    assert!(before.len() > 20);
    let seg = before
        .keys()
        .find(|p| {
            p.extension().is_some_and(|e| e == "log") && p.to_string_lossy().contains("diverge-0")
        })
        .unwrap()
        .clone();
    let index = seg.with_extension("timeindex");
    let runs: Vec<Vec<String>> = vec![
        vec!["diff".into(), scenario.display().to_string()],
        vec![
            "diff".into(),
            "--format".into(),
            "json".into(),
            scenario.display().to_string(),
        ],
        vec!["timeline".into(), scenario.display().to_string()],
        vec![
            "report".into(),
            scenario.display().to_string(),
            "--html".into(),
            "-".into(),
        ],
        vec![
            "dump".into(),
            "--format".into(),
            "kafka".into(),
            "--deep-iteration".into(),
            "--print-data-log".into(),
            seg.display().to_string(),
        ],
        vec![
            "dump".into(),
            "--format".into(),
            "kafka".into(),
            "--index-sanity-check".into(),
            index.display().to_string(),
        ],
        vec![
            "dump".into(),
            "--format".into(),
            "json".into(),
            scenario.join("broker-1").display().to_string(),
        ],
    ];
    for args in runs {
        let out = Command::new(env!("CARGO_BIN_EXE_klf"))
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "klf {args:?} was killed");
        let after = snapshot(&scenario);
        assert_eq!(
            before.len(),
            after.len(),
            "klf {args:?} created or removed files"
        );
        for (p, v) in &before {
            assert!(
                after.get(p) == Some(v),
                "klf {args:?} changed {}",
                p.display()
            );
        }
    }
}
