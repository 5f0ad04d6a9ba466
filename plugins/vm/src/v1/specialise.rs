//! The VM specialisation of a service: the last step of `new service` with `vm.mni.dev/v1`.
//!
//! It runs after `service.mni.dev/v1` made the service with the domain kind `Instance` and
//! left the files listed in [`TAKEN_OVER`] unwritten; it renders `templates/vm/v1/` (those
//! output paths and a few more), registers what it adds at the scaffold markers, re-derives
//! the operator's role and records the service under its key, with the kinds it requires.
//!
//! The backend and frontend code is service/v1's, extended rather than replaced: the backend
//! gains two modules of its own (`validation`, the domain's validation hook, and `power`, the
//! start/stop/restart routes and their OpenAPI paths), registered at the markers of its
//! `src/lib.rs` (`modules` and `routes`).

use mni_machinery::{Insert, TemplateFile, Templates, insert, merge_data};
use mni_plugin::prelude::*;
use mni_plugin::{PluginKey, SubcommandMetadata};
use mni_plugin_kustomize::KustomizeV1;
use mni_plugin_rust::v1::{Settings, Target};
use mni_plugin_service::v1::ServiceNames;

/// The domain kind of the VM service. Not `VirtualMachine`: KubeVirt's kind (short names
/// `vm`, `vms`) is installed beside it, and `kubectl get vm` must keep meaning KubeVirt's.
pub const DOMAIN_KIND: &str = "Instance";

/// The kinds of other services the VM service reads (group, version, kind): a VM in a VPC
/// subnet waits for the VPC service's `VirtualPrivateCloud`. PROJECT records them under the
/// plugin's key (`requires:`), so delivery can declare them (OLM's `olm.gvk.required`).
pub const REQUIRES: &[(&str, &str, &str)] =
    &[("network.mni.dev", "v1alpha1", "VirtualPrivateCloud")];

/// The `service.mni.dev/v1` templates this plugin renders itself (at the same output paths):
/// the README, the page and the domain kind. No Rust file of the backend or the frontend is
/// among them; those are extended at their markers.
pub const TAKEN_OVER: &[&str] = &[
    "README.md",
    "frontend/assets/app.js",
    "frontend/assets/index.html",
    "operator/config/crd/bases/domain.yaml",
    "operator/config/samples/domain.yaml",
    "operator/src/api/group_version/domain.rs",
    "operator/src/controllers/domain.rs",
    "operator/tests/domain.rs",
];

/// The `service.mni.dev/v1` templates that are not rendered at all: the backend's test,
/// whose requests carry the default domain kind's spec (the VM backend's tests are
/// `backend/tests/instances.rs`).
pub const SKIPPED: &[&str] = &["backend/tests/api.rs"];

/// The settings key of the Rust plugin (owner, license, where the mNi crates come from).
const RUST_KEY: &str = mni_plugin_rust::KEY;

/// The types of the domain kind's module that other crates use, besides the kind, its spec
/// and its status (which `service.mni.dev/v1` exports).
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const EXPORTS: &str = "// The types of the Instance's spec and status.
pub use instance::{
    BootDisk, CloudInit, DataDisk, HttpImport, InstanceInterface, InstanceNetwork, Resources,
    SecretReference, VpcAttachment,
};";

/// The VM specialisation, a member of the `vm.mni.dev/v1` bundle for `new service`.
pub(crate) struct VmService {
    key: PluginKey,
    templates: Templates,
    kustomize: KustomizeV1,
}

impl VmService {
    pub(crate) fn new(key: PluginKey) -> Self {
        Self {
            key,
            templates: Templates::deferred(mni_templates::files("vm", "v1")),
            kustomize: KustomizeV1::new(),
        }
    }

    /// The service's names and its operator crate, where PROJECT records it (the chain's
    /// `--layout`).
    fn names(cx: &Context<'_>) -> Result<(ServiceNames, Target), PluginError> {
        let name = cx.flags.string("name").unwrap_or_default();
        let names = ServiceNames::with_domain_kind(&name, &cx.config.domain, Some(DOMAIN_KIND))
            .map_err(|e| PluginError::InvalidInput(e.to_string()))?;
        let target = Target::resolve(cx.config, Some(&name))?;
        Ok((names.at(&target.service_dir()), target))
    }

    /// Where template `template` (a path under `templates/vm/v1/`) goes.
    fn output(names: &ServiceNames, template: &str) -> String {
        let d = &names.domain;
        let path = template
            .replace("group_version", &names.domain.group_version())
            .replace(
                "crd/bases/instances.yaml",
                &format!("crd/bases/{}_{}.yaml", d.full_group, d.plural),
            )
            .replace(
                "samples/instance.yaml",
                &format!(
                    "samples/{}_{}_{}.yaml",
                    d.group,
                    d.version,
                    d.kind.to_lowercase()
                ),
            );
        format!("{}{path}", names.dir)
    }

