//! kubectl (from PATH) against `mni-dev up`, as a user would drive it; and durability across
//! `kill -9`.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::dev::Dev;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs a command on a schedule.
        properties:
          spec:
            type: object
            description: The desired schedule.
            properties:
              cronSpec: {type: string, pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$', description: The schedule.}
              image: {type: string}
              replicas: {type: integer, minimum: 1, maximum: 10}
"#;

#[test]
fn kubectl_drives_the_dev_control_plane() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    assert!(dev.ok(&["get", "namespaces"]).contains("kube-system"));
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n";
    assert!(dev.apply(ns).contains("namespace/demo created"));
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: demo\n  labels: {app: web}\ndata:\n  mode: fast\n";
    assert!(dev.apply(cm).contains("configmap/settings created"));
    assert!(
        dev.apply(&cm.replace("fast", "slow"))
            .contains("configured")
    );
    assert_eq!(
        dev.ok(&[
            "get",
            "cm",
            "settings",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.mode}"
        ]),
        "slow"
    );
    assert!(
        dev.ok(&["get", "cm", "-n", "demo", "-l", "app=web"])
            .contains("settings")
    );
    assert!(
        !dev.ok(&["get", "cm", "-n", "demo", "-l", "app!=web"])
            .contains("settings")
    );
    dev.ok(&["label", "cm", "settings", "-n", "demo", "tier=gold"]);
    dev.ok(&["annotate", "cm", "settings", "-n", "demo", "owner=team-a"]);
    dev.ok(&[
        "patch",
        "cm",
        "settings",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"extra":"1"}}"#,
    ]);
    let json: serde_json::Value =
        serde_json::from_str(&dev.ok(&["get", "cm", "settings", "-n", "demo", "-o", "json"]))
            .expect("json");
    assert_eq!(json["metadata"]["labels"]["tier"], "gold");
    assert_eq!(json["metadata"]["annotations"]["owner"], "team-a");
    assert_eq!(json["data"]["extra"], "1");

    // A CRD becomes Established and its resources are served, explained and printed.
    dev.apply(CRD);
    dev.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/crontabs.stable.example.com",
        "--timeout=20s",
    ]);
    let explain = dev.ok(&["explain", "crontabs.spec"]);
    assert!(explain.contains("cronSpec"), "{explain}");
    let ct = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: nightly\n  namespace: demo\nspec:\n  cronSpec: '0 3 * * *'\n  replicas: 2\n";
    assert!(
        dev.apply(ct)
            .contains("crontab.stable.example.com/nightly created")
    );
    let table = dev.ok(&["get", "ct", "-n", "demo"]);
    assert!(
        table.contains("REPLICAS") && table.contains("0 3 * * *"),
        "{table}"
    );
    // An invalid custom resource is rejected with the field named.
    let bad = ct
        .replace("replicas: 2", "replicas: 50")
        .replace("nightly", "broken");
    let out = dev.kubectl_stdin(&["apply", "-f", "-"], Some(&bad));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spec.replicas: Invalid value: 50: spec.replicas in body should be less than or equal to 10"),
        "{err}"
    );
    assert!(
        !err.contains("spec.replicas: spec.replicas"),
        "the cause message carries no path: {err}"
    );
    // Unknown fields are rejected by kubectl's default strict validation.
    let unknown = ct
        .replace("replicas: 2", "replicas: 2\n  bogus: true")
        .replace("nightly", "strict");
    let out = dev.kubectl_stdin(&["apply", "-f", "-"], Some(&unknown));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));

    // get -w streams changes.
    let mut watch = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(tmp.path().join("kubeconfig"))
        .args([
            "get",
            "cm",
            "-n",
            "demo",
            "-w",
            "--output-watch-events",
            "--request-timeout=20s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("watch");
    let reader = BufReader::new(watch.stdout.take().expect("stdout"));
    let lines = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in reader.lines().map_while(Result::ok) {
            let done = line.contains("DELETED");
            seen.push(line);
            if done {
                break;
            }
        }
        seen
    });
    std::thread::sleep(Duration::from_millis(800));
    let tmp_cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\n  namespace: demo\n";
    dev.kubectl_stdin(&["create", "-f", "-"], Some(tmp_cm));
    dev.ok(&["delete", "cm", "watched", "-n", "demo"]);
    let seen = lines.join().expect("watch lines");
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(
        seen.iter()
            .any(|l| l.contains("ADDED") && l.contains("watched")),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|l| l.contains("DELETED") && l.contains("watched")),
        "{seen:?}"
    );

    assert!(
        dev.ok(&["delete", "-n", "demo", "crontab", "nightly"])
            .contains("deleted")
    );
    assert!(
        dev.ok(&["delete", "cm", "settings", "-n", "demo"])
            .contains("deleted")
    );
}

