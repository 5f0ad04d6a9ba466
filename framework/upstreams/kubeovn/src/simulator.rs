//! [`Simulator`]: a fake Kube-OVN controller over the Kubernetes API.
//!
//! mNi's API server stores `kubeovn.io/v1` objects but nothing realises them. The simulator
//! plays kube-ovn-controller for the subset in [`crate::v1`], as a plain kube-rs client (so
//! it works against any API server): it installs the subset's CRDs if they are absent,
//! watches the seven kinds, and on any change runs one level-triggered pass that lists them
//! all, computes what Kube-OVN would report (`desired`, pure and unit-tested) and writes
//! only the differences as JSON merge patches — spec defaults on the object, everything
//! else on the `status` subresource. A converged cluster sees no writes. Conflicts and
//! objects that vanished mid-pass are not errors: the next pass starts from fresh state.
//!
//! What it fills in:
//!
//! - **Vpc** — `Ready=True` (with `observedGeneration`), `standby: true`, `router` (the
//!   VPC's name), `defaultLogicalSwitch` (`spec.defaultSubnet`), `subnets` (the Subnets
//!   whose `spec.vpc` names it), `enableExternal`, `default` (only `ovn-cluster`).
//! - **Subnet** — spec defaults Kube-OVN writes (`protocol` from the CIDR block,
//!   `provider: ovn`, `gateway`: the first address of each CIDR, `gatewayType:
//!   distributed`, `vpc: ovn-cluster`); `Validated`; `Ready=True` once its VPC exists
//!   (`Ready=False`, reason `VpcNotFound`, otherwise); `v4availableIPs`/`v6availableIPs`
//!   and their ranges from the CIDR minus network/broadcast, gateway, `excludeIps` and the
//!   addresses of the `IP` objects on the subnet, which `*usingIPs` count (the fake runs no
//!   pods; `mni-kubevirt`'s simulator writes `IP`s for the VMs it places on a subnet).
//! - **VpcNatGateway** — once its VPC and subnet exist and `lanIp` is in the subnet, the
//!   status upstream writes after creating the gateway pod: `externalSubnets` (default
//!   `ovn-vpc-external-network`), `selector`, `qosPolicy`. (Upstream's status has no
//!   conditions; an empty status means "not running".)
//! - **IptablesEIP** — an address from its external Subnet if one with that name exists,
//!   else from the external pool ([`Simulator::with_external_pool`], default
//!   [`DEFAULT_EXTERNAL_POOL`], first address = gateway), written to `spec.v4ip` (with
//!   `spec.macAddress`, `spec.externalSubnet` and upstream's `ovn.kubernetes.io/subnet`,
//!   `…/vpc-nat-gw-name` and `…/eip_v4_ip` labels) as upstream does; `status.ip`, `status.ready: true`, `status.nat`
//!   (`snat`, `dnat`, comma-separated) and `Ready=True` once its NAT gateway runs.
//!   Allocations are derived from the EIPs' own `spec.v4ip`/`status.ip`, so they survive
//!   restarts and no address is handed out twice.
//! - **IptablesSnatRule / IptablesDnatRule** — `ready: true`, `v4ip`, `natGwDp` and the
//!   configured fields echoed, `Ready=True`, once their EIP is ready; a DNAT rule for an
//!   EIP port (and protocol) an older rule forwards stays `Ready=False` (`PortConflict`).

mod desired;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

use crate::ipam::{self, Cidr};
use crate::v1::{
    Ip, IptablesDnatRule, IptablesEIP, IptablesSnatRule, Subnet, Vpc, VpcNatGateway, crds,
};
use desired::{Kind, Settings, Snapshot, Write};

/// The external pool EIPs get addresses from when their external subnet is not a Subnet
/// object: `172.19.0.0/24`, gateway `172.19.0.1`, EIPs from `172.19.0.2`.
pub const DEFAULT_EXTERNAL_POOL: &str = "172.19.0.0/24";

/// The field manager of everything the simulator writes.
pub const FIELD_MANAGER: &str = "mni-kubeovn-simulator";

