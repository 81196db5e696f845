//! The command-line contract (design §3): every command and global flag, parsed with clap.
//! It only describes and validates arguments; it must not run anything.

use std::path::PathBuf;
use std::str::FromStr;

use crate::engine::health::pods::PodTrouble;
use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand};

pub use crate::output::OutputFormat;

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
    /// The fleet changed under an edit (a file or hub object it changes was changed by
    /// someone else meanwhile): nothing was written; run it again.
    pub const FLEET_CHANGED: u8 = 4;
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
    /// non-hub is an input error; an object that changed under an edit is the fleet changed;
    /// a hub that did not answer, could not be read or refused counts as a failed cluster.
    pub fn of_hub(err: &crate::backend::hub::HubError) -> u8 {
        use crate::backend::hub::HubError;
        match err {
            HubError::Input(_) => INPUT,
            HubError::Changed(_) => FLEET_CHANGED,
            HubError::Unreachable(_)
            | HubError::MissingKind(_)
            | HubError::Unreadable(_)
            | HubError::Refused(_) => PARTIAL,
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
    #[arg(long = "context", global = true, value_name = "GLOB", value_parser = parse_glob)]
    pub contexts: Vec<String>,

    /// Attach to a federation hub (Karmada, KubeFed or OCM) through this context.
    #[arg(long, global = true, value_name = "CONTEXT")]
    pub hub: Option<String>,

    /// Read the inventory from SIG Multicluster ClusterProfiles on a hub context:
    /// `clusterprofiles:CONTEXT`.
    #[arg(long, global = true, value_name = "SOURCE")]
    pub inventory: Option<InventorySource>,

    /// Which exec plugin gives credentials for each ClusterProfile access provider (JSON,
    /// the cluster-inventory-api consumer format `{"providers":[{"name","execConfig"}]}`).
    #[arg(long, global = true, value_name = "FILE")]
    pub clusterprofile_provider_file: Option<PathBuf>,

    /// The ClusterProfiles `--inventory` named, once read (never a flag).
    #[arg(skip)]
    pub profiles: Option<std::sync::Arc<crate::backend::kube::profile_inventory::ProfileInventory>>,

    /// Use the embedded simulated fleet instead of a fleet directory and real clusters.
    #[arg(long, global = true)]
    pub demo: bool,

    /// Seed for the simulated fleet's randomness (drift timing, failures).
    #[arg(long, global = true, value_name = "N", default_value_t = 7)]
    pub demo_seed: u64,

    /// Synthesise a large simulated fleet of CLUSTERS clusters and RESOURCES resources.
    #[arg(long, global = true, value_name = "CLUSTERS,RESOURCES")]
    pub demo_scale: Option<DemoScale>,

    /// Write nothing anywhere (fleet files, ignore files, clusters, hubs): writing commands are
    /// refused before they start (exit 2) and mutating keys are disabled.
    #[arg(long, global = true)]
    pub readonly: bool,

    /// Colour theme: a name from themes/ or $XDG_CONFIG_HOME/flotilla/themes/.
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,

    /// Key map: a name from keymaps/ or $XDG_CONFIG_HOME/flotilla/keymaps/.
    #[arg(long, global = true, value_name = "NAME")]
    pub keymap: Option<String>,

    /// Output format for scripting commands: table, wide, name, json, yaml, or jsonpath=TEMPLATE
    /// as kubectl reads it (e.g. '{range .items[*]}{.cluster}{"\t"}{.sync}{"\n"}{end}').
    #[arg(
        short = 'o',
        long = "output",
        global = true,
        value_name = "FORMAT",
        default_value = "table"
    )]
    pub output: OutputFormat,

    /// Write logs here (default $XDG_STATE_HOME/flotilla/flotilla.log).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,

    /// Argo CD health rules: a directory laid out as GROUP/KIND/health.lua (`_` for any
    /// group part or kind, ConfigMap files at its top), or an argocd-cm ConfigMap file with
    /// resource.customizations.health.GROUP_KIND keys (repeatable; first match wins, before
    /// $XDG_CONFIG_HOME/flotilla/health/ and the built-in kinds).
    #[arg(long = "health-rules", global = true, value_name = "PATH")]
    pub health_rules: Vec<PathBuf>,
}

