//! `klf dump`: what is in `.log`, `.index`, `.timeindex`, `.txnindex`,
//! producer `.snapshot` and KRaft `.checkpoint` files, as kafka-dump-log
//! prints it (`--format kafka`, byte-identical on stdout), as JSON Lines, or
//! as tables. PATHs may be files, partition directories, broker log
//! directories or folders of broker directories (see [`walk`]); in the json
//! and table formats the checkpoint files, `partition.metadata`,
//! `meta.properties`, `quorum-state` and `.kafka_cleanshutdown` are dumped
//! too (see [`files`]).
//!
//! Flags carry kafka-dump-log's names. Unlike kafka-dump-log, a damaged file
//! does not end the run: the problem is reported on stderr as
//! `file:byte: reason`, the next file is dumped, and the exit status is 1.

mod files;
mod json;
mod table;
mod walk;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use klf::capture::mmap::FileBytes;
use klf::capture::segment::SegmentFile;
use klf::capture::vfs;
use klf::format::batch::{Entries, EntryError, SegmentSource};
use klf::format::index::IndexBytes;
use std::borrow::Cow;

use klf::format::checkpoint::{
    OffsetCheckpointKind, CLEAN_SHUTDOWN_FILE, LEADER_EPOCH_CHECKPOINT_FILE,
};
use klf::format::props::{MAX_PROPERTIES_BYTES, META_PROPERTIES_FILE, PARTITION_METADATA_FILE};
use klf::format::ParseError;
use klf::render::kafka::{
    ClassFormatter, DecoderClass, DumpError, Dumper, Encoding, FileNames, Formatted, Options,
    Problems, RecordFormatter, RecordRef, Show, StringFormatter,
};
use klf::render::kafka_aux::{self, AuxDecoder};
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

Selections (--offsets, --since, --until, --key, --count):
  Only the batches and records picked are dumped: the other files of a
  directory (indexes, snapshots, checkpoints, partition.metadata) are left
  out, and counted on stderr; a file named as a PATH is dumped. A log the
  selection matches nothing of is named on stderr with the offsets it
  holds (exit status 0).

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
    #[arg(long, value_name = "A..B", value_parser = parse_offsets, allow_hyphen_values = true)]
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

/// The decoders selectable by option, in kafka-dump-log's precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoderKind {
    /// `--offsets-decoder`.
    Offsets,
    /// `--transaction-log-decoder`.
    TransactionLog,
    /// `--cluster-metadata-decoder`.
    ClusterMetadata,
    /// `--share-group-state-decoder`.
    ShareGroupState,
    /// `--remote-log-metadata-decoder`.
    RemoteLogMetadata,
}

impl DecoderKind {
    fn flag(self) -> &'static str {
        match self {
            DecoderKind::Offsets => "--offsets-decoder",
            DecoderKind::TransactionLog => "--transaction-log-decoder",
            DecoderKind::ClusterMetadata => "--cluster-metadata-decoder",
            DecoderKind::ShareGroupState => "--share-group-state-decoder",
            DecoderKind::RemoteLogMetadata => "--remote-log-metadata-decoder",
        }
    }

    /// The library decoder.
    pub fn aux(self) -> AuxDecoder {
        match self {
            DecoderKind::Offsets => AuxDecoder::Offsets,
            DecoderKind::TransactionLog => AuxDecoder::TransactionLog,
            DecoderKind::ClusterMetadata => AuxDecoder::ClusterMetadata,
            DecoderKind::ShareGroupState => AuxDecoder::ShareGroupState,
            DecoderKind::RemoteLogMetadata => AuxDecoder::RemoteLogMetadata,
        }
    }

    /// The name in JSON output (`decoder` of a `file` object).
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::Offsets => "offsets",
            DecoderKind::TransactionLog => "transaction_log",
            DecoderKind::ClusterMetadata => "cluster_metadata",
            DecoderKind::ShareGroupState => "share_group_state",
            DecoderKind::RemoteLogMetadata => "remote_log_metadata",
        }
    }

    /// The decoder of an internal topic's records, by topic name.
    pub fn for_topic(topic: &str) -> Option<DecoderKind> {
        match topic {
            "__consumer_offsets" => Some(DecoderKind::Offsets),
            "__transaction_state" => Some(DecoderKind::TransactionLog),
            "__cluster_metadata" => Some(DecoderKind::ClusterMetadata),
            "__share_group_state" => Some(DecoderKind::ShareGroupState),
            "__remote_log_metadata" => Some(DecoderKind::RemoteLogMetadata),
            _ => None,
        }
    }
}

/// The decoder the json and table formats apply to a file: the one a flag
/// forces, else the one of the partition directory's topic (KRaft
/// `.checkpoint` files, `bootstrap.checkpoint` included, hold metadata
/// records wherever they lie).
pub fn decoder_for(forced: Option<DecoderKind>, item: &walk::Item) -> Option<DecoderKind> {
    forced
        .or_else(|| item.topic().and_then(DecoderKind::for_topic))
        .or_else(|| {
            item.path
                .ends_with(".checkpoint")
                .then_some(DecoderKind::ClusterMetadata)
        })
}

