//! `klf man`: the man pages, built into the binary from the same clap
//! definition it parses with (the pages in `man/` of the sources are the
//! same bytes): one printed on stdout, or all of them installed into a
//! folder `man` searches.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::common::{Output, Status};
use klf::engine::output::check_output_dir;

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = "\
Exit status:
  0  the page was printed, or every page was written
  2  usage or I/O error (a COMMAND klf does not have, a folder or page that
     could not be written)

What it writes:
  Without --install, the page of COMMAND (klf-COMMAND.1), or klf.1 without
  one, in roff on stdout: read it with man -l -.
  With --install DIR, every page (klf.1 and klf-COMMAND.1 for each command)
  into DIR/man1, made when missing (into DIR itself when it is named man1);
  pages already there are replaced. The paths written go to stdout. man
  finds them when DIR is on its search path: MANPATH=DIR: man klf-diff,
  or with no MANPATH set, DIR = ~/.cargo/share/man after cargo install
  (man-db searches BIN/../share/man for every BIN on PATH), or
  ~/.local/share/man.

Examples:
  klf man diff | man -l -
  klf man --install ~/.local/share/man
";

/// Print a man page (roff) on stdout, or install every page into a folder man searches
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The command whose page to print (klf-COMMAND.1); without one, klf.1
    #[arg(value_name = "COMMAND", conflicts_with = "install")]
    command: Option<String>,
    /// Write every page into DIR/man1 (DIR itself when it is named man1)
    /// instead, and print the paths written
    #[arg(long, value_name = "DIR")]
    install: Option<PathBuf>,
}

/// Runs `klf man`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let pages = crate::man::pages();
    if let Some(dir) = &args.install {
        return install(&pages, dir, out);
    }
    let name = match &args.command {
        Some(c) => format!("klf-{c}.1"),
        None => "klf.1".to_string(),
    };
    let Some((_, page)) = pages.iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = pages
            .iter()
            .filter_map(|(n, _)| n.strip_prefix("klf-")?.strip_suffix(".1"))
            .collect();
        out.diag(format_args!(
            "klf: no command {:?}: klf man takes one of {}",
            args.command.unwrap_or_default(),
            names.join(", ")
        ));
        return Status::Failure;
    };
    match out.out().write_all(page) {
        Ok(()) => Status::Clean,
        Err(e) => out.write_failed(e),
    }
}

/// Writes every page into `dir/man1` (or `dir` when it is a `man1`),
/// through the output rule: each page to a temporary file, renamed over
/// the one it replaces.
fn install(pages: &[(String, Vec<u8>)], dir: &Path, out: &mut Output) -> Status {
    let section = if dir.file_name().is_some_and(|n| n == "man1") {
        dir.to_path_buf()
    } else {
        dir.join("man1")
    };
    if let Err(e) = std::fs::create_dir_all(&section) {
        out.diag(format_args!(
            "klf: {}: cannot make the folder: {e}",
            section.display()
        ));
        return Status::Failure;
    }
    // a man folder holds other pages: klf's own are replaced
    let target = match check_output_dir(&section, &[], true) {
        Ok(t) => t,
        Err(e) => {
            out.diag(format_args!("klf: {e}"));
            return Status::Failure;
        }
    };
    for (name, page) in pages {
        let path = section.join(name);
        let written = target
            .create(name)
            .and_then(|mut f| f.write_all(page).and_then(|()| f.finish()));
        if let Err(e) = written {
            out.diag(format_args!("klf: {}: cannot write: {e}", path.display()));
            return Status::Failure;
        }
        if let Err(e) = writeln!(out.out(), "{}", path.display()) {
            return out.write_failed(e);
        }
    }
    let root = if section == dir {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    out.note(format_args!(
        "klf: {} man pages in {}; man finds them when {} is on its search path (MANPATH={}: man klf-diff)",
        pages.len(),
        section.display(),
        root.display(),
        root.display()
    ));
    Status::Clean
}
