//! `mni-dev up --runtime process` driven with kubectl as a user would: pods whose containers
//! are real host processes (`/bin/sh` scripts and a Python HTTP server, mapped through the
//! image registry file), their logs through `kubectl logs`, crash loops, missing images and
//! Secrets, probes, two pods on port 8080 at their own addresses, a Deployment that becomes
//! Available through readiness, a Job, and no process left behind after `kill -9`.
//! Waits are polling loops bounded by 60 s; nothing asserts on timing.

use crate::support;

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use support::dev::{Dev, wait_for as wait_until};

/// How long a wait may take before the test fails.
const LIMIT: Duration = Duration::from_secs(60);

fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_until(what, LIMIT, f)
}

/// The real Python interpreter (not a pyenv shim, which needs the user's environment).
fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("these tests run a Python HTTP server: install python3 (apt-get install python3)");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `mni-dev up --runtime process` with an image registry mapping `sh` and `python`.
fn up(dir: &Path) -> Dev {
    std::fs::create_dir_all(dir).expect("dir");
    let registry = dir.join("images.yaml");
    std::fs::write(
        &registry,
        format!(
            "# image: executable\nsh: /bin/sh\nexample.com/shell:1.0:\n  entrypoint: [/bin/sh, -c]\n  cmd: ['echo default command; sleep 300']\npython: {}\n",
            python()
        ),
    )
    .expect("registry");
    let registry = registry.display().to_string();
    Dev::up_with(
        dir,
        &["--runtime", "process", "--image-registry", &registry],
    )
}

#[test]
fn process_pods_run_log_crash_and_wait_for_images_and_secrets() {
    let _pods = support::real_pods();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = up(tmp.path());
    let prestop = tmp.path().join("prestop");
    dev.apply(
        &r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {greeting: hello, app.conf: "level=debug\n"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: default-view}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- {kind: ServiceAccount, name: default, namespace: default}
---
apiVersion: v1
kind: Pod
metadata: {name: hello, labels: {app: hello}}
spec:
  containers:
  - name: main
    image: sh
    command: ["/bin/sh", "-c"]
    args:
    - echo to stderr >&2;
      echo "$(GREETING) from $MY_NAME in $MY_NAMESPACE at $POD_IP";
      cat "$MNI_MOUNT_ETC_APP/app.conf";
      kubectl get pod "$MY_NAME" -o jsonpath='{.metadata.name} seen in-cluster{"\n"}';
      sleep 300
    env:
    - {name: GREETING, valueFrom: {configMapKeyRef: {name: settings, key: greeting}}}
    - {name: MY_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: MY_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    volumeMounts:
    - {name: conf, mountPath: /etc/app}
    lifecycle:
      preStop:
        exec: {command: ["/bin/sh", "-c", "echo bye > PRESTOP_FILE"]}
  - name: side
    image: example.com/shell:1.0
  volumes:
  - name: conf
    configMap: {name: settings}
---
---
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers:
  - name: main
    image: sh
    command: ["/bin/sh", "-c", "echo attempt; exit 3"]
---
apiVersion: v1
kind: Pod
metadata: {name: no-image}
spec:
  containers:
  - {name: main, image: "nginx:1.27"}
---
apiVersion: v1
kind: Pod
metadata: {name: no-secret}
spec:
  containers:
  - name: main
    image: sh
    command: ["/bin/sh", "-c", "echo token=$TOKEN; sleep 300"]
    env:
    - {name: TOKEN, valueFrom: {secretKeyRef: {name: api-token, key: token}}}
"#
        .replace("PRESTOP_FILE", &prestop.display().to_string()),
    );
    dev.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/hello",
        "--timeout=60s",
    ]);
    let ip = dev.jsonpath("pod/hello", "{.status.podIP}");
    assert!(ip.starts_with("127.1."), "pod address {ip}");
    let logs = wait_for("hello's output", || {
        let out = dev.ok(&["logs", "hello", "-c", "main"]);
        out.contains("seen in-cluster").then_some(out)
    });
    assert!(
        logs.contains(&format!("hello from hello in default at {ip}\n")),
        "{logs}"
    );
    assert!(logs.contains("level=debug\n"), "{logs}");
    assert!(logs.contains("hello seen in-cluster\n"), "{logs}");
    assert!(logs.contains("to stderr\n"), "{logs}");
    // The image's default command, as the registry gives it.
    let side = wait_for("side's output", || {
        let out = dev.ok(&["logs", "hello", "-c", "side"]);
        (!out.is_empty()).then_some(out)
    });
    assert_eq!(side, "default command\n");
    assert_eq!(
        dev.ok(&["logs", "hello", "-c", "main", "--tail=1"]),
        "hello seen in-cluster\n"
    );
    let stamped = dev.ok(&["logs", "hello", "-c", "main", "--timestamps", "--tail=1"]);
    let (ts, text) = stamped.split_once(' ').expect("timestamped line");
    assert!(ts.ends_with('Z') && ts.contains('T'), "{stamped}");
    assert_eq!(text, "hello seen in-cluster\n");
    assert!(
        dev.ok(&["logs", "hello", "-c", "main", "--since=1h"])
            .contains("level=debug")
    );
    assert_eq!(
        dev.ok(&["logs", "hello", "-c", "side", "--limit-bytes=7"]),
        "default"
    );
    let no_container = dev.kubectl(&["logs", "hello", "-c", "nope"]);
    assert!(!no_container.status.success());

    // `kubectl logs -f` streams until the container ends; init containers run first.
    dev.apply(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: counter}
