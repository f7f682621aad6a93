//! Whole-directory analysis: the input is decoded into a small capture (a
//! few files with the names Kafka gives them, in two broker log
//! directories), written to a temporary directory, then discovered,
//! checked, diffed (window and full read, with the partition's loss and
//! its evidence, consumer group commits included), its lost records read
//! back, and put on a timeline, as `klf check`, `klf diff` and `klf
//! timeline` do.
//!
//! Input format: repeated `[name selector u8][length u16 LE][bytes]`; a
//! selector picks one of `NAMES`; later files with the same name replace
//! earlier ones.
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use klf::analysis::timeline::timeline;
use klf::capture::discover::discover;
use klf::capture::replica::load_replica;
use klf::engine::records::{cut_records, lost_records};
use klf::engine::{broker_ids, diff_capture, DiffRequest, ReadMode};
use libfuzzer_sys::fuzz_target;

const NAMES: &[&str] = &[
    "broker-1/meta.properties",
    "broker-1/replication-offset-checkpoint",
    "broker-1/recovery-point-offset-checkpoint",
    "broker-1/log-start-offset-checkpoint",
    "broker-1/t-0/00000000000000000000.log",
    "broker-1/t-0/00000000000000000000.index",
    "broker-1/t-0/00000000000000000000.timeindex",
    "broker-1/t-0/00000000000000000000.txnindex",
    "broker-1/t-0/00000000000000000100.log",
    "broker-1/t-0/00000000000000000100.index",
    "broker-1/t-0/00000000000000000100.snapshot",
    "broker-1/t-0/leader-epoch-checkpoint",
    "broker-1/t-0/partition.metadata",
    "broker-1/__cluster_metadata-0/00000000000000000000.log",
    "broker-1/__cluster_metadata-0/quorum-state",
    "broker-1/__cluster_metadata-0/00000000000000000010-0000000001.checkpoint",
    "broker-2/meta.properties",
    "broker-2/replication-offset-checkpoint",
    "broker-2/t-0/00000000000000000000.log",
    "broker-2/t-0/00000000000000000000.index",
    "broker-2/t-0/00000000000000000050.log.deleted",
    "broker-2/t-0/leader-epoch-checkpoint",
    "broker-2/t-0/00000000000000000000.snapshot",
    "broker-2/__consumer_offsets-0/00000000000000000000.log",
];

fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("klf-fuzz-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    })
}

fuzz_target!(|data: &[u8]| {
    let root = root();
    let dir = root.join("capture");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rest = data;
    let mut files = 0;
    while rest.len() >= 3 && files < 16 {
        let name = NAMES[usize::from(rest[0]) % NAMES.len()];
        let len = usize::from(u16::from_le_bytes([rest[1], rest[2]])).min(rest.len() - 3);
        let body = &rest[3..3 + len];
        rest = &rest[3 + len..];
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        files += 1;
    }
    let capture = discover(&[&dir]);
    let _ = klf::engine::check::check(&capture, None, &Default::default(), &|| {});
    for reps in capture.partitions.values() {
        for (r, id) in reps.iter().zip(broker_ids(reps)) {
            let _ = timeline(&load_replica(r, id).log);
        }
    }
    for mode in [ReadMode::Window, ReadMode::Full] {
        let req = DiffRequest {
            mode,
            ..Default::default()
        };
        let run = diff_capture(&capture, &req, &|| {});
        for p in &run.partitions {
            let reps = run.replicas(p);
            let _ = lost_records(reps, &p.loss, 50);
            let ids = broker_ids(reps);
            for r in &p.diff.replicas {
                if let Some(i) = ids.iter().position(|b| *b == r.broker) {
                    let _ = cut_records(&reps[i], r, &p.loss, 50);
                }
            }
        }
    }
});
