//! The committed fixture catalogs are what `tests/fixtures/generate.py` writes.

use std::path::Path;
use std::process::Command;

#[test]
fn fixture_catalogs_match_their_generator() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let out = tempfile::tempdir().expect("tempdir");
    let status = Command::new("python3")
        .arg(fixtures.join("generate.py"))
        .env("MNI_OLM_FIXTURES_OUT", out.path())
        .status()
        .expect("python3 runs");
    assert!(status.success(), "generate.py failed");
    for file in ["catalog/index.yaml", "upgrade/before.yaml"] {
        let committed = std::fs::read_to_string(fixtures.join(file)).expect("committed fixture");
        let generated = std::fs::read_to_string(out.path().join(file)).expect("generated fixture");
        assert!(
            committed == generated,
            "tests/fixtures/{file} is stale: run `python3 framework/upstreams/olm-lifecycle/tests/fixtures/generate.py`"
        );
    }
}
