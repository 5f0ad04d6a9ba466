//! The Rust and kustomize plugins together, in-process, as the default bundle runs them. The
//! derived roles and the list of manifests are pinned by `insta` snapshots (`INSTA_UPDATE=always
//! cargo test -p mni-plugin-kustomize` after a deliberate change), the manifests themselves by
//! the golden projects' drift test; every YAML document parses.

use mni_plugin::{
    Context, FlagValue, FlagValues, PluginKey, ProjectConfig, Subcommand, Universe, run,
};
use mni_plugin_rust::RustV1;
use serde::Deserialize as _;

use super::*;

fn flags(pairs: &[(&str, &str)]) -> FlagValues {
    let mut values = FlagValues::new();
    for (k, v) in pairs {
        let value = match *v {
            "true" => FlagValue::Bool(true),
            "false" => FlagValue::Bool(false),
            v => FlagValue::String(v.to_owned()),
        };
        values.set(k, value);
    }
    values
}

fn run_chain(
    universe: &mut Universe,
    config: &mut ProjectConfig,
    sub: Subcommand,
    pairs: &[(&str, &str)],
) -> Result<(), PluginError> {
    let plugins: [&dyn Plugin; 2] = [&RustV1::new(), &KustomizeV1::new()];
    let chain: Vec<PluginKey> = plugins.iter().map(|p| p.key().clone()).collect();
    let f = flags(pairs);
    for plugin in plugins {
        let mut cx = Context {
            universe,
            config,
            flags: &f,
            chain: &chain,
        };
        run(plugin, sub, &mut cx)?;
    }
    Ok(())
}

#[test]
fn manifests_for_a_project_with_a_service_and_two_kinds() {
    let mut universe = Universe::new();
    let mut config = ProjectConfig::default();
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::Init,
        &[("domain", "example.com"), ("project-name", "demo")],
    )
    .expect("init");
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::NewService,
        &[("name", "billing")],
    )
    .expect("new service");
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::CreateApi,
        &[
            ("group", "webapp"),
            ("version", "v1"),
            ("kind", "Guestbook"),
        ],
    )
    .expect("create api");
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::CreateApi,
        &[
            ("group", "billing"),
            ("version", "v1alpha1"),
            ("kind", "Account"),
            ("namespaced", "false"),
            ("service", "billing"),
        ],
    )
    .expect("create api --service");

    for (path, file) in universe.iter() {
        if path.ends_with(".yaml") {
            for doc in serde_yaml::Deserializer::from_str(file.contents()) {
                serde_yaml::Value::deserialize(doc)
                    .unwrap_or_else(|e| panic!("{path} is valid YAML: {e}"));
            }
        }
    }
    // The derived roles are this plugin's own logic: pinned here. Whole files are pinned once,
    // by the golden projects under `tests/golden/` and their drift test.
    for path in [
        "config/rbac/role.yaml",
        "services/billing/operator/config/rbac/role.yaml",
    ] {
        let role = universe.get(path).unwrap_or_else(|| panic!("{path}"));
        insta::assert_snapshot!(path.replace('/', "__"), role);
    }
    let paths: Vec<&str> = universe
        .iter()
        .map(|(path, _)| path)
        .filter(|path| path.contains("config/"))
        .collect();
    insta::assert_snapshot!("config-files", paths.join("\n"));
    let role = universe.get("config/rbac/role.yaml").expect("role");
    assert!(role.contains("guestbooks/status") && !role.contains("accounts"));
    let service_role = universe
        .get("services/billing/operator/config/rbac/role.yaml")
        .expect("service role");
    assert!(service_role.contains("accounts") && !service_role.contains("guestbooks"));
    assert!(!role.contains('*') && !service_role.contains('*'));
    let crd = universe
        .get("services/billing/operator/config/crd/bases/billing.example.com_accounts.yaml")
        .expect("crd");
    assert!(crd.contains("scope: Cluster"), "{crd}");
}

#[test]
fn a_wildcard_in_a_controller_is_bad_input_and_writes_nothing() {
    let mut universe = Universe::new();
    let mut config = ProjectConfig::default();
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::Init,
        &[("domain", "example.com"), ("project-name", "demo")],
    )
    .expect("init");
    universe
        .modify("src/main.rs", |s| {
            format!("{s}// +mni:rbac:groups=apps,resources=*,verbs=get\n")
        })
        .unwrap();
    let err = run_chain(
        &mut universe,
        &mut config,
        Subcommand::CreateApi,
        &[
            ("group", "webapp"),
            ("version", "v1"),
            ("kind", "Guestbook"),
        ],
    )
    .unwrap_err();
    assert!(err.is_invalid_input());
    assert!(
        err.to_string()
            .starts_with("cannot derive config/rbac/role.yaml: src/main.rs:"),
        "{err}"
    );
}

/// The `- ../crd` lines of the root crate's `config/default/kustomization.yaml`.
fn crd_lines(universe: &Universe) -> usize {
    universe
        .get("config/default/kustomization.yaml")
        .expect("config/default")
        .lines()
        .filter(|l| l.trim() == "- ../crd")
        .count()
}

