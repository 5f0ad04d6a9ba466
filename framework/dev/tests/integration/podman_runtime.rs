//! `mni-dev up --runtime podman` driven with kubectl as a user would: real OCI containers run
//! by podman and runc from an image the test builds with a plain `podman build` (a static
//! binary `FROM scratch`, compiled here with rustc). A pod gets its ConfigMap volume, its
//! environment and its ServiceAccount token at the paths a cluster gives them, runs as the
//! non-root user it asks for on a read-only root file system and becomes Ready through an
//! HTTP probe to its own address; a memory limit that is exceeded ends `OOMKilled`; a pod
//! that would run as root despite `runAsNonRoot` gets kubelet's `CreateContainerConfigError`;
//! an image that exists nowhere is `ErrImagePull`; deleted pods and a `kill -9`'d run leave no
//! container behind.
//!
//! podman and runc are required (CI installs them: `apt-get install podman runc`); without
//! them the test fails saying so. Waits are polling loops bounded by 90 s; nothing asserts on
//! timing.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::dev::{Dev, wait_for as wait_until};

/// How long a wait may take before the test fails.
const LIMIT: Duration = Duration::from_secs(90);

fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_until(what, LIMIT, f)
}

/// The image the tests build (a tag other than `latest`: `IfNotPresent`, found locally).
const IMAGE: &str = "localhost/mni-podman-test:1";

/// The program in the image: `serve` reports what the container sees and serves HTTP on
/// `$POD_IP:8080`; `eat` allocates memory until the kernel kills it; `sleep` sleeps.
const PROGRAM: &str = r#"
use std::io::{Read, Write};
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "eat" {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop { hoard.push(vec![1u8; 1 << 20]); }
    }
    if mode == "sleep" {
        println!("sleeping");
        loop { std::thread::sleep(std::time::Duration::from_secs(60)); }
    }
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"));
    println!("greeting={}", std::env::var("GREETING").unwrap_or_default());
    println!("config={}", read("/etc/app/app.conf").trim());
    let token = read("/var/run/secrets/kubernetes.io/serviceaccount/token");
    println!("token-bytes={}", token.len());
    println!("namespace={}", read("/var/run/secrets/kubernetes.io/serviceaccount/namespace"));
    println!("ca={}", read("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt").starts_with("-----BEGIN"));
    let status = read("/proc/self/status");
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap_or("");
    println!("uid={}", uid.split_whitespace().nth(1).unwrap_or("?"));
    match std::fs::write("/written", b"x") {
        Ok(()) => println!("root-fs=writable"),
        Err(e) => println!("root-fs=refused ({})", e.kind()),
    }
    let addr = format!("{}:8080", std::env::var("POD_IP").unwrap_or_else(|_| "127.0.0.1".into()));
    let listener = std::net::TcpListener::bind(&addr).expect("bind");
    println!("serving on {addr}");
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        let mut buf = [0u8; 1024];
        let _ = conn.read(&mut buf);
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    }
}
"#;

fn require_podman() {
    let found = Command::new("podman").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "this test needs podman and runc: install them (Debian: apt-get install podman runc)"
    );
}

