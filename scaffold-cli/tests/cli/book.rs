//! The book chapters "Writing plugins" (`book/src/writing-plugins.md`), "Validate and default
//! with webhooks" (`book/src/webhooks.md`), "Keep your project
//! current" (`book/src/keep-current.md`) and "Ship your service through OLM" (`book/src/olm.md`): every `$ ` line of their
//! ```console blocks runs, in order, in one bash session in a temporary directory, with this
//! build's `mni-scaffold` (and `mni-dev`) on PATH, `MNI_PLUGINS_PATH` an empty plugins directory (the chapter
//! installs the sample plugin there) and `MNI_REPO` this checkout; the output the chapter shows
//! under a command must be what it prints (stdout and stderr together).
//!
//! In shown output, a line `...` stands for any number of lines and `...` inside a line for any
//! text (paths of the temporary directory and of the checkout).

use std::path::Path;

use mni_chapter::{Session, console_steps};

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

/// Runs every `$ ` line of the chapter's ```console blocks, in order, in one bash session in
/// `<tmp>/work`, checking the output shown under each; returns the temporary directory.
fn run_chapter(chapter: &str, min_steps: usize) -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repo = repo.canonicalize().expect("the checkout");
    let text =
        std::fs::read_to_string(repo.join("book/src").join(chapter)).expect("the chapter exists");
    let steps = console_steps(&text);
    assert!(steps.len() >= min_steps, "{steps:#?}");

    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("work");
    let plugins = tmp.path().join("plugins");
    std::fs::create_dir_all(&work).expect("mkdir work");
    std::fs::create_dir_all(&plugins).expect("mkdir plugins");
    // One marker line before each command, so the output can be split per command.
    let marker = |i: usize| format!("@@mni-book-step-{i}@@");
    let mut session = Session::new(&work).line("exec 2>&1");
    for (i, step) in steps.iter().enumerate() {
        session.push_line(&format!("echo '{}'", marker(i)));
        session.push_command(&step.command);
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_mni-scaffold"))
        .parent()
        .expect("bin dir")
        .to_owned();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = session
        .run_with(|c| {
            c.env_clear()
                .env("PATH", path)
                .env("HOME", tmp.path())
                .env("USER", "reader")
                .env("GIT_AUTHOR_NAME", "Reader")
                .env("GIT_AUTHOR_EMAIL", "reader@example.com")
                .env("GIT_COMMITTER_NAME", "Reader")
                .env("GIT_COMMITTER_EMAIL", "reader@example.com")
                .env("MNI_PLUGINS_PATH", &plugins)
                .env("MNI_REPO", &repo);
        })
        .expect("run bash");
    assert!(out.success(), "the chapter's commands failed: {out}");
    let stdout = out.stdout;

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
    tmp
}

#[test]
fn writing_plugins_chapter_commands_run() {
    let tmp = run_chapter("writing-plugins.md", 20);
    let work = tmp.path().join("work");
    // What the chapter says happened, happened.
    let crew = work.join("crew");
    assert!(crew.join("docs/captain.md").is_file());
    assert!(crew.join("services/billing/src/main.rs").is_file());
    assert!(!work.join("escape.txt").exists());
}

#[test]
fn keep_current_chapter_commands_run() {
    let tmp = run_chapter("keep-current.md", 20);
    let fleet = tmp.path().join("work/fleet");
    assert!(!fleet.join("docs/bosun.md").exists());
    let project = std::fs::read_to_string(fleet.join("PROJECT")).expect("PROJECT");
    assert!(project.contains("apidocs.mni.dev/v2"), "{project}");
}

#[test]
fn webhooks_chapter_commands_run() {
    let tmp = run_chapter("webhooks.md", 14);
    let harbor = tmp.path().join("work/harbor");
    // `delete webhook` and `delete api` took out what the chapter created.
    assert!(!harbor.join("src/webhooks/ships_v1_ship.rs").exists());
    assert!(!harbor.join("src/api/ships_v1/ship.rs").exists());
    let project = std::fs::read_to_string(harbor.join("PROJECT")).expect("PROJECT");
    assert!(!project.contains("webhooks"), "{project}");
}

#[test]
fn olm_chapter_commands_run() {
    // The install section runs the control plane of this build.
    let bin = Path::new(env!("CARGO_BIN_EXE_mni-scaffold"))
        .parent()
        .expect("bin dir")
        .join("mni-dev");
    assert!(
        bin.is_file(),
        "{} is built with the workspace tests (cargo nextest run --workspace, or cargo build -p mni-dev)",
        bin.display()
    );
    let tmp = run_chapter("olm.md", 24);
    let fleet = tmp.path().join("work/fleet");
    let csv =
        std::fs::read_to_string(fleet.join("bundle/manifests/fleet.clusterserviceversion.yaml"))
            .expect("CSV");
    assert!(
        csv.contains("description: Captains and their crews."),
        "{csv}"
    );
    assert!(fleet.join("catalog/fleet/catalog.yaml").is_file());
}
