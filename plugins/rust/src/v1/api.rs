//! `create api`: a `CustomResource` type, its controller registered in `main.rs`, and a test.
//!
//! The type goes to `src/api/GROUP_VERSION/KIND.rs` (the group's first label in snake case,
//! then the version: `webapp_v1`), re-exported from its group-version module and listed in
//! `api::crds()`; the controller to `src/controllers/KIND.rs`; the test to `tests/KIND.rs`.
//! Every edit of an existing file is an idempotent insert at a scaffold marker.

use mni_machinery::{Insert, TemplateFile, insert};
use mni_plugin::names;
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, IfExists, Resource, ResourceApi, SubcommandMetadata};

use super::RustV1;
use super::init::invalid;
use super::target::Target;

/// The kind named by `create api`'s flags, with every name the templates need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// `--group`, e.g. `webapp`.
    pub group: String,
    /// The full API group, `<group>.<domain>`.
    pub full_group: String,
    /// `--version`, e.g. `v1`.
    pub version: String,
    /// `--kind`, e.g. `Guestbook`.
    pub kind: String,
    /// The resource name, e.g. `guestbooks` (`--plural` or Kubernetes' pluralisation).
    pub plural: String,
    /// `--namespaced`.
    pub namespaced: bool,
}

impl Kind {
    /// Reads and checks the flags; errors name the flag and the rule.
    pub fn from_context(cx: &Context<'_>) -> Result<Self, PluginError> {
        let flag = |name: &str| cx.flags.string(name).unwrap_or_default();
        let (group, version, kind) = (flag("group"), flag("version"), flag("kind"));
        names::validate_dns1123_subdomain("--group", &group).map_err(invalid)?;
        names::validate_api_version("--version", &version).map_err(invalid)?;
        names::validate_kind("--kind", &kind).map_err(invalid)?;
        let plural = match cx.flags.string("plural").filter(|p| !p.is_empty()) {
            Some(p) => {
                names::validate_dns1123_label("--plural", &p).map_err(invalid)?;
                p
            }
            None => names::pluralize(&kind.to_lowercase()),
        };
        let full_group = if cx.config.domain.is_empty() {
            group.clone()
        } else {
            format!("{group}.{}", cx.config.domain)
        };
        names::validate_dns1123_subdomain("--group", &full_group).map_err(invalid)?;
        Ok(Self {
            group,
            full_group,
            version,
            kind,
            plural,
            namespaced: cx.flags.get("namespaced").is_none() || cx.flags.bool("namespaced"),
        })
    }

    /// The module of the group and version, e.g. `webapp_v1`.
    #[must_use]
    pub fn group_version(&self) -> String {
        let first = self.group.split('.').next().unwrap_or_default();
        format!("{}_{}", names::to_snake_case(first), self.version)
    }

    /// The data the templates see.
    #[must_use]
    pub fn template_data(&self) -> serde_json::Value {
        serde_json::json!({
            "group": self.group,
            "full_group": self.full_group,
            "version": self.version,
            "kind": self.kind,
            "kind_snake": names::to_snake_case(&self.kind),
            "kind_lower": self.kind.to_lowercase(),
            "resource_plural": self.plural,
            "namespaced": self.namespaced,
            "group_version": self.group_version(),
        })
    }
}

/// The flags `create api` shares between the Rust and kustomize plugins.
#[must_use]
pub fn create_api_flags() -> Vec<FlagSpec> {
    vec![
        FlagSpec::new("group", FlagType::String, "API group, without the domain"),
        FlagSpec::new("version", FlagType::String, "API version, e.g. v1alpha1"),
        FlagSpec::new("kind", FlagType::String, "kind, PascalCase"),
        FlagSpec::new(
            "plural",
            FlagType::String,
            "resource name; default: the kind's plural",
        ),
        FlagSpec::new(
            "namespaced",
            FlagType::Bool,
            "namespaced (true) or cluster-scoped",
        )
        .with_default("true"),
        FlagSpec::new("resource", FlagType::Bool, "scaffold the type").with_default("true"),
        FlagSpec::new("controller", FlagType::Bool, "scaffold a controller").with_default("true"),
        FlagSpec::new(
            "service",
            FlagType::String,
            "the service whose operator gets the API; default: the root crate",
        ),
    ]
}