/// How long to gather watch events before a pass.
const DEBOUNCE: Duration = Duration::from_millis(20);

/// How soon to retry a pass that failed; doubled while passes keep failing.
const RETRY: Duration = Duration::from_millis(500);

/// The longest wait between retries.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// How long to wait for the CRDs to become `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The external pool is not a CIDR.
    #[error("invalid external pool: {0}")]
    Pool(#[source] ipam::Error),
    /// The CRDs could not be installed, or did not become `Established`.
    #[error(transparent)]
    Crds(#[from] mni_crd_install::Error),
}

/// The fake Kube-OVN controller. Build it with [`Simulator::new`], then
/// [`run`](Simulator::run) it.
///
/// ```no_run
/// # async fn run(client: kube::Client) -> Result<(), mni_kubeovn::simulator::Error> {
/// use mni_kubeovn::simulator::Simulator;
/// let sim = Simulator::new(client).with_external_pool("172.19.0.0/24")?;
/// sim.run(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
#[derive(Clone)]
#[must_use = "a simulator does nothing until .run() is awaited"]
pub struct Simulator {
    client: Client,
    external_pool: Cidr,
    install_crds: bool,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("external_pool", &self.external_pool.to_string())
            .field("install_crds", &self.install_crds)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulator with the default external pool that installs the CRDs it needs.
    pub fn new(client: Client) -> Self {
        Simulator {
            client,
            external_pool: Cidr::parse(DEFAULT_EXTERNAL_POOL)
                .unwrap_or_else(|_| unreachable!("DEFAULT_EXTERNAL_POOL is a valid CIDR")),
            install_crds: true,
        }
    }

    /// Sets the pool EIPs get addresses from when their external subnet is not a Subnet
    /// object (an IPv4 CIDR; its first usable address is the pool's gateway).
    pub fn with_external_pool(mut self, cidr: &str) -> Result<Self, Error> {
        self.external_pool = Cidr::parse(cidr).map_err(Error::Pool)?;
        Ok(self)
    }

    /// Whether [`run`](Self::run) installs the subset's CRDs when they are absent (default:
    /// yes). CRDs that exist are never changed.
    pub fn with_crd_install(mut self, install: bool) -> Self {
        self.install_crds = install;
        self
    }

    /// Installs every CRD of [`crds`] that is absent (server-side apply) and waits until
    /// all are `Established`.
    pub async fn install_crds(&self) -> Result<(), Error> {
        install_crds(&self.client).await
    }

    /// Runs until `shutdown` completes. Fails only if the CRDs cannot be installed; later
    /// errors are logged and retried.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        tokio::pin!(shutdown);
        if self.install_crds {
            tokio::select! {
                () = &mut shutdown => return Ok(()),
                r = self.install_crds() => r?,
            }
        }
        let notify = Arc::new(Notify::new());
        let watches = futures::future::join_all([
            watch::<Vpc>(&self.client, &notify),
            watch::<Subnet>(&self.client, &notify),
            watch::<VpcNatGateway>(&self.client, &notify),
            watch::<IptablesEIP>(&self.client, &notify),
            watch::<IptablesSnatRule>(&self.client, &notify),
            watch::<IptablesDnatRule>(&self.client, &notify),
            watch::<Ip>(&self.client, &notify),
        ]);
        tracing::info!(external_pool = %self.external_pool, "kube-ovn simulator started");
        let settings = Settings {
            external_pool: self.external_pool,
        };
        let passes = async {
            let mut retry = RETRY;
            loop {
                let wait = match self.pass(&settings).await {
                    Ok(()) => {
                        retry = RETRY;
                        None
                    }
                    Err(error) => {
                        tracing::debug!(%error, "kube-ovn simulator pass failed; retrying");
                        let wait = retry;
                        retry = (retry * 2).min(MAX_RETRY);
                        Some(wait)
                    }
                };
                match wait {
                    Some(wait) => {
                        tokio::select! {
                            () = notify.notified() => {},
                            () = tokio::time::sleep(wait) => {},
                        }
                    }
                    None => notify.notified().await,
                }
                tokio::time::sleep(DEBOUNCE).await;
            }
        };
        tokio::select! {
            () = &mut shutdown => {},
            _ = watches => {},
            () = passes => {},
        }
        tracing::info!("kube-ovn simulator stopped");
        Ok(())
    }

    /// One pass: list everything, plan, write the differences.
    async fn pass(&self, settings: &Settings) -> Result<(), kube::Error> {
        let snapshot = Snapshot {
            vpcs: list(&self.client).await?,
            subnets: list(&self.client).await?,
            gateways: list(&self.client).await?,
            eips: list(&self.client).await?,
            snats: list(&self.client).await?,
            dnats: list(&self.client).await?,
            ips: list(&self.client).await?,
        };
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let mut failed = None;
        for write in desired::plan(&snapshot, settings, &now) {
            if let Err(error) = self.write(&write).await {
                failed = Some(error);
            }
        }
        failed.map_or(Ok(()), Err)
    }

    async fn write(&self, write: &Write) -> Result<(), kube::Error> {
        let result = match write.kind {
            Kind::Vpc => patch::<Vpc>(&self.client, write).await,
            Kind::Subnet => patch::<Subnet>(&self.client, write).await,
            Kind::VpcNatGateway => patch::<VpcNatGateway>(&self.client, write).await,
            Kind::IptablesEip => patch::<IptablesEIP>(&self.client, write).await,
            Kind::IptablesSnatRule => patch::<IptablesSnatRule>(&self.client, write).await,
            Kind::IptablesDnatRule => patch::<IptablesDnatRule>(&self.client, write).await,
        };
        match result {
            // Deleted since the list: nothing left to do.
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            other => other,
        }
    }
}

