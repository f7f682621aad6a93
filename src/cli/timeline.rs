//! `klf timeline`: per replica, which leader epochs wrote which offsets,
//! from the batch headers beside the `leader-epoch-checkpoint`.

use std::io::Write;
use std::path::PathBuf;

use super::common::{Output, Status};
use klf::engine::timeline::{incident, selection, timelines, IncidentRequest};
use klf::render::timeline::{write_incident_json, write_incident_table, write_json, write_table};

/// Output formats of `klf timeline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Tables.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
    /// JSON Lines: a `{"type": "controller"}` object per partition with a
    /// metadata log, then a `{"type": "replica"}` object per replica.
    Jsonl,
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  no disagreement
  1  a disagreement between batches and leader-epoch-checkpoint, or a
     damaged segment
  2  usage or I/O error (including a file whose read failed)

JSON output:
  With --format json, one document:
  {\"partitions\":[{\"topic\",\"partition\",\"replicas\":[{\"broker\",\"from_batches\":
  [{\"epoch\",\"start_offset\",\"end\",\"batches\",\"records\",
  \"first_timestamp\",\"last_timestamp\"}],\"checkpoint\":[[epoch,start_offset]],
  \"log_start_offset\",\"log_end_offset\",\"high_watermark\",\"recovery_point\",
  \"disagreements\":[{\"code\",\"epoch\",\"message\"}]}],\"controller\":{\"replicas\",
  \"changes\":[...]},\"controller_missing\",\"quorum\"}]}
  Without a metadata log (a ZooKeeper-mode cluster) \"controller\" is null
  and \"controller_missing\" says why. \"quorum\" is null but for the
  metadata log.

Offset ranges are half-open, as in klf diff and klf dump: an epoch wrote
[start_offset, end), end being one past its last offset; a replica's last
epoch ends at its log end offset. The table prints them as [start, end).

The metadata log (__cluster_metadata-0) has its own timeline, the KRaft
quorum's epochs: shown with --topic __cluster_metadata, or when the paths
hold nothing else. With it comes the quorum's history: each controller
elected (failovers named) and each voter set written, from the metadata
log's control records, and what each node's quorum-state says now.

With --incident: one time-ordered story per partition that loses data, as
klf diff decides (--all: every partition compared): the metadata log's
records of the partition and of its brokers, each replica's first batch
of each epoch the diff read, the checkpoints' modification times and the
nodes' own log lines, each with its file and line or byte. Kafka logs
local time without a zone: each node's offset from UTC is inferred from
its lines that state the metadata log's records (every one within 60 s of
one whole quarter hour), else given with --log-utc-offset NODE=+HH:MM,
else assumed UTC (marked *). The ISR changes the logs state are held
against the metadata log's records by partition epoch (agrees, differs,
not-logged, not-covered, replicas-down, no-record, after-metadata-log),
with Kafka's reason where logged. Exit status: 0 nothing lost, 1 a partition told loses
data or a segment is damaged, 2 usage or I/O error. JSON: {\"zones\",
\"partitions\":[{\"topic\",\"partition\",\"loses_data\",...,\"entries\":[{\"time\",
\"node\",\"topic\",\"partition\",\"kind\",\"text\",\"source\":{\"file\",\"line\",
\"byte\"},\"logged_at\",\"logged\",\"utc_offset\",\"zone\",\"reason\"}],
\"isr_changes\":{\"compared\",\"why_not\",\"changes\"}}]}; JSON Lines: zone,
partition, entry and isr-change lines (docs/json.md).

",
    super::common::inputs_help!(),
    "\
Examples:
  klf timeline capture/
  klf timeline capture.tar.zst --topic orders --partition 0 --format json
  klf timeline capture/ --incident
  klf timeline capture/ --incident --format jsonl --log-utc-offset 100=+01:00
"
);

/// Leader-epoch timeline of every replica, from batch headers and leader-epoch-checkpoint
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Only this topic
    #[arg(long)]
    topic: Option<String>,
    /// Only this partition number
    #[arg(long)]
    partition: Option<i32>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// One time-ordered story per partition that loses data: the metadata
    /// log's records, each replica's first batch of each epoch, checkpoint
    /// times and the nodes' own log lines, each with its source
    #[arg(long)]
    incident: bool,
    /// With --incident: every partition compared, not only those that
    /// lose data
    #[arg(long, requires = "incident")]
    all: bool,
    /// With --incident: the offset from UTC of a node's log times, when
    /// klf cannot infer it (repeat per node)
    #[arg(long, value_name = "NODE=+HH:MM", value_parser = parse_utc_offset, requires = "incident")]
    log_utc_offset: Vec<(i32, i32)>,
}

