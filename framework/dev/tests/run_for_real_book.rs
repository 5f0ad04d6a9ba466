//! Runs every `$ ` command of the chapter "Run your service for real"
//! (`book/src/run-for-real.md`), in order, in one bash session with the freshly built
//! `mni-dev` and kubectl on PATH, and checks that the lines shown under the commands appear in
//! what they print, in order (whitespace-insensitive).

use std::path::Path;
use std::process::Command;

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
    let mut script = String::from("set -euo pipefail\n");
    let mut expected = Vec::new();
    let mut in_console = false;
    for line in chapter.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        let Some(cmd) = line.strip_prefix("$ ") else {
            expected.push(normalize(line));
            continue;
        };
        script.push_str(cmd);
        script.push('\n');
        if cmd.starts_with("mni-dev up") && cmd.ends_with('&') {
            script.push_str(
                "for _ in $(seq 1 400); do [ -f .mni/dev/kubeconfig ] && break; sleep 0.05; done\n",
            );
        }
    }
    // SIGTERM: each mni-dev stops its pods' processes and containers before it exits.
    script.push_str("kill $(jobs -p)\nwait\n");
    assert!(
        expected.len() >= 4,
        "the chapter shows output: {expected:?}"
    );
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mni-dev"))
        .parent()
        .expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = Command::new("timeout")
        // A chapter that hangs fails (with what it printed) instead of stalling the suite:
        // `timeout` stops the script and every job it started (one process group).
        .args(["--kill-after=10s", "900s", "bash", "-c"])
        .arg(&script)
        .current_dir(tmp.path())
        .env("PATH", path)
        .env("HOME", tmp.path())
        // The chapter compiles a program with rustc: rustup's proxy finds its toolchains
        // through RUSTUP_HOME, not the HOME set above.
        .env("RUSTUP_HOME", rustup_home())
        .env("RUST_LOG", "warn")
        .env_remove("KUBECONFIG")
        .env_remove("MNI_IMAGE_REGISTRY")
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "script failed:\n{script}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let printed: Vec<String> = stdout.lines().map(normalize).collect();
    let mut rest = printed.iter();
    for line in &expected {
        assert!(
            rest.any(|p| p == line),
            "{line:?} should be printed (in the chapter's order):\n{stdout}\nstderr:\n{stderr}"
        );
    }
}