/// A cluster-scoped kind the simulator lists, patches and watches.
trait ClusterKind:
    Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
    + Clone
    + DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> ClusterKind for K where
    K: Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
{
}

/// Lists every object of a kind.
async fn list<K: ClusterKind>(client: &Client) -> Result<Vec<K>, kube::Error> {
    let api: Api<K> = Api::all(client.clone());
    Ok(api.list(&ListParams::default()).await?.items)
}

/// Sends one merge patch.
async fn patch<K: ClusterKind>(client: &Client, write: &Write) -> Result<(), kube::Error> {
    let api: Api<K> = Api::all(client.clone());
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    tracing::debug!(kind = ?write.kind, name = %write.name, patch = %write.patch, "kube-ovn simulator write");
    if write.status {
        api.patch_status(&write.name, &params, &Patch::Merge(&write.patch))
            .await?;
    } else {
        api.patch(&write.name, &params, &Patch::Merge(&write.patch))
            .await?;
    }
    Ok(())
}

/// Watches one kind and wakes a pass on every event; never ends.
fn watch<K>(client: &Client, notify: &Arc<Notify>) -> futures::future::BoxFuture<'static, ()>
where
    K: ClusterKind + Send + 'static,
{
    let api: Api<K> = Api::all(client.clone());
    let notify = Arc::clone(notify);
    Box::pin(
        watcher(api, watcher::Config::default())
            .default_backoff()
            .for_each(move |_| {
                notify.notify_one();
                futures::future::ready(())
            }),
    )
}

/// Installs the absent CRDs of the subset and waits until all are `Established`.
async fn install_crds(client: &Client) -> Result<(), Error> {
    mni_crd_install::install_absent(client, &crds(), FIELD_MANAGER, ESTABLISH_TIMEOUT).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator can run on a multi-threaded runtime.
    #[allow(dead_code, reason = "only needs to compile")]
    fn run_is_send(sim: Simulator) {
        fn assert_send<T: Send>(_: T) {}
        assert_send(sim.run(async {}));
    }

    #[test]
    fn default_pool_is_valid() {
        assert_eq!(
            Cidr::parse(DEFAULT_EXTERNAL_POOL).map(|c| c.to_string()),
            Ok(DEFAULT_EXTERNAL_POOL.to_string())
        );
    }
}
