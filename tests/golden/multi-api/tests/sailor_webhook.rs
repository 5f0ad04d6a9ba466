// SPDX-License-Identifier: MIT

//! The webhooks of `Sailor` through the admission chain of an in-process API server
//! (`mni-testkit`): the webhook server runs on 127.0.0.1 with a throw-away certificate, and
//! webhook configurations call it by URL, trusting that certificate's CA.

use std::net::SocketAddr;

use kube::api::{Api, PostParams};
use mni_testkit::{AdmissionWebhook, TestEnv, WebhookCerts};

use fleet::api::crew_v1alpha1::{Sailor, SailorSpec};
use fleet::webhooks::crew_v1alpha1_sailor;

#[tokio::test]
async fn sailor_webhooks_act_through_the_admission_chain() {
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
        .install::<Sailor>(
            &env.client(),
            AdmissionWebhook::Validating,
            address,
            &mni_webhook::validate_path::<Sailor>(),
        )
        .await
        .expect("ValidatingWebhookConfiguration");
    let api: Api<Sailor> = Api::namespaced(env.client(), "default");
    // The validator refuses a name that is too long; the client gets its message.
    let long = "x".repeat(crew_v1alpha1_sailor::MAX_NAME_LENGTH + 1);
    let object = Sailor::new(&long, SailorSpec::default());
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
    let object = Sailor::new("sample", SailorSpec::default());
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .expect("a good Sailor is admitted");
    assert_eq!(created.metadata.name.as_deref(), Some("sample"));
    server.shutdown().await.expect("webhook server stops");
    env.shutdown().await;
}
