//! [`Simulator`]: a fake baremetal-operator and Ironic over the Kubernetes API, driving real
//! BMCs over Redfish.
//!
//! mNi's API server stores `metal3.io/v1alpha1` objects but nothing acts on them. The
//! simulator plays baremetal-operator and Ironic as a plain kube-rs client (so it works against
//! any API server): it installs the subset's CRDs if they are absent, watches BareMetalHosts
//! and Secrets, and reconciles each host whose spec, deletion, finalizers or credentials
//! Secret changed, or whose requeue time came. Hosts are reconciled concurrently, each one
//! step at a time, and only what changed is written (JSON merge patches).
//!
//! What it does, per host (the states are Metal3's):
//!
//! - puts the `baremetalhost.metal3.io` finalizer on it, so deleting it deprovisions first;
//! - **no BMC address or credentials name** — `unmanaged`, operational status `discovered`;
//! - **registering** — parses `spec.bmc.address` as Metal3 does (`mni_redfish::BmcAddress`):
//!   `redfish://`, `redfish+http(s)://`, `redfish-virtualmedia://`, `idrac-redfish://`,
//!   `ilo5-redfish://` and the other Redfish flavours are driven, over generic Redfish;
//!   `ipmi://` (or a bare `host:port`), `libvirt://`, `idrac://`, `irmc://`, … are refused
//!   with a `registration error` that says only Redfish BMCs are simulated. Reads `username`
//!   and `password` from the Secret, connects (TLS verified unless
//!   `disableCertificateVerification`) and reads the system (the address's path, else the
//!   BMC's only system). A missing Secret or key, an unreachable BMC, refused credentials or an
//!   unknown system give `operationalStatus: error`, `errorType: registration error` (or
//!   `provisioned registration error` for a provisioned host), the reason in `errorMessage`,
//!   `errorCount` + 1, and a retry after 1, 2, 4 … 60 s; success records `goodCredentials`;
//! - **inspecting** — reads the Redfish inventory (processors, memory, NICs with MACs,
//!   storage, vendor, BIOS) into `status.hardware` and a `HardwareData` of the same name
//!   (owned by the host), then **available**;
//! - **available** — with `spec.image`: **provisioning** — powers the host off if it is on,
//!   sets the boot device (`redfish-virtualmedia`-style BMCs: the image inserted as virtual CD
//!   and a one-time boot from `Cd`; others: a one-time boot from `Pxe`), powers it on, and when
//!   the BMC reports it on (ejecting the CD unless the format is `live-iso`): **provisioned**,
//!   with `status.provisioning.image` and `rootDeviceHints`. No image bytes are written: the
//!   BMC is driven as Ironic would, the deploy itself is not simulated;
//! - **available, provisioned, externally provisioned** — keeps the power as `spec.online`
//!   says with `ComputerSystem.Reset` (`On`, `ForceOff`), and reads it back into
//!   `status.poweredOn` (every [`Simulator::with_resync_interval`], as Ironic syncs power
//!   states) — the BMC applies a reset when it likes, so nothing is assumed;
//! - **reboot** (provisioned and externally provisioned hosts) — `reboot.metal3.io` powers the
//!   host off (`{"mode":"soft"}` or no mode: `GracefulShutdown`, falling back to `ForceOff`
//!   when the BMC refuses it or after [`Simulator::with_soft_power_off_timeout`], as Ironic
//!   does; `{"mode":"hard"}`: `ForceOff`), waits until the BMC reports it off, powers it on,
//!   waits until the BMC reports it on and removes the annotation. `reboot.metal3.io/{key}`
//!   keeps the host off until every such annotation is gone (it takes precedence over the
//!   plain form). With `spec.online: false` the host stays off and the annotation goes;
//! - removing or changing the image of a provisioned host: **deprovisioning** — ejects
//!   virtual media, powers off, and when the BMC reports off: **available**;
//! - `spec.externallyProvisioned` — registering leads to **externally provisioned**
//!   (no inspection, no provisioning, power managed);
//! - **deletion** — a provisioned host is deprovisioned, every registered host is then
//!   powered off (`powering off before delete`, then `deleting`), and only then are its
//!   HardwareData and the finalizer removed. A host that never registered goes at once.
//!
//! Annotations: `inspect.metal3.io: disabled` skips inspection (available without hardware);
//! `baremetalhost.metal3.io/detached` leaves the BMC alone (`operationalStatus: detached`) and
//! lets a deleted host go without deprovisioning — the way out for a host whose BMC is gone.
//!
//! A failed BMC action sets `provisioning error`, `inspection error` or `power management
//! error` the same way and is retried. Not simulated: IPMI and the vendor drivers, cleaning,
//! RAID and firmware settings, `preparing`, the `paused` annotation, events.

