//! The podman runtime: each container instance is an OCI container run by `podman` (daemonless,
//! as root) with `runc`, from podman's local image store — an image built with a plain
//! `podman build -t NAME` runs when a pod names it.
//!
//! The agent writes podman's settings to `containers.conf` in its data directory and points
//! every `podman` it runs at that file (`CONTAINERS_CONF`): the `cgroupfs` cgroup manager, no
//! default ulimits and `runc`, which work on hosts without systemd (crun does not on some
//! cgroup v1 hosts).
//!
//! What a container gets:
//! - **network:** the host's (`--network host`), like the process runtime: the pod's
//!   address is its own loopback address (`POD_IP`), the API server is reachable at the
//!   address of `KUBERNETES_SERVICE_HOST`;
//! - **volumes:** the pod directory's files (ConfigMaps, Secrets, the ServiceAccount's token
//!   and CA) bind-mounted at their paths, so in-cluster clients find the credentials at
//!   `/var/run/secrets/kubernetes.io/serviceaccount` as on a cluster;
//! - **limits:** `--memory` and `--cpus` from `resources.limits`; a container killed by the
//!   kernel for its memory limit ends `OOMKilled`;
//! - **security:** `runAsUser`/`runAsGroup`, `readOnlyRootFilesystem`, capabilities,
//!   `allowPrivilegeEscalation: false`, `privileged`;
//! - **environment:** passed to `podman` in its own environment and named with `-e KEY`, so
//!   values (Secrets among them) never appear on a command line.
//!
//! Containers are labelled with the agent's data directory; [`PodmanRuntime::reap`] removes
//! what an agent that did not stop cleanly left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;

use crate::logs::LogFile;
use crate::registry::{Image, Registry};
use crate::runtime::{Container, Error, Launch, Runtime};

/// The label that marks the containers of one agent (its value: the data directory).
pub const AGENT_LABEL: &str = "dev.mni.node/agent";

/// podman's settings for this host, written to the agent's `containers.conf`.
const CONTAINERS_CONF: &str = "\
# Written by mni-dev's node agent: the settings podman and runc need on hosts without systemd.
[containers]
default_ulimits = []

[engine]
cgroup_manager = \"cgroupfs\"
events_logger = \"file\"
runtime = \"runc\"
";

