//! `wait_for`, `wait_for_condition` and `wait_deleted` against changes made concurrently.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use mni_testkit::{Error, TestEnv, wait_deleted, wait_for, wait_for_condition};
use serde_json::json;

fn configmap(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("phase".to_string(), "new".to_string())])),
        ..ConfigMap::default()
    }
}

fn phase(cm: &ConfigMap) -> Option<&str> {
    cm.data.as_ref()?.get("phase").map(String::as_str)
}

#[tokio::test]
async fn wait_for_sees_a_change_made_concurrently() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    // The object does not exist yet when the wait starts.
    let writer = {
        let cms = cms.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cms.create(&PostParams::default(), &configmap("watched"))
                .await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let patch = json!({"data": {"phase": "done"}});
            cms.patch("watched", &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            Ok::<_, kube::Error>(())
        })
    };
    let began = Instant::now();
    let seen = wait_for(
        &cms,
        "watched",
        |cm| phase(cm) == Some("done"),
        Duration::from_secs(10),
    )
    .await?;
    println!(
        "wait_for saw the concurrent change after {:?}",
        began.elapsed()
    );
    assert_eq!(phase(&seen), Some("done"));
    writer.await??;

    // An object that already matches returns at once.
    wait_for(
        &cms,
        "watched",
        |cm| phase(cm) == Some("done"),
        Duration::from_secs(1),
    )
    .await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_timeout_names_the_object_the_wait_and_the_last_state() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let err = wait_for(&cms, "absent", |_| true, Duration::from_millis(200))
        .await
        .expect_err("never created");
    let message = err.to_string();
    assert!(matches!(err, Error::Timeout { .. }), "{message}");
    assert!(message.contains("ConfigMap default/absent"), "{message}");
    assert!(message.contains("200ms"), "{message}");
    assert!(message.contains("not found"), "{message}");

    cms.create(&PostParams::default(), &configmap("present"))
        .await?;
    let err = wait_for_condition(&cms, "present", "Ready", "True", Duration::from_millis(200))
        .await
        .expect_err("configmaps have no conditions");
    let message = err.to_string();
    assert!(
        message.contains("to have condition Ready=True"),
        "{message}"
    );
    assert!(message.contains("without status"), "{message}");
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn wait_deleted_returns_when_the_object_is_gone() -> anyhow::Result<()> {
    let env = TestEnv::start().await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let mut held = configmap("held");
    held.metadata.finalizers = Some(vec!["example.mni.dev/hold".into()]);
    cms.create(&PostParams::default(), &held).await?;
    cms.delete("held", &DeleteParams::default()).await?;

    // The finalizer keeps it, and the timeout says so.
    let err = wait_deleted(&cms, "held", Duration::from_millis(200))
        .await
        .expect_err("held by a finalizer");
    assert!(err.to_string().contains("example.mni.dev/hold"), "{err}");

    let release = {
        let cms = cms.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let patch = json!({"metadata": {"finalizers": null}});
            cms.patch("held", &PatchParams::default(), &Patch::Merge(&patch))
                .await
        })
    };
    wait_deleted(&cms, "held", Duration::from_secs(10)).await?;
    release.await??;
    // Absent objects are deleted already.
    wait_deleted(&cms, "never-existed", Duration::from_secs(1)).await?;
    env.shutdown().await;
    Ok(())
}
