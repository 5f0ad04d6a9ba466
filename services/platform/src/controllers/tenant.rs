// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `Tenant`s into namespaces with their quota, limits, isolation and access.
//!
//! For each Tenant the controller:
//!
//! 1. works out its [`TenantPlan`] from every Tenant in the cache (place in the tree,
//!    namespaces, groups to bind) and checks that none of the namespaces exists with another
//!    owner; when a rule is broken it sets `Ready=False` with a reason and a message naming
//!    the field (see [`Refusal`]) and creates nothing;
//! 2. gives a sub-tenant an owner reference to its parent, so deleting a tenant deletes its
//!    subtree;
//! 3. server-side applies, owned by the Tenant, what [`desired`] builds for each namespace
//!    (Namespace, ResourceQuota, LimitRange, NetworkPolicy, RoleBindings) and deletes the
//!    namespaces it made that the spec no longer lists;
//! 4. when the VPC service is installed (the CRD `virtualprivateclouds.network.mni.dev`
//!    exists), applies a VirtualPrivateCloud `default` in the first namespace, spanning all of
//!    them, and says so in the `DefaultVPC` condition (`VPCServiceNotInstalled` otherwise);
//! 5. writes the status: namespaces, path, usage against quota summed from the
//!    ResourceQuotas' `status.used`, conditions and `observedGeneration`.
//!
//! Deletion needs no finalizer: everything carries an owner reference to the Tenant, so the
//! garbage collector removes it, and a Namespace's deletion removes what is inside.
//!
//! A Tenant is reconciled again every [`RESYNC`] (usage, and parents' changes reaching their
//! children) and every [`RETRY`] while it is refused (a conflicting tenant may go away).
//!
//! What the controller needs (also in `config/rbac/role.yaml`):
// +mni:rbac:groups=platform.mni.dev,resources=tenants,verbs=get;list;watch;update;patch
// +mni:rbac:groups=platform.mni.dev,resources=tenants/status,verbs=get;update;patch
// +mni:rbac:groups=platform.mni.dev,resources=tenants/finalizers,verbs=update
// +mni:rbac:groups="",resources=namespaces;resourcequotas;limitranges,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;patch;delete
// +mni:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=mni-platform-tenant-admin;mni-platform-tenant-viewer
// +mni:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get
// +mni:rbac:groups=network.mni.dev,resources=virtualprivateclouds,verbs=get;create;patch

pub mod desired;
pub mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{LimitRange, Namespace, ResourceQuota};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use mni_formats::quantity::Quantity;
use mni_operator::{ContextError, prelude::*};
use serde_json::{Value, json};

use crate::api::platform_v1alpha1::{Tenant, TenantQuotaStatus, TenantStatus};
use desired::{QUOTA_NAME, TENANT_LABEL, desired};
use plan::{Refusal, TenantPlan};

/// How often a Ready tenant is reconciled again.
pub const RESYNC: Duration = Duration::from_secs(30);
/// How often a refused tenant is tried again.
pub const RETRY: Duration = Duration::from_secs(3);
/// The condition about the tenant's default VirtualPrivateCloud.
pub const DEFAULT_VPC: &str = "DefaultVPC";
/// The `DefaultVPC` reason when the VPC service is not installed.
pub const VPC_SERVICE_NOT_INSTALLED: &str = "VPCServiceNotInstalled";
/// The CRD whose presence means the VPC service is installed.
pub const VPC_CRD: &str = "virtualprivateclouds.network.mni.dev";
/// The name of the tenant's default VirtualPrivateCloud.
pub const DEFAULT_VPC_NAME: &str = "default";
/// The address range of the default VPC's one subnet.
pub const DEFAULT_VPC_CIDR: &str = "10.0.0.0/24";

