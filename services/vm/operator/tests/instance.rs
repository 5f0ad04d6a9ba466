// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `InstanceReconciler` against an in-process control plane (`mni-testkit`) with the fake
//! KubeVirt, CDI and Kube-OVN controllers, running as the operator's own ServiceAccount with
//! the rules of `config/rbac/role.yaml`: a VM appears, owned and labelled; it runs with an
//! address; it stops, starts and restarts; an imported boot disk reports its progress; an
//! instance in a VPC subnet waits for the subnet, then gets its fixed address from Kube-OVN's
//! IPAM; a spec change asks for a restart; deletion cleans everything up.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use mni_kubevirt::cdi::DataVolume;
use mni_kubevirt::v1::{VirtualMachine, VirtualMachineInstance};
use mni_operator::{Manager, READY, RunningManager};
use mni_testkit::{TestEnv, get_controlled, wait_deleted, wait_for, wait_for_condition};
use serde_json::json;

use compute_operator::api::compute_v1alpha1::BootDisk;
use compute_operator::api::compute_v1alpha1::CloudInit;
use compute_operator::api::compute_v1alpha1::HttpImport;
use compute_operator::api::compute_v1alpha1::Instance;
use compute_operator::api::compute_v1alpha1::InstanceNetwork;
use compute_operator::api::compute_v1alpha1::InstanceSpec;
use compute_operator::api::compute_v1alpha1::Resources;
use compute_operator::api::compute_v1alpha1::SecretReference;
use compute_operator::api::compute_v1alpha1::VpcAttachment;
use compute_operator::controllers::instance::InstanceReconciler;
use compute_operator::controllers::instance::network::SubnetSpec;
use compute_operator::controllers::instance::network::SubnetStatus;
use compute_operator::controllers::instance::network::VirtualPrivateCloud;
use compute_operator::controllers::instance::network::VirtualPrivateCloudSpec;
use compute_operator::controllers::instance::network::VirtualPrivateCloudStatus;
use compute_operator::controllers::instance::upstream::INSTANCE_LABEL;
use compute_operator::controllers::instance::upstream::IP_ADDRESS;
use compute_operator::controllers::instance::upstream::LOGICAL_SWITCH;

const NAMESPACE: &str = "default";

/// How long a VM may take to run (the simulator paces each phase).
const RUN: Duration = Duration::from_secs(60);

async fn start_env() -> TestEnv {
    TestEnv::builder()
        .with_crds(compute_operator::api::crds())
        .with_crd::<VirtualPrivateCloud>()
        .with_simulator(true)
        .with_kube_ovn(true)
        .with_kubevirt(true)
        .start()
        .await
        .expect("control plane starts")
}

/// The Instance controller, as `src/main.rs` registers it.
async fn start_manager(env: &TestEnv) -> RunningManager {
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    Manager::builder(client.await.expect("the operator's client"))
        .with_controller(InstanceReconciler)
        .start_for_tests()
        .await
        .expect("manager starts")
}

fn container_disk(instance_type: &str) -> InstanceSpec {
    InstanceSpec {
        instance_type: Some(instance_type.to_owned()),
        boot_disk: BootDisk {
            image: Some("quay.io/containerdisks/fedora:41".to_owned()),
            http: None,
        },
        ..InstanceSpec::default()
    }
}

fn phase(obj: &Instance) -> Option<&str> {
    obj.status.as_ref().and_then(|s| s.phase.as_deref())
}

fn reason(obj: &Instance, type_: &str) -> Option<String> {
    obj.status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
        .map(|c| c.reason.clone())
}

async fn create(api: &Api<Instance>, name: &str, spec: InstanceSpec) -> Instance {
    api.create(&PostParams::default(), &Instance::new(name, spec))
        .await
        .expect("create the Instance")
}

