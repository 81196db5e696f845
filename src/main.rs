//! The `flotilla` binary: parse the command line, set up logging, run one command, and turn
//! the outcome into an exit code. Nothing else lives here.

use std::process::ExitCode;

use clap::Parser;

use flotilla::cli::{
    Cli, Command, ConsoleArgs, GlobalArgs, OcmPlacementCommand, OverrideCommand, PlacementCommand,
    RenderArgs, exit,
};
use flotilla::commands::render::FleetInput;
use flotilla::{commands, launch, logging, source};

fn main() -> ExitCode {
    // The shell asking for completion candidates: answer before anything else runs.
    if let Some(code) = commands::shell::completion::complete_if_asked() {
        return ExitCode::from(code);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // clap prints usage errors with exit 2 and help/version with exit 0.
        Err(err) => err.exit(),
    };
    let command = cli
        .command
        .clone()
        .unwrap_or(Command::Console(ConsoleArgs::default()));
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
    // The console turns signals into a clean quit itself, and exec ends its command and
    // restores the terminal first; any other command ends at once.
    let console = matches!(
        command,
        Command::Console(_) | Command::Demo(_) | Command::Watch(_) | Command::Exec(_)
    );
    let code = runtime.block_on(async {
        if !console {
            tokio::spawn(end_on_signal());
        }
        run(cli.global, command).await
    });
    match code {
        Ok(code) => ExitCode::from(code),
        // The reader went away (`flotilla … | head`): what it wanted, it got.
        Err(err) if is_broken_pipe(&err) => ExitCode::from(exit::OK),
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("error: {err:#}");
            ExitCode::from(exit::INPUT)
        }
    }
}

/// Whether an error comes from writing to a pipe whose reader closed it.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