/// Why a Tenant reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TenantError {
    /// Writing the status or an owned object through the runtime failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A request the controller makes itself failed.
    #[error("{action} {kind} {name:?}: {source}")]
    Api {
        /// What was being done (`get`, `apply`, `delete`, `list`).
        action: &'static str,
        /// The kind.
        kind: &'static str,
        /// The object's name (or label selector).
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The status could not be turned into JSON.
    #[error("serialize the status: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reconciles Tenants. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct TenantReconciler;

impl Reconciler for TenantReconciler {
    type K = Tenant;
    type Error = TenantError;

    fn name(&self) -> &str {
        "tenant-controller"
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        let cached = ctx.store::<Tenant>().map(|s| s.state()).unwrap_or_default();
        let mut all: Vec<&Tenant> = cached
            .iter()
            .map(AsRef::as_ref)
            .filter(|t| t.name_any() != obj.name_any())
            .collect();
        all.push(&obj);
        let plan = match TenantPlan::new(&obj, &all) {
            Ok(plan) => plan,
            Err(refusal) => return refuse(ctx, &obj, &refusal).await,
        };
        if let Some(refusal) = check_existing(ctx, &obj, &plan).await? {
            return refuse(ctx, &obj, &refusal).await;
        }
        if let Some(parent) = obj.spec.parent.as_deref().and_then(|p| {
            all.iter()
                .copied()
                .find(|t| t.name_any() == p && t.uid().is_some())
        }) {
            own_by_parent(ctx, &obj, parent).await?;
        }
        for objects in desired(&obj, &plan) {
            ctx.apply_owned(&*obj, objects.namespace).await?;
            ctx.apply_owned(&*obj, objects.quota).await?;
            ctx.apply_owned(&*obj, objects.limits).await?;
            ctx.apply_owned(&*obj, objects.policy).await?;
            for binding in objects.bindings {
                ctx.apply_owned(&*obj, binding).await?;
            }
        }
        prune_namespaces(ctx, &obj, &plan).await?;
        let (vpc_status, vpc_reason, vpc_message) = default_vpc(ctx, &obj, &plan).await?;
        let quota = usage(ctx, &obj, &plan).await?;
        let mut status = obj.status.clone().unwrap_or_default();
        let generation = obj.metadata.generation;
        let now = Timestamp::now();
        status.conditions.set(
            READY,
            ConditionStatus::True,
            reasons::RECONCILED,
            &format!(
                "namespaces {} with quota, limits, isolation and access",
                plan.namespaces.join(", ")
            ),
            generation,
            now,
        );
        status.conditions.set(
            DEFAULT_VPC,
            vpc_status,
            vpc_reason,
            &vpc_message,
            generation,
            now,
        );
        status.observed_generation = generation;
        status.namespaces = plan.namespaces.clone();
        status.path = plan.path.clone();
        status.quota = Some(quota);
        write_status(ctx, &obj, &status).await?;
        Ok(Action::requeue(RESYNC))
    }

    fn relations(&self) -> Relations<Self::K> {
        // Children carry the tenant's label; a cluster-scoped owner is mapped by it rather
        // than by the namespaced child's owner reference.
        Relations::default()
            .watches::<Namespace, _>(|o| tenant_ref(&o.metadata))
            .watches::<ResourceQuota, _>(|o| tenant_ref(&o.metadata))
            .watches::<LimitRange, _>(|o| tenant_ref(&o.metadata))
            .watches::<NetworkPolicy, _>(|o| tenant_ref(&o.metadata))
            .watches::<RoleBinding, _>(|o| tenant_ref(&o.metadata))
    }
}

/// The Tenant a child's [`TENANT_LABEL`] names.
fn tenant_ref(meta: &kube::api::ObjectMeta) -> Option<ObjectRef<Tenant>> {
    let name = meta.labels.as_ref()?.get(TENANT_LABEL)?;
    Some(ObjectRef::new(name))
}

/// Sets `Ready=False` with the refusal, writes nothing else, and tries again later.
async fn refuse(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    refusal: &Refusal,
) -> Result<Action, TenantError> {
    let mut status = obj.status.clone().unwrap_or_default();
    status.conditions.set(
        READY,
        ConditionStatus::False,
        refusal.reason(),
        &refusal.to_string(),
        obj.metadata.generation,
        Timestamp::now(),
    );
    status.observed_generation = obj.metadata.generation;
    write_status(ctx, obj, &status).await?;
    Ok(Action::requeue(RETRY))
}

/// The first of the plan's namespaces that exists with another owner, as a refusal.
async fn check_existing(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    plan: &TenantPlan,
) -> Result<Option<Refusal>, TenantError> {
    let api: Api<Namespace> = Api::all(ctx.client().clone());
    let uid = obj.uid().unwrap_or_default();
    for name in &plan.namespaces {
        let existing = api.get_opt(name).await.map_err(|source| TenantError::Api {
            action: "get",
            kind: "Namespace",
            name: name.clone(),
            source,
        })?;
        let Some(existing) = existing else { continue };
        let ours = existing
            .owner_references()
            .iter()
            .any(|r| r.controller == Some(true) && r.uid == uid);
        if !ours {
            let owner = existing
                .labels()
                .get(TENANT_LABEL)
                .map_or_else(|| "no tenant".to_owned(), |t| format!("tenant {t:?}"));
            return Ok(Some(Refusal::NamespaceTaken {
                namespace: name.clone(),
                owner,
            }));
        }
    }
    Ok(None)
}

/// Adds an owner reference to `parent` to the sub-tenant, so that the garbage collector
/// deletes a subtree with its root.
async fn own_by_parent(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    parent: &Tenant,
) -> Result<(), TenantError> {
    let uid = parent.uid().unwrap_or_default();
    if obj.owner_references().iter().any(|r| r.uid == uid) {
        return Ok(());
    }
    let patch = json!({
        "apiVersion": "platform.mni.dev/v1alpha1",
        "kind": "Tenant",
        "metadata": {
            "name": obj.name_any(),
            "ownerReferences": [{
                "apiVersion": "platform.mni.dev/v1alpha1",
                "kind": "Tenant",
                "name": parent.name_any(),
                "uid": uid,
            }],
        },
    });
    let manager = format!("{}-parent", ctx.field_manager());
    Api::<Tenant>::all(ctx.client().clone())
        .patch(
            &obj.name_any(),
            &PatchParams::apply(&manager).force(),
            &Patch::Apply(&patch),
        )
        .await
        .map_err(|source| TenantError::Api {
            action: "apply the parent owner reference to",
            kind: "Tenant",
            name: obj.name_any(),
            source,
        })?;
    Ok(())
}

/// Deletes the namespaces this tenant made that its plan no longer lists.
async fn prune_namespaces(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    plan: &TenantPlan,
) -> Result<(), TenantError> {
    let api: Api<Namespace> = Api::all(ctx.client().clone());
    let selector = format!("{TENANT_LABEL}={}", obj.name_any());
    let uid = obj.uid().unwrap_or_default();
    let list = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| TenantError::Api {
            action: "list",
            kind: "Namespace",
            name: selector.clone(),
            source,
        })?;
    for ns in list.items {
        let name = ns.name_any();
        let ours = ns.owner_references().iter().any(|r| r.uid == uid);
        if ours && !plan.namespaces.contains(&name) && ns.metadata.deletion_timestamp.is_none() {
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(source) => {
                    return Err(TenantError::Api {
                        action: "delete",
                        kind: "Namespace",
                        name,
                        source,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The VirtualPrivateCloud kind of the VPC service, read without its code.
fn vpc_resource() -> ApiResource {
    ApiResource {
        group: "network.mni.dev".to_owned(),
        version: "v1alpha1".to_owned(),
        api_version: "network.mni.dev/v1alpha1".to_owned(),
        kind: "VirtualPrivateCloud".to_owned(),
        plural: "virtualprivateclouds".to_owned(),
    }
}

/// Applies the tenant's default VPC when the VPC service is installed; returns the
/// `DefaultVPC` condition's status, reason and message.
async fn default_vpc(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    plan: &TenantPlan,
) -> Result<(ConditionStatus, &'static str, String), TenantError> {
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client().clone());
    let installed = crds
        .get_opt(VPC_CRD)
        .await
        .map_err(|source| TenantError::Api {
            action: "get",
            kind: "CustomResourceDefinition",
            name: VPC_CRD.to_owned(),
            source,
        })?
        .is_some();
    if !installed {
        return Ok((
            ConditionStatus::False,
            VPC_SERVICE_NOT_INSTALLED,
            format!("the VPC service is not installed (no CRD {VPC_CRD}): no default VPC"),
        ));
    }
    let namespace = &plan.namespaces[0];
    let owner = obj
        .controller_owner_ref(&())
        .ok_or_else(|| ContextError::OwnerIncomplete {
            kind: "Tenant".to_owned(),
        })?;
    let vpc = json!({
        "apiVersion": "network.mni.dev/v1alpha1",
        "kind": "VirtualPrivateCloud",
        "metadata": {
            "name": DEFAULT_VPC_NAME,
            "namespace": namespace,
            "labels": { TENANT_LABEL: obj.name_any() },
            "ownerReferences": [owner],
        },
        "spec": {
            "subnets": [{ "name": DEFAULT_VPC_NAME, "cidrBlock": DEFAULT_VPC_CIDR }],
            "namespaces": plan.namespaces,
        },
    });
    Api::<DynamicObject>::namespaced_with(ctx.client().clone(), namespace, &vpc_resource())
        .patch(
            DEFAULT_VPC_NAME,
            &PatchParams::apply(ctx.field_manager()).force(),
            &Patch::Apply(&vpc),
        )
        .await
        .map_err(|source| TenantError::Api {
            action: "apply",
            kind: "VirtualPrivateCloud",
            name: format!("{namespace}/{DEFAULT_VPC_NAME}"),
            source,
        })?;
    Ok((
        ConditionStatus::True,
        "Applied",
        format!("VirtualPrivateCloud {namespace}/{DEFAULT_VPC_NAME}"),
    ))
}

/// The quota and what the tenant's namespaces use of it, from their ResourceQuotas.
async fn usage(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    plan: &TenantPlan,
) -> Result<TenantQuotaStatus, TenantError> {
    let mut used: BTreeMap<String, Quantity> = BTreeMap::new();
    for namespace in &plan.namespaces {
        let api: Api<ResourceQuota> = Api::namespaced(ctx.client().clone(), namespace);
        let quota = api
            .get_opt(QUOTA_NAME)
            .await
            .map_err(|source| TenantError::Api {
                action: "get",
                kind: "ResourceQuota",
                name: format!("{namespace}/{QUOTA_NAME}"),
                source,
            })?;
        let reported = quota
            .and_then(|q| q.status)
            .and_then(|s| s.used)
            .unwrap_or_default();
        for (key, value) in reported {
            if let Ok(q) = value.0.parse::<Quantity>() {
                *used.entry(key).or_insert(Quantity::ZERO) += q;
            }
        }
    }
    Ok(TenantQuotaStatus {
        hard: obj
            .spec
            .quota
            .iter()
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect(),
        used: used.into_iter().map(|(k, v)| (k, v.to_string())).collect(),
    })
}

/// Writes `desired` as the status unless it says exactly that already; keys that are gone
/// are written as `null`, since a merge patch keeps what it does not mention.
async fn write_status(
    ctx: &Context<Tenant>,
    obj: &Tenant,
    desired: &TenantStatus,
) -> Result<(), TenantError> {
    if obj.status.as_ref() == Some(desired) {
        return Ok(());
    }
    let mut status = serde_json::to_value(desired)?;
    if let Some(old) = &obj.status {
        null_removed(&serde_json::to_value(old)?, &mut status);
    }
    ctx.patch_status(obj, &json!({ "status": status })).await?;
    Ok(())
}

/// Adds `null` to `new` for every object key of `old` it lacks, recursively.
fn null_removed(old: &Value, new: &mut Value) {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object_mut()) else {
        return;
    };
    for (key, value) in old {
        match new.get_mut(key) {
            Some(inner) => null_removed(value, inner),
            None => {
                new.insert(key.clone(), Value::Null);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_status_keys_become_null() {
        let old = json!({"quota": {"used": {"pods": "1", "cpu": "1"}}, "path": ["a"]});
        let mut new = json!({"quota": {"used": {"pods": "2"}}});
        null_removed(&old, &mut new);
        assert_eq!(
            new,
            json!({"quota": {"used": {"pods": "2", "cpu": null}}, "path": null})
        );
    }

    #[test]
    fn children_map_to_the_tenant_of_their_label() {
        let meta = kube::api::ObjectMeta {
            labels: Some([(TENANT_LABEL.to_owned(), "acme".to_owned())].into()),
            ..Default::default()
        };
        assert_eq!(tenant_ref(&meta), Some(ObjectRef::new("acme")));
        assert_eq!(tenant_ref(&kube::api::ObjectMeta::default()), None);
    }
}
