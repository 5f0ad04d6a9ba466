//! Runs every `$ ` command the chapter "The embedded control plane" shows, in order, with the
//! freshly built `mni-dev` and kubectl from PATH.

use std::path::Path;

use mni_chapter::Session;

#[test]
fn control_plane_chapter_commands_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let chapter = std::fs::read_to_string(root.join("book/src/control-plane.md")).expect("chapter");
    let tmp = tempfile::tempdir().expect("tempdir");
    let examples = tmp.path().join("examples");
    std::fs::create_dir_all(&examples).expect("mkdir");
    for f in [
        "crontab-crd.yaml",
        "crontab.yaml",
        "settings.yaml",
        "settings-ops.yaml",
        "network-crd.yaml",
        "network.yaml",
        "network-bad.yaml",
        "limits.yaml",
    ] {
        std::fs::copy(root.join("book/src/examples").join(f), examples.join(f))
            .expect("copy example");
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mni-dev"))
        .parent()
        .expect("bin dir");
    let mut session = Session::new(tmp.path())
        .path_first(bin_dir)
        .env("HOME", tmp.path());
    let steps = mni_chapter::console_steps(&chapter);
    for step in &steps {
        session.push_command(&step.command);
    }
    assert!(
        steps.len() >= 25,
        "the chapter shows its commands ({})",
        steps.len()
    );
    let out = session.run().expect("bash");
    assert!(out.success(), "script failed:\n{}\n{out}", session.script());
    assert!(out.stragglers.is_empty(), "{out}");
    let (stdout, stderr) = (&out.stdout, &out.stderr);
    assert!(stdout.contains("kube-system"), "{stdout}");
    assert!(
        stdout.contains("crontab.stable.example.com/nightly created"),
        "{stdout}"
    );
    assert!(stderr.contains("less than or equal to 10"), "{stderr}");
    assert!(
        stderr.contains(
            "pods \"three\" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains("requests.cpu  500m  1"),
        "describe quota: {stdout}"
    );
    assert!(stdout.contains("cronSpec"), "explain output: {stdout}");
    assert!(
        stderr.contains(r#"The Network "staging" is invalid: spec.subnets[0].gateway: Invalid value: "object": gateway 10.1.9.1 is outside 10.1.1.0/24"#),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"The Network "prod" is invalid: spec.cidr: Invalid value: "string": cidr is immutable"#),
        "{stderr}"
    );
    assert!(stdout.contains("system:masters"), "whoami: {stdout}");
    assert!(stdout.contains("successfully rolled out"), "{stdout}");
    assert!(
        stderr.contains(
            r#"cannot list resource "secrets" in API group "" in the namespace "default""#
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"conflict with "kubectl": .data.mode"#),
        "{stderr}"
    );
    assert!(stdout.contains("condition met"), "{stdout}");
    let token = std::fs::read_to_string(tmp.path().join("app.token")).expect("token written");
    assert_eq!(token.trim().split('.').count(), 3, "a JWT");
}
