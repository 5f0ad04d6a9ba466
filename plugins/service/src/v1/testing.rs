//! What the tests of a specialised service plugin (`vpc`, `vm`, `baremetal` — any
//! [`SpecialisedService`](super::SpecialisedService)) share: the plugin run
//! in memory as the CLI runs it ([`MemoryProject`]), a syntax check of everything it wrote, and
//! the checks every such plugin passes ([`Conformance`]).

use mni_plugin::prelude::*;
use mni_plugin::{Context, FlagValue, FlagValues, PluginKey, ProjectConfig, Subcommand, Universe};
use serde::Deserialize as _;

/// `--flag value` pairs as the CLI parses them (`true`/`false` are booleans).
#[must_use]
pub fn flags(pairs: &[(&str, &str)]) -> FlagValues {
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

/// A project in memory, scaffolded by the plugin `make` builds.
pub struct MemoryProject<P> {
    /// The project's files.
    pub universe: Universe,
    /// Its `PROJECT` file.
    pub config: ProjectConfig,
    make: fn() -> P,
}

impl<P: Plugin> MemoryProject<P> {
    /// An empty project for the plugin `make` builds.
    pub fn empty(make: fn() -> P) -> Self {
        Self {
            universe: Universe::new(),
            config: ProjectConfig::default(),
            make,
        }
    }

    /// Runs `sub` as the CLI does: validate, then run, on a copy kept only on success.
    ///
    /// # Errors
    ///
    /// What the plugin refuses or fails with; the project is then unchanged.
    ///
    /// # Panics
    ///
    /// If the plugin does not support `sub`.
    pub fn run(&mut self, sub: Subcommand, pairs: &[(&str, &str)]) -> Result<(), PluginError> {
        let plugin = (self.make)();
        let chain: Vec<PluginKey> = vec![plugin.key().clone()];
        let f = flags(pairs);
        let mut universe = self.universe.clone();
        let mut config = self.config.clone();
        let Some(subcommand) = mni_plugin::subcommand(&plugin, sub) else {
            panic!("{} supports {sub}", plugin.key());
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

    /// The paths whose contents differ from (or are not in) `before`.
    #[must_use]
    pub fn written_since(&self, before: &Universe) -> Vec<&str> {
        self.universe
            .iter()
            .filter(|(path, file)| before.get(path) != Some(file.contents()))
            .map(|(path, _)| path)
            .collect()
    }
}

/// Every Rust file parses, every YAML document parses.
///
/// # Panics
///
/// Naming the first file that does not.
pub fn check_syntax(universe: &Universe) {
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

/// The checks every specialised service plugin passes, each a method a `#[test]` calls.
pub struct Conformance<P> {
    /// Builds the plugin.
    pub make: fn() -> P,
    /// Its templates' directory under `templates/` (`vm` for `vm.mni.dev/v1`).
    pub templates: &'static str,
    /// The `--project-name` of the test projects (`mni-vm`).
    pub project_name: &'static str,
    /// The service name of its reference service (`compute`).
    pub service: &'static str,
    /// Files every service it scaffolds has, relative to the service's directory.
    pub service_files: &'static [&'static str],
    /// The `service.mni.dev/v1` templates it renders itself.
    pub taken_over: &'static [&'static str],
    /// The `service.mni.dev/v1` templates it leaves out.
    pub skipped: &'static [&'static str],
}

impl<P: Plugin> Conformance<P> {
    /// A project after `init` (domain `mni.dev`, the framework two directories up) with `extra`
    /// flags.
    ///
    /// # Panics
    ///
    /// If `init` fails.
    pub fn init_with(&self, extra: &[(&str, &str)]) -> MemoryProject<P> {
        let mut p = MemoryProject::empty(self.make);
        let mut pairs = vec![
            ("domain", "mni.dev"),
            ("project-name", self.project_name),
            ("mni-path", "../.."),
        ];
        pairs.extend_from_slice(extra);
        p.run(Subcommand::Init, &pairs).expect("init");
        p
    }

    /// A project after `init`.
    pub fn init(&self) -> MemoryProject<P> {
        self.init_with(&[])
    }

    /// A project after `init` and `new service NAME`.
    ///
    /// # Panics
    ///
    /// If either fails.
    pub fn new_service(&self, name: &str) -> MemoryProject<P> {
        let mut p = self.init();
        p.run(Subcommand::NewService, &[("name", name)])
            .unwrap_or_else(|e| panic!("new service {name}: {e}"));
        p
    }

    /// Every generated Rust file is rustfmt-clean, for the service's name, the plugin's and
    /// a long one.
    pub fn generated_rust_is_rustfmt_clean(&self) {
        for name in [
            self.templates,
            self.service,
            "abcdefghij-klmnopqrst-uvwxyzab",
        ] {
            let p = self.new_service(name);
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

    /// `init` makes a virtual workspace (no root crate, so `create api` needs `--service`);
    /// a first service goes to the root, a second one under `services/`.
    pub fn init_makes_a_virtual_workspace(&self) {
        let mut p = self.init();
        let cargo = p.universe.get("Cargo.toml").expect("Cargo.toml");
        assert!(!cargo.contains("[package]"), "{cargo}");
        assert!(
            !p.universe.contains("src/main.rs") && !p.universe.contains("config/rbac/role.yaml")
        );
        let err = p
            .run(
                Subcommand::CreateApi,
                &[("group", "ships"), ("version", "v1"), ("kind", "Ship")],
            )
            .expect_err("no root crate");
        assert!(err.to_string().contains("give --service NAME"), "{err}");
        p.run(Subcommand::NewService, &[("name", self.service)])
            .expect("new service");
        p.run(Subcommand::NewService, &[("name", "edge")])
            .expect("a second service");
        for file in self.service_files {
            assert!(p.universe.contains(file), "{file}");
            assert!(
                p.universe.contains(&format!("services/edge/{file}")),
                "services/edge/{file}"
            );
        }
    }

    /// With `--root-crate`, `init` and `create api` do what the default bundle does.
    pub fn init_and_create_api_do_what_the_default_bundle_does(&self) {
        let mut p = self.init_with(&[("root-crate", "true")]);
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

    /// The templates it takes over or skips are `service.mni.dev/v1`'s, and it renders those
    /// it takes over (but the domain kind's, which it names after its own kind).
    pub fn every_taken_over_template_exists_in_both_plugins(&self) {
        let service: Vec<&str> = mni_templates::files("service", "v1")
            .iter()
            .map(|(n, _)| *n)
            .collect();
        for t in self.taken_over.iter().chain(self.skipped) {
            assert!(
                service.contains(t),
                "service.mni.dev/v1 has no template {t}"
            );
        }
        let own: Vec<&str> = mni_templates::files(self.templates, "v1")
            .iter()
            .map(|(n, _)| *n)
            .collect();
        for t in self.taken_over.iter().filter(|t| !t.contains("domain")) {
            assert!(
                own.contains(t),
                "{}.mni.dev/v1 does not render {t}",
                self.templates
            );
        }
    }

    /// No backend or frontend code of `service.mni.dev/v1` is replaced: a specialisation
    /// extends it at its markers.
    pub fn no_backend_or_frontend_code_of_service_v1_is_copied(&self) {
        let service: Vec<&str> = mni_templates::files("service", "v1")
            .iter()
            .map(|(n, _)| *n)
            .collect();
        for (t, _) in mni_templates::files(self.templates, "v1") {
            let code = t.ends_with(".rs") || t.ends_with("Cargo.toml");
            let web = t.starts_with("backend/") || t.starts_with("frontend/");
            assert!(
                !(code && web && service.contains(&t)),
                "{t} replaces service.mni.dev/v1's: extend it at its markers instead"
            );
        }
    }

    /// `new service` with a name already taken is refused as invalid input and writes nothing.
    pub fn a_service_name_that_is_taken_is_refused_and_writes_nothing(&self) {
        let mut p = self.new_service(self.service);
        let before = (p.universe.to_map(), p.config.to_yaml().expect("yaml"));
        let err = p
            .run(Subcommand::NewService, &[("name", self.service)])
            .expect_err("taken");
        assert!(err.is_invalid_input(), "{err}");
        assert!(err.to_string().contains("already a service"), "{err}");
        assert!(before == (p.universe.to_map(), p.config.to_yaml().expect("yaml")));
    }
}
