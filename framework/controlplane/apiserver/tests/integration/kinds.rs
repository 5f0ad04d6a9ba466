//! Every stored built-in kind round-trips over real HTTP: one minimal object of each is
//! created in JSON and another in protobuf (`application/vnd.kubernetes.protobuf`, as typed
//! kubectl commands send it), both are read back and listed (asking for protobuf or JSON, as
//! kubectl does; the server answers JSON), the `status` subresource is there where upstream
//! has one, and both are deleted.

use http::Request;
use http_body_util::BodyExt;
use kube::Client;
use serde_json::{Value, json};

use crate::support;
use support::start;

/// A kind of the fidelity table `tests/fixtures/kinds.json` (shared with mni-dev's test of the
/// official Python client): its collection path, its `apiVersion`, `kind`, whether upstream
/// serves a `status` subresource for it, and a minimal body (without `apiVersion`, `kind` and
/// `metadata`).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    collection: String,
    api_version: String,
    kind: String,
    status: bool,
    body: Value,
}

fn cases() -> Vec<Case> {
    serde_json::from_str(include_str!("../fixtures/kinds.json")).expect("tests/fixtures/kinds.json")
}

/// Sends a request; the status and the body's bytes.
async fn send(
    client: &Client,
    method: &str,
    path: &str,
    accept: &str,
    body: Option<&Value>,
) -> (u16, Vec<u8>) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("Accept", accept)
        .header("Content-Type", "application/json")
        .body(
            body.map(|b| serde_json::to_vec(b).expect("json"))
                .unwrap_or_default(),
        )
        .expect("request");
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: body: {e}"))
        .to_bytes()
        .to_vec();
    (status, bytes)
}

/// kubectl's `Accept` for typed commands.
const KUBECTL_ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";

/// POSTs a protobuf body; the status and the (JSON) answer's bytes.
async fn send_bytes(client: &Client, method: &str, path: &str, body: Vec<u8>) -> (u16, Vec<u8>) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("Accept", "application/json")
        .header("Content-Type", mni_protobuf::CONTENT_TYPE)
        .body(kube::client::Body::from(body))
        .expect("request");
    let response = client
        .send(request)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: body: {e}"))
        .to_bytes()
        .to_vec();
    (status, bytes)
}

fn json_of(what: &str, status: u16, bytes: &[u8]) -> Value {
    let v: Value = serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", String::from_utf8_lossy(bytes)));
    assert!(status < 300, "{what}: {status} {v}");
    v
}

