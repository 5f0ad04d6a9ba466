//! What the service tests (`service_e2e.rs`, `service_browser.rs`) share: the scaffolded and
//! built `billing` service ([`Project`]), the embedded control plane driven with kubectl
//! ([`Cluster`]), child processes that are killed however a test ends ([`Process`]), and small
//! helpers to wait, pick ports and speak HTTP through curl.
//!
//! Every wait has a timeout and says what it waited for; nothing asserts on timing.

// Each test binary uses part of this module.
#![allow(dead_code, unreachable_pub)]

pub mod chromium;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binaries the services are made of, as `cargo build` names them.
pub const OPERATOR: &str = "billing-operator";
/// The backend's binary.
pub const BACKEND: &str = "billing-backend";
/// The frontend's binary.
pub const FRONTEND: &str = "billing-frontend";

/// The directory of the `billing` service in the scaffolded project.
pub const SERVICE_DIR: &str = "services/billing";

/// How long a `kubectl wait` may take for a condition the operator or the simulator sets.
pub const CONVERGE: Duration = Duration::from_secs(90);

/// The directory Cargo builds the workspace's binaries into (`target/<profile>/`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .to_path_buf()
}

/// The path of workspace binary `name`, which must have been built.
fn workspace_bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.is_file(),
        "{name} is built with the workspace tests (cargo nextest run --workspace, or cargo build \
         -p mni-scaffold -p mni-apiserver --bins): {} is missing",
        path.display()
    );
    path
}

// ---------------------------------------------------------------------------------------------
// Running commands

/// Runs `command` to completion within `timeout`, killing it (and its process group) if it
/// takes longer.
pub fn run(mut command: Command, timeout: Duration) -> Output {
    let what = format!("{command:?}");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|s| Box::new(s) as _));
    let stderr = drain(child.stderr.take().map(|s| Box::new(s) as _));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for a child") {
            break status;
        }
        if Instant::now() > deadline {
            kill_group(&child, rustix::process::Signal::KILL);
            let _ = child.wait();
            panic!("{what} did not finish within {timeout:?}");
        }
        thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    }
}

/// Runs `command` within `timeout` and returns its stdout; panics with both outputs when it
/// fails.
pub fn run_ok(command: Command, timeout: Duration) -> String {
    let what = format!("{command:?}");
    let out = run(command, timeout);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

fn kill_group(child: &Child, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

/// Polls `probe` every 200 ms until it returns `Ok`, for at most `timeout`; panics naming
/// `what` and the last `Err` otherwise.
pub fn eventually<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Result<T, String>) {
    let _ = eventually_value(what, timeout, &mut probe);
}

/// [`eventually`], returning what `probe` returned.
pub fn eventually_value<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match probe() {
            Ok(value) => return value,
            Err(last) if Instant::now() > deadline => {
                panic!("timed out after {timeout:?} waiting for {what}; last: {last}")
            }
            Err(_) => thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// A free loopback port below the ephemeral range (32768–60999), for programs that do not
/// print the address they bound: no outgoing connection can take it meanwhile.
pub fn free_port() -> u16 {
    const FIRST: u16 = 20_000;
    const COUNT: u16 = 12_000;
    // Test processes start at different places; one process never hands out a port twice.
    static NEXT: AtomicU16 = AtomicU16::new(0);
    let start = (std::process::id() % u32::from(COUNT)) as u16;
    loop {
        let offset = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = FIRST + (start + offset % COUNT) % COUNT;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// An HTTP request through curl; returns the status and the body.
pub fn http(method: &str, url: &str, body: Option<&Value>) -> (u16, String) {
    let mut curl = Command::new("curl");
    curl.args([
        "-sS",
        "--max-time",
        "20",
        "-X",
        method,
        "-w",
        "\n%{http_code}",
    ]);
    if let Some(body) = body {
        curl.args(["-H", "content-type: application/json", "--data-binary"])
            .arg(body.to_string());
    }
    curl.arg(url);
    let out = run_ok(curl, Duration::from_secs(30));
    let (body, status) = out.rsplit_once('\n').expect("curl prints the status last");
    let status = status
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{method} {url}: no HTTP status in {out:?}"));
    (status, body.to_owned())
}

// ---------------------------------------------------------------------------------------------
// Child processes

/// A program running for the length of a test: its output is collected line by line, and it
/// is killed with its process group when dropped, however the test ends.
pub struct Process {
    name: String,
    child: Child,
    output: Arc<(Mutex<String>, Condvar)>,
}

impl Process {
    /// Starts `command` as `name`, in a process group of its own.
    pub fn spawn(name: &str, mut command: Command) -> Self {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({command:?}): {e}"));
        let output: Arc<(Mutex<String>, Condvar)> = Arc::default();
        let streams: [Option<Box<dyn Read + Send>>; 2] = [
            child.stdout.take().map(|s| Box::new(s) as _),
            child.stderr.take().map(|s| Box::new(s) as _),
        ];
        for stream in streams.into_iter().flatten() {
            let output = Arc::clone(&output);
            thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    let (text, changed) = &*output;
                    let mut text = text.lock().expect("output lock");
                    text.push_str(&line);
                    text.push('\n');
                    changed.notify_all();
                }
            });
        }
        Self {
            name: name.to_owned(),
            child,
            output,
        }
    }

    /// Everything the program printed so far.
    pub fn output(&self) -> String {
        self.output.0.lock().expect("output lock").clone()
    }

    /// Waits until the program prints a line for which `matches` holds, and returns it; fails
    /// when the program exits first or after `timeout`.
    pub fn wait_for_line(
        &mut self,
        what: &str,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let found = {
                let (text, changed) = &*self.output;
                let text = text.lock().expect("output lock");
                let found = text.lines().find(|l| matches(l)).map(str::to_owned);
                if found.is_none() {
                    let _ = changed.wait_timeout(text, Duration::from_millis(100));
                }
                found
            };
            if let Some(line) = found {
                return line;
            }
            if let Some(status) = self.child.try_wait().expect("wait for a child") {
                // Let the readers catch the last lines.
                thread::sleep(Duration::from_millis(100));
                panic!(
                    "{} exited ({status}) before {what}; its output:\n{}",
                    self.name,
                    self.output()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{} did not print {what} within {timeout:?}; its output:\n{}",
                self.name,
                self.output()
            );
        }
    }

    /// Panics with the program's output if it has exited.
    pub fn assert_running(&mut self) {
        if let Some(status) = self.child.try_wait().expect("wait for a child") {
            panic!(
                "{} exited ({status}); its output:\n{}",
                self.name,
                self.output()
            );
        }
    }

    /// Stops the program at once, like a crash (SIGKILL), and waits for it.
    pub fn kill(mut self) {
        self.stop(rustix::process::Signal::KILL);
    }

    /// Asks the program to stop (SIGTERM) and waits up to 10 s before killing it.
    pub fn terminate(mut self) {
        self.stop(rustix::process::Signal::TERM);
    }

    fn stop(&mut self, signal: rustix::process::Signal) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        kill_group(&self.child, signal);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                // Helpers the program started in its group (Chromium's) go too.
                kill_group(&self.child, rustix::process::Signal::KILL);
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        kill_group(&self.child, rustix::process::Signal::KILL);
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop(rustix::process::Signal::KILL);
    }
}

