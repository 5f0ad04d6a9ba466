//! The plugin in-process: init, new service and create api over a Universe. The list of
//! generated files is pinned by an `insta` snapshot (`INSTA_UPDATE=always cargo test -p
//! mni-plugin-rust` after a deliberate change), the files themselves by the golden projects'
//! drift test; every Rust file must parse.

use mni_plugin::{
    Context, FlagValue, FlagValues, PluginKey, ProjectConfig, Subcommand, Universe, run,
};

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

struct Project {
    plugin: RustV1,
    universe: Universe,
    config: ProjectConfig,
}

impl Project {
    fn new() -> Self {
        Self {
            plugin: RustV1::new(),
            universe: Universe::new(),
            config: ProjectConfig::default(),
        }
    }

    fn run(&mut self, sub: Subcommand, pairs: &[(&str, &str)]) -> Result<(), PluginError> {
        let f = flags(pairs);
        let chain: Vec<PluginKey> = vec![self.plugin.key().clone()];
        let mut cx = Context {
            universe: &mut self.universe,
            config: &mut self.config,
            flags: &f,
            chain: &chain,
        };
        run(&self.plugin, sub, &mut cx)
    }

    fn init() -> Self {
        let mut p = Self::new();
        p.run(
            Subcommand::Init,
            &[
                ("domain", "example.com"),
                ("project-name", "demo"),
                ("owner", "The demo authors"),
                ("license", "apache2"),
                ("mni-path", "../mni"),
            ],
        )
        .expect("init");
        p
    }
}

/// Every Rust file parses; the list of files is pinned (whole files are pinned once, by the
/// golden projects under `tests/golden/` and their drift test).
fn snapshot_all(universe: &Universe) {
    for (path, file) in universe.iter() {
        if path.ends_with(".rs") {
            mni_machinery::check_rust(path, file.contents()).expect("generated Rust parses");
        }
    }
    let paths: Vec<&str> = universe.iter().map(|(path, _)| path).collect();
    insta::assert_snapshot!("files", paths.join("\n"));
}

#[test]
fn init_new_service_and_create_api() {
    let mut p = Project::init();
    assert_eq!(p.config.domain, "example.com");
    p.run(Subcommand::NewService, &[("name", "billing")])
        .expect("new service");
    p.run(
        Subcommand::CreateApi,
        &[
            ("group", "webapp"),
            ("version", "v1"),
            ("kind", "Guestbook"),
        ],
    )
    .expect("create api");
    p.run(
        Subcommand::CreateApi,
        &[
            ("group", "infra"),
            ("version", "v1alpha1"),
            ("kind", "Cluster"),
            ("namespaced", "false"),
            ("service", "billing"),
        ],
    )
    .expect("create api --service");
    snapshot_all(&p.universe);

    let guestbook = p
        .config
        .resource("webapp", "v1", "Guestbook")
        .expect("recorded");
    assert_eq!(guestbook.path.as_deref(), Some("demo::api::webapp_v1"));
    let cluster = p
        .config
        .resource("infra", "v1alpha1", "Cluster")
        .expect("recorded");
    assert_eq!(
        cluster.path.as_deref(),
        Some("billing_operator::api::infra_v1alpha1")
    );
    assert!(!cluster.api.as_ref().expect("api").namespaced);
    let settings: Settings = p.config.plugin_config(p.plugin.key()).unwrap().unwrap();
    assert_eq!(settings.mni, Some(MniSource::Path("../mni".into())));
}

#[test]
fn rerunning_an_insert_changes_nothing() {
    let mut p = Project::init();
    let api = [
        ("group", "webapp"),
        ("version", "v1"),
        ("kind", "Guestbook"),
    ];
    p.run(Subcommand::CreateApi, &api).expect("create api");
    let before = p.universe.to_map();
    // A second run over a copy whose generated files are gone re-inserts the same fragments.
    let mut again = Project::new();
    again.config = p.config.clone();
    for (path, contents) in &before {
        if !path.contains("guestbook") {
            again
                .universe
                .insert_existing(path, contents.clone())
                .unwrap();
        }
    }
    again.config = ProjectConfig::from_yaml(&p.config.to_yaml().unwrap()).unwrap();
    again.config.resources.clear();
    again.run(Subcommand::CreateApi, &api).expect("second run");
    assert_eq!(again.universe.to_map(), before);
}

