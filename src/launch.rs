//! Starting the console or the wall display: settings, theme and key map from the user's
//! config, the fleet, and the backend behind it (the simulated fleet for `--demo`, live
//! clusters otherwise), all handed to the console loop (`console`). A wall or `--readonly`
//! always gets a backend that cannot receive effects. It must not draw, read the terminal or
//! decide anything the app owns.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::app::session::Store;
use crate::app::state::{State, Wall};
use crate::app::{self, Session};
use crate::backend::hub;
use crate::backend::kube::live::{self, LiveFleet, LiveOptions};
use crate::backend::sim::{self, Scenario, SimCore};
use crate::cli::{GlobalArgs, WatchArgs, exit};
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;
use crate::config::{self, Settings};
use crate::console::{Console, Ended};
use crate::engine::{FederatedResource, Fleet, SourceFile, SourceLocation};
use crate::messages::{BackendEvent, CannotEdit, Effect, HubTraits};
use crate::model::HubKind;
use crate::source;

/// Runs the console (or, with `wall`, the read-only wall display) until the operator quits;
/// `ascii` draws it with ASCII only.
pub async fn run(global: &GlobalArgs, wall: Option<WatchArgs>, ascii: bool) -> anyhow::Result<u8> {
    if let Some(message) = no_terminal(wall.is_some()) {
        return Ok(refuse_without_terminal(global, &message));
    }
    let mut console = match console(global, wall).await {
        Ok(console) => console,
        Err(code) => return Ok(code),
    };
    console.ascii |= ascii;
    Ok(match console.run().await? {
        Ended::Quit => exit::OK,
        Ended::Signal(signal) => exit::of_signal(signal),
        Ended::StartFailed { error, input } => {
            eprintln!("error: {error}");
            if input { exit::INPUT } else { exit::PARTIAL }
        }
    })
}

/// Without a terminal the console does not start; what is wrong with the input is said
/// first (it is what to fix), then which command to run instead.
fn refuse_without_terminal(global: &GlobalArgs, message: &str) -> u8 {
    if let Err(code) = keymap_checked(global) {
        return code;
    }
    if global.hub.is_none()
        && !global.uses_demo()
        && let Err(err) = live_fleet(global)
    {
        return input_error(&err);
    }
    eprintln!("error: {message}");
    exit::INPUT
}

/// The console (or the wall display) ready to run, at once: the fleet is loaded and placed
/// (or the hub connected and read) in the background while the console draws, arrives as
/// [`BackendEvent::FleetLoaded`] (or [`BackendEvent::HubLoaded`]) and its backend starts
/// then; a start that fails arrives as [`BackendEvent::StartFailed`] and ends the console
/// with its exit status. `Err` is the exit status of a start refused before that (a bad key
/// map; the error already printed).
pub async fn console(global: &GlobalArgs, wall: Option<WatchArgs>) -> Result<Console, u8> {
    keymap_checked(global)?;
    let readonly = global.readonly || wall.is_some();
    let (events_tx, events) = mpsc::unbounded_channel();
    let (effects, effects_rx) = if readonly {
        crate::backend::read_only::reads_only()
    } else {
        mpsc::unbounded_channel()
    };
    let empty = Arc::new(Fleet::default());
    if let Some(context) = &global.hub {
        let kubeconfig = global.kubeconfig.clone();
        connect_hub_in_background(kubeconfig, context.clone(), readonly, events_tx, effects_rx);
        let loading = format!("connecting to hub {context} and reading it…");
        let session = |mut state: State| {
            state.loading = Some(loading);
            Session::new(state, Vec::new(), Some(effects), Store::Hub)
        };
        let label = format!("hub {context}");
        return Ok(show(global, wall, &empty, label, readonly, events, session));
    }
    if global.uses_demo() {
        let label = match global.demo_scale {
            Some(scale) => format!("demo-scale {}×{}", scale.clusters, scale.resources),
            None => "demo (simulated)".to_string(),
        };
        let loading = match global.demo_scale {
            Some(scale) => format!(
                "loading and placing {} clusters × {} resources…",
                scale.clusters, scale.resources
            ),
            None => "loading the fleet…".to_string(),
        };
        load_demo_in_background(global.clone(), events_tx, effects_rx);
        let session = |mut state: State| {
            state.loading = Some(loading);
            Session::new(state, Vec::new(), Some(effects), Store::Memory)
        };
        return Ok(show(global, wall, &empty, label, readonly, events, session));
    }
    let label = live_label(global);
    let wants_audit = wall.is_none();
    load_live_in_background(global.clone(), wants_audit, events_tx, effects_rx, readonly);
    let session = |mut state: State| {
        state.loading = Some("loading the fleet directory…".to_string());
        Session::new(state, Vec::new(), Some(effects), Store::Directory)
    };
    Ok(show(global, wall, &empty, label, readonly, events, session))
}

