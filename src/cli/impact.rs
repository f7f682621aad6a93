//! `klf impact`: who a loss hurts. For each partition that loses records
//! (as `klf diff` counts them), the consumer groups, transactions and
//! idempotent producers it affects, and the settings that let it happen.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{Output, Status};
use klf::engine::impact::impact_capture;
use klf::engine::ReadMode;
use klf::model::impact::PartitionImpact;
use klf::render::impact::{write_json, write_report};
use klf::render::overview::Overview;

/// Output formats of `klf impact`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables per partition.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
    /// JSON Lines: one `{"type": "partition", ...}` object per line.
    Jsonl,
}

/// What makes `klf impact` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A consumer group, transaction or producer is affected, or the
    /// capture cannot tell ("affected": null).
    Affected,
    /// Any lost record, affected or not.
    Any,
    /// Never (damaged segments still exit 1).
    Never,
}

impl FailOn {
    fn fails(self, p: &PartitionImpact) -> bool {
        match self {
            // unknown fails too: nothing klf cannot see is "unaffected"
            FailOn::Affected => p.affected != Some(false),
            FailOn::Any => p.affected != Some(false) || p.records_lost > 0,
            FailOn::Never => false,
        }
    }
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  no consumer group, share group, transaction or producer is affected
     (--fail-on)
  1  one is, or whether one is cannot be told (\"affected\": null: no
     __consumer_offsets, an unreadable commit, an open transaction whose
     fate is unknown) (default --fail-on affected), or a damaged segment or
     coordinator record (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, no partition with two or more
     replicas, a file whose read failed)

What it tells:
  First the whole capture in two lines: partitions compared, how many lose
  records and whether they hurt a consumer group, transaction or producer,
  the records lost and how many were committed, the assigned replicas not
  captured. Then, worst first, each partition that loses records once
  every replica follows the reference leader (the loss of klf diff); those
  that lose nothing fold into one line (--all: one line each):
  - consumer groups, from each group's latest commit in __consumer_offsets:
    unaffected, diverged (the commit's leader epoch ends below it on the new
    leader: a restarted consumer detects the truncation and resumes at that
    end under earliest and latest, none fails with LogTruncationException),
    past-log-end (no epoch, past the new log end: OFFSET_OUT_OF_RANGE, reset
    by auto.offset.reset), silent-skip (no epoch, inside the new log past the
    divergence: fetched as is, skipping records), epoch-unknown, no-offset,
    unreadable (the latest commit record does not decode);
    with next_fetch_offset, records_skipped and records_reread under each
    policy, and phantom_records (consumed, kept by no replica); protocol
    classic, consumer, streams (KIP-1071) or share;
  - share groups (KIP-932), from __share_group_state as the share
    coordinator folds it: the lost records each had acknowledged, archived,
    acquired or released, its start offset and where Kafka starts it once it
    loads the state, and what it meets: past-log-end (a share fetch there is
    answered OFFSET_OUT_OF_RANGE and Kafka moves the start offset only
    forward: the group is given nothing until the log reaches it, and never
    the new leader's records below it), skips, in-flight-lost, unaffected;
  - transactions open on the new leader whose marker is cut or whose
    coordinator has finished with them (hanging: read_committed consumers
    stop at the last stable offset until it is aborted; the remedy is
    printed, never run), and transactions lost whole;
  - idempotent and transactional producers whose last sequences are cut:
    the error the new leader answers their next batch with;
  - the settings in the metadata log that let it happen, and those the
    capture cannot show (static broker settings), named as unknown.
  A part the capture cannot compute (no __consumer_offsets, no
  __transaction_state, no metadata log) says so and why.

JSON output:
  {\"partitions\":[{\"topic\",\"partition\",\"leader\",\"log_start_offset\",
  \"new_log_end\",\"first_lost_offset\",\"records_lost\",\"last_stable_offset\",
  \"groups\":[{\"group\",\"protocol\",\"committed_offset\",
  \"committed_leader_epoch\",\"commit_timestamp\",\"coordinator_broker\",
  \"state\",\"divergence_offset\",\"next_fetch_offset\":{\"earliest\",\"latest\",
  \"none\"},\"error\":{...},\"records_skipped\":{...},\"records_reread\":{...},
  \"phantom_records\",\"phantom_offsets\",\"phantom_first_timestamp\",
  \"phantom_last_timestamp\",\"detail\"}],\"groups_unknown\",
  \"share_groups\":[{\"group\",\"topic_id\",\"coordinator_broker\",
  \"state_partition\",\"state_log_offset\",\"state_epoch\",\"leader_epoch\",
  \"start_offset\",\"effective_start_offset\",\"next_delivered_offset\",
  \"delivery_complete_count\",\"lag\",\"state\",\"lost\":{\"acknowledged\",
  \"archived\",\"acquired\",\"available\",\"not_delivered\",\"other\"},
  \"lost_offsets\":{...},\"records_skipped\",\"skipped_offsets\",\"in_flight\",
  \"detail\"}],\"share_groups_unknown\",
  \"transactions\":[{\"producer_id\",\"producer_epoch\",\"transactional_id\",
  \"first_offset\",\"state\",\"lso\",\"marker_cut\",\"marker_cut_offset\",
  \"coordinator_state\",\"records\",\"abort_hides_committed\",\"remedy\",
  \"detail\"}],\"transactions_unknown\",\"producers\":[{\"producer_id\",
  \"producer_epoch\",\"transactional\",\"last_sequence_kept\",
  \"last_sequence_cut\",\"records_lost\",\"expected_error\",\"state\",
  \"detail\"}],\"producers_unknown\",\"config\":[{\"name\",\"value\",\"source\",
  \"metadata_offset\",\"effect\"}],\"affected\"}]}
  (the partitions that lose records, in topic and partition order)
  docs/json.md describes every field.

",
    super::common::inputs_help!(),
    "\
Examples:
  klf impact capture/
  klf impact capture/ --all
  klf impact broker-1 broker-2 broker-3 --topic orders --format json
  klf impact capture.tar.gz --fail-on never
"
);

/// Who a loss hurts: consumer groups, transactions, idempotent producers, and the settings behind it
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    select: super::common::Selection,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// What exits 1: affected (a group, transaction or producer is
    /// affected), any (any lost record), never
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = FailOn::Affected)]
    fail_on: FailOn,
    /// List every partition compared in the table, one line each for those
    /// that lose nothing (folded into one line by default; JSON lists the
    /// partitions that lose records)
    #[arg(long)]
    all: bool,
}

