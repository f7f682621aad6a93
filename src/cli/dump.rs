//! `klf dump`: what is in `.log`, `.index`, `.timeindex`, `.txnindex`,
//! producer `.snapshot` and KRaft `.checkpoint` files, as kafka-dump-log
//! prints it (`--format kafka`, byte-identical on stdout), as JSON Lines, or
//! as tables. PATHs may be files, partition directories, broker log
//! directories or folders of broker directories (see
//! [`klf::engine::dump::walk`]); in the json and table formats the
//! checkpoint files, `partition.metadata`, `meta.properties`,
//! `quorum-state` and `.kafka_cleanshutdown` are dumped too (see
//! [`klf::render::dump::files`]).
//!
//! The engine (`klf::engine::dump`) expands the PATHs, opens each file and
//! picks what a selection asks for; the renderers (`klf::render::dump`)
//! write its text. Here: the arguments, the options they make, and the
//! loop that writes each file's text to stdout, its problems to stderr and
//! a progress bar, and settles the exit status.
//!
//! Flags carry kafka-dump-log's names. Unlike kafka-dump-log, a damaged file
//! does not end the run: the problem is reported on stderr as
//! `file:byte: reason`, the next file is dumped, and the exit status is 1.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use klf::engine::dump::meter::{Meter, Progress};
use klf::engine::dump::open::{self, Inputs};
use klf::engine::dump::select::{self, Log, Logs, OffsetRange, Selection};
use klf::engine::dump::{walk, RecordedVersion};
use klf::model::dump::{DecoderKind, Item, Kind};
use klf::render::dump::kafka::{
    ClassFormatter, DecoderClass, DumpError, Dumper, Encoding, FileNames, Options, RecordFormatter,
    Show, StringFormatter,
};
use klf::render::dump::{self as render, Outcome};
use klf::render::release::{KafkaVersion, Release};

use super::common::{Output, Status};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// kafka-dump-log's text, byte for byte (the default, on a terminal
    /// too).
    Kafka,
    /// JSON Lines: one object per file, batch, record, index entry or problem
    /// (`jsonl` is the same).
    #[value(alias = "jsonl")]
    Json,
    /// Human-readable tables.
    Table,
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = "\
Exit status:
  0  nothing wrong (also when stdout is closed early, as with | head, and
     when a selection matches nothing: stderr then says what the log
     holds, `klf dump: DIR: nothing matches --offsets 5000..6000: its 2
     segments hold offsets 0 to 163 (end offset 164)`)
  1  corruption found: a bad CRC, a torn tail, a batch or entry that cannot
     be read, a checkpoint, properties or snapshot file Kafka would refuse,
     a file over klf's caps (not read: a properties or state file over
     1 MiB, a checkpoint with a line over 4 KiB or over 1,000,000 entries)
  2  usage or I/O error: no PATH, a missing or unreadable file or PATH, the
     .log of an index missing, an unreadable archive

Output:
  kafka  kafka-dump-log's text, byte for byte (the default, on a terminal
         too; there, characters of keys and values that could drive it,
         such as ESC, are shown as \\u{1b})
  json   JSON Lines: one object per file, batch, record, index entry,
         checkpoint entry or problem; every object has \"type\" and \"file\"
         first (docs/json.md in the klf sources lists every type and field)
  table  tables for reading (the default when --show or --encoding is
         given without --format)
  Problems go to stderr as FILE:BYTE: reason (the first 1000 of a file's)
  and the next file is dumped. Checkpoints, snapshots and the other files
  are written an entry at a time, never held whole. With stdout not a
  terminal and stderr one, a bar on stderr counts the bytes dumped.

Selections (--offsets, --since, --until, --key, --producer-id, --count):
  Only the batches and records picked are dumped: the other files of a
  directory (indexes, snapshots, checkpoints, partition.metadata) are left
  out, and counted on stderr; a file named as a PATH is dumped. A log the
  selection matches nothing of is named on stderr with the offsets it
  holds (exit status 0). --producer-id picks the batches (data and
  markers) of a producer; --transactional-id those of the producer ids
  the __transaction_state of the segments' capture gives it (their log
  directory, or the folder of broker directories holding it), and is
  refused (exit 2) for a file with no such capture around it.

Inputs:
  PATH may be a segment, index, snapshot or checkpoint file, a partition
  directory, a broker log directory, a folder of broker directories, or a
  .tar, .tar.gz/.tgz or .tar.zst/.tzst archive of any of these (read into
  memory, at most --archive-limit bytes). A file inside an archive is
  ARCHIVE!/PATH-IN-ARCHIVE, and may be given as a PATH.

Examples:
  klf dump broker-1/orders-0/00000000000000000000.log --deep-iteration
  klf dump --files 00000000000000000000.log,00000000000000000000.index
  klf dump capture/ --format json | jq -c 'select(.type == \"batch\") | [.file, .base_offset, .partition_leader_epoch]'
  klf dump 'capture.tar.gz!/broker-1/orders-0' --format table
  klf dump broker-1/orders-0/00000000000000000000.log --deep-iteration --offsets 100..110
  klf dump broker-1/orders-0 --print-data-log --offsets -100..
  klf dump broker-1/orders-0 --since '2026-12-01 18:15:47,655' --count 5
  klf dump broker-1/orders-0 --format table --show key,headers --since 2026-12-01T18:15:47Z
  klf dump broker-1/orders-0 --transactional-id klf-impact-hanging --deep-iteration
