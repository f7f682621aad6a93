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

use crate::format::batch::{Batch, Entries, SegmentSource};
use crate::format::index::IndexBytes;
use crate::format::seek::Pick;
use crate::format::walk::Walk;
use crate::format::ParseError;
use crate::model::dump::{DecoderKind, Kind, Opened, TextKind};
use crate::render::release::Release;

use kafka::{
    DumpError, Dumper, FileNames, Formatted, Options, Problems, RecordFormatter, RecordRef,
};
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

/// The part of a `.log` a json or table dump reads, walked: the batches
/// of the bytes `pick` selects, resyncing after damage with `--resync`.
pub struct Part<'s> {
    /// The walk over the part's entries. Batches that hold no record the
    /// pick selects are passed over, but for compressed v0/v1 wrappers
    /// (only their last offset is known).
    pub walk: Walk<Box<dyn Entries + 's>>,
    /// Whether the part runs to the end of the file (the whole file,
    /// `--max-bytes` not given): a torn tail the walk ends on is then the
    /// file's damage.
    pub to_the_end: bool,
}

impl<'s> Part<'s> {
    /// The part of `log` that `pick` selects.
    pub fn of(log: &'s dyn SegmentSource, opts: &Options, pick: &Pick) -> Self {
        let selects = pick.clone();
        let walk = Walk::new(log.entries(pick.start, pick.end))
            .resync(opts.resync)
            .keep(move |b| {
                (is_legacy_wrapper(b) && !selects.by_producer())
                    || (selects.holds(b)
                        && selects.batch(b.offset_field().min(b.last_offset()), b.last_offset()))
            });
        Part {
            walk,
            to_the_end: opts.max_bytes == i32::MAX && pick.end == log.len(),
        }
    }
}

/// What a json or table dump reads of a `.log`: `pick`, or without one
/// the whole file up to `--max-bytes`.
pub fn log_pick(log: &dyn SegmentSource, opts: &Options, pick: Option<Pick>) -> Pick {
    pick.unwrap_or_else(|| {
        let end = (opts.max_bytes.max(0) as u64).min(log.len());
        Pick::new(None, end, None, None)
    })
}

/// The slots of an offset or time index after its valid entries, when
/// there are any: Kafka's preallocated zeros, or entries that break the
/// index's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexRest {
    /// The first slot after the valid entries.
    pub first_slot: usize,
    /// How many slots follow.
    pub slots: usize,
    /// Bytes after the last whole slot.
    pub partial_bytes: usize,
    /// Whether every byte after the valid entries is zero (past the bytes
    /// held, the file is a hole: zeros).
    pub all_zero: bool,
}

/// The [`IndexRest`] of an index of `entry`-byte slots whose first `valid`
/// are its entries.
pub fn index_rest(data: IndexBytes<'_>, valid: usize, entry: usize) -> Option<IndexRest> {
    let slots = data.len / entry;
    if valid >= slots && data.len.is_multiple_of(entry) {
        return None;
    }
    let tail = data.data.get(valid * entry..).unwrap_or(&[]);
    Some(IndexRest {
        first_slot: valid,
        slots: slots.saturating_sub(valid),
        partial_bytes: data.len % entry,
        all_zero: tail.iter().all(|&b| b == 0),
    })
}

/// A compressed v0/v1 wrapper: only its last offset is in its header.
pub fn is_legacy_wrapper(b: &Batch<'_>) -> bool {
    matches!(b, Batch::Legacy(e) if e.record().attributes() & 0x07 != 0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::encode_batch;
    use crate::format::record::encode_record;
    use crate::format::seek::Span;
    use crate::format::walk::Step;

    /// Three batches of two records each: offsets 0-1, 2-3, 4-5.
    fn three() -> Vec<u8> {
        let mut seg = Vec::new();
        for base in [0i64, 2, 4] {
            let mut recs = Vec::new();
            for i in 0..2 {
                encode_record(&mut recs, i, i as i32, Some(b"k"), Some(b"v"), &[]);
            }
            seg.extend(encode_batch(
                base,
                0,
                0,
                1,
                1000,
                1001,
                (-1, -1, -1),
                2,
                &recs,
            ));
        }
        seg
    }

    fn batches(part: Part<'_>) -> Vec<i64> {
        let mut walk = part.walk;
        let mut out = Vec::new();
        while let Some(step) = walk.next() {
            if let Step::Batch(b) = step {
                out.push(b.offset_field());
            }
        }
        out
    }

    #[test]
    fn a_part_is_the_batches_holding_what_the_pick_selects() {
        let seg = three();
        let opts = Options::default();
        let whole = log_pick(&seg, &opts, None);
        let part = Part::of(&seg, &opts, &whole);
        assert!(part.to_the_end);
        assert_eq!(batches(part), [0, 2, 4]);
        // offsets 3 to 4: the batches holding 3 and 4
        let span = Span {
            start: 0,
            end: seg.len() as u64,
            first: 3,
            end_offset: 5,
        };
        let pick = Pick::new(Some(span), seg.len() as u64, None, None);
        assert_eq!(batches(Part::of(&seg, &opts, &pick)), [2, 4]);
        // --max-bytes: the part ends before the file does
        let opts = Options {
            max_bytes: 100,
            ..Options::default()
        };
        let pick = log_pick(&seg, &opts, None);
        assert_eq!(pick.end, 100);
        assert!(!Part::of(&seg, &opts, &pick).to_the_end);
    }

    #[test]
    fn the_rest_of_an_index() {
        let mut idx = vec![1u8; 16];
        // two entries, nothing after them
        assert_eq!(index_rest(IndexBytes::from(&idx[..]), 2, 8), None);
        // one preallocated slot of zeros and 3 bytes after it
        idx.extend([0; 11]);
        let rest = index_rest(IndexBytes::from(&idx[..]), 2, 8);
        assert_eq!(
            rest,
            Some(IndexRest {
                first_slot: 2,
                slots: 1,
                partial_bytes: 3,
                all_zero: true
            })
        );
        // a slot that breaks the order, past the bytes held a hole
        let held = IndexBytes {
            data: &idx[..16],
            len: 32,
        };
        let rest = index_rest(held, 1, 8).map(|r| (r.slots, r.all_zero));
        assert_eq!(rest, Some((3, false)));
        assert_eq!(index_rest(held, 2, 8).map(|r| r.all_zero), Some(true));
    }
}
