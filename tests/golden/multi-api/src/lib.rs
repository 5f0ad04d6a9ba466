// SPDX-License-Identifier: MIT

//! `fleet`: the API types and controllers of the `fleet` operator.
//!
//! `src/main.rs` registers the controllers with a `mni_operator::Manager`; the tests under
//! `tests/` run them against an in-process control plane.

pub mod api;
pub mod controllers;
// +mni:fragment:modules:webhooks
pub mod webhooks;
// +mni:fragment-end:modules:webhooks
// +mni:scaffold:modules
