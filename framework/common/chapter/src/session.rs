//! [`Session`]: a chapter's commands as one bash script, in a process group of its own, with a
//! deadline; what is left of the group when the script ends is stopped.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use crate::group;

/// What can go wrong running a session (a failing script is an [`Outcome`], not an error).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// bash could not be started.
    #[error("starting bash in {dir}: {source}")]
    Spawn {
        /// The directory the session runs in.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for bash failed.
    #[error("waiting for bash: {0}")]
    Wait(#[source] std::io::Error),
}

/// A chapter's commands, run by `bash -c` with `set -euo pipefail` in a directory of the test's.
///
/// Background jobs (`mni-dev up … &`) need no cleanup in the script: when it ends, whatever is
/// left of its process group gets SIGTERM, and SIGKILL after the [grace period](Self::grace).
#[derive(Debug, Clone)]
pub struct Session {
    script: String,
    dir: PathBuf,
    env: Vec<(OsString, Option<OsString>)>,
    deadline: Duration,
    grace: Duration,
}

impl Session {
    /// An empty script run in `dir`, with a deadline of 15 minutes and a grace period of 30
    /// seconds (Kubernetes' default `terminationGracePeriodSeconds`).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            script: String::from("set -euo pipefail\n"),
            dir: dir.into(),
            env: Vec::new(),
            deadline: Duration::from_secs(900),
            grace: Duration::from_secs(30),
        }
    }

    /// Appends a line to the script.
    #[must_use]
    pub fn line(mut self, line: &str) -> Self {
        self.push_line(line);
        self
    }

    /// Appends a line to the script.
    pub fn push_line(&mut self, line: &str) {
        self.script.push_str(line);
        self.script.push('\n');
    }

    /// Appends a chapter's command. After `mni-dev up … &` (the control plane started in the
    /// background) the script waits, up to 20 seconds, for the kubeconfig it writes
    /// (`--kubeconfig FILE`, or else `DATA_DIR/kubeconfig`): the next command of a chapter is
    /// usually a kubectl that reads it.
    pub fn push_command(&mut self, command: &str) {
        self.push_line(command);
        if command.starts_with("mni-dev up") && command.trim_end().ends_with('&') {
            let file = flag(command, "--kubeconfig").unwrap_or_else(|| {
                format!(
                    "{}/kubeconfig",
                    flag(command, "--data-dir").unwrap_or_else(|| ".mni/dev".into())
                )
            });
            self.push_line(&format!(
                "for _ in $(seq 1 400); do [ -f {file} ] && break; sleep 0.05; done"
            ));
        }
    }

    /// Puts `dir` first on the script's `PATH` (before this process's `PATH`), where a
    /// chapter finds the binaries of this build.
    #[must_use]
    pub fn path_first(self, dir: impl AsRef<std::path::Path>) -> Self {
        let path = std::env::join_paths(std::iter::once(dir.as_ref().to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("a directory without ':' in its name");
        self.env("PATH", path)
    }

    /// Sets an environment variable of the script.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Removes an environment variable from the script's environment.
    #[must_use]
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// How long the script may run before its process group is stopped and the outcome says
    /// [`timed_out`](Outcome::timed_out).
    #[must_use]
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// How long the processes left when the script ends have, after SIGTERM, before SIGKILL.
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The script as bash runs it.
    pub fn script(&self) -> &str {
        &self.script
    }

    /// Runs the script; see [`run_with`](Self::run_with).
    ///
    /// # Errors
    ///
    /// If bash cannot be started or waited for.
    pub fn run(&self) -> Result<Outcome, Error> {
        self.run_with(|_| {})
    }

    /// Runs the script, letting `configure` change the `bash` command first (its environment,
    /// say); returns when the script and every process it left are gone.
    ///
    /// # Errors
    ///
    /// If bash cannot be started or waited for.
    pub fn run_with(&self, configure: impl FnOnce(&mut Command)) -> Result<Outcome, Error> {
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(&self.script)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        configure(&mut command);
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            dir: self.dir.clone(),
            source,
        })?;
        let pgid = i32::try_from(child.id()).expect("pids fit in i32");
        let stdout = Pipe::read(child.stdout.take());
        let stderr = Pipe::read(child.stderr.take());

        let started = Instant::now();
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait().map_err(Error::Wait)? {
                break status;
            }
            if started.elapsed() >= self.deadline {
                timed_out = true;
                signal(pgid, Signal::TERM);
                let stop = Instant::now();
                while child.try_wait().map_err(Error::Wait)?.is_none()
                    && stop.elapsed() < self.grace
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                signal(pgid, Signal::KILL);
                break child.wait().map_err(Error::Wait)?;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let ended = started.elapsed();
        let (stragglers, stopped_in) = self.stop_group(pgid);
        let (stdout, stdout_held) = stdout.finish();
        let (stderr, stderr_held) = stderr.finish();
        Ok(Outcome {
            status,
            timed_out,
            deadline: self.deadline,
            ran_for: ended,
            stopped_in,
            stragglers,
            output_held: stdout_held || stderr_held,
            stdout,
            stderr,
        })
    }

    /// Stops what is left of group `pgid`: SIGTERM, then SIGKILL after the grace period.
    /// Returns the processes that had to be killed and how long the group took to be gone.
    fn stop_group(&self, pgid: i32) -> (Vec<String>, Duration) {
        let start = Instant::now();
        if group::members(pgid).is_empty() {
            return (Vec::new(), Duration::ZERO);
        }
        signal(pgid, Signal::TERM);
        loop {
            let left = group::members(pgid);
            if left.is_empty() {
                return (Vec::new(), start.elapsed());
            }
            if start.elapsed() >= self.grace {
                signal(pgid, Signal::KILL);
                let killed = Instant::now();
                while !group::members(pgid).is_empty() && killed.elapsed() < Duration::from_secs(5)
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                return (
                    left.iter().map(ToString::to_string).collect(),
                    start.elapsed(),
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The value of `--name VALUE` or `--name=VALUE` in `command`.
fn flag(command: &str, name: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        if word == name {
            return words.next().map(str::to_owned);
        }
        if let Some(value) = word.strip_prefix(name).and_then(|w| w.strip_prefix('=')) {
            return Some(value.to_owned());
        }
    }
    None
}

fn signal(pgid: i32, signal: Signal) {
    if let Some(pid) = Pid::from_raw(pgid) {
        // ESRCH: the group is already gone.
        let _ = rustix::process::kill_process_group(pid, signal);
    }
}

/// One output pipe, read to its end on a thread of its own.
struct Pipe {
    data: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Pipe {
    fn read(pipe: Option<impl Read + Send + 'static>) -> Self {
        let data = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        if let Some(mut pipe) = pipe {
            let data = data.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    data.lock()
                        .expect("pipe buffer")
                        .extend_from_slice(&buf[..n]);
                }
                let _ = tx.send(());
            });
        }
        Self { data, done }
    }

    /// What was read, and whether the pipe was still open (held by a process that left the
    /// group) after a few seconds.
    fn finish(self) -> (String, bool) {
        let held = matches!(
            self.done.recv_timeout(Duration::from_secs(5)),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let data = self.data.lock().expect("pipe buffer");
        (String::from_utf8_lossy(&data).into_owned(), held)
    }
}

/// How a [`Session`] went.
#[derive(Debug)]
pub struct Outcome {
    /// bash's exit status.
    pub status: ExitStatus,
    /// Whether the deadline stopped the script.
    pub timed_out: bool,
    /// The deadline the script had.
    pub deadline: Duration,
    /// How long the script ran.
    pub ran_for: Duration,
    /// How long what the script left running took to stop after it ended.
    pub stopped_in: Duration,
    /// The processes left when the script ended that did not stop on SIGTERM within the grace
    /// period and were killed (pid and command line).
    pub stragglers: Vec<String>,
    /// Whether an output pipe was still open after the group was gone (a process that left the
    /// group holds it; what it writes later is lost).
    pub output_held: bool,
    /// What the script printed on stdout.
    pub stdout: String,
    /// What the script printed on stderr.
    pub stderr: String,
}

impl Outcome {
    /// Whether the script ran to its end and exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success() && !self.timed_out
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.timed_out {
            writeln!(
                f,
                "the script did not end within {:?} and was stopped",
                self.deadline
            )?;
        } else {
            writeln!(
                f,
                "the script exited with {} after {:?}",
                self.status, self.ran_for
            )?;
        }
        if !self.stragglers.is_empty() {
            writeln!(
                f,
                "still running after SIGTERM and the grace period, killed: {}",
                self.stragglers.join("; ")
            )?;
        }
        if self.output_held {
            writeln!(
                f,
                "an output pipe is still held open by a process outside the group"
            )?;
        }
        write!(f, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> (tempfile::TempDir, Session) {
        let dir = tempfile::tempdir().expect("tempdir");
        let session = Session::new(dir.path());
        (dir, session)
    }

    #[test]
    fn output_and_status_are_kept() {
        let (_dir, session) = session();
        let out = session
            .line("echo out; echo err >&2")
            .env("GREETING", "hi")
            .line("echo \"$GREETING\"")
            .run()
            .expect("run");
        assert!(out.success(), "{out}");
        assert_eq!(out.stdout, "out\nhi\n");
        assert_eq!(out.stderr, "err\n");
        assert!(out.stragglers.is_empty());
    }

    #[test]
    fn a_failing_command_ends_the_script() {
        let (_dir, session) = session();
        let out = session
            .line("false")
            .line("echo not reached")
            .run()
            .expect("run");
        assert!(!out.success());
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(out.stdout, "");
    }

    #[test]
    fn background_jobs_are_stopped_with_sigterm_when_the_script_ends() {
        let (dir, session) = session();
        let out = session
            .line("(trap 'echo stopped > stopped; exit 0' TERM; while true; do sleep 0.05; done) &")
            .line("echo started")
            .run()
            .expect("run");
        assert!(out.success(), "{out}");
        assert!(out.stragglers.is_empty(), "{out}");
        assert!(!out.output_held);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("stopped")).expect("the job saw SIGTERM"),
            "stopped\n"
        );
    }

    #[test]
    fn a_job_that_ignores_sigterm_is_killed_and_named() {
        let (_dir, session) = session();
        let out = session
            .grace(Duration::from_millis(300))
            .line("(trap '' TERM; exec sleep 600) &")
            .run()
            .expect("run");
        assert!(out.success(), "{out}");
        assert_eq!(out.stragglers.len(), 1, "{out}");
        assert!(out.stragglers[0].contains("sleep 600"), "{out}");
        assert!(out.to_string().contains("killed: pid"), "{out}");
    }

    #[test]
    fn the_deadline_stops_a_hung_script_with_what_it_printed() {
        let (_dir, session) = session();
        let out = session
            .deadline(Duration::from_millis(300))
            .grace(Duration::from_millis(300))
            .line("echo before")
            .line("sleep 600")
            .run()
            .expect("run");
        assert!(out.timed_out);
        assert!(!out.success());
        assert_eq!(out.stdout, "before\n");
        assert!(out.to_string().contains("did not end within"), "{out}");
    }

    #[test]
    fn a_pipe_held_outside_the_group_is_reported() {
        let (_dir, session) = session();
        // setsid leaves the group: the session cannot stop it, only say that output is lost.
        let out = session
            .line("setsid sleep 7 &")
            .line("echo done")
            .run()
            .expect("run");
        assert!(out.success(), "{out}");
        assert!(out.output_held, "{out}");
        assert_eq!(out.stdout, "done\n");
    }

    #[test]
    fn path_first_puts_the_directory_before_the_inherited_path() {
        let (dir, session) = session();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("mkdir");
        let tool = bin.join("chapter-tool");
        std::fs::write(&tool, "#!/bin/sh\necho from the build\n").expect("tool");
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let out = session
            .path_first(&bin)
            .line("chapter-tool")
            .line("command -v bash >/dev/null")
            .run()
            .expect("run");
        assert!(out.success(), "{out}");
        assert_eq!(out.stdout, "from the build\n");
    }

    #[test]
    fn a_control_plane_started_in_the_background_is_waited_for() {
        let mut session = Session::new("/tmp");
        session.push_command("mni-dev up --listen 127.0.0.1:0 --kubeconfig .mni/dev/kubeconfig &");
        session.push_command("mni-dev up --listen 127.0.0.1:0");
        session.push_command("mni-dev up --data-dir=state &");
        session.push_command("kubectl get ns");
        let lines: Vec<&str> = session.script().lines().collect();
        assert_eq!(lines.len(), 7, "{lines:?}");
        assert!(lines[2].contains("[ -f .mni/dev/kubeconfig ]"), "{lines:?}");
        assert_eq!(lines[3], "mni-dev up --listen 127.0.0.1:0");
        assert!(lines[5].contains("[ -f state/kubeconfig ]"), "{lines:?}");
    }

    #[test]
    fn configure_changes_the_command() {
        let (_dir, session) = session();
        let out = session
            .line("echo \"${SET_BY_CONFIGURE:-unset}\"")
            .run_with(|c| {
                c.env("SET_BY_CONFIGURE", "yes");
            })
            .expect("run");
        assert_eq!(out.stdout, "yes\n");
    }

    #[test]
    fn a_missing_directory_is_named() {
        let err = Session::new("/nonexistent/chapter")
            .line("true")
            .run()
            .expect_err("no directory");
        assert!(err.to_string().contains("/nonexistent/chapter"), "{err}");
    }
}