#[test]
fn bad_input_names_the_flag() {
    let mut p = Project::init();
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[
                ("group", "Web_App"),
                ("version", "v1"),
                ("kind", "Guestbook"),
            ],
            "--group",
        ),
        (
            &[("group", "webapp"), ("version", "1"), ("kind", "Guestbook")],
            "--version",
        ),
        (
            &[
                ("group", "webapp"),
                ("version", "v1"),
                ("kind", "guestbook"),
            ],
            "--kind",
        ),
        (
            &[("group", "webapp"), ("version", "v1"), ("kind", "Self")],
            "--kind",
        ),
        (
            &[
                ("group", "webapp"),
                ("version", "v1"),
                ("kind", "Book"),
                ("service", "nope"),
            ],
            "--service \"nope\" is not a service",
        ),
        (
            &[
                ("group", "webapp"),
                ("version", "v1"),
                ("kind", "Book"),
                ("resource", "false"),
            ],
            "--resource=false",
        ),
    ];
    for (pairs, needle) in cases {
        let before = p.universe.to_map();
        let err = p.run(Subcommand::CreateApi, pairs).unwrap_err();
        assert!(err.is_invalid_input(), "{err}");
        assert!(
            err.to_string().contains(needle),
            "{err} should name {needle}"
        );
        assert_eq!(p.universe.to_map(), before, "nothing written");
    }
    let err = p
        .run(Subcommand::NewService, &[("name", "fn")])
        .unwrap_err();
    assert!(err.to_string().contains("keyword"), "{err}");
    let err = Project::new()
        .run(
            Subcommand::Init,
            &[("domain", "Example.com"), ("project-name", "demo")],
        )
        .unwrap_err();
    assert!(err.to_string().contains("--domain"), "{err}");
}

#[test]
fn every_template_parses() {
    for plugin in ["rust", "kustomize", "service"] {
        let templates = Templates::deferred(mni_templates::files(plugin, "v1"));
        assert!(templates.has(mni_templates::files(plugin, "v1")[0].0));
        templates.check_all().expect("built-in templates parse");
    }
}

#[test]
fn webhook_code_is_rustfmt_clean_for_short_and_long_kinds() {
    let mut p = Project::init();
    for kind in ["Ship", "VirtualMachineInstance"] {
        p.run(
            Subcommand::CreateApi,
            &[("group", "fleet"), ("version", "v1"), ("kind", kind)],
        )
        .expect("create api");
    }
    p.run(
        Subcommand::CreateApi,
        &[
            ("group", "fleet"),
            ("version", "v2"),
            ("kind", "Ship"),
            ("controller", "false"),
        ],
    )
    .expect("create api v2");
    for (kind, extra) in [
        ("Ship", &[("conversion", "true"), ("spoke", "v2")][..]),
        ("VirtualMachineInstance", &[][..]),
    ] {
        let pairs = [
            &[
                ("group", "fleet"),
                ("version", "v1"),
                ("kind", kind),
                ("defaulting", "true"),
                ("programmatic-validation", "true"),
            ][..],
            extra,
        ]
        .concat();
        p.run(Subcommand::CreateWebhook, &pairs)
            .expect("create webhook");
    }
    let mut checked = 0;
    for (path, file) in p.universe.iter() {
        if path.contains("webhook") && path.ends_with(".rs") {
            mni_machinery::check_rust(path, file.contents()).expect("generated Rust parses");
            if let Some(diff) =
                mni_machinery::rustfmt_difference(path, file.contents()).expect("rustfmt runs")
            {
                panic!("{path} is not rustfmt-clean:\n{diff}");
            }
            checked += 1;
        }
    }
    // mod.rs, a module and a test per kind.
    assert_eq!(checked, 5);
    let resource = p.config.resource("fleet", "v1", "Ship").expect("Ship");
    let webhooks = resource.webhooks.as_ref().expect("webhooks recorded");
    assert!(webhooks.defaulting && webhooks.validation && webhooks.conversion);
    assert_eq!(webhooks.webhook_version, "v1");
}
