//! The command-line contract (design §3): every command and global flag, parsed with clap.
//! It only describes and validates arguments; it must not run anything.

use std::path::PathBuf;
use std::str::FromStr;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit codes shared by every command.
pub mod exit {
    /// Success; for `plan` and `drift`, nothing to report.
    pub const OK: u8 = 0;
    /// `plan`: changes pending; `drift`: drift found.
    pub const CHANGES: u8 = 1;
    /// Bad input: a usage error, an unreadable or invalid fleet, a bad flag value.
    pub const INPUT: u8 = 2;
    /// Some clusters failed while others succeeded.
    pub const PARTIAL: u8 = 3;
    /// Ended by SIGINT (128 + 2, as shells report it).
    pub const INTERRUPTED: u8 = 130;
    /// Ended by SIGTERM (128 + 15).
    pub const TERMINATED: u8 = 143;
    /// Ended by SIGHUP (128 + 1).
    pub const HUNG_UP: u8 = 129;

    /// How a command or the console ends on the signal of this name.
    pub fn of_signal(signal: &str) -> u8 {
        match signal {
            "SIGINT" => INTERRUPTED,
            "SIGHUP" => HUNG_UP,
            _ => TERMINATED,
        }
    }

    /// How a command that could not use its hub ends: an unusable kubeconfig, context or
    /// non-hub is an input error; a hub that did not answer counts as a failed cluster.
    pub fn of_hub(err: &crate::backend::hub::HubError) -> u8 {
        match err {
            crate::backend::hub::HubError::Input(_) => INPUT,
            crate::backend::hub::HubError::Unreachable(_) => PARTIAL,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "flotilla",
    version,
    about = "A terminal fleet console for multi-cluster Kubernetes",
    long_about = "A terminal fleet console for multi-cluster Kubernetes.\n\n\
        Shows clusters, federated resources (Karmada and KubeFed dialects) and per-cluster \
        propagation status in one view; previews per-cluster diffs; propagates with a built-in \
        engine; repairs drift. With no command, opens the console.",
    after_help = "Exit codes: 0 ok / no changes; 1 changes, drift or cells not in sync found (plan, drift, status); \
        2 input error; 3 some clusters failed.\nNO_COLOR=1 turns colour off everywhere."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every command understands, before or after the command name.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Fleet directory holding the desired state (every *.yaml / *.yml below it).
    #[arg(long, global = true, value_name = "DIR", default_value = "fleet")]
    pub fleet: PathBuf,

    /// Kubeconfig file (else $KUBECONFIG merged as kubectl does, else ~/.kube/config).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig contexts that form the fleet when it has no inventory (glob; repeatable).
    #[arg(long = "context", global = true, value_name = "GLOB")]
    pub contexts: Vec<String>,

    /// Attach to a federation hub (Karmada, KubeFed or OCM) through this context.
    #[arg(long, global = true, value_name = "CONTEXT")]
    pub hub: Option<String>,

    /// Use the embedded simulated fleet instead of a fleet directory and real clusters.
    #[arg(long, global = true)]
    pub demo: bool,

    /// Seed for the simulated fleet's randomness (drift timing, failures).
    #[arg(long, global = true, value_name = "N", default_value_t = 7)]
    pub demo_seed: u64,

    /// Synthesise a large simulated fleet of CLUSTERS clusters and RESOURCES resources.
    #[arg(long, global = true, value_name = "CLUSTERS,RESOURCES")]
    pub demo_scale: Option<DemoScale>,

    /// Never send a mutating request; mutating keys and commands are disabled.
    #[arg(long, global = true)]
    pub readonly: bool,

    /// Colour theme: a name from themes/ or $XDG_CONFIG_HOME/flotilla/themes/.
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,

    /// Key map: a name from keymaps/ or $XDG_CONFIG_HOME/flotilla/keymaps/.
    #[arg(long, global = true, value_name = "NAME")]
    pub keymap: Option<String>,

    /// Output format for scripting commands.
    #[arg(short = 'o', long = "output", global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,

    /// Write logs here (default $XDG_STATE_HOME/flotilla/flotilla.log).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
}

impl GlobalArgs {
    /// Whether the simulated fleet is in use (`--demo` or `--demo-scale`).
    pub fn uses_demo(&self) -> bool {
        self.demo || self.demo_scale.is_some()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned columns for people.
    Table,
    /// The table with the columns it hides (labels, contexts, API versions, times).
    Wide,
    /// One name a line (`KIND/NS/NAME`, or cluster names for `clusters`), for scripts.
    Name,
    Json,
    Yaml,
}

/// `--demo-scale CLUSTERS,RESOURCES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoScale {
    pub clusters: usize,
    pub resources: usize,
}

impl FromStr for DemoScale {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let usage = || format!("expected CLUSTERS,RESOURCES such as 2000,1000, got {text:?}");
        let (clusters, resources) = text.split_once(',').ok_or_else(usage)?;
        let parse = |part: &str| part.trim().parse::<usize>().map_err(|_| usage());
        let scale = DemoScale {
            clusters: parse(clusters)?,
            resources: parse(resources)?,
        };
        if scale.clusters == 0 || scale.clusters > 100_000 || scale.resources > 100_000 {
            return Err(format!(
                "{text:?} is out of range: clusters must be 1..=100000 and resources 0..=100000"
            ));
        }
        Ok(scale)
    }
}

/// What `status --help` says of its output beyond the flags.
const STATUS_HELP: &str = "\
Output (-o json; yaml is the same structure):
  {\"items\":[{\"cluster\",\"resource\":{...},\"sync\",\"health\",\"reason\",\"since\"}]}
With --resource, each placed cell also carries what the cluster holds:
  \"live\": the live object, Secret values as \"***\" (null when the cluster does not hold it)
  \"events\": its recent Events (and its pods', for a workload), newest first:
            [{\"type\",\"reason\",\"message\",\"count\",\"object\",\"lastSeen\",\"ageSeconds\"}]
  \"liveError\": why the object or its Events could not be read, when they could not
and the table adds the latest Warning Event's reason and message per cell (EVENT).";

#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Open the interactive console (the default).
    Console,
    /// Open the console on the embedded simulated fleet (same as `console --demo`).
    Demo,
    /// Read-only wall display of the whole fleet's health.
    Watch(WatchArgs),
    /// List clusters with their health.
    Clusters,
    /// Per-cluster desired objects, computed offline (never contacts a cluster); with --hub, the objects the hub itself rendered.
    Render(RenderArgs),
    /// Per-cluster diff of desired against live (exit 0 none, 1 changes, 2 input error, 3 some clusters failed).
    Plan(PlanArgs),
    /// Propagate desired objects to their clusters (asks for confirmation on a TTY unless --yes).
    Apply(ApplyArgs),
    /// Objects whose live state left the desired state (exit 0 none, 1 drift, 2 input error, 3 some clusters failed).
    Drift(ScopeArgs),
    /// Resolve drift: revert it, adopt it as an override, or ignore it from now on.
    Repair(RepairArgs),
    /// Every (resource, cluster) cell: sync status, health and reason, and a line per cluster; read-only (exit 0 all in sync, 1 something not, 2 input error, 3 some clusters failed).
    #[command(after_help = STATUS_HELP)]
    Status(ScopeArgs),
    /// Where flotilla's config, key map, theme, state (audit log) and log files live, which exist, the kubeconfig files in use, and the version.
    Info,
    /// Print a shell completion script: `source <(flotilla completion bash)`.
    Completion(CompletionArgs),
    /// Print the manual page (roff): `flotilla man | man -l -`.
    Man,
}

impl Command {
    pub fn name(&self) -> &'static str {
        match self {
            Command::Console => "console",
            Command::Demo => "demo",
            Command::Watch(_) => "watch",
            Command::Clusters => "clusters",
            Command::Render(_) => "render",
            Command::Plan(_) => "plan",
            Command::Apply(_) => "apply",
            Command::Drift(_) => "drift",
            Command::Repair(_) => "repair",
            Command::Status(_) => "status",
            Command::Info => "info",
            Command::Completion(_) => "completion",
            Command::Man => "man",
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct CompletionArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Seconds between pages when the fleet does not fit on one screen.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub interval: u64,
    /// Draw with ASCII only, for terminals without Unicode.
    #[arg(long)]
    pub ascii: bool,
    /// Seconds without any event after which a cluster is shown as stale.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub stale_after: u64,
}

/// Which part of the fleet a command acts on.
#[derive(Debug, Clone, Args)]
pub struct ScopeArgs {
    /// Only this cluster (repeatable).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
    /// Only this resource, as KIND/NAMESPACE/NAME or KIND/NAME (repeatable).
    #[arg(long = "resource", value_name = "KIND/NS/NAME")]
    pub resources: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct RenderArgs {
    /// Only this cluster (repeatable).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
    /// Render everything that is valid and list the errors, instead of stopping at them.
    #[arg(long)]
    pub keep_going: bool,
    /// Write Secret values as the fleet has them (they are masked as "***" otherwise).
    #[arg(long)]
    pub show_secrets: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Also plan deletion of objects flotilla applied that are no longer placed.
    #[arg(long)]
    pub prune: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Take ownership of fields another field manager owns.
    #[arg(long)]
    pub force_conflicts: bool,
    /// Delete objects flotilla applied that are no longer placed (asks for confirmation).
    #[arg(long)]
    pub prune: bool,
    /// Clusters in flight at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub concurrency: usize,
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("how").required(true).args(["revert", "adopt", "ignore"])))]
pub struct RepairArgs {
    /// Re-apply the desired value.
    #[arg(long)]
    pub revert: bool,
    /// Keep the live value: it becomes an override for that cluster.
    #[arg(long)]
    pub adopt: bool,
    /// Persist an ignore rule so the path stops counting as drift.
    #[arg(long)]
    pub ignore: bool,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Only this field, as a JSON pointer such as /spec/replicas.
    #[arg(long, value_name = "JSON_POINTER")]
    pub path: Option<String>,
    /// Do not ask for confirmation.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_work_after_the_command() {
        let cli = Cli::try_parse_from(["flotilla", "clusters", "--demo", "-o", "json"])
            .expect("valid arguments");
        assert!(cli.global.demo);
        assert_eq!(cli.global.output, OutputFormat::Json);
        assert!(matches!(cli.command, Some(Command::Clusters)));
    }

    #[test]
    fn demo_scale_parses_and_rejects_nonsense() {
        assert_eq!(
            "2000,1000".parse::<DemoScale>(),
            Ok(DemoScale {
                clusters: 2000,
                resources: 1000
            })
        );
        for bad in ["", "10", "a,b", "0,5", "-1,3", "10,", "999999999,1"] {
            assert!(
                bad.parse::<DemoScale>().is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn repair_needs_exactly_one_way() {
        assert!(Cli::try_parse_from(["flotilla", "repair", "--cluster", "a"]).is_err());
        assert!(Cli::try_parse_from(["flotilla", "repair", "--revert", "--adopt"]).is_err());
        assert!(Cli::try_parse_from(["flotilla", "repair", "--ignore", "--path", "/spec"]).is_ok());
    }
}
