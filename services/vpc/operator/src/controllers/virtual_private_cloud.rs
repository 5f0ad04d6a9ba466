// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! Reconciles `VirtualPrivateCloud`s onto Kube-OVN (`kubeovn.io/v1`).
//!
//! For each VirtualPrivateCloud the controller:
//!
//! 1. validates the spec with [`validate`] and checks that no subnet's `cidrBlock` differs
//!    from its Kube-OVN Subnet's as the API server has it (Kube-OVN treats it as immutable);
//!    when a rule is broken it sets `Validated=False` and `Ready=False` with the message and
//!    touches nothing upstream;
//! 2. server-side applies, with its field manager, the Kube-OVN objects [`upstream::desired`]
//!    builds — a Vpc, its Subnets and, with a NAT gateway, a VpcNatGateway, IptablesEIPs and
//!    SNAT/DNAT rules — after checking that none of their names belongs to another owner;
//! 3. deletes the Kube-OVN objects labelled with its uid that the spec no longer asks for;
//! 4. sets the status from what Kube-OVN reports (see [`status`]).
//!
//! The Kube-OVN objects are cluster-scoped, so no owner reference ties them to the namespaced
//! VirtualPrivateCloud and the garbage collector cannot remove them: the finalizer
//! `network.mni.dev/kube-ovn-cleanup` does. On deletion [`cleanup`](Reconciler::cleanup)
//! deletes every object labelled with the owner's uid and waits until they are gone (a
//! stopped operator does it when it starts again, since the finalizer holds the object);
//! `kube_ovn_orphans` sweeps up after a VirtualPrivateCloud whose finalizer was removed by
//! hand. Every Kube-OVN kind is watched and mapped back to its owner through its labels, so
//! status changes reconcile the owner.
//!
//! What the controller needs (derived into `config/rbac/role.yaml`):
// +mni:rbac:groups=network.mni.dev,resources=virtualprivateclouds,verbs=get;list;watch;update;patch
// +mni:rbac:groups=network.mni.dev,resources=virtualprivateclouds/status,verbs=get;update;patch
// +mni:rbac:groups=network.mni.dev,resources=virtualprivateclouds/finalizers,verbs=update
// +mni:rbac:groups=kubeovn.io,resources=vpcs;subnets;vpc-nat-gateways;iptables-eips;iptables-snat-rules;iptables-dnat-rules,verbs=get;list;watch;create;patch;delete

pub mod status;
pub mod upstream;

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::core::ClusterResourceScope;
use kube::runtime::reflector::ObjectRef;
use mni_kubeovn::v1 as ovn;
use mni_operator::{ContextError, prelude::*};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::network_v1alpha1::VirtualPrivateCloud;
use crate::api::network_v1alpha1::VirtualPrivateCloudStatus;
use crate::api::network_v1alpha1::validate::message;
use crate::api::network_v1alpha1::validate::validate;
use crate::api::network_v1alpha1::validate::validate_update;
use upstream::{Upstream, owner_of, owner_selector, spec_name};

/// The finalizer that holds a VirtualPrivateCloud until its Kube-OVN objects are gone.
pub const FINALIZER: &str = "network.mni.dev/kube-ovn-cleanup";

/// How long a cleanup waits for Kube-OVN to let its objects go before it tries again later.
pub const CLEANUP_WAIT: Duration = Duration::from_secs(5);

