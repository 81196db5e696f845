//! `cargo xtask`: the project's one test command (interim; the test environment lands next).

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("test") => {
            for step in [
                vec!["fmt", "--all", "--", "--check"],
                vec![
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ],
                vec!["test", "--workspace", "--all-targets"],
            ] {
                println!("==> cargo {}", step.join(" "));
                let ok = Command::new(env!("CARGO"))
                    .args(&step)
                    .status()
                    .is_ok_and(|status| status.success());
                if !ok {
                    eprintln!("xtask: `cargo {}` failed", step.join(" "));
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: cargo xtask test");
            ExitCode::from(2)
        }
    }
}
