//! [`Cluster`]: `mni-dev` driven with kubectl; [`Operator`]: the scaffolded operator running
//! against it; [`start_server`]: the backend or the frontend.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::{
    CONVERGE, Process, Project, eventually, eventually_value, free_port, http, run, run_ok,
    workspace_bin,
};

/// `mni-dev up` (TLS, workload simulator on) in a directory of its own, driven with kubectl as
/// its admin.
pub struct Cluster {
    dir: PathBuf,
    kubeconfig: PathBuf,
    /// Last, so the control plane stops after whatever the test started against it.
    mni_dev: Process,
}

impl Cluster {
    /// Starts `mni-dev` with its data and kubeconfig under `dir`, and waits until it is ready.
    pub fn start(dir: &Path) -> Self {
        Self::start_with(dir, &[])
    }

    /// [`Cluster::start`], with `extra` arguments to `mni-dev up` (e.g.
    /// `["--simulate-upstream", "kube-ovn"]`).
    pub fn start_with(dir: &Path, extra: &[&str]) -> Self {
        let kubeconfig = dir.join("kubeconfig");
        let mut command = Command::new(workspace_bin("mni-dev"));
        command
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("dev"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(extra)
            .env("RUST_LOG", "warn");
        let mut mni_dev = Process::spawn("mni-dev", command);
        let line = mni_dev.wait_for_line("its ready line", Duration::from_secs(60), |l| {
            l.contains("ready")
        });
        println!("{line}");
        Self {
            dir: dir.to_path_buf(),
            kubeconfig,
            mni_dev,
        }
    }

    /// The admin's kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// kubectl as the admin, with `args`.
    pub fn kubectl_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command.args(args).env("KUBECONFIG", &self.kubeconfig);
        command
    }

    /// Runs kubectl as the admin and returns its stdout; panics when it fails.
    pub fn kubectl(&self, args: &[&str]) -> String {
        run_ok(
            self.kubectl_command(args),
            CONVERGE + Duration::from_secs(30),
        )
    }

    /// Runs kubectl as the admin: stdout, or stderr when it fails.
    pub fn try_kubectl(&self, args: &[&str]) -> Result<String, String> {
        let out = run(self.kubectl_command(args), Duration::from_secs(60));
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// `kubectl get ARGS -o json`, parsed.
    pub fn get_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.kubectl(&all)).expect("kubectl prints JSON")
    }

    /// `kubectl wait` for `condition` (e.g. `condition=Ready`) on `object`.
    pub fn wait(&self, object: &str, condition: &str) -> String {
        let timeout = format!("--timeout={}s", CONVERGE.as_secs());
        let condition = format!("--for={condition}");
        self.kubectl(&["wait", object, &condition, &timeout])
    }

    /// The cluster's current resourceVersion: it changes with every write to any object.
    pub fn revision(&self) -> String {
        let list = self.kubectl(&["get", "--raw", "/api/v1/namespaces/default/configmaps"]);
        let list: Value = serde_json::from_str(&list).expect("a list in JSON");
        list["metadata"]["resourceVersion"]
            .as_str()
            .expect("a list has a resourceVersion")
            .to_owned()
    }

    /// Waits until nothing in the cluster changes for 2 s (the operator and the simulator are
    /// done), and returns the revision then.
    pub fn settle(&self) -> String {
        let mut last = self.revision();
        eventually_value("the cluster to settle (no write for 2 s)", CONVERGE, || {
            thread::sleep(Duration::from_secs(2));
            let now = self.revision();
            if now == last {
                Ok(now)
            } else {
                let moved = format!("revision moved from {last} to {now}");
                last = now;
                Err(moved)
            }
        })
    }

    /// How many writes between revisions `since` (exclusive) and `until` (inclusive) were the
    /// simulated node's own — its heartbeat Lease renewals (every 10 s, as kubelet's) and Node
    /// status reports — read back from a watch of each started at `since`.
    pub fn node_heartbeats(&self, since: &str, until: &str) -> u64 {
        let until: u64 = until.parse().expect("a numeric revision");
        let mut writes = 0;
        for path in [
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            "/api/v1/nodes",
        ] {
            let url = format!("{path}?watch=1&resourceVersion={since}&timeoutSeconds=1");
            let events = self.kubectl(&["get", "--raw", &url]);
            for line in events.lines().filter(|l| !l.trim().is_empty()) {
                let event: Value = serde_json::from_str(line).expect("a watch event in JSON");
                let revision = event["object"]["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|r| r.parse::<u64>().ok())
                    .unwrap_or(u64::MAX);
                if revision <= until {
                    writes += 1;
                }
            }
        }
        writes
    }

    /// Writes a kubeconfig at `dir/file` that authenticates as ServiceAccount
    /// `namespace/name` with a token from `kubectl create token`, as a user would.
    pub fn service_account_kubeconfig(&self, namespace: &str, name: &str, file: &str) -> PathBuf {
        let token = self.kubectl(&["-n", namespace, "create", "token", name, "--duration=2h"]);
        let path = self.dir.join(file);
        std::fs::copy(&self.kubeconfig, &path).expect("copy the kubeconfig");
        let path_arg = path.to_str().expect("a UTF-8 temp path");
        let token_arg = format!("--token={}", token.trim());
        let user_arg = format!("--user={name}");
        self.kubectl(&[
            "--kubeconfig",
            path_arg,
            "config",
            "set-credentials",
            name,
            &token_arg,
        ]);
        self.kubectl(&[
            "--kubeconfig",
            path_arg,
            "config",
            "set-context",
            "--current",
            &user_arg,
        ]);
        path
    }

    /// Panics with mni-dev's output if it has stopped.
    pub fn assert_running(&mut self) {
        self.mni_dev.assert_running();
    }

    /// What mni-dev printed.
    pub fn output(&self) -> String {
        self.mni_dev.output()
    }
}

