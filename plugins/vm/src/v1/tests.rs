//! The plugin in-process over a Universe, as the CLI runs it: `init`, then `new service
//! compute`. The list of files `new service` writes or changes is pinned by an `insta`
//! snapshot (`INSTA_UPDATE=always cargo test -p mni-plugin-vm` after a deliberate change); the
//! files themselves are pinned once, by the committed `services/vm` and its drift test; every
//! Rust file must parse and be rustfmt-clean, every YAML document must parse. Whether the
//! generated project builds and its tests pass is checked on the committed `services/vm`
//! (`scripts/golden.sh services/vm`).

use mni_plugin_service::v1::testing::{Conformance, check_syntax};

use super::*;

const CONFORMANCE: Conformance<VmV1> = Conformance {
    make: VmV1::new,
    templates: "vm",
    project_name: "mni-vm",
    service: "compute",
    service_files: &[
        "operator/src/controllers/instance.rs",
        "backend/src/power.rs",
        "README.md",
    ],
    taken_over: TAKEN_OVER,
    skipped: SKIPPED,
};

#[test]
fn new_service_makes_the_vm_service() {
    let before = CONFORMANCE.init();
    let p = CONFORMANCE.new_service("compute");
    check_syntax(&p.universe);
    // What `new service` writes or changes; the files themselves are pinned once, by the
    // committed golden projects and reference services and their drift test.
    let written = p.written_since(&before.universe);
    insta::assert_snapshot!("written", written.join("\n"));
    insta::assert_snapshot!("PROJECT", p.config.to_yaml().expect("PROJECT"));

    let service = p.config.service("compute").expect("recorded");
    assert_eq!(service.plugin.to_string(), KEY);
    let r = p
        .config
        .resource("compute", "v1alpha1", DOMAIN_KIND)
        .expect("Instance");
    assert_eq!(
        r.path.as_deref(),
        Some("compute_operator::api::compute_v1alpha1")
    );
    // The dependency on the VPC service, for delivery (OLM's olm.gvk.required).
    let key: PluginKey = KEY.parse().expect("key");
    let config: serde_json::Value = p
        .config
        .plugin_config(&key)
        .expect("readable")
        .expect("recorded");
    assert_eq!(
        config["requires"][0],
        serde_json::json!({ "group": "network.mni.dev", "version": "v1alpha1", "kind": "VirtualPrivateCloud" })
    );
    let op = "operator/";
    assert!(p.universe.contains("backend/src/power.rs") && p.universe.contains("README.md"));
    for file in [
        "src/api/compute_v1alpha1/instance.rs",
        "src/api/compute_v1alpha1/validate.rs",
        "src/api/compute_v1alpha1/catalogue.rs",
        "src/controllers/instance/upstream.rs",
        "src/controllers/instance/network.rs",
        "config/crd/bases/compute.mni.dev_instances.yaml",
        "config/samples/compute_v1alpha1_instance.yaml",
    ] {
        assert!(p.universe.contains(&format!("{op}{file}")), "{file}");
    }
    let role = p
        .universe
        .get(&format!("{op}config/rbac/role.yaml"))
        .expect("role");
    assert!(
        role.contains("kubevirt.io") && role.contains("virtualprivateclouds"),
        "{role}"
    );
    assert!(!role.contains('*'), "least privilege: {role}");
    let controller = p
        .universe
        .get(&format!("{op}src/controllers/compute.rs"))
        .expect("the service's controller");
    let backend_rules = controller
        .split("pub fn backend_rules")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("backend_rules");
    assert!(
        !backend_rules.contains("kubevirt") && backend_rules.contains("DOMAIN_RESOURCE"),
        "the backend gets nothing on kubevirt.io: {backend_rules}"
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
