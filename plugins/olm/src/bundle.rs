//! `mni-scaffold olm bundle`: a registry+v1 bundle generated from a scaffolded project, and
//! regenerated without losing what the user edited.
//!
//! [`generate`] renders the bundle in memory (see [`BundleRequest`] for the inputs);
//! [`write_bundle`] merges it into the bundle directory three ways — base: the last generated
//! output, kept in `<bundle>/.mni-generated/`; ours: the files as they are; theirs: the new
//! output — YAML files as trees, other files by lines ([`crate::merge`]). The result is staged
//! in a sibling directory, checked (every shipped CRD owned by the CSV), and only then swapped
//! in; on any error nothing is written.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use mni_olm::{
    ANNOTATION_CHANNELS, ANNOTATION_DEFAULT_CHANNEL, ANNOTATION_PACKAGE, BundleDir,
    CSV_API_VERSION, ClusterServiceVersion, InstallMode,
};
use serde_json::{Value, json};

use crate::BundleError;
use crate::merge::{merge_text, merge_values};
use crate::project::{ProjectInputs, kind};

/// Where the last generated output is kept, inside the bundle directory.
pub const GENERATED_DIR: &str = ".mni-generated";
/// The Kubernetes version a bundle asks for when PROJECT does not say.
pub const DEFAULT_MIN_KUBE_VERSION: &str = "1.33.0";

/// What to generate.
#[derive(Debug, Clone, Default)]
pub struct BundleRequest {
    version: String,
    package: Option<String>,
    replaces: Option<String>,
    skip_range: Option<String>,
    channels: Vec<String>,
    default_channel: Option<String>,
    depends_on: Vec<(String, String)>,
    image: Option<String>,
}

impl BundleRequest {
    /// A bundle of version `version` (a semantic version, checked by [`generate`]).
    pub fn new(version: &str) -> Self {
        Self {
            version: version.to_owned(),
            ..Self::default()
        }
    }

    /// The package name (default: the project name).
    #[must_use]
    pub fn with_package(mut self, package: Option<String>) -> Self {
        self.package = package;
        self
    }

    /// The CSV this version replaces (default: the CSV of an older version in the bundle dir).
    #[must_use]
    pub fn with_replaces(mut self, replaces: Option<String>) -> Self {
        self.replaces = replaces;
        self
    }

    /// The `olm.skipRange` annotation.
    #[must_use]
    pub fn with_skip_range(mut self, range: Option<String>) -> Self {
        self.skip_range = range;
        self
    }

    /// The channels (default: `alpha`).
    #[must_use]
    pub fn with_channels(mut self, channels: Vec<String>) -> Self {
        self.channels = channels;
        self
    }

    /// The default channel (default: the first channel).
    #[must_use]
    pub fn with_default_channel(mut self, channel: Option<String>) -> Self {
        self.default_channel = channel;
        self
    }

    /// A package dependency: `olm.package` `package` in `range`.
    #[must_use]
    pub fn with_dependency(mut self, package: &str, range: &str) -> Self {
        self.depends_on.push((package.to_owned(), range.to_owned()));
        self
    }

    /// The manager container's image (default: as in `config/manager`).
    #[must_use]
    pub fn with_image(mut self, image: Option<String>) -> Self {
        self.image = image;
        self
    }
}

