//! The default chain in-process — `rust.mni.dev/v1`, `kustomize.mni.dev/v1`, then this plugin —
//! over a Universe. The list of files `new service` writes or changes is pinned by an `insta`
//! snapshot (`INSTA_UPDATE=always cargo test -p mni-plugin-service` after a deliberate change),
//! the files themselves by the golden projects' drift test;
//! every Rust file must parse and be rustfmt-clean, every YAML document must parse. Whether the
//! generated project builds and its tests pass is checked by building a generated project (see
//! the crate's README of the golden projects in `tests/`).

use mni_plugin::{Context, PluginKey, ProjectConfig, Resource, Subcommand, Universe, run};
use mni_plugin_kustomize::KustomizeV1;
use mni_plugin_rust::RustV1;

use super::testing::{check_syntax, flags};
use super::*;

/// A project in memory, scaffolded by the default chain.
struct Project {
    universe: Universe,
    config: ProjectConfig,
}

impl Project {
    /// `init --domain example.com` with the project name `demo`.
    fn init() -> Self {
        Self::init_with(&[])
    }

    /// `init` with `extra` flags besides those of [`init`](Self::init).
    fn init_with(extra: &[(&str, &str)]) -> Self {
        let mut p = Self {
            universe: Universe::new(),
            config: ProjectConfig::default(),
        };
        let mut pairs = vec![
            ("domain", "example.com"),
            ("project-name", "demo"),
            ("mni-path", "../mni"),
        ];
        pairs.extend_from_slice(extra);
        p.run(Subcommand::Init, &pairs).expect("init");
        p
    }

    /// Runs `sub` through the chain as the CLI does: every plugin validates, then every plugin
    /// runs, on a copy that replaces the project only when all succeed.
    fn run(&mut self, sub: Subcommand, pairs: &[(&str, &str)]) -> Result<(), PluginError> {
        let plugins: [&dyn Plugin; 3] = [&RustV1::new(), &KustomizeV1::new(), &ServiceV1::new()];
        self.run_with(&plugins, sub, pairs)
    }

