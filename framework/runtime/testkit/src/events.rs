//! Event assertions: which Kubernetes Events were recorded about an object.
//!
//! Controllers publish events with kube-rs' `Recorder` (events.k8s.io/v1); the API server
//! serves the same events as core/v1 `Event`s, which [`TestEnv::events_for`] lists with
//! `involvedObject` field selectors. [`TestEnv::assert_event`] waits (watching, not polling)
//! until an event with a given reason shows up, because controllers record events
//! asynchronously.

use std::collections::BTreeSet;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use kube::runtime::watcher::{self, Event as WatchEvent};
use kube::{Api, Resource};

use crate::env::TestEnv;
use crate::error::{Error, Result};
use crate::wait::qualified;

impl TestEnv {
    /// The core/v1 Events recorded about `obj` (matched by kind, name and namespace, and by
    /// uid when both sides have one), in the order the API server lists them.
    pub async fn events_for<K>(&self, obj: &K) -> Result<Vec<Event>>
    where
        K: Resource,
        K::DynamicType: Default,
    {
        let target = Target::of(obj)?;
        let api: Api<Event> = Api::all(self.client());
        let list = api
            .list(&ListParams::default().fields(&target.selector))
            .await
            .map_err(|source| Error::Api {
                action: format!("listing events for {}", target.describe),
                source,
            })?;
        Ok(list
            .items
            .into_iter()
            .filter(|e| target.matches(e))
            .collect())
    }

    /// Waits up to [`TestEnv::timeout`] for an Event with `reason` about `obj`, and returns
    /// it. The error lists the reasons that were recorded instead.
    ///
    /// ```no_run
    /// # async fn run(env: &mni_testkit::TestEnv, cm: &k8s_openapi::api::core::v1::ConfigMap)
    /// # -> mni_testkit::Result<()> {
    /// let event = env.assert_event(cm, "Reconciled").await?;
    /// assert_eq!(event.type_.as_deref(), Some("Normal"));
    /// # Ok(()) }
    /// ```
    pub async fn assert_event<K>(&self, obj: &K, reason: &str) -> Result<Event>
    where
        K: Resource,
        K::DynamicType: Default,
    {
        self.assert_event_within(obj, reason, self.timeout()).await
    }

    /// [`assert_event`](Self::assert_event) with its own timeout, e.g. a short one to check
    /// that an event is *not* recorded.
    pub async fn assert_event_within<K>(
        &self,
        obj: &K,
        reason: &str,
        timeout: Duration,
    ) -> Result<Event>
    where
        K: Resource,
        K::DynamicType: Default,
    {
        let target = Target::of(obj)?;
        let api: Api<Event> = Api::all(self.client());
        let mut seen = BTreeSet::new();
        let watch = async {
            let config = watcher::Config::default().fields(&target.selector);
            let mut stream = pin!(watcher::watcher(api, config));
            while let Some(event) = stream.next().await {
                let event = match event {
                    Ok(WatchEvent::Apply(e) | WatchEvent::InitApply(e)) => e,
                    Ok(_) => continue,
                    Err(source) => {
                        return Err(Error::Watch {
                            object: format!("events for {}", target.describe),
                            source,
                        });
                    }
                };
                if !target.matches(&event) {
                    continue;
                }
                if event.reason.as_deref() == Some(reason) {
                    return Ok(event);
                }
                seen.insert(event.reason.unwrap_or_default());
            }
            std::future::pending().await
        };
        match tokio::time::timeout(timeout, watch).await {
            Ok(result) => result,
            Err(_) => Err(Error::EventNotFound {
                object: target.describe,
                reason: reason.to_string(),
                timeout,
                seen: seen.into_iter().collect(),
            }),
        }
    }
}

/// The object events are about.
struct Target {
    /// `involvedObject.*` field selector.
    selector: String,
    /// `Kind namespace/name`.
    describe: String,
    uid: Option<String>,
}

impl Target {
    fn of<K>(obj: &K) -> Result<Self>
    where
        K: Resource,
        K::DynamicType: Default,
    {
        let kind = K::kind(&K::DynamicType::default()).to_string();
        let meta = obj.meta();
        let name = meta.name.clone().ok_or_else(|| {
            Error::Invalid(format!(
                "the {kind} to look up events for has no metadata.name"
            ))
        })?;
        let mut selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
        if let Some(ns) = meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
            selector.push_str(&format!(",involvedObject.namespace={ns}"));
        }
        Ok(Target {
            selector,
            describe: format!("{kind} {}", qualified(meta.namespace.as_deref(), &name)),
            uid: meta.uid.clone(),
        })
    }

    /// Whether `event` is about this object: an event naming another uid is about an earlier
    /// object of the same name.
    fn matches(&self, event: &Event) -> bool {
        match (&self.uid, &event.involved_object.uid) {
            (Some(ours), Some(theirs)) => ours == theirs,
            _ => true,
        }
    }
}
