// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The checked-in manifests match the code: each CRD under `config/crd/bases/` equals what
//! `network-operator crd` prints, and every CRD the operator serves is checked in.

use std::path::Path;

#[test]
fn checked_in_crds_match_the_code() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/crd/bases");
    for crd in network_operator::api::crds() {
        let file = format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural);
        let text = std::fs::read_to_string(dir.join(&file))
            .unwrap_or_else(|e| panic!("config/crd/bases/{file}: {e}"));
        let checked_in: serde_json::Value =
            serde_yaml::from_str(&text).expect("the CRD YAML parses");
        let from_code = serde_json::to_value(&crd).expect("the CRD serializes");
        assert_eq!(
            checked_in, from_code,
            "config/crd/bases/{file} differs from the code: regenerate it from `cargo run -q -p network-operator -- crd`"
        );
    }
}
