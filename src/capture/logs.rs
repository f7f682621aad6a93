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
//!
//! [`reduce`] writes the copy of a log a digest ships: the lines of the
//! records that state an event, every other line left empty, so that the
//! reader finds the same statements on the same lines in the copy.

use std::io::{self, Read, Write};
use std::path::Path;

use rayon::prelude::*;

use super::vfs as fs;
use crate::format::kafka_log::{self, log_file_kind, Item};
use crate::model::broker_log::{BrokerLogs, LogFileRead, LogSource, LoggedEvent};
use crate::model::LogFile;

/// The most text read from one log file (after inflating a gzip one).
pub const MAX_LOG_BYTES: u64 = 4 << 30;

/// The most text of one log's reduced copy [`reduce`] writes (a digest
/// entry holds at most 256 MiB: the copy, and the gzip stream or zstd
/// frame around it, stay below that).
pub const MAX_REDUCED_BYTES: u64 = 192 << 20;

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
                let content = f.gzip && gzip_damage(&e);
                read.io_error = !content;
                read.stopped = Some(if content {
                    // the line, not the byte: a digest's reduced copy of
                    // the log is cut at the same line
                    format!(
                        "gzip stream damaged or cut short after line {}; the lines before it are read",
                        chunks.line_base
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

/// Whether a read error of a gzip stream is the stream's (damaged or cut
/// short: flate2 says so with these kinds); any other is the machine's.
fn gzip_damage(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof
    )
}

/// What [`reduce`] read and wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reduced {
    /// Lines read.
    pub lines: u64,
    /// Lines kept: those of the records that state an event.
    pub kept: u64,
    /// Bytes of text read (inflated, for a gzip file).
    pub text_bytes: u64,
    /// Bytes of text written (before gzip compresses them, for a gzip
    /// file).
    pub written: u64,
    /// Why the copy ends before the file does: a cap reached, a gzip
    /// stream damaged or cut short (the copy's own stream is then cut
    /// short too).
    pub stopped: Option<String>,
}

/// Writes to `out` the reduced copy of the Kafka log read from `src`
/// (gzip-compressed when `gzip`, and the copy then too: one gzip member,
/// no name, time 0, the same bytes for the same input).
///
/// The copy holds every line of each record that states an event klf
/// reads ([`kafka_log::event`]), its continuation lines too (a producer
/// error's exception), byte for byte, and an empty line in place of every
/// other line: line numbers, the evidence klf prints, stay those of the
/// file. The text is cut into records as the reader cuts it (the same
/// chunks), so the reader finds the same statements in the copy as in the
/// file. Reading stops at [`MAX_LOG_BYTES`] of text as the reader does,
/// and the copy at [`MAX_REDUCED_BYTES`], said in [`Reduced::stopped`].
/// A gzip stream damaged or cut short is reduced up to the damage, and
/// the copy's stream is left without its end, so that a reader of the
/// copy meets a cut stream there as a reader of the file does. An error
/// is a failed read or write (the machine's), never the content's.
pub fn reduce(src: &mut dyn Read, gzip: bool, out: &mut dyn Write) -> io::Result<Reduced> {
    let mut r = Reduced::default();
    if !gzip {
        copy_reduced(src, out, false, &mut r)?;
        return Ok(r);
    }
    let source = flate2::read::MultiGzDecoder::new(io::BufReader::with_capacity(1 << 20, src));
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        .write(HoldBack::new(out), flate2::Compression::default());
    let damaged = copy_reduced(source, &mut enc, true, &mut r)?;
    // the member's trailer (CRC and length) is written unless the file's
    // stream was damaged
    enc.finish()?.release(!damaged)?;
    Ok(r)
}

/// [`reduce`]'s copy of the text of `source` into `sink`: whether a gzip
/// stream (`gzip`) was found damaged or cut short.
fn copy_reduced(
    source: impl Read,
    sink: &mut dyn Write,
    gzip: bool,
    r: &mut Reduced,
) -> io::Result<bool> {
    let mut chunks = Chunks::new(source.take(MAX_LOG_BYTES));
    let mut copy = Vec::new();
    let mut damaged = false;
    let mut last = b'\n';
    loop {
        match chunks.next_chunk() {
            Ok(true) => {
                let chunk = chunks.current();
                let kept = reduce_chunk(chunk, &mut copy);
                if r.written.saturating_add(copy.len() as u64) > MAX_REDUCED_BYTES {
                    r.stopped = Some(format!(
                        "the reduced copy ends after line {} ({} MiB of kept lines and line ends, the most a digest ships of one log)",
                        r.lines,
                        MAX_REDUCED_BYTES >> 20
                    ));
                    break;
                }
                sink.write_all(&copy)?;
                r.written += copy.len() as u64;
                r.kept += kept;
                r.lines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
                last = chunk.last().copied().unwrap_or(b'\n');
            }
            Ok(false) => break,
            Err(e) if gzip && gzip_damage(&e) => {
                damaged = true;
                r.stopped = Some(format!(
                    "gzip stream damaged or cut short after {} bytes of text ({e}); reduced up to there, and the copy's gzip stream cut short there too",
                    chunks.consumed
                ));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    // a last line without its line end is a line too
    if last != b'\n' && r.stopped.is_none() {
        r.lines += 1;
    }
    r.text_bytes = chunks.consumed;
    if chunks.consumed >= MAX_LOG_BYTES && r.stopped.is_none() {
        r.stopped = Some(format!(
            "only the first {} GiB of text reduced (klf's cap on one log file, as its reader's)",
            MAX_LOG_BYTES >> 30
        ));
    }
    Ok(damaged)
}

/// The reduced copy of one chunk of text (as [`Chunks`] cuts it) into
/// `out`: the lines of each record that states an event as they are, an
/// empty line for every other line (nothing for a last line without its
/// line end); the number of lines kept.
fn reduce_chunk(chunk: &[u8], out: &mut Vec<u8>) -> u64 {
    out.clear();
    // the lines kept, [first, end) (1-based, in the chunk)
    let mut keep: Vec<(u64, u64)> = Vec::new();
    let mut open: Option<u64> = None;
    for item in kafka_log::entries(chunk) {
        let (first, states) = match &item {
            Item::Entry(e) => (e.line, kafka_log::event(e).is_some()),
            Item::Unreadable(u) => (u.line, false),
        };
        if let Some(s) = open.take() {
            keep.push((s, first));
        }
        if states {
            open = Some(first);
        }
    }
    if let Some(s) = open {
        keep.push((s, u64::MAX));
    }
    let mut ranges = keep.into_iter().peekable();
    let mut kept = 0u64;
    for (i, line) in chunk.split_inclusive(|&b| b == b'\n').enumerate() {
        let no = i as u64 + 1;
        while ranges.peek().is_some_and(|&(_, end)| end <= no) {
            ranges.next();
        }
        if ranges.peek().is_some_and(|&(first, _)| first <= no) {
            out.extend_from_slice(line);
            kept += 1;
        } else if line.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    kept
}

/// The bytes of a gzip member's trailer (CRC-32 and length).
const GZIP_TRAILER: usize = 8;

/// A writer that holds back the last [`GZIP_TRAILER`] bytes written to
/// it until [`HoldBack::release`] says whether they go out.
struct HoldBack<W: Write> {
    inner: W,
    tail: Vec<u8>,
}

impl<W: Write> HoldBack<W> {
    fn new(inner: W) -> Self {
        HoldBack {
            inner,
            tail: Vec::with_capacity(2 * GZIP_TRAILER),
        }
    }

    /// Writes the bytes held back (`keep`), or drops them.
    fn release(mut self, keep: bool) -> io::Result<()> {
        if keep {
            self.inner.write_all(&self.tail)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Write for HoldBack<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // all but the last bytes of what was held and what comes
        let total = self.tail.len() + buf.len();
        let out = total.saturating_sub(GZIP_TRAILER);
        let from_tail = out.min(self.tail.len());
        self.inner.write_all(&self.tail[..from_tail])?;
        self.tail.drain(..from_tail);
        let from_buf = out - from_tail;
        self.inner.write_all(&buf[..from_buf])?;
        self.tail.extend_from_slice(&buf[from_buf..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The lines below are Kafka 4.4's, from a broker's `server.log` in
    //! klf's oracle harness (the data directory written `/d`).
    use super::*;
    use crate::format::kafka_log::Event;
    use std::path::PathBuf;

    const LOADED: &str = "[2026-12-06 02:28:55,005] INFO Completed load of Log(dir=/d/unclean-0, topicId=masD5675SF6pMztuWz5hvw, topic=unclean, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset=250) with 2 segments, local-log-start-offset 0 and log-end-offset 250 in 18ms (1/1 completed in /d) (org.apache.kafka.storage.internals.log.LogManager)\n";
    const FETCHER: &str = "[2026-12-06 02:28:55,116] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition unclean-0 with TruncationState(offset=100, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=100) (kafka.server.ReplicaFetcherThread)\n";
    const OTHER: &str = "[2026-12-06 02:28:54,993] INFO [LogLoader partition=unclean-0, dir=/d] Producer state recovery took 1ms for snapshot load and 0ms for segment recovery from offset 0 (org.apache.kafka.storage.internals.log.UnifiedLog)\n";
    const CONFIG: &str = "[2026-12-06 02:28:16,850] INFO KafkaConfig values: \n\tadvertised.listeners = PLAINTEXT://localhost:9092\n\tbroker.id = 1\n (org.apache.kafka.common.config.AbstractConfig)\n";
    const PRODUCER: &str = "[2026-12-06 04:32:29,508] ERROR [ReplicaManager broker=3] Error processing append operation on partition n22FCMDaQle6dxLF9dftgg:orders-0 (kafka.server.ReplicaManager)\norg.apache.kafka.common.errors.OutOfOrderSequenceException: Out of order sequence number for producer 1 at offset 162 in partition orders-0: 50 (incoming seq. number), 19 (current end sequence number)\n";
    const PRODUCER_ALONE: &str = "[2026-12-06 04:32:29,509] ERROR [ReplicaManager broker=3] Error processing append operation on partition orders-0 (kafka.server.ReplicaManager)\n";

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("klf-logs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn gz(text: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn read(path: &Path, gzip: bool) -> ReadBack {
        read_file(&LogFile {
            node_id: Some(1),
            path: path.to_path_buf(),
            kind: kafka_log::LogFileKind::Server,
            gzip,
            given: false,
        })
    }

    /// How a file was read, and its statements.
    type ReadBack = (LogFileRead, Vec<LoggedEvent>);

    /// What a statement says and where, the file left out.
    fn said(events: &[LoggedEvent]) -> Vec<(u64, String, Event, String)> {
        events
            .iter()
            .map(|e| {
                (
                    e.source.line,
                    e.time.clone(),
                    e.event.clone(),
                    e.text.clone(),
                )
            })
            .collect()
    }

    /// Reduces `bytes` (as a gzip file when `gzip`), and reads the file
    /// and its copy: what reducing said, and both reads.
    fn both(tag: &str, bytes: &[u8], gzip: bool) -> (Reduced, Vec<u8>, ReadBack, ReadBack) {
        let d = dir(tag);
        let (file, copy) = (d.join("server.log"), d.join("copy.log"));
        std::fs::write(&file, bytes).unwrap();
        let mut out = Vec::new();
        let r = reduce(&mut std::fs::File::open(&file).unwrap(), gzip, &mut out).unwrap();
        std::fs::write(&copy, &out).unwrap();
        let a = read(&file, gzip);
        let b = read(&copy, gzip);
        let _ = std::fs::remove_dir_all(&d);
        (r, out, a, b)
    }

    fn text_of(out: &[u8], gzip: bool) -> Vec<u8> {
        if !gzip {
            return out.to_vec();
        }
        let mut t = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(out).read_to_end(&mut t);
        t
    }

    #[test]
    fn a_reduced_copy_keeps_the_statements_on_their_lines() {
        let mut text = Vec::new();
        text.extend_from_slice(b"not a record\n");
        text.extend_from_slice(CONFIG.as_bytes());
        text.extend_from_slice(OTHER.replace('\n', "\r\n").as_bytes());
        text.extend_from_slice(LOADED.as_bytes());
        text.extend_from_slice(PRODUCER.as_bytes());
        text.extend_from_slice(OTHER.as_bytes());
        text.extend_from_slice(PRODUCER_ALONE.as_bytes());
        // bytes that are not UTF-8, in a record kept and in one not
        text.extend_from_slice(&FETCHER.as_bytes()[..FETCHER.len() - 1]);
        text.extend_from_slice(b"\n\tat \xff\xfe kept\n");
        text.extend_from_slice(b"[2026-12-06 02:28:55,200] INFO \xc3\x28 not kept (x.Y)\n");
        text.extend_from_slice(OTHER.trim_end().as_bytes());
        for gzip in [false, true] {
            let bytes = if gzip { gz(&text) } else { text.clone() };
            let (r, out, (ra, ea), (rb, eb)) = both("kept", &bytes, gzip);
            assert_eq!(said(&ea), said(&eb));
            assert_eq!(ea.len(), 4, "{:?}", said(&ea));
            assert_eq!(r.stopped, None);
            assert_eq!(r.lines, ra.lines);
            let copy = text_of(&out, gzip);
            let lines: Vec<&[u8]> = copy.split(|&b| b == b'\n').collect();
            let orig: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
            // the same line ends; each line as it was, or empty
            assert_eq!(copy.iter().filter(|&&b| b == b'\n').count(), orig.len() - 1);
            for (i, (c, o)) in lines.iter().zip(&orig).enumerate() {
                assert!(c.is_empty() || c == o, "line {}: {c:?}", i + 1);
            }
            // kept: the loaded line, the producer error and its exception,
            // the one without, the truncation and its `at` line
            assert_eq!(r.kept, 6, "{}", String::from_utf8_lossy(&copy));
            assert_eq!(
                rb.lines,
                ra.lines - 1,
                "the last line, not kept, has no line end"
            );
            assert!(!copy.windows(8).any(|w| w == b"KafkaCon"));
        }
    }

    #[test]
    fn chunks_and_a_long_line_cut_the_copy_as_the_file() {
        // statements on both sides of the reader's chunk ends, a record of
        // 10 MB (no line end in a chunk), and a producer error whose
        // exception line is longer than a chunk
        let mut text = Vec::new();
        for i in 0..30_000 {
            text.extend_from_slice(if i % 97 == 0 { LOADED } else { OTHER }.as_bytes());
        }
        text.extend_from_slice(FETCHER.as_bytes());
        text.extend_from_slice(b"[2026-12-06 02:28:55,300] INFO ");
        text.resize(text.len() + 10_000_000, b'x');
        text.extend_from_slice(b" (x.Y)\n");
        text.extend_from_slice(PRODUCER_ALONE.as_bytes());
        text.resize(text.len() + 5_000_000, b'e');
        text.push(b'\n');
        text.extend_from_slice(FETCHER.as_bytes());
        for gzip in [false, true] {
            let bytes = if gzip { gz(&text) } else { text.clone() };
            let (r, out, (ra, ea), (rb, eb)) = both("chunks", &bytes, gzip);
            assert!(ea.len() > 300, "{}", ea.len());
            assert_eq!(said(&ea), said(&eb));
            assert_eq!((r.lines, rb.lines), (ra.lines, ra.lines));
            assert!(out.len() < 300_000, "{} bytes", out.len());
        }
    }

    #[test]
    fn a_gzip_stream_cut_short_is_reduced_up_to_the_cut() {
        let mut text = Vec::new();
        for i in 0..2000 {
            text.extend_from_slice(if i % 10 == 0 { LOADED } else { OTHER }.as_bytes());
        }
        let whole = gz(&text);
        let cut = &whole[..whole.len() * 2 / 3];
        let (r, out, (ra, ea), (rb, eb)) = both("cut", cut, true);
        assert!(
            r.stopped
                .as_deref()
                .is_some_and(|s| s.contains("cut short")),
            "{r:?}"
        );
        assert!(!ea.is_empty());
        assert_eq!(said(&ea), said(&eb));
        // the copy's stream is cut short too
        assert!(ra.stopped.is_some() && rb.stopped.is_some(), "{rb:?}");
        assert!(!ra.io_error && !rb.io_error);
        let mut t = Vec::new();
        assert!(flate2::read::MultiGzDecoder::new(&out[..])
            .read_to_end(&mut t)
            .is_err());
    }

    #[test]
    fn a_reduced_gzip_copy_is_the_same_bytes_each_time() {
        let text = [LOADED, OTHER, FETCHER].concat();
        let mut a = Vec::new();
        let mut b = Vec::new();
        reduce(&mut &gz(text.as_bytes())[..], true, &mut a).unwrap();
        reduce(&mut &gz(text.as_bytes())[..], true, &mut b).unwrap();
        assert_eq!(a, b);
        // no name, no time: the header's time field is 0
        assert_eq!(&a[4..8], &[0, 0, 0, 0]);
        assert_eq!(a[3] & 0x08, 0);
    }
}
