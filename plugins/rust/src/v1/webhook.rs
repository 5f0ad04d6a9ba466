//! `create webhook`: a defaulter, a validator and/or a hub-and-spoke conversion for a kind the
//! project has, served by the operator's webhook server.
//!
//! The webhooks go to `src/webhooks/GROUP_VERSION_KIND.rs` (module `ships_v1_ship`), listed in
//! `src/webhooks/mod.rs`, whose `server()` registers them (`webhooks` marker) and whose
//! `register()` `src/main.rs` calls beside the controllers; the test to
//! `tests/KIND_webhook.rs`. `mni-webhook` becomes a dependency of the crate. Every edit of an
//! existing file is an idempotent insert at a scaffold marker, so webhooks of several kinds
//! compose.

use mni_machinery::{Insert, TemplateFile, ensure_marker, insert};
use mni_plugin::names;
use mni_plugin::prelude::*;
use mni_plugin::{FlagSpec, FlagType, IfExists, ProjectConfig, Resource, SubcommandMetadata};

use super::RustV1;
use super::init::invalid;
use super::target::Target;

/// What `create webhook`'s flags ask for, checked against the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRequest {
    /// `--group`.
    pub group: String,
    /// `--version`: the kind's version; with `--conversion`, the hub.
    pub version: String,
    /// `--kind`.
    pub kind: String,
    /// `--defaulting`.
    pub defaulting: bool,
    /// `--programmatic-validation`.
    pub validation: bool,
    /// `--conversion`.
    pub conversion: bool,
    /// `--spoke`: the other versions of the kind, converting through the hub.
    pub spokes: Vec<String>,
    /// The kind as PROJECT records it.
    pub resource: Resource,
    /// The full API group, `<group>.<domain>`.
    pub full_group: String,
    /// The resource name (plural).
    pub plural: String,
}

/// The flags `create webhook` shares between the Rust and kustomize plugins.
#[must_use]
pub fn create_webhook_flags() -> Vec<FlagSpec> {
    vec![
        FlagSpec::new(
            "group",
            FlagType::String,
            "API group of the kind, without the domain",
        ),
        FlagSpec::new(
            "version",
            FlagType::String,
            "API version of the kind (the hub, with --conversion)",
        ),
        FlagSpec::new(
            "kind",
            FlagType::String,
            "the kind, as given to `create api`",
        ),
        FlagSpec::new(
            "defaulting",
            FlagType::Bool,
            "scaffold a defaulting (mutating) webhook",
        )
        .with_default("false"),
        FlagSpec::new(
            "programmatic-validation",
            FlagType::Bool,
            "scaffold a validating webhook",
        )
        .with_default("false"),
        FlagSpec::new(
            "conversion",
            FlagType::Bool,
            "scaffold a conversion webhook (hub and spokes)",
        )
        .with_default("false"),
        FlagSpec::new(
            "spoke",
            FlagType::String,
            "with --conversion: the kind's other versions, comma-separated",
        ),
        FlagSpec::new(
            "service",
            FlagType::String,
            "the service whose operator has the kind; default: the root crate",
        ),
    ]
}