fn load_failed(events: &mpsc::UnboundedSender<BackendEvent>, error: String) {
    let _ = events.send(BackendEvent::StartFailed { error, input: true });
}

/// Connects to the hub and reads it ([`start_hub`]), hands what it found to the console,
/// then passes the console's effects on to the hub's backend.
fn connect_hub_in_background(
    kubeconfig: Option<std::path::PathBuf>,
    context: String,
    readonly: bool,
    events: mpsc::UnboundedSender<BackendEvent>,
    mut effects: mpsc::UnboundedReceiver<Effect>,
) {
    tokio::spawn(async move {
        let started = start_hub(kubeconfig.as_deref(), &context, readonly, events.clone()).await;
        let started = match started {
            Ok(started) => started,
            Err(err) => {
                let input = exit::of_hub(&err) == exit::INPUT;
                let error = err.to_string();
                let _ = events.send(BackendEvent::StartFailed { error, input });
                return;
            }
        };
        let loaded = BackendEvent::HubLoaded {
            fleet: crate::messages::SharedFleet(started.fleet),
            files: Arc::new(started.files),
            hub: Box::new(started.traits),
        };
        if events.send(loaded).is_err() {
            return;
        }
        while let Some(effect) = effects.recv().await {
            if started.effects.send(effect).is_err() {
                return;
            }
        }
    });
}

/// Loads the live fleet on a blocking thread (with the audit log when `wants_audit`, for the
/// drift view's owner-fight notes), hands it to the console, then starts the live backend on
/// `effects` from the same thread: laying out the cells of a big fleet takes seconds, which
/// must not hold up an async worker the console loop may be waiting on.
fn load_live_in_background(
    global: GlobalArgs,
    wants_audit: bool,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
    readonly: bool,
) {
    let on_panic = events.clone();
    let loading = tokio::task::spawn_blocking(move || {
        let live = match live_fleet(&global) {
            Ok((live, _)) => live,
            Err(err) => return load_failed(&events, err.to_string()),
        };
        let audit = if wants_audit {
            crate::backend::audit::read_entries()
        } else {
            Vec::new()
        };
        let loaded = BackendEvent::FleetLoaded {
            fleet: crate::messages::SharedFleet(live.fleet.clone()),
            files: Arc::new(live.files.clone()),
            audit: Arc::new(audit),
        };
        if events.send(loaded).is_ok() {
            live::spawn_on(live, events, effects, readonly);
        }
    });
    tokio::spawn(async move {
        if let Err(err) = loading.await {
            load_failed(&on_panic, format!("loading the fleet failed: {err}"));
        }
    });
}

/// Builds and places the demo fleet and its simulation on a blocking thread, hands the fleet
/// to the console, then starts the simulation.
fn load_demo_in_background(
    global: GlobalArgs,
    events: mpsc::UnboundedSender<BackendEvent>,
    effects: mpsc::UnboundedReceiver<Effect>,
) {
    tokio::spawn(async move {
        let built = tokio::task::spawn_blocking(move || {
            let loaded = source::load(&global)?;
            let scenario = if global.demo_scale.is_some() {
                Scenario::synthetic(&loaded.fleet.clusters, global.demo_seed)
            } else {
                Scenario::demo()
            };
            let core = SimCore::new(loaded.fleet.clone(), &scenario, global.demo_seed);
            Ok::<_, source::LoadError>((loaded, core))
        })
        .await;
        let (loaded, core) = match built.map_err(|err| err.to_string()) {
            Ok(Ok(built)) => built,
            Ok(Err(err)) => return load_failed(&events, format!("the demo did not load: {err}")),
            Err(err) => return load_failed(&events, format!("the demo did not load: {err}")),
        };
        let loaded_event = BackendEvent::FleetLoaded {
            fleet: crate::messages::SharedFleet(loaded.fleet),
            files: Arc::new(loaded.files),
            audit: Arc::default(),
        };
        if events.send(loaded_event).is_ok() {
            sim::spawn_on(core, events, Some(effects));
        }
    });
}

/// What to say when the console (or the wall) has no terminal to draw on and read keys from:
/// which command to run instead. `None` when stdin and stdout are terminals.
fn no_terminal(wall: bool) -> Option<String> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return None;
    }
    let what = if wall {
        "flotilla watch"
    } else {
        "the flotilla console"
    };
    Some(format!(
        "{what} needs a terminal (stdin and stdout are not one)\n  hint: for scripts use `flotilla render`, `plan`, `drift` or `clusters` (-o json|yaml)"
    ))
}