/// `NODE=+HH:MM`.
fn parse_utc_offset(s: &str) -> Result<(i32, i32), String> {
    let (node, off) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected NODE=+HH:MM (e.g. 1=+02:00)"))?;
    let node: i32 = node
        .trim()
        .parse()
        .map_err(|_| format!("{node:?}: a node id is a number"))?;
    let minutes = klf::model::timeline::parse_offset(off).ok_or_else(|| {
        format!("{off:?}: an offset from UTC is +HH:MM or -HH:MM (at most 18 hours), or Z")
    })?;
    Ok((node, minutes))
}

/// Runs `klf timeline`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    if args.incident {
        return run_incident(&args, &capture, out);
    }
    let total: usize = selection(&capture, args.topic.as_deref(), args.partition)
        .iter()
        .map(|(_, reps)| reps.len())
        .sum();
    if total == 0 {
        out.diag("klf: no partition found under the given paths");
        return Status::Failure;
    }
    let run = out.counted(total, "replicas read", |tick| {
        timelines(&capture, args.topic.as_deref(), args.partition, tick)
    });
    let mut status = super::common::metadata_log_problems(out, &run.metadata_problems);
    let parts = run.partitions;
    for (p, problems) in parts.iter().zip(&run.problems) {
        for pr in problems {
            out.diag(format_args!("klf: {pr}"));
            // A read that failed is the machine's, not the data's.
            status = status.worst(if pr.io {
                Status::Failure
            } else {
                Status::Corruption
            });
        }
        if p.replicas.iter().any(|t| !t.disagreements.is_empty()) {
            status = status.worst(Status::Corruption);
        }
    }
    let res = match args.format {
        Format::Json => write_json(&parts, false, out.out()),
        Format::Jsonl => write_json(&parts, true, out.out()),
        Format::Table => {
            let look = out.look();
            let mut w = out.fitted();
            write_table(&parts, look, &mut w).and_then(|()| w.flush())
        }
    };
    match res {
        Ok(()) => status,
        Err(e) => status.worst(out.write_failed(e)),
    }
}

/// Runs `klf timeline --incident`.
fn run_incident(args: &Args, capture: &klf::model::Capture, out: &mut Output) -> Status {
    let req = IncidentRequest {
        topic: args.topic.clone(),
        partition: args.partition,
        all: args.all,
        utc_offsets: args.log_utc_offset.clone(),
    };
    let candidates = capture
        .partitions
        .iter()
        .filter(|((t, p), r)| {
            r.len() >= 2
                && req.topic.as_ref().is_none_or(|x| x == t)
                && req.partition.is_none_or(|x| x == *p)
        })
        .count();
    let run = out.counted(candidates, "partitions diffed", |tick| {
        incident(capture, &req, tick)
    });
    let not_compared = super::common::report_not_compared(out, &run.diff.not_compared);
    if run.diff.partitions.is_empty() {
        if not_compared {
            return Status::Failure;
        }
        return super::common::no_replicated_partition(out, &run.diff.single_replica);
    }
    let mut status = super::common::metadata_log_problems(
        out,
        super::common::controller_problems(run.diff.evidence.controller.as_ref()),
    );
    if not_compared {
        status = status.worst(Status::Failure);
    }
    // the notes on the files read; klf places the lines in time itself
    // (each node's offset from UTC is said with the tables)
    if let Some(logs) = run.diff.evidence.logs() {
        for (warning, text) in klf::render::broker_log::file_notes(&logs.read) {
            if text.starts_with("Kafka's logs print their times") {
                continue;
            }
            if warning {
                out.diag(format_args!("klf: warning: {text}"));
            } else {
                out.note(format_args!("klf: note: {text}"));
            }
        }
        if logs.read.files.iter().any(|f| f.io_error) {
            status = status.worst(Status::Failure);
        }
    }
    for p in &run.diff.partitions {
        for pr in &p.problems {
            out.diag(format_args!("klf: {pr}"));
            status = status.worst(if pr.io {
                Status::Failure
            } else {
                Status::Corruption
            });
        }
    }
    if run.partitions.iter().any(|p| p.loses_data) {
        status = status.worst(Status::Corruption);
    }
    if run.partitions.is_empty() {
        out.diag(format_args!(
            "klf: {}: nothing lost; --all tells every partition's incident timeline",
            klf::render::text::count(
                run.diff.partitions.len() as u64,
                "partition compared",
                "partitions compared"
            )
        ));
        return status;
    }
    let res = match args.format {
        Format::Json => write_incident_json(&run.partitions, &run.zones, false, out.out()),
        Format::Jsonl => write_incident_json(&run.partitions, &run.zones, true, out.out()),
        Format::Table => {
            let look = out.look();
            let mut w = out.fitted();
            write_incident_table(&run.partitions, &run.zones, look, &mut w).and_then(|()| w.flush())
        }
    };
    match res {
        Ok(()) => status,
        Err(e) => status.worst(out.write_failed(e)),
    }
}