/// A `--context` glob, refused with the reason when it is not one (an unclosed `[`).
fn parse_glob(text: &str) -> Result<String, String> {
    crate::glob::check(text)?;
    Ok(text.to_string())
}

impl GlobalArgs {
    /// Whether the simulated fleet is in use (`--demo` or `--demo-scale`).
    pub fn uses_demo(&self) -> bool {
        self.demo || self.demo_scale.is_some()
    }
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

/// `--inventory clusterprofiles:CONTEXT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InventorySource {
    /// The ClusterProfiles the hub context serves.
    ClusterProfiles { context: String },
}

impl FromStr for InventorySource {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.split_once(':') {
            Some(("clusterprofiles", context)) if !context.trim().is_empty() => {
                Ok(InventorySource::ClusterProfiles {
                    context: context.to_string(),
                })
            }
            _ => Err(format!(
                "expected {} (the kubeconfig context of the hub whose ClusterProfiles are the inventory), got {text:?}",
                crate::backend::cluster_profiles::INVENTORY_FORM
            )),
        }
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
    Console(ConsoleArgs),
    /// Open the console on the embedded simulated fleet (same as `console --demo`).
    Demo(ConsoleArgs),
    /// Read-only wall display of the whole fleet's health.
    Watch(WatchArgs),
    /// List clusters with their health (exit 0; 3 when any is Unreachable or Unauthorized).
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
    /// The pods of the fleet's workloads on every placed cluster, grouped by cluster and workload, with kubectl's STATUS and the worst trouble per cell; read-only (exit 0 none in trouble, 1 some, 2 input error, 3 some clusters failed).
    #[command(after_help = PODS_HELP)]
    Pods(PodsArgs),
    /// Per workload and container, the image the fleet renders for each cluster beside the one its live workload and pods run; read-only (exit 0 none differ, 1 some differ, 2 input error, 3 some clusters failed).
    #[command(after_help = IMAGES_HELP)]
    Images(ImagesArgs),
    /// Run a command in a pod of a workload on one cluster, as `kubectl exec` does (a Running, ready pod unless --pod; the default container unless -c); exits with the command's exit code. Refused under --readonly; a danger-class cluster asks for its name unless --yes; audit-logged (never the output).
    #[command(after_help = EXEC_HELP)]
    Exec(ExecArgs),
    /// The logs of a workload's pods on every placed cluster at once, each line prefixed by cluster, pod and container, interleaved by time; read-only (exit 0, 2 input error, 3 some clusters failed).
    #[command(after_help = LOGS_HELP)]
    Logs(LogsArgs),
    /// Where flotilla's config, key map, theme, state (audit log) and log files live, which exist, the kubeconfig files in use, and the version.
    Info,
    /// Print a shell completion script: `source <(flotilla completion bash)`.
    Completion(CompletionArgs),
    /// Print the manual page (roff): `flotilla man | man -l -`; with --out DIR, write one page per command there.
    Man(ManArgs),
    /// The console's placement editor as a command: `placement set KIND/NS/NAME --clusters a,b`.
    #[command(subcommand)]
    Placement(PlacementCommand),
    /// The console's override editor as a command: `override add|remove|list KIND/NS/NAME`.
    #[command(subcommand)]
    Override(OverrideCommand),
    /// Undo the last placement, override or OCM Placement edit flotilla wrote to this fleet (or hub).
    Undo(UndoArgs),
    /// Ask a Karmada hub's scheduler to place a resource afresh (sets rescheduleTriggeredAt on its binding).
    Reschedule(RescheduleArgs),
    /// The console's OCM Placement editor as a command: `ocm-placement set NS/NAME --cluster-selector …`.
    #[command(subcommand)]
    OcmPlacement(OcmPlacementCommand),
}

