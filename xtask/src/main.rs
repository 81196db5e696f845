//! `cargo xtask`: developer commands — the one test command (`test`), the long fuzz run
//! (`fuzz`), the import-rule check (`layers`), the README's screenshot (`screenshot`) and the real-Kubernetes test environment
//! (`testenv`). It must stay light to compile (it runs first on a fresh CI
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

mod files;
mod fuzz;
mod gobuild;
mod karmada;
mod kubeconfig;
mod kubectl;
mod kubefed;
mod layers;
mod ocm;
mod paths;
mod pki;
mod procs;
mod screenshot;
mod state;
mod test;
mod testenv;

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use testenv::Hub;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  test                         the one test command: fmt check, clippy, the layer check, unit
                               tests, then the integration tier against a real test environment
  fuzz [--minutes N] [--scale S]
                               the long run of the property-based fuzz tests (tests/fuzz.rs):
                               builds them in release and runs round after round, fresh seeds
                               and S times the default cases each (default 100), for N minutes
                               (default 10); stops at the first failure with proptest's shrunk
                               input (saved in tests/fuzz.proptest-regressions)
  layers                       check the import rules: no import cycle between files (src/ and
                               xtask/src/), no import upward across src/'s layers (the table
                               is in xtask/src/layers.rs), no crossterm under src/app/
  screenshot                   docs/screenshot.png: the release binary's demo console in a
                               160x42 tmux session (needs tmux, aha and chromium)
  testenv up [--members N] [--hub karmada|ocm|kubefed]
                               start a hub + N member kube-apiservers on 127.0.0.1 (default 3);
                               builds kube-apiserver/etcd from the Go module proxy when needed;
                               with --hub karmada the hub is a Karmada control plane (built from
                               upstream too) and the members are joined to it in Push mode;
                               with --hub ocm the hub runs Open Cluster Management and every
                               member a klusterlet agent, registered under its context name;
                               with --hub kubefed the hub runs KubeFed v0.10.0's controller-manager
                               and the members are joined as KubeFedClusters
  testenv down                 stop everything testenv started (by process id)
  testenv status               report the environment (exit 0 when fully up, 1 otherwise)
  testenv stop CLUSTER         stop one cluster (e.g. member-2) to simulate an outage
  testenv start CLUSTER        start a stopped cluster again on the same port
  testenv build [--hub karmada|ocm|kubefed]
                               only build (or verify) the cached binaries
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
        ["layers"] => layers::run().map(|ok| {
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }),
        ["fuzz", rest @ ..] => fuzz::run(&fuzz::parse_args(rest)?),
        ["screenshot"] => screenshot::run(&paths::repo_root()).map(|()| ExitCode::SUCCESS),
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
            let (members, hub) = parse_up(rest)?;
            testenv::up(
                testenv::Members::Exactly(members),
                hub,
                state::Owner::Manual,
            )?;
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
        ["build", rest @ ..] => {
            let hub = match rest {
                [] => Hub::Plain,
                _ => parse_hub(rest)?,
            };
            testenv::build(hub).map(|()| ExitCode::SUCCESS)
        }
        _ => bail!("unknown testenv command `{}`\n\n{USAGE}", words.join(" ")),
    }
}

/// Parses `[--members N] [--hub plain|karmada]` (also `--flag=value`, any order); the
/// defaults are 3 members and the plain hub.
fn parse_up(words: &[&str]) -> Result<(usize, Hub)> {
    const UP_USAGE: &str =
        "usage: cargo xtask testenv up [--members N] [--hub karmada|ocm|kubefed]";
    let mut members = None;
    let mut hub = None;
    let mut rest = words;
    while let [first, tail @ ..] = rest {
        let (flag, value, tail) = match first.split_once('=') {
            Some((flag, value)) => (flag, value, tail),
            None => match tail {
                [value, tail @ ..] => (*first, *value, tail),
                [] => bail!("{UP_USAGE}"),
            },
        };
        match flag {
            "--members" if members.is_none() => members = Some(parse_count(value)?),
            "--hub" if hub.is_none() => hub = Some(parse_hub(&["--hub", value])?),
            _ => bail!("{UP_USAGE}"),
        }
        rest = tail;
    }
    Ok((members.unwrap_or(3), hub.unwrap_or(Hub::Plain)))
}

fn parse_count(value: &str) -> Result<usize> {
    let n: usize = value
        .parse()
        .with_context(|| format!("--members wants a number, got `{value}`"))?;
    if !(1..=20).contains(&n) {
        bail!("--members must be between 1 and 20, got {n}");
    }
    Ok(n)
}

/// Parses `--hub plain|karmada|ocm|kubefed` (also `--hub=…`).
fn parse_hub(words: &[&str]) -> Result<Hub> {
    let value = match words {
        ["--hub", v] => *v,
        [one] if one.starts_with("--hub=") => &one["--hub=".len()..],
        _ => bail!(
            "expected `--hub karmada|ocm|kubefed`, got `{}`",
            words.join(" ")
        ),
    };
    match value {
        "karmada" => Ok(Hub::Karmada),
        "ocm" => Ok(Hub::Ocm),
        "kubefed" => Ok(Hub::KubeFed),
        "plain" => Ok(Hub::Plain),
        other => {
            bail!(
                "--hub knows `karmada`, `ocm`, `kubefed` (and `plain`, the default), not `{other}`"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Hub, parse_up};

    #[test]
    fn members_default_and_forms() {
        let members = |w: &[&str]| parse_up(w).map(|(n, _)| n);
        assert_eq!(members(&[]).expect("default"), 3);
        assert_eq!(members(&["--members", "5"]).expect("two words"), 5);
        assert_eq!(members(&["--members=1"]).expect("one word"), 1);
        assert!(members(&["--members", "0"]).is_err());
        assert!(members(&["--members", "x"]).is_err());
        assert!(members(&["--nope"]).is_err());
    }

    #[test]
    fn hub_default_and_forms() {
        assert_eq!(parse_up(&[]).expect("default"), (3, Hub::Plain));
        assert_eq!(
            parse_up(&["--hub", "karmada", "--members", "2"]).expect("both"),
            (2, Hub::Karmada)
        );
        assert_eq!(
            parse_up(&["--members=2", "--hub=karmada"]).expect("both, one word each"),
            (2, Hub::Karmada)
        );
        assert_eq!(parse_up(&["--hub=ocm"]).expect("ocm"), (3, Hub::Ocm));
        assert_eq!(
            parse_up(&["--hub", "kubefed", "--members", "2"]).expect("kubefed"),
            (2, Hub::KubeFed)
        );
        assert!(parse_up(&["--hub", "kubefeed"]).is_err());
        assert!(parse_up(&["--hub"]).is_err());
        assert!(parse_up(&["--hub", "karmada", "--hub", "plain"]).is_err());
    }
}
