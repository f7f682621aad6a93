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

/// The subcommands' modules (declared in `cli/mod.rs`, where rustfmt
/// reaches them).
mod cli;

/// Declares the `Command` enum and its dispatch from one `Variant =>
/// module` line per subcommand (the doc comment becomes the subcommand's
/// help; `cli::module` must exist).
macro_rules! subcommands {
    ($($(#[$meta:meta])* $variant:ident => $module:ident,)*) => {

        #[derive(clap::Subcommand)]
        enum Command {
            $($(#[$meta])* $variant(cli::$module::Args),)*
        }

        impl Command {
            /// The subcommand's name, as typed.
            fn name(&self) -> &'static str {
                match self {
                    $(Command::$variant(_) => stringify!($module),)*
                }
            }

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
    /// Transactions as a whole: per producer and transactional id committed, aborted, open and empty transactions, their sizes and durations; per partition the last stable offset
    Transactions => transactions,
    /// Check captured log directories: framing, checksums, indexes, epochs, checkpoints, replicas
    Check => check,
    /// Write a self-contained HTML post-mortem page: summary, replica timelines as SVG, the diff story
    ///
    /// One HTML file (inline CSS and SVG, no script, nothing loaded from elsewhere) with a summary
    /// table of every partition (those whose replicas agree folded into one table of their own and
    /// not drawn), then per partition, the losses first, an SVG timeline with one lane per replica
    /// (leader epochs from batch headers and the checkpoint where it disagrees, high watermark,
    /// log end, divergence, the truncation Kafka will perform, the records it cuts with the
    /// committed ones in red), the controller's elections from the metadata log, a zoomed panel
    /// around a small divergence, and the story `klf diff --explain` tells. Every mark carries
    /// data-* attributes (data-kind, data-replica, data-epoch, data-start, data-end, data-offset,
    /// data-records) for scripts and tests.
    Report => report,
    /// Write a digest of a node's log directories: what diff, timeline, impact, elect and report need, without the records
    Digest => digest,
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout
    Completions => completions,
    /// Print a man page (roff) on stdout, or install every page into a folder man searches
    Man => man,
}

mod man;

/// Offline forensics for Apache Kafka log directories.
#[derive(Parser)]
#[command(
    name = "klf",
    version,
    about,
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
    out_of_memory::install();
    ignore_file_size_signal();
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
    let workers = match start_workers() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("klf: cannot start a worker thread: {e} (an I/O error of the machine)");
            return ExitCode::from(2);
        }
    };
    klf::capture::mmap::install_sigbus_handler();
    klf::capture::mmap::set_mmap_disabled(cli.no_mmap);
    klf::format::codec::set_decompressed_cap(cli.global.max_decompressed_bytes);
    klf::capture::vfs::track_opened();
    klf::capture::discover::set_command(cli.command.name());
    let mut out = cli::common::Output::stdout(&cli.global);
    let status = workers.install(|| cli.command.run(&mut out));
    cli::common::note_unchecked_batches(&mut out);
    let status = cli::common::settle_failed_reads(&mut out, status);
    let status = out.finish(status);
    ExitCode::from(status.code())
}

/// A write past the file size limit (`ulimit -f`) raises SIGXFSZ, which
/// kills a process that does not handle it, before it can remove its
/// temporary file or say what happened. Ignored, the write fails with
/// EFBIG instead, and klf reports it like any failed write (exit 2, the
/// output named, the temporary file removed).
#[allow(unsafe_code)]
fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN runs no code of
    // ours in a signal context.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Running out of memory is the machine's failure, not the data's: an
/// allocation klf cannot do without ends the run with exit status 2 and
/// klf's one-line message, at once, in the allocator (before Rust's runtime
/// could print its own lines or a backtrace). The large allocations a
/// capture's size drives are asked for inside
/// [`klf::format::memory::fallible`], and a refusal there is the caller's
/// to handle (a partition not read, a smaller window).
#[allow(unsafe_code)]
mod out_of_memory {
    use std::alloc::{GlobalAlloc, Layout};

    use mimalloc::MiMalloc;
    use std::sync::atomic::{AtomicBool, Ordering};

    static FAILED: AtomicBool = AtomicBool::new(false);

    const OOM: &[u8] = b"klf: out of memory: the machine refused an allocation \
(an I/O error, not evidence about the data); the output is incomplete\n";

    /// A request was refused: unless the caller asked for it to be
    /// fallible, the run ends here with klf's message (nothing more is
    /// allocated, nothing else is printed).
    fn refused() {
        FAILED.store(true, Ordering::Relaxed);
        if !klf::format::memory::in_fallible() {
            // SAFETY: write(2) and _exit(2) need no allocation and are
            // safe to call from any thread at any time.
            unsafe {
                libc::write(2, OOM.as_ptr().cast(), OOM.len());
                libc::_exit(2);
            }
        }
    }

    /// mimalloc, ending the run when a request it cannot do without is
    /// refused.
    struct Noting;

    // SAFETY: every call is passed to mimalloc unchanged.
    unsafe impl GlobalAlloc for Noting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: the caller's contract for `alloc`, passed on.
            let p = unsafe { MiMalloc.alloc(layout) };
            if p.is_null() {
                refused();
            }
            p
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
            let p = unsafe { MiMalloc.alloc_zeroed(layout) };
            if p.is_null() {
                refused();
            }
            p
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` came from this allocator (mimalloc's) with `layout`.
            unsafe { MiMalloc.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: `ptr` came from this allocator (mimalloc's) with `layout`.
            let p = unsafe { MiMalloc.realloc(ptr, layout, new_size) };
            if p.is_null() {
                refused();
            }
            p
        }
    }

    #[global_allocator]
    static ALLOCATOR: Noting = Noting;

    /// Turns an abort (what follows a refused allocation, in Rust or in the
    /// C library) into exit 2 and a message.
    pub fn install() {
        extern "C" fn on_abort(_: libc::c_int) {
            const FATAL: &[u8] = b"klf: aborted by a fatal error of the C library or the \
runtime (above; usually memory or threads the machine refused): not evidence about the \
data; the output is incomplete\n";
            let msg = if FAILED.load(Ordering::Relaxed) {
                OOM
            } else {
                FATAL
            };
            // SAFETY: write(2) and _exit(2) are async-signal-safe.
            unsafe {
                libc::write(2, msg.as_ptr().cast(), msg.len());
                libc::_exit(2);
            }
        }
        // SAFETY: the handler only reads an atomic and calls
        // async-signal-safe functions.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_abort as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut());
        }
        // A thread the machine will not give its signal stack (the
        // runtime panics in it as it starts, under a memory limit) is a
        // refused allocation too: klf's line, exit 2, never Rust's.
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
            if message.is_some_and(|m| m.contains("failed to allocate an alternative stack")) {
                // SAFETY: write(2) and _exit(2) need no allocation.
                unsafe {
                    libc::write(2, OOM.as_ptr().cast(), OOM.len());
                    libc::_exit(2);
                }
            }
            default(info)
        }));
    }
}

/// Starts the worker threads: as many as `RAYON_NUM_THREADS` or the
/// machine's cores, and fewer when the machine will not give that many
/// (a memory limit, a thread limit), down to the main thread alone. Only
/// when not even that can be had is it an error.
fn start_workers() -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    let mut want = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    loop {
        let builder = rayon::ThreadPoolBuilder::new().num_threads(want);
        let built = if want == 1 {
            builder.use_current_thread().build()
        } else {
            builder.build()
        };
        match built {
            Ok(pool) => return Ok(pool),
            Err(e) if want == 1 => return Err(e),
            Err(_) => want /= 2,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
