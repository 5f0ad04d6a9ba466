//! Reconciling Widgets: owned children created, updated, left alone when unchanged and garbage
//! collected; cleanup behind the finalizer; errors backing off per object.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use k8s_openapi::api::{core::v1::ConfigMap, events::v1::Event};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams},
};
use mni_operator::{Action, Context, ControllerOptions, Reconciler};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{
    Env, Widget, manager, ready_condition, wait_for, widget, widget::WidgetReconciler,
};

#[tokio::test]
async fn owned_config_map_follows_its_widget_and_goes_with_it() {
    let env = Env::start().await;
    let running = manager(env.client.clone())
        .with_controller(WidgetReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");
    let widgets = env.widgets();
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), "default");
    widgets
        .create(&PostParams::default(), &widget("w1", &[("colour", "blue")]))
        .await
        .expect("create widget");

    let cm = wait_for("the owned ConfigMap", || async {
        cms.get_opt("w1-config").await.ok().flatten()
    })
    .await;
    assert_eq!(cm.data.as_ref().unwrap()["colour"], "blue");
    let owner = &cm.owner_references()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("Widget", "w1", Some(true), Some(true))
    );
    let w = wait_for("Ready=True", || async {
        let w = widgets.get("w1").await.ok()?;
        (ready_condition(&w)?.0 == "True").then_some(w)
    })
    .await;
    assert_eq!(w.finalizers(), ["example.mni.dev/cleanup"]);
    assert_eq!(w.status.as_ref().unwrap().observed_generation, Some(1));
    assert_eq!(ready_condition(&w).unwrap().3, Some(1));

    // An update of the spec reaches the child and the observed generation.
    widgets
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"data": {"colour": "red"}}})),
        )
        .await
        .expect("update widget");
    wait_for("the ConfigMap update", || async {
        let cm = cms.get("w1-config").await.ok()?;
        (cm.data?.get("colour")? == "red").then_some(())
    })
    .await;
    wait_for("observedGeneration 2", || async {
        let w = widgets.get("w1").await.ok()?;
        (w.status?.observed_generation == Some(2)).then_some(())
    })
    .await;

    // Deleting runs cleanup, drops the finalizer, and the GC takes the ConfigMap.
    widgets
        .delete("w1", &DeleteParams::default())
        .await
        .expect("delete");
    wait_for("the widget to be gone", || async {
        widgets.get_opt("w1").await.ok()?.is_none().then_some(())
    })
    .await;
    wait_for("the ConfigMap to be collected", || async {
        cms.get_opt("w1-config").await.ok()?.is_none().then_some(())
    })
    .await;
    let events: Api<Event> = Api::namespaced(env.client.clone(), "default");
    let list = events.list(&ListParams::default()).await.expect("events");
    assert!(
        list.items
            .iter()
            .any(|e| e.reason.as_deref() == Some("CleanedUp")
                && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("w1")
                && e.reporting_controller.as_deref() == Some("widget-controller")),
        "no CleanedUp event: {:?}",
        list.items.iter().map(|e| &e.reason).collect::<Vec<_>>()
    );
    running.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn reconciling_unchanged_widgets_writes_nothing() {
    let env = Env::start().await;
    let builder = manager(env.client.clone())
        .with_controller(WidgetReconciler)
        .build();
    let metrics = builder.metrics();
    let running = builder.start().await.expect("manager starts");
    let widgets = env.widgets();
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), "default");
    widgets
        .create(&PostParams::default(), &widget("same", &[("k", "v")]))
        .await
        .expect("create widget");
    let before = wait_for("Ready=True", || async {
        let w = widgets.get("same").await.ok()?;
        (ready_condition(&w)?.0 == "True").then_some(w)
    })
    .await;
    let cm_before = cms.get("same-config").await.expect("configmap");
    let successes = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("controller_runtime_reconcile_total{controller=\"widget-controller\",result=\"success\"}"))
            .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let count = successes(&metrics.encode());

    // A label change triggers a reconcile that applies identical content.
    widgets
        .patch(
            "same",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .expect("label");
    let touched = widgets
        .get("same")
        .await
        .expect("widget")
        .resource_version();
    wait_for("another successful reconcile", || async {
        (successes(&metrics.encode()) > count).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cm_after = cms.get("same-config").await.expect("configmap");
    assert_eq!(
        cm_after.resource_version(),
        cm_before.resource_version(),
        "the apply was a no-op"
    );
    assert_eq!(
        cm_after.metadata.managed_fields,
        cm_before.metadata.managed_fields
    );
    let after = widgets.get("same").await.expect("widget");
    assert_eq!(
        after.resource_version(),
        touched,
        "the status was not rewritten"
    );
    assert_eq!(
        ready_condition(&after).unwrap(),
        ready_condition(&before).unwrap(),
        "the condition kept its transition time"
    );
    running.shutdown().await.expect("clean shutdown");
}

/// Fails every reconcile and remembers when each one started.
struct AlwaysFails {
    attempts: Arc<Mutex<Vec<Instant>>>,
}

#[derive(Debug, thiserror::Error)]
#[error("the widget is broken on purpose")]
struct Broken;

impl Reconciler for AlwaysFails {
    type K = Widget;
    type Error = Broken;

    fn name(&self) -> &str {
        "always-fails"
    }

    async fn reconcile(&self, _w: Arc<Widget>, _ctx: &Context<Widget>) -> Result<Action, Broken> {
        self.attempts.lock().unwrap().push(Instant::now());
        Err(Broken)
    }
}

#[tokio::test]
async fn errors_back_off_exponentially_per_object() {
    let env = Env::start().await;
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let running = manager(env.client.clone())
        .with_controller_options(
            AlwaysFails {
                attempts: attempts.clone(),
            },
            ControllerOptions::default()
                .with_backoff(Duration::from_millis(20), Duration::from_secs(60))
                .with_error_reporting(false),
        )
        .build()
        .start()
        .await
        .expect("manager starts");
    env.widgets()
        .create(&PostParams::default(), &widget("flaky", &[]))
        .await
        .expect("create widget");
    // Delays 20, 40, ..., 1280 ms: 8 attempts take about 2.5 s.
    wait_for("eight attempts", || async {
        (attempts.lock().unwrap().len() >= 8).then_some(())
    })
    .await;
    running.shutdown().await.expect("clean shutdown");

    let times = attempts.lock().unwrap().clone();
    let gaps: Vec<f64> = times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    for pair in gaps.windows(2).skip(1) {
        let ratio = pair[1] / pair[0];
        assert!(
            (1.4..3.0).contains(&ratio),
            "gaps should roughly double: {gaps:?}"
        );
    }
    assert!(gaps[6] / gaps[0] > 16.0, "six doublings: {gaps:?}");
}
