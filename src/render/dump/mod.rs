//! `klf dump`'s three renderers of the files the engine opened
//! (`engine::dump`): kafka-dump-log's text byte for byte ([`kafka`], and
//! [`kafka_aux`] for transaction indexes, producer snapshots and the
//! internal topics' records), JSON Lines ([`json`]) and tables
//! ([`table`]); the json and table objects of the files that are not
//! segments or offset and time indexes ([`files`]). They read bytes, a
//! segment ([`crate::format::batch::SegmentSource`]) and a checkpoint's
//! text handed to them ([`crate::model::dump::Opened`]); none opens a file.

pub mod files;
pub mod json;
pub mod kafka;
pub mod kafka_aux;
pub mod table;

use std::borrow::Cow;
use std::io::{self, Write};

use crate::format::seek::Pick;
use crate::format::ParseError;
use crate::model::dump::{DecoderKind, Kind, Opened, TextKind};
use crate::render::release::Release;

use kafka::{DumpError, Dumper, FileNames, Formatted, Problems, RecordFormatter, RecordRef};
use kafka_aux::AuxDecoder;

/// What the json or table dump of one file found besides its text.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Its problems for stderr, in the order said: those of its batches,
    /// records and indexes, then the first
    /// [`files::PROBLEMS_SHOWN`] of its other objects.
    pub problems: Vec<ParseError>,
    /// How many more problems there are than `problems` lists.
    pub more: u64,
    /// A read that failed (the machine, or the file changed), which ended
    /// the file's objects.
    pub read_error: Option<io::Error>,
    /// Whether the file is damaged: a problem was found.
    pub corrupt: bool,
}

/// The `kind` of a checkpoint, properties or state file's `file` object
/// in JSON.
pub fn text_kind_name(kind: TextKind) -> &'static str {
    match kind {
        TextKind::OffsetCheckpoint(_) => "offset_checkpoint",
        TextKind::LeaderEpochCheckpoint => "leader_epoch_checkpoint",
        TextKind::MetaProperties => "meta_properties",
        TextKind::PartitionMetadata => "partition_metadata",
        TextKind::QuorumState => "quorum_state",
        TextKind::CleanShutdown => "clean_shutdown",
    }
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
        Kind::Text(t) => text_kind_name(t),
        Kind::Unknown | Kind::NoSuffix => "unknown",
    }
}

impl From<DecoderKind> for AuxDecoder {
    fn from(kind: DecoderKind) -> AuxDecoder {
        match kind {
            DecoderKind::Offsets => AuxDecoder::Offsets,
            DecoderKind::TransactionLog => AuxDecoder::TransactionLog,
            DecoderKind::ClusterMetadata => AuxDecoder::ClusterMetadata,
            DecoderKind::ShareGroupState => AuxDecoder::ShareGroupState,
            DecoderKind::RemoteLogMetadata => AuxDecoder::RemoteLogMetadata,
        }
    }
}

/// A decoder of [`kafka_aux`] as a [`RecordFormatter`].
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

/// The kafka format's formatter of an internal topic's records (a decoder
/// option), as `release`'s tool prints them.
pub fn decoder_formatter(kind: DecoderKind, release: Release) -> Box<dyn RecordFormatter> {
    Box::new(AuxFormatter(AuxDecoder::from(kind), release))
}

/// kafka-dump-log text for file kinds parsed outside [`kafka`]: it
/// writes the text for the file's bytes and reports problems that do not
/// stop it.
pub type AuxDumper =
    fn(&FileNames, &[u8], Release, &mut dyn Write, &mut dyn Problems) -> Result<(), DumpError>;

/// One line per suffix, `(suffix, function)`.
const AUX_DUMPERS: &[(&str, AuxDumper)] = &[
    (".txnindex", |n, d, _, w, p| {
        file_dump(n, kafka_aux::dump_txn_index(&n.display, d), w, p)
    }),
    (".snapshot", |n, d, r, w, p| {
        file_dump(n, kafka_aux::dump_producer_snapshot(&n.display, d, r), w, p)
    }),
];

/// The kafka text of a file called `name` whose kind is
/// [`Kind::Aux`], by its suffix; `None`: this build has none.
pub fn aux_dumper(name: &str) -> Option<AuxDumper> {
    let suffix = name.rfind('.').map_or("", |i| &name[i..]);
    AUX_DUMPERS
        .iter()
        .find(|(s, _)| *s == suffix)
        .map(|(_, f)| *f)
}

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

/// The kafka text of one file after its `Dumping` line (of a `.log` with a
/// `pick`, the part picked) to `w`; problems that do not stop it into
/// `problems`.
pub fn write_kafka<W: Write>(
    dumper: &mut Dumper<'_>,
    w: &mut W,
    names: &FileNames,
    input: &Opened<'_>,
    pick: Option<Pick>,
    problems: &mut Vec<ParseError>,
) -> Result<(), DumpError> {
    match input.kind {
        Kind::Log => match pick {
            Some(pick) => dumper.dump_log_picked(w, names, input.log(), pick, problems),
            None => dumper.dump_log(w, names, input.log(), problems),
        },
        Kind::Index => dumper.dump_index(w, names, input.index(), input.log()),
        Kind::TimeIndex => {
            dumper.dump_time_index(w, names, input.index(), input.sibling_index, input.log())
        }
        Kind::Aux => match aux_dumper(&names.name) {
            Some(f) => f(names, input.data, dumper.opts.release, w, problems),
            None => Ok(()),
        },
        Kind::Text(_) | Kind::Unknown | Kind::NoSuffix => Ok(()),
    }
}
