//! `klf diff`: where replicas of a partition part, what Kafka's truncation
//! cuts on each, what the partition loses (on no replica once every replica
//! follows the reference), and whether that had been committed.

use klf::model::ReplicaProblem;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;

use super::common::{Output, Status};
use klf::engine::diff::{DiffPlan, DiffRun, NotCompared};
use klf::engine::evidence::broker_ids;
use klf::engine::records::{stream_cut, stream_lost, ListEnd};
use klf::engine::{diff_capture, PartitionResult, ReadMode};
use klf::model::diff::DiffedPartition;
use klf::model::loss::PartitionLoss;
use klf::model::records::{LostRecord, RecordsRead};
use klf::model::Capture;
use klf::render::diff::RecordLists;
use klf::render::diff::{
    broker_log_lines, json_element, next_line, severity, why_lines, write_json,
    write_json_rendered, write_table, Overview, TableOptions,
};
use klf::render::explain::epoch_leaders;
use klf::render::text::shell_word;

/// Output formats of `klf diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A table per partition.
    Table,
    /// One JSON document: `{"partitions": [...]}`.
    Json,
    /// JSON Lines: one `{"type": "partition", ...}` object per line.
    Jsonl,
}

/// Which loss makes `klf diff` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Lost records that were or may have been committed (committed_possible
    /// > 0, or records whose commitment cannot be bounded).
    Committed,
    /// Any lost record.
    Any,
    /// Never for a loss (damaged segments still exit 1).
    Never,
}

impl FailOn {
    /// Whether `loss` fails the run.
    pub fn fails(self, loss: &PartitionLoss) -> bool {
        match self {
            FailOn::Committed => loss.possibly_committed_or_unknown() > 0,
            FailOn::Any => loss.any(),
            FailOn::Never => false,
        }
    }
}

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = concat!(
    "\
Exit status:
  0  nothing lost that --fail-on counts (default: no lost record was or may
     have been committed)
  1  a loss that --fail-on counts (default committed: committed_possible > 0,
     or lost records whose commitment cannot be bounded), a damaged
     segment, or something klf could not read and so left out of the
     answer: records past --max-decompressed-bytes (--records:
     lost_records_left_out), a file over its size cap, metadata-log
     records (each problem on stderr as FILE:BYTE: reason)
  2  usage or I/O error (a missing PATH, an unreadable archive, no partition
     with two or more replicas, a file whose read failed)
  A closed stdout (klf diff ... | head) does not change the status.

What is lost:
  A partition loses the records that no replica will hold once every
  replica has followed the reference (each follower's predicted truncation
  applied), counted once. Of those, committed_proven are below a high
  watermark some evidence shows (a replica's replication-offset-checkpoint,
  an offset a consumer group committed), committed_possible were held by
  every member of an ISR the metadata log records (an upper bound; null
  without a metadata log). Each fact used is listed in loss.evidence.

JSON output:
  With --format json, one document:
  {\"partitions\":[{\"topic\",\"partition\",\"reference\":{\"broker\",\"reason\",
  \"leader_epoch\"},\"loss\":{\"records\",\"control_records\",\"offsets\":[{\"start\",
  \"end\",\"records\",\"control_records\",\"leader_epoch\",\"held_by\",\"committed\"}],
  \"held_by\",\"committed_proven\",\"committed_possible\",\"committed_unknown\",
  \"verdict\",\"unknown\",\"leader_epochs\",\"producers\",\"first_timestamp\",
  \"last_timestamp\",\"replicas_not_captured\",\"evidence\":[{\"kind\",\"broker\",
  \"group\",\"offset\",\"leader_epoch\",\"isr\",\"metadata_offset\",\"time\",\"file\",
  \"records\",\"detail\"}]},\"replicas\":[{\"broker\",\"log_end_offset\",
  \"high_watermark\",\"latest_epoch\",\"divergence_offset\",\"truncation_offset\",
  \"hw_truncation_offset\",\"records_to_truncate\",\"lost_records_to_truncate\",
  \"committed_proven_to_truncate\",\"committed_possible_to_truncate\",
  \"checkpointed_records_to_truncate\",\"records_only_here\",\"truncation_rounds\",
  \"findings\"}],\"findings\":[...]}]}
  With --records, loss also has \"lost_records\" and \"lost_records_omitted\",
  and each replica \"lost_records\", \"lost_records_omitted\" and
  \"lost_summary\" (which counts every record, however many are listed).
  Each partition has \"scan\":{\"mode\":\"window\"|\"full\",\"window_start\",
  \"full_reason\",\"bytes_read\",\"log_bytes\"}: what was read (see --verify).
  docs/json.md in the klf sources describes every field.

",
    super::common::inputs_help!(),
    "\
Examples:
  klf diff capture/ --explain
  klf diff broker-1 broker-2 broker-3 --topic orders --format json
  klf diff capture.tar.gz --records --records-limit 50
  klf diff capture/ --verify
  klf diff capture/ --fail-on any
"
);

/// Compare the replicas of each partition: divergence, predicted truncation, records lost
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
    /// Tell each partition's story in plain words, with the evidence of the
    /// loss figures (table format)
    #[arg(long)]
    explain: bool,
    /// List the records the partition loses and those each replica's
    /// truncation cuts (offset, epoch, timestamp, producer id/epoch/sequence,
    /// key, value size, committed), with a summary by producer and time range
    #[arg(long)]
    records: bool,
    /// Read every batch of every replica and compare the shared prefix batch
    /// by batch (default: read only the window where replicas can differ,
    /// from the lowest high watermark, log end or epoch disagreement on)
    #[arg(long)]
    verify: bool,
    /// With --records: list at most this many records per list (the counts
    /// and summaries still cover every record)
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    records_limit: usize,
    /// Table: write every partition compared (default: the overview, then
    /// the partitions that lose data, worst first, and those with a replica
    /// left out or not captured; the rest are counted in the overview).
    /// JSON always holds every partition
    #[arg(long)]
    all: bool,
    /// Which loss exits 1: committed (lost records that were or may have
    /// been committed), any (any lost record), never
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = FailOn::Committed)]
    fail_on: FailOn,
}

