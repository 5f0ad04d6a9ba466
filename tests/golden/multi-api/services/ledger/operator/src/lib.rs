// SPDX-License-Identifier: MIT

//! `ledger_operator`: the API types and controllers of the `ledger-operator` operator.
//!
//! `src/main.rs` registers the controllers with a `mni_operator::Manager`; the tests under
//! `tests/` run them against an in-process control plane.

pub mod api;
pub mod controllers;