/// `RUST_LOG=info,mni_apiserver::http=debug`: one line per request, as kube-apiserver's httplog
/// writes them, with no token in it.
#[test]
fn the_request_log_names_each_request_and_metrics_count_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up_logging(tmp.path(), "info,mni_apiserver::http=debug");
    dev.ok(&["get", "configmaps", "-l", "app=web"]);
    assert!(
        !dev.kubectl(&["get", "configmap", "absent"])
            .status
            .success()
    );
    let kubeconfig = std::fs::read_to_string(tmp.path().join("kubeconfig")).expect("kubeconfig");
    let token = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("token:"))
        .map(str::trim)
        .expect("admin token in kubeconfig");
    // The same requests, counted as kube-apiserver counts them.
    let metrics = dev.ok(&["get", "--raw", "/metrics"]);
    let sample = |verb: &str, code: &str, scope: &str| {
        metrics.lines().any(|l| {
            l.starts_with("apiserver_request_total{")
                && l.contains(&format!(r#"verb="{verb}""#))
                && l.contains(r#"resource="configmaps""#)
                && l.contains(&format!(r#"scope="{scope}""#))
                && l.contains(&format!(r#"code="{code}""#))
        })
    };
    assert!(sample("list", "200", "namespace"), "{metrics}");
    assert!(sample("get", "404", "resource"), "{metrics}");
    assert!(
        metrics.contains("# TYPE apiserver_request counter"),
        "{metrics}"
    );
    dev.kill9();
    let log = std::fs::read_to_string(tmp.path().join("mni-dev.log")).expect("log");
    let line = |path: &str, status: &str| {
        log.lines().any(|l| {
            l.contains("method=GET")
                && l.contains(&format!("path={path} "))
                && l.contains(&format!("status={status} "))
                && l.contains("agent=kubectl")
        })
    };
    assert!(
        line("/api/v1/namespaces/default/configmaps", "200"),
        "{log}"
    );
    assert!(log.contains("labelSelector=app%3Dweb"), "{log}");
    assert!(
        line("/api/v1/namespaces/default/configmaps/absent", "404"),
        "{log}"
    );
    assert!(!log.contains(token), "{log}");
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    let mut last_rv = 0i64;
    for i in 0..20 {
        let yaml = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  namespace: default\ndata:\n  i: '{i}'\n"
        );
        let out = dev.kubectl_stdin(
            &[
                "create",
                "-f",
                "-",
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ],
            Some(&yaml),
        );
        assert!(out.status.success());
        last_rv = String::from_utf8_lossy(&out.stdout).parse().expect("rv");
    }
    dev.kill9();
    let started = Instant::now();
    let dev = Dev::up(tmp.path());
    assert!(started.elapsed() < Duration::from_secs(30));
    let names = dev.ok(&[
        "get",
        "cm",
        "-n",
        "default",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    let written = names
        .split_whitespace()
        .filter(|n| *n != "kube-root-ca.crt");
    assert_eq!(written.count(), 20, "{names}");
    let out = dev.kubectl_stdin(
        &[
            "create",
            "-f",
            "-",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n  namespace: default\n"),
    );
    let rv: i64 = String::from_utf8_lossy(&out.stdout).parse().expect("rv");
    assert!(rv > last_rv, "revisions continue: {rv} > {last_rv}");
}

#[test]
fn typed_kubectl_commands_send_protobuf_and_work() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    assert!(
        dev.ok(&["create", "namespace", "typed"])
            .contains("namespace/typed created")
    );
    dev.ok(&[
        "create",
        "configmap",
        "cfg",
        "-n",
        "typed",
        "--from-literal=a=b",
    ]);
    assert_eq!(
        dev.ok(&[
            "get",
            "cm",
            "cfg",
            "-n",
            "typed",
            "-o",
            "jsonpath={.data.a}"
        ]),
        "b"
    );
    dev.ok(&[
        "create",
        "secret",
        "generic",
        "sec",
        "-n",
        "typed",
        "--from-literal=p=q",
    ]);
    assert_eq!(
        dev.ok(&[
            "get",
            "secret",
            "sec",
            "-n",
            "typed",
            "-o",
            "jsonpath={.data.p}"
        ]),
        "cQ=="
    );
    dev.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "typed",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    assert!(
        dev.ok(&["scale", "deployment", "web", "-n", "typed", "--replicas=4"])
            .contains("scaled")
    );
    assert_eq!(
        dev.ok(&[
            "get",
            "deploy",
            "web",
            "-n",
            "typed",
            "-o",
            "jsonpath={.spec.replicas}"
        ]),
        "4"
    );
    assert!(
        dev.ok(&["get", "deploy", "-n", "typed"])
            .contains("UP-TO-DATE")
    );
}

/// The kubectl releases installed beside the default one (1.27 … 1.33) agree with the server on
/// protobuf creates, client-side apply (create, then patch) and explain.
#[test]
fn older_and_newer_kubectl_releases_work() {
    let dir = Path::new("/usr/lib/google-cloud-sdk/bin");
    let releases: Vec<PathBuf> = ["1.27", "1.29", "1.31", "1.33"]
        .iter()
        .map(|v| dir.join(format!("kubectl.{v}")))
        .filter(|p| p.exists())
        .collect();
    if releases.is_empty() {
        eprintln!(
            "no versioned kubectl binaries in {}; nothing to check",
            dir.display()
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    for (i, kubectl) in releases.iter().enumerate() {
        let run = |args: &[&str], stdin: Option<String>| {
            let mut child = Command::new(kubectl)
                .arg("--kubeconfig")
                .arg(tmp.path().join("kubeconfig"))
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("kubectl");
            if let Some(s) = stdin {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(s.as_bytes())
                    .expect("write");
            }
            drop(child.stdin.take());
            let out = child.wait_with_output().expect("output");
            assert!(
                out.status.success(),
                "{} {args:?}: {}",
                kubectl.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).to_string()
        };
        run(
            &[
                "create",
                "configmap",
                &format!("typed{i}"),
                "--from-literal=a=b",
            ],
            None,
        );
        let cm = |v: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied{i}\ndata:\n  a: {v}\n"
            )
        };
        assert!(run(&["apply", "-f", "-"], Some(cm("b"))).contains("created"));
        assert!(run(&["apply", "-f", "-"], Some(cm("c"))).contains("configured"));
        assert!(run(&["explain", "deployment.spec.replicas"], None).contains("replicas"));
    }
    let _ = &dev;
}

/// Identities and workloads the way a user meets them: TLS by default, tokens, `auth can-i`,
/// impersonation, the workload simulator, cascading deletes.
#[test]
fn security_and_workloads_through_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    let kubeconfig = std::fs::read_to_string(tmp.path().join("kubeconfig")).expect("kubeconfig");
    assert!(kubeconfig.contains("https://") && kubeconfig.contains("certificate-authority-data"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in [
            "kubeconfig",
            "data/pki/ca.key",
            "data/pki/apiserver.key",
            "data/pki/admin.token",
            "data/pki/sa-signing.key",
        ] {
            let mode = std::fs::metadata(tmp.path().join(f))
                .expect(f)
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{f}");
        }
    }
    assert!(dev.ok(&["auth", "whoami"]).contains("system:masters"));
    dev.ok(&["create", "serviceaccount", "app"]);
    let token = dev.ok(&["create", "token", "app"]);
    assert_eq!(token.trim().split('.').count(), 3, "a JWT: {token}");
    assert_eq!(dev.ok(&["auth", "can-i", "list", "secrets"]).trim(), "yes");
    let out = dev.kubectl(&[
        "auth",
        "can-i",
        "list",
        "secrets",
        "--as=system:serviceaccount:default:app",
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "no");
    dev.ok(&[
        "create",
        "role",
        "cm-reader",
        "--verb=get,list,watch",
        "--resource=configmaps",
    ]);
    dev.ok(&[
        "create",
        "rolebinding",
        "cm-reader",
        "--role=cm-reader",
        "--serviceaccount=default:app",
    ]);
    assert_eq!(
        dev.ok(&[
            "auth",
            "can-i",
            "list",
            "configmaps",
            "--as=system:serviceaccount:default:app"
        ])
        .trim(),
        "yes"
    );
    let out = dev.kubectl(&["get", "secrets", "--as=system:serviceaccount:default:app"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(r#"User "system:serviceaccount:default:app" cannot list resource "secrets" in API group "" in the namespace "default""#),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The token works on its own, with no admin credentials.
    let out = dev.kubectl(&["--token", token.trim(), "--user", "", "get", "configmaps"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Workloads become available through the simulator.
    dev.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    dev.ok(&[
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "--timeout=60s",
    ]);
    assert!(
        dev.ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
            .contains("successfully rolled out")
    );
    assert_eq!(
        dev.ok(&[
            "get",
            "pods",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[*].status.phase}"
        ]),
        "Running Running"
    );
    dev.ok(&["expose", "deployment", "web", "--port=80"]);
    let ip = dev.ok(&["get", "svc", "web", "-o", "jsonpath={.spec.clusterIP}"]);
    assert!(ip.starts_with("10."), "{ip}");

    // Cascading deletion: orphan keeps the ReplicaSet, foreground removes everything first.
    dev.ok(&["delete", "deployment", "web", "--cascade=orphan"]);
    let rs = dev.ok(&[
        "get",
        "rs",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[*].metadata.ownerReferences}",
    ]);
    assert!(rs.is_empty(), "orphaned ReplicaSets lose their owner: {rs}");
    dev.ok(&[
        "delete",
        "rs",
        "-l",
        "app=web",
        "--cascade=foreground",
        "--wait=true",
        "--timeout=60s",
    ]);
    assert!(
        dev.ok(&["get", "pods", "-l", "app=web", "-o", "name"])
            .trim()
            .is_empty()
    );
}

#[test]
fn server_side_apply_conflicts_and_forcing_through_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    let cm = |v: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: \"{v}\"\n")
    };
    let out = dev.kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(&cm("1")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("serverside-applied"));
    let out = dev.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        Some(&cm("2")),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "kubectl": .data.a"#),
        "{err}"
    );
    let out = dev.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            "-",
        ],
        Some(&cm("2")),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        dev.ok(&["get", "cm", "ssa", "-o", "jsonpath={.data.a}"]),
        "2"
    );
    let managers = dev.ok(&[
        "get",
        "cm",
        "ssa",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
    ]);
    assert!(managers.contains("other"), "{managers}");
}

#[test]
fn sigterm_shuts_down_cleanly_and_keeps_every_write() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut dev = Dev::up(tmp.path());
    for i in 0..5 {
        let yaml = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t{i}\n  namespace: default\n"
        );
        assert!(
            dev.kubectl_stdin(&["create", "-f", "-"], Some(&yaml))
                .status
                .success()
        );
    }
    let pid = dev.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    let status = dev.child.wait().expect("exits");
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
    drop(dev);
    let dev = Dev::up(tmp.path());
    let names = dev.ok(&[
        "get",
        "cm",
        "-n",
        "default",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert_eq!(
        names
            .split_whitespace()
            .filter(|n| n.starts_with('t'))
            .count(),
        5,
        "{names}"
    );
}

/// Client-side `kubectl apply`, `set image` and `rollout restart` send strategic merge patches.
#[test]
fn strategic_merge_patches_from_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    let deploy = |image: &str, replicas: u32| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: smp\n  namespace: default\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: smp}}\n  template:\n    metadata:\n      labels: {{app: smp}}\n    spec:\n      containers:\n      - name: main\n        image: {image}\n        env: [{{name: A, value: '1'}}]\n      - name: sidecar\n        image: busybox:1.36\n"
        )
    };
    assert!(dev.apply(&deploy("nginx:1.26", 1)).contains("created"));
    assert!(dev.apply(&deploy("nginx:1.27", 2)).contains("configured"));
    let images = dev.ok(&[
        "get",
        "deploy",
        "smp",
        "-o",
        "jsonpath={.spec.template.spec.containers[*].image}",
    ]);
    assert_eq!(images, "nginx:1.27 busybox:1.36");
    dev.ok(&["set", "image", "deployment/smp", "sidecar=busybox:1.37"]);
    let images = dev.ok(&[
        "get",
        "deploy",
        "smp",
        "-o",
        "jsonpath={.spec.template.spec.containers[*].image}",
    ]);
    assert_eq!(
        images, "nginx:1.27 busybox:1.37",
        "merged by container name"
    );
    assert_eq!(
        dev.ok(&[
            "get",
            "deploy",
            "smp",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].env[0].value}"
        ]),
        "1"
    );
    dev.ok(&["rollout", "restart", "deployment/smp"]);
    let restarted = dev.ok(&[
        "get",
        "deploy",
        "smp",
        "-o",
        "jsonpath={.spec.template.metadata.annotations}",
    ]);
    assert!(
        restarted.contains("kubectl.kubernetes.io/restartedAt"),
        "{restarted}"
    );
    assert_eq!(
        dev.ok(&[
            "get",
            "deploy",
            "smp",
            "-o",
            "jsonpath={.metadata.generation}"
        ]),
        "4"
    );
}