    fn render(
        &self,
        cx: &mut Context<'_>,
        names: &ServiceNames,
        target: &Target,
    ) -> Result<(), PluginError> {
        let rust_key: PluginKey = RUST_KEY.parse().expect("a valid key");
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
        let files: Vec<TemplateFile> = mni_templates_files()
            .into_iter()
            .map(|t| TemplateFile::new(&t, &Self::output(names, &t)))
            .collect();
        self.templates
            .scaffold(cx.universe, &files, &data)
            .map_err(|e| e.into_plugin_error(&self.key))?;

        let op = &target.dir;
        let backend = &names.backend().dir;
        let gv = names.domain.group_version();
        let mni_kubevirt = settings
            .mni
            .clone()
            .unwrap_or_default()
            .spec("framework/upstreams/kubevirt");
        let inserts = [
            (
                format!("{op}src/api/{gv}/mod.rs"),
                Insert::new(
                    "kinds",
                    "vm-types",
                    &format!("pub mod catalogue;\npub mod validate;\n{EXPORTS}"),
                ),
            ),
            (
                format!("{backend}/src/lib.rs"),
                Insert::new("modules", KEY_FRAGMENT, BACKEND_MODULES),
            ),
            (
                format!("{backend}/src/lib.rs"),
                Insert::new("routes", KEY_FRAGMENT, BACKEND_ROUTES),
            ),
            (
                format!("{op}Cargo.toml"),
                Insert::new(
                    "dependencies",
                    KEY_FRAGMENT,
                    "mni-kubevirt = { workspace = true }\ntracing = { workspace = true }",
                ),
            ),
            (
                "Cargo.toml".to_owned(),
                Insert::new(
                    "workspace-dependencies",
                    "mni-kubevirt",
                    &format!("mni-kubevirt = {mni_kubevirt}"),
                ),
            ),
        ];
        for (path, fragment) in &inserts {
            insert(cx.universe, path, fragment).map_err(|e| e.into_plugin_error(&self.key))?;
        }
        let kustomize_data = self.kustomize.data(cx, target)?;
        self.kustomize.derive_role(cx, target, &kustomize_data)
    }
}

/// The fragment key of this plugin's inserts.
const KEY_FRAGMENT: &str = "vm.mni.dev/v1";

/// The backend's own modules (`templates/vm/v1/backend/src/`).
const BACKEND_MODULES: &str = "pub mod power;\nmod validation;";

/// The backend's routes: every write checked with the operator's rules, and the power routes.
/// Written as rustfmt writes it; the comment keeps the machinery from reformatting it.
const BACKEND_ROUTES: &str =
    "// Instances are checked with the operator's rules and have power routes.
let domain = domain.with_validation(validation::check);
let openapi = power::openapi(openapi);
let routes = routes.with_routes(power::routes());";

/// The names of every template of `vm.mni.dev/v1`.
fn mni_templates_files() -> Vec<String> {
    mni_templates::files("vm", "v1")
        .into_iter()
        .map(|(name, _)| name.to_owned())
        .collect()
}

impl std::fmt::Debug for VmService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmService").field("key", &self.key).finish()
    }
}

impl Plugin for VmService {
    fn key(&self) -> &PluginKey {
        &self.key
    }

    fn new_service(&self) -> Option<&dyn NewService> {
        Some(self)
    }
}

impl NewService for VmService {
    fn metadata(&self) -> SubcommandMetadata {
        SubcommandMetadata {
            description: "Specialise the service for virtual machines: the Instance kind with \
                          CEL validation, its controller onto KubeVirt (VirtualMachine, \
                          DataVolume templates, a cloud-init Secret, Kube-OVN attachment to a \
                          VPC subnet) with status from KubeVirt's, instance and power routes \
                          in the backend, instances in the frontend."
                .to_owned(),
            examples: "mni-scaffold --plugins vm/v1 new service compute   # Instance in \
                       compute.<domain>/v1alpha1"
                .to_owned(),
        }
    }

    fn run(&self, cx: &mut Context<'_>) -> Result<(), PluginError> {
        let (names, target) = Self::names(cx)?;
        if !cx.universe.contains(&format!("{}src/main.rs", target.dir)) {
            return Err(PluginError::InvalidInput(format!(
                "{KEY_FRAGMENT} specialises the service that rust.mni.dev/v1, \
                 kustomize.mni.dev/v1 and service.mni.dev/v1 scaffold, but {}src/main.rs is \
                 missing: use the bundle vm.mni.dev/v1",
                target.dir
            )));
        }
        self.render(cx, &names, &target)?;
        if let Some(service) = cx.config.services.iter_mut().find(|s| s.name == names.name) {
            service.plugin = self.key.clone();
        }
        let requires: Vec<serde_json::Value> = REQUIRES
            .iter()
            .map(|(group, version, kind)| {
                serde_json::json!({ "group": group, "version": version, "kind": kind })
            })
            .collect();
        cx.config
            .set_plugin_config(&self.key, &serde_json::json!({ "requires": requires }))?;
        Ok(())
    }
}
