//! The diff's default read (only the window where replicas can differ)
//! against the full read (`--verify`), on every committed real-Kafka capture.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::common::{captures, copy_tree};
use klf::capture::discover::discover;
use klf::engine::{diff_capture, DiffRequest, ReadMode};
use klf::model::diff::{PartitionDiff, ScanMode};
use klf::model::loss::PartitionLoss;

/// The diff of every partition, through the engine as `klf diff` runs it
/// (reference from the metadata log), with its loss as the JSON shows it
/// (the lost batches, which `--records` reads, left out).
fn diffs(dir: &Path, mode: ReadMode) -> Vec<PartitionDiff> {
    diffs_and_loss(dir, mode)
        .into_iter()
        .map(|(d, _)| d)
        .collect()
}

fn diffs_and_loss(dir: &Path, mode: ReadMode) -> Vec<(PartitionDiff, PartitionLoss)> {
    let capture = discover(&[dir]);
    let req = DiffRequest {
        mode,
        ..Default::default()
    };
    diff_capture(&capture, &req, &|| {})
        .partitions
        .into_iter()
        .map(|p| {
            let mut loss = p.loss;
            loss.batches.clear();
            (p.diff, loss)
        })
        .collect()
}

/// The partition's loss (records, ranges, bounds, evidence) is the same
/// whichever way the replicas were read.
#[test]
fn window_and_full_read_count_the_same_loss() {
    let mut lossy = 0;
    for dir in captures() {
        let w = diffs_and_loss(&dir, ReadMode::Window);
        let f = diffs_and_loss(&dir, ReadMode::Full);
        for ((wd, wl), (_, fl)) in w.iter().zip(&f) {
            assert_eq!(wl, fl, "{} {}-{}", dir.display(), wd.topic, wd.partition);
            if wl.records > 0 {
                lossy += 1;
            }
        }
    }
    assert!(lossy >= 4, "{lossy} partitions lose records");
}

#[test]
fn window_read_agrees_with_the_full_read_on_every_capture() {
    let mut compared = 0;
    let mut windowed = 0;
    for dir in captures() {
        let w = diffs(&dir, ReadMode::Window);
        let f = diffs(&dir, ReadMode::Full);
        assert_eq!(w.len(), f.len());
        for (mut w, mut f) in w.into_iter().zip(f) {
            let ws = w.scan.take().unwrap();
            let fs = f.scan.take().unwrap();
            assert_eq!(fs.mode, ScanMode::Full);
            assert_eq!(
                fs.bytes_read, fs.log_bytes,
                "the full read reads every byte"
            );
            compared += 1;
            if ws.mode == ScanMode::Full {
                assert_eq!(w, f);
                continue;
            }
            windowed += 1;
            let start = ws.window_start.unwrap();
            if w != f {
                // Only a difference the window does not read may separate
                // them: the full read found replicas differing below it
                // (compacted differently), which the window takes on trust.
                let below = f
                    .replicas
                    .iter()
                    .any(|r| r.divergence_offset.is_some_and(|d| d < start));
                assert!(
                    below,
                    "{} {}-{}: window from {start} and full read disagree\n{w:#?}\n{f:#?}",
                    dir.display(),
                    w.topic,
                    w.partition
                );
                assert!(dir.ends_with("compaction"), "{}", dir.display());
            }
        }
    }
    assert!(compared >= 15, "compared {compared} partitions");
    assert!(
        windowed >= compared / 2,
        "{windowed} of {compared} read as a window"
    );
}

#[test]
fn window_reads_less_than_the_log_where_the_log_is_long() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/torn-write");
    let w = diffs(&dir, ReadMode::Window);
    let scan = w[0].scan.as_ref().unwrap();
    assert_eq!(scan.mode, ScanMode::Window);
    assert!(
        scan.bytes_read * 3 < scan.log_bytes,
        "read {} of {} bytes",
        scan.bytes_read,
        scan.log_bytes
    );
}

/// Without a leader-epoch-checkpoint the window has nothing to trust: every
/// batch is read, and the report says why.
#[test]
fn a_missing_checkpoint_means_a_full_read() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kafka/divergence");
    let tmp = std::env::temp_dir().join(format!("klf-window-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_tree(&src, &tmp);
    let cp = tmp.join("broker-1/diverge-0/leader-epoch-checkpoint");
    assert!(cp.exists());
    std::fs::remove_file(&cp).unwrap();
    let w = diffs(&tmp, ReadMode::Window);
    let f = diffs(&tmp, ReadMode::Full);
    let scan = w[0].scan.clone().unwrap();
    assert_eq!(scan.mode, ScanMode::Full);
    assert!(
        scan.full_reason
            .as_deref()
            .is_some_and(|r| r.contains("broker 1") && r.contains("leader-epoch-checkpoint")),
        "{scan:?}"
    );
    assert_eq!(w[0].replicas, f[0].replicas);
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// The JSON `klf diff` writes with its partitions rendered on every core
/// (a document or lines) is, byte for byte, what the whole run's writer
/// and the one-partition-at-a-time writer make of the same partitions, on
/// every committed capture.
#[test]
fn json_rendered_on_every_core_is_the_documents_bytes() {
    use klf::engine::PartitionResult;
    use klf::render::diff::{json_element, write_json, write_json_each, write_json_rendered};
    let mut partitions = 0;
    for dir in captures() {
        let capture = discover(&[&dir]);
        let run = diff_capture(&capture, &DiffRequest::default(), &|| {});
        let views: Vec<_> = run.partitions.iter().map(PartitionResult::view).collect();
        partitions += views.len();
        for lines in [false, true] {
            let mut whole = Vec::new();
            write_json(&views, None, lines, &mut whole).unwrap();
            let mut each = Vec::new();
            write_json_each(run.partitions.iter(), |p| p.view(), lines, &mut each).unwrap();
            let mut rendered = Vec::new();
            let parts = run.partitions.iter().map(|p| json_element(p.view(), lines));
            write_json_rendered(parts, lines, &mut rendered).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&whole),
                String::from_utf8_lossy(&rendered),
                "{}",
                dir.display()
            );
            assert_eq!(each, rendered, "{}", dir.display());
        }
    }
    // none: the document the writers make of no partition
    for lines in [false, true] {
        let (mut whole, mut rendered) = (Vec::new(), Vec::new());
        write_json(&[], None, lines, &mut whole).unwrap();
        write_json_rendered(std::iter::empty(), lines, &mut rendered).unwrap();
        assert_eq!(whole, rendered);
    }
    assert!(partitions > 30, "{partitions} partitions");
}
