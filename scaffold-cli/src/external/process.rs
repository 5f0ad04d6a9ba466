//! Running one external-plugin process: cleared environment, its own process group, a deadline
//! and a cap on what it may print.
//!
//! [`run`] writes the request to the child's stdin, reads stdout (at most
//! [`Limits::max_output`] bytes) and stderr (the last [`STDERR_KEPT`] bytes are kept) on their
//! own threads, and waits for the exit on a third. Past the deadline, or as soon as stdout
//! exceeds the cap, the whole process group is killed with `SIGKILL`, so a plugin's own children
//! die with it. After a normal exit the group is killed too, so a straggler that kept stdout
//! open cannot hang the CLI.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// The most stderr that is kept for error messages (its end).
pub(super) const STDERR_KEPT: usize = 16 * 1024;

/// Why a plugin process failed. The messages quote the plugin's stderr where there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The executable could not be started.
    #[error("cannot run {path}: {source}")]
    Spawn {
        /// The executable.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// Waiting for the process failed.
    #[error("waiting for {path}: {source}")]
    Wait {
        /// The executable.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The plugin ran past its deadline and was killed.
    #[error("timed out after {timeout:?} and was killed (--plugin-timeout){}", quote(.stderr))]
    Timeout {
        /// The deadline.
        timeout: Duration,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The plugin printed more than the limit on stdout and was killed.
    #[error("its response exceeded {limit} bytes and it was killed{}", quote(.stderr))]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
        /// What it printed on stderr.
        stderr: String,
    },
}

/// Formats captured stderr for an error message: `; stderr: …` or nothing.
pub(crate) fn quote(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("; stderr: {trimmed}")
    }
}

/// How long and how much a plugin may run and print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The deadline.
    pub timeout: Duration,
    /// The most bytes accepted on stdout.
    pub max_output: usize,
}

/// What a plugin process left behind.
#[derive(Debug)]
pub(super) struct Output {
    /// Its exit status.
    pub(super) status: ExitStatus,
    /// Everything it printed on stdout.
    pub(super) stdout: Vec<u8>,
    /// The end of what it printed on stderr, lossily decoded.
    pub(super) stderr: String,
}

/// Runs `program` in `cwd` with exactly `env`, feeding it `input`. See the [module docs](self).
pub(super) fn run(
    program: &Path,
    cwd: &Path,
    env: &[(OsString, OsString)],
    input: Vec<u8>,
    limits: Limits,
) -> Result<Output, ProcessError> {
    let mut child = Command::new(program)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| ProcessError::Spawn {
            path: program.to_owned(),
            source,
        })?;
    let pid = child.id();
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        kill_group(pid);
        let _ = child.wait();
        return Err(ProcessError::Spawn {
            path: program.to_owned(),
            source: io::Error::other("standard streams were not captured"),
        });
    };

    // A plugin that exits without reading its input closes the pipe: that is not our error.
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let max = limits.max_output;
    let reader = thread::spawn(move || -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => return (out, false),
                Ok(n) => {
                    if out.len() + n > max {
                        kill_group(pid);
                        return (out, true);
                    }
                    out.extend_from_slice(&buf[..n]);
                }
            }
        }
    });
    let errors = thread::spawn(move || -> String {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8 * 1024];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * STDERR_KEPT {
                kept.drain(..kept.len() - STDERR_KEPT);
            }
        }
        let start = kept.len().saturating_sub(STDERR_KEPT);
        String::from_utf8_lossy(&kept[start..]).into_owned()
    });

    let (tx, rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let (status, timed_out) = match rx.recv_timeout(limits.timeout) {
        Ok(status) => (status, false),
        Err(_) => {
            kill_group(pid);
            (
                rx.recv()
                    .unwrap_or_else(|_| Err(io::Error::other("waiter gone"))),
                true,
            )
        }
    };
    kill_group(pid);
    let _ = waiter.join();
    let _ = writer.join();
    let (stdout, too_large) = reader.join().unwrap_or_default();
    let stderr = errors.join().unwrap_or_default();
    let status = status.map_err(|source| ProcessError::Wait {
        path: program.to_owned(),
        source,
    })?;
    if timed_out {
        return Err(ProcessError::Timeout {
            timeout: limits.timeout,
            stderr,
        });
    }
    if too_large {
        return Err(ProcessError::TooLarge { limit: max, stderr });
    }
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Sends `SIGKILL` to the process group led by `pid`; a group that is already gone is fine.
fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str, limits: Limits) -> Result<Output, ProcessError> {
        let dir = std::env::temp_dir();
        let env = [(OsString::from("PATH"), OsString::from("/usr/bin:/bin"))];
        let program = Path::new("/bin/sh");
        let mut cmd_input = Vec::new();
        cmd_input.extend_from_slice(script.as_bytes());
        // `sh` reads the script from stdin.
        run(program, &dir, &env, cmd_input, limits)
    }

    const LIMITS: Limits = Limits {
        timeout: Duration::from_secs(10),
        max_output: 1024,
    };

    #[test]
    fn captures_output_and_clears_the_environment() {
        let out = sh("echo out; echo err >&2; echo \"home=$HOME\"", LIMITS).unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "out\nhome=\n");
        assert_eq!(out.stderr, "err\n");
    }

    #[test]
    fn kills_the_group_on_timeout_and_on_oversize() {
        let start = Instant::now();
        let limits = Limits {
            timeout: Duration::from_millis(300),
            ..LIMITS
        };
        let err = sh("echo waiting >&2; sleep 30 & sleep 30", limits).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(
            err.to_string(),
            "timed out after 300ms and was killed (--plugin-timeout); stderr: waiting"
        );
        let err = sh("while true; do echo xxxxxxxxxxxxxxxx; done", LIMITS).unwrap_err();
        assert!(
            matches!(err, ProcessError::TooLarge { limit: 1024, .. }),
            "{err}"
        );
    }
}
