//! Request bodies decoded as kube-apiserver decodes them, over real HTTP: `apiVersion` and
//! `kind` default to the path's for built-in kinds (namespaced, cluster-scoped, `status`,
//! `scale`, reviews), custom resources must name their kind, a body of another version or kind
//! is refused with upstream's message and stores nothing (protobuf envelopes alike), and
//! server-side apply takes no defaults.

use http::Request;
use kube::Client;
use kube::api::Api;
use serde_json::{Value, json};

use crate::support;
use support::start;

/// An API error as (code, reason, message).
type Refusal = (u16, String, String);

/// Sends `body` as is (no client model adds `apiVersion` or `kind`).
async fn send(
    client: &Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> Result<Value, Refusal> {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", content_type)
        .body(serde_json::to_vec(body).expect("json"))
        .expect("request");
    match client.request_text(request).await {
        Ok(text) => Ok(serde_json::from_str(&text).expect("JSON answer")),
        Err(kube::Error::Api(s)) => Err((s.code, s.reason.clone(), s.message.clone())),
        Err(other) => panic!("{method} {path}: {other:?}"),
    }
}

/// Sends a Kubernetes protobuf body.
async fn send_protobuf(client: &Client, path: &str, body: Vec<u8>) -> Result<Value, Refusal> {
    let request = Request::builder()
        .method("POST")
        .uri(path)
        .header("Content-Type", mni_protobuf::CONTENT_TYPE)
        .header("Accept", "application/json")
        .body(body)
        .expect("request");
    match client.request_text(request).await {
        Ok(text) => Ok(serde_json::from_str(&text).expect("JSON answer")),
        Err(kube::Error::Api(s)) => Err((s.code, s.reason.clone(), s.message.clone())),
        Err(other) => panic!("POST {path}: {other:?}"),
    }
}

/// `obj` as a protobuf body whose envelope leaves `typeMeta` empty.
fn protobuf_without_type_meta(obj: &Value) -> Vec<u8> {
    let full = mni_protobuf::encode(obj).expect("encode");
    let rest = &full[mni_protobuf::MAGIC.len()..];
    // Field 1 (typeMeta), length-delimited, shorter than 128 bytes: skip it.
    assert_eq!(rest[0], 0x0a, "typeMeta first");
    let after = &rest[2 + usize::from(rest[1])..];
    let mut out = mni_protobuf::MAGIC.to_vec();
    out.extend_from_slice(&[0x0a, 0x00]);
    out.extend_from_slice(after);
    out
}

async fn post(client: &Client, path: &str, body: Value) -> Result<Value, Refusal> {
    send(client, "POST", path, "application/json", &body).await
}

async fn put(client: &Client, path: &str, body: Value) -> Result<Value, Refusal> {
    send(client, "PUT", path, "application/json", &body).await
}

async fn get(client: &Client, path: &str) -> Result<Value, Refusal> {
    let request = Request::builder()
        .uri(path)
        .body(Vec::new())
        .expect("request");
    match client.request_text(request).await {
        Ok(text) => Ok(serde_json::from_str(&text).expect("JSON answer")),
        Err(kube::Error::Api(s)) => Err((s.code, s.reason.clone(), s.message.clone())),
        Err(other) => panic!("GET {path}: {other:?}"),
    }
}

fn bad_request(refusal: Refusal) -> String {
    assert_eq!(
        (refusal.0, refusal.1.as_str()),
        (400, "BadRequest"),
        "{refusal:?}"
    );
    refusal.2
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn built_in_bodies_take_apiversion_and_kind_from_the_path() {
    let (server, client) = start().await;
    let created = post(
        &client,
        CONFIGMAPS,
        json!({"metadata": {"name": "bare"}, "data": {"a": "1"}}),
    )
    .await
    .expect("create without apiVersion and kind");
    assert_eq!(created["apiVersion"], "v1");
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["data"]["a"], "1");
    // A replace without them, with the resourceVersion read.
    let replaced = put(
        &client,
        &format!("{CONFIGMAPS}/bare"),
        json!({"metadata": {"name": "bare", "resourceVersion": created["metadata"]["resourceVersion"]},
               "data": {"a": "2"}}),
    )
    .await
    .expect("replace without apiVersion and kind");
    assert_eq!(replaced["kind"], "ConfigMap");
    assert_eq!(replaced["data"]["a"], "2");
    // Only one of the two given: the other is defaulted.
    let half = post(
        &client,
        CONFIGMAPS,
        json!({"kind": "ConfigMap", "metadata": {"name": "half"}}),
    )
    .await
    .expect("kind only");
    assert_eq!(half["apiVersion"], "v1");

    // Cluster-scoped: a Namespace.
    let ns = post(
        &client,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "bare-ns"}}),
    )
    .await
    .expect("namespace without apiVersion and kind");
    assert_eq!(
        (ns["apiVersion"].as_str(), ns["kind"].as_str()),
        (Some("v1"), Some("Namespace"))
    );
    // A grouped kind: a Lease.
    let lease = post(
        &client,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}),
    )
    .await
    .expect("lease");
    assert_eq!(lease["apiVersion"], "coordination.k8s.io/v1");
    assert_eq!(lease["kind"], "Lease");

    // The status subresource of a Deployment, and its scale subresource (a Scale).
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let labels = json!({"app": "web"});
    post(
        &client,
        deployments,
        json!({"metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
    )
    .await
    .expect("deployment");
    let current = get(&client, &format!("{deployments}/web"))
        .await
        .expect("read");
    let mut status = current.clone();
    let body = status.as_object_mut().expect("object");
    body.remove("apiVersion");
    body.remove("kind");
    body.insert(
        "status".into(),
        json!({"observedGeneration": 1, "replicas": 1}),
    );
    let written = put(&client, &format!("{deployments}/web/status"), status)
        .await
        .expect("status without apiVersion and kind");
    assert_eq!(written["kind"], "Deployment");
    assert_eq!(written["status"]["replicas"], 1);
    let scaled = put(
        &client,
        &format!("{deployments}/web/scale"),
        json!({"metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 4}}),
    )
    .await
    .expect("scale without apiVersion and kind");
    assert_eq!(
        (scaled["apiVersion"].as_str(), scaled["kind"].as_str()),
        (Some("autoscaling/v1"), Some("Scale"))
    );
    let read = get(&client, &format!("{deployments}/web"))
        .await
        .expect("read");
    assert_eq!(read["spec"]["replicas"], 4);
    // A Scale of another version is refused.
    let refused = put(
        &client,
        &format!("{deployments}/web/scale"),
        json!({"apiVersion": "autoscaling/v2", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 9}}),
    )
    .await
    .expect_err("autoscaling/v2 Scale");
    assert_eq!(
        bad_request(refused),
        "Scale in version \"v2\" cannot be handled as a Scale: no kind \"Scale\" is registered for \
         version \"autoscaling/v2\" in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\""
    );

    // Reviews and TokenRequests are bodies too.
    let review = post(
        &client,
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        json!({"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}),
    )
    .await
    .expect("review without apiVersion and kind");
    assert_eq!(review["kind"], "SelfSubjectAccessReview");
    assert_eq!(review["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(review["status"]["allowed"], true);
    post(
        &client,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"metadata": {"name": "robot"}}),
    )
    .await
    .expect("serviceaccount");
    let token = post(
        &client,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        json!({"spec": {"expirationSeconds": 3600}}),
    )
    .await
    .expect("token request without apiVersion and kind");
    assert_eq!(token["kind"], "TokenRequest");
    assert!(
        token["status"]["token"]
            .as_str()
            .is_some_and(|t| !t.is_empty())
    );
    let refused = post(
        &client,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "spec": {}}),
    )
    .await
    .expect_err("a ConfigMap as a TokenRequest");
    assert_eq!(
        bad_request(refused),
        "ConfigMap in version \"v1\" cannot be handled as a TokenRequest: converting (v1.ConfigMap) \
         to (authentication.TokenRequest): unknown conversion"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn protobuf_envelopes_follow_the_same_rules() {
    let (server, client) = start().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pb"}, "data": {"a": "1"}});
    let created = send_protobuf(&client, CONFIGMAPS, protobuf_without_type_meta(&cm))
        .await
        .expect("an envelope without typeMeta");
    assert_eq!(created["kind"], "ConfigMap");
    assert_eq!(created["data"]["a"], "1");
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pb2"}});
    let refused = send_protobuf(
        &client,
        CONFIGMAPS,
        mni_protobuf::encode(&secret).expect("encode"),
    )
    .await
    .expect_err("a Secret envelope posted as a ConfigMap");
    assert_eq!(
        bad_request(refused),
        "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to \
         (core.ConfigMap): unknown conversion"
    );
    let (code, ..) = get(&client, &format!("{CONFIGMAPS}/pb2"))
        .await
        .expect_err("nothing stored");
    assert_eq!(code, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn mismatched_bodies_are_refused_and_store_nothing() {
    let (server, client) = start().await;
    let refused = post(
        &client,
        CONFIGMAPS,
        json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "m1"}}),
    )
    .await
    .expect_err("apps/v1 ConfigMap");
    assert_eq!(
        bad_request(refused),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is \
         registered for version \"apps/v1\" in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\""
    );
    let refused = post(
        &client,
        CONFIGMAPS,
        json!({"kind": "Secret", "metadata": {"name": "m2"}}),
    )
    .await
    .expect_err("a Secret posted as a ConfigMap");
    assert_eq!(
        bad_request(refused),
        "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to \
         (core.ConfigMap): unknown conversion"
    );
    // Same kind in another served version the scheme converts: the version check.
    let refused = post(
        &client,
        "/api/v1/namespaces/default/events",
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "m3"}}),
    )
    .await
    .expect_err("events.k8s.io Event to core");
    assert_eq!(
        bad_request(refused),
        "the API version in the data (events.k8s.io/v1) does not match the expected API version (v1)"
    );
    for name in ["m1", "m2"] {
        let (code, ..) = get(&client, &format!("{CONFIGMAPS}/{name}"))
            .await
            .expect_err("nothing stored");
        assert_eq!(code, 404);
    }
    let (code, ..) = get(&client, "/api/v1/namespaces/default/events/m3")
        .await
        .expect_err("nothing stored");
    assert_eq!(code, 404);

    // An update of another kind leaves the object as it was.
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::default_namespaced(client.clone());
    post(
        &client,
        CONFIGMAPS,
        json!({"metadata": {"name": "kept"}, "data": {"a": "1"}}),
    )
    .await
    .expect("create");
    let refused = put(
        &client,
        &format!("{CONFIGMAPS}/kept"),
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "kept"}, "data": {"a": "Mg=="}}),
    )
    .await
    .expect_err("a Secret put over a ConfigMap");
    assert!(
        bad_request(refused)
            .starts_with("Secret in version \"v1\" cannot be handled as a ConfigMap")
    );
    let kept = api.get("kept").await.expect("still there");
    assert_eq!(kept.data.expect("data")["a"], "1");
    let _ = api.delete("kept", &Default::default()).await;
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_must_name_their_kind() {
    let (server, client) = start().await;
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}});
    post(
        &client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        json!({"metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema,
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas"}}}]}}),
    )
    .await
    .expect("a CRD without apiVersion and kind (a built-in kind)");
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";

    let body = json!({"apiVersion": "example.com/v1", "metadata": {"name": "w"}});
    let refused = post(&client, widgets, body.clone())
        .await
        .expect_err("no kind");
    assert_eq!(
        bad_request(refused),
        format!(
            "Widget in version \"v1\" cannot be handled as a Widget: Object 'Kind' is missing in '{}'",
            serde_json::to_string(&body).expect("json")
        )
    );
    let refused = post(
        &client,
        widgets,
        json!({"kind": "Widget", "metadata": {"name": "w"}}),
    )
    .await
    .expect_err("no apiVersion");
    assert_eq!(
        bad_request(refused),
        "the API version in the data () does not match the expected API version (example.com/v1)"
    );
    let refused = post(
        &client,
        widgets,
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "w"}}),
    )
    .await
    .expect_err("another kind");
    assert_eq!((refused.0, refused.1.as_str()), (422, "Invalid"));
    assert_eq!(
        refused.2,
        "Widget.example.com \"w\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
    );
    let (code, ..) = get(&client, &format!("{widgets}/w"))
        .await
        .expect_err("nothing stored");
    assert_eq!(code, 404);

    let created = post(
        &client,
        widgets,
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"replicas": 1}}),
    )
    .await
    .expect("a complete body");
    // The status subresource of a custom resource also needs the kind.
    let mut status = created.clone();
    status.as_object_mut().expect("object").remove("kind");
    status["status"] = json!({"replicas": 1});
    let refused = put(&client, &format!("{widgets}/w/status"), status)
        .await
        .expect_err("status without kind");
    assert!(bad_request(refused).contains("Object 'Kind' is missing"));
    // Its scale subresource is a typed Scale: defaulted.
    let scaled = put(
        &client,
        &format!("{widgets}/w/scale"),
        json!({"metadata": {"name": "w"}, "spec": {"replicas": 3}}),
    )
    .await
    .expect("scale without apiVersion and kind");
    assert_eq!(scaled["kind"], "Scale");
    let read = get(&client, &format!("{widgets}/w")).await.expect("read");
    assert_eq!(read["spec"]["replicas"], 3);
    server.shutdown().await;
}