/// Runs `klf diff`.
pub fn run(mut args: Args, out: &mut Output) -> Status {
    let capture = match out.open_capture(&args.paths) {
        Ok(c) => c,
        Err(s) => return s,
    };
    // A digest holds batch summaries, not records: the diff is made, and
    // the records are named where they can be read.
    if args.records && klf::engine::input::digests_mounted() {
        args.records = false;
        let status = run_with(&args, out, &capture);
        let mut req = args.select.request(ReadMode::Window);
        req.drop_logs = true;
        return status.worst(super::common::records_on_nodes(
            out,
            &capture,
            &req,
            "--records",
        ));
    }
    let status = run_with(&args, out, &capture);
    // klf ends after this: what the capture holds goes back to the
    // system with the process rather than freed piece by piece (the files
    // and segments of tens of thousands of partitions take a while)
    std::mem::forget(capture);
    status
}

fn run_with(args: &Args, out: &mut Output, capture: &Capture) -> Status {
    let mut req = args.select.request(if args.verify {
        ReadMode::Full
    } else {
        ReadMode::Window
    });
    // The batches read are needed after the diff only to list records.
    req.drop_logs = !args.records;
    if let Err(s) = args.select.check(out, capture) {
        return s;
    }
    let whole_run = args.records || (args.explain && args.format == Format::Table);
    if !whole_run {
        // nothing needs the whole run at once: partitions are diffed a
        // range at a time and written as they come
        return run_each(args, out, capture, &req);
    }
    let candidates = args.select.candidates(capture);
    let run = out.counted(candidates, "partitions diffed", |tick| {
        diff_capture(capture, &req, tick)
    });
    let not_compared = super::common::report_not_compared(out, &run.not_compared);
    if run.partitions.is_empty() {
        if not_compared {
            return Status::Failure;
        }
        return super::common::no_replicated_partition(out, &run.single_replica);
    }
    let metadata = super::common::metadata_log_problems(
        out,
        super::common::controller_problems(run.evidence.controller.as_ref()),
    );
    super::common::broker_log_notes(out, &run.evidence);
    let mut problems = metadata == Status::Corruption;
    // A read that failed (the machine, not the data): exit 2.
    let mut unreadable = not_compared || metadata == Status::Failure;
    for p in &run.partitions {
        for pr in &p.problems {
            problems = true;
            unreadable |= pr.io;
            out.diag(format_args!("klf: {pr}"));
        }
    }
    if let Some(g) = run.evidence.groups_read() {
        for pr in &g.problems {
            unreadable |= pr.io;
            out.diag(format_args!("klf: __consumer_offsets: {pr}"));
        }
    }
    // The records behind the figures, read from the segments as they are
    // written (--records).
    let mut lists = args.records.then(|| Lists {
        run: &run,
        limit: args.records_limit,
        done: BTreeSet::new(),
        problems: Vec::new(),
        left_out: false,
    });
    // With --explain, who the losses hurt (klf impact's tables).
    let impacts = if args.explain && args.format == Format::Table {
        let (impacts, probs) = klf::engine::impact::impacts_of(&run);
        for pr in &probs {
            unreadable |= pr.io;
            out.diag(format_args!("klf: {pr}"));
        }
        impacts
    } else {
        Vec::new()
    };
    let lossy = run.partitions.iter().any(|p| args.fail_on.fails(&p.loss));
    let records = lists.as_mut().map(|l| l as &mut dyn RecordLists);
    let views: Vec<DiffedPartition> = run.partitions.iter().map(PartitionResult::view).collect();
    let res = match args.format {
        Format::Json => write_json(&views, records, false, out.out()),
        Format::Jsonl => write_json(&views, records, true, out.out()),
        Format::Table => {
            let leaders: Vec<BTreeMap<i32, (i32, bool)>> = run
                .partitions
                .iter()
                .map(|p| epoch_leaders(run.evidence.history(&p.diff.topic, p.diff.partition)))
                .collect();
            let look = out.look();
            let mut w = out.fitted();
            let mut overview = Overview::default();
            let mut order: Vec<usize> = Vec::new();
            for (i, p) in views.iter().enumerate() {
                let shown = args.all || Overview::shown(*p);
                overview.add(*p, shown);
                if shown {
                    order.push(i);
                }
            }
            order.sort_by_key(|&i| severity(views[i]));
            let notes: Vec<Vec<String>> = run
                .partitions
                .iter()
                .map(|p| notes(args, &run.evidence, p))
                .collect();
            let opts = TableOptions {
                explain: args.explain,
                leaders: &leaders,
                notes: &notes,
                order: Some(&order),
            };
            overview
                .write(look, &mut w)
                .and_then(|()| write_table(&views, &opts, records, look, &mut w))
                .and_then(|()| {
                    if impacts.is_empty() {
                        return Ok(());
                    }
                    writeln!(w, "Who the losses hurt (klf impact):")?;
                    klf::render::impact::write_table(&impacts, look, &mut w)
                })
                .and_then(|()| w.flush())
        }
    };
    // A reader that closed the pipe early does not change the status: the
    // lists not written are still read, into nothing, for their problems.
    if let Some(l) = &mut lists {
        if res.is_err() {
            l.read_the_rest();
        }
        for pr in &l.problems {
            problems = true;
            unreadable |= pr.io;
            out.diag(format_args!("klf: {pr}"));
        }
        problems |= l.left_out;
    }
    let status = if unreadable {
        Status::Failure
    } else if lossy || problems {
        Status::Corruption
    } else {
        Status::Clean
    };
    if let Err(e) = res {
        return status.worst(out.write_failed(e));
    }
    status
}

