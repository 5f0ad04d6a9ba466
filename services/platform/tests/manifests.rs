// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The checked-in manifests match the code: each CRD under `config/crd/bases/` equals what
//! `mni-platform crd` prints, and every CRD the operator serves is checked in.

#[test]
fn checked_in_crds_match_the_code() {
    let crds = mni_platform::api::crds();
    let regenerate = "cargo run -q -p mni-platform -- crd";
    mni_testkit::assert_crds_checked_in(env!("CARGO_MANIFEST_DIR"), &crds, regenerate);
}
