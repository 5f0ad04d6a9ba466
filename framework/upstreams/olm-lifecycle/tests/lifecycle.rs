//! The OLM roles against a real in-process API server with the workload simulator
//! (`mni_testkit::TestEnv`): a CatalogSource on the committed fixture catalog
//! (`tests/fixtures`, see `generate.py`), an OperatorGroup and Subscriptions, driven and
//! checked through the API only.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use mni_olm_lifecycle::{CATALOG_DIR_ANNOTATION, Lifecycle};
use mni_testkit::TestEnv;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);
const NS: &str = "default";

fn fixture(path: &str) -> String {
    format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn olm(version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "operators.coreos.com".into(),
        version: version.into(),
        api_version: format!("operators.coreos.com/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

fn api(client: &Client, kind: &str) -> Api<DynamicObject> {
    let resource = match kind {
        "CatalogSource" => olm("v1alpha1", kind, "catalogsources"),
        "OperatorGroup" => olm("v1", kind, "operatorgroups"),
        "Subscription" => olm("v1alpha1", kind, "subscriptions"),
        "InstallPlan" => olm("v1alpha1", kind, "installplans"),
        _ => olm(
            "v1alpha1",
            "ClusterServiceVersion",
            "clusterserviceversions",
        ),
    };
    Api::namespaced_with(client.clone(), NS, &resource)
}

/// A started environment: API server, workload simulator, and the OLM roles.
async fn env(install_timeout: Duration) -> anyhow::Result<TestEnv> {
    let env = TestEnv::builder().with_simulator(true).start().await?;
    let olm = Lifecycle::new(env.client())
        .with_poll_interval(Duration::from_millis(300))
        .with_install_timeout(install_timeout);
    olm.install_crds().await?;
    tokio::spawn(olm.with_crd_install(false).run(std::future::pending()));
    Ok(env)
}

async fn create(client: &Client, manifest: Value) -> anyhow::Result<()> {
    let kind = manifest["kind"].as_str().unwrap_or_default().to_string();
    let object: DynamicObject = serde_json::from_value(manifest)?;
    api(client, &kind)
        .create(&PostParams::default(), &object)
        .await?;
    Ok(())
}

/// The fixture catalog directory as CatalogSource `demo`, and an AllNamespaces OperatorGroup.
async fn catalog_and_group(client: &Client) -> anyhow::Result<()> {
    catalog_source(client).await?;
    group(client).await
}

/// The fixture catalog directory as CatalogSource `demo`.
async fn catalog_source(client: &Client) -> anyhow::Result<()> {
    create(client, json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
        "metadata": {"name": "demo", "annotations": {CATALOG_DIR_ANNOTATION: fixture("catalog")}},
        "spec": {"sourceType": "grpc", "displayName": "mNi demo operators"},
    }))
    .await
}

async fn group(client: &Client) -> anyhow::Result<()> {
    create(
        client,
        json!({
            "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
            "metadata": {"name": "everything"}, "spec": {},
        }),
    )
    .await
}

async fn subscribe(client: &Client, package: &str, approval: &str) -> anyhow::Result<()> {
    create(
        client,
        json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": package},
            "spec": {"name": package, "channel": "stable", "source": "demo", "sourceNamespace": NS,
                     "installPlanApproval": approval},
        }),
    )
    .await
}

fn status(object: &DynamicObject) -> &Value {
    &object.data["status"]
}

