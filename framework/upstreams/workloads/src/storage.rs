//! Volumes as a cluster with a local-path provisioner has them (kind's `standard` class):
//! kube-controller-manager's PersistentVolume binder and a provisioner of local volumes.
//!
//! - A default StorageClass `standard` (provisioner [`PROVISIONER`], `WaitForFirstConsumer`,
//!   reclaim `Delete`) is created at start unless one is marked default already.
//! - A claim without a class gets the default one (kube's retroactive default class
//!   assignment). A claim binds to the smallest `Available` PersistentVolume of its class
//!   that is large enough, has its access modes and volume mode and matches its selector;
//!   otherwise, for a class of this provisioner, a volume is provisioned: at once for
//!   `Immediate` binding, or once a pod that uses the claim is bound to a node for
//!   `WaitForFirstConsumer` (the claim then carries `volume.kubernetes.io/selected-node`).
//!   The volume is a `hostPath` under `/var/lib/mni/local-path`, pinned to the node by node
//!   affinity, named `pvc-<claim uid>`. Claims of other provisioners' classes stay `Pending`,
//!   as they do until that provisioner acts.
//! - Both sides then say `Bound` (the claim's `volumeName`, capacity and access modes, the
//!   volume's `claimRef`, with the binder's annotations). A volume whose claim is gone is
//!   `Released`, and deleted when its reclaim policy is `Delete` and this provisioner made it;
//!   an unclaimed volume is `Available`.
//!
//! Nothing is written to the host: the simulated pods never run, so the path is only a name.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{
    HostPathVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectReference,
    PersistentVolume, PersistentVolumeClaim, PersistentVolumeSpec, Pod, VolumeNodeAffinity,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

/// The provisioner of the simulated local volumes.
pub const PROVISIONER: &str = "mni.dev/local-path";

/// The annotation marking the default StorageClass.
const DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// The annotation recording the node a WaitForFirstConsumer claim's pod landed on.
const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// Where the volumes would live on the node.
const BASE_PATH: &str = "/var/lib/mni/local-path";

/// Errors of the volume controllers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// The API server refused a read or write.
    #[error("{what}: {source}")]
    Api {
        /// What was attempted.
        what: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}

fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let what = what.into();
    move |e| Error::Api {
        what,
        source: Box::new(e),
    }
}

/// What both controllers need.
struct Context {
    client: Client,
}

/// Creates the default StorageClass unless there is one, then runs the claim binder and the
/// volume controller until dropped.
pub(crate) async fn run(client: Client) {
    if let Err(e) = ensure_default_class(&client).await {
        tracing::warn!(error = %e, "could not create the default StorageClass");
    }
    let cx = Arc::new(Context {
        client: client.clone(),
    });
    let claims = Controller::new(
        Api::<PersistentVolumeClaim>::all(client.clone()),
        watcher::Config::default(),
    )
    .watches(
        Api::<Pod>::all(client.clone()),
        watcher::Config::default(),
        |pod: Pod| {
            let ns = pod.namespace().unwrap_or_default();
            let claims: Vec<ObjectRef<PersistentVolumeClaim>> = pod
                .spec
                .iter()
                .flat_map(|s| s.volumes.iter().flatten())
                .filter_map(|v| v.persistent_volume_claim.as_ref())
                .map(|c| ObjectRef::new(&c.claim_name).within(&ns))
                .collect();
            claims
        },
    )
    .run(reconcile_claim, retry, cx.clone())
    .for_each(|_| async {});
    let volumes = Controller::new(
        Api::<PersistentVolume>::all(client.clone()),
        watcher::Config::default(),
    )
    .watches(
        Api::<PersistentVolumeClaim>::all(client),
        watcher::Config::default(),
        |pvc: PersistentVolumeClaim| {
            pvc.spec
                .and_then(|s| s.volume_name)
                .map(|v| ObjectRef::new(&v))
        },
    )
    .run(reconcile_volume, retry, cx)
    .for_each(|_| async {});
    tokio::join!(claims, volumes);
}

