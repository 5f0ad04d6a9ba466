//! Drift test: the OpenAPI v3 document of a small CRD group-version is pinned in
//! `tests/golden/stable.example.com_v1.json`.
//!
//! After an intended change to the generated documents, regenerate the file with
//! `MNI_BLESS=1 cargo test -p mni-openapi --test golden` and review the diff.

use std::path::PathBuf;
use std::time::Instant;

use mni_openapi::{GroupVersionDocument, ResourceDoc, v2_document, v2_protobuf};
use serde_json::json;

fn crontab() -> ResourceDoc {
    ResourceDoc::custom(
        "stable.example.com",
        "v1",
        "CronTab",
        "crontabs",
        true,
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["cronSpec"],
                    "properties": {
                        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
                        "image": {"type": "string"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                    },
                },
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            },
        }),
    )
    .with_status()
    .with_scale()
}

#[test]
fn crd_group_version_document_matches_golden() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/stable.example.com_v1.json");
    let document = GroupVersionDocument::build(&[crontab()]).map(|doc| doc.document);
    let Ok(document) = document else {
        panic!("building the document failed: {document:?}");
    };
    let mut actual = serde_json::to_string_pretty(&document).unwrap_or_default();
    actual.push('\n');
    if std::env::var_os("MNI_BLESS").is_some() {
        std::fs::write(&path, &actual)
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} drifted from the generated document; if the change is intended, regenerate it with \
         `MNI_BLESS=1 cargo test -p mni-openapi --test golden` and review the diff",
        path.display()
    );
}

/// Rough cost of regenerating documents on a CRD change (printed with `--nocapture`).
#[test]
fn generation_is_cheap() {
    let resources = [crontab()];
    let start = Instant::now();
    let rounds = 20u32;
    for _ in 0..rounds {
        let doc = GroupVersionDocument::build(&resources);
        assert!(doc.is_ok());
        let v2 = v2_document(&resources).unwrap_or_default();
        assert!(!v2_protobuf(&v2).is_empty());
    }
    eprintln!(
        "v3 + v2 + protobuf for one CRD: {:?} per round",
        start.elapsed() / rounds
    );
}
