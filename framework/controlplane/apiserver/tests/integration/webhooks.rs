//! Admission webhooks end to end: the real server calls real HTTPS webhooks (see
//! `support/hooks.rs`) configured by Validating- and MutatingWebhookConfigurations, and the
//! clients (kube-rs, raw HTTP, kubectl) see their denials, patches and warnings.

use std::time::Duration;

use base64::Engine;
use http::Request;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, core::DynamicObject};
use serde_json::{Value, json};

#[path = "support/hooks.rs"]
mod hooks;
use crate::support;

use hooks::{HookServer, allow, deny, patch};

/// A webhook entry: `rules` for CREATE (and the given operations) of configmaps.
fn webhook(name: &str, client_config: Value) -> Value {
    json!({
        "name": name,
        "rules": [{
            "operations": ["CREATE", "UPDATE"],
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["configmaps"],
        }],
        "clientConfig": client_config,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// Creates a webhook configuration of `kind` (`Validating`/`Mutating`) with `webhooks`.
async fn configure(client: &Client, kind: &str, name: &str, webhooks: Vec<Value>) {
    let plural = format!("{}webhookconfigurations", kind.to_lowercase());
    let api: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &kube::discovery::ApiResource {
            group: "admissionregistration.k8s.io".into(),
            version: "v1".into(),
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: format!("{kind}WebhookConfiguration"),
            plural,
        },
    );
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": format!("{kind}WebhookConfiguration"),
        "metadata": {"name": name},
        "webhooks": webhooks,
    }))
    .expect("configuration");
    api.create(&PostParams::default(), &obj)
        .await
        .unwrap_or_else(|e| panic!("creating {kind} {name}: {e}"));
}

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": "v"}})).expect("cm")
}

/// The API error of a failed call.
fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn a_denial_returns_the_webhooks_message_and_stores_nothing() {
    let (_server, client) = support::start().await;
    let hook = HookServer::start(|req| {
        if req["name"] == "bad" {
            json!({"allowed": false, "status": {"code": 422, "reason": "Invalid", "message": "bad is a bad name"}})
        } else {
            allow()
        }
    })
    .await;
    configure(
        &client,
        "Validating",
        "names",
        vec![webhook("names.example.com", hook.url_config("/validate"))],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let e = api_error(
        cms.create(&PostParams::default(), &config_map("bad"))
            .await
            .expect_err("denied"),
    );
    assert_eq!(e.code, 422);
    assert_eq!(e.reason, "Invalid");
    assert_eq!(
        e.message,
        "admission webhook \"names.example.com\" denied the request: bad is a bad name"
    );
    assert!(
        cms.get_opt("bad").await.expect("get").is_none(),
        "nothing stored"
    );
    cms.create(&PostParams::default(), &config_map("good"))
        .await
        .expect("allowed");
    let calls = hook.calls();
    assert_eq!(calls.len(), 2);
    let first = &calls[0];
    assert_eq!(first["operation"], "CREATE");
    assert_eq!(
        first["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(first["resource"]["resource"], "configmaps");
    assert_eq!(first["namespace"], "default");
    assert_eq!(first["object"]["data"], json!({"k": "v"}));
    assert_eq!(first["userInfo"]["username"], mni_apiserver::ADMIN_USER);
    assert_eq!(first["dryRun"], false);
    assert!(
        hook.calls()[0]["uid"]
            .as_str()
            .is_some_and(|u| !u.is_empty())
    );
}

#[tokio::test]
async fn mutating_patches_apply_in_order_before_validating_webhooks() {
    let (_server, client) = support::start().await;
    // `first` (IfNeeded) labels the object from what `second` (later) set: it is called
    // again after `second` changed the object.
    let first = HookServer::start(|req| {
        let team = req["object"]["metadata"]["annotations"]["team"].as_str();
        match team {
            Some(t) => {
                patch(json!([{"op": "add", "path": "/metadata/labels", "value": {"team": t}}]))
            }
            None => allow(),
        }
    })
    .await;
    let second = HookServer::start(|_| {
        patch(json!([{"op": "add", "path": "/metadata/annotations", "value": {"team": "blue"}}]))
    })
    .await;
    // The validating webhook only admits what both mutations produced.
    let validate = HookServer::start(|req| {
        if req["object"]["metadata"]["labels"]["team"] == "blue" {
            allow()
        } else {
            deny("no team label")
        }
    })
    .await;
    let mut a = webhook("a.example.com", first.url_config("/"));
    a["reinvocationPolicy"] = json!("IfNeeded");
    configure(&client, "Mutating", "a-first", vec![a]).await;
    configure(
        &client,
        "Mutating",
        "b-second",
        vec![webhook("b.example.com", second.url_config("/"))],
    )
    .await;
    configure(
        &client,
        "Validating",
        "check",
        vec![webhook("check.example.com", validate.url_config("/"))],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = cms
        .create(&PostParams::default(), &config_map("m"))
        .await
        .expect("created");
    let meta = &created.metadata;
    assert_eq!(meta.labels.as_ref().expect("labels")["team"], "blue");
    assert_eq!(
        meta.annotations.as_ref().expect("annotations")["team"],
        "blue"
    );
    assert_eq!(first.calls().len(), 2, "reinvoked once");
    assert_eq!(second.calls().len(), 1);
    assert_eq!(validate.calls().len(), 1);
    // An update goes through them too, with the old object.
    let patched = cms
        .patch(
            "m",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "w"}})),
        )
        .await
        .expect("updated");
    assert_eq!(patched.data.expect("data")["k"], "w");
    let update = validate.calls().pop().expect("called on update");
    assert_eq!(update["operation"], "UPDATE");
    assert_eq!(update["oldObject"]["data"]["k"], "v");
}

