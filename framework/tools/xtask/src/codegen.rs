//! `cargo xtask codegen`: regenerates every committed generated file, or (`--check`) says
//! which ones differ from what the generators produce now.
//!
//! Generators return [`GeneratedFile`]s (path relative to the repository root, contents); the
//! contents are built with `quote`, printed with `prettyplease` and formatted with `rustfmt`,
//! so `cargo fmt --check` agrees with them. The generators:
//!
//! - [`protobuf`]: the protobuf field tables of `mni-protobuf`;
//! - [`builtin_schema`]: the merge keys and list types of built-in kinds (`mni-builtin-schema`).
//!
//! Their inputs are located (and downloaded on first use) by [`inputs`].

pub mod builtin_schema;
pub mod inputs;
pub mod protobuf;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proc_macro2::TokenStream;

pub use inputs::Inputs;

/// Errors rendering generated code.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The tokens a generator built are not valid Rust (a generator bug).
    #[error("generated tokens for {path} do not parse: {source}")]
    Tokens {
        /// The file being generated.
        path: PathBuf,
        /// Why.
        #[source]
        source: syn::Error,
    },
    /// `rustfmt` could not run or failed.
    #[error("rustfmt failed on {path}: {message}")]
    Rustfmt {
        /// The file being generated.
        path: PathBuf,
        /// rustfmt's error output, or why it did not start.
        message: String,
    },
}

/// Errors of `cargo xtask codegen`.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// An input could not be located or downloaded.
    #[error(transparent)]
    Inputs(#[from] inputs::InputsError),
    /// The protobuf tables could not be generated.
    #[error(transparent)]
    Protobuf(#[from] protobuf::ProtobufError),
    /// The built-in schema table could not be generated.
    #[error(transparent)]
    BuiltinSchema(#[from] builtin_schema::BuiltinSchemaError),
    /// A generated file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// One generated file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// The path, relative to the repository root.
    pub path: PathBuf,
    /// The formatted contents.
    pub contents: String,
}

impl GeneratedFile {
    /// Renders `header` (module docs and `use`s, verbatim) followed by `items`, one blank line
    /// between items, and formats the whole with rustfmt.
    pub fn new(
        path: PathBuf,
        header: &str,
        items: impl IntoIterator<Item = TokenStream>,
    ) -> Result<Self, RenderError> {
        let mut text = header.to_string();
        for item in items {
            let file = syn::parse2::<syn::File>(item).map_err(|source| RenderError::Tokens {
                path: path.clone(),
                source,
            })?;
            text.push('\n');
            text.push_str(&prettyplease::unparse(&file));
        }
        let contents = rustfmt(&path, &text)?;
        Ok(Self { path, contents })
    }
}

/// Formats Rust source with `rustfmt --edition 2024` (the workspace's edition).
fn rustfmt(path: &Path, text: &str) -> Result<String, RenderError> {
    let error = |message: String| RenderError::Rustfmt {
        path: path.to_path_buf(),
        message,
    };
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| error(format!("cannot start rustfmt: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| error(e.to_string()))?;
    }
    let out = child.wait_with_output().map_err(|e| error(e.to_string()))?;
    if !out.status.success() {
        return Err(error(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    String::from_utf8(out.stdout).map_err(|e| error(e.to_string()))
}

/// The repository root (this crate is `framework/tools/xtask`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(3)
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Runs every generator, in memory.
pub fn generate(inputs: &Inputs) -> Result<Vec<GeneratedFile>, CodegenError> {
    let mut files = protobuf::generate(inputs)?;
    files.extend(builtin_schema::generate(inputs)?);
    Ok(files)
}

/// Generated files that exist on disk but no generator produces any more (stale tables).
fn stale(files: &[GeneratedFile]) -> Result<Vec<PathBuf>, CodegenError> {
    let dir = repo_root().join(protobuf::OUT_DIR);
    let entries = std::fs::read_dir(&dir).map_err(|source| CodegenError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut stale = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = Path::new(protobuf::OUT_DIR).join(&name);
        // The per-package tables of earlier versions (`gen_*.rs`) are stale once found.
        if name.starts_with("gen_") && name.ends_with(".rs") && !files.iter().any(|f| f.path == rel)
        {
            stale.push(rel);
        }
    }
    Ok(stale)
}

/// The generated files whose committed contents differ (or that are missing or stale),
/// relative to the repository root.
pub fn drifted(files: &[GeneratedFile]) -> Result<Vec<PathBuf>, CodegenError> {
    let root = repo_root();
    let mut out: Vec<PathBuf> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(root.join(&f.path)).ok().as_deref() != Some(&f.contents)
        })
        .map(|f| f.path.clone())
        .collect();
    out.extend(stale(files)?);
    Ok(out)
}

/// Writes the generated files (and removes stale ones); returns the paths that changed.
pub fn write(files: &[GeneratedFile]) -> Result<Vec<PathBuf>, CodegenError> {
    let root = repo_root();
    let changed = drifted(files)?;
    for path in stale(files)? {
        let full = root.join(&path);
        std::fs::remove_file(&full).map_err(|source| CodegenError::Io { path: full, source })?;
    }
    for file in files.iter().filter(|f| changed.contains(&f.path)) {
        let full = root.join(&file.path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).map_err(|source| CodegenError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&full, &file.contents)
            .map_err(|source| CodegenError::Io { path: full, source })?;
    }
    Ok(changed)
}