/// `kubectl patch` (strategic) merges by the patch strategy of each field's *type*: a
/// ServiceAccount's `imagePullSecrets` are atomic (replaced) while its `secrets` merge by
/// `name`, unlike a PodSpec's `imagePullSecrets`; a Service's ports merge by `port`.
#[test]
fn strategic_merge_patches_follow_the_types() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    dev.apply(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: typed\n  namespace: default\nimagePullSecrets: [{name: a}]\nsecrets: [{name: x}]\n",
    );
    dev.ok(&[
        "patch",
        "serviceaccount",
        "typed",
        "--type",
        "strategic",
        "-p",
        r#"{"imagePullSecrets":[{"name":"b"}],"secrets":[{"name":"y"}]}"#,
    ]);
    let get =
        |kind: &str, path: &str| dev.ok(&["get", kind, "typed", "-o", &format!("jsonpath={path}")]);
    assert_eq!(get("serviceaccount", "{.imagePullSecrets[*].name}"), "b");
    assert_eq!(get("serviceaccount", "{.secrets[*].name}"), "x y");
    dev.apply(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: typed\n  namespace: default\nspec:\n  selector: {app: typed}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n",
    );
    dev.ok(&[
        "patch",
        "service",
        "typed",
        "-p",
        r#"{"spec":{"ports":[{"port":80,"targetPort":9090},{"name":"https","port":443}]}}"#,
    ]);
    assert_eq!(get("service", "{.spec.ports[*].targetPort}"), "9090 443");
    assert_eq!(get("service", "{.spec.ports[0].name}"), "http");
}

