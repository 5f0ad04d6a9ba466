//! Regenerates `services/catalog/` (see `mni_plugin_olm::reference`).

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = repo.join("services/catalog");
    mni_plugin_olm::reference::regenerate(&repo, &out)?;
    println!("regenerated {}", out.display());
    Ok(())
}
