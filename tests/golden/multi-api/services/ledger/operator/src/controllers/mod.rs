// SPDX-License-Identifier: MIT

//! The controllers: one module per kind, each a `mni_operator::Reconciler`.

// +mni:fragment:controller-modules:ledger
pub mod ledger;
// +mni:fragment-end:controller-modules:ledger
// +mni:fragment:controller-modules:ledger_account
pub mod ledger_account;
// +mni:fragment-end:controller-modules:ledger_account
// +mni:fragment:controller-modules:entry
pub mod entry;
// +mni:fragment-end:controller-modules:entry
// +mni:scaffold:controller-modules