/// The lines under a losing partition's headline in a plain table: why
/// (the election, the setting that allowed it) and what to run next, with
/// the capture's own paths.
fn notes(
    args: &Args,
    evidence: &klf::engine::evidence::Evidence,
    p: &PartitionResult,
) -> Vec<String> {
    let d = &p.diff;
    if !p.loss.any() {
        return broker_log_lines(d);
    }
    let mut lines = why_lines(
        d,
        evidence.history(&d.topic, d.partition),
        evidence.controller.as_ref().map(|c| c.configs.as_slice()),
    );
    lines.extend(broker_log_lines(d));
    let paths: Vec<String> = args
        .paths
        .iter()
        .map(|p| shell_word(&p.to_string_lossy()))
        .collect();
    lines.push(next_line(d, &paths.join(" ")));
    lines
}

/// Partitions diffed at a time when they are written as they come: enough
/// to keep both cores busy, few enough that memory stays a range's.
const RANGE: usize = 256;

/// `klf diff` without record lists or impact tables: the partitions are
/// diffed a range at a time, in parallel, and each is written and dropped;
/// what goes wrong is told on stderr after the output.
fn run_each(
    args: &Args,
    out: &mut Output,
    capture: &klf::model::Capture,
    req: &klf::engine::DiffRequest,
) -> Status {
    let plan = DiffPlan::new(capture, req);
    if plan.is_empty() {
        return super::common::no_replicated_partition(out, &plan.single_replica);
    }
    let metadata = super::common::metadata_log_problems(
        out,
        super::common::controller_problems(plan.evidence.controller.as_ref()),
    );
    super::common::broker_log_notes(out, &plan.evidence);
    // A table is written with the bar put aside; JSON written to the
    // terminal the bar is drawn on has none.
    let bar =
        if args.format != Format::Table && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            None
        } else {
            out.progress(plan.len() as u64, "{bar:40} {pos}/{len} partitions diffed")
        };
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let mut each = Each {
        plan: &plan,
        req,
        tick: &tick,
        fail_on: args.fail_on,
        next: 0,
        held: std::collections::VecDeque::new(),
        not_compared: Vec::new(),
        problems: Vec::new(),
        compared: 0,
        lossy: false,
    };
    let res = {
        let mut parts = (&mut each).peekable();
        // nothing is written when no partition could be compared
        if parts.peek().is_none() {
            Ok(())
        } else {
            match args.format {
                Format::Json => write_json_rendered(rendered(parts, false), false, out.out()),
                Format::Jsonl => write_json_rendered(rendered(parts, true), true, out.out()),
                Format::Table => {
                    // The overview comes first: the partitions are diffed
                    // through, those written in full kept (with --all, every
                    // one), then written worst first.
                    let mut overview = Overview::default();
                    let mut kept: Vec<PartitionResult> = Vec::new();
                    for p in parts {
                        let shown = args.all || Overview::shown(p.view());
                        overview.add(p.view(), shown);
                        if shown {
                            kept.push(p);
                        }
                    }
                    kept.sort_by_key(|p| severity(p.view()));
                    if let Some(b) = &bar {
                        b.finish_and_clear();
                    }
                    let notes: Vec<Vec<String>> = kept
                        .iter()
                        .map(|p| notes(args, &plan.evidence, p))
                        .collect();
                    let look = out.look();
                    let mut w = out.fitted();
                    let opts = TableOptions {
                        notes: &notes,
                        ..TableOptions::default()
                    };
                    overview
                        .write(look, &mut w)
                        .and_then(|()| {
                            let views: Vec<DiffedPartition> =
                                kept.iter().map(PartitionResult::view).collect();
                            write_table(&views, &opts, None, look, &mut w)
                        })
                        .and_then(|()| w.flush())
                }
            }
        }
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // A reader that closed the pipe early: the rest is still diffed, for
    // the status.
    if res.is_err() {
        for _ in &mut each {}
    }
    let mut problems = metadata == Status::Corruption;
    let mut unreadable = metadata == Status::Failure;
    for pr in &each.problems {
        problems = true;
        unreadable |= pr.io;
        out.diag(format_args!("klf: {pr}"));
    }
    unreadable |= super::common::report_not_compared(out, &each.not_compared);
    if let Some(g) = plan.evidence.groups_read() {
        for pr in &g.problems {
            unreadable |= pr.io;
            out.diag(format_args!("klf: __consumer_offsets: {pr}"));
        }
    }
    let status = if unreadable {
        Status::Failure
    } else if each.compared == 0 {
        return super::common::no_replicated_partition(out, &plan.single_replica);
    } else if each.lossy || problems {
        Status::Corruption
    } else {
        Status::Clean
    };
    match res {
        Err(e) => status.worst(out.write_failed(e)),
        Ok(()) => status,
    }
}

