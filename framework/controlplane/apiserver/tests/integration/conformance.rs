//! kube-rs against the in-process server: the behaviour operators rely on, over real HTTP.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::{ApiResource, GroupVersionKind};

use crate::support;
use serde_json::json;

use support::start;

/// The ConfigMap with the cluster's CA bundle that every namespace has.
const ROOT_CA: &str = "kube-root-ca.crt";

fn cm(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"k": "v"}
    }))
    .expect("configmap")
}

fn api_error(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason.clone(), s.message.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn crud_and_optimistic_concurrency() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create");
    let meta = &created.metadata;
    assert!(meta.uid.is_some() && meta.creation_timestamp.is_some());
    let rv: i64 = meta
        .resource_version
        .as_deref()
        .expect("rv")
        .parse()
        .expect("numeric rv");
    assert!(rv > 0);

    let (code, reason, _) = api_error(
        api.create(&PostParams::default(), &cm("a", json!({})))
            .await
            .expect_err("dup"),
    );
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));

    // Stale resourceVersion → 409 Conflict.
    let mut updated = created.clone();
    updated.data = Some([("k".to_string(), "w".to_string())].into());
    let newer = api
        .replace("a", &PostParams::default(), &updated)
        .await
        .expect("update");
    let (code, reason, _) = api_error(
        api.replace("a", &PostParams::default(), &updated)
            .await
            .expect_err("stale"),
    );
    assert_eq!((code, reason.as_str()), (409, "Conflict"));

    // A write that changes nothing keeps the resourceVersion.
    let same = api
        .replace("a", &PostParams::default(), &newer)
        .await
        .expect("no-op update");
    assert_eq!(
        same.metadata.resource_version,
        newer.metadata.resource_version
    );

    // generateName.
    let mut gen_cm = cm("", json!({}));
    gen_cm.metadata.name = None;
    gen_cm.metadata.generate_name = Some("gen-".into());
    let g = api
        .create(&PostParams::default(), &gen_cm)
        .await
        .expect("generateName");
    assert!(
        g.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("gen-") && n.len() == 9)
    );

    // Namespaced write into a missing namespace → 404.
    let missing: Api<ConfigMap> = Api::namespaced(client.clone(), "nope");
    let (code, _, msg) = api_error(
        missing
            .create(&PostParams::default(), &cm("x", json!({})))
            .await
            .expect_err("404"),
    );
    assert_eq!(code, 404);
    assert_eq!(msg, "namespaces \"nope\" not found");

    // dryRun writes nothing.
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    api.create(&dry, &cm("dry", json!({})))
        .await
        .expect("dry run");
    assert_eq!(
        api_error(api.get("dry").await.expect_err("not stored")).0,
        404
    );

    api.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(api_error(api.get("a").await.expect_err("gone")).0, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn patches_and_finalizers() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &cm("p", json!({"a": "1"})))
        .await
        .expect("create");
    let pp = PatchParams::default();
    let p = api
        .patch(
            "p",
            &pp,
            &Patch::Merge(
                json!({"metadata": {"labels": {"b": "2"}, "finalizers": ["example.com/f"]}}),
            ),
        )
        .await
        .expect("merge patch");
    assert_eq!(p.metadata.labels.as_ref().map(|l| l.len()), Some(2));
    // Deleting with a finalizer only marks the object.
    api.delete("p", &DeleteParams::default())
        .await
        .expect("delete");
    let marked = api.get("p").await.expect("still there");
    assert!(marked.metadata.deletion_timestamp.is_some());
    // A failing JSON-patch test op is rejected (kube-rs's finalizer helper relies on this).
    let bad: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/finalizers/0", "value": "other"},
        {"op": "remove", "path": "/metadata/finalizers/0"}
    ]))
    .expect("patch");
    assert_eq!(
        api_error(
            api.patch("p", &pp, &Patch::<()>::Json(bad))
                .await
                .expect_err("test op")
        )
        .0,
        422
    );
    // Removing the last finalizer completes the deletion.
    let good: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/finalizers/0", "value": "example.com/f"},
        {"op": "remove", "path": "/metadata/finalizers/0"}
    ]))
    .expect("patch");
    api.patch("p", &pp, &Patch::<()>::Json(good))
        .await
        .expect("remove finalizer");
    assert_eq!(api_error(api.get("p").await.expect_err("deleted")).0, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn lists_select_and_paginate() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..7 {
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        api.create(
            &PostParams::default(),
            &cm(&format!("c{i}"), json!({"tier": tier, "n": i.to_string()})),
        )
        .await
        .expect("create");
    }
    let even = api
        .list(&ListParams::default().labels("tier=even"))
        .await
        .expect("list");
    assert_eq!(even.items.len(), 4);
    let set = api
        .list(&ListParams::default().labels("n in (1,2,3),tier!=odd"))
        .await
        .expect("list");
    assert_eq!(set.items.len(), 1);
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=c3"))
        .await
        .expect("fields");
    assert_eq!(by_name.items.len(), 1);
    let (code, _, _) = api_error(
        api.list(&ListParams::default().fields("spec.nope=1"))
            .await
            .expect_err("bad field"),
    );
    assert_eq!(code, 400);

    let mut names = Vec::new();
    let mut lp = ListParams::default().limit(3);
    loop {
        let page = api.list(&lp).await.expect("page");
        // Every namespace has its CA bundle, as on a real cluster.
        names.extend(
            page.items
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .filter(|n| n != ROOT_CA),
        );
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => lp = lp.continue_token(&c),
            _ => break,
        }
    }
    assert_eq!(names, (0..7).map(|i| format!("c{i}")).collect::<Vec<_>>());

    let meta = api
        .list_metadata(&ListParams::default())
        .await
        .expect("metadata list");
    assert_eq!(meta.items.len(), 7 + 1, "c0..c6 and the CA bundle");
    let ns: Api<Namespace> = Api::all(client);
    assert!(
        ns.list(&ListParams::default())
            .await
            .expect("namespaces")
            .items
            .len()
            >= 4
    );
    server.shutdown().await;
}