/// Formatters for the internal-topic decoder options: one line per decoder,
/// `(kind, constructor)`. The decoders live in the library
/// (`klf::render::kafka_aux`, over `klf::format::internal` and
/// `klf::format::metadata`); an option whose decoder is not registered here
/// is refused with a usage error.
const DECODERS: &[(DecoderKind, MakeFormatter)] = &[
    (DecoderKind::Offsets, |r| {
        Box::new(AuxFormatter(AuxDecoder::Offsets, r))
    }),
    (DecoderKind::TransactionLog, |r| {
        Box::new(AuxFormatter(AuxDecoder::TransactionLog, r))
    }),
    (DecoderKind::ClusterMetadata, |r| {
        Box::new(AuxFormatter(AuxDecoder::ClusterMetadata, r))
    }),
    (DecoderKind::ShareGroupState, |r| {
        Box::new(AuxFormatter(AuxDecoder::ShareGroupState, r))
    }),
    (DecoderKind::RemoteLogMetadata, |r| {
        Box::new(AuxFormatter(AuxDecoder::RemoteLogMetadata, r))
    }),
];

/// A decoder of `klf::render::kafka_aux` as a [`RecordFormatter`].
struct AuxFormatter(AuxDecoder, Release);

impl RecordFormatter for AuxFormatter {
    fn format<'a>(&mut self, rec: &RecordRef<'a>) -> Result<Formatted<'a>, String> {
        let kp = self
            .0
            .decode(self.1, rec.offset, rec.key, rec.value)
            .map_err(|e| e.reason.into_owned())?;
        Ok((kp.key.map(Cow::Owned), kp.payload.map(Cow::Owned)))
    }

    fn set_release(&mut self, release: Release) {
        self.1 = release;
    }

    fn fork(&self) -> Option<Box<dyn RecordFormatter + Send>> {
        Some(Box::new(AuxFormatter(self.0, self.1)))
    }
}

/// Builds a formatter for a decoder option.
type MakeFormatter = fn(Release) -> Box<dyn RecordFormatter>;

/// kafka-dump-log text for file kinds parsed outside this module: one line
/// per suffix, `(suffix, function)`. The function writes the text for the
/// file's bytes and reports problems that do not stop it.
type AuxDumper =
    fn(&FileNames, &[u8], Release, &mut dyn Write, &mut dyn Problems) -> Result<(), DumpError>;
const AUX_DUMPERS: &[(&str, AuxDumper)] = &[
    (".txnindex", |n, d, _, w, p| {
        file_dump(n, kafka_aux::dump_txn_index(&n.display, d), w, p)
    }),
    (".snapshot", |n, d, r, w, p| {
        file_dump(n, kafka_aux::dump_producer_snapshot(&n.display, d, r), w, p)
    }),
];

/// Writes a [`kafka_aux::FileDump`] (whose text starts with the `Dumping`
/// line, already printed here): stdout text, stderr lines as problems, an
/// abort as [`DumpError::Abort`].
fn file_dump(
    names: &FileNames,
    d: kafka_aux::FileDump,
    w: &mut dyn Write,
    problems: &mut dyn Problems,
) -> Result<(), DumpError> {
    let head = format!("Dumping {}\n", names.display);
    let body = d.stdout.strip_prefix(head.as_str()).unwrap_or(&d.stdout);
    w.write_all(body.as_bytes())?;
    for line in d.stderr.lines() {
        problems.problem(ParseError::new(0, line.to_string()));
    }
    match d.aborted {
        Some(msg) => Err(DumpError::Abort(ParseError::new(0, msg))),
        None => Ok(()),
    }
}

/// Files that are not segment files: dumped by the json and table formats,
/// skipped (with a note) by the kafka format, which kafka-dump-log has no
/// output for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// `replication-offset-checkpoint`, `recovery-point-offset-checkpoint`,
    /// `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`.
    OffsetCheckpoint(OffsetCheckpointKind),
    /// `leader-epoch-checkpoint`.
    LeaderEpochCheckpoint,
    /// `meta.properties`.
    MetaProperties,
    /// `partition.metadata`.
    PartitionMetadata,
    /// `quorum-state` (KRaft).
    QuorumState,
    /// `.kafka_cleanshutdown`.
    CleanShutdown,
}

impl TextKind {
    /// The kind of a file called `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<TextKind> {
        if let Some(k) = OffsetCheckpointKind::from_file_name(name) {
            return Some(TextKind::OffsetCheckpoint(k));
        }
        match name {
            LEADER_EPOCH_CHECKPOINT_FILE => Some(TextKind::LeaderEpochCheckpoint),
            META_PROPERTIES_FILE => Some(TextKind::MetaProperties),
            PARTITION_METADATA_FILE => Some(TextKind::PartitionMetadata),
            walk::QUORUM_STATE_FILE => Some(TextKind::QuorumState),
            CLEAN_SHUTDOWN_FILE => Some(TextKind::CleanShutdown),
            // a remote segment's copy of the leader-epoch checkpoint
            // (`<offset>-<segment id>.leader_epoch_checkpoint`)
            _ if klf::format::names::parse_remote_segment_name(name)
                .is_some_and(|r| r.suffix == "leader_epoch_checkpoint") =>
            {
                Some(TextKind::LeaderEpochCheckpoint)
            }
            _ => None,
        }
    }

    /// The `kind` of its `file` object in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TextKind::OffsetCheckpoint(_) => "offset_checkpoint",
            TextKind::LeaderEpochCheckpoint => "leader_epoch_checkpoint",
            TextKind::MetaProperties => "meta_properties",
            TextKind::PartitionMetadata => "partition_metadata",
            TextKind::QuorumState => "quorum_state",
            TextKind::CleanShutdown => "clean_shutdown",
        }
    }
}

