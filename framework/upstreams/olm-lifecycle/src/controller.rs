//! [`Lifecycle`]: the controller set — builder, watches and the level-triggered pass.
//!
//! One pass lists the OLM objects of all namespaces and runs the roles in order:
//! CatalogSources (load catalogs), OperatorGroups, Subscriptions (resolve, create
//! InstallPlans), InstallPlans (apply steps), ClusterServiceVersions (install). Passes are
//! woken by watch events on the OLM kinds, Deployments, ConfigMaps and CRDs, and run at least
//! every poll interval, which is also how catalog directories are re-read. Each role writes
//! only what differs from what it read, so a converged cluster sees no writes.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

use crate::objects;

/// How often catalogs are re-read and everything is looked at again, by default.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// How long a CSV may stay `Installing` before it fails with `InstallCheckFailed`: OLM's
/// olm-operator hard-codes five minutes since the last phase transition.
pub const DEFAULT_INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long to gather watch events before a pass.
const DEBOUNCE: Duration = Duration::from_millis(30);

/// How long to wait for the OLM CRDs to become `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Errors of the controller set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The OLM CRDs could not be read or installed.
    #[error(transparent)]
    Crds(#[from] crate::crds::Error),
}

/// Settings shared by the roles.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) poll_interval: Duration,
    pub(crate) install_timeout: Duration,
}

/// OLM's catalog-operator and olm-operator for an mNi API server. Build it with
/// [`Lifecycle::new`], then [`run`](Lifecycle::run) it.
///
/// ```no_run
/// # async fn run(client: kube::Client) -> Result<(), mni_olm_lifecycle::Error> {
/// use mni_olm_lifecycle::Lifecycle;
/// let olm = Lifecycle::new(client).with_poll_interval(std::time::Duration::from_secs(2));
/// olm.run(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
#[derive(Clone)]
#[must_use = "the controllers do nothing until .run() is awaited"]
pub struct Lifecycle {
    client: Client,
    settings: Settings,
    install_crds: bool,
}

impl std::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lifecycle")
            .field("settings", &self.settings)
            .field("install_crds", &self.install_crds)
            .finish_non_exhaustive()
    }
}

impl Lifecycle {
    /// The controllers with default timings, installing the OLM CRDs when absent.
    pub fn new(client: Client) -> Self {
        Lifecycle {
            client,
            settings: Settings {
                poll_interval: DEFAULT_POLL_INTERVAL,
                install_timeout: DEFAULT_INSTALL_TIMEOUT,
            },
            install_crds: true,
        }
    }

