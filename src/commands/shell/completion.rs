//! Shell completion. `flotilla completion SHELL` prints a small registration script; the shell
//! then calls flotilla back with [`COMPLETE_VAR`] set for every TAB, and [`complete_if_asked`]
//! answers from the same clap definition the binary parses with: commands and flags, and the
//! values only this fleet knows — kubeconfig contexts, cluster names, `KIND/NS/NAME` resources.
//!
//! Answering reads local files only (the kubeconfig, the fleet directory): it must never
//! contact a cluster, never print an error into the shell, and never install anything.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
use clap_complete::{ArgValueCandidates, CompleteEnv, CompletionCandidate, Shell};
use kube::config::Kubeconfig;

use crate::cli::{Cli, CompletionArgs, exit};
use crate::engine::{Fleet, load_fleet};

/// The variable the registration script sets when it asks flotilla for candidates.
pub const COMPLETE_VAR: &str = "FLOTILLA_COMPLETE";

/// Writes the registration script for `args.shell`: sourcing it makes TAB ask this binary.
pub fn run(args: &CompletionArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let completer = std::env::current_exe()
        .map(|path| path.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "flotilla".to_string());
    let mut script = Vec::new();
    adapter(args.shell).write_registration(
        COMPLETE_VAR,
        "flotilla",
        "flotilla",
        &completer,
        &mut script,
    )?;
    out.write_all(&script)?;
    out.flush()?;
    Ok(exit::OK)
}

fn adapter(shell: Shell) -> &'static dyn EnvCompleter {
    match shell {
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Elvish => &Elvish,
        Shell::PowerShell => &Powershell,
        _ => &Bash,
    }
}

/// When the shell asks for candidates (`FLOTILLA_COMPLETE` set), prints them and returns
/// `Some(exit code)`; otherwise `None`, and flotilla runs as usual. A line that cannot be
/// completed gives no candidates and a quiet failure, never an error message.
pub fn complete_if_asked() -> Option<u8> {
    std::env::var_os(COMPLETE_VAR).filter(|value| !value.is_empty() && value != "0")?;
    let args: Vec<OsString> = std::env::args_os().collect();
    let words: Vec<OsString> = match args.iter().position(|arg| arg == "--") {
        Some(dashes) => args[dashes + 1..].to_vec(),
        None => Vec::new(),
    };
    let sources = Sources::from_words(&words);
    let current_dir = std::env::current_dir().ok();
    let answered = CompleteEnv::with_factory(move || with_candidates(Cli::command(), &sources))
        .var(COMPLETE_VAR)
        .bin("flotilla")
        .try_complete(args, current_dir.as_deref());
    Some(match answered {
        Ok(_) => exit::OK,
        Err(_) => exit::INPUT,
    })
}

/// Where the candidates come from, as the command line being completed names them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sources {
    fleet: PathBuf,
    kubeconfig: Option<PathBuf>,
}

