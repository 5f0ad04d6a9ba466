//! Watch semantics over HTTP with kube-rs: replay equals final state under concurrent writers,
//! 410 Gone after compaction, bookmarks, timeouts; and the remaining list/CRD semantics.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use mni_apiserver::Server;

use crate::support;
use serde_json::json;

use support::start_with as start;

fn cm(name: &str, v: u32) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"v": v.to_string()}}))
    .expect("configmap")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaying_a_watch_reproduces_the_final_state_under_concurrent_writers() {
    let (server, client) = start(Server::builder()).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let start_rv = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .expect("rv");
    let watch_api = api.clone();
    let from = start_rv.clone();
    let watcher = tokio::spawn(async move {
        let stream = watch_api
            .watch(&WatchParams::default().timeout(60), &from)
            .await
            .expect("watch");
        tokio::pin!(stream);
        let mut events = Vec::new();
        while let Some(ev) = stream.try_next().await.expect("event") {
            let done = matches!(&ev, WatchEvent::Added(o) | WatchEvent::Modified(o) if o.metadata.name.as_deref() == Some("done"));
            events.push(ev);
            if done {
                break;
            }
        }
        events
    });
    let mut writers = Vec::new();
    for w in 0..6u32 {
        let api = api.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..25u32 {
                let name = format!("w{w}-{}", i % 5);
                match i % 3 {
                    0 => {
                        let _ = api.create(&PostParams::default(), &cm(&name, i)).await;
                    }
                    1 => {
                        let _ = api
                            .patch(
                                &name,
                                &PatchParams::default(),
                                &Patch::Merge(json!({"data": {"v": i.to_string()}})),
                            )
                            .await;
                    }
                    _ => {
                        let _ = api.delete(&name, &DeleteParams::default()).await;
                    }
                }
            }
        }));
    }
    for w in writers {
        w.await.expect("writer");
    }
    api.create(&PostParams::default(), &cm("done", 0))
        .await
        .expect("sentinel");
    let events = tokio::time::timeout(Duration::from_secs(30), watcher)
        .await
        .expect("in time")
        .expect("join");

    let mut replayed: BTreeMap<String, String> = BTreeMap::new();
    let mut last_rv = 0u64;
    for ev in &events {
        let (obj, deleted) = match ev {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            other => panic!("unexpected event {other:?}"),
        };
        let rv: u64 = obj
            .metadata
            .resource_version
            .as_deref()
            .expect("rv")
            .parse()
            .expect("numeric");
        assert!(
            rv > last_rv,
            "events in order and exactly once: {rv} after {last_rv}"
        );
        last_rv = rv;
        let name = obj.metadata.name.clone().expect("name");
        if deleted {
            replayed.remove(&name);
        } else {
            replayed.insert(
                name,
                obj.data
                    .as_ref()
                    .and_then(|d| d.get("v"))
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    let final_state: BTreeMap<String, String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        // The namespace's CA bundle predates the watch.
        .filter(|c| c.metadata.name.as_deref() != Some("kube-root-ca.crt"))
        .map(|c| {
            (
                c.metadata.name.clone().expect("name"),
                c.data.and_then(|d| d.get("v").cloned()).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(replayed, final_state);
    server.shutdown().await;
}

#[tokio::test]
async fn compacted_versions_are_gone() {
    let (server, client) = start(Server::builder()).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let first = api
        .create(&PostParams::default(), &cm("a", 1))
        .await
        .expect("create");
    let old_rv = first.metadata.resource_version.clone().expect("rv");
    for i in 2..6 {
        api.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"v": i.to_string()}})),
        )
        .await
        .expect("patch");
    }
    server.compact(server.revision()).await.expect("compact");
    // A watch from a compacted revision ends with an ERROR event carrying 410 Expired.
    let stream = api
        .watch(&WatchParams::default().timeout(5), &old_rv)
        .await
        .expect("watch");
    let events: Vec<_> = stream.take(1).collect().await;
    match &events[0] {
        Ok(WatchEvent::Error(e)) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    // An exact list at a compacted revision is a 410 too.
    let lp = ListParams::default()
        .at(&old_rv)
        .matching(kube::api::VersionMatch::Exact);
    match api.list(&lp).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 410),
        other => panic!("expected 410, got {other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn bookmarks_and_timeouts() {
    let (server, client) =
        start(Server::builder().with_bookmark_interval(Duration::from_millis(200))).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let rv = api
        .create(&PostParams::default(), &cm("b", 1))
        .await
        .expect("create")
        .metadata
        .resource_version
        .expect("rv");
    let stream = api
        .watch(&WatchParams::default().timeout(2), &rv)
        .await
        .expect("watch");
    let started = std::time::Instant::now();
    let events: Vec<_> = stream.try_collect().await.expect("stream ends by itself");
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "timeoutSeconds ends the watch, not sooner"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, WatchEvent::Bookmark(b) if b.metadata.resource_version == rv))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn field_validation_warns_or_rejects_unknown_fields() {
    let (server, _client) = start(Server::builder()).await;
    let url = format!("{}/api/v1/namespaces/default/configmaps", server.url());
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"f"},"bogus":1}"#;
    let post = |query: &'static str| {
        let url = format!("{url}{query}");
        let auth = support::curl_auth(&server);
        tokio::task::spawn_blocking(move || {
            std::process::Command::new("curl")
                .args([
                    "-s",
                    "-D",
                    "-",
                    "-o",
                    "/dev/null",
                    "-X",
                    "POST",
                    "-H",
                    "Content-Type: application/json",
                    "-d",
                    body,
                    &url,
                ])
                .args(&auth)
                .output()
                .expect("curl")
        })
    };
    let strict = post("?fieldValidation=Strict").await.expect("join");
    let head = String::from_utf8_lossy(&strict.stdout).to_string();
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let warn = post("?fieldValidation=Warn").await.expect("join");
    let head = String::from_utf8_lossy(&warn.stdout).to_string();
    assert!(head.starts_with("HTTP/1.1 201"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("warning: 299 - \"unknown field \\\"bogus\\\"\""),
        "{head}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_object_leaving_the_selector_is_deleted_with_its_last_matching_content() {
    let (server, client) = start(Server::builder()).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut labelled = cm("leaving", 1);
    labelled.metadata.labels = Some(BTreeMap::from([("watch".into(), "yes".into())]));
    let rv = api
        .create(&PostParams::default(), &labelled)
        .await
        .expect("create")
        .metadata
        .resource_version
        .expect("rv");
    let stream = api
        .watch(&WatchParams::default().labels("watch=yes").timeout(10), &rv)
        .await
        .expect("watch");
    let relabelled = api
        .patch(
            "leaving",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"watch": "no"}}, "data": {"v": "2"}})),
        )
        .await
        .expect("relabel");
    tokio::pin!(stream);
    let event = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
        .await
        .expect("an event in time")
        .expect("a watch event")
        .expect("not the end");
    // kube-apiserver's watch cache: the previous content, at the update's resourceVersion.
    let WatchEvent::Deleted(gone) = event else {
        panic!("expected DELETED, got {event:?}");
    };
    let labels = gone.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get("watch").map(String::as_str), Some("yes"));
    assert_eq!(
        gone.data.unwrap_or_default().get("v").map(String::as_str),
        Some("1")
    );
    assert_eq!(
        gone.metadata.resource_version,
        relabelled.metadata.resource_version
    );
    server.shutdown().await;
}