async fn run(mut global: GlobalArgs, command: Command) -> anyhow::Result<u8> {
    if matches!(command, Command::Demo(_)) {
        global.demo = true;
    }
    // One check for every writer: a writing command is refused before it starts, and every
    // fleet write in this process is refused should one be reached anyway.
    if global.readonly {
        flotilla::fleet::save::forbid_writes();
        if let Command::Exec(args) = &command {
            eprintln!(
                "error: exec runs a command inside a pod on {}, which can change anything there, and --readonly forbids it\n  hint: drop --readonly; `flotilla pods` and `flotilla status` only read",
                args.cluster
            );
            return Ok(exit::INPUT);
        }
        if command.writes() {
            eprintln!(
                "error: {} writes, and {}\n  hint: drop --readonly, or preview with --dry-run (plan, drift and status only read)",
                command.name(),
                flotilla::fleet::save::READ_ONLY_REFUSAL
            );
            return Ok(exit::INPUT);
        }
    }
    match source::install_health_rules(&global) {
        Ok(warnings) => {
            for warning in warnings {
                tracing::warn!("{warning}");
                if !matches!(
                    command,
                    Command::Console(_) | Command::Demo(_) | Command::Watch(_)
                ) {
                    eprintln!("warning: {warning}");
                }
            }
        }
        Err(err) => return Ok(input_error(&err)),
    }
    match source::read_profiles(&global).await {
        Ok(profiles) => global.profiles = profiles.map(std::sync::Arc::new),
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(exit::of_hub(&err));
        }
    }
    // The simulated fleet replaces clusters and hub alike: `--demo` commands never reach a hub.
    let on_hub = global.hub.is_some() && !global.uses_demo();
    match command {
        Command::Console(args) | Command::Demo(args) => {
            launch::run(&global, None, args.ascii).await
        }
        Command::Watch(args) => {
            let ascii = args.ascii;
            launch::run(&global, Some(args), ascii).await
        }
        Command::Clusters if global.uses_demo() => {
            let loaded = match source::load(&global) {
                Ok(loaded) => loaded,
                Err(err) => return Ok(input_error(&err)),
            };
            commands::clusters::run_demo(&global, &loaded, &mut std::io::stdout().lock())
        }
        Command::Clusters if global.hub.is_some() => {
            let hub = global.hub.clone().unwrap_or_default();
            commands::clusters::run_hub(&global, &hub, &mut std::io::stdout()).await
        }
        Command::Clusters => {
            let inventory = match source::live_inventory(&global) {
                Ok(inventory) => inventory,
                Err(err) => return Ok(input_error(&err)),
            };
            // A glob that selects none of the fleet's clusters is the same error as plan's.
            if let Some(fleet) = &inventory.fleet
                && let Err(commands::scope::InputError(message)) =
                    commands::scope::unmatched_contexts(&global.contexts, fleet)
            {
                return Ok(input_error(&message));
            }
            commands::clusters::run_live(&global, inventory, &mut std::io::stdout()).await
        }
        Command::Render(args) if global.hub.is_some() => {
            let hub = global.hub.clone().unwrap_or_default();
            let Some(resources) = render_scope(&args) else {
                return Ok(exit::INPUT);
            };
            commands::render::run_hub(
                &global,
                &hub,
                (&args.clusters, &resources),
                args.show_secrets,
                &mut std::io::stdout(),
            )
            .await
        }
        Command::Render(args) => {
            let input = if let Some(scale) = global.demo_scale {
                FleetInput::Files(flotilla::fleet::demo::synthetic_fleet(
                    scale.clusters,
                    scale.resources,
                ))
            } else if global.demo {
                FleetInput::Files(flotilla::fleet::demo::demo_files())
            } else {
                match source::fleet_files(&global) {
                    Ok(files) => FleetInput::Files(files),
                    // No fleet directory: the ClusterProfiles alone (nothing to render).
                    Err(_) if !global.fleet.exists() && global.profiles.is_some() => {
                        FleetInput::Files(source::with_inventories(&global, Vec::new()))
                    }
                    Err(_) => FleetInput::Dir(&global.fleet),
                }
            };
            let Some(resources) = render_scope(&args) else {
                return Ok(exit::INPUT);
            };
            let code = commands::render::run_render(
                input,
                &args.clusters,
                &resources,
                global.output,
                args.keep_going,
                args.show_secrets,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            );
            Ok(u8::try_from(code).unwrap_or(exit::INPUT))
        }
        Command::Apply(_) | Command::Repair(_) if on_hub => {
            eprintln!(
                "error: {} --hub: on a hub its controllers propagate; change what the hub holds instead (the console's editors write policies to it, or kubectl apply them)",
                command.name()
            );
            Ok(exit::INPUT)
        }
        Command::Plan(args) if on_hub => {
            let hub = global.hub.clone().unwrap_or_default();
            commands::hub::run_plan(&global, &args, &hub, &mut std::io::stdout()).await
        }
        Command::Drift(scope) if on_hub => {
            let hub = global.hub.clone().unwrap_or_default();
            commands::hub::run_drift(&global, &scope, &hub, &mut std::io::stdout()).await
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
        Command::Status(scope) => {
            commands::status::run_status(&global, &scope, &mut std::io::stdout()).await
        }
        Command::Pods(args) => {
            commands::pods::run_pods(&global, &args, &mut std::io::stdout()).await
        }
        Command::Images(args) => {
            commands::pods::run_images(&global, &args, &mut std::io::stdout()).await
        }
        Command::Exec(args) => commands::exec::run(&global, &args).await,
        Command::Logs(args) => {
            commands::logs::run_logs(&global, &args, &mut std::io::stdout()).await
        }
        Command::Info => commands::shell::info::run(&global, &mut std::io::stdout().lock()),
        Command::Completion(args) => {
            commands::shell::completion::run(&args, &mut std::io::stdout().lock())
        }
        Command::Man(args) => commands::shell::man::run(&args, &mut std::io::stdout().lock()),
        Command::Placement(PlacementCommand::Set(args)) => {
            commands::edit::placement::run_set(&global, &args, &mut std::io::stdout()).await
        }
        Command::Override(OverrideCommand::Add(args)) => {
            commands::edit::overrides::run_add(&global, &args, &mut std::io::stdout()).await
        }
        Command::Override(OverrideCommand::Remove(args)) => {
            commands::edit::overrides::run_remove(&global, &args, &mut std::io::stdout()).await
        }
        Command::Override(OverrideCommand::List(args)) => {
            commands::edit::overrides::run_list(&global, &args, &mut std::io::stdout()).await
        }
        Command::Undo(args) => {
            commands::edit::undo::run(&global, &args, &mut std::io::stdout()).await
        }
        Command::Reschedule(args) => {
            commands::edit::reschedule::run(&global, &args, &mut std::io::stdout()).await
        }
        Command::OcmPlacement(OcmPlacementCommand::Set(args)) => {
            commands::edit::ocm_placement::run_set(&global, &args, &mut std::io::stdout()).await
        }
    }
}

/// Ends the process on SIGINT or SIGTERM with 130 or 143, as a shell reports a command a
/// signal stopped, even while the command waits on a prompt or the network.
async fn end_on_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let name = tokio::select! {
        _ = interrupt.recv() => "SIGINT",
        _ = terminate.recv() => "SIGTERM",
    };
    tracing::info!("received {name}; stopping");
    eprintln!("\ninterrupted ({name})");
    flotilla::backend::audit::record_interrupted(name);
    std::process::exit(i32::from(exit::of_signal(name)));
}

fn input_error(err: &dyn std::fmt::Display) -> u8 {
    eprintln!("error: {err}");
    exit::INPUT
}

/// `render`'s `-n` and `-l` as a scope, or `None` when they do not parse (said on stderr).
fn render_scope(args: &RenderArgs) -> Option<commands::scope::ResourceScope> {
    commands::scope::ResourceScope::of(&[], args.namespace.as_deref(), args.selector.as_deref())
        .map_err(|commands::scope::InputError(message)| eprintln!("error: {message}"))
        .ok()
}
