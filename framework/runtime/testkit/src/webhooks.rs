//! Admission webhooks under test: [`WebhookCerts`] makes a throw-away CA and a serving
//! certificate for `localhost`/127.0.0.1 in a temporary directory laid out as cert-manager
//! writes it (`tls.crt`, `tls.key`), which a webhook server serves from, and
//! [`WebhookCerts::install`] registers a Validating- or MutatingWebhookConfiguration calling
//! that server by `clientConfig.url` with the CA as `caBundle` — so the API server's real
//! admission chain calls the webhook, as in a cluster with cert-manager's CA injection.

use std::net::SocketAddr;
use std::path::Path;

use base64::Engine as _;
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use kube::{Client, Resource};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use serde_json::json;

use crate::error::{Error, Result};

/// Which admission webhook a configuration registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionWebhook {
    /// A `ValidatingWebhookConfiguration` (Kubebuilder's `/validate-…` paths).
    Validating,
    /// A `MutatingWebhookConfiguration` (Kubebuilder's `/mutate-…` paths).
    Mutating,
}

impl AdmissionWebhook {
    fn kind(self) -> &'static str {
        match self {
            Self::Validating => "ValidatingWebhookConfiguration",
            Self::Mutating => "MutatingWebhookConfiguration",
        }
    }
}

/// A CA and a serving certificate it signed for `localhost`/127.0.0.1, in a temporary directory
/// laid out as cert-manager writes it (`tls.crt`, `tls.key`); removed on drop.
/// [`WebhookCerts::install`] registers a webhook configuration that calls a server using it.
#[derive(Debug)]
pub struct WebhookCerts {
    dir: tempfile::TempDir,
    ca_pem: String,
}

impl WebhookCerts {
    /// A new CA and a serving certificate for `localhost` and 127.0.0.1.
    pub fn generate() -> Result<Self> {
        let cert_error = |e: rcgen::Error| Error::Invalid(format!("webhook certificate: {e}"));
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(cert_error)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "mni-testkit-webhook-ca");
        let ca_key = KeyPair::generate().map_err(cert_error)?;
        let ca = ca_params.self_signed(&ca_key).map_err(cert_error)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let mut params =
            CertificateParams::new(vec!["localhost".to_owned()]).map_err(cert_error)?;
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let key = KeyPair::generate().map_err(cert_error)?;
        let cert = params.signed_by(&key, &issuer).map_err(cert_error)?;

        let io_error = |e: std::io::Error| Error::Invalid(format!("webhook cert dir: {e}"));
        let dir = tempfile::tempdir().map_err(io_error)?;
        std::fs::write(dir.path().join("tls.crt"), cert.pem()).map_err(io_error)?;
        std::fs::write(dir.path().join("tls.key"), key.serialize_pem()).map_err(io_error)?;
        Ok(Self {
            dir,
            ca_pem: ca.pem(),
        })
    }

    /// The certificate directory: give it to the webhook server (`with_cert_dir`).
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The CA certificate, PEM.
    #[must_use]
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The configuration calling `https://127.0.0.1:<port of address><path>` for CREATE and
    /// UPDATE of kind `K`, trusting this CA, failing closed. Named after the kind
    /// (`<plural>.<group>`, the webhook `<v|m><kind>.<group>` as Kubebuilder names it).
    #[must_use]
    pub fn configuration<K: Resource<DynamicType = ()>>(
        &self,
        webhook: AdmissionWebhook,
        address: SocketAddr,
        path: &str,
    ) -> serde_json::Value {
        let group = K::group(&()).into_owned();
        let kind = K::kind(&()).to_lowercase();
        let letter = match webhook {
            AdmissionWebhook::Validating => 'v',
            AdmissionWebhook::Mutating => 'm',
        };
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": webhook.kind(),
            "metadata": {"name": format!("{}.{group}", K::plural(&()))},
            "webhooks": [{
                "name": format!("{letter}{kind}.{group}"),
                "rules": [{
                    "operations": ["CREATE", "UPDATE"],
                    "apiGroups": [group],
                    "apiVersions": [K::version(&())],
                    "resources": [K::plural(&())],
                }],
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{}{path}", address.port()),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(&self.ca_pem),
                },
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
            }],
        })
    }

    /// Creates [`configuration`](Self::configuration) with `client` (an admin client, e.g.
    /// `TestEnv::client`).
    pub async fn install<K: Resource<DynamicType = ()>>(
        &self,
        client: &Client,
        webhook: AdmissionWebhook,
        address: SocketAddr,
        path: &str,
    ) -> Result<()> {
        let kind = webhook.kind();
        let resource = ApiResource {
            group: "admissionregistration.k8s.io".into(),
            version: "v1".into(),
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let object: DynamicObject =
            serde_json::from_value(self.configuration::<K>(webhook, address, path))
                .map_err(|e| Error::Invalid(format!("{kind}: {e}")))?;
        api.create(&PostParams::default(), &object)
            .await
            .map_err(|source| Error::Api {
                action: format!("creating {kind} for {} at {path}", K::kind(&())),
                source,
            })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn writes_a_cert_manager_directory_and_a_configuration_trusting_its_ca() {
        let certs = WebhookCerts::generate().unwrap();
        assert!(certs.dir().join("tls.crt").is_file());
        assert!(certs.dir().join("tls.key").is_file());
        assert!(certs.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));

        let address = SocketAddr::from(([127, 0, 0, 1], 9443));
        let config = certs.configuration::<ConfigMap>(
            AdmissionWebhook::Validating,
            address,
            "/validate--v1-configmap",
        );
        assert_eq!(config["kind"], "ValidatingWebhookConfiguration");
        let webhook = &config["webhooks"][0];
        assert_eq!(webhook["name"], "vconfigmap.");
        assert_eq!(webhook["rules"][0]["resources"][0], "configmaps");
        assert_eq!(
            webhook["clientConfig"]["url"],
            "https://127.0.0.1:9443/validate--v1-configmap"
        );
        let ca = base64::engine::general_purpose::STANDARD
            .decode(webhook["clientConfig"]["caBundle"].as_str().unwrap())
            .unwrap();
        assert_eq!(ca, certs.ca_pem().as_bytes());
    }
}
