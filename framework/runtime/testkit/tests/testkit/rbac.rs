//! Least-privilege clients from `service_account_client`.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, PostParams};
use std::time::Duration;

use mni_testkit::{Error, TestEnv, wait_for};

fn configmap_reader() -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["configmaps".into()]),
        verbs: ["get", "list", "watch"].map(String::from).to_vec(),
        ..PolicyRule::default()
    }
}

fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(status)) if status.code == 403 => status.message,
        other => panic!("expected 403 Forbidden, got {other:?}"),
    }
}

#[tokio::test]
async fn a_client_limited_to_configmaps_is_forbidden_secrets() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    // The namespace does not exist yet: it is created.
    let client = env
        .service_account_client("billing", "operator", vec![configmap_reader()])
        .await?;

    let configmaps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    configmaps.list(&ListParams::default()).await?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "billing");
    let message = forbidden(secrets.list(&ListParams::default()).await);
    assert!(
        message.contains(
            r#"User "system:serviceaccount:billing:operator" cannot list resource "secrets""#
        ),
        "{message}"
    );
    // No create verb, and nothing in other namespaces.
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("x".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    forbidden(configmaps.create(&PostParams::default(), &cm).await);
    forbidden(
        Api::<ConfigMap>::namespaced(client.clone(), "default")
            .list(&ListParams::default())
            .await,
    );

    // Asking again replaces the rules.
    let writer = PolicyRule {
        verbs: ["get", "list", "create"].map(String::from).to_vec(),
        ..configmap_reader()
    };
    let client = env
        .service_account_client("billing", "operator", vec![writer])
        .await?;
    Api::<ConfigMap>::default_namespaced(client)
        .create(&PostParams::default(), &cm)
        .await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_cluster_client_has_its_rules_in_every_namespace() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    let client = env
        .cluster_service_account_client("billing", "operator", vec![configmap_reader()])
        .await?;
    Api::<ConfigMap>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    Api::<ConfigMap>::namespaced(client.clone(), "kube-system")
        .list(&ListParams::default())
        .await?;
    forbidden(
        Api::<Secret>::all(client)
            .list(&ListParams::default())
            .await,
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_wait_without_watch_permission_fails_at_once_naming_the_object() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    let getter = PolicyRule {
        verbs: vec!["get".into()],
        ..configmap_reader()
    };
    let client = env
        .service_account_client("billing", "getter", vec![getter])
        .await?;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let err = wait_for(&cms, "settings", |_| true, Duration::from_secs(30))
        .await
        .expect_err("no list/watch");
    let message = err.to_string();
    assert!(matches!(err, Error::Watch { .. }), "{message}");
    assert!(message.contains("ConfigMap billing/settings"), "{message}");
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_crate_operator_client_has_the_rules_of_its_role_manifest() -> anyhow::Result<()> {
    let crate_dir = std::env::temp_dir().join(format!("mni-testkit-crate-{}", std::process::id()));
    let rbac = crate_dir.join("config/rbac");
    std::fs::create_dir_all(&rbac)?;
    let role = k8s_openapi::api::rbac::v1::ClusterRole {
        metadata: ObjectMeta {
            name: Some("manager-role".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![configmap_reader()]),
        ..Default::default()
    };
    std::fs::write(rbac.join("role.yaml"), serde_yaml::to_string(&role)?)?;

    let env = TestEnv::start().await?;
    let client = env.crate_operator_client(&crate_dir, "billing").await?;
    // The scaffold's names: ServiceAccount CRATE-controller-manager in CRATE-system.
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    configmaps.list(&ListParams::default()).await?;
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    let message = forbidden(secrets.list(&ListParams::default()).await);
    assert!(
        message.contains("system:serviceaccount:billing-system:billing-controller-manager"),
        "{message}"
    );
    env.shutdown().await;
    std::fs::remove_dir_all(crate_dir)?;
    Ok(())
}
