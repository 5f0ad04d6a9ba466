//! The plugin in-process over a Universe, as the CLI runs it: `init`, then `new service
//! network`. The list of files `new service` writes or changes is pinned by an `insta` snapshot
//! (`INSTA_UPDATE=always cargo test -p mni-plugin-vpc` after a deliberate change); the files
//! themselves are pinned once, by the committed `services/vpc` and its drift test; every Rust file must parse and be rustfmt-clean, every YAML document must parse; the checks every
//! specialised service plugin passes are `mni_plugin_service::v1::testing::Conformance`'s. Whether the
//! generated project builds and its tests pass is checked on the committed `services/vpc`
//! (`scripts/golden.sh`).

use mni_plugin_service::v1::testing::{Conformance, check_syntax};

use super::*;

const CONFORMANCE: Conformance<VpcV1> = Conformance {
    make: VpcV1::new,
    templates: "vpc",
    project_name: "mni-vpc",
    service: "network",
    service_files: &[
        "operator/src/controllers/kube_ovn_orphans.rs",
        "backend/src/subnets.rs",
        "README.md",
    ],
    taken_over: TAKEN_OVER,
    skipped: SKIPPED,
};

#[test]
fn new_service_makes_the_vpc_service() {
    let before = CONFORMANCE.init();
    let p = CONFORMANCE.new_service("network");
    check_syntax(&p.universe);
    // What `new service` writes or changes; the files themselves are pinned once, by the
    // committed golden projects and reference services and their drift test.
    let written = p.written_since(&before.universe);
    insta::assert_snapshot!("written", written.join("\n"));
    insta::assert_snapshot!("PROJECT", p.config.to_yaml().expect("PROJECT"));

    let service = p.config.service("network").expect("recorded");
    assert_eq!(service.plugin.to_string(), KEY);
    let r = p
        .config
        .resource("network", "v1alpha1", DOMAIN_KIND)
        .expect("VirtualPrivateCloud");
    assert_eq!(
        r.path.as_deref(),
        Some("network_operator::api::network_v1alpha1")
    );
    // The only service of a project without root crate: laid out flat.
    let op = "operator/";
    assert!(p.universe.contains("backend/src/subnets.rs") && p.universe.contains("README.md"));
    for file in [
        "src/api/network_v1alpha1/virtual_private_cloud.rs",
        "src/api/network_v1alpha1/validate.rs",
        "src/controllers/virtual_private_cloud/upstream.rs",
        "config/crd/bases/network.mni.dev_virtualprivateclouds.yaml",
        "config/samples/network_v1alpha1_virtualprivatecloud.yaml",
    ] {
        assert!(p.universe.contains(&format!("{op}{file}")), "{file}");
    }
    assert!(
        !p.universe
            .contains(&format!("{op}src/api/network_v1alpha1/network_account.rs"))
    );
    let role = p
        .universe
        .get(&format!("{op}config/rbac/role.yaml"))
        .expect("role");
    assert!(
        role.contains("kubeovn.io") && role.contains("iptables-eips"),
        "{role}"
    );
    assert!(!role.contains('*'), "least privilege: {role}");
    let controller = p
        .universe
        .get(&format!("{op}src/controllers/network.rs"))
        .expect("the service's controller");
    let backend_rules = controller
        .split("pub fn backend_rules")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("backend_rules");
    assert!(
        !backend_rules.contains("kubeovn") && backend_rules.contains("DOMAIN_RESOURCE"),
        "the backend gets nothing on kubeovn.io: {backend_rules}"
    );
}

#[test]
fn generated_rust_is_rustfmt_clean_for_short_and_long_names() {
    CONFORMANCE.generated_rust_is_rustfmt_clean();
}

#[test]
fn init_makes_a_virtual_workspace_for_the_service() {
    CONFORMANCE.init_makes_a_virtual_workspace();
}

#[test]
fn init_and_create_api_do_what_the_default_bundle_does() {
    CONFORMANCE.init_and_create_api_do_what_the_default_bundle_does();
}

#[test]
fn every_taken_over_template_exists_in_both_plugins() {
    CONFORMANCE.every_taken_over_template_exists_in_both_plugins();
}

#[test]
fn no_backend_or_frontend_code_of_service_v1_is_copied() {
    CONFORMANCE.no_backend_or_frontend_code_of_service_v1_is_copied();
}

#[test]
fn a_service_name_that_is_taken_is_refused_and_writes_nothing() {
    CONFORMANCE.a_service_name_that_is_taken_is_refused_and_writes_nothing();
}