/// What a file is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.log` or KRaft `.checkpoint`.
    Log,
    /// `.index`.
    Index,
    /// `.timeindex`.
    TimeIndex,
    /// A suffix handled by an [`AUX_DUMPERS`] entry (`.txnindex`, `.snapshot`).
    Aux,
    /// A checkpoint, properties or state file ([`TextKind`]).
    Text(TextKind),
    /// Any other suffix.
    Unknown,
    /// No `.` in the name.
    NoSuffix,
}

/// Kind of a file name, by the text after its last `.` (as kafka-dump-log).
pub fn kind_of(name: &str) -> Kind {
    match name.rfind('.').map(|i| &name[i..]) {
        None => Kind::NoSuffix,
        Some(".log") | Some(".checkpoint") => Kind::Log,
        Some(".index") => Kind::Index,
        Some(".timeindex") => Kind::TimeIndex,
        Some(".snapshot") | Some(".txnindex") => Kind::Aux,
        Some(_) => Kind::Unknown,
    }
}

/// Kind of a file name: a [`TextKind`] by its exact name, else by suffix
/// ([`kind_of`]).
pub fn classify(name: &str) -> Kind {
    TextKind::from_name(name).map_or_else(|| kind_of(name), Kind::Text)
}

/// The `kind` of a file's `file` object in JSON.
pub fn kind_name(kind: Kind, name: &str) -> &'static str {
    match kind {
        Kind::Log if name.ends_with(".checkpoint") => "metadata_snapshot",
        Kind::Log => "log",
        Kind::Index => "index",
        Kind::TimeIndex => "timeindex",
        Kind::Aux if name.ends_with(".txnindex") => "txnindex",
        Kind::Aux => "producer_snapshot",
        Kind::Text(t) => t.name(),
        Kind::Unknown | Kind::NoSuffix => "unknown",
    }
}

/// The file bytes a dump of one file needs.
pub struct Inputs {
    /// The file itself, unless it is a `.log` (read through `log`, a
    /// window at a time when it is not mapped), a checkpoint (read a line
    /// at a time by its dumper) or a properties or state file over
    /// [`MAX_PROPERTIES_BYTES`] (not read): then empty.
    pub main: FileBytes,
    /// The `.log`: the file itself (a `.log` or a KRaft `.checkpoint`), or
    /// the `.log` of the same base offset (index kinds).
    pub log: Option<SegmentFile>,
    /// The `.index` of the same base offset (time index, and a `.log`
    /// dumped with a selection; `None` if absent).
    pub index: Option<FileBytes>,
    /// The length of that `.index` (for a time index: its bytes past
    /// `index` are the hole of a sparse file, zeros).
    pub index_len: usize,
    /// The `.timeindex` of a `.log` dumped with `--since`/`--until`.
    pub timeindex: Option<FileBytes>,
    /// Size of the file itself (for an index: its bytes past `main` are
    /// the hole of a sparse file, zeros, not held).
    pub size: u64,
}

impl Inputs {
    /// The file itself as index bytes: `main`, then zeros to `size`.
    pub fn main_index(&self) -> IndexBytes<'_> {
        IndexBytes {
            data: &self.main,
            len: usize::try_from(self.size).unwrap_or(usize::MAX),
        }
    }

    /// The `.index` beside a time index, as index bytes.
    pub fn sibling_index(&self) -> Option<IndexBytes<'_>> {
        self.index.as_ref().map(|b| {
            let data: &[u8] = b.as_ref();
            IndexBytes {
                data,
                len: self.index_len.max(data.len()),
            }
        })
    }
    /// The `.log` (none: no bytes).
    pub fn log(&self) -> &dyn SegmentSource {
        match &self.log {
            Some(l) => l,
            None => &EMPTY,
        }
    }
}

const EMPTY: [u8; 0] = [];

fn sibling(names: &FileNames, suffix: &str) -> PathBuf {
    let prefix = names.name.split('.').next().unwrap_or("");
    let dir = Path::new(&names.absolute)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    dir.join(format!("{prefix}{suffix}"))
}

/// Opens the file and, for index kinds, its `.log` (and `.index`), read-only.
/// What the json and table formats do first for each file: skip kinds klf
/// does not dump (an unknown file is a note, a file without a suffix an
/// error), read the inputs, and keep the decoder only where it applies
/// (decoders change how record keys and values of a `.log` are shown).
pub fn open_item(
    names: &FileNames,
    kind: Kind,
    opts: &Options,
    decoder: Option<DecoderKind>,
    out: &mut Output,
) -> Result<(Inputs, Option<DecoderKind>), Status> {
    if matches!(kind, Kind::Unknown | Kind::NoSuffix) {
        out.diag(format_args!(
            "klf dump: {}: not a file klf dumps; skipped",
            names.display
        ));
        return Err(if kind == Kind::Unknown {
            Status::Clean
        } else {
            Status::Failure
        });
    }
    let inputs = load(names, kind, !opts.want.is_all()).map_err(|(path, e)| {
        out.diag(format_args!("{path}: {e}"));
        Status::Failure
    })?;
    let decoder = decoder.filter(|_| (opts.show.key || opts.show.value) && kind == Kind::Log);
    Ok((inputs, decoder))
}

