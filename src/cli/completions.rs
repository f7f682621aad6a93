//! `klf completions SHELL`: the shell completion script for klf, generated
//! from the same clap definition the binary parses with (clap_complete).

use std::io::Write;

use clap::CommandFactory;
use clap_complete::Shell;

use super::common::{Output, Status};

/// What `--help` and the man page tell beyond the options.
pub const AFTER_HELP: &str = "\
Examples:
  klf completions bash > ~/.local/share/bash-completion/completions/klf
  klf completions zsh > ~/.zfunc/_klf
  klf completions fish > ~/.config/fish/completions/klf.fish

  bash also takes `source <(klf completions bash)` in ~/.bashrc; zsh needs
  fpath+=(~/.zfunc) before compinit in ~/.zshrc.

Exit status:
  0  the script was written
  2  usage error (an unknown shell) or stdout could not be written
";

/// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The shell to complete klf in
    #[arg(value_enum, value_name = "SHELL")]
    shell: Shell,
}

/// Runs `klf completions`.
pub fn run(args: Args, out: &mut Output) -> Status {
    let mut cmd = crate::Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "klf", &mut buf);
    match out.out().write_all(&buf) {
        Ok(()) => Status::Clean,
        Err(e) => out.write_failed(e),
    }
}