/// The bundle's files, by path relative to the bundle directory.
pub fn generate(
    root: &Path,
    request: &BundleRequest,
) -> Result<BTreeMap<String, String>, BundleError> {
    semver::Version::parse(&request.version).map_err(|e| BundleError::Version {
        version: request.version.clone(),
        message: e.to_string(),
    })?;
    for (package, range) in &request.depends_on {
        mni_olm::VersionRange::parse(range).map_err(|e| BundleError::Dependency {
            package: package.clone(),
            message: e.to_string(),
        })?;
    }
    if let Some(range) = &request.skip_range {
        mni_olm::VersionRange::parse(range).map_err(|e| BundleError::Flag {
            flag: "--skip-range".into(),
            message: e.to_string(),
        })?;
    }
    let inputs = ProjectInputs::read(root)?;
    let package = request
        .package
        .clone()
        .unwrap_or_else(|| inputs.name.clone());
    let channels = if request.channels.is_empty() {
        vec!["alpha".to_owned()]
    } else {
        request.channels.clone()
    };
    let default_channel = request
        .default_channel
        .clone()
        .unwrap_or_else(|| channels[0].clone());
    if !channels.contains(&default_channel) {
        return Err(BundleError::DefaultChannel {
            channel: default_channel,
            channels: channels.join(","),
        });
    }
    let yaml = |v: &Value| serde_yaml::to_string(v).expect("JSON values serialize");
    let mut files = BTreeMap::new();
    for crd in &inputs.crds {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let plural = crd
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or_default();
        files.insert(format!("manifests/{group}_{plural}.yaml"), yaml(crd));
    }
    let csv = csv(&inputs, request, &package);
    files.insert(
        format!("manifests/{package}.clusterserviceversion.yaml"),
        yaml(&csv),
    );
    // ClusterRoles that no binding of config/rbac refers to are for others to be bound to
    // (an operator that binds them for its users holds only `bind`): they ship beside the
    // CSV, as operator-sdk ships them, and OLM creates them with the operator.
    if !inputs.bindings.is_empty() {
        for role in inputs
            .roles
            .iter()
            .filter(|r| kind(r) == "ClusterRole" && !is_referenced(r, &inputs.bindings))
        {
            let name = role
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            files.insert(
                format!("manifests/{name}_rbac.authorization.k8s.io_v1_clusterrole.yaml"),
                yaml(role),
            );
        }
    }
    // The Services the project deploys (the metrics Service, a console's) ship beside the CSV
    // as operator-sdk ships them, named as the kustomization names them; OLM creates them in
    // the operator's namespace.
    for service in &inputs.services {
        let name = format!(
            "{}{}",
            inputs.name_prefix,
            service
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        let mut service = service.clone();
        if let Some(Value::Object(metadata)) = service.get_mut("metadata") {
            metadata.insert("name".into(), Value::String(name.clone()));
            metadata.remove("namespace");
        }
        files.insert(format!("manifests/{name}_v1_service.yaml"), yaml(&service));
    }
    let annotations = [
        (
            "operators.operatorframework.io.bundle.mediatype.v1",
            "registry+v1".to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.manifests.v1",
            "manifests/".to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.metadata.v1",
            "metadata/".to_owned(),
        ),
        (ANNOTATION_PACKAGE, package.clone()),
        (ANNOTATION_CHANNELS, channels.join(",")),
        (ANNOTATION_DEFAULT_CHANNEL, default_channel),
    ];
    let map: serde_json::Map<String, Value> = annotations
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String(v.clone())))
        .collect();
    files.insert(
        "metadata/annotations.yaml".into(),
        yaml(&json!({"annotations": map})),
    );
    let mut dependencies: Vec<Value> = inputs
        .requires
        .iter()
        .map(|gvk| json!({"type": "olm.gvk", "value": {"group": gvk.get("group"), "kind": gvk.get("kind"), "version": gvk.get("version")}}))
        .collect();
    dependencies.extend(
        request.depends_on.iter().map(
            |(p, r)| json!({"type": "olm.package", "value": {"packageName": p, "version": r}}),
        ),
    );
    files.insert(
        "metadata/dependencies.yaml".into(),
        yaml(&json!({"dependencies": dependencies})),
    );
    let mut containerfile = String::from(
        "# The bundle image: build it from this directory, e.g. `podman build -f bundle.Containerfile -t <image> .`\nFROM scratch\n\n",
    );
    for (k, v) in &annotations {
        containerfile.push_str(&format!("LABEL {k}={v}\n"));
    }
    containerfile.push_str("\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n");
    files.insert("bundle.Containerfile".into(), containerfile);
    Ok(files)
}

/// "VirtualPrivateCloud" → "Virtual Private Cloud"; "natGateway" → "Nat Gateway".
fn title(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else {
            if c.is_uppercase() && !out.ends_with(' ') {
                out.push(' ');
            }
            out.push(c);
        }
    }
    out
}

/// The descriptors of the top-level fields of `.spec` or `.status` in `schema`.
fn descriptors(schema: &Value, part: &str) -> Vec<Value> {
    let props = schema
        .pointer(&format!("/properties/{part}/properties"))
        .and_then(Value::as_object);
    props
        .into_iter()
        .flatten()
        .map(|(field, s)| {
            let mut d = json!({"path": field, "displayName": title(field)});
            if let Some(desc) = s.get("description") {
                d["description"] = desc.clone();
            }
            d
        })
        .collect()
}

