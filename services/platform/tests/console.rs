// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The console against an in-process control plane (`mni-testkit`) with OLM's CRDs
//! (`mni-olm-lifecycle`) and the tenant controller running: its JSON API as the console's own
//! ServiceAccount with the rules of `config/rbac/console_role.yaml`, its refusal without them,
//! its security headers, and the page rendered by headless Chromium (which must be on PATH:
//! `apt-get install -y chromium`).

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::Method;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use mni_operator::{Manager, READY, RunningManager};
use mni_platform::api::platform_v1alpha1::{QuotaQuantity, Tenant, TenantSpec};
use mni_platform::controllers::tenant::TenantReconciler;
use mni_platform::registry::{CONSOLE_URL_ANNOTATION, csv_resource};
use mni_testkit::{TestEnv, wait_for_condition};
use mni_web::testing::TestServer;
use serde::Deserialize as _;
use serde_json::{Value, json};

/// The control plane with the Tenant and OLM CRDs, and the tenant controller.
async fn start() -> (TestEnv, RunningManager) {
    let env = TestEnv::builder()
        .with_crds(mni_platform::api::crds())
        .start()
        .await
        .expect("control plane starts");
    mni_olm_lifecycle::Lifecycle::new(env.client())
        .install_crds()
        .await
        .expect("OLM's CRDs");
    let manager = Manager::builder(env.client())
        .with_controller(TenantReconciler)
        .start_for_tests()
        .await
        .expect("manager starts");
    (env, manager)
}

/// The rules of the console's ClusterRole in `config/rbac/console_role.yaml`.
fn console_rules() -> Vec<PolicyRule> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/console_role.yaml");
    let text = std::fs::read_to_string(path).expect("console_role.yaml");
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde_yaml::Value::deserialize(doc).expect("YAML"))
        .find(|doc| doc["kind"] == "ClusterRole")
        .map(|doc| serde_yaml::from_value::<ClusterRole>(doc).expect("a ClusterRole"))
        .and_then(|role| role.rules)
        .expect("the console's rules")
}

/// Creates a ClusterServiceVersion in `namespace` and sets its phase.
async fn csv(env: &TestEnv, namespace: &str, manifest: Value, phase: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(env.client(), namespace, &csv_resource());
    let object: DynamicObject = serde_json::from_value(manifest).expect("a CSV");
    let name = object.metadata.name.clone().expect("named");
    api.create(&PostParams::default(), &object)
        .await
        .expect("create the CSV");
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": phase}})),
    )
    .await
    .expect("set the CSV's phase");
}

fn csv_manifest(name: &str, display: &str, annotations: Value, labels: Value) -> Value {
    json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name, "annotations": annotations, "labels": labels},
        "spec": {
            "displayName": display,
            "version": "0.1.0",
            "install": {"strategy": "deployment"},
            "customresourcedefinitions": {"owned": [
                {"name": "virtualprivateclouds.network.mni.dev", "version": "v1alpha1",
                 "kind": "VirtualPrivateCloud"},
            ]},
        },
    })
}

/// Two tenants (one ready, one refused), the VPC service installed with a console link, a
/// copy of its CSV, a service still installing, and one whose display name is markup.
async fn populate(env: &TestEnv) {
    let tenants: Api<Tenant> = Api::all(env.client());
    for (name, quota) in [("acme", "10"), ("broken", "-1")] {
        let spec = TenantSpec {
            quota: BTreeMap::from([("pods".to_owned(), QuotaQuantity::from(quota))]),
            ..TenantSpec::default()
        };
        tenants
            .create(&PostParams::default(), &Tenant::new(name, spec))
            .await
            .expect("create the Tenant");
    }
    let timeout = Duration::from_secs(30);
    wait_for_condition(&tenants, "acme", READY, "True", timeout)
        .await
        .expect("acme is Ready");
    wait_for_condition(&tenants, "broken", READY, "False", timeout)
        .await
        .expect("broken is refused");

    for namespace in ["operators", "tenant-acme"] {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
        let _ = Api::<k8s_openapi::api::core::v1::Namespace>::all(env.client())
            .create(
                &PostParams::default(),
                &serde_json::from_value(ns).expect("a Namespace"),
            )
            .await;
    }
    let link = json!({CONSOLE_URL_ANNOTATION: "http://127.0.0.1:8091/"});
    csv(
        env,
        "operators",
        csv_manifest("mni-vpc.v0.1.0", "mNi VPC", link.clone(), json!({})),
        "Succeeded",
    )
    .await;
    csv(
        env,
        "tenant-acme",
        csv_manifest(
            "mni-vpc.v0.1.0",
            "mNi VPC",
            link,
            json!({"olm.copiedFrom": "operators"}),
        ),
        "Succeeded",
    )
    .await;
    csv(
        env,
        "operators",
        csv_manifest("mni-vm.v0.1.0", "mNi VM", json!({}), json!({})),
        "Installing",
    )
    .await;
    csv(
        env,
        "operators",
        csv_manifest(
            "evil.v0.1.0",
            "<img src=x onerror=alert(1)>",
            json!({CONSOLE_URL_ANNOTATION: "javascript:alert(1)"}),
            json!({}),
        ),
        "Succeeded",
    )
    .await;
}