";

/// Arguments of `klf dump`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Files (.log, .index, .timeindex, .txnindex, .snapshot, KRaft
    /// .checkpoint; in json/table also checkpoint files, partition.metadata,
    /// meta.properties), partition directories, broker log directories or
    /// folders of broker directories.
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,

    /// Comma-separated files to dump (kafka-dump-log's option), after PATHs.
    #[arg(long, value_name = "FILE1,FILE2,...")]
    pub files: Vec<String>,

    /// Output format [default: kafka, on a terminal too; table when
    /// --show or --encoding is given].
    #[arg(long, value_enum)]
    pub format: Option<Format>,

    /// Print record keys and payloads (implies --deep-iteration).
    #[arg(long)]
    pub print_data_log: bool,

    /// Print every record, not only batches.
    #[arg(long)]
    pub deep_iteration: bool,

    /// Only read this many bytes of each .log file (K, M, G: powers of 1024).
    #[arg(long, value_name = "BYTES", default_value_t = i32::MAX, value_parser = parse_i32_bytes)]
    pub max_bytes: i32,

    /// Bytes read at each .index position when checking it against the log.
    #[arg(long, value_name = "BYTES", default_value_t = 5 * 1024 * 1024, value_parser = parse_i32_bytes)]
    pub max_message_size: i32,

    /// Omit the per-record metadata.
    #[arg(long)]
    pub skip_record_metadata: bool,

    /// Only run the broker's sanity check on index files.
    #[arg(long)]
    pub index_sanity_check: bool,

    /// Check index entries against the log without printing them.
    #[arg(long)]
    pub verify_index_only: bool,

    /// Decode every record as __consumer_offsets (implies --print-data-log).
    /// json/table pick decoders from the topic without it.
    #[arg(long)]
    pub offsets_decoder: bool,

    /// Decode every record as __transaction_state (implies --print-data-log).
    /// json/table pick decoders from the topic without it.
    #[arg(long)]
    pub transaction_log_decoder: bool,

    /// Decode every record as KRaft metadata (implies --print-data-log).
    /// json/table pick decoders from the topic without it.
    #[arg(long)]
    pub cluster_metadata_decoder: bool,

    /// Decode every record as __share_group_state (implies
    /// --print-data-log). json/table pick decoders from the topic without it.
    #[arg(long)]
    pub share_group_state_decoder: bool,

    /// Decode every record as __remote_log_metadata, tiered storage's
    /// segment records (implies --print-data-log; kafka format prints each
    /// as the Java object Kafka makes of it, json/table as its schema's
    /// JSON). json/table pick decoders from the topic without it.
    #[arg(long)]
    pub remote_log_metadata_decoder: bool,

    /// Decode record keys with this built-in Decoder class (implies
    /// --print-data-log; kafka format): org.apache.kafka.tools.api.
    /// StringDecoder (the default), DefaultDecoder, IntegerDecoder,
    /// LongDecoder, or the kafka.serializer.* names of older releases.
    #[arg(long, value_name = "CLASS")]
    pub key_decoder_class: Option<String>,

    /// Decode record values with this built-in Decoder class (implies
    /// --print-data-log; kafka format), as --key-decoder-class.
    #[arg(long, value_name = "CLASS")]
    pub value_decoder_class: Option<String>,

    /// klf only: after a damaged batch, skip to the next plausible batch and
    /// go on (kafka-dump-log stops). Positions printed are then file positions.
    #[arg(long)]
    pub resync: bool,

    /// Print what this Kafka release's kafka-dump-log prints: X.Y or X.Y.Z,
    /// 2.8 to 4.4, or auto (each file's from the metadata.version its log
    /// directory records: that version's release line; the newest where
    /// there is none, as on a ZooKeeper-mode broker).
    #[arg(long, value_name = "X.Y|auto", default_value = "4.4", value_parser = KafkaVersion::parse)]
    pub kafka_version: KafkaVersion,

    /// klf only: only offsets A to B, B excluded (`A..B`, `A..`, `..B`);
    /// `-N` counts back from the log end offset, as kcat's `-o -N`:
    /// `-100..` is the last 100 offsets, `-100..-50`, `..-10` (the log: a
    /// partition directory's .log files, or the .log files of one folder
    /// given). Batches are found with the segment's .index. The kafka
    /// format prints kafka-dump-log's lines of those batches and records.
    #[arg(long, value_name = "A..B", value_parser = select::parse_offsets, allow_hyphen_values = true)]
    pub offsets: Option<OffsetRange>,

    /// klf only: from the first batch whose max timestamp is
    /// at least T (Kafka's offset for a time; found with the .timeindex):
    /// ISO-8601 (2026-11-29T22:56:05.313Z, 2026-11-29T22:56:05+01:00,
    /// 2026-11-29), the time Kafka's logs print (2026-11-29 22:56:05,313),
    /// or epoch milliseconds. A time without an offset (Z, +01:00) is UTC:
    /// Kafka's logs print the broker's local time, so add its offset when
    /// that was not UTC.
    #[arg(long, value_name = "T", value_parser = parse_time)]
    pub since: Option<i64>,

    /// klf only: up to, not including, the first batch whose
    /// max timestamp is at least T (the same forms as --since).
    #[arg(long, value_name = "T", value_parser = parse_time)]
    pub until: Option<i64>,

    /// klf only (implies --deep-iteration): only records whose
    /// key is these UTF-8 bytes.
    #[arg(long, value_name = "K")]
    pub key: Option<String>,

    /// klf only: only the batches of this producer id (repeat for more),
    /// in every format. Like the options above, a selection.
    #[arg(long, value_name = "ID", value_parser = super::transactions::parse_producer_id)]
    pub producer_id: Vec<i64>,

    /// klf only: only the batches of the producer ids this transactional
    /// id used, from the __transaction_state of the capture the segments
    /// are in (their log directory, or the folder of broker directories
    /// holding it); refused when there is none (a file given alone: give
    /// --producer-id). With --producer-id, the batches of both.
    #[arg(long, value_name = "TID")]
    pub transactional_id: Option<String>,

    /// klf only: at most N records per file (batches without
    /// --deep-iteration). Like the options above, a selection: a
    /// directory's files other than logs are left out.
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,

    /// klf only (json, table; implies --deep-iteration): the parts of each
    /// record whose bytes are shown, comma-separated: key, value, headers
    /// (header values beside their keys). The others are shown by size
    /// (key, value) or by name (header keys). --print-data-log shows all
    /// three; --show, when given, says what is shown instead.
    #[arg(long, value_name = "PARTS", value_parser = parse_show)]
    pub show: Option<Show>,

    /// klf only (json, table): how shown bytes are written: utf8 (text;
    /// in JSON base64 where not valid UTF-8), hex or base64.
    #[arg(long, value_enum, value_name = "ENCODING", default_value = "utf8")]
    pub encoding: EncodingArg,
}

