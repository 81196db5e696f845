//! `flotilla man`: manual pages in roff, from the same clap definition the binary parses
//! with, so they cannot drift from `--help`. It prints the main page, or writes one page per
//! command into a directory the caller names; it must not install pages nor create that
//! directory.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, ManArgs, exit};

/// Writes the main page (`flotilla man | man -l -`), or with `--out DIR` every page into DIR
/// and the names of the files written to `out`.
pub fn run(args: &ManArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let Some(dir) = &args.out else {
        clap_mangen::Man::new(Cli::command()).render(out)?;
        out.flush()?;
        return Ok(exit::OK);
    };
    if !dir.is_dir() {
        eprintln!(
            "error: --out {}: no such directory; create it first",
            crate::safe_text::printable(&dir.display().to_string(), false)
        );
        return Ok(exit::INPUT);
    }
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    write_pages(command, dir, &mut written).map_err(|err| {
        anyhow::anyhow!("cannot write the manual pages to {}: {err}", dir.display())
    })?;
    for path in written {
        writeln!(out, "{}", path.display())?;
    }
    out.flush()?;
    Ok(exit::OK)
}

/// Writes the page of `command` and of every command below it, recording each file's path.
fn write_pages(
    command: clap::Command,
    dir: &std::path::Path,
    written: &mut Vec<std::path::PathBuf>,
) -> std::io::Result<()> {
    let source = format!("flotilla {}", env!("CARGO_PKG_VERSION"));
    written.push(
        clap_mangen::Man::new(command.clone())
            .source(source)
            .generate_to(dir)?,
    );
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub.clone(), dir, written)?;
    }
    Ok(())
}