spec:
  restartPolicy: Never
  initContainers:
  - {name: setup, image: sh, command: ["/bin/sh", "-c", "echo prepared > $MNI_ROOT/../ready"]}
  containers:
  - name: main
    image: sh
    command: ["/bin/sh", "-c", "cat $MNI_ROOT/../ready; for i in 1 2 3; do echo line $i; sleep 1; done"]
"#,
    );
    wait_for("counter running", || {
        (dev.jsonpath("pod/counter", "{.status.phase}") == "Running").then_some(())
    });
    let followed = dev.ok(&["logs", "-f", "counter"]);
    assert_eq!(followed, "prepared\nline 1\nline 2\nline 3\n");
    wait_for("counter succeeded", || {
        (dev.jsonpath("pod/counter", "{.status.phase}") == "Succeeded").then_some(())
    });
    assert_eq!(
        dev.jsonpath(
            "pod/counter",
            "{.status.initContainerStatuses[0].state.terminated.reason}"
        ),
        "Completed"
    );

    // A container that exits 3 is restarted at once, then backs off: CrashLoopBackOff, its
    // previous instance's log kept.
    let reason = wait_for("crash loop", || {
        let r = dev.jsonpath(
            "pod/crash",
            "{.status.containerStatuses[0].state.waiting.reason}",
        );
        (r == "CrashLoopBackOff").then_some(r)
    });
    assert_eq!(reason, "CrashLoopBackOff");
    let last = dev.jsonpath(
        "pod/crash",
        "{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason}",
    );
    assert_eq!(last, "3 Error");
    assert_eq!(dev.ok(&["logs", "crash", "--previous"]), "attempt\n");
    let table = dev.ok(&["get", "pod", "crash"]);
    assert!(table.contains("CrashLoopBackOff"), "{table}");

    // An image nothing maps: ErrImagePull, then ImagePullBackOff, with the fix in the event.
    wait_for("image pull back-off", || {
        let r = dev.jsonpath(
            "pod/no-image",
            "{.status.containerStatuses[0].state.waiting.reason}",
        );
        (r == "ImagePullBackOff").then_some(())
    });
    let events = dev.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=no-image",
    ]);
    assert!(
        events.contains("\"nginx:1.27\" is not in the image registry"),
        "{events}"
    );

    // A missing Secret: CreateContainerConfigError until it is created.
    wait_for("config error", || {
        let r = dev.jsonpath(
            "pod/no-secret",
            "{.status.containerStatuses[0].state.waiting}",
        );
        (r.contains("CreateContainerConfigError")
            && r.contains("secret \\\"api-token\\\" not found"))
        .then_some(())
    });
    dev.ok(&[
        "create",
        "secret",
        "generic",
        "api-token",
        "--from-literal=token=s3cret",
    ]);
    dev.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/no-secret",
        "--timeout=60s",
    ]);
    wait_for("the secret in the environment", || {
        (dev.ok(&["logs", "no-secret"]) == "token=s3cret\n").then_some(())
    });

    // Deleting a pod stops its processes (SIGTERM) and removes their pid files.
    let uid = dev.jsonpath("pod/hello", "{.metadata.uid}");
    let pid_file = tmp.path().join(format!("data/node/pids/{uid}_main.pid"));
    assert!(pid_file.exists(), "{}", pid_file.display());
    dev.ok(&["delete", "pod", "hello", "--wait=false"]);
    wait_for("hello's process gone", || {
        (!pid_file.exists()).then_some(())
    });
}

