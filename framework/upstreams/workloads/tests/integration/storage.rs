//! Volumes against a real API server over HTTP with the simulator running: the default
//! StorageClass, claims that wait for their first consumer and are then provisioned and
//! bound, static volumes bound by class and size, and reclaiming when the claim goes.

use crate::common;

use common::{Env, wait_for};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

fn claim(name: &str, class: Option<&str>, size: &str) -> serde_json::Value {
    let mut spec =
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}});
    if let Some(c) = class {
        spec["storageClassName"] = json!(c);
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

fn phase(pvc: &PersistentVolumeClaim) -> Option<&str> {
    pvc.status.as_ref()?.phase.as_deref()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_wait_for_a_consumer_then_bind_to_a_provisioned_volume() {
    let env = Env::start().await;
    let classes: Api<StorageClass> = Api::all(env.client.clone());
    let standard = wait_for("the default class", || async {
        classes.get("standard").await.ok()
    })
    .await;
    assert_eq!(standard.provisioner, "mni.dev/local-path");
    assert_eq!(
        standard.volume_binding_mode.as_deref(),
        Some("WaitForFirstConsumer")
    );

    env.create::<PersistentVolumeClaim>(claim("data", None, "2Gi"))
        .await;
    let claims: Api<PersistentVolumeClaim> = env.api();
    // The default class is assigned; the claim waits for a pod.
    let pending = wait_for("the default class on the claim", || async {
        let c = claims.get("data").await.ok()?;
        c.spec.as_ref()?.storage_class_name.is_some().then_some(c)
    })
    .await;
    assert_eq!(
        pending
            .spec
            .as_ref()
            .and_then(|s| s.storage_class_name.as_deref()),
        Some("standard")
    );
    assert_eq!(phase(&pending), Some("Pending"));

    env.create::<Pod>(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"containers": [{"name": "db", "image": "postgres:17"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
    }))
    .await;
    let bound = wait_for("the claim bound", || async {
        let c = claims.get("data").await.ok()?;
        (phase(&c) == Some("Bound")).then_some(c)
    })
    .await;
    let uid = bound.metadata.uid.clone().expect("uid");
    let volume = bound
        .spec
        .as_ref()
        .and_then(|s| s.volume_name.clone())
        .expect("volumeName");
    assert_eq!(volume, format!("pvc-{uid}"));
    let annotations = bound.metadata.annotations.clone().expect("annotations");
    assert_eq!(annotations["volume.kubernetes.io/selected-node"], "mni-dev");
    assert_eq!(annotations["pv.kubernetes.io/bind-completed"], "yes");
    assert_eq!(
        bound
            .status
            .as_ref()
            .and_then(|s| s.capacity.as_ref())
            .expect("capacity")["storage"]
            .0,
        "2Gi"
    );

    let volumes: Api<PersistentVolume> = Api::all(env.client.clone());
    let pv = wait_for("the volume bound", || async {
        let pv = volumes.get(&volume).await.ok()?;
        (pv.status.as_ref()?.phase.as_deref() == Some("Bound")).then_some(pv)
    })
    .await;
    let spec = pv.spec.expect("spec");
    assert_eq!(spec.claim_ref.and_then(|r| r.uid), Some(uid));
    assert_eq!(
        spec.persistent_volume_reclaim_policy.as_deref(),
        Some("Delete")
    );
    assert!(spec.host_path.is_some() && spec.node_affinity.is_some());

    // The claim gone, its provisioned volume is deleted.
    env.api::<Pod>()
        .delete("db", &DeleteParams::default())
        .await
        .expect("delete pod");
    claims
        .delete("data", &DeleteParams::default())
        .await
        .expect("delete claim");
    wait_for("the volume deleted", || async {
        volumes.get_opt(&volume).await.ok()?.is_none().then_some(())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_volumes_bind_by_class_size_and_are_released() {
    let env = Env::start().await;
    let volumes: Api<PersistentVolume> = Api::all(env.client.clone());
    for (name, size) in [("small", "1Gi"), ("large", "10Gi")] {
        let pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "manual", "persistentVolumeReclaimPolicy": "Retain",
                     "hostPath": {"path": format!("/srv/{name}")}},
        }))
        .expect("pv");
        volumes
            .create(&PostParams::default(), &pv)
            .await
            .expect("create pv");
    }
    wait_for("static volumes available", || async {
        let list = volumes.list(&Default::default()).await.ok()?;
        list.items
            .iter()
            .all(|pv| pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Available"))
            .then_some(())
    })
    .await;
    env.create::<PersistentVolumeClaim>(claim("logs", Some("manual"), "5Gi"))
        .await;
    let claims: Api<PersistentVolumeClaim> = env.api();
    let bound = wait_for("the claim bound", || async {
        let c = claims.get("logs").await.ok()?;
        (phase(&c) == Some("Bound")).then_some(c)
    })
    .await;
    assert_eq!(
        bound.spec.and_then(|s| s.volume_name).as_deref(),
        Some("large"),
        "the smallest that fits"
    );

    // A class whose provisioner is not here: the claim stays Pending.
    let classes: Api<StorageClass> = Api::all(env.client.clone());
    let other: StorageClass = serde_json::from_value(json!({
        "metadata": {"name": "ebs"}, "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "Immediate",
    }))
    .expect("class");
    classes
        .create(&PostParams::default(), &other)
        .await
        .expect("create class");
    env.create::<PersistentVolumeClaim>(claim("cloud", Some("ebs"), "1Gi"))
        .await;

    claims
        .delete("logs", &DeleteParams::default())
        .await
        .expect("delete claim");
    wait_for("the volume released and kept", || async {
        let pv = volumes.get("large").await.ok()?;
        (pv.status.as_ref()?.phase.as_deref() == Some("Released")).then_some(())
    })
    .await;
    let cloud = claims.get("cloud").await.expect("claim");
    assert_eq!(phase(&cloud), Some("Pending"));
    assert!(cloud.spec.and_then(|s| s.volume_name).is_none());
    env.stop().await;
}
