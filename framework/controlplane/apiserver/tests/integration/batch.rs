//! `batch/v1` as kube-apiserver admits it: a Job gets upstream's defaults and a generated
//! selector, a CronJob its defaults, and the common mistakes are refused with upstream's
//! messages (status 422, a cause per field), storing nothing.

use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::support;
use support::start;

fn job(name: &str, restart: Option<&str>) -> Value {
    let mut spec = json!({"containers": [{"name": "pi", "image": "perl:5.34"}]});
    if let Some(r) = restart {
        spec["restartPolicy"] = json!(r);
    }
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": spec}},
    })
}

fn cron_job(name: &str, schedule: &str) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "backup", "image": "busybox:1.36"}],
        }}}}},
    })
}

/// The message of a refused create, after checking it is a 422 Invalid.
async fn refused<K>(api: &Api<K>, body: Value) -> String
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(body).expect("typed body");
    match api.create(&PostParams::default(), &obj).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert_eq!(s.reason, "Invalid", "{s:?}");
            s.message
        }
        other => panic!("expected a 422, got {other:?}"),
    }
}

#[tokio::test]
async fn jobs_get_upstream_defaults_and_a_generated_selector() {
    let (_server, client) = start().await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let created = jobs
        .create(
            &PostParams::default(),
            &serde_json::from_value(job("pi", Some("Never"))).expect("job"),
        )
        .await
        .expect("create");
    let uid = created.metadata.uid.clone().expect("uid");
    let spec = created.spec.expect("spec");
    assert_eq!(spec.completions, Some(1));
    assert_eq!(spec.parallelism, Some(1));
    assert_eq!(spec.backoff_limit, Some(6));
    assert_eq!(spec.completion_mode.as_deref(), Some("NonIndexed"));
    assert_eq!(spec.suspend, Some(false));
    assert_eq!(
        spec.pod_replacement_policy.as_deref(),
        Some("TerminatingOrFailed")
    );
    let selector = spec
        .selector
        .expect("selector")
        .match_labels
        .expect("labels");
    assert_eq!(selector["batch.kubernetes.io/controller-uid"], uid);
    let labels = spec
        .template
        .metadata
        .expect("meta")
        .labels
        .expect("labels");
    for (k, v) in [
        ("batch.kubernetes.io/controller-uid", uid.as_str()),
        ("controller-uid", uid.as_str()),
        ("batch.kubernetes.io/job-name", "pi"),
        ("job-name", "pi"),
    ] {
        assert_eq!(labels.get(k).map(String::as_str), Some(v), "{k}");
    }
    assert_eq!(created.metadata.labels.as_ref(), Some(&labels));

    let crons: Api<CronJob> = Api::namespaced(client, "default");
    let created = crons
        .create(
            &PostParams::default(),
            &serde_json::from_value(cron_job("backup", "@daily")).expect("cronjob"),
        )
        .await
        .expect("create");
    let spec = created.spec;
    assert_eq!(spec.concurrency_policy.as_deref(), Some("Allow"));
    assert_eq!(spec.successful_jobs_history_limit, Some(3));
    assert_eq!(spec.failed_jobs_history_limit, Some(1));
    assert_eq!(spec.suspend, Some(false));
}

#[tokio::test]
async fn common_batch_mistakes_get_upstreams_messages() {
    let (_server, client) = start().await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    // Without a restart policy the pod default (Always) applies, which a Job refuses.
    assert_eq!(
        refused(&jobs, job("forever", None)).await,
        "Job.batch \"forever\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
    );
    let mut negative = job("negative", Some("Never"));
    negative["spec"]["backoffLimit"] = json!(-1);
    negative["spec"]["activeDeadlineSeconds"] = json!(0);
    let message = refused(&jobs, negative).await;
    assert!(
        message
            .contains("spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0")
            && message
                .contains("spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0"),
        "{message}"
    );
    let mut indexed = job("indexed", Some("Never"));
    indexed["spec"]["completionMode"] = json!("Indexed");
    indexed["spec"]["parallelism"] = json!(2);
    assert!(
        refused(&jobs, indexed)
            .await
            .contains("spec.completions: Required value: when completion mode is Indexed")
    );

    let crons: Api<CronJob> = Api::namespaced(client, "default");
    assert_eq!(
        refused(&crons, cron_job("bad", "every day")).await,
        "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"every day\": expected exactly 5 fields, found 2: [every day]"
    );
    assert!(
        refused(&crons, cron_job("range", "61 * * * *"))
            .await
            .ends_with("spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61")
    );
    assert!(
        refused(&crons, cron_job("tz", "TZ=UTC 0 * * * *"))
            .await
            .contains("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    );
    let mut zone = cron_job("zone", "0 3 * * *");
    zone["spec"]["timeZone"] = json!("Mars/Olympus_Mons");
    assert!(refused(&crons, zone).await.contains(
        "spec.timeZone: Invalid value: \"Mars/Olympus_Mons\": unknown time zone Mars/Olympus_Mons"
    ));
    let mut policy = cron_job("policy", "0 3 * * *");
    policy["spec"]["concurrencyPolicy"] = json!("Sometimes");
    assert!(
        refused(&crons, policy)
            .await
            .contains("spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"")
    );
    let mut always = cron_job("always", "0 3 * * *");
    always["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
    assert!(refused(&crons, always).await.contains(
        "spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: \"Always\""
    ));
    let long = "a".repeat(53);
    assert!(
        refused(&crons, cron_job(&long, "0 3 * * *"))
            .await
            .contains("metadata.name: Invalid value: \"aaaa")
    );
    // Nothing refused was stored.
    let stored = crons.list(&Default::default()).await.expect("list");
    assert!(stored.items.is_empty(), "{:?}", stored.items);
    let stored = jobs.list(&Default::default()).await.expect("list");
    assert!(stored.items.is_empty());
}
