//! Unit tests of the plan: one rule each, on hand-built snapshots.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;

use super::*;
use crate::v1::VirtualMachineSpec;

fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(1_800_000_000).expect("time"))
}

fn settings() -> Settings {
    Settings {
        node_name: "mni-dev-kubevirt".into(),
        pod_cidr: Cidr::parse("10.246.0.0/16").expect("cidr"),
    }
}

fn node() -> NodeInfo {
    NodeInfo {
        name: "mni-dev-kubevirt".into(),
        cpu: 16.0,
        memory: 64.0 * 1024.0 * 1024.0 * 1024.0,
        labels: BTreeMap::new(),
    }
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some("ns".into()),
        uid: Some(format!("uid-{name}")),
        generation: Some(1),
        ..ObjectMeta::default()
    }
}

fn vm(name: &str, spec: Value) -> VirtualMachine {
    VirtualMachine {
        metadata: meta(name),
        spec: serde_json::from_value::<VirtualMachineSpec>(spec).expect("vm spec"),
        status: None,
    }
}

fn vmi(name: &str, spec: Value, status: Value) -> VirtualMachineInstance {
    serde_json::from_value(json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
        "spec": spec,
        "status": status,
    }))
    .expect("vmi")
}

fn dv(url: &str, status: Value) -> DataVolume {
    serde_json::from_value(json!({
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataVolume",
        "metadata": {"name": "disk", "namespace": "ns", "uid": "uid-disk"},
        "spec": {
            "source": {"http": {"url": url}},
            "storage": {"resources": {"requests": {"storage": "1Gi"}}},
        },
        "status": status,
    }))
    .expect("dv")
}

fn bound_claim() -> PersistentVolumeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": "disk", "namespace": "ns"},
        "spec": {},
        "status": {"phase": "Bound"},
    }))
    .expect("pvc")
}

fn status_patch(writes: &[Write], kind: Kind) -> Value {
    writes
        .iter()
        .find_map(|w| match w {
            Write::Status { kind: k, patch, .. } if *k == kind => Some(patch["status"].clone()),
            _ => None,
        })
        .unwrap_or(Value::Null)
}

fn status_patch_of(writes: &[Write], kind: Kind, name: &str) -> Value {
    writes
        .iter()
        .find_map(|w| match w {
            Write::Status {
                kind: k,
                name: n,
                patch,
                ..
            } if *k == kind && n == name => Some(patch["status"].clone()),
            _ => None,
        })
        .unwrap_or(Value::Null)
}

fn created(writes: &[Write], kind: Kind) -> Vec<Value> {
    writes
        .iter()
        .filter_map(|w| match w {
            Write::Create { kind: k, body, .. } if *k == kind => Some(body.clone()),
            _ => None,
        })
        .collect()
}

const CIRROS: &str = "quay.io/kubevirt/cirros-container-disk-demo";

fn small_template(image: &str) -> Value {
    json!({"spec": {
        "domain": {"devices": {}, "resources": {"requests": {"memory": "128Mi"}}},
        "volumes": [{"name": "root", "containerDisk": {"image": image}}],
    }})
}

