//! `cargo xtask screenshot`: the README's picture, taken of the real binary. It builds the
//! release binary, opens `flotilla demo` with a fixed seed in a detached tmux session of a fixed
//! size, moves to a drifted cell as a person would, and turns the coloured screen into
//! `docs/screenshot.png` (tmux's capture → aha's HTML → headless Chromium). It must not draw the
//! screen itself: what the picture shows is what the binary drew.

use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::Duration;

use anyhow::{Context, Result, bail};

const COLUMNS: u16 = 160;
const ROWS: u16 = 42;
/// Pixels per terminal cell at Chromium's default monospace font size, and aha's page margin.
const CELL_WIDTH: u32 = 8;
const CELL_HEIGHT: u32 = 15;
const MARGIN: u32 = 16;
/// The demo seed the picture is taken with, so it changes only when the console does.
const SEED: &str = "7";
/// Keys pressed after the demo settles: to the resources pane, down to the drifted
/// `shop/inventory` Deployment, right onto the cluster where it drifted.
const KEYS: &[(&str, usize)] = &[("Tab", 1), ("j", 14), ("l", 11)];

pub fn run(root: &Path) -> Result<()> {
    for tool in ["tmux", "aha", "chromium"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|out| out.status.success())
            .unwrap_or(false);
        if !found {
            bail!(
                "`{tool}` is not installed; the screenshot needs tmux, aha and chromium \
                 (Debian/Ubuntu: apt-get install tmux aha chromium)"
            );
        }
    }
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--bin", "flotilla"])
        .current_dir(root)
        .status()
        .context("running cargo build --release")?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    let binary = root.join("target/release/flotilla");
    let session = format!("flotilla-screenshot-{}", std::process::id());
    let command = format!("{} demo --demo-seed {SEED}", binary.display());
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        &COLUMNS.to_string(),
        "-y",
        &ROWS.to_string(),
        "-e",
        "NO_COLOR=",
        &command,
    ])?;
    let taken = take(&session, root);
    let _ = tmux(&["kill-session", "-t", &session]);
    taken
}

fn take(session: &str, root: &Path) -> Result<()> {
    sleep(Duration::from_secs(12));
    for &(key, times) in KEYS {
        for _ in 0..times {
            tmux(&["send-keys", "-t", session, key])?;
            sleep(Duration::from_millis(100));
        }
    }
    sleep(Duration::from_secs(1));
    let ansi = Command::new("tmux")
        .args(["capture-pane", "-e", "-p", "-t", session])
        .output()
        .context("capturing the tmux pane")?;
    if !ansi.status.success() {
        bail!("tmux capture-pane failed: the demo may have exited");
    }
    let scratch = root.join("target/screenshot");
    std::fs::create_dir_all(&scratch).context("creating target/screenshot")?;
    let html_path = scratch.join("screen.html");
    let mut aha = Command::new("aha")
        .args(["--black", "--title", "flotilla demo"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("starting aha")?;
    {
        use std::io::Write as _;
        let mut stdin = aha.stdin.take().context("aha's stdin")?;
        stdin.write_all(&ansi.stdout).context("feeding aha")?;
    }
    let html = aha.wait_with_output().context("running aha")?;
    std::fs::write(&html_path, &html.stdout).context("writing the screen's HTML")?;
    let png = root.join("docs/screenshot.png");
    let profile = scratch.join("chromium-profile");
    let status = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!(
            "--window-size={},{}",
            u32::from(COLUMNS) * CELL_WIDTH + MARGIN,
            u32::from(ROWS) * CELL_HEIGHT + MARGIN
        ))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html_path.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .context("running chromium")?;
    if !status.success() || !png.exists() {
        bail!("chromium did not write {}", png.display());
    }
    say!("wrote {}", png.display());
    Ok(())
}

fn tmux(args: &[&str]) -> Result<()> {
    let status = Command::new("tmux")
        .args(args)
        .status()
        .with_context(|| format!("running tmux {}", args.join(" ")))?;
    if !status.success() {
        bail!("tmux {} failed", args.join(" "));
    }
    Ok(())
}
