//! Where the generators' inputs are: Kubernetes' OpenAPI document from the Go module proxy
//! (`go mod download k8s.io/kubernetes@v1.37.2`) and the sources of k8s-pb and k8s-openapi
//! from crates.io (`cargo metadata` on `framework/tools/xtask/inputs/Cargo.toml`, which
//! downloads sources without building them). Both land in their tools' caches, so a second
//! run is offline.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The Kubernetes release whose OpenAPI document the built-in schema table comes from.
pub const KUBERNETES_MODULE: &str = "k8s.io/kubernetes@v1.37.2";
/// The k8s-pb release (prost output of Kubernetes' `generated.proto` files).
pub const K8S_PB: (&str, &str) = ("k8s-pb", "0.9.0");
/// The k8s-openapi release (exact JSON field names) and the API version module used.
pub const K8S_OPENAPI: (&str, &str) = ("k8s-openapi", "0.29.0");
/// The module of k8s-openapi's sources for Kubernetes 1.37.
pub const K8S_OPENAPI_VERSION_MODULE: &str = "v1_37";

/// Errors locating the inputs.
#[derive(Debug, thiserror::Error)]
pub enum InputsError {
    /// A tool could not be started.
    #[error("cannot run `{command}` (is it installed and on PATH?): {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A tool failed.
    #[error("`{command}` failed: {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Its standard error.
        stderr: String,
    },
    /// A tool's output is not the JSON expected.
    #[error("unexpected output of `{command}`: {what}")]
    Output {
        /// The command line.
        command: String,
        /// What is missing.
        what: String,
    },
}

/// The located inputs.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// `api/openapi-spec/swagger.json` of Kubernetes.
    pub swagger: PathBuf,
    /// `src/` of k8s-pb.
    pub k8s_pb_src: PathBuf,
    /// `src/v1_37/` of k8s-openapi.
    pub k8s_openapi_src: PathBuf,
}

impl Inputs {
    /// Downloads (or finds in the caches) every input.
    pub fn locate() -> Result<Self, InputsError> {
        let kubernetes = go_module_dir(KUBERNETES_MODULE)?;
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("inputs/Cargo.toml");
        let crates = crate_dirs(&manifest)?;
        let find = |(name, version): (&str, &str)| {
            crates
                .iter()
                .find(|(n, v, _)| n == name && v == version)
                .map(|(_, _, dir)| dir.join("src"))
                .ok_or_else(|| InputsError::Output {
                    command: format!("cargo metadata --manifest-path {}", manifest.display()),
                    what: format!("no package {name} {version}"),
                })
        };
        Ok(Self {
            swagger: kubernetes.join("api/openapi-spec/swagger.json"),
            k8s_pb_src: find(K8S_PB)?,
            k8s_openapi_src: find(K8S_OPENAPI)?.join(K8S_OPENAPI_VERSION_MODULE),
        })
    }
}

fn run_json(command: &mut Command, cwd: &Path) -> Result<Value, InputsError> {
    let line = format!("{command:?}");
    let out = command
        .current_dir(cwd)
        .output()
        .map_err(|source| InputsError::Spawn {
            command: line.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(InputsError::Failed {
            command: line,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    serde_json::from_slice(&out.stdout).map_err(|e| InputsError::Output {
        command: line,
        what: e.to_string(),
    })
}

/// `go mod download -json MODULE` outside any Go module; the module's extracted directory.
fn go_module_dir(module: &str) -> Result<PathBuf, InputsError> {
    let json = run_json(
        Command::new("go")
            .args(["mod", "download", "-json", module])
            .env("GOFLAGS", "-mod=mod")
            .env("GO111MODULE", "on"),
        &std::env::temp_dir(),
    )?;
    json["Dir"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| InputsError::Output {
            command: format!("go mod download -json {module}"),
            what: format!("no `Dir` in {json}"),
        })
}

/// (name, version, directory) of every package `cargo metadata` resolves for `manifest`.
fn crate_dirs(manifest: &Path) -> Result<Vec<(String, String, PathBuf)>, InputsError> {
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let json = run_json(
        Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(manifest),
        dir,
    )?;
    let packages = json["packages"].as_array().cloned().unwrap_or_default();
    Ok(packages
        .iter()
        .filter_map(|p| {
            let manifest = Path::new(p["manifest_path"].as_str()?);
            Some((
                p["name"].as_str()?.to_string(),
                p["version"].as_str()?.to_string(),
                manifest.parent()?.to_path_buf(),
            ))
        })
        .collect())
}
