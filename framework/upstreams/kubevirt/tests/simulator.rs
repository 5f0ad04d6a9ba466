//! The fake KubeVirt and CDI against a real mNi API server: over HTTP through `mni-testkit`'s
//! `TestEnv::with_kubevirt` (with mni-workloads binding claims, as `mni-dev` does), and over
//! HTTPS with kubectl.

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use mni_kubevirt::cdi::{DataVolume, DataVolumePhase};
use mni_kubevirt::v1::{
    InstancePhase, PrintableStatus, VirtualMachine, VirtualMachineInstance, find_condition,
};
use mni_testkit::{TestEnv, wait_deleted, wait_for};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);
const NS: &str = "default";
const CIRROS: &str = "quay.io/kubevirt/cirros-container-disk-demo:latest";

/// An API server with the workload simulator (claims bind) and the KubeVirt simulator, as
/// `mni_testkit::TestEnvBuilder::with_kubevirt` runs it.
struct Cluster {
    env: TestEnv,
}

impl Cluster {
    async fn start(kube_ovn: bool) -> anyhow::Result<Cluster> {
        let env = TestEnv::builder()
            .with_simulator(true)
            .with_kube_ovn(kube_ovn)
            .with_kubevirt(true)
            .start()
            .await?;
        Ok(Cluster { env })
    }

    fn client(&self) -> Client {
        self.env.client()
    }

    async fn shutdown(self) -> anyhow::Result<()> {
        self.env.shutdown().await;
        Ok(())
    }
}

async fn apply<K>(client: &Client, body: Value) -> anyhow::Result<K>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
{
    let api: Api<K> = Api::namespaced(client.clone(), NS);
    let object: K = serde_json::from_value(body)?;
    Ok(api.create(&PostParams::default(), &object).await?)
}

fn vm(name: &str, run_strategy: &str, template_spec: Value) -> Value {
    json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "runStrategy": run_strategy,
            "template": {"metadata": {"labels": {"app": name}}, "spec": template_spec},
        },
    })
}

fn container_disk(image: &str) -> Value {
    json!({
        "domain": {
            "cpu": {"cores": 1},
            // Upstream fields mNi does not model: accepted, and copied to the instance.
            "machine": {"type": "q35"},
            "resources": {"requests": {"memory": "128Mi"}},
            "devices": {
                "rng": {},
                "disks": [{"name": "root", "disk": {"bus": "virtio"}}],
                "interfaces": [{"name": "default", "masquerade": {}}],
            },
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [
            {"name": "root", "containerDisk": {"image": image}},
            {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}},
        ],
    })
}

fn printable(vm: &VirtualMachine) -> Option<PrintableStatus> {
    vm.status.as_ref().and_then(|s| s.printable_status)
}

