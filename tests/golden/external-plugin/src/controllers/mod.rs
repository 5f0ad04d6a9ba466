// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:captain
pub mod captain;
// +mni:fragment-end:controller-modules:captain
// +mni:scaffold:controller-modules
