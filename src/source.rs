//! Choosing and loading the fleet a command works on: the embedded demo, a synthetic fleet of
//! a given size, or a fleet directory on disk. This is the engine's file boundary: it reads
//! files and hands their text to the engine; it must not interpret them itself.

use std::path::Path;
use std::sync::Arc;

use kube::config::Kubeconfig;

use crate::backend::cluster_profiles::ProviderFile;
use crate::backend::hub::HubError;
use crate::backend::kube::kubeconfig::{self, KubeconfigError};
use crate::backend::kube::profile_inventory::ProfileInventory;
use crate::cli::{GlobalArgs, InventorySource};
use crate::engine::{Fleet, FleetError, SourceFile, load_fleet};
use crate::fleet::demo;
use crate::model::ClusterSpec;

/// A loaded fleet and how to name where it came from.
pub struct LoadedFleet {
    pub fleet: Arc<Fleet>,
    /// e.g. "demo (simulated)", "demo-scale 2000×1000", "fleet ./fleet".
    pub label: String,
    /// True when the clusters are simulated.
    pub simulated: bool,
    /// The texts the fleet was loaded from (editors need them).
    pub files: Vec<SourceFile>,
}

/// Why a fleet could not be loaded; every variant is an input error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "cannot read fleet directory {path}: {reason}\n  hint: pass --fleet DIR with your fleet files, or --demo for the simulated fleet"
    )]
    Unreadable {
        path: String,
        reason: crate::fleet::dir::DirError,
    },
    #[error("{}", render_fleet_errors(.0))]
    Invalid(Vec<FleetError>),
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
    #[error(
        "no clusters: {reason}\n  hint: declare clusters in the fleet directory (Karmada Cluster or KubeFed KubeFedCluster objects), or name kubeconfig contexts with --context GLOB; to look around first, `flotilla demo` opens a simulated fleet"
    )]
    NoClusters { reason: String },
}

fn render_fleet_errors(errors: &[FleetError]) -> String {
    let mut text = format!("the fleet has {} error(s):", errors.len());
    for error in errors {
        text.push_str(&format!("\n  {error}"));
    }
    text
}

/// Loads the fleet the global flags name. Errors in the files are returned whole.
pub fn load(global: &GlobalArgs) -> Result<LoadedFleet, LoadError> {
    let (files, label, simulated) = if let Some(scale) = global.demo_scale {
        (
            demo::synthetic_fleet(scale.clusters, scale.resources),
            format!("demo-scale {}×{}", scale.clusters, scale.resources),
            true,
        )
    } else if global.demo {
        (demo::demo_files(), "demo (simulated)".to_string(), true)
    } else {
        let files = with_inventories(global, read_fleet_dir(&global.fleet)?);
        (files, format!("fleet {}", global.fleet.display()), false)
    };
    let (fleet, errors) = load_fleet(&files);
    if !errors.is_empty() {
        return Err(LoadError::Invalid(errors));
    }
    crate::engine::fleet::interpreted::use_for_health(&fleet);
    Ok(LoadedFleet {
        fleet: Arc::new(fleet),
        label,
        simulated,
        files,
    })
}

/// Every `*.yaml` / `*.yml` below `dir`, in path order so loading is reproducible.
pub fn read_fleet_dir(dir: &Path) -> Result<Vec<SourceFile>, LoadError> {
    crate::fleet::dir::read_fleet_dir(dir).map_err(|reason| LoadError::Unreadable {
        path: dir.display().to_string(),
        reason,
    })
}

/// Reads the ClusterProfiles `--inventory clusterprofiles:CONTEXT` names (with the access
/// providers' credentials `--clusterprofile-provider-file` names), or `None` without the flag.
pub async fn read_profiles(global: &GlobalArgs) -> Result<Option<ProfileInventory>, HubError> {
    let Some(InventorySource::ClusterProfiles { context }) = &global.inventory else {
        return Ok(None);
    };
    if global.uses_demo() || global.hub.is_some() {
        return Err(HubError::Input(format!(
            "--inventory {}: the simulated fleet and --hub bring their own clusters
  hint: drop --inventory, or drop --demo / --hub",
            crate::backend::cluster_profiles::INVENTORY_FORM
        )));
    }
    let providers = match &global.clusterprofile_provider_file {
        Some(path) => ProviderFile::read(path).map_err(|reason| {
            HubError::Input(format!("--clusterprofile-provider-file: {reason}"))
        })?,
        None => ProviderFile::default(),
    };
    let kubeconfig = kubeconfig::load(global.kubeconfig.as_deref())
        .map_err(|err| HubError::Input(err.to_string()))?;
    crate::backend::cluster_profiles::read(
        &kubeconfig,
        context,
        &providers,
        crate::backend::kube::kubeconfig::Timeouts::default(),
    )
    .await
    .map(Some)
}

/// The fleet directory's files with the inventories the flags bring after them: the
/// ClusterProfiles `--inventory` read, and the contexts `--context` selects (which the engine
/// takes only for a fleet that declares no clusters of its own).
pub fn with_inventories(global: &GlobalArgs, mut files: Vec<SourceFile>) -> Vec<SourceFile> {
    if let Some(profiles) = &global.profiles {
        files.extend(profiles.files.iter().cloned());
    }
    files.extend(contexts_inventory(global));
    files
}

