//! The layering invariants of `book/src/architecture.md`, checked on `cargo metadata` of this
//! workspace and of every reference service's workspace; and the page's code map, which must
//! name every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use mni_tests::{clean_cargo_env, repo_root};
use serde_json::Value;

/// The layer a crate belongs to, from where it lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Common,
    ControlPlane,
    Runtime,
    Upstreams,
    Dev,
    Scaffold,
    Services,
    Tests,
    /// Repository chores (`framework/tools/xtask`): run by developers and CI, linked by nothing.
    Tools,
}

impl Layer {
    fn of(dir: &str) -> Layer {
        let first_two: Vec<&str> = dir.splitn(3, '/').take(2).collect();
        match first_two.as_slice() {
            ["framework", "common"] => Layer::Common,
            ["framework", "controlplane"] => Layer::ControlPlane,
            ["framework", "runtime"] => Layer::Runtime,
            ["framework", "upstreams"] => Layer::Upstreams,
            ["framework", "dev"] => Layer::Dev,
            ["plugins", _] | ["scaffold-cli", ..] | ["templates", ..] => Layer::Scaffold,
            ["services", _] => Layer::Services,
            ["tests", ..] => Layer::Tests,
            ["framework", "tools"] => Layer::Tools,
            _ => {
                panic!("{dir}: a crate outside every layer; place it in one (see architecture.md)")
            }
        }
    }

    fn is_framework(self) -> bool {
        matches!(
            self,
            Layer::Common | Layer::ControlPlane | Layer::Runtime | Layer::Upstreams | Layer::Dev
        )
    }
}

/// One crate of the repository: where it lives and what it depends on.
#[derive(Debug)]
struct Crate {
    /// The directory, relative to the repository root (`framework/runtime/operator`).
    dir: String,
    layer: Layer,
    /// Path dependencies (other crates of the repository): name → kind (`normal`, `build`, `dev`).
    deps: Vec<(String, String)>,
}

/// Every crate of the workspace at `manifest` (from `cargo metadata --no-deps`), by name.
fn crates_of(manifest: &Path, into: &mut BTreeMap<String, Crate>) {
    let root = repo_root();
    let mut cmd = Command::new(env!("CARGO"));
    clean_cargo_env(&mut cmd);
    let out = cmd
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata --manifest-path {}: {}",
        manifest.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    for package in meta["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name").to_owned();
        let manifest = PathBuf::from(package["manifest_path"].as_str().expect("manifest_path"));
        let dir = manifest
            .parent()
            .expect("a manifest has a directory")
            .strip_prefix(&root)
            .expect("inside the repository")
            .to_string_lossy()
            .into_owned();
        let deps = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["path"].is_string())
            .map(|d| {
                let kind = d["kind"].as_str().unwrap_or("normal").to_owned();
                (d["name"].as_str().expect("dep name").to_owned(), kind)
            })
            .collect();
        let layer = Layer::of(&dir);
        into.insert(name, Crate { dir, layer, deps });
    }
}

/// The crates of this workspace and of every reference service.
fn all_crates() -> BTreeMap<String, Crate> {
    let root = repo_root();
    let mut crates = BTreeMap::new();
    crates_of(&root.join("Cargo.toml"), &mut crates);
    for entry in std::fs::read_dir(root.join("services")).expect("services/") {
        let manifest = entry.expect("entry").path().join("Cargo.toml");
        if manifest.is_file() {
            crates_of(&manifest, &mut crates);
        }
    }
    crates
}

