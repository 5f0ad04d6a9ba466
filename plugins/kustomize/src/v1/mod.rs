//! `kustomize.mni.dev/v1`.
//!
//! For an operator crate at `DIR` (see `mni_plugin_rust::v1::Target`):
//!
//! ```text
//! DIR/config/default/          namespace DIR-system, name prefix, crd + rbac + manager + network-policy
//! DIR/config/manager/          the restricted-profile Namespace and the manager Deployment
//! DIR/config/rbac/             ServiceAccount, ClusterRole derived from `+mni:rbac` lines, bindings,
//!                              leader-election Role, metrics Service
//! DIR/config/crd/              bases/GROUP_PLURAL.yaml per kind (`crdkustomizeresource` marker)
//! DIR/config/samples/          one sample per kind (`manifestskustomizesamples` marker)
//! DIR/config/network-policy/   only labelled namespaces reach the metrics port
//! DIR/config/prometheus/       a ServiceMonitor (opt-in from config/default)
//! DIR/tests/manifests.rs       checks the CRD YAML equals the operator's `crd` output
//! DIR/config/webhook/          `create webhook`: the webhook configurations and Service
//! DIR/config/certmanager/      `create webhook`: the serving Certificate and its Issuer
//! ```
//!
//! `create api` adds the kind's CRD and sample and re-derives `role.yaml`. `config/crd` and
//! `config/samples` are written with the first kind (by `create api`, or at `new service`,
//! whose service always has one), and only then is `../crd` listed in `config/default`: a
//! kustomization with no resources does not render, and every `config/` directory renders with
//! `kubectl kustomize` after every command.

pub mod rbac;
mod webhook;

use mni_machinery::{Insert, TemplateFile, Templates, insert, merge_data};
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, IfExists, PluginKey, SubcommandMetadata};
use mni_plugin_rust::v1::{Kind, Settings, Target, create_api_flags, reinit_policy};

/// The plugin's key.
pub const KEY: &str = "kustomize.mni.dev/v1";

/// The marker in `config/default/kustomization.yaml` above which `../crd` is listed.
const DEFAULT_RESOURCES: &str = "defaultkustomizeresource";

/// The settings key of the Rust plugin, whose owner and license this plugin's files share.
const RUST_KEY: &str = mni_plugin_rust::KEY;

/// The `kustomize.mni.dev/v1` plugin. See the [module docs](self).
pub struct KustomizeV1 {
    key: PluginKey,
    templates: Templates,
}

impl KustomizeV1 {
    /// The plugin with its templates registered.
    ///
    /// # Panics
    ///
    /// Only if a built-in template does not parse (ruled out by the unit tests).
    #[must_use]
    pub fn new() -> Self {
        Self {
            key: KEY.parse().expect("KEY is a valid plugin key"),
            templates: Templates::deferred(mni_templates::files("kustomize", "v1")),
        }
    }

    /// The template data of `target`: owner, license and crate names.
    pub fn data(
        &self,
        cx: &Context<'_>,
        target: &Target,
    ) -> Result<serde_json::Value, PluginError> {
        let rust_key: PluginKey = RUST_KEY.parse().expect("valid key");
        let settings: Settings = cx.config.plugin_config(&rust_key)?.unwrap_or_default();
        Ok(merge_data(&[
            settings.template_data(),
            target.template_data(),
            serde_json::json!({ "project_name": cx.config.project_name.clone().unwrap_or_default() }),
        ]))
    }

    /// The `config/` skeleton and the manifests test of an operator crate.
    fn scaffold_config(
        &self,
        cx: &mut Context<'_>,
        target: &Target,
        policy: IfExists,
    ) -> Result<(), PluginError> {
        let data = self.data(cx, target)?;
        let dir = &target.dir;
        let files: Vec<TemplateFile> = [
            "config/default/kustomization.yaml",
            "config/manager/kustomization.yaml",
            "config/manager/manager.yaml",
            "config/rbac/kustomization.yaml",
            "config/rbac/service_account.yaml",
            "config/rbac/role_binding.yaml",
            "config/rbac/leader_election_role.yaml",
            "config/rbac/leader_election_role_binding.yaml",
            "config/rbac/metrics_service.yaml",
            "config/network-policy/kustomization.yaml",
            "config/network-policy/allow-metrics-traffic.yaml",
            "config/prometheus/kustomization.yaml",
            "config/prometheus/monitor.yaml",
            "tests/manifests.rs",
        ]
        .into_iter()
        .map(|t| TemplateFile::new(t, &format!("{dir}{t}")).if_exists(policy))
        .collect();
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;
        self.derive_role(cx, target, &data)
    }

    /// Writes the kustomizations of `config/crd` and `config/samples` of `target` when missing, and
    /// lists `../crd` in `config/default`, at its `defaultkustomizeresource` marker. A project
    /// scaffolded before that marker existed lists `../crd` already and is left alone.
    fn scaffold_api_config(
        &self,
        cx: &mut Context<'_>,
        target: &Target,
        data: &serde_json::Value,
    ) -> Result<(), PluginError> {
        let dir = &target.dir;
        let files: Vec<TemplateFile> = [
            "config/crd/kustomization.yaml",
            "config/samples/kustomization.yaml",
        ]
        .into_iter()
        .filter(|t| !cx.universe.contains(&format!("{dir}{t}")))
        .map(|t| TemplateFile::new(t, &format!("{dir}{t}")))
        .collect();
        self.templates
            .scaffold(cx.universe, &files, data)
            .map_err(|e| e.into_plugin_error(&self.key))?;
        let default = format!("{dir}config/default/kustomization.yaml");
        let marker = format!("+mni:scaffold:{DEFAULT_RESOURCES}");
        if cx
            .universe
            .get(&default)
            .is_some_and(|text| text.lines().any(|l| l.trim_start_matches("# ") == marker))
        {
            let fragment = Insert::new(DEFAULT_RESOURCES, "crd", "- ../crd");
            insert(cx.universe, &default, &fragment).map_err(|e| e.into_plugin_error(&self.key))?;
        }
        Ok(())
    }

