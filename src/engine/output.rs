//! The one rule for every file klf writes (a check baseline, a report page,
//! anything later): evidence is never written to.
//!
//! A target is refused, before any work is done, when it
//! * lies inside an input (a directory given, a broker directory found in
//!   it, the folder an archive sits in is fine, the archive itself is not),
//!   after every symlink on the way is resolved;
//! * is an input file itself;
//! * is a symbolic link (whatever it points to), has other hard links, or
//!   is not a regular file.
//!
//! The file is then written to a new temporary file in the target's folder
//! (created exclusively, so never through a link) and renamed into place:
//! a link planted at the target after the check is replaced, not followed.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A target that passed the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTarget {
    /// The path as given.
    pub path: PathBuf,
    /// Its folder, with every symlink resolved.
    dir: PathBuf,
    /// Its file name.
    name: OsString,
}

/// Why a target is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The target as given.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// Checks `target` against `inputs` (the paths given, and what discovery
/// found under them, e.g. broker directories that are symlinks).
pub fn check_output(target: &Path, inputs: &[PathBuf]) -> Result<OutputTarget, Refused> {
    let refuse = |reason: String| Refused {
        path: target.to_path_buf(),
        reason,
    };
    let name = target
        .file_name()
        .ok_or_else(|| refuse("names no file (a directory, '.' or '..')".into()))?
        .to_os_string();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(parent).map_err(|e| {
        refuse(format!(
            "its folder {} cannot be used: {e}",
            parent.display()
        ))
    })?;
    let resolved = dir.join(&name);
    let existing = match std::fs::symlink_metadata(target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(refuse(format!("cannot be examined: {e}"))),
    };
    if let Some(m) = &existing {
        let t = m.file_type();
        if t.is_symlink() {
            return Err(refuse(
                "is a symbolic link; klf writes no file through a link (remove it or choose another name)".into(),
            ));
        }
        if !t.is_file() {
            return Err(refuse("exists and is not a regular file".into()));
        }
        if m.nlink() > 1 {
            return Err(refuse(format!(
                "has {} hard links; another name of it may be evidence (remove it or choose another name)",
                m.nlink()
            )));
        }
    }
    for input in inputs {
        let Ok(canon) = std::fs::canonicalize(input) else {
            continue;
        };
        let is_dir = std::fs::metadata(&canon).is_ok_and(|m| m.is_dir());
        if is_dir && resolved.starts_with(&canon) {
            return Err(refuse(format!(
                "lies inside the input {}; the evidence is never written to (choose a path outside it)",
                input.display()
            )));
        }
        if !is_dir && resolved == canon {
            return Err(refuse(format!(
                "is the input {}; the evidence is never written to",
                input.display()
            )));
        }
        if let (Some(m), Ok(im)) = (&existing, std::fs::metadata(&canon)) {
            if m.dev() == im.dev() && m.ino() == im.ino() {
                return Err(refuse(format!("is the input {}", input.display())));
            }
        }
    }
    Ok(OutputTarget {
        path: target.to_path_buf(),
        dir,
        name,
    })
}

impl OutputTarget {
    /// Streams what `fill` writes to the target: a new temporary file in
    /// its folder, renamed over the target when `fill` succeeds, removed
    /// when it fails.
    pub fn stream<T>(&self, fill: impl FnOnce(&mut dyn Write) -> io::Result<T>) -> io::Result<T> {
        let mut tmp_name = OsString::from(".");
        tmp_name.push(&self.name);
        tmp_name.push(format!(".klf-{}.tmp", std::process::id()));
        let tmp = self.dir.join(tmp_name);
        let res = (|| {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            let mut w = io::BufWriter::with_capacity(1 << 20, f);
            let t = fill(&mut w)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            std::fs::rename(&tmp, self.dir.join(&self.name))?;
            Ok(t)
        })();
        if res.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        res
    }

    /// Writes `bytes` to the target: a new temporary file in its folder,
    /// then renamed over it.
    pub fn write(&self, bytes: &[u8]) -> io::Result<()> {
        let mut tmp_name = OsString::from(".");
        tmp_name.push(&self.name);
        tmp_name.push(format!(".klf-{}.tmp", std::process::id()));
        let tmp = self.dir.join(tmp_name);
        let res = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, self.dir.join(&self.name))
        })();
        if res.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        res
    }
}

