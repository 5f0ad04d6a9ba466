//! `new service NAME`: the service CRD, domain kind and controllers in the operator crate, the
//! backend and frontend crates, and every registration at scaffold markers.
//!
//! [`NewService::validate`] checks the names against the project before any plugin of the
//! chain runs. [`NewService::run`] then expects the operator crate and its `config/` that
//! `rust.mni.dev/v1` and `kustomize.mni.dev/v1` just made, renders the templates, inserts at
//! markers, re-derives the operator's role and updates PROJECT.

use mni_machinery::{Insert, TemplateFile, insert, merge_data};
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, PluginKey, Resource, ResourceApi, SubcommandMetadata};
use mni_plugin_rust::v1::{Kind, Settings, Target};

use super::ServiceV1;
use super::names::{ServiceNameError, ServiceNames};

/// The settings key of the Rust plugin, whose owner, license and mNi source this plugin's
/// files share.
const RUST_KEY: &str = mni_plugin_rust::KEY;

fn invalid(e: ServiceNameError) -> PluginError {
    PluginError::InvalidInput(e.to_string())
}

impl ServiceV1 {
    /// The names of the service the flags ask for.
    fn names(&self, cx: &Context<'_>) -> Result<ServiceNames, PluginError> {
        let name = cx.flags.string("name").unwrap_or_default();
        ServiceNames::with_domain_kind(&name, &cx.config.domain, self.domain_kind.as_deref())
            .map_err(invalid)
    }

    /// The Rust plugin's project settings (owner, license, where the mNi crates come from).
    fn settings(cx: &Context<'_>) -> Result<Settings, PluginError> {
        let key: PluginKey = RUST_KEY.parse().expect("a valid key");
        Ok(cx.config.plugin_config(&key)?.unwrap_or_default())
    }

    /// The operator crate the chain already made, with its `config/`, where PROJECT records
    /// it; fails when it is missing.
    fn require_operator(cx: &Context<'_>, names: &ServiceNames) -> Result<Target, PluginError> {
        let missing = |what: &str| {
            PluginError::InvalidInput(format!(
                "service.mni.dev/v1 builds on the operator crate that rust.mni.dev/v1 and \
                 kustomize.mni.dev/v1 scaffold, but {what} is missing: run it after them, as \
                 the default bundle rust-operator.mni.dev/v1 does"
            ))
        };
        if cx.config.service(&names.name).is_none() {
            return Err(missing(&format!("PROJECT's service {:?}", names.name)));
        }
        let target = Target::resolve(cx.config, Some(&names.name))?;
        for file in ["src/main.rs", "config/rbac/kustomization.yaml"] {
            let path = format!("{}{file}", target.dir);
            if !cx.universe.contains(&path) {
                return Err(missing(&path));
            }
        }
        Ok(target)
    }

    fn render(
        &self,
        cx: &mut Context<'_>,
        names: &ServiceNames,
        target: &Target,
        data: &serde_json::Value,
    ) -> Result<(), PluginError> {
        let op = &target.dir;
        let service = &names.service;
        let domain = &names.domain;
        let gv = service.group_version();
        let kind = mni_plugin::names::to_snake_case(&service.kind);
        let domain_kind = mni_plugin::names::to_snake_case(&domain.kind);
        let sample = |k: &Kind| {
            format!(
                "{op}config/samples/{}_{}_{}.yaml",
                k.group,
                k.version,
                k.kind.to_lowercase()
            )
        };
        let crd = |k: &Kind| format!("{op}config/crd/bases/{}_{}.yaml", k.full_group, k.plural);
        let mut files: Vec<(String, String)> = vec![
            ("README.md", format!("{}README.md", names.dir)),
            (
                "operator/src/api/group_version/mod.rs",
                format!("{op}src/api/{gv}/mod.rs"),
            ),
            (
                "operator/src/api/group_version/service.rs",
                format!("{op}src/api/{gv}/{kind}.rs"),
            ),
            (
                "operator/src/api/group_version/domain.rs",
                format!("{op}src/api/{gv}/{domain_kind}.rs"),
            ),
            (
                "operator/src/controllers/service.rs",
                format!("{op}src/controllers/{kind}.rs"),
            ),
            (
                "operator/src/controllers/domain.rs",
                format!("{op}src/controllers/{domain_kind}.rs"),
            ),
            ("operator/tests/service.rs", format!("{op}tests/{kind}.rs")),
            (
                "operator/tests/domain.rs",
                format!("{op}tests/{domain_kind}.rs"),
            ),
            ("operator/config/crd/bases/service.yaml", crd(service)),
            ("operator/config/crd/bases/domain.yaml", crd(domain)),
            ("operator/config/samples/service.yaml", sample(service)),
            ("operator/config/samples/domain.yaml", sample(domain)),
        ]
        .into_iter()
        .map(|(t, p)| (t.to_owned(), p))
        .collect();
        for (role, templates) in [
            (
                names.backend(),
                &["Cargo.toml", "src/main.rs", "src/lib.rs", "tests/api.rs"][..],
            ),
            (
                names.frontend(),
                &[
                    "Cargo.toml",
                    "src/main.rs",
                    "src/lib.rs",
                    "assets/index.html",
                    "assets/app.js",
                    "assets/style.css",
                    "tests/frontend.rs",
                ][..],
            ),
        ] {
            for t in templates {
                files.push((format!("{}/{t}", role.role), format!("{}/{t}", role.dir)));
            }
        }
        let files: Vec<TemplateFile> = files
            .iter()
            .filter(|(template, _)| !self.skipped.contains(template))
            .map(|(template, path)| TemplateFile::new(template, path))
            .collect();
        self.templates
            .scaffold(cx.universe, &files, data)
            .map_err(|e| e.into_plugin_error(&self.key))?;
        Ok(())
    }

