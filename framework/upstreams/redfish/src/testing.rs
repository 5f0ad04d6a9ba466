//! A test harness around the real Redfish emulator of OpenStack and Metal3's CI,
//! `sushy-emulator` (PyPI `sushy-tools`, installed by `scripts/sushy-emulator.sh`), behind the
//! `testing` feature.
//!
//! [`Emulator::builder`] starts it on a free loopback port with its fake driver and
//! deterministic fake systems ([`fake_system`]), optionally behind an htpasswd file (basic auth)
//! and optionally over HTTPS with a certificate from a fresh CA; it waits until the emulator
//! answers and kills it on drop. [`ImageServer`] serves a small image over HTTP for the virtual
//! media actions, which make the emulator download the image.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mni_redfish::testing::Emulator;
//! let emulator = Emulator::builder().systems(2).auth("admin", "secret").tls().start().await?;
//! let bmc = emulator.client().connect().await?;
//! let inventory = bmc.inventory(&emulator.systems()[0].uuid).await?;
//! assert_eq!(inventory.mac_addresses(), emulator.systems()[0].macs);
//! # Ok(())
//! # }
//! ```
//!
//! The fake driver applies a power action 1–11 s after answering 204, like real hardware: poll
//! with [`Client::wait_for_power`](crate::Client::wait_for_power), never sleep.

use std::io::Write as _;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::client::{Client, ClientBuilder};

/// The sushy-tools version `scripts/sushy-emulator.sh` installs.
pub const SUSHY_TOOLS_VERSION: &str = "2.2.0";

