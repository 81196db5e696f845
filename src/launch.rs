//! Starting the console or the wall display: settings, theme and key map from the user's
//! config, the fleet, and the backend behind it (the simulated fleet for `--demo`, live
//! clusters otherwise), all handed to the app loop. A wall or `--readonly` always gets a
//! backend that cannot receive effects. It must not draw or decide anything the app owns.

use std::sync::Arc;

use tokio::sync::mpsc;

use crate::app::state::{State, Wall};
use crate::app::{self, Console, Session};
use crate::backend::BackendEvent;
use crate::backend::Effect;
use crate::backend::hub::{self, HubKind};
use crate::backend::kube::live::{self, LiveFleet, LiveOptions};
use crate::backend::sim::{self, Scenario, SimCore};
use crate::cli::{GlobalArgs, WatchArgs, exit};
use crate::config::keymap::Keymap;
use crate::config::theme::Theme;
use crate::config::{self, Settings};
use crate::engine::{FederatedResource, Fleet, SourceLocation};
use crate::model::Dialect;
use crate::source;

/// Runs the console (or, with `wall`, the read-only wall display) until the operator quits.
pub async fn run(global: &GlobalArgs, wall: Option<WatchArgs>) -> anyhow::Result<u8> {
    let readonly = global.readonly || wall.is_some();
    let (events_tx, events) = mpsc::unbounded_channel();
    if let Some(hub) = &global.hub {
        let (fleet, label) = match start_hub(global, hub, events_tx).await {
            Ok(started) => started,
            Err(code) => return Ok(code),
        };
        // Hub mode shows what the hub's controllers do; editing its policies comes later.
        let session = |state| Session {
            state,
            effects: None,
            fleet: fleet.clone(),
            files: Vec::new(),
            persist: false,
        };
        return show(global, wall, &fleet, label, true, events, session).await;
    }
    let persist = !global.uses_demo();
    let (fleet, files, label, effects) = if global.uses_demo() {
        let loaded = match source::load(global) {
            Ok(loaded) => loaded,
            Err(err) => return Ok(input_error(&err)),
        };
        let scenario = if global.demo_scale.is_some() {
            Scenario::synthetic(&loaded.fleet.clusters, global.demo_seed)
        } else {
            Scenario::demo()
        };
        let core = SimCore::new(loaded.fleet.clone(), &scenario, global.demo_seed);
        let effects = start_sim(core, events_tx, readonly);
        (loaded.fleet, loaded.files, loaded.label, effects)
    } else {
        let (live, label) = match live_fleet(global) {
            Ok(found) => found,
            Err(err) => return Ok(input_error(&err)),
        };
        let fleet = live.fleet.clone();
        let files = live.files.clone();
        let effects = start_live(live, events_tx, readonly);
        (fleet, files, label, effects)
    };
    let session = |state| Session {
        state,
        effects,
        fleet: fleet.clone(),
        files,
        persist,
    };
    show(global, wall, &fleet, label, readonly, events, session).await
}

/// Dresses the state (settings, theme, key map, wall) and runs the console loop on it.
async fn show(
    global: &GlobalArgs,
    wall: Option<WatchArgs>,
    fleet: &Fleet,
    label: String,
    readonly: bool,
    events: mpsc::UnboundedReceiver<BackendEvent>,
    session: impl FnOnce(State) -> Session,
) -> anyhow::Result<u8> {
    let (mut state, theme, keymap) = dressed_state(global, fleet, label);
    state.readonly = readonly;
    if !global.uses_demo() && global.hub.is_none() && wall.is_none() {
        // Reverts of earlier sessions, for owner-fight notes in the drift view.
        app::drift::remember_reverts(&mut state, &crate::audit::read_entries());
    }
    let ascii = wall.as_ref().is_some_and(|args| args.ascii);
    if let Some(args) = &wall {
        state.wall = Some(Wall {
            page_every_ms: args.interval.saturating_mul(1000),
            stale_after_ms: args.stale_after.saturating_mul(1000),
            ascii: args.ascii,
            ..Wall::default()
        });
    }
    Console {
        session: session(state),
        theme,
        keymap,
        ascii,
        events,
    }
    .run()
    .await?;
    Ok(exit::OK)
}