/// Reads the file and the siblings its kind needs.
/// With `seek`, a `.log`'s `.index` and `.timeindex` are read too.
pub fn load(names: &FileNames, kind: Kind, seek: bool) -> Result<Inputs, (String, std::io::Error)> {
    // An index is read with its segment's .log: say so when that is missing.
    let open_log = |p: &Path| {
        SegmentFile::open(p).map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    " ({} is read with its segment's .log: copy the .log beside it, or dump the .log alone)",
                    names.display
                )
            } else {
                String::new()
            };
            (p.display().to_string(), std::io::Error::new(e.kind(), format!("{e}{hint}")))
        })
    };
    let (log, index) = match kind {
        Kind::Index => (Some(open_log(&sibling(names, ".log"))?), None),
        Kind::TimeIndex => {
            let log = open_log(&sibling(names, ".log"))?;
            let ip = sibling(names, ".index");
            let index = match vfs::open_data(&ip) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err((ip.display().to_string(), e)),
            };
            (Some(log), index)
        }
        Kind::Log => {
            let log = SegmentFile::open(Path::new(&names.display))
                .map_err(|e| (names.display.clone(), e))?;
            let size = log.len();
            // the indexes to seek with: a missing or unreadable one only
            // means reading from the start
            let (index, timeindex) = if seek && names.name.ends_with(".log") {
                let open = |suffix: &str| vfs::open(&sibling(names, suffix)).ok();
                (open(".index"), open(".timeindex"))
            } else {
                (None, None)
            };
            return Ok(Inputs {
                main: FileBytes::from_vec(Vec::new()),
                log: Some(log),
                index,
                index_len: 0,
                timeindex,
                size,
            });
        }
        _ => (None, None),
    };
    let (index, index_len) = match index {
        Some((b, len)) => (Some(b), usize::try_from(len).unwrap_or(usize::MAX)),
        None => (None, 0),
    };
    // An index is held up to the end of its data (a sparse preallocated
    // one is a few entries and a hole); other files whole.
    let (main, size) = if matches!(kind, Kind::Index | Kind::TimeIndex) {
        vfs::open_data(Path::new(&names.display)).map_err(|e| (names.display.clone(), e))?
    } else if let Kind::Text(t) = kind {
        // A checkpoint is read a line at a time by its dumper; a
        // properties or state file whole, unless it is over the cap (its
        // dumper says so).
        let path = Path::new(&names.display);
        let fail = |e| (names.display.clone(), e);
        if matches!(
            t,
            TextKind::OffsetCheckpoint(_) | TextKind::LeaderEpochCheckpoint
        ) {
            let len = vfs::metadata(path).map_err(fail)?.len();
            (FileBytes::from_vec(Vec::new()), len)
        } else {
            let (bytes, len) = vfs::read_small(path, MAX_PROPERTIES_BYTES).map_err(fail)?;
            (FileBytes::from_vec(bytes.unwrap_or_default()), len)
        }
    } else {
        let main = vfs::open(Path::new(&names.display)).map_err(|e| (names.display.clone(), e))?;
        let size = main.len() as u64;
        (main, size)
    };
    Ok(Inputs {
        main,
        log,
        index,
        index_len,
        timeindex: None,
        size,
    })
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
    let n = klf::format::text::parse_bytes(s)?;
    i32::try_from(n).map_err(|_| format!("{s:?} is more than 2147483647 bytes (2G - 1)"))
}

/// One end of `--offsets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// None given: the start or the end of the log.
    Open,
    /// An offset.
    At(i64),
    /// `-N`: N offsets before the log end offset.
    FromEnd(i64),
}

/// `--offsets A..B`: B excluded, either end open or counted back from the
/// log end offset (`-N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetRange {
    /// A.
    pub first: Bound,
    /// B.
    pub end: Bound,
    /// As given.
    pub text: String,
}

impl OffsetRange {
    /// Whether an end counts back from the log end offset.
    pub fn is_relative(&self) -> bool {
        matches!(self.first, Bound::FromEnd(_)) || matches!(self.end, Bound::FromEnd(_))
    }

    /// `[first, end)` for a log whose log end offset is `log_end` (an
    /// offset counted back past the start is the start, 0).
    pub fn resolve(&self, log_end: i64) -> (i64, i64) {
        let back = |n: i64| log_end.saturating_sub(n).max(0);
        let first = match self.first {
            Bound::Open => i64::MIN,
            Bound::At(a) => a,
            Bound::FromEnd(n) => back(n),
        };
        let end = match self.end {
            Bound::Open => i64::MAX,
            Bound::At(b) => b,
            Bound::FromEnd(n) => back(n),
        };
        (first, end)
    }
}

/// `--offsets`: `A..B`, `A..` or `..B`, B excluded; `-N` for N before the
/// log end offset.
fn parse_offsets(s: &str) -> Result<OffsetRange, String> {
    let (a, b) = s.split_once("..").ok_or_else(|| {
        format!("{s:?}: give offsets as A..B (B excluded), A.., ..B, or -N.. for the last N")
    })?;
    let end = |x: &str| -> Result<Bound, String> {
        if x.is_empty() {
            return Ok(Bound::Open);
        }
        let bad = || {
            format!(
                "{x:?} is not an offset (in {s:?}; give A..B, A.., ..B, or -N.. for the last N)"
            )
        };
        match x.strip_prefix('-') {
            Some(n) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => {
                n.parse::<i64>().map(Bound::FromEnd).map_err(|_| bad())
            }
            Some(_) => Err(bad()),
            None if x.bytes().all(|c| c.is_ascii_digit()) => {
                x.parse::<i64>().map(Bound::At).map_err(|_| bad())
            }
            None => Err(bad()),
        }
    };
    let (first, last) = (end(a)?, end(b)?);
    let backwards = match (first, last) {
        (Bound::At(a), Bound::At(b)) => a > b,
        (Bound::FromEnd(a), Bound::FromEnd(b)) => a < b,
        _ => false,
    };
    if backwards {
        return Err(format!("{s:?}: the first offset is past the end"));
    }
    Ok(OffsetRange {
        first,
        end: last,
        text: s.to_string(),
    })
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

fn options(args: &Args) -> Options {
    let decoder = args.offsets_decoder
        || args.transaction_log_decoder
        || args.cluster_metadata_decoder
        || args.remote_log_metadata_decoder
        || args.share_group_state_decoder
        || args.key_decoder_class.is_some()
        || args.value_decoder_class.is_some();
    let print_data = args.print_data_log || decoder;
    // offsets counted back from the log end are resolved for each log
    // (see `Logs`); until then, from 0
    let (first, end) = args
        .offsets
        .as_ref()
        .map_or((i64::MIN, i64::MAX), |o| o.resolve(0));
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
        decompress_cap: klf::format::codec::decompressed_cap(),
        resync: args.resync,
        release: match args.kafka_version {
            KafkaVersion::Line(r) => r,
            KafkaVersion::Auto => Release::NEWEST,
        },
        want: klf::format::seek::Wanted {
            first,
            end,
            since: args.since,
            until: args.until,
        },
        key: args.key.as_ref().map(|k| k.as_bytes().to_vec()),
        count: args.count,
    }
}

