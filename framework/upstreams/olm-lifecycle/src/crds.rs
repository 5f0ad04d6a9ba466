//! The six upstream `operators.coreos.com` CRDs, embedded unchanged, and their installation.
//!
//! The YAML files in `crds/` are OLM's own (Apache-2.0, see the crate README); they are
//! parsed at run time, so whatever upstream's schema says is what the API server enforces.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;

/// The field manager of the CRD installation.
const FIELD_MANAGER: &str = "mni-olm-lifecycle";

/// OLM's CRDs as published: file name and content.
const SOURCES: [(&str, &str); 6] = [
    (
        "operators.coreos.com_catalogsources.yaml",
        include_str!("../crds/operators.coreos.com_catalogsources.yaml"),
    ),
    (
        "operators.coreos.com_clusterserviceversions.yaml",
        include_str!("../crds/operators.coreos.com_clusterserviceversions.yaml"),
    ),
    (
        "operators.coreos.com_installplans.yaml",
        include_str!("../crds/operators.coreos.com_installplans.yaml"),
    ),
    (
        "operators.coreos.com_operatorconditions.yaml",
        include_str!("../crds/operators.coreos.com_operatorconditions.yaml"),
    ),
    (
        "operators.coreos.com_operatorgroups.yaml",
        include_str!("../crds/operators.coreos.com_operatorgroups.yaml"),
    ),
    (
        "operators.coreos.com_subscriptions.yaml",
        include_str!("../crds/operators.coreos.com_subscriptions.yaml"),
    ),
];

/// Why the OLM CRDs could not be read or installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An embedded CRD file is not a CustomResourceDefinition (the crate was built from a
    /// broken copy of upstream's files).
    #[error("the embedded CRD file crds/{file} does not parse: {source}")]
    Parse {
        /// The file under `crds/`.
        file: &'static str,
        /// What the YAML parser said.
        #[source]
        source: serde_yaml::Error,
    },
    /// The API server refused a CRD, or it did not become `Established`.
    #[error(transparent)]
    Install(#[from] mni_crd_install::Error),
}

/// The six OLM CRDs (CatalogSource, ClusterServiceVersion, InstallPlan, OperatorCondition,
/// OperatorGroup, Subscription), as upstream publishes them.
pub fn crds() -> Result<Vec<CustomResourceDefinition>, Error> {
    SOURCES
        .iter()
        .map(|(file, text)| {
            serde_yaml::from_str(text).map_err(|source| Error::Parse { file, source })
        })
        .collect()
}

/// Installs the OLM CRDs that are absent and waits until all are `Established`.
pub(crate) async fn install(client: &Client, timeout: Duration) -> Result<(), Error> {
    let crds = crds()?;
    mni_crd_install::install_absent(client, &crds, FIELD_MANAGER, timeout).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_six_crds_parse_with_upstream_names() {
        let names: Vec<String> = crds()
            .expect("crds")
            .into_iter()
            .map(|c| c.metadata.name.unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            [
                "catalogsources.operators.coreos.com",
                "clusterserviceversions.operators.coreos.com",
                "installplans.operators.coreos.com",
                "operatorconditions.operators.coreos.com",
                "operatorgroups.operators.coreos.com",
                "subscriptions.operators.coreos.com",
            ]
        );
    }
}