#[test]
fn a_data_volume_gets_a_claim_and_an_importer_then_imports_step_by_step() {
    let snapshot = Snapshot {
        dvs: vec![dv("https://example.com/disk.qcow2", json!({}))],
        ..Snapshot::default()
    };
    let writes = plan(&snapshot, &settings(), &now());
    let claims = created(&writes, Kind::PersistentVolumeClaim);
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0]["spec"]["resources"]["requests"]["storage"], "1Gi");
    assert_eq!(
        claims[0]["metadata"]["ownerReferences"][0]["kind"],
        "DataVolume"
    );
    let pods = created(&writes, Kind::Pod);
    assert_eq!(pods[0]["spec"]["nodeName"], "mni-dev-kubevirt");
    assert_eq!(pods[0]["metadata"]["name"], "importer-disk");
    assert_eq!(status_patch(&writes, Kind::DataVolume)["phase"], "Pending");

    // Bound: ImportScheduled, ImportInProgress 0, 25, 50, 75, Succeeded.
    let mut status = json!({"phase": "Pending"});
    let mut seen = Vec::new();
    for _ in 0..6 {
        let mut object = dv("https://example.com/disk.qcow2", status.clone());
        let snapshot = Snapshot {
            pvcs: vec![bound_claim()],
            dvs: vec![object.clone()],
            ..Snapshot::default()
        };
        let writes = plan(&snapshot, &settings(), &now());
        let patch = status_patch(&writes, Kind::DataVolume);
        let mut merged =
            serde_json::to_value(object.status.take().unwrap_or_default()).expect("json");
        for (k, v) in patch.as_object().expect("patch") {
            merged[k] = v.clone();
        }
        status = merged;
        seen.push(format!(
            "{} {}",
            status["phase"].as_str().unwrap_or(""),
            status["progress"].as_str().unwrap_or("")
        ));
    }
    assert_eq!(
        seen,
        [
            "ImportScheduled N/A",
            "ImportInProgress 0.00%",
            "ImportInProgress 25.00%",
            "ImportInProgress 50.00%",
            "ImportInProgress 75.00%",
            "Succeeded 100.0%",
        ]
    );
}

