//! Reading the nodes' own Kafka logs (`server.log`, `controller.log`,
//! `state-change.log`, rotated and gzip ones too) into the statements
//! [`crate::format::kafka_log::event`] knows, each with its file and line.
//!
//! A file is read a chunk at a time, cut where a record starts, so what is
//! held does not grow with the file: only the statements are kept, up to
//! [`MAX_EVENTS`] in all. A gzip file is inflated as it is read, up to
//! [`MAX_LOG_BYTES`] of text; a stream cut short keeps what came before
//! the cut, and says so. Reads fail like every other read of klf: an I/O
//! error is the machine's, noted against the file (exit 2), and nothing is
//! inferred from what the file would have said.

use std::io::{self, Read};
use std::path::Path;

use rayon::prelude::*;

use super::vfs as fs;
use crate::format::kafka_log::{self, log_file_kind, Item};
use crate::model::broker_log::{BrokerLogs, LogFileRead, LogSource, LoggedEvent};
use crate::model::LogFile;

/// The most text read from one log file (after inflating a gzip one).
pub const MAX_LOG_BYTES: u64 = 4 << 30;

use crate::model::broker_log::MAX_EVENTS;

/// Bytes read at a time.
const CHUNK: usize = 4 << 20;

/// The longest message text kept with a statement, for the evidence.
const MAX_TEXT: usize = 1024;

/// Reads `files` (in parallel, one file per task), keeping the statements
/// of every file whose node is known; the result's events are per node in
/// the order the node logged them: each file's own order kept, files of
/// one node merged by time.
pub fn read_logs(files: &[LogFile]) -> BrokerLogs {
    let per_file: Vec<(LogFileRead, Vec<LoggedEvent>)> = files.par_iter().map(read_file).collect();
    let mut out = BrokerLogs::default();
    let mut events: Vec<(i64, LoggedEvent)> = Vec::new();
    for (read, evs) in per_file {
        out.files.push(read);
        // a file's own order, even where its clock stepped back
        let mut latest = i64::MIN;
        for e in evs {
            latest = latest.max(e.time_ms);
            if events.len() >= MAX_EVENTS {
                out.events_dropped += 1;
                continue;
            }
            events.push((latest, e));
        }
    }
    events.sort_by_key(|(t, e)| (e.node, *t));
    out.events = events.into_iter().map(|(_, e)| e).collect();
    out
}

