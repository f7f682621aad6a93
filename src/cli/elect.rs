//! `klf elect`: which replica to elect when every in-sync one is gone.

use std::io::Write;
use std::path::PathBuf;

use super::common::{Output, Status};
use klf::engine::elect::elect_capture;
use klf::engine::ReadMode;
use klf::render::elect::{write_json, write_table};

/// Output formats of `klf elect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table per partition.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
    /// JSON Lines: one `{"type": "partition", ...}` object per line.
    Jsonl,
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  the candidates were ranked
  1  damaged input (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, no partition with two or more
     replicas, a file whose read failed)

What it tells:
  First the whole capture in two lines: partitions compared, how many lose
  data whichever replica leads and how many unless a least-loss one does
  (and how many of those have no leader, or a leader the capture cannot
  tell), the records lost with the first-ranked candidate of each and how
  many were committed, the assigned replicas not captured. Then, worst
  first, each partition where a candidate loses data; the others fold into
  one line (--all lists them).
  For each partition, every captured replica as the candidate leader: what
  the others would truncate, what the partition would lose (counted once,
  proven and possibly committed, as klf diff --leader N counts it), the
  transactions it would leave hanging and the consumer groups it would
  affect (as klf impact), ranked least committed loss first, Kafka's own
  pick first among equal losses. The candidate Kafka's own rule would pick
  (an eligible leader replica when the ELR has one, else the first live
  replica in assignment order outside the ISR) is marked, and the commands
  to elect the first-ranked one are printed, never run: the unclean
  election, after a reassignment that puts it first when Kafka would pick
  another. Without a metadata log that knows the partition (a ZooKeeper-
  mode cluster) who leads now cannot be told: no command is printed, and
  it says what to check first (kafka-topics.sh --describe, or the
  partition's state in ZooKeeper).

JSON output:
  {\"partitions\":[{\"topic\",\"partition\",\"assignment\",\"isr\",\"elr\",
  \"kafka_rule\",\"candidates\":[{\"broker\",\"rank\",\"loss\":{\"records\",
  \"committed_proven\",\"committed_possible\",\"committed_unknown\"},\"cuts\":
  [{\"broker\",\"truncation_offset\",\"records_to_truncate\",
  \"records_only_here\"}],\"hanging_transactions\",\"groups_affected\",
  \"kafka_would_pick\",\"reason\"}],\"commands\",\"check_first\"}]}
  (every partition, whatever --all)

",
    super::common::inputs_help!(),
    "\
Examples:
  klf elect capture/ --topic orders --partition 0
  klf elect capture/ --all
  klf elect broker-2 broker-3 --format json
"
);

/// Which replica to elect when the ISR is gone: every candidate's loss, ranked, with Kafka's own pick
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
    /// The cluster's inter.broker.protocol.version (e.g. 2.6): how
    /// followers truncate, which a ZooKeeper-mode capture does not hold
    /// (default: from the capture)
    #[arg(long, value_name = "VERSION", value_parser = super::common::parse_inter_broker_protocol)]
    inter_broker_protocol: Option<klf::model::truncation::ReplicationProtocol>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// List every partition in the table, also those where no candidate
    /// loses anything (folded into one line by default; JSON always lists
    /// every partition)
    #[arg(long)]
    all: bool,
}

/// Runs `klf elect`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    let select = super::common::Selection {
        leader: None,
        topic: args.topic.clone(),
        partition: args.partition,
        inter_broker_protocol: args.inter_broker_protocol,
    };
    if let Err(s) = select.check(out, &capture) {
        return s;
    }
    let run = elect_capture(&capture, &select.request(ReadMode::Window));
    let (parts, evidence) = (&run.partitions, &run.evidence);
    if parts.is_empty() {
        return super::common::no_replicated_partition(out, &[]);
    }
    let mut status = super::common::metadata_log_problems(
        out,
        super::common::controller_problems(evidence.controller.as_ref()),
    );
    for pr in &run.problems {
        status = status.worst(if pr.io {
            Status::Failure
        } else {
            Status::Corruption
        });
        out.diag(format_args!("klf: {pr}"));
    }
    let res = match args.format {
        Format::Json => write_json(parts, false, out.out()),
        Format::Jsonl => write_json(parts, true, out.out()),
        Format::Table => {
            let look = out.look();
            let mut w = out.fitted();
            write_table(parts, args.all, look, &mut w).and_then(|()| w.flush())
        }
    };
    if let Err(e) = res {
        return status.worst(out.write_failed(e));
    }
    status
}
