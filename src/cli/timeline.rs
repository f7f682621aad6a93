//! `klf timeline`: per replica, which leader epochs wrote which offsets,
//! from the batch headers beside the `leader-epoch-checkpoint`.

use std::io::Write;
use std::path::PathBuf;

use super::common::{Output, Status};
use klf::engine::timeline::{selection, timelines};
use klf::render::timeline::{write_json, write_table};

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
  \"changes\":[...]},\"controller_missing\"}]}
  Without a metadata log (a ZooKeeper-mode cluster) \"controller\" is null
  and \"controller_missing\" says why.

Offset ranges are half-open, as in klf diff and klf dump: an epoch wrote
[start_offset, end), end being one past its last offset; a replica's last
epoch ends at its log end offset. The table prints them as [start, end).

The metadata log (__cluster_metadata-0) has its own timeline, the KRaft
quorum's epochs: shown with --topic __cluster_metadata, or when the paths
hold nothing else.

",
    super::common::inputs_help!(),
    "\
Examples:
  klf timeline capture/
  klf timeline capture.tar.zst --topic orders --partition 0 --format json
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
}

/// Runs `klf timeline`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
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
