//! The test environment's forward proxy (`xtask/go/testproxy`: an HTTP CONNECT proxy built on
//! goproxy, or a SOCKS5 proxy with `-socks5`), built like the other Go binaries into
//! `~/.cache/flotilla/testenv/testproxy-<goproxy release>/` and stamped; `testenv binary
//! testproxy` prints where, for the integration tests that start one in front of a member. It
//! only builds and names the binary: it must not start a proxy (the tests start and stop their
//! own).

use std::path::PathBuf;

use anyhow::Result;

use crate::gobuild::{self, Component, Mode};
use crate::paths;

/// The wrapper module's directory under `xtask/go/` and the cache's prefix.
const WRAPPER: &str = "testproxy";
/// The module whose release names the build (the SOCKS5 half is pinned beside it).
const MODULE: &str = "github.com/elazarl/goproxy";
pub const BINARY: &str = "testproxy";

fn version() -> Result<String> {
    gobuild::require_version(&paths::go_module_dir(WRAPPER).join("go.mod"), MODULE)
}

fn component(v: &str) -> Component {
    Component {
        name: BINARY,
        module: WRAPPER,
        package: ".",
        ldflags: format!("-s -w -X main.version={v}"),
        expect_version: format!("testproxy version {v}"),
        version_args: &["-version"],
        version: v.to_string(),
        estimate: "under a minute",
    }
}

/// Builds the proxy when its stamp does not match its inputs; its path.
pub fn ensure_built(mode: Mode<'_>) -> Result<PathBuf> {
    let v = version()?;
    let dir = paths::cache_dir(&format!("{WRAPPER}-{v}"))?;
    gobuild::ensure_components(&dir, &[component(&v)], mode)?;
    Ok(dir.join(BINARY))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_comes_from_the_wrapper_module() {
        let v = version().expect("the wrapper's go.mod names goproxy");
        assert!(v.starts_with("v1."), "{v}");
        assert_eq!(
            component(&v).expect_version,
            format!("testproxy version {v}")
        );
    }
}