/// Why the emulator could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorError {
    /// `sushy-emulator` is not installed where the harness looks.
    #[error(
        "sushy-emulator not found at {}: run scripts/sushy-emulator.sh (or set \
         MNI_SUSHY_EMULATOR to a sushy-emulator executable)", path.display()
    )]
    NotInstalled {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A file of the emulator's configuration could not be written, or a process not started.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Hashing the password with the virtualenv's bcrypt failed.
    #[error("hashing the htpasswd entry with {python} failed: {stderr}")]
    Htpasswd {
        /// The Python used.
        python: String,
        /// What it printed.
        stderr: String,
    },
    /// The certificate could not be generated.
    #[error("generating the emulator's certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    /// The emulator exited or did not answer in time.
    #[error("sushy-emulator on port {port} did not come up ({why}); its log:\n{log}")]
    NotReady {
        /// The port it was given.
        port: u16,
        /// Exited or timed out.
        why: String,
        /// Its output.
        log: String,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmulatorError {
    let what = what.into();
    move |source| EmulatorError::Io { what, source }
}

/// One fake system of the emulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeSystem {
    /// Its UUID, which is also its Redfish id.
    pub uuid: String,
    /// Its name.
    pub name: String,
    /// Its NICs' MAC addresses, lower case.
    pub macs: Vec<String>,
}

/// The `index`-th fake system with `nics` NICs: the same UUID, name and MACs every time.
///
/// UUID `00000000-0000-4000-8000-<index+1 as 12 hex digits>`, name `fake-<index>`, MACs
/// `52:54:00:<nic>:<index high byte>:<index low byte>`.
pub fn fake_system(index: usize, nics: usize) -> FakeSystem {
    FakeSystem {
        uuid: format!("00000000-0000-4000-8000-{:012x}", index + 1),
        name: format!("fake-{index}"),
        macs: (0..nics)
            .map(|nic| {
                format!(
                    "52:54:00:{:02x}:{:02x}:{:02x}",
                    nic,
                    (index >> 8) & 0xff,
                    index & 0xff
                )
            })
            .collect(),
    }
}

/// Where the harness looks for `sushy-emulator`: `$MNI_SUSHY_EMULATOR`, else the virtualenv
/// `scripts/sushy-emulator.sh` makes under `${XDG_CACHE_HOME:-$HOME/.cache}/mni/`.
pub fn emulator_path() -> PathBuf {
    if let Some(path) = std::env::var_os("MNI_SUSHY_EMULATOR") {
        return PathBuf::from(path);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    cache
        .join("mni")
        .join(format!("sushy-tools-{SUSHY_TOOLS_VERSION}"))
        .join("bin")
        .join("sushy-emulator")
}

/// Builds an [`Emulator`].
#[derive(Debug, Clone)]
#[must_use]
pub struct EmulatorBuilder {
    systems: usize,
    nics: usize,
    power_on: bool,
    auth: Option<(String, String)>,
    tls: bool,
}

impl EmulatorBuilder {
    /// How many fake systems (default 1).
    pub fn systems(mut self, count: usize) -> Self {
        self.systems = count;
        self
    }

    /// How many NICs each system has (default 1).
    pub fn nics_per_system(mut self, count: usize) -> Self {
        self.nics = count;
        self
    }

    /// Starts the systems powered on (default off).
    pub fn powered_on(mut self) -> Self {
        self.power_on = true;
        self
    }

    /// Requires HTTP basic auth with this user (an htpasswd file with a bcrypt entry).
    pub fn auth(mut self, username: impl Into<String>, password: impl Into<String>) -> Self {
        self.auth = Some((username.into(), password.into()));
        self
    }

    /// Serves HTTPS with a certificate for `127.0.0.1`/`localhost` from a fresh CA
    /// ([`Emulator::ca_pem`]).
    pub fn tls(mut self) -> Self {
        self.tls = true;
        self
    }

    /// Starts the emulator and waits until it answers.
    pub async fn start(self) -> Result<Emulator, EmulatorError> {
        let program = emulator_path();
        if !program.is_file() {
            return Err(EmulatorError::NotInstalled { path: program });
        }
        let dir = tempfile::Builder::new()
            .prefix("mni-sushy-")
            .tempdir()
            .map_err(io("creating the emulator's directory"))?;
        let systems: Vec<FakeSystem> = (0..self.systems)
            .map(|i| fake_system(i, self.nics))
            .collect();
        let mut config = String::new();
        let fake: Vec<serde_json::Value> = systems
            .iter()
            .map(|s| {
                serde_json::json!({
                    "uuid": s.uuid,
                    "name": s.name,
                    "power_state": if self.power_on { "On" } else { "Off" },
                    "nics": s.macs.iter().map(|m| serde_json::json!({"mac": m})).collect::<Vec<_>>(),
                })
            })
            .collect();
        // JSON without booleans or nulls is a Python literal.
        config.push_str(&format!(
            "SUSHY_EMULATOR_FAKE_SYSTEMS = {}\n",
            serde_json::to_string(&fake).expect("JSON")
        ));
        config.push_str(&format!(
            "SUSHY_EMULATOR_STATE_DIR = {}\n",
            py_str(&dir.path().join("state"))
        ));
        config.push_str("SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'\n");
        if let Some((user, password)) = &self.auth {
            let python = program.with_file_name("python");
            let hash = bcrypt_hash(&python, password)?;
            let file = dir.path().join("htpasswd");
            std::fs::write(&file, format!("{user}:{hash}\n")).map_err(io("writing htpasswd"))?;
            config.push_str(&format!("SUSHY_EMULATOR_AUTH_FILE = {}\n", py_str(&file)));
        }
        let mut ca_pem = None;
        if self.tls {
            let (ca, cert, key) = certificate()?;
            let (cert_file, key_file) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
            std::fs::write(&cert_file, cert).map_err(io("writing the certificate"))?;
            std::fs::write(&key_file, key).map_err(io("writing the key"))?;
            config.push_str(&format!(
                "SUSHY_EMULATOR_SSL_CERT = {}\n",
                py_str(&cert_file)
            ));
            config.push_str(&format!("SUSHY_EMULATOR_SSL_KEY = {}\n", py_str(&key_file)));
            ca_pem = Some(ca);
        }
        let config_file = dir.path().join("emulator.conf");
        std::fs::write(&config_file, config).map_err(io("writing the emulator's config"))?;

        // A port picked free may be taken before the emulator binds it: try a few.
        let mut last = None;
        for _ in 0..3 {
            let port = free_port().map_err(io("finding a free port"))?;
            let log = dir.path().join(format!("emulator-{port}.log"));
            let child = spawn(&program, &config_file, port, &log)?;
            let mut emulator = Emulator {
                child,
                port,
                log,
                systems: systems.clone(),
                auth: self.auth.clone(),
                ca_pem: ca_pem.clone(),
                dir: None,
            };
            match emulator.wait_ready().await {
                Ok(()) => {
                    emulator.dir = Some(dir);
                    return Ok(emulator);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }
}

fn py_str(path: &Path) -> String {
    serde_json::to_string(&path.display().to_string()).expect("JSON string")
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

fn spawn(program: &Path, config: &Path, port: u16, log: &Path) -> Result<Child, EmulatorError> {
    let out = std::fs::File::create(log).map_err(io("creating the emulator's log"))?;
    let err = out.try_clone().map_err(io("creating the emulator's log"))?;
    Command::new(program)
        .arg("--fake")
        .arg("--config")
        .arg(config)
        .args(["-i", "127.0.0.1", "-p", &port.to_string()])
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(io(format!("starting {}", program.display())))
}

/// Hashes `password` with the virtualenv's `bcrypt` (a dependency of sushy-tools), with the
/// cheapest cost, for an htpasswd entry.
fn bcrypt_hash(python: &Path, password: &str) -> Result<String, EmulatorError> {
    let mut child = Command::new(python)
        .args([
            "-c",
            "import bcrypt, sys; print(bcrypt.hashpw(sys.stdin.read().encode(), bcrypt.gensalt(4)).decode())",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io(format!("starting {}", python.display())))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(password.as_bytes())
        .map_err(io("writing the password to bcrypt"))?;
    let output = child.wait_with_output().map_err(io("waiting for bcrypt"))?;
    let hash = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || !hash.starts_with("$2") {
        return Err(EmulatorError::Htpasswd {
            python: python.display().to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(hash)
}

/// A fresh CA and a serving certificate for `127.0.0.1`, `::1` and `localhost`: (CA PEM,
/// certificate PEM, key PEM).
fn certificate() -> Result<(String, String, String), rcgen::Error> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose, SanType,
    };
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "mni sushy-emulator test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate()?;
    let ca_pem = ca.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let mut leaf = CertificateParams::new(vec!["localhost".to_owned()])?;
    leaf.distinguished_name
        .push(DnType::CommonName, "sushy-emulator");
    leaf.subject_alt_names.extend([
        SanType::IpAddress(Ipv4Addr::LOCALHOST.into()),
        SanType::IpAddress(std::net::Ipv6Addr::LOCALHOST.into()),
    ]);
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let key = KeyPair::generate()?;
    let cert = leaf.signed_by(&key, &issuer)?;
    Ok((ca_pem, cert.pem(), key.serialize_pem()))
}

/// A running `sushy-emulator`; killed on drop.
#[derive(Debug)]
pub struct Emulator {
    child: Child,
    port: u16,
    log: PathBuf,
    systems: Vec<FakeSystem>,
    auth: Option<(String, String)>,
    ca_pem: Option<String>,
    /// Held so the configuration outlives the process; `None` only while starting.
    dir: Option<tempfile::TempDir>,
}

impl Emulator {
    /// Starts building an emulator: one system with one NIC, powered off, no auth, plain HTTP.
    pub fn builder() -> EmulatorBuilder {
        EmulatorBuilder {
            systems: 1,
            nics: 1,
            power_on: false,
            auth: None,
            tls: false,
        }
    }

    async fn wait_ready(&mut self) -> Result<(), EmulatorError> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.not_ready(format!("it exited with {status}")));
            }
            let probe = Client::builder(self.base_url())
                .verify_certificates(false)
                .timeout(Duration::from_secs(5))
                .connect()
                .await;
            if probe.is_ok() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(self.not_ready("no answer within 60 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn not_ready(&self, why: String) -> EmulatorError {
        EmulatorError::NotReady {
            port: self.port,
            why,
            log: self.log(),
        }
    }

    /// The port it listens on (loopback).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether it serves HTTPS.
    pub fn is_tls(&self) -> bool {
        self.ca_pem.is_some()
    }

    /// `http(s)://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        let scheme = if self.is_tls() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// The fake systems, in the emulator's order.
    pub fn systems(&self) -> &[FakeSystem] {
        &self.systems
    }

    /// The Metal3 BMC address of the `index`-th system, e.g.
    /// `redfish+http://127.0.0.1:PORT/redfish/v1/Systems/UUID`.
    pub fn bmc_address(&self, index: usize) -> String {
        let transport = if self.is_tls() { "https" } else { "http" };
        format!(
            "redfish+{transport}://127.0.0.1:{}/redfish/v1/Systems/{}",
            self.port, self.systems[index].uuid
        )
    }

    /// The user name and password, when auth is on.
    pub fn credentials(&self) -> Option<(&str, &str)> {
        self.auth.as_ref().map(|(u, p)| (u.as_str(), p.as_str()))
    }

    /// The CA that signed the emulator's certificate (PEM), when TLS is on.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// A client builder for the emulator, with its credentials and CA.
    pub fn client(&self) -> ClientBuilder {
        let mut builder = Client::builder(self.base_url());
        if let Some((user, password)) = &self.auth {
            builder = builder.credentials(user, password);
        }
        if let Some(ca) = &self.ca_pem {
            builder = builder.ca_pem(ca.as_bytes());
        }
        builder
    }

    /// A client builder for the `index`-th system: [`Emulator::client`] with that system as
    /// [`Client::default_system`](crate::Client::default_system).
    pub fn client_for_system(&self, index: usize) -> ClientBuilder {
        self.client()
            .system_path(format!("/redfish/v1/Systems/{}", self.systems[index].uuid))
    }

    /// What the emulator printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP server on loopback that answers every `GET` with the same bytes, for the
/// virtual media actions (the emulator downloads the image it is given). Stops on drop.
#[derive(Debug)]
pub struct ImageServer {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl ImageServer {
    /// Serves `contents` at every path.
    pub async fn start(contents: impl Into<Vec<u8>>) -> std::io::Result<Self> {
        let contents: std::sync::Arc<[u8]> = contents.into().into();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let contents = contents.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n",
                        contents.len()
                    );
                    let head_only = request.starts_with(b"HEAD ");
                    let _ = socket.write_all(head.as_bytes()).await;
                    if !head_only {
                        let _ = socket.write_all(&contents).await;
                    }
                    let _ = socket.shutdown().await;
                });
            }
        });
        Ok(Self { port, task })
    }

    /// The URL of `name` on this server, e.g. `http://127.0.0.1:PORT/boot.iso`.
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for ImageServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_systems_are_deterministic() {
        let s = fake_system(0, 2);
        assert_eq!(s.uuid, "00000000-0000-4000-8000-000000000001");
        assert_eq!(s.name, "fake-0");
        assert_eq!(s.macs, ["52:54:00:00:00:00", "52:54:00:01:00:00"]);
        assert_eq!(fake_system(300, 1).macs, ["52:54:00:00:01:2c"]);
        assert_eq!(fake_system(300, 1), fake_system(300, 1));
    }

    #[test]
    fn a_missing_emulator_says_how_to_install_it() {
        let err = EmulatorError::NotInstalled {
            path: "/nowhere/sushy-emulator".into(),
        };
        assert!(
            err.to_string().contains("run scripts/sushy-emulator.sh"),
            "{err}"
        );
    }

    #[test]
    fn the_certificate_is_signed_by_its_ca() {
        let (ca, cert, key) = certificate().unwrap();
        assert!(ca.contains("BEGIN CERTIFICATE") && cert.contains("BEGIN CERTIFICATE"));
        assert!(key.contains("PRIVATE KEY"));
        assert_ne!(ca, cert);
    }
}