#[tokio::test]
async fn watch_replays_from_a_resource_version() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let first = api
        .create(&PostParams::default(), &cm("w", json!({})))
        .await
        .expect("create");
    let from = first.metadata.resource_version.clone().expect("rv");
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .expect("patch");
    api.delete("w", &DeleteParams::default())
        .await
        .expect("delete");
    let stream = api
        .watch(&WatchParams::default().timeout(5), &from)
        .await
        .expect("watch");
    let events: Vec<_> = stream.take(2).try_collect().await.expect("events");
    assert!(matches!(events[0], WatchEvent::Modified(_)));
    assert!(matches!(events[1], WatchEvent::Deleted(_)));

    // The runtime watcher with streaming lists sees the current state.
    api.create(&PostParams::default(), &cm("live", json!({})))
        .await
        .expect("create");
    let cfg = kube::runtime::watcher::Config::default().streaming_lists();
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        let mut s = kube::runtime::watcher(api.clone(), cfg).boxed();
        while let Some(ev) = s.try_next().await.expect("watcher") {
            if let kube::runtime::watcher::Event::InitDone = ev {
                return true;
            }
        }
        false
    })
    .await
    .expect("initial events end");
    assert!(seen);
    server.shutdown().await;
}

#[tokio::test]
async fn status_subresource_and_generation() {
    let (server, client) = start().await;
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        "status": {"replicas": 9}
    }))
    .expect("deployment");
    let created = api
        .create(&PostParams::default(), &d)
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    assert_eq!(created.spec.replicas, Some(1), "defaulted");
    assert!(
        created.status.as_ref().and_then(|s| s.replicas).is_none(),
        "status dropped on create"
    );
    let pp = PatchParams::default();
    let st = api
        .patch_status(
            "web",
            &pp,
            &Patch::Merge(json!({"status": {"replicas": 1}, "spec": {"replicas": 5}})),
        )
        .await
        .expect("status");
    assert_eq!(st.status.and_then(|s| s.replicas), Some(1));
    assert_eq!(st.spec.replicas, Some(1), "status writes ignore spec");
    assert_eq!(st.metadata.generation, Some(1));
    let sp = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"spec": {"replicas": 3}, "status": {"replicas": 0}})),
        )
        .await
        .expect("spec");
    assert_eq!(sp.metadata.generation, Some(2));
    assert_eq!(
        sp.status.and_then(|s| s.replicas),
        Some(1),
        "main writes ignore status"
    );
    let scale = api.get_scale("web").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    let bad: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"},
        "spec": {"selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    }))
    .expect("deployment");
    let (code, reason, msg) = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(msg.contains("spec.template.metadata.labels"), "{msg}");
    server.shutdown().await;
}

