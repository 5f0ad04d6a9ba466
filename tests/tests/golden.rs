//! The committed golden projects (and reference services) equal what the plugins generate
//! today.

use mni_tests::{GOLDEN, REGEN_COMMAND, first_difference, generate, golden_dir, read_tree};

#[test]
fn golden_projects_match_the_plugins() {
    for golden in GOLDEN {
        let tmp = tempfile::tempdir().expect("tempdir");
        let fresh = tmp.path().join(golden.name);
        generate(golden, &fresh).unwrap_or_else(|e| panic!("{e}"));
        let generated = read_tree(&fresh).expect("read generated tree");
        let committed = read_tree(&golden_dir(golden.name)).expect("read committed tree");
        if let Some(diff) = first_difference(&generated, &committed) {
            panic!(
                "{}: {diff}\nIf the change is intended, run `{REGEN_COMMAND}` and commit the result.",
                golden.relative_dir()
            );
        }
    }
}
