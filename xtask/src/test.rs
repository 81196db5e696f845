//! `cargo xtask test`: the one test command (README and `.ci/run` call it). Runs the format
//! check, clippy, the layer check (`cargo xtask layers`), the workspace tests, then the
//! integration tier against a real test environment, stopping at the first failure. It must
//! never skip the integration tier, and must leave nothing running that it started.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::gobuild::{self, Versions};
use crate::layers;
use crate::paths;
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

pub fn run() -> Result<()> {
    let total_start = Instant::now();
    let mut timings: Vec<(String, Duration)> = Vec::new();
    let steps = 6 + HUB_TIERS.len();
    let mut tally = Tally::default();
    let result = run_steps(steps, &mut timings, &mut tally);
    say!("\n==> summary");
    for (what, took) in &timings {
        say!("  {:>7.1} s  {what}", took.as_secs_f64());
    }
    say!("  {:>7.1} s  total", total_start.elapsed().as_secs_f64());
    match &result {
        Ok(()) => say!("cargo xtask test: all steps passed"),
        Err(_) => say!("cargo xtask test: FAILED (the error follows)"),
    }
    // One closing line counting every test executed from step 4 on (the integration tests
    // that step 4 lists as ignored are the ones the later steps run).
    say!("tests: {} passed, {} failed", tally.passed, tally.failed);
    result
}

fn run_steps(steps: usize, timings: &mut Vec<(String, Duration)>, tally: &mut Tally) -> Result<()> {
    let mut step = |n: usize, what: &str, f: &mut dyn FnMut() -> Result<()>| -> Result<()> {
        header(n, steps, what);
        let t = Instant::now();
        let r = f();
        timings.push((what.to_string(), t.elapsed()));
        say!(
            "--- [{n}/{steps}] {what}: {} in {:.1} s",
            if r.is_ok() { "ok" } else { "FAILED" },
            t.elapsed().as_secs_f64()
        );
        r
    };

    step(1, "cargo fmt --all -- --check", &mut || {
        let mut cmd = cargo();
        cmd.args(["fmt", "--all", "--", "--check"]);
        run_checked(cmd, "cargo fmt --all -- --check")
    })?;
    step(
        2,
        "cargo clippy --workspace --all-targets -- -D warnings",
        &mut || {
            let mut cmd = cargo();
            cmd.args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]);
            run_checked(cmd, "cargo clippy --workspace --all-targets -- -D warnings")
        },
    )?;
    step(
        3,
        "cargo xtask layers (import cycles and layers)",
        &mut layers::check_all,
    )?;
    step(4, "cargo test --workspace --all-targets", &mut || {
        let mut cmd = cargo();
        cmd.args(["test", "--workspace", "--all-targets"]);
        run_counting(cmd, "cargo test --workspace --all-targets", tally)
    })?;
    step(
        5,
        "integration tier against a real test environment (cargo xtask testenv)",
        &mut || integration(tally),
    )?;
    for (n, tier) in HUB_TIERS.iter().enumerate() {
        step(6 + n, tier.what, &mut || hub_tier(tier, tally))?;
    }
    step(
        6 + HUB_TIERS.len(),
        "scale tier: Karmada and OCM scale hubs at CI size",
        &mut || scale_tier(tally),
    )?;
    Ok(())
}

