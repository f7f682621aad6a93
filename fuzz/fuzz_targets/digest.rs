//! The digest reader: the input is a `.klfd`, mounted under a small memory
//! budget, walked as discovery walks a capture, and every data segment's
//! summaries decoded. A damaged, truncated or hostile digest (lengths,
//! counts, paths that leave the root, compressed content that inflates past
//! what it declares) must end in an error, never a panic, a hang or an
//! allocation past the budget.
#![no_main]
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use klf::capture::{digest, vfs};
use libfuzzer_sys::fuzz_target;

fn name() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| std::env::temp_dir().join(format!("klf-fuzz-{}.klfd", std::process::id())))
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
                let _ = vfs::open_data(&p);
                if let Some(d) = digest::segment(&p) {
                    let _ = d.map(|d| d.batches.len());
                }
            }
            Err(_) => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // a digest read from bytes (the reader of `klf diff X.klfd`, without
    // the file)
    if let Ok(m) = digest::mount_bytes(name(), Arc::new(data.to_vec()), 16 << 20) {
        walk(&m.root, 0);
        let _ = klf::capture::discover::discover(&[&m.root]);
    }
});