/// The file list: PATHs, then each `--files` value split at commas (empty
/// trailing items dropped, as Java's `split` does).
pub fn file_list(args: &Args) -> Vec<String> {
    let mut v = args.paths.clone();
    for f in &args.files {
        let mut parts: Vec<&str> = f.split(',').collect();
        while parts.last() == Some(&"") {
            parts.pop();
        }
        v.extend(parts.into_iter().map(str::to_string));
    }
    v
}

/// A byte count for kafka-dump-log's int options: digits (a negative
/// number as Java reads it) or `K`, `M`, `G` suffixes; at most 2^31-1.
fn parse_i32_bytes(s: &str) -> Result<i32, String> {
    if let Ok(n) = s.trim().parse::<i32>() {
        return Ok(n);
    }
    let n = klf::render::text::parse_bytes(s)?;
    i32::try_from(n).map_err(|_| format!("{s:?} is more than 2147483647 bytes (2G - 1)"))
}

/// `--encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EncodingArg {
    /// Text (malformed UTF-8 as U+FFFD in a table; base64 in JSON)
    Utf8,
    /// Lowercase hexadecimal
    Hex,
    /// Standard base64, padded
    Base64,
}

impl From<EncodingArg> for Encoding {
    fn from(e: EncodingArg) -> Encoding {
        match e {
            EncodingArg::Utf8 => Encoding::Utf8,
            EncodingArg::Hex => Encoding::Hex,
            EncodingArg::Base64 => Encoding::Base64,
        }
    }
}

/// `--show`: `key`, `value`, `headers`, comma-separated.
fn parse_show(s: &str) -> Result<Show, String> {
    let mut show = Show::default();
    for part in s.split(',').map(str::trim) {
        match part {
            "key" => show.key = true,
            "value" => show.value = true,
            "headers" => show.headers = true,
            other => {
                return Err(format!(
                "{other:?} is not a part of a record: give key, value, headers (comma-separated)"
            ))
            }
        }
    }
    Ok(show)
}

/// `--since`, `--until`: ISO-8601 UTC or epoch milliseconds.
fn parse_time(s: &str) -> Result<i64, String> {
    klf::render::text::parse_time(s).ok_or_else(|| {
        format!("{s:?} is not a time: give ISO-8601 (2026-11-29T22:56:05.313Z, 2026-11-29T22:56:05+01:00, 2026-11-29; UTC without an offset), Kafka's log time (2026-11-29 22:56:05,313, UTC) or epoch milliseconds")
    })
}

/// The renderers' options.
fn options(args: &Args) -> Options {
    let decoder = args.offsets_decoder
        || args.transaction_log_decoder
        || args.cluster_metadata_decoder
        || args.remote_log_metadata_decoder
        || args.share_group_state_decoder
        || args.key_decoder_class.is_some()
        || args.value_decoder_class.is_some();
    let print_data = args.print_data_log || decoder;
    Options {
        print_data,
        deep: args.deep_iteration || print_data || args.key.is_some() || args.show.is_some(),
        show: args.show.unwrap_or(if print_data {
            Show::ALL
        } else {
            Show::default()
        }),
        encoding: args.encoding.into(),
        skip_record_metadata: args.skip_record_metadata,
        max_bytes: args.max_bytes,
        max_message_size: args.max_message_size,
        index_sanity_only: args.index_sanity_check,
        verify_only: args.verify_index_only,
        resync: args.resync,
        release: match args.kafka_version {
            KafkaVersion::Line(r) => r,
            KafkaVersion::Auto => Release::NEWEST,
        },
        ..Options::default()
    }
}

