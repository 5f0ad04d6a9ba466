//! The `Widget` custom resource and its reconciler: the example every mNi operator grows from.
//!
//! A `Widget` (`example.mni.dev/v1alpha1`, namespaced) holds key/value data; its reconciler
//! server-side applies an owned ConfigMap `<widget>-config` holding that data and sets
//! `Ready=True` with the observed generation. Deleting a Widget runs `cleanup` (behind the
//! finalizer `example.mni.dev/cleanup`), which records a `CleanedUp` event; the API server's
//! garbage collector then deletes the ConfigMap through its owner reference.

#![allow(
    unreachable_pub,
    dead_code,
    reason = "also compiled into the tests through #[path], which use only part of it"
)]

use std::{collections::BTreeMap, sync::Arc};

use k8s_openapi::{
    api::core::v1::ConfigMap,
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{CustomResource, CustomResourceExt, api::ObjectMeta};
use mni_operator::{ContextError, prelude::*};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a Widget asks for: the data its ConfigMap holds.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[kube(
    group = "example.mni.dev",
    version = "v1alpha1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    shortname = "wd"
)]
pub struct WidgetSpec {
    /// The key/value pairs to publish in the ConfigMap.
    #[serde(default)]
    pub data: BTreeMap<String, String>,
}

/// What the operator last observed about a Widget.
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    /// `Ready` and friends.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The generation the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The CRDs the operator needs (what `configmap-owner crd` prints).
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![Widget::crd()]
}

/// The ConfigMap a Widget owns.
pub fn config_map_name(widget: &Widget) -> String {
    format!("{}-config", widget.name_any())
}

/// Why a Widget reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum WidgetError {
    /// A write through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// Reconciles Widgets into ConfigMaps.
#[derive(Clone, Debug, Default)]
pub struct WidgetReconciler;

impl Reconciler for WidgetReconciler {
    type K = Widget;
    type Error = WidgetError;

    fn name(&self) -> &str {
        "widget-controller"
    }

    async fn reconcile(
        &self,
        widget: Arc<Widget>,
        ctx: &Context<Widget>,
    ) -> Result<Action, WidgetError> {
        let config_map = ConfigMap {
            metadata: ObjectMeta {
                name: Some(config_map_name(&widget)),
                labels: Some(BTreeMap::from([(
                    "app.kubernetes.io/managed-by".to_string(),
                    ctx.field_manager().to_string(),
                )])),
                ..ObjectMeta::default()
            },
            data: Some(widget.spec.data.clone()),
            ..ConfigMap::default()
        };
        ctx.apply_owned(&widget, config_map).await?;
        ctx.set_condition(
            &widget,
            READY,
            ConditionStatus::True,
            reasons::RECONCILED,
            "the ConfigMap holds the widget's data",
        )
        .await?;
        Ok(Action::await_change())
    }

    fn finalizer(&self) -> Option<&str> {
        Some("example.mni.dev/cleanup")
    }

    async fn cleanup(
        &self,
        widget: Arc<Widget>,
        ctx: &Context<Widget>,
    ) -> Result<Action, WidgetError> {
        let note = format!("released {}", config_map_name(&widget));
        ctx.publish_event(
            &widget,
            EventType::Normal,
            "CleanedUp",
            "Cleanup",
            Some(note),
        )
        .await?;
        Ok(Action::await_change())
    }

    fn relations(&self) -> Relations<Widget> {
        Relations::default().owns::<ConfigMap>()
    }
}
