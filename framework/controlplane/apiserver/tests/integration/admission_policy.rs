//! ValidatingAdmissionPolicies end to end: policies and bindings written through the API,
//! then ConfigMap writes refused, warned about or let through as kube-apiserver does, seen
//! by kube-rs, raw HTTP (for the Warning header) and kubectl.

use http::Request;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, core::DynamicObject, discovery::ApiResource};
use serde_json::{Value, json};

use crate::support;

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

fn policies(client: &Client) -> Api<DynamicObject> {
    Api::all_with(
        client.clone(),
        &resource("ValidatingAdmissionPolicy", "validatingadmissionpolicies"),
    )
}

fn bindings(client: &Client) -> Api<DynamicObject> {
    Api::all_with(
        client.clone(),
        &resource(
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
        ),
    )
}

/// The `matchConstraints` of every test: creates and updates of ConfigMaps.
fn configmap_rules() -> Value {
    json!({"resourceRules": [{
        "operations": ["CREATE", "UPDATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["configmaps"],
    }]})
}

/// Creates a policy `name` with `spec` (matching ConfigMaps unless `spec` says otherwise)
/// and returns it as stored.
async fn create_policy(client: &Client, name: &str, mut spec: Value) -> Value {
    if spec.get("matchConstraints").is_none() {
        spec["matchConstraints"] = configmap_rules();
    }
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("policy");
    let created = policies(client)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap_or_else(|e| panic!("creating policy {name}: {e}"));
    serde_json::to_value(created).expect("json")
}

/// Binds `policy` as `name` with `validationActions` and the rest of `spec`.
async fn bind(client: &Client, name: &str, policy: &str, actions: &[&str], mut spec: Value) {
    spec["policyName"] = json!(policy);
    spec["validationActions"] = json!(actions);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("binding");
    bindings(client)
        .create(&PostParams::default(), &obj)
        .await
        .unwrap_or_else(|e| panic!("creating binding {name}: {e}"));
}

fn config_map(name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).expect("cm")
}

/// Creates a ConfigMap in `ns`; the API error if refused.
async fn create_cm(
    client: &Client,
    ns: &str,
    name: &str,
    data: Value,
) -> Result<(), kube::core::Status> {
    Api::<ConfigMap>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &config_map(name, data))
        .await
        .map(|_| ())
        .map_err(|e| match e {
            kube::Error::Api(s) => *s,
            other => panic!("expected an API error, got {other}"),
        })
}

async fn stored(client: &Client, ns: &str, name: &str) -> bool {
    Api::<ConfigMap>::namespaced(client.clone(), ns)
        .get_opt(name)
        .await
        .expect("get")
        .is_some()
}

/// Creates a ConfigMap over raw HTTP and returns the status and the Warning headers.
async fn create_for_warnings(client: &Client, name: &str) -> (u16, Vec<String>) {
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    let request = Request::post("/api/v1/namespaces/default/configmaps")
        .header("Content-Type", "application/json")
        .body(kube::client::Body::from(
            serde_json::to_vec(&body).expect("json"),
        ))
        .expect("request");
    let response = client.send(request).await.expect("sent");
    let status = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().expect("ascii").to_string())
        .collect();
    let _ = response.into_body().collect().await;
    (status, warnings)
}

