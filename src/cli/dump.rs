//! `klf dump`: what is in `.log`, `.index` and `.timeindex` files (and, in
//! the kafka format, `.txnindex`, producer `.snapshot` and KRaft
//! `.checkpoint` files), as kafka-dump-log prints it (`--format kafka`,
//! byte-identical on stdout), as JSON Lines, or as tables.
//!
//! Flags carry kafka-dump-log's names. Unlike kafka-dump-log, a damaged file
//! does not end the run: the problem is reported on stderr as
//! `file:byte: reason`, the next file is dumped, and the exit status is 1.

mod json;
mod table;

use std::io::Write;
use std::path::{Path, PathBuf};

use klf::capture::mmap::FileBytes;
use std::borrow::Cow;

use klf::format::ParseError;
use klf::render::kafka::{
    DumpError, Dumper, FileNames, Formatted, Options, Problems, RecordFormatter, RecordRef,
    StringFormatter,
};
use klf::render::kafka_aux::{self, AuxDecoder};

use super::common::{Output, Status};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// kafka-dump-log's text, byte for byte.
    Kafka,
    /// JSON Lines: one object per file, batch, record, index entry or problem.
    Json,
    /// Human-readable tables.
    Table,
}

/// Arguments of `klf dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files to dump: .log, .index, .timeindex, .txnindex, .snapshot (and KRaft
    /// .checkpoint).
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,

    /// Comma-separated files to dump (kafka-dump-log's option), after PATHs.
    #[arg(long, value_name = "FILE1,FILE2,...")]
    pub files: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Kafka)]
    pub format: Format,

    /// Print record keys and payloads (implies --deep-iteration).
    #[arg(long)]
    pub print_data_log: bool,

    /// Print every record, not only batches.
    #[arg(long)]
    pub deep_iteration: bool,

    /// Only read this many bytes of each .log file.
    #[arg(long, value_name = "N", default_value_t = i32::MAX)]
    pub max_bytes: i32,

    /// Bytes read at each .index position when checking it against the log.
    #[arg(long, value_name = "N", default_value_t = 5 * 1024 * 1024)]
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

    /// Decode __consumer_offsets records (implies --print-data-log).
    #[arg(long)]
    pub offsets_decoder: bool,

    /// Decode __transaction_state records (implies --print-data-log).
    #[arg(long)]
    pub transaction_log_decoder: bool,

    /// Decode KRaft __cluster_metadata records (implies --print-data-log).
    #[arg(long)]
    pub cluster_metadata_decoder: bool,

    /// klf only: after a damaged batch, skip to the next plausible batch and
    /// go on (kafka-dump-log stops). Positions printed are then file positions.
    #[arg(long)]
    pub resync: bool,

    /// klf only: largest decompressed size accepted for one batch.
    #[arg(long, value_name = "BYTES", default_value_t = klf::format::codec::DEFAULT_DECOMPRESSED_CAP)]
    pub max_decompressed_bytes: usize,
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
}

impl DecoderKind {
    fn flag(self) -> &'static str {
        match self {
            DecoderKind::Offsets => "--offsets-decoder",
            DecoderKind::TransactionLog => "--transaction-log-decoder",
            DecoderKind::ClusterMetadata => "--cluster-metadata-decoder",
        }
    }
}

/// Formatters for the internal-topic decoder options: one line per decoder,
/// `(kind, constructor)`. The decoders live in the library
/// (`klf::render::kafka_aux`, over `klf::format::internal` and
/// `klf::format::metadata`); an option whose decoder is not registered here
/// is refused with a usage error.
const DECODERS: &[(DecoderKind, MakeFormatter)] = &[
    (DecoderKind::Offsets, || Box::new(AuxFormatter(AuxDecoder::Offsets))),
    (DecoderKind::TransactionLog, || Box::new(AuxFormatter(AuxDecoder::TransactionLog))),
    (DecoderKind::ClusterMetadata, || Box::new(AuxFormatter(AuxDecoder::ClusterMetadata))),
];