fn csv(inputs: &ProjectInputs, request: &BundleRequest, package: &str) -> Value {
    let olm = |key: &str| inputs.olm.get(key).cloned();
    let mut owned = Vec::new();
    let mut examples = Vec::new();
    for crd in &inputs.crds {
        let name = crd
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(Value::Null);
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let crd_kind = crd
            .pointer("/spec/names/kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        for version in crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let v = version
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let schema = version
                .pointer("/schema/openAPIV3Schema")
                .cloned()
                .unwrap_or(Value::Null);
            let mut entry = json!({"name": name, "version": v, "kind": crd_kind, "displayName": title(crd_kind)});
            if let Some(desc) = schema.pointer("/properties/spec/description") {
                entry["description"] = desc.clone();
            }
            let spec = descriptors(&schema, "spec");
            if !spec.is_empty() {
                entry["specDescriptors"] = Value::Array(spec);
            }
            let status = descriptors(&schema, "status");
            if !status.is_empty() {
                entry["statusDescriptors"] = Value::Array(status);
            }
            owned.push(entry);
            let api_version = format!("{group}/{v}");
            examples.extend(
                inputs
                    .samples
                    .iter()
                    .filter(|s| {
                        kind(s) == crd_kind
                            && s.get("apiVersion").and_then(Value::as_str) == Some(&api_version)
                    })
                    .cloned(),
            );
        }
    }
    let prefix = &inputs.name_prefix;
    // Each Deployment's ServiceAccount as `config/rbac` names it (the subject of its
    // bindings), in order of first use.
    let mut accounts: Vec<String> = Vec::new();
    let operator = inputs.deployments.iter().map(|d| (d, true));
    let others = inputs.other_deployments.iter().map(|d| (d, false));
    let deployments: Vec<Value> = operator
        .chain(others)
        .map(|(d, is_operator)| {
            let mut spec = d.get("spec").cloned().unwrap_or(Value::Null);
            if let Some(sa) = spec.pointer_mut("/template/spec/serviceAccountName") {
                let account = sa.as_str().unwrap_or_default().to_owned();
                *sa = Value::String(format!("{prefix}{account}"));
                if !accounts.contains(&account) {
                    accounts.push(account);
                }
            }
            if is_operator
                && let Some(image) = &request.image
                && let Some(containers) = spec
                    .pointer_mut("/template/spec/containers")
                    .and_then(Value::as_array_mut)
                && let Some(manager) = containers.first_mut()
            {
                manager["image"] = Value::String(image.clone());
            }
            let name = d
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut out = json!({"name": format!("{prefix}{name}"), "spec": spec});
            if let Some(labels) = d.pointer("/metadata/labels") {
                out["label"] = labels.clone();
            }
            out
        })
        .collect();
    // A project without bindings gives every role to the operator's account.
    if inputs.bindings.is_empty() {
        accounts.truncate(1);
    }
    let permissions = |scope: Scope| -> Vec<Value> {
        let mut out = Vec::new();
        for account in &accounts {
            for role in inputs
                .roles
                .iter()
                .filter(|r| scope_of(r, &inputs.bindings, account) == Some(scope))
            {
                out.push(json!({
                    "serviceAccountName": format!("{prefix}{account}"),
                    "rules": role.get("rules").cloned().unwrap_or(json!([])),
                }));
            }
        }
        out
    };
    let owner = inputs.owner.clone().unwrap_or_else(|| "mNi".to_owned());
    let mut annotations = serde_json::Map::new();
    annotations.insert(
        "alm-examples".into(),
        Value::String(serde_json::to_string_pretty(&examples).expect("JSON")),
    );
    annotations.insert("capabilities".into(), json!("Basic Install"));
    if let Some(range) = &request.skip_range {
        annotations.insert("olm.skipRange".into(), json!(range));
    }
    let mut spec = json!({
        "displayName": olm("displayName").unwrap_or_else(|| json!(inputs.name.split('-').map(title).collect::<Vec<_>>().join(" "))),
        "description": olm("description").unwrap_or_else(|| json!(format!("The {} service operator, scaffolded with mNi.", inputs.name))),
        "version": request.version,
        "minKubeVersion": olm("minKubeVersion").unwrap_or_else(|| json!(DEFAULT_MIN_KUBE_VERSION)),
        "maturity": olm("maturity").unwrap_or_else(|| json!("alpha")),
        "keywords": olm("keywords").unwrap_or_else(|| json!(["mni"])),
        "maintainers": olm("maintainers").unwrap_or_else(|| json!([{"name": owner}])),
        "provider": olm("provider").unwrap_or_else(|| json!({"name": owner})),
        "links": olm("links").unwrap_or_else(|| json!([{"name": "mNi", "url": "https://github.com/mni-cloud/mni"}])),
        "installModes": serde_json::to_value(InstallMode::mni_defaults()).expect("JSON"),
        "customresourcedefinitions": {"owned": owned},
        "install": {"strategy": "deployment", "spec": {
            "deployments": deployments,
            "permissions": permissions(Scope::Namespace),
            "clusterPermissions": permissions(Scope::Cluster),
        }},
    });
    if let Some(icon) = olm("icon") {
        spec["icon"] = icon;
    }
    if let Some(replaces) = &request.replaces {
        spec["replaces"] = json!(replaces);
    }
    json!({
        "apiVersion": CSV_API_VERSION,
        "kind": "ClusterServiceVersion",
        "metadata": {"name": format!("{package}.v{}", request.version), "annotations": annotations},
        "spec": spec,
    })
}