impl WebhookRequest {
    /// Reads and checks the flags against the project; errors name the flag and the fix.
    pub fn from_context(cx: &Context<'_>) -> Result<Self, PluginError> {
        let flag = |name: &str| cx.flags.string(name).unwrap_or_default();
        let (group, version, kind) = (flag("group"), flag("version"), flag("kind"));
        names::validate_dns1123_subdomain("--group", &group).map_err(invalid)?;
        names::validate_api_version("--version", &version).map_err(invalid)?;
        names::validate_kind("--kind", &kind).map_err(invalid)?;
        let (defaulting, validation, conversion) = (
            cx.flags.bool("defaulting"),
            cx.flags.bool("programmatic-validation"),
            cx.flags.bool("conversion"),
        );
        let spokes: Vec<String> = flag("spoke")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if !(defaulting || validation || conversion) {
            return Err(PluginError::InvalidInput(
                "create webhook: give at least one of --defaulting, --programmatic-validation \
                 and --conversion"
                    .to_owned(),
            ));
        }
        if !spokes.is_empty() && !conversion {
            return Err(PluginError::InvalidInput(
                "--spoke: only with --conversion (the spokes convert through the hub --version)"
                    .to_owned(),
            ));
        }
        if conversion && spokes.is_empty() {
            return Err(PluginError::InvalidInput(
                "--conversion: name the kind's other versions with --spoke V (the hub is --version)"
                    .to_owned(),
            ));
        }
        let resource = existing(cx.config, &group, &version, &kind, "--kind")?;
        for spoke in &spokes {
            names::validate_api_version("--spoke", spoke).map_err(invalid)?;
            if *spoke == version {
                return Err(PluginError::InvalidInput(format!(
                    "--spoke {spoke}: is the hub (--version); name the other versions"
                )));
            }
            existing(cx.config, &group, spoke, &kind, "--spoke")?;
        }
        let domain = resource
            .domain
            .clone()
            .unwrap_or_else(|| cx.config.domain.clone());
        let full_group = if domain.is_empty() {
            group.clone()
        } else {
            format!("{group}.{domain}")
        };
        let plural = resource
            .plural
            .clone()
            .unwrap_or_else(|| names::pluralize(&kind.to_lowercase()));
        Ok(Self {
            group,
            version,
            kind,
            defaulting,
            validation,
            conversion,
            spokes,
            resource,
            full_group,
            plural,
        })
    }