/// `cargo xtask test-scale`: the scale tier on its own (it is also `test`'s last step).
pub fn run_scale() -> Result<()> {
    let mut tally = Tally::default();
    scale_tier(&mut tally)
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

const HUB_TIERS: [HubTier; 3] = [
    HubTier {
        hub: Hub::Karmada,
        name: "Karmada",
        what: "Karmada hub tier against a real Karmada control plane (testenv up --hub karmada)",
        test_file: "testenv_karmada",
    },
    HubTier {
        hub: Hub::Ocm,
        name: "OCM",
        what: "OCM hub tier against a real Open Cluster Management hub (testenv up --hub ocm)",
        test_file: "testenv_ocm",
    },
    HubTier {
        hub: Hub::KubeFed,
        name: "KubeFed",
        what: "KubeFed hub tier against a real KubeFed controller (testenv up --hub kubefed)",
        test_file: "testenv_kubefed",
    },
];

fn hub_tier(tier: &HubTier, tally: &mut Tally) -> Result<()> {
    let versions = Versions::from_wrappers()?;
    // The hub's own binaries too: else Go must be there to build them.
    let hub_cached = tier
        .hub
        .build()
        .map_or(Ok(true), |b| b.cache_is_complete())?;
    if !gobuild::cache_is_complete(&versions)? || !hub_cached {
        gobuild::check_go()?;
    }
    let me = Owner::Test {
        pid: std::process::id(),
    };
    let t = Instant::now();
    let owner = testenv::up(Members::AtLeast(2), tier.hub, me)?;
    say!(
        "--- {} testenv ready in {:.1} s",
        tier.name,
        t.elapsed().as_secs_f64()
    );
    let ours = owner == me;
    let kubeconfig = paths::kubeconfig();
    let mut cmd = cargo();
    // Hub edits driven in-process write the audit log: keep it out of the user's state.
    cmd.args(["test", "--test", tier.test_file, "--", "--ignored"])
        .env("FLOTILLA_TESTENV_KUBECONFIG", &kubeconfig)
        .env("XDG_STATE_HOME", paths::testenv_dir().join("state"));
    if let Ok(me) = std::env::current_exe() {
        cmd.env("FLOTILLA_XTASK_BIN", me);
    }
    let what = format!("cargo test --test {} -- --ignored", tier.test_file);
    say!(
        "--- FLOTILLA_TESTENV_KUBECONFIG={} {what}",
        kubeconfig.display()
    );
    let tests = run_counting(cmd, &what, tally);
    let stopped = if ours {
        say!(
            "--- stopping the {} test environment this run started",
            tier.name
        );
        testenv::down()
    } else {
        say!("--- leaving the test environment running (it was started by `testenv up`)");
        Ok(())
    };
    tests?;
    stopped
}

/// The scale step: for each hub kind, the scale environment at CI size (reused when one of
/// that size runs), `tests/testenv_scale.rs`'s tests of that kind, and the environment
/// stopped again if this run started it.
fn scale_tier(tally: &mut Tally) -> Result<()> {
    let versions = Versions::from_wrappers()?;
    for (kind, tests) in [
        (ScaleKind::Karmada, SCALE_KARMADA_TESTS),
        (ScaleKind::Ocm, SCALE_OCM_TESTS),
    ] {
        let build = match kind {
            ScaleKind::Karmada => &gobuild::KARMADA,
            ScaleKind::Ocm => &gobuild::OCM,
        };
        if !gobuild::cache_is_complete(&versions)? || !build.cache_is_complete()? {
            gobuild::check_go()?;
        }
        let me = Owner::Test {
            pid: std::process::id(),
        };
        let t = Instant::now();
        let args = scale::checked(kind, SCALE_CI_CLUSTERS, SCALE_CI_RESOURCES, None)?;
        let owner = scale::up(args, me)?;
        say!(
            "--- {} scale hub ready in {:.1} s",
            kind.flag(),
            t.elapsed().as_secs_f64()
        );
        let kubeconfig = paths::kubeconfig();
        let mut cmd = cargo();
        cmd.args(["test", "--test", "testenv_scale", "--", "--ignored", tests])
            .env("FLOTILLA_TESTENV_KUBECONFIG", &kubeconfig);
        let what = format!("cargo test --test testenv_scale -- --ignored {tests}");
        say!(
            "--- FLOTILLA_TESTENV_KUBECONFIG={} {what}",
            kubeconfig.display()
        );
        let result = run_counting(cmd, &what, tally);
        let stopped = if owner == me {
            say!("--- stopping the scale environment this run started");
            testenv::down()
        } else {
            say!("--- leaving the scale environment running (it was started by `testenv up`)");
            Ok(())
        };
        result?;
        stopped?;
    }
    Ok(())
}

fn integration(tally: &mut Tally) -> Result<()> {
    // Fail fast and clearly when the binaries would need building and Go is missing.
    let versions = Versions::from_wrappers()?;
    if !gobuild::cache_is_complete(&versions)? {
        gobuild::check_go()?;
    }
    let me = Owner::Test {
        pid: std::process::id(),
    };
    let t = Instant::now();
    let owner = testenv::up(Members::AtLeast(3), Hub::Plain, me)?;
    say!("--- testenv ready in {:.1} s", t.elapsed().as_secs_f64());
    let ours = owner == me;

    let kubeconfig = paths::kubeconfig();
    let mut cmd = cargo();
    // Threads go through RUST_TEST_THREADS, not `--test-threads`: criterion benches (built by
    // --all-targets) accept `--ignored` but reject unknown libtest flags.
    cmd.args([
        "test",
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
    ])
    .env("FLOTILLA_TESTENV_KUBECONFIG", &kubeconfig)
    .env("RUST_TEST_THREADS", INTEGRATION_TEST_THREADS);
    // Tests that stop/start clusters call this binary instead of a nested cargo.
    if let Ok(me) = std::env::current_exe() {
        cmd.env("FLOTILLA_XTASK_BIN", me);
    }
    say!(
        "--- FLOTILLA_TESTENV_KUBECONFIG={} RUST_TEST_THREADS={INTEGRATION_TEST_THREADS} cargo test --workspace --tests -- --ignored --skip {KARMADA_TESTS} --skip {OCM_TESTS} --skip {KUBEFED_TESTS} --skip {SCALE_KARMADA_TESTS} --skip {SCALE_OCM_TESTS}",
        kubeconfig.display()
    );
    let tests = run_counting(
        cmd,
        "cargo test --workspace --tests -- --ignored (plain hub)",
        tally,
    );

    let stopped = if ours {
        say!("--- stopping the test environment this run started");
        testenv::down()
    } else {
        say!("--- leaving the test environment running (it was started by `testenv up`)");
        Ok(())
    };
    tests?;
    stopped
}
