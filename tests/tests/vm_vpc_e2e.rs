//! The VM service on the VPC service, end to end: the committed `services/vpc` and
//! `services/vm` built, both operators running on one `mni-dev` with Kube-OVN and KubeVirt
//! simulated, each as its own ServiceAccount with the RBAC of its `config/` (enforced). An
//! Instance in a VPC subnet waits (`WaitingForNetwork`) until the VPC service has made the
//! subnet Ready, then runs with its fixed address from Kube-OVN's IPAM; it stops and starts
//! with its run strategy; deleting it deletes its KubeVirt VirtualMachine.

#[allow(
    unused_imports,
    reason = "the service tests share the module; this one uses part of it"
)]
mod service_support;

use std::time::Instant;

use serde_json::Value;

use service_support::{CONVERGE, Cluster, Operator, Project, eventually_value};

const TENANT: &str = "tenant-a";

const INSTANCE: &str = "apiVersion: compute.mni.dev/v1alpha1
kind: Instance
metadata:
  name: web-1
spec:
  instanceType: s1.small
  bootDisk:
    image: quay.io/containerdisks/fedora:41
  network:
    vpc:
      name: virtualprivatecloud-sample
      subnet: web
      ip: 10.0.1.20
";

fn step(started: Instant, what: &str) {
    println!("[{:>6.1?}] {what}", started.elapsed());
}

/// The Instance's `status.phase` and `status.ipAddress`.
fn phase_and_ip(cluster: &Cluster) -> (String, String) {
    let obj: Value = cluster.get_json(&["-n", TENANT, "inst", "web-1"]);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        text(&obj["status"]["phase"]),
        text(&obj["status"]["ipAddress"]),
    )
}

fn wait_phase(cluster: &Cluster, phase: &str) -> (String, String) {
    eventually_value(&format!("Instance web-1 to be {phase}"), CONVERGE, || {
        let seen = phase_and_ip(cluster);
        if seen.0 == phase {
            Ok(seen)
        } else {
            Err(format!("{seen:?}"))
        }
    })
}

#[test]
fn an_instance_waits_for_its_vpc_subnet_then_runs_in_it() {
    let started = Instant::now();
    step(started, "build services/vpc and services/vm");
    let vpc = Project::build_committed(
        "services/vpc",
        "network-operator",
        "network-backend",
        "network-frontend",
    );
    let vm = Project::build_committed(
        "services/vm",
        "compute-operator",
        "compute-backend",
        "compute-frontend",
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    step(started, "mni-dev with Kube-OVN and KubeVirt simulated");
    let cluster = Cluster::start_with(tmp.path(), &["--simulate-upstream", "kube-ovn,kubevirt"]);
    for project in [&vpc, &vm] {
        let config = project.path("operator/config/default");
        cluster.kubectl(&["apply", "-k", config.to_str().expect("UTF-8 path")]);
    }
    let vpc_kubeconfig = cluster.service_account_kubeconfig(
        "network-operator-system",
        "network-operator-controller-manager",
        "vpc-operator.kubeconfig",
    );
    let vm_kubeconfig = cluster.service_account_kubeconfig(
        "compute-operator-system",
        "compute-operator-controller-manager",
        "vm-operator.kubeconfig",
    );
    let mut vpc_operator = Operator::start(&vpc, &vpc_kubeconfig);
    let mut vm_operator = Operator::start(&vm, &vm_kubeconfig);
    cluster.kubectl(&["create", "namespace", TENANT]);

    step(
        started,
        "an Instance in a subnet of a VPC that does not exist yet",
    );
    let manifest = tmp.path().join("instance.yaml");
    std::fs::write(&manifest, INSTANCE).expect("write the Instance");
    let manifest = manifest.to_str().expect("UTF-8 path");
    cluster.kubectl(&["-n", TENANT, "apply", "-f", manifest]);
    wait_phase(&cluster, "WaitingForNetwork");
    let vms = cluster.kubectl(&["-n", TENANT, "get", "vm", "-o", "name"]);
    assert!(vms.trim().is_empty(), "no VirtualMachine yet: {vms}");

    step(started, "the VPC service makes the VPC");
    let sample = vpc.path("operator/config/samples/network_v1alpha1_virtualprivatecloud.yaml");
    let sample = sample.to_str().expect("UTF-8 path");
    cluster.kubectl(&["-n", TENANT, "apply", "-f", sample]);
    let (_, ip) = wait_phase(&cluster, "Running");
    assert_eq!(ip, "10.0.1.20");
    let timeout = format!("--timeout={}s", CONVERGE.as_secs());
    let ready = "--for=condition=Ready";
    cluster.kubectl(&["-n", TENANT, "wait", "inst/web-1", ready, &timeout]);
    let vm_obj = cluster.get_json(&["-n", TENANT, "vm", "web-1"]);
    assert_eq!(
        vm_obj["spec"]["template"]["metadata"]["annotations"]["ovn.kubernetes.io/logical_switch"],
        "tenant-a-virtualprivatecloud-sample-web"
    );
    assert_eq!(vm_obj["metadata"]["ownerReferences"][0]["kind"], "Instance");

    step(started, "stop and start");
    let halt = r#"{"spec":{"runStrategy":"Halted"}}"#;
    cluster.kubectl(&[
        "-n",
        TENANT,
        "patch",
        "inst",
        "web-1",
        "--type=merge",
        "-p",
        halt,
    ]);
    wait_phase(&cluster, "Stopped");
    let run = r#"{"spec":{"runStrategy":"Always"}}"#;
    cluster.kubectl(&[
        "-n",
        TENANT,
        "patch",
        "inst",
        "web-1",
        "--type=merge",
        "-p",
        run,
    ]);
    let (_, ip) = wait_phase(&cluster, "Running");
    assert_eq!(ip, "10.0.1.20");

    step(started, "delete the Instance, then the VPC");
    cluster.kubectl(&["-n", TENANT, "delete", "inst", "web-1", &timeout]);
    eventually_value("the VirtualMachine to go", CONVERGE, || {
        let left = cluster.kubectl(&["-n", TENANT, "get", "vm", "-o", "name"]);
        if left.trim().is_empty() {
            Ok(())
        } else {
            Err(left)
        }
    });
    cluster.kubectl(&[
        "-n",
        TENANT,
        "delete",
        "tvpc",
        "virtualprivatecloud-sample",
        &timeout,
    ]);
    vpc_operator.assert_running();
    vm_operator.assert_running();
    step(started, "done");
}
