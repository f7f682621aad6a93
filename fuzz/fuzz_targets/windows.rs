//! Windowed reads against bytes in memory: the first input byte picks a
//! window size, the rest is a segment written to a temporary file and read
//! back a window at a time, leniently and strictly, with resyncs. Every
//! entry, error, skip and tail must be the ones `SegmentIter` gives for the
//! same bytes; so must every step of a walk over them.
#![no_main]
use klf::capture::segment::SegmentFile;
use klf::format::batch::{Batch, Entries, EntryError, SegmentIter};
use klf::format::walk::{self, Checksums, Walk};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, PartialEq)]
enum Step {
    Entry(u64, i64, u64, u32),
    Error(u64, String),
    Skip(u64, u64),
}

fn steps(e: &mut dyn Entries) -> (Vec<Step>, String) {
    let mut v = Vec::new();
    while let Some(item) = e.next_entry() {
        match item {
            Ok(b) => {
                let bytes = match &b {
                    Batch::V2(r) => r.bytes(),
                    Batch::Legacy(l) => l.bytes(),
                };
                v.push(Step::Entry(
                    b.position(),
                    b.offset_field(),
                    b.size_in_bytes(),
                    crc32c::crc32c(bytes),
                ));
            }
            Err(EntryError::Bad(p)) => {
                v.push(Step::Error(p.pos, p.reason.to_string()));
                match e.resync() {
                    Ok(Some(s)) => v.push(Step::Skip(s.from, s.to)),
                    Ok(None) => break,
                    Err(x) => panic!("resync read failed: {x:?}"),
                }
            }
            Err(EntryError::Io(x)) => panic!("read failed: {x}"),
        }
    }
    (v, format!("{:?} {}", e.tail(), e.position()))
}

/// Every step of a walk, as text.
fn walked<E: Entries>(mut w: Walk<E>) -> Vec<String> {
    let mut v = Vec::new();
    while let Some(step) = w.next() {
        v.push(match step {
            walk::Step::Batch(b) => format!("batch {} {}", b.position(), b.offset_field()),
            walk::Step::BadCrc(b, e) => format!("crc {} {}", b.position(), e.reason),
            walk::Step::Skipped(s) => format!("skipped {} {}", s.from, s.to),
            walk::Step::Bad(e) => format!("bad {} {}", e.pos, e.reason),
            walk::Step::Tail(t) => format!("tail {:?}", t),
            walk::Step::Io(e) => panic!("read failed: {e}"),
        });
    }
    v.push(format!(
        "{} {} {:?}",
        w.position(),
        w.passed(),
        w.passed_end()
    ));
    v
}

/// A walk's options, picked by the window byte `w`.
fn options<E: Entries>(walk: Walk<E>, w: u8) -> Walk<E> {
    let policy = [Checksums::Unchecked, Checksums::Stop, Checksums::Mark][usize::from(w) % 3];
    walk.checksums(policy)
        .resync(w & 4 != 0)
        .from(i64::from(w >> 3))
}

fuzz_target!(|data: &[u8]| {
    let Some((&w, seg)) = data.split_first() else {
        return;
    };
    let window = usize::from(w) + 1;
    let path = std::env::temp_dir().join(format!("klf-fuzz-windows-{}.log", std::process::id()));
    std::fs::write(&path, seg).unwrap();
    let file = SegmentFile::open_unmapped(&path).unwrap();
    for strict in [false, true] {
        let mut whole = SegmentIter::new(seg);
        let mut read = file.entries().window_size(window);
        if strict {
            whole = whole.strict();
            read = read.strict();
        }
        assert_eq!(
            steps(&mut read),
            steps(&mut whole),
            "window {window}, strict {strict}"
        );
    }
    assert_eq!(
        walked(options(Walk::new(file.entries().window_size(window)), w)),
        walked(options(Walk::new(SegmentIter::new(seg)), w)),
        "walk, window {window}"
    );
    let mid = seg.len() as u64 / 2;
    let mut whole = SegmentIter::with_range(seg, 1, mid as usize);
    let mut read = file.reader(1, mid).window_size(window);
    assert_eq!(
        steps(&mut read),
        steps(&mut whole),
        "range [1, {mid}), window {window}"
    );
});
