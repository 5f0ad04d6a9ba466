//! Ownership: [`get_controlled`] reads an object a controller made and checks that the
//! expected owner controls it (an owner reference with `controller: true` and the owner's
//! uid), which is what garbage collection and `Owns` watches rely on.

use std::fmt::Debug;

use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Reads the object `name` through `api` and returns it if `owner` controls it.
///
/// ```no_run
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kube::Api;
///
/// # async fn run(client: kube::Client, owner: &k8s_openapi::api::core::v1::ConfigMap)
/// # -> mni_testkit::Result<()> {
/// let deployments: Api<Deployment> = Api::namespaced(client, "default");
/// let web = mni_testkit::get_controlled(&deployments, "web", owner).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`Error::Api`] when the object cannot be read, [`Error::NotControlled`] when `owner` does
/// not control it (the error lists the owner references it has).
pub async fn get_controlled<K, O>(api: &Api<K>, name: &str, owner: &O) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned,
    O: Resource<DynamicType = ()>,
{
    let object = format!("{} {name}", K::kind(&()));
    let obj = api.get(name).await.map_err(|source| Error::Api {
        action: format!("reading {object}"),
        source,
    })?;
    let uid = owner.meta().uid.as_deref();
    let controlled = obj
        .owner_references()
        .iter()
        .any(|r| r.controller == Some(true) && Some(r.uid.as_str()) == uid);
    if controlled {
        Ok(obj)
    } else {
        Err(Error::NotControlled {
            object,
            owner: format!(
                "{} {} (uid {})",
                O::kind(&()),
                owner.meta().name.as_deref().unwrap_or_default(),
                uid.unwrap_or("none")
            ),
            owner_references: obj
                .owner_references()
                .iter()
                .map(|r| {
                    format!(
                        "{} {} (uid {}, controller: {:?})",
                        r.kind, r.name, r.uid, r.controller
                    )
                })
                .collect(),
        })
    }
}