mod hardware;
mod host;
mod machine;
mod reboot;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::v1alpha1::BareMetalHost;
use host::{Context, Outcome, Progress, Settings};

/// The field manager of everything the simulator writes.
pub const FIELD_MANAGER: &str = "mni-metal3-simulator";

/// How often a host waiting for its BMC (a power action, a boot) is looked at again.
pub const DEFAULT_POWER_POLL: Duration = Duration::from_secs(1);

/// How often a settled host's power state is read back from its BMC.
pub const DEFAULT_RESYNC: Duration = Duration::from_secs(30);

/// How long a power action may take before it is a `power management error`.
pub const DEFAULT_POWER_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a reboot's soft power-off (`GracefulShutdown`) may take before the simulator
/// powers the host off hard (`ForceOff`). Ironic's `soft_power_off_timeout` is 600 s; a
/// simulated host has no OS to shut down, so a minute is plenty.
pub const DEFAULT_SOFT_POWER_OFF_TIMEOUT: Duration = Duration::from_secs(60);

/// The timeout of each Redfish request (an unreachable BMC fails registration after it).
pub const DEFAULT_BMC_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to gather watch events before a pass.
const DEBOUNCE: Duration = Duration::from_millis(20);

/// How soon to retry a pass (or a host) whose Kubernetes calls failed.
const RETRY: Duration = Duration::from_millis(500);

/// How long to wait for the CRDs to become `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CRDs could not be installed, or did not become `Established`.
    #[error(transparent)]
    Crds(#[from] mni_crd_install::Error),
}

/// The fake baremetal-operator and Ironic. Build it with [`Simulator::new`], then
/// [`run`](Simulator::run) it.
///
/// ```no_run
/// # async fn run(client: kube::Client) -> Result<(), mni_metal3::simulator::Error> {
/// use mni_metal3::simulator::Simulator;
/// let sim = Simulator::new(client).with_resync_interval(std::time::Duration::from_secs(5));
/// sim.run(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
#[derive(Clone)]
#[must_use = "a simulator does nothing until .run() is awaited"]
pub struct Simulator {
    client: Client,
    settings: Settings,
    install_crds: bool,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("settings", &self.settings)
            .field("install_crds", &self.install_crds)
            .finish_non_exhaustive()
    }
}

impl Simulator {
    /// A simulator with the default timings that installs the CRDs it needs.
    pub fn new(client: Client) -> Self {
        Simulator {
            client,
            settings: Settings {
                power_poll: DEFAULT_POWER_POLL,
                resync: DEFAULT_RESYNC,
                power_timeout: DEFAULT_POWER_TIMEOUT,
                bmc_timeout: DEFAULT_BMC_TIMEOUT,
                soft_power_off_timeout: DEFAULT_SOFT_POWER_OFF_TIMEOUT,
            },
            install_crds: true,
        }
    }

    /// How often a host waiting for its BMC is looked at again (default
    /// [`DEFAULT_POWER_POLL`]); also the first retry after an error.
    pub fn with_power_poll_interval(mut self, interval: Duration) -> Self {
        self.settings.power_poll = interval;
        self
    }

    /// How often a settled host's power state is read back (default [`DEFAULT_RESYNC`]).
    pub fn with_resync_interval(mut self, interval: Duration) -> Self {
        self.settings.resync = interval;
        self
    }

