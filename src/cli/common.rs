//! What every subcommand shares: the global options (`--quiet`, `--color`,
//! `--archive-limit`), buffered stdout, diagnostics on stderr, progress bars
//! on a terminal, tables fitted to the terminal, archive inputs, and the run
//! status that becomes the exit code.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Display;
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::path::{Path, PathBuf};

/// What `klf --help` and `klf(1)` tell beyond the options.
pub const TOP_HELP: &str = "\
Exit status:
  0  clean: nothing wrong found
  1  corruption or data loss found (what counts is per subcommand), or a
     file over klf's caps left unread (a properties file over 1 MiB, a
     checkpoint with a line over 4 KiB or over 1,000,000 entries; named at
     the end)
  2  usage or I/O error: a bad option, a PATH that does not exist, an
     archive that cannot be read or escapes its root, a file or folder
     that cannot be read (EIO, too few file descriptors, a link that
     cannot be followed, a file that changed while klf read it), memory
     refused, a failed write; whatever else was found (the files are named
     at the end)

  A closed stdout (klf ... | head) ends the output quietly and does not
  change the status (dump stops there: its status covers what it read).

Output:
  Results go to stdout, diagnostics (problems as FILE:BYTE: reason, notes,
  warnings, progress bars) to stderr. Every subcommand takes --format table
  or json (dump also kafka, check also junit). Tables fit the terminal's
  width when stdout is a terminal. Progress bars appear only when stderr is
  a terminal and --quiet is not given.

Inputs:
  klf reads broker log directories, partition directories, folders of broker
  directories, segment files (dump), and .tar, .tar.gz/.tgz and
  .tar.zst/.tzst archives of them without extracting them. A file inside an
  archive is named ARCHIVE!/PATH-IN-ARCHIVE. Everything is opened read-only.

Environment:
  NO_COLOR  when set and not empty, --color auto does not colour

Examples:
  klf diff capture/ --explain
  klf check capture.tar.gz --format junit > klf-check.xml
  klf timeline broker-1 broker-2 --format json
  klf dump broker-1/orders-0/00000000000000000000.log --deep-iteration
  klf completions bash > ~/.local/share/bash-completion/completions/klf

See also:
  klf COMMAND --help, and the manual pages klf(1) and klf-COMMAND(1) (man
  klf-diff); in the klf sources they are in man/ (man man/klf-diff.1), with
  the JSON fields, check codes and the report's data contract in docs/.
";

/// When to colour the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always colour (even into a pipe; overrides NO_COLOR).
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether to colour, given whether stdout is a terminal and the value
    /// of NO_COLOR (set and not empty disables colour under `auto`).
    pub fn enabled(self, stdout_is_terminal: bool, no_color: Option<&str>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(str::is_empty),
        }
    }
}

/// Options every subcommand takes (before or after the subcommand name).
#[derive(clap::Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Print only results and errors: no progress bars, notes or warnings
    /// about the capture's layout
    #[arg(long, short = 'q', global = true, help_heading = "Global options")]
    pub quiet: bool,
    /// Colour the output: auto (when stdout is a terminal and NO_COLOR is
    /// unset), always or never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto, global = true, help_heading = "Global options")]
    pub color: ColorChoice,
    /// Most bytes of file content read into memory from one .tar, .tar.gz
    /// or .tar.zst input (K, M, G, T suffixes; powers of 1024)
    #[arg(long, value_name = "BYTES", default_value = "4G", value_parser = klf::render::text::parse_bytes, global = true, help_heading = "Global options")]
    pub archive_limit: u64,
    /// Most bytes one batch may inflate to when its records are read, in
    /// every command (K, M, G suffixes); a batch over it is reported with
    /// its file and byte, its records counted but not read (exit 1)
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = parse_usize_bytes, global = true, help_heading = "Global options")]
    pub max_decompressed_bytes: usize,
    /// A node's own Kafka logs (server.log, controller.log,
    /// state-change.log, rotated or .gz; a file, or a folder of them),
    /// read beside the capture by the commands that take one; NODE may be
    /// left out when the capture holds one node. Logs in a node's folder
    /// are found without it. Repeat for more nodes or files
    #[arg(long = "logs", value_name = "[NODE=]PATH", value_parser = parse_logs, global = true, help_heading = "Global options")]
    pub logs: Vec<(Option<i32>, PathBuf)>,
}

/// Says on stderr what reading the nodes' own logs met (files not read
/// whole, lines skipped, the time zone).
pub fn broker_log_notes(out: &mut Output, evidence: &klf::engine::evidence::Evidence) {
    let Some(logs) = evidence.logs() else {
        return;
    };
    for (warning, text) in klf::render::broker_log::file_notes(&logs.read) {
        if warning {
            out.diag(format_args!("klf: warning: {text}"));
        } else {
            out.note(format_args!("klf: note: {text}"));
        }
    }
}

