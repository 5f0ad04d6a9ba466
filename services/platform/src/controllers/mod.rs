// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:tenant
pub mod tenant;
// +mni:fragment-end:controller-modules:tenant
// +mni:scaffold:controller-modules
