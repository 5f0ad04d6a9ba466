//! Runs every `$ ` command of the chapter "Run your service for real"
//! (`book/src/run-for-real.md`), in order, in one bash session with the freshly built
//! `mni-dev` and kubectl on PATH, and checks that the lines shown under the commands appear in
//! what they print, in order (whitespace-insensitive).

use std::path::Path;

use mni_chapter::Session;

fn normalize(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn rustup_home() -> std::path::PathBuf {
    std::env::var_os("RUSTUP_HOME").map_or_else(
        || Path::new(&std::env::var_os("HOME").unwrap_or_default()).join(".rustup"),
        Into::into,
    )
}

#[test]
fn run_for_real_chapter_commands_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let chapter = std::fs::read_to_string(root.join("book/src/run-for-real.md")).expect("chapter");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mni-dev"))
        .parent()
        .expect("bin dir");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut session = Session::new(tmp.path())
        .path_first(bin_dir)
        .env("HOME", tmp.path())
        // The chapter compiles a program with rustc: rustup's proxy finds its toolchains
        // through RUSTUP_HOME, not the HOME set above.
        .env("RUSTUP_HOME", rustup_home())
        .env("RUST_LOG", "warn")
        .env_remove("KUBECONFIG")
        .env_remove("MNI_IMAGE_REGISTRY");
    let mut expected = Vec::new();
    for step in mni_chapter::console_steps(&chapter) {
        expected.extend(step.expected.iter().map(|l| normalize(l)));
        session.push_command(&step.command);
    }
    // SIGTERM: each mni-dev stops its pods' processes and containers before it exits.
    session.push_line("kill $(jobs -p)");
    session.push_line("wait");
    assert!(
        expected.len() >= 4,
        "the chapter shows output: {expected:?}"
    );
    let out = session.run().expect("bash");
    assert!(out.success(), "script failed:\n{}\n{out}", session.script());
    assert!(out.stragglers.is_empty(), "{out}");
    let (stdout, stderr) = (&out.stdout, &out.stderr);
    let printed: Vec<String> = stdout.lines().map(normalize).collect();
    let mut rest = printed.iter();
    for line in &expected {
        assert!(
            rest.any(|p| p == line),
            "{line:?} should be printed (in the chapter's order):\n{stdout}\nstderr:\n{stderr}"
        );
    }
}
