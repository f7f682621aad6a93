//! `klf transactions`: transactions as a whole. Per producer (with its
//! transactional id from `__transaction_state`) the transactions committed,
//! aborted, left open and ended empty, their records, bytes and
//! durations; per partition the last stable offset and what holds it
//! back; the transaction version 2 epoch bumps.

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{Output, Status};
use klf::engine::transactions::{only_producers, selected, transactions_capture};
use klf::engine::ReadMode;
use klf::render::transactions::{write_json, write_table};

/// Output formats of `klf transactions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables: producers, partitions.
    Table,
    /// One JSON document: `{"producers": [...], "partitions": [...], ...}`.
    Json,
    /// JSON Lines: one `{"type": "producer"}`, `"partition"`,
    /// `"transactional_id"` or `"odd_marker"` object per line, then a
    /// `"summary"`.
    Jsonl,
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  the logs were read whole
  1  a damaged segment or coordinator record (each problem on stderr as
     FILE:BYTE: reason; what comes after it in its segment is not read)
  2  usage or I/O error (a missing PATH, a --transactional-id the capture's
     __transaction_state does not hold, a file whose read failed)

What it tells:
  Each selected partition is read once, from one replica: the one klf diff
  takes as the reference (--leader, else the leader at capture in the
  metadata log, else the highest latest epoch, then the longest log); the
  partitions table names it. Only batch headers are read (a marker's type
  from its one record), folded as they come: nothing is kept per batch.
  Per producer id, with its transactional id from __transaction_state:
  - committed and aborted transactions: the data of a producer since its
    previous marker, closed by its COMMIT or ABORT marker; records and
    bytes per outcome; the duration of each (its first data batch's
    timestamp to its marker's), min/median/max in milliseconds, per
    partition; the partitions it wrote to;
  - open transactions: its data after its last marker, no marker yet; the
    first offset holds the partition's last stable offset back. With
    __transaction_state an open one is in progress (the coordinator's
    latest record has this producer's transaction going on over the
    partition: it will be completed, or aborted when it times out) or
    hanging (the coordinator has finished with it: no marker will come;
    the kafka-transactions.sh abort that ends it is printed, never run);
  - empty transactions: ended with nothing written, which only the
    coordinator's log shows (a PrepareCommit or PrepareAbort record with
    no partition); unknown without __transaction_state, and possibly
    short when that log was compacted;
  - the epochs its markers carry: with transaction version 2 (KIP-890,
    Kafka 4.0 on) the producer epoch is bumped at each commit or abort, so
    a marker carries its data's epoch + 1 (\"epoch+1 (TV2)\"); a marker
    whose epoch is neither its data's nor one more is listed;
  - the coordinator's own count: transactions it prepared to commit and to
    abort, empty ones, fences, its latest state.
  A transaction over several partitions counts once when the logs can tell
  (all its data in one partition, or one epoch per transaction as in
  transaction version 2); else it is counted per partition and said so.
  Per partition: the last stable offset as Kafka computes it (the first
  offset of the earliest open transaction when below the high watermark,
  else the high watermark), the commits, aborts and open transactions.
  Idempotent producers are listed with their records.

JSON output:
  {\"producers\":[{\"transactional_id\",\"producer_id\",\"first_epoch\",
  \"last_epoch\",\"transactional\",\"committed\":{\"transactions\",
  \"partition_transactions\",\"batches\",\"records\",\"bytes\"},\"aborted\":{...},
  \"open\":{...},\"idempotent\":{\"batches\",\"records\",\"bytes\"},\"empty\",
  \"empty_unknown\",\"markers_without_data\",\"count_rule\",\"epoch_bumped\",
  \"same_epoch\",\"odd_epoch\",\"duration_ms\":{\"count\",\"min\",\"median\",\"max\",
  \"median_exact\"},\"records_per_transaction\":{...},\"partitions\":[{\"topic\",
  \"partition\"}],\"coordinator\":{\"producer_id\",\"committed\",\"aborted\",\"empty\",
  \"fenced\",\"first_epoch\",\"last_epoch\"}}],\"partitions\":[{\"topic\",
  \"partition\",\"broker\",\"reference\",\"log_start_offset\",\"log_end_offset\",
  \"high_watermark\",\"last_stable_offset\",\"lso_bound\",\"committed\",\"aborted\",
  \"markers_without_data\",\"transactional_records\",\"idempotent_records\",
  \"plain_records\",\"open\":[{\"producer_id\",\"producer_epoch\",
  \"transactional_id\",\"first_offset\",\"last_offset\",\"first_timestamp\",
  \"batches\",\"records\",\"bytes\",\"coordinator_state\",\"hanging\",
  \"remedy\"}]}],\"coordinator\":[{\"transactional_id\",
  \"broker\",\"state_partition\",\"state\",\"producer_id\",\"producer_epoch\",
  \"partitions\",\"last_update_timestamp\",\"transaction_version\",
  \"producers\":[...]}],\"coordinator_unknown\",\"odd_markers\":[{\"topic\",
  \"partition\",\"offset\",\"producer_id\",\"marker\",\"marker_epoch\",
  \"data_epoch\"}],\"odd_markers_total\"}
  docs/json.md describes every field.

",
    super::common::inputs_help!(),
    "\
Examples:
  klf transactions capture/
  klf transactions capture/ --topic orders --format json
  klf transactions capture.tar.gz --transactional-id klf-impact-hanging
"
);