/// Dresses the state (settings, theme, key map, wall) and puts the console together.
fn show(
    global: &GlobalArgs,
    wall: Option<WatchArgs>,
    fleet: &Arc<Fleet>,
    label: String,
    readonly: bool,
    events: mpsc::UnboundedReceiver<BackendEvent>,
    session: impl FnOnce(State) -> Session,
) -> Console {
    let (mut state, theme, keymap) = dressed_state(global, fleet, label);
    state.readonly = readonly;
    let ascii = wall.as_ref().is_some_and(|args| args.ascii);
    if let Some(args) = &wall {
        state.wall = Some(Wall {
            page_every_ms: args.interval.saturating_mul(1000),
            stale_after_ms: args.stale_after.saturating_mul(1000),
            ascii: args.ascii,
            ..Wall::default()
        });
        if args.group_by.is_some() {
            state.group_by.clone_from(&args.group_by);
        }
    }
    // The wall only reads: it has no exec to hand the terminal to.
    let handoff: Option<crate::console::Handoff> = wall.is_none().then(|| {
        let global = global.clone();
        Box::new(move |handoff| {
            let global = global.clone();
            Box::pin(async move { crate::commands::exec::in_console(&global, handoff).await })
                as std::pin::Pin<Box<dyn std::future::Future<Output = String> + Send>>
        }) as crate::console::Handoff
    });
    Console {
        session: session(state),
        theme,
        keymap,
        ascii,
        events,
        handoff,
        clipboard: None,
    }
}

/// A hub session's beginnings: the fleet the console shows, the texts its editors edit, the
/// backend's effect channel, and what the hub is and allows (`traits.readonly`: the console
/// may only look, asked for or on a hub flotilla cannot edit).
pub struct HubStart {
    pub fleet: Arc<Fleet>,
    pub files: Vec<SourceFile>,
    /// Where effects go; a read-only backend's channel takes only the object view's reads.
    pub effects: mpsc::UnboundedSender<Effect>,
    pub traits: HubTraits,
}

impl HubStart {
    /// The console's session on this hub, from `state` (made from this fleet): the hub's
    /// label, kind, first notice, what it cannot edit and (on OCM) its Placements.
    pub fn session(self, mut state: State) -> Session {
        state.take_hub(self.traits);
        Session::new(state, self.files, Some(self.effects), Store::Hub)
    }
}