    /// (Re)writes `config/rbac/role.yaml` of `target` from the crate's `+mni:rbac`
    /// declarations. Plugins that run after this one and add controllers (e.g. the service
    /// plugin) call it again so the role stays derived from every controller.
    pub fn derive_role(
        &self,
        cx: &mut Context<'_>,
        target: &Target,
        data: &serde_json::Value,
    ) -> Result<(), PluginError> {
        let rules = rbac::collect(cx.universe, &format!("{}src/", target.dir)).map_err(|e| {
            PluginError::InvalidInput(format!("cannot derive config/rbac/role.yaml: {e}"))
        })?;
        let data = merge_data(&[data.clone(), serde_json::json!({ "rules": rules })]);
        let file = TemplateFile::new(
            "config/rbac/role.yaml",
            &format!("{}config/rbac/role.yaml", target.dir),
        )
        .if_exists(IfExists::Overwrite);
        self.templates
            .scaffold(cx.universe, &[file], &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;
        Ok(())
    }
}

impl Default for KustomizeV1 {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for KustomizeV1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KustomizeV1")
            .field("key", &self.key)
            .finish()
    }
}

impl Plugin for KustomizeV1 {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn description(&self) -> String {
        "Scaffolds an operator's kustomize manifests (config/crd, rbac, manager, default, \
         samples, network-policy, prometheus), with a least-privilege ClusterRole derived from \
         the `+mni:rbac` lines its controllers declare; webhooks with cert-manager (create \
         webhook)."
            .to_owned()
    }

    fn init(&self) -> Option<&dyn Init> {
        Some(self)
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        Some(self)
    }

    fn create_api(&self) -> Option<&dyn CreateApi> {
        Some(self)
    }

    fn create_webhook(&self) -> Option<&dyn CreateWebhook> {
        Some(self)
    }
}

impl Init for KustomizeV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Write config/ (kustomize) for the root operator crate, if the project \
                          has one."
                .to_owned(),
            examples: String::new(),
        }
    }

    /// Nothing when the project has no root crate (`init --root-crate=false`): each service's
    /// operator gets its `config/` at `new service`.
    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let rust_key: PluginKey = RUST_KEY.parse().expect("valid key");
        let settings: Settings = cx.config.plugin_config(&rust_key)?.unwrap_or_default();
        if !settings.has_root_crate() {
            return Ok(());
        }
        let target = Target::root(cx.config)?;
        self.scaffold_config(cx, &target, reinit_policy(cx))
    }
}

impl NewService for KustomizeV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Write config/ (kustomize) for the service's operator crate.".to_owned(),
            examples: String::new(),
        }
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let name = cx.flags.string("name").unwrap_or_default();
        let target = Target::resolve(cx.config, Some(&name))?;
        self.scaffold_config(cx, &target, IfExists::Error)?;
        let data = self.data(cx, &target)?;
        self.scaffold_api_config(cx, &target, &data)
    }
}

impl CreateApi for KustomizeV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Add the kind's CRD under config/crd/bases and a sample under \
                          config/samples, and re-derive config/rbac/role.yaml."
                .to_owned(),
            examples: String::new(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        create_api_flags()
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        Kind::from_context(cx)?;
        Target::resolve(cx.config, cx.flags.string("service").as_deref())?;
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let kind = Kind::from_context(cx)?;
        let target = Target::resolve(cx.config, cx.flags.string("service").as_deref())?;
        let data = merge_data(&[self.data(cx, &target)?, kind.template_data()]);
        let resource = cx.flags.get("resource").is_none() || cx.flags.bool("resource");
        if resource {
            let dir = &target.dir;
            let crd = format!("{}_{}.yaml", kind.full_group, kind.plural);
            let sample = format!(
                "{}_{}_{}.yaml",
                kind.group.split('.').next().unwrap_or_default(),
                kind.version,
                kind.kind.to_lowercase()
            );
            let files = [
                TemplateFile::new(
                    "config/crd/bases/crd.yaml",
                    &format!("{dir}config/crd/bases/{crd}"),
                ),
                TemplateFile::new(
                    "config/samples/kind.yaml",
                    &format!("{dir}config/samples/{sample}"),
                ),
            ];
            self.templates
                .scaffold(cx.universe, &files, &data)
                .map_err(|e| e.into_plugin_error(&self.key))?;
            self.scaffold_api_config(cx, &target, &data)?;
            for (path, marker, entry) in [
                (
                    "config/crd/kustomization.yaml",
                    "crdkustomizeresource",
                    format!("bases/{crd}"),
                ),
                (
                    "config/samples/kustomization.yaml",
                    "manifestskustomizesamples",
                    sample,
                ),
            ] {
                let fragment = Insert::new(marker, &entry, &format!("- {entry}"));
                insert(cx.universe, &format!("{dir}{path}"), &fragment)
                    .map_err(|e| e.into_plugin_error(&self.key))?;
            }
        }
        self.derive_role(cx, &target, &data)
    }
}

#[cfg(test)]
mod tests;
