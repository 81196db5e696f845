//! `cargo xtask test`: the one test command (README and `.ci/run` call it). Runs the format
//! check, clippy, the layer check (`cargo xtask layers`), the workspace tests, then each tier
//! of the integration suite against a real test environment, stopping at the first failure;
//! `--tier NAME` runs one tier, through the same steps. The Go builds every tier of the run
//! needs start in the background with the run (`prebuild`), and each tier waits for its own.
//! It must never skip a tier it was asked for, and must leave nothing running that it started.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::gobuild;
use crate::layers;
use crate::paths;
use crate::prebuild::{GoBuild, Prebuild};
use crate::scale;
use crate::state::{Owner, ScaleKind};
use crate::testenv::{self, Hub, Members};

/// Integration tests run in parallel within a test binary: they are I/O-bound, each has its
/// own namespace, and the API servers take the CPU.
const INTEGRATION_TEST_THREADS: &str = "4";

fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(paths::repo_root());
    cmd
}

fn header(n: usize, total: usize, what: &str) {
    say!("\n==> [{n}/{total}] {what}");
}

fn run_checked(mut cmd: Command, what: &str) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("could not run `{what}`"))?;
    if !status.success() {
        bail!("`{what}` failed ({status})");
    }
    Ok(())
}

/// Tests counted from libtest's `test result:` lines from step 4 on.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    passed: u64,
    failed: u64,
}

/// Runs a `cargo test`, echoing its output as it comes and adding its `test result:` lines
/// to the tally, so the run can close with one line that counts every test executed.
fn run_counting(mut cmd: Command, what: &str, tally: &mut Tally) -> Result<()> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not run `{what}`"))?;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap_or_default();
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                let count = |word: &str| -> u64 {
                    rest.split(';')
                        .find_map(|part| part.trim().strip_suffix(word))
                        .and_then(|number| number.trim().rsplit(' ').next())
                        .and_then(|number| number.parse().ok())
                        .unwrap_or(0)
                };
                tally.passed += count(" passed");
                tally.failed += count(" failed");
            }
        }
    }
    let status = child
        .wait()
        .with_context(|| format!("could not wait for `{what}`"))?;
    if !status.success() {
        bail!("`{what}` failed ({status})");
    }
    Ok(())
}

/// A step of `cargo xtask test`: a check of the tree, or a tier of the integration suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Fmt,
    Clippy,
    Layers,
    Unit,
    Tier(Tier),
}

/// A tier of the integration suite: the test environment it starts and the tests that need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Plain,
    Karmada,
    Ocm,
    KubeFed,
    Scale,
}

impl Tier {
    /// In the order the full run takes them.
    const ALL: [Tier; 5] = [
        Tier::Plain,
        Tier::Karmada,
        Tier::Ocm,
        Tier::KubeFed,
        Tier::Scale,
    ];

    /// The name `--tier` takes.
    fn name(self) -> &'static str {
        match self {
            Tier::Plain => "plain",
            Tier::Karmada => "karmada",
            Tier::Ocm => "ocm",
            Tier::KubeFed => "kubefed",
            Tier::Scale => "scale",
        }
    }

    /// The tier `--tier NAME` names.
    pub fn parse(name: &str) -> Result<Tier> {
        Tier::ALL
            .into_iter()
            .find(|tier| tier.name() == name)
            .with_context(|| {
                format!(
                    "--tier knows {}, not `{name}`",
                    Tier::ALL.map(Tier::name).join(", ")
                )
            })
    }
}

/// The Go builds each step's environment is started from.
impl Step {
    fn go_builds(self) -> &'static [GoBuild] {
        match self {
            Step::Fmt | Step::Clippy | Step::Layers | Step::Unit => &[],
            Step::Tier(Tier::Plain) => &[
                GoBuild::ControlPlane,
                GoBuild::ClusterInventory,
                GoBuild::TestProxy,
            ],
            Step::Tier(Tier::Karmada) => &[GoBuild::ControlPlane, GoBuild::Karmada],
            Step::Tier(Tier::Ocm) => &[GoBuild::ControlPlane, GoBuild::Ocm],
            Step::Tier(Tier::KubeFed) => &[GoBuild::ControlPlane, GoBuild::KubeFed],
            Step::Tier(Tier::Scale) => &[GoBuild::ControlPlane, GoBuild::Karmada, GoBuild::Ocm],
        }
    }
}

/// What the background builds of a run of `steps` are, in the order the steps first need
/// them.
fn go_builds(steps: &[Step]) -> Vec<GoBuild> {
    let mut builds: Vec<GoBuild> = Vec::new();
    for build in steps.iter().flat_map(|step| step.go_builds()) {
        if !builds.contains(build) {
            builds.push(*build);
        }
    }
    builds
}