    /// How long a power action may take (default [`DEFAULT_POWER_TIMEOUT`]).
    pub fn with_power_timeout(mut self, timeout: Duration) -> Self {
        self.settings.power_timeout = timeout;
        self
    }

    /// How long a reboot's soft power-off may take before `ForceOff` (default
    /// [`DEFAULT_SOFT_POWER_OFF_TIMEOUT`]).
    pub fn with_soft_power_off_timeout(mut self, timeout: Duration) -> Self {
        self.settings.soft_power_off_timeout = timeout;
        self
    }

    /// The timeout of each Redfish request (default [`DEFAULT_BMC_TIMEOUT`]).
    pub fn with_bmc_timeout(mut self, timeout: Duration) -> Self {
        self.settings.bmc_timeout = timeout;
        self
    }

    /// Whether [`run`](Self::run) installs the subset's CRDs when they are absent (default:
    /// yes). CRDs that exist are never changed.
    pub fn with_crd_install(mut self, install: bool) -> Self {
        self.install_crds = install;
        self
    }

    /// Installs every CRD of [`crate::crds`] that is absent and waits until all are
    /// `Established`.
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
            watch::<BareMetalHost>(&self.client, &notify),
            watch::<Secret>(&self.client, &notify),
        ]);
        tracing::info!("metal3 simulator started");
        let ctx = Context {
            client: self.client.clone(),
            bmcs: Arc::new(Mutex::new(HashMap::new())),
            settings: self.settings,
        };
        tokio::select! {
            () = &mut shutdown => {},
            _ = watches => {},
            () = passes(ctx, notify) => {},
        }
        tracing::info!("metal3 simulator stopped");
        Ok(())
    }
}

/// What the loop knows of a host.
#[derive(Debug, Default)]
struct Track {
    /// What the last reconcile started from (spec, deletion, finalizers, Secret version).
    key: String,
    /// When to reconcile again regardless.
    due: Option<Instant>,
    /// The BMC actions in flight.
    progress: Progress,
}

/// A finished reconcile: the host's uid, the trigger key it started from, and how it went.
type Reconciled = (String, String, Result<Outcome, kube::Error>);

/// The loop: on every change or due time, list hosts and Secrets and start a reconcile of
/// each host that changed or is due and is not being reconciled.
async fn passes(ctx: Context, notify: Arc<Notify>) {
    let mut tracks: HashMap<String, Track> = HashMap::new();
    let mut running: HashSet<String> = HashSet::new();
    let mut tasks: JoinSet<Reconciled> = JoinSet::new();
    let mut ids: HashMap<tokio::task::Id, String> = HashMap::new();
    let mut pass_due: Option<Instant> = Some(Instant::now());
    loop {
        if pass_due.is_some_and(|d| d <= Instant::now()) {
            pass_due = None;
            match snapshot(&ctx.client).await {
                Ok((hosts, secrets)) => {
                    let present: HashSet<String> = hosts.iter().filter_map(|h| h.uid()).collect();
                    tracks.retain(|uid, _| present.contains(uid) || running.contains(uid));
                    for host in hosts {
                        let Some(uid) = host.uid() else { continue };
                        if running.contains(&uid) {
                            continue;
                        }
                        let secret = host.spec.bmc.as_ref().and_then(|b| {
                            secrets
                                .get(&(
                                    host.namespace().unwrap_or_default(),
                                    b.credentials_name.clone(),
                                ))
                                .cloned()
                        });
                        let key = trigger_key(&host, secret.as_ref());
                        let track = tracks.entry(uid.clone()).or_default();
                        let due = track.due.is_some_and(|d| d <= Instant::now());
                        if track.key == key && !due {
                            continue;
                        }
                        let progress = std::mem::take(&mut track.progress);
                        running.insert(uid.clone());
                        let ctx = ctx.clone();
                        let task = uid.clone();
                        let handle = tasks.spawn(async move {
                            let outcome =
                                host::reconcile(&ctx, &host, secret.as_ref(), progress).await;
                            (task, key, outcome)
                        });
                        ids.insert(handle.id(), uid);
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, "metal3 simulator: listing failed; retrying");
                    pass_due = Some(Instant::now() + RETRY);
                }
            }
        }
        let next_host = tracks
            .iter()
            .filter(|(uid, _)| !running.contains(*uid))
            .filter_map(|(_, t)| t.due)
            .min();
        let wake = [next_host, pass_due].into_iter().flatten().min();
        tokio::select! {
            () = notify.notified() => {
                tokio::time::sleep(DEBOUNCE).await;
                pass_due = Some(Instant::now());
            }
            Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                finished(done, &mut tracks, &mut running, &mut ids);
            }
            () = sleep_until(wake) => {
                pass_due = Some(Instant::now());
            }
        }
    }
}

