//! The image registry of the process runtime: which local executable an image name stands
//! for. There is no image to pull; a YAML (or JSON) file maps each image to its entrypoint:
//!
//! ```yaml
//! # image: the executable (the image's ENTRYPOINT)
//! ghcr.io/acme/billing:0.1.0: /home/me/billing/target/debug/billing
//! # or, in full: entrypoint, default arguments (CMD) and working directory
//! busybox:
//!   entrypoint: [/bin/sh, -c]
//!   cmd: ["echo hello"]
//!   workingDir: /tmp
//! ```
//!
//! An image is looked up by its full name, then without its tag or digest (`billing` maps
//! `billing:0.2.0` too). The file is read afresh for every container start, so an entry
//! added while a pod waits in `ImagePullBackOff` is picked up at the next retry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Errors of the image registry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The registry file could not be read.
    #[error("reading the image registry {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The registry file is not a map of images.
    #[error("parsing the image registry {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_yaml::Error,
    },
    /// An entry has an empty entrypoint.
    #[error("image registry {path}: entry {image:?} has no entrypoint")]
    Empty {
        /// The file.
        path: PathBuf,
        /// The image.
        image: String,
    },
    /// No entry maps the image.
    #[error(
        "image {image:?} is not in the image registry {path}; add a line `{image}: /path/to/executable`"
    )]
    NotFound {
        /// The file.
        path: PathBuf,
        /// The image.
        image: String,
    },
}

/// What an image runs: its entrypoint, default arguments and working directory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Image {
    /// The executable and its leading arguments (Docker's `ENTRYPOINT`).
    pub entrypoint: Vec<String>,
    /// Default arguments (Docker's `CMD`).
    pub cmd: Vec<String>,
    /// The working directory when the container names none.
    pub working_dir: Option<String>,
    /// The user the image runs as (Docker's `USER`: a name or `uid[:gid]`), if it says.
    pub user: Option<String>,
    /// The image's id in the runtime's store (`sha256:…`), if it has one.
    pub id: Option<String>,
}

impl Image {
    /// The command line of `container` as Kubernetes composes it with the image's: `command`
    /// replaces the entrypoint (and drops the image's arguments), `args` replace `cmd`.
    pub fn argv(&self, command: Option<&[String]>, args: Option<&[String]>) -> Vec<String> {
        match (command, args) {
            (Some(c), Some(a)) => c.iter().chain(a).cloned().collect(),
            (Some(c), None) => c.to_vec(),
            (None, Some(a)) => self.entrypoint.iter().chain(a).cloned().collect(),
            (None, None) => self.entrypoint.iter().chain(&self.cmd).cloned().collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Entry {
    Path(String),
    Argv(Vec<String>),
    Full {
        entrypoint: Entrypoint,
        #[serde(default)]
        cmd: Vec<String>,
        #[serde(default, rename = "workingDir")]
        working_dir: Option<String>,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Entrypoint {
    Path(String),
    Argv(Vec<String>),
}

/// The registry file at a path.
#[derive(Debug, Clone)]
pub struct Registry {
    path: PathBuf,
}

impl Registry {
    /// The registry kept in `path` (a missing file is an empty registry).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What `image` runs, reading the file now.
    pub fn resolve(&self, image: &str) -> Result<Image, Error> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(Error::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let entries: BTreeMap<String, Entry> = if text.trim().is_empty() {
            BTreeMap::new()
        } else {
            serde_yaml::from_str(&text).map_err(|source| Error::Parse {
                path: self.path.clone(),
                source,
            })?
        };
        let bare = strip_tag(image);
        let entry = entries
            .get(image)
            .or_else(|| entries.get(bare))
            .ok_or_else(|| Error::NotFound {
                path: self.path.clone(),
                image: image.to_string(),
            })?;
        let img = match entry {
            Entry::Path(p) => Image {
                entrypoint: vec![p.clone()],
                ..Image::default()
            },
            Entry::Argv(v) => Image {
                entrypoint: v.clone(),
                ..Image::default()
            },
            Entry::Full {
                entrypoint,
                cmd,
                working_dir,
            } => Image {
                entrypoint: match entrypoint {
                    Entrypoint::Path(p) => vec![p.clone()],
                    Entrypoint::Argv(v) => v.clone(),
                },
                cmd: cmd.clone(),
                working_dir: working_dir.clone(),
                ..Image::default()
            },
        };
        if img.entrypoint.first().is_none_or(String::is_empty) {
            return Err(Error::Empty {
                path: self.path.clone(),
                image: image.to_string(),
            });
        }
        Ok(img)
    }
}

/// The image name without its `:tag` or `@digest`.
fn strip_tag(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        // A colon after the last slash is a tag; before it, a registry port.
        Some(i) if !image[i..].contains('/') => &image[..i],
        _ => image,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(text: &str) -> (tempfile::TempDir, Registry) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("images.yaml");
        std::fs::write(&path, text).expect("write");
        (dir, Registry::new(path))
    }

    #[test]
    fn images_resolve_by_name_then_without_tag() {
        let (_d, r) = registry(
            "app:1.0: /bin/app\nlocalhost:5000/tool: [/bin/sh, -c]\nsh:\n  entrypoint: /bin/sh\n  cmd: [-c, 'echo hi']\n  workingDir: /tmp\n",
        );
        assert_eq!(r.resolve("app:1.0").expect("app").entrypoint, ["/bin/app"]);
        assert!(matches!(r.resolve("app:2.0"), Err(Error::NotFound { .. })));
        let tool = r.resolve("localhost:5000/tool:latest").expect("tool");
        assert_eq!(tool.entrypoint, ["/bin/sh", "-c"]);
        let sh = r.resolve("sh@sha256:abc").expect("sh");
        assert_eq!(sh.cmd, ["-c", "echo hi"]);
        assert_eq!(sh.working_dir.as_deref(), Some("/tmp"));
    }

    #[test]
    fn unknown_images_name_the_file_and_the_fix() {
        let (_d, r) = registry("");
        let e = r.resolve("nginx:1.27").expect_err("unknown").to_string();
        assert!(
            e.contains("\"nginx:1.27\" is not in the image registry"),
            "{e}"
        );
        assert!(e.contains("nginx:1.27: /path/to/executable"), "{e}");
    }

    #[test]
    fn command_and_args_compose_as_kubernetes_does() {
        let img = Image {
            entrypoint: vec!["/e".into()],
            cmd: vec!["c".into()],
            ..Image::default()
        };
        let s = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(img.argv(None, None), s(&["/e", "c"]));
        assert_eq!(img.argv(None, Some(&s(&["a"]))), s(&["/e", "a"]));
        assert_eq!(img.argv(Some(&s(&["/x"])), None), s(&["/x"]));
        assert_eq!(
            img.argv(Some(&s(&["/x"])), Some(&s(&["a"]))),
            s(&["/x", "a"])
        );
    }
}