#[test]
fn config_crd_and_samples_come_with_the_first_kind_and_are_listed_once() {
    let mut universe = Universe::new();
    let mut config = ProjectConfig::default();
    let init = [("domain", "example.com"), ("project-name", "demo")];
    run_chain(&mut universe, &mut config, Subcommand::Init, &init).expect("init");
    assert!(!universe.contains("config/crd/kustomization.yaml"));
    assert!(!universe.contains("config/samples/kustomization.yaml"));
    assert_eq!(crd_lines(&universe), 0);
    let api = |kind| [("group", "webapp"), ("version", "v1"), ("kind", kind)];
    for kind in ["Guestbook", "Visitor"] {
        run_chain(
            &mut universe,
            &mut config,
            Subcommand::CreateApi,
            &api(kind),
        )
        .expect(kind);
        assert_eq!(crd_lines(&universe), 1);
    }
    let crds = universe.get("config/crd/kustomization.yaml").expect("crd");
    assert!(
        crds.contains("- bases/webapp.example.com_guestbooks.yaml"),
        "{crds}"
    );
    assert!(
        crds.contains("- bases/webapp.example.com_visitors.yaml"),
        "{crds}"
    );
}

#[test]
fn a_project_from_before_the_marker_keeps_its_crd_line() {
    let mut universe = Universe::new();
    let mut config = ProjectConfig::default();
    let init = [("domain", "example.com"), ("project-name", "demo")];
    run_chain(&mut universe, &mut config, Subcommand::Init, &init).expect("init");
    // What `init` wrote before config/crd came with the first kind.
    universe
        .modify("config/default/kustomization.yaml", |s| {
            s.lines()
                .filter(|l| !l.starts_with('#') || l.starts_with("#-"))
                .map(|l| {
                    if l == "resources:" {
                        "resources:\n- ../crd"
                    } else {
                        l
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        })
        .unwrap();
    let api = [
        ("group", "webapp"),
        ("version", "v1"),
        ("kind", "Guestbook"),
    ];
    run_chain(&mut universe, &mut config, Subcommand::CreateApi, &api).expect("create api");
    assert_eq!(crd_lines(&universe), 1);
    assert!(universe.contains("config/crd/kustomization.yaml"));
}

#[test]
fn webhooks_of_a_service_kind_with_conversion_render_valid_yaml() {
    let mut universe = Universe::new();
    let mut config = ProjectConfig::default();
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::Init,
        &[("domain", "example.com"), ("project-name", "demo")],
    )
    .expect("init");
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::NewService,
        &[("name", "billing")],
    )
    .expect("new service");
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::CreateApi,
        &[
            ("group", "billing"),
            ("version", "v2"),
            ("kind", "Invoice"),
            ("service", "billing"),
        ],
    )
    .expect("create api --service");
    // The spoke version, as PROJECT would record it (`create api` writes one CRD per version,
    // so a second version of a kind needs its CRD merged by hand).
    let mut v1 = config.resource("billing", "v2", "Invoice").unwrap().clone();
    v1.version = "v1".to_owned();
    config.upsert_resource(v1);
    let webhook = [
        ("group", "billing"),
        ("version", "v2"),
        ("kind", "Invoice"),
        ("defaulting", "true"),
        ("conversion", "true"),
        ("spoke", "v1"),
    ];
    // The kind is the service's: without --service the error says so.
    let err = run_chain(
        &mut universe.clone(),
        &mut config.clone(),
        Subcommand::CreateWebhook,
        &webhook,
    )
    .unwrap_err();
    assert!(err.to_string().contains("give --service billing"), "{err}");
    let webhook = [&webhook[..], &[("service", "billing")]].concat();
    run_chain(
        &mut universe,
        &mut config,
        Subcommand::CreateWebhook,
        &webhook,
    )
    .expect("create webhook");

    let op = "services/billing/operator/";
    for (path, file) in universe.iter() {
        if path.ends_with(".yaml") {
            for doc in serde_yaml::Deserializer::from_str(file.contents()) {
                serde_yaml::Value::deserialize(doc)
                    .unwrap_or_else(|e| panic!("{path} is valid YAML: {e}"));
            }
        }
    }
    let manifests = universe
        .get(&format!("{op}config/webhook/manifests.yaml"))
        .expect("manifests");
    assert!(manifests.contains("path: /mutate-billing-example-com-v2-invoice"));
    assert!(!manifests.contains("/validate-billing"), "{manifests}");
    let crd = universe
        .get(&format!("{op}config/crd/kustomization.yaml"))
        .expect("crd kustomization");
    assert!(
        crd.contains("- path: patches/webhook_in_invoices.yaml"),
        "{crd}"
    );
    assert!(crd.contains("- kustomizeconfig.yaml"), "{crd}");
    let default = universe
        .get(&format!("{op}config/default/kustomization.yaml"))
        .expect("default kustomization");
    assert!(
        default.contains("name: invoices.billing.example.com"),
        "{default}"
    );
    assert!(universe.get("config/webhook/manifests.yaml").is_none());
    let resource = config
        .resource("billing", "v2", "Invoice")
        .expect("recorded");
    let webhooks = resource.webhooks.clone().expect("webhooks");
    assert!(webhooks.defaulting && webhooks.conversion && !webhooks.validation);
}