#[tokio::test]
async fn failure_policy_decides_on_an_unreachable_webhook() {
    let (_server, client) = support::start().await;
    // Nothing listens on port 1.
    let unreachable = json!({"url": "https://127.0.0.1:1/validate"});
    let mut ignore = webhook("ignore.example.com", unreachable.clone());
    ignore["failurePolicy"] = json!("Ignore");
    configure(&client, "Validating", "ignore", vec![ignore]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &config_map("ignored"))
        .await
        .expect("Ignore admits");
    let mut fail = webhook("fail.example.com", unreachable);
    fail["failurePolicy"] = json!("Fail");
    configure(&client, "Validating", "fail", vec![fail]).await;
    let e = api_error(
        cms.create(&PostParams::default(), &config_map("failed"))
            .await
            .expect_err("Fail refuses"),
    );
    assert_eq!((e.code, e.reason.as_str()), (500, "InternalError"));
    assert!(
        e.message.starts_with(
            "Internal error occurred: failed calling webhook \"fail.example.com\": failed to call webhook: Post \"https://127.0.0.1:1/validate?timeout=10s\""
        ),
        "{}",
        e.message
    );
    assert!(cms.get_opt("failed").await.expect("get").is_none());
}

#[tokio::test]
async fn a_webhook_that_does_not_answer_in_time_fails_the_request() {
    let (_server, client) = support::start().await;
    let slow = HookServer::start_with_delay(|_| allow(), Duration::from_secs(5)).await;
    let mut w = webhook("slow.example.com", slow.url_config("/"));
    w["timeoutSeconds"] = json!(1);
    configure(&client, "Validating", "slow", vec![w]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let e = api_error(
        cms.create(&PostParams::default(), &config_map("late"))
            .await
            .expect_err("timed out"),
    );
    assert_eq!(e.code, 500);
    assert!(
        e.message
            .ends_with("?timeout=1s\": context deadline exceeded"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn selectors_and_match_conditions_choose_the_requests() {
    let (_server, client) = support::start().await;
    support::create_namespace(&client, "prod", json!({"env": "prod"})).await;
    support::create_namespace(&client, "dev", json!({"env": "dev"})).await;
    let hook =
        HookServer::start(|req| deny(&format!("saw {}", req["name"].as_str().unwrap_or("")))).await;
    let mut by_ns = webhook("ns.example.com", hook.url_config("/ns"));
    by_ns["namespaceSelector"] = json!({"matchLabels": {"env": "prod"}});
    let mut by_object = webhook("object.example.com", hook.url_config("/object"));
    by_object["objectSelector"] =
        json!({"matchExpressions": [{"key": "checked", "operator": "Exists"}]});
    let mut by_condition = webhook("cel.example.com", hook.url_config("/cel"));
    by_condition["matchConditions"] = json!([
        {"name": "prefixed", "expression": "object.metadata.name.startsWith('deny-')"},
        {"name": "creates", "expression": "request.operation == 'CREATE'"},
    ]);
    configure(
        &client,
        "Validating",
        "selective",
        vec![by_ns, by_object, by_condition],
    )
    .await;
    let create = |ns: &str, name: &str, labels: Value| {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))
                .expect("cm");
        async move { api.create(&PostParams::default(), &cm).await }
    };
    create("dev", "plain", json!({}))
        .await
        .expect("no webhook matches");
    let e = api_error(
        create("prod", "in-prod", json!({}))
            .await
            .expect_err("namespace"),
    );
    assert!(
        e.message
            .contains("\"ns.example.com\" denied the request: saw in-prod"),
        "{}",
        e.message
    );
    let e = api_error(
        create("dev", "labelled", json!({"checked": "yes"}))
            .await
            .expect_err("object"),
    );
    assert!(
        e.message.contains("\"object.example.com\""),
        "{}",
        e.message
    );
    let e = api_error(
        create("dev", "deny-me", json!({}))
            .await
            .expect_err("condition"),
    );
    assert!(e.message.contains("\"cel.example.com\""), "{}", e.message);
    let paths: Vec<String> = hook
        .calls()
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        paths,
        ["in-prod", "labelled", "deny-me"],
        "only matching requests are sent"
    );
}

#[tokio::test]
async fn dry_runs_skip_nothing_but_refuse_webhooks_with_side_effects() {
    let (_server, client) = support::start().await;
    let hook = HookServer::start(|_| allow()).await;
    let mut safe = webhook("safe.example.com", hook.url_config("/"));
    safe["sideEffects"] = json!("NoneOnDryRun");
    configure(&client, "Validating", "safe", vec![safe]).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    cms.create(&dry, &config_map("dry"))
        .await
        .expect("dry run admitted");
    assert_eq!(hook.calls()[0]["dryRun"], true);
    assert!(cms.get_opt("dry").await.expect("get").is_none());
    let mut effects = webhook("effects.example.com", hook.url_config("/"));
    effects["sideEffects"] = json!("Some");
    configure(&client, "Validating", "effects", vec![effects]).await;
    let e = api_error(
        cms.create(&dry, &config_map("dry"))
            .await
            .expect_err("refused"),
    );
    assert_eq!(e.code, 400);
    assert_eq!(
        e.message,
        "admission webhook \"effects.example.com\" does not support dry run"
    );
    cms.create(&PostParams::default(), &config_map("wet"))
        .await
        .expect("a real write calls it");
}

#[tokio::test]
async fn a_service_reference_is_resolved_through_its_endpoint_slice() {
    let (_server, client) = support::start().await;
    support::create_namespace(&client, "webhooks", json!({})).await;
    let hook = HookServer::start(|_| deny("from the service")).await;
    let apply = |api_version: &str, plural: &str, body: Value| {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let resource = kube::discovery::ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: body["kind"].as_str().unwrap_or_default().into(),
            plural: plural.into(),
        };
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "webhooks", &resource);
        let obj: DynamicObject = serde_json::from_value(body).expect("object");
        async move {
            api.create(&PostParams::default(), &obj)
                .await
                .expect("created")
        }
    };
    apply(
        "v1",
        "services",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]}}),
    )
    .await;
    apply(
        "discovery.k8s.io/v1",
        "endpointslices",
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "hook-1", "labels": {"kubernetes.io/service-name": "hook"}},
        "addressType": "IPv4",
        "ports": [{"name": "https", "port": hook.port, "protocol": "TCP"}],
        "endpoints": [
            {"addresses": ["127.0.0.2"], "conditions": {"ready": false}},
            {"addresses": ["127.0.0.1"], "conditions": {"ready": true}},
        ]}),
    )
    .await;
    let ca = base64::engine::general_purpose::STANDARD.encode(&hook.ca_pem);
    configure(
        &client,
        "Validating",
        "by-service",
        vec![webhook(
            "service.example.com",
            json!({"service": {"namespace": "webhooks", "name": "hook", "path": "/check"}, "caBundle": ca}),
        )],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let e = api_error(
        cms.create(&PostParams::default(), &config_map("x"))
            .await
            .expect_err("denied by the service's webhook"),
    );
    assert!(
        e.message.ends_with("denied the request: from the service"),
        "{}",
        e.message
    );
    assert_eq!(hook.calls().len(), 1);
}

