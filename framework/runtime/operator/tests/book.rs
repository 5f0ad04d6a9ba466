//! Runs every `$ ` command of the book chapter "The operator runtime", in order, against an
//! in-process control plane (HTTPS, like `mni-dev up`), with the `configmap-owner` example binary
//! and kubectl from PATH.

use std::path::{Path, PathBuf};

use mni_chapter::Session;

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

    let mut session = Session::new(tmp.path())
        .path_first(&examples)
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", tmp.path())
        .env("RUST_LOG", "warn");
    let steps = mni_chapter::console_steps(&chapter);
    for step in &steps {
        session.push_line(&step.command);
        if step.command.ends_with('&') {
            // Wait for the operator's probe endpoint before going on.
            session.push_line("for _ in $(seq 1 100); do curl -sf 127.0.0.1:18481/healthz >/dev/null && break; sleep 0.1; done");
        }
    }
    assert!(steps.len() >= 8, "{} commands", steps.len());
    let out = tokio::task::spawn_blocking(move || session.run().expect("bash"))
        .await
        .expect("join");
    assert!(out.success(), "{out}");
    assert!(out.stragglers.is_empty(), "{out}");
    let stdout = &out.stdout;
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
