//! flotilla: a terminal fleet console for multi-cluster Kubernetes.
//!
//! The loop, end to end: the terminal loop (`console`) turns keys (through the key map in
//! `config`), resizes, signals and clock ticks into an [`app::Action`], keys first;
//! `update(&mut State, Action)` in `app` is the one place the console's state changes — the
//! state owns the fleet and its files, and derives the selected cell's explanation and the
//! editors' previews itself — and returns `Effect`s that the session hands to the backend's
//! tasks (`backend`: the simulated fleet, live clusters or a federation hub); what they find
//! comes back as `BackendEvent`s, coalesced per cell between frames, which the loop feeds to
//! `update` as actions again; it draws `&State` with `views` at once after a key and at a
//! capped rate after events. The pure, deterministic `engine` (placement, overrides,
//! rendering, diffs) is called by `app`, `backend` and `commands` (the one-shot command-line
//! subcommands); `launch` wires a console together (the fleet — demo, directory or hub — is
//! loaded in the background while the console already draws, and arrives as an event). Imports point one way: `console` → `views` →
//! `app` → `backend` → `engine`, with the messages between them (`messages`: `Effect`,
//! `BackendEvent`, the cells and data they carry) below `app`, `backend` and `views`, so the
//! views import nothing of a backend; and `app` knows nothing of the terminal.

pub mod app;
pub mod backend;
pub mod cli;
pub mod commands;
pub mod config;
pub mod console;
pub mod engine;
pub mod fleet;
pub mod glob;
pub mod jsonl;
pub mod launch;
pub mod logging;
pub mod messages;
pub mod model;
pub mod output;
pub mod paths;
pub mod safe_text;
pub mod source;
pub mod views;

/// mimalloc, for every binary built on this crate: the console's hub caches hold hundreds of
/// thousands of small objects built among the short-lived trees of each listed page, and
/// glibc's allocator kept the space of those trees resident long after they were freed.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
