//! The `klf` command line. `main` parses the arguments, runs one subcommand
//! and turns its outcome into the exit status: 0 clean, 1 corruption found,
//! 2 usage or I/O error. A closed stdout (`klf dump ... | head`) ends the run
//! quietly.
//!
//! Each subcommand lives in `src/cli/<module>.rs` and exposes
//! `pub struct Args` (clap `Args`) and
//! `pub fn run(args: Args, out: &mut cli::common::Output) -> cli::common::Status`.
//! Adding one is one line in the `subcommands!` list below. Its `Args` also
//! carries `#[command(after_long_help = AFTER_HELP)]`: `Heading:` lines
//! (at least `Exit status:` and `Examples:`) with indented text under them,
//! which `--help` prints and the man pages turn into sections; then
//! `KLF_UPDATE_MAN=1 cargo test --bin klf man` writes its page to `man/`
//! (`cargo test` fails while the pages are stale).

use std::process::ExitCode;

use clap::Parser;

/// Declares the `cli` module tree, the `Command` enum and its dispatch from
/// one `Variant => module` line per subcommand (the doc comment becomes the
/// subcommand's help).
macro_rules! subcommands {
    ($($(#[$meta:meta])* $variant:ident => $module:ident,)*) => {
        mod cli {
            pub mod common;
            $(pub mod $module;)*
        }

        #[derive(clap::Subcommand)]
        enum Command {
            $($(#[$meta])* $variant(cli::$module::Args),)*
        }

        impl Command {
            fn run(self, out: &mut cli::common::Output) -> cli::common::Status {
                match self {
                    $(Command::$variant(args) => cli::$module::run(args, out),)*
                }
            }
        }
    };
}

subcommands! {
    /// Print what is in segment, index, snapshot and checkpoint files, partition and broker directories (kafka-dump-log compatible)
    Dump => dump,
    /// Compare the replicas of each partition: divergence, predicted truncation, records lost
    Diff => diff,
    /// Who a loss hurts: consumer groups, transactions, idempotent producers, and the settings behind it
    Impact => impact,
    /// Write the records a partition loses (read back from the replicas that hold them) into files to replay
    Salvage => salvage,
    /// Which replica to elect when the ISR is gone: every candidate's loss, ranked, with Kafka's own pick
    Elect => elect,
    /// Leader-epoch timeline of every replica, from batch headers and leader-epoch-checkpoint
    Timeline => timeline,
    /// Check captured log directories: framing, checksums, indexes, epochs, checkpoints, replicas
    Check => check,
    /// Write a self-contained HTML post-mortem page: summary, replica timelines as SVG, the diff story
    ///
    /// One HTML file (inline CSS and SVG, no script, nothing loaded from elsewhere) with a summary
    /// table of every partition, then per partition an SVG timeline with one lane per replica
    /// (leader epochs from batch headers and the checkpoint where it disagrees, high watermark,
    /// log end, divergence, the truncation Kafka will perform, the records it cuts with the
    /// committed ones in red), the controller's elections from the metadata log, a zoomed panel
    /// around a small divergence, and the story `klf diff --explain` tells. Every mark carries
    /// data-* attributes (data-kind, data-replica, data-epoch, data-start, data-end, data-offset,
    /// data-records) for scripts and tests.
    Report => report,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout
    Completions => completions,
}

#[cfg(test)]
mod man;

/// Offline forensics for Apache Kafka log directories.
#[derive(Parser)]
#[command(
    name = "klf",
    version,
    about,
    infer_long_args = true,
    disable_help_subcommand = true,
    after_long_help = cli::common::TOP_HELP
)]
struct Cli {
    #[command(flatten)]
    global: cli::common::GlobalArgs,
    /// Never memory-map a file: segments are read a window at a time (8 MiB,
    /// KLF_READ_WINDOW), other files whole up to 256 MiB (files of a log
    /// directory a running broker holds are never mapped anyway)
    #[arg(long, global = true)]
    no_mmap: bool,
    #[command(subcommand)]
    command: Command,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => 2,
            });
        }
    };
    klf::capture::mmap::install_sigbus_handler();
    klf::capture::mmap::set_mmap_disabled(cli.no_mmap);
    let mut out = cli::common::Output::stdout(&cli.global);
    let status = cli.command.run(&mut out);
    let status = out.finish(status);
    ExitCode::from(status.code())
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