    /// How often catalogs are re-read and all objects looked at again (default
    /// [`DEFAULT_POLL_INTERVAL`]).
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.settings.poll_interval = interval;
        self
    }

    /// How long a CSV may wait for its Deployments before `Failed` / `InstallCheckFailed`
    /// (default [`DEFAULT_INSTALL_TIMEOUT`]).
    pub fn with_install_timeout(mut self, timeout: Duration) -> Self {
        self.settings.install_timeout = timeout;
        self
    }

    /// Whether [`run`](Self::run) installs the OLM CRDs when absent (default: yes).
    pub fn with_crd_install(mut self, install: bool) -> Self {
        self.install_crds = install;
        self
    }

    /// Installs the OLM CRDs that are absent and waits until they are `Established`.
    pub async fn install_crds(&self) -> Result<(), Error> {
        crate::crds::install(&self.client, ESTABLISH_TIMEOUT).await?;
        Ok(())
    }

    /// Runs until `shutdown` completes.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        if self.install_crds {
            self.install_crds().await?;
        }
        let wake = Arc::new(Notify::new());
        let mut watches = tokio::task::JoinSet::new();
        for resource in [
            objects::catalog_source(),
            objects::operator_group(),
            objects::subscription(),
            objects::install_plan(),
            objects::csv(),
        ] {
            let api = Api::<DynamicObject>::all_with(self.client.clone(), &resource);
            watches.spawn(wake_on_changes(api, wake.clone()));
        }
        watches.spawn(wake_on_changes(
            Api::<Deployment>::all(self.client.clone()),
            wake.clone(),
        ));
        watches.spawn(wake_on_changes(
            Api::<ConfigMap>::all(self.client.clone()),
            wake.clone(),
        ));
        watches.spawn(wake_on_changes(
            Api::<CustomResourceDefinition>::all(self.client.clone()),
            wake.clone(),
        ));
        let mut state = Catalogs::default();
        let work = async {
            loop {
                if let Err(error) = self.pass(&mut state).await {
                    tracing::warn!(%error, "OLM pass failed; retrying");
                }
                tokio::select! {
                    () = wake.notified() => tokio::time::sleep(DEBOUNCE).await,
                    () = tokio::time::sleep(self.settings.poll_interval) => {}
                }
            }
        };
        tokio::select! {
            () = shutdown => {}
            () = work => {}
        }
        watches.abort_all();
        Ok(())
    }

    /// One pass over every OLM object.
    async fn pass(&self, state: &mut Catalogs) -> Result<(), kube::Error> {
        let snapshot = Snapshot {
            catalog_sources: list(&self.client, &objects::catalog_source()).await?,
            operator_groups: list(&self.client, &objects::operator_group()).await?,
            subscriptions: list(&self.client, &objects::subscription()).await?,
            install_plans: list(&self.client, &objects::install_plan()).await?,
            csvs: list(&self.client, &objects::csv()).await?,
        };
        let ctx = Context {
            client: &self.client,
            settings: &self.settings,
            snapshot: &snapshot,
        };
        crate::catalogs::reconcile_sources(&ctx, state).await?;
        crate::catalogs::reconcile_groups(&ctx).await?;
        crate::subscriptions::reconcile(&ctx, state).await?;
        crate::installplans::reconcile(&ctx).await?;
        crate::csvs::reconcile(&ctx).await?;
        Ok(())
    }
}

/// The objects a pass works on.
pub(crate) struct Snapshot {
    pub(crate) catalog_sources: Vec<DynamicObject>,
    pub(crate) operator_groups: Vec<DynamicObject>,
    pub(crate) subscriptions: Vec<DynamicObject>,
    pub(crate) install_plans: Vec<DynamicObject>,
    pub(crate) csvs: Vec<DynamicObject>,
}

/// What each role gets.
pub(crate) struct Context<'a> {
    pub(crate) client: &'a Client,
    pub(crate) settings: &'a Settings,
    pub(crate) snapshot: &'a Snapshot,
}

/// What a pass keeps between passes: the loaded catalogs, by CatalogSource namespace and
/// name.
pub(crate) type Catalogs = HashMap<(String, String), crate::catalogs::Loaded>;

/// Every object of a kind, oldest first.
async fn list(client: &Client, resource: &ApiResource) -> Result<Vec<DynamicObject>, kube::Error> {
    let mut items = Api::<DynamicObject>::all_with(client.clone(), resource)
        .list(&ListParams::default())
        .await?
        .items;
    items.sort_by(|a, b| {
        (
            &a.metadata.creation_timestamp,
            &a.metadata.namespace,
            &a.metadata.name,
        )
            .cmp(&(
                &b.metadata.creation_timestamp,
                &b.metadata.namespace,
                &b.metadata.name,
            ))
    });
    Ok(items)
}

/// Notifies `wake` on every change of `api`'s objects, forever.
async fn wake_on_changes<K>(api: Api<K>, wake: Arc<Notify>)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
    while let Some(event) = events.next().await {
        if event.is_ok() {
            wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn run_is_send() {
        // Only needs to compile: a Lifecycle's run future can be spawned.
        let _ = |olm: Lifecycle| assert_send(&olm.run(async {}));
    }

    #[test]
    fn builders_set_timings() {
        let settings = Settings {
            poll_interval: DEFAULT_POLL_INTERVAL,
            install_timeout: DEFAULT_INSTALL_TIMEOUT,
        };
        assert_eq!(settings.install_timeout, Duration::from_secs(300));
    }
}