fn retry<K>(_: Arc<K>, e: &Error, _: Arc<Context>) -> Action {
    tracing::debug!(error = %e, "volume reconcile failed; will retry");
    Action::requeue(Duration::from_secs(1))
}

async fn ensure_default_class(client: &Client) -> Result<(), Error> {
    let classes: Api<StorageClass> = Api::all(client.clone());
    let list = classes
        .list(&ListParams::default())
        .await
        .map_err(api_err("listing StorageClasses"))?;
    if list.items.iter().any(is_default) {
        return Ok(());
    }
    let class = StorageClass {
        metadata: ObjectMeta {
            name: Some("standard".into()),
            annotations: Some([(DEFAULT_CLASS.to_string(), "true".to_string())].into()),
            ..Default::default()
        },
        provisioner: PROVISIONER.into(),
        reclaim_policy: Some("Delete".into()),
        volume_binding_mode: Some("WaitForFirstConsumer".into()),
        ..Default::default()
    };
    match classes.create(&PostParams::default(), &class).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(api_err("creating the default StorageClass")(e)),
    }
}

fn is_default(c: &StorageClass) -> bool {
    c.annotations()
        .get(DEFAULT_CLASS)
        .is_some_and(|v| v == "true")
}

/// A quantity in bytes (0 when unreadable or negative).
fn bytes(q: Option<&Quantity>) -> u128 {
    q.and_then(|q| q.0.trim().parse::<mni_formats::quantity::Quantity>().ok())
        .and_then(|q| u128::try_from(q.units()).ok())
        .unwrap_or(0)
}

fn requested(pvc: &PersistentVolumeClaim) -> Option<&Quantity> {
    pvc.spec
        .as_ref()?
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get("storage")
}

/// Whether `pv` can serve `pvc` (class, size, access modes, volume mode, selector).
fn fits(pv: &PersistentVolume, pvc: &PersistentVolumeClaim, class: &str) -> bool {
    let (Some(spec), Some(claim)) = (pv.spec.as_ref(), pvc.spec.as_ref()) else {
        return false;
    };
    let available = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Available")
        || pv
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_none();
    let unclaimed = spec.claim_ref.as_ref().is_none_or(|r| {
        r.name.as_deref() == pvc.metadata.name.as_deref()
            && r.namespace.as_deref() == pvc.metadata.namespace.as_deref()
    });
    let modes = claim
        .access_modes
        .iter()
        .flatten()
        .all(|m| spec.access_modes.iter().flatten().any(|have| have == m));
    let volume_mode = |m: Option<&String>| m.map_or("Filesystem", String::as_str).to_string();
    let labels = pv.labels();
    let selected = claim.selector.as_ref().is_none_or(|sel| {
        sel.match_labels
            .iter()
            .flatten()
            .all(|(k, v)| labels.get(k) == Some(v))
    });
    available
        && unclaimed
        && pv.metadata.deletion_timestamp.is_none()
        && spec.storage_class_name.as_deref().unwrap_or_default() == class
        && bytes(spec.capacity.as_ref().and_then(|c| c.get("storage"))) >= bytes(requested(pvc))
        && modes
        && volume_mode(spec.volume_mode.as_ref()) == volume_mode(claim.volume_mode.as_ref())
        && selected
}

fn claim_ref(pvc: &PersistentVolumeClaim) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("PersistentVolumeClaim".into()),
        name: pvc.metadata.name.clone(),
        namespace: pvc.metadata.namespace.clone(),
        uid: pvc.metadata.uid.clone(),
        resource_version: pvc.metadata.resource_version.clone(),
        ..Default::default()
    }
}