/// The steps a run takes: every check and every tier, or the one tier asked for.
fn plan(only: Option<Tier>) -> Vec<Step> {
    match only {
        Some(tier) => vec![Step::Tier(tier)],
        None => [Step::Fmt, Step::Clippy, Step::Layers, Step::Unit]
            .into_iter()
            .chain(Tier::ALL.map(Step::Tier))
            .collect(),
    }
}

impl Step {
    /// The step's header line.
    fn what(self) -> &'static str {
        match self {
            Step::Fmt => "cargo fmt --all -- --check",
            Step::Clippy => "cargo clippy --workspace --all-targets -- -D warnings",
            Step::Layers => "cargo xtask layers (import rules)",
            Step::Unit => "cargo test --workspace --all-targets",
            Step::Tier(Tier::Plain) => {
                "integration tier against a real test environment (cargo xtask testenv)"
            }
            Step::Tier(Tier::Karmada) => KARMADA.what,
            Step::Tier(Tier::Ocm) => OCM.what,
            Step::Tier(Tier::KubeFed) => KUBEFED.what,
            Step::Tier(Tier::Scale) => "scale tier: Karmada and OCM scale hubs at CI size",
        }
    }

    fn run(self, tally: &mut Tally, prebuild: &Prebuild) -> Result<()> {
        prebuild.wait_for(self.go_builds())?;
        match self {
            Step::Fmt => {
                let mut cmd = cargo();
                cmd.args(["fmt", "--all", "--", "--check"]);
                run_checked(cmd, self.what())
            }
            Step::Clippy => {
                let mut cmd = cargo();
                cmd.args([
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ]);
                run_checked(cmd, self.what())
            }
            Step::Layers => layers::check_all(),
            Step::Unit => {
                let mut cmd = cargo();
                cmd.args(["test", "--workspace", "--all-targets"]);
                run_counting(cmd, self.what(), tally)
            }
            Step::Tier(Tier::Plain) => integration(tally),
            Step::Tier(Tier::Karmada) => hub_tier(&KARMADA, tally),
            Step::Tier(Tier::Ocm) => hub_tier(&OCM, tally),
            Step::Tier(Tier::KubeFed) => hub_tier(&KUBEFED, tally),
            Step::Tier(Tier::Scale) => scale_tier(tally),
        }
    }
}

/// `cargo xtask test` (every step) or `cargo xtask test --tier NAME` (that tier alone: its
/// environment up, its tests, the environment down), with one summary either way.
pub fn run(only: Option<Tier>) -> Result<()> {
    let total_start = Instant::now();
    let mut timings: Vec<(String, Duration)> = Vec::new();
    let mut tally = Tally::default();
    let steps = plan(only);
    let prebuild = Prebuild::start(&go_builds(&steps));
    let result = run_steps(&steps, &mut timings, &mut tally, &prebuild);
    let go_took = prebuild.took();
    drop(prebuild);
    say!("\n==> summary");
    for (what, took) in &timings {
        say!("  {:>7.1} s  {what}", took.as_secs_f64());
    }
    for (build, took) in &go_took {
        say!(
            "  {:>7.1} s  {}{} cached (beside the steps above)",
            took.as_secs_f64(),
            gobuild::BACKGROUND_PREFIX,
            build.name()
        );
    }
    say!("  {:>7.1} s  total", total_start.elapsed().as_secs_f64());
    let command = match only {
        Some(tier) => format!("cargo xtask test --tier {}", tier.name()),
        None => "cargo xtask test".to_string(),
    };
    match &result {
        Ok(()) => say!("{command}: all steps passed"),
        Err(_) => say!("{command}: FAILED (the error follows)"),
    }
    // One closing line counting every test executed (in the full run, the integration tests
    // that the unit step lists as ignored are the ones the tiers run).
    say!("tests: {} passed, {} failed", tally.passed, tally.failed);
    result
}

fn run_steps(
    steps: &[Step],
    timings: &mut Vec<(String, Duration)>,
    tally: &mut Tally,
    prebuild: &Prebuild,
) -> Result<()> {
    let total = steps.len();
    for (index, step) in steps.iter().enumerate() {
        let (n, what) = (index + 1, step.what());
        header(n, total, what);
        let t = Instant::now();
        let r = step.run(tally, prebuild);
        timings.push((what.to_string(), t.elapsed()));
        say!(
            "--- [{n}/{total}] {what}: {} in {:.1} s",
            if r.is_ok() { "ok" } else { "FAILED" },
            t.elapsed().as_secs_f64()
        );
        r?;
    }
    Ok(())
}

