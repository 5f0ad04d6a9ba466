//! The checked-in CRDs equal what the types generate, and keep upstream's names and columns;
//! the BMC address rules the simulator uses are Metal3's.

use serde_json::{Value, json};

#[test]
fn checked_in_crds_match_the_code() {
    mni_testkit::assert_crds_checked_in(
        env!("CARGO_MANIFEST_DIR"),
        &mni_metal3::crds(),
        "cargo run -q -p mni-metal3 --example crds",
    );
}

fn crd(name: &str) -> Value {
    let crd = mni_metal3::crds()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no CRD {name}"));
    serde_json::to_value(crd).expect("crd json")
}

#[test]
fn crds_keep_upstream_names_short_names_and_columns() {
    let bmh = crd("baremetalhosts.metal3.io");
    let spec = &bmh["spec"];
    assert_eq!(spec["scope"], "Namespaced");
    assert_eq!(spec["names"]["kind"], "BareMetalHost");
    assert_eq!(spec["names"]["shortNames"], json!(["bmh", "bmhost"]));
    let version = &spec["versions"][0];
    assert_eq!(version["name"], "v1alpha1");
    assert_eq!(version["subresources"]["status"], json!({}));
    let columns: Vec<(&str, &str)> = version["additionalPrinterColumns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["jsonPath"].as_str().unwrap()))
        .collect();
    assert_eq!(
        columns,
        [
            ("Status", ".status.operationalStatus"),
            ("State", ".status.provisioning.state"),
            ("Consumer", ".spec.consumerRef.name"),
            ("BMC", ".spec.bmc.address"),
            ("Online", ".spec.online"),
            ("Error", ".status.errorType"),
            ("Age", ".metadata.creationTimestamp"),
        ]
    );
    let schema = &version["schema"]["openAPIV3Schema"]["properties"];
    assert!(!schema.to_string().contains("$ref"));
    let bmc = &schema["spec"]["properties"]["bmc"]["properties"];
    for field in [
        "address",
        "credentialsName",
        "disableCertificateVerification",
    ] {
        assert!(bmc.get(field).is_some(), "spec.bmc.{field}");
    }
    let spec_props = &schema["spec"]["properties"];
    for field in [
        "bootMACAddress",
        "online",
        "image",
        "userData",
        "rootDeviceHints",
        "externallyProvisioned",
        "consumerRef",
    ] {
        assert!(spec_props.get(field).is_some(), "spec.{field}");
    }
    let status = &schema["status"]["properties"];
    assert_eq!(
        status["errorType"]["enum"],
        json!([
            "provisioned registration error",
            "registration error",
            "inspection error",
            "preparation error",
            "provisioning error",
            "power management error",
            "servicing error"
        ])
    );
    assert_eq!(
        status["operationalStatus"]["enum"],
        json!([
            "",
            "OK",
            "discovered",
            "error",
            "delayed",
            "detached",
            "servicing"
        ])
    );
    assert!(status["provisioning"]["properties"].get("ID").is_some());
    let hd = crd("hardwaredata.metal3.io");
    assert_eq!(hd["spec"]["names"]["shortNames"], json!(["hd"]));
    let hardware = &hd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["hardware"]["properties"];
    for field in [
        "cpu",
        "ramMebibytes",
        "nics",
        "storage",
        "systemVendor",
        "firmware",
    ] {
        assert!(hardware.get(field).is_some(), "hardware.{field}");
    }
}

#[test]
fn upstream_example_hosts_parse_and_keep_unmodelled_fields() {
    let host: mni_metal3::v1alpha1::BareMetalHost = serde_yaml::from_str(
        r#"
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: worker-0
spec:
  online: true
  bootMode: UEFI
  bmc:
    address: libvirt://192.168.122.1:6233/
    credentialsName: worker-0-bmc-secret
  bootMACAddress: "00:1a:74:74:e5:cb"
  image:
    url: "http://172.22.0.1/images/rhcos-ootpa-latest.qcow2"
    checksum: "97830b21ed272a3d854615beb54cf004"
  userData:
    name: worker-user-data
    namespace: openshift-machine-api
"#,
    )
    .expect("upstream example");
    assert_eq!(host.spec.unmodelled["bootMode"], "UEFI");
    let json = serde_json::to_value(&host).unwrap();
    assert_eq!(json["spec"]["bootMACAddress"], "00:1a:74:74:e5:cb");
    assert_eq!(json["spec"]["userData"]["name"], "worker-user-data");
}
