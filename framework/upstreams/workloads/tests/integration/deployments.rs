//! Deployments end to end: the simulator against an in-process mni-apiserver over real
//! HTTP. Every wait is a polling loop bounded by 30 s; nothing asserts how fast things happen.

use crate::common;

use common::{
    Env, assert_quiet, cond, cond_is, deployment, get_deploy, kubectl, pods_of, wait_for,
    wait_rolled_out,
};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_becomes_available_with_exact_status_and_goes_quiet() {
    let env = Env::start().await;
    env.create::<Deployment>(deployment("web", 3, "nginx:1.27"))
        .await;
    let d = wait_rolled_out(&env, "web", 3).await;
    let s = d.status.clone().expect("status");
    assert_eq!(s.observed_generation, Some(1));
    assert_eq!(s.unavailable_replicas, None, "zero is omitted");
    assert_eq!(s.collision_count, None);
    let types: Vec<_> = s
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.clone().unwrap_or_default())
        .collect();
    assert_eq!(types, ["Available", "Progressing"]);
    let avail = cond(&d, "Available").expect("Available");
    assert_eq!(
        avail.message.as_deref(),
        Some("Deployment has minimum availability.")
    );

    let rss = env.list::<ReplicaSet>().await;
    assert_eq!(rss.len(), 1);
    let rs = &rss[0];
    let rs_name = rs.metadata.name.clone().expect("name");
    let hash = rs
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("pod-template-hash"))
        .cloned()
        .expect("hash label");
    assert_eq!(rs_name, format!("web-{hash}"));
    let progressing = cond(&d, "Progressing").expect("Progressing");
    assert_eq!(
        progressing.message.clone().unwrap_or_default(),
        format!("ReplicaSet \"{rs_name}\" has successfully progressed.")
    );
    assert_eq!(
        rs.spec
            .selector
            .match_labels
            .as_ref()
            .and_then(|m| m.get("pod-template-hash")),
        Some(&hash)
    );
    let ann = rs.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        ann.get("deployment.kubernetes.io/revision")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        ann.get("deployment.kubernetes.io/desired-replicas")
            .map(String::as_str),
        Some("3")
    );
    assert_eq!(
        ann.get("deployment.kubernetes.io/max-replicas")
            .map(String::as_str),
        Some("4")
    );
    let d_ann = d.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        d_ann
            .get("deployment.kubernetes.io/revision")
            .map(String::as_str),
        Some("1")
    );
    let owner = rs.metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(owner.len(), 1);
    assert_eq!(
        (owner[0].kind.as_str(), owner[0].name.as_str()),
        ("Deployment", "web")
    );
    assert_eq!(
        (owner[0].controller, owner[0].block_owner_deletion),
        (Some(true), Some(true))
    );
    let rs_status = rs.status.clone().expect("rs status");
    assert_eq!(rs_status.replicas, 3);
    assert_eq!(rs_status.fully_labeled_replicas, Some(3));
    assert_eq!(rs_status.ready_replicas, Some(3));
    assert_eq!(rs_status.available_replicas, Some(3));
    assert_eq!(rs_status.observed_generation, rs.metadata.generation);

    let pods = pods_of(&env, rs.metadata.uid.as_deref().unwrap_or_default()).await;
    assert_eq!(pods.len(), 3);
    let mut ips = std::collections::HashSet::new();
    for p in &pods {
        let name = p.metadata.name.clone().unwrap_or_default();
        let suffix = name
            .strip_prefix(&format!("{rs_name}-"))
            .expect("named after the rs");
        assert_eq!(suffix.len(), 5);
        assert_eq!(
            p.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("pod-template-hash")),
            Some(&hash)
        );
        let r = &p.metadata.owner_references.as_ref().expect("owner")[0];
        assert_eq!(
            (r.kind.as_str(), r.controller, r.block_owner_deletion),
            ("ReplicaSet", Some(true), Some(true))
        );
        assert_eq!(
            p.spec.as_ref().and_then(|s| s.node_name.as_deref()),
            Some("mni-dev")
        );
        let st = p.status.clone().expect("pod status");
        assert_eq!(st.phase.as_deref(), Some("Running"));
        let ip = st.pod_ip.clone().expect("pod ip");
        assert!(ip.starts_with("10.244."), "{ip}");
        assert!(ips.insert(ip.clone()), "IPs are unique");
        assert_eq!(st.pod_ips.as_ref().map(|v| v[0].ip.clone()), Some(ip));
        assert!(st.host_ip.is_some() && st.start_time.is_some());
        for t in ["PodScheduled", "Initialized", "ContainersReady", "Ready"] {
            let c = st
                .conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == t)
                .expect("condition");
            assert_eq!(c.status, "True", "{t}");
        }
        let cs = &st.container_statuses.as_ref().expect("container statuses")[0];
        assert!(cs.ready && cs.started == Some(true) && cs.restart_count == 0);
        assert_eq!(cs.image, "nginx:1.27");
        assert!(
            !cs.image_id.is_empty()
                && cs
                    .container_id
                    .as_deref()
                    .is_some_and(|c| c.starts_with("containerd://"))
        );
        assert!(
            cs.state
                .as_ref()
                .and_then(|s| s.running.as_ref())
                .and_then(|r| r.started_at.as_ref())
                .is_some()
        );
    }
    assert_quiet(&env).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_up_and_down_propagates() {
    let env = Env::start().await;
    env.create::<Deployment>(deployment("scaled", 3, "nginx"))
        .await;
    wait_rolled_out(&env, "scaled", 3).await;
    env.patch::<Deployment>("scaled", json!({"spec": {"replicas": 5}}))
        .await;
    let d = wait_rolled_out(&env, "scaled", 5).await;
    assert_eq!(
        d.status.as_ref().and_then(|s| s.observed_generation),
        Some(2)
    );
    let rs = &env.list::<ReplicaSet>().await[0];
    assert_eq!(rs.spec.replicas, Some(5));
    assert_eq!(
        pods_of(&env, rs.metadata.uid.as_deref().unwrap_or_default())
            .await
            .len(),
        5
    );

    env.patch::<Deployment>("scaled", json!({"spec": {"replicas": 1}}))
        .await;
    wait_rolled_out(&env, "scaled", 1).await;
    let rs = &env.list::<ReplicaSet>().await[0];
    let uid = rs.metadata.uid.clone().unwrap_or_default();
    wait_for("one pod left", || async {
        (pods_of(&env, &uid).await.len() == 1).then_some(())
    })
    .await;
    assert_eq!(
        env.list::<ReplicaSet>().await.len(),
        1,
        "scaling creates no new ReplicaSet"
    );
    assert_quiet(&env).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn template_change_rolls_out_a_new_replica_set() {
    let env = Env::start().await;
    env.create::<Deployment>(deployment("roll", 3, "nginx:1.26"))
        .await;
    wait_rolled_out(&env, "roll", 3).await;
    let first = env.list::<ReplicaSet>().await[0].clone();
    let body = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}});
    env.patch::<Deployment>("roll", body).await;
    let d = wait_rolled_out(&env, "roll", 3).await;
    assert_eq!(d.metadata.generation, Some(2));
    assert_eq!(
        d.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("deployment.kubernetes.io/revision"))
            .map(String::as_str),
        Some("2")
    );
    let rss = env.list::<ReplicaSet>().await;
    assert_eq!(rss.len(), 2);
    let new = rss
        .iter()
        .find(|r| r.metadata.uid != first.metadata.uid)
        .expect("new rs");
    let old = rss
        .iter()
        .find(|r| r.metadata.uid == first.metadata.uid)
        .expect("old rs");
    assert_eq!(new.spec.replicas, Some(3));
    assert_eq!(old.spec.replicas, Some(0));
    let rev = |r: &ReplicaSet| {
        r.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("deployment.kubernetes.io/revision"))
            .cloned()
    };
    assert_eq!(rev(new).as_deref(), Some("2"));
    assert_eq!(rev(old).as_deref(), Some("1"));
    let old_uid = old.metadata.uid.clone().unwrap_or_default();
    wait_for("old pods gone", || async {
        pods_of(&env, &old_uid).await.is_empty().then_some(())
    })
    .await;
    for p in pods_of(&env, new.metadata.uid.as_deref().unwrap_or_default()).await {
        let image = p
            .spec
            .as_ref()
            .map(|s| s.containers[0].image.clone().unwrap_or_default());
        assert_eq!(image.as_deref(), Some("nginx:1.27"));
    }
    assert_quiet(&env).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_deployment_reports_unavailable_and_recovers() {
    let env = Env::start().await;
    let mut manifest = deployment("broken", 2, "nginx");
    manifest["metadata"]["annotations"] = json!({"simulate.mni.dev/fail": "true"});
    manifest["spec"]["progressDeadlineSeconds"] = json!(2);
    env.create::<Deployment>(manifest).await;
    let d = wait_for("Available=False", || async {
        let d = get_deploy(&env, "broken").await;
        (cond_is(&d, "Available", "False", "MinimumReplicasUnavailable")
            && d.status.as_ref()?.updated_replicas == Some(2))
        .then_some(d)
    })
    .await;
    assert_eq!(
        cond(&d, "Available")
            .and_then(|c| c.message.clone())
            .as_deref(),
        Some("Deployment does not have minimum availability.")
    );
    let pods = env.list::<Pod>().await;
    assert_eq!(pods.len(), 2);
    for p in &pods {
        let st = p.status.clone().expect("status");
        assert_eq!(st.phase.as_deref(), Some("Running"));
        let ready = st
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "Ready")
            .expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_deref()),
            ("False", Some("ContainersNotReady"))
        );
        let cs = &st.container_statuses.expect("container statuses")[0];
        assert!(!cs.ready && cs.restart_count >= 1);
        let waiting = cs
            .state
            .as_ref()
            .and_then(|s| s.waiting.as_ref())
            .expect("waiting");
        assert_eq!(waiting.reason.as_deref(), Some("CrashLoopBackOff"));
    }
    wait_for("ProgressDeadlineExceeded", || async {
        let d = get_deploy(&env, "broken").await;
        cond_is(&d, "Progressing", "False", "ProgressDeadlineExceeded").then_some(())
    })
    .await;

    env.patch::<Deployment>(
        "broken",
        json!({"metadata": {"annotations": {"simulate.mni.dev/fail": null}}}),
    )
    .await;
    let d = wait_rolled_out(&env, "broken", 2).await;
    assert_eq!(d.status.as_ref().and_then(|s| s.unavailable_replicas), None);
    for p in env.list::<Pod>().await {
        let cs = &p
            .status
            .and_then(|s| s.container_statuses)
            .expect("statuses")[0];
        assert!(cs.ready && cs.state.as_ref().is_some_and(|s| s.running.is_some()));
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_strategy_never_runs_old_and_new_together() {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let env = Env::start().await;
    let mut manifest = deployment("batch", 2, "app:1");
    manifest["spec"]["strategy"] = json!({"type": "Recreate"});
    env.create::<Deployment>(manifest).await;
    wait_rolled_out(&env, "batch", 2).await;
    // Record every ReplicaSet size the cluster goes through during the rollout.
    let stream = watcher(env.api::<ReplicaSet>(), watcher::Config::default()).applied_objects();
    let overlap = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = overlap.clone();
    let observer = tokio::spawn(async move {
        futures::pin_mut!(stream);
        let mut sizes = std::collections::HashMap::new();
        while let Some(Ok(rs)) = stream.next().await {
            sizes.insert(rs.metadata.uid.clone(), rs.spec.replicas.unwrap_or(0));
            if sizes.values().filter(|n| **n > 0).count() > 1 {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    let body = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}});
    env.patch::<Deployment>("batch", body).await;
    let d = wait_rolled_out(&env, "batch", 2).await;
    assert_eq!(d.metadata.generation, Some(2));
    observer.abort();
    assert!(
        !overlap.load(std::sync::atomic::Ordering::SeqCst),
        "old and new ReplicaSets were both scaled up"
    );
    let rss = env.list::<ReplicaSet>().await;
    let mut sizes: Vec<i32> = rss.iter().map(|r| r.spec.replicas.unwrap_or(0)).collect();
    sizes.sort();
    assert_eq!(sizes, [0, 2]);
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_delay_holds_readiness_back() {
    let env = Env::start().await;
    let mut manifest = deployment("slow", 1, "nginx");
    manifest["spec"]["template"]["metadata"]["annotations"] =
        json!({"simulate.mni.dev/ready-delay": "2s"});
    env.create::<Deployment>(manifest).await;
    wait_rolled_out(&env, "slow", 1).await;
    let pod = env.list::<Pod>().await.remove(0);
    let st = pod.status.expect("status");
    let start = st.start_time.expect("startTime").0;
    let ready = st
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    let since = ready
        .last_transition_time
        .clone()
        .expect("lastTransitionTime")
        .0;
    assert!(
        since.duration_since(start) >= jiff::SignedDuration::from_secs(2),
        "ready at {since}, started {start}"
    );
    let cs = &st.container_statuses.expect("statuses")[0];
    let running_since = cs
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.clone())
        .expect("startedAt")
        .0;
    assert!(
        running_since < since,
        "containers run before they are ready"
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_rollout_status_and_wait_work() {
    let pki = tempfile::tempdir().expect("tempdir");
    let env = Env::start_tls(&pki.path().join("pki")).await;
    env.create::<Deployment>(deployment("kweb", 2, "nginx"))
        .await;
    let (ok, out) = kubectl(
        &env,
        &["rollout", "status", "deployment/kweb", "--timeout=30s"],
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("successfully rolled out"), "{out}");
    let (ok, out) = kubectl(
        &env,
        &[
            "wait",
            "--for=condition=Available",
            "deployment/kweb",
            "--timeout=30s",
        ],
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("condition met"), "{out}");

    let mut broken = deployment("kbroken", 1, "nginx");
    broken["spec"]["template"]["metadata"]["annotations"] =
        json!({"simulate.mni.dev/fail": "true"});
    broken["spec"]["progressDeadlineSeconds"] = json!(2);
    env.create::<Deployment>(broken).await;
    let (ok, out) = kubectl(
        &env,
        &["rollout", "status", "deployment/kbroken", "--timeout=30s"],
    )
    .await;
    assert!(!ok, "{out}");
    assert!(out.contains("exceeded its progress deadline"), "{out}");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_that_refuses_pods_shows_as_replica_failure_until_raised() {
    use k8s_openapi::api::core::v1::{Event, ResourceQuota};
    let env = Env::start().await;
    env.create::<ResourceQuota>(json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "pods", "namespace": "default"},
        "spec": {"hard": {"pods": "1"}},
    }))
    .await;
    env.create::<Deployment>(deployment("web", 3, "nginx:1.27"))
        .await;
    let d = wait_for("ReplicaFailure on the deployment", || async {
        let d = get_deploy(&env, "web").await;
        cond_is(&d, "ReplicaFailure", "True", "FailedCreate").then_some(d)
    })
    .await;
    let message = cond(&d, "ReplicaFailure")
        .and_then(|c| c.message.clone())
        .unwrap_or_default();
    assert!(
        message.contains("exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1"),
        "{message}"
    );
    let rss = env.list::<ReplicaSet>().await;
    let failing = rss[0]
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.type_.as_deref() == Some("ReplicaFailure"))
        })
        .expect("ReplicaFailure on the ReplicaSet");
    assert_eq!(failing.reason.as_deref(), Some("FailedCreate"));
    let events = env.list::<Event>().await;
    assert!(
        events
            .iter()
            .any(|e| e.reason.as_deref() == Some("FailedCreate")
                && e.type_.as_deref() == Some("Warning")
                && e.message
                    .as_deref()
                    .is_some_and(|m| m.starts_with("Error creating: pods \"web-"))),
        "{events:?}"
    );

    env.patch::<ResourceQuota>("pods", json!({"spec": {"hard": {"pods": "3"}}}))
        .await;
    let d = wait_rolled_out(&env, "web", 3).await;
    assert!(cond(&d, "ReplicaFailure").is_none(), "{d:?}");
}