/// `--logs [NODE=]PATH`.
fn parse_logs(s: &str) -> Result<(Option<i32>, PathBuf), String> {
    if let Some((node, path)) = s.split_once('=') {
        if let Ok(n) = node.trim().parse::<i32>() {
            if path.is_empty() {
                return Err("a path after NODE= is needed".to_string());
            }
            return Ok((Some(n), PathBuf::from(path)));
        }
    }
    if s.is_empty() {
        return Err("a path is needed".to_string());
    }
    Ok((None, PathBuf::from(s)))
}

fn parse_usize_bytes(s: &str) -> Result<usize, String> {
    let n = klf::render::text::parse_bytes(s)?;
    usize::try_from(n).map_err(|_| format!("{s:?} is too large"))
}

/// Outcome of a run, ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Nothing wrong (exit 0).
    Clean,
    /// The input is damaged: corruption was found and reported (exit 1).
    Corruption,
    /// A usage or I/O error (exit 2).
    Failure,
    /// stdout was closed by the reader: stop writing. It never changes a
    /// status found otherwise ([`Status::worst`] ignores it); alone it
    /// exits 0.
    BrokenPipe,
}

impl Status {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Status::Clean | Status::BrokenPipe => 0,
            Status::Corruption => 1,
            Status::Failure => 2,
        }
    }

    /// The more severe of two statuses; [`Status::BrokenPipe`] only stands
    /// when both are, so a closed pipe never hides what was found.
    pub fn worst(self, other: Status) -> Status {
        match (self, other) {
            (Status::BrokenPipe, s) | (s, Status::BrokenPipe) => s,
            (a, b) => a.max(b),
        }
    }
}

/// Whether an I/O error means the reader of stdout went away.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Results to stdout (block-buffered), diagnostics to stderr.
pub struct Output {
    out: BufWriter<Stdout>,
    /// Set once a write to stdout failed with a closed pipe.
    pub pipe_closed: bool,
    /// Set once another failed write to stdout (a full disk, EFBIG, EIO)
    /// was reported: the run exits 2 and it is said once.
    write_error: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// Whether results are coloured (`--color`, NO_COLOR, terminal).
    pub color: bool,
    /// `--archive-limit`.
    pub archive_limit: u64,
    /// `--logs`: the nodes' own logs given.
    pub logs: Vec<(Option<i32>, PathBuf)>,
    /// The display columns of the terminal stdout is, else None.
    pub width: Option<usize>,
    /// The progress bar on stderr, if one is showing: diagnostics are
    /// printed above it, never onto its line.
    bar: Option<indicatif::ProgressBar>,
    /// Notes said many times over (one per partition or file): the first
    /// few are printed, the rest counted and summarised at the end.
    repeated: BTreeMap<(&'static str, &'static str), Repeated>,
    /// Digests already mounted ([`Output::resolve_inputs`]), to be said.
    premounted: HashMap<PathBuf, Result<klf::model::DigestMount, String>>,
}

/// The notes of one kind: how many were printed, and the rest by name.
#[derive(Default)]
struct Repeated {
    shown: usize,
    more: BTreeMap<String, usize>,
}

/// How many notes of one kind are printed before the rest are summarised.
pub const REPEATED_SHOWN: usize = 3;

impl Output {
    /// Output to the process's stdout, with the global options.
    pub fn stdout(g: &GlobalArgs) -> Output {
        let no_color = std::env::var("NO_COLOR").ok();
        Output {
            out: BufWriter::with_capacity(1 << 18, io::stdout()),
            pipe_closed: false,
            write_error: false,
            quiet: g.quiet,
            color: g
                .color
                .enabled(io::stdout().is_terminal(), no_color.as_deref()),
            archive_limit: g.archive_limit,
            logs: g.logs.clone(),
            width: klf::render::style::terminal_width(),
            bar: None,
            repeated: BTreeMap::new(),
            premounted: HashMap::new(),
        }
    }

    /// A note that may be said once per partition or file: the first
    /// [`REPEATED_SHOWN`] of a kind (`prefix`, `what`) are printed as
    /// `msg`; the rest are counted under `name` (such as a file name) and
    /// said in one line at the end of the run, `PREFIX: note: and N more
    /// WHAT: NAME ×COUNT, ...`. Dropped with `--quiet`.
    pub fn note_repeated(
        &mut self,
        prefix: &'static str,
        what: &'static str,
        name: &str,
        msg: impl Display,
    ) {
        if self.quiet {
            return;
        }
        let r = self.repeated.entry((prefix, what)).or_default();
        if r.shown < REPEATED_SHOWN {
            r.shown += 1;
            self.diag(msg);
        } else {
            *r.more.entry(name.to_string()).or_default() += 1;
        }
    }

