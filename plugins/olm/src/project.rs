//! Reading what a bundle is made of from a scaffolded project: PROJECT, and the kustomize
//! manifests under `config/` (the project's own and each service operator's
//! `<operator>/config/`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::BundleError;

/// The PROJECT key under `plugins:` where optional CSV metadata lives.
pub const PROJECT_KEY: &str = "olm.mni.dev/v1";

/// What the generator reads from a project.
#[derive(Debug, Default)]
pub(crate) struct ProjectInputs {
    /// `projectName`.
    pub(crate) name: String,
    /// The rust plugin's `owner`, if any.
    pub(crate) owner: Option<String>,
    /// `plugins."olm.mni.dev/v1"`, if any.
    pub(crate) olm: BTreeMap<String, Value>,
    /// Every `requires:` GVK that a plugin config lists.
    pub(crate) requires: Vec<Value>,
    /// CRDs, by file name.
    pub(crate) crds: Vec<Value>,
    /// Samples (objects of `config/samples`).
    pub(crate) samples: Vec<Value>,
    /// Deployments of `config/manager`: the operator's (`--image` sets their image).
    pub(crate) deployments: Vec<Value>,
    /// The other Deployments of the directories `config/default` deploys (a console, say).
    pub(crate) other_deployments: Vec<Value>,
    /// The Services of `config/manager` and of the directories `config/default` deploys.
    pub(crate) services: Vec<Value>,
    /// Roles and ClusterRoles of `config/rbac`.
    pub(crate) roles: Vec<Value>,
    /// RoleBindings and ClusterRoleBindings of `config/rbac`: which roles are the operator's.
    pub(crate) bindings: Vec<Value>,
    /// The `namePrefix` of `config/default/kustomization.yaml`.
    pub(crate) name_prefix: String,
}

impl ProjectInputs {
    /// Reads the project at `root`.
    pub(crate) fn read(root: &Path) -> Result<Self, BundleError> {
        let path = root.join("PROJECT");
        let text =
            fs::read_to_string(&path).map_err(|_| BundleError::NoProject(root.to_owned()))?;
        let project: Value = serde_yaml::from_str(&text).map_err(|e| BundleError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut inputs = Self {
            name: project
                .get("projectName")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            ..Self::default()
        };
        let plugins = project.get("plugins").and_then(Value::as_object);
        for (key, config) in plugins.into_iter().flatten() {
            if key == PROJECT_KEY
                && let Some(map) = config.as_object()
            {
                inputs.olm = map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            }
            if let Some(owner) = config.get("owner").and_then(Value::as_str) {
                inputs.owner = Some(owner.to_owned());
            }
            if let Some(requires) = config.get("requires").and_then(Value::as_array) {
                inputs.requires.extend(requires.iter().cloned());
            }
        }
        let mut dirs = vec![root.join("config")];
        for service in project
            .get("services")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(operator) = service.pointer("/crates/operator").and_then(Value::as_str) {
                dirs.push(root.join(operator).join("config"));
            }
        }
        for dir in dirs.iter().filter(|d| d.is_dir()) {
            inputs.crds.extend(read_dir(&dir.join("crd/bases"))?);
            inputs.samples.extend(read_dir(&dir.join("samples"))?);
            let kustomization = Kustomization::read(&dir.join("default"))?;
            if inputs.name_prefix.is_empty() {
                inputs.name_prefix = kustomization.name_prefix.clone();
            }
            // The manager's Deployment, then the workloads the kustomization deploys besides
            // it (say, a console) and every Service it deploys (the metrics Service, the
            // console's).
            let manager = dir.join("manager");
            for object in read_dir(&manager)? {
                match kind(&object) {
                    "Deployment" => inputs.deployments.push(object),
                    "Service" => inputs.services.push(object),
                    _ => {}
                }
            }
            for listed in kustomization.resource_dirs(&dir.join("default")) {
                if same_dir(&listed, &manager) {
                    continue;
                }
                for object in read_dir(&listed)? {
                    match kind(&object) {
                        "Deployment" => inputs.other_deployments.push(object),
                        "Service" => inputs.services.push(object),
                        _ => {}
                    }
                }
            }
            for object in read_dir(&dir.join("rbac"))? {
                match kind(&object) {
                    "Role" | "ClusterRole" => inputs.roles.push(object),
                    "RoleBinding" | "ClusterRoleBinding" => inputs.bindings.push(object),
                    _ => {}
                }
            }
        }
        if inputs.crds.is_empty() {
            return Err(BundleError::NoCrds(dirs));
        }
        Ok(inputs)
    }
}

/// What the bundle reads of `config/default/kustomization.yaml`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kustomization {
    #[serde(default)]
    name_prefix: String,
    #[serde(default)]
    resources: Vec<String>,
}

impl Kustomization {
    /// The kustomization in `dir`, or an empty one when there is none.
    fn read(dir: &Path) -> Result<Self, BundleError> {
        let path = dir.join("kustomization.yaml");
        let Ok(text) = fs::read_to_string(&path) else {
            return Ok(Self::default());
        };
        serde_yaml::from_str(&text).map_err(|e| BundleError::Invalid {
            path,
            message: e.to_string(),
        })
    }

    /// The local directories of `resources` (`../manager`), relative to `dir`; files and
    /// remote resources are left out.
    fn resource_dirs(&self, dir: &Path) -> Vec<PathBuf> {
        self.resources
            .iter()
            .filter(|r| !r.contains("://"))
            .map(|r| dir.join(r))
            .filter(|p| p.is_dir())
            .collect()
    }
}

/// Whether two paths name the same directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// An object's kind.
pub(crate) fn kind(object: &Value) -> &str {
    object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Every object of the YAML files directly in `dir` (none if it does not exist), in file-name
/// order, without kustomization files.
fn read_dir(dir: &Path) -> Result<Vec<Value>, BundleError> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .filter(|p| p.file_name().is_none_or(|n| n != "kustomization.yaml"))
        .collect();
    paths.sort();
    let mut objects = Vec::new();
    for path in paths {
        let text = fs::read_to_string(&path).map_err(|source| BundleError::Io {
            path: path.clone(),
            source,
        })?;
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let value = Value::deserialize(doc).map_err(|e| BundleError::Invalid {
                path: path.clone(),
                message: e.to_string(),
            })?;
            if !value.is_null() {
                objects.push(value);
            }
        }
    }
    Ok(objects)
}
