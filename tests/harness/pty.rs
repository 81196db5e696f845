//! The real `flotilla` binary in a pseudo-terminal with a vt100 screen fed from its output
//! (`PtyApp`), for tests that must see what a user's terminal shows, and how long a test
//! waits for a screen. It must not reach into the console's code: it only types and reads.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// How long to wait for a screen to appear; raise with FLOTILLA_TEST_WAIT_SECS on slow machines.
pub fn wait_limit() -> Duration {
    let secs = std::env::var("FLOTILLA_TEST_WAIT_SECS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(30);
    Duration::from_secs(secs)
}

/// The real binary running in a pseudo-terminal, with a vt100 screen fed from its output.
pub struct PtyApp {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: mpsc::Receiver<Vec<u8>>,
    pub parser: vt100::Parser,
    /// Everything the program wrote, for checks on raw escape sequences.
    pub raw: Vec<u8>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    _state_dir: tempfile::TempDir,
}

impl PtyApp {
    pub fn spawn(args: &[&str], cols: u16, rows: u16, env: &[(&str, &str)]) -> PtyApp {
        PtyApp::spawn_in(None, args, cols, rows, env)
    }

    /// [`PtyApp::spawn`] in the working directory `dir` (relative paths resolve there).
    pub fn spawn_in(
        dir: Option<&std::path::Path>,
        args: &[&str],
        cols: u16,
        rows: u16,
        env: &[(&str, &str)],
    ) -> PtyApp {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let state_dir = tempfile::tempdir().expect("temp dir");
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_flotilla"));
        command.args(args);
        if let Some(dir) = dir {
            command.cwd(dir);
        }
        command.env("TERM", "xterm-256color");
        command.env("XDG_STATE_HOME", state_dir.path());
        command.env("XDG_CONFIG_HOME", state_dir.path());
        command.env_remove("NO_COLOR");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pty.slave.spawn_command(command).expect("spawn flotilla");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer = pty.master.take_writer().expect("pty writer");
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            loop {
                match reader.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buffer[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        PtyApp {
            child,
            writer,
            output,
            parser: vt100::Parser::new(
                std::num::NonZeroU16::new(rows).expect("rows > 0"),
                std::num::NonZeroU16::new(cols).expect("cols > 0"),
                0,
            ),
            raw: Vec::new(),
            master: pty.master,
            _state_dir: state_dir,
        }
    }

    fn pump(&mut self, wait: Duration) {
        if let Ok(chunk) = self.output.recv_timeout(wait) {
            self.accept(&chunk);
            while let Ok(more) = self.output.try_recv() {
                self.accept(&more);
            }
        }
    }

    fn accept(&mut self, chunk: &[u8]) {
        self.parser.process(chunk);
        self.raw.extend_from_slice(chunk);
        // Answer cursor-position queries as a terminal would.
        if chunk.windows(4).any(|w| w == b"\x1b[6n") {
            let (row, col) = self.parser.screen().cursor_position();
            let _ = write!(self.writer, "\x1b[{};{}R", row + 1, col + 1);
        }
    }

    pub fn screen_text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Waits until the screen satisfies `check`; panics with the screen when it never does.
    pub fn wait_for(&mut self, what: &str, check: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(what, wait_limit(), check)
    }

    /// [`PtyApp::wait_for`] with a longer guard against hangs, for what takes long in a debug
    /// build (the largest demo fleet settling).
    pub fn wait_for_within(
        &mut self,
        what: &str,
        limit: Duration,
        check: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let text = self.screen_text();
            if check(&text) {
                return text;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; the screen was:\n{text}");
            }
            self.pump(Duration::from_millis(50));
        }
    }

    /// On the demo: selects shop/inventory on edge-store-0001 (a cluster not danger-class) by
    /// filtering both panes to it, waiting until each filter shows.
    pub fn select_inventory_on_the_edge(&mut self) {
        self.wait_for("the fleet", |s| {
            s.contains("edge-store-0001") && s.contains("shop/inventory")
        });
        self.send("/edge-store-0001\r");
        self.wait_for("the clusters filtered", |s| !s.contains("prod-eu-west-2"));
        self.send("\t/inventory\r");
        self.wait_for("the resources filtered", |s| !s.contains("shop/checkout"));
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// Resizes the terminal as a window manager would (the program gets SIGWINCH).
    pub fn resize_to(&mut self, cols: u16, rows: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize pty");
        if let (Some(rows), Some(cols)) = (NonZeroU16::new(rows), NonZeroU16::new(cols)) {
            self.parser.screen_mut().set_size(rows, cols);
        }
    }

    /// Whether the program is still running.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the program to exit and returns its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let deadline = Instant::now() + wait_limit();
        loop {
            self.pump(Duration::from_millis(20));
            if let Some(status) = self.child.try_wait().expect("poll child") {
                // Collect whatever it printed on the way out.
                self.pump(Duration::from_millis(100));
                return status.exit_code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "flotilla did not exit; the screen was:\n{}",
                    self.screen_text()
                );
            }
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }
}

impl Drop for PtyApp {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}
