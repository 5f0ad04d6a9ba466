// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `metal_operator`: the API types and controllers of the `metal-operator` operator.
//!
//! `src/main.rs` registers the controllers with a `mni_operator::Manager`; the tests under
//! `tests/` run them against an in-process control plane.

pub mod api;
pub mod controllers;
