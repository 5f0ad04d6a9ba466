// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `mni_platform`: the API types and controllers of the `mni-platform` operator.
//!
//! `src/main.rs` registers the controllers with a `mni_operator::Manager`; the tests under
//! `tests/` run them against an in-process control plane.

pub mod api;
pub mod controllers;