#[tokio::test]
async fn a_container_disk_instance_runs_stops_starts_and_restarts() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api = Api::<Instance>::namespaced(env.client(), NAMESPACE);
    let vms = Api::<VirtualMachine>::namespaced(env.client(), NAMESPACE);
    let vmis = Api::<VirtualMachineInstance>::namespaced(env.client(), NAMESPACE);
    let obj = create(&api, "web-1", container_disk("s1.small")).await;

    let running = wait_for_condition(&api, "web-1", READY, "True", RUN)
        .await
        .expect("running");
    let status = running.status.clone().expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(status.node_name.as_deref(), Some("mni-dev-kubevirt"));
    assert!(
        status
            .ip_address
            .as_deref()
            .is_some_and(|ip| ip.starts_with("10.246.")),
        "{status:?}"
    );
    assert_eq!(
        (status.cores, status.memory.as_deref()),
        (Some(1), Some("2Gi"))
    );
    assert_eq!(status.observed_generation, running.metadata.generation);

    let vm = get_controlled(&vms, "web-1", &obj)
        .await
        .expect("the VM is the Instance's");
    assert_eq!(
        vm.labels().get(INSTANCE_LABEL).map(String::as_str),
        Some("web-1")
    );
    let cores = vm
        .spec
        .template
        .spec
        .domain
        .cpu
        .as_ref()
        .and_then(|c| c.cores);
    assert_eq!(cores, Some(1));

    // Stop: runStrategy Halted; the instance goes.
    let patch = json!({ "spec": { "runStrategy": "Halted" } });
    api.patch("web-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("stop");
    let stopped = wait_for(&api, "web-1", |o| phase(o) == Some("Stopped"), RUN)
        .await
        .expect("stopped");
    assert_eq!(reason(&stopped, READY).as_deref(), Some("Stopped"));
    assert_eq!(
        stopped.status.as_ref().and_then(|s| s.ip_address.clone()),
        None
    );
    wait_deleted(&vmis, "web-1", RUN)
        .await
        .expect("no instance while stopped");

    // Start again.
    let patch = json!({ "spec": { "runStrategy": "Always" } });
    api.patch("web-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("start");
    wait_for_condition(&api, "web-1", READY, "True", RUN)
        .await
        .expect("running again");
    let before = vmis.get("web-1").await.expect("an instance").uid();

    // Restart: a new restartRequestedAt gives a new instance, once.
    let patch = json!({ "spec": { "restartRequestedAt": "2026-12-03T10:00:00Z" } });
    api.patch("web-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("restart");
    let restarted = wait_for(
        &vmis,
        "web-1",
        |v| {
            v.uid() != before
                && v.status.as_ref().and_then(|s| s.phase)
                    == Some(mni_kubevirt::v1::InstancePhase::Running)
        },
        RUN,
    )
    .await
    .expect("a new instance runs");
    let done = wait_for(
        &api,
        "web-1",
        |o| {
            o.status.as_ref().and_then(|s| s.restarted_at.as_deref())
                == Some("2026-12-03T10:00:00Z")
                && phase(o) == Some("Running")
        },
        RUN,
    )
    .await
    .expect("the restart is recorded");
    assert_eq!(reason(&done, READY).as_deref(), Some("Running"));
    assert_eq!(
        vmis.get("web-1").await.expect("instance").uid(),
        restarted.uid()
    );

    // A spec change under the running instance asks for a restart instead of making one.
    let patch = json!({ "spec": { "instanceType": "s1.medium" } });
    api.patch("web-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("resize");
    wait_for_condition(&api, "web-1", "RestartRequired", "True", RUN)
        .await
        .expect("restart required");
    assert_eq!(
        vmis.get("web-1").await.expect("instance").uid(),
        restarted.uid()
    );
    let patch = json!({ "spec": { "restartRequestedAt": "2026-12-03T10:05:00Z" } });
    api.patch("web-1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("restart");
    let resized = wait_for(
        &api,
        "web-1",
        |o| {
            phase(o) == Some("Running")
                && reason(o, "RestartRequired").is_none()
                && o.status.as_ref().and_then(|s| s.cores) == Some(2)
        },
        RUN,
    )
    .await
    .expect("resized after the restart");
    assert_eq!(
        resized.status.and_then(|s| s.memory).as_deref(),
        Some("4Gi")
    );

    // Deletion takes the VM and its instance along.
    api.delete("web-1", &DeleteParams::default())
        .await
        .expect("delete");
    wait_deleted(&vms, "web-1", RUN).await.expect("the VM goes");
    wait_deleted(&vmis, "web-1", RUN)
        .await
        .expect("the instance goes");
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

#[tokio::test]
async fn an_imported_boot_disk_reports_its_progress_and_failures() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api = Api::<Instance>::namespaced(env.client(), NAMESPACE);
    let dvs = Api::<DataVolume>::namespaced(env.client(), NAMESPACE);
    let secrets = Api::<Secret>::namespaced(env.client(), NAMESPACE);
    let keys = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("ssh-keys".to_owned()),
            ..Default::default()
        },
        data: Some(
            [(
                "alice".to_owned(),
                ByteString(b"ssh-ed25519 AAAAC3Nza alice@example\n".to_vec()),
            )]
            .into(),
        ),
        ..Secret::default()
    };
    secrets
        .create(&PostParams::default(), &keys)
        .await
        .expect("ssh keys");
    let import = |url: &str| InstanceSpec {
        instance_type: Some("s1.small".to_owned()),
        boot_disk: BootDisk {
            image: None,
            http: Some(HttpImport {
                url: url.to_owned(),
                size: "1Gi".to_owned(),
                storage_class: None,
            }),
        },
        cloud_init: Some(CloudInit {
            user_data: None,
            ssh_keys: Some(SecretReference {
                name: "ssh-keys".to_owned(),
            }),
        }),
        ..InstanceSpec::default()
    };
    let obj = create(
        &api,
        "imported",
        import("https://images.example.com/debian-12.qcow2"),
    )
    .await;
    let importing = wait_for(
        &api,
        "imported",
        |o| {
            o.status
                .as_ref()
                .and_then(|s| s.boot_disk_progress.as_deref())
                .is_some_and(|p| p.ends_with('%'))
        },
        RUN,
    )
    .await
    .expect("import progress is reported");
    assert_eq!(
        reason(&importing, "Progressing").as_deref(),
        Some("Provisioning")
    );
    let running = wait_for_condition(&api, "imported", READY, "True", RUN)
        .await
        .expect("runs once imported");
    assert_eq!(running.status.and_then(|s| s.boot_disk_progress), None);
    get_controlled(
        &dvs,
        "imported-boot",
        &get_controlled(
            &Api::<VirtualMachine>::namespaced(env.client(), NAMESPACE),
            "imported",
            &obj,
        )
        .await
        .expect("vm"),
    )
    .await
    .expect("the boot DataVolume belongs to the VM");
    let cloud_init = secrets
        .get("imported-cloud-init")
        .await
        .expect("the cloud-init Secret");
    let user_data = cloud_init
        .data
        .and_then(|d| d.get("userdata").cloned())
        .expect("userdata");
    assert_eq!(
        String::from_utf8_lossy(&user_data.0),
        "#cloud-config\nssh_authorized_keys:\n  - \"ssh-ed25519 AAAAC3Nza alice@example\"\n"
    );

    // A URL that cannot be fetched: DataVolumeError, Degraded.
    create(
        &api,
        "broken",
        import("https://images.example.invalid/x.qcow2"),
    )
    .await;
    let broken = wait_for_condition(&api, "broken", "Degraded", "True", RUN)
        .await
        .expect("degraded");
    assert_eq!(
        reason(&broken, "Degraded").as_deref(),
        Some("DataVolumeError")
    );

    // A VM larger than the node: ErrorUnschedulable.
    let mut big = container_disk("s1.small");
    big.instance_type = None;
    big.resources = Some(Resources {
        cores: 24,
        memory: "8Gi".to_owned(),
    });
    create(&api, "big", big).await;
    let big = wait_for_condition(&api, "big", "Degraded", "True", RUN)
        .await
        .expect("unschedulable");
    assert_eq!(
        reason(&big, "Degraded").as_deref(),
        Some("ErrorUnschedulable")
    );

    // An image that cannot be pulled: ErrImagePull.
    let mut unpullable = container_disk("s1.small");
    unpullable.boot_disk.image = Some("registry.example.invalid/disks/none:1".to_owned());
    create(&api, "unpullable", unpullable).await;
    let unpullable = wait_for_condition(&api, "unpullable", "Degraded", "True", RUN)
        .await
        .expect("image pull");
    assert_eq!(
        reason(&unpullable, "Degraded").as_deref(),
        Some("ErrImagePull")
    );

    api.delete("imported", &DeleteParams::default())
        .await
        .expect("delete");
    wait_deleted(&dvs, "imported-boot", RUN)
        .await
        .expect("the DataVolume goes");
    wait_deleted(&secrets, "imported-cloud-init", RUN)
        .await
        .expect("the cloud-init Secret goes");
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

/// A Kube-OVN object (`kubeovn.io/v1`) as the VPC service would apply it.
async fn kube_ovn(env: &TestEnv, kind: &str, body: serde_json::Value) {
    let gvk = GroupVersionKind::gvk("kubeovn.io", "v1", kind);
    let api = Api::<DynamicObject>::all_with(env.client(), &ApiResource::from_gvk(&gvk));
    let obj: DynamicObject = serde_json::from_value(body).expect("a Kube-OVN object");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create the Kube-OVN object");
}

/// Writes what the VPC service reports about VPC `tenant`: subnet `web` is Kube-OVN Subnet
/// `default-tenant-web`, ready or not.
async fn report_subnet(env: &TestEnv, ready: bool) {
    let api = Api::<VirtualPrivateCloud>::namespaced(env.client(), NAMESPACE);
    let status = VirtualPrivateCloudStatus {
        subnets: vec![SubnetStatus {
            name: "web".to_owned(),
            subnet: "default-tenant-web".to_owned(),
            ready,
            ..SubnetStatus::default()
        }],
        ..VirtualPrivateCloudStatus::default()
    };
    api.patch_status(
        "tenant",
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": status })),
    )
    .await
    .expect("VPC status");
}

#[tokio::test]
async fn an_instance_in_a_vpc_subnet_waits_for_it_then_gets_its_fixed_address() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api = Api::<Instance>::namespaced(env.client(), NAMESPACE);
    let vms = Api::<VirtualMachine>::namespaced(env.client(), NAMESPACE);
    let in_subnet = |subnet: &str, ip: &str| {
        let mut spec = container_disk("s1.small");
        spec.network = Some(InstanceNetwork {
            vpc: Some(VpcAttachment {
                name: "tenant".to_owned(),
                subnet: subnet.to_owned(),
                ip: Some(ip.to_owned()),
            }),
        });
        spec
    };
    create(&api, "db-1", in_subnet("web", "10.0.1.20")).await;

    // No VPC yet: waiting for the network, no VM.
    let waiting = wait_for(&api, "db-1", |o| phase(o) == Some("WaitingForNetwork"), RUN)
        .await
        .expect("waiting");
    assert_eq!(
        reason(&waiting, "Progressing").as_deref(),
        Some("WaitingForNetwork")
    );
    assert!(vms.get_opt("db-1").await.expect("get").is_none());

    // The VPC exists, its subnet is not ready: still waiting.
    let vpcs = Api::<VirtualPrivateCloud>::namespaced(env.client(), NAMESPACE);
    let spec = VirtualPrivateCloudSpec {
        subnets: vec![SubnetSpec {
            name: "web".to_owned(),
            cidr_block: "10.0.1.0/24".to_owned(),
            ..SubnetSpec::default()
        }],
        ..VirtualPrivateCloudSpec::default()
    };
    vpcs.create(
        &PostParams::default(),
        &VirtualPrivateCloud::new("tenant", spec),
    )
    .await
    .expect("VPC");
    report_subnet(&env, false).await;
    let waiting = api.get("db-1").await.expect("get");
    assert_eq!(phase(&waiting), Some("WaitingForNetwork"));

    // The subnet is ready: the VM attaches with its fixed address.
    let vpc = json!({
        "apiVersion": "kubeovn.io/v1",
        "kind": "Vpc",
        "metadata": { "name": "default-tenant" },
        "spec": { "namespaces": [NAMESPACE] },
    });
    kube_ovn(&env, "Vpc", vpc).await;
    let subnet = json!({
        "apiVersion": "kubeovn.io/v1",
        "kind": "Subnet",
        "metadata": { "name": "default-tenant-web" },
        "spec": { "cidrBlock": "10.0.1.0/24", "protocol": "IPv4", "vpc": "default-tenant" },
    });
    kube_ovn(&env, "Subnet", subnet).await;
    report_subnet(&env, true).await;
    let running = wait_for_condition(&api, "db-1", READY, "True", RUN)
        .await
        .expect("attached and running");
    assert_eq!(
        running.status.and_then(|s| s.ip_address).as_deref(),
        Some("10.0.1.20")
    );
    let vm = vms.get("db-1").await.expect("the VM");
    let annotations = vm
        .spec
        .template
        .metadata
        .clone()
        .unwrap_or_default()
        .annotations;
    assert_eq!(
        annotations.get(LOGICAL_SWITCH).map(String::as_str),
        Some("default-tenant-web")
    );
    assert_eq!(
        annotations.get(IP_ADDRESS).map(String::as_str),
        Some("10.0.1.20")
    );

    // The same address again: Kube-OVN's conflict, Degraded, naming the field.
    create(&api, "db-2", in_subnet("web", "10.0.1.20")).await;
    let conflict = wait_for_condition(&api, "db-2", "Degraded", "True", RUN)
        .await
        .expect("conflict");
    assert_eq!(reason(&conflict, "Degraded").as_deref(), Some("IPConflict"));

    // A subnet the VPC does not have, an address outside the subnet: Degraded, no VM.
    create(&api, "db-3", in_subnet("db", "10.0.2.20")).await;
    let missing = wait_for_condition(&api, "db-3", "Degraded", "True", RUN)
        .await
        .expect("no such subnet");
    assert_eq!(
        reason(&missing, "Degraded").as_deref(),
        Some("SubnetNotFound")
    );
    create(&api, "db-4", in_subnet("web", "10.0.9.9")).await;
    let outside = wait_for_condition(&api, "db-4", "Degraded", "True", RUN)
        .await
        .expect("outside");
    let message = outside
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Degraded"))
        .map(|c| c.message.clone());
    assert_eq!(
        message.as_deref(),
        Some("network.vpc.ip: 10.0.9.9 is outside subnet web (10.0.1.0/24)")
    );
    for name in ["db-3", "db-4"] {
        assert!(vms.get_opt(name).await.expect("get").is_none(), "{name}");
    }
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

#[tokio::test]
async fn a_missing_ssh_key_secret_is_a_condition_until_it_appears() {
    let env = start_env().await;
    let manager = start_manager(&env).await;
    let api = Api::<Instance>::namespaced(env.client(), NAMESPACE);
    let mut spec = container_disk("s1.small");
    spec.cloud_init = Some(CloudInit {
        user_data: Some("#cloud-config\npackages: [nginx]\n".to_owned()),
        ssh_keys: Some(SecretReference {
            name: "later".to_owned(),
        }),
    });
    create(&api, "keyed", spec).await;
    let missing = wait_for_condition(&api, "keyed", "Degraded", "True", RUN)
        .await
        .expect("missing secret");
    assert_eq!(
        reason(&missing, "Degraded").as_deref(),
        Some("SecretNotFound")
    );
    let message = missing
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Degraded"))
        .map(|c| c.message.clone());
    assert_eq!(
        message.as_deref(),
        Some("cloudInit.sshKeys: Secret later does not exist in namespace default")
    );

    let secrets = Api::<Secret>::namespaced(env.client(), NAMESPACE);
    let keys = Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("later".to_owned()),
            ..Default::default()
        },
        string_data: Some([("key".to_owned(), "ssh-rsa AAAAB3 bob@example".to_owned())].into()),
        ..Secret::default()
    };
    secrets
        .create(&PostParams::default(), &keys)
        .await
        .expect("the Secret");
    wait_for_condition(&api, "keyed", READY, "True", RUN)
        .await
        .expect("runs with the keys");
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}
