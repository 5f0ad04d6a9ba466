//! What the book's chapter tests share besides [`mni_chapter`]: where Cargo put the
//! workspace's binaries.

use std::path::{Path, PathBuf};

/// The directory Cargo built the workspace's binaries into (`target/<profile>/`), seen from
/// the running test binary (`target/<profile>/deps/…`).
///
/// # Panics
///
/// If the running executable is not under `target/<profile>/deps`.
#[must_use]
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .to_path_buf()
}
