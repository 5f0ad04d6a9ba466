//! The field manager's integration tests, one binary.

mod common;

mod apply;
mod conflicts;
mod robustness;
mod update;
