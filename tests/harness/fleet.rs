//! Fleet directories for tests, built in one expression instead of a temp dir and a run of
//! `std::fs::write`s: `FleetDir::new().clusters(inventory).fleet(text)` is a temporary
//! directory holding `clusters.yaml` and `fleet.yaml`, removed on drop. The fleet lives in a
//! `fleet/` folder of its own temp dir, so what a test keeps beside it (a state directory, a
//! kubeconfig) never becomes one of the fleet's files. It only writes files; what a test
//! does with the fleet is the test's.

use std::path::{Path, PathBuf};

/// A fleet directory on disk, deleted when dropped.
pub struct FleetDir {
    dir: tempfile::TempDir,
    fleet: PathBuf,
}

impl FleetDir {
    /// An empty fleet directory.
    pub fn new() -> FleetDir {
        let dir = tempfile::tempdir().expect("temp dir");
        let fleet = dir.path().join("fleet");
        std::fs::create_dir_all(&fleet).expect("mkdir the fleet dir");
        FleetDir { dir, fleet }
    }

    /// A fleet directory holding a copy of `testdata/fleets/<fixture>`'s files.
    pub fn copy_of(fixture: &str) -> FleetDir {
        let fleet = FleetDir::new();
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/fleets")
            .join(fixture);
        for entry in std::fs::read_dir(&source).expect("fixture") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), fleet.join(entry.file_name())).expect("copy");
        }
        fleet
    }

    /// With `clusters.yaml` (the inventory) holding `text`.
    pub fn clusters(self, text: impl AsRef<str>) -> FleetDir {
        self.file("clusters.yaml", text)
    }

    /// With `fleet.yaml` holding `text`.
    pub fn fleet(self, text: impl AsRef<str>) -> FleetDir {
        self.file("fleet.yaml", text)
    }

    /// With file `name` (a path inside the fleet, folders made as needed) holding `text`.
    pub fn file(self, name: &str, text: impl AsRef<str>) -> FleetDir {
        self.write(name, text);
        self
    }

    /// Writes (or rewrites) file `name` of the fleet.
    pub fn write(&self, name: &str, text: impl AsRef<str>) {
        let path = self.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, text.as_ref())
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// The fleet directory, as `--fleet` takes it.
    pub fn path(&self) -> &Path {
        &self.fleet
    }

    /// The path of file `name` in the fleet.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.fleet.join(name)
    }

    /// File `name` of the fleet as it is now.
    pub fn read(&self, name: &str) -> String {
        let path = self.join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    }

    /// A path beside the fleet (not in it) for what the test keeps with it: a state
    /// directory, a kubeconfig.
    pub fn beside(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A state directory beside the fleet (made on first use), for `XDG_STATE_HOME`: where the
    /// console and the CLI keep the audit log and the edit journal.
    pub fn state(&self) -> PathBuf {
        let state = self.beside("state");
        std::fs::create_dir_all(&state).expect("mkdir the state dir");
        state
    }

    /// The temp directory holding the fleet (`fleet/`) and what is [`beside`](Self::beside) it.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

impl Default for FleetDir {
    fn default() -> Self {
        FleetDir::new()
    }
}