/// The volume this provisioner makes for `pvc` on `node`.
fn provisioned(pvc: &PersistentVolumeClaim, class: &StorageClass, node: &str) -> PersistentVolume {
    let uid = pvc.metadata.uid.clone().unwrap_or_default();
    let name = format!("pvc-{uid}");
    let ns = pvc.namespace().unwrap_or_default();
    let spec = pvc.spec.clone().unwrap_or_default();
    let storage = requested(pvc)
        .cloned()
        .unwrap_or_else(|| Quantity("1Gi".into()));
    PersistentVolume {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            annotations: Some(
                [(
                    "pv.kubernetes.io/provisioned-by".to_string(),
                    PROVISIONER.to_string(),
                )]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(PersistentVolumeSpec {
            capacity: Some(BTreeMap::from([("storage".to_string(), storage)])),
            access_modes: spec.access_modes.clone(),
            claim_ref: Some(claim_ref(pvc)),
            persistent_volume_reclaim_policy: Some(
                class
                    .reclaim_policy
                    .clone()
                    .unwrap_or_else(|| "Delete".into()),
            ),
            storage_class_name: class.metadata.name.clone(),
            volume_mode: Some(spec.volume_mode.unwrap_or_else(|| "Filesystem".into())),
            host_path: Some(HostPathVolumeSource {
                path: format!("{BASE_PATH}/{name}_{ns}_{}", pvc.name_any()),
                type_: Some("DirectoryOrCreate".into()),
            }),
            node_affinity: Some(VolumeNodeAffinity {
                required: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: "kubernetes.io/hostname".into(),
                            operator: "In".into(),
                            values: Some(vec![node.to_string()]),
                        }]),
                        ..Default::default()
                    }],
                }),
            }),
            ..Default::default()
        }),
        status: None,
    }
}

/// The node of a running pod that uses `pvc`, if any.
async fn consumer_node(
    client: &Client,
    pvc: &PersistentVolumeClaim,
) -> Result<Option<String>, Error> {
    let ns = pvc.namespace().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let list = pods
        .list(&ListParams::default())
        .await
        .map_err(api_err(format!("listing pods in {ns}")))?;
    let name = pvc.name_any();
    Ok(list.items.iter().find_map(|p| {
        let spec = p.spec.as_ref()?;
        let uses = spec.volumes.iter().flatten().any(|v| {
            v.persistent_volume_claim
                .as_ref()
                .is_some_and(|c| c.claim_name == name)
        });
        uses.then(|| spec.node_name.clone()).flatten()
    }))
}