async fn wait(
    client: &Client,
    kind: &str,
    name: &str,
    check: impl Fn(&Value) -> bool,
) -> anyhow::Result<DynamicObject> {
    let api = api(client, kind);
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let current = api.get_opt(name).await?;
        if let Some(object) = current.as_ref().filter(|o| check(status(o))) {
            return Ok(object.clone());
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!(
                "{kind} {name} did not get there in {TIMEOUT:?}; last seen: {current:#?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_gone(client: &Client, kind: &str, name: &str) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while api(client, kind).get_opt(name).await?.is_some() {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{kind} {name} is still there"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

async fn wait_phase(client: &Client, csv: &str, phase: &str) -> anyhow::Result<DynamicObject> {
    wait(client, "ClusterServiceVersion", csv, |s| {
        s["phase"] == phase
    })
    .await
}

#[tokio::test]
async fn an_automatic_subscription_installs_the_channel_head() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    catalog_and_group(&client).await?;
    let source = wait(&client, "CatalogSource", "demo", |s| {
        s["connectionState"]["lastObservedState"] == "READY"
    })
    .await?;
    assert!(status(&source)["connectionState"]["lastConnect"].is_string());
    let group = wait(&client, "OperatorGroup", "everything", |s| {
        s["namespaces"].is_array()
    })
    .await?;
    assert_eq!(status(&group)["namespaces"], json!([""]));

    subscribe(&client, "demo-db", "Automatic").await?;
    let csv = wait_phase(&client, "demo-db.v0.2.0", "Succeeded").await?;
    assert_eq!(status(&csv)["reason"], "InstallSucceeded");
    let phases: Vec<&str> = status(&csv)["conditions"]
        .as_array()
        .expect("history")
        .iter()
        .filter_map(|c| c["phase"].as_str())
        .collect();
    assert_eq!(
        phases,
        ["Pending", "InstallReady", "Installing", "Succeeded"]
    );
    assert_eq!(status(&csv)["requirementStatus"][0]["status"], "Present");

    let sub = wait(&client, "Subscription", "demo-db", |s| {
        s["state"] == "AtLatestKnown"
    })
    .await?;
    let sub_status = status(&sub);
    assert_eq!(sub_status["installedCSV"], "demo-db.v0.2.0");
    assert_eq!(sub_status["currentCSV"], "demo-db.v0.2.0");
    assert_eq!(sub_status["installPlanGeneration"], 1);
    let plan_name = sub_status["installPlanRef"]["name"]
        .as_str()
        .expect("plan ref");
    let plan = api(&client, "InstallPlan").get(plan_name).await?;
    assert_eq!(status(&plan)["phase"], "Complete");
    assert_eq!(
        plan.data["spec"]["clusterServiceVersionNames"],
        json!(["demo-db.v0.2.0"])
    );
    let kinds: Vec<&str> = status(&plan)["plan"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["resource"]["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["CustomResourceDefinition", "ClusterServiceVersion"]);

    // What the strategy asked for, owned by the CSV.
    let deployment = Api::<Deployment>::namespaced(client.clone(), NS)
        .get("demo-db-operator")
        .await?;
    let labels = deployment.labels();
    assert_eq!(labels["olm.owner"], "demo-db.v0.2.0");
    assert_eq!(labels["olm.owner.kind"], "ClusterServiceVersion");
    assert_eq!(labels["olm.owner.namespace"], NS);
    assert_eq!(deployment.owner_references()[0].uid, csv.uid().unwrap());
    Api::<ServiceAccount>::namespaced(client.clone(), NS)
        .get("demo-db-operator")
        .await?;
    Api::<Role>::namespaced(client.clone(), NS)
        .get("demo-db.v0.2.0-0")
        .await?;
    Api::<ClusterRole>::all(client.clone())
        .get("demo-db.v0.2.0-default-0")
        .await?;
    Ok(())
}

/// A Subscription that comes before its CatalogSource fails resolution, and the failure
/// goes away, condition and all, once the catalog is there: nothing stays stale.
#[tokio::test]
async fn a_subscription_made_before_its_catalog_resolves_once_the_catalog_loads()
-> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    group(&client).await?;
    subscribe(&client, "demo-db", "Automatic").await?;
    let sub = wait(&client, "Subscription", "demo-db", |s| {
        s["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "ResolutionFailed"))
    })
    .await?;
    let message = status(&sub)["conditions"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("default/demo"), "{message}");

    catalog_source(&client).await?;
    wait_phase(&client, "demo-db.v0.2.0", "Succeeded").await?;
    let sub = wait(&client, "Subscription", "demo-db", |s| {
        s["state"] == "AtLatestKnown"
    })
    .await?;
    let conditions = status(&sub)["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        conditions.iter().all(|c| c["type"] != "ResolutionFailed"),
        "a stale ResolutionFailed stays: {conditions:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_required_api_is_installed_through_a_dependency_subscription() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    catalog_and_group(&client).await?;
    subscribe(&client, "demo-app", "Automatic").await?;
    wait_phase(&client, "demo-app.v0.1.0", "Succeeded").await?;
    wait_phase(&client, "demo-db.v0.2.0", "Succeeded").await?;
    let dependency = wait(
        &client,
        "Subscription",
        "demo-db-stable-demo-default",
        |s| s["installedCSV"] == "demo-db.v0.2.0",
    )
    .await?;
    assert_eq!(dependency.data["spec"]["name"], "demo-db");
    let app = wait(&client, "Subscription", "demo-app", |s| {
        s["state"] == "AtLatestKnown"
    })
    .await?;
    assert_eq!(
        status(&app)["installPlanRef"]["name"],
        status(&dependency)["installPlanRef"]["name"],
        "one InstallPlan serves both"
    );
    let plan_name = status(&app)["installPlanRef"]["name"]
        .as_str()
        .unwrap_or_default();
    let plan = api(&client, "InstallPlan").get(plan_name).await?;
    assert_eq!(
        plan.owner_references().len(),
        2,
        "owned by both Subscriptions"
    );
    Ok(())
}

#[tokio::test]
async fn an_unresolvable_dependency_fails_resolution_and_installs_nothing() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    catalog_and_group(&client).await?;
    subscribe(&client, "demo-orphan", "Automatic").await?;
    let sub = wait(&client, "Subscription", "demo-orphan", |s| {
        s["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "ResolutionFailed"))
    })
    .await?;
    let condition = &status(&sub)["conditions"][0];
    assert_eq!(condition["status"], "True");
    let message = condition["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("demo-orphan.v0.1.0") && message.contains("missing.mni.dev"),
        "{message}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        api(&client, "InstallPlan")
            .list(&Default::default())
            .await?
            .items
            .is_empty()
    );
    assert!(
        api(&client, "ClusterServiceVersion")
            .list(&Default::default())
            .await?
            .items
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn a_manual_install_plan_waits_for_approval() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    catalog_and_group(&client).await?;
    subscribe(&client, "demo-db", "Manual").await?;
    let sub = wait(&client, "Subscription", "demo-db", |s| {
        s["installPlanRef"]["name"].is_string()
    })
    .await?;
    let plan_name = status(&sub)["installPlanRef"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let plan = wait(&client, "InstallPlan", &plan_name, |s| {
        s["phase"] == "RequiresApproval"
    })
    .await?;
    assert_eq!(plan.data["spec"]["approved"], false);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        api(&client, "ClusterServiceVersion")
            .get_opt("demo-db.v0.2.0")
            .await?
            .is_none()
    );
    assert_eq!(
        status(&api(&client, "Subscription").get("demo-db").await?)["state"],
        "UpgradePending"
    );

    api(&client, "InstallPlan")
        .patch(
            &plan_name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"approved": true}})),
        )
        .await?;
    wait(&client, "InstallPlan", &plan_name, |s| {
        s["phase"] == "Complete"
    })
    .await?;
    wait_phase(&client, "demo-db.v0.2.0", "Succeeded").await?;
    Ok(())
}

#[tokio::test]
async fn an_upgrade_follows_replaces_and_keeps_custom_resources() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    let before = std::fs::read_to_string(fixture("upgrade/before.yaml"))?;
    let map: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo-catalog"},
        "data": {"catalog.yaml": before},
    }))?;
    maps.create(&PostParams::default(), &map).await?;
    create(
        &client,
        json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
            "metadata": {"name": "demo"},
            "spec": {"sourceType": "configmap", "configMap": "demo-catalog"},
        }),
    )
    .await?;
    group(&client).await?;
    subscribe(&client, "demo-db", "Automatic").await?;
    wait_phase(&client, "demo-db.v0.1.0", "Succeeded").await?;
    wait(&client, "Subscription", "demo-db", |s| {
        s["state"] == "AtLatestKnown"
    })
    .await?;

    // A custom resource of the owned CRD.
    let databases = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        NS,
        &ApiResource {
            group: "demo.mni.dev".into(),
            version: "v1".into(),
            api_version: "demo.mni.dev/v1".into(),
            kind: "Database".into(),
            plural: "databases".into(),
        },
    );
    let db: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "demo.mni.dev/v1", "kind": "Database", "metadata": {"name": "orders"},
        "spec": {"size": "small"},
    }))?;
    databases.create(&PostParams::default(), &db).await?;

    // The catalog gains v0.2.0.
    let full = std::fs::read_to_string(fixture("catalog/index.yaml"))?;
    maps.patch(
        "demo-catalog",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"catalog.yaml": full}})),
    )
    .await?;
    let csv = wait_phase(&client, "demo-db.v0.2.0", "Succeeded").await?;
    let sub = wait(&client, "Subscription", "demo-db", |s| {
        s["installedCSV"] == "demo-db.v0.2.0" && s["state"] == "AtLatestKnown"
    })
    .await?;
    assert_eq!(status(&sub)["installPlanGeneration"], 2);
    wait_gone(&client, "ClusterServiceVersion", "demo-db.v0.1.0").await?;
    let deployment = Api::<Deployment>::namespaced(client.clone(), NS)
        .get("demo-db-operator")
        .await?;
    assert_eq!(deployment.labels()["olm.owner"], "demo-db.v0.2.0");
    assert_eq!(deployment.owner_references()[0].uid, csv.uid().unwrap());
    let image = deployment.spec.template.spec.unwrap().containers[0]
        .image
        .clone();
    assert_eq!(image.as_deref(), Some("example.com/demo-db-operator:0.2.0"));
    assert_eq!(databases.get("orders").await?.data["spec"]["size"], "small");
    Ok(())
}

