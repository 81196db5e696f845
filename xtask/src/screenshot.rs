//! `cargo xtask screenshot`: the docs' pictures, taken of the real binary. It builds the
//! release binary and, for each picture, opens `flotilla demo` (or `flotilla watch --demo`)
//! with a fixed seed in a detached tmux session of a fixed size, presses the keys a person
//! would, and turns the coloured screen into a PNG in docs/ (tmux's capture → aha's HTML →
//! headless Chromium): the console at 160x42 (the README's) and 80x24, its log pane and a crashing workload's pods at 120x32,
//! the wall at 120x40 and 240x68. It must not draw the screen itself: what a picture shows is what the binary drew.

use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// Pixels per terminal cell at Chromium's default monospace font size, and aha's page margin.
const CELL_WIDTH: u32 = 8;
const CELL_HEIGHT: u32 = 15;
const MARGIN: u32 = 16;
/// The demo seed the pictures are taken with, so they change only when the screens do.
const SEED: &str = "7";

/// One picture: what runs, at which size, and the keys pressed once it settles.
struct Shot {
    file: &'static str,
    what: &'static str,
    args: &'static [&'static str],
    columns: u16,
    rows: u16,
    keys: &'static [(&'static str, usize)],
}

const SHOTS: [Shot; 6] = [
    // To the resources pane, down to the drifted `shop/inventory` Deployment, right onto the
    // cluster where it drifted.
    Shot {
        file: "docs/screenshot.png",
        what: "flotilla demo",
        args: &["demo"],
        columns: 160,
        rows: 42,
        keys: &[("Tab", 1), ("j", 14), ("l", 11)],
    },
    // The same cell at 80x24, with its Detail opened over the panes.
    Shot {
        file: "docs/console-80x24.png",
        what: "flotilla demo",
        args: &["demo"],
        columns: 80,
        rows: 24,
        keys: &[("Tab", 1), ("j", 14), ("l", 11), ("i", 1)],
    },
    // The same cell's log pane (L), searched for a line (/cache), the match highlighted.
    Shot {
        file: "docs/logs-120x32.png",
        what: "flotilla demo",
        args: &["demo"],
        columns: 120,
        rows: 32,
        keys: &[
            ("Tab", 1),
            ("j", 14),
            ("l", 11),
            ("L", 1),
            ("/", 1),
            ("c", 1),
            ("a", 1),
            ("c", 1),
            ("h", 1),
            ("e", 1),
            ("Enter", 1),
        ],
    },
    // A crashing workload's pods: payments/ledger on prod-eu-west-2, both panes filtered to
    // it, its object view on the events view (the chain, the pods with the crash-looping one
    // named, then the Events).
    Shot {
        file: "docs/pods-120x32.png",
        what: "flotilla demo",
        args: &["demo"],
        columns: 120,
        rows: 32,
        keys: &[
            ("/", 1),
            ("prod-eu-west-2", 1),
            ("Enter", 1),
            ("Tab", 1),
            ("/", 1),
            ("ledger", 1),
            ("Enter", 1),
            ("Enter", 1),
            ("Tab", 3),
        ],
    },
    Shot {
        file: "docs/wall-120x40.png",
        what: "flotilla watch",
        args: &["watch", "--demo"],
        columns: 120,
        rows: 40,
        keys: &[],
    },
    Shot {
        file: "docs/wall-240x68.png",
        what: "flotilla watch",
        args: &["watch", "--demo"],
        columns: 240,
        rows: 68,
        keys: &[],
    },
];

pub fn run(root: &Path) -> Result<()> {
    for tool in ["tmux", "aha", "chromium"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|out| out.status.success())
            .unwrap_or(false);
        if !found {
            bail!(
                "`{tool}` is not installed; the screenshots need tmux, aha and chromium \
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
    // Where cargo put it: `CARGO_TARGET_DIR` when set, else the repository's `target/`.
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), std::path::PathBuf::from);
    let binary = target.join("release/flotilla");
    for (index, shot) in SHOTS.iter().enumerate() {
        // A server of its own per picture: reusing one races its exit after the last session.
        let session = format!("flotilla-screenshot-{}-{index}", std::process::id());
        let command = format!(
            "{} {} --demo-seed {SEED}",
            binary.display(),
            shot.args.join(" ")
        );
        tmux(
            &session,
            &[
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                &shot.columns.to_string(),
                "-y",
                &shot.rows.to_string(),
                "-e",
                "NO_COLOR=",
                &command,
            ],
        )?;
        let taken = take(shot, &session, root);
        let _ = tmux(&session, &["kill-server"]);
        taken?;
    }
    Ok(())
}

fn take(shot: &Shot, session: &str, root: &Path) -> Result<()> {
    sleep(Duration::from_secs(12));
    for &(key, times) in shot.keys {
        for _ in 0..times {
            tmux(session, &["send-keys", "-t", session, key])?;
            sleep(Duration::from_millis(100));
        }
    }
    sleep(Duration::from_secs(1));
    let ansi = Command::new("tmux")
        .args(["-L", session, "capture-pane", "-e", "-p", "-t", session])
        .output()
        .context("capturing the tmux pane")?;
    if !ansi.status.success() {
        bail!("tmux capture-pane failed: {} may have exited", shot.what);
    }
    let scratch = root.join("target/screenshot");
    std::fs::create_dir_all(&scratch).context("creating target/screenshot")?;
    let html_path = scratch.join("screen.html");
    let mut aha = Command::new("aha")
        .args(["--black", "--title", shot.what])
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
    let png = root.join(shot.file);
    let _ = std::fs::remove_file(&png);
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
            u32::from(shot.columns) * CELL_WIDTH + MARGIN,
            u32::from(shot.rows) * CELL_HEIGHT + MARGIN
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

/// Runs tmux on the server of `server` (its socket name), which the first session starts.
fn tmux(server: &str, args: &[&str]) -> Result<()> {
    let status = Command::new("tmux")
        .args(["-L", server])
        .args(args)
        .status()
        .with_context(|| format!("running tmux {}", args.join(" ")))?;
    if !status.success() {
        bail!("tmux {} failed", args.join(" "));
    }
    Ok(())
}
