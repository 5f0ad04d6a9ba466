//! Repository chores run with `cargo xtask` (an alias in `.cargo/config.toml`), in the style
//! of rust-analyzer's xtask: plain Rust instead of scripts, so they run wherever cargo does.
//!
//! The chores:
//!
//! - [`codegen`]: `cargo xtask codegen` regenerates the committed generated code,
//!   `cargo xtask codegen --check` fails naming every file that drifted (the test
//!   `tests/drift.rs` runs the same check in-process);
//! - [`bench`]: `cargo xtask bench` runs every benchmark and prints one table (figure, anchor,
//!   ratio), written into the book's performance page; `--smoke` checks that every bench
//!   still works, in seconds each (CI runs it).

pub mod bench;
pub mod codegen;