#[tokio::test]
async fn custom_resources_are_validated_pruned_and_defaulted() {
    let (server, client) = start().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["size"], "properties": {
                        "size": {"type": "integer", "minimum": 1, "maximum": 10},
                        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    }))
    .expect("crd");
    let created = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect("create crd");
    let conds = created
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert!(
        conds
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );
    assert!(
        conds
            .iter()
            .any(|c| c.type_ == "NamesAccepted" && c.status == "True")
    );

    let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "widgets");
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
        "spec": {"size": 3, "extra": "dropped"}
    }))
    .expect("widget");
    let got = widgets
        .create(&PostParams::default(), &w)
        .await
        .expect("create widget");
    assert_eq!(got.data["spec"]["color"], "red", "defaulted");
    assert!(got.data["spec"].get("extra").is_none(), "pruned");

    let invalid: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
        "spec": {"size": 11, "color": "green"}
    }))
    .expect("widget");
    let status = match widgets
        .create(&PostParams::default(), &invalid)
        .await
        .expect_err("invalid")
    {
        kube::Error::Api(s) => s,
        other => panic!("{other:?}"),
    };
    assert_eq!(status.code, 422);
    let mut fields: Vec<String> = status
        .details
        .map(|d| d.causes)
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.field)
        .collect();
    fields.sort();
    assert_eq!(fields, vec!["spec.color", "spec.size"]);

    // Discovery serves the new kind at once.
    let discovery = kube::Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    assert!(discovery.groups().any(|g| g.name() == "example.com"));

    // Deleting the CRD stops serving it.
    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .expect("delete crd");
    assert_eq!(
        api_error(widgets.get("w1").await.expect_err("not served")).0,
        404
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_status_objects() {
    let (server, _client) = start().await;
    let http = |method: &str, path: &str, ct: &str, body: Vec<u8>| {
        let url = format!("{}{path}", server.url());
        let auth = support::curl_auth(&server);
        let method = method.to_string();
        let ct = ct.to_string();
        async move {
            let out = tokio::task::spawn_blocking(move || {
                use std::io::Write;
                let mut child = std::process::Command::new("curl")
                    .args([
                        "-s",
                        "-o",
                        "-",
                        "-w",
                        "\n%{http_code}",
                        "-X",
                        &method,
                        "-H",
                        &format!("Content-Type: {ct}"),
                        "--data-binary",
                        "@-",
                        &url,
                    ])
                    .args(&auth)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .expect("curl");
                let _ = child.stdin.take().expect("stdin").write_all(&body);
                child.wait_with_output().expect("curl output")
            })
            .await
            .expect("join");
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let (body, code) = text.rsplit_once('\n').expect("code line");
            (
                code.parse::<u16>().expect("code"),
                serde_json::from_str::<serde_json::Value>(body).unwrap_or_default(),
            )
        }
    };
    let cm_path = "/api/v1/namespaces/default/configmaps";
    let (code, body) = http("POST", cm_path, "application/json", b"{not json".to_vec()).await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(body["kind"], "Status");
    let (code, _) = http(
        "POST",
        cm_path,
        "application/json",
        vec![b' '; 4 * 1024 * 1024],
    )
    .await;
    assert_eq!(code, 413);
    let (code, _) = http("PUT", cm_path, "application/json", b"{}".to_vec()).await;
    assert_eq!(code, 405);
    let (code, _) = http(
        "PATCH",
        &format!("{cm_path}/x"),
        "text/plain",
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(code, 415);
    let (code, body) = http("GET", "/api/v1/nothing", "application/json", Vec::new()).await;
    assert_eq!((code, body["reason"].as_str()), (404, Some("NotFound")));
    server.shutdown().await;
}

#[tokio::test]
async fn crd_versions_and_scale_subresource() {
    let (server, client) = start().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}});
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "pools.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "pools", "kind": "Pool"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}}]}
    }))
    .expect("crd");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("create crd");
    // Two storage versions are rejected.
    let mut two = crd.clone();
    two.metadata.name = Some("others.example.com".into());
    two.spec.names.plural = "others".into();
    two.spec.names.kind = "Other".into();
    two.spec.versions[0].storage = true;
    assert_eq!(
        api_error(
            crds.create(&PostParams::default(), &two)
                .await
                .expect_err("two storage")
        )
        .0,
        422
    );

    let ar = |v: &str| {
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", v, "Pool"), "pools")
    };
    let v1: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar("v1"));
    let beta: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar("v1beta1"));
    let p: DynamicObject =
        serde_json::from_value(json!({"apiVersion": "example.com/v1beta1", "kind": "Pool",
        "metadata": {"name": "p"}, "spec": {"replicas": 2}}))
        .expect("pool");
    beta.create(&PostParams::default(), &p)
        .await
        .expect("create through v1beta1");
    let read = v1.get("p").await.expect("read through v1");
    assert_eq!(
        read.types.as_ref().map(|t| t.api_version.as_str()),
        Some("example.com/v1")
    );
    // The preferred version in discovery is the GA one.
    let discovery = kube::Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    let group = discovery
        .groups()
        .find(|g| g.name() == "example.com")
        .expect("group");
    assert_eq!(group.preferred_version_or_latest(), "v1");

    let scale = v1.get_scale("p").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    v1.patch_scale(
        "p",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .expect("patch scale");
    assert_eq!(v1.get("p").await.expect("get").data["spec"]["replicas"], 5);
    server.shutdown().await;
}