/// Connects to a hub, reads it once, and starts its backend. On a Karmada hub the fleet is
/// the hub's own (its Clusters, the templates its bindings name and every policy), on a
/// KubeFed hub its KubeFedClusters, type configs and Federated objects, so the editors work
/// on it and confirmed edits go back to the hub. On an OCM hub the rows are the objects its
/// ManifestWorks deliver and the editor edits its Placements; a Karmada or KubeFed fleet the
/// engine cannot load is shown read-only, its rows the objects the hub delivers.
pub async fn start_hub(
    kubeconfig: Option<&std::path::Path>,
    context: &str,
    readonly: bool,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> Result<HubStart, hub::HubError> {
    let hub = hub::connect(kubeconfig, context, LiveOptions::default().timeouts).await?;
    let mut first = hub::console::first_view::first_view(&hub).await?;
    let label = hub.label();
    let kind = hub.kind;
    let mut notice = None;
    let mut cannot_edit = CannotEdit {
        overrides: hub.kind.no_overrides().map(str::to_string),
        placements: None,
        reschedule: hub.kind.no_reschedule().map(str::to_string),
    };
    if matches!(hub.kind, HubKind::Karmada | HubKind::KubeFed) {
        match hub.fleet().await {
            Ok((fleet, files)) => {
                let targets: Vec<_> = fleet.resources.iter().map(|r| r.target.clone()).collect();
                first.view = hub::in_rows_of(&targets, first.view);
                let fleet = Arc::new(fleet);
                let effects = if readonly {
                    hub::console::spawn_readonly(hub, first, Some(fleet.clone()), events)
                } else {
                    hub::console::spawn(hub, first, Some(fleet.clone()), events)
                };
                return Ok(HubStart {
                    fleet,
                    files,
                    effects,
                    traits: HubTraits {
                        label,
                        kind,
                        readonly,
                        notice,
                        cannot_edit,
                        placements: None,
                    },
                });
            }
            Err(reason) => {
                notice = Some(format!("read-only: {reason}"));
            }
        }
    }
    let dialect = hub.kind.dialect();
    let mut fleet = Fleet::default();
    let view = &first.view;
    fleet.clusters = view.clusters.iter().map(|(spec, _)| spec.clone()).collect();
    fleet.resources = view
        .rows
        .iter()
        .map(|row| FederatedResource {
            target: row.target.clone(),
            dialect,
            source: SourceLocation {
                file: row.source.clone(),
                line: 1,
            },
        })
        .collect();
    // On OCM the console edits Placements (the rows stay the ManifestWorks' objects).
    let placements = if hub.kind == HubKind::OpenClusterManagement && !readonly {
        match hub::ocm::placement_world(&hub.client).await {
            Ok((world, problems)) => {
                if let Some(problem) = problems.first() {
                    notice = Some(format!("some cluster sets are left out: {problem}"));
                }
                Some(Arc::new(world))
            }
            Err(err) => {
                cannot_edit.placements =
                    Some(format!("the hub's Placements could not be read: {err}"));
                None
            }
        }
    } else {
        None
    };
    let readonly = placements.is_none();
    let effects = if readonly {
        hub::console::spawn_readonly(hub, first, None, events)
    } else {
        hub::console::spawn(hub, first, None, events)
    };
    Ok(HubStart {
        fleet: Arc::new(fleet),
        files: Vec::new(),
        effects,
        traits: HubTraits {
            label,
            kind,
            readonly,
            notice,
            cannot_edit,
            placements,
        },
    })
}

fn input_error(err: &dyn std::fmt::Display) -> u8 {
    eprintln!("error: {err}");
    exit::INPUT
}

/// The header's name for a live fleet, known before it is loaded.
fn live_label(global: &GlobalArgs) -> String {
    if global.fleet.is_dir() {
        format!("fleet {} · live", global.fleet.display())
    } else {
        format!("contexts {} · live", global.contexts.join(","))
    }
}

/// The live fleet of raw-contexts mode: the fleet directory's inventory and resources, or
/// (without one) exactly the contexts `--context` names, with no resources. Inventory
/// clusters that `--context` leaves out stay in the fleet (placement depends on them) but
/// are not connected.
pub fn live_fleet(global: &GlobalArgs) -> Result<(LiveFleet, String), source::LoadError> {
    let inventory = source::live_inventory(global)?;
    let fleet = match inventory.fleet {
        Some(fleet) => fleet,
        None => {
            let mut clusters = inventory.clusters.clone();
            clusters.sort_by(|a, b| a.name.cmp(&b.name));
            let mut fleet = Fleet::default();
            fleet.clusters = clusters;
            Arc::new(fleet)
        }
    };
    let skip = fleet
        .clusters
        .iter()
        .map(|spec| {
            (!inventory.clusters.iter().any(|c| c.name == spec.name))
                .then(|| "not connected: not selected by --context".to_string())
        })
        .collect();
    Ok((
        LiveFleet {
            fleet,
            files: inventory.files,
            kubeconfig: inventory.kubeconfig,
            skip,
            profiles: global.profiles.clone(),
            options: LiveOptions::default(),
            failures: crate::backend::audit::last_failures(&crate::backend::audit::read_entries()),
        },
        live_label(global),
    ))
}

/// Prints the errors of the user's key map file, if it has any, and gives the exit status:
/// the console does not start on a map that would leave a key doing something else than
/// the file says.
fn keymap_checked(global: &GlobalArgs) -> Result<(), u8> {
    let Err(errors) = check_keymap(global) else {
        return Ok(());
    };
    for error in errors {
        eprintln!("error: {error}");
    }
    eprintln!(
        "  hint: fix the lines named above; the shipped keymaps/default.yaml shows every section"
    );
    Err(exit::INPUT)
}

/// The errors of the user's key map file, if it has any: the console does not start on a map
/// that would leave a key doing something else than the file says.
fn check_keymap(global: &GlobalArgs) -> Result<(), Vec<String>> {
    let user_dir = config::user_dir();
    let (settings, _) = Settings::load(user_dir.as_deref());
    let name = settings.keymap_name(global.keymap.as_deref());
    let keymap = Keymap::load(&name, user_dir.as_deref());
    if keymap.errors.is_empty() {
        Ok(())
    } else {
        Err(keymap.errors)
    }
}

/// The initial state with the user's settings, theme and key map applied.
fn dressed_state(global: &GlobalArgs, fleet: &Arc<Fleet>, label: String) -> (State, Theme, Keymap) {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let user_dir = config::user_dir();
    let (settings, settings_warnings) = Settings::load(user_dir.as_deref());
    let theme_name = settings.theme_name(global.theme.as_deref());
    let theme = Theme::load_with_user(Some(&theme_name), no_colour, user_dir.as_deref());
    let keymap_name = settings.keymap_name(global.keymap.as_deref());
    let keymap = Keymap::load(&keymap_name, user_dir.as_deref());
    let mut state = app::state_for_fleet(fleet, label);
    state.danger_patterns = settings.danger_patterns();
    state.wave_gate = settings.wave_gate();
    state.warnings = settings_warnings
        .iter()
        .chain(&theme.warnings)
        .chain(&keymap.warnings)
        .cloned()
        .collect();
    for warning in &state.warnings {
        tracing::warn!("{warning}");
    }
    (state, theme, keymap)
}
