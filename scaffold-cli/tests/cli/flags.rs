//! Flags that plugins declare: accepted on the command line, typed, routed to their plugin,
//! listed by `--help`; an undeclared flag is bad input and writes nothing.

use crate::{Project, create_crew_api};

/// Declares `--doc-title` (string), `--replicas` (int) and `--draft` (bool) for `create api`
/// and records the `args` of every scaffolding request in `seen/<command>.json`.
const SPY: &str = r#"#!/usr/bin/env python3
import json, sys
req = json.load(sys.stdin)
cmd = req["command"]
out = {"apiVersion": "v1alpha1", "command": cmd, "universe": {}}
if cmd == "flags":
    if req["args"] == ["--api"]:
        out["flags"] = [
            {"Name": "doc-title", "Type": "string", "Default": "", "Usage": "page title"},
            {"name": "replicas", "type": "int", "default": "1", "usage": "replicas"},
            {"Name": "draft", "Type": "bool", "Default": "false", "Usage": "draft page"},
        ]
elif cmd != "metadata":
    out["universe"]["seen/" + cmd.replace(" ", "-") + ".json"] = json.dumps(req["args"]) + "\n"
json.dump(out, sys.stdout)
"#;

fn project() -> Project {
    let p = Project::new().plugin("spy.acme.io", "v1", SPY);
    p.run(&["--plugins", "spy", "init", "--domain", "acme.io"])
        .ok();
    p
}

fn seen(p: &Project, command: &str) -> Vec<String> {
    serde_json::from_str(&p.read(&format!("seen/{command}.json"))).expect("seen args")
}

#[test]
fn declared_flags_reach_their_plugin() {
    let p = project();
    let mut args = create_crew_api("Captain", &[]);
    args.extend(["--doc-title", "The captain", "--replicas=3", "--draft"]);
    p.run(&args).ok();
    assert_eq!(
        seen(&p, "create-api"),
        [
            "--group=crew",
            "--version=v1",
            "--kind=Captain",
            "--namespaced=true",
            "--resource=true",
            "--controller=true",
            "--doc-title=The captain",
            "--replicas=3",
            "--draft=true",
        ]
    );
    // Not given: not passed on (the plugin applies its own defaults).
    let mut args = create_crew_api("Captain", &[]);
    args[7] = "Ship";
    args.extend(["--draft=false"]);
    p.run(&args).ok();
    assert_eq!(seen(&p, "create-api")[6..], ["--draft=false"]);
}

#[test]
fn undeclared_flags_are_bad_input() {
    let p = project();
    let before = p.tree();
    let mut args = create_crew_api("Captain", &[]);
    args.extend(["--doc-titel", "typo"]);
    let err = p.run(&args).fails(
        2,
        &[
            "unknown flag --doc-titel for `create api` with spy.acme.io/v1; the flags are --group, --version, --kind, --namespaced, --resource, --controller, --doc-title, --replicas, --draft",
        ],
    );
    // The global flags are not listed.
    assert!(err.ends_with("--draft"), "{err}");
    // A flag another subcommand declares is unknown here too.
    p.run(&["init", "--replicas", "2"])
        .fails(2, &["unknown flag --replicas for `init`"]);
    // Values are typed as declared.
    let mut args = create_crew_api("Captain", &[]);
    args.extend(["--replicas", "many"]);
    let run = p.run(&args);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stderr
            .contains("invalid value 'many' for '--replicas <INT>'"),
        "{run:#?}"
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn help_lists_declared_flags() {
    let p = project();
    let help = p.run(&["create", "api", "--help"]).ok();
    assert!(help.contains("Flags of spy.acme.io/v1:"), "{help}");
    assert!(help.contains("--doc-title <STRING>"), "{help}");
    assert!(help.contains("--replicas <INT>"), "{help}");
    assert!(help.contains("replicas [default: 1]"), "{help}");
    assert!(help.contains("--draft[=<BOOL>]"), "{help}");
    // The fixed flags are still there.
    assert!(help.contains("--group <G>"), "{help}");
    let described = p.run(&["plugins", "describe", "spy"]).ok();
    assert!(
        described.contains("--replicas int (default \"1\")  replicas"),
        "{described}"
    );
}

#[test]
fn the_sample_takes_a_doc_title() {
    let p = Project::new().sample();
    p.run(&["--plugins", "apidocs", "init", "--domain", "acme.io"])
        .ok();
    let mut args = create_crew_api("Captain", &[]);
    args.extend(["--doc-title", "Captains"]);
    p.run(&args).ok();
    let page = p.read("docs/captain.md");
    assert!(page.starts_with("# Captains\n"), "{page}");
    // A chain of external plugins only: the CLI records init's domain and project name.
    assert!(page.contains("`crew.acme.io/v1`"), "{page}");
    assert!(p.read("PROJECT").contains("projectName: demo\n"));
}