#[test]
fn insecure_http_is_loopback_only_and_usable_by_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_mni-dev"))
        .args([
            "up",
            "--insecure-http",
            "--listen",
            "0.0.0.0:0",
            "--in-memory",
            "--data-dir",
        ])
        .arg(tmp.path().join("x"))
        .output()
        .expect("mni-dev");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--insecure-http is only allowed on loopback addresses")
    );
    assert!(!tmp.path().join("x").exists(), "nothing written");

    let mut child = Command::new(env!("CARGO_BIN_EXE_mni-dev"))
        .args([
            "up",
            "--insecure-http",
            "--no-simulate",
            "--in-memory",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(tmp.path().join("data"))
        .arg("--kubeconfig")
        .arg(tmp.path().join("kubeconfig"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mni-dev");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready");
    assert!(line.contains("ready: serving http://127.0.0.1:"), "{line}");
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(tmp.path().join("kubeconfig"))
        .args(["get", "namespaces", "-o", "name"])
        .output()
        .expect("kubectl");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("namespace/kube-system"));
}

#[test]
fn generally_available_built_in_kinds_through_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    let versions = dev.ok(&["api-versions"]);
    for gv in [
        "batch/v1",
        "autoscaling/v2",
        "policy/v1",
        "discovery.k8s.io/v1",
        "storage.k8s.io/v1",
        "scheduling.k8s.io/v1",
        "node.k8s.io/v1",
        "certificates.k8s.io/v1",
        "admissionregistration.k8s.io/v1",
        "autoscaling/v1",
        "apiregistration.k8s.io/v1",
        "flowcontrol.apiserver.k8s.io/v1",
    ] {
        assert!(
            versions.lines().any(|l| l == gv),
            "{gv} not in api-versions:\n{versions}"
        );
    }

    let services = dev.ok(&["get", "apiservices"]);
    let apps = services
        .lines()
        .find(|l| l.starts_with("v1.apps "))
        .unwrap_or_default();
    assert!(
        apps.contains("Local") && apps.contains("True"),
        "{services}"
    );
    assert!(
        services.lines().any(|l| l.starts_with("v1. ")),
        "{services}"
    );
    let cs = dev.kubectl(&["get", "componentstatuses"]);
    let (out, err) = (
        String::from_utf8_lossy(&cs.stdout),
        String::from_utf8_lossy(&cs.stderr),
    );
    assert!(cs.status.success(), "{err}");
    let etcd = out
        .lines()
        .find(|l| l.starts_with("etcd-0"))
        .unwrap_or_default();
    assert!(
        out.starts_with("NAME") && etcd.contains("Healthy") && etcd.contains("ok"),
        "{out}"
    );
    assert!(
        err.contains("v1 ComponentStatus is deprecated in v1.19+"),
        "{err}"
    );
    let flows = dev.ok(&["get", "flowschemas"]);
    assert!(
        flows.contains("catch-all") && flows.contains("ByUser") && flows.contains("10000"),
        "{flows}"
    );
    let levels = dev.ok(&["get", "prioritylevelconfigurations"]);
    assert!(
        levels.contains("Exempt") && levels.contains("Limited"),
        "{levels}"
    );

    dev.ok(&["create", "job", "once", "--image=busybox", "--", "true"]);
    dev.ok(&[
        "create",
        "cronjob",
        "nightly",
        "--image=busybox",
        "--schedule=0 3 * * *",
        "--",
        "true",
    ]);
    dev.ok(&[
        "create",
        "pdb",
        "web",
        "--selector=app=web",
        "--min-available=1",
    ]);
    dev.ok(&["create", "priorityclass", "high", "--value=1000"]);
    dev.ok(&["create", "quota", "small", "--hard=pods=10,cpu=2"]);
    let jobs = dev.ok(&["get", "jobs"]);
    assert!(
        jobs.contains("COMPLETIONS") && jobs.contains("once"),
        "{jobs}"
    );
    let cronjobs = dev.ok(&["get", "cj"]);
    assert!(
        cronjobs.contains("nightly") && cronjobs.contains("0 3 * * *"),
        "{cronjobs}"
    );
    let pdbs = dev.ok(&["get", "pdb"]);
    assert!(
        pdbs.contains("MIN AVAILABLE") && pdbs.contains("web"),
        "{pdbs}"
    );
    let pcs = dev.ok(&["get", "pc", "high"]);
    assert!(
        pcs.contains("GLOBAL-DEFAULT") && pcs.contains("1000"),
        "{pcs}"
    );
    let quotas = dev.ok(&["get", "quota"]);
    assert!(
        // The Job's pod was created before the quota and counts towards it.
        quotas.contains("small") && quotas.contains("cpu: 0/2") && quotas.contains("/10"),
        "{quotas}"
    );
    let all = dev.ok(&["get", "all"]);
    assert!(
        all.contains("job.batch/once") && all.contains("cronjob.batch/nightly"),
        "{all}"
    );

    // Pruning walks kubectl's default allowlist, PersistentVolumeClaims included.
    let dir = tmp.path().join("manifests");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let cm = |name: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n  labels: {{app: x}}\ndata: {{k: v}}\n"
        )
    };
    std::fs::write(dir.join("a.yaml"), cm("keep")).expect("write");
    std::fs::write(dir.join("b.yaml"), cm("drop")).expect("write");
    let dir_arg = dir.to_str().expect("utf-8 path");
    dev.ok(&["apply", "--prune", "-l", "app=x", "-f", dir_arg]);
    std::fs::remove_file(dir.join("b.yaml")).expect("rm");
    let pruned = dev.ok(&["apply", "--prune", "-l", "app=x", "-f", dir_arg]);
    assert!(pruned.contains("configmap/drop pruned"), "{pruned}");
    assert!(dev.ok(&["get", "cm"]).contains("keep"));

    let explain = dev.ok(&["explain", "pvc.spec.accessModes"]);
    assert!(explain.contains("accessModes"), "{explain}");
}

