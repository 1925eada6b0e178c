//! The watch engine: one task per agent finds its tasks and keeps every live one watched,
//! sending events to the store. Knows nothing of the UI.

pub mod event;
