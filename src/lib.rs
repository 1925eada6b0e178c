//! a2a-watch: watch and steer the work AI agents do for each other over A2A.
//!
//! Data flows one way: `a2a` (protocol client) and `demo` (built-in agents) know nothing of the
//! front ends; the command line in `cli` drives them.

pub mod a2a;