/// What the engine reads of each segment.
fn selection(args: &Args) -> Selection {
    // offsets counted back from the log end are resolved for each log
    // (see `Logs`); until then, from 0
    let (first, end) = args
        .offsets
        .as_ref()
        .map_or((i64::MIN, i64::MAX), |o| o.resolve(0));
    let mut sel = Selection {
        key: args.key.as_ref().map(|k| k.as_bytes().to_vec()),
        producers: (!args.producer_id.is_empty()).then(|| args.producer_id.clone()),
        count: args.count,
        max_bytes: args.max_bytes,
        ..Selection::default()
    };
    sel.want.first = first;
    sel.want.end = end;
    sel.want.since = args.since;
    sel.want.until = args.until;
    sel
}

/// The progress bar, as the engine moves it.
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn position(&self) -> u64 {
        self.0.position()
    }
    fn set_position(&self, at: u64) {
        self.0.set_position(at);
    }
}

/// What the dump of one file is given besides the file and the options.
struct FileRun<'a> {
    /// The bar and where it stands before this file.
    meter: Meter<'a>,
    /// Under a selection, the count of what the file's log shows.
    tally: Option<&'a Arc<AtomicU64>>,
    /// Whether stdout is a terminal.
    terminal: bool,
}

/// A time for a person: ISO-8601 UTC, else the milliseconds.
fn time_text(ms: i64) -> String {
    klf::render::text::time_or_millis(ms)
}

/// Notes how `--offsets` counted back from the end was resolved for each
/// log.
fn resolve_logs(logs: &mut Logs, range: &OffsetRange, sel: &Selection, out: &mut Output) {
    let shown = |o: i64| match o {
        i64::MIN | i64::MAX => String::new(),
        o => o.to_string(),
    };
    for r in logs.resolve(range, &sel.want) {
        out.note(format_args!(
            "klf dump: {}: --offsets {} is {}..{} (end offset {})",
            r.log,
            range.text,
            shown(r.first),
            shown(r.end),
            r.log_end
        ));
    }
}

/// Says on stderr, for each log the selection shows nothing of, what
/// the log holds: its offsets (and with a time, its batches' max
/// timestamps). When nothing at all was shown, the first few in full
/// whatever `--quiet` says, else as notes; the rest counted.
fn report_unmatched(logs: &Logs, args: &Args, out: &mut Output) {
    let unmatched: Vec<&Log> = logs.logs.iter().filter(|l| l.unmatched()).collect();
    if unmatched.is_empty() {
        return;
    }
    let none_shown = unmatched.len() == logs.logs.len();
    const SHOWN: usize = 3;
    for l in unmatched.iter().take(SHOWN) {
        // a log whose files cannot be read: said where it was dumped
        let Some(what) = holds(l, args.since.is_some() || args.until.is_some()) else {
            continue;
        };
        let msg = format!(
            "klf dump: {}: nothing matches {}: {what}",
            l.name,
            selection_text(args, l.resolved),
        );
        if none_shown {
            out.diag(msg);
        } else {
            out.note(msg);
        }
    }
    if unmatched.len() > SHOWN {
        let msg = format!(
            "klf dump: nothing matches {} in {}",
            selection_text(args, None),
            klf::render::text::counted((unmatched.len() - SHOWN) as u64, "more log")
        );
        if none_shown {
            out.diag(msg);
        } else {
            out.note(msg);
        }
    }
}

/// The selection as given: `--offsets A..B --since T ...`, the times as
/// read (ISO-8601 UTC), an end-relative range with what it is in the log.
fn selection_text(args: &Args, resolved: Option<(i64, i64, i64)>) -> String {
    let mut parts = Vec::new();
    if let Some(o) = &args.offsets {
        match resolved {
            Some((a, b, _)) => {
                let b = if b == i64::MAX {
                    String::new()
                } else {
                    b.to_string()
                };
                parts.push(format!("--offsets {} ({a}..{b})", o.text));
            }
            None => parts.push(format!("--offsets {}", o.text)),
        }
    }
    if let Some(t) = args.since {
        parts.push(format!("--since {}", time_text(t)));
    }
    if let Some(t) = args.until {
        parts.push(format!("--until {}", time_text(t)));
    }
    if let Some(k) = &args.key {
        parts.push(format!("--key {k}"));
    }
    for p in &args.producer_id {
        parts.push(format!("--producer-id {p}"));
    }
    if let Some(t) = &args.transactional_id {
        parts.push(format!(
            "--transactional-id {}",
            klf::render::text::sanitize(t)
        ));
    }
    if let Some(n) = args.count {
        parts.push(format!("--count {n}"));
    }
    parts.join(" ")
}