#[tokio::test]
async fn a_denial_carries_the_message_the_reason_and_stores_nothing() {
    let (_server, client) = support::start().await;
    create_policy(
        &client,
        "names",
        json!({"validations": [
            {"expression": "object.metadata.name != 'forbidden'", "message": "that name is taken"},
            {"expression": "!object.metadata.name.startsWith('x-')",
             "messageExpression": "'name ' + object.metadata.name + ' starts with x-'",
             "reason": "Forbidden"},
            {"expression": "object.metadata.name != 'plain'"},
        ]}),
    )
    .await;
    bind(&client, "names-binding", "names", &["Deny"], json!({})).await;

    let e = create_cm(&client, "default", "forbidden", json!({}))
        .await
        .expect_err("denied");
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        e.message,
        "configmaps \"forbidden\" is forbidden: ValidatingAdmissionPolicy 'names' with binding 'names-binding' denied request: that name is taken"
    );
    assert!(
        !stored(&client, "default", "forbidden").await,
        "nothing stored"
    );

    let e = create_cm(&client, "default", "x-ray", json!({}))
        .await
        .expect_err("denied");
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
    assert!(
        e.message
            .ends_with("denied request: name x-ray starts with x-"),
        "{}",
        e.message
    );

    let e = create_cm(&client, "default", "plain", json!({}))
        .await
        .expect_err("denied");
    assert!(
        e.message
            .ends_with("denied request: failed expression: object.metadata.name != 'plain'"),
        "{}",
        e.message
    );

    create_cm(&client, "default", "fine", json!({}))
        .await
        .expect("allowed");
    // Updates are checked too.
    let e = Api::<ConfigMap>::namespaced(client.clone(), "default")
        .patch(
            "fine",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "b"}})),
        )
        .await
        .map(|_| ());
    assert!(e.is_ok(), "an update that passes is allowed: {e:?}");
}

#[tokio::test]
async fn warn_and_audit_bindings_let_the_write_through() {
    let (_server, client) = support::start().await;
    create_policy(
        &client,
        "labels",
        json!({"validations": [{"expression": "has(object.metadata.labels)", "message": "labels are expected"}]}),
    )
    .await;
    bind(&client, "labels-warn", "labels", &["Warn"], json!({})).await;
    let (status, warnings) = create_for_warnings(&client, "warned").await;
    assert_eq!(status, 201);
    assert_eq!(
        warnings,
        [
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'labels' with binding 'labels-warn': labels are expected\""
        ]
    );
    assert!(stored(&client, "default", "warned").await);

    bindings(&client)
        .delete("labels-warn", &Default::default())
        .await
        .expect("binding deleted");
    bind(&client, "labels-audit", "labels", &["Audit"], json!({})).await;
    let (status, warnings) = create_for_warnings(&client, "audited").await;
    assert_eq!((status, warnings.len()), (201, 0));
    assert!(stored(&client, "default", "audited").await);
}

#[tokio::test]
async fn match_conditions_choose_requests_and_variables_feed_validations() {
    let (_server, client) = support::start().await;
    create_policy(
        &client,
        "small",
        json!({
            "matchConditions": [{"name": "checked", "expression": "object.metadata.name.startsWith('checked-')"}],
            "variables": [
                {"name": "keys", "expression": "has(object.data) ? size(object.data) : 0"},
                {"name": "limit", "expression": "2"},
            ],
            "validations": [{
                "expression": "variables.keys <= variables.limit",
                "messageExpression": "'too many keys: ' + string(variables.keys)",
            }],
        }),
    )
    .await;
    bind(&client, "small", "small", &["Deny"], json!({})).await;
    let three = json!({"a": "1", "b": "2", "c": "3"});
    let e = create_cm(&client, "default", "checked-big", three.clone())
        .await
        .expect_err("denied");
    assert!(
        e.message.ends_with("denied request: too many keys: 3"),
        "{}",
        e.message
    );
    create_cm(&client, "default", "checked-small", json!({"a": "1"}))
        .await
        .expect("allowed");
    create_cm(&client, "default", "unchecked-big", three)
        .await
        .expect("the match condition skips it");
}

