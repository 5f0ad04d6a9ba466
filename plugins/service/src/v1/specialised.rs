//! The base of a specialised service plugin (`vpc.mni.dev/v1`, `vm.mni.dev/v1`,
//! `baremetal.mni.dev/v1`): one key that does the whole job, since `--plugins KEY` replaces
//! the chain.
//!
//! - `init` and `create api`: `rust.mni.dev/v1`, then `kustomize.mni.dev/v1` (as the default
//!   bundle), except that `init --root-crate` defaults to `false`: such a project is one
//!   service, laid out flat at the root (`operator/`, `backend/`, `frontend/`);
//! - `new service NAME`: `rust.mni.dev/v1` (the operator crate), `kustomize.mni.dev/v1` (its
//!   `config/`), [`ServiceV1`] built with [`ServiceV1::with_domain_kind`] and
//!   [`ServiceV1::without_templates`] (it renders the service kind, the backend and frontend
//!   skeletons and every registration, and leaves the taken-over files to the plugin), then
//!   the specialisation step.
//!
//! The step renders `templates/<name>/v1/` (template `group_version` is the service's group
//! and version, `crd/bases/<plural>.yaml` and `samples/<kind>.yaml` are named as `crd` and
//! service/v1 name them), inserts what the [`Specialisation`] lists at the scaffold markers
//! (the domain module's exports, the upstream crate, the backend's modules and routes, and any
//! plugin-specific insert), re-derives the operator's role and records the service under the
//! plugin's key in PROJECT, with the kinds of other services it requires (`requires:`, for
//! OLM's `olm.gvk.required`).
//!
//! A plugin describes itself with a [`Specialisation`] and wraps a [`SpecialisedService`].

use mni_machinery::{Insert, TemplateFile, Templates, insert, merge_data};
use mni_plugin::prelude::*;
use mni_plugin::{Bundle, PluginKey, SubcommandMetadata};
use mni_plugin_kustomize::KustomizeV1;
use mni_plugin_rust::RustV1;
use mni_plugin_rust::v1::{Settings, Target};

use super::{ServiceNames, ServiceV1};

/// Inserts a plugin makes besides the common ones: `(path, insert)` pairs for a service's
/// operator crate (its [`Target`]) and names.
pub type ExtraInserts = fn(&Target, &ServiceNames) -> Vec<(String, Insert)>;

/// What a specialised service plugin is: its key, templates, domain kind and the code it
/// inserts at the markers of the generated service. Built with the `with_*` methods.
#[derive(Clone, Debug)]
pub struct Specialisation {
    key: &'static str,
    templates: &'static str,
    domain_kind: &'static str,
    taken_over: &'static [&'static str],
    skipped: &'static [&'static str],
    description: &'static str,
    step_description: &'static str,
    examples: &'static str,
    kinds: (&'static str, &'static str),
    upstream: &'static [(&'static str, &'static str)],
    operator_dependencies: &'static str,
    backend_modules: &'static str,
    backend_routes: &'static str,
    extra_inserts: Option<ExtraInserts>,
    requires: &'static [(&'static str, &'static str, &'static str)],
}

impl Specialisation {
    /// A specialisation for plugin `key` whose templates are `templates/<templates>/v1/` and
    /// whose domain kind is `domain_kind`.
    #[must_use]
    pub fn new(key: &'static str, templates: &'static str, domain_kind: &'static str) -> Self {
        Self {
            key,
            templates,
            domain_kind,
            taken_over: &[],
            skipped: &[],
            description: "",
            step_description: "",
            examples: "",
            kinds: ("", ""),
            upstream: &[],
            operator_dependencies: "",
            backend_modules: "",
            backend_routes: "",
            extra_inserts: None,
            requires: &[],
        }
    }

