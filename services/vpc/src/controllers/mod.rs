// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:scaffold:controller-modules