impl Command {
    /// Whether the command, as given, writes anything: fleet files, ignore files, clusters or
    /// a hub (a `--dry-run` writes nothing). `--readonly` refuses these up front.
    pub fn writes(&self) -> bool {
        match self {
            Command::Apply(_) | Command::Repair(_) | Command::Exec(_) => true,
            Command::Placement(PlacementCommand::Set(args)) => !args.edit.dry_run,
            Command::Override(OverrideCommand::Add(args)) => !args.edit.dry_run,
            Command::Override(OverrideCommand::Remove(args)) => !args.edit.dry_run,
            Command::Undo(args) => !args.edit.dry_run,
            Command::Reschedule(args) => !args.edit.dry_run,
            Command::OcmPlacement(OcmPlacementCommand::Set(args)) => !args.edit.dry_run,
            Command::Console(_)
            | Command::Demo(_)
            | Command::Watch(_)
            | Command::Clusters
            | Command::Render(_)
            | Command::Plan(_)
            | Command::Drift(_)
            | Command::Status(_)
            | Command::Pods(_)
            | Command::Images(_)
            | Command::Logs(_)
            | Command::Info
            | Command::Completion(_)
            | Command::Man(_)
            | Command::Override(OverrideCommand::List(_)) => false,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Command::Console(_) => "console",
            Command::Demo(_) => "demo",
            Command::Watch(_) => "watch",
            Command::Clusters => "clusters",
            Command::Render(_) => "render",
            Command::Plan(_) => "plan",
            Command::Apply(_) => "apply",
            Command::Drift(_) => "drift",
            Command::Repair(_) => "repair",
            Command::Status(_) => "status",
            Command::Pods(_) => "pods",
            Command::Images(_) => "images",
            Command::Exec(_) => "exec",
            Command::Logs(_) => "logs",
            Command::Info => "info",
            Command::Completion(_) => "completion",
            Command::Man(_) => "man",
            Command::Placement(_) => "placement",
            Command::Override(_) => "override",
            Command::Undo(_) => "undo",
            Command::Reschedule(_) => "reschedule",
            Command::OcmPlacement(_) => "ocm-placement",
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
pub struct ManArgs {
    /// Write flotilla.1 and one page per command (flotilla-plan.1, flotilla-placement-set.1, …)
    /// into this existing directory instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ConsoleArgs {
    /// Draw with ASCII only, for terminals without Unicode.
    #[arg(long)]
    pub ascii: bool,
}

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Seconds between pages when the fleet does not fit on one screen (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub interval: u64,
    /// Draw with ASCII only, for terminals without Unicode.
    #[arg(long)]
    pub ascii: bool,
    /// Seconds without any event after which a cluster is shown as stale (1 to 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub stale_after: u64,
    /// Group the heat map's clusters by this label (or region, provider, zone); region unless told.
    #[arg(long, value_name = "LABEL")]
    pub group_by: Option<String>,
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
    /// The resource is the command's argument, a workload (`pods`, `images`, `logs`), not a
    /// `--resource`: an unknown one is named as typed, among the fleet's workloads.
    #[arg(skip)]
    pub workload_argument: bool,
    /// Only resources in this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Only resources whose template labels match this selector (kubectl syntax: app=web,tier!=canary).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

/// What `pods --help` says of its output beyond the flags.
const PODS_HELP: &str = "\
States (--state), worst first:
  CrashLoopBackOff  a container keeps failing and waits to be started again
  ImagePullBackOff  an image cannot be pulled (ErrImagePull, InvalidImageName too)
  Failed            the pod's phase is Failed (a Job's pod that exited with an error)
  OOMKilled         a container was killed for its memory, now or when it last ended
  Pending           not scheduled yet, or its containers are still being created
  NotReady          running, but not every container is ready
  Restarting        running and ready, but its containers have restarted
Output (-o json):
  {\"items\":[{\"cluster\",\"resource\":{...},\"held\",\"summary\",\"worst\",\"pods\":[
    {\"name\",\"namespace\",\"phase\",\"status\",\"ready\",\"containers\",\"restarts\",\"trouble\",
     \"lastTermination\":{\"container\",\"reason\",\"exitCode\",\"finishedAt\",\"ageSeconds\"},
     \"node\",\"ageSeconds\",\"message\",\"images\":[{\"container\",\"image\"}]}],\"error\"}]}
STATUS is kubectl's own STATUS column.";

/// What `images --help` says of its output beyond the flags.
const IMAGES_HELP: &str = "\
Output (-o json):
  {\"items\":[{\"cluster\",\"resource\":{...},\"container\",\"desired\",\"live\",\"running\":[...],\"skew\",\"error\"}]}
desired: the image the fleet renders for that cluster (overrides applied); live: the one the
live workload's pod template asks for; running: the images its pods run. skew is true where
live or any running image is not the desired one.";

/// `flotilla pods`.
#[derive(Debug, Clone, Args)]
pub struct PodsArgs {
    /// Only this workload, as KIND/NAMESPACE/NAME or KIND/NAME (Deployment, StatefulSet, DaemonSet, Job, ReplicaSet).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: Option<String>,
    /// Only this cluster (repeatable).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
    /// Only workloads in this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Only pods in this trouble: CrashLoopBackOff, ImagePullBackOff, Failed, OOMKilled, Pending, NotReady or Restarting.
    #[arg(long, value_name = "STATE", value_parser = parse_pod_trouble)]
    pub state: Option<PodTrouble>,
    /// Only pods whose labels match this selector (kubectl syntax: app=web,tier!=canary).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
}

/// `flotilla images`.
#[derive(Debug, Clone, Args)]
pub struct ImagesArgs {
    /// Only this workload, as KIND/NAMESPACE/NAME or KIND/NAME.
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: Option<String>,
    /// Only this cluster (repeatable).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
    /// Only workloads in this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

const EXEC_HELP: &str = "\
Examples:
  flotilla exec Deployment/shop/checkout --cluster prod-eu-west-1 -- env
  flotilla exec Deployment/shop/checkout --cluster staging-eu-west-1 -it -- sh
The pod is the first Running, ready one of the workload's (by name) unless --pod names one;
the container is -c, else the pod's kubectl.kubernetes.io/default-container annotation, else
its first; stderr says which. Exit code: the command's own; 2 when the workload, pod or
container cannot be found or the input is wrong; 3 when the cluster could not run it.";

/// `flotilla exec`.
#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// The workload, as KIND/NAMESPACE/NAME or KIND/NAME (Deployment, StatefulSet, DaemonSet, Job, ReplicaSet).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    /// The cluster to run it on.
    #[arg(long, value_name = "NAME")]
    pub cluster: String,
    /// This pod of the workload, in whatever state (else the first Running, ready one).
    #[arg(long, value_name = "POD")]
    pub pod: Option<String>,
    /// This container (else the pod's default container, else its first).
    #[arg(short = 'c', long, value_name = "CONTAINER")]
    pub container: Option<String>,
    /// Pass stdin to the command.
    #[arg(short = 'i', long)]
    pub stdin: bool,
    /// Give the command a terminal (with -i, when stdin is one); the local terminal is put in raw mode for it and always restored.
    #[arg(short = 't', long)]
    pub tty: bool,
    /// Do not ask for a danger-class cluster's name.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

const LOGS_HELP: &str = "\
Each line: CLUSTER POD CONTAINER [TIME] TEXT, the cluster coloured on a terminal (NO_COLOR=1
turns colour off). Lines of all clusters are written in the order the containers printed them
(the servers are asked for timestamps); with -f a quiet cluster holds the others back for at
most a moment. Without -c every container of every pod is read. Pods not on a node yet, and
clusters that do not hold the workload, are noted on stderr; pods or clusters that could not be
read are named on stderr and make the exit code 3.
-o json: one object a line:
  {\"cluster\",\"namespace\",\"pod\",\"container\",\"time\",\"text\"}";

/// `flotilla logs`.
#[derive(Debug, Clone, Args)]
pub struct LogsArgs {
    /// The workload, as KIND/NAMESPACE/NAME or KIND/NAME (Deployment, StatefulSet, DaemonSet, Job, ReplicaSet).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    /// Only this cluster (repeatable).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
    /// Only this container of each pod (default: every container).
    #[arg(short = 'c', long, value_name = "CONTAINER")]
    pub container: Option<String>,
    /// Only lines newer than this (30s, 5m, 1h30m).
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Only the last N lines of each container.
    #[arg(long, value_name = "N")]
    pub tail: Option<u64>,
    /// Keep streaming new lines.
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// The previous run of each container (after a crash or restart).
    #[arg(short = 'p', long)]
    pub previous: bool,
    /// Show the time each line was printed.
    #[arg(long)]
    pub timestamps: bool,
}

/// A `--state`, refused with the states there are.
fn parse_pod_trouble(text: &str) -> Result<PodTrouble, String> {
    PodTrouble::parse(text).ok_or_else(|| {
        format!(
            "{text:?} is not a pod state; expected one of {}",
            PodTrouble::ALL.map(PodTrouble::as_str).join(", ")
        )
    })
}

#[derive(Debug, Clone, Args)]
pub struct RenderArgs {
    /// Only this cluster (repeatable).
    #[arg(long = "cluster", value_name = "NAME")]
    pub clusters: Vec<String>,
    /// Only resources in this namespace.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Only resources whose template labels match this selector (kubectl syntax: app=web,tier!=canary).
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
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
    /// Clusters in flight at once (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=10_000).map(usize::from))]
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

/// What every editing command shares: preview instead of writing, and confirmation.
#[derive(Debug, Clone, Args)]
pub struct EditArgs {
    /// Print what would change (clusters gaining and losing the object, each object's diff, the
    /// file's diff) and write nothing; exit 1 when something would change, 0 when nothing would.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before a change that removes the object from clusters (needed without a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// The exit codes and confirmation rule of the editing commands, for their help.
macro_rules! edit_exit_codes {
    () => {
        "Exit codes: 0 written (or nothing to change); 1 --dry-run found changes; \
        2 input error (unknown resource, bad flag value; nothing written); \
        3 the hub could not be reached or refused the write; 4 the fleet changed under the edit \
        (a document or hub object it changes was changed by someone else meanwhile: nothing \
        written, run it again).\n\
        A change that removes the object from some clusters deletes it there: flotilla asks on a \
        terminal, and without one refuses (exit 2) unless --yes is given. A change that only adds \
        or alters is written at once. Every write is journalled, so `flotilla undo` can take it back."
    };
}

#[derive(Debug, Clone, Subcommand)]
pub enum PlacementCommand {
    /// Change where a resource goes: its explicit clusters, cluster label selector, field
    /// selector, tolerations or replica scheduling. Each flag given replaces that part; parts
    /// not named stay exactly as written. On a fleet directory the policy's file is rewritten
    /// with its comments kept; with --hub the policy is written to the Karmada (or KubeFed) hub.
    #[command(after_help = edit_exit_codes!())]
    Set(PlacementSetArgs),
}

#[derive(Debug, Clone, Args)]
#[command(after_long_help = concat!("Examples:\n  \
    flotilla placement set ConfigMap/shop/web --clusters eu-1,eu-2\n  \
    flotilla placement set ConfigMap/shop/web --add-cluster us-1 --dry-run\n  \
    flotilla placement set Deployment/shop/web --cluster-selector 'tier in (web,api)'\n  \
    flotilla placement set Deployment/shop/gpu --tolerate dedicated=gpu:NoSchedule\n  \
    flotilla placement set Deployment/shop/web --clusters '' --cluster-selector env=prod\n  \
    flotilla --hub karmada placement set Deployment/shop/web --clusters m-1 -o json --yes\n\n",
    edit_exit_codes!()))]
pub struct PlacementSetArgs {
    /// The federated resource, as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    /// The explicit cluster list, replacing it (comma-separated, repeatable; '' clears it).
    #[arg(long, value_name = "A,B", num_args = 1)]
    pub clusters: Vec<String>,
    /// Add one cluster to the explicit list (repeatable).
    #[arg(long, value_name = "NAME")]
    pub add_cluster: Vec<String>,
    /// Remove one cluster from the explicit list (repeatable).
    #[arg(long, value_name = "NAME")]
    pub remove_cluster: Vec<String>,
    /// The cluster label selector in kubectl's -l syntax (`env=prod,tier in (a,b),!legacy`),
    /// replacing it; repeated flags are ANDed; '' clears it.
    #[arg(long, value_name = "SELECTOR")]
    pub cluster_selector: Vec<String>,
    /// Karmada field selector over provider, region and zone (`region in (eu,us),provider!=gcp`),
    /// replacing it; repeated flags are ANDed; '' clears it.
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Vec<String>,
    /// A Karmada cluster toleration: `key=value:Effect`, `key:Effect` (Exists), `key=value`
    /// (any effect) or `*`. The flags given replace every toleration; '' clears them.
    #[arg(long, value_name = "KEY=VALUE:EFFECT")]
    pub tolerate: Vec<String>,
    /// Karmada replica scheduling: `duplicated`, `divided`, `divided a=3,b=1` (static weights),
    /// `aggregated`, or '' for none.
    #[arg(long, value_name = "MODE")]
    pub replica_scheduling: Option<String>,
    /// Give the resource a Karmada policy of its own with the edited placement (selecting
    /// only it, one priority above the policy it shares, preemption: Always), so the other
    /// resources of that policy keep theirs. Fleet directories only.
    #[arg(long)]
    pub own_policy: bool,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum OverrideCommand {
    /// Add one override rule for some clusters: the overriders the console's editor offers (a
    /// JSON patch operation, an image component, replicas, a label, an annotation, a container
    /// env var). It goes into flotilla's own OverridePolicy for the resource (created beside the
    /// template when missing) or, in KubeFed, the Federated object's spec.overrides.
    #[command(after_help = edit_exit_codes!())]
    Add(Box<OverrideAddArgs>),
    /// Remove one override rule, numbered as `flotilla override list` numbers them.
    #[command(after_help = edit_exit_codes!())]
    Remove(OverrideRemoveArgs),
    /// List the override rules that vary a resource, numbered, in the order they apply.
    List(OverrideListArgs),
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["cluster", "cluster_selector"])))]
#[command(group(clap::ArgGroup::new("overrider").required(true).args(
    ["json_patch", "image_registry", "image_repository", "image_tag", "replicas", "label", "annotation", "env"])))]