async fn wait_printable(
    vms: &Api<VirtualMachine>,
    name: &str,
    status: PrintableStatus,
) -> anyhow::Result<VirtualMachine> {
    Ok(wait_for(
        vms,
        name,
        |v: &VirtualMachine| printable(v) == Some(status),
        TIMEOUT,
    )
    .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vm_with_a_container_disk_runs_and_gets_an_ip() -> anyhow::Result<()> {
    let cluster = Cluster::start(false).await?;
    let client = cluster.client();
    apply::<VirtualMachine>(&client, vm("web", "Always", container_disk(CIRROS))).await?;
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    let running = wait_printable(&vms, "web", PrintableStatus::Running).await?;
    let status = running.status.clone().unwrap_or_default();
    assert!(status.ready && status.created, "{status:?}");
    assert_eq!(
        find_condition(&status.conditions, "Ready").map(|c| c.status.as_str()),
        Some("True")
    );

    let vmis: Api<VirtualMachineInstance> = Api::namespaced(client.clone(), NS);
    let vmi = vmis.get("web").await?;
    let owner = &vmi.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("VirtualMachine", "web")
    );
    assert_eq!(owner.controller, Some(true));
    assert_eq!(vmi.labels().get("app").map(String::as_str), Some("web"));
    assert_eq!(
        vmi.spec.domain.unmodelled["machine"],
        json!({"type": "q35"})
    );
    assert_eq!(vmi.spec.domain.devices.unmodelled["rng"], json!({}));
    let vs = vmi.status.clone().unwrap_or_default();
    assert_eq!(vs.phase, Some(InstancePhase::Running));
    assert_eq!(vs.node_name.as_deref(), Some("mni-dev-kubevirt"));
    let ip = vs.interfaces[0].ip_address.clone().unwrap_or_default();
    assert!(ip.starts_with("10.246."), "{ip}");
    let phases: Vec<_> = vs
        .phase_transition_timestamps
        .iter()
        .filter_map(|p| p.phase)
        .collect();
    assert_eq!(
        phases,
        [
            InstancePhase::Pending,
            InstancePhase::Scheduling,
            InstancePhase::Scheduled,
            InstancePhase::Running
        ]
    );
    // The guest runs in a virt-launcher pod on the node, owned by the instance.
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), NS);
    let launchers = pods
        .list(&kube::api::ListParams::default().labels("kubevirt.io=virt-launcher"))
        .await?
        .items;
    assert_eq!(launchers.len(), 1);
    let launcher = &launchers[0];
    assert_eq!(launcher.owner_references()[0].name, "web");
    assert_eq!(
        launcher.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some("mni-dev-kubevirt")
    );
    let ps = launcher.status.clone().unwrap_or_default();
    assert_eq!(ps.phase.as_deref(), Some("Running"));
    assert_eq!(ps.pod_ip.as_deref(), Some(ip.as_str()));
    assert_eq!(
        vs.active_pods
            .get(&launcher.uid().unwrap_or_default())
            .map(String::as_str),
        Some("mni-dev-kubevirt")
    );

    // The node VMs run on is registered.
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    let node = nodes.get("mni-dev-kubevirt").await?;
    let allocatable = node.status.and_then(|s| s.allocatable).unwrap_or_default();
    assert_eq!(allocatable.get("cpu").map(|q| q.0.as_str()), Some("16"));
    assert_eq!(
        allocatable.get("memory").map(|q| q.0.as_str()),
        Some("64Gi")
    );

    // A converged VM sees no writes.
    let before = vms.get("web").await?.resource_version();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(vms.get("web").await?.resource_version(), before);
    cluster.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_volume_imports_then_the_vm_runs() -> anyhow::Result<()> {
    let cluster = Cluster::start(false).await?;
    let client = cluster.client();
    let mut body = vm(
        "db",
        "Always",
        json!({
            "domain": {"memory": {"guest": "1Gi"}, "devices": {"disks": [{"name": "root", "disk": {}}]}},
            "volumes": [{"name": "root", "dataVolume": {"name": "db-root"}}],
        }),
    );
    body["spec"]["dataVolumeTemplates"] = json!([{
        "metadata": {"name": "db-root"},
        "spec": {
            "source": {"http": {"url": "https://download.example.com/alpine.qcow2"}},
            "storage": {"resources": {"requests": {"storage": "2Gi"}}, "storageClassName": "standard"},
        },
    }]);
    apply::<VirtualMachine>(&client, body).await?;
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    let dvs: Api<DataVolume> = Api::namespaced(client.clone(), NS);
    // While the import runs the VM is provisioning and has no instance.
    let provisioning = wait_printable(&vms, "db", PrintableStatus::Provisioning).await?;
    assert!(!provisioning.status.unwrap_or_default().created);
    let in_progress = wait_for(
        &dvs,
        "db-root",
        |d: &DataVolume| {
            d.status.as_ref().and_then(|s| s.phase) == Some(DataVolumePhase::ImportInProgress)
        },
        TIMEOUT,
    )
    .await?;
    let progress = in_progress
        .status
        .and_then(|s| s.progress)
        .unwrap_or_default();
    assert!(progress.ends_with('%'), "{progress}");

    let running = wait_printable(&vms, "db", PrintableStatus::Running).await?;
    let conditions = running.status.unwrap_or_default().conditions;
    assert_eq!(
        find_condition(&conditions, "DataVolumesReady").map(|c| c.status.as_str()),
        Some("True")
    );
    let dv = dvs.get("db-root").await?;
    let ds = dv.status.clone().unwrap_or_default();
    assert_eq!(ds.phase, Some(DataVolumePhase::Succeeded));
    assert_eq!(ds.progress.as_deref(), Some("100.0%"));
    assert_eq!(dv.owner_references()[0].name, "db");
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
    let pvc = pvcs.get("db-root").await?;
    assert_eq!(
        pvc.status.and_then(|s| s.phase).as_deref(),
        Some("Bound"),
        "the claim is bound by mni-dev's provisioner"
    );
    assert_eq!(
        pvc.metadata.owner_references.unwrap_or_default()[0].kind,
        "DataVolume"
    );
    // The importer pod is gone once the import succeeded.
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), NS);
    wait_deleted(&pods, "importer-db-root", TIMEOUT).await?;
    cluster.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halted_stops_the_vm_and_always_starts_it_again() -> anyhow::Result<()> {
    let cluster = Cluster::start(false).await?;
    let client = cluster.client();
    apply::<VirtualMachine>(&client, vm("web", "Always", container_disk(CIRROS))).await?;
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    let vmis: Api<VirtualMachineInstance> = Api::namespaced(client.clone(), NS);
    wait_printable(&vms, "web", PrintableStatus::Running).await?;
    let first = vmis.get("web").await?.uid();

    let halt = json!({"spec": {"runStrategy": "Halted"}});
    vms.patch("web", &PatchParams::default(), &Patch::Merge(&halt))
        .await?;
    let stopped = wait_printable(&vms, "web", PrintableStatus::Stopped).await?;
    let status = stopped.status.unwrap_or_default();
    assert!(!status.created && !status.ready, "{status:?}");
    wait_deleted(&vmis, "web", TIMEOUT).await?;

    let start = json!({"spec": {"runStrategy": "Always"}});
    vms.patch("web", &PatchParams::default(), &Patch::Merge(&start))
        .await?;
    wait_printable(&vms, "web", PrintableStatus::Running).await?;
    assert_ne!(vmis.get("web").await?.uid(), first, "a new instance");

    // A template change under a running instance waits for a restart, and the VM says so.
    let bigger = json!({"spec": {"template": {"spec": {"domain": {"resources": {"requests": {"memory": "256Mi"}}}}}}});
    vms.patch("web", &PatchParams::default(), &Patch::Merge(&bigger))
        .await?;
    let restart_required = |v: &VirtualMachine| {
        v.status
            .as_ref()
            .is_some_and(|s| find_condition(&s.conditions, "RestartRequired").is_some())
    };
    let pending = wait_for(&vms, "web", restart_required, TIMEOUT).await?;
    let generation = pending.metadata.generation;
    let status = pending.status.clone().unwrap_or_default();
    assert_eq!(status.desired_generation, generation);
    assert!(status.observed_generation < generation, "{status:?}");
    // `virtctl restart`: a stop, then a start.
    let restart =
        json!({"status": {"stateChangeRequests": [{"action": "Stop"}, {"action": "Start"}]}});
    vms.patch_status("web", &PatchParams::default(), &Patch::Merge(&restart))
        .await?;
    let restarted = wait_for(
        &vms,
        "web",
        |v: &VirtualMachine| {
            !restart_required(v)
                && printable(v) == Some(PrintableStatus::Running)
                && v.status
                    .as_ref()
                    .is_some_and(|s| s.observed_generation == v.metadata.generation)
        },
        TIMEOUT,
    )
    .await?;
    assert!(
        restarted
            .status
            .unwrap_or_default()
            .state_change_requests
            .is_empty()
    );
    let vmi = vmis.get("web").await?;
    let memory = vmi
        .spec
        .domain
        .resources
        .clone()
        .unwrap_or_default()
        .requests;
    assert_eq!(memory.get("memory").map(|q| q.0.as_str()), Some("256Mi"));

    // Manual: started and stopped by request, as `virtctl start/stop` asks.
    let manual = json!({"spec": {"runStrategy": "Manual"}});
    vms.patch("web", &PatchParams::default(), &Patch::Merge(&manual))
        .await?;
    let stop = json!({"status": {"stateChangeRequests": [{"action": "Stop"}]}});
    vms.patch_status("web", &PatchParams::default(), &Patch::Merge(&stop))
        .await?;
    wait_printable(&vms, "web", PrintableStatus::Stopped).await?;
    let start = json!({"status": {"stateChangeRequests": [{"action": "Start"}]}});
    vms.patch_status("web", &PatchParams::default(), &Patch::Merge(&start))
        .await?;
    let running = wait_printable(&vms, "web", PrintableStatus::Running).await?;
    assert!(
        running
            .status
            .unwrap_or_default()
            .state_change_requests
            .is_empty()
    );
    cluster.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_from_an_invalid_host_fails_and_the_vm_says_so() -> anyhow::Result<()> {
    let cluster = Cluster::start(false).await?;
    let client = cluster.client();
    let mut body = vm(
        "broken",
        "Always",
        json!({
            "domain": {"devices": {}},
            "volumes": [{"name": "root", "dataVolume": {"name": "broken-root"}}],
        }),
    );
    body["spec"]["dataVolumeTemplates"] = json!([{
        "metadata": {"name": "broken-root"},
        "spec": {
            "source": {"http": {"url": "https://images.invalid/disk.qcow2"}},
            "storage": {"resources": {"requests": {"storage": "1Gi"}}},
        },
    }]);
    apply::<VirtualMachine>(&client, body).await?;
    let dvs: Api<DataVolume> = Api::namespaced(client.clone(), NS);
    let failed = wait_for(
        &dvs,
        "broken-root",
        |d: &DataVolume| d.status.as_ref().and_then(|s| s.phase) == Some(DataVolumePhase::Failed),
        TIMEOUT,
    )
    .await?;
    let conditions = failed.status.unwrap_or_default().conditions;
    let running = mni_kubevirt::cdi::find_condition(&conditions, "Running")
        .cloned()
        .unwrap_or_default();
    assert_eq!(running.reason.as_deref(), Some("Error"));
    assert!(
        running
            .message
            .as_deref()
            .unwrap_or("")
            .contains("images.invalid"),
        "{running:?}"
    );
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    let vm = wait_printable(&vms, "broken", PrintableStatus::DataVolumeError).await?;
    assert!(!vm.status.unwrap_or_default().created);
    cluster.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_vm_is_unschedulable_and_a_bad_image_cannot_be_pulled() -> anyhow::Result<()> {
    let cluster = Cluster::start(false).await?;
    let client = cluster.client();
    let mut big = container_disk(CIRROS);
    big["domain"]["cpu"]["cores"] = json!(8);
    big["domain"]["cpu"]["sockets"] = json!(4);
    big["domain"]["resources"]["requests"]["memory"] = json!("128Gi");
    apply::<VirtualMachine>(&client, vm("huge", "Always", big)).await?;
    apply::<VirtualMachine>(
        &client,
        vm(
            "nopull",
            "Always",
            container_disk("registry.invalid/nope:1"),
        ),
    )
    .await?;
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    let huge = wait_printable(&vms, "huge", PrintableStatus::ErrorUnschedulable).await?;
    let scheduled = find_condition(&huge.status.unwrap_or_default().conditions, "PodScheduled")
        .cloned()
        .unwrap_or_default();
    assert_eq!(scheduled.reason.as_deref(), Some("Unschedulable"));
    let message = scheduled.message.unwrap_or_default();
    assert!(
        message.contains("Insufficient cpu") && message.contains("Insufficient memory"),
        "{message}"
    );
    let vmis: Api<VirtualMachineInstance> = Api::namespaced(client.clone(), NS);
    let vmi = vmis.get("huge").await?;
    assert_eq!(
        vmi.status.and_then(|s| s.phase),
        Some(InstancePhase::Scheduling)
    );

    let nopull = wait_printable(&vms, "nopull", PrintableStatus::ErrImagePull).await?;
    let ready = find_condition(&nopull.status.unwrap_or_default().conditions, "Ready")
        .cloned()
        .unwrap_or_default();
    assert!(
        ready
            .message
            .unwrap_or_default()
            .contains("registry.invalid"),
        "the message names the registry"
    );
    cluster.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_vm_deletes_its_instance_data_volumes_and_claims() -> anyhow::Result<()> {
    let cluster = Cluster::start(false).await?;
    let client = cluster.client();
    let mut body = vm(
        "gone",
        "Always",
        json!({
            "domain": {"devices": {}},
            "volumes": [{"name": "data", "dataVolume": {"name": "gone-data"}}],
        }),
    );
    body["spec"]["dataVolumeTemplates"] = json!([{
        "metadata": {"name": "gone-data"},
        "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "1Gi"}}}},
    }]);
    apply::<VirtualMachine>(&client, body).await?;
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    wait_printable(&vms, "gone", PrintableStatus::Running).await?;
    vms.delete("gone", &DeleteParams::foreground()).await?;
    wait_deleted(&vms, "gone", TIMEOUT).await?;
    let vmis: Api<VirtualMachineInstance> = Api::namespaced(client.clone(), NS);
    wait_deleted(&vmis, "gone", TIMEOUT).await?;
    let dvs: Api<DataVolume> = Api::namespaced(client.clone(), NS);
    wait_deleted(&dvs, "gone-data", TIMEOUT).await?;
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), NS);
    wait_deleted(&pvcs, "gone-data", TIMEOUT).await?;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), NS);
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while !pods
        .list(&kube::api::ListParams::default().labels("kubevirt.io=virt-launcher"))
        .await?
        .items
        .is_empty()
    {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the launcher pod stays"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cluster.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vm_on_a_kube_ovn_subnet_gets_its_address_from_the_subnet() -> anyhow::Result<()> {
    let cluster = Cluster::start(true).await?;
    let client = cluster.client();
    let vpcs: Api<mni_kubeovn::v1::Vpc> = Api::all(client.clone());
    vpcs.create(
        &PostParams::default(),
        &mni_kubeovn::v1::Vpc::new("tenant-a", Default::default()),
    )
    .await?;
    let subnets: Api<mni_kubeovn::v1::Subnet> = Api::all(client.clone());
    subnets
        .create(
            &PostParams::default(),
            &mni_kubeovn::v1::Subnet::new(
                "tenant-a-net",
                mni_kubeovn::v1::SubnetSpec {
                    vpc: Some("tenant-a".into()),
                    cidr_block: "10.0.1.0/24".into(),
                    ..Default::default()
                },
            ),
        )
        .await?;
    let on_subnet = |name: &str, fixed: Option<&str>| {
        let mut body = vm(name, "Always", container_disk(CIRROS));
        let mut annotations = json!({"ovn.kubernetes.io/logical_switch": "tenant-a-net"});
        if let Some(ip) = fixed {
            annotations["ovn.kubernetes.io/ip_address"] = json!(ip);
        }
        body["spec"]["template"]["metadata"]["annotations"] = annotations;
        body
    };
    apply::<VirtualMachine>(&client, on_subnet("fixed", Some("10.0.1.50"))).await?;
    apply::<VirtualMachine>(&client, on_subnet("dynamic", None)).await?;
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    wait_printable(&vms, "fixed", PrintableStatus::Running).await?;
    wait_printable(&vms, "dynamic", PrintableStatus::Running).await?;
    let vmis: Api<VirtualMachineInstance> = Api::namespaced(client.clone(), NS);
    let ip = |vmi: VirtualMachineInstance| {
        vmi.status.unwrap_or_default().interfaces[0]
            .ip_address
            .clone()
            .unwrap_or_default()
    };
    assert_eq!(ip(vmis.get("fixed").await?), "10.0.1.50");
    assert_eq!(
        ip(vmis.get("dynamic").await?),
        "10.0.1.2",
        "after the gateway"
    );

    // Kube-OVN's records of them: the subnet's available count drops, and recovers when a VM
    // goes.
    let using = |n: f64| {
        move |s: &mni_kubeovn::v1::Subnet| s.status.as_ref().is_some_and(|st| st.v4using_ips == n)
    };
    let subnet = wait_for(&subnets, "tenant-a-net", using(2.0), TIMEOUT).await?;
    // 254 usable − the gateway − 2 VMs.
    assert_eq!(subnet.status.unwrap_or_default().v4available_ips, 251.0);
    let records: Api<mni_kubeovn::v1::Ip> = Api::all(client.clone());
    let record = records.get("fixed.default").await?;
    assert_eq!(
        (
            record.spec.subnet.as_str(),
            record.spec.v4_ip_address.as_str()
        ),
        ("tenant-a-net", "10.0.1.50")
    );
    vms.delete("dynamic", &DeleteParams::default()).await?;
    wait_deleted(&records, "dynamic.default", TIMEOUT).await?;
    let subnet = wait_for(&subnets, "tenant-a-net", using(1.0), TIMEOUT).await?;
    assert_eq!(subnet.status.unwrap_or_default().v4available_ips, 252.0);

    // A second VM asking for a held address does not start, and says why.
    apply::<VirtualMachine>(&client, on_subnet("clash", Some("10.0.1.50"))).await?;
    let clash = wait_for(
        &vms,
        "clash",
        |v: &VirtualMachine| {
            v.status
                .as_ref()
                .and_then(|s| find_condition(&s.conditions, "Ready"))
                .is_some_and(|c| c.reason.as_deref() == Some("IPConflict"))
        },
        TIMEOUT,
    )
    .await?;
    assert_eq!(printable(&clash), Some(PrintableStatus::Starting));
    cluster.shutdown().await
}

