//! `flotilla man`: the manual page in roff, from the same clap definition the binary parses
//! with, so it cannot drift from `--help`. It only prints; it must not install the page.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, exit};

/// Writes the manual page: `flotilla man | man -l -`, or redirect it to `flotilla.1`.
pub fn run(out: &mut dyn Write) -> anyhow::Result<u8> {
    clap_mangen::Man::new(Cli::command()).render(out)?;
    out.flush()?;
    Ok(exit::OK)
}
