//! The two servers under comparison, each a set of child processes on loopback with a
//! kubeconfig and an admin [`kube::Client`]:
//!
//! - [`Server::start_reference`]: etcd and kube-apiserver as envtest starts them — generated
//!   certificates (a CA and a serving certificate for `127.0.0.1`/`localhost`), a service-account
//!   signing key, a static token file with an admin in `system:masters`, RBAC authorization, a
//!   fresh etcd data directory — and waited on until `/readyz` answers 200;
//! - [`Server::start_mni_dev`]: `mni-dev up` on a free port with a fresh data directory and the
//!   workload simulator off (kube-apiserver alone runs no controllers either), waited on until it
//!   prints its ready line.
//!
//! Every process is killed when its [`Server`] is dropped.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mni_testkit::reference::{ReferenceError, ReferenceServer, config_for, log_tail};

/// How long a server may take to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// What can go wrong starting a server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A file of the server's directory could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The reference server did not start.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// A binary is missing.
    #[error("{0} not found: {1}")]
    Missing(&'static str, String),
    /// A process exited or never became ready.
    #[error("{what} did not become ready: {why}; its log ends:\n{log}")]
    NotReady {
        /// The process.
        what: &'static str,
        /// What happened.
        why: String,
        /// The last lines of its log.
        log: String,
    },
    /// The kubeconfig could not be turned into a client.
    #[error("a client for {0}: {1}")]
    Client(&'static str, String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ServerError + '_ {
    move |source| ServerError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One running server: its processes, kubeconfig, admin client and base URL.
pub struct Server {
    /// `kube-apiserver` or `mni-dev`.
    pub name: &'static str,
    /// The HTTPS base URL (`https://127.0.0.1:PORT`).
    pub url: String,
    /// A kubeconfig with the admin's token and the server's CA.
    pub kubeconfig: PathBuf,
    /// The admin's client.
    pub client: kube::Client,
    /// `mni-dev`'s process.
    children: Vec<Child>,
    /// The reference's processes, killed when it is dropped.
    _reference: Option<ReferenceServer>,
    /// The directory of its data, certificates and logs; removed on drop.
    _dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.name)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn client_for(name: &'static str, path: &Path) -> Result<kube::Client, ServerError> {
    let config = config_for(path)
        .await
        .map_err(|e| ServerError::Client(name, e.to_string()))?;
    kube::Client::try_from(config).map_err(|e| ServerError::Client(name, e.to_string()))
}

impl Server {
    /// Starts etcd and kube-apiserver from `bin` (where `scripts/kube-reference.sh` put
    /// them) as `mni-testkit` does, and waits for `/readyz`.
    pub async fn start_reference(bin: &Path) -> Result<Server, ServerError> {
        let reference = ReferenceServer::start(bin).await?;
        let kubeconfig = reference.kubeconfig().to_owned();
        let client = client_for("kube-apiserver", &kubeconfig).await?;
        Ok(Server {
            name: "kube-apiserver",
            url: reference.url().to_owned(),
            kubeconfig,
            client,
            children: Vec::new(),
            _reference: Some(reference),
            _dir: None,
        })
    }

    /// Starts `mni-dev up` (TLS, the workload simulator off) and waits for its ready line.
    pub async fn start_mni_dev(binary: &Path) -> Result<Server, ServerError> {
        if !binary.is_file() {
            return Err(ServerError::Missing(
                "mni-dev",
                format!("{} (cargo build -p mni-dev)", binary.display()),
            ));
        }
        let dir = tempfile::Builder::new()
            .prefix("kube-reference-mni-dev-")
            .tempdir()
            .map_err(io(Path::new("a temporary directory")))?;
        let kubeconfig = dir.path().join("kubeconfig");
        let log = dir.path().join("mni-dev.log");
        let stderr = std::fs::File::create(&log).map_err(io(&log))?;
        let mut child = Command::new(binary)
            .args([
                "up",
                "--listen",
                "127.0.0.1:0",
                "--no-simulate",
                "--data-dir",
            ])
            .arg(dir.path().join("data"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .map_err(|e| ServerError::Missing("mni-dev", format!("{}: {e}", binary.display())))?;
        let stdout = child.stdout.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let Some(stdout) = stdout else { return };
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if line.contains("ready") {
                    let _ = tx.send(line);
                }
            }
        });
        let line = match rx.recv_timeout(START_TIMEOUT) {
            Ok(line) => line,
            Err(e) => {
                let _ = child.kill();
                return Err(ServerError::NotReady {
                    what: "mni-dev",
                    why: e.to_string(),
                    log: log_tail(&log),
                });
            }
        };
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("https://"))
            .map(|w| w.trim_end_matches([',', ')', ';']).to_owned())
            .unwrap_or_default();
        let client = match client_for("mni-dev", &kubeconfig).await {
            Ok(client) => client,
            Err(e) => {
                let _ = child.kill();
                return Err(e);
            }
        };
        Ok(Server {
            name: "mni-dev",
            url,
            kubeconfig,
            client,
            children: vec![child],
            _reference: None,
            _dir: Some(dir),
        })
    }
}
