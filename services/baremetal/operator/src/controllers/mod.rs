// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:metal
pub mod metal;
// +mni:fragment-end:controller-modules:metal
// +mni:fragment:controller-modules:server
pub mod server;
// +mni:fragment-end:controller-modules:server
// +mni:scaffold:controller-modules
