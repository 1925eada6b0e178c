//! The engine of a2a-watch: everything but the screen and the command line. Data flows one way:
//! `watch` (network tasks, built on the `a2a` client) produces the `event`s that the `store`
//! applies; commands come back to `watch` as the plain data of `event`. `push` (the push
//! receiver) and `tap` (a proxy in a planner's path) feed the same events; `record` writes them
//! to a recording and reads them back. No terminal, no command line: the dashboard, the `--json`
//! front end and the client commands live in the `a2a-watch` crate above this one
//! (ARCHITECTURE.md), and the compiler keeps it so. No two modules here import each other
//! (`tests/it/layers.rs`).

pub mod a2a;
pub mod event;
pub mod local_server;
pub mod metrics;
pub mod ndjson;
pub mod push;
pub mod record;
pub mod store;
pub mod tap;
pub mod text;
pub mod traces;
pub mod watch;