/// Records the outcome of a reconcile; the host is due again after its requeue (a failed
/// reconcile after [`RETRY`]), and the loop's wake-up takes that into account.
fn finished(
    done: Result<(tokio::task::Id, Reconciled), tokio::task::JoinError>,
    tracks: &mut HashMap<String, Track>,
    running: &mut HashSet<String>,
    ids: &mut HashMap<tokio::task::Id, String>,
) {
    let (id, uid, outcome) = match done {
        Ok((id, (uid, key, outcome))) => {
            let track = tracks.entry(uid.clone()).or_default();
            if outcome.is_ok() {
                track.key = key;
            }
            (id, uid, outcome)
        }
        Err(error) => {
            tracing::error!(%error, "metal3 simulator: a reconcile panicked");
            let Some(uid) = ids.remove(&error.id()) else {
                return;
            };
            running.remove(&uid);
            tracks.entry(uid).or_default().due = Some(Instant::now() + RETRY);
            return;
        }
    };
    ids.remove(&id);
    running.remove(&uid);
    let track = tracks.entry(uid).or_default();
    match outcome {
        Ok(outcome) => {
            track.due = outcome.requeue.map(|r| Instant::now() + r);
            track.progress = outcome.progress;
        }
        Err(error) => {
            tracing::debug!(%error, "metal3 simulator: reconcile failed; retrying");
            track.due = Some(Instant::now() + RETRY);
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => futures::future::pending().await,
    }
}

/// What a reconcile depends on, besides the BMC: the spec, deletion, finalizers and the
/// credentials Secret's version. Status writes do not change it, so a host is not
/// reconciled again because of its own status.
fn trigger_key(host: &BareMetalHost, secret: Option<&Secret>) -> String {
    serde_json::json!([
        host.spec,
        host.metadata.deletion_timestamp,
        host.metadata.finalizers,
        host.metadata.annotations,
        secret.and_then(|s| s.metadata.resource_version.clone()),
    ])
    .to_string()
}

type Secrets = BTreeMap<(String, String), Secret>;

async fn snapshot(client: &Client) -> Result<(Vec<BareMetalHost>, Secrets), kube::Error> {
    let hosts: Vec<BareMetalHost> = list(client).await?;
    let secrets = list::<Secret>(client)
        .await?
        .into_iter()
        .map(|s| ((s.namespace().unwrap_or_default(), s.name_any()), s))
        .collect();
    Ok((hosts, secrets))
}

/// Lists every object of a kind, in all namespaces.
async fn list<K>(client: &Client) -> Result<Vec<K>, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    Ok(api.list(&ListParams::default()).await?.items)
}

/// Watches one kind and wakes a pass on every event; never ends.
fn watch<K>(client: &Client, notify: &Arc<Notify>) -> futures::future::BoxFuture<'static, ()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
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
    mni_crd_install::install_absent(client, &crate::crds(), FIELD_MANAGER, ESTABLISH_TIMEOUT)
        .await?;
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
    fn status_changes_do_not_change_the_trigger_key() {
        let mut host = BareMetalHost::new("h", crate::v1alpha1::BareMetalHostSpec::default());
        let before = trigger_key(&host, None);
        host.status = Some(crate::v1alpha1::BareMetalHostStatus {
            error_count: 3,
            ..Default::default()
        });
        assert_eq!(trigger_key(&host, None), before);
        host.spec.online = true;
        assert_ne!(trigger_key(&host, None), before);
    }
}
