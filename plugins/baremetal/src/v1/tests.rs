//! The plugin in-process over a Universe, as the CLI runs it: `init`, then `new service
//! metal`. The list of files `new service` writes or changes is pinned by an `insta`
//! snapshot (`INSTA_UPDATE=always cargo test -p mni-plugin-baremetal` after a deliberate change); the
//! files themselves are pinned once, by the committed `services/baremetal` and its drift test; every
//! Rust file must parse and be rustfmt-clean, every YAML document must parse. Whether the
//! generated project builds and its tests pass is checked on the committed `services/baremetal`
//! (`scripts/golden.sh services/baremetal`).

use mni_plugin::{Context, FlagValue, FlagValues, PluginKey, ProjectConfig, Subcommand, Universe};
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

/// A project in memory, scaffolded by `baremetal.mni.dev/v1`.
struct Project {
    universe: Universe,
    config: ProjectConfig,
}

impl Project {
    fn init() -> Self {
        Self::init_with(&[])
    }

    fn init_with(extra: &[(&str, &str)]) -> Self {
        let mut p = Self {
            universe: Universe::new(),
            config: ProjectConfig::default(),
        };
        let mut pairs = vec![
            ("domain", "mni.dev"),
            ("project-name", "mni-baremetal"),
            ("mni-path", "../.."),
        ];
        pairs.extend_from_slice(extra);
        p.run(Subcommand::Init, &pairs).expect("init");
        p
    }

    /// Runs `sub` as the CLI does: validate, then run, on a copy kept only on success.
    fn run(&mut self, sub: Subcommand, pairs: &[(&str, &str)]) -> Result<(), PluginError> {
        let plugin = BaremetalV1::new();
        let chain: Vec<PluginKey> = vec![plugin.key().clone()];
        let f = flags(pairs);
        let mut universe = self.universe.clone();
        let mut config = self.config.clone();
        let Some(subcommand) = mni_plugin::subcommand(&plugin, sub) else {
            panic!("baremetal.mni.dev/v1 supports {sub}");
        };
        let mut cx = Context {
            universe: &mut universe,
            config: &mut config,
            flags: &f,
            chain: &chain,
        };
        subcommand.validate(&cx)?;
        subcommand.run(&mut cx)?;
        self.universe = universe;
        self.config = config;
        Ok(())
    }

    fn new_service(name: &str) -> Self {
        let mut p = Self::init();
        p.run(Subcommand::NewService, &[("name", name)])
            .unwrap_or_else(|e| panic!("new service {name}: {e}"));
        p
    }
}

/// Every Rust file parses, every YAML document parses.
fn check_syntax(universe: &Universe) {
    for (path, file) in universe.iter() {
        if path.ends_with(".rs") {
            mni_machinery::check_rust(path, file.contents()).expect("generated Rust parses");
        }
        if path.ends_with(".yaml") {
            for doc in serde_yaml::Deserializer::from_str(file.contents()) {
                serde_yaml::Value::deserialize(doc)
                    .unwrap_or_else(|e| panic!("{path} is valid YAML: {e}"));
            }
        }
    }
}

#[test]
fn new_service_makes_the_baremetal_service() {
    let before = Project::init();
    let p = Project::new_service("metal");
    check_syntax(&p.universe);
    // What `new service` writes or changes; the files themselves are pinned once, by the
    // committed golden projects and reference services and their drift test.
    let written: Vec<&str> = p
        .universe
        .iter()
        .filter(|(path, file)| before.universe.get(path) != Some(file.contents()))
        .map(|(path, _)| path)
        .collect();
    insta::assert_snapshot!("written", written.join("\n"));
    insta::assert_snapshot!("PROJECT", p.config.to_yaml().expect("PROJECT"));

    let service = p.config.service("metal").expect("recorded");
    assert_eq!(service.plugin.to_string(), KEY);
    let r = p
        .config
        .resource("metal", "v1alpha1", DOMAIN_KIND)
        .expect("Server");
    assert_eq!(
        r.path.as_deref(),
        Some("metal_operator::api::metal_v1alpha1")
    );
    let op = "operator/";
    assert!(p.universe.contains("backend/src/actions.rs") && p.universe.contains("README.md"));
    for file in [
        "src/api/metal_v1alpha1/server.rs",
        "src/api/metal_v1alpha1/validate.rs",
        "src/controllers/server/upstream.rs",
        "src/controllers/server/preflight.rs",
        "config/crd/bases/metal.mni.dev_servers.yaml",
        "config/samples/metal_v1alpha1_server.yaml",
    ] {
        assert!(p.universe.contains(&format!("{op}{file}")), "{file}");
    }
    let role = p
        .universe
        .get(&format!("{op}config/rbac/role.yaml"))
        .expect("role");
    assert!(
        role.contains("metal3.io") && role.contains("baremetalhosts"),
        "{role}"
    );
    assert!(!role.contains('*'), "least privilege: {role}");
    let controller = p
        .universe
        .get(&format!("{op}src/controllers/metal.rs"))
        .expect("the service's controller");
    let backend_rules = controller
        .split("pub fn backend_rules")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("backend_rules");
    assert!(
        !backend_rules.contains("metal3") && backend_rules.contains("DOMAIN_RESOURCE"),
        "the backend gets nothing on metal3.io: {backend_rules}"
    );
}

