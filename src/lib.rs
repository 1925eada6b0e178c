//! a2a-watch: watch and steer the work AI agents do for each other over A2A.
//!
//! Data flows one way: `watch` (network tasks, built on the `a2a` client) produces events, the
//! `store` applies them, `ui` draws a view of the `app` state around the store, keys become
//! actions in `app`, and actions go back to the engine as commands. The events and the commands
//! are the plain data of `event`, which the engine, the store and the front ends share. `a2a` and
//! `watch` know nothing of the front ends; `cli` wires them (and the `--json` front end);
//! `demo` holds the built-in agents. `run` is the one event loop (the dashboard, `replay` and
//! `--json` all run it, on a live or a recorded clock), above both `app` and `ui`: it hands the
//! app the layout `ui` computed, carries out the app's effects and records what it applies. No
//! two top-level modules import each other (`tests/it/layers.rs`).

// The engine's modules, at the paths they had before the engine became its own crate: the front
// end, the tests and the benches name them as `crate::a2a`, `a2a_watch::store`, ...
pub use a2a_watch_engine::{a2a, event, local_server, metrics, ndjson, push, record, store, tap, text, traces, watch};

pub mod app;
pub mod cli;
pub mod columns;
pub mod config;
pub mod demo;
pub mod run;
pub mod theme;
pub mod ui;
