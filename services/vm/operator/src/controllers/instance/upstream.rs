// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The KubeVirt objects an Instance asks for, as pure functions: a `kubevirt.io/v1`
//! VirtualMachine (with `cdi.kubevirt.io/v1beta1` DataVolume templates for an imported boot
//! disk and the data disks) and the Secret holding its cloud-init user data.
//!
//! Names are deterministic: the VirtualMachine has the Instance's name (so `kubectl get vm`
//! and `virtctl` find it by the name the tenant chose), the cloud-init Secret is
//! `NAME-cloud-init`, the boot DataVolume `NAME-boot` and a data disk's `NAME-disk-DISK`. Every
//! object carries the label [`INSTANCE_LABEL`] (the VirtualMachine's instances and DataVolumes
//! too, through its templates), so a change to any of them is mapped back to its Instance.
//!
//! On a VPC subnet the VM's pod network interface is bridged and the template carries Kube-OVN's
//! annotations, as Kube-OVN documents for KubeVirt VMs in a custom VPC:
//! `ovn.kubernetes.io/logical_switch` names the Kube-OVN Subnet and
//! `ovn.kubernetes.io/ip_address` the fixed address, if any. On the pod network the
//! interface is KubeVirt's default, `masquerade`.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::ObjectMeta;
use mni_kubevirt::v1::VirtualMachine;
use serde_json::json;

use crate::api::compute_v1alpha1::catalogue;
use crate::api::compute_v1alpha1::validate::DEFAULT_RUN_STRATEGY;
use crate::api::compute_v1alpha1::{CloudInit, Instance};

/// The label naming the Instance an object belongs to.
pub const INSTANCE_LABEL: &str = "compute.mni.dev/instance";

/// Kube-OVN's annotation naming the subnet of a pod's default interface.
pub const LOGICAL_SWITCH: &str = "ovn.kubernetes.io/logical_switch";

/// Kube-OVN's annotation asking for a fixed address on a pod's default interface.
pub const IP_ADDRESS: &str = "ovn.kubernetes.io/ip_address";

/// The key of the cloud-init Secret KubeVirt reads (`cloudInitNoCloud.secretRef`).
pub const USER_DATA_KEY: &str = "userdata";

/// The name of the VM's network and interface.
pub const INTERFACE: &str = "default";

/// The cloud-init Secret of Instance `name`.
#[must_use]
pub fn cloud_init_secret_name(name: &str) -> String {
    format!("{name}-cloud-init")
}

/// The boot DataVolume of Instance `name` (when it imports its boot disk).
#[must_use]
pub fn boot_volume_name(name: &str) -> String {
    format!("{name}-boot")
}

/// The DataVolume of data disk `disk` of Instance `name`.
#[must_use]
pub fn data_volume_name(name: &str, disk: &str) -> String {
    format!("{name}-disk-{disk}")
}

/// The labels of every object of Instance `name`.
#[must_use]
pub fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (INSTANCE_LABEL.to_owned(), name.to_owned()),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "compute-operator".to_owned(),
        ),
    ])
}

/// Cores and memory (a quantity) of `obj`: its instance type's, else its resources'.
#[must_use]
pub fn size(obj: &Instance) -> (i64, String) {
    if let Some(t) = obj.spec.instance_type.as_deref().and_then(catalogue::find) {
        return (t.cores, t.memory());
    }
    obj.spec
        .resources
        .as_ref()
        .map_or((1, "1Gi".to_owned()), |r| (r.cores, r.memory.clone()))
}

/// Why the cloud-init user data cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloudInitError {
    /// SSH keys and user data that is a script, not a `#cloud-config` document.
    #[error(
        "cloudInit.sshKeys: SSH keys can only be added to #cloud-config user data, and cloudInit.userData is a script"
    )]
    NotCloudConfig,
    /// SSH keys and user data that lists keys of its own.
    #[error(
        "cloudInit.userData: it has ssh_authorized_keys of its own and cloudInit.sshKeys is set; keep the keys in one place"
    )]
    KeysTwice,
    /// The SSH-key Secret has no key.
    #[error("cloudInit.sshKeys: Secret {0} holds no SSH public key")]
    NoKeys(String),
}