pub use klf::format::seek::Pick;

/// Whether `opts` asks for a part of each segment (`--offsets`,
/// `--since`, `--until`, `--key`, `--count`).
pub fn selects(opts: &Options) -> bool {
    !opts.want.is_all() || opts.key.is_some() || opts.count.is_some()
}

/// Where the selection of `opts` lies in `log` (its `.index` and
/// `.timeindex` in `inputs`), `--max-bytes` applied; what it shows is
/// counted in the tally of `run`.
pub fn pick_of(
    inputs: &Inputs,
    log: &dyn SegmentSource,
    base: i64,
    opts: &Options,
    run: &FileRun,
) -> Pick {
    let end = (opts.max_bytes.max(0) as u64).min(log.len());
    let span = (!opts.want.is_all()).then(|| {
        klf::format::seek::span(
            log,
            inputs.index.as_deref(),
            inputs.timeindex.as_deref(),
            base,
            &opts.want,
        )
    });
    let pick = Pick::new(span, end, opts.key.clone(), opts.count);
    match &run.tally {
        Some(t) => pick.tallied(t.clone()),
        None => pick,
    }
}

/// What the dump of one file is given besides the file and the options.
#[derive(Clone, Default)]
pub struct FileRun {
    /// The progress bar, counting the bytes of the files dumped.
    pub bar: Option<indicatif::ProgressBar>,
    /// The bytes of the files dumped before this one.
    pub done: u64,
    /// Under a selection, the count of what the file's log shows.
    pub tally: Option<Arc<AtomicU64>>,
    /// Whether stdout is a terminal.
    pub terminal: bool,
}

impl FileRun {
    /// `log`, read with the bar moving as its batches are read.
    pub fn metered<'a>(&self, log: &'a dyn SegmentSource) -> Metered<'a> {
        Metered {
            inner: log,
            bar: self.bar.clone(),
            base: self.done,
            step: METER_STEP,
        }
    }
}

/// A segment whose reading moves a progress bar: the bar stands at the
/// bytes of the files before it (`base`) and the position read in it.
pub struct Metered<'a> {
    inner: &'a dyn SegmentSource,
    bar: Option<indicatif::ProgressBar>,
    base: u64,
    /// Bytes read between two moves of the bar.
    step: u64,
}

/// Bytes read between two moves of the bar.
const METER_STEP: u64 = 1 << 20;

impl SegmentSource for Metered<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn entries(&self, start: u64, end: u64) -> Box<dyn Entries + '_> {
        let inner = self.inner.entries(start, end);
        match &self.bar {
            None => inner,
            Some(bar) => Box::new(MeteredEntries {
                inner,
                bar: bar.clone(),
                base: self.base,
                step: self.step,
                shown: 0,
            }),
        }
    }
}

struct MeteredEntries<'a> {
    inner: Box<dyn Entries + 'a>,
    bar: indicatif::ProgressBar,
    base: u64,
    step: u64,
    /// The position last shown.
    shown: u64,
}

impl MeteredEntries<'_> {
    fn meter(&mut self) {
        let at = self.inner.position();
        if at >= self.shown + self.step {
            self.shown = at;
            // a second reading of the file (the table's) never moves it back
            if self.base + at > self.bar.position() {
                self.bar.set_position(self.base + at);
            }
        }
    }
}

impl Entries for MeteredEntries<'_> {
    fn next_entry(&mut self) -> Option<Result<klf::format::batch::Batch<'_>, EntryError>> {
        self.meter();
        self.inner.next_entry()
    }
    fn resync(&mut self) -> Result<Option<klf::format::batch::Skipped>, EntryError> {
        self.inner.resync()
    }
    fn tail(&self) -> Option<klf::format::batch::Tail> {
        self.inner.tail()
    }
    fn position(&self) -> u64 {
        self.inner.position()
    }
    fn ahead(&self) -> klf::format::batch::SegmentIter<'_> {
        self.inner.ahead()
    }
    fn page_in(&self) -> Option<fn(&[u8])> {
        self.inner.page_in()
    }
}

/// One log of a run under a selection: the `.log` files of one folder (a
/// partition directory), or a KRaft snapshot alone.
struct Log {
    /// What stderr calls it: the folder, or its file when it has one.
    name: String,
    /// Its files, in the order dumped.
    files: Vec<String>,
    /// What it shows.
    tally: Arc<AtomicU64>,
    /// The selection in it (offsets counted back from its end resolved).
    want: klf::format::seek::Wanted,
    /// `--offsets` as resolved for it, when counted back from its end.
    resolved: Option<(i64, i64, i64)>,
}