/// Tests named `hub_karmada_*`, `hub_ocm_*` and `hub_kubefed_*` need their hub; the plain-hub
/// step skips them.
const KARMADA_TESTS: &str = "hub_karmada_";
const OCM_TESTS: &str = "hub_ocm_";
const KUBEFED_TESTS: &str = "hub_kubefed_";
/// Tests named `scale_karmada_*` and `scale_ocm_*` need the scale hub of their kind.
const SCALE_KARMADA_TESTS: &str = "scale_karmada_";
const SCALE_OCM_TESTS: &str = "scale_ocm_";
/// The scale step's size: big enough that a per-object cost shows, small enough for CI.
const SCALE_CI_CLUSTERS: usize = 500;
const SCALE_CI_RESOURCES: usize = 20;

/// One hub tier: the hub's test environment (started unless one runs), its test file, and the
/// environment stopped again if this run started it.
struct HubTier {
    hub: Hub,
    name: &'static str,
    what: &'static str,
    test_file: &'static str,
}

const KARMADA: HubTier = HubTier {
    hub: Hub::Karmada,
    name: "Karmada",
    what: "Karmada hub tier against a real Karmada control plane (testenv up --hub karmada)",
    test_file: "testenv_karmada",
};
const OCM: HubTier = HubTier {
    hub: Hub::Ocm,
    name: "OCM",
    what: "OCM hub tier against a real Open Cluster Management hub (testenv up --hub ocm)",
    test_file: "testenv_ocm",
};
const KUBEFED: HubTier = HubTier {
    hub: Hub::KubeFed,
    name: "KubeFed",
    what: "KubeFed hub tier against a real KubeFed controller (testenv up --hub kubefed)",
    test_file: "testenv_kubefed",
};

/// Brings an environment up with `up` (which reuses one already running), runs `tests` with
/// the kubeconfig it wrote, and stops the environment if this run started it — also when the
/// tests failed.
fn in_testenv(
    name: &str,
    up: impl FnOnce(Owner) -> Result<Owner>,
    tests: impl FnOnce(&std::path::Path) -> Result<()>,
) -> Result<()> {
    let me = Owner::Test {
        pid: std::process::id(),
    };
    let t = Instant::now();
    let owner = up(me)?;
    say!("--- {name} ready in {:.1} s", t.elapsed().as_secs_f64());
    let result = tests(&paths::kubeconfig());
    let stopped = if owner == me {
        say!("--- stopping the {name} this run started");
        testenv::down()
    } else {
        say!("--- leaving the {name} running (it was started by `testenv up`)");
        Ok(())
    };
    result?;
    stopped
}

/// A `cargo test` against the environment whose kubeconfig is at `kubeconfig`.
fn cargo_test(args: &[&str], kubeconfig: &std::path::Path) -> Command {
    let mut cmd = cargo();
    cmd.arg("test")
        .args(args)
        .env("FLOTILLA_TESTENV_KUBECONFIG", kubeconfig);
    // Tests that stop/start clusters call this binary instead of a nested cargo.
    if let Ok(me) = std::env::current_exe() {
        cmd.env("FLOTILLA_XTASK_BIN", me);
    }
    cmd
}

fn hub_tier(tier: &HubTier, tally: &mut Tally) -> Result<()> {
    in_testenv(
        &format!("{} test environment", tier.name),
        |me| testenv::up(Members::AtLeast(2), tier.hub, me),
        |kubeconfig| {
            let args = ["--test", tier.test_file, "--", "--ignored"];
            let mut cmd = cargo_test(&args, kubeconfig);
            // Hub edits driven in-process write the audit log: keep it out of the user's state.
            cmd.env("XDG_STATE_HOME", paths::testenv_dir().join("state"));
            let what = format!("cargo test {}", args.join(" "));
            say!(
                "--- FLOTILLA_TESTENV_KUBECONFIG={} {what}",
                kubeconfig.display()
            );
            run_counting(cmd, &what, tally)
        },
    )
}

/// The scale step: for each hub kind, the scale environment at CI size (reused when one of
/// that size runs), `tests/testenv_scale.rs`'s tests of that kind, and the environment
/// stopped again if this run started it.
fn scale_tier(tally: &mut Tally) -> Result<()> {
    for (kind, tests) in [
        (ScaleKind::Karmada, SCALE_KARMADA_TESTS),
        (ScaleKind::Ocm, SCALE_OCM_TESTS),
    ] {
        in_testenv(
            &format!("{} scale environment", kind.flag()),
            |me| {
                let args = scale::checked(kind, SCALE_CI_CLUSTERS, SCALE_CI_RESOURCES, None)?;
                scale::up(args, me)
            },
            |kubeconfig| {
                let args = ["--test", "testenv_scale", "--", "--ignored", tests];
                let cmd = cargo_test(&args, kubeconfig);
                let what = format!("cargo test {}", args.join(" "));
                say!(
                    "--- FLOTILLA_TESTENV_KUBECONFIG={} {what}",
                    kubeconfig.display()
                );
                run_counting(cmd, &what, tally)
            },
        )?;
    }
    Ok(())
}

