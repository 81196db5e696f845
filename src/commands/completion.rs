//! `flotilla completion SHELL`: the shell completion script for every command and flag, from
//! the same clap definition the binary parses with. It only prints; it must not install.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionArgs, exit};

/// Writes the completion script for `args.shell`.
pub fn run(args: &CompletionArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut command = Cli::command();
    // Generated in memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "flotilla", &mut script);
    out.write_all(&script)?;
    out.flush()?;
    Ok(exit::OK)
}