/// GET `path` from `ip:port`; the status line and body.
fn http_get(ip: &str, port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect((ip, port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {ip}\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

#[test]
fn deployments_become_available_through_probes_on_their_own_addresses() {
    let _pods = support::real_pods();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = up(tmp.path());
    // Two replicas of an HTTP server on port 8080, each bound to its pod's address.
    dev.apply(
        r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: python
        args: ["-m", "http.server", "8080", "--bind", "$(POD_IP)"]
        env:
        - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
        ports:
        - {name: http, containerPort: 8080}
        readinessProbe:
          httpGet: {path: /, port: http}
          periodSeconds: 1
        livenessProbe:
          tcpSocket: {port: 8080}
          initialDelaySeconds: 5
          periodSeconds: 2
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {port: 80, targetPort: http}
---
apiVersion: v1
kind: Pod
metadata: {name: deaf}
spec:
  containers:
  - name: main
    image: sh
    command: ["/bin/sh", "-c", "echo started; sleep 300"]
    livenessProbe:
      tcpSocket: {port: 9999}
      periodSeconds: 1
      failureThreshold: 2
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: sh
        command: ["/bin/sh", "-c", "echo job done"]
"#,
    );
    dev.ok(&[
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "--timeout=60s",
    ]);
    let ips = dev.jsonpath("pods -l app=web", "{.items[*].status.podIP}");
    let ips: Vec<&str> = ips.split_whitespace().collect();
    assert_eq!(ips.len(), 2, "{ips:?}");
    assert_ne!(ips[0], ips[1]);
    for ip in &ips {
        let reply = http_get(ip, 8080, "/").expect("the pod serves on its address");
        assert!(reply.starts_with("HTTP/1.0 200"), "{reply}");
    }
    let endpoints = wait_for("both endpoints ready", || {
        let e = dev.jsonpath(
            "endpointslices -l kubernetes.io/service-name=web",
            "{.items[*].endpoints[*].addresses[0]}",
        );
        (e.split_whitespace().count() == 2).then_some(e)
    });
    for ip in &ips {
        assert!(endpoints.contains(ip), "{endpoints}");
    }
    let access = dev.ok(&["logs", "deployment/web"]);
    assert!(access.contains("\"GET / HTTP/1.0\" 200"), "{access}");

    // A liveness probe to a closed port restarts the container.
    wait_for("liveness restart", || {
        let n = dev.jsonpath("pod/deaf", "{.status.containerStatuses[0].restartCount}");
        (n.parse::<i32>().unwrap_or(0) >= 1).then_some(())
    });
    let events = dev.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.name=deaf",
    ]);
    assert!(
        events.contains("failed liveness probe, will be restarted"),
        "{events}"
    );

    let done = dev.kubectl(&[
        "wait",
        "--for=condition=Complete",
        "job/once",
        "--timeout=60s",
    ]);
    assert!(
        done.status.success(),
        "job not complete: {}\n{}",
        dev.ok(&["get", "jobs,pods", "-o", "wide"]),
        dev.ok(&["get", "pods", "-l", "job-name=once", "-o", "yaml"])
    );
    assert_eq!(dev.ok(&["logs", "job/once"]), "job done\n");
    let phase = dev.jsonpath("pods -l job-name=once", "{.items[0].status.phase}");
    assert_eq!(phase, "Succeeded");
}

#[test]
fn processes_of_a_killed_run_are_cleaned_up_and_unschedulable_pods_wait() {
    let _pods = support::real_pods();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = up(tmp.path());
    dev.apply(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  containers:
  - {name: main, image: sh, command: ["/bin/sh", "-c", "echo $$$$ > $MNI_ROOT/../pid; sleep 600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: greedy}
spec:
  containers:
  - name: main
    image: sh
    resources: {requests: {memory: 100Ti}}
"#,
    );
    dev.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/sleeper",
        "--timeout=60s",
    ]);
    let pod_dir = tmp.path().join("data/node/pods");
    let pid = wait_for("the sleeper's pid", || {
        std::fs::read_dir(&pod_dir)
            .ok()?
            .flatten()
            .find_map(|e| std::fs::read_to_string(e.path().join("pid")).ok())
            .and_then(|p| p.trim().parse::<i32>().ok())
    });
    // Running (a zombie nobody reaps counts as gone).
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    assert!(alive(pid));
    let msg = wait_for("FailedScheduling", || {
        let e = dev.ok(&[
            "get",
            "events",
            "--field-selector",
            "reason=FailedScheduling",
        ]);
        e.contains("greedy").then_some(e)
    });
    assert!(
        msg.contains("0/1 nodes are available: 1 Insufficient memory."),
        "{msg}"
    );
    let describe = dev.ok(&["describe", "pod", "greedy"]);
    assert!(describe.contains("FailedScheduling"), "{describe}");
    assert_eq!(dev.jsonpath("pod/greedy", "{.status.phase}"), "Pending");

    // kill -9: the agent cannot stop its processes; the next run finds them by their pid
    // files and kills them before running the pod again.
    dev.kill9();
    assert!(alive(pid), "the process outlives a kill -9 of mni-dev");
    let dev = up(tmp.path());
    wait_for("the old process killed", || (!alive(pid)).then_some(()));
    dev.ok(&[
        "wait",
        "--for=condition=Ready",
        "pod/sleeper",
        "--timeout=60s",
    ]);
}

/// With the default, simulated runtime nothing runs, and `kubectl logs` says so.
#[test]
fn simulated_pods_have_no_logs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    dev.ok(&["run", "idle", "--image=nginx:1.27", "--restart=Never"]);
    dev.ok(&["wait", "--for=condition=Ready", "pod/idle", "--timeout=60s"]);
    let out = dev.kubectl(&["logs", "idle"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--runtime process"), "{err}");
}