/// The CSV fields that `--version`, `--replaces` and `--skip-range` decide: JSON pointer and
/// the dotted path [`merge_values`] reports.
const RELEASE_FIELDS: [(&str, &str); 4] = [
    ("/metadata/name", ".metadata.name"),
    ("/spec/version", ".spec.version"),
    ("/spec/replaces", ".spec.replaces"),
    (
        "/metadata/annotations/olm.skipRange",
        ".metadata.annotations.olm.skipRange",
    ),
];

/// Where a role's rules apply for the operator: in its own namespace (the CSV's
/// `permissions`, which OLM grants with a Role and RoleBinding there) or cluster-wide
/// (`clusterPermissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Namespace,
    Cluster,
}

/// Where `role` grants its rules to the ServiceAccount `account`, if it does: a binding of
/// `config/rbac` refers to it with `account` as a subject. A ClusterRole granted only through
/// RoleBindings grants in the binding's namespace, as Kubernetes grants it — so it is a
/// namespaced permission, not a cluster-wide one; only a ClusterRoleBinding makes it
/// cluster-wide. A role that no binding refers to is not the operator's (say, a ClusterRole the
/// operator binds for others, which it may only `bind`), nor is one bound to another
/// ServiceAccount; only a project without any binding gives every role to the operator, by its
/// kind, as the bundle did before bindings were read.
fn scope_of(role: &Value, bindings: &[Value], account: &str) -> Option<Scope> {
    let by_kind = match kind(role) {
        "ClusterRole" => Scope::Cluster,
        _ => Scope::Namespace,
    };
    if bindings.is_empty() {
        return Some(by_kind);
    }
    bindings
        .iter()
        .filter(|binding| {
            refers_to(binding, role)
                && binding["subjects"].as_array().is_some_and(|subjects| {
                    subjects.iter().any(|s| {
                        s["kind"] == "ServiceAccount" && s["name"].as_str() == Some(account)
                    })
                })
        })
        .map(|binding| match kind(binding) {
            "ClusterRoleBinding" => Scope::Cluster,
            _ => Scope::Namespace,
        })
        .max_by_key(|scope| *scope == Scope::Cluster)
}

/// Whether `binding`'s `roleRef` names `role`.
fn refers_to(binding: &Value, role: &Value) -> bool {
    binding.pointer("/roleRef/kind").and_then(Value::as_str) == Some(kind(role))
        && binding.pointer("/roleRef/name") == role.pointer("/metadata/name")
}

/// Whether any of `bindings` refers to `role`.
fn is_referenced(role: &Value, bindings: &[Value]) -> bool {
    bindings.iter().any(|binding| refers_to(binding, role))
}

/// Sets `pointer` (whose parent exists as an object) in `value`.
fn set_pointer(value: &mut Value, pointer: &str, new: Value) {
    if let Some((parent, key)) = pointer.rsplit_once('/')
        && let Some(Value::Object(map)) = value.pointer_mut(parent)
    {
        map.insert(key.to_owned(), new);
    }
}

