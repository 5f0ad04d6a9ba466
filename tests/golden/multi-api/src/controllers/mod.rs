// SPDX-License-Identifier: MIT

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:ship
pub mod ship;
// +mni:fragment-end:controller-modules:ship
// +mni:fragment:controller-modules:harbor
pub mod harbor;
// +mni:fragment-end:controller-modules:harbor
// +mni:scaffold:controller-modules
