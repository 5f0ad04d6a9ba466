//! The committed reference catalog (`services/catalog/`) is what
//! `mni_plugin_olm::reference::regenerate` writes from the reference services, and it is valid.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use mni_plugin_olm::reference::{REGEN_COMMAND, regenerate};

fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "README.md") {
                // Written by hand, not generated.
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, fs::read_to_string(&path).expect("text"));
            }
        }
    }
    out
}

#[test]
fn the_committed_catalog_is_current() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("catalog");
    regenerate(&repo, &out).expect("regenerates");
    let (fresh, committed) = (files(&out), files(&repo.join("services/catalog")));
    let drift: Vec<&String> = fresh
        .keys()
        .chain(committed.keys())
        .filter(|k| fresh.get(*k) != committed.get(*k))
        .collect();
    assert!(
        drift.is_empty(),
        "services/catalog/ is out of date ({drift:?}); regenerate it with `{REGEN_COMMAND}`"
    );
    mni_plugin_olm::validate_dir(&repo.join("services/catalog/catalog"), false)
        .expect("the reference catalog is valid");
    let vm = &fresh["catalog/mni-vm/catalog.yaml"];
    assert!(vm.contains("type: olm.gvk.required"), "{vm}");
    assert!(vm.contains("kind: VirtualPrivateCloud"), "{vm}");
}
