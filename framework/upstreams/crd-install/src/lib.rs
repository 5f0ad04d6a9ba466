//! Installing the CustomResourceDefinitions of a simulated upstream, once for all simulators.
//!
//! The fake Kube-OVN, KubeVirt and Metal3 controllers (`mni-kubeovn`, `mni-kubevirt`,
//! `mni-metal3`) install their subset's CRDs before they start, as `mni-dev up
//! --simulate-upstream …` needs them before it says ready. [`install_absent`] does that: it
//! applies (server-side, forced) each CRD that does not exist, leaves existing ones alone — so
//! upstream's own CRDs, loaded first, are used as they are — and waits until every one is
//! `Established`.
//!
//! (`mni-testkit`'s `TestEnv::install_crds` differs on purpose: it applies every CRD, for
//! tests that install their own.)

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};

/// Why the CRDs could not be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A CRD could not be read or installed.
    #[error("installing CustomResourceDefinition {name}: {source}")]
    Install {
        /// The CRD's name.
        name: String,
        /// What the API server said.
        #[source]
        source: kube::Error,
    },
    /// A CRD did not become `Established` in time.
    #[error("CustomResourceDefinition {name} is not Established after {timeout:?}")]
    NotEstablished {
        /// The CRD's name.
        name: String,
        /// How long it was waited for.
        timeout: Duration,
    },
}

/// Installs each of `crds` that is absent, with server-side apply as `field_manager`, and
/// waits up to `timeout` until all of them are `Established`. Existing CRDs are not changed.
pub async fn install_absent(
    client: &Client,
    crds: &[CustomResourceDefinition],
    field_manager: &str,
    timeout: Duration,
) -> Result<(), Error> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(field_manager).force();
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let install_error = |source| Error::Install {
            name: name.clone(),
            source,
        };
        if api.get_opt(&name).await.map_err(install_error)?.is_some() {
            continue;
        }
        // Only what the author wrote: status and server-set metadata are not applied.
        let clean = CustomResourceDefinition {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            spec: crd.spec.clone(),
            status: None,
        };
        api.patch(&name, &params, &Patch::Apply(&clean))
            .await
            .map_err(install_error)?;
    }
    let deadline = tokio::time::Instant::now() + timeout;
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        loop {
            let current = api.get_opt(&name).await.map_err(|source| Error::Install {
                name: name.clone(),
                source,
            })?;
            if is_established(current.as_ref()) {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::NotEstablished { name, timeout });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}

/// Whether a CRD reports `Established=True`.
fn is_established(crd: Option<&CustomResourceDefinition>) -> bool {
    crd.and_then(|c| c.status.as_ref())
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceDefinitionCondition, CustomResourceDefinitionStatus,
    };

    fn with_condition(type_: &str, status: &str) -> CustomResourceDefinition {
        CustomResourceDefinition {
            status: Some(CustomResourceDefinitionStatus {
                conditions: Some(vec![CustomResourceDefinitionCondition {
                    type_: type_.into(),
                    status: status.into(),
                    ..CustomResourceDefinitionCondition::default()
                }]),
                ..CustomResourceDefinitionStatus::default()
            }),
            ..CustomResourceDefinition::default()
        }
    }

    #[test]
    fn only_established_true_counts() {
        assert!(is_established(Some(&with_condition("Established", "True"))));
        assert!(!is_established(Some(&with_condition(
            "Established",
            "False"
        ))));
        assert!(!is_established(Some(&with_condition(
            "NamesAccepted",
            "True"
        ))));
        assert!(!is_established(None));
    }
}