/// kubectl (which sends tokens only over TLS) against an HTTPS server, as `mni-dev up` serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_vm_vmi_dv_shows_upstream_columns() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let identity = mni_apiserver::tls::TlsIdentity::load_or_create(&tmp.path().join("pki"), None)?;
    let server = mni_apiserver::Server::builder()
        .with_tls(identity)
        .start()
        .await?;
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(
        serde_yaml::from_str(&server.kubeconfig())?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    let client = Client::try_from(config)?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut stop_a = stopped.clone();
    let workloads = tokio::spawn(
        mni_workloads::Simulator::new(client.clone()).run(async move {
            let _ = stop_a.wait_for(|s| *s).await;
        }),
    );
    let mut stop_b = stopped.clone();
    let sim = mni_kubevirt::simulator::Simulator::new(client.clone())
        .with_step_interval(Duration::from_millis(20));
    sim.install_crds().await?;
    let sim = tokio::spawn(sim.run(async move {
        let _ = stop_b.wait_for(|s| *s).await;
    }));

    let kubectl = |args: &[&str]| -> anyhow::Result<String> {
        let out = Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", &kubeconfig)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let manifest = tmp.path().join("vm.yaml");
    let mut body = vm("web", "Always", container_disk(CIRROS));
    body["spec"]["dataVolumeTemplates"] = json!([{
        "metadata": {"name": "web-data"},
        "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {"storage": "1Gi"}}}},
    }]);
    body["spec"]["template"]["spec"]["volumes"]
        .as_array_mut()
        .expect("volumes")
        .push(json!({"name": "data", "dataVolume": {"name": "web-data"}}));
    std::fs::write(&manifest, serde_yaml::to_string(&body)?)?;
    let applied = kubectl(&["apply", "-f", manifest.to_str().unwrap_or_default()])?;
    assert!(
        applied.contains("virtualmachine.kubevirt.io/web created"),
        "{applied}"
    );
    let vms: Api<VirtualMachine> = Api::namespaced(client.clone(), NS);
    wait_printable(&vms, "web", PrintableStatus::Running).await?;

    let table = kubectl(&["get", "vm,vmi,dv"])?;
    let sections: Vec<Vec<Vec<&str>>> = table
        .split("\n\n")
        .map(|s| s.lines().map(|l| l.split_whitespace().collect()).collect())
        .collect();
    assert_eq!(sections.len(), 3, "{table}");
    assert_eq!(
        sections[0][0],
        ["NAME", "AGE", "STATUS", "READY"],
        "{table}"
    );
    assert_eq!(
        sections[0][1][0], "virtualmachine.kubevirt.io/web",
        "{table}"
    );
    assert_eq!(sections[0][1][2..], ["Running", "True"], "{table}");
    assert_eq!(
        sections[1][0],
        ["NAME", "AGE", "PHASE", "IP", "NODENAME", "READY"],
        "{table}"
    );
    assert_eq!(sections[1][1][2], "Running", "{table}");
    assert!(sections[1][1][3].starts_with("10.246."), "{table}");
    assert_eq!(sections[1][1][4..], ["mni-dev-kubevirt", "True"], "{table}");
    assert_eq!(
        sections[2][0],
        ["NAME", "PHASE", "PROGRESS", "RESTARTS", "AGE"],
        "{table}"
    );
    assert_eq!(
        sections[2][1][..3],
        ["datavolume.cdi.kubevirt.io/web-data", "Succeeded", "100.0%"],
        "{table}"
    );

    // Short names work too.
    let vmis = kubectl(&["get", "vmis", "-o", "name"])?;
    assert_eq!(vmis.trim(), "virtualmachineinstance.kubevirt.io/web");

    let _ = stop.send(true);
    sim.await??;
    let _ = workloads.await;
    server.shutdown().await;
    Ok(())
}