#[tokio::test]
async fn apply_needs_apiversion_and_kind() {
    let (server, client) = start().await;
    let path = format!("{CONFIGMAPS}/applied?fieldManager=test");
    let ct = "application/apply-patch+yaml";
    let refused = send(
        &client,
        "PATCH",
        &path,
        ct,
        &json!({"metadata": {"name": "applied"}}),
    )
    .await
    .expect_err("apply without apiVersion and kind");
    assert_eq!(bad_request(refused), "invalid object type: /, Kind=");
    let refused = send(
        &client,
        "PATCH",
        &path,
        ct,
        &json!({"apiVersion": "v1", "metadata": {"name": "applied"}}),
    )
    .await
    .expect_err("apply without kind");
    assert_eq!(bad_request(refused), "invalid object type: /v1, Kind=");
    let (code, ..) = get(&client, &format!("{CONFIGMAPS}/applied"))
        .await
        .expect_err("nothing stored");
    assert_eq!(code, 404);
    let applied = send(
        &client,
        "PATCH",
        &path,
        ct,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}}),
    )
    .await
    .expect("a complete apply");
    assert_eq!(applied["kind"], "ConfigMap");

    // DeleteOptions may be bare, meta.k8s.io/v1 or the legacy v1; another kind is refused.
    let refused = send(
        &client,
        "DELETE",
        &format!("{CONFIGMAPS}/applied"),
        "application/json",
        &json!({"apiVersion": "v1", "kind": "Pod"}),
    )
    .await
    .expect_err("a Pod as DeleteOptions");
    assert_eq!(refused.0, 400);
    send(
        &client,
        "DELETE",
        &format!("{CONFIGMAPS}/applied"),
        "application/json",
        &json!({"propagationPolicy": "Background"}),
    )
    .await
    .expect("bare DeleteOptions");
    server.shutdown().await;
}