#[tokio::test]
async fn every_stored_kind_round_trips_in_json_and_protobuf_bodies() {
    let (server, client) = start().await;
    for c in cases() {
        let name = if c.kind == "IPAddress" {
            "10.0.0.5"
        } else {
            "minimal"
        };
        let mut body = c.body.clone();
        body["apiVersion"] = json!(c.api_version);
        body["kind"] = json!(c.kind);
        body["metadata"] = json!({"name": name, "labels": {"app": "x"}});
        let what = format!("{} {}", c.kind, c.collection);
        let (status, bytes) = send(
            &client,
            "POST",
            &c.collection,
            "application/json",
            Some(&body),
        )
        .await;
        let created = json_of(&format!("create {what}"), status, &bytes);
        assert_eq!(created["kind"], c.kind, "{what}");
        assert_eq!(created["apiVersion"], c.api_version, "{what}");
        if c.kind.starts_with("PersistentVolume") {
            assert_eq!(created["status"]["phase"], "Pending", "{what}");
        }

        let path = format!("{}/{name}", c.collection);
        let (status, bytes) = send(&client, "GET", &path, KUBECTL_ACCEPT, None).await;
        let read = json_of(&format!("read {what}"), status, &bytes);
        assert_eq!(
            read["metadata"]["uid"], created["metadata"]["uid"],
            "{what}"
        );

        // The same kind sent in protobuf.
        let pb_name = if c.kind == "IPAddress" {
            "10.0.0.6"
        } else {
            "minimal-pb"
        };
        body["metadata"]["name"] = json!(pb_name);
        let encoded =
            mni_protobuf::encode(&body).unwrap_or_else(|e| panic!("protobuf encode {what}: {e}"));
        let (status, bytes) = send_bytes(&client, "POST", &c.collection, encoded).await;
        let created_pb = json_of(&format!("protobuf create {what}"), status, &bytes);
        assert_eq!(created_pb["kind"], c.kind, "{what}");
        assert_eq!(created_pb["metadata"]["labels"]["app"], "x", "{what}");

        let (status, bytes) = send(&client, "GET", &c.collection, KUBECTL_ACCEPT, None).await;
        let list = json_of(&format!("list {what}"), status, &bytes);
        let mut names: Vec<&str> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["metadata"]["name"].as_str())
            // The cluster's own `default/kubernetes` Service, Endpoints and EndpointSlice.
            .filter(|n| !(*n == "kubernetes" && c.collection.contains("/namespaces/default/")))
            .collect();
        names.sort_unstable();
        let mut want = vec![name, pb_name];
        want.sort_unstable();
        assert_eq!(names, want, "{what}");
        let pb_path = format!("{}/{pb_name}", c.collection);
        let (status, bytes) = send(&client, "DELETE", &pb_path, "application/json", None).await;
        json_of(&format!("delete {what}"), status, &bytes);

        let (status, _) = send(
            &client,
            "GET",
            &format!("{path}/status"),
            "application/json",
            None,
        )
        .await;
        let want = if c.status { 200 } else { 404 };
        assert_eq!(status, want, "status subresource of {what}");

        let (status, bytes) = send(&client, "DELETE", &path, "application/json", None).await;
        json_of(&format!("delete {what}"), status, &bytes);
        let (status, _) = send(&client, "GET", &path, "application/json", None).await;
        assert_eq!(status, 404, "{what} after delete");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn discovery_names_the_new_kinds_as_upstream() {
    let (server, client) = start().await;
    let resources = |gv: &'static str| {
        let client = client.clone();
        async move {
            let path = if gv == "v1" {
                "/api/v1".to_string()
            } else {
                format!("/apis/{gv}")
            };
            let (status, bytes) = send(&client, "GET", &path, "application/json", None).await;
            json_of(&path, status, &bytes)["resources"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        }
    };
    let find = |list: &[Value], plural: &str| -> Value {
        list.iter()
            .find(|r| r["name"] == plural)
            .cloned()
            .unwrap_or_else(|| panic!("{plural} not served"))
    };
    let core = resources("v1").await;
    for (plural, short) in [
        ("persistentvolumes", "pv"),
        ("persistentvolumeclaims", "pvc"),
        ("resourcequotas", "quota"),
        ("limitranges", "limits"),
        ("nodes", "no"),
        ("replicationcontrollers", "rc"),
    ] {
        assert_eq!(
            find(&core, plural)["shortNames"],
            json!([short]),
            "{plural}"
        );
    }
    assert_eq!(find(&core, "nodes")["namespaced"], false);
    assert_eq!(
        find(&core, "replicationcontrollers")["categories"],
        json!(["all"])
    );
    assert!(
        core.iter()
            .any(|r| r["name"] == "replicationcontrollers/scale")
    );
    let batch = resources("batch/v1").await;
    assert_eq!(find(&batch, "cronjobs")["shortNames"], json!(["cj"]));
    assert_eq!(find(&batch, "jobs")["categories"], json!(["all"]));
    let hpa = resources("autoscaling/v2").await;
    assert_eq!(
        find(&hpa, "horizontalpodautoscalers")["shortNames"],
        json!(["hpa"])
    );
    let sched = resources("scheduling.k8s.io/v1").await;
    assert_eq!(find(&sched, "priorityclasses")["shortNames"], json!(["pc"]));
    let admission = resources("admissionregistration.k8s.io/v1").await;
    assert_eq!(
        find(&admission, "validatingwebhookconfigurations")["categories"],
        json!(["api-extensions"])
    );
    server.shutdown().await;
}
