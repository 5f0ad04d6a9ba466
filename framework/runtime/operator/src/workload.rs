//! The workload engine: what every frontend + backend service does, so that a generated
//! service's controller holds only what is specific to it.
//!
//! A service's custom resource describes one installation of the service: a frontend (web UI)
//! and a backend (HTTP API), each a [`WorkloadSpec`], plus settings for the backend. From that
//! the engine
//!
//! 1. builds the objects the installation owns ([`Children`]): a ServiceAccount for the backend
//!    (with a Role and RoleBinding when the backend needs API permissions), a settings ConfigMap
//!    whose checksum rolls the backend, both Deployments under the restricted Pod Security
//!    profile with probes, both Services, and a NetworkPolicy that lets only the frontend reach
//!    the backend;
//! 2. server-side applies them, owned by the custom resource, skipping those already in place
//!    (see [`apply_if_changed`]), and prunes what it applied earlier and no longer wants
//!    ([`prune`]);
//! 3. reports `Ready`, `Progressing` and `Degraded` with `observedGeneration` in a
//!    [`ServiceStatus`], from the Deployments and, while one waits, its pods ([`status`]).
//!
//! Start at [`ServiceWorkloads`]: build one from the custom resource in each reconcile and call
//! [`ServiceWorkloads::reconcile`]. Customise with the builder (`with_settings`,
//! `with_backend_rules`) or by changing any object before it is applied
//! ([`ServiceWorkloads::with_customize`]); a controller using the engine declares
//! [`relations`] so that a change to any child reconciles its owner.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use kube::CustomResource;
//! use mni_core::{ServiceStatus, WorkloadSpec};
//! use mni_operator::prelude::*;
//! use mni_operator::workload::{self, ServiceWorkloads, WorkloadError};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// One installation of the billing service.
//! #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "billing.example.com", version = "v1alpha1", kind = "Billing")]
//! #[kube(namespaced, status = "ServiceStatus")]
//! pub struct BillingSpec {
//!     frontend: WorkloadSpec,
//!     backend: WorkloadSpec,
//! }
//!
//! struct BillingReconciler;
//!
//! impl Reconciler for BillingReconciler {
//!     type K = Billing;
//!     type Error = WorkloadError;
//!
//!     fn name(&self) -> &str {
//!         "billing-controller"
//!     }
//!
//!     async fn reconcile(&self, obj: Arc<Billing>, ctx: &Context<Billing>) -> Result<Action, WorkloadError> {
//!         ServiceWorkloads::for_owner(obj.as_ref(), "billing")
//!             .with_frontend(obj.spec.frontend.clone())
//!             .with_backend(obj.spec.backend.clone())
//!             .with_settings([("CURRENCY".to_owned(), "EUR".to_owned())])
//!             // Any object can be changed before it is applied:
//!             .with_customize(|children| children.frontend.spec.min_ready_seconds = Some(5))
//!             .reconcile(ctx, obj.as_ref(), obj.status.as_ref())
//!             .await
//!     }
//!
//!     fn relations(&self) -> Relations<Billing> {
//!         workload::relations()
//!     }
//! }
//! ```
//!
//! The controller's role needs `get;list;watch;create;patch;delete` on the kinds in
//! [`relations`], `list` on pods, and whatever it grants the backend (Kubernetes lets a role
//! grant only what its holder has).

mod apply;
mod children;
pub mod status;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::{
    apps::v1 as apps, core::v1 as corev1, networking::v1 as networking, rbac::v1 as rbac,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams};
use kube::{Resource, ResourceExt};
use mni_core::{ConditionStatus, READY, ServiceStatus, WorkloadSpec, reasons};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use apply::{apply_if_changed, contains, prune};
pub use children::{
    Children, InvalidSpec, Labels, MAX_NAME_LENGTH, RUN_AS, checksum, env, labels,
    restricted_container, restricted_pod, selector_labels,
};
pub use status::Observed;

use crate::{Action, ApiScope, Context, ContextError, Relations};

/// How soon an installation whose workload waits for its pods is looked at again, by default.
pub const RECHECK: Duration = Duration::from_secs(5);

/// One of a service's two workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// The web UI.
    Frontend,
    /// The HTTP API.
    Backend,
}

