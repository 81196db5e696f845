//! flotilla: a terminal fleet console for multi-cluster Kubernetes.
//!
//! Data flow: terminal keys / ticks / backend events → `Action` → `update(&mut State, Action)`
//! → `Effect`s → backend tasks → backend events → …; after draining, render `&State` once.

pub mod app;
pub mod audit;
pub mod backend;
pub mod cli;
pub mod commands;
pub mod config;
pub mod console;
pub mod demo_fleet;
pub mod engine;
pub mod fleet_dir;
pub mod fleet_edit;
pub mod glob;
pub mod launch;
pub mod logging;
pub mod model;
pub mod output;
pub mod source;
pub mod views;