/// Connects to a hub, reads it once, and starts its read-only backend. The fleet's clusters
/// are the hub's members and its resources the objects the hub delivers to them.
async fn start_hub(
    global: &GlobalArgs,
    context: &str,
    events: mpsc::UnboundedSender<BackendEvent>,
) -> Result<(Arc<Fleet>, String), u8> {
    let failed = |err: hub::HubError| {
        eprintln!("error: {err}");
        err.code
    };
    let hub = hub::connect(
        global.kubeconfig.as_deref(),
        context,
        LiveOptions::default().timeouts,
    )
    .await
    .map_err(failed)?;
    let view = hub.read().await.map_err(failed)?;
    let dialect = match hub.kind {
        HubKind::KubeFed => Dialect::KubeFed,
        HubKind::Karmada | HubKind::OpenClusterManagement => Dialect::Karmada,
    };
    let mut fleet = Fleet::default();
    fleet.clusters = view.clusters.iter().map(|(spec, _)| spec.clone()).collect();
    fleet.resources = view
        .rows
        .iter()
        .map(|row| FederatedResource {
            target: row.target.clone(),
            dialect,
            source: SourceLocation {
                file: format!("hub {context}: {}", row.source),
                line: 1,
            },
        })
        .collect();
    let label = hub.label();
    hub::poll::spawn_readonly(hub, view, events);
    Ok((Arc::new(fleet), label))
}

fn input_error(err: &dyn std::fmt::Display) -> u8 {
    eprintln!("error: {err}");
    exit::INPUT
}

fn start_sim(
    core: SimCore,
    events: mpsc::UnboundedSender<BackendEvent>,
    readonly: bool,
) -> Option<mpsc::UnboundedSender<Effect>> {
    if readonly {
        sim::spawn_readonly(core, events);
        None
    } else {
        Some(sim::spawn(core, events))
    }
}

fn start_live(
    live: LiveFleet,
    events: mpsc::UnboundedSender<BackendEvent>,
    readonly: bool,
) -> Option<mpsc::UnboundedSender<Effect>> {
    if readonly {
        live::spawn_readonly(live, events);
        None
    } else {
        Some(live::spawn(live, events))
    }
}

/// The live fleet of raw-contexts mode: the fleet directory's inventory and resources, or
/// (without one) exactly the contexts `--context` names, with no resources. Inventory
/// clusters that `--context` leaves out stay in the fleet (placement depends on them) but
/// are not connected.
pub fn live_fleet(global: &GlobalArgs) -> Result<(LiveFleet, String), source::LoadError> {
    let inventory = source::live_inventory(global)?;
    let (fleet, label) = match inventory.fleet {
        Some(fleet) => (fleet, format!("fleet {} · live", global.fleet.display())),
        None => {
            let mut clusters = inventory.clusters.clone();
            clusters.sort_by(|a, b| a.name.cmp(&b.name));
            let mut fleet = Fleet::default();
            fleet.clusters = clusters;
            (
                Arc::new(fleet),
                format!("contexts {} · live", global.contexts.join(",")),
            )
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
            options: LiveOptions::default(),
        },
        label,
    ))
}

/// The initial state with the user's settings, theme and key map applied.
fn dressed_state(global: &GlobalArgs, fleet: &Fleet, label: String) -> (State, Theme, Keymap) {
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let user_dir = config::user_dir();
    let (settings, settings_warnings) = Settings::load(user_dir.as_deref());
    let theme_name = global.theme.clone().or(settings.theme.clone());
    let theme = Theme::load_with_user(theme_name.as_deref(), no_colour, user_dir.as_deref());
    let keymap_name = global
        .keymap
        .clone()
        .or(settings.keymap.clone())
        .unwrap_or_else(|| "default".into());
    let keymap = Keymap::load(&keymap_name, user_dir.as_deref());
    let mut state = app::state_for_fleet(fleet, label);
    state.danger_patterns = settings.danger_patterns();
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