#[command(after_long_help = concat!("Examples:\n  \
    flotilla override add Deployment/shop/web --cluster eu-1,eu-2 --image-tag 1.26\n  \
    flotilla override add Deployment/shop/web --cluster-selector env=prod --replicas 5\n  \
    flotilla override add Deployment/shop/web --cluster eu-1 --label tier=edge\n  \
    flotilla override add Deployment/shop/web --cluster eu-1 \\\n      \
    --json-patch '{\"op\":\"add\",\"path\":\"/spec/paused\",\"value\":true}'\n\n",
    edit_exit_codes!()))]
pub struct OverrideAddArgs {
    /// The federated resource, as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    /// The clusters the rule applies to (comma-separated, repeatable).
    #[arg(long, value_name = "A,B")]
    pub cluster: Vec<String>,
    /// Instead of names, a cluster label selector in kubectl's -l syntax (Karmada only).
    #[arg(long, value_name = "SELECTOR")]
    pub cluster_selector: Option<String>,
    /// One RFC 6902 operation as JSON: `{"op":"replace","path":"/spec/replicas","value":3}`
    /// (op add, replace or remove), checked against the rendered object.
    #[arg(long, value_name = "JSON")]
    pub json_patch: Option<String>,
    /// Replace the registry of the first container's image.
    #[arg(long, value_name = "REGISTRY")]
    pub image_registry: Option<String>,
    /// Replace the repository of the first container's image.
    #[arg(long, value_name = "REPOSITORY")]
    pub image_repository: Option<String>,
    /// Replace the tag of the first container's image.
    #[arg(long, value_name = "TAG")]
    pub image_tag: Option<String>,
    /// Set /spec/replicas.
    #[arg(long, value_name = "N")]
    pub replicas: Option<u32>,
    /// Add (or replace) one label.
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Option<String>,
    /// Add (or replace) one annotation.
    #[arg(long, value_name = "KEY=VALUE")]
    pub annotation: Option<String>,
    /// Add an environment variable to the first container.
    #[arg(long, value_name = "NAME=VALUE")]
    pub env: Option<String>,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Args)]
