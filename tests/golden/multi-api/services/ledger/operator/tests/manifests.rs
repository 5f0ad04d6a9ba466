// SPDX-License-Identifier: MIT

//! The checked-in manifests match the code: each CRD under `config/crd/bases/` equals what
//! `ledger-operator crd` prints, and every CRD the operator serves is checked in.

#[test]
fn checked_in_crds_match_the_code() {
    let crds = ledger_operator::api::crds();
    let regenerate = "cargo run -q -p ledger-operator -- crd";
    mni_testkit::assert_crds_checked_in(env!("CARGO_MANIFEST_DIR"), &crds, regenerate);
}