/// What a log holds, for stderr: its offsets from its first file's first
/// batch to its newest file's last, and with `times` those batches' max
/// timestamps.
fn holds(l: &Log, times: bool) -> Option<String> {
    let subject = match l.files.len() {
        1 if l.files[0].ends_with(".log") => "the segment holds".to_string(),
        1 => "the snapshot holds".to_string(),
        n => format!("its {n} segments hold"),
    };
    let (first, last) = l.holds()?;
    Some(match (first.first, last.end) {
        (Some((a, ta)), Some((e, te))) => {
            let mut s = format!(
                "{subject} offsets {a} to {} (end offset {e})",
                e.saturating_sub(1)
            );
            if times {
                s.push_str(&format!(
                    ", batch max timestamps {} (first batch) to {} (last)",
                    time_text(ta),
                    time_text(te)
                ));
            }
            s
        }
        _ => format!("{subject} no batch"),
    })
}

/// The release `--kafka-version auto` picks for a file, and why: the
/// `metadata.version` recorded in the log directory holding it (the file's
/// own directory or its parent), else the newest release.
/// The third value names the log directory (or, with none found, the
/// folder holding the file's directory), for saying so once.
fn auto_release(path: &str, in_partition: bool) -> (Release, String, String) {
    let recorded = klf::engine::dump::recorded_version(path, in_partition);
    let dir = recorded.dir().to_string();
    match recorded {
        RecordedVersion::Found {
            level, name, file, ..
        } => {
            let release = name
                .and_then(Release::for_metadata_version)
                .unwrap_or(Release::NEWEST);
            (
                release,
                format!(
                    "metadata.version {} (feature level {level}, {}): kafka-dump-log {release}'s text",
                    name.unwrap_or("unknown"),
                    file.display()
                ),
                dir,
            )
        }
        RecordedVersion::None { .. } => (
            Release::NEWEST,
            format!(
                "no metadata.version recorded (a ZooKeeper-mode broker, or files away from their log directory): kafka-dump-log {}'s text",
                Release::NEWEST
            ),
            dir,
        ),
    }
}

/// The decoder a flag asks for, in kafka-dump-log's precedence.
fn forced_decoder(args: &Args) -> Option<DecoderKind> {
    if args.offsets_decoder {
        Some(DecoderKind::Offsets)
    } else if args.transaction_log_decoder {
        Some(DecoderKind::TransactionLog)
    } else if args.cluster_metadata_decoder {
        Some(DecoderKind::ClusterMetadata)
    } else if args.remote_log_metadata_decoder {
        Some(DecoderKind::RemoteLogMetadata)
    } else if args.share_group_state_decoder {
        Some(DecoderKind::ShareGroupState)
    } else {
        None
    }
}

/// A `--key-decoder-class`/`--value-decoder-class` value: a built-in class,
/// or the error naming a custom one (klf runs no Java code).
fn decoder_class(flag: &str, name: Option<&str>) -> Result<DecoderClass, String> {
    let Some(name) = name else {
        return Ok(DecoderClass::String);
    };
    DecoderClass::from_class(name).ok_or_else(|| {
        let known: Vec<&str> = DecoderClass::NAMES.iter().map(|(n, _)| *n).collect();
        format!(
            "{flag} {name}: klf has only Kafka's built-in Decoder classes (it runs no Java code): {}",
            known.join(", ")
        )
    })
}

/// The kafka format's formatter of record keys and values for `release`,
/// or why that release's tool refuses the options given.
fn formatter(
    wanted: Option<DecoderKind>,
    release: Release,
    args: &Args,
) -> Result<Box<dyn RecordFormatter>, String> {
    // The decoder classes are checked even when an internal-topic decoder
    // takes precedence, so that a misspelt class is never silently unused.
    let key = decoder_class("--key-decoder-class", args.key_decoder_class.as_deref())?;
    let value = decoder_class("--value-decoder-class", args.value_decoder_class.as_deref())?;
    if args.remote_log_metadata_decoder && !release.has_remote_log_metadata_decoder() {
        return Err(format!(
            "kafka-dump-log {release} has no --remote-log-metadata-decoder (it came with 3.9; that release's tool refuses the option): use --kafka-version 3.9 or later"
        ));
    }
    if args.max_bytes != i32::MAX && !release.has_max_bytes() {
        return Err(format!(
            "kafka-dump-log {release} has no --max-bytes (it came with 3.3; that release's tool refuses the option): use --kafka-version 3.3 or later"
        ));
    }
    if args.share_group_state_decoder && !release.has_share_group_state_decoder() {
        return Err(format!(
            "kafka-dump-log {release} has no --share-group-state-decoder (it came with 4.0; that release's tool refuses the option): use --kafka-version 4.0 or later"
        ));
    }
    match wanted {
        None if args.key_decoder_class.is_some() || args.value_decoder_class.is_some() => {
            Ok(Box::new(ClassFormatter::new(key, value)))
        }
        None => Ok(Box::new(StringFormatter)),
        Some(kind) => Ok(render::decoder_formatter(kind, release)),
    }
}

