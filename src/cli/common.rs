//! What every subcommand shares: buffered stdout, diagnostics on stderr, and
//! the run status that becomes the exit code.

use std::fmt::Display;
use std::io::{self, BufWriter, Stdout, Write};

/// Outcome of a run, ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Nothing wrong (exit 0).
    Clean,
    /// The input is damaged: corruption was found and reported (exit 1).
    Corruption,
    /// A usage or I/O error (exit 2).
    Failure,
    /// stdout was closed by the reader: stop quietly (exit 0).
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

    /// The more severe of two statuses.
    pub fn worst(self, other: Status) -> Status {
        self.max(other)
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
}

impl Output {
    /// Output to the process's stdout.
    pub fn stdout() -> Output {
        Output {
            out: BufWriter::with_capacity(1 << 18, io::stdout()),
            pipe_closed: false,
        }
    }

    /// The buffered stdout writer.
    pub fn out(&mut self) -> &mut BufWriter<Stdout> {
        &mut self.out
    }

    /// A diagnostic line on stderr, after flushing stdout so both streams
    /// interleave in order when they go to the same terminal.
    pub fn diag(&mut self, msg: impl Display) {
        let _ = self.out.flush();
        let mut e = io::stderr().lock();
        let _ = writeln!(e, "{msg}");
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
            let mut err = io::stderr().lock();
            let _ = writeln!(err, "klf: error writing output: {e}");
            Status::Failure
        }
    }

    /// Flushes stdout and returns the final status.
    pub fn finish(mut self, status: Status) -> Status {
        if self.pipe_closed {
            return Status::BrokenPipe;
        }
        match self.out.flush() {
            Ok(()) => status,
            Err(e) => status.worst(self.write_failed(e)),
        }
    }
}