#[tokio::test]
async fn a_certificate_not_signed_by_the_ca_bundle_is_refused() {
    let (_server, client) = support::start().await;
    let hook = HookServer::start(|_| allow()).await;
    let (_, other_ca) = hooks::new_ca();
    let mut config = hook.url_config("/");
    config["caBundle"] = json!(base64::engine::general_purpose::STANDARD.encode(other_ca));
    configure(
        &client,
        "Validating",
        "untrusted",
        vec![webhook("tls.example.com", config)],
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let e = api_error(
        cms.create(&PostParams::default(), &config_map("x"))
            .await
            .expect_err("TLS verification fails"),
    );
    assert_eq!(e.code, 500);
    assert!(
        e.message.contains("tls: invalid peer certificate"),
        "{}",
        e.message
    );
    assert!(hook.calls().is_empty(), "no request went out");
}

#[tokio::test]
async fn warnings_reach_the_client_and_deletes_and_subresources_are_admitted() {
    let (_server, client) = support::start().await;
    let hook = HookServer::start(|req| {
        if req["operation"] == "DELETE" {
            deny("keep it")
        } else {
            json!({"allowed": true, "warnings": ["mind the gap"]})
        }
    })
    .await;
    let mut w = webhook("all.example.com", hook.url_config("/"));
    w["rules"] = json!([
        {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "scope": "Namespaced"},
        {"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/status"]},
    ]);
    configure(&client, "Validating", "all", vec![w]).await;
    // Raw HTTP, to read the Warning header.
    let request = Request::post("/api/v1/namespaces/default/configmaps")
        .header("Content-Type", "application/json")
        .body(kube::client::Body::from(
            serde_json::to_vec(
                &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}}),
            )
            .expect("json"),
        ))
        .expect("request");
    let response = client.send(request).await.expect("sent");
    assert_eq!(response.status(), 201);
    let warnings: Vec<_> = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().expect("ascii").to_string())
        .collect();
    assert_eq!(warnings, ["299 - \"mind the gap\""]);
    let _ = response.into_body().collect().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let e = api_error(
        cms.delete("w", &DeleteParams::default())
            .await
            .expect_err("denied"),
    );
    assert_eq!(
        e.message,
        "admission webhook \"all.example.com\" denied the request: keep it"
    );
    assert!(
        cms.get_opt("w").await.expect("get").is_some(),
        "still there"
    );
    let delete = hook.calls().pop().expect("called");
    assert_eq!(delete["object"], Value::Null);
    assert_eq!(delete["oldObject"]["metadata"]["name"], "w");
    // A status update is sent with its subresource.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch_status(
            "default",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Active"}})),
        )
        .await
        .expect("status patched");
    let status = hook.calls().pop().expect("called");
    assert_eq!(
        (
            status["resource"]["resource"].as_str(),
            status["subResource"].as_str()
        ),
        (Some("namespaces"), Some("status"))
    );
}

