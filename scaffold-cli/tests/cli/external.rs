//! External plugins: the sample's happy path and every kind of misbehaviour.

use crate::plugins_new::{cargo, repo};
use crate::{Project, create_crew_api};

/// The Rust port of the sample (`plugins/external-sample/src/main.rs`, on mni-plugin-sdk)
/// writes exactly what the Python sample writes, and describes itself the same way.
#[test]
fn rust_sample_matches_the_python_sample() {
    cargo(
        &repo(),
        &["build", "--offline", "--workspace", "--bin", "apidocs"],
    );
    let python = Project::new().sample();
    let rust = Project::new().plugin_binary(
        "apidocs.mni.dev",
        "v1",
        &repo().join("target/debug/apidocs"),
    );
    let commands: [Vec<&str>; 5] = [
        vec![
            "--plugins",
            "rust-operator,apidocs",
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "docs-demo",
        ],
        create_crew_api("Captain", &[]),
        create_crew_api("Ship", &["--doc-title", "Ships", "--namespaced", "false"]),
        vec!["edit"],
        vec!["plugins", "describe", "apidocs"],
    ];
    for command in &commands {
        let (a, b) = (python.run(command), rust.run(command));
        assert_eq!(a.code, 0, "{command:?}: {a:#?}");
        let strip = |s: &str| s.replace(&python.root().display().to_string(), "ROOT");
        let strip_rust = |s: &str| s.replace(&rust.root().display().to_string(), "ROOT");
        let (a_out, b_out) = (strip(&a.stdout), strip_rust(&b.stdout));
        if command[0] == "plugins" {
            // The first line names the executable; the rest (help and flags) must agree.
            let tail = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
            assert_eq!(tail(&a_out), tail(&b_out), "{command:?}");
        } else {
            assert_eq!(a_out, b_out, "{command:?}");
        }
        assert_eq!(b.code, 0, "{command:?}: {b:#?}");
    }
    assert_eq!(python.tree(), rust.tree());
    assert!(rust.read("docs/ship.md").contains("- Scope: Cluster\n"));
}

#[test]
fn sample_plugin_happy_path() {
    let p = Project::new().sample();
    let out = p
        .run(&["--plugins", "rust,apidocs", "init", "--domain", "acme.io"])
        .ok();
    assert!(out.contains("   create docs/index.md\n"), "{out}");
    assert!(
        p.read("PROJECT")
            .contains("- rust.mni.dev/v1\n- apidocs.mni.dev/v1\n")
    );
    let api = create_crew_api("Captain", &[]);
    let out = p.run(&api).ok();
    assert!(out.contains("   create docs/captain.md\n"), "{out}");
    assert!(out.contains("   update README.md\n"), "{out}");
    assert!(
        p.read("README.md").contains(
            "- [Captain](docs/captain.md) (`crew.acme.io/v1`)\n<!-- +mni:scaffold:apis -->"
        ),
    );
    assert!(p.read("docs/captain.md").contains("crew.acme.io/v1"));
    let project = p.read("PROJECT");
    assert!(project.contains("  kind: Captain\n"), "{project}");
    assert!(project.contains("    namespaced: true\n"), "{project}");

    let out = p
        .run(&create_crew_api(
            "Ship",
            &["--namespaced", "false", "--controller=false"],
        ))
        .ok();
    assert!(out.contains("create docs/ship.md"), "{out}");
    assert!(p.read("docs/ship.md").contains("Scope: Cluster"));
    let before = p.tree();
    p.run(&api)
        .fails(2, &["resource crew/v1, Kind=Captain already exists"]);
    assert_eq!(p.tree(), before);
    // Re-running init keeps everything as it is.
    let out = p.run(&["init"]).ok();
    assert!(
        !out.contains("   update ") && !out.contains("   create "),
        "{out}"
    );
    assert_eq!(p.tree(), before);
}

/// A plugin that reads its request and prints `response` (or runs `body`).
fn bad_plugin(body: &str) -> String {
    format!("#!/bin/sh\ncat >/dev/null\n{body}\n")
}

fn respond(universe: &str) -> String {
    bad_plugin(&format!(
        "echo 'I was asked nicely' >&2\necho '{{\"apiVersion\":\"v1alpha1\",\"command\":\"init\",\"universe\":{universe}}}'"
    ))
}

/// Runs `init` with the misbehaving plugin; expects exit `code`, the needles, no change.
#[track_caller]
fn check(script: &str, extra: &[&str], code: i32, needles: &[&str]) {
    let p = Project::new()
        .file("keep.txt", "keep\n")
        .plugin("bad.acme.io", "v1", script);
    let before = p.tree();
    let mut args = extra.to_vec();
    args.extend(["--plugins", "rust,bad", "init"]);
    p.run(&args).fails(code, needles);
    assert_eq!(p.tree(), before, "the tree changed");
    assert!(!p.root().join("../x").exists());
}