/// The log files `--logs NODE=PATH` names: the file itself (whatever its
/// name), or a folder's Kafka logs (by name, in it and in its `logs/`).
pub fn given_logs(node: i32, path: &Path) -> Result<Vec<LogFile>, String> {
    let meta = fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_dir() {
        let found = super::discover::log_files_in(path);
        if found.is_empty() {
            return Err(format!(
                "{}: no Kafka log in this folder (server.log, controller.log, state-change.log, kafkaServer.out, rotated or .gz)",
                path.display()
            ));
        }
        return Ok(found
            .into_iter()
            .map(|(path, kind, gzip)| LogFile {
                node_id: Some(node),
                path,
                kind,
                gzip,
                given: true,
            })
            .collect());
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let (kind, gzip) =
        log_file_kind(name).unwrap_or((kafka_log::LogFileKind::Server, name.ends_with(".gz")));
    Ok(vec![LogFile {
        node_id: Some(node),
        path: path.to_path_buf(),
        kind,
        gzip,
        given: true,
    }])
}

fn read_file(f: &LogFile) -> (LogFileRead, Vec<LoggedEvent>) {
    let mut read = LogFileRead {
        path: f.path.clone(),
        node: f.node_id,
        ..LogFileRead::default()
    };
    let Some(node) = f.node_id else {
        read.stopped = Some(
            "not read: the node that wrote it is not known (pass it with --logs NODE=PATH)"
                .to_string(),
        );
        return (read, Vec::new());
    };
    let (file, _) = match fs::open_file(&f.path) {
        Ok(x) => x,
        Err(e) => {
            read.io_error = true;
            read.stopped = Some(format!("cannot read: {e}"));
            return (read, Vec::new());
        }
    };
    let mut events = Vec::new();
    let source: Box<dyn Read> = if f.gzip {
        Box::new(flate2::read::MultiGzDecoder::new(io::BufReader::new(file)))
    } else {
        Box::new(file)
    };
    let mut chunks = Chunks::new(source.take(MAX_LOG_BYTES));
    loop {
        match chunks.next_chunk() {
            Ok(true) => {
                let base = chunks.line_base;
                chunks.line_base += take_chunk(
                    &f.path,
                    node,
                    chunks.current(),
                    base,
                    &mut read,
                    &mut events,
                );
            }
            Ok(false) => break,
            Err(e) => {
                // flate2 says a damaged or cut stream with these kinds; any
                // other error is the machine's
                let content = f.gzip
                    && matches!(
                        e.kind(),
                        io::ErrorKind::InvalidData
                            | io::ErrorKind::InvalidInput
                            | io::ErrorKind::UnexpectedEof
                    );
                read.io_error = !content;
                read.stopped = Some(if content {
                    format!(
                        "gzip stream damaged or cut short after {} bytes of text ({e}); what came before is read",
                        chunks.consumed
                    )
                } else {
                    format!("read failed after {} bytes: {e}", chunks.consumed)
                });
                if !content {
                    fs::read_failed(&f.path, &e);
                }
                break;
            }
        }
    }
    if chunks.consumed >= MAX_LOG_BYTES && read.stopped.is_none() {
        read.stopped = Some(format!(
            "only the first {} GiB of text read (klf's cap on one log file)",
            MAX_LOG_BYTES >> 30
        ));
    }
    (read, events)
}

/// Parses one chunk of text, whose first line is line `base + 1` of the
/// file, into statements; the lines it ends (newlines it holds).
fn take_chunk(
    path: &Path,
    node: i32,
    chunk: &[u8],
    base: u64,
    read: &mut LogFileRead,
    events: &mut Vec<LoggedEvent>,
) -> u64 {
    for item in kafka_log::entries(chunk) {
        match item {
            Item::Unreadable(u) => read.unreadable_lines += u.lines,
            Item::Entry(e) => {
                read.entries += 1;
                read.lines_cut += u64::from(e.lines_cut);
                let Some(event) = kafka_log::event(&e) else {
                    continue;
                };
                read.events += 1;
                let mut text = e.message.lines().next().unwrap_or_default().to_string();
                if text.len() > MAX_TEXT {
                    let mut cut = MAX_TEXT;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    text.push('…');
                }
                events.push(LoggedEvent {
                    node,
                    source: LogSource {
                        file: path.to_path_buf(),
                        line: base + e.line,
                    },
                    time: e.timestamp,
                    time_ms: e.time_ms,
                    level: e.level,
                    event,
                    text,
                });
            }
        }
    }
    let lines = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
    read.lines = base + lines + u64::from(chunk.last().is_some_and(|&b| b != b'\n'));
    lines
}

/// A reader's text a chunk at a time, each cut just before a line that
/// starts a record (`\n[` then a digit), so that no record is split (but
/// one longer than a chunk, which is cut at a line end).
struct Chunks<R: Read> {
    src: R,
    buf: Vec<u8>,
    /// Bytes of `buf` handed out last time (dropped on the next call).
    handed: usize,
    eof: bool,
    /// Bytes read from the source.
    consumed: u64,
    /// Lines before the chunk handed out.
    line_base: u64,
    /// A read error met after some text: given after that text.
    pending: Option<io::Error>,
}

impl<R: Read> Chunks<R> {
    fn new(src: R) -> Self {
        Chunks {
            src,
            buf: Vec::new(),
            handed: 0,
            eof: false,
            consumed: 0,
            line_base: 0,
            pending: None,
        }
    }

    /// The chunk [`Chunks::next_chunk`] made.
    fn current(&self) -> &[u8] {
        &self.buf[..self.handed]
    }

    /// Makes the next chunk; `false` at the end.
    fn next_chunk(&mut self) -> io::Result<bool> {
        self.buf.drain(..self.handed);
        self.handed = 0;
        while !self.eof && self.buf.len() < CHUNK {
            let at = self.buf.len();
            self.buf.resize(CHUNK.max(at + 64 * 1024), 0);
            let n = match self.src.read(&mut self.buf[at..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
                Err(e) => {
                    self.buf.truncate(at);
                    // hand out what came before the failure first
                    if at > 0 {
                        self.eof = true;
                        self.pending = Some(e);
                        break;
                    }
                    return Err(self.pending.take().unwrap_or(e));
                }
            };
            self.buf.truncate(at + n);
            self.consumed += n as u64;
            if n == 0 {
                self.eof = true;
            }
        }
        if self.buf.is_empty() {
            return match self.pending.take() {
                Some(e) => Err(e),
                None => Ok(false),
            };
        }
        let cut = if self.eof {
            self.buf.len()
        } else {
            record_start_before_end(&self.buf)
                .or_else(|| self.buf.iter().rposition(|&b| b == b'\n').map(|i| i + 1))
                .unwrap_or(self.buf.len())
        };
        self.handed = cut;
        Ok(true)
    }
}

/// The position of the last line in `buf` that starts a record (`[` and a
/// digit after a newline), when it is not the first line.
fn record_start_before_end(buf: &[u8]) -> Option<usize> {
    let mut i = buf.len();
    while i > 0 {
        let nl = buf[..i].iter().rposition(|&b| b == b'\n')?;
        if nl + 2 < buf.len() && buf[nl + 1] == b'[' && buf[nl + 2].is_ascii_digit() && nl > 0 {
            return Some(nl + 1);
        }
        i = nl;
    }
    None
}
