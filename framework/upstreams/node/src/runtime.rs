//! The container runtime behind the node agent: [`Runtime`] starts one container instance
//! from a [`Launch`] (everything the pod worker has resolved: command line, environment,
//! working directory, the pod's address, where to log) and hands back a [`Container`] to wait
//! for and stop. [`ProcessRuntime`] runs each container as a host process in a process group
//! of its own; [`PodmanRuntime`](crate::PodmanRuntime) runs it as an OCI container.
//!
//! Each process's pid is written to `PIDS/<pod uid>_<container>.pid` while it runs, so a new
//! agent after a crash finds and kills what the previous one left ([`ProcessRuntime::reap`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use rustix::process::{Pid, Signal};

use crate::logs::LogFile;
use crate::registry::{Image, Registry};

/// Errors of starting a container.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The executable could not be started.
    #[error("failed to start {argv0:?}: {source}")]
    Start {
        /// The program.
        argv0: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The container has no command line.
    #[error("no command specified")]
    NoCommand,
    /// The log file could not be created.
    #[error("creating the log file in {dir}: {source}")]
    Log {
        /// The log directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// One container instance to start.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Pod uid and container name: the instance's identity in pid files.
    pub key: String,
    /// The command line.
    pub argv: Vec<String>,
    /// The environment (nothing is inherited from the agent but `PATH`).
    pub env: BTreeMap<String, String>,
    /// The working directory.
    pub working_dir: Option<PathBuf>,
    /// The directory of the container's logs.
    pub log_dir: PathBuf,
    /// The instance number (the container's restart count), naming its log file.
    pub restart: i32,
    /// The size cap of one log file.
    pub log_max: u64,
    /// The image the pod names (runtimes with images of their own run it; the process
    /// runtime has resolved it to `argv` already).
    pub image: String,
    /// Host paths the container sees at paths of its own (runtimes with a file system of
    /// their own mount them; host processes read the host paths, passed in `env`).
    pub mounts: Vec<Mount>,
    /// The container's `securityContext`, merged with the pod's.
    pub security: Security,
    /// The memory limit in bytes, if any.
    pub memory_limit: Option<i64>,
    /// The CPU limit in cores, if any.
    pub cpu_limit: Option<f64>,
}

/// A host directory or file mounted into a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The path on the host.
    pub host: PathBuf,
    /// The path in the container.
    pub container: String,
    /// Mounted read-only.
    pub read_only: bool,
}

/// The security settings a runtime applies, from the container's and the pod's
/// `securityContext` (the container's win).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// The user id to run as.
    pub run_as_user: Option<i64>,
    /// The group id to run as.
    pub run_as_group: Option<i64>,
    /// The root file system is read-only.
    pub read_only_root: bool,
    /// Capabilities to drop (`ALL` for all).
    pub drop: Vec<String>,
    /// Capabilities to add.
    pub add: Vec<String>,
    /// `allowPrivilegeEscalation: false`: the process cannot gain privileges.
    pub no_new_privileges: bool,
    /// `privileged: true`.
    pub privileged: bool,
}

/// A started container instance.
pub trait Container: Send {
    /// The runtime's id of the instance (`process://<pid>`).
    fn id(&self) -> String;
    /// Waits for the instance to exit; its exit code (128 + signal when killed).
    fn wait(&mut self) -> BoxFuture<'_, i32>;
    /// Sends SIGTERM, waits up to `grace`, then SIGKILL; the exit code.
    fn stop(&mut self, grace: Duration) -> BoxFuture<'_, i32>;
    /// Whether the instance, once it has exited, was killed for exceeding its memory limit
    /// (kubelet's `OOMKilled`).
    fn oom_killed(&self) -> bool {
        false
    }
}

/// A container runtime.
pub trait Runtime: Send + Sync {
    /// The version the node reports (`status.nodeInfo.containerRuntimeVersion`).
    fn version(&self) -> String;
    /// What `image` runs, as the pod worker composes the command line with it; `Err` is the
    /// pull error kubelet reports (`ErrImagePull`). `policy` is the container's
    /// `imagePullPolicy`, defaulted. The process runtime reads `registry`; a runtime with
    /// images of its own looks in its image store.
    fn image<'a>(
        &'a self,
        registry: &'a Registry,
        image: &'a str,
        policy: &'a str,
    ) -> BoxFuture<'a, Result<Image, String>> {
        let _ = policy;
        Box::pin(async move { registry.resolve(image).map_err(|e| e.to_string()) })
    }
    /// Whether containers have a file system of their own (volumes are then mounted at
    /// their paths, and the host paths of the process runtime's environment are left out).
    fn isolated(&self) -> bool {
        false
    }
    /// Starts one container instance.
    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Container>, Error>>;
}

/// Runs containers as host processes.
#[derive(Debug, Clone)]
pub struct ProcessRuntime {
    pids: PathBuf,
}

impl ProcessRuntime {
    /// A runtime keeping its pid files in `pids`.
    pub fn new(pids: impl Into<PathBuf>) -> Self {
        Self { pids: pids.into() }
    }

    /// Kills the process groups recorded in the pid directory (left by an agent that did not
    /// stop cleanly) and removes their pid files; how many were still running.
    pub fn reap(&self) -> usize {
        let mut killed = 0;
        let Ok(entries) = std::fs::read_dir(&self.pids) else {
            return 0;
        };
        for e in entries.flatten() {
            let pid = std::fs::read_to_string(e.path())
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
                .and_then(Pid::from_raw);
            if let Some(pid) = pid
                && rustix::process::kill_process_group(pid, Signal::KILL).is_ok()
            {
                killed += 1;
            }
            let _ = std::fs::remove_file(e.path());
        }
        killed
    }