    /// Says the notes [`Output::note_repeated`] held back, one line per kind.
    pub fn flush_repeated(&mut self) {
        let held = std::mem::take(&mut self.repeated);
        for ((prefix, what), r) in held {
            if r.more.is_empty() {
                continue;
            }
            let n: usize = r.more.values().sum();
            let names: Vec<String> = r
                .more
                .iter()
                .take(8)
                .map(|(name, c)| format!("{name} ×{c}"))
                .collect();
            let others = if r.more.len() > 8 {
                format!(", and {} other names", r.more.len() - 8)
            } else {
                String::new()
            };
            self.diag(format_args!(
                "{prefix}: note: and {n} more {what}: {}{others}",
                names.join(", ")
            ));
        }
    }

    /// A diagnostic that is not needed to understand the result (notes,
    /// warnings about the layout, summaries): dropped with `--quiet`.
    pub fn note(&mut self, msg: impl Display) {
        if !self.quiet {
            self.diag(msg);
        }
    }

    /// A progress bar of `len` steps on stderr, only when stderr is a
    /// terminal and `--quiet` is not given. `template` is indicatif's.
    /// Diagnostics printed while it shows go above it.
    pub fn progress(&mut self, len: u64, template: &str) -> Option<indicatif::ProgressBar> {
        if self.quiet || !io::stderr().is_terminal() {
            return None;
        }
        let b = indicatif::ProgressBar::new(len);
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            b.set_style(style);
        }
        self.bar = Some(b.clone());
        Some(b)
    }

    /// Runs `work` with a bar of `len` steps counting `what` (e.g.
    /// "partitions diffed"), which `work` advances by calling the function
    /// it is given; the bar is cleared after.
    pub fn counted<T>(
        &mut self,
        len: usize,
        what: &str,
        work: impl FnOnce(&(dyn Fn() + Sync)) -> T,
    ) -> T {
        let bar = self.progress(len as u64, &format!("{{bar:40}} {{pos}}/{{len}} {what}"));
        let r = work(&|| {
            if let Some(b) = &bar {
                b.inc(1);
            }
        });
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        r
    }

    /// A spinner with the time spent, for a phase whose length is not
    /// known in advance (finding the files of a capture); `msg` says what
    /// it is doing. Like [`Output::progress`], only on a terminal.
    pub fn spinner(&mut self, msg: &str) -> Option<indicatif::ProgressBar> {
        let b = self.progress(0, "{spinner} {elapsed} {msg}")?;
        b.set_message(msg.to_string());
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        Some(b)
    }

    /// Turns the PATHs of diff, timeline and check into what discovery
    /// reads: `.tar`, `.tar.gz`/`.tgz` and `.tar.zst`/`.tzst` files are read
    /// into memory and replaced by their virtual root (`x.tar.gz!`), paths
    /// inside an archive (`x.tar.gz!/broker-1`) mount it; a path that does
    /// not exist is an error with a hint. `Err` (reported) ends the run with
    /// exit 2.
    pub fn resolve_inputs(&mut self, paths: &[PathBuf]) -> Result<Vec<PathBuf>, Status> {
        // a folder of per-node archives (`broker-1.tar.gz`, ...): each is
        // read as the node folder it holds
        let named: Vec<PathBuf> = paths
            .iter()
            .flat_map(|p| klf::engine::input::node_archives(p).unwrap_or_else(|| vec![p.clone()]))
            .collect();
        // several digests are read on every core first; each is then said
        // in the order given
        let digests: Vec<PathBuf> = named
            .iter()
            .filter(|p| {
                matches!(
                    klf::engine::input::name(p),
                    klf::engine::input::Named::Digest
                )
            })
            .cloned()
            .collect();
        if digests.len() > 1 {
            let mounted = klf::engine::input::mount_digests(&digests, self.archive_limit);
            self.premounted = digests.into_iter().zip(mounted).collect();
        }
        let mut v = Vec::with_capacity(named.len());
        for p in &named {
            v.push(self.resolve_input(p)?);
        }
        Ok(v)
    }

    /// Resolves `paths` ([`Output::resolve_inputs`]), discovers the capture
    /// under them and notes its warnings on stderr.
    pub fn open_capture(&mut self, paths: &[PathBuf]) -> Result<klf::model::Capture, Status> {
        let paths = self.resolve_inputs(paths)?;
        let capture = self.discover(&paths)?;
        for w in &capture.warnings {
            if w.level == klf::model::Level::Warning {
                self.note(format_args!(
                    "klf: warning: {}: {}",
                    w.path.display(),
                    w.message
                ));
            }
        }
        Ok(capture)
    }

    /// Discovers the capture under `paths` (resolved), with a spinner on a
    /// terminal while it lists the folders.
    pub fn discover(&mut self, paths: &[PathBuf]) -> Result<klf::model::Capture, Status> {
        let spin = self.spinner("finding the log directories, partitions and segments");
        let mut capture = klf::engine::input::discover(paths);
        if let Some(b) = spin {
            b.finish_and_clear();
        }
        if let Err(e) = klf::engine::input::add_given_logs(&mut capture, &self.logs) {
            self.diag(format_args!("klf: --logs: {e}"));
            return Err(Status::Failure);
        }
        Ok(capture)
    }

    /// Checks a file klf is asked to write against the inputs (the one
    /// output rule, [`klf::engine::output`]); a refusal is reported and
    /// ends the run with exit 2.
    pub fn output_target(
        &mut self,
        target: &Path,
        inputs: &[PathBuf],
    ) -> Result<klf::engine::output::OutputTarget, Status> {
        klf::engine::output::check_output(target, inputs).map_err(|e| {
            self.diag(format_args!("klf: {e}"));
            Status::Failure
        })
    }

    /// [`Output::resolve_inputs`] for one path.
    pub fn resolve_input(&mut self, p: &Path) -> Result<PathBuf, Status> {
        use klf::engine::input::Named;
        match klf::engine::input::name(p) {
            Named::Inside {
                archive,
                inner,
                digest,
            } => {
                if digest {
                    self.mount_digest(&archive)?;
                } else {
                    self.mount(&archive)?;
                }
                if !klf::engine::input::exists(p) {
                    self.diag(format_args!(
                        "klf: {}: no {} in {}; list the archive with `tar -tf {}`",
                        p.display(),
                        inner.display(),
                        archive.display(),
                        archive.display()
                    ));
                    return Err(Status::Failure);
                }
                Ok(p.to_path_buf())
            }
            Named::Special => {
                self.diag(format_args!(
                    "klf: {}: not a regular file (a pipe, socket or device); not read",
                    p.display()
                ));
                Err(Status::Failure)
            }
            Named::Archive => self.mount(p),
            Named::Digest => self.mount_digest(p),
            Named::File => {
                let parent = p
                    .parent()
                    .filter(|q| !q.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                self.diag(format_args!(
                    "klf: {}: a file, not a directory: pass the partition directory ({}) or the broker directory above it; `klf dump {}` shows what is in one file",
                    p.display(),
                    parent.display(),
                    p.display()
                ));
                Err(Status::Failure)
            }
            Named::Dir => Ok(p.to_path_buf()),
            Named::Unusable(e) => {
                self.diag(format_args!(
                    "klf: {}: {}",
                    p.display(),
                    missing_hint(p, &e)
                ));
                Err(Status::Failure)
            }
        }
    }

    fn mount_digest(&mut self, digest: &Path) -> Result<PathBuf, Status> {
        let mounted = match self.premounted.remove(digest) {
            Some(m) => m,
            None => klf::engine::input::mount_digest(digest, self.archive_limit),
        };
        match mounted {
            Ok(m) => {
                self.note(format_args!(
                    "klf: {}: digest of {} and {} ({} of segments on the node)",
                    digest.display(),
                    klf::render::text::counted(m.files as u64, "file"),
                    klf::render::text::counted(m.segments as u64, "segment"),
                    klf::render::text::human_bytes(m.segment_bytes)
                ));
                for (p, why) in &m.notes {
                    self.note(format_args!(
                        "klf: note: {}!/{}: {} (when the digest was made)",
                        digest.display(),
                        p.display(),
                        klf::render::text::sanitize(why)
                    ));
                }
                Ok(m.root)
            }
            Err(e) => {
                self.diag(format_args!("klf: {e}"));
                Err(Status::Failure)
            }
        }
    }

    fn mount(&mut self, archive: &Path) -> Result<PathBuf, Status> {
        let len = std::fs::metadata(archive).map(|m| m.len()).unwrap_or(0);
        let bar = self.progress(len, "{bar:40} {bytes}/{total_bytes} reading {msg}");
        if let Some(b) = &bar {
            b.set_message(archive.display().to_string());
        }
        let res = klf::engine::input::mount_archive(archive, self.archive_limit, &mut |n| {
            if let Some(b) = &bar {
                b.set_position(n);
            }
        });
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        match res {
            Ok(m) => {
                let kind = match m.compression {
                    klf::model::ArchiveCompression::None => "tar",
                    klf::model::ArchiveCompression::Gzip => "gzip tar",
                    klf::model::ArchiveCompression::Zstd => "zstd tar",
                };
                self.note(format_args!(
                    "klf: {}: {} files, {} read into memory from a {kind} (limit {})",
                    archive.display(),
                    m.files,
                    klf::render::text::human_bytes(m.bytes),
                    klf::render::text::human_bytes(m.limit)
                ));
                for (entry, why) in &m.skipped {
                    self.note(format_args!(
                        "klf: note: {}: entry {entry:?} left out: {why}",
                        archive.display()
                    ));
                }
                Ok(m.root)
            }
            Err(e) => {
                self.diag(format_args!("klf: {e}"));
                Err(Status::Failure)
            }
        }
    }

    /// The buffered stdout writer.
    pub fn out(&mut self) -> &mut BufWriter<Stdout> {
        &mut self.out
    }

    /// How results are laid out on stdout: colour and the terminal's width.
    pub fn look(&self) -> klf::render::style::Look {
        klf::render::style::Look {
            color: self.color,
            width: self.width,
        }
    }

    /// The stdout writer with lines longer than the terminal's width
    /// broken (see [`klf::render::style::Fit`]); flush it when done.
    pub fn fitted(&mut self) -> klf::render::style::Fit<&mut BufWriter<Stdout>> {
        klf::render::style::Fit::new(&mut self.out, self.width)
    }

    /// A diagnostic line on stderr, after flushing stdout so both streams
    /// interleave in order when they go to the same terminal.
    /// The line is sanitised: a name in it holding a terminal escape, a line
    /// break or a bidirectional control cannot forge output.
    pub fn diag(&mut self, msg: impl Display) {
        let _ = self.out.flush();
        let text = msg.to_string();
        let line = klf::render::text::sanitize(&text);
        let write = || {
            let mut e = io::stderr().lock();
            let _ = writeln!(e, "{line}");
        };
        match &self.bar {
            Some(b) if !b.is_finished() => b.suspend(write),
            _ => write(),
        }
    }

    /// Reports a problem in `file` at byte `pos` as `file:pos: reason`.
    pub fn problem(&mut self, file: &str, pos: u64, reason: impl Display) {
        self.diag(format_args!("{file}:{pos}: {reason}"));
    }

    /// Handles a failed write to stdout: a closed pipe becomes
    /// [`Status::BrokenPipe`], anything else is reported.
    pub fn write_failed(&mut self, e: io::Error) -> Status {
        if is_broken_pipe(&e) {
            self.pipe_closed = true;
            Status::BrokenPipe
        } else {
            if !self.write_error {
                self.write_error = true;
                let mut err = io::stderr().lock();
                let _ = writeln!(
                    err,
                    "klf: cannot write to stdout: {e}; the output is incomplete"
                );
            }
            Status::Failure
        }
    }

    /// Flushes stdout and returns the final status. A closed pipe does not
    /// change it: `klf diff ... | head -1` exits 1 after a loss.
    pub fn finish(mut self, status: Status) -> Status {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.flush_repeated();
        if self.pipe_closed {
            return status;
        }
        if self.write_error {
            return status.worst(Status::Failure);
        }
        match self.out.flush() {
            Ok(()) => status,
            Err(e) => status.worst(self.write_failed(e)),
        }
    }
}