impl Log {
    /// Its newest file: the highest base offset in a name, the last of
    /// those.
    fn newest(&self) -> Option<&String> {
        self.files
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| {
                let name = Path::new(f.as_str())
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (klf::format::names::base_offset_of(&name).unwrap_or(-1), *i)
            })
            .map(|(_, f)| f)
    }
}

/// The logs of a run, and the log of each file dumped.
#[derive(Default)]
struct Logs {
    logs: Vec<Log>,
    /// For each PATH, for each of its files, its log.
    of: Vec<Vec<Option<usize>>>,
}

/// The log a file belongs to: the folder of a `.log`, a KRaft snapshot
/// itself; None for a file that holds no batches.
fn log_key(item: &walk::Item) -> Option<String> {
    if item.kind != Kind::Log {
        return None;
    }
    if !item.path.ends_with(".log") {
        return Some(item.path.clone());
    }
    let parent = Path::new(&item.path)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(if parent.is_empty() {
        ".".to_string()
    } else {
        parent
    })
}

/// The ends of a `.log` or KRaft snapshot file, read with its `.index`;
/// None when it cannot be opened (which its dump reports).
fn file_extent(path: &str) -> Option<klf::format::seek::Extent> {
    let p = Path::new(path);
    let log = SegmentFile::open(p).ok()?;
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = klf::format::names::base_offset_of(&name).unwrap_or(0);
    let index = path
        .ends_with(".log")
        .then(|| vfs::open(&p.with_extension("index")).ok())
        .flatten();
    Some(klf::format::seek::extent(&log, index.as_deref(), base))
}

/// A time for a person: ISO-8601 UTC, else the milliseconds.
fn time_text(ms: i64) -> String {
    klf::format::text::iso_time(ms).unwrap_or_else(|| ms.to_string())
}

impl Logs {
    /// The logs of the files of `expanded`, each with the selection `want`.
    fn of(expanded: &[walk::Expansion], want: klf::format::seek::Wanted) -> Logs {
        let mut logs = Logs::default();
        let mut keys: Vec<String> = Vec::new();
        for e in expanded {
            let mut of = Vec::with_capacity(e.items.len());
            for item in &e.items {
                let at = log_key(item).map(|k| match keys.iter().position(|x| *x == k) {
                    Some(at) => at,
                    None => {
                        keys.push(k.clone());
                        logs.logs.push(Log {
                            name: k,
                            files: Vec::new(),
                            tally: Arc::new(AtomicU64::new(0)),
                            want,
                            resolved: None,
                        });
                        logs.logs.len() - 1
                    }
                });
                if let Some(at) = at {
                    logs.logs[at].files.push(item.path.clone());
                }
                of.push(at);
            }
            logs.of.push(of);
        }
        for l in &mut logs.logs {
            if let [one] = l.files.as_slice() {
                l.name = one.clone();
            }
        }
        logs
    }

    /// The log of file `i` of PATH `n`, with the run's selection in it.
    fn of_item(&self, n: usize, i: usize) -> Option<&Log> {
        let at = (*self.of.get(n)?.get(i)?)?;
        self.logs.get(at)
    }

    /// Sets the selection of each log: `want`, with the offsets of
    /// `range` counted back from the log's end offset (that of its newest
    /// file: its last readable batch's, or the base offset in its name
    /// when it holds none), which a note says.
    fn resolve(&mut self, range: &OffsetRange, want: &klf::format::seek::Wanted, out: &mut Output) {
        let shown = |o: i64| match o {
            i64::MIN | i64::MAX => String::new(),
            o => o.to_string(),
        };
        for l in &mut self.logs {
            let Some(newest) = l.newest().cloned() else {
                continue;
            };
            let named_base = Path::new(&newest)
                .file_name()
                .and_then(|n| klf::format::names::base_offset_of(&n.to_string_lossy()));
            let end = file_extent(&newest)
                .and_then(|e| e.end)
                .map(|(o, _)| o)
                .or(named_base)
                .unwrap_or(0);
            let (first, last) = range.resolve(end);
            l.want = klf::format::seek::Wanted {
                first,
                end: last,
                ..*want
            };
            l.resolved = Some((first, last, end));
            out.note(format_args!(
                "klf dump: {}: --offsets {} is {}..{} (end offset {end})",
                l.name,
                range.text,
                shown(first),
                shown(last)
            ));
        }
    }

