//! `cargo xtask`: developer commands — the one test command (`test`) and the real-Kubernetes
//! test environment (`testenv`). It must stay light to compile (it runs first on a fresh CI
//! machine), must never be a dependency of the product, and writes nothing outside the
//! repository except its binary cache.

/// `println!` that ignores a closed stdout (`cargo xtask testenv up | head` must not abort
/// half-way through starting the environment).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod gobuild;
mod kubeconfig;
mod paths;
mod pki;
mod procs;
mod state;
mod test;
mod testenv;

use std::process::ExitCode;

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  test                         the one test command: fmt check, clippy, unit tests, then the
                               integration tier against a real test environment
  testenv up [--members N]     start a hub + N member kube-apiservers on 127.0.0.1 (default 3);
                               builds kube-apiserver/etcd from the Go module proxy when needed
  testenv down                 stop everything testenv started (by process id)
  testenv status               report the environment (exit 0 when fully up, 1 otherwise)
  testenv stop CLUSTER         stop one cluster (e.g. member-2) to simulate an outage
  testenv start CLUSTER        start a stopped cluster again on the same port
  testenv build                only build (or verify) the cached binaries
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["test"] => test::run().map(|()| ExitCode::SUCCESS),
        ["testenv", rest @ ..] => run_testenv(rest),
        [] | ["help" | "-h" | "--help"] => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => bail!("unknown command `{}`\n\n{USAGE}", words.join(" ")),
    }
}

fn run_testenv(words: &[&str]) -> Result<ExitCode> {
    match words {
        ["up", rest @ ..] => {
            let members = parse_members(rest)?;
            testenv::up(testenv::Members::Exactly(members), state::Owner::Manual)?;
            Ok(ExitCode::SUCCESS)
        }
        ["down"] => testenv::down().map(|()| ExitCode::SUCCESS),
        ["status"] => testenv::status().map(|up| {
            if up {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }),
        ["stop", cluster] => testenv::stop_cluster(cluster).map(|()| ExitCode::SUCCESS),
        ["start", cluster] => testenv::start_cluster(cluster).map(|()| ExitCode::SUCCESS),
        ["build"] => testenv::build().map(|()| ExitCode::SUCCESS),
        _ => bail!("unknown testenv command `{}`\n\n{USAGE}", words.join(" ")),
    }
}

/// Parses `[--members N]` (also `--members=N`); the default is 3.
fn parse_members(words: &[&str]) -> Result<usize> {
    let value = match words {
        [] => return Ok(3),
        ["--members", n] => *n,
        [one] if one.starts_with("--members=") => &one["--members=".len()..],
        _ => bail!("usage: cargo xtask testenv up [--members N]"),
    };
    let n: usize = value
        .parse()
        .with_context(|| format!("--members wants a number, got `{value}`"))?;
    if !(1..=20).contains(&n) {
        bail!("--members must be between 1 and 20, got {n}");
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::parse_members;

    #[test]
    fn members_default_and_forms() {
        assert_eq!(parse_members(&[]).expect("default"), 3);
        assert_eq!(parse_members(&["--members", "5"]).expect("two words"), 5);
        assert_eq!(parse_members(&["--members=1"]).expect("one word"), 1);
        assert!(parse_members(&["--members", "0"]).is_err());
        assert!(parse_members(&["--members", "x"]).is_err());
        assert!(parse_members(&["--nope"]).is_err());
    }
}