/// A folder that passed the rule: created by klf, or (with `force`) an
/// existing folder outside every input. Files in it are written through
/// [`OutputDir::create`]; a run that fails takes back what it wrote with
/// [`OutputDir::discard`].
#[derive(Debug, Clone)]
pub struct OutputDir {
    /// The folder as given.
    pub path: PathBuf,
    /// With every symlink resolved.
    dir: PathBuf,
    /// The inputs, for the rule on every file written.
    inputs: Vec<PathBuf>,
    /// Files renamed into place, and subfolders created, by this run.
    written: Arc<Mutex<Written>>,
}

#[derive(Debug, Default)]
struct Written {
    files: Vec<PathBuf>,
    folders: Vec<PathBuf>,
}

/// `e`, saying which file it is about.
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Checks `dir` against `inputs` and creates it: refused inside an input
/// (after every symlink is resolved), when it is a link or not a folder,
/// and when it exists and is not empty unless `force`.
pub fn check_output_dir(dir: &Path, inputs: &[PathBuf], force: bool) -> Result<OutputDir, Refused> {
    let refuse = |reason: String| Refused {
        path: dir.to_path_buf(),
        reason,
    };
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(refuse(
                "is a symbolic link; klf writes nothing through a link".into(),
            ))
        }
        Ok(m) if !m.is_dir() => return Err(refuse("exists and is not a folder".into())),
        Ok(_) => {
            let empty = std::fs::read_dir(dir)
                .map_err(|e| refuse(format!("cannot be read: {e}")))?
                .next()
                .is_none();
            if !empty && !force {
                return Err(refuse(
                    "exists and is not empty; give --force to write into it (files klf writes there are replaced)".into(),
                ));
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // the rule first, on the folder it would be created in
            let probe = dir.join("probe");
            let parent_ok = match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => std::fs::canonicalize(p).is_ok(),
                _ => true,
            };
            if !parent_ok {
                return Err(refuse("its parent folder does not exist".into()));
            }
            check_inside(dir, &probe, inputs).map_err(refuse)?;
            std::fs::create_dir(dir).map_err(|e| refuse(format!("cannot be created: {e}")))?;
        }
        Err(e) => return Err(refuse(format!("cannot be examined: {e}"))),
    }
    let canon =
        std::fs::canonicalize(dir).map_err(|e| refuse(format!("cannot be resolved: {e}")))?;
    check_inside(dir, &canon.join("probe"), inputs).map_err(refuse)?;
    Ok(OutputDir {
        path: dir.to_path_buf(),
        dir: canon,
        inputs: inputs.to_vec(),
        written: Arc::default(),
    })
}

/// Whether `target` (a path whose folder is `dir`) lies inside an input.
fn check_inside(dir: &Path, target: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let resolved = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => std::fs::canonicalize(p)
            .map(|p| p.join(dir.file_name().unwrap_or_default()))
            .unwrap_or_else(|_| target.to_path_buf()),
        _ => std::env::current_dir()
            .map(|c| c.join(dir))
            .unwrap_or_else(|_| dir.to_path_buf()),
    };
    for input in inputs {
        let Ok(canon) = std::fs::canonicalize(input) else {
            continue;
        };
        if std::fs::metadata(&canon).is_ok_and(|m| m.is_dir()) && resolved.starts_with(&canon) {
            return Err(format!(
                "lies inside the input {}; the evidence is never written to (choose a path outside it)",
                input.display()
            ));
        }
    }
    Ok(())
}

impl OutputDir {
    /// A new file `name` in the folder, written to a temporary file and
    /// renamed into place by [`StreamFile::finish`]. `name` may hold one
    /// subfolder (`orders-0/00000000000000000100.log`), created here.
    pub fn create(&self, name: &str) -> io::Result<StreamFile> {
        let path = self.path.join(name);
        if let Some(sub) = Path::new(name)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
        {
            let d = self.dir.join(sub);
            match std::fs::symlink_metadata(&d) {
                Ok(m) if m.is_dir() && !m.file_type().is_symlink() => {}
                Ok(_) => {
                    return Err(io::Error::other(format!(
                        "{}: exists and is not a folder",
                        d.display()
                    )))
                }
                Err(_) => {
                    std::fs::create_dir(&d).map_err(|e| named(&d, e))?;
                    if let Ok(mut w) = self.written.lock() {
                        w.folders.push(d);
                    }
                }
            }
        }
        let target =
            check_output(&path, &self.inputs).map_err(|e| io::Error::other(e.to_string()))?;
        let mut tmp_name = OsString::from(".");
        tmp_name.push(&target.name);
        tmp_name.push(format!(".klf-{}.tmp", std::process::id()));
        let tmp = target.dir.join(tmp_name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| named(&path, e))?;
        Ok(StreamFile {
            out: io::BufWriter::new(file),
            tmp,
            target: target.dir.join(&target.name),
            shown: path,
            bytes: 0,
            written: Arc::clone(&self.written),
        })
    }