    /// The service/v1 templates the plugin renders itself (`taken_over`, at the same output
    /// paths) and those not rendered at all (`skipped`).
    #[must_use]
    pub fn with_templates_of_service(
        mut self,
        taken_over: &'static [&'static str],
        skipped: &'static [&'static str],
    ) -> Self {
        self.taken_over = taken_over;
        self.skipped = skipped;
        self
    }

    /// The plugin's description (`mni-scaffold help`).
    #[must_use]
    pub fn with_description(mut self, plugin: &'static str) -> Self {
        self.description = plugin;
        self
    }

    /// The specialisation step's description and examples (`new service --help`).
    #[must_use]
    pub fn with_step(mut self, description: &'static str, examples: &'static str) -> Self {
        self.step_description = description;
        self.examples = examples;
        self
    }

    /// What goes in at the `kinds` marker of the domain's `mod.rs`, under fragment `id`.
    #[must_use]
    pub fn with_kinds(mut self, id: &'static str, code: &'static str) -> Self {
        self.kinds = (id, code);
        self
    }

    /// The upstream crates of the operator (`mni-kubevirt`) and their paths in the mNi
    /// checkout (`framework/upstreams/kubevirt`), added to the workspace's dependencies.
    #[must_use]
    pub fn with_upstream_crates(mut self, crates: &'static [(&'static str, &'static str)]) -> Self {
        self.upstream = crates;
        self
    }

    /// The lines added to the operator's `[dependencies]`.
    #[must_use]
    pub fn with_operator_dependencies(mut self, lines: &'static str) -> Self {
        self.operator_dependencies = lines;
        self
    }

    /// The backend's own modules and its route statements (see [`ServiceV1`]'s markers).
    #[must_use]
    pub fn with_backend(mut self, modules: &'static str, routes: &'static str) -> Self {
        self.backend_modules = modules;
        self.backend_routes = routes;
        self
    }

    /// Inserts of the plugin's own, after the domain's exports.
    #[must_use]
    pub fn with_extra_inserts(mut self, inserts: ExtraInserts) -> Self {
        self.extra_inserts = Some(inserts);
        self
    }

    /// The kinds of other services the service reads (group, version, kind).
    #[must_use]
    pub fn with_requires(
        mut self,
        requires: &'static [(&'static str, &'static str, &'static str)],
    ) -> Self {
        self.requires = requires;
        self
    }

    /// The plugin's key.
    #[must_use]
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The domain kind.
    #[must_use]
    pub fn domain_kind(&self) -> &'static str {
        self.domain_kind
    }

    /// The names of every template of the plugin.
    #[must_use]
    pub fn template_names(&self) -> Vec<String> {
        mni_templates::files(self.templates, "v1")
            .into_iter()
            .map(|(name, _)| name.to_owned())
            .collect()
    }
}

/// A specialised service plugin. See the [module docs](self).
pub struct SpecialisedService {
    key: PluginKey,
    description: &'static str,
    /// `init` and `create api`: the Rust and kustomize plugins.
    project: Bundle,
    /// `new service`: Rust, kustomize, service/v1 for the domain kind, the specialisation.
    service: Bundle,
}

impl SpecialisedService {
    /// The plugin described by `spec`, its templates registered.
    ///
    /// # Panics
    ///
    /// Only if `spec`'s key is not a plugin key (ruled out by the plugins' unit tests).
    #[must_use]
    pub fn new(spec: Specialisation) -> Self {
        let key: PluginKey = spec.key.parse().expect("a valid plugin key");
        let project = Bundle::new(
            key.clone(),
            vec![
                Box::new(RustV1::new().with_root_crate_default(false)),
                Box::new(KustomizeV1::new()),
            ],
        );
        let description = spec.description;
        let service = Bundle::new(
            key.clone(),
            vec![
                Box::new(RustV1::new()),
                Box::new(KustomizeV1::new()),
                Box::new(
                    ServiceV1::new()
                        .with_domain_kind(spec.domain_kind)
                        .without_templates(spec.taken_over.iter().chain(spec.skipped).copied()),
                ),
                Box::new(Specialise::new(key.clone(), spec)),
            ],
        );
        Self {
            key,
            description,
            project,
            service,
        }
    }
}

impl std::fmt::Debug for SpecialisedService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpecialisedService")
            .field("key", &self.key)
            .finish()
    }
}

impl Plugin for SpecialisedService {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn description(&self) -> String {
        self.description.to_owned()
    }

    fn init(&self) -> Option<&dyn Init> {
        self.project.init()
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        self.project.create_api()
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        self.service.new_service()
    }
}

/// The specialisation step, the last member of the bundle for `new service`.
struct Specialise {
    key: PluginKey,
    spec: Specialisation,
    templates: Templates,
    kustomize: KustomizeV1,
}

impl Specialise {
    fn new(key: PluginKey, spec: Specialisation) -> Self {
        Self {
            key,
            templates: Templates::deferred(mni_templates::files(spec.templates, "v1")),
            spec,
            kustomize: KustomizeV1::new(),
        }
    }

    /// The service's names and its operator crate, where PROJECT records it (the chain's
    /// `--layout`).
    fn names(&self, cx: &Context<'_>) -> Result<(ServiceNames, Target), PluginError> {
        let name = cx.flags.string("name").unwrap_or_default();
        let names =
            ServiceNames::with_domain_kind(&name, &cx.config.domain, Some(self.spec.domain_kind))
                .map_err(|e| PluginError::InvalidInput(e.to_string()))?;
        let target = Target::resolve(cx.config, Some(&name))?;
        Ok((names.at(&target.service_dir()), target))
    }