#[test]
fn an_invalid_host_fails_the_import_and_a_bad_spec_names_the_field() {
    let snapshot = Snapshot {
        pvcs: vec![bound_claim()],
        dvs: vec![dv(
            "http://images.invalid/disk.qcow2",
            json!({"phase": "ImportScheduled"}),
        )],
        ..Snapshot::default()
    };
    let patch = status_patch(&plan(&snapshot, &settings(), &now()), Kind::DataVolume);
    assert_eq!(patch["phase"], "Failed");
    let running = patch["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .find(|c| c["type"] == "Running")
        .cloned()
        .unwrap_or_default();
    assert_eq!(running["reason"], "Error");
    assert!(
        running["message"]
            .as_str()
            .unwrap_or("")
            .contains("images.invalid: no such host"),
        "{running}"
    );

    let snapshot = Snapshot {
        dvs: vec![dv("ftp://example.com/disk", json!({}))],
        ..Snapshot::default()
    };
    let writes = plan(&snapshot, &settings(), &now());
    assert!(created(&writes, Kind::PersistentVolumeClaim).is_empty());
    let patch = status_patch(&writes, Kind::DataVolume);
    assert_eq!(patch["phase"], "Failed");
    assert!(
        patch.to_string().contains("spec.source.http.url"),
        "{patch}"
    );
}

#[test]
fn run_strategies_create_and_delete_the_instance() {
    let running = vm(
        "web",
        json!({"runStrategy": "Always", "template": small_template(CIRROS)}),
    );
    let snapshot = Snapshot {
        vms: vec![running],
        ..Snapshot::default()
    };
    let writes = plan(&snapshot, &settings(), &now());
    let vmis = created(&writes, Kind::VirtualMachineInstance);
    assert_eq!(vmis.len(), 1);
    assert_eq!(
        vmis[0]["metadata"]["ownerReferences"][0]["kind"],
        "VirtualMachine"
    );
    assert_eq!(vmis[0]["metadata"]["labels"]["vm.kubevirt.io/name"], "web");
    assert_eq!(
        status_patch(&writes, Kind::VirtualMachine)["printableStatus"],
        "Starting"
    );

    let halted = vm(
        "web",
        json!({"running": false, "template": small_template(CIRROS)}),
    );
    let snapshot = Snapshot {
        vms: vec![halted.clone()],
        vmis: vec![vmi(
            "web",
            small_template(CIRROS)["spec"].clone(),
            json!({"phase": "Running"}),
        )],
        ..Snapshot::default()
    };
    let writes = plan(&snapshot, &settings(), &now());
    assert!(writes.contains(&Write::Delete {
        kind: Kind::VirtualMachineInstance,
        namespace: "ns".into(),
        name: "web".into()
    }));
    let snapshot = Snapshot {
        vms: vec![halted],
        ..Snapshot::default()
    };
    let patch = status_patch(&plan(&snapshot, &settings(), &now()), Kind::VirtualMachine);
    assert_eq!(patch["printableStatus"], "Stopped");
    assert_eq!(patch["runStrategy"], "Halted");
}

#[test]
fn a_vm_waits_for_its_data_volumes() {
    let with_dv = vm(
        "db",
        json!({
            "runStrategy": "Always",
            "dataVolumeTemplates": [{
                "metadata": {"name": "db-root"},
                "spec": {"source": {"http": {"url": "https://example.com/x.img"}},
                         "storage": {"resources": {"requests": {"storage": "2Gi"}}}},
            }],
            "template": {"spec": {
                "domain": {"devices": {}},
                "volumes": [{"name": "root", "dataVolume": {"name": "db-root"}}],
            }},
        }),
    );
    let snapshot = Snapshot {
        vms: vec![with_dv],
        ..Snapshot::default()
    };
    let writes = plan(&snapshot, &settings(), &now());
    let dvs = created(&writes, Kind::DataVolume);
    assert_eq!(dvs.len(), 1);
    assert_eq!(dvs[0]["metadata"]["name"], "db-root");
    assert_eq!(dvs[0]["metadata"]["ownerReferences"][0]["name"], "db");
    assert!(created(&writes, Kind::VirtualMachineInstance).is_empty());
    assert_eq!(
        status_patch(&writes, Kind::VirtualMachine)["printableStatus"],
        "Provisioning"
    );
}

#[test]
fn instances_step_through_their_phases_in_a_launcher_pod_and_get_addresses() {
    let spec = small_template(CIRROS)["spec"].clone();
    let mut snapshot = Snapshot {
        node: Some(node()),
        ..Snapshot::default()
    };
    let mut phases = Vec::new();
    let mut status = json!({});
    for _ in 0..6 {
        snapshot.vmis = vec![vmi("web", spec.clone(), status.clone())];
        let writes = plan(&snapshot, &settings(), &now());
        for pod in created(&writes, Kind::Pod) {
            snapshot
                .launchers
                .push(serde_json::from_value(pod).expect("pod"));
        }
        let pod_status = status_patch(&writes, Kind::Pod);
        if let Some(pod) = snapshot.launchers.first_mut()
            && pod_status.is_object()
        {
            let mut merged =
                serde_json::to_value(pod.status.clone().unwrap_or_default()).expect("json");
            for (k, v) in pod_status.as_object().expect("patch") {
                merged[k] = v.clone();
            }
            pod.status = serde_json::from_value(merged).expect("pod status");
        }
        let patch = status_patch(&writes, Kind::VirtualMachineInstance);
        for (k, v) in patch.as_object().into_iter().flatten() {
            status[k] = v.clone();
        }
        let phase = status["phase"].as_str().unwrap_or("").to_string();
        if phases.last() != Some(&phase) {
            phases.push(phase);
        }
    }
    assert_eq!(phases, ["Pending", "Scheduling", "Scheduled", "Running"]);
    assert_eq!(status["nodeName"], "mni-dev-kubevirt");
    assert_eq!(status["interfaces"][0]["ipAddress"], "10.246.0.2");
    assert_eq!(status["interfaces"][0]["name"], "default");
    let launcher = &snapshot.launchers[0];
    assert!(launcher.name_any().starts_with("virt-launcher-web-"));
    assert_eq!(
        launcher.labels().get("kubevirt.io").map(String::as_str),
        Some("virt-launcher")
    );
    let pod_status = launcher.status.clone().unwrap_or_default();
    assert_eq!(pod_status.phase.as_deref(), Some("Running"));
    assert_eq!(pod_status.pod_ip.as_deref(), Some("10.246.0.2"));
    // Converged: nothing more to write.
    snapshot.vmis = vec![vmi("web", spec, status)];
    assert_eq!(plan(&snapshot, &settings(), &now()), []);
}

#[test]
fn oversized_instances_and_bad_images_stay_put_with_a_reason() {
    let big = json!({"domain": {"cpu": {"cores": 32}, "devices": {}}});
    let snapshot = Snapshot {
        node: Some(node()),
        vmis: vec![vmi("big", big, json!({"phase": "Scheduling"}))],
        ..Snapshot::default()
    };
    let patch = status_patch(
        &plan(&snapshot, &settings(), &now()),
        Kind::VirtualMachineInstance,
    );
    assert!(patch.get("phase").is_none(), "{patch}");
    assert!(patch.to_string().contains("Insufficient cpu"), "{patch}");

    let spec = small_template("registry.invalid/nope:latest")["spec"].clone();
    let snapshot = Snapshot {
        node: Some(node()),
        vmis: vec![vmi("bad", spec, json!({"phase": "Scheduled"}))],
        ..Snapshot::default()
    };
    let patch = status_patch(
        &plan(&snapshot, &settings(), &now()),
        Kind::VirtualMachineInstance,
    );
    assert!(patch.to_string().contains("ErrImagePull"), "{patch}");
}

/// The virt-launcher pod of instance `name`, as a previous pass created it.
fn launcher(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": format!("virt-launcher-{name}-abcde"),
            "namespace": "ns",
            "uid": format!("pod-{name}"),
            "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": format!("uid-{name}")},
        },
        "spec": {"nodeName": "mni-dev-kubevirt", "containers": []},
    }))
    .expect("pod")
}