/// Partitions as JSON, rendered on every core a range at a time, in order.
fn rendered(
    mut parts: impl Iterator<Item = PartitionResult>,
    lines: bool,
) -> impl Iterator<Item = std::io::Result<Vec<u8>>> {
    use rayon::prelude::*;
    let mut held = std::collections::VecDeque::new();
    std::iter::from_fn(move || {
        if held.is_empty() {
            let range: Vec<PartitionResult> = parts.by_ref().take(RANGE).collect();
            held.extend(
                range
                    .par_iter()
                    .map(|p| json_element(p.view(), lines))
                    .collect::<Vec<_>>(),
            );
        }
        held.pop_front()
    })
}

/// The partitions of a plan, diffed a range at a time as they are taken;
/// what the status needs of them is kept as they pass.
struct Each<'a> {
    plan: &'a DiffPlan<'a>,
    req: &'a klf::engine::DiffRequest,
    tick: &'a (dyn Fn() + Sync),
    fail_on: FailOn,
    /// The next partition of the plan to diff.
    next: usize,
    held: std::collections::VecDeque<PartitionResult>,
    not_compared: Vec<NotCompared>,
    problems: Vec<ReplicaProblem>,
    /// Partitions compared so far.
    compared: usize,
    /// Whether a partition's loss fails the run (`--fail-on`).
    lossy: bool,
}

