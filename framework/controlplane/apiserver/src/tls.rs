//! TLS for `mni-dev`: a CA made on first start and kept in the data directory, and a serving
//! certificate for loopback names signed by it at every start.
//!
//! Clients trust the CA through the kubeconfig (`certificate-authority-data`). Private keys are
//! written readable by their owner only.

use std::io::Write;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

/// Errors setting up TLS.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// Reading or writing a PKI file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Generating or parsing a key or certificate failed.
    #[error("certificate: {0}")]
    Cert(#[from] rcgen::Error),
    /// rustls rejected the certificate or key.
    #[error("rustls: {0}")]
    Rustls(#[from] rustls::Error),
}

/// A serving identity: certificate chain and key (PEM), plus the CA clients should trust.
#[derive(Clone)]
pub struct TlsIdentity {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The serving certificate, PEM.
    pub cert_pem: String,
    /// The serving key, PEM (PKCS#8).
    pub key_pem: String,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("key_pem", &"<redacted>")
            .finish_non_exhaustive()
    }
}

fn ca_params() -> Result<CertificateParams, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "mni-dev-ca");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "mNi");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = rcgen::date_time_ymd(2025, 1, 1);
    params.not_after = rcgen::date_time_ymd(2125, 1, 1);
    Ok(params)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TlsError + '_ {
    move |source| TlsError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes a file atomically with the given mode.
pub(crate) fn write_private(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(mode);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

impl TlsIdentity {
    /// Loads the CA from `dir` (creating it on first use) and issues a serving certificate for
    /// `localhost`, `127.0.0.1`, `::1` and `extra_ip`.
    pub fn load_or_create(dir: &Path, extra_ip: Option<IpAddr>) -> Result<Self, TlsError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let ca_key_path = dir.join("ca.key");
        let ca_crt_path = dir.join("ca.crt");
        let (ca_key, ca_pem) = if ca_key_path.exists() && ca_crt_path.exists() {
            let key = std::fs::read_to_string(&ca_key_path).map_err(io(&ca_key_path))?;
            let crt = std::fs::read_to_string(&ca_crt_path).map_err(io(&ca_crt_path))?;
            (KeyPair::from_pem(&key)?, crt)
        } else {
            let key = KeyPair::generate()?;
            let cert = ca_params()?.self_signed(&key)?;
            write_private(&ca_key_path, key.serialize_pem().as_bytes(), 0o600)
                .map_err(io(&ca_key_path))?;
            write_private(&ca_crt_path, cert.pem().as_bytes(), 0o644).map_err(io(&ca_crt_path))?;
            (key, cert.pem())
        };
        let issuer = Issuer::new(ca_params()?, ca_key);
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "mni-dev".to_string()])?;
        params
            .distinguished_name
            .push(DnType::CommonName, "mni-dev-apiserver");
        let mut ips: Vec<IpAddr> =
            vec![[127, 0, 0, 1].into(), std::net::Ipv6Addr::LOCALHOST.into()];
        if let Some(ip) = extra_ip.filter(|ip| !ip.is_unspecified() && !ips.contains(ip)) {
            ips.push(ip);
        }
        params
            .subject_alt_names
            .extend(ips.into_iter().map(SanType::IpAddress));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.not_before = rcgen::date_time_ymd(2025, 1, 1);
        params.not_after = rcgen::date_time_ymd(2035, 1, 1);
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &issuer)?;
        let key_pem = key.serialize_pem();
        let server_key = dir.join("apiserver.key");
        write_private(&server_key, key_pem.as_bytes(), 0o600).map_err(io(&server_key))?;
        let server_crt = dir.join("apiserver.crt");
        write_private(&server_crt, cert.pem().as_bytes(), 0o644).map_err(io(&server_crt))?;
        Ok(TlsIdentity {
            ca_pem,
            cert_pem: cert.pem(),
            key_pem,
        })
    }

    /// The rustls server configuration (HTTP/1.1 via ALPN).
    pub(crate) fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
                .chain(CertificateDer::pem_slice_iter(self.ca_pem.as_bytes()))
                .collect::<Result<_, _>>()
                .map_err(|e| TlsError::Rustls(rustls::Error::General(e.to_string())))?;
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| TlsError::Rustls(rustls::Error::General(e.to_string())))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(certs, key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_is_kept_and_keys_are_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = TlsIdentity::load_or_create(dir.path(), None).expect("first");
        let b = TlsIdentity::load_or_create(dir.path(), None).expect("second");
        assert_eq!(a.ca_pem, b.ca_pem, "the CA survives restarts");
        assert_ne!(a.key_pem, b.key_pem, "serving keys are fresh");
        a.server_config().expect("rustls accepts it");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for f in ["ca.key", "apiserver.key"] {
                let mode = std::fs::metadata(dir.path().join(f))
                    .expect("meta")
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600, "{f}");
            }
        }
    }
}