#[tokio::test]
async fn a_replace_names_the_object_of_its_url() {
    let (_server, client) = start().await;
    post(
        &client,
        CONFIGMAPS,
        json!({"metadata": {"name": "named", "labels": {"keep": "yes"}}, "data": {"a": "1"}}),
    )
    .await
    .expect("create");
    // kube-apiserver's message, and nothing written: the stored object keeps its labels.
    for body_name in [json!("other"), json!(null)] {
        let refusal = put(
            &client,
            &format!("{CONFIGMAPS}/named"),
            json!({"metadata": {"name": body_name}, "data": {"a": "2"}}),
        )
        .await
        .expect_err("a body naming another object");
        let shown = body_name.as_str().unwrap_or_default();
        assert_eq!(
            bad_request(refusal),
            format!("the name of the object ({shown}) does not match the name on the URL (named)")
        );
    }
    let stored = get(&client, &format!("{CONFIGMAPS}/named"))
        .await
        .expect("still there");
    assert_eq!(stored["metadata"]["labels"]["keep"], "yes");
    assert_eq!(stored["data"]["a"], "1");
}

#[tokio::test]
async fn an_object_without_name_or_generate_name_is_refused_as_upstream() {
    let (_server, client) = start().await;
    let refusal = post(
        &client,
        CONFIGMAPS,
        json!({"metadata": {}, "data": {"a": "1"}}),
    )
    .await
    .expect_err("no name");
    assert_eq!(
        (refusal.0, refusal.1.as_str()),
        (422, "Invalid"),
        "{refusal:?}"
    );
    assert_eq!(
        refusal.2,
        "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
}
