//! The checked-in CRDs equal what the types generate, and keep upstream's names and columns.

use serde_json::{Value, json};

#[test]
fn checked_in_crds_match_the_code() {
    mni_testkit::assert_crds_checked_in(
        env!("CARGO_MANIFEST_DIR"),
        &mni_kubevirt::crds(),
        "cargo run -q -p mni-kubevirt --example crds",
    );
}

fn crd(name: &str) -> Value {
    let crd = mni_kubevirt::crds()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no CRD {name}"));
    serde_json::to_value(crd).expect("crd json")
}

fn columns(crd: &Value) -> Vec<(String, String)> {
    crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["jsonPath"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn crds_keep_upstream_names_short_names_and_columns() {
    let expected = [
        (
            "virtualmachines.kubevirt.io",
            "VirtualMachine",
            json!(["vm", "vms"]),
            vec!["Age", "Status", "Ready"],
        ),
        (
            "virtualmachineinstances.kubevirt.io",
            "VirtualMachineInstance",
            json!(["vmi", "vmis"]),
            vec!["Age", "Phase", "IP", "NodeName", "Ready"],
        ),
        (
            "datavolumes.cdi.kubevirt.io",
            "DataVolume",
            json!(["dv", "dvs"]),
            vec!["Phase", "Progress", "Restarts", "Age"],
        ),
    ];
    assert_eq!(mni_kubevirt::crds().len(), expected.len());
    for (name, kind, short, cols) in expected {
        let crd = crd(name);
        let spec = &crd["spec"];
        assert_eq!(spec["scope"], "Namespaced", "{name}");
        assert_eq!(spec["names"]["kind"], kind, "{name}");
        assert_eq!(spec["names"]["shortNames"], short, "{name}");
        let version = &spec["versions"][0];
        assert_eq!(version["subresources"]["status"], json!({}), "{name}");
        let schema = version["schema"]["openAPIV3Schema"].to_string();
        assert!(!schema.contains("$ref"), "{name}: {schema}");
        let names: Vec<String> = columns(&crd).into_iter().map(|c| c.0).collect();
        assert_eq!(names, cols, "{name}");
    }
    let vm = crd("virtualmachines.kubevirt.io");
    let spec = &vm["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["properties"]["runStrategy"]["enum"],
        json!(["Always", "RerunOnFailure", "Halted", "Manual", "Once"])
    );
    let template = &spec["properties"]["template"]["properties"]["spec"]["properties"];
    for field in ["domain", "volumes", "networks"] {
        assert!(template.get(field).is_some(), "template.spec.{field}");
    }
    let volume = &template["volumes"]["items"]["properties"];
    for field in [
        "containerDisk",
        "dataVolume",
        "cloudInitNoCloud",
        "cloudInitConfigDrive",
    ] {
        assert!(volume.get(field).is_some(), "volumes[].{field}");
    }
    assert!(
        volume["cloudInitNoCloud"]["properties"]
            .get("secretRef")
            .is_some()
    );
    let vmi = crd("virtualmachineinstances.kubevirt.io");
    assert!(columns(&vmi).contains(&("IP".into(), ".status.interfaces[0].ipAddress".into())));
}

#[test]
fn upstream_objects_deserialize() {
    let vm: mni_kubevirt::v1::VirtualMachine = serde_json::from_value(json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": "vm-cirros", "namespace": "default"},
        "spec": {
            "running": false,
            "template": {
                "metadata": {"labels": {"kubevirt.io/vm": "vm-cirros"}},
                "spec": {
                    "domain": {
                        "devices": {
                            "disks": [{"disk": {"bus": "virtio"}, "name": "containerdisk"}],
                            "interfaces": [{"name": "default", "masquerade": {}}],
                        },
                        "resources": {"requests": {"memory": "128Mi"}},
                        "machine": {"type": "q35"},
                    },
                    "networks": [{"name": "default", "pod": {}}],
                    "volumes": [
                        {"name": "containerdisk", "containerDisk": {"image": "quay.io/kubevirt/cirros-container-disk-demo:latest"}},
                        {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": "#!/bin/sh\necho hi\n"}},
                    ],
                },
            },
        },
        "status": {"printableStatus": "SomethingNew", "created": false, "ready": false},
    }))
    .expect("vm");
    // What mNi does not model survives a round trip.
    assert_eq!(
        vm.spec.template.spec.domain.unmodelled["machine"],
        json!({"type": "q35"})
    );
    let back = serde_json::to_value(&vm.spec.template.spec.domain).expect("json");
    assert_eq!(back["machine"], json!({"type": "q35"}));
    assert_eq!(
        vm.spec.effective_run_strategy(),
        mni_kubevirt::v1::RunStrategy::Halted
    );
    assert_eq!(
        vm.status.and_then(|s| s.printable_status),
        Some(mni_kubevirt::v1::PrintableStatus::Unknown)
    );
    let dv: mni_kubevirt::cdi::DataVolume = serde_json::from_value(json!({
        "apiVersion": "cdi.kubevirt.io/v1beta1",
        "kind": "DataVolume",
        "metadata": {"name": "alpine", "namespace": "default"},
        "spec": {
            "source": {"http": {"url": "https://example.com/alpine.qcow2"}},
            "storage": {"resources": {"requests": {"storage": "2Gi"}}},
        },
        "status": {"phase": "ImportInProgress", "progress": "45.20%"},
    }))
    .expect("dv");
    assert_eq!(
        dv.spec.claim().and_then(|c| c.size()).map(|q| q.0.as_str()),
        Some("2Gi")
    );
    assert_eq!(
        dv.status.and_then(|s| s.phase),
        Some(mni_kubevirt::cdi::DataVolumePhase::ImportInProgress)
    );
}