/// The SSH public keys in a Secret's values: every non-empty line that is not a comment,
/// values in key order.
#[must_use]
pub fn ssh_keys(secret: &Secret) -> Vec<String> {
    let mut keys = Vec::new();
    let data = secret.data.clone().unwrap_or_default();
    for value in data.values() {
        let text = String::from_utf8_lossy(&value.0);
        for line in text.lines().map(str::trim) {
            if !line.is_empty() && !line.starts_with('#') {
                keys.push(line.to_owned());
            }
        }
    }
    if let Some(strings) = &secret.string_data {
        for value in strings.values() {
            for line in value.lines().map(str::trim) {
                if !line.is_empty() && !line.starts_with('#') {
                    keys.push(line.to_owned());
                }
            }
        }
    }
    keys
}

/// The user data the guest gets: `cloud_init`'s user data, with `keys` (from the SSH-key
/// Secret `secret`) added as `ssh_authorized_keys`; `None` when there is nothing to hand over.
pub fn user_data(
    cloud_init: Option<&CloudInit>,
    secret: Option<&str>,
    keys: &[String],
) -> Result<Option<String>, CloudInitError> {
    let given = cloud_init.and_then(|c| c.user_data.clone());
    if let Some(secret) = secret
        && keys.is_empty()
    {
        return Err(CloudInitError::NoKeys(secret.to_owned()));
    }
    if keys.is_empty() {
        return Ok(given);
    }
    let list: String = keys
        .iter()
        .map(|k| format!("  - \"{}\"\n", k.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    let Some(text) = given else {
        return Ok(Some(format!("#cloud-config\nssh_authorized_keys:\n{list}")));
    };
    if !text.starts_with("#cloud-config") {
        return Err(CloudInitError::NotCloudConfig);
    }
    if text.lines().any(|l| l.starts_with("ssh_authorized_keys:")) {
        return Err(CloudInitError::KeysTwice);
    }
    Ok(Some(format!(
        "{}\nssh_authorized_keys:\n{list}",
        text.trim_end()
    )))
}

/// The cloud-init Secret holding `user_data`.
#[must_use]
pub fn cloud_init_secret(obj: &Instance, user_data: &str) -> Secret {
    let name = obj.name_any();
    Secret {
        metadata: ObjectMeta {
            name: Some(cloud_init_secret_name(&name)),
            namespace: obj.namespace(),
            labels: Some(labels(&name)),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(BTreeMap::from([(
            USER_DATA_KEY.to_owned(),
            ByteString(user_data.as_bytes().to_vec()),
        )])),
        ..Secret::default()
    }
}

/// The VirtualMachine for `obj`: attached to Kube-OVN Subnet `logical_switch` when given
/// (else the pod network), with a cloud-init disk when `cloud_init` (there is user data).
#[must_use]
pub fn virtual_machine(
    obj: &Instance,
    logical_switch: Option<&str>,
    cloud_init: bool,
) -> VirtualMachine {
    let name = obj.name_any();
    let spec = &obj.spec;
    let labels = labels(&name);
    let (cores, memory) = size(obj);

    let mut disks = vec![json!({ "name": "boot", "disk": { "bus": "virtio" }, "bootOrder": 1 })];
    let mut volumes = Vec::new();
    let mut templates = Vec::new();
    match (&spec.boot_disk.image, &spec.boot_disk.http) {
        (_, Some(import)) => {
            let dv = boot_volume_name(&name);
            volumes.push(json!({ "name": "boot", "dataVolume": { "name": dv } }));
            templates.push(data_volume_template(
                &dv,
                &labels,
                json!({ "http": { "url": import.url } }),
                &import.size,
                import.storage_class.as_deref(),
            ));
        }
        (image, None) => {
            volumes.push(json!({
                "name": "boot",
                "containerDisk": { "image": image.clone().unwrap_or_default() },
            }));
        }
    }
    for disk in &spec.data_disks {
        let dv = data_volume_name(&name, &disk.name);
        let volume = format!("disk-{}", disk.name);
        disks.push(json!({ "name": volume, "disk": { "bus": "virtio" }, "serial": disk.name }));
        volumes.push(json!({ "name": volume, "dataVolume": { "name": dv } }));
        templates.push(data_volume_template(
            &dv,
            &labels,
            json!({ "blank": {} }),
            &disk.size,
            disk.storage_class.as_deref(),
        ));
    }
    if cloud_init {
        disks.push(json!({ "name": "cloudinit", "disk": { "bus": "virtio" } }));
        volumes.push(json!({
            "name": "cloudinit",
            "cloudInitNoCloud": { "secretRef": { "name": cloud_init_secret_name(&name) } },
        }));
    }

    let mut annotations = BTreeMap::new();
    let binding = match logical_switch {
        Some(subnet) => {
            annotations.insert(LOGICAL_SWITCH.to_owned(), subnet.to_owned());
            if let Some(ip) = spec
                .network
                .as_ref()
                .and_then(|n| n.vpc.as_ref())
                .and_then(|v| v.ip.clone())
            {
                annotations.insert(IP_ADDRESS.to_owned(), ip);
            }
            "bridge"
        }
        None => "masquerade",
    };
    let mut template_labels = labels.clone();
    template_labels.insert("kubevirt.io/domain".to_owned(), name.clone());
    let value = json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {
            "name": name,
            "namespace": obj.namespace(),
            "labels": labels,
        },
        "spec": {
            "runStrategy": spec.run_strategy.as_deref().unwrap_or(DEFAULT_RUN_STRATEGY),
            "dataVolumeTemplates": templates,
            "template": {
                "metadata": { "labels": template_labels, "annotations": annotations },
                "spec": {
                    "domain": {
                        "cpu": { "cores": cores },
                        "memory": { "guest": memory },
                        "devices": {
                            "disks": disks,
                            "interfaces": [{ "name": INTERFACE, binding: {} }],
                        },
                    },
                    "networks": [{ "name": INTERFACE, "pod": {} }],
                    "volumes": volumes,
                },
            },
        },
    });
    serde_json::from_value(value).unwrap_or_else(|e| unreachable!("a valid VirtualMachine: {e}"))
}

fn data_volume_template(
    name: &str,
    labels: &BTreeMap<String, String>,
    source: serde_json::Value,
    size: &str,
    storage_class: Option<&str>,
) -> serde_json::Value {
    let mut storage = json!({ "resources": { "requests": { "storage": size } } });
    if let Some(class) = storage_class {
        storage["storageClassName"] = json!(class);
    }
    json!({
        "metadata": { "name": name, "labels": labels },
        "spec": { "source": source, "storage": storage },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::compute_v1alpha1::{
        BootDisk, DataDisk, HttpImport, InstanceNetwork, InstanceSpec, Resources, VpcAttachment,
    };

    fn instance(spec: InstanceSpec) -> Instance {
        let mut obj = Instance::new("web-1", spec);
        obj.metadata.namespace = Some("tenant-a".to_owned());
        obj
    }

    #[test]
    fn a_container_disk_vm_on_the_pod_network() {
        let obj = instance(InstanceSpec {
            instance_type: Some("s1.medium".to_owned()),
            boot_disk: BootDisk {
                image: Some("quay.io/containerdisks/fedora:41".to_owned()),
                http: None,
            },
            ..InstanceSpec::default()
        });
        let vm = serde_json::to_value(virtual_machine(&obj, None, false)).expect("json");
        assert_eq!(vm["metadata"]["name"], "web-1");
        assert_eq!(vm["spec"]["runStrategy"], "Always");
        let t = &vm["spec"]["template"];
        assert_eq!(t["spec"]["domain"]["cpu"]["cores"], 2);
        assert_eq!(t["spec"]["domain"]["memory"]["guest"], "4Gi");
        assert_eq!(
            t["spec"]["volumes"][0]["containerDisk"]["image"],
            "quay.io/containerdisks/fedora:41"
        );
        assert_eq!(
            t["spec"]["domain"]["devices"]["interfaces"][0],
            json!({ "name": "default", "masquerade": {} })
        );
        assert_eq!(t["metadata"]["labels"][INSTANCE_LABEL], "web-1");
        assert!(vm["spec"].get("dataVolumeTemplates").is_none());
    }

    #[test]
    fn an_imported_vm_in_a_vpc_subnet() {
        let obj = instance(InstanceSpec {
            resources: Some(Resources {
                cores: 3,
                memory: "3072Mi".to_owned(),
            }),
            boot_disk: BootDisk {
                image: None,
                http: Some(HttpImport {
                    url: "https://images.example.com/debian.qcow2".to_owned(),
                    size: "10Gi".to_owned(),
                    storage_class: Some("fast".to_owned()),
                }),
            },
            data_disks: vec![DataDisk {
                name: "data".to_owned(),
                size: "20Gi".to_owned(),
                storage_class: None,
            }],
            run_strategy: Some("Manual".to_owned()),
            network: Some(InstanceNetwork {
                vpc: Some(VpcAttachment {
                    name: "tenant".to_owned(),
                    subnet: "web".to_owned(),
                    ip: Some("10.0.1.20".to_owned()),
                }),
            }),
            ..InstanceSpec::default()
        });
        let vm =
            serde_json::to_value(virtual_machine(&obj, Some("tenant-web"), true)).expect("json");
        assert_eq!(vm["spec"]["runStrategy"], "Manual");
        let dvs = &vm["spec"]["dataVolumeTemplates"];
        assert_eq!(dvs[0]["metadata"]["name"], "web-1-boot");
        assert_eq!(
            dvs[0]["spec"]["source"]["http"]["url"],
            "https://images.example.com/debian.qcow2"
        );
        assert_eq!(dvs[0]["spec"]["storage"]["storageClassName"], "fast");
        assert_eq!(
            dvs[0]["spec"]["storage"]["resources"]["requests"]["storage"],
            "10Gi"
        );
        assert_eq!(dvs[1]["metadata"]["name"], "web-1-disk-data");
        assert_eq!(dvs[1]["spec"]["source"], json!({ "blank": {} }));
        let t = &vm["spec"]["template"];
        assert_eq!(t["metadata"]["annotations"][LOGICAL_SWITCH], "tenant-web");
        assert_eq!(t["metadata"]["annotations"][IP_ADDRESS], "10.0.1.20");
        assert_eq!(
            t["spec"]["domain"]["devices"]["interfaces"][0]["bridge"],
            json!({})
        );
        assert_eq!(t["spec"]["domain"]["memory"]["guest"], "3072Mi");
        let volumes = t["spec"]["volumes"].as_array().expect("volumes");
        assert_eq!(volumes.len(), 3);
        assert_eq!(
            volumes[2]["cloudInitNoCloud"]["secretRef"]["name"],
            "web-1-cloud-init"
        );
    }

    #[test]
    fn ssh_keys_go_into_cloud_config() {
        let keys = vec!["ssh-ed25519 AAAA alice@example".to_owned()];
        assert_eq!(
            user_data(None, Some("keys"), &keys).expect("ok").as_deref(),
            Some("#cloud-config\nssh_authorized_keys:\n  - \"ssh-ed25519 AAAA alice@example\"\n")
        );
        let own = CloudInit {
            user_data: Some("#cloud-config\npackages: [nginx]\n".to_owned()),
            ssh_keys: None,
        };
        assert_eq!(
            user_data(Some(&own), Some("keys"), &keys)
                .expect("ok")
                .as_deref(),
            Some(
                "#cloud-config\npackages: [nginx]\nssh_authorized_keys:\n  - \"ssh-ed25519 AAAA alice@example\"\n"
            )
        );
        let script = CloudInit {
            user_data: Some("#!/bin/sh\necho hi\n".to_owned()),
            ssh_keys: None,
        };
        assert_eq!(
            user_data(Some(&script), Some("keys"), &keys),
            Err(CloudInitError::NotCloudConfig)
        );
        assert_eq!(
            user_data(Some(&script), None, &[]).expect("ok").as_deref(),
            Some("#!/bin/sh\necho hi\n")
        );
        assert_eq!(
            user_data(None, Some("keys"), &[]),
            Err(CloudInitError::NoKeys("keys".to_owned()))
        );
        assert_eq!(user_data(None, None, &[]), Ok(None));
    }
}
