//! Rebuilds `mni-dev` when the reference services' catalog changes: `include_dir!` embeds
//! `services/catalog/catalog` (see `src/with.rs`), and stable Rust does not track the files
//! a macro reads.

fn main() {
    println!("cargo:rerun-if-changed=../../services/catalog/catalog");
}