/// The format of the run: `--format`, else kafka-dump-log's text, on a
/// terminal too; tables when `--show` or `--encoding` (which the kafka
/// format has not) is given without it.
pub fn resolve_format(args: &Args) -> Format {
    args.format.unwrap_or_else(|| {
        if args.show.is_some() || args.encoding != EncodingArg::Utf8 {
            Format::Table
        } else {
            Format::Kafka
        }
    })
}

/// Runs `klf dump`.
pub fn run(args: Args, out: &mut Output) -> Status {
    if !out.logs.is_empty() {
        out.diag("klf dump: --logs is read by the commands that take a capture (diff, check, impact, elect, report, salvage); dump prints the files it is given and takes no logs");
        return Status::Failure;
    }
    let paths = file_list(&args);
    if paths.is_empty() {
        out.diag("klf dump: no files given (pass PATHs or --files)");
        return Status::Failure;
    }
    let forced = forced_decoder(&args);
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut opts = options(&args);
    let mut sel = selection(&args);
    let format = resolve_format(&args);
    if format == Format::Kafka && (args.show.is_some() || args.encoding != EncodingArg::Utf8) {
        out.diag(
            "klf dump: --show and --encoding choose how json and table show record bytes; \
             the kafka format prints what kafka-dump-log prints (--print-data-log: key and payload); add --format json or --format table",
        );
        return Status::Failure;
    }
    let mut status = Status::Clean;
    // Archives (and paths inside them) are read into memory first; every
    // other PATH is dumped as given.
    let mut expanded = Vec::with_capacity(paths.len());
    for arg in &paths {
        let p = Path::new(arg);
        if !klf::engine::dump::is_archive_input(p) {
            expanded.push(walk::expand(arg));
            continue;
        }
        match out.resolve_input(p) {
            Ok(root) => expanded.push(walk::expand(&root.to_string_lossy())),
            Err(s) => status = status.worst(s),
        }
    }
    // --transactional-id: the producer ids the capture's coordinator gave it
    if let Some(tid) = &args.transactional_id {
        let logs: Vec<&str> = expanded
            .iter()
            .flat_map(|e| &e.items)
            .filter(|i| i.kind == Kind::Log)
            .map(|i| i.path.as_str())
            .collect();
        match select::producers_of_transactional_id(&logs, tid) {
            Ok(ids) => {
                out.note(format_args!(
                    "klf dump: --transactional-id {}: producer {} {}",
                    klf::render::text::sanitize(tid),
                    if ids.len() == 1 { "id" } else { "ids" },
                    ids.iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                sel.producers = Some(match sel.producers.take() {
                    Some(given) => ids.into_iter().filter(|i| given.contains(i)).collect(),
                    None => ids,
                });
            }
            Err(why) => {
                out.diag(format_args!(
                    "klf dump: --transactional-id {}: {why}",
                    klf::render::text::sanitize(tid)
                ));
                return Status::Failure;
            }
        }
    }
    // With a selection only the batches and records of logs are dumped:
    // a directory's other files are left out (a file named is dumped).
    let selection = sel.selects();
    let mut left_out = 0usize;
    if selection {
        for e in &mut expanded {
            let before = e.items.len();
            e.items.retain(|i| i.kind == Kind::Log || i.named);
            left_out += before - e.items.len();
        }
    }
    // The release of each file: the one asked for, or with `auto` the one
    // its log directory's metadata.version names (said once per directory).
    let mut releases: Vec<Vec<Release>> = Vec::with_capacity(expanded.len());
    let mut said: Vec<String> = Vec::new();
    for e in &expanded {
        let mut rs = Vec::with_capacity(e.items.len());
        for item in &e.items {
            let r = match args.kafka_version {
                KafkaVersion::Line(r) => r,
                KafkaVersion::Auto => {
                    let (r, why, dir) = auto_release(&item.path, item.topic_partition.is_some());
                    if !said.contains(&dir) {
                        out.note(format_args!(
                            "klf dump: --kafka-version auto: {}: {why}",
                            dir
                        ));
                        said.push(dir);
                    }
                    r
                }
            };
            rs.push(r);
        }
        releases.push(rs);
    }
    let mut distinct: Vec<Release> = releases.iter().flatten().copied().collect();
    distinct.sort();
    distinct.dedup();
    let first = distinct.first().copied().unwrap_or(opts.release);
    // every release's tool must take the options given
    for r in &distinct {
        if let Err(msg) = formatter(forced, *r, &args) {
            out.diag(format_args!("klf dump: {msg}"));
            return Status::Failure;
        }
    }
    let mut fmt = match formatter(forced, first, &args) {
        Ok(f) => f,
        Err(msg) => {
            out.diag(format_args!("klf dump: {msg}"));
            return Status::Failure;
        }
    };
    opts.release = first;
    let mut dumper = Dumper::new(opts.clone(), fmt.as_mut());
    // Under a selection, the logs (the files of each) and what each shows.
    let mut logs = if selection {
        Logs::of(&expanded, sel.want)
    } else {
        Logs::default()
    };
    if let Some(range) = args.offsets.as_ref().filter(|r| r.is_relative()) {
        resolve_logs(&mut logs, range, &sel, out);
    }
    // The bar counts bytes; dumping to a terminal shows its own progress,
    // so a bar only when stdout goes elsewhere.
    let terminal = std::io::stdout().is_terminal();
    let sizes: Vec<Vec<u64>> = expanded
        .iter()
        .map(|e| e.items.iter().map(|i| open::file_size(&i.path)).collect())
        .collect();
    let total: u64 = sizes.iter().flatten().sum();
    let bar = if terminal {
        None
    } else {
        out.progress(
            total,
            "{bar:30} {bytes}/{total_bytes} ({binary_bytes_per_sec}, eta {eta})",
        )
        .map(Bar)
    };
    let base_want = sel.want;
    let mut done = 0u64;
    'paths: for (n, (e, rs)) in expanded.iter().zip(&releases).enumerate() {
        for n in &e.notes {
            if e.failed {
                out.diag(format_args!("klf dump: {n}"));
            } else {
                out.note(format_args!("klf dump: {n}"));
            }
        }
        for f in &e.not_dumped {
            let name = Path::new(f)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.note_repeated(
                "klf dump",
                "files klf does not dump, skipped",
                &name,
                format_args!("klf dump: note: {f}: not a file klf dumps; skipped"),
            );
        }
        if e.failed {
            status = status.worst(Status::Failure);
        }
        for (i, (item, release)) in e.items.iter().zip(rs).enumerate() {
            if *release != dumper.opts.release {
                dumper.set_release(*release);
                opts.release = *release;
            }
            let log = logs.of_item(n, i);
            sel.want = log.map_or(base_want, |l| l.want);
            let run = FileRun {
                meter: Meter {
                    progress: bar.as_ref().map(|b| b as &dyn Progress),
                    done,
                },
                tally: log.map(|l| &l.tally),
                terminal,
            };
            let names = FileNames::new(&item.path, &cwd);
            let s = match format {
                Format::Kafka => dump_kafka_item(&mut dumper, &names, item, &sel, &run, out),
                Format::Json | Format::Table => {
                    let decoder = klf::engine::dump::decoder_for(forced, item);
                    dump_item(format, &names, item, &opts, &sel, decoder, &run, out)
                }
            };
            done += sizes[n][i];
            if let Some(b) = &bar {
                b.0.set_position(done);
            }
            status = status.worst(s);
            if s == Status::BrokenPipe {
                break 'paths;
            }
        }
    }
    if let Some(b) = &bar {
        b.0.finish_and_clear();
    }
    if !out.pipe_closed && !dumper.findings.is_empty() {
        let _ = out.out().flush();
        let _ = dumper
            .findings
            .write_to(&mut std::io::stderr().lock(), dumper.opts.release);
    }
    if !out.pipe_closed && selection {
        if left_out > 0 {
            out.note(format_args!(
                "klf dump: note: {} of the directories given left out: with a selection \
                 only the batches and records of logs are dumped (name a file to dump it)",
                klf::render::text::counted(left_out as u64, "other file")
            ));
        }
        report_unmatched(&logs, &args, out);
    }
    status
}

/// Outcome of one file's dump as a status, reporting an abort.
pub fn conclude(
    out: &mut Output,
    names: &FileNames,
    r: Result<(), DumpError>,
    problems: usize,
) -> Status {
    match r {
        Ok(()) if problems == 0 => Status::Clean,
        Ok(()) => Status::Corruption,
        Err(DumpError::Write(e)) => out.write_failed(e),
        Err(DumpError::Abort(e)) => {
            out.problem(&names.display, e.pos, &e.reason);
            Status::Corruption
        }
        Err(DumpError::Read(e)) => {
            out.diag(format_args!("{}: cannot read: {e}", names.display));
            Status::Failure
        }
    }
}

/// Opens one file for its dump, read-only; a file that cannot be opened
/// is said on stderr.
fn load(names: &FileNames, kind: Kind, seek: bool, out: &mut Output) -> Result<Inputs, Status> {
    open::load(&names.display, &names.name, &names.absolute, kind, seek).map_err(|(path, e)| {
        out.diag(format_args!("{path}: {e}"));
        Status::Failure
    })
}

fn dump_kafka_item(
    dumper: &mut Dumper<'_>,
    names: &FileNames,
    item: &Item,
    sel: &Selection,
    run: &FileRun,
    out: &mut Output,
) -> Status {
    // kafka-dump-log prints the `Dumping` line for every file it is given,
    // also for one it then ignores.
    if let Err(e) = dumper.write_dumping(out.out(), names) {
        return out.write_failed(e);
    }
    if let Kind::Text(_) = item.kind {
        out.note_repeated(
            "klf dump",
            "files skipped in kafka format",
            &names.name,
            format_args!(
                "klf dump: note: {}: skipped in kafka format (kafka-dump-log has no output for it; use --format json or table)",
                names.display
            ),
        );
        return Status::Clean;
    }
    if open::is_remote_segment_name(&names.name) {
        let suffix = names.name.rsplit('.').next().unwrap_or("");
        out.note_repeated(
            "klf dump",
            "remote segment files dumped as segments (kafka-dump-log stops on their names)",
            &format!("*.{suffix}"),
            format_args!(
                "klf dump: note: {}: a remote segment's file (named by base offset and segment id): kafka-dump-log stops on this name (NumberFormatException); klf dumps it as the segment it is",
                names.display
            ),
        );
    }
    dump_kafka_file(dumper, names, item.kind, sel, run, out)
}

fn dump_kafka_file(
    dumper: &mut Dumper<'_>,
    names: &FileNames,
    kind: Kind,
    sel: &Selection,
    run: &FileRun,
    out: &mut Output,
) -> Status {
    match kind {
        Kind::NoSuffix => {
            out.diag(format_args!(
                "{}: cannot tell the kind of a file without a suffix",
                names.display
            ));
            return Status::Failure;
        }
        Kind::Unknown => {
            out.diag(format_args!("Ignoring unknown file {}", names.display));
            return Status::Clean;
        }
        Kind::Log
            if names.name.ends_with(".checkpoint")
                && !dumper.opts.release.dumps_kraft_snapshots() =>
        {
            // before 3.3 kafka-dump-log did not know KRaft snapshots
            out.diag(format_args!("Ignoring unknown file {}", names.display));
            return Status::Clean;
        }
        _ => {}
    }
    // a part of a segment (--offsets, --since, --until, --key, --count) is
    // found with its indexes
    let picked = kind == Kind::Log && sel.selects();
    let inputs = match load(names, kind, picked, out) {
        Ok(i) => i,
        Err(s) => return s,
    };
    if kind == Kind::Aux && render::aux_dumper(&names.name).is_none() {
        let suffix = names.name.rfind('.').map_or("", |i| &names.name[i..]);
        out.diag(format_args!(
            "{}: dumping {suffix} files is not available in this build of klf yet",
            names.display
        ));
        return Status::Failure;
    }
    let metered = run.meter.metered(inputs.log());
    let opened = inputs.opened((kind == Kind::Log).then_some(&metered));
    let pick = picked.then(|| select::pick_of(&inputs, sel, run.tally));
    let mut problems = Vec::new();
    // On a terminal the records' bytes cannot drive it (see TerminalSafe);
    // anywhere else the text is kafka-dump-log's, byte for byte.
    let r = if run.terminal {
        let mut safe = klf::render::text::TerminalSafe::new(out.out());
        render::write_kafka(dumper, &mut safe, names, &opened, pick, &mut problems)
            .and_then(|()| safe.finish().map_err(DumpError::Write))
    } else {
        render::write_kafka(dumper, out.out(), names, &opened, pick, &mut problems)
    };

    // Bytes that moved under klf (the file shrank or grew while it was
    // read) are not damage: the change is the answer, never the problems.
    if let Err(e) = inputs.unchanged() {
        out.diag(format_args!("{}: cannot read: {e}", names.display));
        return Status::Failure;
    }
    for p in &problems {
        out.problem(&names.display, p.pos, &p.reason);
    }
    conclude(out, names, r, problems.len())
}

/// Dumps one file as JSON Lines or tables: skips kinds klf does not dump
/// (an unknown file is a note, a file without a suffix an error), opens
/// it, keeps the decoder only where it applies (decoders change how record
/// keys and values of a `.log` are shown), writes it, and reports its
/// problems on stderr.
#[allow(clippy::too_many_arguments)]
fn dump_item(
    format: Format,
    names: &FileNames,
    item: &Item,
    opts: &Options,
    sel: &Selection,
    decoder: Option<DecoderKind>,
    run: &FileRun,
    out: &mut Output,
) -> Status {
    let kind = item.kind;
    if matches!(kind, Kind::Unknown | Kind::NoSuffix) {
        out.diag(format_args!(
            "klf dump: {}: not a file klf dumps; skipped",
            names.display
        ));
        return if kind == Kind::Unknown {
            Status::Clean
        } else {
            Status::Failure
        };
    }
    let inputs = match load(names, kind, !sel.want.is_all(), out) {
        Ok(i) => i,
        Err(s) => return s,
    };
    let decoder = decoder.filter(|_| (opts.show.key || opts.show.value) && kind == Kind::Log);
    let metered = run.meter.metered(inputs.log());
    let opened = inputs.opened((kind == Kind::Log).then_some(&metered));
    let pick = (kind == Kind::Log).then(|| select::pick_of(&inputs, sel, run.tally));
    let written = match format {
        Format::Table => {
            render::table::write_file(out.out(), names, item, opened, opts, decoder, pick)
        }
        _ => render::json::write_file(out.out(), names, item, opened, opts, decoder, pick),
    };
    let Outcome {
        problems,
        more,
        read_error,
        corrupt,
    } = match written {
        Ok(o) => o,
        Err(e) => return out.write_failed(e),
    };
    for e in &problems {
        out.problem(&names.display, e.pos, &e.reason);
    }
    if more > 0 {
        let all = match format {
            Format::Table => "`--format json` lists every one",
            _ => "each one is a problem object in the output",
        };
        out.diag(format_args!(
            "{}: {more} more problems ({all})",
            names.display
        ));
    }
    if let Some(e) = read_error {
        out.diag(format_args!("{}: cannot read: {e}", names.display));
        return Status::Failure;
    }
    if corrupt {
        Status::Corruption
    } else {
        Status::Clean
    }
}
