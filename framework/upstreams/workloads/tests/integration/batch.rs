//! Jobs, CronJobs, EndpointSlices and the node, against a real API server over HTTP with the
//! simulator running: Jobs run their pods to completion (in parallel, indexed, or failing
//! into their back-off limit), a CronJob starts its Job on schedule, EndpointSlices follow a
//! Service's pods, and the node is registered with a heartbeat Lease.

use crate::common;

use common::{Env, assert_quiet, deployment, wait_for};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use serde_json::{Value, json};

fn job(name: &str, spec: Value, annotations: Value) -> Value {
    let mut spec = spec;
    spec["template"] = json!({
        "metadata": {"annotations": annotations},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox:1.36"}]},
    });
    json!({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

fn condition<'a>(job: &'a Job, type_: &str) -> Option<&'a str> {
    job.status
        .as_ref()?
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_ && c.status == "True")
        .and_then(|c| c.reason.as_deref())
}

async fn finished_job(env: &Env, name: &str, type_: &str) -> Job {
    let api: Api<Job> = env.api();
    wait_for(&format!("job {name} {type_}"), || async {
        let j = api.get(name).await.ok()?;
        condition(&j, type_).is_some().then_some(j)
    })
    .await
}

async fn pods_of(env: &Env, job: &str) -> Vec<Pod> {
    let mut pods: Vec<Pod> = env
        .list::<Pod>()
        .await
        .into_iter()
        .filter(|p| {
            p.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("job-name"))
                .map(String::as_str)
                == Some(job)
        })
        .collect();
    pods.sort_by_key(|p| p.metadata.name.clone());
    pods
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_run_their_pods_to_completion() {
    let env = Env::start().await;
    env.create::<Job>(job(
        "batch",
        json!({"completions": 3, "parallelism": 2}),
        json!({}),
    ))
    .await;
    let done = finished_job(&env, "batch", "Complete").await;
    assert_eq!(
        condition(&done, "SuccessCriteriaMet"),
        Some("CompletionsReached")
    );
    let status = done.status.clone().expect("status");
    assert_eq!(status.succeeded, Some(3));
    assert_eq!(status.active, None);
    assert!(status.start_time.is_some() && status.completion_time.is_some());
    let pods = pods_of(&env, "batch").await;
    assert_eq!(pods.len(), 3, "one pod per completion");
    for p in &pods {
        let s = p.status.as_ref().expect("pod status");
        assert_eq!(s.phase.as_deref(), Some("Succeeded"));
        let terminated = s.container_statuses.as_ref().expect("containers")[0]
            .state
            .as_ref()
            .and_then(|st| st.terminated.as_ref())
            .expect("terminated");
        assert_eq!(
            (terminated.exit_code, terminated.reason.as_deref()),
            (0, Some("Completed"))
        );
    }

    // Indexed: each index completes once, on a pod that carries it.
    env.create::<Job>(job(
        "indexed",
        json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"}),
        json!({}),
    ))
    .await;
    let done = finished_job(&env, "indexed", "Complete").await;
    assert_eq!(
        done.status.expect("status").completed_indexes.as_deref(),
        Some("0-2")
    );
    let mut indexes: Vec<String> = pods_of(&env, "indexed")
        .await
        .iter()
        .filter_map(|p| {
            p.metadata
                .annotations
                .as_ref()?
                .get("batch.kubernetes.io/job-completion-index")
                .cloned()
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2"]);
    assert_quiet(&env).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_job_backs_off_and_stops_at_its_limit() {
    let env = Env::start().await;
    env.create::<Job>(job(
        "flaky",
        json!({"backoffLimit": 1}),
        json!({"simulate.mni.dev/fail": "true"}),
    ))
    .await;
    let failed = finished_job(&env, "flaky", "Failed").await;
    assert_eq!(condition(&failed, "Failed"), Some("BackoffLimitExceeded"));
    assert_eq!(
        condition(&failed, "FailureTarget"),
        Some("BackoffLimitExceeded")
    );
    let status = failed.status.expect("status");
    assert_eq!(status.failed, Some(2), "the first try and one retry");
    assert_eq!(status.succeeded, None);
    let pods = pods_of(&env, "flaky").await;
    assert_eq!(pods.len(), 2);
    for p in &pods {
        assert_eq!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Failed")
        );
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cron_job_starts_its_job_on_schedule() {
    let env = Env::start().await;
    env.create::<CronJob>(json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "tick", "namespace": "default"},
        "spec": {"schedule": "@every 2s", "jobTemplate": {
            "metadata": {"labels": {"app": "tick"}},
            "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                "containers": [{"name": "tick", "image": "busybox:1.36"}]}}}}},
    }))
    .await;
    let cron: Api<CronJob> = env.api();
    let ran = wait_for("the CronJob's first successful run", || async {
        let cj = cron.get("tick").await.ok()?;
        let s = cj.status.clone()?;
        (s.last_successful_time.is_some() && s.active.is_none()).then_some(cj)
    })
    .await;
    let status = ran.status.expect("status");
    let scheduled = status.last_schedule_time.expect("lastScheduleTime").0;
    let jobs = env.list::<Job>().await;
    let expected = format!("tick-{}", scheduled.as_second().div_euclid(60));
    let job = jobs
        .iter()
        .find(|j| j.metadata.name.as_deref() == Some(expected.as_str()))
        .unwrap_or_else(|| panic!("no job {expected} in {jobs:?}"));
    assert_eq!(job.metadata.labels.as_ref().expect("labels")["app"], "tick");
    let owner = &job.metadata.owner_references.as_ref().expect("owner")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("CronJob", Some(true))
    );
    assert!(
        job.metadata
            .annotations
            .as_ref()
            .expect("annotations")
            .contains_key("batch.kubernetes.io/cronjob-scheduled-timestamp")
    );
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_slices_follow_the_services_pods() {
    let env = Env::start().await;
    env.create::<k8s_openapi::api::apps::v1::Deployment>(deployment("web", 2, "nginx:1.27"))
        .await;
    env.create::<Service>(json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }))
    .await;
    let slices: Api<EndpointSlice> = env.api();
    let slice = wait_for("a slice with two ready endpoints", || async {
        let list = slices.list(&Default::default()).await.ok()?;
        let s = list.items.into_iter().find(|s| {
            s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("kubernetes.io/service-name"))
                .map(String::as_str)
                == Some("web")
        })?;
        let ready = s
            .endpoints
            .iter()
            .flatten()
            .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
            .count();
        (ready == 2).then_some(s)
    })
    .await;
    assert_eq!(slice.address_type, "IPv4");
    assert!(
        slice
            .metadata
            .name
            .as_deref()
            .expect("name")
            .starts_with("web-")
    );
    let labels = slice.metadata.labels.as_ref().expect("labels");
    assert_eq!(
        labels["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io"
    );
    let port = &slice.ports.as_ref().expect("ports")[0];
    assert_eq!(
        (port.name.as_deref(), port.port, port.protocol.as_deref()),
        (Some("http"), Some(8080), Some("TCP"))
    );
    let endpoint = &slice.endpoints.as_ref().expect("endpoints")[0];
    assert_eq!(endpoint.node_name.as_deref(), Some("mni-dev"));
    assert_eq!(
        endpoint.target_ref.as_ref().and_then(|r| r.kind.as_deref()),
        Some("Pod")
    );
    // The Deployment's own status catches up after its pods are ready; wait for it too.
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = env.api();
    wait_for("the deployment available", || async {
        let d = deployments.get("web").await.ok()?;
        let st = d.status?;
        (st.available_replicas == Some(2) && st.updated_replicas == Some(2)).then_some(())
    })
    .await;
    assert_quiet(&env).await;

    // Scaled to zero: one placeholder slice without endpoints.
    env.patch::<k8s_openapi::api::apps::v1::Deployment>("web", json!({"spec": {"replicas": 0}}))
        .await;
    // The Service's slices only: `default` also holds the `kubernetes` Service's.
    let of_web = ListParams::default().labels("kubernetes.io/service-name=web");
    wait_for("an empty slice", || async {
        let list = slices.list(&of_web).await.ok()?;
        (list.items.len() == 1 && list.items[0].endpoints.as_ref().is_none_or(Vec::is_empty))
            .then_some(())
    })
    .await;
    // The Service gone, its slices go too.
    let services: Api<Service> = env.api();
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    wait_for("no slices", || async {
        slices
            .list(&of_web)
            .await
            .ok()?
            .items
            .is_empty()
            .then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_is_registered_with_a_heartbeat() {
    let env = Env::start().await;
    let nodes: Api<Node> = Api::all(env.client.clone());
    let node = wait_for("the node", || async { nodes.get("mni-dev").await.ok() }).await;
    let status = node.status.expect("status");
    let ready = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready")
        .expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref()),
        ("True", Some("KubeletReady"))
    );
    assert!(status.capacity.expect("capacity").contains_key("cpu"));
    assert_eq!(status.node_info.expect("info").kubelet_version, "v1.37.2");
    let leases: Api<Lease> = Api::namespaced(env.client.clone(), "kube-node-lease");
    let lease = wait_for("the node lease", || async {
        leases.get("mni-dev").await.ok()
    })
    .await;
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("mni-dev"));
    assert_eq!(spec.lease_duration_seconds, Some(40));
    assert!(spec.renew_time.is_some());
    env.stop().await;
}