#[tokio::test]
async fn params_come_from_a_config_map_by_name_or_selector() {
    let (_server, client) = support::start().await;
    support::create_namespace(&client, "params", json!({})).await;
    support::create_namespace(&client, "team", json!({})).await;
    // The parameter objects exist before the policies that would check them.
    create_cm(&client, "params", "limits", json!({"max": "2"}))
        .await
        .expect("param");
    Api::<ConfigMap>::namespaced(client.clone(), "team")
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "team-limits", "labels": {"limits": "team"}},
                "data": {"max": "1"},
            }))
            .expect("cm"),
        )
        .await
        .expect("team param");
    let spec = json!({
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {
            "resourceRules": configmap_rules()["resourceRules"],
            "objectSelector": {"matchExpressions": [{"key": "limits", "operator": "DoesNotExist"}]},
        },
        "validations": [{
            "expression": "!has(object.data) || size(object.data) <= int(params.data.max)",
            "messageExpression": "'at most ' + params.data.max + ' keys'",
        }],
    });
    create_policy(&client, "max-keys", spec).await;
    bind(
        &client,
        "by-name",
        "max-keys",
        &["Deny"],
        json!({
            "paramRef": {"name": "limits", "namespace": "params", "parameterNotFoundAction": "Deny"},
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}}},
        }),
    )
    .await;
    bind(
        &client,
        "by-selector",
        "max-keys",
        &["Deny"],
        json!({
            "paramRef": {"selector": {"matchLabels": {"limits": "team"}}, "parameterNotFoundAction": "Allow"},
            "matchResources": {"namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["default"]},
            ]}},
        }),
    )
    .await;

    let e = create_cm(
        &client,
        "default",
        "three",
        json!({"a": "1", "b": "2", "c": "3"}),
    )
    .await
    .expect_err("denied");
    assert!(
        e.message.ends_with(
            "ValidatingAdmissionPolicy 'max-keys' with binding 'by-name' denied request: at most 2 keys"
        ),
        "{}",
        e.message
    );
    create_cm(&client, "default", "two", json!({"a": "1", "b": "2"}))
        .await
        .expect("allowed");
    // By selector, in the request's namespace: "team" allows one key.
    let e = create_cm(&client, "team", "two", json!({"a": "1", "b": "2"}))
        .await
        .expect_err("denied");
    assert!(
        e.message
            .ends_with("with binding 'by-selector' denied request: at most 1 keys"),
        "{}",
        e.message
    );
    // "params" has no labelled parameter: `Allow` lets the request through.
    create_cm(&client, "params", "many", json!({"a": "1", "b": "2"}))
        .await
        .expect("no params, allowed");
    // Without its parameter, `Deny` refuses.
    Api::<ConfigMap>::namespaced(client.clone(), "params")
        .delete("limits", &Default::default())
        .await
        .expect("param deleted");
    let e = create_cm(&client, "default", "one", json!({"a": "1"}))
        .await
        .expect_err("denied");
    assert_eq!(
        e.message,
        "configmaps \"one\" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'by-name' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );
}

#[tokio::test]
async fn a_binding_namespace_selector_narrows_the_policy() {
    let (_server, client) = support::start().await;
    support::create_namespace(&client, "prod", json!({"env": "prod"})).await;
    support::create_namespace(&client, "dev", json!({"env": "dev"})).await;
    create_policy(
        &client,
        "no-debug",
        json!({"validations": [{"expression": "!has(object.data) || !('debug' in object.data)", "message": "no debug in prod"}]}),
    )
    .await;
    bind(
        &client,
        "prod-only",
        "no-debug",
        &["Deny"],
        json!({"matchResources": {"namespaceSelector": {"matchLabels": {"env": "prod"}}}}),
    )
    .await;
    let e = create_cm(&client, "prod", "c", json!({"debug": "1"}))
        .await
        .expect_err("denied in prod");
    assert!(e.message.ends_with("no debug in prod"), "{}", e.message);
    create_cm(&client, "dev", "c", json!({"debug": "1"}))
        .await
        .expect("allowed in dev");
}