async fn reconcile_claim(
    pvc: Arc<PersistentVolumeClaim>,
    cx: Arc<Context>,
) -> Result<Action, Error> {
    let client = &cx.client;
    let ns = pvc.namespace().unwrap_or_default();
    let name = pvc.name_any();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    let phase = pvc.status.as_ref().and_then(|s| s.phase.as_deref());
    if pvc.metadata.deletion_timestamp.is_some() || phase == Some("Bound") {
        return Ok(Action::await_change());
    }
    let spec = pvc.spec.clone().unwrap_or_default();
    let classes: Api<StorageClass> = Api::all(client.clone());
    let class_name = match spec.storage_class_name.clone() {
        Some(c) => c,
        None => {
            // Retroactive default class assignment.
            let list = classes
                .list(&ListParams::default())
                .await
                .map_err(api_err("listing StorageClasses"))?;
            let Some(default) = list
                .items
                .iter()
                .filter(|c| is_default(c))
                .max_by_key(|c| c.metadata.creation_timestamp.clone())
            else {
                return Ok(Action::await_change());
            };
            let class = default.name_any();
            let body = json!({"spec": {"storageClassName": class}});
            claims
                .patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                .await
                .map_err(api_err(format!(
                    "assigning the default class to {ns}/{name}"
                )))?;
            return Ok(Action::await_change());
        }
    };
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    // A volume already claimed by name (the user's `volumeName`, or a bind half done).
    let wanted = spec.volume_name.clone();
    let all = volumes
        .list(&ListParams::default())
        .await
        .map_err(api_err("listing PersistentVolumes"))?;
    let mut candidates: Vec<&PersistentVolume> = all
        .items
        .iter()
        .filter(|pv| {
            wanted
                .as_deref()
                .is_none_or(|w| pv.metadata.name.as_deref() == Some(w))
        })
        .filter(|pv| fits(pv, &pvc, &class_name))
        .collect();
    candidates.sort_by_key(|pv| {
        bytes(
            pv.spec
                .as_ref()
                .and_then(|s| s.capacity.as_ref())
                .and_then(|c| c.get("storage")),
        )
    });
    let volume = match candidates.first() {
        Some(pv) => (*pv).clone(),
        None if wanted.is_some() => return Ok(Action::await_change()),
        None => {
            let Some(class) = classes
                .get_opt(&class_name)
                .await
                .map_err(api_err(format!("reading StorageClass {class_name}")))?
            else {
                return Ok(Action::await_change());
            };
            if class.provisioner != PROVISIONER {
                return Ok(Action::await_change());
            }
            let wait = class.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer");
            let node = match consumer_node(client, &pvc).await? {
                Some(n) => n,
                None if wait => return Ok(Action::await_change()),
                None => crate::DEFAULT_NODE_NAME.to_string(),
            };
            let mut annotations = json!({
                "volume.kubernetes.io/storage-provisioner": PROVISIONER,
                "volume.beta.kubernetes.io/storage-provisioner": PROVISIONER,
            });
            if wait {
                annotations[SELECTED_NODE] = json!(node);
            }
            claims
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"metadata": {"annotations": annotations}})),
                )
                .await
                .map_err(api_err(format!("annotating {ns}/{name}")))?;
            let pv = provisioned(&pvc, &class, &node);
            match volumes.create(&PostParams::default(), &pv).await {
                Ok(created) => created,
                Err(kube::Error::Api(s)) if s.code == 409 => volumes
                    .get(pv.metadata.name.as_deref().unwrap_or_default())
                    .await
                    .map_err(api_err("reading the provisioned volume"))?,
                Err(e) => return Err(api_err("provisioning a volume")(e)),
            }
        }
    };
    bind(client, &pvc, &volume).await?;
    Ok(Action::await_change())
}

