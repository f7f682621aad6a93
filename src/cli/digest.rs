//! `klf digest`: a node's log directories as a small file to ship, for the
//! analysis to run where the data cannot be copied.

use std::io::Write;
use std::path::PathBuf;

use super::common::{Output, Status};
use klf::engine::digest::make;
use klf::model::digest::Options;

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = "\
Exit status:
  0  the digest was written
  2  usage or I/O error (a missing PATH, an output inside an input, a
     write that failed); nothing is left at the output path

What it holds:
  One digest per node, covering all the log directories given (a node
  folder, or each of its log.dirs). Shipped whole: checkpoints, properties,
  markers, producer snapshots, quorum-state, KRaft snapshots and the
  segments of the internal topics (__cluster_metadata, __consumer_offsets,
  __transaction_state, __share_group_state). Summarised: every data
  segment, one summary per batch from its 61-byte header (offsets, leader
  epoch, CRC, record count, timestamps, producer id, epoch and sequence,
  control and transactional flags, a marker's type), and how the segment
  ends. No record of a data topic is in a digest. Listed (length and time
  only): indexes, and files over --max-file. Reduced: the node's Kafka logs
  (server.log, controller.log, state-change.log, kafkaServer.out, rotated
  or .gz) in its log directories' roots, their logs/ folders and its node
  folder, and those given with --logs [NODE=]PATH (NODE, if given, is the
  node's id; shipped in the logs/ folder of the node's first log
  directory): the lines of the records that state an event klf reads,
  every other line left empty, so that file:line evidence is the same.

What it reads:
  Batch headers, not records: about 61 bytes a batch where batches are a
  page (4 KiB) or larger; where they are smaller, every page holds a
  header, and a header is read with the 64 KiB after it, whose headers are
  taken from that one read (--max-rate counts it). Whole batches, to
  check their CRC, from the lower of each partition's high watermark and
  log end (and from its recovery point in a log directory a broker left
  without its clean-shutdown marker: what Kafka's recovery re-reads);
  --verify checks every batch. Every file is opened read-only and never
  mapped; reads are positioned reads of the bytes needed, at most
  --max-rate bytes a second, and the pages a read found missing from the
  page cache are dropped from it afterwards, with no read-ahead (the
  brokers' and consumers' hot data stays, what klf alone read does not;
  the kernel says which they are from Linux 6.5 on: before, none is
  dropped).

Using digests:
  diff, timeline, impact, elect and report take digests (NODE.klfd) beside
  or instead of directories and archives, and give the same answers. What
  needs the records themselves (diff --records, salvage, dump of a data
  segment) or every byte (check) is refused on a digest, naming the command
  to run on the node.

Examples:
  klf digest broker-1 -o broker-1.klfd
  klf digest capture/broker-2 --max-rate 50M -o - > broker-2.klfd
  kubectl exec kafka-0 -c kafka -- /tmp/klf digest /var/lib/kafka/data-0 -o - > kafka-0.klfd
  ssh broker-3 /tmp/klf digest /data/kafka-1 /data/kafka-2 -o - > broker-3.klfd
  (then, anywhere: klf diff broker-1.klfd broker-2.klfd kafka-0.klfd broker-3.klfd)
";

/// Write a digest of a node's log directories: what diff, timeline, impact, elect and report need, without the records
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The node's log directories, or its node folder
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Where to write the digest (`-`: stdout); conventionally NODE.klfd
    #[arg(long, short = 'o', value_name = "FILE")]
    output: PathBuf,
    /// Check every batch's CRC (reads every byte of every segment)
    #[arg(long)]
    verify: bool,
    /// Read with this many threads (partitions in parallel)
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    threads: u16,
    /// Read at most this many bytes a second (K, M, G suffixes; 0: no limit)
    #[arg(long, value_name = "BYTES", default_value = "0", value_parser = klf::render::text::parse_bytes)]
    max_rate: u64,
    /// Largest file shipped whole (other than an internal topic's segment);
    /// a larger one is listed only
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = klf::render::text::parse_bytes)]
    max_file: u64,
}