/// A decoder of `klf::render::kafka_aux` as a [`RecordFormatter`].
struct AuxFormatter(AuxDecoder);

impl RecordFormatter for AuxFormatter {
    fn format<'a>(&mut self, rec: &RecordRef<'a>) -> Result<Formatted<'a>, String> {
        let kp = self
            .0
            .decode(rec.offset, rec.key, rec.value)
            .map_err(|e| e.reason.into_owned())?;
        Ok((kp.key.map(Cow::Owned), kp.payload.map(Cow::Owned)))
    }
}

/// Builds a formatter for a decoder option.
type MakeFormatter = fn() -> Box<dyn RecordFormatter>;

/// kafka-dump-log text for file kinds parsed outside this module: one line
/// per suffix, `(suffix, function)`. The function writes the text for the
/// file's bytes and reports problems that do not stop it.
type AuxDumper =
    fn(&FileNames, &[u8], &mut dyn Write, &mut dyn Problems) -> Result<(), DumpError>;
const AUX_DUMPERS: &[(&str, AuxDumper)] = &[
    (".txnindex", |n, d, w, p| file_dump(n, kafka_aux::dump_txn_index(&n.display, d), w, p)),
    (".snapshot", |n, d, w, p| file_dump(n, kafka_aux::dump_producer_snapshot(&n.display, d), w, p)),
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

/// What a file is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.log` or KRaft `.checkpoint`.
    Log,
    /// `.index`.
    Index,
    /// `.timeindex`.
    TimeIndex,
    /// A suffix handled by an [`AUX_DUMPERS`] entry (or awaiting one).
    Aux,
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

/// The file bytes a dump of one file needs.
pub struct Inputs {
    /// The file itself.
    pub main: FileBytes,
    /// The `.log` of the same base offset (index kinds).
    pub log: Option<FileBytes>,
    /// The `.index` of the same base offset (time index; `None` if absent).
    pub index: Option<FileBytes>,
}

fn sibling(names: &FileNames, suffix: &str) -> PathBuf {
    let prefix = names.name.split('.').next().unwrap_or("");
    let dir = Path::new(&names.absolute)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    dir.join(format!("{prefix}{suffix}"))
}

/// Opens the file and, for index kinds, its `.log` (and `.index`), read-only.
pub fn load(names: &FileNames, kind: Kind) -> Result<Inputs, (String, std::io::Error)> {
    let open = |p: &Path| FileBytes::open(p).map_err(|e| (p.display().to_string(), e));
    let (log, index) = match kind {
        Kind::Index => (Some(open(&sibling(names, ".log"))?), None),
        Kind::TimeIndex => {
            let log = open(&sibling(names, ".log"))?;
            let ip = sibling(names, ".index");
            let index = match FileBytes::open(&ip) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err((ip.display().to_string(), e)),
            };
            (Some(log), index)
        }
        _ => (None, None),
    };
    let main = FileBytes::open(Path::new(&names.display))
        .map_err(|e| (names.display.clone(), e))?;
    Ok(Inputs { main, log, index })
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

fn options(args: &Args) -> Options {
    let decoder = args.offsets_decoder || args.transaction_log_decoder || args.cluster_metadata_decoder;
    let print_data = args.print_data_log || decoder;
    Options {
        print_data,
        deep: args.deep_iteration || print_data,
        skip_record_metadata: args.skip_record_metadata,
        max_bytes: args.max_bytes,
        max_message_size: args.max_message_size,
        index_sanity_only: args.index_sanity_check,
        verify_only: args.verify_index_only,
        decompress_cap: args.max_decompressed_bytes,
        resync: args.resync,
    }
}

fn formatter(args: &Args) -> Result<Box<dyn RecordFormatter>, String> {
    let wanted = if args.offsets_decoder {
        Some(DecoderKind::Offsets)
    } else if args.transaction_log_decoder {
        Some(DecoderKind::TransactionLog)
    } else if args.cluster_metadata_decoder {
        Some(DecoderKind::ClusterMetadata)
    } else {
        None
    };
    match wanted {
        None => Ok(Box::new(StringFormatter)),
        Some(kind) => DECODERS
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, make)| make())
            .ok_or_else(|| format!("{} is not available in this build of klf yet", kind.flag())),
    }
}

