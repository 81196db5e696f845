//! kubectl against the test environment: a command bound to `target/testenv/kubeconfig` and
//! one of its contexts, running one with text on stdin, server-side apply, and the check that
//! kubectl is installed. Every command that talks to a cluster names that kubeconfig and a
//! context: it must never fall back to the user's (`$KUBECONFIG`, `~/.kube/config`).

use std::io::Write as _;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::paths;

/// `kubectl --kubeconfig target/testenv/kubeconfig --context <name> …`
pub fn command(context: &str) -> Command {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(paths::kubeconfig())
        .arg("--context")
        .arg(context);
    cmd
}

/// Fails clearly when kubectl is missing (readiness polls would otherwise just time out).
pub fn check_installed() -> Result<()> {
    let ok = Command::new("kubectl")
        .args(["version", "--client"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        bail!(
            "testenv needs kubectl on PATH (it waits for /readyz and creates the read-only \
             RBAC with it): install a recent kubectl"
        );
    }
    Ok(())
}

/// Runs `kubectl --context <context> <args>` with `input` on stdin; its stdout on success.
pub fn run(context: &str, args: &[&str], input: Option<&str>) -> Result<String> {
    let mut child = command(context)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running kubectl (is it on PATH?)")?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "kubectl --context {context} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

/// Server-side apply of `yaml` on `context` (field manager `flotilla-testenv`).
pub fn apply(context: &str, yaml: &str) -> Result<()> {
    run(
        context,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=flotilla-testenv",
            "-f",
            "-",
        ],
        Some(yaml),
    )
    .map(|_| ())
}

/// Server-side apply of the CRDs in `path` (a file or a directory) on `context`, then waits
/// until every one is Established.
pub fn install_crds(context: &str, path: &std::path::Path) -> Result<()> {
    let arg = path.display().to_string();
    run(
        context,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=flotilla-testenv",
            "-f",
            &arg,
        ],
        None,
    )?;
    run(
        context,
        &[
            "wait",
            "--for=condition=Established",
            "--timeout=90s",
            "-f",
            &arg,
        ],
        None,
    )?;
    Ok(())
}
