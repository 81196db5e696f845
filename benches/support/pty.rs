//! The real flotilla binary in a 250×80 pseudo-terminal, as the benches start it: state and
//! config in a directory of its own, no KUBECONFIG from the caller, and its screen read
//! through a terminal emulator that answers its cursor-position query as a terminal would.
//! It only starts and reads; what is timed is the bench's.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::Path;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

pub const ROWS: u16 = 80;
pub const COLS: u16 = 250;

/// A started flotilla and its side of the terminal.
pub struct Console {
    pub child: Box<dyn Child + Send + Sync>,
    pub reader: Box<dyn Read + Send>,
    pub writer: Box<dyn Write + Send>,
    master: Box<dyn MasterPty + Send>,
    _home: tempfile::TempDir,
}

/// Starts `program args` in a fresh pseudo-terminal.
pub fn start(program: &Path, args: &[&str]) -> Console {
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("a pty");
    let home = tempfile::tempdir().expect("state dir");
    let mut command = CommandBuilder::new(program);
    command.args(args);
    command.env_remove("KUBECONFIG");
    command.env("TERM", "xterm-256color");
    command.env("XDG_STATE_HOME", home.path());
    command.env("XDG_CONFIG_HOME", home.path());
    let child = pty.slave.spawn_command(command).expect("spawn flotilla");
    drop(pty.slave);
    let reader = pty.master.try_clone_reader().expect("pty reader");
    let writer = pty.master.take_writer().expect("pty writer");
    Console {
        child,
        reader,
        writer,
        master: pty.master,
        _home: home,
    }
}

/// A terminal emulator the size of the pseudo-terminal.
pub fn screen() -> vt100::Parser {
    vt100::Parser::new(
        NonZeroU16::new(ROWS).expect("rows"),
        NonZeroU16::new(COLS).expect("cols"),
        0,
    )
}

/// Whether `bytes` ask where the cursor is; [`CURSOR_AT_HOME`] answers.
pub fn asks_cursor_position(bytes: &[u8]) -> bool {
    bytes.windows(4).any(|w| w == b"\x1b[6n")
}

pub const CURSOR_AT_HOME: &[u8] = b"\x1b[1;1R";

impl Console {
    /// Presses `q` and waits for the process to end, reading what it still draws.
    pub fn quit(self) -> Option<u32> {
        let Console {
            mut child,
            mut reader,
            mut writer,
            master,
            _home,
        } = self;
        let _ = writer.write_all(b"q");
        let drain = std::thread::spawn(move || {
            let mut buffer = [0u8; 65536];
            while matches!(reader.read(&mut buffer), Ok(n) if n > 0) {}
        });
        let status = child.wait().ok().map(|status| status.exit_code());
        drop(writer);
        drop(master);
        let _ = drain.join();
        status
    }
}
