//! `cargo xtask man [--out DIR]`: the manual pages, one per flotilla command, written into
//! DIR (default `target/man`) by the product's own `flotilla man --out`, so xtask never links
//! the product. It writes only into that directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::paths;

/// Where the pages go: `--out DIR` (relative to the current directory), else `target/man`.
pub fn parse_args(words: &[&str]) -> Result<PathBuf> {
    match words {
        [] => Ok(paths::repo_root().join("target").join("man")),
        ["--out", dir] => Ok(PathBuf::from(dir)),
        [flag] if flag.starts_with("--out=") => Ok(PathBuf::from(&flag["--out=".len()..])),
        _ => bail!(
            "unknown man arguments `{}`\n\nusage: cargo xtask man [--out DIR]",
            words.join(" ")
        ),
    }
}

/// Builds flotilla and has it write its pages into `dir`, printing each file written.
pub fn run(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(paths::repo_root())
        .args([
            "run", "--quiet", "-p", "flotilla", "--bin", "flotilla", "--",
        ])
        .args(["man", "--out"])
        .arg(std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()))
        .status()
        .context("could not run `cargo run --bin flotilla -- man`")?;
    if !status.success() {
        bail!("`flotilla man --out {}` failed ({status})", dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_defaults_to_target_man_and_out_names_another() {
        assert_eq!(
            parse_args(&[]).expect("default"),
            paths::repo_root().join("target/man")
        );
        assert_eq!(
            parse_args(&["--out", "pages"]).expect("--out DIR"),
            PathBuf::from("pages")
        );
        assert_eq!(
            parse_args(&["--out=pages"]).expect("--out=DIR"),
            PathBuf::from("pages")
        );
        assert!(parse_args(&["--out"]).is_err());
        assert!(parse_args(&["pages"]).is_err());
    }
}
