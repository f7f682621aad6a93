//! `klf salvage`: the records a partition loses, read back from the
//! replicas that hold them, into files a person can replay.

use std::io::Write;
use std::path::PathBuf;

use super::common::{Output, Status};
use klf::engine::output::{check_output_dir, StreamFile};
use klf::engine::salvage::{salvage_partition, SalvageSink};
use klf::engine::{diff_capture, ReadMode};
use klf::model::SalvagedRecord;
use klf::render::salvage::{
    replay_line, write_manifest, write_record, Damage, Files, InputRead, Manifest, NotSalvaged,
    PartitionManifest, Range, ReplaySkipped,
};

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  every lost record was salvaged (or nothing is lost)
  1  a lost batch could not be salvaged (the manifest's \"unsalvaged\" says
     which, with file, byte and reason), or damaged input
  2  usage or I/O error (a missing PATH, an output folder inside the
     evidence or not empty without --force, a write that failed)

What it writes (in DIR, one set per partition that loses records):
  TOPIC-PARTITION.jsonl        every lost record, deduplicated across the
                               replicas holding it, in offset order: offset,
                               leader_epoch, timestamp, timestamp_type, key,
                               value, headers, producer id/epoch, sequence,
                               transactional, control, transaction, held_by,
                               committed, batch_base_offset
  TOPIC-PARTITION.replay.txt   KEY<TAB>VALUE lines of the records plain text
                               can carry; markers, aborted data and records
                               of transactions with no marker are never in it
  TOPIC-PARTITION/BASE.log     with --log: the original batches, bytes
                               untouched (kafka-dump-log and klf dump read it)
  manifest.json                counts, offset ranges, what was left out of
                               the replay file and why, what could not be
                               salvaged, and the size and CRC-32C of every
                               segment file read

On stderr:
  per partition, the records salvaged, how many are in the replay file,
  and why the others are not, each reason under its name in the
  manifest's replay_skipped: control, aborted, open_transaction, null,
  not_text, headers

Replay:
  kcat -P -b BROKER -t TOPIC -p PARTITION -K '\\t' -l TOPIC-PARTITION.replay.txt
  or Kafka's console producer with the properties parse.key=true and
  key.separator=TAB (it partitions by key; kcat -p keeps the partition).
  Binary data, headers and null keys or values: replay the JSON Lines with
  any client (docs/commands.md in the klf sources: \"Replaying salvaged
  records\").

",
    super::common::inputs_help!(),
    "\
Examples:
  klf salvage capture/ --out salvaged/
  klf salvage broker-1 broker-2 broker-3 --topic orders --out orders-salvaged/ --log
"
);

/// Write the records a partition loses (read back from the replicas that hold them) into files to replay
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The folder to write (created; never inside a PATH)
    #[arg(long, required = true, value_name = "DIR")]
    out: PathBuf,
    /// Write into DIR although it exists and is not empty (the files klf
    /// writes there are replaced)
    #[arg(long)]
    force: bool,
    /// Also write the original batches, bytes untouched, as a .log
    #[arg(long)]
    log: bool,
    #[command(flatten)]
    select: super::common::Selection,
}

struct Sink {
    records: StreamFile,
    replay: StreamFile,
    log: Option<StreamFile>,
    replayed: u64,
    skipped: ReplaySkipped,
}

impl SalvageSink for Sink {
    fn batch(&mut self, raw: &[u8]) -> std::io::Result<()> {
        match &mut self.log {
            Some(l) => l.write_all(raw),
            None => Ok(()),
        }
    }
    fn record(&mut self, r: &SalvagedRecord) -> std::io::Result<()> {
        write_record(r, &mut self.records)?;
        match replay_line(r) {
            Ok(line) => {
                self.replayed += 1;
                self.replay.write_all(line.as_bytes())
            }
            Err(why) => {
                self.skipped.add(why);
                Ok(())
            }
        }
    }
}