/// Most failed reads named one by one at the end of a run.
const FAILED_READS_SHOWN: usize = 20;

/// The end of every run: when a read of the evidence failed because of the
/// machine (an I/O error, too few file descriptors, a directory that cannot
/// be listed, a link that cannot be followed, a file that changed while it
/// was read; see [`klf::engine::machine::failed_reads`]), whatever the command made of the
/// rest is incomplete: each such file is named and the run exits 2, never
/// 0 or 1.
///
/// Before that, files left unread because they are over one of klf's caps
/// ([`klf::engine::machine::refused`]: a properties file larger than Kafka writes, a
/// checkpoint with more entries than klf reads) make a clean run exit 1:
/// the answer holds without them, but it is not a whole reading, and 0
/// would say it is.
pub fn settle_failed_reads(out: &mut Output, status: Status) -> Status {
    let status = settle_refused(out, status);
    let failed = klf::engine::machine::failed_reads();
    if failed.is_empty() {
        return status;
    }
    for (path, reason) in failed.iter().take(FAILED_READS_SHOWN) {
        out.diag(format_args!(
            "klf: {}: cannot read: {reason}",
            path.display()
        ));
    }
    if failed.len() > FAILED_READS_SHOWN {
        out.diag(format_args!(
            "klf: ... and {} more files that could not be read",
            failed.len() - FAILED_READS_SHOWN
        ));
    }
    out.diag(format_args!(
        "klf: {} could not be read (the machine's failure, not evidence about the data): the result is incomplete",
        klf::render::text::counted(failed.len() as u64, "file")
    ));
    status.worst(Status::Failure)
}

