//! StatefulSets, DaemonSets and Service Endpoints end to end, against an in-process
//! mni-apiserver over real HTTP. Waits are polling loops bounded by 30 s.

use crate::common;

use common::{Env, assert_quiet, deployment, wait_for, wait_rolled_out, workload};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use kube::api::DeleteParams;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statefulset_gets_ordinal_pods_and_status() {
    let env = Env::start().await;
    let sts = workload(
        "StatefulSet",
        "db",
        json!({"replicas": 3, "serviceName": "db"}),
        json!({"containers": [{"name": "db", "image": "postgres:17"}]}),
    );
    env.create::<StatefulSet>(sts).await;
    let s = wait_for("statefulset ready", || async {
        let s = env.api::<StatefulSet>().get("db").await.ok()?;
        let st = s.status.clone()?;
        (st.ready_replicas == Some(3)
            && st.current_replicas == Some(3)
            && st.updated_replicas == Some(3))
        .then_some(s)
    })
    .await;
    let st = s.status.clone().expect("status");
    assert_eq!(st.replicas, 3);
    assert_eq!(st.available_replicas, Some(3));
    assert_eq!(st.observed_generation, Some(1));
    assert!(
        st.update_revision
            .as_deref()
            .is_some_and(|r| r.starts_with("db-"))
    );
    assert_eq!(st.current_revision, st.update_revision);
    let mut names: Vec<String> = env
        .list::<Pod>()
        .await
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    names.sort();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
    let p = env.api::<Pod>().get("db-1").await.expect("db-1");
    let labels = p.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels
            .get("statefulset.kubernetes.io/pod-name")
            .map(String::as_str),
        Some("db-1")
    );
    assert_eq!(
        labels
            .get("apps.kubernetes.io/pod-index")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        labels.get("controller-revision-hash"),
        st.update_revision.as_ref()
    );
    assert_eq!(
        p.spec.as_ref().and_then(|s| s.hostname.as_deref()),
        Some("db-1")
    );
    assert_eq!(
        p.spec.as_ref().and_then(|s| s.subdomain.as_deref()),
        Some("db")
    );
    assert_quiet(&env).await;

    env.patch::<StatefulSet>("db", json!({"spec": {"replicas": 1}}))
        .await;
    wait_for("scaled down to db-0", || async {
        let names: Vec<String> = env
            .list::<Pod>()
            .await
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect();
        let s = env.api::<StatefulSet>().get("db").await.ok()?;
        (names == ["db-0"] && s.status?.replicas == 1).then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemonset_runs_one_pod_on_the_node() {
    let env = Env::start().await;
    let ds = workload(
        "DaemonSet",
        "agent",
        json!({}),
        json!({"containers": [{"name": "agent", "image": "busybox"}]}),
    );
    env.create::<DaemonSet>(ds).await;
    let d = wait_for("daemonset ready", || async {
        let d = env.api::<DaemonSet>().get("agent").await.ok()?;
        (d.status.as_ref()?.number_available == Some(1)).then_some(d)
    })
    .await;
    let st = d.status.expect("status");
    assert_eq!(st.desired_number_scheduled, 1);
    assert_eq!(st.current_number_scheduled, 1);
    assert_eq!(st.number_ready, 1);
    assert_eq!(st.number_misscheduled, 0);
    assert_eq!(st.updated_number_scheduled, Some(1));
    assert_eq!(st.number_unavailable, None);
    assert_eq!(st.observed_generation, Some(1));
    let pods = env.list::<Pod>().await;
    assert_eq!(pods.len(), 1);
    let p = &pods[0];
    assert!(
        p.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("agent-") && n.len() == "agent-".len() + 5)
    );
    assert_eq!(
        p.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some("mni-dev")
    );
    assert_quiet(&env).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_gets_endpoints_of_ready_pods() {
    let env = Env::start().await;
    env.create::<Deployment>(deployment("api", 2, "nginx"))
        .await;
    let mut sick = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "api-sick", "namespace": "default", "labels": {"app": "api"},
            "annotations": {"simulate.mni.dev/fail": "true"}},
        "spec": {"containers": [{"name": "app", "image": "nginx", "ports": [{"name": "http", "containerPort": 8080}]}]}
    });
    env.create::<Pod>(sick.take()).await;
    let svc = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "api", "namespace": "default", "labels": {"tier": "web"}},
        "spec": {"selector": {"app": "api"}, "ports": [{"name": "web", "port": 80, "targetPort": "http"}]}
    });
    env.create::<Service>(svc).await;
    wait_rolled_out(&env, "api", 2).await;
    let ep = wait_for("endpoints", || async {
        let ep = env.api::<Endpoints>().get("api").await.ok()?;
        let subset = ep.subsets.as_ref()?.first()?.clone();
        (subset.addresses.as_ref()?.len() == 2 && subset.not_ready_addresses.as_ref()?.len() == 1)
            .then_some(ep)
    })
    .await;
    assert_eq!(
        ep.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("tier"))
            .map(String::as_str),
        Some("web")
    );
    let subsets = ep.subsets.clone().unwrap_or_default();
    assert_eq!(subsets.len(), 1);
    let ports = subsets[0].ports.clone().unwrap_or_default();
    assert_eq!(ports.len(), 1);
    assert_eq!(
        (ports[0].name.as_deref(), ports[0].port),
        (Some("web"), 8080)
    );
    let pods = env.list::<Pod>().await;
    for a in subsets[0].addresses.iter().flatten() {
        let target = a.target_ref.as_ref().expect("targetRef");
        assert_eq!(target.kind.as_deref(), Some("Pod"));
        let pod = pods
            .iter()
            .find(|p| p.metadata.name == target.name)
            .expect("pod");
        assert_eq!(
            pod.status.as_ref().and_then(|s| s.pod_ip.clone()),
            Some(a.ip.clone())
        );
        assert_ne!(target.name.as_deref(), Some("api-sick"));
    }
    let not_ready = &subsets[0].not_ready_addresses.as_ref().expect("notReady")[0];
    assert_eq!(
        not_ready
            .target_ref
            .as_ref()
            .and_then(|t| t.name.as_deref()),
        Some("api-sick")
    );
    assert_quiet(&env).await;

    env.api::<Service>()
        .delete("api", &DeleteParams::default())
        .await
        .expect("delete service");
    wait_for("endpoints removed", || async {
        env.api::<Endpoints>()
            .get_opt("api")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_statefulset_stops_at_its_first_ordinal_and_heals() {
    let env = Env::start().await;
    let mut sts = workload(
        "StatefulSet",
        "q",
        json!({"replicas": 3, "serviceName": "q"}),
        json!({"containers": [{"name": "q", "image": "rabbitmq"}]}),
    );
    sts["metadata"]["annotations"] = json!({"simulate.mni.dev/fail": "true"});
    env.create::<StatefulSet>(sts).await;
    wait_for("q-0 crash-looping", || async {
        let p = env.api::<Pod>().get_opt("q-0").await.ok()??;
        let cs = p.status?.container_statuses?.first()?.clone();
        let waiting = cs.state?.waiting?.reason?;
        (waiting == "CrashLoopBackOff").then_some(())
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let names: Vec<String> = env
        .list::<Pod>()
        .await
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert_eq!(names, ["q-0"], "OrderedReady waits for q-0 to be ready");
    let s = env.api::<StatefulSet>().get("q").await.expect("sts");
    let st = s.status.expect("status");
    assert_eq!(
        (st.replicas, st.ready_replicas, st.available_replicas),
        (1, None, Some(0))
    );

    env.patch::<StatefulSet>(
        "q",
        json!({"metadata": {"annotations": {"simulate.mni.dev/fail": null}}}),
    )
    .await;
    wait_for("healed", || async {
        let s = env.api::<StatefulSet>().get("q").await.ok()?;
        (s.status?.ready_replicas == Some(3)).then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemonset_with_unmatched_node_selector_schedules_nothing() {
    let env = Env::start().await;
    let ds = workload(
        "DaemonSet",
        "gpu",
        json!({}),
        json!({"nodeSelector": {"accelerator": "h100"},
            "containers": [{"name": "gpu", "image": "driver"}]}),
    );
    env.create::<DaemonSet>(ds).await;
    let st = wait_for("status", || async {
        env.api::<DaemonSet>().get("gpu").await.ok()?.status
    })
    .await;
    assert_eq!(
        (
            st.desired_number_scheduled,
            st.current_number_scheduled,
            st.number_ready
        ),
        (0, 0, 0)
    );
    assert_eq!(st.observed_generation, Some(1));
    assert_quiet(&env).await;
    assert!(env.list::<Pod>().await.is_empty());
    env.stop().await;
}

/// The scheduler binds a pod that fits the node and leaves one asking for more memory than
/// the machine has, or for a node label nobody carries, Pending with kube-scheduler's
/// condition and `FailedScheduling` event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unschedulable_pods_stay_pending_with_the_schedulers_event() {
    use k8s_openapi::api::core::v1::Event;
    let env = Env::start().await;
    let pod = |name: &str, extra: serde_json::Value| {
        let mut spec = json!({"containers": [{"name": "app", "image": "app:1"}]});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    };
    env.create::<Pod>(pod("fits", json!({}))).await;
    env.create::<Pod>(pod(
        "huge",
        json!({"containers": [{"name": "app", "image": "app:1",
            "resources": {"requests": {"memory": "100Ti"}}}]}),
    ))
    .await;
    env.create::<Pod>(pod("picky", json!({"nodeSelector": {"disk": "nvme"}})))
        .await;
    wait_for("fits runs on the node", || async {
        let p = env.api::<Pod>().get("fits").await.ok()?;
        (p.spec?.node_name.as_deref() == Some("mni-dev")
            && p.status?.phase.as_deref() == Some("Running"))
        .then_some(())
    })
    .await;
    for (name, reason) in [
        ("huge", "1 Insufficient memory"),
        (
            "picky",
            "1 node(s) didn't match Pod's node affinity/selector",
        ),
    ] {
        let msg = wait_for("unschedulable condition", || async {
            let p = env.api::<Pod>().get(name).await.ok()?;
            let c = p
                .status?
                .conditions?
                .into_iter()
                .find(|c| c.type_ == "PodScheduled")?;
            (c.status == "False" && c.reason.as_deref() == Some("Unschedulable"))
                .then_some(c.message.unwrap_or_default())
        })
        .await;
        assert!(
            msg.starts_with(&format!("0/1 nodes are available: {reason}.")),
            "{msg}"
        );
        let p = env.api::<Pod>().get(name).await.expect("pod");
        assert!(p.spec.and_then(|s| s.node_name).is_none());
        assert_eq!(p.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
        let event = wait_for("FailedScheduling event", || async {
            env.list::<Event>().await.into_iter().find(|e| {
                e.involved_object.name.as_deref() == Some(name)
                    && e.reason.as_deref() == Some("FailedScheduling")
            })
        })
        .await;
        assert_eq!(event.type_.as_deref(), Some("Warning"));
        assert_eq!(event.message.as_deref(), Some(msg.as_str()));
        assert_eq!(
            event.source.and_then(|s| s.component).as_deref(),
            Some("default-scheduler")
        );
    }
    env.stop().await;
}
