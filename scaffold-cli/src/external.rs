//! External plugins: discovery on disk and the JSON-over-stdio protocol.
//!
//! Start with [`discover`], which finds executables at `<dir>/<name>/<version>/<name>` (the
//! directory is `$MNI_PLUGINS_PATH`, by default `${XDG_CONFIG_HOME:-$HOME/.config}/mni/plugins`),
//! then [`ExternalPlugin::scaffold`], which sends a Kubebuilder-compatible `PluginRequest`
//! (`apiVersion: v1alpha1`) and applies the `PluginResponse`. [`ExternalPlugin::describe`] asks a
//! plugin for a subcommand's `metadata` and `flags`, naming the subcommand in `args` the way
//! Kubebuilder does (`--init`, `--api`, `--webhook`, `--edit`, and mNi's `--service`).
//!
//! **Sandbox.** A plugin runs with a cleared environment (only `PATH`, `HOME` and `LANG` are
//! passed on, plus the variables its catalog entry or the user's config allows it by name, see
//! [`Runner::with_allowed`]), the project directory as its working directory, in its own process
//! group, under a deadline and an output cap (the `process` module). A plugin installed from a
//! catalog (an `install.json` record beside it, see [`crate::catalog`]) is hashed before every
//! run and refused when its SHA-256 is not the one it was installed with. Its response is refused as a whole when
//! any path is absolute, contains `..`, goes into `.git/` or through a symbolic link out of the
//! project (the `sandbox` module), when it exits non-zero, prints something that is not a
//! response, or answers `error: true`. Every such error quotes the plugin's stderr or
//! `errorMsgs`; nothing of the response reaches the Universe, so nothing is written.
//! `error: true` counts as bad input (exit code 2: the plugin refused what the user asked
//! for); every other failure is a plugin failure (exit code 1).

mod process;
mod sandbox;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use mni_plugin::external::{Command, PluginRequest, PluginResponse};
use mni_plugin::{
    Context, FlagSpec, PROJECT_FILE, PluginKey, ProjectConfig, ProjectError, Subcommand,
    SubcommandMetadata,
};

pub use process::{Limits, ProcessError};
pub use sandbox::SandboxError;

use process::quote;

/// The default cap on a response: 64 MiB.
pub const MAX_RESPONSE: usize = 64 * 1024 * 1024;

/// Why an external plugin failed. Every variant names the plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExternalError {
    /// Running the process failed (start, timeout, oversized output).
    #[error("external plugin {key}: {source}")]
    Process {
        /// The plugin.
        key: PluginKey,
        /// The cause.
        #[source]
        source: ProcessError,
    },
    /// The process exited unsuccessfully.
    #[error("external plugin {key} exited with {status}{}", quote(.stderr))]
    Exit {
        /// The plugin.
        key: PluginKey,
        /// The exit status, as printed.
        status: String,
        /// Its stderr.
        stderr: String,
    },
    /// The output is not a valid response.
    #[error("external plugin {key} sent an invalid response: {message}{}", quote(.stderr))]
    Protocol {
        /// The plugin.
        key: PluginKey,
        /// What is wrong.
        message: String,
        /// Its stderr.
        stderr: String,
    },
    /// The plugin answered `error: true`.
    #[error("external plugin {key} reported an error: {}{}", .messages.join("; "), quote(.stderr))]
    Reported {
        /// The plugin.
        key: PluginKey,
        /// Its `errorMsgs`.
        messages: Vec<String>,
        /// Its stderr.
        stderr: String,
    },
    /// A response path breaks the sandbox.
    #[error("external plugin {key} was refused: {source}")]
    Sandbox {
        /// The plugin.
        key: PluginKey,
        /// The offending path.
        #[source]
        source: SandboxError,
    },
    /// An installed plugin's executable no longer has the SHA-256 it was installed with.
    #[error(
        "external plugin {key} was refused: {} has SHA-256 {actual}, but it was installed with {expected}; reinstall it (`mni-scaffold plugins install --force`)",
        .path.display()
    )]
    Tampered {
        /// The plugin.
        key: PluginKey,
        /// The executable.
        path: PathBuf,
        /// The installed checksum.
        expected: String,
        /// What it hashes to now (or why it cannot be read).
        actual: String,
    },
    /// The plugin rewrote PROJECT into something that does not parse.
    #[error("external plugin {key} wrote an invalid {PROJECT_FILE}: {source}")]
    Project {
        /// The plugin.
        key: PluginKey,
        /// The parse error.
        #[source]
        source: ProjectError,
    },
}

impl ExternalError {
    /// Whether the CLI should exit with 2 (the plugin refused the user's input).
    #[must_use]
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Self::Reported { .. })
    }
}

/// The variables every external plugin receives.
pub const BASE_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

/// How external plugins are run: the environment they inherit and their [`Limits`].
#[derive(Debug, Clone)]
pub struct Runner {
    vars: Vec<(OsString, OsString)>,
    allowed: BTreeMap<String, Vec<String>>,
    limits: Limits,
}