/// Files over one of klf's caps, not read: named (each was a warning when
/// it was met), and the run exits at least 1.
fn settle_refused(out: &mut Output, status: Status) -> Status {
    let refused = klf::engine::machine::refused();
    if refused.is_empty() {
        return status;
    }
    for (path, reason) in refused.iter().take(FAILED_READS_SHOWN) {
        out.diag(format_args!("klf: {}: not read: {reason}", path.display()));
    }
    if refused.len() > FAILED_READS_SHOWN {
        out.diag(format_args!(
            "klf: ... and {} more files over klf's caps",
            refused.len() - FAILED_READS_SHOWN
        ));
    }
    out.diag(format_args!(
        "klf: {} left unread, over klf's caps (what Kafka writes never is): the result is incomplete",
        klf::render::text::counted(refused.len() as u64, "file")
    ));
    status.worst(Status::Corruption)
}

/// The reason a path cannot be used, with the likely fix: for a missing
/// path, what its parent directory holds (the likely intended name is among
/// them), or the deepest part of the path that exists.
pub fn missing_hint(p: &Path, e: &io::Error) -> String {
    if e.kind() != io::ErrorKind::NotFound {
        return format!("cannot read this path: {e}");
    }
    let generic = "pass a broker log directory, a partition directory, a folder of broker directories, or a .tar/.tar.gz/.tar.zst archive of one";
    let parent = match p.parent() {
        Some(q) if q.as_os_str().is_empty() => Path::new("."),
        Some(q) => q,
        None => return format!("no such file or directory; {generic}"),
    };
    if parent.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(parent)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        if names.is_empty() || names.len() > 12 {
            return format!("no such file or directory; {generic}");
        }
        return format!(
            "no such file or directory; {} holds: {}",
            parent.display(),
            names.join(", ")
        );
    }
    let mut existing = parent.parent();
    while let Some(a) = existing {
        if a.as_os_str().is_empty() || a.is_dir() {
            break;
        }
        existing = a.parent();
    }
    match existing {
        Some(a) if !a.as_os_str().is_empty() && a != Path::new("/") => format!(
            "no such file or directory: {} exists, but not {}",
            a.display(),
            parent.display()
        ),
        _ => format!("no such file or directory; {generic}"),
    }
}