/// The crates `name` reaches through normal and build dependencies, itself excluded.
fn reaches(crates: &BTreeMap<String, Crate>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_owned()];
    while let Some(next) = todo.pop() {
        let Some(krate) = crates.get(&next) else {
            continue;
        };
        for (dep, kind) in &krate.deps {
            if kind != "dev" && seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn runtime_never_depends_on_the_control_plane() {
    let crates = all_crates();
    for (name, krate) in &crates {
        if krate.layer != Layer::Runtime || name == "mni-testkit" {
            continue;
        }
        let bad: Vec<_> = reaches(&crates, name)
            .into_iter()
            .filter(|dep| {
                crates
                    .get(dep)
                    .is_some_and(|c| c.layer == Layer::ControlPlane)
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{name} ({}) depends on control-plane crates {bad:?}; only mni-testkit may, and \
             only tests use it",
            krate.dir
        );
    }
    // The check sees the runtime at all.
    assert!(
        crates
            .get("mni-operator")
            .is_some_and(|c| c.layer == Layer::Runtime)
    );
}

#[test]
fn testkit_is_only_a_dev_dependency() {
    let crates = all_crates();
    let mut users = 0;
    for (name, krate) in &crates {
        for (dep, kind) in &krate.deps {
            // The differential suite is itself a test tool: it starts the reference server
            // mni-testkit provides.
            if dep == "mni-testkit" && name != "mni-kube-reference" {
                users += 1;
                assert_eq!(
                    kind, "dev",
                    "{name} ({}) depends on mni-testkit as a {kind} dependency",
                    krate.dir
                );
            }
        }
    }
    assert!(users > 0, "mni-testkit has users (the check sees them)");
}

#[test]
fn control_plane_depends_on_no_other_layer() {
    let crates = all_crates();
    for (name, krate) in crates
        .iter()
        .filter(|(_, c)| c.layer == Layer::ControlPlane)
    {
        for dep in reaches(&crates, name) {
            let layer = crates[&dep].layer;
            assert!(
                matches!(layer, Layer::ControlPlane | Layer::Common),
                "{name} ({}) depends on {dep} ({layer:?})",
                krate.dir
            );
        }
    }
    assert!(
        !reaches(&crates, "mni-apiserver").is_empty(),
        "mni-apiserver's dependencies are seen"
    );
}

#[test]
fn common_crates_depend_on_no_other_crate_of_mni() {
    let crates = all_crates();
    let mut common = 0;
    for (name, krate) in crates.iter().filter(|(_, c)| c.layer == Layer::Common) {
        common += 1;
        for (dep, kind) in &krate.deps {
            assert_eq!(
                crates[dep].layer,
                Layer::Common,
                "{name} ({}) depends on {dep} as a {kind} dependency",
                krate.dir
            );
        }
    }
    assert!(common > 0, "the common crates are seen");
}

#[test]
fn framework_never_depends_on_what_is_built_on_it() {
    let crates = all_crates();
    for (name, krate) in crates.iter().filter(|(_, c)| c.layer.is_framework()) {
        for (dep, kind) in &krate.deps {
            let layer = crates[dep].layer;
            assert!(
                layer.is_framework(),
                "{name} ({}) depends on {dep} ({layer:?}) as a {kind} dependency",
                krate.dir
            );
        }
    }
}

#[test]
fn services_depend_on_each_other_only_through_api_crates() {
    let crates = all_crates();
    let service_of = |dir: &str| dir.split('/').nth(1).map(str::to_owned);
    let mut service_crates = 0;
    for (name, krate) in crates.iter().filter(|(_, c)| c.layer == Layer::Services) {
        service_crates += 1;
        for (dep, _) in &krate.deps {
            let target = &crates[dep];
            if target.layer == Layer::Services && service_of(&target.dir) != service_of(&krate.dir)
            {
                assert!(
                    dep.ends_with("-api"),
                    "{name} ({}) depends on {dep} ({}), a crate of another service that is \
                     not its published API crate (`*-api`)",
                    krate.dir,
                    target.dir
                );
            }
        }
    }
    assert!(service_crates > 0, "the reference services are seen");
}

#[test]
fn every_crate_is_in_the_code_map() {
    let page = std::fs::read_to_string(repo_root().join("book/src/architecture.md"))
        .expect("book/src/architecture.md");
    let map = page
        .split("## Code map")
        .nth(1)
        .expect("architecture.md has a `## Code map` section");
    let missing: Vec<_> = all_crates()
        .into_iter()
        .filter(|(_, krate)| !krate.dir.is_empty() && !map.contains(&format!("`{}`", krate.dir)))
        .map(|(name, krate)| format!("{name} ({})", krate.dir))
        .collect();
    assert!(
        missing.is_empty(),
        "crates missing from the code map of book/src/architecture.md: {missing:?}"
    );
}