/// Runs `klf digest`.
pub fn run(args: Args, out: &mut Output) -> Status {
    // a path that does not exist is an error with a hint; an archive of a
    // node (`broker-1.tar.gz`) is read from memory like any capture
    let inputs = match out.resolve_inputs(&args.paths) {
        Ok(v) => v,
        Err(s) => return s,
    };
    let to_stdout = args.output.as_os_str() == "-";
    // a digest is binary: a terminal would show garbage, and a pseudo-
    // terminal on the way (`ssh -t`, `kubectl exec -t`) changes its bytes
    if to_stdout && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        out.diag(
            "klf: refusing to write a digest to a terminal: redirect it (`-o - > NODE.klfd`), give a file (`-o NODE.klfd`), and run it without a terminal (no `ssh -t`, `kubectl exec -t`: a pseudo-terminal changes the bytes)",
        );
        return Status::Failure;
    }
    let target = if to_stdout {
        None
    } else {
        // never written inside a path read, the logs given included
        let mut read = args.paths.clone();
        read.extend(out.logs.iter().map(|(_, p)| p.clone()));
        match out.output_target(&args.output, &read) {
            Ok(t) => Some(t),
            Err(s) => return s,
        }
    };
    klf::engine::digest::set_max_rate(args.max_rate);
    let opts = Options {
        verify: args.verify,
        max_file: args.max_file,
        logs: out.logs.clone(),
        ..Options::default()
    };
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(usize::from(args.threads))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            out.diag(format_args!(
                "klf: cannot start {} reader threads: {e}",
                args.threads
            ));
            return Status::Failure;
        }
    };
    let bar = out.progress(0, "{bar:40} {pos}/{len} files {elapsed}");
    let progress = |done: u64, total: u64| {
        if let Some(b) = &bar {
            // the number of files is known once the node is listed
            if b.length() == Some(0) {
                b.inc_length(total);
            }
            b.set_position(done);
        }
    };
    let result = pool.install(|| match &target {
        Some(t) => t.stream(|w| make(&inputs, &opts, w, &progress)),
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            let r = make(&inputs, &opts, &mut lock, &progress);
            r.and_then(|m| lock.flush().map(|()| m))
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    match result {
        Ok(made) => {
            for (p, m) in &made.notes {
                out.note(format_args!(
                    "klf: note: {p}: {}",
                    klf::render::text::sanitize(m)
                ));
            }
            let logs = if made.logs == 0 {
                String::new()
            } else {
                format!(
                    ", {} reduced ({} of {} lines kept)",
                    klf::render::text::counted(made.logs, "Kafka log"),
                    made.log_lines_kept,
                    made.log_lines
                )
            };
            out.note(format_args!(
                "klf: digest of {} ({}, {}), {} shipped whole{logs} and {} listed: {} ({} read; {} of pages it brought into the page cache dropped again)",
                klf::render::text::counted(made.segments, "segment"),
                klf::render::text::counted(made.batches, "batch"),
                klf::render::text::human_bytes(made.segment_bytes),
                klf::render::text::counted(made.files_shipped, "file"),
                made.files_listed,
                klf::render::text::human_bytes(made.digest_bytes),
                klf::render::text::human_bytes(made.bytes_read),
                klf::render::text::human_bytes(made.bytes_dropped_from_cache),
            ));
            Status::Clean
        }
        Err(e) if super::common::is_broken_pipe(&e) => Status::BrokenPipe,
        // a refusal of what was asked (`--logs`), before anything was written
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            out.diag(format_args!("klf: {e}"));
            Status::Failure
        }
        Err(e) => {
            out.diag(format_args!(
                "klf: cannot write the digest{}: {e}",
                if to_stdout {
                    String::new()
                } else {
                    format!(" {}", args.output.display())
                }
            ));
            Status::Failure
        }
    }
}