impl CreateApi for RustV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Add a kind: a CustomResource type (kube-derive + schemars) in src/api, \
                          a controller registered in src/main.rs, and a test on mni-testkit."
                .to_owned(),
            examples: "mni-scaffold create api --group webapp --version v1 --kind Guestbook"
                .to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        create_api_flags()
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let kind = Kind::from_context(cx)?;
        let target = Target::resolve(cx.config, cx.flags.string("service").as_deref())?;
        let resource = cx.flags.get("resource").is_none() || cx.flags.bool("resource");
        let type_file = format!(
            "{}src/api/{}/{}.rs",
            target.dir,
            kind.group_version(),
            names::to_snake_case(&kind.kind)
        );
        if !resource && !cx.universe.contains(&type_file) {
            return Err(PluginError::InvalidInput(format!(
                "--resource=false: the kind {} has no type at {type_file} to control; create it first with --resource",
                kind.kind
            )));
        }
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        CreateApi::validate(self, cx)?;
        let kind = Kind::from_context(cx)?;
        let target = Target::resolve(cx.config, cx.flags.string("service").as_deref())?;
        let resource = cx.flags.get("resource").is_none() || cx.flags.bool("resource");
        let controller = cx.flags.get("controller").is_none() || cx.flags.bool("controller");
        let settings = self.settings(cx)?;
        let data = mni_machinery::merge_data(&[
            settings.template_data(),
            target.template_data(),
            kind.template_data(),
        ]);
        let dir = &target.dir;
        let gv = kind.group_version();
        let snake = names::to_snake_case(&kind.kind);
        let k = &kind.kind;

        let mut files = Vec::new();
        if resource {
            files.push(
                TemplateFile::new(
                    "src/api/group_version/mod.rs",
                    &format!("{dir}src/api/{gv}/mod.rs"),
                )
                .if_exists(IfExists::Skip),
            );
            files.push(TemplateFile::new(
                "src/api/group_version/kind.rs",
                &format!("{dir}src/api/{gv}/{snake}.rs"),
            ));
        }
        if controller {
            files.push(TemplateFile::new(
                "src/controllers/kind.rs",
                &format!("{dir}src/controllers/{snake}.rs"),
            ));
            files.push(TemplateFile::new(
                "tests/kind.rs",
                &format!("{dir}tests/{snake}.rs"),
            ));
        }
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;

        let mut inserts = Vec::new();
        if resource {
            inserts.push((
                format!("{dir}src/api/{gv}/mod.rs"),
                Insert::new(
                    "kinds",
                    &snake,
                    &format!("mod {snake};\npub use {snake}::{{{k}, {k}Spec, {k}Status}};"),
                ),
            ));
            inserts.push((
                format!("{dir}src/api/mod.rs"),
                Insert::new("api-modules", &gv, &format!("pub mod {gv};")),
            ));
            inserts.push((
                format!("{dir}src/api/mod.rs"),
                Insert::new(
                    "crds",
                    &format!("{gv}::{k}"),
                    &format!("<{gv}::{k} as kube::CustomResourceExt>::crd(),"),
                ),
            ));
        }
        if controller {
            inserts.push((
                format!("{dir}src/controllers/mod.rs"),
                Insert::new("controller-modules", &snake, &format!("pub mod {snake};")),
            ));
            inserts.push((
                format!("{dir}src/main.rs"),
                Insert::new(
                    "imports",
                    "controllers",
                    &format!("use {}::controllers;", target.crate_ident),
                ),
            ));
            inserts.push((
                format!("{dir}src/main.rs"),
                Insert::new(
                    "controllers",
                    &snake,
                    &format!(
                        "let manager = manager.with_controller(controllers::{snake}::{k}Reconciler);"
                    ),
                ),
            ));
        }
        for (path, fragment) in &inserts {
            insert(cx.universe, path, fragment).map_err(|e| e.into_plugin_error(&self.key))?;
        }

        if cx.config.resource(&kind.group, &kind.version, k).is_none() {
            let mut record = Resource::new(&kind.group, &kind.version, k);
            record.api = resource.then(|| ResourceApi {
                crd_version: "v1".to_owned(),
                namespaced: kind.namespaced,
            });
            record.controller = controller;
            record.domain = (!cx.config.domain.is_empty()).then(|| cx.config.domain.clone());
            record.path = Some(format!("{}::api::{gv}", target.crate_ident));
            record.plural =
                (kind.plural != names::pluralize(&k.to_lowercase())).then(|| kind.plural.clone());
            cx.config.add_resource(record)?;
        }
        Ok(())
    }
}
