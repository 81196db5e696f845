//! `cargo xtask fuzz --minutes N [--scale S]`: the long run of the property-based fuzz tests
//! (`tests/fuzz.rs`, which `cargo xtask test` runs with small case counts). Builds the test
//! binary once in release, then runs it round after round — fresh random seeds every round,
//! every property's case count multiplied by S (`FLOTILLA_FUZZ_SCALE`) — until N minutes have
//! passed, printing one line per round. The first failure ends the run with the test output:
//! proptest's shrunk input, which it also saves in `tests/fuzz.proptest-regressions` so every
//! later run replays it first. A round that takes ten times as long as the first is stopped
//! and reported as a hang, naming the tests that had not finished. It must leave nothing running that it
//! started, and writes only under `target/`.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::paths;

pub const USAGE: &str = "usage: cargo xtask fuzz [--minutes N] [--scale S]";

/// Rounds multiply every property's case count by this unless `--scale` says otherwise: a
/// round then takes under a minute in release on two cores.
const DEFAULT_SCALE: u32 = 100;

/// A round that takes this many times as long as the first is stopped as a hang (never sooner
/// than [`MIN_ROUND_LIMIT`]); the first round may take [`FIRST_ROUND_PER_SCALE`] per unit of
/// scale (a hundred times what it needs on two cores), at least [`FIRST_ROUND_LIMIT`].
const HANG_FACTOR: u32 = 10;
const MIN_ROUND_LIMIT: Duration = Duration::from_secs(5 * 60);
const FIRST_ROUND_PER_SCALE: Duration = Duration::from_secs(30);
const FIRST_ROUND_LIMIT: Duration = Duration::from_secs(20 * 60);

/// How long a round may run before it counts as hung.
fn round_limit(scale: u32, first_round: Option<Duration>) -> Duration {
    match first_round {
        Some(took) => (took * HANG_FACTOR).max(MIN_ROUND_LIMIT),
        None => (FIRST_ROUND_PER_SCALE * scale).max(FIRST_ROUND_LIMIT),
    }
}

/// How long proptest may spend shrinking one failure (milliseconds) unless the caller set
/// `PROPTEST_MAX_SHRINK_TIME`; the iteration cap is lifted so time is the bound.
const SHRINK_TIME_MS: &str = "120000";
const SHRINK_ITERS: &str = "10000000";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub minutes: f64,
    pub scale: u32,
}

/// Parses `[--minutes N] [--scale S]` (also `--flag=value`, any order); the defaults are 10
/// minutes and [`DEFAULT_SCALE`].
pub fn parse_args(words: &[&str]) -> Result<Options> {
    let mut minutes = None;
    let mut scale = None;
    let mut rest = words;
    while let [first, tail @ ..] = rest {
        let (flag, value, tail) = match first.split_once('=') {
            Some((flag, value)) => (flag, value, tail),
            None => match tail {
                [value, tail @ ..] => (*first, *value, tail),
                [] => bail!("{USAGE}"),
            },
        };
        match flag {
            "--minutes" if minutes.is_none() => {
                let n: f64 = value
                    .parse()
                    .with_context(|| format!("--minutes wants a number, got `{value}`"))?;
                if !(n > 0.0 && n <= 7.0 * 24.0 * 60.0) {
                    bail!("--minutes must be above 0 and at most a week, got {value}");
                }
                minutes = Some(n);
            }
            "--scale" if scale.is_none() => {
                let n: u32 = value
                    .parse()
                    .with_context(|| format!("--scale wants a whole number, got `{value}`"))?;
                if !(1..=100_000).contains(&n) {
                    bail!("--scale must be between 1 and 100000, got {n}");
                }
                scale = Some(n);
            }
            _ => bail!("{USAGE}"),
        }
        rest = tail;
    }
    Ok(Options {
        minutes: minutes.unwrap_or(10.0),
        scale: scale.unwrap_or(DEFAULT_SCALE),
    })
}

/// Variables `cargo run` gives this process that describe xtask's own package.
const PACKAGE_VARS: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "OUT_DIR",
];

/// `cargo` in the environment a person runs it in: without xtask's package variables. Build
/// scripts such as ring's track `CARGO_MANIFEST_DIR` and `CARGO_PKG_*`, so seeing xtask's
/// values would rebuild them here, and again on the next plain `cargo test --release`.
fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(paths::repo_root());
    for (key, _) in std::env::vars_os() {
        if key
            .to_str()
            .is_some_and(|k| k.starts_with("CARGO_PKG_") || PACKAGE_VARS.contains(&k))
        {
            cmd.env_remove(&key);
        }
    }
    cmd
}

