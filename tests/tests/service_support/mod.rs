//! What the service tests (`service_e2e.rs`, `service_browser.rs`) share: the scaffolded and
//! built `billing` service ([`Project`]), the embedded control plane driven with kubectl
//! ([`Cluster`]), child processes that are killed however a test ends ([`Process`]), and small
//! helpers to wait, pick ports and speak HTTP through curl.
//!
//! Every wait has a timeout and says what it waited for; nothing asserts on timing.

// Each test binary uses part of this module.
#![allow(dead_code, unreachable_pub)]

pub mod chromium;
mod cluster;
mod process;
mod project;

pub use cluster::{Cluster, Operator, start_server};
pub use process::Process;
pub use project::Project;

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
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

/// The path of workspace binary `name`, which must have been built.
fn workspace_bin(name: &str) -> PathBuf {
    let path = mni_tests::book::bin_dir().join(name);
    assert!(
        path.is_file(),
        "{name} is built with the workspace tests (cargo nextest run --workspace, or cargo build \
         -p mni-scaffold -p mni-dev --bins): {} is missing",
        path.display()
    );
    path
}

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
