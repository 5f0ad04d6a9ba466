// SPDX-License-Identifier: MIT

//! API group `ledger.example.com`, version `v1alpha1`: the `ledger` service's kinds.

// +mni:fragment:kinds:ledger
mod ledger;
pub use ledger::{Ledger, LedgerSpec, LedgerStatus};
// +mni:fragment-end:kinds:ledger
// +mni:fragment:kinds:ledger_account
mod ledger_account;
pub use ledger_account::{LedgerAccount, LedgerAccountSpec, LedgerAccountStatus};
// +mni:fragment-end:kinds:ledger_account
// +mni:scaffold:kinds
