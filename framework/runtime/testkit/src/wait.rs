//! Waiting for objects: [`wait_for`] a predicate, [`wait_for_condition`] a status condition,
//! [`wait_deleted`] for an object to be gone.
//!
//! Each helper watches the one object (a list, then a watch from its resourceVersion, with a
//! `metadata.name` field selector), so it wakes on the change it waits for instead of polling,
//! and sees changes made before it started too. On timeout the error names the object, what
//! was awaited, and the last `status` seen.

use std::fmt::Debug;
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::watcher::watch_object;
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};

/// How much of the last seen status a timeout error shows.
const LAST_SEEN_LIMIT: usize = 2000;

/// Waits until the object `name` exists and `condition` holds for it, and returns it.
///
/// ```no_run
/// use std::time::Duration;
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube::Api;
///
/// # async fn run(client: kube::Client) -> mni_testkit::Result<()> {
/// let deployments: Api<Deployment> = Api::namespaced(client, "default");
/// let scaled = mni_testkit::wait_for(
///     &deployments,
///     "web",
///     |d: &Deployment| d.status.as_ref().and_then(|s| s.ready_replicas) == Some(3),
///     Duration::from_secs(10),
/// )
/// .await?;
/// # Ok(()) }
/// ```
pub async fn wait_for<K>(
    api: &Api<K>,
    name: &str,
    condition: impl Fn(&K) -> bool,
    timeout: Duration,
) -> Result<K>
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    let object = describe(api, name);
    let mut last: Option<Option<K>> = None;
    let watch = async {
        let mut stream = pin!(watch_object(api.clone(), name));
        while let Some(event) = stream.next().await {
            match event {
                Ok(Some(obj)) if condition(&obj) => return Ok(obj),
                Ok(seen) => last = Some(seen),
                Err(source) => {
                    return Err(Error::Watch {
                        object: object.clone(),
                        source,
                    });
                }
            }
        }
        // A watcher stream does not end; if it did, let the timeout report it.
        std::future::pending().await
    };
    match tokio::time::timeout(timeout, watch).await {
        Ok(result) => result,
        Err(_) => Err(Error::Timeout {
            object,
            waiting_for: "to match the condition".to_string(),
            timeout,
            last_seen: last_seen(last.as_ref()),
        }),
    }
}

/// Waits until the object's `status.conditions` has a condition of `type_` with `status`
/// (`"True"`, `"False"` or `"Unknown"`), and returns the object. Works for every kind that
/// reports conditions this way: Deployments, CRDs, mNi services.
///
/// ```no_run
/// use std::time::Duration;
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube::Api;
///
/// # async fn run(client: kube::Client) -> mni_testkit::Result<()> {
/// let deployments: Api<Deployment> = Api::namespaced(client, "default");
/// mni_testkit::wait_for_condition(&deployments, "web", "Available", "True", Duration::from_secs(10))
///     .await?;
/// # Ok(()) }
/// ```
pub async fn wait_for_condition<K>(
    api: &Api<K>,
    name: &str,
    type_: &str,
    status: &str,
    timeout: Duration,
) -> Result<K>
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    let has_condition = |obj: &K| condition_status(obj, type_).as_deref() == Some(status);
    match wait_for(api, name, has_condition, timeout).await {
        Err(Error::Timeout {
            object,
            timeout,
            last_seen,
            ..
        }) => Err(Error::Timeout {
            object,
            waiting_for: format!("to have condition {type_}={status}"),
            timeout,
            last_seen,
        }),
        other => other,
    }
}