impl Runner {
    /// Passes on `PATH`, `HOME` and `LANG` from `vars`, and to each plugin the variables its
    /// install record allows (others are dropped).
    #[must_use]
    pub fn new(vars: impl IntoIterator<Item = (OsString, OsString)>, limits: Limits) -> Self {
        Self {
            vars: vars.into_iter().collect(),
            allowed: BTreeMap::new(),
            limits,
        }
    }

    /// Also passes the named variables to the plugins `allowed` names, by key (`name/version`)
    /// or by name (every version).
    #[must_use]
    pub fn with_allowed(mut self, allowed: BTreeMap<String, Vec<String>>) -> Self {
        self.allowed = allowed;
        self
    }

    /// The environment `plugin` runs with.
    #[must_use]
    pub fn env_for(&self, plugin: &ExternalPlugin) -> Vec<(OsString, OsString)> {
        let key = plugin.key.to_string();
        let extra = [key.as_str(), plugin.key.name()]
            .into_iter()
            .filter_map(|k| self.allowed.get(k))
            .flatten()
            .chain(&plugin.env);
        let names: Vec<&str> = BASE_ENV
            .iter()
            .copied()
            .chain(extra.map(String::as_str))
            .collect();
        self.vars
            .iter()
            .filter(|(k, _)| names.iter().any(|n| k == n))
            .cloned()
            .collect()
    }
}

/// An executable speaking the external-plugin protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalPlugin {
    /// Its key, `<name>/<version>` from its directory.
    pub key: PluginKey,
    /// The executable.
    pub path: PathBuf,
    /// The SHA-256 it was installed with from a catalog (checked before each run).
    pub sha256: Option<String>,
    /// Where its source lives, when installed from a catalog.
    pub source: Option<String>,
    /// Variables it receives beyond `PATH`, `HOME` and `LANG`, from its install record.
    pub env: Vec<String>,
}

impl ExternalPlugin {
    /// A plugin at `path` with no install record.
    #[must_use]
    pub fn new(key: PluginKey, path: PathBuf) -> Self {
        Self {
            key,
            path,
            sha256: None,
            source: None,
            env: Vec::new(),
        }
    }
}

/// The plugins under `dir`, ordered by key, and one warning per entry that is not a plugin.
#[must_use]
pub fn discover(dir: &Path) -> (Vec<ExternalPlugin>, Vec<String>) {
    let mut plugins = Vec::new();
    let mut warnings = Vec::new();
    for name_dir in sorted_dirs(dir) {
        let Some(name) = name_dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        for version_dir in sorted_dirs(&name_dir) {
            let version = version_dir
                .file_name()
                .and_then(|v| v.to_str())
                .unwrap_or_default();
            let path = version_dir.join(name);
            let executable = fs::metadata(&path)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if !executable {
                warnings.push(format!(
                    "ignoring {}: no executable {name} inside",
                    version_dir.display()
                ));
                continue;
            }
            let key = match format!("{name}/{version}").parse::<PluginKey>() {
                Ok(key) => key,
                Err(e) => {
                    warnings.push(format!("ignoring {}: {e}", path.display()));
                    continue;
                }
            };
            let mut plugin = ExternalPlugin::new(key, path);
            match crate::catalog::installed::read_record(&version_dir) {
                None => {}
                Some(Ok(record)) => {
                    plugin.sha256 = Some(record.sha256);
                    plugin.source = Some(record.source);
                    plugin.env = record.env;
                }
                Some(Err(e)) => {
                    warnings.push(format!("ignoring {}: {e}", plugin.path.display()));
                    continue;
                }
            }
            plugins.push(plugin);
        }
    }
    plugins.sort_by(|a, b| a.key.cmp(&b.key));
    (plugins, warnings)
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The `args` naming a subcommand in `flags` and `metadata` requests.
fn subcommand_arg(sub: Subcommand) -> &'static str {
    match sub {
        Subcommand::Init => "--init",
        Subcommand::CreateApi => "--api",
        Subcommand::CreateWebhook => "--webhook",
        Subcommand::Edit => "--edit",
        Subcommand::NewService => "--service",
    }
}

impl ExternalPlugin {
    /// Sends `request` and returns the response, checked for exit status, shape and `error`.
    pub fn call(
        &self,
        runner: &Runner,
        cwd: &Path,
        request: &PluginRequest,
    ) -> Result<PluginResponse, ExternalError> {
        let input = serde_json::to_vec(request).map_err(|e| ExternalError::Protocol {
            key: self.key.clone(),
            message: format!("cannot encode the request: {e}"),
            stderr: String::new(),
        })?;
        self.check_integrity()?;
        let env = runner.env_for(self);
        let output =
            process::run(&self.path, cwd, &env, input, runner.limits).map_err(|source| {
                ExternalError::Process {
                    key: self.key.clone(),
                    source,
                }
            })?;
        if !output.status.success() {
            return Err(ExternalError::Exit {
                key: self.key.clone(),
                status: output.status.to_string(),
                stderr: output.stderr,
            });
        }
        let protocol = |message: String| ExternalError::Protocol {
            key: self.key.clone(),
            message,
            stderr: output.stderr.clone(),
        };
        let text = std::str::from_utf8(&output.stdout)
            .map_err(|_| protocol("stdout is not UTF-8".to_owned()))?;
        if text.trim().is_empty() {
            return Err(protocol("stdout is empty".to_owned()));
        }
        let response = PluginResponse::from_json(text).map_err(|e| protocol(e.to_string()))?;
        if response.error {
            return Err(ExternalError::Reported {
                key: self.key.clone(),
                messages: response.error_msgs,
                stderr: output.stderr,
            });
        }
        Ok(response)
    }