impl Sources {
    /// `--fleet` and `--kubeconfig` from the words typed so far (`--flag VALUE` or
    /// `--flag=VALUE`; the last one wins, as clap's parse would), up to a `--`.
    fn from_words(words: &[OsString]) -> Sources {
        let mut sources = Sources {
            fleet: PathBuf::from("fleet"),
            kubeconfig: None,
        };
        let mut words = words.iter().map(|word| word.to_string_lossy());
        while let Some(word) = words.next() {
            if word == "--" {
                break;
            }
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) => (flag.to_string(), Some(value.to_string())),
                None => (word.to_string(), None),
            };
            if flag != "--fleet" && flag != "--kubeconfig" {
                continue;
            }
            let Some(value) = inline.or_else(|| words.next().map(|next| next.into_owned())) else {
                break;
            };
            if flag == "--fleet" {
                sources.fleet = PathBuf::from(value);
            } else {
                sources.kubeconfig = Some(PathBuf::from(value));
            }
        }
        sources
    }

    /// Every context of the kubeconfig files kubectl would read, in file order, first
    /// definition winning; unreadable files are skipped.
    fn contexts(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for path in crate::paths::kubeconfig_files(self.kubeconfig.as_deref()) {
            let Ok(kubeconfig) = Kubeconfig::read_from(&path) else {
                continue;
            };
            for context in kubeconfig.contexts {
                if !names.contains(&context.name) {
                    names.push(context.name);
                }
            }
        }
        names
    }

    /// The fleet directory as far as it loads; `None` when there is none to read.
    fn fleet(&self) -> Option<Fleet> {
        let files = read_quietly(&self.fleet)?;
        Some(load_fleet(&files).0)
    }

    /// The fleet's clusters, or without any, the kubeconfig's contexts (what `--context`
    /// would make the fleet).
    fn clusters(&self) -> Vec<String> {
        let from_fleet: Vec<String> = self
            .fleet()
            .map(|fleet| fleet.clusters.into_iter().map(|c| c.name).collect())
            .unwrap_or_default();
        if from_fleet.is_empty() {
            self.contexts()
        } else {
            from_fleet
        }
    }

    /// The fleet's federated resources as `--resource` takes them.
    fn resources(&self) -> Vec<String> {
        self.fleet()
            .map(|fleet| {
                fleet
                    .resources
                    .iter()
                    .map(|resource| resource.target.display_key())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn read_quietly(dir: &Path) -> Option<Vec<crate::engine::SourceFile>> {
    crate::fleet::dir::read_fleet_dir(dir).ok()
}

/// Which fleet value an argument takes, judged from its flag or value name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Context,
    Cluster,
    Resource,
}

fn value_kind(arg: &clap::Arg) -> Option<ValueKind> {
    match arg.get_long() {
        Some("context" | "hub") => return Some(ValueKind::Context),
        Some("cluster" | "clusters" | "add-cluster" | "remove-cluster") => {
            return Some(ValueKind::Cluster);
        }
        _ => {}
    }
    let names = arg.get_value_names().unwrap_or_default();
    names
        .iter()
        .any(|name| name.as_str() == "KIND/NS/NAME")
        .then_some(ValueKind::Resource)
}

/// `command` with a candidate source on every argument that takes a context, a cluster or a
/// resource, in every subcommand.
fn with_candidates(command: clap::Command, sources: &Sources) -> clap::Command {
    let command = command.mut_args(|arg| match value_kind(&arg) {
        Some(kind) => {
            let sources = sources.clone();
            arg.add(ArgValueCandidates::new(move || candidates(&sources, kind)))
        }
        None => arg,
    });
    command.mut_subcommands(|sub| with_candidates(sub, sources))
}

fn candidates(sources: &Sources, kind: ValueKind) -> Vec<CompletionCandidate> {
    let values = match kind {
        ValueKind::Context => sources.contexts(),
        ValueKind::Cluster => sources.clusters(),
        ValueKind::Resource => sources.resources(),
    };
    values
        .into_iter()
        .map(|value| CompletionCandidate::new(OsStr::new(&value)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_fleet_and_kubeconfig_come_from_the_line_being_completed() {
        let sources = Sources::from_words(&words(
            "flotilla --fleet=prod plan --kubeconfig /tmp/kc --context m",
        ));
        assert_eq!(sources.fleet, PathBuf::from("prod"));
        assert_eq!(sources.kubeconfig, Some(PathBuf::from("/tmp/kc")));
        let defaults = Sources::from_words(&words("flotilla plan --fleet"));
        assert_eq!(defaults.fleet, PathBuf::from("fleet"));
        assert_eq!(defaults.kubeconfig, None);
    }

    #[test]
    fn contexts_clusters_and_resources_are_recognised_in_every_subcommand() {
        let command = Cli::command();
        let kinds = |sub: &str, id: &str| {
            let sub = command.find_subcommand(sub).expect("subcommand");
            let arg = sub
                .get_arguments()
                .chain(command.get_arguments())
                .find(|arg| arg.get_id() == id)
                .expect("argument");
            value_kind(arg)
        };
        assert_eq!(kinds("plan", "contexts"), Some(ValueKind::Context));
        assert_eq!(kinds("plan", "clusters"), Some(ValueKind::Cluster));
        assert_eq!(kinds("status", "resources"), Some(ValueKind::Resource));
        assert_eq!(kinds("reschedule", "resource"), Some(ValueKind::Resource));
        assert_eq!(kinds("plan", "fleet"), None);
    }
}