fn work_dir() -> PathBuf {
    paths::repo_root().join("target").join("xtask-fuzz")
}

/// Builds `tests/fuzz.rs` in release and returns its executable.
fn build() -> Result<PathBuf> {
    say!("==> cargo test --release --test fuzz --no-run");
    let mut child = cargo()
        .args([
            "test",
            "--release",
            "--test",
            "fuzz",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .context("could not run cargo")?;
    let mut executable = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap_or_default();
            if let Some(path) = test_executable(&line) {
                executable = Some(path);
            }
        }
    }
    let status = child.wait().context("could not wait for cargo")?;
    if !status.success() {
        bail!("building the fuzz tests failed ({status})");
    }
    executable.context("cargo built no executable for tests/fuzz.rs")
}

/// The executable of the `fuzz` test target, from one line of cargo's JSON messages.
fn test_executable(line: &str) -> Option<PathBuf> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    let target = message.get("target")?;
    let is_fuzz_test = message.get("reason")?.as_str()? == "compiler-artifact"
        && target.get("name")?.as_str()? == "fuzz"
        && target
            .get("kind")?
            .as_array()?
            .iter()
            .any(|k| k.as_str() == Some("test"));
    is_fuzz_test
        .then(|| message.get("executable")?.as_str().map(PathBuf::from))
        .flatten()
}

/// The tests the binary holds (`name: test` lines of `--list`).
fn list_tests(exe: &Path) -> Result<Vec<String>> {
    let out = Command::new(exe)
        .args(["--list"])
        .current_dir(paths::repo_root())
        .output()
        .with_context(|| format!("could not run {} --list", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect())
}

/// Names of the tests a libtest log reports finished (`test NAME ... ok|FAILED|ignored`).
fn finished_tests(log: &str) -> BTreeSet<String> {
    log.lines()
        .filter_map(|line| line.strip_prefix("test "))
        .filter_map(|rest| rest.split_once(" ... "))
        .map(|(name, _)| name.to_string())
        .collect()
}

/// What one round did.
enum Round {
    Passed {
        cases: u64,
        took: Duration,
    },
    Failed {
        log: String,
        status: String,
    },
    Hung {
        log: String,
        unfinished: Vec<String>,
        limit: Duration,
    },
}

fn run_round(exe: &Path, options: &Options, tests: &[String], limit: Duration) -> Result<Round> {
    let dir = work_dir();
    fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
    let log_path = dir.join("round.log");
    let cases_path = dir.join("cases");
    let log = File::create(&log_path)
        .with_context(|| format!("could not create {}", log_path.display()))?;
    let log_err = log.try_clone().context("could not share the round log")?;
    // The test binary appends each property's case count here.
    File::create(&cases_path)
        .with_context(|| format!("could not create {}", cases_path.display()))?;
    let mut cmd = Command::new(exe);
    cmd.current_dir(paths::repo_root())
        .env("FLOTILLA_FUZZ_SCALE", options.scale.to_string())
        .env("FLOTILLA_FUZZ_REPORT", &cases_path)
        .stdout(log)
        .stderr(log_err);
    for (var, default) in [
        ("PROPTEST_MAX_SHRINK_TIME", SHRINK_TIME_MS),
        ("PROPTEST_MAX_SHRINK_ITERS", SHRINK_ITERS),
    ] {
        if std::env::var_os(var).is_none() {
            cmd.env(var, default);
        }
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("could not run {}", exe.display()))?;
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .context("could not wait for the fuzz tests")?
        {
            break Some(status);
        }
        if started.elapsed() > limit {
            // Our own child, by its handle: nothing else is touched.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let took = started.elapsed();
    let log = fs::read_to_string(&log_path).unwrap_or_default();
    match status {
        None => {
            let finished = finished_tests(&log);
            let unfinished = tests
                .iter()
                .filter(|t| !finished.contains(*t))
                .cloned()
                .collect();
            Ok(Round::Hung {
                log,
                unfinished,
                limit,
            })
        }
        Some(status) if !status.success() => Ok(Round::Failed {
            log,
            status: status.to_string(),
        }),
        Some(_) => {
            let cases = fs::read_to_string(&cases_path)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse::<u64>().ok())
                .sum();
            Ok(Round::Passed { cases, took })
        }
    }
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}m{:02}s", s / 60, s % 60)
}

