//! The `flotilla` binary: parse the command line, set up logging, run one command, and turn
//! the outcome into an exit code. Nothing else lives here.

use std::process::ExitCode;

use clap::Parser;
use tokio::sync::mpsc;

use flotilla::app::state::Wall;
use flotilla::app::{self, Console};
use flotilla::backend::sim::{self, Scenario, SimCore};
use flotilla::cli::{Cli, Command, GlobalArgs, WatchArgs, exit};
use flotilla::commands::render::FleetInput;
use flotilla::config::keymap::Keymap;
use flotilla::config::theme::Theme;
use flotilla::config::{self, Settings};
use flotilla::{commands, logging, source};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // clap prints usage errors with exit 2 and help/version with exit 0.
        Err(err) => err.exit(),
    };
    let command = cli.command.clone().unwrap_or(Command::Console);
    let _log_guard = match logging::init(cli.global.log_file.as_deref()) {
        Ok(guard) => Some(guard),
        Err(warning) => {
            eprintln!("warning: {warning}; continuing without a log");
            None
        }
    };
    tracing::info!(command = command.name(), "flotilla starting");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::from(exit::INPUT);
        }
    };
    let code = runtime.block_on(run(cli.global, command));
    match code {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("error: {err:#}");
            ExitCode::from(exit::INPUT)
        }
    }
}

async fn run(mut global: GlobalArgs, command: Command) -> anyhow::Result<u8> {
    if matches!(command, Command::Demo) {
        global.demo = true;
    }
    match command {
        Command::Console | Command::Demo => console(&global, None).await,
        Command::Watch(args) => console(&global, Some(args)).await,
        Command::Clusters if global.uses_demo() => {
            let loaded = match source::load(&global) {
                Ok(loaded) => loaded,
                Err(err) => return Ok(input_error(&err)),
            };
            commands::clusters::run_demo(&global, &loaded, &mut std::io::stdout().lock())
        }
        Command::Clusters => {
            let inventory = match source::live_inventory(&global) {
                Ok(inventory) => inventory,
                Err(err) => return Ok(input_error(&err)),
            };
            commands::clusters::run_live(&global, inventory, &mut std::io::stdout()).await
        }
        Command::Render(args) => {
            let input = if let Some(scale) = global.demo_scale {
                FleetInput::Files(flotilla::demo_fleet::synthetic_fleet(
                    scale.clusters,
                    scale.resources,
                ))
            } else if global.demo {
                FleetInput::Files(flotilla::demo_fleet::demo_files())
            } else {
                FleetInput::Dir(&global.fleet)
            };
            let code = commands::render::run_render(
                input,
                &args.clusters,
                global.output,
                args.keep_going,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            );
            Ok(u8::try_from(code).unwrap_or(exit::INPUT))
        }
        Command::Plan(_) | Command::Apply(_) | Command::Drift(_) | Command::Repair(_)
            if global.uses_demo() =>
        {
            eprintln!(
                "not implemented yet: {} on the simulated fleet; use the console (`flotilla demo`)",
                command.name()
            );
            Ok(exit::INPUT)
        }
        Command::Plan(args) => {
            commands::propagate::run_plan(&global, &args, &mut std::io::stdout()).await
        }
        Command::Apply(args) => {
            commands::propagate::run_apply(&global, &args, &mut std::io::stdout()).await
        }
        Command::Drift(scope) => {
            commands::propagate::run_drift(&global, &scope, &mut std::io::stdout()).await
        }
        Command::Repair(args) => {
            commands::repair::run_repair(&global, &args, &mut std::io::stdout()).await
        }
    }
}

fn input_error(err: &dyn std::fmt::Display) -> u8 {
    eprintln!("error: {err}");
    exit::INPUT
}

/// The console, or with `wall` the read-only wall display on the same state and views.
async fn console(global: &GlobalArgs, wall: Option<WatchArgs>) -> anyhow::Result<u8> {
    if !global.uses_demo() {
        let what = if wall.is_some() { "watch" } else { "console" };
        eprintln!(
            "not implemented yet: {what} on live clusters; try `flotilla {what} --demo` for the simulated fleet"
        );
        return Ok(exit::INPUT);
    }
    let loaded = match source::load(global) {
        Ok(loaded) => loaded,
        Err(err) => return Ok(input_error(&err)),
    };
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
    let mut state = app::state_for_fleet(&loaded.fleet, loaded.label.clone());
    state.readonly = global.readonly;
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
    let scenario = if global.demo_scale.is_some() {
        Scenario::synthetic(&loaded.fleet.clusters, global.demo_seed)
    } else {
        Scenario::demo()
    };
    let core = SimCore::new(loaded.fleet.clone(), &scenario, global.demo_seed);
    let (events_tx, events) = mpsc::unbounded_channel();
    let ascii = wall.as_ref().is_some_and(|args| args.ascii);
    let effects = match &wall {
        Some(args) => {
            state.readonly = true;
            state.wall = Some(Wall {
                page_every_ms: args.interval.saturating_mul(1000),
                stale_after_ms: args.stale_after.saturating_mul(1000),
                ascii: args.ascii,
                ..Wall::default()
            });
            sim::spawn_readonly(core, events_tx);
            None
        }
        None if global.readonly => {
            sim::spawn_readonly(core, events_tx);
            None
        }
        None => Some(sim::spawn(core, events_tx)),
    };
    Console {
        state,
        theme,
        keymap,
        ascii,
        events,
        effects,
        fleet: loaded.fleet,
    }
    .run()
    .await?;
    Ok(exit::OK)
}