    /// Refuses a kind that has webhooks already (checked before any plugin of the chain runs:
    /// after the first, PROJECT records the new ones).
    pub fn check_new(&self) -> Result<(), PluginError> {
        let (group, version, kind, resource) =
            (&self.group, &self.version, &self.kind, &self.resource);
        if let Some(w) = &resource.webhooks {
            let has: Vec<&str> = [
                (w.defaulting, "defaulting"),
                (w.validation, "validation"),
                (w.conversion, "conversion"),
            ]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
            if !has.is_empty() {
                return Err(PluginError::InvalidInput(format!(
                    "--kind: {} already has webhooks ({}); remove them with `mni-scaffold delete webhook --group {group} --version {version} --kind {kind}` first",
                    resource.gvk(),
                    has.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The operator crate holding the kind: `--service`'s (the root crate without it), which
    /// must be the crate PROJECT records the kind's types in (`resources[].path`).
    pub fn target(&self, cx: &Context<'_>) -> Result<Target, PluginError> {
        let service = cx.flags.string("service");
        let target = Target::resolve(cx.config, service.as_deref())?;
        if let Some(path) = &self.resource.path {
            let owner = path.split("::").next().unwrap_or_default();
            if owner != target.crate_ident {
                let hint = cx
                    .config
                    .services
                    .iter()
                    .find(|s| names::to_snake_case(&format!("{}-operator", s.name)) == owner)
                    .map_or_else(
                        || format!("its types are in {owner}"),
                        |s| format!("give --service {}", s.name),
                    );
                return Err(PluginError::InvalidInput(format!(
                    "--service: {} is not a kind of {} ({hint})",
                    self.resource.gvk(),
                    target.crate_name
                )));
            }
        }
        Ok(target)
    }

    /// The module of the group and version, e.g. `ships_v1`.
    #[must_use]
    pub fn group_version(&self, version: &str) -> String {
        let first = self.group.split('.').next().unwrap_or_default();
        format!("{}_{version}", names::to_snake_case(first))
    }

    /// The module of the kind's webhooks under `src/webhooks/`, e.g. `ships_v1_ship`.
    #[must_use]
    pub fn module(&self) -> String {
        format!(
            "{}_{}",
            self.group_version(&self.version),
            names::to_snake_case(&self.kind)
        )
    }

    /// Kubebuilder's path segment of the group: dots as dashes.
    #[must_use]
    pub fn path_group(&self) -> String {
        self.full_group.replace('.', "-")
    }

    /// The data the templates see.
    #[must_use]
    pub fn template_data(&self) -> serde_json::Value {
        let (k, v, g) = (&self.kind, &self.version, self.path_group());
        let lower = k.to_lowercase();
        let mut parts = Vec::new();
        if self.defaulting {
            parts.push(format!("a defaulter at `/mutate-{g}-{v}-{lower}`"));
        }
        if self.validation {
            parts.push(format!("a validator at `/validate-{g}-{v}-{lower}`"));
        }
        if self.conversion {
            parts.push(format!(
                "conversion from {} through this hub version at `/convert`",
                self.spokes.join(", ")
            ));
        }
        let mut imports = Vec::new();
        if self.defaulting {
            imports.push("Defaulter");
        }
        if self.defaulting || self.validation {
            imports.extend(["Denial", "Request"]);
        }
        if self.validation {
            imports.push("Validator");
        }
        if self.defaulting || self.validation {
            imports.push("Warnings");
        }
        imports.push("WebhookServerBuilder");
        let imports = match imports.as_slice() {
            [one] => (*one).to_owned(),
            many => format!("{{{}}}", many.join(", ")),
        };
        // The signatures as rustfmt writes them: on one line when they fit in 100 columns.
        let n = k.len();
        let fits = |fixed: usize| fixed + n <= 100;
        let wrap_default =
            !fits(4 + "async fn default(&self, _req: &Request, obj: &mut ".len() + RESULT.len());
        let wrap_create = !fits(
            4 + "async fn validate_create(&self, _req: &Request, obj: &".len() + RESULT.len(),
        );
        let wrap_update = !fits(
            4 + "async fn validate_update(&self, _req: &Request, _old: &, new: &".len()
                + n
                + RESULT.len(),
        );
        // `server.with_…(…)…` on one line while rustfmt's chain width (60) allows.
        let mut calls = Vec::new();
        if self.defaulting {
            calls.push(format!("with_defaulter({k}CustomDefaulter)"));
        }
        if self.validation {
            calls.push(format!("with_validator({k}CustomValidator)"));
        }
        if self.conversion {
            calls.push("with_conversion(conversion())".to_owned());
        }
        let chain = format!("server.{}", calls.join("."));
        let register_body = if chain.len() <= 60 {
            format!("    {chain}")
        } else {
            let lines: Vec<String> = calls.iter().map(|c| format!("        .{c}")).collect();
            format!("    server\n{}", lines.join("\n"))
        };
        let spokes: Vec<serde_json::Value> = self
            .spokes
            .iter()
            .map(|s| serde_json::json!({ "version": s, "group_version": self.group_version(s) }))
            .collect();
        serde_json::json!({
            "group": self.group,
            "full_group": self.full_group,
            "version": v,
            "kind": k,
            "kind_snake": names::to_snake_case(k),
            "kind_lower": lower,
            "resource_plural": self.plural,
            "namespaced": self.resource.api.as_ref().is_none_or(|a| a.namespaced),
            "group_version": self.group_version(v),
            "path_group": g,
            "webhook_module": self.module(),
            "defaulting": self.defaulting,
            "validation": self.validation,
            "conversion": self.conversion,
            "admission": self.defaulting || self.validation,
            "spokes": spokes,
            "summary": parts.join(", "),
            "imports": imports,
            "register_body": register_body,
            "wrap_default": wrap_default,
            "wrap_create": wrap_create,
            "wrap_update": wrap_update,
        })
    }
}

/// How the trait methods' signatures end.
const RESULT: &str = ") -> Result<Warnings, Denial> {";

/// The resource `group/version, Kind=kind` of the project, with its types; an error naming
/// `flag` otherwise.
fn existing(
    config: &ProjectConfig,
    group: &str,
    version: &str,
    kind: &str,
    flag: &str,
) -> Result<Resource, PluginError> {
    match config.resource(group, version, kind) {
        Some(r) if r.api.is_some() => Ok(r.clone()),
        Some(r) => Err(PluginError::InvalidInput(format!(
            "{flag}: {} has no API types in this project; webhooks need them",
            r.gvk()
        ))),
        None => Err(PluginError::InvalidInput(format!(
            "{flag}: no kind {group}/{version}, Kind={kind} in PROJECT; create it first with \
             `mni-scaffold create api --group {group} --version {version} --kind {kind}`"
        ))),
    }
}

impl CreateWebhook for RustV1 {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Add webhooks for a kind: a mni_webhook::Defaulter and/or Validator \
                          (and hub-and-spoke conversion) in src/webhooks, served beside the \
                          controllers by src/main.rs, and a test through the admission chain of \
                          mni-testkit."
                .to_owned(),
            examples: "mni-scaffold create webhook --group ships --version v1 --kind Ship \
                       --defaulting --programmatic-validation"
                .to_owned(),
        }
    }

    fn flags(&self) -> Vec<FlagSpec> {
        create_webhook_flags()
    }

    fn validate(&self, cx: &Context<'_>) -> Result<(), PluginError> {
        let request = WebhookRequest::from_context(cx)?;
        request.check_new()?;
        let target = request.target(cx)?;
        let file = format!("{}src/webhooks/{}.rs", target.dir, request.module());
        if cx.universe.contains(&file) {
            return Err(PluginError::InvalidInput(format!(
                "--kind: {file} exists already; remove it or run `mni-scaffold delete webhook` first"
            )));
        }
        Ok(())
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        CreateWebhook::validate(self, cx)?;
        let request = WebhookRequest::from_context(cx)?;
        let target = request.target(cx)?;
        let settings = self.settings(cx)?;
        let data = mni_machinery::merge_data(&[
            settings.template_data(),
            target.template_data(),
            request.template_data(),
        ]);
        let dir = &target.dir;
        let module = request.module();
        let k = &request.kind;
        let files = [
            TemplateFile::new("src/webhooks/mod.rs", &format!("{dir}src/webhooks/mod.rs"))
                .if_exists(IfExists::Skip),
            TemplateFile::new(
                "src/webhooks/kind.rs",
                &format!("{dir}src/webhooks/{module}.rs"),
            ),
            TemplateFile::new(
                "tests/kind_webhook.rs",
                &format!("{dir}tests/{}_webhook.rs", names::to_snake_case(k)),
            ),
        ];
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;

        let mni = settings.mni.clone().unwrap_or_default();
        // `src/lib.rs` had no marker for modules before the first webhook needed one.
        ensure_marker(cx.universe, &format!("{dir}src/lib.rs"), "modules", "")
            .map_err(|e| e.into_plugin_error(&self.key))?;
        let inserts = [
            (
                format!("{dir}src/lib.rs"),
                Insert::new("modules", "webhooks", "pub mod webhooks;"),
            ),
            (
                format!("{dir}src/webhooks/mod.rs"),
                Insert::new("webhook-modules", &module, &format!("pub mod {module};")),
            ),
            (
                format!("{dir}src/webhooks/mod.rs"),
                Insert::new(
                    "webhooks",
                    &module,
                    &format!("let server = {module}::register(server);"),
                ),
            ),
            (
                format!("{dir}src/main.rs"),
                Insert::new(
                    "imports",
                    "webhooks",
                    &format!("use {}::webhooks;", target.crate_ident),
                ),
            ),
            (
                format!("{dir}src/main.rs"),
                Insert::new(
                    "controllers",
                    "webhooks",
                    "let manager = webhooks::register(manager);",
                ),
            ),
            (
                format!("{dir}Cargo.toml"),
                Insert::new(
                    "dependencies",
                    "mni-webhook",
                    "mni-webhook = { workspace = true }",
                ),
            ),
            (
                "Cargo.toml".to_owned(),
                Insert::new(
                    "workspace-dependencies",
                    "mni-webhook",
                    &format!("mni-webhook = {}", mni.spec("framework/runtime/webhook")),
                ),
            ),
        ];
        for (path, fragment) in &inserts {
            insert(cx.universe, path, fragment).map_err(|e| e.into_plugin_error(&self.key))?;
        }
        record(cx.config, &request);
        Ok(())
    }
}

/// Records the webhooks in PROJECT's `resources[].webhooks` (Kubebuilder's block).
fn record(config: &mut ProjectConfig, request: &WebhookRequest) {
    let mut resource = request.resource.clone();
    let mut webhooks = resource.webhooks.unwrap_or_default();
    webhooks.defaulting |= request.defaulting;
    webhooks.validation |= request.validation;
    webhooks.conversion |= request.conversion;
    webhooks.webhook_version = "v1".to_owned();
    resource.webhooks = Some(webhooks);
    config.upsert_resource(resource);
}