#[test]
fn sandbox_rejects_escaping_paths() {
    check(
        &respond(r#"{"../x":"pwned"}"#),
        &[],
        1,
        &["external plugin bad.acme.io/v1 was refused: path \"../x\" contains '..'"],
    );
    check(
        &respond(r#"{"docs/ok.md":"fine","/tmp/mni-abs-x":"pwned"}"#),
        &[],
        1,
        &["path \"/tmp/mni-abs-x\" is absolute"],
    );
    check(
        &respond(r#"{".git/hooks/pre-commit":"pwned"}"#),
        &[],
        1,
        &["path \".git/hooks/pre-commit\" is inside .git/"],
    );
    assert!(!std::path::Path::new("/tmp/mni-abs-x").exists());
}

#[test]
fn symlinks_out_of_the_project_are_refused() {
    let p = Project::new().plugin("bad.acme.io", "v1", &respond(r#"{"out/x":"pwned"}"#));
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), p.root().join("out")).unwrap();
    let before = p.tree();
    p.run(&["--plugins", "rust,bad", "init"])
        .fails(1, &["goes through symbolic link out"]);
    assert_eq!(p.tree(), before);
    assert!(!outside.path().join("x").exists());
}

#[test]
fn failing_plugins_are_reported() {
    check(
        &bad_plugin("echo 'boom: disk on fire' >&2\nexit 3"),
        &[],
        1,
        &["external plugin bad.acme.io/v1 exited with exit status: 3; stderr: boom: disk on fire"],
    );
    check(
        &bad_plugin(
            "echo 'checked' >&2\necho '{\"apiVersion\":\"v1alpha1\",\"command\":\"init\",\"error\":true,\"errorMsgs\":[\"--kind is required\",\"and more\"]}'",
        ),
        &[],
        2,
        &[
            "external plugin bad.acme.io/v1 reported an error: --kind is required; and more; stderr: checked",
        ],
    );
    check(
        &bad_plugin("echo 'not json'"),
        &[],
        1,
        &["sent an invalid response: invalid external-plugin message: expected ident"],
    );
}

#[test]
fn slow_and_chatty_plugins_are_killed() {
    let start = std::time::Instant::now();
    check(
        &bad_plugin("echo 'thinking' >&2\nsleep 30"),
        &["--plugin-timeout", "1"],
        1,
        &["timed out after 1s and was killed (--plugin-timeout); stderr: thinking"],
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    check(
        &bad_plugin("echo 'flooding' >&2\nhead -c 70000000 /dev/zero"),
        &[],
        1,
        &["its response exceeded 67108864 bytes and it was killed; stderr: flooding"],
    );
}

#[test]
fn plugins_see_the_project_and_little_else() {
    let spy = r#"#!/usr/bin/env python3
import json, os, sys
req = json.load(sys.stdin)
seen = {
    "command": req["command"],
    "args": req["args"],
    "paths": sorted(req["universe"]),
    "chain": req.get("pluginChain"),
    "domain": (req.get("config") or {}).get("domain"),
    "env": sorted(k for k in os.environ if k != "LC_CTYPE"),
    "cwd": os.getcwd(),
}
json.dump({"apiVersion": "v1alpha1", "command": req["command"],
           "universe": {"seen.json": json.dumps(seen, indent=1) + "\n"}}, sys.stdout)
"#;
    let p = Project::new()
        .file(".gitignore", "*.log\n")
        .file("debug.log", "ignored\n")
        .file(".git/HEAD", "ref: refs/heads/main\n")
        .file("target/debug/x", "built\n")
        .file("notes.md", "\n")
        .plugin("spy.acme.io", "v1", spy);
    p.run(&["--plugins", "rust,spy", "init", "--domain", "acme.io"])
        .ok();
    let seen: serde_json::Value = serde_json::from_str(&p.read("seen.json")).unwrap();
    assert_eq!(seen["command"], "init");
    assert_eq!(
        seen["args"],
        serde_json::json!(["--domain=acme.io", "--project-name=demo"])
    );
    // rust/v1 ran first: its files are in the universe; PROJECT is written after the chain;
    // .git/, target/ and what .gitignore ignores are left out.
    let paths: Vec<&str> = seen["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    for present in [
        ".gitignore",
        "notes.md",
        "Cargo.toml",
        "src/main.rs",
        "README.md",
    ] {
        assert!(paths.contains(&present), "{present} in {paths:?}");
    }
    assert!(
        paths.iter().all(|p| !p.starts_with(".git/")
            && !p.starts_with("target/")
            && *p != "debug.log"
            && *p != "PROJECT"),
        "{paths:?}"
    );
    assert_eq!(
        seen["chain"],
        serde_json::json!(["rust.mni.dev/v1", "spy.acme.io/v1"])
    );
    assert_eq!(seen["domain"], "acme.io");
    // Only PATH, HOME and LANG are passed on (an interpreter shim may add its own).
    let env: Vec<&str> = seen["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(env.contains(&"HOME") && env.contains(&"PATH"), "{env:?}");
    assert!(!env.iter().any(|k| k.starts_with("MNI_")), "{env:?}");
    let cwd = std::path::Path::new(seen["cwd"].as_str().unwrap());
    assert_eq!(
        cwd.canonicalize().unwrap(),
        p.root().canonicalize().unwrap()
    );
}
