//! The committed reference catalog (`services/catalog/`) is what
//! `mni_plugin_olm::reference::regenerate` writes from the reference services, and it is valid.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use mni_plugin_olm::reference::{REGEN_COMMAND, regenerate};

fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "README.md") {
                // Written by hand, not generated.
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, fs::read_to_string(&path).expect("text"));
            }
        }
    }
    out
}

#[test]
fn the_committed_catalog_is_current() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("catalog");
    regenerate(&repo, &out).expect("regenerates");
    let (fresh, committed) = (files(&out), files(&repo.join("services/catalog")));
    let drift: Vec<&String> = fresh
        .keys()
        .chain(committed.keys())
        .filter(|k| fresh.get(*k) != committed.get(*k))
        .collect();
    assert!(
        drift.is_empty(),
        "services/catalog/ is out of date ({drift:?}); regenerate it with `{REGEN_COMMAND}`"
    );
    mni_plugin_olm::validate_dir(&repo.join("services/catalog/catalog"), false)
        .expect("the reference catalog is valid");
    let vm = &fresh["catalog/mni-vm/catalog.yaml"];
    assert!(vm.contains("type: olm.gvk.required"), "{vm}");
    assert!(vm.contains("kind: VirtualPrivateCloud"), "{vm}");
}

/// The platform operator's `config/rbac` also holds the console's ClusterRole (bound to the
/// console's own ServiceAccount) and the ClusterRoles it binds for tenants' groups: neither
/// is the operator's to hold, so neither is in the operator's permissions. The console ships
/// as a second Deployment of the CSV, with its role as its own account's permissions.
#[test]
fn roles_of_other_accounts_stay_out_of_the_operator_s_permissions() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = tempfile::tempdir().expect("tmp");
    let out = tmp.path().join("bundle");
    let request = mni_plugin_olm::BundleRequest::new("0.1.0");
    mni_plugin_olm::write_bundle(&repo.join("services/platform"), &out, &request)
        .expect("bundles the platform operator");
    let csv: serde_yaml::Value = serde_yaml::from_str(
        &fs::read_to_string(out.join("manifests/mni-platform.clusterserviceversion.yaml"))
            .expect("the CSV"),
    )
    .expect("YAML");
    let install = &csv["spec"]["install"]["spec"];
    // The resources `key` grants the ServiceAccount `account`.
    let resources = |key: &str, account: &str| -> Vec<String> {
        install[key]
            .as_sequence()
            .into_iter()
            .flatten()
            .filter(|p| p["serviceAccountName"].as_str() == Some(account))
            .flat_map(|p| p["rules"].as_sequence().cloned().unwrap_or_default())
            .flat_map(|r| r["resources"].as_sequence().cloned().unwrap_or_default())
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect()
    };
    let (operator, console) = ("mni-platform-controller-manager", "mni-platform-console");
    let cluster = resources("clusterPermissions", operator);
    assert!(
        cluster.contains(&"tenants/status".to_owned()),
        "{cluster:?}"
    );
    assert!(cluster.contains(&"namespaces".to_owned()), "{cluster:?}");
    // The console's read of CSVs and the tenant admins' VMs and servers are not the
    // operator's (it writes VPCs itself, the tenants' default ones).
    for other in ["clusterserviceversions", "instances", "servers"] {
        assert!(
            !cluster.contains(&other.to_owned()),
            "{other} in {cluster:?}"
        );
    }
    assert!(resources("permissions", operator).contains(&"leases".to_owned()));
    // The console, its own Deployment under its own account, may read Tenants and CSVs and
    // nothing else.
    let deployments: Vec<(&str, &str)> = install["deployments"]
        .as_sequence()
        .expect("deployments")
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap_or_default(),
                d["spec"]["template"]["spec"]["serviceAccountName"]
                    .as_str()
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        deployments,
        [
            ("mni-platform-controller-manager", operator),
            ("mni-platform-console", console)
        ]
    );
    assert_eq!(
        resources("clusterPermissions", console),
        ["tenants", "clusterserviceversions"]
    );
    assert!(resources("permissions", console).is_empty());
    // The tenant roles it binds ship beside the CSV, and so do the Services the kustomization
    // deploys; the console's role is in the CSV, for its account, and does not ship apart.
    for file in [
        "mni-platform-tenant-admin_rbac.authorization.k8s.io_v1_clusterrole.yaml",
        "mni-platform-tenant-viewer_rbac.authorization.k8s.io_v1_clusterrole.yaml",
        "mni-platform-console_v1_service.yaml",
        "mni-platform-controller-manager-metrics-service_v1_service.yaml",
    ] {
        assert!(out.join("manifests").join(file).is_file(), "{file}");
    }
    assert!(
        !out.join("manifests/console_rbac.authorization.k8s.io_v1_clusterrole.yaml")
            .exists()
    );
}