pub struct OverrideRemoveArgs {
    /// The federated resource, as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    /// The rule's number in `flotilla override list KIND/NS/NAME` (from 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..).map(|n: u32| n as usize))]
    pub rule: usize,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Args)]
pub struct OverrideListArgs {
    /// The federated resource, as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    /// List the values rules write into a Secret as the fleet has them (they are masked as "***" otherwise).
    #[arg(long)]
    pub show_secrets: bool,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Undo restores the file (or hub object) exactly as it was before flotilla's last \
    edit of this fleet; run it again to go further back. It refuses (exit 2) when the file or object \
    changed since flotilla wrote it, so someone else's edit is never overwritten.\n\
    Exit codes: 0 restored (or nothing to undo); 1 --dry-run found changes; 2 refused or input error; 3 the hub could not be reached."
)]
pub struct UndoArgs {
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Needs --hub CONTEXT naming a Karmada hub. The scheduler may move the resource \
    to other clusters, so flotilla asks first on a terminal and without one needs --yes.\n\
    Exit codes: 0 asked; 1 --dry-run (something would be asked); 2 input error; 3 the hub could not be reached or refused."
)]
pub struct RescheduleArgs {
    /// The federated resource, as KIND/NAMESPACE/NAME (KIND/NAME when cluster-scoped).
    #[arg(value_name = "KIND/NS/NAME")]
    pub resource: String,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum OcmPlacementCommand {
    /// Change an Open Cluster Management Placement on the --hub: its cluster label and claim
    /// selectors, tolerations and numberOfClusters. Each flag given replaces that part; the
    /// rest stays as stored. The write is a JSON patch guarded by the Placement's
    /// resourceVersion, as the console's editor sends it.
    #[command(after_help = edit_exit_codes!())]
    Set(OcmPlacementSetArgs),
}

#[derive(Debug, Clone, Args)]
#[command(after_long_help = concat!("Examples:\n  \
    flotilla --hub ocm ocm-placement set default/web --cluster-selector env=prod\n  \
    flotilla --hub ocm ocm-placement set default/web --number-of-clusters 2 --dry-run\n  \
    flotilla --hub ocm ocm-placement set default/web --tolerate dedicated=gpu:NoSelect\n\n",
    edit_exit_codes!()))]
