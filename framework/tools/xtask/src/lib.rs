//! Repository chores run with `cargo xtask` (an alias in `.cargo/config.toml`), in the style
//! of rust-analyzer's xtask: plain Rust instead of scripts, so they run wherever cargo does.
//!
//! The one chore today is [`codegen`]: `cargo xtask codegen` regenerates the committed
//! generated code, `cargo xtask codegen --check` fails naming every file that drifted. The
//! test `tests/drift.rs` runs the same check in-process.

pub mod codegen;
