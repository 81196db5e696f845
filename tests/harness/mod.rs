//! The test harness every integration test shares, one module with a room per way of driving
//! flotilla: `console` drives the console headless through its session and the real key
//! path, `pty` runs the real binary in a pseudo-terminal, `fleet` builds the fleet
//! directories they read, `completion` asks the binary for shell completions, `testenv`
//! reaches the real test environment (`cargo xtask testenv`: its kubeconfig, kubectl as an
//! independent verifier, a namespace per test, the console's backend run until a state
//! holds), and `faults` and `proxy` break and proxy that environment. It must not start the
//! environment itself (that is `cargo xtask test`'s job); each test binary uses a different
//! part of it.
#![allow(dead_code)]

pub mod completion;
pub mod console;
pub mod faults;
pub mod fleet;
pub mod proxy;
pub mod pty;
pub mod testenv;

#[allow(unused_imports)] // each test binary uses a different part
pub use fleet::FleetDir;
#[allow(unused_imports)]
pub use pty::{PtyApp, wait_limit};
#[allow(unused_imports)]
pub use testenv::*;
