//! Drawing: the screen as a pure function of the `App` (`crate::app`), one file per pane. Nothing
//! here changes state or does I/O; every string from an agent is sanitised before it reaches a
//! cell.

mod agents;
mod approvals;
mod footer;
pub mod format;
mod popups;
pub mod svg;
mod table;
mod title;
mod tree;
pub mod view;

#[cfg(test)]
mod tests;