#[test]
fn jobs_cron_jobs_endpoint_slices_and_the_node_through_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    dev.ok(&[
        "create",
        "job",
        "pi",
        "--image=perl:5.34",
        "--",
        "perl",
        "-Mbignum=bpi",
        "-wle",
        "print bpi(20)",
    ]);
    dev.ok(&[
        "wait",
        "--for=condition=complete",
        "job/pi",
        "--timeout=60s",
    ]);
    let jobs = dev.ok(&["get", "job", "pi"]);
    assert!(jobs.contains("Complete") && jobs.contains("1/1"), "{jobs}");
    let pods = dev.ok(&["get", "pods", "-l", "job-name=pi"]);
    assert!(pods.contains("Completed"), "{pods}");

    dev.ok(&[
        "create",
        "cronjob",
        "tick",
        "--image=busybox",
        "--schedule=*/5 * * * *",
        "--",
        "true",
    ]);
    let manual = dev.ok(&["create", "job", "manual", "--from=cronjob/tick"]);
    assert!(manual.contains("job.batch/manual created"), "{manual}");
    dev.ok(&[
        "wait",
        "--for=condition=complete",
        "job/manual",
        "--timeout=60s",
    ]);
    let refused = dev.kubectl(&[
        "create",
        "cronjob",
        "never",
        "--image=busybox",
        "--schedule=61 * * * *",
        "--",
        "true",
    ]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(
            "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"
        ),
        "{stderr}"
    );

    let nodes = dev.ok(&["get", "nodes"]);
    assert!(
        nodes
            .lines()
            .any(|l| l.starts_with("mni-dev") && l.contains(" Ready ")),
        "{nodes}"
    );
    let described = dev.ok(&["describe", "node", "mni-dev"]);
    assert!(described.contains("KubeletReady"), "{described}");

    dev.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.27",
        "--port=80",
    ]);
    dev.ok(&["expose", "deployment", "web", "--port=80"]);
    dev.ok(&["rollout", "status", "deployment/web", "--timeout=60s"]);
    dev.ok(&[
        "wait",
        "--for=jsonpath={.endpoints[0].conditions.ready}=true",
        "endpointslice",
        "-l",
        "kubernetes.io/service-name=web",
        "--timeout=60s",
    ]);
    dev.ok(&[
        "create",
        "pdb",
        "web",
        "--selector=app=web",
        "--min-available=1",
    ]);
    dev.ok(&[
        "wait",
        "--for=jsonpath={.status.disruptionsAllowed}=0",
        "pdb/web",
        "--timeout=60s",
    ]);
    dev.ok(&[
        "autoscale",
        "deployment",
        "web",
        "--min=2",
        "--max=4",
        "--cpu-percent=50",
    ]);
    dev.ok(&[
        "wait",
        "--for=jsonpath={.spec.replicas}=2",
        "deployment/web",
        "--timeout=60s",
    ]);
    dev.ok(&[
        "wait",
        "--for=condition=ScalingActive=False",
        "hpa/web",
        "--timeout=60s",
    ]);
    let hpa = dev.ok(&["get", "hpa", "web"]);
    assert!(hpa.contains("<unknown>/50%"), "{hpa}");
    dev.apply(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: default\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n",
    );
    let sc = dev.ok(&["get", "storageclass"]);
    assert!(
        sc.contains("standard (default)") && sc.contains("WaitForFirstConsumer"),
        "{sc}"
    );
    dev.apply(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db\n  namespace: default\nspec:\n  containers: [{name: db, image: postgres:17}]\n  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]\n",
    );
    dev.ok(&[
        "wait",
        "--for=jsonpath={.status.phase}=Bound",
        "pvc/data",
        "--timeout=60s",
    ]);
    let pvs = dev.ok(&["get", "pv"]);
    assert!(
        pvs.contains("Bound") && pvs.contains("default/data") && pvs.contains("standard"),
        "{pvs}"
    );
    let slices = dev.ok(&[
        "get",
        "endpointslices",
        "-l",
        "kubernetes.io/service-name=web",
    ]);
    assert!(
        slices.contains("IPv4") && slices.contains("10.244."),
        "{slices}"
    );
}

