//! A real HTTPS admission webhook server for tests and benches: axum over rustls, with a
//! certificate from its own rcgen CA valid for `localhost`, `127.0.0.1` and
//! `hook.webhooks.svc` (the name a `clientConfig.service` of Service `hook` in namespace
//! `webhooks` is verified against). Each webhook answers with what a closure makes of the
//! AdmissionReview request, and records the requests it got.

#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::routing::post;
use base64::Engine;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};

/// What a webhook answers to a request: the fields of `response` besides `uid`.
pub type Answer = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

struct Hook {
    answer: Answer,
    delay: Duration,
    calls: Mutex<Vec<Value>>,
}

/// A running webhook server.
pub struct HookServer {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// The PEM of the CA that signed its certificate.
    pub ca_pem: String,
    hook: Arc<Hook>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HookServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A fresh CA: its parameters' issuer and its PEM.
pub fn new_ca() -> (Issuer<'static, KeyPair>, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "webhook-test-ca");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("ca");
    (Issuer::new(params, key), cert.pem())
}

impl HookServer {
    /// Starts a webhook that answers with `answer`.
    pub async fn start(answer: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Self {
        Self::start_with_delay(answer, Duration::ZERO).await
    }

    /// Starts a webhook that waits `delay` before answering.
    pub async fn start_with_delay(
        answer: impl Fn(&Value) -> Value + Send + Sync + 'static,
        delay: Duration,
    ) -> Self {
        let (issuer, ca_pem) = new_ca();
        let mut params = CertificateParams::new(vec![
            "localhost".to_string(),
            "hook.webhooks.svc".to_string(),
        ])
        .expect("params");
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &issuer).expect("cert");
        let certs = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).expect("pem")];
        let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).expect("key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server config");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let hook = Arc::new(Hook {
            answer: Arc::new(answer),
            delay,
            calls: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(post(review))
            .with_state(hook.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                let service = TowerToHyperService::new(app.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        HookServer {
            port,
            ca_pem,
            hook,
            task,
        }
    }

    /// `clientConfig` calling this server by URL, trusting its CA.
    pub fn url_config(&self, path: &str) -> Value {
        json!({
            "url": format!("https://127.0.0.1:{}{path}", self.port),
            "caBundle": base64::engine::general_purpose::STANDARD.encode(&self.ca_pem),
        })
    }

    /// The AdmissionReview requests received so far.
    pub fn calls(&self) -> Vec<Value> {
        self.hook.calls.lock().expect("lock").clone()
    }
}

async fn review(State(hook): State<Arc<Hook>>, body: axum::body::Bytes) -> axum::Json<Value> {
    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
    let request = review["request"].clone();
    hook.calls.lock().expect("lock").push(request.clone());
    if !hook.delay.is_zero() {
        tokio::time::sleep(hook.delay).await;
    }
    let mut response = (hook.answer)(&request);
    response["uid"] = request["uid"].clone();
    axum::Json(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": response,
    }))
}

/// `{"allowed": true}`.
pub fn allow() -> Value {
    json!({"allowed": true})
}

/// A denial with a message.
pub fn deny(message: &str) -> Value {
    json!({"allowed": false, "status": {"message": message}})
}

/// An allowing answer carrying a JSONPatch.
pub fn patch(ops: Value) -> Value {
    json!({
        "allowed": true,
        "patchType": "JSONPatch",
        "patch": base64::engine::general_purpose::STANDARD.encode(ops.to_string()),
    })
}