    /// Says on stderr, for each log the selection shows nothing of, what
    /// the log holds: its offsets (and with a time, its batches' max
    /// timestamps). When nothing at all was shown, the first few in full
    /// whatever `--quiet` says, else as notes; the rest counted.
    fn report_unmatched(&self, args: &Args, out: &mut Output) {
        let unmatched: Vec<&Log> = self
            .logs
            .iter()
            .filter(|l| l.tally.load(Ordering::Relaxed) == 0)
            .collect();
        if unmatched.is_empty() {
            return;
        }
        let none_shown = unmatched.len() == self.logs.len();
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
    let first = file_extent(l.files.first()?)?.first;
    let end = file_extent(l.newest()?)?.end;
    Some(match (first, end) {
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
    let p = Path::new(path);
    for dir in p.ancestors().skip(1).take(2) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        if let Some(found) = klf::capture::controller::metadata_version(dir) {
            let name = klf::format::metadata::metadata_version_name(found.level);
            let release = name
                .and_then(Release::for_metadata_version)
                .unwrap_or(Release::NEWEST);
            return (
                release,
                format!(
                    "metadata.version {} (feature level {}, {}): kafka-dump-log {release}'s text",
                    name.unwrap_or("unknown"),
                    found.level,
                    found.file.display()
                ),
                dir.to_string_lossy().into_owned(),
            );
        }
    }
    let folder = p
        .ancestors()
        .nth(if in_partition { 2 } else { 1 })
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    (
        Release::NEWEST,
        format!(
            "no metadata.version recorded (a ZooKeeper-mode broker, or files away from their log directory): kafka-dump-log {}'s text",
            Release::NEWEST
        ),
        folder,
    )
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
        Some(kind) => DECODERS
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, make)| make(release))
            .ok_or_else(|| format!("{} is not available in this build of klf yet", kind.flag())),
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
        let is_archive = vfs::split_virtual(p).is_some()
            || ((vfs::is_archive_name(p) || klf::capture::digest::is_digest_name(p))
                && std::fs::metadata(p).is_ok_and(|m| m.is_file()));
        if !is_archive {
            expanded.push(walk::expand(arg));
            continue;
        }
        match out.resolve_input(p) {
            Ok(root) => expanded.push(walk::expand(&root.to_string_lossy())),
            Err(s) => status = status.worst(s),
        }
    }
    // With a selection only the batches and records of logs are dumped:
    // a directory's other files are left out (a file named is dumped).
    let selection = selects(&opts);
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
        Logs::of(&expanded, opts.want)
    } else {
        Logs::default()
    };
    if let Some(range) = args.offsets.as_ref().filter(|r| r.is_relative()) {
        logs.resolve(range, &opts.want, out);
    }
    // The bar counts bytes; dumping to a terminal shows its own progress,
    // so a bar only when stdout goes elsewhere.
    let terminal = std::io::stdout().is_terminal();
    let sizes: Vec<Vec<u64>> = expanded
        .iter()
        .map(|e| {
            e.items
                .iter()
                .map(|i| vfs::metadata(Path::new(&i.path)).map_or(0, |m| m.len()))
                .collect()
        })
        .collect();
    let total: u64 = sizes.iter().flatten().sum();
    let bar = if terminal {
        None
    } else {
        out.progress(
            total,
            "{bar:30} {bytes}/{total_bytes} ({binary_bytes_per_sec}, eta {eta})",
        )
    };
    let base_want = opts.want;
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
            let want = log.map_or(base_want, |l| l.want);
            opts.want = want;
            dumper.opts.want = want;
            let run = FileRun {
                bar: bar.clone(),
                done,
                tally: log.map(|l| l.tally.clone()),
                terminal,
            };
            let names = FileNames::new(&item.path, &cwd);
            let s = match format {
                Format::Kafka => dump_kafka_item(&mut dumper, &names, item, &run, out),
                Format::Json => {
                    json::dump_item(&names, item, &opts, decoder_for(forced, item), &run, out)
                }
                Format::Table => {
                    table::dump_item(&names, item, &opts, decoder_for(forced, item), &run, out)
                }
            };
            done += sizes[n][i];
            if let Some(b) = &bar {
                b.set_position(done);
            }
            status = status.worst(s);
            if s == Status::BrokenPipe {
                break 'paths;
            }
        }
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
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
        logs.report_unmatched(&args, out);
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