/// `kubectl rollout history` and `rollout undo` for StatefulSets and DaemonSets, through
/// the ControllerRevisions the simulator records.
#[test]
fn statefulset_and_daemonset_rollout_history_and_undo_through_kubectl() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    dev.apply(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  namespace: default\nspec:\n  serviceName: db\n  replicas: 2\n  selector:\n    matchLabels: {app: db}\n  template:\n    metadata:\n      labels: {app: db}\n    spec:\n      containers: [{name: db, image: 'postgres:16'}]\n",
    );
    dev.ok(&["rollout", "status", "statefulset/db", "--timeout=60s"]);
    dev.ok(&["set", "image", "statefulset/db", "db=postgres:17"]);
    dev.ok(&["rollout", "status", "statefulset/db", "--timeout=60s"]);
    let history = dev.ok(&["rollout", "history", "statefulset/db"]);
    let revisions: Vec<&str> = history
        .lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(revisions, ["1", "2"], "{history}");
    let detail = dev.ok(&["rollout", "history", "statefulset/db", "--revision=1"]);
    assert!(detail.contains("postgres:16"), "{detail}");

    let undone = dev.ok(&["rollout", "undo", "statefulset/db", "--to-revision=1"]);
    assert!(undone.contains("rolled back"), "{undone}");
    dev.ok(&[
        "wait",
        "--for=jsonpath={.spec.template.spec.containers[0].image}=postgres:16",
        "statefulset/db",
        "--timeout=60s",
    ]);
    dev.ok(&["rollout", "status", "statefulset/db", "--timeout=60s"]);
    // The old template is the newest revision again: 1 became 3.
    let history = dev.ok(&["rollout", "history", "statefulset/db"]);
    let revisions: Vec<&str> = history
        .lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(revisions, ["2", "3"], "{history}");
    let image = dev.ok(&[
        "get",
        "pod",
        "db-1",
        "-o",
        "jsonpath={.spec.containers[0].image}",
    ]);
    assert_eq!(image, "postgres:16");

    dev.apply(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\n  namespace: default\nspec:\n  selector:\n    matchLabels: {app: agent}\n  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n      containers: [{name: agent, image: 'fluent-bit:3.0'}]\n",
    );
    dev.ok(&["rollout", "status", "daemonset/agent", "--timeout=60s"]);
    dev.ok(&["set", "image", "daemonset/agent", "agent=fluent-bit:3.1"]);
    dev.ok(&["rollout", "status", "daemonset/agent", "--timeout=60s"]);
    let undone = dev.ok(&["rollout", "undo", "daemonset/agent"]);
    assert!(undone.contains("rolled back"), "{undone}");
    dev.ok(&[
        "wait",
        "--for=jsonpath={.spec.template.spec.containers[0].image}=fluent-bit:3.0",
        "daemonset/agent",
        "--timeout=60s",
    ]);
    let revisions = dev.ok(&["get", "controllerrevisions", "-l", "app=agent"]);
    assert!(
        revisions.lines().count() == 3 && revisions.contains("daemonset.apps/agent"),
        "{revisions}"
    );
}

