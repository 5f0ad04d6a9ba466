//! `plugins new`: the scaffolded plugin project builds on `mni-plugin-sdk`, its own test (the
//! SDK's testing module driving this `mni-scaffold`) passes, and once installed where
//! `mni-scaffold` discovers external plugins it scaffolds a project.

use std::path::Path;
use std::process::Command;

use crate::{Project, create_crew_api, run_in};

/// The checkout: `scaffold-cli/..`.
pub(crate) fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the checkout")
}

/// Runs `cargo args…` in `dir` with the workspace's target directory, offline, without the
/// variables Cargo set for this test crate; panics with the output on failure.
pub(crate) fn cargo(dir: &Path, args: &[&str]) -> String {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    mni_bench::clean_cargo_env(&mut command);
    let out = command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", repo().join("target"))
        .env("CARGO_NET_OFFLINE", "true")
        .env("MNI_SCAFFOLD", env!("CARGO_BIN_EXE_mni-scaffold"))
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "cargo {args:?} in {}: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        dir.display(),
        out.status
    );
    stdout + &stderr
}

#[test]
fn a_new_plugin_builds_passes_its_test_and_scaffolds_a_project() {
    let work = tempfile::tempdir().expect("tempdir");
    let plugins = work.path().join("unused-plugins");
    let out = run_in(
        work.path(),
        &plugins,
        &["plugins", "new", "shipdocs", "--domain", "acme.io"],
    )
    .ok();
    assert!(out.contains("   create src/main.rs\n"), "{out}");
    assert!(
        out.contains("plugin shipdocs.acme.io/v1 scaffolded in "),
        "{out}"
    );
    let plugin = work.path().join("shipdocs");
    // The versions mNi is tested with, so the build reuses the shared target directory.
    std::fs::copy(repo().join("Cargo.lock"), plugin.join("Cargo.lock")).expect("copy the lock");

    // Generated code is formatted as `cargo fmt` would.
    cargo(&plugin, &["fmt", "--check"]);
    // The generated test installs the plugin beside this build's mni-scaffold and scaffolds.
    let tested = cargo(&plugin, &["test", "--offline"]);
    assert!(
        tested.contains("test create_api_writes_the_page ... ok"),
        "{tested}"
    );

    // Installed the way users install plugins, it takes part in a real chain.
    let built = repo().join("target/debug/shipdocs");
    let p = Project::new().plugin_binary("shipdocs.acme.io", "v1", &built);
    let describe = p.run(&["plugins", "describe", "shipdocs"]).ok();
    assert!(
        describe.contains("--title string  page title (default: the kind)"),
        "{describe}"
    );
    p.run(&[
        "--plugins",
        "rust-operator,shipdocs",
        "init",
        "--domain",
        "acme.io",
    ])
    .ok();
    let out = p
        .run(&create_crew_api("Captain", &["--title", "Ship's captain"]))
        .ok();
    assert!(out.contains("   create docs/captain.md\n"), "{out}");
    assert!(
        out.contains("   create src/controllers/captain.rs\n"),
        "{out}"
    );
    assert_eq!(
        p.read("docs/captain.md"),
        "# Ship's captain\n\n- API version: `crew.acme.io/v1`\n- Resource: `captains`\n"
    );
    // Its flag is checked by the CLI like a built-in plugin's: a misspelling is refused.
    p.run(&create_crew_api("Ship", &["--titel", "Ships"]))
        .fails(
            2,
            &["unknown flag --titel", "shipdocs.acme.io/v1", "--title"],
        );
}

#[test]
fn refuses_bad_names_and_existing_directories() {
    let work = tempfile::tempdir().expect("tempdir");
    let plugins = work.path().join("plugins");
    run_in(work.path(), &plugins, &["plugins", "new", "Ship_Docs"])
        .fails(2, &["NAME", "Ship_Docs"]);
    std::fs::create_dir(work.path().join("docs")).expect("mkdir");
    run_in(work.path(), &plugins, &["plugins", "new", "docs"])
        .fails(2, &["NAME: ", "already exists"]);
    run_in(
        work.path(),
        &plugins,
        &["plugins", "new", "pages", "--mni-path", "/nowhere"],
    )
    .fails(2, &["--mni-path", "/nowhere/plugins/sdk"]);
    assert!(!work.path().join("pages").exists());
}