impl Component {
    /// The `app.kubernetes.io/component` label and name suffix: `frontend` or `backend`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Frontend => "frontend",
            Self::Backend => "backend",
        }
    }
}

/// Why a reconcile through the engine failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// Applying or deleting a child, or writing the status, failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// Reading the pods of a workload that is not available failed.
    #[error("list the pods of Deployment {deployment:?}: {source}")]
    Pods {
        /// The Deployment.
        deployment: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The status could not be turned into JSON.
    #[error("serialize the status: {0}")]
    Json(#[from] serde_json::Error),
}

/// A change made to the children before they are applied.
type Customize = Arc<dyn Fn(&mut Children) + Send + Sync>;

/// One installation of a service, as the engine sees it: who owns it, and what its frontend and
/// backend should run. See the [module docs](self).
#[derive(Clone)]
#[must_use]
pub struct ServiceWorkloads {
    service: String,
    group: String,
    instance: String,
    namespace: Option<String>,
    managed_by: String,
    frontend: WorkloadSpec,
    backend: WorkloadSpec,
    settings: BTreeMap<String, String>,
    backend_rules: Vec<rbac::PolicyRule>,
    customize: Vec<Customize>,
    recheck: Duration,
}

impl Debug for ServiceWorkloads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceWorkloads")
            .field("service", &self.service)
            .field("instance", &self.instance)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl ServiceWorkloads {
    /// The installation `instance` in `namespace` of the service `service` (the
    /// `app.kubernetes.io/name` label, e.g. `billing`), whose API group `group` prefixes the
    /// engine's annotations. Both workloads run `WorkloadSpec::new("")` until set.
    pub fn new(service: &str, group: &str, instance: &str, namespace: Option<&str>) -> Self {
        Self {
            service: service.to_owned(),
            group: group.to_owned(),
            instance: instance.to_owned(),
            namespace: namespace.map(ToOwned::to_owned),
            managed_by: format!("{service}-operator"),
            frontend: WorkloadSpec::new(""),
            backend: WorkloadSpec::new(""),
            settings: BTreeMap::new(),
            backend_rules: Vec::new(),
            customize: Vec::new(),
            recheck: RECHECK,
        }
    }

    /// The installation that `owner` (the service's custom resource) describes.
    pub fn for_owner<K>(owner: &K, service: &str) -> Self
    where
        K: Resource<DynamicType = ()>,
    {
        let group = K::group(&());
        Self::new(
            service,
            &group,
            &owner.name_any(),
            owner.meta().namespace.as_deref(),
        )
    }

    /// What the frontend runs.
    pub fn with_frontend(mut self, spec: WorkloadSpec) -> Self {
        self.frontend = spec;
        self
    }

    /// What the backend runs.
    pub fn with_backend(mut self, spec: WorkloadSpec) -> Self {
        self.backend = spec;
        self
    }

    /// Settings of the backend, passed to it as environment variables from its ConfigMap
    /// (replacing earlier ones of the same name); `LISTEN_ADDRESS` and `NAMESPACE` are always the
    /// engine's.
    pub fn with_settings(mut self, settings: impl IntoIterator<Item = (String, String)>) -> Self {
        self.settings.extend(settings);
        self
    }

    /// What the backend may do in its namespace, through a Role bound to its ServiceAccount.
    pub fn with_backend_rules(mut self, rules: Vec<rbac::PolicyRule>) -> Self {
        self.backend_rules = rules;
        self
    }

    /// The `app.kubernetes.io/managed-by` label (default `<service>-operator`).
    pub fn with_managed_by(mut self, managed_by: &str) -> Self {
        self.managed_by = managed_by.to_owned();
        self
    }

    /// Changes the children before they are applied, after earlier customisations.
    pub fn with_customize(
        mut self,
        customize: impl Fn(&mut Children) + Send + Sync + 'static,
    ) -> Self {
        self.customize.push(Arc::new(customize));
        self
    }

    /// How soon an installation whose workload waits for its pods is looked at again.
    pub fn with_recheck(mut self, recheck: Duration) -> Self {
        self.recheck = recheck;
        self
    }

    /// What `component` runs.
    #[must_use]
    pub fn spec(&self, component: Component) -> &WorkloadSpec {
        match component {
            Component::Frontend => &self.frontend,
            Component::Backend => &self.backend,
        }
    }

    /// The name of the Deployment and Service of `component` (for the backend also of its
    /// ServiceAccount, Role, RoleBinding and NetworkPolicy), e.g. `sample-backend`.
    #[must_use]
    pub fn name(&self, component: Component) -> String {
        format!("{}-{}", self.instance, component.as_str())
    }

    /// The name of the backend's settings ConfigMap, e.g. `sample-backend-settings`.
    #[must_use]
    pub fn settings_name(&self) -> String {
        format!("{}-settings", self.name(Component::Backend))
    }

    /// The backend's environment: the defaults (`LOG_FORMAT=json`, `RUST_LOG=info`), the
    /// settings, then what the engine decides (the address to listen on, the namespace to serve).
    #[must_use]
    pub fn settings_data(&self) -> BTreeMap<String, String> {
        let mut data = BTreeMap::from([
            ("LOG_FORMAT".to_owned(), "json".to_owned()),
            ("RUST_LOG".to_owned(), "info".to_owned()),
        ]);
        data.extend(self.settings.clone());
        data.insert(
            "LISTEN_ADDRESS".to_owned(),
            format!("0.0.0.0:{}", self.backend.port),
        );
        data.insert(
            "NAMESPACE".to_owned(),
            self.namespace.clone().unwrap_or_default(),
        );
        data
    }

    /// The frontend's address inside the cluster.
    #[must_use]
    pub fn url(&self) -> String {
        format!(
            "http://{}.{}.svc:{}",
            self.name(Component::Frontend),
            self.namespace.as_deref().unwrap_or_default(),
            self.frontend.port
        )
    }

    /// The annotation holding the hash of what the engine applied (`<group>/applied`).
    #[must_use]
    pub fn applied_annotation(&self) -> String {
        format!("{}/applied", self.group)
    }

    /// The backend pod template's annotation holding the checksum of its settings
    /// (`<group>/settings-checksum`).
    #[must_use]
    pub fn checksum_annotation(&self) -> String {
        format!("{}/settings-checksum", self.group)
    }

    /// The objects this installation owns, customised.
    pub fn children(&self) -> Result<Children, InvalidSpec> {
        let mut children = Children::new(self)?;
        for customize in &self.customize {
            customize(&mut children);
        }
        Ok(children)
    }

    /// Reconciles `owner` (whose status is `current`): applies the children, prunes what is no
    /// longer wanted, writes the status if it changed and says when to look again. An invalid
    /// installation gets `Ready=False` with reason `InvalidSpec` and nothing is applied; an
    /// owner being deleted is left to the garbage collector.
    pub async fn reconcile<K>(
        &self,
        ctx: &Context<K>,
        owner: &K,
        current: Option<&ServiceStatus>,
    ) -> Result<Action, WorkloadError>
    where
        K: Resource<DynamicType = (), Scope: ApiScope>
            + Clone
            + Debug
            + DeserializeOwned
            + Serialize
            + Send
            + Sync
            + 'static,
    {
        if owner.meta().deletion_timestamp.is_some() {
            // The garbage collector deletes the children; applying them again would only hold
            // up a foreground deletion.
            return Ok(Action::await_change());
        }
        let children = match self.children() {
            Ok(children) => children,
            Err(invalid) => {
                let message = invalid.to_string();
                let (status, reason) = (ConditionStatus::False, reasons::INVALID_SPEC);
                ctx.set_condition(owner, READY, status, reason, &message)
                    .await?;
                return Ok(Action::await_change());
            }
        };
        let (frontend, backend) = self.apply(ctx, owner, children).await?;
        let observed_frontend = self.observe(ctx, Component::Frontend, &frontend).await?;
        let observed_backend = self.observe(ctx, Component::Backend, &backend).await?;
        let desired = status::desired(
            current,
            owner.meta().generation,
            &observed_frontend,
            &observed_backend,
            &self.url(),
            Timestamp::now(),
        );
        if current != Some(&desired) {
            let patch = serde_json::json!({ "status": serde_json::to_value(&desired)? });
            ctx.patch_status(owner, &patch).await?;
        }
        // Deployments report their progress through their status, which wakes the controller;
        // pods that wait (and may crash) are read again after a while.
        if [&frontend, &backend]
            .into_iter()
            .any(status::waits_for_pods)
        {
            Ok(Action::requeue(self.recheck))
        } else {
            Ok(Action::await_change())
        }
    }

    /// Applies `children` and prunes what this engine applied before and no longer wants;
    /// returns both Deployments as the cluster has them.
    async fn apply<K>(
        &self,
        ctx: &Context<K>,
        owner: &K,
        children: Children,
    ) -> Result<(apps::Deployment, apps::Deployment), ContextError>
    where
        K: Resource<DynamicType = (), Scope: ApiScope>
            + Clone
            + Debug
            + DeserializeOwned
            + Serialize
            + Send
            + Sync
            + 'static,
    {
        let applied = &self.applied_annotation();
        let Children {
            service_account,
            role,
            role_binding,
            settings,
            frontend_service,
            backend_service,
            network_policy,
            frontend,
            backend,
        } = children;
        // What stays, kind by kind: children of different kinds share names.
        let keep_account = Keep::of([Some(&service_account.metadata)]);
        let keep_role = Keep::of([role.as_ref().map(|r| &r.metadata)]);
        let keep_binding = Keep::of([role_binding.as_ref().map(|b| &b.metadata)]);
        let keep_policy = Keep::of([network_policy.as_ref().map(|p| &p.metadata)]);
        let keep_settings = Keep::of([Some(&settings.metadata)]);
        let keep_services = Keep::of([
            Some(&frontend_service.metadata),
            Some(&backend_service.metadata),
        ]);
        let keep_deployments = Keep::of([Some(&frontend.metadata), Some(&backend.metadata)]);
        // The supporting objects do not depend on one another: one round trip applies them
        // all. The Deployments follow, so that their pods find the ServiceAccount.
        tokio::try_join!(
            apply_if_changed(ctx, owner, applied, service_account),
            apply_optional(ctx, owner, applied, role),
            apply_optional(ctx, owner, applied, role_binding),
            apply_if_changed(ctx, owner, applied, settings),
            apply_if_changed(ctx, owner, applied, frontend_service),
            apply_if_changed(ctx, owner, applied, backend_service),
            apply_optional(ctx, owner, applied, network_policy),
        )?;
        let deployments = tokio::try_join!(
            apply_if_changed(ctx, owner, applied, frontend),
            apply_if_changed(ctx, owner, applied, backend),
        )?;
        tokio::try_join!(
            prune_applied::<K, corev1::ServiceAccount>(ctx, owner, applied, &keep_account),
            prune_applied::<K, rbac::Role>(ctx, owner, applied, &keep_role),
            prune_applied::<K, rbac::RoleBinding>(ctx, owner, applied, &keep_binding),
            prune_applied::<K, networking::NetworkPolicy>(ctx, owner, applied, &keep_policy),
            prune_applied::<K, corev1::ConfigMap>(ctx, owner, applied, &keep_settings),
            prune_applied::<K, corev1::Service>(ctx, owner, applied, &keep_services),
            prune_applied::<K, apps::Deployment>(ctx, owner, applied, &keep_deployments),
        )?;
        Ok(deployments)
    }

    /// Sums up `deployment`; when it waits for its pods, they say whether it fails.
    async fn observe<K>(
        &self,
        ctx: &Context<K>,
        component: Component,
        deployment: &apps::Deployment,
    ) -> Result<Observed, WorkloadError>
    where
        K: Resource<DynamicType = (), Scope: ApiScope>
            + Clone
            + Debug
            + DeserializeOwned
            + Serialize,
    {
        if !status::waits_for_pods(deployment) {
            return Ok(status::observe(component, deployment, None));
        }
        let selector = deployment
            .spec
            .selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let namespace = deployment
            .namespace()
            .unwrap_or_else(|| "default".to_owned());
        let pods: Api<corev1::Pod> = Api::namespaced(ctx.client().clone(), &namespace);
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|source| WorkloadError::Pods {
                deployment: deployment.name_any(),
                source,
            })?;
        let failure = list.items.iter().find_map(status::pod_failure);
        Ok(status::observe(component, deployment, failure))
    }
}

