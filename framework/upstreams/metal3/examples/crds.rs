//! Writes the CRDs of `mni-metal3` to `config/crd/bases/<group>_<plural>.yaml`, where the
//! `checked_in_crds_match_the_code` test compares them with the code:
//!
//! ```text
//! cargo run -q -p mni-metal3 --example crds
//! ```

fn main() -> anyhow::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/crd/bases");
    std::fs::create_dir_all(&dir)?;
    for crd in mni_metal3::crds() {
        let file = dir.join(format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural));
        std::fs::write(&file, serde_yaml::to_string(&crd)?)?;
        println!("wrote {}", file.display());
    }
    Ok(())
}