#[test]
fn generated_rust_is_rustfmt_clean_for_short_and_long_names() {
    for name in ["metal", "baremetal", "abcdefghij-klmnopqrst-uvwxyzab"] {
        let p = Project::new_service(name);
        let diffs: Vec<String> = p
            .universe
            .iter()
            .filter(|(path, _)| path.ends_with(".rs"))
            .filter_map(|(path, file)| {
                mni_machinery::rustfmt_difference(path, file.contents()).expect("rustfmt runs")
            })
            .collect();
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }
}

#[test]
fn init_makes_a_virtual_workspace_for_the_service() {
    let mut p = Project::init();
    let cargo = p.universe.get("Cargo.toml").expect("Cargo.toml");
    assert!(!cargo.contains("[package]"), "{cargo}");
    assert!(!p.universe.contains("src/main.rs") && !p.universe.contains("config/rbac/role.yaml"));
    let err = p
        .run(
            Subcommand::CreateApi,
            &[("group", "ships"), ("version", "v1"), ("kind", "Ship")],
        )
        .expect_err("no root crate");
    assert!(err.to_string().contains("give --service NAME"), "{err}");
    // A second service of a flat project is nested.
    p.run(Subcommand::NewService, &[("name", "metal")])
        .expect("new service");
    p.run(Subcommand::NewService, &[("name", "edge")])
        .expect("a second service");
    assert!(p.universe.contains("operator/src/controllers/server.rs"));
    assert!(
        p.universe
            .contains("services/edge/operator/src/controllers/server.rs")
    );
    assert!(p.universe.contains("services/edge/backend/src/actions.rs"));
    assert!(p.universe.contains("services/edge/README.md"));
}

#[test]
fn init_and_create_api_do_what_the_default_bundle_does() {
    let mut p = Project::init_with(&[("root-crate", "true")]);
    assert!(p.universe.contains("src/main.rs") && p.universe.contains("config/rbac/role.yaml"));
    p.run(
        Subcommand::CreateApi,
        &[("group", "ships"), ("version", "v1"), ("kind", "Ship")],
    )
    .expect("create api");
    assert!(p.universe.contains("src/api/ships_v1/ship.rs"));
    assert!(
        p.universe
            .contains("config/crd/bases/ships.mni.dev_ships.yaml")
    );
}

#[test]
fn every_taken_over_template_exists_in_both_plugins() {
    let service: Vec<&str> = mni_templates::files("service", "v1")
        .iter()
        .map(|(n, _)| *n)
        .collect();
    for t in TAKEN_OVER.iter().chain(SKIPPED) {
        assert!(
            service.contains(t),
            "service.mni.dev/v1 has no template {t}"
        );
    }
    let baremetal: Vec<&str> = mni_templates::files("baremetal", "v1")
        .iter()
        .map(|(n, _)| *n)
        .collect();
    for t in TAKEN_OVER.iter().filter(|t| !t.contains("domain")) {
        assert!(
            baremetal.contains(t),
            "baremetal.mni.dev/v1 does not render {t}"
        );
    }
}

#[test]
fn no_backend_or_frontend_code_of_service_v1_is_copied() {
    let service: Vec<&str> = mni_templates::files("service", "v1")
        .iter()
        .map(|(n, _)| *n)
        .collect();
    for (t, _) in mni_templates::files("baremetal", "v1") {
        let code = t.ends_with(".rs") || t.ends_with("Cargo.toml");
        let web = t.starts_with("backend/") || t.starts_with("frontend/");
        assert!(
            !(code && web && service.contains(&t)),
            "{t} replaces service.mni.dev/v1's: extend it at its markers instead"
        );
    }
}

#[test]
fn a_service_name_that_is_taken_is_refused_and_writes_nothing() {
    let mut p = Project::new_service("metal");
    let before = (p.universe.to_map(), p.config.to_yaml().expect("yaml"));
    let err = p
        .run(Subcommand::NewService, &[("name", "metal")])
        .expect_err("taken");
    assert!(err.is_invalid_input(), "{err}");
    assert!(err.to_string().contains("already a service"), "{err}");
    assert!(before == (p.universe.to_map(), p.config.to_yaml().expect("yaml")));
}