/// Runs `klf dump`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let files = file_list(&args);
    if files.is_empty() {
        out.diag("klf dump: no files given (pass PATHs or --files)");
        return Status::Failure;
    }
    let mut fmt = match formatter(&args) {
        Ok(f) => f,
        Err(msg) => {
            out.diag(format_args!("klf dump: {msg}"));
            return Status::Failure;
        }
    };
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let opts = options(&args);
    match args.format {
        Format::Kafka => run_kafka(&files, &cwd, opts, fmt.as_mut(), out),
        Format::Json => json::run(&files, &cwd, &opts, out),
        Format::Table => table::run(&files, &cwd, &opts, out),
    }
}

/// Outcome of one file's dump as a status, reporting an abort.
pub fn conclude(out: &mut Output, names: &FileNames, r: Result<(), DumpError>, problems: usize) -> Status {
    match r {
        Ok(()) if problems == 0 => Status::Clean,
        Ok(()) => Status::Corruption,
        Err(DumpError::Write(e)) => out.write_failed(e),
        Err(DumpError::Abort(e)) => {
            out.problem(&names.display, e.pos, &e.reason);
            Status::Corruption
        }
    }
}

fn run_kafka(
    files: &[String],
    cwd: &str,
    opts: Options,
    fmt: &mut dyn RecordFormatter,
    out: &mut Output,
) -> Status {
    let mut dumper = Dumper::new(opts, fmt);
    let mut status = Status::Clean;
    for arg in files {
        let names = FileNames::new(arg, cwd);
        if let Err(e) = dumper.write_dumping(out.out(), &names) {
            return status.worst(out.write_failed(e));
        }
        let kind = kind_of(&names.name);
        let s = dump_kafka_file(&mut dumper, &names, kind, out);
        status = status.worst(s);
        if s == Status::BrokenPipe {
            return s;
        }
    }
    if !dumper.findings.is_empty() {
        let _ = out.out().flush();
        let _ = dumper.findings.write_to(&mut std::io::stderr().lock());
    }
    status
}

fn dump_kafka_file(dumper: &mut Dumper<'_>, names: &FileNames, kind: Kind, out: &mut Output) -> Status {
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
        _ => {}
    }
    let inputs = match load(names, kind) {
        Ok(i) => i,
        Err((path, e)) => {
            out.diag(format_args!("{path}: {e}"));
            return Status::Failure;
        }
    };
    let mut problems = Vec::new();
    let r = match kind {
        Kind::Log => dumper.dump_log(out.out(), names, &inputs.main, &mut problems),
        Kind::Index => dumper.dump_index(
            out.out(),
            names,
            &inputs.main,
            inputs.log.as_deref().unwrap_or(&[]),
        ),
        Kind::TimeIndex => dumper.dump_time_index(
            out.out(),
            names,
            &inputs.main,
            inputs.index.as_deref(),
            inputs.log.as_deref().unwrap_or(&[]),
        ),
        Kind::Aux => {
            let suffix = names.name.rfind('.').map_or("", |i| &names.name[i..]);
            match AUX_DUMPERS.iter().find(|(s, _)| *s == suffix) {
                Some((_, f)) => f(names, &inputs.main, out.out(), &mut problems),
                None => {
                    out.diag(format_args!(
                        "{}: dumping {suffix} files is not available in this build of klf yet",
                        names.display
                    ));
                    return Status::Failure;
                }
            }
        }
        Kind::Unknown | Kind::NoSuffix => Ok(()),
    };
    for p in &problems {
        out.problem(&names.display, p.pos, &p.reason);
    }
    conclude(out, names, r, problems.len())
}