/// The scaffolded operator, running against a cluster as its own ServiceAccount.
pub struct Operator {
    process: Process,
    metrics: String,
}

impl Operator {
    /// Starts the operator binary of `project` with `kubeconfig`, and waits until its caches
    /// are synced.
    pub fn start(project: &Project, kubeconfig: &Path) -> Self {
        let mut command = Command::new(project.bin(project.operator()));
        command
            .args([
                "--metrics-bind-address",
                "127.0.0.1:0",
                "--health-probe-bind-address",
                "127.0.0.1:0",
                "--log-format",
                "json",
            ])
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "info");
        let mut process = Process::spawn(project.operator(), command);
        let serving = process.wait_for_line("its metrics address", CONVERGE, |l| {
            l.contains("\"serving metrics\"")
        });
        let line: Value = serde_json::from_str(&serving).expect("a JSON log line");
        let metrics = format!(
            "http://{}/metrics",
            line["bound"].as_str().expect("the bound address")
        );
        process.wait_for_line("caches synced", CONVERGE, |l| l.contains("caches synced"));
        Self { process, metrics }
    }

    /// The value of metric `name` (with its labels, e.g.
    /// `controller_runtime_reconcile_total{controller="billing-controller",result="success"}`),
    /// 0 when it is not reported.
    pub fn metric(&self, name: &str) -> f64 {
        let (status, body) = http("GET", &self.metrics, None);
        assert_eq!(status, 200, "{body}");
        body.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or(0.0)
    }

    /// Everything the operator logged.
    pub fn output(&self) -> String {
        self.process.output()
    }

    /// Panics with the operator's log if it has stopped.
    pub fn assert_running(&mut self) {
        self.process.assert_running();
    }

    /// Kills the operator like a crash (SIGKILL).
    pub fn kill(self) {
        self.process.kill();
    }
}

/// Starts `binary` (the backend or the frontend) of `project` on a free port with `args` (and
/// `KUBECONFIG=kubeconfig` if given), and waits until its `/readyz` answers 200; returns it with
/// its base URL.
///
/// Neither prints the address it bound, so the port is picked here rather than left to the
/// kernel (`127.0.0.1:0`).
pub fn start_server(
    project: &Project,
    binary: &str,
    args: &[&str],
    kubeconfig: Option<&Path>,
) -> (Process, String) {
    let port = free_port();
    let mut command = Command::new(project.bin(binary));
    command
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "info");
    if let Some(kubeconfig) = kubeconfig {
        command.env("KUBECONFIG", kubeconfig);
    }
    let mut process = Process::spawn(binary, command);
    let url = format!("http://127.0.0.1:{port}");
    let readyz = format!("{url}/readyz");
    eventually(&format!("{binary} to be ready"), CONVERGE, || {
        process.assert_running();
        match Command::new("curl")
            .args(["-sf", "--max-time", "5", &readyz])
            .output()
        {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!(
                "{readyz}: {}",
                String::from_utf8_lossy(&out.stderr)
            )),
            Err(e) => Err(e.to_string()),
        }
    });
    (process, url)
}