/// The `Inputs:` section of the `--help` (and man page) of every command
/// that reads captures, for `concat!` into their `AFTER_HELP`.
macro_rules! inputs_help {
    () => {
        "\
Inputs:
  Each PATH may be a broker log directory, a partition directory, a folder of
  broker directories (one capture), a folder whose log directories are up to
  three folders down (a node's several log directories, broker-1/d1 and
  broker-1/d2; NAME/data nodes; pod-0/data-0/kafka-log0), a folder of
  per-node archives (broker-1.tar.gz ...), or a .tar, .tar.gz/.tgz or
  .tar.zst/.tzst archive of any of these, read into memory without
  extracting (at most
  --archive-limit bytes of files, default 4G). A tar of a single folder reads
  that folder. Files inside an archive are named ARCHIVE!/PATH-IN-ARCHIVE
  (capture.tar.gz!/broker-1/orders-0/00000000000000000000.log), and such a
  path may be given as a PATH. Archives with an entry that would land outside
  the archive (an absolute name, a '..' component, a link pointing out) are
  refused whole (exit 2). A node is known by its meta.properties (node.id
  or broker.id, and directory.id), never by a folder's name; folders that
  hold the same node twice, or two clusters, are separate captures: none is
  read, and the message names the command to run on one of them.

"
    };
}
pub(crate) use inputs_help;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_flag_terminal_and_no_color() {
        assert!(ColorChoice::Auto.enabled(true, None));
        assert!(ColorChoice::Auto.enabled(true, Some("")));
        assert!(!ColorChoice::Auto.enabled(true, Some("1")));
        assert!(!ColorChoice::Auto.enabled(false, None));
        assert!(ColorChoice::Always.enabled(false, Some("1")));
        assert!(!ColorChoice::Never.enabled(true, None));
    }
}

