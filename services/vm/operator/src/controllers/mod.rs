// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:compute
pub mod compute;
// +mni:fragment-end:controller-modules:compute
// +mni:fragment:controller-modules:instance
pub mod instance;
// +mni:fragment-end:controller-modules:instance
// +mni:scaffold:controller-modules
