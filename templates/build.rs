//! Rebuilds the crate when a template changes: `include_dir!` alone does not tell Cargo which
//! files it read, so every plugin directory is declared here (Cargo scans directories
//! recursively for changes).

fn main() {
    for entry in std::fs::read_dir(".").expect("the crate directory is readable") {
        let path = entry.expect("directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() && !matches!(name, "src" | "target") && !name.starts_with('.') {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    // The crate directory too, so that a new plugin directory (absent from the list above
    // when the script last ran) is noticed.
    println!("cargo:rerun-if-changed=.");
    println!("cargo:rerun-if-changed=build.rs");
}
