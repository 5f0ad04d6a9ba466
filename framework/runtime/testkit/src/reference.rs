//! A real kube-apiserver with its etcd, started as envtest starts them, so the same tests run
//! against the reference as against the embedded server.
//!
//! [`ReferenceServer::start`] takes the directory of the binaries `scripts/kube-reference.sh`
//! builds (a kube-apiserver of the version `mni-dev` reports, and etcd) and starts them on
//! loopback: generated certificates (a CA and a serving certificate for `127.0.0.1` and
//! `localhost`), a service-account signing key (so the TokenRequest API issues tokens), a static
//! token file with an admin in `system:masters`, RBAC authorization, a fresh etcd data directory
//! without fsync. It returns once `/readyz` answers `ok`. Every process is killed, and the
//! directory removed, when the server is dropped.
//!
//! [`TestEnv`](crate::TestEnv) starts one instead of the in-process server when
//! [`KUBE_APISERVER_VAR`] names the binaries' directory: `scripts/reference-tests.sh` runs
//! operators' API tests that way.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

/// The variable naming the directory of `kube-apiserver` and `etcd`: when set, every
/// [`TestEnv`](crate::TestEnv) runs against a real kube-apiserver started from there.
pub const KUBE_APISERVER_VAR: &str = "MNI_TESTKIT_KUBE_APISERVER";

/// How long the server may take to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Why the reference server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// A file of the server's directory could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A certificate or key could not be generated.
    #[error("generating certificates: {0}")]
    Cert(#[from] rcgen::Error),
    /// A binary is missing or cannot run.
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
    #[error("a client for kube-apiserver: {0}")]
    Client(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReferenceError + '_ {
    move |source| ReferenceError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A running kube-apiserver and etcd. See the [module docs](self).
pub struct ReferenceServer {
    url: String,
    token: String,
    kubeconfig: PathBuf,
    config: kube::Config,
    /// kube-apiserver after its etcd.
    children: Vec<Child>,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for ReferenceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReferenceServer")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Drop for ReferenceServer {
    fn drop(&mut self) {
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A free loopback port (bound and released; the tiny race is acceptable in tests).
fn free_port() -> Result<u16, ReferenceError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io(Path::new("127.0.0.1:0")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(io(Path::new("127.0.0.1:0")))
}

/// The last 15 lines of the log at `path`.
#[must_use]
pub fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

fn write(path: &Path, contents: &str) -> Result<(), ReferenceError> {
    std::fs::write(path, contents).map_err(io(path))
}

fn spawn(what: &'static str, mut command: Command, log: &Path) -> Result<Child, ReferenceError> {
    let file = std::fs::File::create(log).map_err(io(log))?;
    let err = file.try_clone().map_err(io(log))?;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| ReferenceError::Missing(what, format!("{:?}: {e}", command.get_program())))
}

/// The certificates of the server, as PEM.
struct Pki {
    ca: String,
    cert: String,
    key: String,
}

fn pki() -> Result<Pki, ReferenceError> {
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

/// A kubeconfig for `url` with the CA inline and a bearer token.
#[must_use]
pub fn kubeconfig_yaml(name: &str, url: &str, ca_pem: &str, token: &str) -> String {
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {url}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: admin\n  user:\n    token: {token}\n\
         contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: admin\n    \
         namespace: default\ncurrent-context: {name}\n"
    )
}

/// The kube-rs configuration of the kubeconfig at `path`.
pub async fn config_for(path: &Path) -> Result<kube::Config, ReferenceError> {
    let fail = |e: String| ReferenceError::Client(e);
    let kc = kube::config::Kubeconfig::read_from(path).map_err(|e| fail(e.to_string()))?;
    kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await
        .map_err(|e| fail(e.to_string()))
}

impl ReferenceServer {
    /// Starts etcd and kube-apiserver from `bin` (where `scripts/kube-reference.sh` put them)
    /// and waits for `/readyz`.
    pub async fn start(bin: &Path) -> Result<Self, ReferenceError> {
        let etcd = bin.join("etcd");
        let apiserver = bin.join("kube-apiserver");
        for (what, path) in [("etcd", &etcd), ("kube-apiserver", &apiserver)] {
            if !path.is_file() {
                return Err(ReferenceError::Missing(
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
        let token = format!("reference-admin-{}-{}", std::process::id(), free_port()?);
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
        let file = |name: &str| d.join(name).display().to_string();
        let mut command = Command::new(&apiserver);
        command
            .arg(format!("--etcd-servers={etcd_url}"))
            .arg(format!("--secure-port={port}"))
            .args(["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1"])
            .arg(format!("--cert-dir={}", file("certs")))
            .arg(format!("--tls-cert-file={}", file("apiserver.crt")))
            .arg(format!("--tls-private-key-file={}", file("apiserver.key")))
            .arg(format!("--token-auth-file={}", file("tokens.csv")))
            .arg(format!("--service-account-key-file={}", file("sa.pub")))
            .arg(format!(
                "--service-account-signing-key-file={}",
                file("sa.key")
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
        let config = config_for(&kubeconfig).await?;
        let mut server = ReferenceServer {
            url,
            token,
            kubeconfig,
            config,
            children,
            dir,
        };
        server.wait_ready(&log).await?;
        Ok(server)
    }

    /// Polls `/readyz` until it answers `ok`, or one of the processes exits.
    async fn wait_ready(&mut self, log: &Path) -> Result<(), ReferenceError> {
        let client = kube::Client::try_from(self.config.clone())
            .map_err(|e| ReferenceError::Client(e.to_string()))?;
        let started = Instant::now();
        loop {
            let request = http::Request::get("/readyz")
                .body(Vec::new())
                .map_err(|e| ReferenceError::Client(e.to_string()))?;
            if let Ok(Ok(text)) =
                tokio::time::timeout(Duration::from_secs(5), client.request_text(request)).await
                && text.trim() == "ok"
            {
                return Ok(());
            }
            for child in &mut self.children {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(ReferenceError::NotReady {
                        what: "kube-apiserver",
                        why: format!("a process exited with {status}"),
                        log: log_tail(log),
                    });
                }
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(ReferenceError::NotReady {
                    what: "kube-apiserver",
                    why: format!("/readyz not ok in {START_TIMEOUT:?}"),
                    log: log_tail(log),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The HTTPS base URL (`https://127.0.0.1:PORT`).
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The admin's bearer token (in `system:masters`).
    #[must_use]
    pub fn admin_token(&self) -> &str {
        &self.token
    }

    /// The kubeconfig file (admin token, CA inline).
    #[must_use]
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The admin's kube-rs configuration.
    #[must_use]
    pub fn config(&self) -> &kube::Config {
        &self.config
    }

    /// The directory holding the certificates, data and logs.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.dir.path()
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

    #[tokio::test]
    async fn missing_binaries_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = ReferenceServer::start(dir.path()).await.unwrap_err();
        assert!(
            err.to_string().contains("scripts/kube-reference.sh"),
            "{err}"
        );
    }
}