fn dump_kafka_item(
    dumper: &mut Dumper<'_>,
    names: &FileNames,
    item: &walk::Item,
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
    if klf::format::names::parse_remote_segment_name(&names.name).is_some()
        && !names
            .name
            .split('.')
            .next()
            .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
    {
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
    dump_kafka_file(dumper, names, item.kind, run, out)
}

fn dump_kafka_file(
    dumper: &mut Dumper<'_>,
    names: &FileNames,
    kind: Kind,
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
    let picked = kind == Kind::Log && selects(&dumper.opts);
    let inputs = match load(names, kind, picked) {
        Ok(i) => i,
        Err((path, e)) => {
            out.diag(format_args!("{path}: {e}"));
            return Status::Failure;
        }
    };
    let suffix = names.name.rfind('.').map_or("", |i| &names.name[i..]);
    let aux = AUX_DUMPERS.iter().find(|(s, _)| *s == suffix);
    if kind == Kind::Aux && aux.is_none() {
        out.diag(format_args!(
            "{}: dumping {suffix} files is not available in this build of klf yet",
            names.display
        ));
        return Status::Failure;
    }
    let mut problems = Vec::new();
    // On a terminal the records' bytes cannot drive it (see TerminalSafe);
    // anywhere else the text is kafka-dump-log's, byte for byte.
    let r = if run.terminal {
        let mut safe = klf::render::text::TerminalSafe::new(out.out());
        dump_kafka_bytes(
            dumper,
            &mut safe,
            names,
            kind,
            &inputs,
            run,
            aux,
            &mut problems,
        )
        .and_then(|()| safe.finish().map_err(DumpError::Write))
    } else {
        dump_kafka_bytes(
            dumper,
            out.out(),
            names,
            kind,
            &inputs,
            run,
            aux,
            &mut problems,
        )
    };

    // Bytes that moved under klf (the file shrank or grew while it was
    // read) are not damage: the change is the answer, never the problems.
    if let Some(Err(e)) = inputs.log.as_ref().map(SegmentFile::unchanged) {
        out.diag(format_args!("{}: cannot read: {e}", names.display));
        return Status::Failure;
    }
    for p in &problems {
        out.problem(&names.display, p.pos, &p.reason);
    }
    conclude(out, names, r, problems.len())
}

/// The kafka text of one file (a picked part of a log under a selection)
/// to `w`; problems that do not stop it into `problems`.
#[allow(clippy::too_many_arguments)]
fn dump_kafka_bytes<W: Write>(
    dumper: &mut Dumper<'_>,
    w: &mut W,
    names: &FileNames,
    kind: Kind,
    inputs: &Inputs,
    run: &FileRun,
    aux: Option<&(&str, AuxDumper)>,
    problems: &mut Vec<ParseError>,
) -> Result<(), DumpError> {
    let log = run.metered(inputs.log());
    match kind {
        Kind::Log if selects(&dumper.opts) => {
            let base = klf::format::names::base_offset_of(&names.name).unwrap_or(0);
            let pick = pick_of(inputs, &log, base, &dumper.opts, run);
            dumper.dump_log_picked(w, names, &log, pick, problems)
        }
        Kind::Log => dumper.dump_log(w, names, &log, problems),
        Kind::Index => dumper.dump_index(w, names, inputs.main_index(), inputs.log()),
        Kind::TimeIndex => dumper.dump_time_index(
            w,
            names,
            inputs.main_index(),
            inputs.sibling_index(),
            inputs.log(),
        ),
        Kind::Aux => match aux {
            Some((_, f)) => f(names, &inputs.main, dumper.opts.release, w, problems),
            None => Ok(()),
        },
        Kind::Text(_) | Kind::Unknown | Kind::NoSuffix => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_moves_with_the_bytes_read_in_a_segment() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/kafka/divergence/broker-2/diverge-0/00000000000000000000.log");
        let log = SegmentFile::open(&path).unwrap();
        let bar = indicatif::ProgressBar::hidden();
        bar.set_length(1_000_000);
        // where the run leaves it after the files before
        bar.set_position(1000);
        let metered = Metered {
            inner: &log,
            bar: Some(bar.clone()),
            base: 1000,
            step: 1,
        };
        // the bar stands at the files before, then at each batch read
        let mut positions = Vec::new();
        let mut it = metered.entries(0, metered.len());
        let mut starts = Vec::new();
        while let Some(Ok(b)) = it.next_entry() {
            starts.push(b.position());
            positions.push(bar.position());
        }
        assert!(starts.len() > 3);
        let want: Vec<u64> = std::iter::once(1000)
            .chain(starts[1..].iter().map(|p| 1000 + p))
            .collect();
        assert_eq!(positions, want);
        // the position after the last batch is where the next read starts
        assert_eq!(it.position(), log.len());
    }

    #[test]
    fn offsets_from_the_start_or_counted_back_from_the_end() {
        let r = |s: &str, end: i64| parse_offsets(s).map(|o| o.resolve(end));
        assert_eq!(r("100..110", 0), Ok((100, 110)));
        assert_eq!(r("100..", 0), Ok((100, i64::MAX)));
        assert_eq!(r("..110", 0), Ok((i64::MIN, 110)));
        assert_eq!(r("-100..", 250), Ok((150, i64::MAX)));
        assert_eq!(r("-100..-50", 250), Ok((150, 200)));
        assert_eq!(r("..-10", 250), Ok((i64::MIN, 240)));
        assert_eq!(r("-100..", 30), Ok((0, i64::MAX)), "at most the whole log");
        assert!(parse_offsets("-100..").unwrap().is_relative());
        assert!(!parse_offsets("1..2").unwrap().is_relative());
        for bad in ["5..3", "-5..-10", "x..", "1-2..", "100", "--5.."] {
            assert!(parse_offsets(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_files_by_exact_name() {
        assert_eq!(
            classify("replication-offset-checkpoint"),
            Kind::Text(TextKind::OffsetCheckpoint(
                OffsetCheckpointKind::ReplicationOffset
            ))
        );
        assert_eq!(
            classify("leader-epoch-checkpoint"),
            Kind::Text(TextKind::LeaderEpochCheckpoint)
        );
        assert_eq!(
            classify("meta.properties"),
            Kind::Text(TextKind::MetaProperties)
        );
        assert_eq!(
            classify(".kafka_cleanshutdown"),
            Kind::Text(TextKind::CleanShutdown)
        );
        // Segment files and KRaft snapshots keep kafka-dump-log's suffix rule.
        assert_eq!(classify("00000000000000000000.log"), Kind::Log);
        assert_eq!(classify("bootstrap.checkpoint"), Kind::Log);
        assert_eq!(classify("x.properties"), Kind::Unknown);
        assert_eq!(classify("quorum-state.tmp"), Kind::Unknown);
    }

    #[test]
    fn decoders_by_topic_unless_forced() {
        let item = |path: &str, tp: Option<(&str, i32)>| walk::Item {
            path: path.to_string(),
            kind: classify(path.rsplit('/').next().unwrap_or(path)),
            topic_partition: tp.map(|(t, p)| (t.to_string(), p)),
            named: true,
        };
        let offsets = item(
            "d/__consumer_offsets-3/00000000000000000000.log",
            Some(("__consumer_offsets", 3)),
        );
        let plain = item("d/events-0/00000000000000000000.log", Some(("events", 0)));
        let boot = item("d/bootstrap.checkpoint", None);
        assert_eq!(decoder_for(None, &offsets), Some(DecoderKind::Offsets));
        assert_eq!(decoder_for(None, &plain), None);
        assert_eq!(decoder_for(None, &boot), Some(DecoderKind::ClusterMetadata));
        assert_eq!(
            decoder_for(Some(DecoderKind::TransactionLog), &plain),
            Some(DecoderKind::TransactionLog)
        );
    }
}