    fn run_with(
        &mut self,
        plugins: &[&dyn Plugin],
        sub: Subcommand,
        pairs: &[(&str, &str)],
    ) -> Result<(), PluginError> {
        let chain: Vec<PluginKey> = plugins.iter().map(|p| p.key().clone()).collect();
        let f = flags(pairs);
        let mut universe = self.universe.clone();
        let mut config = self.config.clone();
        for plugin in plugins {
            let Some(subcommand) = mni_plugin::subcommand(*plugin, sub) else {
                continue;
            };
            let cx = Context {
                universe: &mut universe,
                config: &mut config,
                flags: &f,
                chain: &chain,
            };
            subcommand.validate(&cx)?;
        }
        for plugin in plugins {
            if mni_plugin::subcommand(*plugin, sub).is_none() {
                continue;
            }
            let mut cx = Context {
                universe: &mut universe,
                config: &mut config,
                flags: &f,
                chain: &chain,
            };
            run(*plugin, sub, &mut cx)?;
        }
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

#[test]
fn new_service_makes_a_complete_service() {
    let before = Project::init();
    let p = Project::new_service("billing");
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

    let service = p.config.service("billing").expect("recorded");
    assert_eq!(service.plugin.to_string(), KEY);
    let crates: Vec<(&str, &str)> = service
        .crates
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        crates,
        [
            ("backend", "services/billing/backend"),
            ("frontend", "services/billing/frontend"),
            ("operator", "services/billing/operator"),
        ]
    );
    for kind in ["Billing", "BillingAccount"] {
        let r = p.config.resource("billing", "v1alpha1", kind).expect(kind);
        assert_eq!(
            r.path.as_deref(),
            Some("billing_operator::api::billing_v1alpha1")
        );
    }
    let role = p
        .universe
        .get("services/billing/operator/config/rbac/role.yaml")
        .expect("role");
    assert!(role.contains("deployments") && role.contains("networkpolicies"));
    assert!(!role.contains('*'), "least privilege: {role}");
}

#[test]
fn a_second_service_shares_the_workspace_dependencies() {
    let mut p = Project::new_service("billing");
    p.run(Subcommand::NewService, &[("name", "cloud-dns")])
        .expect("a second service");
    check_syntax(&p.universe);
    let cargo = p.universe.get("Cargo.toml").expect("Cargo.toml");
    assert_eq!(cargo.matches("mni-core = ").count(), 1, "{cargo}");
    assert!(
        cargo.contains("\"services/cloud-dns/frontend\","),
        "{cargo}"
    );
    assert!(
        p.universe.contains(
            "services/cloud-dns/operator/src/api/cloud_dns_v1alpha1/cloud_dns_account.rs"
        )
    );
}

#[test]
fn generated_rust_is_rustfmt_clean_for_short_and_long_names() {
    for name in ["vm", "billing", "abcdefghij-klmnopqrst-uvwxyzab"] {
        let p = Project::new_service(name);
        let diffs: Vec<String> = p
            .universe
            .iter()
            .filter(|(path, _)| path.starts_with("services/") && path.ends_with(".rs"))
            .filter_map(|(path, file)| {
                mni_machinery::rustfmt_difference(path, file.contents()).expect("rustfmt runs")
            })
            .collect();
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }
}

#[test]
fn bad_input_is_refused_naming_the_argument_and_writes_nothing() {
    let mut p = Project::new_service("billing");
    p.config
        .add_resource(Resource {
            domain: Some("example.com".to_owned()),
            ..Resource::new("ledger", "v1alpha1", "LedgerAccount")
        })
        .expect("a resource");
    p.config.project_name = Some("shop-frontend".to_owned());
    let cases = [
        ("Billing", "NAME \"Billing\" is not a DNS-1123 label"),
        (
            "9lives",
            "NAME \"9lives\" must start with a lowercase letter",
        ),
        ("fn", "NAME \"fn\" becomes the Rust keyword `fn`"),
        ("billing", "NAME \"billing\" is already a service"),
        (
            "ledger",
            "NAME \"ledger\" would define the kind LedgerAccount",
        ),
        (
            "config-map",
            "NAME \"config-map\" would define the kind ConfigMap",
        ),
        (
            "shop",
            "NAME \"shop\" would name its frontend crate shop-frontend",
        ),
    ];
    for (name, expected) in cases {
        let before = (p.universe.to_map(), p.config.to_yaml().expect("yaml"));
        let err = p
            .run(Subcommand::NewService, &[("name", name)])
            .expect_err(name);
        assert!(err.is_invalid_input(), "{name}: {err}");
        let message = err.to_string();
        assert!(message.starts_with(expected), "{name}: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
        let after = (p.universe.to_map(), p.config.to_yaml().expect("yaml"));
        assert!(before == after, "{name}: nothing written");
    }

    let mut bad_domain = Project::init();
    bad_domain.config.domain = "Example.COM".to_owned();
    let err = bad_domain
        .run(Subcommand::NewService, &[("name", "billing")])
        .expect_err("bad domain");
    assert!(err.is_invalid_input(), "{err}");
    assert!(
        err.to_string()
            .starts_with("the PROJECT domain \"Example.COM\" is not a DNS-1123 subdomain"),
        "{err}"
    );
}

#[test]
fn without_the_operator_crate_the_plugin_says_what_to_run_first() {
    let mut p = Project::init();
    let service = ServiceV1::new();
    let err = p
        .run_with(&[&service], Subcommand::NewService, &[("name", "billing")])
        .expect_err("no operator crate");
    assert!(err.is_invalid_input(), "{err}");
    assert!(
        err.to_string()
            .contains("PROJECT's service \"billing\" is missing: run it after them"),
        "{err}"
    );
}

/// `create api --group extra --version v1 --kind KIND --service SERVICE` with the Rust and
/// kustomize plugins.
fn create_api(p: &mut Project, service: &str, kind: &str) -> Result<(), PluginError> {
    let plugins: [&dyn Plugin; 2] = [&RustV1::new(), &KustomizeV1::new()];
    let args = [
        ("group", "extra"),
        ("version", "v1"),
        ("kind", kind),
        ("service", service),
    ];
    p.run_with(&plugins, Subcommand::CreateApi, &args)
}

/// The crates PROJECT records for `service`, as (role, directory).
fn crates(p: &Project, service: &str) -> Vec<(String, String)> {
    let service = p.config.service(service).expect("recorded");
    service.crates.clone().into_iter().collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn the_only_service_of_a_project_without_root_crate_is_laid_out_flat() {
    let mut p = Project::init_with(&[("root-crate", "false")]);
    assert!(!p.universe.contains("src/main.rs") && !p.universe.contains("config/rbac/role.yaml"));
    p.run(Subcommand::NewService, &[("name", "billing")])
        .expect("new service");
    check_syntax(&p.universe);
    assert_eq!(
        crates(&p, "billing"),
        pairs(&[
            ("backend", "backend"),
            ("frontend", "frontend"),
            ("operator", "operator")
        ])
    );
    for file in [
        "README.md",
        "operator/src/main.rs",
        "operator/src/api/billing_v1alpha1/billing_account.rs",
        "operator/config/rbac/role.yaml",
        "backend/src/lib.rs",
        "frontend/assets/index.html",
    ] {
        assert!(p.universe.contains(file), "{file}");
    }
    let cargo = p.universe.get("Cargo.toml").expect("Cargo.toml");
    assert!(
        !cargo.contains("[package]") && !cargo.contains("\".\""),
        "{cargo}"
    );
    for member in ["\"operator\",", "\"backend\",", "\"frontend\","] {
        assert!(cargo.contains(member), "{member}: {cargo}");
    }
    // The workspace's one Dockerfile builds any of the crates; there is no default binary.
    assert!(!p.universe.contains("backend/Dockerfile"));
    let dockerfile = p.universe.get("Dockerfile").expect("Dockerfile");
    assert!(
        dockerfile.contains("docker build --build-arg BINARY=CRATE")
            && dockerfile.contains("ARG BINARY\n"),
        "{dockerfile}"
    );

    // A second service is nested; `create api` finds each operator where PROJECT says.
    p.run(Subcommand::NewService, &[("name", "ledger")])
        .expect("a second service");
    assert!(p.universe.contains("services/ledger/operator/src/main.rs"));
    assert!(
        p.universe
            .get("Cargo.toml")
            .unwrap()
            .contains("\"services/ledger/backend\",")
    );
    create_api(&mut p, "billing", "Widget").expect("create api --service billing");
    assert!(p.universe.contains("operator/src/api/extra_v1/widget.rs"));
    create_api(&mut p, "ledger", "Gadget").expect("create api --service ledger");
    assert!(
        p.universe
            .contains("services/ledger/operator/src/api/extra_v1/gadget.rs")
    );
    let err = create_api(&mut p, "", "Gizmo").expect_err("no root crate");
    assert!(
        err.to_string()
            .contains("give --service NAME (services: billing, ledger)"),
        "{err}"
    );
}

#[test]
fn layout_flag_is_checked() {
    let mut p = Project::init_with(&[("root-crate", "false")]);
    p.run(
        Subcommand::NewService,
        &[("name", "billing"), ("layout", "nested")],
    )
    .expect("nested by choice");
    assert!(p.universe.contains("services/billing/README.md"));
    let err = p
        .run(
            Subcommand::NewService,
            &[("name", "ledger"), ("layout", "flat")],
        )
        .expect_err("flat beside another service");
    assert!(
        err.to_string()
            .starts_with("--layout flat is for a project's only service"),
        "{err}"
    );
    let mut p = Project::init();
    let err = p
        .run(
            Subcommand::NewService,
            &[("name", "ledger"), ("layout", "flat")],
        )
        .expect_err("flat beside a root crate");
    assert!(err.to_string().starts_with("--layout flat puts"), "{err}");
    let err = p
        .run(
            Subcommand::NewService,
            &[("name", "ledger"), ("layout", "up")],
        )
        .expect_err("unknown layout");
    assert!(
        err.to_string()
            .starts_with("--layout \"up\" is not a layout"),
        "{err}"
    );
    assert!(p.config.services.is_empty(), "nothing recorded");
}

/// A PROJECT written before layouts existed (root crate, services under `services/NAME/`, no
/// `rootCrate` key) keeps working: a second service and `create api --service` land in the
/// nested layout.
#[test]
fn an_existing_nested_project_keeps_its_layout() {
    let mut p = Project::new_service("billing");
    let yaml = p.config.to_yaml().expect("PROJECT");
    assert!(!yaml.contains("rootCrate"), "{yaml}");
    p.config = ProjectConfig::from_yaml(&yaml).expect("re-read");
    p.run(Subcommand::NewService, &[("name", "ledger")])
        .expect("a second service");
    assert_eq!(
        crates(&p, "ledger"),
        pairs(&[
            ("backend", "services/ledger/backend"),
            ("frontend", "services/ledger/frontend"),
            ("operator", "services/ledger/operator")
        ])
    );
    create_api(&mut p, "billing", "Widget").expect("create api --service billing");
    assert!(
        p.universe
            .contains("services/billing/operator/src/api/extra_v1/widget.rs")
    );
    assert!(
        p.universe
            .contains("services/billing/operator/config/crd/bases/extra.example.com_widgets.yaml")
    );
}
