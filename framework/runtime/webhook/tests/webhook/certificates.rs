//! Certificate rotation: new files in the cert directory (a new certificate of the same CA,
//! as cert-manager renews it) are served to new connections, and the API server keeps
//! calling the webhook; a broken pair keeps the old certificate serving.

use std::{net::SocketAddr, time::Duration};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, api::PostParams};
use mni_webhook::{Denial, Request, Validator, Warnings, WebhookServer};
use serde_json::json;

use crate::support::{Ca, api_server, configure, wait_for};

/// Allows everything, so the API server's calls show the webhook is reachable.
struct AllowAll;

impl Validator<ConfigMap> for AllowAll {
    async fn validate_create(&self, _: &Request, _: &ConfigMap) -> Result<Warnings, Denial> {
        Ok(vec!["seen by the webhook".into()])
    }
}

#[tokio::test]
async fn a_renewed_certificate_is_served_to_new_connections() {
    let (_server, client) = api_server().await;
    let ca = Ca::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let first = ca.write_serving_cert(dir.path());
    let running = WebhookServer::builder()
        .with_validator(AllowAll)
        .with_cert_dir(dir.path())
        .with_bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .with_cert_poll_interval(Duration::from_millis(50))
        .start()
        .await
        .expect("starts");
    let address = running.local_addr();
    assert_eq!(ca.served_certificate(address).await, first);
    configure(
        &client,
        "Validating",
        "allow-all",
        ca.client_config(address, "/validate--v1-configmap"),
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let create = |name: &'static str| {
        let cms = cms.clone();
        async move {
            let cm: ConfigMap =
                serde_json::from_value(json!({"metadata": {"name": name}})).expect("cm");
            cms.create(&PostParams::default(), &cm).await
        }
    };
    create("before")
        .await
        .expect("admitted with the first certificate");

    // A key that does not match: refused, the first certificate keeps serving.
    std::fs::write(
        dir.path().join("tls.key"),
        rcgen::KeyPair::generate().expect("key").serialize_pem(),
    )
    .expect("write");
    assert!(running.certificates().reload().is_err());
    assert_eq!(ca.served_certificate(address).await, first);
    create("while-broken").await.expect("still admitted");

    // cert-manager renews: the poll loop picks the new pair up for new connections.
    let second = ca.write_serving_cert(dir.path());
    assert_ne!(first, second);
    wait_for("the renewed certificate", || async {
        (ca.served_certificate(address).await == second).then_some(())
    })
    .await;
    assert_eq!(
        running.certificates().current_certificate().as_ref(),
        second.as_slice()
    );
    create("after")
        .await
        .expect("admitted with the renewed certificate");
    running.shutdown().await.expect("stops");
}

#[tokio::test]
async fn a_missing_certificate_directory_is_an_error_naming_the_file() {
    let e = WebhookServer::builder()
        .with_validator(AllowAll)
        .with_cert_dir("/nonexistent/serving-certs")
        .with_port(0)
        .start()
        .await
        .expect_err("no certificate");
    assert!(
        e.to_string().contains("/nonexistent/serving-certs/tls.crt"),
        "{e}"
    );
}