/// Waits until the object `name` no longer exists (returns at once if it never did).
pub async fn wait_deleted<K>(api: &Api<K>, name: &str, timeout: Duration) -> Result<()>
where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned + Send + 'static,
    K::DynamicType: Default,
{
    let object = describe(api, name);
    let mut last: Option<K> = None;
    let watch = async {
        let mut stream = pin!(watch_object(api.clone(), name));
        while let Some(event) = stream.next().await {
            match event {
                Ok(None) => return Ok(()),
                Ok(Some(obj)) => last = Some(obj),
                Err(source) => {
                    return Err(Error::Watch {
                        object: object.clone(),
                        source,
                    });
                }
            }
        }
        std::future::pending().await
    };
    match tokio::time::timeout(timeout, watch).await {
        Ok(result) => result,
        Err(_) => {
            let finalizers = last
                .as_ref()
                .and_then(|o| o.meta().finalizers.clone())
                .unwrap_or_default();
            let mut last_seen = last_seen(last.map(Some).as_ref());
            if !finalizers.is_empty() {
                last_seen = format!("finalizers {finalizers:?} remain; {last_seen}");
            }
            Err(Error::Timeout {
                object,
                waiting_for: "to be deleted".to_string(),
                timeout,
                last_seen,
            })
        }
    }
}

/// The status of the condition `type_` under `status.conditions`, if there is one.
fn condition_status<K: Serialize>(obj: &K, type_: &str) -> Option<String> {
    let value = serde_json::to_value(obj).ok()?;
    value
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))?
        .get("status")?
        .as_str()
        .map(str::to_string)
}

/// `Kind namespace/name` (or `Kind name` for cluster-scoped objects).
pub(crate) fn describe<K>(api: &Api<K>, name: &str) -> String
where
    K: Resource,
    K::DynamicType: Default,
{
    format!(
        "{} {}",
        K::kind(&K::DynamicType::default()),
        qualified(api.namespace(), name)
    )
}

/// `namespace/name`, or `name` without a namespace.
pub(crate) fn qualified(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

/// What a timeout error says was seen last.
fn last_seen<K: Resource + Serialize>(last: Option<&Option<K>>) -> String {
    let obj = match last {
        None => return "nothing was seen (is the watch allowed?)".to_string(),
        Some(None) => return "it was not found".to_string(),
        Some(Some(obj)) => obj,
    };
    let rv = obj.meta().resource_version.clone().unwrap_or_default();
    let status = serde_json::to_value(obj)
        .ok()
        .and_then(|v| v.get("status").cloned());
    match status {
        None | Some(Value::Null) => format!("last seen at resourceVersion {rv}, without status"),
        Some(status) => {
            let mut text = status.to_string();
            if text.len() > LAST_SEEN_LIMIT {
                let mut end = LAST_SEEN_LIMIT;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                text.push('…');
            }
            format!("last seen at resourceVersion {rv} with status {text}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition, DeploymentStatus};

    #[test]
    fn conditions_are_read_from_status() {
        let mut d = Deployment::default();
        assert_eq!(condition_status(&d, "Available"), None);
        d.status = Some(DeploymentStatus {
            conditions: Some(vec![DeploymentCondition {
                type_: Some("Available".into()),
                status: Some("True".into()),
                ..DeploymentCondition::default()
            }]),
            ..DeploymentStatus::default()
        });
        assert_eq!(condition_status(&d, "Available").as_deref(), Some("True"));
        assert_eq!(condition_status(&d, "Progressing"), None);
    }

    #[test]
    fn last_seen_says_what_was_seen() {
        assert!(last_seen::<Deployment>(None).contains("nothing was seen"));
        assert_eq!(last_seen::<Deployment>(Some(&None)), "it was not found");
        let mut d = Deployment::default();
        d.metadata.resource_version = Some("7".into());
        assert_eq!(
            last_seen(Some(&Some(d.clone()))),
            "last seen at resourceVersion 7, without status"
        );
        d.status = Some(DeploymentStatus {
            replicas: Some(2),
            ..DeploymentStatus::default()
        });
        assert_eq!(
            last_seen(Some(&Some(d))),
            r#"last seen at resourceVersion 7 with status {"replicas":2}"#
        );
    }

    #[test]
    fn objects_are_named_with_their_namespace() {
        assert_eq!(qualified(Some("ns"), "a"), "ns/a");
        assert_eq!(qualified(None, "a"), "a");
        assert_eq!(qualified(Some(""), "a"), "a");
    }
}
