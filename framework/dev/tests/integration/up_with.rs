//! `mni-dev up --with …`: the reference services installed through OLM in one command, checked
//! with kubectl; and the names `--with` refuses.

use std::process::Command;

use crate::support;

use support::dev::Dev;

/// `kubectl get KIND -n operators` as `name=phase` lines (or `name=installedCSV`).
fn names_and(dev: &Dev, kind: &str, field: &str) -> String {
    dev.ok(&[
        "get",
        kind,
        "-n",
        "operators",
        "-o",
        &format!("jsonpath={{range .items[*]}}{{.metadata.name}}={{{field}}}{{\"\\n\"}}{{end}}"),
    ])
}

#[test]
fn with_vm_installs_the_vm_service_and_the_vpc_service_it_needs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut dev = Dev::up_with(tmp.path(), &["--with", "vm"]);
    let report = dev.read_until("serving until");
    assert!(
        report.contains("2 ClusterServiceVersions Succeeded in"),
        "{report}"
    );
    assert!(
        report.contains("operators/mni-vm.v0.1.0  Succeeded  (Subscription mni-vm)"),
        "{report}"
    );
    assert!(
        report.contains("operators/mni-vpc.v0.1.0  Succeeded") && report.contains("a dependency"),
        "{report}"
    );
    assert!(
        report.contains("console: none (mni-platform was not chosen)"),
        "{report}"
    );
    assert!(report.contains("computes.compute.mni.dev"), "{report}");

    // What mni-dev said is what the cluster holds.
    let csvs = names_and(&dev, "csv", ".status.phase");
    assert!(csvs.contains("mni-vm.v0.1.0=Succeeded"), "{csvs}");
    assert!(csvs.contains("mni-vpc.v0.1.0=Succeeded"), "{csvs}");
    let subs = names_and(&dev, "subscriptions", ".status.installedCSV");
    assert!(subs.contains("mni-vm=mni-vm.v0.1.0"), "{subs}");
    // mni-vpc came through the resolver, in a Subscription it named.
    assert!(
        subs.lines()
            .any(|l| l.starts_with("mni-vpc-") && l.ends_with("=mni-vpc.v0.1.0")),
        "{subs}"
    );
    assert_eq!(
        dev.jsonpath(
            "catalogsource mni-services -n olm",
            "{.status.connectionState.lastObservedState}"
        ),
        "READY"
    );
    assert_eq!(
        dev.jsonpath(
            "operatorgroup global-operators -n operators",
            "{.status.namespaces}"
        ),
        r#"[""]"#
    );
    // The CRDs of both services are served, and so are the upstream APIs they drive.
    for resource in [
        "computes.compute.mni.dev",
        "instances.compute.mni.dev",
        "virtualprivateclouds.network.mni.dev",
        "networks.network.mni.dev",
        "virtualmachines.kubevirt.io",
        "vpcs.kubeovn.io",
    ] {
        dev.ok(&["get", resource, "-A"]);
    }
    // The operators' Deployments exist.
    let deployments = dev.ok(&["get", "deployments", "-n", "operators", "-o", "name"]);
    assert_eq!(deployments.lines().count(), 2, "{deployments}");
}

/// Runs `mni-dev up` with `args` in a fresh directory; it must fail before serving. Returns
/// its stderr.
fn up_fails(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_mni-dev"))
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(tmp.path().join("data"))
        .args(args)
        .output()
        .expect("mni-dev runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{args:?} succeeded: {stdout}");
    assert!(
        !stdout.contains("ready"),
        "{args:?} started serving: {stdout}"
    );
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn with_refuses_unknown_and_empty_names_naming_the_valid_ones() {
    let err = up_fails(&["--with", "vm,nosuch"]);
    assert!(
        err.contains("--with nosuch: no such service in the catalog")
            && err.contains("valid: baremetal, platform, vm, vpc"),
        "{err}"
    );
    let err = up_fails(&["--with", ","]);
    assert!(
        err.contains("--with names no service: give one or more of baremetal, platform, vm, vpc"),
        "{err}"
    );
    let err = up_fails(&["--with", "vm", "--no-simulate"]);
    assert!(err.contains("--with needs the workload simulator"), "{err}");
    let err = up_fails(&["--catalog", "/nonexistent"]);
    assert!(err.contains("--with"), "--catalog alone: {err}");
}
