//! The committed generated code is what `cargo xtask codegen` produces now: the generators
//! run in-process (fetching their inputs as the command does: `go mod download`, `cargo
//! metadata`) and every file is compared with the repository's.

#[test]
fn generated_code_is_up_to_date() {
    let inputs = xtask::codegen::Inputs::locate().expect("the codegen inputs are available");
    let files = xtask::codegen::generate(&inputs).expect("the generators run");
    assert!(files.len() > 1, "both generators produce files");
    let drifted = xtask::codegen::drifted(&files).expect("the committed files are readable");
    assert!(
        drifted.is_empty(),
        "generated files out of date: {}; run `cargo xtask codegen` and commit the result",
        drifted
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}