    fn register(
        &self,
        cx: &mut Context<'_>,
        names: &ServiceNames,
        target: &Target,
        mni: &MniCrates,
    ) -> Result<(), PluginError> {
        let op = &target.dir;
        let gv = names.service.group_version();
        let mut inserts: Vec<(String, Insert)> = Vec::new();
        for k in [&names.service, &names.domain] {
            let snake = mni_plugin::names::to_snake_case(&k.kind);
            let kind = &k.kind;
            let exports = format!("{kind}, {kind}Spec, {kind}Status");
            inserts.extend([
                (
                    format!("{op}src/api/{gv}/mod.rs"),
                    Insert::new(
                        "kinds",
                        &snake,
                        &format!("mod {snake};\npub use {snake}::{{{exports}}};"),
                    ),
                ),
                (
                    format!("{op}src/api/mod.rs"),
                    Insert::new(
                        "crds",
                        &format!("{gv}::{kind}"),
                        &format!("<{gv}::{kind} as kube::CustomResourceExt>::crd(),"),
                    ),
                ),
                (
                    format!("{op}src/controllers/mod.rs"),
                    Insert::new("controller-modules", &snake, &format!("pub mod {snake};")),
                ),
                // The reconciler is imported (not named by its path, as `create api` does) so
                // that the registration stays one short line for every service name.
                (
                    format!("{op}src/main.rs"),
                    Insert::new(
                        "imports",
                        &format!("{snake}-reconciler"),
                        &format!(
                            "use {}::controllers::{snake}::{kind}Reconciler;",
                            target.crate_ident
                        ),
                    ),
                ),
                (
                    format!("{op}src/main.rs"),
                    Insert::new("controllers", &snake, &register(k, &names.service)),
                ),
                (
                    format!("{op}config/crd/kustomization.yaml"),
                    Insert::new(
                        "crdkustomizeresource",
                        &format!("bases/{}_{}.yaml", k.full_group, k.plural),
                        &format!("- bases/{}_{}.yaml", k.full_group, k.plural),
                    ),
                ),
                (
                    format!("{op}config/samples/kustomization.yaml"),
                    Insert::new(
                        "manifestskustomizesamples",
                        &format!("{}_{}_{}.yaml", k.group, k.version, k.kind.to_lowercase()),
                        &format!("- {}_{}_{}.yaml", k.group, k.version, k.kind.to_lowercase()),
                    ),
                ),
            ]);
        }
        inserts.extend([
            (
                format!("{op}src/api/mod.rs"),
                Insert::new("api-modules", &gv, &format!("pub mod {gv};")),
            ),
            (
                format!("{op}src/main.rs"),
                Insert::new(
                    "imports",
                    "controller-options",
                    "use mni_operator::ControllerOptions;",
                ),
            ),
            (
                format!("{op}Cargo.toml"),
                Insert::new(
                    "dependencies",
                    "service.mni.dev/v1",
                    "mni-core = { workspace = true }",
                ),
            ),
            (
                "Cargo.toml".to_owned(),
                Insert::new(
                    "workspace-dependencies",
                    "mni-core",
                    &format!("mni-core = {}", mni.core),
                ),
            ),
            (
                "Cargo.toml".to_owned(),
                Insert::new(
                    "workspace-dependencies",
                    "mni-web",
                    &format!("mni-web = {}", mni.web),
                ),
            ),
        ]);
        for c in [names.backend(), names.frontend()] {
            inserts.push((
                "Cargo.toml".to_owned(),
                Insert::new("members", &c.crate_name, &format!("\"{}\",", c.dir)),
            ));
        }
        for (path, fragment) in &inserts {
            insert(cx.universe, path, fragment).map_err(|e| e.into_plugin_error(&self.key))?;
        }
        Ok(())
    }

