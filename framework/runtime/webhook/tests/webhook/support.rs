//! Shared fixtures: an rcgen CA writing serving certificates into a cert-manager directory,
//! the in-process API server with an admin client, webhook configurations pointing at the
//! server under test, and small HTTP(S) clients.

use std::{future::Future, net::SocketAddr, path::Path, sync::Arc, time::Duration};

use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use kube::{Api, Client, Config, api::PostParams, core::DynamicObject};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A CA that signs webhook serving certificates.
pub(crate) struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pub(crate) pem: String,
}

impl Ca {
    pub(crate) fn new() -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "mni-webhook-test-ca");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("ca");
        Ca {
            issuer: Issuer::new(params, key),
            pem: cert.pem(),
        }
    }

    /// Writes a new serving certificate for `localhost`/127.0.0.1 into `dir` as cert-manager
    /// does (`tls.crt`, `tls.key`) and returns its DER.
    pub(crate) fn write_serving_cert(&self, dir: &Path) -> Vec<u8> {
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("cert");
        std::fs::write(dir.join("tls.key"), key.serialize_pem()).expect("write tls.key");
        std::fs::write(dir.join("tls.crt"), cert.pem()).expect("write tls.crt");
        cert.der().to_vec()
    }

    /// `clientConfig` calling `path` of the server at `address`, trusting this CA.
    pub(crate) fn client_config(&self, address: SocketAddr, path: &str) -> Value {
        json!({
            "url": format!("https://127.0.0.1:{}{path}", address.port()),
            "caBundle": base64::engine::general_purpose::STANDARD.encode(&self.pem),
        })
    }

    fn connector(&self) -> tokio_rustls::TlsConnector {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(self.pem.as_bytes()).expect("ca pem"))
            .expect("root");
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
        tokio_rustls::TlsConnector::from(Arc::new(config))
    }

    async fn connect(
        &self,
        address: SocketAddr,
    ) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        let tcp = tokio::net::TcpStream::connect(address)
            .await
            .expect("connect");
        self.connector()
            .connect(ServerName::try_from("localhost").expect("name"), tcp)
            .await
            .expect("TLS handshake with a certificate of this CA")
    }

    /// The DER of the certificate the server at `address` serves to a new connection.
    pub(crate) async fn served_certificate(&self, address: SocketAddr) -> Vec<u8> {
        let tls = self.connect(address).await;
        tls.get_ref()
            .1
            .peer_certificates()
            .expect("peer certificates")[0]
            .to_vec()
    }

    /// POSTs `body` to `path` over HTTPS: the status and the body.
    pub(crate) async fn post(
        &self,
        address: SocketAddr,
        path: &str,
        body: Vec<u8>,
    ) -> (u16, String) {
        let tls = self.connect(address).await;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .expect("http handshake");
        tokio::spawn(connection);
        let request = http::Request::post(path)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .expect("request");
        let response = sender.send_request(request).await.expect("response");
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

/// Starts the in-process API server (what `mni-dev` serves) and an admin client.
pub(crate) async fn api_server() -> (mni_apiserver::Server, Client) {
    let server = mni_apiserver::Server::builder()
        .start()
        .await
        .expect("API server starts");
    let mut config = Config::new(server.url().parse().expect("url"));
    config.auth_info.token = Some(server.admin_token().to_string().into());
    let client = Client::try_from(config).expect("client");
    (server, client)
}

/// Creates a `{kind}WebhookConfiguration` (`Validating`/`Mutating`) named `name` with one
/// webhook for CREATE and UPDATE of ConfigMaps, calling `client_config`.
pub(crate) async fn configure(client: &Client, kind: &str, name: &str, client_config: Value) {
    let resource = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: format!("{kind}WebhookConfiguration"),
        plural: format!("{}webhookconfigurations", kind.to_lowercase()),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let configuration: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": format!("{kind}WebhookConfiguration"),
        "metadata": {"name": name},
        "webhooks": [{
            "name": format!("{name}.example.com"),
            "rules": [{
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }],
            "clientConfig": client_config,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "failurePolicy": "Fail",
        }],
    }))
    .expect("configuration");
    api.create(&PostParams::default(), &configuration)
        .await
        .unwrap_or_else(|e| panic!("create {kind}WebhookConfiguration {name}: {e}"));
}

/// Polls `check` until it gives a value (at most 20 s; not a timing assertion, a hang guard).
pub(crate) async fn wait_for<T, F: Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A plain HTTP/1.0 GET: the status and the body.
pub(crate) async fn http_get(address: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("read");
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}