#[tokio::test]
async fn the_failure_policy_decides_on_runtime_errors() {
    let (_server, client) = support::start().await;
    create_policy(
        &client,
        "color",
        json!({"validations": [{"expression": "object.data.color == 'blue'"}]}),
    )
    .await;
    bind(&client, "color", "color", &["Deny"], json!({})).await;
    let e = create_cm(&client, "default", "nocolor", json!({"a": "b"}))
        .await
        .expect_err("Fail denies");
    assert_eq!(
        e.message,
        "configmaps \"nocolor\" is forbidden: ValidatingAdmissionPolicy 'color' with binding 'color' denied request: expression 'object.data.color == 'blue'' resulted in error: no such key: color"
    );
    let patched = policies(&client)
        .patch(
            "color",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"failurePolicy": "Ignore"}})),
        )
        .await
        .expect("patched");
    // The status follows the new generation.
    let patched = serde_json::to_value(patched).expect("json");
    assert_eq!(patched["metadata"]["generation"], 2);
    assert_eq!(patched["status"]["observedGeneration"], 2);
    create_cm(&client, "default", "nocolor", json!({"a": "b"}))
        .await
        .expect("Ignore allows");
    let e = create_cm(&client, "default", "red", json!({"color": "red"}))
        .await
        .expect_err("a false expression still denies");
    assert!(
        e.message
            .ends_with("failed expression: object.data.color == 'blue'"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn expressions_are_compiled_on_write_and_type_checked_into_the_status() {
    let (_server, client) = support::start().await;
    let checked = create_policy(
        &client,
        "replicas",
        json!({
            "matchConstraints": {"resourceRules": [{
                "operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"],
            }]},
            "validations": [
                {"expression": "object.spec.replicas <= 5"},
                {"expression": "object.spec.replicsa <= 5"},
            ],
        }),
    )
    .await;
    assert_eq!(checked["status"]["observedGeneration"], 1);
    let warnings = &checked["status"]["typeChecking"]["expressionWarnings"];
    assert_eq!(
        warnings.as_array().map(Vec::len),
        Some(1),
        "{}",
        checked["status"]
    );
    assert_eq!(warnings[0]["fieldRef"], "spec.validations[1].expression");
    let warning = warnings[0]["warning"].as_str().expect("warning");
    assert!(
        warning.starts_with(
            "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicsa'"
        ),
        "{warning}"
    );
    // As read back.
    let read =
        serde_json::to_value(policies(&client).get("replicas").await.expect("get")).expect("json");
    assert_eq!(read["status"], checked["status"]);

    let clean = create_policy(
        &client,
        "clean",
        json!({"validations": [{"expression": "object.metadata.name != ''"}]}),
    )
    .await;
    assert_eq!(
        clean["status"],
        json!({"observedGeneration": 1, "typeChecking": {}})
    );

    // A syntax error is refused outright.
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "broken"},
        "spec": {"matchConstraints": configmap_rules(), "validations": [{"expression": "object.metadata.name =="}]},
    }))
    .expect("policy");
    let e = match policies(&client).create(&PostParams::default(), &obj).await {
        Err(kube::Error::Api(s)) => *s,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(
        e.message.contains(
            "spec.validations[0].expression: Invalid value: \"object.metadata.name ==\": compilation failed: ERROR: <input>:1:"
        ),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn kubectl_applies_a_policy_and_sees_the_refusal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, _client, kubectl) = support::start_tls(dir.path()).await;
    let manifest = dir.path().join("policy.yaml");
    std::fs::write(
        &manifest,
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-forbidden-names
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "object.metadata.name != 'forbidden'"
    message: "configmaps may not be called forbidden"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-forbidden-names
spec:
  policyName: no-forbidden-names
  validationActions: [Deny]
"#,
    )
    .expect("manifest");
    let path = manifest.to_string_lossy().into_owned();
    let (ok, stdout, stderr) = kubectl.run(&["apply", "-f", &path]).await;
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(
            "validatingadmissionpolicy.admissionregistration.k8s.io/no-forbidden-names created"
        ),
        "{stdout}"
    );
    let (ok, _, stderr) = kubectl
        .run(&["create", "configmap", "forbidden", "--from-literal=a=b"])
        .await;
    assert!(!ok);
    assert!(
        stderr.contains(
            "ValidatingAdmissionPolicy 'no-forbidden-names' with binding 'no-forbidden-names' denied request: configmaps may not be called forbidden"
        ),
        "{stderr}"
    );
    let (ok, stdout, stderr) = kubectl
        .run(&["create", "configmap", "fine", "--from-literal=a=b"])
        .await;
    assert!(ok, "{stderr}");
    assert_eq!(stdout.trim(), "configmap/fine created");
}