/// Compiles the program statically and builds the image with `podman build` (as a user
/// would, with podman's default settings for building: the runtime's settings are passed
/// as mni-dev writes them).
fn build_image(dir: &Path, conf: &Path) {
    let ctx = dir.join("image");
    std::fs::create_dir_all(&ctx).expect("image dir");
    std::fs::write(ctx.join("main.rs"), PROGRAM).expect("program");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .args([
            "--edition",
            "2021",
            "-O",
            "-C",
            "target-feature=+crt-static",
            "-o",
        ])
        .arg(ctx.join("app"))
        .arg(ctx.join("main.rs"))
        .output()
        .expect("rustc runs");
    assert!(
        out.status.success(),
        "rustc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(
        ctx.join("Containerfile"),
        "FROM scratch\nCOPY app /app\nUSER 65532:65532\nENTRYPOINT [\"/app\"]\n",
    )
    .expect("Containerfile");
    let out = Command::new("podman")
        .env("CONTAINERS_CONF", conf)
        .args(["build", "--quiet", "-t", IMAGE])
        .arg(&ctx)
        .output()
        .expect("podman build runs");
    assert!(
        out.status.success(),
        "podman build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The containers podman has for the agent of `node_dir`: `NAME ID` each.
fn containers(node_dir: &Path) -> Vec<String> {
    let node_dir = std::path::absolute(node_dir).expect("absolute");
    let out = Command::new("podman")
        .env("CONTAINERS_CONF", node_dir.join("containers.conf"))
        .args(["ps", "-a", "--format", "{{.Names}} {{.ID}}", "--filter"])
        .arg(format!(
            "label={}={}",
            mni_node::AGENT_LABEL,
            node_dir.display()
        ))
        .output()
        .expect("podman ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn podman_pods_run_confined_with_their_volumes_and_limits() {
    let _pods = support::real_pods();
    require_podman();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up_with(tmp.path(), &["--runtime", "podman"]);
    let node_dir = tmp.path().join("data/node");
    build_image(tmp.path(), &node_dir.join("containers.conf"));
    dev.apply(&format!(
        r#"
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings}}
data: {{greeting: hello, app.conf: "level=debug\n"}}
---
apiVersion: v1
kind: Pod
metadata: {{name: web}}
spec:
  securityContext: {{runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532}}
  containers:
  - name: web
    image: {IMAGE}
    args: [serve]
    env:
    - {{name: GREETING, valueFrom: {{configMapKeyRef: {{name: settings, key: greeting}}}}}}
    volumeMounts:
    - {{name: conf, mountPath: /etc/app}}
    readinessProbe:
      httpGet: {{path: /, port: 8080}}
      periodSeconds: 1
    securityContext:
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {{drop: [ALL]}}
  volumes:
  - name: conf
    configMap: {{name: settings}}
---
apiVersion: v1
kind: Pod
metadata: {{name: hungry}}
spec:
  restartPolicy: Never
  containers:
  - name: eat
    image: {IMAGE}
    args: [eat]
    resources:
      limits: {{memory: 32Mi}}
---
apiVersion: v1
kind: Pod
metadata: {{name: as-root}}
spec:
  containers:
  - name: main
    image: {IMAGE}
    args: [serve]
    securityContext: {{runAsNonRoot: true, runAsUser: 0}}
---
apiVersion: v1
kind: Pod
metadata: {{name: nowhere}}
spec:
  containers:
  - name: main
    image: localhost/mni-no-such-image:1
"#
    ));

    // Ready through the HTTP probe to its own address.
    wait_for("web to be Ready", || {
        (dev.jsonpath(
            "pod web",
            "{.status.conditions[?(@.type==\"Ready\")].status}",
        ) == "True")
            .then_some(())
    });
    let logs = wait_for("web's report", || {
        let out = dev.kubectl(&["logs", "web"]);
        let logs = String::from_utf8_lossy(&out.stdout).to_string();
        logs.contains("serving on").then_some(logs)
    });
    for line in [
        "greeting=hello",
        "config=level=debug",
        "namespace=default",
        "ca=true",
        "uid=65532",
        "root-fs=refused",
    ] {
        assert!(logs.contains(line), "{line}: {logs}");
    }
    let token_bytes: usize = logs
        .lines()
        .find_map(|l| l.strip_prefix("token-bytes="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(token_bytes > 100, "a bound token is mounted: {logs}");
    let ip = dev.jsonpath("pod web", "{.status.podIP}");
    assert!(ip.starts_with("127.1."), "{ip}");
    let id = dev.jsonpath("pod web", "{.status.containerStatuses[0].containerID}");
    assert!(id.starts_with("podman://"), "{id}");

    // The kernel enforces the memory limit; kubelet's reason says why.
    wait_for("hungry to be OOMKilled", || {
        let reason = dev.jsonpath(
            "pod hungry",
            "{.status.containerStatuses[0].state.terminated.reason}",
        );
        (reason == "OOMKilled").then_some(())
    });
    assert_eq!(dev.jsonpath("pod hungry", "{.status.phase}"), "Failed");

    // runAsNonRoot with a root user: not started, as kubelet refuses it.
    let message = wait_for("as-root to be refused", || {
        let reason = dev.jsonpath(
            "pod as-root",
            "{.status.containerStatuses[0].state.waiting.reason}",
        );
        (reason == "CreateContainerConfigError").then(|| {
            dev.jsonpath(
                "pod as-root",
                "{.status.containerStatuses[0].state.waiting.message}",
            )
        })
    });
    assert!(
        message.contains("container has runAsNonRoot and image will run as root"),
        "{message}"
    );

    // No registry has the image.
    wait_for("nowhere to fail pulling", || {
        let reason = dev.jsonpath(
            "pod nowhere",
            "{.status.containerStatuses[0].state.waiting.reason}",
        );
        (reason == "ErrImagePull" || reason == "ImagePullBackOff").then_some(())
    });

    // A deleted pod's container goes with it.
    assert!(
        containers(&node_dir).iter().any(|c| c.contains("web")),
        "{:?}",
        containers(&node_dir)
    );
    dev.ok(&["delete", "pod", "web", "hungry", "--wait=true"]);
    wait_for("web's container to be removed", || {
        (!containers(&node_dir).iter().any(|c| c.contains("web"))).then_some(())
    });

    // kill -9 with a container running: the next run removes it.
    dev.apply(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: left}}\nspec:\n  containers:\n  - {{name: main, image: {IMAGE}, args: [sleep]}}\n"
    ));
    wait_for("left to run", || {
        let out = dev.kubectl(&["logs", "left"]);
        String::from_utf8_lossy(&out.stdout)
            .contains("sleeping")
            .then_some(())
    });
    let before = wait_for("left's container", || {
        let found = containers(&node_dir);
        (found.len() == 1).then(|| found[0].clone())
    });
    dev.kill9();
    assert_eq!(
        containers(&node_dir),
        std::slice::from_ref(&before),
        "the killed agent could not remove its container"
    );
    // The next run removes it at start and runs the pod again: one container, a new one.
    let dev = Dev::up_with(tmp.path(), &["--runtime", "podman"]);
    wait_for("left to run in a new container", || {
        let found = containers(&node_dir);
        (found.len() == 1 && found[0] != before).then_some(())
    });
    drop(dev);
    wait_for("the agent to remove its containers on shutdown", || {
        containers(&node_dir).is_empty().then_some(())
    });
}