#[tokio::test]
async fn deletecollection_and_metadata_watches() {
    let (server, client) = start().await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for (name, tier) in [("k1", "keep"), ("d1", "drop"), ("d2", "drop")] {
        api.create(&PostParams::default(), &cm(name, json!({"tier": tier})))
            .await
            .expect("create");
    }
    let rv = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    // kube-rs's metadata watcher (Controller::owns uses it) sees PartialObjectMetadata events.
    let stream = api
        .watch_metadata(&WatchParams::default().timeout(5), &rv)
        .await
        .expect("watch metadata");
    let deleted = api
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("tier=drop"),
        )
        .await
        .expect("deletecollection");
    let names: Vec<String> = deleted
        .left()
        .expect("a list")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(names, vec!["d1".to_string(), "d2".to_string()]);
    let left: Vec<String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .filter(|n| n != ROOT_CA)
        .collect();
    assert_eq!(left, vec!["k1".to_string()]);
    let events: Vec<_> = stream.take(2).try_collect().await.expect("events");
    for e in &events {
        match e {
            WatchEvent::Deleted(m) => {
                assert!(
                    m.metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.starts_with('d'))
                );
                assert!(
                    m.metadata
                        .labels
                        .as_ref()
                        .is_some_and(|l| l["tier"] == "drop")
                );
            }
            other => panic!("expected DELETED metadata events, got {other:?}"),
        }
    }
    server.shutdown().await;
}

/// Equality-selected lists read the store's label index; they must answer exactly what a scan
/// answers: after label changes and deletes, across namespaces, with pages, and combined with
/// set-based requirements and field selectors.
#[tokio::test]
async fn label_selected_lists_match_a_scan() {
    let (server, client) = start().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "other"}})).expect("namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let default: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let other: Api<ConfigMap> = Api::namespaced(client.clone(), "other");
    for i in 0..30 {
        let tier = if i % 3 == 0 { "db" } else { "web" };
        let labels = json!({"app": "shop", "tier": tier, "n": i.to_string()});
        default
            .create(
                &PostParams::default(),
                &cm(&format!("c{i:02}"), labels.clone()),
            )
            .await
            .expect("create");
        if i < 5 {
            other
                .create(&PostParams::default(), &cm(&format!("o{i}"), labels))
                .await
                .expect("create");
        }
    }
    // Move one object out of the term and one into it, delete another.
    default
        .patch(
            "c01",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "db"}}})),
        )
        .await
        .expect("relabel");
    default
        .patch(
            "c03",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "web"}}})),
        )
        .await
        .expect("relabel");
    default
        .delete("c06", &DeleteParams::default())
        .await
        .expect("delete");
    let names = |list: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        list.items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    };
    let scan = |selector: &str, all: &[ConfigMap]| -> Vec<String> {
        let sel = mni_apimachinery::Selector::parse(selector).expect("selector");
        all.iter()
            .filter(|c| sel.matches(&c.metadata.labels.clone().unwrap_or_default()))
            .filter_map(|c| c.metadata.name.clone())
            .collect()
    };
    let everything = default
        .list(&ListParams::default())
        .await
        .expect("list")
        .items;
    for selector in [
        "tier=db",
        "tier==db,app=shop",
        "tier in (db)",
        "tier=db,n notin (0,9)",
        "app=shop,tier!=db",
        "tier=cache",
    ] {
        let got = names(
            default
                .list(&ListParams::default().labels(selector))
                .await
                .expect("list"),
        );
        assert_eq!(got, scan(selector, &everything), "{selector}");
    }
    assert_eq!(
        names(
            default
                .list(&ListParams::default().labels("tier=db"))
                .await
                .expect("list")
        ),
        [
            "c00", "c01", "c09", "c12", "c15", "c18", "c21", "c24", "c27"
        ]
    );
    // Pages of an indexed list: every match once, in order.
    let mut paged = Vec::new();
    let mut params = ListParams::default().labels("tier=db").limit(4);
    loop {
        let page = default.list(&params).await.expect("page");
        let token = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        paged.extend(names(page));
        match token {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    assert_eq!(paged, scan("tier=db", &everything));
    // Across namespaces, and with a field selector.
    let all: Api<ConfigMap> = Api::all(client.clone());
    let across = names(
        all.list(&ListParams::default().labels("tier=db"))
            .await
            .expect("list"),
    );
    assert_eq!(across.iter().filter(|n| n.starts_with('o')).count(), 2);
    assert_eq!(across.len(), 11);
    let one = names(
        all.list(
            &ListParams::default()
                .labels("tier=db")
                .fields("metadata.namespace=other"),
        )
        .await
        .expect("list"),
    );
    assert_eq!(one, ["o0", "o3"]);
    server.shutdown().await;
}