/// `--leader`, `--topic`, `--partition`: the partitions a command reads and
/// the reference leader they are followed to.
#[derive(clap::Args, Debug, Clone)]
pub struct Selection {
    /// Take broker N as the reference leader (default: the leader at capture
    /// time from the metadata log, else the highest latest epoch)
    #[arg(long, value_name = "N")]
    pub leader: Option<i32>,
    /// Only this topic
    #[arg(long)]
    pub topic: Option<String>,
    /// Only this partition number
    #[arg(long)]
    pub partition: Option<i32>,
    /// The cluster's inter.broker.protocol.version (e.g. 2.6, 2.6-IV0,
    /// 3.9), which decides how followers truncate: a ZooKeeper-mode
    /// capture does not hold it (default: from the capture; KRaft
    /// truncates on fetch; a ZooKeeper capture assumes so and predicts
    /// OffsetsForLeaderEpoch beside it)
    #[arg(long, value_name = "VERSION", value_parser = parse_inter_broker_protocol)]
    pub inter_broker_protocol: Option<klf::model::truncation::ReplicationProtocol>,
}

/// `--inter-broker-protocol`'s parser.
pub fn parse_inter_broker_protocol(
    s: &str,
) -> Result<klf::model::truncation::ReplicationProtocol, String> {
    klf::model::truncation::ReplicationProtocol::for_inter_broker_protocol(s)
}

impl Selection {
    /// The engine's request for this selection.
    pub fn request(&self, mode: klf::engine::ReadMode) -> klf::engine::DiffRequest {
        klf::engine::DiffRequest {
            leader: self.leader,
            topic: self.topic.clone(),
            partition: self.partition,
            mode,
            protocol: self.inter_broker_protocol,
            drop_logs: false,
        }
    }

    /// Checks the selection against what `capture` holds: a `--topic` or
    /// `--partition` that matches no partition is named with what exists,
    /// and a `--leader` that holds no selected replica is an error (exit 2),
    /// never a silent fall-back to another reference.
    pub fn check(&self, out: &mut Output, capture: &klf::model::Capture) -> Result<(), Status> {
        let selected: Vec<(&(String, i32), &Vec<klf::model::Replica>)> = capture
            .partitions
            .iter()
            .filter(|((t, p), _)| {
                self.topic.as_ref().is_none_or(|x| x == t) && self.partition.is_none_or(|x| x == *p)
            })
            .collect();
        if selected.is_empty() && (self.topic.is_some() || self.partition.is_some()) {
            let filter = match (&self.topic, self.partition) {
                (Some(t), Some(p)) => format!("--topic {t} --partition {p}"),
                (Some(t), None) => format!("--topic {t}"),
                (None, Some(p)) => format!("--partition {p}"),
                (None, None) => String::new(),
            };
            const SHOWN: usize = 20;
            let names: Vec<String> = capture
                .partitions
                .iter()
                .take(SHOWN)
                .map(|((t, p), r)| {
                    let n = r.len();
                    format!(
                        "{t}-{p} ({n} {})",
                        if n == 1 { "replica" } else { "replicas" }
                    )
                })
                .collect();
            let more = capture.partitions.len().saturating_sub(SHOWN);
            let held = if names.is_empty() {
                "no partition at all".to_string()
            } else if more > 0 {
                format!("{} and {more} more", names.join(", "))
            } else {
                names.join(", ")
            };
            out.diag(format_args!(
                "klf: no partition matches {filter}; the capture holds {held}"
            ));
            return Err(Status::Failure);
        }
        if let Some(l) = self.leader {
            let holds = selected
                .iter()
                .any(|(_, rs)| rs.iter().any(|r| r.node_id == Some(l)));
            if !holds {
                let mut brokers: Vec<i32> = selected
                    .iter()
                    .flat_map(|(_, rs)| rs.iter().filter_map(|r| r.node_id))
                    .collect();
                brokers.sort_unstable();
                brokers.dedup();
                let list: Vec<String> = brokers.iter().map(i32::to_string).collect();
                out.diag(format_args!(
                    "klf: --leader {l}: broker {l} holds no replica of the selected partitions (their replicas are on {})",
                    if list.is_empty() { "no known broker".to_string() } else { format!("brokers {}", list.join(", ")) }
                ));
                return Err(Status::Failure);
            }
        }
        Ok(())
    }

    /// The partitions of `capture` it selects that have two or more replicas.
    pub fn candidates(&self, capture: &klf::model::Capture) -> usize {
        capture
            .partitions
            .iter()
            .filter(|((t, p), r)| {
                r.len() >= 2
                    && self.topic.as_ref().is_none_or(|x| x == t)
                    && self.partition.is_none_or(|x| x == *p)
            })
            .count()
    }
}

/// The problems of the controller's view (none without one).
pub fn controller_problems(
    view: Option<&klf::model::ControllerView>,
) -> &[klf::model::ReadProblem] {
    view.map_or(&[], |v| v.problems.as_slice())
}