#[tokio::test]
async fn a_deployment_that_never_becomes_available_fails_the_install() -> anyhow::Result<()> {
    let env = env(Duration::from_secs(3)).await?;
    let client = env.client();
    catalog_and_group(&client).await?;
    subscribe(&client, "demo-crashing", "Automatic").await?;
    let csv = wait_phase(&client, "demo-crashing.v0.1.0", "Failed").await?;
    assert_eq!(status(&csv)["reason"], "InstallCheckFailed");
    assert_eq!(status(&csv)["message"], "install timeout");
    Ok(())
}

#[tokio::test]
async fn a_bundle_without_its_owned_crd_reports_requirements_not_met() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    catalog_and_group(&client).await?;
    subscribe(&client, "demo-nocrd", "Automatic").await?;
    let csv = wait(&client, "ClusterServiceVersion", "demo-nocrd.v0.1.0", |s| {
        s["reason"] == "RequirementsNotMet"
    })
    .await?;
    let status = status(&csv);
    assert_eq!(status["phase"], "Pending");
    assert!(
        status["message"]
            .as_str()
            .unwrap_or_default()
            .contains("gadgets.demo.mni.dev")
    );
    assert_eq!(
        status["requirementStatus"][0]["name"],
        "gadgets.demo.mni.dev"
    );
    assert_eq!(status["requirementStatus"][0]["status"], "NotPresent");
    assert!(
        Api::<Deployment>::namespaced(client, NS)
            .get_opt("demo-nocrd-operator")
            .await?
            .is_none()
    );
    Ok(())
}

#[tokio::test]
async fn a_csv_without_an_operator_group_fails() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    create(&client, json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
        "metadata": {"name": "demo", "annotations": {CATALOG_DIR_ANNOTATION: fixture("catalog")}},
        "spec": {"sourceType": "grpc"},
    }))
    .await?;
    subscribe(&client, "demo-db", "Automatic").await?;
    let csv = wait_phase(&client, "demo-db.v0.2.0", "Failed").await?;
    assert_eq!(status(&csv)["reason"], "NoOperatorGroup");
    Ok(())
}

#[tokio::test]
async fn a_grpc_catalog_without_a_directory_is_not_ready_and_says_why() -> anyhow::Result<()> {
    let env = env(TIMEOUT).await?;
    let client = env.client();
    create(
        &client,
        json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
            "metadata": {"name": "remote"},
            "spec": {"sourceType": "grpc", "image": "quay.io/example/catalog:latest"},
        }),
    )
    .await?;
    let source = wait(&client, "CatalogSource", "remote", |s| {
        s["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    })
    .await?;
    let message = status(&source)["message"].as_str().unwrap_or_default();
    assert!(message.contains(CATALOG_DIR_ANNOTATION), "{message}");
    Ok(())
}
