//! The archive reader: the input is a `.tar` (or, by its first bytes, a
//! gzip or zstd stream of one), mounted under a small memory budget and
//! walked as discovery walks a capture: every directory listed, every file
//! opened, its metadata and time read. Hostile headers (PAX and GNU long
//! names and links, sizes, links, duplicates) must end in an error, never a
//! panic, a hang or an allocation past the budget.
#![no_main]
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use klf::capture::vfs;
use libfuzzer_sys::fuzz_target;

fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("klf-fuzz-archive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    })
}

fn walk(dir: &Path, depth: usize) {
    if depth > 70 {
        return;
    }
    let Ok(rd) = vfs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let _ = vfs::metadata(&p);
        let _ = vfs::modified_ms(&p);
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, depth + 1),
            Ok(_) => {
                if let Ok(b) = vfs::open(&p) {
                    let _ = b.len();
                }
                let _ = vfs::read(&p);
            }
            Err(_) => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let archive = scratch().join("capture.tar");
    std::fs::write(&archive, data).unwrap();
    if let Ok(m) = vfs::mount(&archive, 16 << 20) {
        assert!(m.bytes <= 16 << 20);
        walk(&m.root, 0);
        let _ = klf::capture::discover::discover(&[&m.root]);
    }
});