/// Why a VirtualPrivateCloud reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VirtualPrivateCloudError {
    /// Writing the status or an event failed.
    #[error(transparent)]
    Context(#[from] ContextError),
    /// A request about a Kube-OVN object failed.
    #[error("{action} Kube-OVN {kind} {name:?}: {source}")]
    Upstream {
        /// What was being done (`apply`, `delete`, `list`).
        action: &'static str,
        /// The Kube-OVN kind.
        kind: String,
        /// The object's name (or label selector).
        name: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// A Kube-OVN object of the name this VPC needs belongs to someone else.
    #[error(transparent)]
    NameTaken(#[from] NameTaken),
    /// Kube-OVN objects are still being deleted.
    #[error("waiting for {0} Kube-OVN object(s) to be deleted")]
    CleanupPending(usize),
    /// The status could not be turned into JSON.
    #[error("serialize the status: {0}")]
    Json(#[from] serde_json::Error),
}

/// A Kube-OVN object of a name a VirtualPrivateCloud needs exists with another owner.
#[derive(Debug, thiserror::Error)]
#[error(
    "Kube-OVN {kind} {name:?} belongs to {owner}, not to this VirtualPrivateCloud; rename the VPC"
)]
pub struct NameTaken {
    /// The Kube-OVN kind.
    pub kind: String,
    /// The name.
    pub name: String,
    /// Who has it (`VirtualPrivateCloud NAMESPACE/NAME`, or `no VirtualPrivateCloud`).
    pub owner: String,
}

/// A Kube-OVN kind this controller writes: cluster-scoped, compiled in.
pub trait UpstreamKind:
    kube::Resource<DynamicType = (), Scope = ClusterResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<T> UpstreamKind for T where
    T: kube::Resource<DynamicType = (), Scope = ClusterResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// Reconciles VirtualPrivateClouds. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub struct VirtualPrivateCloudReconciler;

impl Reconciler for VirtualPrivateCloudReconciler {
    type K = VirtualPrivateCloud;
    type Error = VirtualPrivateCloudError;

    fn name(&self) -> &str {
        "virtual-private-cloud-controller"
    }

    fn finalizer(&self) -> Option<&str> {
        Some(FINALIZER)
    }

    async fn reconcile(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        let uid = obj.uid().unwrap_or_default();
        let mut errors = validate(&obj.spec);
        if errors.is_empty() {
            // Read from the API server, not the cache: right after a start the cache may
            // not hold the Subnets yet, and a changed cidrBlock must never reach Kube-OVN.
            let existing = list_owned::<ovn::Subnet>(ctx.client(), &uid).await?;
            let old: Vec<(&str, &str)> = existing
                .iter()
                .filter_map(|s| Some((spec_name(&s.metadata)?, s.spec.cidr_block.as_str())))
                .collect();
            errors = validate_update(old, &obj.spec);
        }
        if !errors.is_empty() {
            let message = message(&errors);
            let desired = status::invalid(
                obj.status.as_ref(),
                &message,
                obj.metadata.generation,
                Timestamp::now(),
            );
            write_status(ctx, &obj, &desired).await?;
            return Ok(Action::await_change());
        }

        let desired = upstream::desired(&obj);
        check_names(ctx, &uid, &desired)?;
        let applied = Upstream {
            vpc: apply(ctx, &desired.vpc).await?,
            subnets: apply_all(ctx, &desired.subnets).await?,
            nat_gateway: match &desired.nat_gateway {
                Some(gateway) => Some(apply(ctx, gateway).await?),
                None => None,
            },
            eips: apply_all(ctx, &desired.eips).await?,
            snat_rules: apply_all(ctx, &desired.snat_rules).await?,
            dnat_rules: apply_all(ctx, &desired.dnat_rules).await?,
        };
        prune(ctx, &uid, &desired.dnat_rules).await?;
        prune(ctx, &uid, &desired.snat_rules).await?;
        prune(ctx, &uid, &desired.eips).await?;
        prune(ctx, &uid, desired.nat_gateway.as_slice()).await?;
        prune(ctx, &uid, &desired.subnets).await?;

        let conditions = obj
            .status
            .as_ref()
            .map(|s| s.conditions.clone())
            .unwrap_or_default();
        let desired = status::desired(
            &applied,
            &conditions,
            obj.metadata.generation,
            Timestamp::now(),
        );
        write_status(ctx, &obj, &desired).await?;
        Ok(Action::await_change())
    }

    async fn cleanup(
        &self,
        obj: Arc<Self::K>,
        ctx: &Context<Self::K>,
    ) -> Result<Action, Self::Error> {
        let uid = obj.uid().unwrap_or_default();
        let deadline = tokio::time::Instant::now() + CLEANUP_WAIT;
        loop {
            let remaining = delete_owned(ctx.client(), &uid).await?;
            if remaining == 0 {
                return Ok(Action::await_change());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(VirtualPrivateCloudError::CleanupPending(remaining));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn relations(&self) -> Relations<Self::K> {
        Relations::default()
            .watches::<ovn::Vpc, _>(|o| owner_ref(&o.metadata))
            .watches::<ovn::Subnet, _>(|o| owner_ref(&o.metadata))
            .watches::<ovn::VpcNatGateway, _>(|o| owner_ref(&o.metadata))
            .watches::<ovn::IptablesEIP, _>(|o| owner_ref(&o.metadata))
            .watches::<ovn::IptablesSnatRule, _>(|o| owner_ref(&o.metadata))
            .watches::<ovn::IptablesDnatRule, _>(|o| owner_ref(&o.metadata))
    }
}

/// The VirtualPrivateCloud a Kube-OVN object's labels name.
fn owner_ref(meta: &kube::api::ObjectMeta) -> Option<ObjectRef<VirtualPrivateCloud>> {
    let (namespace, name, _) = owner_of(meta)?;
    Some(ObjectRef::new(&name).within(&namespace))
}

/// Writes `desired` unless the status says exactly that already.
async fn write_status(
    ctx: &Context<VirtualPrivateCloud>,
    obj: &VirtualPrivateCloud,
    desired: &VirtualPrivateCloudStatus,
) -> Result<(), VirtualPrivateCloudError> {
    if obj.status.as_ref() == Some(desired) {
        return Ok(());
    }
    let mut status = serde_json::to_value(desired)?;
    // A merge patch keeps what it does not mention: name what is gone.
    for key in ["vpc", "subnetsReady", "subnets", "natGateway"] {
        if let Some(map) = status.as_object_mut() {
            map.entry(key).or_insert(serde_json::Value::Null);
        }
    }
    ctx.patch_status(obj, &serde_json::json!({ "status": status }))
        .await?;
    Ok(())
}

/// Fails when a Kube-OVN object this VPC needs exists with another owner's labels.
fn check_names(
    ctx: &Context<VirtualPrivateCloud>,
    uid: &str,
    desired: &Upstream,
) -> Result<(), NameTaken> {
    check_names_of(ctx, uid, std::slice::from_ref(&desired.vpc))?;
    check_names_of(ctx, uid, &desired.subnets)?;
    check_names_of(ctx, uid, desired.nat_gateway.as_slice())?;
    check_names_of(ctx, uid, &desired.eips)?;
    check_names_of(ctx, uid, &desired.snat_rules)?;
    check_names_of(ctx, uid, &desired.dnat_rules)
}

fn check_names_of<T: UpstreamKind>(
    ctx: &Context<VirtualPrivateCloud>,
    uid: &str,
    objects: &[T],
) -> Result<(), NameTaken> {
    let Some(store) = ctx.store::<T>() else {
        return Ok(());
    };
    for obj in objects {
        let name = obj.name_any();
        let Some(existing) = store.get(&ObjectRef::new(&name)) else {
            continue;
        };
        match owner_of(existing.meta()) {
            Some((_, _, owner)) if owner == uid => {}
            found => {
                return Err(NameTaken {
                    kind: T::kind(&()).into_owned(),
                    name,
                    owner: found.map_or_else(
                        || "no VirtualPrivateCloud".to_owned(),
                        |(ns, n, _)| format!("VirtualPrivateCloud {ns}/{n}"),
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Server-side applies `obj` with the operator's field manager, taking over the fields it
/// sets, unless the cached copy already has every one of them with the same value: a converged
/// VPC costs no request however often it is reconciled. The cache is the controller's watch of
/// the kind, so a change by someone else is seen, and undone, in the next reconcile.
pub async fn apply<T: UpstreamKind>(
    ctx: &Context<VirtualPrivateCloud>,
    obj: &T,
) -> Result<T, VirtualPrivateCloudError> {
    let name = obj.name_any();
    if let Some(cached) = ctx.store::<T>().and_then(|s| s.get(&ObjectRef::new(&name)))
        && let (Ok(have), Ok(want)) = (serde_json::to_value(&*cached), serde_json::to_value(obj))
        && mni_operator::workload::contains(&have, &want)
    {
        return Ok((*cached).clone());
    }
    Api::<T>::all(ctx.client().clone())
        .patch(
            &name,
            &PatchParams::apply(ctx.field_manager()).force(),
            &Patch::Apply(obj),
        )
        .await
        .map_err(|source| VirtualPrivateCloudError::Upstream {
            action: "apply",
            kind: T::kind(&()).into_owned(),
            name,
            source,
        })
}

async fn apply_all<T: UpstreamKind>(
    ctx: &Context<VirtualPrivateCloud>,
    objects: &[T],
) -> Result<Vec<T>, VirtualPrivateCloudError> {
    let mut applied = Vec::with_capacity(objects.len());
    for obj in objects {
        applied.push(apply(ctx, obj).await?);
    }
    Ok(applied)
}

/// Deletes the objects of kind `T` labelled with `uid` that are not in `keep`.
async fn prune<T: UpstreamKind>(
    ctx: &Context<VirtualPrivateCloud>,
    uid: &str,
    keep: &[T],
) -> Result<(), VirtualPrivateCloudError> {
    let Some(store) = ctx.store::<T>() else {
        return Ok(());
    };
    let keep: Vec<String> = keep.iter().map(ResourceExt::name_any).collect();
    for obj in store.state() {
        let owned = owner_of(obj.meta()).is_some_and(|(_, _, owner)| owner == uid);
        let name = obj.name_any();
        if owned && !keep.contains(&name) && obj.meta().deletion_timestamp.is_none() {
            delete::<T>(ctx.client(), &name).await?;
        }
    }
    Ok(())
}

async fn delete<T: UpstreamKind>(
    client: &Client,
    name: &str,
) -> Result<(), VirtualPrivateCloudError> {
    match Api::<T>::all(client.clone())
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(VirtualPrivateCloudError::Upstream {
            action: "delete",
            kind: T::kind(&()).into_owned(),
            name: name.to_owned(),
            source,
        }),
    }
}

/// Deletes every Kube-OVN object labelled with the owner uid `uid` (rules first, the Vpc
/// last) and returns how many there were; `0` means everything is gone.
pub async fn delete_owned(client: &Client, uid: &str) -> Result<usize, VirtualPrivateCloudError> {
    let mut found = 0;
    found += delete_owned_of::<ovn::IptablesDnatRule>(client, uid).await?;
    found += delete_owned_of::<ovn::IptablesSnatRule>(client, uid).await?;
    found += delete_owned_of::<ovn::IptablesEIP>(client, uid).await?;
    found += delete_owned_of::<ovn::VpcNatGateway>(client, uid).await?;
    found += delete_owned_of::<ovn::Subnet>(client, uid).await?;
    found += delete_owned_of::<ovn::Vpc>(client, uid).await?;
    Ok(found)
}

async fn delete_owned_of<T: UpstreamKind>(
    client: &Client,
    uid: &str,
) -> Result<usize, VirtualPrivateCloudError> {
    let items = list_owned::<T>(client, uid).await?;
    for obj in &items {
        if obj.meta().deletion_timestamp.is_none() {
            delete::<T>(client, &obj.name_any()).await?;
        }
    }
    Ok(items.len())
}

/// The objects of kind `T` labelled with the owner uid `uid`, from the API server.
async fn list_owned<T: UpstreamKind>(
    client: &Client,
    uid: &str,
) -> Result<Vec<T>, VirtualPrivateCloudError> {
    let selector = owner_selector(uid);
    let list = Api::<T>::all(client.clone())
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| VirtualPrivateCloudError::Upstream {
            action: "list",
            kind: T::kind(&()).into_owned(),
            name: selector.clone(),
            source,
        })?;
    Ok(list.items)
}
