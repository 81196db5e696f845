//! The README and the docs cannot drift from the binary: every `flotilla …` command in a fenced
//! shell block parses with the real command line, and the README's key tables are the default key
//! map's help, section by section, line for line. `FLOTILLA_BLESS=1 cargo test --test readme` rewrites the key table.

use std::path::{Path, PathBuf};

use clap::Parser;
use flotilla::cli::Cli;
use flotilla::config::keymap::{Keymap, Section};

const BEGIN: &str = "<!-- keys:begin";
const END: &str = "<!-- keys:end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("docs entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The `flotilla` command lines of a page's fenced `sh` blocks, with their line numbers; `cargo
/// run --release --` counts as `flotilla`, and a `#` comment ends the command.
fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut in_shell = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(fence) = trimmed.strip_prefix("```") {
            in_shell = !in_shell && matches!(fence, "sh" | "bash" | "console" | "shell");
            continue;
        }
        if !in_shell {
            continue;
        }
        let Some(words) = shlex::split(trimmed) else {
            found.push((index + 1, vec![format!("unparsable shell line: {trimmed}")]));
            continue;
        };
        let words: Vec<String> = words
            .into_iter()
            .take_while(|w| !w.starts_with('#'))
            .collect();
        let args = match words.as_slice() {
            [first, rest @ ..] if first == "flotilla" => rest.to_vec(),
            [cargo, run, release, dashes, rest @ ..]
                if cargo == "cargo" && run == "run" && release == "--release" && dashes == "--" =>
            {
                rest.to_vec()
            }
            _ => continue,
        };
        // A pipe or a redirection ends the command.
        let args = args
            .into_iter()
            .take_while(|w| !matches!(w.as_str(), "|" | ">" | "&&" | ";"))
            .collect();
        found.push((index + 1, args));
    }
    found
}

#[test]
fn every_documented_command_parses() {
    let mut failures = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page readable");
        for (line, args) in commands(&text) {
            seen += 1;
            let argv = std::iter::once("flotilla".to_string()).chain(args.iter().cloned());
            if let Err(err) = Cli::try_parse_from(argv) {
                let first = err
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                failures.push(format!(
                    "{}:{line}: flotilla {}: {first}",
                    relative(&page),
                    args.join(" ")
                ));
            }
        }
    }
    assert!(seen >= 5, "the README's commands were not found ({seen})");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_command_that_does_not_exist_is_caught() {
    let found = commands("```sh\nflotilla deploy-everything --now   # no such command\n```\n");
    assert_eq!(found.len(), 1);
    let argv = std::iter::once("flotilla".to_string()).chain(found[0].1.iter().cloned());
    assert!(Cli::try_parse_from(argv).is_err());
}

fn table(entries: Vec<(String, &'static str)>) -> String {
    let mut table = String::from("| keys | does |\n|---|---|\n");
    for (keys, does) in entries {
        let keys: Vec<String> = keys.split(' ').map(|key| format!("`{key}`")).collect();
        table.push_str(&format!(
            "| {} | {} |\n",
            keys.join(" "),
            does.replace('|', "\\|")
        ));
    }
    table
}

/// The README's key tables as the default key map's help screen lists them: the main view's,
/// then each view's own section.
fn key_table() -> String {
    let map = Keymap::built_in("default");
    let mut text = table(map.help_entries(false));
    for section in Section::ALL {
        text.push_str(&format!(
            "\n{} (`{}:` in a key map file):\n\n",
            section.title(),
            section.name()
        ));
        text.push_str(&table(map.section_help(section, false)));
    }
    text
}

#[test]
fn the_readme_key_table_is_the_default_key_map() {
    let path = root().join("README.md");
    let text = std::fs::read_to_string(&path).expect("README readable");
    let begin = text.find(BEGIN).expect("README has the keys:begin marker");
    let after_begin = begin + text[begin..].find('\n').expect("marker line ends") + 1;
    let end = text.find(END).expect("README has the keys:end marker");
    let expected = key_table();
    if std::env::var_os("FLOTILLA_BLESS").is_some() {
        let rewritten = format!("{}{expected}{}", &text[..after_begin], &text[end..]);
        std::fs::write(&path, rewritten).expect("README writable");
        return;
    }
    assert_eq!(
        &text[after_begin..end],
        expected,
        "README.md's key table differs from keymaps/default.yaml; \
         run FLOTILLA_BLESS=1 cargo test --test readme"
    );
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}
