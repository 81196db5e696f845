//! `cargo xtask`: developer commands — the one test command (`test`), the long fuzz run
//! (`fuzz`), the import-rule check (`layers`), the manual pages (`man`), the docs' screenshots (`screenshot`) and the real-Kubernetes test environment
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

mod contexts;
mod files;
mod fuzz;
mod gobuild;
mod karmada;
mod kubeconfig;
mod kubectl;
mod kubefed;
mod kwok;
mod layers;
mod man;
mod ocm;
mod paths;
mod pki;
mod prebuild;
mod procs;
mod scale;
mod scale_load;
mod scale_objects;
mod screenshot;
mod state;
mod test;
mod testenv;
mod testproxy;

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use testenv::Hub;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  test                         the one test command: fmt check, clippy, the layer check, unit
                               tests, then the integration tier against a real test environment
  test --tier plain|karmada|ocm|kubefed|scale
                               one tier of `test` alone: its test environment up, its tests
                               (as `test` runs them), the environment down again
  test-scale                   the scale tier (`test --tier scale`): Karmada and OCM scale hubs
                               of 500 clusters x 20 resources (testenv up --scale) and
                               tests/testenv_scale.rs
  fuzz [--minutes N] [--scale S]
                               the long run of the property-based fuzz tests (tests/fuzz.rs):
                               builds them in release and runs round after round, fresh seeds
                               and S times the default cases each (default 100), for N minutes
                               (default 10); stops at the first failure with proptest's shrunk
                               input (saved in tests/fuzz.proptest-regressions)
  layers                       check the import rules: no import cycle between files or
                               between folders (src/ and xtask/src/), no import upward across
                               src/'s layers, none that src/ forbids (views of backend, views
                               of app but app::state, output of cli), no crossterm under
                               src/app/, no folder of src/ with more than 15 .rs files directly
                               in it, no file with more than 1,500 lines before its tests (the
                               tables are in xtask/src/layers.rs)
  man [--out DIR]              the manual pages, flotilla.1 and one per command
                               (flotilla-plan.1, flotilla-placement-set.1, …), written into DIR
                               (default target/man) by `flotilla man --out`
  screenshot                   docs/*.png: the release binary's demo console at 160x42
                               (docs/screenshot.png) and 80x24, its log pane at 120x32 and
                               its wall at 120x40 and 240x68, each in a tmux session (needs
                               tmux, aha and chromium)
  testenv up [--members N] [--hub karmada|ocm|kubefed]
                               start a hub + N member kube-apiservers on 127.0.0.1 (default 3);
                               builds kube-apiserver/etcd from the Go module proxy when needed;
                               with --hub karmada the hub is a Karmada control plane (built from
                               upstream too) and the members are joined to it in Push mode;
                               with --hub ocm the hub runs Open Cluster Management and every
                               member a klusterlet agent, registered under its context name;
                               with --hub kubefed the hub runs KubeFed v0.10.0's controller-manager
                               and the members are joined as KubeFedClusters
  testenv up --scale karmada|ocm --clusters N --resources M [--churn PER_SECOND]
                               a hub alone, loaded as a real hub of N clusters and M resources
                               holds it (Karmada: Clusters, templates, policies, one
                               ResourceBinding per resource and one Work per resource and
                               cluster; OCM: ManagedClusters, Placements, PlacementDecisions and
                               one ManifestWork per resource and cluster), written through its
                               API server with statuses, no controllers; with --churn a
                               background loader changes that many Work statuses a second
  testenv up --contexts N [--latency-ms MS]
                               the plain tier plus N kubeconfig contexts c0000… each through its
                               own toxiproxy port to a member, with MS of injected latency
                               (default: spread over 20–100 ms)
  testenv down                 stop everything testenv started (by process id)
  testenv status               report the environment (exit 0 when fully up, 1 otherwise)
  testenv stop CLUSTER         stop one cluster (e.g. member-2) to simulate an outage
  testenv start CLUSTER        start a stopped cluster again on the same port
  testenv build [--hub karmada|ocm|kubefed]
                               only build (or verify) the cached binaries
  testenv binary testproxy     the path of the cached forward proxy (HTTP CONNECT or SOCKS5)
                               the proxy tests start in front of a member; built when needed
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
        ["test"] => test::run(None).map(|()| ExitCode::SUCCESS),
        ["test", "--tier", name] => {
            test::run(Some(test::Tier::parse(name)?)).map(|()| ExitCode::SUCCESS)
        }
        ["test", flag] if flag.starts_with("--tier=") => {
            test::run(Some(test::Tier::parse(&flag["--tier=".len()..])?))
                .map(|()| ExitCode::SUCCESS)
        }
        ["test-scale"] => test::run(Some(test::Tier::Scale)).map(|()| ExitCode::SUCCESS),
        ["layers"] => layers::run().map(|ok| {
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }),
        ["fuzz", rest @ ..] => fuzz::run(&fuzz::parse_args(rest)?),
        ["man", rest @ ..] => man::run(&man::parse_args(rest)?).map(|()| ExitCode::SUCCESS),
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
            match parse_up(rest)? {
                Up::Tier { members, hub } => {
                    testenv::up(
                        testenv::Members::Exactly(members),
                        hub,
                        state::Owner::Manual,
                    )?;
                }
                Up::Scale(args) => {
                    scale::up(args, state::Owner::Manual)?;
                }
                Up::Contexts { count, latency_ms } => {
                    contexts::up(count, latency_ms, state::Owner::Manual)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        // Started by `up --scale … --churn R`; runs until `down` stops it.
        ["scale-churn"] => scale::run_churn().map(|()| ExitCode::SUCCESS),
        ["down"] => testenv::down().map(|()| ExitCode::SUCCESS),
        ["status"] => testenv::status().map(|up| {
            // The scale hub's and the proxies' lines follow the clusters'.
            let extra = match state::State::load(&paths::state_file()) {
                Ok(Some(s)) => scale::status_lines(&s) & contexts::status_lines(&s),
                _ => true,
            };
            if up && extra {
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
        ["binary", "testproxy"] => {
            let exe = testproxy::ensure_built(gobuild::Mode::Foreground)?;
            println!("{}", exe.display());
            Ok(ExitCode::SUCCESS)
        }
        _ => bail!("unknown testenv command `{}`\n\n{USAGE}", words.join(" ")),
    }
}

/// What `testenv up` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Up {
    /// `[--members N] [--hub …]`
    Tier { members: usize, hub: Hub },
    /// `--scale karmada|ocm --clusters N --resources M [--churn R]`
    Scale(scale::ScaleArgs),
    /// `--contexts N [--latency-ms MS]`
    Contexts {
        count: usize,
        latency_ms: Option<u32>,
    },
}

const UP_USAGE: &str = "usage: cargo xtask testenv up [--members N] [--hub karmada|ocm|kubefed]\n   \
     or: cargo xtask testenv up --scale karmada|ocm --clusters N --resources M [--churn PER_SECOND]\n   \
     or: cargo xtask testenv up --contexts N [--latency-ms MS]";

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T> {
    value
        .parse()
        .map_err(|_| anyhow::anyhow!("{flag} wants a number, got `{value}`"))
}

/// Parses the flags of `testenv up` (also `--flag=value`, any order); the defaults are 3
/// members and the plain hub.
fn parse_up(words: &[&str]) -> Result<Up> {
    let mut flags: Vec<(&str, &str)> = Vec::new();
    let mut rest = words;
    while let [first, tail @ ..] = rest {
        let (flag, value, tail) = match first.split_once('=') {
            Some((flag, value)) => (flag, value, tail),
            None => match tail {
                [value, tail @ ..] => (*first, *value, tail),
                [] => bail!("{UP_USAGE}"),
            },
        };
        const KNOWN: [&str; 8] = [
            "--members",
            "--hub",
            "--scale",
            "--clusters",
            "--resources",
            "--churn",
            "--contexts",
            "--latency-ms",
        ];
        if !KNOWN.contains(&flag) || flags.iter().any(|(f, _)| *f == flag) {
            bail!("{UP_USAGE}");
        }
        flags.push((flag, value));
        rest = tail;
    }
    let get = |flag: &str| flags.iter().find(|(f, _)| *f == flag).map(|(_, v)| *v);
    let only = |allowed: &[&str], what: &str| -> Result<()> {
        match flags.iter().find(|(f, _)| !allowed.contains(f)) {
            Some((f, _)) => bail!("{f} does not go with {what}\n{UP_USAGE}"),
            None => Ok(()),
        }
    };
    if let Some(kind) = get("--scale") {
        only(
            &["--scale", "--clusters", "--resources", "--churn"],
            "--scale",
        )?;
        let kind = state::ScaleKind::from_flag(kind)
            .with_context(|| format!("--scale knows `karmada` and `ocm`, not `{kind}`"))?;
        let clusters = get("--clusters").context("--scale needs --clusters N")?;
        let resources = get("--resources").context("--scale needs --resources M")?;
        let churn = get("--churn").map(|v| number("--churn", v)).transpose()?;
        return Ok(Up::Scale(scale::checked(
            kind,
            number("--clusters", clusters)?,
            number("--resources", resources)?,
            churn,
        )?));
    }
    if let Some(count) = get("--contexts") {
        only(&["--contexts", "--latency-ms"], "--contexts")?;
        let count: usize = number("--contexts", count)?;
        if !(1..=contexts::MAX_CONTEXTS).contains(&count) {
            bail!(
                "--contexts must be between 1 and {}, got {count}",
                contexts::MAX_CONTEXTS
            );
        }
        let latency_ms = get("--latency-ms")
            .map(|v| number::<u32>("--latency-ms", v))
            .transpose()?;
        if let Some(ms) = latency_ms
            && !(1..=10_000).contains(&ms)
        {
            bail!("--latency-ms must be between 1 and 10000, got {ms}");
        }
        return Ok(Up::Contexts { count, latency_ms });
    }
    only(
        &["--members", "--hub"],
        "a member tier (--clusters, --resources and --churn go with --scale, --latency-ms with --contexts)",
    )?;
    let members = get("--members").map(parse_count).transpose()?;
    let hub = get("--hub").map(|v| parse_hub(&["--hub", v])).transpose()?;
    Ok(Up::Tier {
        members: members.unwrap_or(3),
        hub: hub.unwrap_or(Hub::Plain),
    })
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
    use super::{Hub, Up, parse_up};
    use crate::state::ScaleKind;

    /// The member tier's `(members, hub)`, or an error for any other request.
    fn tier(words: &[&str]) -> anyhow::Result<(usize, Hub)> {
        match parse_up(words)? {
            Up::Tier { members, hub } => Ok((members, hub)),
            other => anyhow::bail!("not a member tier: {other:?}"),
        }
    }

    #[test]
    fn scale_and_contexts_forms() {
        let Up::Scale(args) = parse_up(&[
            "--scale",
            "ocm",
            "--clusters=500",
            "--resources",
            "20",
            "--churn",
            "200",
        ])
        .expect("scale") else {
            panic!("a scale request");
        };
        assert_eq!(args.size.kind, ScaleKind::Ocm);
        assert_eq!((args.size.clusters, args.size.resources), (500, 20));
        assert_eq!(args.churn, Some(200));
        assert!(parse_up(&["--scale", "karmada", "--clusters", "5"]).is_err());
        assert!(parse_up(&["--scale", "kubefed", "--clusters", "5", "--resources", "1"]).is_err());
        assert!(
            parse_up(&[
                "--scale",
                "karmada",
                "--clusters",
                "5",
                "--resources",
                "1",
                "--hub",
                "ocm"
            ])
            .is_err()
        );
        assert!(
            parse_up(&["--clusters", "5"]).is_err(),
            "--clusters needs --scale"
        );
        assert_eq!(
            parse_up(&["--contexts", "1000", "--latency-ms", "50"]).expect("contexts"),
            Up::Contexts {
                count: 1000,
                latency_ms: Some(50)
            }
        );
        assert!(parse_up(&["--contexts", "0"]).is_err());
        assert!(parse_up(&["--latency-ms", "50"]).is_err());
    }

    #[test]
    fn members_default_and_forms() {
        let members = |w: &[&str]| tier(w).map(|(n, _)| n);
        assert_eq!(members(&[]).expect("default"), 3);
        assert_eq!(members(&["--members", "5"]).expect("two words"), 5);
        assert_eq!(members(&["--members=1"]).expect("one word"), 1);
        assert!(members(&["--members", "0"]).is_err());
        assert!(members(&["--members", "x"]).is_err());
        assert!(members(&["--nope"]).is_err());
    }

    #[test]
    fn hub_default_and_forms() {
        assert_eq!(tier(&[]).expect("default"), (3, Hub::Plain));
        assert_eq!(
            tier(&["--hub", "karmada", "--members", "2"]).expect("both"),
            (2, Hub::Karmada)
        );
        assert_eq!(
            tier(&["--members=2", "--hub=karmada"]).expect("both, one word each"),
            (2, Hub::Karmada)
        );
        assert_eq!(tier(&["--hub=ocm"]).expect("ocm"), (3, Hub::Ocm));
        assert_eq!(
            tier(&["--hub", "kubefed", "--members", "2"]).expect("kubefed"),
            (2, Hub::KubeFed)
        );
        assert!(tier(&["--hub", "kubefeed"]).is_err());
        assert!(tier(&["--hub"]).is_err());
        assert!(tier(&["--hub", "karmada", "--hub", "plain"]).is_err());
    }
}
