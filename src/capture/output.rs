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