#[tokio::test]
async fn the_console_lists_tenants_and_installed_services_with_its_own_rights() {
    let (env, manager) = start().await;
    populate(&env).await;
    let client = env
        .cluster_service_account_client("mni-platform-system", "console", console_rules())
        .await
        .expect("the console's client");
    let server = TestServer::start(mni_platform::console::router(client)).await;

    let (status, services) = server.call_json(Method::GET, "/api/services", None).await;
    assert_eq!(status, 200, "{services}");
    assert_eq!(
        services,
        json!([
            {"name": "evil.v0.1.0", "namespace": "operators",
             "displayName": "<img src=x onerror=alert(1)>", "version": "0.1.0",
             "kinds": ["VirtualPrivateCloud"]},
            {"name": "mni-vpc.v0.1.0", "namespace": "operators", "displayName": "mNi VPC",
             "version": "0.1.0", "kinds": ["VirtualPrivateCloud"],
             "consoleUrl": "http://127.0.0.1:8091/"},
        ])
    );

    let (status, tenants) = server.call_json(Method::GET, "/api/tenants", None).await;
    assert_eq!(status, 200, "{tenants}");
    assert_eq!(tenants[0]["name"], "acme");
    assert_eq!(tenants[0]["namespaces"], json!(["tenant-acme"]));
    assert_eq!(tenants[0]["ready"], "True");
    assert_eq!(tenants[1]["name"], "broken");
    assert_eq!(tenants[1]["ready"], "False");
    let message = tenants[1]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("InvalidQuota: spec.quota.pods"),
        "{message}"
    );

    let page = server.call(Method::GET, "/", "").await;
    assert_eq!(page.status, 200);
    assert!(page.content_type().starts_with("text/html"));
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let script = server.call(Method::GET, "/console.js", "").await;
    assert!(script.content_type().starts_with("text/javascript"));
    assert!(
        !script.body.contains("innerHTML"),
        "the page renders text only"
    );
    let (status, _) = server.call_json(Method::GET, "/nope", None).await;
    assert_eq!(status, 404);

    server.stop().await;
    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

#[tokio::test]
async fn without_its_rules_the_console_says_which_it_lacks() {
    let (env, manager) = start().await;
    let client = env
        .cluster_service_account_client("mni-platform-system", "nobody", Vec::new())
        .await
        .expect("a client without rights");
    let server = TestServer::start(mni_platform::console::router(client)).await;
    for (path, resource) in [
        (
            "/api/services",
            "clusterserviceversions.operators.coreos.com",
        ),
        ("/api/tenants", "tenants.platform.mni.dev"),
    ] {
        let (status, body) = server.call_json(Method::GET, path, None).await;
        assert_eq!(status, 502, "{body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(resource) && message.contains("config/rbac/console_role.yaml"),
            "{message}"
        );
    }
    server.stop().await;
    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}

/// Runs headless Chromium on `url` and returns the DOM once the page's requests are done.
async fn rendered(url: String) -> String {
    let profile = tempfile::tempdir().expect("a profile directory");
    let mut command = std::process::Command::new("chromium");
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("chromium's thread")
        .expect("chromium runs (apt-get install -y chromium)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn chromium_renders_the_front_page_with_links_and_no_markup_from_the_cluster() {
    let (env, manager) = start().await;
    populate(&env).await;
    let server = TestServer::start(mni_platform::console::router(env.client())).await;
    let dom = rendered(server.url("/")).await;
    for expected in [
        r#"<tr data-name="mni-vpc.v0.1.0"><td>mNi VPC</td><td>0.1.0</td><td>VirtualPrivateCloud</td><td>operators</td><td><a href="http://127.0.0.1:8091/" rel="noopener noreferrer">Open</a></td></tr>"#,
        r#"<tr data-name="acme"><td>acme</td><td>—</td><td>tenant-acme</td><td class="ok">Ready</td></tr>"#,
        r#"<td class="not-ready">False InvalidQuota: spec.quota.pods"#,
        // A display name that is markup stays text, and an unsafe link is no link.
        r#"<td>&lt;img src=x onerror=alert(1)&gt;</td>"#,
    ] {
        assert!(dom.contains(expected), "missing {expected}\n{dom}");
    }
    assert!(!dom.contains("<img"), "{dom}");
    assert!(!dom.contains("javascript:"), "{dom}");
    assert!(
        !dom.contains("mNi VM"),
        "an installing service is not listed: {dom}"
    );
    server.stop().await;
    manager.shutdown().await.expect("clean shutdown");
    env.shutdown().await;
}
