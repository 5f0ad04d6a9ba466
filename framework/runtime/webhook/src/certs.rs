//! The serving certificate from a directory in cert-manager's layout (`tls.crt`, `tls.key`),
//! reloaded when the files change, as controller-runtime's `CertWatcher` does.
//!
//! [`CertWatcher`] is the rustls certificate resolver of the server: every new TLS handshake
//! uses the pair loaded last. [`CertWatcher::reload`] reads both files and, when their bytes
//! differ from what was last tried, parses them; a broken or mismatched pair is an error and
//! the previous pair keeps serving. The server calls it on a poll interval (files mounted from
//! a Secret change by a symlink swap, which any file watcher can miss).

use std::{
    fmt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, RwLock},
};

use rustls::{
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};

/// The certificate file in a cert-manager certificate directory.
pub const CERT_FILE: &str = "tls.crt";
/// The private key file in a cert-manager certificate directory.
pub const KEY_FILE: &str = "tls.key";

/// Errors of loading the serving certificate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertError {
    /// A file could not be read.
    #[error("read {path}: {source} (mount the webhook's certificate Secret at the cert dir)")]
    Read {
        /// The file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not the PEM it should be.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The key does not fit rustls or does not match the certificate.
    #[error("the pair {cert} / {key} is unusable: {source}")]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls' error.
        #[source]
        source: rustls::Error,
    },
}

/// Serves the certificate pair of a directory and reloads it; see the [module docs](self).
pub struct CertWatcher {
    cert_path: PathBuf,
    key_path: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
    /// The file contents last tried, loaded or not.
    last_read: Mutex<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for CertWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertWatcher")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .finish_non_exhaustive()
    }
}

impl CertWatcher {
    /// Loads `dir/tls.crt` and `dir/tls.key`.
    pub fn load(dir: &Path) -> Result<Self, CertError> {
        let cert_path = dir.join(CERT_FILE);
        let key_path = dir.join(KEY_FILE);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (cert, key) = read_pair(&cert_path, &key_path)?;
        let certified = parse_pair(&provider, &cert_path, &key_path, &cert, &key)?;
        Ok(Self {
            cert_path,
            key_path,
            provider,
            current: RwLock::new(Arc::new(certified)),
            last_read: Mutex::new((cert, key)),
        })
    }

    /// Reads the files again: `Ok(true)` when a changed pair was loaded, `Ok(false)` when the
    /// files did not change since the last try, an error (and the old pair still serving) when
    /// they changed into something unusable.
    pub fn reload(&self) -> Result<bool, CertError> {
        let (cert, key) = read_pair(&self.cert_path, &self.key_path)?;
        let mut last = self.last_read.lock().unwrap_or_else(|e| e.into_inner());
        if last.0 == cert && last.1 == key {
            return Ok(false);
        }
        *last = (cert.clone(), key.clone());
        drop(last);
        let certified = parse_pair(&self.provider, &self.cert_path, &self.key_path, &cert, &key)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(certified);
        Ok(true)
    }

    /// The DER of the leaf certificate serving now.
    pub fn current_certificate(&self) -> CertificateDer<'static> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).cert[0].clone()
    }

    /// A rustls server configuration that serves whatever this watcher holds (HTTP/1.1).
    pub(crate) fn server_config(self: &Arc<Self>) -> rustls::ServerConfig {
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config
    }
}

impl ResolvesServerCert for CertWatcher {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

fn read_pair(cert: &Path, key: &Path) -> Result<(Vec<u8>, Vec<u8>), CertError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| CertError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    Ok((read(cert)?, read(key)?))
}

fn parse_pair(
    provider: &CryptoProvider,
    cert_path: &Path,
    key_path: &Path,
    cert: &[u8],
    key: &[u8],
) -> Result<CertifiedKey, CertError> {
    let pem = |path: &Path, message: String| CertError::Pem {
        path: path.to_path_buf(),
        message,
    };
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem(cert_path, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(pem(cert_path, "holds no CERTIFICATE block".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| pem(key_path, format!("not a PEM private key: {e}")))?;
    let pair = |source| CertError::Pair {
        cert: cert_path.to_path_buf(),
        key: key_path.to_path_buf(),
        source,
    };
    let certified = CertifiedKey::from_der(chain, key, provider).map_err(pair)?;
    Ok(certified)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, names: &[&str]) -> Vec<u8> {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap()
                .self_signed(&key)
                .unwrap();
        std::fs::write(dir.join(CERT_FILE), cert.pem()).unwrap();
        std::fs::write(dir.join(KEY_FILE), key.serialize_pem()).unwrap();
        cert.der().to_vec()
    }

    #[test]
    fn reloads_a_changed_pair_and_keeps_the_old_one_when_broken() {
        let dir = tempfile::tempdir().unwrap();
        let first = write_pair(dir.path(), &["localhost"]);
        let watcher = CertWatcher::load(dir.path()).unwrap();
        assert_eq!(watcher.current_certificate().as_ref(), first.as_slice());
        assert!(
            !watcher.reload().unwrap(),
            "unchanged files are not reloaded"
        );

        let second = write_pair(dir.path(), &["localhost"]);
        assert!(watcher.reload().unwrap());
        assert_eq!(watcher.current_certificate().as_ref(), second.as_slice());

        // A key of another pair: refused, the second pair keeps serving.
        let other = rcgen::KeyPair::generate().unwrap();
        std::fs::write(dir.path().join(KEY_FILE), other.serialize_pem()).unwrap();
        let e = watcher.reload().unwrap_err();
        assert!(e.to_string().contains("tls.key"), "{e}");
        assert_eq!(watcher.current_certificate().as_ref(), second.as_slice());
        std::fs::write(dir.path().join(CERT_FILE), "garbage").unwrap();
        let e = watcher.reload().unwrap_err();
        assert!(e.to_string().contains("tls.crt"), "{e}");
        assert_eq!(watcher.current_certificate().as_ref(), second.as_slice());
    }

    #[test]
    fn a_missing_directory_names_the_file() {
        let e = CertWatcher::load(Path::new("/nonexistent/certs")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/certs/tls.crt"), "{e}");
    }
}
