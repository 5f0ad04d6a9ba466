//! `mni-dev up --olm` driven with kubectl as a user would: a CatalogSource on a catalog
//! directory, an OperatorGroup and a Subscription applied, then `kubectl wait` until the
//! ClusterServiceVersion has `Succeeded` and its Deployment exists.

use crate::support;

use support::dev::Dev;

#[test]
fn kubectl_installs_an_operator_through_olm() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up_with(tmp.path(), &["--olm"]);
    let catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../upstreams/olm-lifecycle/tests/fixtures/catalog")
        .canonicalize()
        .expect("fixture catalog");
    let manifests = format!(
        r#"apiVersion: v1
kind: Namespace
metadata:
  name: operators
---
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: demo
  namespace: operators
  annotations:
    olm.mni.dev/catalog-dir: {}
spec:
  sourceType: grpc
  displayName: mNi demo operators
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata:
  name: operators
  namespace: operators
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata:
  name: demo-db
  namespace: operators
spec:
  name: demo-db
  channel: stable
  source: demo
  sourceNamespace: operators
  installPlanApproval: Automatic
"#,
        catalog.display()
    );
    let out = dev.apply(&manifests);
    assert!(
        out.contains("subscription.operators.coreos.com/demo-db created"),
        "{out}"
    );
    support::dev::wait_for(
        "the ClusterServiceVersion",
        std::time::Duration::from_secs(60),
        || {
            dev.kubectl(&["get", "csv", "demo-db.v0.2.0", "-n", "operators"])
                .status
                .success()
                .then_some(())
        },
    );
    dev.ok(&[
        "wait",
        "--for=jsonpath={.status.phase}=Succeeded",
        "csv/demo-db.v0.2.0",
        "-n",
        "operators",
        "--timeout=120s",
    ]);
    assert!(
        dev.ok(&["get", "deployment", "demo-db-operator", "-n", "operators"])
            .contains("demo-db-operator")
    );
    assert_eq!(
        dev.ok(&[
            "get",
            "subscription",
            "demo-db",
            "-n",
            "operators",
            "-o",
            "jsonpath={.status.installedCSV}"
        ]),
        "demo-db.v0.2.0"
    );
}
