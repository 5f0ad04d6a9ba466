//! Regenerates every golden project (under `tests/golden/`, and the reference services under
//! `services/`) from its recipe in `mni_tests::GOLDEN`, replacing the committed tree (a `Cargo.lock` and `target/` left by a
//! build are kept). Run it after a deliberate change to a plugin or template, review the diff,
//! and commit it.

use std::process::ExitCode;

fn main() -> ExitCode {
    for golden in mni_tests::GOLDEN {
        let dir = mni_tests::golden_dir(golden.name);
        if let Err(e) = regenerate(golden, &dir) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        println!("regenerated {} ({})", golden.relative_dir(), golden.about);
    }
    ExitCode::SUCCESS
}

fn regenerate(
    golden: &mni_tests::Golden,
    dir: &std::path::Path,
) -> Result<(), mni_tests::GoldenError> {
    // Generate aside, then swap, so a failing recipe leaves the committed tree as it was.
    let staging = dir.with_extension("regen");
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| mni_tests::GoldenError::Io { path, source }
    };
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
    }
    mni_tests::generate(golden, &staging)?;
    if dir.exists() {
        for kept in mni_tests::IGNORED {
            let from = dir.join(kept);
            if from.exists() {
                std::fs::rename(&from, staging.join(kept)).map_err(io(&from))?;
            }
        }
        std::fs::remove_dir_all(dir).map_err(io(dir))?;
    }
    std::fs::rename(&staging, dir).map_err(io(dir))?;
    Ok(())
}
