//! `mni-dev up` as a child process, driven with kubectl from PATH as a user would.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

/// `mni-dev up` in a child process, killed when dropped.
pub struct Dev {
    /// The `mni-dev` process.
    pub child: Child,
    dir: PathBuf,
    /// What mni-dev prints after its `ready` line.
    stdout: BufReader<ChildStdout>,
    /// Stop with SIGTERM when dropped, so the pods' processes are stopped too.
    graceful: bool,
}

impl Dev {
    /// Starts `mni-dev up` on a free port with a durable store in `dir`, waits for `ready`.
    pub fn up(dir: &Path) -> Dev {
        Self::start(dir, None, &[])
    }

    /// [`Dev::up`] with more arguments (`--runtime process`), logging to `dir/mni-dev.log`.
    pub fn up_with(dir: &Path, args: &[&str]) -> Dev {
        Self::start(dir, Some("info"), args)
    }

    /// [`Dev::up`] with `RUST_LOG` set to `filter` and the log written to `dir/mni-dev.log`.
    pub fn up_logging(dir: &Path, filter: &str) -> Dev {
        Self::start(dir, Some(filter), &[])
    }

    fn start(dir: &Path, log: Option<&str>, extra: &[&str]) -> Dev {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mni-dev"));
        cmd.args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.join("data"))
            .arg("--kubeconfig")
            .arg(dir.join("kubeconfig"))
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(filter) = log {
            std::fs::create_dir_all(dir).expect("log dir");
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join("mni-dev.log"))
                .expect("log file");
            cmd.env("RUST_LOG", filter).stderr(file);
        }
        let mut child = cmd.spawn().expect("mni-dev starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        assert!(line.contains("ready"), "first line: {line}");
        Dev {
            child,
            dir: dir.to_path_buf(),
            stdout,
            graceful: !extra.is_empty(),
        }
    }

    /// Reads what mni-dev prints after `ready`, up to and including the first line containing
    /// `until`; fails the test if mni-dev stops printing first.
    pub fn read_until(&mut self, until: &str) -> String {
        let mut out = String::new();
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .expect("read mni-dev's stdout");
            assert!(n > 0, "mni-dev closed its stdout before {until:?}:\n{out}");
            out.push_str(&line);
            if line.contains(until) {
                return out;
            }
        }
    }

    /// Runs kubectl with the server's kubeconfig.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_stdin(args, None)
    }

    /// Runs kubectl with `stdin` as its input.
    pub fn kubectl_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("kubectl on PATH");
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write");
        }
        drop(child.stdin.take());
        child.wait_with_output().expect("kubectl output")
    }

    /// Runs kubectl and returns stdout, failing the test with stderr when it fails.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// `kubectl apply -f -`: Ok(stdout) or Err(stderr).
    pub fn try_apply(&self, yaml: &str) -> Result<String, String> {
        let out = self.kubectl_stdin(&["apply", "-f", "-"], Some(yaml));
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).to_string())
        }
    }

    /// `kubectl apply -f -`, failing the test when it fails.
    pub fn apply(&self, yaml: &str) -> String {
        let out = self.kubectl_stdin(&["apply", "-f", "-"], Some(yaml));
        assert!(
            out.status.success(),
            "apply failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// `kubectl get WHAT… -o jsonpath=PATH` (`what` split on spaces); what it printed.
    pub fn jsonpath(&self, what: &str, path: &str) -> String {
        let mut args = vec!["get"];
        args.extend(what.split_whitespace());
        let path = format!("jsonpath={path}");
        args.extend(["-o", &path]);
        String::from_utf8_lossy(&self.kubectl(&args).stdout).to_string()
    }

    /// Kills the server as `kill -9` would.
    pub fn kill9(mut self) {
        self.graceful = false;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if self.graceful {
            // SIGTERM: mni-dev stops the pods' processes before it exits.
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
            for _ in 0..200 {
                if self.child.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `f` every 200 ms until it returns `Some`, failing after `limit` with `what`.
pub fn wait_for<T>(what: &str, limit: std::time::Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