    /// For a plugin installed from a catalog: whether its executable still has the SHA-256 it
    /// was installed with.
    pub fn check_integrity(&self) -> Result<(), ExternalError> {
        let Some(expected) = &self.sha256 else {
            return Ok(());
        };
        let actual = crate::catalog::installed::sha256_file(&self.path)
            .unwrap_or_else(|e| format!("<unreadable: {e}>"));
        if &actual == expected {
            Ok(())
        } else {
            Err(ExternalError::Tampered {
                key: self.key.clone(),
                path: self.path.clone(),
                expected: expected.clone(),
                actual,
            })
        }
    }

    /// Asks for the `metadata` and `flags` of `sub`.
    pub fn describe(
        &self,
        runner: &Runner,
        cwd: &Path,
        sub: Subcommand,
    ) -> Result<(SubcommandMetadata, Vec<FlagSpec>), ExternalError> {
        let mut request = PluginRequest::new(Command::Metadata);
        request.args = vec![subcommand_arg(sub).to_owned()];
        let metadata = self.call(runner, cwd, &request)?.metadata.into();
        Ok((metadata, self.flags(runner, cwd, sub)?))
    }

    /// Asks for the `flags` of `sub` (what the CLI accepts on the plugin's behalf).
    pub fn flags(
        &self,
        runner: &Runner,
        cwd: &Path,
        sub: Subcommand,
    ) -> Result<Vec<FlagSpec>, ExternalError> {
        let mut request = PluginRequest::new(Command::Flags);
        request.args = vec![subcommand_arg(sub).to_owned()];
        Ok(self
            .call(runner, cwd, &request)?
            .flags
            .into_iter()
            .map(FlagSpec::from)
            .collect())
    }

    /// Runs `sub` with `args` over `cx` for the project at `root` (the working directory). On
    /// any error `cx` is left unchanged.
    pub fn scaffold(
        &self,
        runner: &Runner,
        root: &Path,
        sub: Subcommand,
        args: Vec<String>,
        cx: &mut Context<'_>,
    ) -> Result<(), ExternalError> {
        let project = |source| ExternalError::Project {
            key: self.key.clone(),
            source,
        };
        let mut request = PluginRequest::new(Command::Scaffold(sub));
        request.args = args;
        request.universe = cx.universe.to_map();
        request.plugin_chain = cx.chain.iter().map(ToString::to_string).collect();
        request.config = Some(cx.config.to_json().map_err(project)?);
        let response = self.call(runner, root, &request)?;

        let mut files = BTreeMap::new();
        for (path, contents) in response.universe {
            let path =
                sandbox::check_path(root, &path).map_err(|source| ExternalError::Sandbox {
                    key: self.key.clone(),
                    source,
                })?;
            files.insert(path, contents);
        }
        let new_config = match files.remove(PROJECT_FILE) {
            Some(text) if request.universe.get(PROJECT_FILE) != Some(&text) => {
                Some(ProjectConfig::from_yaml(&text).map_err(project)?)
            }
            _ => None,
        };
        // Paths are checked, so writes with Overwrite cannot fail; stage them on a copy anyway
        // so that `cx` stays untouched if one does.
        let mut universe = cx.universe.clone();
        universe
            .merge_map(files, mni_plugin::IfExists::Overwrite)
            .map_err(|e| ExternalError::Protocol {
                key: self.key.clone(),
                message: e.to_string(),
                stderr: String::new(),
            })?;
        *cx.universe = universe;
        if let Some(config) = new_config {
            *cx.config = config;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_plugins_by_layout() {
        let dir = tempfile::tempdir().unwrap();
        let add = |rel: &str, mode: u32| {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "#!/bin/sh\n").unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        };
        add("docs.acme.io/v1/docs.acme.io", 0o755);
        add("docs.acme.io/v2-alpha/docs.acme.io", 0o755);
        add("plain/v1/plain", 0o644);
        add("Bad/v1/Bad", 0o755);
        let (plugins, warnings) = discover(dir.path());
        let keys: Vec<String> = plugins.iter().map(|p| p.key.to_string()).collect();
        assert_eq!(keys, ["docs.acme.io/v1", "docs.acme.io/v2-alpha"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(discover(&dir.path().join("missing")).0.is_empty());
    }
}
