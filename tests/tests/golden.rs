//! The committed golden projects (and reference services) equal what the plugins generate
//! today.

use std::path::{Path, PathBuf};
use std::process::Command;

use mni_tests::{
    GOLDEN, REGEN_COMMAND, first_difference, generate, generate_with, golden_dir, read_tree,
};

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

/// The directories under a `config/` directory of `project` that hold a `kustomization.yaml`
/// (build output left out), ordered.
fn kustomize_dirs(project: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = walkdir::WalkDir::new(project)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target" && e.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "kustomization.yaml")
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .filter(|d| d.components().any(|c| c.as_os_str() == "config"))
        .collect();
    dirs.sort();
    dirs
}

/// Kubebuilder users render `config/` with kustomize right after `init` (the generated
/// `config/default/kustomization.yaml` says how): every `config/` directory of every golden
/// project renders with `kubectl kustomize` after each command of the project's history, not
/// only in its final state.
#[test]
fn every_config_dir_renders_with_kubectl_kustomize_after_every_command() {
    let mut failures = Vec::new();
    let mut rendered = 0;
    for golden in GOLDEN {
        let tmp = tempfile::tempdir().expect("tempdir");
        let project = tmp.path().join(golden.name);
        generate_with(golden, &project, |command| {
            for dir in kustomize_dirs(&project) {
                let out = Command::new("kubectl")
                    .arg("kustomize")
                    .arg(&dir)
                    .output()
                    .expect("kubectl is on PATH");
                rendered += 1;
                if !out.status.success() || out.stdout.is_empty() {
                    failures.push(format!(
                        "{} after `mni-scaffold {}`: kubectl kustomize {}: {}",
                        golden.name,
                        command.join(" "),
                        dir.strip_prefix(&project).unwrap_or(&dir).display(),
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(
        rendered > 0,
        "no kustomization.yaml found in any golden project"
    );
    assert!(
        failures.is_empty(),
        "{} of {rendered} renders failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
