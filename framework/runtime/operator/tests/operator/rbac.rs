//! RBAC: the example runs with a least-privilege ServiceAccount, and a missing verb shows up
//! as a `Forbidden` condition and a Warning event on the object.

use k8s_openapi::api::{core::v1::ConfigMap, events::v1::Event};
use kube::{
    Api,
    api::{ListParams, PostParams},
};
use serde_json::{Value, json};

use crate::support::{Env, manager, ready_condition, wait_for, widget, widget::WidgetReconciler};

/// What the example operator needs in its namespace; `configmap_verbs` varies.
fn rules(configmap_verbs: &[&str]) -> Value {
    json!([
        {"apiGroups": ["example.mni.dev"], "resources": ["widgets"], "verbs": ["get", "list", "watch", "patch", "update"]},
        {"apiGroups": ["example.mni.dev"], "resources": ["widgets/status"], "verbs": ["get", "patch", "update"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": configmap_verbs},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    ])
}

#[tokio::test]
async fn a_least_privilege_service_account_runs_the_operator() {
    let env = Env::start().await;
    let client = env
        .service_account_client(
            "widget-operator",
            rules(&["get", "list", "watch", "create", "patch"]),
        )
        .await;
    let running = manager(client)
        .with_namespace(Some("default".into()))
        .with_controller(WidgetReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");
    let widgets = env.widgets();
    widgets
        .create(&PostParams::default(), &widget("least", &[("k", "v")]))
        .await
        .expect("create");
    let w = wait_for("Ready", || async {
        let w = widgets.get("least").await.ok()?;
        let ready = ready_condition(&w)?;
        (ready.0 == "True").then_some(ready)
    })
    .await;
    assert_eq!(w.1, "Reconciled");
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), "default");
    assert!(cms.get_opt("least-config").await.expect("get").is_some());
    running.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn a_missing_verb_is_reported_as_forbidden_in_a_condition_and_an_event() {
    let env = Env::start().await;
    // No "patch" on configmaps: the server-side apply of the child is refused.
    let client = env
        .service_account_client(
            "widget-operator",
            rules(&["get", "list", "watch", "create"]),
        )
        .await;
    let running = manager(client)
        .with_namespace(Some("default".into()))
        .with_controller(WidgetReconciler)
        .build()
        .start()
        .await
        .expect("manager starts");
    let widgets = env.widgets();
    widgets
        .create(&PostParams::default(), &widget("denied", &[]))
        .await
        .expect("create");
    let (status, reason, message, _) = wait_for("Ready=False", || async {
        ready_condition(&widgets.get("denied").await.ok()?).filter(|c| c.0 == "False")
    })
    .await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Forbidden"));
    let expected = r#"User "system:serviceaccount:default:widget-operator" cannot patch resource "configmaps" in API group "" in the namespace "default""#;
    assert!(message.contains(expected), "condition message: {message}");
    assert!(
        message.contains("apply ConfigMap \"denied-config\""),
        "names the write: {message}"
    );

    let events: Api<Event> = Api::namespaced(env.client.clone(), "default");
    let warning = wait_for("a Warning event", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items.into_iter().find(|e| {
            e.type_.as_deref() == Some("Warning") && e.reason.as_deref() == Some("ReconcileFailed")
        })
    })
    .await;
    assert!(warning.note.unwrap_or_default().contains(expected));
    assert_eq!(
        warning.regarding.and_then(|r| r.name).as_deref(),
        Some("denied")
    );
    running.shutdown().await.expect("clean shutdown");
}