fn subnet() -> Subnet {
    serde_json::from_value(json!({
        "apiVersion": "kubeovn.io/v1",
        "kind": "Subnet",
        "metadata": {"name": "tenant-net"},
        "spec": {"cidrBlock": "10.0.1.0/24", "excludeIps": ["10.0.1.2..10.0.1.9"]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .expect("subnet")
}

fn on_subnet(name: &str, fixed: Option<&str>, status: Value) -> VirtualMachineInstance {
    let mut object = vmi(name, small_template(CIRROS)["spec"].clone(), status);
    let annotations = object
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new);
    annotations.insert(LOGICAL_SWITCH.into(), "tenant-net".into());
    if let Some(ip) = fixed {
        annotations.insert(IP_ADDRESS.into(), ip.into());
    }
    object
}

#[test]
fn kube_ovn_attachments_allocate_from_the_subnet_and_fixed_ips_conflict() {
    let snapshot = Snapshot {
        node: Some(node()),
        subnets: vec![subnet()],
        vmis: vec![
            on_subnet("a", None, json!({"phase": "Scheduled"})),
            on_subnet("b", Some("10.0.1.10"), json!({"phase": "Scheduled"})),
        ],
        launchers: vec![launcher("a"), launcher("b")],
        ..Snapshot::default()
    };
    let writes = plan(&snapshot, &settings(), &now());
    let ips: Vec<String> = writes
        .iter()
        .filter_map(|w| match w {
            Write::Status {
                kind: Kind::VirtualMachineInstance,
                patch,
                ..
            } => patch["status"]["interfaces"][0]["ipAddress"]
                .as_str()
                .map(str::to_string),
            _ => None,
        })
        .collect();
    // .1 is the gateway, .2–.9 excluded; b holds .10 by annotation, so a gets .11.
    assert_eq!(ips, ["10.0.1.11", "10.0.1.10"]);

    let running = on_subnet(
        "a",
        None,
        json!({"phase": "Running", "interfaces": [{"name": "default", "ipAddress": "10.0.1.10"}]}),
    );
    let snapshot = Snapshot {
        node: Some(node()),
        subnets: vec![subnet()],
        vmis: vec![
            running,
            on_subnet("b", Some("10.0.1.10"), json!({"phase": "Scheduled"})),
        ],
        launchers: vec![launcher("a"), launcher("b")],
        ..Snapshot::default()
    };
    let patch = status_patch_of(
        &plan(&snapshot, &settings(), &now()),
        Kind::VirtualMachineInstance,
        "b",
    );
    assert!(patch.to_string().contains("IPConflict"), "{patch}");
    assert!(patch.to_string().contains("ns/a"), "{patch}");
}