// ---------------------------------------------------------------------------------------------
// The scaffolded project

/// The scaffolded project with the `billing` service, built.
///
/// `mni-scaffold init` and `new service billing` run in a fresh temporary directory; the tree
/// is then synced (changed files only) into one directory under Cargo's `target/tmp`, where
/// `cargo build` runs with the workspace's lock file and target directory. The fixed path lets
/// every test binary and every run reuse what Cargo compiled for the last one, so the project
/// is compiled once, not once per test process (nextest runs each test in a process of its
/// own). A file lock serialises scaffolding and building between test processes.
pub struct Project {
    dir: PathBuf,
    bins: tempfile::TempDir,
}

impl Project {
    /// Scaffolds and builds the project (see the [type docs](Project)).
    pub fn build() -> Self {
        let root = mni_tests::repo_root();
        let scaffold = workspace_bin("mni-scaffold");
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("service-tests");
        std::fs::create_dir_all(&tmp).expect("create target/tmp/service-tests");
        let lock = File::create(tmp.join("build.lock")).expect("create the build lock");
        lock.lock().expect("take the build lock");

        let scratch = tempfile::tempdir().expect("tempdir");
        let fresh = scratch.path().join("shop");
        std::fs::create_dir(&fresh).expect("create the project directory");
        for args in [
            &["init", "--domain", "example.com"][..],
            &["new", "service", "billing"][..],
        ] {
            let mut command = Command::new(&scaffold);
            command
                .args(args)
                .current_dir(&fresh)
                .env_remove("MNI_PLUGINS_PATH");
            let out = run_ok(command, Duration::from_secs(120));
            println!("mni-scaffold {}: {}", args.join(" "), last_line(&out));
        }
        let dir = tmp.join("shop");
        sync_tree(&fresh, &dir);
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))
            .expect("copy the workspace's Cargo.lock into the project");

        let started = Instant::now();
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cargo
            .args(["build", "-p", OPERATOR, "-p", BACKEND, "-p", FRONTEND])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", root.join("target"))
            .env("CARGO_NET_OFFLINE", "true");
        run_ok(cargo, Duration::from_secs(40 * 60));
        println!(
            "cargo build of the billing service: {:.1?}",
            started.elapsed()
        );

        // Other builds of a `billing` service (scripts/demo.sh) write the same file names
        // under target/debug: keep links to this build's binaries.
        let bins = tempfile::tempdir().expect("tempdir");
        for name in [OPERATOR, BACKEND, FRONTEND] {
            let built = root.join("target/debug").join(name);
            let kept = bins.path().join(name);
            if std::fs::hard_link(&built, &kept).is_err() {
                std::fs::copy(&built, &kept)
                    .unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
            }
        }
        drop(lock);
        Self { dir, bins }
    }

    /// A path in the project.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// The project directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The built binary `name` ([`OPERATOR`], [`BACKEND`] or [`FRONTEND`]).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bins.path().join(name)
    }
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or_default()
}

/// Makes `to` hold the files of `from`, writing only the files that differ, so that Cargo sees
/// unchanged sources as unchanged.
fn sync_tree(from: &Path, to: &Path) {
    let want = mni_tests::read_tree(from).expect("read the scaffolded project");
    let have = if to.exists() {
        mni_tests::read_tree(to).expect("read the build copy of the project")
    } else {
        Default::default()
    };
    for (path, bytes) in &want {
        if have.get(path) != Some(bytes) {
            let target = to.join(path);
            std::fs::create_dir_all(target.parent().expect("a file has a parent"))
                .expect("create a project directory");
            std::fs::write(&target, bytes)
                .unwrap_or_else(|e| panic!("write {}: {e}", target.display()));
        }
    }
    for path in have.keys().filter(|p| !want.contains_key(*p)) {
        std::fs::remove_file(to.join(path)).expect("remove a file no longer scaffolded");
    }
}

// ---------------------------------------------------------------------------------------------
// The control plane

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
        let kubeconfig = dir.join("kubeconfig");
        let mut command = Command::new(workspace_bin("mni-dev"));
        command
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("dev"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
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
        let mut command = Command::new(project.bin(OPERATOR));
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
        let mut process = Process::spawn(OPERATOR, command);
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