/// The names of one kind's children that stay.
struct Keep(Vec<String>);

impl Keep {
    /// The names of the children of one kind that are wanted.
    fn of<'a>(metas: impl IntoIterator<Item = Option<&'a kube::api::ObjectMeta>>) -> Self {
        Self(
            metas
                .into_iter()
                .flatten()
                .filter_map(|m| m.name.clone())
                .collect(),
        )
    }
}

/// Applies `child` if there is one.
async fn apply_optional<K, C>(
    ctx: &Context<K>,
    owner: &K,
    applied: &str,
    child: Option<C>,
) -> Result<Option<C>, ContextError>
where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
    C: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + Serialize + DeserializeOwned,
    C: Send + Sync + 'static,
{
    match child {
        Some(child) => apply_if_changed(ctx, owner, applied, child).await.map(Some),
        None => Ok(None),
    }
}

/// Prunes the objects of kind `C` that this engine applied (they carry the `applied`
/// annotation) and whose names `keep` does not list: objects the controller's own code applies
/// otherwise are never touched.
async fn prune_applied<K, C>(
    ctx: &Context<K>,
    owner: &K,
    applied: &str,
    keep: &Keep,
) -> Result<usize, ContextError>
where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
    C: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + DeserializeOwned + Serialize,
    C: Send + Sync + 'static,
{
    let Some(store) = ctx.store::<C>() else {
        return Ok(0);
    };
    let mut keep: Vec<&str> = keep.0.iter().map(String::as_str).collect();
    // What the engine did not apply stays too.
    let others: Vec<String> = store
        .state()
        .iter()
        .filter(|obj| {
            obj.meta()
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(applied))
        })
        .map(|obj| obj.name_any())
        .collect();
    keep.extend(others.iter().map(String::as_str));
    prune::<K, C>(ctx, owner, &keep).await
}

