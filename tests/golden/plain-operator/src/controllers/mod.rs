// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:guestbook
pub mod guestbook;
// +mni:fragment-end:controller-modules:guestbook
// +mni:scaffold:controller-modules