/// Errors of setting the podman runtime up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// `podman` is not installed.
    #[error(
        "the podman runtime needs podman and runc, and `{program}` was not found: install them \
         (Debian: apt-get install podman runc) or choose --runtime process"
    )]
    Missing {
        /// The program looked for.
        program: String,
    },
    /// `podman` runs but fails.
    #[error("`podman version` failed: {0}")]
    Broken(String),
    /// The settings file could not be written.
    #[error("writing podman's settings {path}: {source}")]
    Conf {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Runs containers with podman.
#[derive(Debug, Clone)]
pub struct PodmanRuntime {
    program: PathBuf,
    conf: PathBuf,
    agent: String,
    version: String,
}

impl PodmanRuntime {
    /// A runtime keeping its settings in `dir` (the agent's data directory, whose path also
    /// labels its containers). Checks that podman runs.
    pub async fn new(dir: impl AsRef<Path>) -> Result<Self, SetupError> {
        let dir = std::path::absolute(dir.as_ref()).unwrap_or_else(|_| dir.as_ref().into());
        std::fs::create_dir_all(&dir).map_err(|source| SetupError::Conf {
            path: dir.clone(),
            source,
        })?;
        let conf = dir.join("containers.conf");
        std::fs::write(&conf, CONTAINERS_CONF).map_err(|source| SetupError::Conf {
            path: conf.clone(),
            source,
        })?;
        let mut rt = Self {
            program: PathBuf::from("podman"),
            conf,
            agent: dir.display().to_string(),
            version: String::new(),
        };
        let out = rt
            .command()
            .args(["version", "--format", "{{.Client.Version}}"])
            .output()
            .await
            .map_err(|_| SetupError::Missing {
                program: rt.program.display().to_string(),
            })?;
        if !out.status.success() {
            return Err(SetupError::Broken(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        rt.version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(rt)
    }

    /// `podman` with this runtime's settings, run in the agent's directory: conmon leaves
    /// files in its working directory (an `oom` marker on cgroup v1 hosts), which must not be
    /// the user's.
    fn command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        if let Some(dir) = self.conf.parent() {
            cmd.current_dir(dir);
        }
        cmd.env("CONTAINERS_CONF", &self.conf)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Runs `podman ARGS`; its stdout, or its stderr as the error.
    async fn run(&self, args: &[&str]) -> Result<String, String> {
        let out = self
            .command()
            .args(args)
            .output()
            .await
            .map_err(|e| format!("running podman: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// Removes the containers an earlier agent with this data directory left; how many.
    pub async fn reap(&self) -> usize {
        let filter = format!("label={AGENT_LABEL}={}", self.agent);
        let Ok(ids) = self.run(&["ps", "-aq", "--filter", &filter]).await else {
            return 0;
        };
        let ids: Vec<&str> = ids.split_whitespace().collect();
        if ids.is_empty() {
            return 0;
        }
        let mut args = vec!["rm", "-f", "-t", "0"];
        args.extend(&ids);
        let _ = self.run(&args).await;
        ids.len()
    }

    async fn inspect_image(&self, image: &str) -> Option<Image> {
        let out = self
            .run(&["image", "inspect", "--format", "json", image])
            .await
            .ok()?;
        let found: Vec<InspectedImage> = serde_json::from_str(&out).ok()?;
        let found = found.into_iter().next()?;
        let config = found.config.unwrap_or_default();
        Some(Image {
            entrypoint: config.entrypoint.unwrap_or_default(),
            cmd: config.cmd.unwrap_or_default(),
            working_dir: config.working_dir.filter(|d| !d.is_empty()),
            user: config.user.filter(|u| !u.is_empty()),
            // As kubelet reports it: the repository digest when the image has one.
            id: Some(
                found
                    .repo_digests
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| format!("sha256:{}", found.id)),
            ),
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct InspectedImage {
    id: String,
    #[serde(default)]
    repo_digests: Vec<String>,
    config: Option<ImageConfig>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct ImageConfig {
    entrypoint: Option<Vec<String>>,
    cmd: Option<Vec<String>>,
    working_dir: Option<String>,
    user: Option<String>,
}

/// The container's name: unique per pod, container and instance, in podman's alphabet.
fn container_name(key: &str, restart: i32) -> String {
    let clean: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mni_{clean}_{restart}")
}

/// Environment variables that name host paths of the process runtime's pod directory:
/// meaningless in a container of its own.
fn host_only(key: &str) -> bool {
    matches!(key, "KUBECONFIG" | "MNI_ROOT" | "HOME") || key.starts_with("MNI_MOUNT_")
}

/// The `podman run` arguments for `launch` (without the environment's values).
fn run_args(launch: &Launch, name: &str, agent: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--name",
        name,
        "--label",
        &format!("{AGENT_LABEL}={agent}"),
        "--network",
        "host",
        "--pull",
        "never",
        "--sig-proxy=false",
        "--log-driver",
        "none",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let sec = &launch.security;
    match (sec.run_as_user, sec.run_as_group) {
        (Some(u), Some(g)) => args.extend(["--user".into(), format!("{u}:{g}")]),
        (Some(u), None) => args.extend(["--user".into(), u.to_string()]),
        (None, Some(g)) => args.extend(["--group-add".into(), g.to_string()]),
        (None, None) => {}
    }
    if sec.read_only_root {
        args.push("--read-only".into());
    }
    if sec.privileged {
        args.push("--privileged".into());
    }
    for cap in &sec.drop {
        args.extend(["--cap-drop".into(), cap.to_ascii_lowercase()]);
    }
    for cap in &sec.add {
        args.extend(["--cap-add".into(), cap.to_ascii_lowercase()]);
    }
    if sec.no_new_privileges {
        args.extend(["--security-opt".into(), "no-new-privileges".into()]);
    }
    if let Some(bytes) = launch.memory_limit {
        args.extend(["--memory".into(), bytes.to_string()]);
        // No swap beyond the limit: exceeding it kills, as on a node without swap.
        args.extend(["--memory-swap".into(), bytes.to_string()]);
    }
    if let Some(cpus) = launch.cpu_limit {
        args.extend(["--cpus".into(), format!("{cpus}")]);
    }
    if let Some(dir) = &launch.working_dir {
        args.extend(["--workdir".into(), dir.display().to_string()]);
    }
    for m in &launch.mounts {
        let ro = if m.read_only { ":ro" } else { "" };
        args.extend([
            "--volume".into(),
            format!("{}:{}{ro}", m.host.display(), m.container),
        ]);
    }
    for key in launch.env.keys().filter(|k| !host_only(k)) {
        args.extend(["--env".into(), key.clone()]);
    }
    let (entrypoint, rest) = launch
        .argv
        .split_first()
        .map_or((None, &[][..]), |(e, r)| (Some(e), r));
    if let Some(e) = entrypoint {
        args.extend(["--entrypoint".into(), e.clone()]);
    }
    args.push(launch.image.clone());
    args.extend(rest.iter().cloned());
    args
}

impl Runtime for PodmanRuntime {
    fn version(&self) -> String {
        format!("podman://{}", self.version)
    }

    fn image<'a>(
        &'a self,
        _registry: &'a Registry,
        image: &'a str,
        policy: &'a str,
    ) -> BoxFuture<'a, Result<Image, String>> {
        Box::pin(async move {
            if policy != "Always"
                && let Some(found) = self.inspect_image(image).await
            {
                return Ok(found);
            }
            if policy == "Never" {
                return Err(format!(
                    "container image \"{image}\" is not present with pull policy of Never"
                ));
            }
            // There may be no registry to pull from: the pull's error is the pod's.
            let pulled = tokio::time::timeout(
                Duration::from_secs(120),
                self.run(&["pull", "--quiet", image]),
            )
            .await
            .unwrap_or_else(|_| Err("pulling timed out after 120s".into()));
            match pulled {
                Ok(_) => self
                    .inspect_image(image)
                    .await
                    .ok_or_else(|| format!("image {image} was pulled but cannot be inspected")),
                Err(e) => Err(e),
            }
        })
    }

    fn isolated(&self) -> bool {
        true
    }

    fn start(&self, launch: Launch) -> BoxFuture<'_, Result<Box<dyn Container>, Error>> {
        Box::pin(async move {
            if launch.argv.is_empty() {
                return Err(Error::NoCommand);
            }
            let log = LogFile::create(&launch.log_dir, launch.restart, launch.log_max)
                .await
                .map_err(|source| Error::Log {
                    dir: launch.log_dir.clone(),
                    source,
                })?;
            let name = container_name(&launch.key, launch.restart);
            // What a crashed agent left under this name goes first.
            let _ = self.run(&["rm", "-f", "-t", "0", &name]).await;
            let env: BTreeMap<&String, &String> =
                launch.env.iter().filter(|(k, _)| !host_only(k)).collect();
            let mut cmd = self.command();
            cmd.args(run_args(&launch, &name, &self.agent))
                .env_clear()
                .envs(env)
                .env("CONTAINERS_CONF", &self.conf)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if !launch.env.contains_key("PATH") {
                cmd.env(
                    "PATH",
                    std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
                );
            }
            let mut child = cmd.spawn().map_err(|source| Error::Start {
                argv0: self.program.display().to_string(),
                source,
            })?;
            let mut pumps = Vec::new();
            if let Some(out) = child.stdout.take() {
                pumps.push(tokio::spawn(log.clone().pump("stdout", out)));
            }
            if let Some(err) = child.stderr.take() {
                pumps.push(tokio::spawn(log.pump("stderr", err)));
            }
            Ok(Box::new(Podman {
                rt: self.clone(),
                name,
                child,
                pumps,
                exit: None,
                stopped: false,
                memory_limited: launch.memory_limit.is_some(),
                oom: false,
            }) as Box<dyn Container>)
        })
    }
}

/// A running container and the `podman run` attached to it.
struct Podman {
    rt: PodmanRuntime,
    name: String,
    child: tokio::process::Child,
    pumps: Vec<tokio::task::JoinHandle<()>>,
    exit: Option<i32>,
    stopped: bool,
    memory_limited: bool,
    oom: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct InspectedContainer {
    state: ContainerState,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ContainerState {
    exit_code: i32,
    #[serde(rename = "OOMKilled")]
    oom_killed: bool,
}

impl Podman {
    async fn reap(&mut self) -> i32 {
        if let Some(code) = self.exit {
            return code;
        }
        let client = match self.child.wait().await {
            Ok(status) => status.code().unwrap_or(1),
            Err(_) => 1,
        };
        for p in self.pumps.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), p).await;
        }
        // The container's own record is the truth (`podman run` exits 125–127 for its own
        // failures); then the container goes.
        let state = self
            .rt
            .run(&["container", "inspect", "--format", "json", &self.name])
            .await
            .ok()
            .and_then(|out| serde_json::from_str::<Vec<InspectedContainer>>(&out).ok())
            .and_then(|v| v.into_iter().next())
            .map(|c| c.state);
        let code = state.as_ref().map_or(client, |s| s.exit_code);
        // On cgroup v1 hosts podman may not see the kernel's OOM kill; a SIGKILL nobody
        // sent to a memory-limited container is that kill.
        self.oom = state.as_ref().is_some_and(|s| s.oom_killed)
            || (code == 137 && self.memory_limited && !self.stopped);
        let _ = self.rt.run(&["rm", "-f", "-t", "0", &self.name]).await;
        self.exit = Some(code);
        code
    }
}

impl Container for Podman {
    fn id(&self) -> String {
        format!("podman://{}", self.name)
    }

    fn wait(&mut self) -> BoxFuture<'_, i32> {
        Box::pin(self.reap())
    }

    fn stop(&mut self, grace: Duration) -> BoxFuture<'_, i32> {
        Box::pin(async move {
            if self.exit.is_none() {
                self.stopped = true;
                // podman's grace is in whole seconds: round up, as the kubelet's CRI call does.
                let secs = grace.as_secs() + u64::from(grace.subsec_nanos() > 0);
                let _ = self
                    .rt
                    .run(&["stop", "-t", &secs.to_string(), &self.name])
                    .await;
            }
            self.reap().await
        })
    }

    fn oom_killed(&self) -> bool {
        self.oom
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Mount, Security};

    #[test]
    fn run_arguments_carry_the_pod_spec_but_no_values() {
        let launch = Launch {
            key: "uid_web".into(),
            argv: vec!["/app".into(), "--listen".into(), "$(POD_IP)".into()],
            env: [
                ("TOKEN".to_string(), "s3cret".to_string()),
                ("KUBECONFIG".to_string(), "/host/kubeconfig".to_string()),
                ("MNI_MOUNT_ETC".to_string(), "/host/etc".to_string()),
            ]
            .into(),
            image: "localhost/web:1".into(),
            mounts: vec![Mount {
                host: "/pods/uid/root/etc/config".into(),
                container: "/etc/config".into(),
                read_only: true,
            }],
            security: Security {
                run_as_user: Some(65532),
                run_as_group: Some(65532),
                read_only_root: true,
                drop: vec!["ALL".into()],
                no_new_privileges: true,
                ..Security::default()
            },
            memory_limit: Some(64 << 20),
            cpu_limit: Some(0.5),
            ..Launch::default()
        };
        let args = run_args(&launch, &container_name(&launch.key, 2), "/data");
        let joined = args.join(" ");
        assert!(joined.starts_with("run --name mni_uid_web_2 --label dev.mni.node/agent=/data --network host --pull never"), "{joined}");
        for part in [
            "--user 65532:65532",
            "--read-only",
            "--cap-drop all",
            "--security-opt no-new-privileges",
            "--memory 67108864",
            "--cpus 0.5",
            "--volume /pods/uid/root/etc/config:/etc/config:ro",
            "--env TOKEN",
            "--entrypoint /app localhost/web:1 --listen $(POD_IP)",
        ] {
            assert!(joined.contains(part), "{part}: {joined}");
        }
        assert!(
            !joined.contains("s3cret"),
            "values stay off the command line"
        );
        assert!(!joined.contains("KUBECONFIG") && !joined.contains("MNI_MOUNT"));
    }
}