/// Prints what the metadata log could not give (each with its file and
/// byte) and the status it means: the history built from it lacks those
/// records, so the run is never clean (1; 2 when a read failed).
pub fn metadata_log_problems(out: &mut Output, problems: &[klf::model::ReadProblem]) -> Status {
    let mut status = Status::Clean;
    for p in problems {
        out.diag(format_args!("klf: metadata log: {p}"));
        status = status.worst(if p.io {
            Status::Failure
        } else {
            Status::Corruption
        });
    }
    status
}

/// Reports the partitions a diff could not compare (fewer than two of their
/// replicas read: the machine's failure): each problem, then one line per
/// partition. Returns whether there were any (the run then exits 2).
pub fn report_not_compared(
    out: &mut Output,
    not_compared: &[(String, i32, Vec<klf::model::ReplicaProblem>)],
) -> bool {
    for (topic, partition, problems) in not_compared {
        for pr in problems {
            out.diag(format_args!("klf: {pr}"));
        }
        out.diag(format_args!(
            "klf: {topic}-{partition}: not compared: fewer than two of its replicas could be read (the reads that failed are above); nothing is concluded about it"
        ));
    }
    !not_compared.is_empty()
}

/// Says why there is nothing to compare: one replica of a partition only
/// (`single`, the first is named), or no partition at all.
pub fn no_replicated_partition(out: &mut Output, single: &[(String, i32)]) -> Status {
    if let Some((t, p)) = single.first() {
        let name = format!("{t}-{p}");
        out.diag(format_args!(
            "klf: only one replica of {name} found; klf compares the replicas of a partition: \
             pass the same partition directory from each broker (broker-1/{name} broker-2/{name} ...), \
             the broker directories, or the folder holding them"
        ));
    } else {
        out.diag(format_args!(
            "klf: no partition with two or more replicas under the given paths \
             (give the broker directories of one capture, or the folder holding them)"
        ));
    }
    Status::Failure
}

/// What needs records (`diff --records`, `salvage`) over digests: the
/// diff `req` asks for, then the commands that read the lost records on
/// the nodes that hold them. Exit 2: what was asked is not in the answer.
pub fn records_on_nodes(
    out: &mut Output,
    capture: &klf::model::Capture,
    req: &klf::engine::DiffRequest,
    what: &str,
) -> Status {
    let run = klf::engine::diff_capture(capture, req, &|| {});
    out.diag(format_args!(
        "klf: {what}: a digest holds batch summaries, not records; read the lost records on the nodes that hold them:"
    ));
    let mut any = false;
    for p in &run.partitions {
        let reps = run.replicas(p);
        let ids = klf::engine::broker_ids(reps);
        for r in &p.loss.offsets {
            for b in &r.held_by {
                let Some(rep) = ids.iter().position(|i| i == b).map(|i| &reps[i]) else {
                    continue;
                };
                let (digest, dir) = match klf::engine::input::digest_of(&rep.dir) {
                    Some(x) => x,
                    None => (std::path::PathBuf::new(), rep.dir.display().to_string()),
                };
                any = true;
                out.diag(format_args!(
                    "  {}-{} [{}, {}) on broker {b}{}: klf dump --deep-iteration --print-data-log --offsets {}..{} {}",
                    p.diff.topic,
                    p.diff.partition,
                    r.start,
                    r.end,
                    if digest.as_os_str().is_empty() {
                        String::new()
                    } else {
                        format!(" (the node of {})", digest.display())
                    },
                    r.start,
                    r.end,
                    klf::render::text::sanitize(&dir)
                ));
            }
        }
    }
    if !any {
        out.diag("  (no partition loses records)");
    }
    Status::Failure
}

/// After a command: when it used batches of digests whose CRC the node
/// did not check, says so on stderr (the answer takes them as Kafka's own
/// reads below a high watermark would; a damaged one among them is not
/// seen).
pub fn note_unchecked_batches(out: &mut Output) {
    let n = klf::engine::input::unchecked_digest_batches();
    if n > 0 {
        out.note(format_args!(
            "klf: note: {} read from digests had only their headers read on the node, their CRCs not checked (below the high watermark of a broker Kafka will not recover); `klf digest --verify` checks every batch",
            klf::render::text::counted(n, "batch")
        ));
    }
}

/// Says on stderr which mounted digests were made without `--verify`,
/// for `check`, which checks every batch.
pub fn note_unverified_digests(out: &mut Output) {
    let unverified = klf::engine::input::unverified_digests();
    if !unverified.is_empty() {
        out.note(format_args!(
            "klf: note: {} made without --verify ({}): the CRCs of their batches below each partition's high watermark were not checked on the node; make the digests with `klf digest --verify` to check every batch",
            klf::render::text::counted(unverified.len() as u64, "digest"),
            unverified
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}