/// The kinds the engine applies, as [`Relations`]: a change to any of them reconciles its
/// owner, and their caches let the engine skip what is in place and prune what is not wanted.
pub fn relations<K>() -> Relations<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    Relations::default()
        .owns::<apps::Deployment>()
        .owns::<corev1::Service>()
        .owns::<corev1::ConfigMap>()
        .owns::<corev1::ServiceAccount>()
        .owns::<rbac::Role>()
        .owns::<rbac::RoleBinding>()
        .owns::<networking::NetworkPolicy>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_annotations_follow_the_owner() {
        let w = ServiceWorkloads::new("ledger", "ledger.example.com", "sample", Some("shop"));
        assert_eq!(w.name(Component::Frontend), "sample-frontend");
        assert_eq!(w.settings_name(), "sample-backend-settings");
        assert_eq!(w.url(), "http://sample-frontend.shop.svc:8080");
        assert_eq!(w.applied_annotation(), "ledger.example.com/applied");
        assert_eq!(
            w.checksum_annotation(),
            "ledger.example.com/settings-checksum"
        );
    }

    #[test]
    fn for_owner_reads_group_name_and_namespace() {
        let mut owner = k8s_openapi::api::apps::v1::Deployment::default();
        owner.metadata.name = Some("web".to_owned());
        owner.metadata.namespace = Some("team".to_owned());
        let w = ServiceWorkloads::for_owner(&owner, "web");
        assert_eq!(w.applied_annotation(), "apps/applied");
        assert_eq!(w.name(Component::Backend), "web-backend");
        assert_eq!(w.settings_data()["NAMESPACE"], "team");
    }

    #[test]
    fn customisations_apply_in_order() {
        let w = ServiceWorkloads::new("ledger", "ledger.example.com", "sample", Some("shop"))
            .with_customize(|c| c.network_policy = None)
            .with_customize(|c| {
                c.frontend.spec.replicas = Some(c.frontend.spec.replicas.unwrap_or(0) + 2)
            });
        let children = w.children().expect("valid");
        assert!(children.network_policy.is_none());
        assert_eq!(children.frontend.spec.replicas, Some(3));
    }

    fn assert_send<T: Send>(_: T) {}

    // Compiles only if the engine's futures can run on a multi-threaded runtime.
    #[allow(dead_code)]
    fn reconcile_is_send(ctx: Context<corev1::ConfigMap>, w: ServiceWorkloads) {
        let owner = corev1::ConfigMap::default();
        assert_send(async move { w.reconcile(&ctx, &owner, None).await });
    }
}
