//! `mni-plugin-rust`: the built-in `rust.mni.dev/v1` plugin.
//!
//! It scaffolds Rust operator crates on the mNi runtime: `init` makes the project a Cargo
//! workspace whose root crate is an operator, `new service NAME` adds an operator crate under
//! `services/NAME/operator/`, and `create api` adds a `CustomResource` type, its controller
//! (registered in `main.rs` at a scaffold marker) and a test on `mni-testkit`. Versions live in
//! their own modules ([`v1`]) so a `v2` can change the layout without breaking projects that
//! recorded `v1` in their PROJECT `layout`.
//!
//! The [`v1::Target`] and [`v1::Settings`] types are public because the kustomize plugin writes
//! its manifests into the same crates with the same license header.

pub mod v1;

pub use v1::{KEY, RustV1};
