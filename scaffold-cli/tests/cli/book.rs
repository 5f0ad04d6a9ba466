//! The book chapter "Writing plugins" (`book/src/writing-plugins.md`): every `$ ` line of its
//! ```console blocks runs, in order, in one bash session in a temporary directory, with this
//! build's `mni-scaffold` on PATH, `MNI_PLUGINS_PATH` an empty plugins directory (the chapter
//! installs the sample plugin there) and `MNI_REPO` this checkout; the output the chapter shows
//! under a command must be what it prints (stdout and stderr together).
//!
//! In shown output, a line `...` stands for any number of lines and `...` inside a line for any
//! text (paths of the temporary directory and of the checkout).

use std::path::Path;
use std::process::Command;

/// One `$ ` command of the chapter and the output shown under it (empty: not checked).
#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
}

/// The `$ ` lines of the ```console blocks, in order, with the lines shown under each.
fn steps(chapter: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut in_console = false;
    for line in chapter.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
        } else if in_console {
            match line.strip_prefix("$ ") {
                Some(command) => steps.push(Step {
                    command: command.to_owned(),
                    expected: Vec::new(),
                }),
                None => {
                    if let Some(step) = steps.last_mut() {
                        step.expected.push(line.to_owned());
                    }
                }
            }
        }
    }
    steps
}

/// Whether `line` matches `pattern`, where `...` matches any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("...");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `actual` matches `expected`, where a line `...` matches any number of lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && matches(rest, more)),
    }
}

#[test]
fn patterns() {
    assert!(line_matches("--template .../x: y", "--template /a/b/x: y"));
    assert!(line_matches("thinking...", "thinking..."));
    assert!(!line_matches("a...c", "abd"));
    assert!(!line_matches("abc", "abcd"));
    let expected: Vec<String> = ["a (...)", "...", "z"].map(String::from).to_vec();
    assert!(matches(&expected, &["a (p)", "b", "c", "z"]));
    assert!(matches(&expected, &["a (p)", "z"]));
    assert!(!matches(&expected, &["a (p)", "y"]));
}

#[test]
fn writing_plugins_chapter_commands_run() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repo = repo.canonicalize().expect("the checkout");
    let chapter = std::fs::read_to_string(repo.join("book/src/writing-plugins.md"))
        .expect("the chapter exists");
    let steps = steps(&chapter);
    assert!(steps.len() >= 20, "{steps:#?}");

    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("work");
    let plugins = tmp.path().join("plugins");
    std::fs::create_dir_all(&work).expect("mkdir work");
    std::fs::create_dir_all(&plugins).expect("mkdir plugins");
    // One marker line before each command, so the output can be split per command.
    let marker = |i: usize| format!("@@mni-book-step-{i}@@");
    let mut script = String::from("set -euo pipefail\nexec 2>&1\n");
    for (i, step) in steps.iter().enumerate() {
        script.push_str(&format!("echo '{}'\n{}\n", marker(i), step.command));
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_mni-scaffold"))
        .parent()
        .expect("bin dir")
        .to_owned();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = Command::new("timeout")
        // A chapter that hangs fails (with what it printed) instead of stalling the suite:
        // `timeout` stops the script and every job it started (one process group).
        .args(["--kill-after=10s", "900s", "bash", "-c"])
        .arg(&script)
        .current_dir(&work)
        .env_clear()
        .env("PATH", path)
        .env("HOME", tmp.path())
        .env("USER", "reader")
        .env("MNI_PLUGINS_PATH", &plugins)
        .env("MNI_REPO", &repo)
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the chapter's commands failed ({}):\n{stdout}",
        out.status
    );

    for (i, step) in steps.iter().enumerate() {
        let start = stdout
            .find(&marker(i))
            .unwrap_or_else(|| panic!("step {i} did not run: {stdout}"))
            + marker(i).len()
            + 1;
        let end = stdout[start..]
            .find(&marker(i + 1))
            .map_or(stdout.len(), |e| start + e);
        let actual: Vec<&str> = stdout[start..end].lines().collect();
        assert!(
            step.expected.is_empty() || matches(&step.expected, &actual),
            "`{}` printed:\n{}\nbut the chapter shows:\n{}",
            step.command,
            actual.join("\n"),
            step.expected.join("\n")
        );
    }
    // What the chapter says happened, happened.
    let crew = work.join("crew");
    assert!(crew.join("docs/captain.md").is_file());
    assert!(crew.join("services/billing/src/main.rs").is_file());
    assert!(!work.join("escape.txt").exists());
}