impl Iterator for Each<'_> {
    type Item = PartitionResult;

    fn next(&mut self) -> Option<Self::Item> {
        while self.held.is_empty() {
            if self.next >= self.plan.len() {
                return None;
            }
            let end = (self.next + RANGE).min(self.plan.len());
            let (parts, not_compared) = self.plan.diff(self.next..end, self.req, self.tick);
            self.next = end;
            for p in &parts {
                self.problems.extend(p.problems.iter().cloned());
                self.lossy |= self.fail_on.fails(&p.loss);
            }
            self.compared += parts.len();
            self.held.extend(parts);
            self.not_compared.extend(not_compared);
        }
        self.held.pop_front()
    }
}

/// The record lists of `klf diff --records`, read from the segments while
/// the output is written: what went wrong is kept for stderr and the exit
/// status.
struct Lists<'r> {
    run: &'r DiffRun<'r>,
    limit: usize,
    /// Lists read to their end: (partition, broker of a cut list).
    done: BTreeSet<(usize, Option<i32>)>,
    problems: Vec<ReplicaProblem>,
    /// Whether a list could not read back a record it counts.
    left_out: bool,
}

impl Lists<'_> {
    fn note(&mut self, which: (usize, Option<i32>), end: ListEnd) -> RecordsRead {
        self.done.insert(which);
        for p in end.problems {
            if !self.problems.contains(&p) {
                self.problems.push(p);
            }
        }
        self.left_out |= !end.read.left_out.is_empty();
        end.read
    }

    /// Reads every list not yet read to its end into nothing (after the
    /// output was cut short), for what goes wrong in it.
    fn read_the_rest(&mut self) {
        for i in 0..self.run.partitions.len() {
            let mut none = |_: &LostRecord| Ok(());
            if !self.done.contains(&(i, None)) {
                let _ = self.lost(i, &mut none);
            }
            let brokers: Vec<i32> = self.run.partitions[i]
                .diff
                .replicas
                .iter()
                .map(|r| r.broker)
                .collect();
            for b in brokers {
                if !self.done.contains(&(i, Some(b))) {
                    let _ = self.cut(i, b, &mut none);
                }
            }
        }
    }
}

impl RecordLists for Lists<'_> {
    fn lost(
        &mut self,
        part: usize,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> std::io::Result<RecordsRead> {
        let run = self.run;
        let p = &run.partitions[part];
        let end = stream_lost(run.replicas(p), &p.loss, self.limit, sink)?;
        Ok(self.note((part, None), end))
    }

    fn cut(
        &mut self,
        part: usize,
        broker: i32,
        sink: &mut dyn FnMut(&LostRecord) -> std::io::Result<()>,
    ) -> Option<std::io::Result<RecordsRead>> {
        let run = self.run;
        let p = &run.partitions[part];
        let r = p.diff.replicas.iter().find(|r| r.broker == broker)?;
        if r.truncation_offset >= r.log_end_offset {
            return None;
        }
        let replicas = run.replicas(p);
        let i = broker_ids(replicas).iter().position(|b| *b == broker)?;
        Some(
            stream_cut(&replicas[i], r, &p.loss, self.limit, sink)
                .map(|end| self.note((part, Some(broker)), end)),
        )
    }
}