pub fn run(options: &Options) -> Result<ExitCode> {
    let exe = build()?;
    let tests = list_tests(&exe)?;
    if std::env::var_os("PROPTEST_CASES").is_some() {
        say!(
            "note: PROPTEST_CASES is set; it fixes every property's case count and --scale is ignored"
        );
    }
    let budget = Duration::from_secs_f64(options.minutes * 60.0);
    say!(
        "==> fuzzing for {} with {} tests at scale {} (each round: fresh seeds, {}× the default cases)",
        clock(budget),
        tests.len(),
        options.scale,
        options.scale
    );
    let start = Instant::now();
    let mut rounds = 0u32;
    let mut total_cases = 0u64;
    let mut first_round = None;
    while start.elapsed() < budget {
        rounds += 1;
        let limit = round_limit(options.scale, first_round);
        match run_round(&exe, options, &tests, limit)? {
            Round::Passed { cases, took } => {
                first_round.get_or_insert(took);
                total_cases += cases;
                say!(
                    "round {rounds}: {cases} cases passed in {:.1} s ({} of {})",
                    took.as_secs_f64(),
                    clock(start.elapsed()),
                    clock(budget)
                );
            }
            Round::Failed { log, status } => {
                say!("{log}");
                say!(
                    "round {rounds}: FAILED ({status}) after {}",
                    clock(start.elapsed())
                );
                regressions_note();
                return Ok(ExitCode::FAILURE);
            }
            Round::Hung {
                log,
                unfinished,
                limit,
            } => {
                say!("{log}");
                say!(
                    "round {rounds}: stopped after {} without finishing: a property hangs; unfinished: {}",
                    clock(limit),
                    unfinished.join(", ")
                );
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    say!(
        "fuzz: no failure in {total_cases} cases over {rounds} round{} ({})",
        if rounds == 1 { "" } else { "s" },
        clock(start.elapsed())
    );
    Ok(ExitCode::SUCCESS)
}

fn regressions_note() {
    let file = paths::repo_root().join("tests/fuzz.proptest-regressions");
    if file.exists() {
        say!(
            "the shrunk input is saved in {} (commit it: every run replays it first)",
            file.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_default_and_forms() {
        let defaults = parse_args(&[]).expect("defaults");
        assert_eq!(
            defaults,
            Options {
                minutes: 10.0,
                scale: DEFAULT_SCALE
            }
        );
        let both = parse_args(&["--scale=3", "--minutes", "1.5"]).expect("both");
        assert_eq!(
            both,
            Options {
                minutes: 1.5,
                scale: 3
            }
        );
        for bad in [
            &["--minutes"][..],
            &["--minutes", "0"],
            &["--minutes", "x"],
            &["--scale", "0"],
            &["--minutes", "1", "--minutes", "2"],
            &["--nope", "1"],
        ] {
            assert!(parse_args(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn finds_the_fuzz_executable_in_cargo_messages() {
        let fuzz = r#"{"reason":"compiler-artifact","target":{"name":"fuzz","kind":["test"]},"executable":"/t/fuzz-1"}"#;
        let other = r#"{"reason":"compiler-artifact","target":{"name":"flotilla","kind":["lib"]},"executable":null}"#;
        assert_eq!(test_executable(fuzz), Some(PathBuf::from("/t/fuzz-1")));
        assert_eq!(test_executable(other), None);
        assert_eq!(test_executable("not json"), None);
    }

    #[test]
    fn a_round_may_take_ten_times_the_first() {
        let minute = Duration::from_secs(60);
        assert_eq!(round_limit(100, Some(minute)), 10 * minute);
        assert_eq!(
            round_limit(100, Some(Duration::from_secs(1))),
            MIN_ROUND_LIMIT
        );
        assert_eq!(round_limit(1, None), FIRST_ROUND_LIMIT);
        assert_eq!(round_limit(1_000, None), 500 * minute);
    }

    #[test]
    fn finished_tests_come_from_result_lines() {
        let log = "running 3 tests\ntest a ... ok\ntest b ... FAILED\nproptest: noise\n";
        let done = finished_tests(log);
        assert!(done.contains("a") && done.contains("b"));
        assert_eq!(done.len(), 2);
    }
}
