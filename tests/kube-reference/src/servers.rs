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
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

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
    /// A certificate or key could not be generated.
    #[error("generating certificates: {0}")]
    Cert(#[from] rcgen::Error),
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
    /// Last processes first: kube-apiserver before its etcd.
    children: Vec<Child>,
    /// The directory of its data, certificates and logs; removed on drop.
    _dir: tempfile::TempDir,
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

/// A free loopback port (bound and released; the tiny race is acceptable here).
fn free_port() -> Result<u16, ServerError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io(Path::new("127.0.0.1:0")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(io(Path::new("127.0.0.1:0")))
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

fn write(path: &Path, contents: &str) -> Result<(), ServerError> {
    std::fs::write(path, contents).map_err(io(path))
}

fn spawn(what: &'static str, mut command: Command, log: &Path) -> Result<Child, ServerError> {
    let file = std::fs::File::create(log).map_err(io(log))?;
    let err = file.try_clone().map_err(io(log))?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| ServerError::Missing(what, format!("{:?}: {e}", command.get_program())))
}

/// The certificates of the reference server, as PEM.
struct Pki {
    ca: String,
    cert: String,
    key: String,
}

fn pki() -> Result<Pki, ServerError> {
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "kube-reference-ca");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca, ca_key);
    let mut params = CertificateParams::new(vec!["localhost".to_owned()])?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    params
        .subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Pki {
        ca: ca_cert.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

fn kubeconfig_yaml(name: &str, url: &str, ca_pem: &str, token: &str) -> String {
    use base64::Engine as _;
    use std::fmt::Write as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let mut s = String::new();
    let _ = write!(
        s,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {url}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: admin\n  user:\n    token: {token}\n\
         contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: admin\n    \
         namespace: default\ncurrent-context: {name}\n"
    );
    s
}

async fn client_for(name: &'static str, path: &Path) -> Result<kube::Client, ServerError> {
    let fail = |e: String| ServerError::Client(name, e);
    let kc = kube::config::Kubeconfig::read_from(path).map_err(|e| fail(e.to_string()))?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| fail(e.to_string()))?;
    kube::Client::try_from(config).map_err(|e| fail(e.to_string()))
}

impl Server {
    /// Starts etcd and kube-apiserver from `bin` (where `scripts/kube-reference.sh` put
    /// them) and waits for `/readyz`.
    pub async fn start_reference(bin: &Path) -> Result<Server, ServerError> {
        let etcd = bin.join("etcd");
        let apiserver = bin.join("kube-apiserver");
        for (what, path) in [("etcd", &etcd), ("kube-apiserver", &apiserver)] {
            if !path.is_file() {
                return Err(ServerError::Missing(
                    what,
                    format!("{} (run scripts/kube-reference.sh)", path.display()),
                ));
            }
        }
        let dir = tempfile::Builder::new()
            .prefix("kube-reference-")
            .tempdir()
            .map_err(io(Path::new("a temporary directory")))?;
        let d = dir.path();
        let pki = pki()?;
        write(&d.join("ca.crt"), &pki.ca)?;
        write(&d.join("apiserver.crt"), &pki.cert)?;
        write(&d.join("apiserver.key"), &pki.key)?;
        let sa_key = KeyPair::generate()?;
        write(&d.join("sa.key"), &sa_key.serialize_pem())?;
        write(&d.join("sa.pub"), &sa_key.public_key_pem())?;
        let token = format!("reference-admin-{}", std::process::id());
        write(
            &d.join("tokens.csv"),
            &format!("{token},admin,admin-uid,\"system:masters\"\n"),
        )?;

        let mut children = Vec::new();
        let (client_port, peer_port) = (free_port()?, free_port()?);
        let etcd_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let mut command = Command::new(&etcd);
        command
            .arg("--data-dir")
            .arg(d.join("etcd"))
            .args(["--name", "default", "--log-level", "warn"])
            .args(["--listen-client-urls", &etcd_url])
            .args(["--advertise-client-urls", &etcd_url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .arg(format!("--initial-cluster=default={peer_url}"))
            // Test data: no fsync, as envtest's etcd on tmpfs.
            .arg("--unsafe-no-fsync");
        children.push(spawn("etcd", command, &d.join("etcd.log"))?);

        let port = free_port()?;
        let url = format!("https://127.0.0.1:{port}");
        let mut command = Command::new(&apiserver);
        command
            .arg(format!("--etcd-servers={etcd_url}"))
            .arg(format!("--secure-port={port}"))
            .args(["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1"])
            .arg(format!("--cert-dir={}", d.join("certs").display()))
            .arg(format!(
                "--tls-cert-file={}",
                d.join("apiserver.crt").display()
            ))
            .arg(format!(
                "--tls-private-key-file={}",
                d.join("apiserver.key").display()
            ))
            .arg(format!(
                "--token-auth-file={}",
                d.join("tokens.csv").display()
            ))
            .arg(format!(
                "--service-account-key-file={}",
                d.join("sa.pub").display()
            ))
            .arg(format!(
                "--service-account-signing-key-file={}",
                d.join("sa.key").display()
            ))
            .arg(format!("--service-account-issuer={url}"))
            .args([
                "--authorization-mode=RBAC",
                "--allow-privileged=true",
                // kube-apiserver refuses a loopback address for the kubernetes Service's
                // endpoints; envtest turns the reconciler off the same way.
                "--endpoint-reconciler-type=none",
                // mni-dev's Service range, so allocated ClusterIPs look alike.
                "--service-cluster-ip-range=10.96.0.0/12",
                "--v=1",
            ]);
        let log = d.join("kube-apiserver.log");
        children.push(spawn("kube-apiserver", command, &log)?);
        let kubeconfig = d.join("kubeconfig");
        write(
            &kubeconfig,
            &kubeconfig_yaml("kube-apiserver", &url, &pki.ca, &token),
        )?;
        let client = client_for("kube-apiserver", &kubeconfig).await?;
        let mut server = Server {
            name: "kube-apiserver",
            url,
            kubeconfig,
            client,
            children,
            _dir: dir,
        };
        server.wait_ready(&log).await?;
        Ok(server)
    }

    /// Polls `/readyz` until it answers 200, or one of the processes exits.
    async fn wait_ready(&mut self, log: &Path) -> Result<(), ServerError> {
        let started = Instant::now();
        loop {
            let request = http::Request::get("/readyz")
                .body(Vec::new())
                .map_err(|e| ServerError::Client(self.name, e.to_string()))?;
            if let Ok(Ok(text)) =
                tokio::time::timeout(Duration::from_secs(5), self.client.request_text(request))
                    .await
                && text.trim() == "ok"
            {
                return Ok(());
            }
            for child in &mut self.children {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(ServerError::NotReady {
                        what: self.name,
                        why: format!("a process exited with {status}"),
                        log: log_tail(log),
                    });
                }
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(ServerError::NotReady {
                    what: self.name,
                    why: format!("/readyz not ok in {START_TIMEOUT:?}"),
                    log: log_tail(log),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
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
            _dir: dir,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_carries_the_ca_in_base64() {
        let text = kubeconfig_yaml("k", "https://127.0.0.1:1", "abcd", "t");
        assert!(
            text.contains("certificate-authority-data: YWJjZA=="),
            "{text}"
        );
        assert!(text.contains("token: t"));
        let parsed: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
        assert_eq!(parsed["current-context"].as_str(), Some("k"));
    }

    #[test]
    fn certificates_are_pem() {
        let pki = pki().expect("generated");
        assert!(pki.ca.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.cert.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.key.contains("PRIVATE KEY"));
    }
}
