//! Authentication and RBAC: tokens, 401s, ServiceAccount tokens through TokenRequest, and
//! least-privilege ServiceAccounts that cannot exceed their Role.

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use crate::support;
use support::{client_with_token, start};

async fn service_account_token(client: &kube::Client, ns: &str, name: &str) -> String {
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    let sa: ServiceAccount = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}),
    )
    .expect("sa");
    sas.create(&PostParams::default(), &sa)
        .await
        .expect("create sa");
    let req: TokenRequest = serde_json::from_value(
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": [], "expirationSeconds": 3600}}),
    )
    .expect("token request");
    let tr = sas
        .create_token_request(name, &PostParams::default(), &req)
        .await
        .expect("token");
    tr.status.and_then(|s| s.token).expect("token")
}

#[tokio::test]
async fn a_service_account_limited_to_configmaps_cannot_read_secrets() {
    let (server, admin) = start().await;
    let roles: Api<Role> = Api::namespaced(admin.clone(), "default");
    let role: Role = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]}))
    .expect("role");
    roles
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    let bindings: Api<RoleBinding> = Api::namespaced(admin.clone(), "default");
    let rb: RoleBinding = serde_json::from_value(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "cm-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "app", "namespace": "default"}]}),
    )
    .expect("binding");
    bindings
        .create(&PostParams::default(), &rb)
        .await
        .expect("binding");
    let token = service_account_token(&admin, "default", "app").await;
    let app = client_with_token(&server, &token);

    let cms: Api<ConfigMap> = Api::namespaced(app.clone(), "default");
    cms.list(&ListParams::default())
        .await
        .expect("configmaps are readable");
    let secrets: Api<Secret> = Api::namespaced(app.clone(), "default");
    match secrets.list(&ListParams::default()).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden"));
            assert!(
                s.message.contains(r#"User "system:serviceaccount:default:app" cannot list resource "secrets" in API group "" in the namespace "default""#),
                "{}",
                s.message
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
    let denied: ConfigMap = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
    )
    .expect("cm");
    let create = cms.create(&PostParams::default(), &denied).await;
    assert!(
        matches!(create, Err(kube::Error::Api(s)) if s.code == 403),
        "no create verb"
    );
    let elsewhere: Api<ConfigMap> = Api::namespaced(app.clone(), "kube-system");
    assert!(
        matches!(elsewhere.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 403)
    );

    // Deleting the ServiceAccount invalidates its tokens.
    let sas: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    sas.delete("app", &Default::default())
        .await
        .expect("delete sa");
    assert!(
        matches!(cms.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 401)
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_valid_credentials_are_401() {
    let (server, _admin) = start().await;
    let anonymous = kube::Client::try_from(kube::Config::new(server.url().parse().expect("url")))
        .expect("client");
    let cms: Api<ConfigMap> = Api::namespaced(anonymous, "default");
    match cms.list(&ListParams::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!((s.code, s.reason.as_str()), (401, "Unauthorized")),
        other => panic!("expected 401, got {other:?}"),
    }
    let forged = client_with_token(&server, "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl");
    let cms: Api<ConfigMap> = Api::namespaced(forged, "default");
    assert!(
        matches!(cms.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 401)
    );
    // Health and version stay public.
    let out = std::process::Command::new("curl")
        .args(["-s", &format!("{}/healthz", server.url())])
        .output()
        .expect("curl");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok");
    server.shutdown().await;
}

#[tokio::test]
async fn tls_serving_with_the_generated_ca() {
    let dir = tempfile::tempdir().expect("tempdir");
    let identity = mni_apiserver::tls::TlsIdentity::load_or_create(&dir.path().join("pki"), None)
        .expect("pki");
    let (server, _) =
        support::start_with(mni_apiserver::Server::builder().with_tls(identity)).await;
    assert!(server.url().starts_with("https://"));
    let kubeconfig: kube::config::Kubeconfig =
        serde_yaml::from_str(&server.kubeconfig()).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    let client = kube::Client::try_from(config).expect("client");
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    cms.list(&ListParams::default())
        .await
        .expect("list over TLS trusting only the generated CA");
    server.shutdown().await;
}

#[tokio::test]
async fn the_loopback_client_is_the_admin_and_watches_in_process() {
    let (server, admin) = start().await;
    let loopback = server.loopback_client();
    // Who it is: the admin, through the same authentication as every request.
    let review = loopback
        .request::<serde_json::Value>(
            http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
                .header("content-type", "application/json")
                .body(
                    serde_json::to_vec(&json!({
                        "apiVersion": "authentication.k8s.io/v1",
                        "kind": "SelfSubjectReview"
                    }))
                    .expect("json"),
                )
                .expect("request"),
        )
        .await
        .expect("self subject review");
    assert_eq!(review["status"]["userInfo"]["username"], "mni:admin");
    // A watch streams events written by another client over HTTPS or HTTP.
    let watched: Api<ConfigMap> = Api::namespaced(loopback.clone(), "default");
    let mut events = watched
        .watch(&kube::api::WatchParams::default().timeout(10), "0")
        .await
        .expect("watch")
        .boxed();
    let cms: Api<ConfigMap> = Api::namespaced(admin, "default");
    let cm: ConfigMap = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seen"}}),
    )
    .expect("configmap");
    let created = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    loop {
        match events
            .try_next()
            .await
            .expect("event")
            .expect("stream open")
        {
            kube::api::WatchEvent::Added(got) if got.metadata.name.as_deref() == Some("seen") => {
                assert_eq!(
                    got.metadata.resource_version,
                    created.metadata.resource_version
                );
                break;
            }
            kube::api::WatchEvent::Added(_) | kube::api::WatchEvent::Bookmark(_) => {}
            other => panic!("unexpected event {other:?}"),
        }
    }
    server.shutdown().await;
}