/// Binds `pvc` and `pv` to each other: the volume first, then the claim, as the binder does.
async fn bind(
    client: &Client,
    pvc: &PersistentVolumeClaim,
    pv: &PersistentVolume,
) -> Result<(), Error> {
    let pv_name = pv.name_any();
    let ns = pvc.namespace().unwrap_or_default();
    let name = pvc.name_any();
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let pp = PatchParams::default();
    if pv
        .spec
        .as_ref()
        .and_then(|s| s.claim_ref.as_ref())
        .and_then(|r| r.uid.as_deref())
        != pvc.metadata.uid.as_deref()
    {
        let body = json!({
            "metadata": {"annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}},
            "spec": {"claimRef": claim_ref(pvc)},
        });
        volumes
            .patch(&pv_name, &pp, &Patch::Merge(&body))
            .await
            .map_err(api_err(format!("claiming {pv_name}")))?;
    }
    volumes
        .patch_status(
            &pv_name,
            &pp,
            &Patch::Merge(&json!({"status": {"phase": "Bound"}})),
        )
        .await
        .map_err(api_err(format!("binding {pv_name}")))?;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    let body = json!({
        "metadata": {"annotations": {
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
        }},
        "spec": {"volumeName": pv_name},
    });
    claims
        .patch(&name, &pp, &Patch::Merge(&body))
        .await
        .map_err(api_err(format!("binding {ns}/{name}")))?;
    let spec = pv.spec.clone().unwrap_or_default();
    let status = json!({"status": {
        "phase": "Bound",
        "accessModes": spec.access_modes,
        "capacity": spec.capacity,
    }});
    claims
        .patch_status(&name, &pp, &Patch::Merge(&status))
        .await
        .map_err(api_err(format!("binding {ns}/{name}")))?;
    Ok(())
}

async fn reconcile_volume(pv: Arc<PersistentVolume>, cx: Arc<Context>) -> Result<Action, Error> {
    if pv.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let client = &cx.client;
    let name = pv.name_any();
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let spec = pv.spec.clone().unwrap_or_default();
    let phase = match spec.claim_ref.as_ref() {
        None => "Available",
        Some(r) => {
            let ns = r.namespace.clone().unwrap_or_default();
            let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
            let claim = claims
                .get_opt(r.name.as_deref().unwrap_or_default())
                .await
                .map_err(api_err(format!("reading the claim of {name}")))?;
            match claim {
                Some(c) if r.uid.is_none() || c.metadata.uid == r.uid => {
                    if c.spec.as_ref().and_then(|s| s.volume_name.as_deref()) == Some(name.as_str())
                    {
                        "Bound"
                    } else {
                        // Claimed but not bound yet: the claim's binder finishes it.
                        return Ok(Action::await_change());
                    }
                }
                _ => "Released",
            }
        }
    };
    let ours = pv
        .annotations()
        .get("pv.kubernetes.io/provisioned-by")
        .is_some_and(|p| p == PROVISIONER);
    if phase == "Released"
        && ours
        && spec
            .persistent_volume_reclaim_policy
            .as_deref()
            .unwrap_or("Delete")
            == "Delete"
    {
        match volumes.delete(&name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(api_err(format!("deleting released {name}"))(e)),
        }
        return Ok(Action::await_change());
    }
    if pv.status.as_ref().and_then(|s| s.phase.as_deref()) != Some(phase) {
        volumes
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": {"phase": phase}})),
            )
            .await
            .map_err(api_err(format!("writing the phase of {name}")))?;
    }
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity(s.into())
    }

    #[test]
    fn quantities_in_bytes() {
        assert_eq!(bytes(Some(&q("1Gi"))), 1 << 30);
        assert_eq!(bytes(Some(&q("500M"))), 500_000_000);
        assert_eq!(bytes(Some(&q("1.5Ki"))), 1536);
        assert!(bytes(Some(&q("2Gi"))) > bytes(Some(&q("2G"))));
    }

    #[test]
    fn a_volume_fits_a_claim_by_class_size_and_modes() {
        let pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": "pv1", "labels": {"tier": "fast"}},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "manual"},
            "status": {"phase": "Available"},
        }))
        .expect("pv");
        let claim = |size: &str,
                     modes: serde_json::Value,
                     sel: serde_json::Value|
         -> PersistentVolumeClaim {
            serde_json::from_value(json!({
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"accessModes": modes, "resources": {"requests": {"storage": size}},
                         "selector": sel},
            }))
            .expect("pvc")
        };
        assert!(fits(
            &pv,
            &claim("5Gi", json!(["ReadWriteOnce"]), json!(null)),
            "manual"
        ));
        assert!(!fits(
            &pv,
            &claim("5Gi", json!(["ReadWriteOnce"]), json!(null)),
            "standard"
        ));
        assert!(!fits(
            &pv,
            &claim("20Gi", json!(["ReadWriteOnce"]), json!(null)),
            "manual"
        ));
        assert!(!fits(
            &pv,
            &claim("5Gi", json!(["ReadWriteMany"]), json!(null)),
            "manual"
        ));
        assert!(fits(
            &pv,
            &claim("5Gi", json!([]), json!({"matchLabels": {"tier": "fast"}})),
            "manual"
        ));
        assert!(!fits(
            &pv,
            &claim("5Gi", json!([]), json!({"matchLabels": {"tier": "slow"}})),
            "manual"
        ));
    }
}
