//! Event assertions with events published by kube-rs' `Recorder`.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::{Api, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use mni_testkit::{Error, TestEnv};

fn event(reason: &str) -> Event {
    Event {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(format!("{reason} note")),
        action: "Reconcile".into(),
        secondary: None,
    }
}

#[tokio::test]
async fn recorded_events_are_found_and_asserted() -> anyhow::Result<()> {
    let env = TestEnv::builder()
        .with_timeout(Duration::from_secs(10))
        .start()
        .await?;
    let cms: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("evented".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let cm = cms.create(&PostParams::default(), &cm).await?;
    let other = ConfigMap {
        metadata: ObjectMeta {
            name: Some("other".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let other = cms.create(&PostParams::default(), &other).await?;
    assert!(env.events_for(&cm).await?.is_empty());

    let recorder = Recorder::new(
        env.client(),
        Reporter {
            controller: "billing-operator".into(),
            instance: None,
        },
    );
    recorder
        .publish(&event("Created"), &cm.object_ref(&()))
        .await?;
    recorder
        .publish(&event("Unrelated"), &other.object_ref(&()))
        .await?;

    let found = env.assert_event(&cm, "Created").await?;
    assert_eq!(found.message.as_deref(), Some("Created note"));
    assert_eq!(
        found.reporting_component.as_deref(),
        Some("billing-operator")
    );
    let all = env.events_for(&cm).await?;
    assert_eq!(all.len(), 1, "{all:?}");

    // An event published while assert_event waits is seen.
    let later = {
        let recorder = recorder.clone();
        let reference = cm.object_ref(&());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            recorder.publish(&event("Reconciled"), &reference).await
        })
    };
    env.assert_event(&cm, "Reconciled").await?;
    later.await??;

    // A missing reason names the object and what was recorded instead.
    let err = env
        .assert_event_within(&cm, "Deleted", Duration::from_millis(300))
        .await
        .expect_err("never recorded");
    let message = err.to_string();
    assert!(matches!(err, Error::EventNotFound { .. }), "{message}");
    assert!(message.contains("ConfigMap default/evented"), "{message}");
    assert!(
        message.contains(r#"["Created", "Reconciled"]"#),
        "{message}"
    );
    env.shutdown().await;
    Ok(())
}
