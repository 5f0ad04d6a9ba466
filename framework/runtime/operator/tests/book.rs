//! Runs every `$ ` command of the book chapter "The operator runtime", in order, against an
//! in-process control plane (HTTPS, like `mni-dev up`), with the `configmap-owner` example binary
//! and kubectl from PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The example binary Cargo built beside this test (`target/<profile>/examples/`).
fn example_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    profile_dir.join("examples")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_runtime_chapter_commands_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let chapter =
        std::fs::read_to_string(root.join("book/src/operator-runtime.md")).expect("chapter");
    let examples = example_dir();
    assert!(
        examples.join("configmap-owner").exists(),
        "the example binary is built with the tests: {}",
        examples.display()
    );
    // kubectl sends tokens only over TLS, so the control plane serves HTTPS, as `mni-dev up` does.
    let tmp = tempfile::tempdir().expect("tempdir");
    let identity = mni_apiserver::tls::TlsIdentity::load_or_create(&tmp.path().join("pki"), None)
        .expect("pki");
    let env = mni_apiserver::Server::builder()
        .with_tls(identity)
        .start()
        .await
        .expect("control plane");
    std::fs::create_dir_all(tmp.path().join("examples")).expect("mkdir");
    std::fs::copy(
        root.join("book/src/examples/widget.yaml"),
        tmp.path().join("examples/widget.yaml"),
    )
    .expect("copy");
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, env.kubeconfig()).expect("kubeconfig");

    let mut script = String::from("set -euo pipefail\n");
    let mut in_console = false;
    let mut commands = 0;
    for line in chapter.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ").filter(|_| in_console) {
            commands += 1;
            script.push_str(cmd);
            script.push('\n');
            if cmd.ends_with('&') {
                // Wait for the operator's probe endpoint before going on.
                script.push_str("for _ in $(seq 1 100); do curl -sf 127.0.0.1:18481/healthz >/dev/null && break; sleep 0.1; done\n");
            }
        }
    }
    script.push_str("kill %1\nwait\n");
    assert!(commands >= 8, "{commands} commands");
    let path = format!(
        "{}:{}",
        examples.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::task::spawn_blocking({
        let dir = tmp.path().to_path_buf();
        move || {
            Command::new("timeout")
                // A chapter that hangs fails (with what it printed) instead of stalling the suite:
                // `timeout` stops the script and every job it started (one process group).
                .args(["--kill-after=10s", "900s", "bash", "-c"])
                .arg(&script)
                .current_dir(&dir)
                .env("PATH", path)
                .env("KUBECONFIG", &kubeconfig)
                .env("HOME", &dir)
                .env("RUST_LOG", "warn")
                .output()
                .expect("bash")
        }
    })
    .await
    .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("widget.example.mni.dev/hello condition met"),
        "{stdout}"
    );
    assert!(stdout.contains("hello from mNi"), "{stdout}");
    assert!(
        stdout.contains("controller_runtime_reconcile_total"),
        "{stdout}"
    );
    assert!(
        stdout.contains("widget.example.mni.dev \"hello\" deleted"),
        "{stdout}"
    );
    env.shutdown().await;
}
