// SPDX-License-Identifier: MIT

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:entry
pub mod entry;
// +mni:fragment-end:controller-modules:entry
// +mni:scaffold:controller-modules
