// SPDX-License-Identifier: MIT

//! The webhooks of `Harbor` through the admission chain of an in-process API server
//! (`mni-testkit`): the webhook server runs on 127.0.0.1 with a throw-away certificate, and
//! webhook configurations call it by URL, trusting that certificate's CA.

use std::net::SocketAddr;

use kube::api::{Api, PostParams};
use mni_testkit::{AdmissionWebhook, TestEnv, WebhookCerts};

use fleet::api::ships_v1::{Harbor, HarborSpec};
use fleet::webhooks::ships_v1_harbor;

#[tokio::test]
async fn harbor_webhooks_act_through_the_admission_chain() {
    let env = TestEnv::builder()
        .with_crds(fleet::api::crds())
        .start()
        .await
        .expect("control plane starts");
    let certs = WebhookCerts::generate().expect("serving certificate");
    let server = fleet::webhooks::server()
        .with_cert_dir(certs.dir())
        .with_bind_address(SocketAddr::from(([127, 0, 0, 1], 0)))
        .start()
        .await
        .expect("webhook server starts");
    let address = server.local_addr();
    certs
        .install::<Harbor>(
            &env.client(),
            AdmissionWebhook::Mutating,
            address,
            &mni_webhook::mutate_path::<Harbor>(),
        )
        .await
        .expect("MutatingWebhookConfiguration");
    certs
        .install::<Harbor>(
            &env.client(),
            AdmissionWebhook::Validating,
            address,
            &mni_webhook::validate_path::<Harbor>(),
        )
        .await
        .expect("ValidatingWebhookConfiguration");
    let api: Api<Harbor> = Api::all(env.client());
    // The validator refuses a name that is too long; the client gets its message.
    let long = "x".repeat(ships_v1_harbor::MAX_NAME_LENGTH + 1);
    let object = Harbor::new(&long, HarborSpec::default());
    let refused = api
        .create(&PostParams::default(), &object)
        .await
        .expect_err("a name that is too long is refused");
    let kube::Error::Api(status) = refused else {
        panic!("expected the API server's refusal, got {refused}");
    };
    assert_eq!(status.code, 422);
    assert!(
        status
            .message
            .ends_with("metadata.name: must be no more than 63 characters"),
        "{}",
        status.message
    );
    let object = Harbor::new("sample", HarborSpec::default());
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .expect("a good Harbor is admitted");
    // The defaulter labelled it.
    let labels = created.metadata.labels.unwrap_or_default();
    let name = labels.get(ships_v1_harbor::NAME_LABEL);
    assert_eq!(name.map(String::as_str), Some("harbor"));
    server.shutdown().await.expect("webhook server stops");
    env.shutdown().await;
}