    /// Records both kinds and all three crates in PROJECT.
    fn record(&self, cx: &mut Context<'_>, names: &ServiceNames, target: &Target) {
        for k in [&names.service, &names.domain] {
            let mut resource = Resource::new(&k.group, &k.version, &k.kind);
            resource.api = Some(ResourceApi {
                crd_version: "v1".to_owned(),
                namespaced: k.namespaced,
            });
            resource.controller = true;
            resource.domain = Some(cx.config.domain.clone());
            resource.path = Some(format!(
                "{}::api::{}",
                target.crate_ident,
                k.group_version()
            ));
            cx.config.upsert_resource(resource);
        }
        let record = names.record(&self.key);
        match cx.config.services.iter_mut().find(|s| s.name == names.name) {
            Some(existing) => *existing = record,
            None => cx.config.services.push(record),
        }
    }
}

/// The Cargo dependency specs of the mNi crates a service's workspace adds.
struct MniCrates {
    /// `mni-core`, for the operator.
    core: String,
    /// `mni-web`, for the backend and the frontend.
    web: String,
}

/// The `main.rs` lines registering kind `k`'s reconciler: the service kind's with its
/// controller's concurrency, the domain kind's with the defaults. The comment makes the
/// machinery insert the lines as written (they are what rustfmt makes of them).
fn register(k: &Kind, service: &Kind) -> String {
    let kind = &k.kind;
    if k == service {
        format!(
            "// {kind}s are reconciled CONCURRENCY at a time.\n\
             let reconciler = {kind}Reconciler;\n\
             let concurrency = {kind}Reconciler::CONCURRENCY;\n\
             let options = ControllerOptions::default().with_max_concurrent_reconciles(concurrency);\n\
             let manager = manager.with_controller_options(reconciler, options);"
        )
    } else {
        format!("let manager = manager.with_controller({kind}Reconciler);")
    }
}

impl NewService for ServiceV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Make the service complete: its CRD (frontend and backend workloads) \
                          and controller, a domain kind, a backend crate (axum API over the \
                          Kubernetes API) and a frontend crate (embedded web UI), samples and \
                          tests."
                .to_owned(),
            examples: "mni-scaffold new service billing   # Billing + BillingAccount in \
                       billing.<domain>/v1alpha1"
                .to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        vec![FlagSpec::new("name", FlagType::String, "the service name")]
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        self.names(cx)?.check_free(cx.config).map_err(invalid)
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let names = self.names(cx)?;
        let target = Self::require_operator(cx, &names)?;
        // The crates go where rust.mni.dev/v1 put the operator (its `--layout`).
        let names = names.at(&target.service_dir());
        let settings = Self::settings(cx)?;
        let source = settings.mni.clone().unwrap_or_default();
        let mni = MniCrates {
            core: source.spec("framework/runtime/core"),
            web: source.spec("framework/runtime/web"),
        };
        let kustomize_data = self.kustomize.data(cx, &target)?;
        let data = merge_data(&[
            settings.template_data(),
            target.template_data(),
            names.template_data(),
            serde_json::json!({
                "project_name": cx.config.project_name.clone().unwrap_or_default(),
                "domain": cx.config.domain,
            }),
        ]);
        self.render(cx, &names, &target, &data)?;
        self.register(cx, &names, &target, &mni)?;
        self.kustomize.derive_role(cx, &target, &kustomize_data)?;
        self.record(cx, &names, &target);
        Ok(())
    }
}