/// Transactions as a whole: per producer and transactional id committed, aborted, open and empty transactions, their sizes and durations; per partition the last stable offset
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Broker log directories, partition directories, or a folder of broker directories
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    select: super::common::Selection,
    /// Only this producer id (repeat for more)
    #[arg(long, value_name = "ID", value_parser = parse_producer_id)]
    producer_id: Vec<i64>,
    /// Only the producers of this transactional id (from the capture's
    /// __transaction_state)
    #[arg(long, value_name = "TID")]
    transactional_id: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// `--producer-id`: a producer id, 0 or more (`-1` is no producer).
pub fn parse_producer_id(s: &str) -> Result<i64, String> {
    match s.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(format!("{s:?} is not a producer id (a number, 0 or more)")),
    }
}

/// Runs `klf transactions`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    let req = args.select.request(ReadMode::Window);
    if let Err(s) = args.select.check(out, &capture) {
        return s;
    }
    let total = selected(&capture, &req).len();
    if total == 0 {
        out.diag("klf: no partition found under the given paths");
        return Status::Failure;
    }
    let mut run = out.counted(total, "partitions read", |tick| {
        transactions_capture(&capture, &req, tick)
    });
    if let Some(tid) = &args.transactional_id {
        if !run
            .report
            .coordinator
            .iter()
            .any(|c| &c.transactional_id == tid)
        {
            let why = match &run.report.coordinator_unknown {
                Some(w) if run.report.coordinator.is_empty() => w.clone(),
                _ => {
                    const SHOWN: usize = 20;
                    let ids: Vec<&str> = run
                        .report
                        .coordinator
                        .iter()
                        .take(SHOWN)
                        .map(|c| c.transactional_id.as_str())
                        .collect();
                    let more = run.report.coordinator.len().saturating_sub(SHOWN);
                    format!(
                        "its __transaction_state holds {}{}",
                        if ids.is_empty() {
                            "no transactional id".to_string()
                        } else {
                            format!("the transactional ids {}", ids.join(", "))
                        },
                        if more > 0 {
                            format!(" and {more} more")
                        } else {
                            String::new()
                        }
                    )
                }
            };
            out.diag(format_args!(
                "klf: --transactional-id {}: not in the capture: {why}",
                klf::render::text::sanitize(tid)
            ));
            return Status::Failure;
        }
    }
    let pids = (!args.producer_id.is_empty()).then_some(args.producer_id.as_slice());
    only_producers(&mut run.report, pids, args.transactional_id.as_deref());
    let metadata = super::common::metadata_log_problems(
        out,
        super::common::controller_problems(run.evidence.controller.as_ref()),
    );
    let mut status = metadata;
    for pr in &run.problems {
        out.diag(format_args!("klf: {pr}"));
        status = status.worst(if pr.io {
            Status::Failure
        } else {
            Status::Corruption
        });
    }
    let res = match args.format {
        Format::Json => write_json(&run.report, false, out.out()),
        Format::Jsonl => write_json(&run.report, true, out.out()),
        Format::Table => {
            let look = out.look();
            let mut w = out.fitted();
            write_table(&run.report, look, &mut w).and_then(|()| w.flush())
        }
    };
    match res {
        Ok(()) => status,
        Err(e) => status.worst(out.write_failed(e)),
    }
}