    fn pid_file(&self, key: &str) -> PathBuf {
        self.pids.join(format!("{key}.pid"))
    }
}

impl Runtime for ProcessRuntime {
    fn version(&self) -> String {
        format!("mni-process://{}", env!("CARGO_PKG_VERSION"))
    }

    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Container>, Error>> {
        Box::pin(async move {
            let (argv0, args) = launch.argv.split_first().ok_or(Error::NoCommand)?;
            let log = LogFile::create(&launch.log_dir, launch.restart, launch.log_max)
                .await
                .map_err(|source| Error::Log {
                    dir: launch.log_dir.clone(),
                    source,
                })?;
            let mut cmd = tokio::process::Command::new(argv0);
            cmd.args(args)
                .env_clear()
                .envs(&launch.env)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            if !launch.env.contains_key("PATH") {
                cmd.env(
                    "PATH",
                    std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
                );
            }
            if let Some(dir) = &launch.working_dir {
                cmd.current_dir(dir);
            }
            let mut child = cmd.spawn().map_err(|source| Error::Start {
                argv0: argv0.clone(),
                source,
            })?;
            let pid = child.id().unwrap_or_default();
            let _ = std::fs::create_dir_all(&self.pids);
            let pid_file = self.pid_file(&launch.key);
            let _ = std::fs::write(&pid_file, pid.to_string());
            let mut pumps = Vec::new();
            if let Some(out) = child.stdout.take() {
                pumps.push(tokio::spawn(log.clone().pump("stdout", out)));
            }
            if let Some(err) = child.stderr.take() {
                pumps.push(tokio::spawn(log.pump("stderr", err)));
            }
            Ok(Box::new(Process {
                child,
                pid,
                pid_file,
                pumps,
                exit: None,
            }) as Box<dyn Container>)
        })
    }
}

/// A running host process.
struct Process {
    child: tokio::process::Child,
    pid: u32,
    pid_file: PathBuf,
    pumps: Vec<tokio::task::JoinHandle<()>>,
    exit: Option<i32>,
}

impl Process {
    async fn reap(&mut self) -> i32 {
        if let Some(code) = self.exit {
            return code;
        }
        let code = match self.child.wait().await {
            Ok(status) => {
                use std::os::unix::process::ExitStatusExt;
                status
                    .code()
                    .or_else(|| status.signal().map(|s| 128 + s))
                    .unwrap_or(1)
            }
            Err(_) => 1,
        };
        // What the process group still runs dies with it; the logs are complete once the
        // pipes close.
        if let Some(pid) = i32::try_from(self.pid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
        for p in self.pumps.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), p).await;
        }
        remove(&self.pid_file);
        self.exit = Some(code);
        code
    }
}

fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

impl Container for Process {
    fn id(&self) -> String {
        format!("process://{}", self.pid)
    }

    fn wait(&mut self) -> BoxFuture<'_, i32> {
        Box::pin(self.reap())
    }

    fn stop(&mut self, grace: Duration) -> BoxFuture<'_, i32> {
        Box::pin(async move {
            if self.exit.is_none()
                && let Some(pid) = i32::try_from(self.pid).ok().and_then(Pid::from_raw)
            {
                let _ = rustix::process::kill_process_group(pid, Signal::TERM);
                if tokio::time::timeout(grace, self.child.wait())
                    .await
                    .is_err()
                {
                    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
                }
            }
            self.reap().await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(dir: &Path, script: &str) -> Launch {
        Launch {
            key: "uid_c".into(),
            argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
            env: [("GREETING".to_string(), "hi".to_string())].into(),
            log_dir: dir.join("logs"),
            log_max: crate::logs::DEFAULT_MAX_SIZE,
            ..Launch::default()
        }
    }

    #[tokio::test]
    async fn processes_log_exit_and_stop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rt = ProcessRuntime::new(dir.path().join("pids"));
        let mut c = rt
            .start(launch(dir.path(), "echo $GREETING; echo oops >&2; exit 3"))
            .await
            .expect("start");
        assert_eq!(c.wait().await, 3);
        let log = std::fs::read_to_string(dir.path().join("logs/0.log")).expect("log");
        assert!(log.contains(" stdout F hi\n"), "{log}");
        assert!(log.contains(" stderr F oops\n"), "{log}");
        let mut c = rt
            .start(launch(
                dir.path(),
                "trap 'exit 0' TERM; echo trapping; sleep 30 & wait",
            ))
            .await
            .expect("start");
        assert!(dir.path().join("pids/uid_c.pid").exists());
        // SIGTERM only once the trap is set.
        while !std::fs::read_to_string(dir.path().join("logs/0.log"))
            .is_ok_and(|l| l.contains("trapping"))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(c.stop(Duration::from_secs(5)).await, 0);
        let mut c = rt
            .start(launch(dir.path(), "trap '' TERM; echo ignoring; sleep 30"))
            .await
            .expect("start");
        while !std::fs::read_to_string(dir.path().join("logs/0.log"))
            .is_ok_and(|l| l.contains("ignoring"))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(c.stop(Duration::from_millis(200)).await, 128 + 9);
        assert!(!dir.path().join("pids/uid_c.pid").exists());
    }

    #[tokio::test]
    async fn reap_kills_what_a_previous_agent_left() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rt = ProcessRuntime::new(dir.path().join("pids"));
        let c = rt
            .start(launch(dir.path(), "sleep 30"))
            .await
            .expect("start");
        // The agent dies without stopping it: the handle is forgotten, the pid file stays.
        std::mem::forget(c);
        assert_eq!(ProcessRuntime::new(dir.path().join("pids")).reap(), 1);
        assert!(!dir.path().join("pids/uid_c.pid").exists());
    }
}
