//! How the client checks a BMC's TLS certificate: against the machine's trust store, against a
//! CA the caller gives (BMCs usually carry certificates of a private CA, or self-signed ones), or
//! not at all (Metal3's `disableCertificateVerification`, Ironic's `redfish_verify_ca=false`).
//!
//! [`TlsVerification`] is the choice; [`client_config`] turns it into a rustls configuration.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// Why a TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// The CA bundle holds no certificate or one that does not parse.
    #[error("the CA bundle has no usable PEM certificate: {reason}")]
    BadCa {
        /// What was wrong.
        reason: String,
    },
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// How to verify the BMC's certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsVerification {
    /// Against the machine's trust store (the default).
    #[default]
    SystemRoots,
    /// Against these CA certificates only (PEM, one or more).
    CustomCa(Vec<u8>),
    /// Not at all: any certificate is accepted (signatures are still checked, so the channel is
    /// encrypted, but the peer is not authenticated).
    Disabled,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A rustls client configuration for `verification`.
pub(crate) fn client_config(
    verification: &TlsVerification,
) -> Result<rustls::ClientConfig, TlsConfigError> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?;
    let config = match verification {
        TlsVerification::SystemRoots => {
            let mut roots = rustls::RootCertStore::empty();
            // An unreadable or empty trust store leaves the store empty: every certificate is
            // then refused, which is the safe outcome.
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        TlsVerification::CustomCa(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| TlsConfigError::BadCa {
                    reason: e.to_string(),
                })?;
                roots.add(cert).map_err(|e| TlsConfigError::BadCa {
                    reason: e.to_string(),
                })?;
            }
            if roots.is_empty() {
                return Err(TlsConfigError::BadCa {
                    reason: "no CERTIFICATE block".into(),
                });
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        TlsVerification::Disabled => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider())))
            .with_no_client_auth(),
    };
    Ok(config)
}

/// Accepts any server certificate but still checks the handshake signatures with it.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_bundle_without_certificates_is_refused() {
        let err = client_config(&TlsVerification::CustomCa(b"not a pem".to_vec())).unwrap_err();
        assert!(err.to_string().contains("no CERTIFICATE block"), "{err}");
    }

    #[test]
    fn system_roots_and_disabled_build() {
        client_config(&TlsVerification::SystemRoots).unwrap();
        client_config(&TlsVerification::Disabled).unwrap();
    }
}