/// What [`write_bundle`] did.
#[derive(Debug, Default)]
pub struct BundleReport {
    /// Files written (relative to the bundle directory).
    pub written: Vec<String>,
    /// Files removed.
    pub removed: Vec<String>,
    /// Where the user's edit and the generator's change overlapped (the user's value was kept),
    /// as `file: path`.
    pub kept: Vec<String>,
}

fn read_opt(path: &Path) -> Result<Option<String>, BundleError> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(BundleError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Generates the bundle of `root` into `out` (relative paths are below `root`), merging it with
/// what is there three ways (base: `<out>/.mni-generated/`), staged and swapped in whole.
pub fn write_bundle(
    root: &Path,
    out: &Path,
    request: &BundleRequest,
) -> Result<BundleReport, BundleError> {
    let out = root.join(out);
    let mut request = request.clone();
    // An older CSV in the bundle directory is the one this version replaces.
    // Regenerating the same version keeps the edge it had.
    if request.replaces.is_none()
        && let Ok(existing) = BundleDir::read(&out)
    {
        request.replaces = if existing.csv.spec.version == request.version {
            existing.csv.spec.replaces.clone()
        } else {
            Some(existing.csv.metadata.name.clone())
        };
    }
    let theirs = generate(root, &request)?;
    let generated = out.join(GENERATED_DIR);
    let mut report = BundleReport::default();
    let mut result: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut old_paths: Vec<String> = Vec::new();
    if generated.is_dir() {
        for entry in walk(&generated) {
            let rel = entry
                .strip_prefix(&generated)
                .expect("below")
                .to_string_lossy()
                .into_owned();
            old_paths.push(rel);
        }
    }
    for path in theirs
        .keys()
        .chain(old_paths.iter().filter(|p| !theirs.contains_key(*p)))
    {
        let base = read_opt(&generated.join(path))?;
        let ours = read_opt(&out.join(path))?;
        let new = theirs.get(path);
        let merged = match (base.as_deref(), ours.as_deref(), new) {
            (_, None, Some(t)) => Some(t.clone()),
            (Some(b), Some(o), None) => (b != o).then(|| o.to_owned()),
            (None, Some(o), None) => Some(o.to_owned()),
            (_, None, None) => None,
            (b, Some(o), Some(t)) if path.ends_with(".yaml") => {
                let parse = |text: &str| -> Result<Value, BundleError> {
                    serde_yaml::from_str(text).map_err(|e| BundleError::Invalid {
                        path: out.join(path),
                        message: e.to_string(),
                    })
                };
                let b = b.map(parse).transpose()?.unwrap_or(Value::Null);
                let t = parse(t)?;
                let (mut merged, kept) = merge_values(&b, &parse(o)?, &t);
                // The release fields follow the command line, not an old hand edit.
                let mut kept: Vec<String> = kept
                    .into_iter()
                    .filter(|k| !RELEASE_FIELDS.iter().any(|(_, dotted)| k == dotted))
                    .collect();
                if ClusterServiceVersion::is_csv(&t) {
                    for (pointer, _) in RELEASE_FIELDS {
                        match (t.pointer(pointer), merged.pointer_mut(pointer)) {
                            (Some(want), Some(have)) => *have = want.clone(),
                            (Some(want), None) => set_pointer(&mut merged, pointer, want.clone()),
                            _ => {}
                        }
                    }
                }
                kept.sort();
                report
                    .kept
                    .extend(kept.into_iter().map(|k| format!("{path}: {k}")));
                let text = serde_yaml::to_string(&merged).expect("JSON values serialize");
                // Keep the user's formatting where nothing changed.
                Some(if parse(o)? == merged {
                    o.to_owned()
                } else {
                    text
                })
            }
            (b, Some(o), Some(t)) => {
                Some(
                    merge_text(b.unwrap_or(""), o, t).map_err(|_| BundleError::Conflict {
                        path: out.join(path),
                    })?,
                )
            }
        };
        result.insert(path.clone(), merged);
    }

    // Stage: a copy of the bundle directory with the result applied, checked, then swapped in.
    let parent = out.parent().unwrap_or(root);
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bundle".into());
    let stage = parent.join(format!(".{name}.mni-staging"));
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| BundleError::Io { path, source }
    };
    let _ = fs::remove_dir_all(&stage);
    let outcome = (|| -> Result<(), BundleError> {
        fs::create_dir_all(&stage).map_err(io(&stage))?;
        if out.is_dir() {
            copy_dir(&out, &stage)?;
        }
        let _ = fs::remove_dir_all(stage.join(GENERATED_DIR));
        for (path, contents) in &result {
            let target = stage.join(path);
            let before = read_opt(&out.join(path))?;
            match contents {
                Some(text) => {
                    fs::create_dir_all(target.parent().expect("parent")).map_err(io(&target))?;
                    fs::write(&target, text).map_err(io(&target))?;
                    if before.as_deref() != Some(text.as_str()) {
                        report.written.push(path.clone());
                    }
                }
                None => {
                    if target.exists() {
                        fs::remove_file(&target).map_err(io(&target))?;
                        report.removed.push(path.clone());
                    }
                }
            }
        }
        for (path, text) in &theirs {
            let target = stage.join(GENERATED_DIR).join(path);
            fs::create_dir_all(target.parent().expect("parent")).map_err(io(&target))?;
            fs::write(&target, text).map_err(io(&target))?;
        }
        BundleDir::read(&stage)?;
        Ok(())
    })();
    if let Err(e) = outcome {
        let _ = fs::remove_dir_all(&stage);
        return Err(e);
    }
    let old = parent.join(format!(".{name}.mni-old"));
    let _ = fs::remove_dir_all(&old);
    if out.exists() {
        fs::rename(&out, &old).map_err(io(&out))?;
    }
    fs::rename(&stage, &out).map_err(io(&out))?;
    let _ = fs::remove_dir_all(&old);
    Ok(report)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), BundleError> {
    for file in walk(from) {
        let target = to.join(file.strip_prefix(from).expect("below"));
        fs::create_dir_all(target.parent().expect("parent")).map_err(|source| BundleError::Io {
            path: target.clone(),
            source,
        })?;
        fs::copy(&file, &target).map_err(|source| BundleError::Io {
            path: file.clone(),
            source,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_roles_bound_to_the_operator_s_account_are_its_permissions() {
        let role = |kind: &str, name: &str| json!({"kind": kind, "metadata": {"name": name}});
        let binding = |kind: &str, role_kind: &str, role: &str, account: &str| {
            json!({"kind": kind, "roleRef": {"kind": role_kind, "name": role},
                   "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": "system"}]})
        };
        let manager = "controller-manager";
        let bindings = [
            binding("ClusterRoleBinding", "ClusterRole", "manager-role", manager),
            binding("RoleBinding", "Role", "leader-election-role", manager),
            binding("RoleBinding", "ClusterRole", "secret-reader", manager),
            binding("RoleBinding", "ClusterRole", "both", manager),
            binding("ClusterRoleBinding", "ClusterRole", "both", manager),
            binding("ClusterRoleBinding", "ClusterRole", "console", "console"),
        ];
        let scope = |kind: &str, name: &str| scope_of(&role(kind, name), &bindings, manager);
        assert_eq!(scope("ClusterRole", "manager-role"), Some(Scope::Cluster));
        assert_eq!(
            scope("Role", "leader-election-role"),
            Some(Scope::Namespace)
        );
        // A ClusterRole bound only by a RoleBinding grants in one namespace; a
        // ClusterRoleBinding beside it makes it cluster-wide.
        assert_eq!(
            scope("ClusterRole", "secret-reader"),
            Some(Scope::Namespace)
        );
        assert_eq!(scope("ClusterRole", "both"), Some(Scope::Cluster));
        // Another account's role, a role of the same name but another kind, and a role the
        // operator only binds for others are not the operator's.
        assert_eq!(scope("ClusterRole", "console"), None);
        assert_eq!(scope("Role", "manager-role"), None);
        assert_eq!(scope("ClusterRole", "tenant-admin"), None);
        // Without any binding, every role is the operator's, by its kind.
        assert_eq!(
            scope_of(&role("ClusterRole", "tenant-admin"), &[], manager),
            Some(Scope::Cluster)
        );
        assert_eq!(
            scope_of(&role("Role", "leader-election-role"), &[], manager),
            Some(Scope::Namespace)
        );
    }

    #[test]
    fn titles_split_camel_case() {
        assert_eq!(title("VirtualPrivateCloud"), "Virtual Private Cloud");
        assert_eq!(title("natGateway"), "Nat Gateway");
    }
}