    /// Where template `template` (a path under `templates/<name>/v1/`) goes.
    fn output(names: &ServiceNames, template: &str) -> String {
        let d = &names.domain;
        let kind = d.kind.to_lowercase();
        let path = template
            .replace("group_version", &names.domain.group_version())
            .replace(
                &format!("crd/bases/{}.yaml", d.plural),
                &format!("crd/bases/{}_{}.yaml", d.full_group, d.plural),
            )
            .replace(
                &format!("samples/{kind}.yaml"),
                &format!("samples/{}_{}_{kind}.yaml", d.group, d.version),
            );
        format!("{}{path}", names.dir)
    }

    fn render(
        &self,
        cx: &mut Context<'_>,
        names: &ServiceNames,
        target: &Target,
    ) -> Result<(), PluginError> {
        let rust_key: PluginKey = mni_plugin_rust::KEY.parse().expect("a valid key");
        let settings: Settings = cx.config.plugin_config(&rust_key)?.unwrap_or_default();
        let data = merge_data(&[
            settings.template_data(),
            target.template_data(),
            names.template_data(),
            serde_json::json!({
                "project_name": cx.config.project_name.clone().unwrap_or_default(),
                "domain": cx.config.domain,
            }),
        ]);
        let files: Vec<TemplateFile> = self
            .spec
            .template_names()
            .into_iter()
            .map(|t| TemplateFile::new(&t, &Self::output(names, &t)))
            .collect();
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;

        let op = &target.dir;
        let backend = &names.backend().dir;
        let gv = names.domain.group_version();
        let key = self.spec.key;
        let (kinds_id, kinds) = self.spec.kinds;
        let mut inserts = vec![(
            format!("{op}src/api/{gv}/mod.rs"),
            Insert::new("kinds", kinds_id, kinds),
        )];
        if let Some(extra) = self.spec.extra_inserts {
            inserts.extend(extra(target, names));
        }
        inserts.extend([
            (
                format!("{backend}/src/lib.rs"),
                Insert::new("modules", key, self.spec.backend_modules),
            ),
            (
                format!("{backend}/src/lib.rs"),
                Insert::new("routes", key, self.spec.backend_routes),
            ),
            (
                format!("{op}Cargo.toml"),
                Insert::new("dependencies", key, self.spec.operator_dependencies),
            ),
        ]);
        for (name, path) in self.spec.upstream {
            let spec = settings.mni.clone().unwrap_or_default().spec(path);
            inserts.push((
                "Cargo.toml".to_owned(),
                Insert::new("workspace-dependencies", name, &format!("{name} = {spec}")),
            ));
        }
        for (path, fragment) in &inserts {
            insert(cx.universe, path, fragment).map_err(|e| e.into_plugin_error(&self.key))?;
        }
        let kustomize_data = self.kustomize.data(cx, target)?;
        self.kustomize.derive_role(cx, target, &kustomize_data)
    }
}

impl Plugin for Specialise {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        Some(self)
    }
}

impl NewService for Specialise {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: self.spec.step_description.to_owned(),
            examples: self.spec.examples.to_owned(),
        }
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let (names, target) = self.names(cx)?;
        if !cx.universe.contains(&format!("{}src/main.rs", target.dir)) {
            return Err(PluginError::InvalidInput(format!(
                "{} specialises the service that rust.mni.dev/v1, kustomize.mni.dev/v1 and \
                 service.mni.dev/v1 scaffold, but {}src/main.rs is missing: use the bundle {}",
                self.spec.key, target.dir, self.spec.key
            )));
        }
        self.render(cx, &names, &target)?;
        if let Some(service) = cx.config.services.iter_mut().find(|s| s.name == names.name) {
            service.plugin = self.key.clone();
        }
        if !self.spec.requires.is_empty() {
            let requires: Vec<serde_json::Value> = self
                .spec
                .requires
                .iter()
                .map(|(group, version, kind)| {
                    serde_json::json!({ "group": group, "version": version, "kind": kind })
                })
                .collect();
            cx.config
                .set_plugin_config(&self.key, &serde_json::json!({ "requires": requires }))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_specialisation_is_built_field_by_field() {
        let spec = Specialisation::new("x.mni.dev/v1", "vm", "Thing")
            .with_kinds("x-types", "pub mod validate;")
            .with_requires(&[("a.mni.dev", "v1", "A")]);
        assert_eq!(spec.key(), "x.mni.dev/v1");
        assert_eq!(spec.domain_kind(), "Thing");
        assert_eq!(spec.kinds, ("x-types", "pub mod validate;"));
        assert!(!spec.template_names().is_empty());
        let plugin = SpecialisedService::new(spec);
        assert_eq!(plugin.key().to_string(), "x.mni.dev/v1");
        assert!(plugin.init().is_some() && plugin.new_service().is_some());
    }
}