pub struct OcmPlacementSetArgs {
    /// The Placement, as NAMESPACE/NAME.
    #[arg(value_name = "NS/NAME")]
    pub placement: String,
    /// The label selector of its (single) predicate in kubectl's -l syntax; '' clears it.
    #[arg(long, value_name = "SELECTOR")]
    pub cluster_selector: Option<String>,
    /// The claim selector of its (single) predicate, in the same syntax; '' clears it.
    #[arg(long, value_name = "SELECTOR")]
    pub claim_selector: Option<String>,
    /// A toleration: `key=value:NoSelect`, `key:NoSelect for 300s`. The flags given replace
    /// every toleration; '' clears them.
    #[arg(long, value_name = "KEY=VALUE:EFFECT")]
    pub tolerate: Vec<String>,
    /// How many of the matching clusters to select; '' selects every match.
    #[arg(long, value_name = "N")]
    pub number_of_clusters: Option<String>,
    #[command(flatten)]
    pub edit: EditArgs,
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
        // Every numeric flag is range-checked by the parser: a usage error, never coerced.
        for bad in [
            &["flotilla", "apply", "--concurrency", "0"][..],
            &["flotilla", "apply", "--concurrency", "-3"],
            &["flotilla", "apply", "--concurrency", "1000000"],
            &["flotilla", "watch", "--interval", "0"],
            &["flotilla", "watch", "--stale-after", "0"],
            &[
                "flotilla",
                "override",
                "remove",
                "Deployment/a/b",
                "--rule",
                "0",
            ],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?} is refused");
        }
        let Ok(cli) = Cli::try_parse_from(["flotilla", "apply", "--concurrency", "1"]) else {
            panic!("1 is a concurrency");
        };
        assert!(matches!(
            cli.command,
            Some(Command::Apply(ApplyArgs { concurrency: 1, .. }))
        ));
        assert!(Cli::try_parse_from(["flotilla", "repair", "--ignore", "--path", "/spec"]).is_ok());
    }
}