#[test]
fn every_namespace_has_its_service_account_and_ca_and_pods_get_a_token_volume() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    dev.ok(&["create", "namespace", "team"]);
    // The serviceaccount and root-ca-cert-publisher controllers' work, a moment later.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let sa = dev.kubectl(&["-n", "team", "get", "serviceaccount", "default"]);
        let ca = dev.kubectl(&[
            "-n",
            "team",
            "get",
            "configmap",
            "kube-root-ca.crt",
            "-o",
            "jsonpath={.data.ca\\.crt}",
        ]);
        if sa.status.success() && ca.status.success() {
            let pem = String::from_utf8_lossy(&ca.stdout);
            assert!(pem.contains("BEGIN CERTIFICATE"), "{pem}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no default ServiceAccount or CA in namespace team"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // A pod that names no account runs as `default`, with the token volume in every container.
    dev.ok(&[
        "-n",
        "team",
        "run",
        "web",
        "--image=nginx",
        "--restart=Never",
    ]);
    let spec = dev.ok(&["-n", "team", "get", "pod", "web", "-o", "jsonpath={.spec.serviceAccountName} {.spec.volumes[0].name} {.spec.containers[0].volumeMounts[0].mountPath}"]);
    let parts: Vec<&str> = spec.split_whitespace().collect();
    assert_eq!(parts[0], "default", "{spec}");
    assert!(parts[1].starts_with("kube-api-access-"), "{spec}");
    assert_eq!(
        parts[2], "/var/run/secrets/kubernetes.io/serviceaccount",
        "{spec}"
    );
    // An account that does not exist is refused, as upstream words it.
    let out = dev.kubectl(&[
        "-n",
        "team",
        "run",
        "ghost",
        "--image=nginx",
        "--restart=Never",
        "--overrides={\"spec\":{\"serviceAccountName\":\"ghost\"}}",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(r#"pods "ghost" is forbidden: error looking up service account team/ghost: serviceaccount "ghost" not found"#),
        "{stderr}"
    );
    // An account that opts out of token mounting gets pods without the volume.
    dev.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: quiet, namespace: team}\nautomountServiceAccountToken: false\n");
    dev.ok(&[
        "-n",
        "team",
        "run",
        "calm",
        "--image=nginx",
        "--restart=Never",
        "--overrides={\"spec\":{\"serviceAccountName\":\"quiet\"}}",
    ]);
    let volumes = dev.ok(&[
        "-n",
        "team",
        "get",
        "pod",
        "calm",
        "-o",
        "jsonpath={.spec.volumes}",
    ]);
    assert!(!volumes.contains("kube-api-access-"), "{volumes}");
}
