//! Plugins installed from a catalog: their record on disk, and checking them.
//!
//! An installed plugin lives where every external plugin lives,
//! `<plugins dir>/<name>/<version>/<name>`, with an [`InstallRecord`] beside it in
//! [`RECORD_FILE`]: the SHA-256 it was installed with, its source, the catalog and artefact it
//! came from, and the environment variables it may receive. [`read_record`] reads one;
//! [`sha256_file`] hashes an executable the way install and `verify` do.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The record's file name, next to the executable.
pub const RECORD_FILE: &str = "install.json";

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The record.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file does not parse.
    #[error("{}: {message}", .path.display())]
    Parse {
        /// The record.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
}

/// What `plugins install` recorded about a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstallRecord {
    /// The plugin key, `name/version`.
    pub key: String,
    /// Where its source lives.
    pub source: String,
    /// The SHA-256 of the executable, checked before every run.
    pub sha256: String,
    /// The artefact's target (`any` or a triple).
    pub target: String,
    /// Where the artefact was fetched from.
    pub url: String,
    /// The catalog index it was listed in.
    pub catalog: String,
    /// Variables it receives beyond `PATH`, `HOME` and `LANG`.
    #[serde(default)]
    pub env: Vec<String>,
}

/// The record in `version_dir`, if there is one.
pub fn read_record(version_dir: &Path) -> Option<Result<InstallRecord, RecordError>> {
    let path = version_dir.join(RECORD_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(source) => return Some(Err(RecordError::Read { path, source })),
    };
    Some(
        serde_json::from_str::<InstallRecord>(&text)
            .map_err(|e| RecordError::Parse {
                path: path.clone(),
                message: e.to_string(),
            })
            .and_then(|r| {
                if super::index::is_sha256(&r.sha256) {
                    Ok(r)
                } else {
                    Err(RecordError::Parse {
                        path,
                        message: format!("field \"sha256\": {:?} is not a SHA-256", r.sha256),
                    })
                }
            }),
    )
}

/// The SHA-256 of `bytes`, in lowercase hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The SHA-256 of the file at `path`, in lowercase hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_reads_records() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), b"abc").unwrap();
        assert_eq!(
            sha256_file(&dir.path().join("f")).unwrap(),
            sha256_hex(b"abc")
        );
        assert!(read_record(dir.path()).is_none());
        fs::write(dir.path().join(RECORD_FILE), r#"{"key":"a.io/v1"}"#).unwrap();
        let err = read_record(dir.path()).unwrap().unwrap_err().to_string();
        assert!(err.contains("missing field `source`"), "{err}");
    }
}