fn integration(tally: &mut Tally) -> Result<()> {
    in_testenv(
        "test environment",
        |me| testenv::up(Members::AtLeast(3), Hub::Plain, me),
        |kubeconfig| {
            let args = [
                "--workspace",
                "--tests",
                "--",
                "--ignored",
                "--skip",
                KARMADA_TESTS,
                "--skip",
                OCM_TESTS,
                "--skip",
                KUBEFED_TESTS,
                "--skip",
                SCALE_KARMADA_TESTS,
                "--skip",
                SCALE_OCM_TESTS,
            ];
            let mut cmd = cargo_test(&args, kubeconfig);
            // Threads go through RUST_TEST_THREADS, not `--test-threads`: criterion benches
            // (built by --all-targets) accept `--ignored` but reject unknown libtest flags.
            cmd.env("RUST_TEST_THREADS", INTEGRATION_TEST_THREADS);
            say!(
                "--- FLOTILLA_TESTENV_KUBECONFIG={} RUST_TEST_THREADS={INTEGRATION_TEST_THREADS} cargo test {}",
                kubeconfig.display(),
                args.join(" ")
            );
            run_counting(
                cmd,
                "cargo test --workspace --tests -- --ignored (plain hub)",
                tally,
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use super::{GoBuild, Step, Tier, go_builds, plan};

    #[test]
    fn a_tier_alone_is_the_very_step_the_full_run_takes_for_it() {
        let full = plan(None);
        assert_eq!(
            full[..4],
            [Step::Fmt, Step::Clippy, Step::Layers, Step::Unit],
            "the checks come first"
        );
        let tiers: Vec<Step> = full[4..].to_vec();
        assert_eq!(
            tiers,
            Tier::ALL.map(Step::Tier),
            "then every tier, in order"
        );
        for name in ["plain", "karmada", "ocm", "kubefed", "scale"] {
            let tier = Tier::parse(name).expect("a tier");
            let alone = plan(Some(tier));
            assert_eq!(
                alone,
                [Step::Tier(tier)],
                "{name}: its tier and nothing else"
            );
            assert_eq!(
                full.iter().filter(|step| **step == alone[0]).count(),
                1,
                "{name} is one step of the full run"
            );
            assert_eq!(tier.name(), name);
        }
        let mut headers: Vec<&str> = full.iter().map(|step| step.what()).collect();
        headers.sort_unstable();
        headers.dedup();
        assert_eq!(headers.len(), full.len(), "each step says which it is");
    }

    #[test]
    fn the_full_run_builds_every_tiers_go_binaries_once_in_the_order_they_are_needed() {
        assert_eq!(
            go_builds(&plan(None)),
            [
                GoBuild::ControlPlane,
                GoBuild::ClusterInventory,
                GoBuild::TestProxy,
                GoBuild::Karmada,
                GoBuild::Ocm,
                GoBuild::KubeFed,
            ],
            "the plain tier's first, then each hub's"
        );
        for (name, builds) in [
            (
                "plain",
                &[
                    GoBuild::ControlPlane,
                    GoBuild::ClusterInventory,
                    GoBuild::TestProxy,
                ][..],
            ),
            ("karmada", &[GoBuild::ControlPlane, GoBuild::Karmada]),
            ("ocm", &[GoBuild::ControlPlane, GoBuild::Ocm]),
            ("kubefed", &[GoBuild::ControlPlane, GoBuild::KubeFed]),
            (
                "scale",
                &[GoBuild::ControlPlane, GoBuild::Karmada, GoBuild::Ocm],
            ),
        ] {
            let tier = Tier::parse(name).expect("a tier");
            assert_eq!(
                go_builds(&plan(Some(tier))),
                builds,
                "{name} builds its own"
            );
        }
        for check in [Step::Fmt, Step::Clippy, Step::Layers, Step::Unit] {
            assert!(check.go_builds().is_empty(), "{check:?} needs no Go");
        }
    }

    #[test]
    fn an_unknown_tier_names_the_known_ones() {
        let error = Tier::parse("kubefeed").expect_err("no such tier");
        assert_eq!(
            error.to_string(),
            "--tier knows plain, karmada, ocm, kubefed, scale, not `kubefeed`"
        );
    }
}
