//! Runs the render command without the full CLI: `cargo run --example render -- --demo -o table`.
//! Flags: `--demo`, `--demo-scale C,R`, `--fleet DIR`, `--cluster NAME`, `-o json|yaml|table`,
//! `--keep-going`.

use std::path::PathBuf;

use flotilla::commands::render::{FleetInput, OutputFormat, run_render};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut fleet: Option<PathBuf> = None;
    let mut files = None;
    let mut cluster = None;
    let mut format = OutputFormat::Table;
    let mut keep_going = false;
    let mut explain: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let next = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--demo" => files = Some(flotilla::demo_fleet::demo_files()),
            "--demo-scale" => {
                let (c, r) = next.split_once(',').unwrap_or(("100", "100"));
                files = Some(flotilla::demo_fleet::synthetic_fleet(
                    c.parse().unwrap_or(100),
                    r.parse().unwrap_or(100),
                ));
                i += 1;
            }
            "--fleet" => {
                fleet = Some(PathBuf::from(&next));
                i += 1;
            }
            "--cluster" => {
                cluster = Some(next);
                i += 1;
            }
            "-o" => {
                format = OutputFormat::parse(&next).unwrap_or_default();
                i += 1;
            }
            "--keep-going" => keep_going = true,
            "--explain" => {
                explain = Some(next);
                i += 1;
            }
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    if let Some(key) = explain {
        let files = files.clone().unwrap_or_else(|| {
            flotilla::fleet_dir::read_fleet_dir(
                fleet.as_deref().unwrap_or(std::path::Path::new("fleet")),
            )
            .unwrap_or_default()
        });
        let (loaded, _) = flotilla::engine::load_fleet(&files);
        let Some(r) = loaded
            .resources
            .iter()
            .position(|x| x.target.display_key() == key)
        else {
            eprintln!("no resource {key}");
            std::process::exit(2);
        };
        for (c, cl) in loaded.clusters.iter().enumerate() {
            if cluster.as_deref().is_some_and(|n| n != cl.name) {
                continue;
            }
            let e = loaded.explain(r, c);
            println!(
                "{} on {}: {} — {}",
                key,
                cl.name,
                if e.placed { "placed" } else { "not placed" },
                e.reason
            );
            for step in e.steps {
                println!("    {step}");
            }
        }
        return;
    }
    let input = match (&fleet, files) {
        (_, Some(files)) => FleetInput::Files(files),
        (Some(dir), None) => FleetInput::Dir(dir),
        (None, None) => FleetInput::Dir(std::path::Path::new("fleet")),
    };
    let code = run_render(
        input,
        cluster.as_deref(),
        format,
        keep_going,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    std::process::exit(code);
}