/// Runs `klf impact`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    let req = args.select.request(ReadMode::Window);
    if let Err(s) = args.select.check(out, &capture) {
        return s;
    }
    let candidates = args.select.candidates(&capture);
    let run = out.counted(candidates, "partitions diffed", |tick| {
        impact_capture(&capture, &req, tick)
    });
    let not_compared = super::common::report_not_compared(out, &run.diff.not_compared);
    if run.diff.partitions.is_empty() {
        if not_compared {
            return Status::Failure;
        }
        return super::common::no_replicated_partition(out, &run.diff.single_replica);
    }
    let metadata = super::common::metadata_log_problems(
        out,
        super::common::controller_problems(run.diff.evidence.controller.as_ref()),
    );
    let mut problems = metadata == Status::Corruption;
    let mut unreadable = not_compared || metadata == Status::Failure;
    for pr in run
        .diff
        .partitions
        .iter()
        .flat_map(|p| &p.problems)
        .chain(&run.problems)
    {
        problems = true;
        unreadable |= pr.io;
        out.diag(format_args!("klf: {pr}"));
    }
    let fails = run.partitions.iter().any(|p| args.fail_on.fails(p));
    let status = if unreadable {
        Status::Failure
    } else if fails || problems {
        Status::Corruption
    } else {
        Status::Clean
    };
    let res = match args.format {
        Format::Json => write_json(&run.partitions, false, out.out()),
        Format::Jsonl => write_json(&run.partitions, true, out.out()),
        Format::Table => {
            let mut overview = Overview::new();
            let mut nothing_lost = Vec::new();
            // worst first: the committed records it may lose, then every
            // lost record
            let mut severity = BTreeMap::new();
            for p in &run.diff.partitions {
                let (t, n) = (&p.diff.topic, p.diff.partition);
                let name = format!("{t}-{n}");
                let known = run.diff.evidence.history(t, n).is_some();
                overview.add(&name, &p.loss, known);
                if p.loss.any() {
                    severity.insert(
                        (t.as_str(), n),
                        (p.loss.possibly_committed_or_unknown(), p.loss.records),
                    );
                } else {
                    nothing_lost.push(name);
                }
            }
            let mut worst: Vec<&PartitionImpact> = run.partitions.iter().collect();
            worst.sort_by_key(|i| {
                std::cmp::Reverse(
                    severity
                        .get(&(i.topic.as_str(), i.partition))
                        .copied()
                        .unwrap_or_default(),
                )
            });
            let look = out.look();
            let mut w = out.fitted();
            write_report(&overview, &worst, &nothing_lost, args.all, look, &mut w)
                .and_then(|()| w.flush())
        }
    };
    if let Err(e) = res {
        return status.worst(out.write_failed(e));
    }
    status
}