fn crc_of(path: &std::path::Path) -> InputRead {
    let (bytes, crc) = klf::engine::salvage::input_checksum(path);
    InputRead {
        file: path.display().to_string(),
        bytes,
        crc32c: crc.map(|c| format!("{c:08x}")),
    }
}

/// What a partition's salvage wrote, for stderr: the records salvaged,
/// how many of them the replay file holds, and why the others are not in
/// it, each reason under its name in the manifest (`replay_skipped`).
fn salvaged_words(
    records: u64,
    control: u64,
    lost: u64,
    replayed: u64,
    skipped: &ReplaySkipped,
) -> String {
    let mut s = format!("salvaged {records} of {lost} lost records");
    if control > 0 {
        s.push_str(&format!(
            " and {control} control record{}",
            if control == 1 { "" } else { "s" }
        ));
    }
    if replayed == records && skipped.words().is_empty() {
        s.push_str(&format!("; all {replayed} in the replay file"));
    } else {
        s.push_str(&format!(
            "; {replayed} in the replay file, left out of it (replay_skipped in manifest.json): {}",
            skipped.words()
        ));
    }
    s
}

/// Runs `klf salvage`.
pub fn run(args: Args, out: &mut Output) -> Status {
    // Whether klf makes the folder: a failed write then takes it back.
    let made = std::fs::symlink_metadata(&args.out).is_err();
    // The output rule before any work: never into the evidence.
    let first = match check_output_dir(&args.out, &args.paths, args.force) {
        Ok(d) => d,
        Err(e) => {
            out.diag(format_args!("klf: {e}"));
            return Status::Failure;
        }
    };
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    if klf::engine::input::digests_mounted() {
        // the folder the rule made is taken back (it is empty)
        first.discard(made);
        let mut req = args.select.request(ReadMode::Window);
        req.drop_logs = true;
        return super::common::records_on_nodes(out, &capture, &req, "salvage");
    }
    let found = super::check::found_inputs(&capture, &args.paths);
    let dir = match check_output_dir(&args.out, &found, true) {
        Ok(d) => d,
        Err(e) => {
            out.diag(format_args!("klf: {e}"));
            return Status::Failure;
        }
    };
    let req = args.select.request(ReadMode::Window);
    if let Err(s) = args.select.check(out, &capture) {
        dir.discard(made);
        return s;
    }
    let candidates = args.select.candidates(&capture);
    let run = out.counted(candidates, "partitions diffed", |tick| {
        diff_capture(&capture, &req, tick)
    });
    let not_compared = super::common::report_not_compared(out, &run.not_compared);
    if run.partitions.is_empty() {
        dir.discard(made);
        if not_compared {
            return Status::Failure;
        }
        return super::common::no_replicated_partition(out, &run.single_replica);
    }
    let mut status = if not_compared {
        Status::Failure
    } else {
        Status::Clean
    };
    status = status.worst(super::common::metadata_log_problems(
        out,
        super::common::controller_problems(run.evidence.controller.as_ref()),
    ));
    for p in run.partitions.iter() {
        for pr in &p.problems {
            status = status.worst(if pr.io {
                Status::Failure
            } else {
                Status::Corruption
            });
            out.diag(format_args!("klf: {pr}"));
        }
    }
    let mut manifest = Manifest {
        klf_version: env!("CARGO_PKG_VERSION"),
        inputs: args.paths.iter().map(|p| p.display().to_string()).collect(),
        partitions: Vec::new(),
    };
    for p in run.partitions.iter().filter(|p| p.loss.any()) {
        let name = format!("{}-{}", p.diff.topic, p.diff.partition);
        // a name from the capture: one path component, nothing else
        if name.contains('/') || name.starts_with('.') {
            out.diag(format_args!(
                "klf: {name}: not a name klf writes a file under; skipped"
            ));
            status = status.worst(Status::Corruption);
            continue;
        }
        let base = p
            .loss
            .batches
            .first()
            .map_or(0, |b| b.batch.base_offset)
            .max(0);
        let files = Files {
            records: format!("{name}.jsonl"),
            replay: format!("{name}.replay.txt"),
            log: args.log.then(|| format!("{name}/{base:020}.log")),
        };
        let opened = (|| -> std::io::Result<Sink> {
            Ok(Sink {
                records: dir.create(&files.records)?,
                replay: dir.create(&files.replay)?,
                log: match &files.log {
                    Some(l) => Some(dir.create(l)?),
                    None => None,
                },
                replayed: 0,
                skipped: ReplaySkipped::default(),
            })
        })();
        let mut sink = match opened {
            Ok(s) => s,
            Err(e) => {
                out.diag(format_args!(
                    "klf: {}: cannot write: {e}; nothing is left in it from this run",
                    args.out.display()
                ));
                dir.discard(made);
                return Status::Failure;
            }
        };
        let summary = match salvage_partition(&run, p, &mut sink) {
            Ok(s) => s,
            Err(e) => {
                out.diag(format_args!(
                    "klf: {}: cannot write: {e}; nothing is left in it from this run",
                    args.out.display()
                ));
                // the unfinished files' temporary files go first
                drop(sink);
                dir.discard(made);
                return Status::Failure;
            }
        };
        for pr in &summary.problems {
            status = status.worst(if pr.io {
                Status::Failure
            } else {
                Status::Corruption
            });
            out.diag(format_args!("klf: {pr}"));
        }
        if !summary.unsalvaged.is_empty() {
            status = status.worst(Status::Corruption);
        }
        let (replayed, skipped) = (sink.replayed, sink.skipped);
        let finished = (|| -> std::io::Result<()> {
            sink.records.finish()?;
            sink.replay.finish()?;
            if let Some(l) = sink.log {
                l.finish()?;
            }
            Ok(())
        })();
        if let Err(e) = finished {
            out.diag(format_args!(
                "klf: {}: cannot write: {e}; nothing is left in it from this run",
                args.out.display()
            ));
            dir.discard(made);
            return Status::Failure;
        }
        out.note(format_args!(
            "klf: {name}: {}",
            salvaged_words(
                summary.records,
                summary.control_records,
                p.loss.records,
                replayed,
                &skipped
            )
        ));
        manifest.partitions.push(PartitionManifest {
            topic: p.diff.topic.clone(),
            partition: p.diff.partition,
            leader: p.diff.reference.broker,
            records_lost: p.loss.records,
            committed_proven: p.loss.committed_proven,
            committed_possible: p.loss.committed_possible,
            offsets: p
                .loss
                .offsets
                .iter()
                .map(|r| Range {
                    start: r.start,
                    end: r.end,
                })
                .collect(),
            records: summary.records,
            control_records: summary.control_records,
            batches: summary.batches,
            files,
            replay_records: replayed,
            replay_skipped: skipped,
            unsalvaged: summary
                .unsalvaged
                .iter()
                .map(|u| NotSalvaged {
                    start: u.start,
                    end: u.end,
                    file: u.file.clone(),
                    position: u.position,
                    reason: u.reason.clone(),
                })
                .collect(),
            damaged: p
                .problems
                .iter()
                .map(|pr| Damage {
                    file: pr.path.display().to_string(),
                    position: pr.position,
                    reason: pr.message.clone(),
                })
                .collect(),
            inputs_read: summary.files.iter().map(|f| crc_of(f)).collect(),
        });
    }
    let res = dir.create("manifest.json").and_then(|mut f| {
        write_manifest(&manifest, &mut f)?;
        f.finish()
    });
    if let Err(e) = res {
        out.diag(format_args!(
            "klf: {}: cannot write: {e}; nothing is left in it from this run",
            args.out.display()
        ));
        dir.discard(made);
        return Status::Failure;
    }
    if manifest.partitions.is_empty() {
        out.note(format_args!(
            "klf: no partition loses records: nothing to salvage"
        ));
    }
    status
}