/// The fleet directory `--fleet` names, read, with [`with_inventories`]'s documents.
pub fn fleet_files(global: &GlobalArgs) -> Result<Vec<SourceFile>, crate::fleet::dir::DirError> {
    crate::fleet::dir::read_fleet_dir(&global.fleet).map(|files| with_inventories(global, files))
}

/// The contexts `--context` selects, as an inventory; none without the flag, on the
/// simulated fleet or a hub, or when the kubeconfig does not read or a glob matches nothing
/// (the commands that need the contexts report that themselves).
fn contexts_inventory(global: &GlobalArgs) -> Option<SourceFile> {
    if global.contexts.is_empty() || global.uses_demo() || global.hub.is_some() {
        return None;
    }
    let kubeconfig = kubeconfig::load(global.kubeconfig.as_deref()).ok()?;
    let contexts = kubeconfig::select_contexts(&kubeconfig, &global.contexts).ok()?;
    Some(crate::engine::fleet::inventory::contexts_file(
        &global.contexts,
        &contexts,
    ))
}

/// The clusters of a live fleet and the kubeconfig that reaches them.
pub struct LiveInventory {
    pub clusters: Vec<ClusterSpec>,
    pub kubeconfig: Kubeconfig,
    /// The fleet directory's contents, when there is one.
    pub fleet: Option<Arc<Fleet>>,
    /// The texts the fleet was loaded from.
    pub files: Vec<SourceFile>,
}

/// Fleet membership for raw-contexts mode (design §2): the fleet directory's inventory, or,
/// without one, exactly the contexts `--context` names. Never every context implicitly.
pub fn live_inventory(global: &GlobalArgs) -> Result<LiveInventory, LoadError> {
    let (fleet, files) = if global.fleet.is_dir() {
        let files = with_inventories(global, read_fleet_dir(&global.fleet)?);
        let (fleet, errors) = load_fleet(&files);
        if !errors.is_empty() {
            return Err(LoadError::Invalid(errors));
        }
        crate::engine::fleet::interpreted::use_for_health(&fleet);
        (Some(Arc::new(fleet)), files)
    } else {
        (None, Vec::new())
    };
    let mut clusters = match (&fleet, &global.profiles) {
        (Some(fleet), _) => fleet.clusters.clone(),
        (None, Some(profiles)) => {
            let (fleet, errors) = load_fleet(&profiles.files);
            if !errors.is_empty() {
                return Err(LoadError::Invalid(errors));
            }
            fleet.clusters
        }
        (None, None) => Vec::new(),
    };
    if clusters.is_empty() && global.contexts.is_empty() {
        let reason = match (&fleet, &global.profiles) {
            (_, Some(profiles)) => {
                format!("the hub context {} holds no ClusterProfiles", profiles.hub)
            }
            (Some(_), None) => format!(
                "the fleet directory {} has no cluster inventory",
                global.fleet.display()
            ),
            (None, None) => format!("there is no fleet directory {}", global.fleet.display()),
        };
        return Err(LoadError::NoClusters { reason });
    }
    let mut kubeconfig = kubeconfig::load(global.kubeconfig.as_deref())?;
    if let Some(profiles) = &global.profiles {
        profiles.extend_kubeconfig(&mut kubeconfig);
    }
    if clusters.is_empty() {
        clusters = kubeconfig::select_contexts(&kubeconfig, &global.contexts)?
            .into_iter()
            .map(|context| ClusterSpec {
                name: context.clone(),
                context,
                ..ClusterSpec::default()
            })
            .collect();
    } else if !global.contexts.is_empty() {
        clusters.retain(|spec| {
            global
                .contexts
                .iter()
                .any(|pattern| kubeconfig::glob_match(pattern, &spec.context))
        });
    }
    Ok(LiveInventory {
        clusters,
        kubeconfig,
        fleet,
        files,
    })
}

/// Why the health rules named on the command line cannot be used; an input error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum HealthRulesError {
    #[error("{0}")]
    Read(#[from] crate::config::health_rules::HealthRulesError),
    #[error("--health-rules {0}")]
    Load(#[from] crate::engine::health::rules::RuleLoadError),
}

/// Reads the health rules of `--health-rules` and the user's configuration directory and
/// installs them for every assessment in this process. Rules the user's directory holds that
/// cannot be used are left out with a warning (returned); those named on the command line
/// are an error.
pub fn install_health_rules(global: &GlobalArgs) -> Result<Vec<String>, HealthRulesError> {
    use crate::config::health_rules;
    use crate::engine::health::{self, Rules};
    let (named, _) = health_rules::read(&global.health_rules, None)?;
    let named_rules = Rules::from_sources(&named)?;
    let config_dir = crate::config::user_dir();
    let (user, mut warnings) = health_rules::read(&[], config_dir.as_deref())?;
    let rules = if user.is_empty() {
        named_rules
    } else {
        let all: Vec<_> = named.into_iter().chain(user).collect();
        Rules::from_sources(&all).unwrap_or_else(|error| {
            warnings.push(format!(
                "health rules of the configuration directory left out: {error}"
            ));
            named_rules
        })
    };
    health::install(rules);
    Ok(warnings)
}