    /// Takes back what this run wrote into the folder, for a run that
    /// failed: every file renamed into place and every subfolder created
    /// (an unfinished file's temporary file is already gone), and the
    /// folder itself when `made` (klf created it) and nothing else is in
    /// it. Best effort: what cannot be removed stays.
    pub fn discard(&self, made: bool) {
        let Ok(mut w) = self.written.lock() else {
            return;
        };
        for f in w.files.drain(..) {
            let _ = std::fs::remove_file(f);
        }
        for d in w.folders.drain(..).rev() {
            let _ = std::fs::remove_dir(d);
        }
        if made {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// A file being written: bytes go to a temporary file, renamed into place
/// by [`StreamFile::finish`]; dropped unfinished, the temporary file is
/// removed.
pub struct StreamFile {
    out: io::BufWriter<std::fs::File>,
    tmp: PathBuf,
    target: PathBuf,
    /// The target as the user named it, for messages.
    shown: PathBuf,
    bytes: u64,
    written: Arc<Mutex<Written>>,
}

impl Write for StreamFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf).map_err(|e| named(&self.shown, e))?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(|e| named(&self.shown, e))
    }
}

impl StreamFile {
    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes, syncs and renames the file into place. On a failure the
    /// temporary file is removed (when dropped) and nothing appears under
    /// the target's name.
    pub fn finish(mut self) -> io::Result<()> {
        let shown = self.shown.clone();
        self.out.flush().map_err(|e| named(&shown, e))?;
        self.out
            .get_ref()
            .sync_all()
            .map_err(|e| named(&shown, e))?;
        std::fs::rename(&self.tmp, &self.target).map_err(|e| named(&shown, e))?;
        self.tmp = PathBuf::new();
        if let Ok(mut w) = self.written.lock() {
            w.files.push(self.target.clone());
        }
        Ok(())
    }
}

impl Drop for StreamFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("klf-output-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("capture/broker-1")).unwrap();
        std::fs::write(d.join("capture/broker-1/meta.properties"), b"node.id=1\n").unwrap();
        d
    }

    #[test]
    fn inside_an_input_through_a_symlink_is_refused() {
        let d = scratch("link");
        std::os::unix::fs::symlink(d.join("capture"), d.join("alias")).unwrap();
        let inputs = vec![d.join("capture")];
        let e = check_output(&d.join("alias/broker-1/b.json"), &inputs).unwrap_err();
        assert!(e.reason.contains("inside the input"), "{e}");
        // The input given through the link, the target by its real path.
        let e = check_output(&d.join("capture/x.html"), &[d.join("alias")]).unwrap_err();
        assert!(e.reason.contains("inside the input"), "{e}");
        assert!(check_output(&d.join("out.json"), &inputs).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn links_to_evidence_are_refused_and_writes_replace_the_name() {
        let d = scratch("hard");
        let meta = d.join("capture/broker-1/meta.properties");
        let inputs = vec![d.join("capture")];
        std::os::unix::fs::symlink(&meta, d.join("soft")).unwrap();
        let e = check_output(&d.join("soft"), &inputs).unwrap_err();
        assert!(e.reason.contains("symbolic link"), "{e}");
        std::fs::hard_link(&meta, d.join("hard")).unwrap();
        let e = check_output(&d.join("hard"), &inputs).unwrap_err();
        assert!(e.reason.contains("hard links"), "{e}");
        let t = check_output(&d.join("out.json"), &inputs).unwrap();
        t.write(b"{}\n").unwrap();
        t.write(b"{\"again\":1}\n").unwrap();
        assert_eq!(
            std::fs::read(d.join("out.json")).unwrap(),
            b"{\"again\":1}\n"
        );
        assert_eq!(std::fs::read(&meta).unwrap(), b"node.id=1\n");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