#[tokio::test]
async fn kubectl_shows_the_denial_and_the_warnings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, client, kubectl) = support::start_tls(dir.path()).await;
    let hook = HookServer::start(|req| {
        if req["name"] == "forbidden" {
            deny("configmaps may not be called forbidden")
        } else {
            json!({"allowed": true, "warnings": ["checked by the webhook"]})
        }
    })
    .await;
    configure(
        &client,
        "Validating",
        "kubectl",
        vec![webhook("names.example.com", hook.url_config("/"))],
    )
    .await;
    let (ok, _, stderr) = kubectl
        .run(&["create", "configmap", "forbidden", "--from-literal=a=b"])
        .await;
    assert!(!ok);
    assert_eq!(
        stderr.trim(),
        "error: failed to create configmap: admission webhook \"names.example.com\" denied the request: configmaps may not be called forbidden"
    );
    let (ok, stdout, stderr) = kubectl
        .run(&["create", "configmap", "fine", "--from-literal=a=b"])
        .await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout.trim(), "configmap/fine created");
    assert_eq!(stderr.trim(), "Warning: checked by the webhook");
}

#[tokio::test]
async fn a_bad_configuration_is_refused_with_the_field_named() {
    let (_server, client) = support::start().await;
    let resource = kube::discovery::ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingWebhookConfiguration".into(),
        plural: "validatingwebhookconfigurations".into(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let mut w = webhook("bad.example.com", json!({"url": "http://127.0.0.1/"}));
    w["matchConditions"] = json!([{"name": "c", "expression": "object.metadata.name =="}]);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "bad"},
        "webhooks": [w],
    }))
    .expect("configuration");
    let e = api_error(
        api.create(&PostParams::default(), &obj)
            .await
            .expect_err("refused"),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(
        e.message.starts_with(
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: ["
        ),
        "{}",
        e.message
    );
    assert!(
        e.message.contains(
            "webhooks[0].clientConfig.url: Invalid value: \"http://127.0.0.1/\": 'https' is the only allowed URL scheme"
        ),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("webhooks[0].matchConditions[0].expression: Invalid value: \"object.metadata.name ==\": compilation failed: ERROR: <input>:1:"),
        "{}",
        e.message
    );
    // Written with upstream's defaults.
    let good = webhook("good.example.com", json!({"url": "https://127.0.0.1/"}));
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "good"},
        "webhooks": [good],
    }))
    .expect("configuration");
    let created = api
        .create(&PostParams::default(), &obj)
        .await
        .expect("created");
    let w = &created.data["webhooks"][0];
    assert_eq!(
        (&w["failurePolicy"], &w["timeoutSeconds"], &w["matchPolicy"]),
        (&json!("Fail"), &json!(10), &json!("Equivalent"))
    );
}
