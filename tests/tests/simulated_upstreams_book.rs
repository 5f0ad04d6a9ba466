//! The book chapter "Simulated upstreams" (`book/src/simulated-upstreams.md`): its first
//! ```yaml block is saved as `tenant-a.yaml`, then every `$ ` line of its ```console blocks
//! runs, in order, in one bash session in a temporary directory, with this build's `mni-dev`
//! and kubectl on PATH. The lines shown under a command must appear in what it prints, in
//! order (whitespace-insensitive, so kubectl's column widths may differ; other lines, such as
//! the background `mni-dev`'s, may come between).

use mni_chapter::Session;

/// The first ```yaml block.
fn first_yaml_block(chapter: &str) -> String {
    let mut lines = chapter
        .lines()
        .skip_while(|l| l.trim() != "```yaml")
        .skip(1);
    let mut yaml = String::new();
    for line in lines.by_ref() {
        if line.starts_with("```") {
            break;
        }
        yaml.push_str(line);
        yaml.push('\n');
    }
    yaml
}

fn normalize(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

const MARKER: &str = "@@mni-book-step";

#[test]
fn simulated_upstreams_chapter_commands_run() {
    let root = mni_tests::repo_root();
    let chapter = std::fs::read_to_string(root.join("book/src/simulated-upstreams.md"))
        .expect("book/src/simulated-upstreams.md");
    let bins = mni_tests::book::bin_dir();
    assert!(
        bins.join("mni-dev").is_file(),
        "mni-dev is built with the workspace tests (cargo nextest run --workspace, or cargo build -p mni-dev): {}",
        bins.display()
    );
    let steps = mni_chapter::console_steps(&chapter);
    assert!(steps.len() >= 10, "{steps:?}");
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("tenant-a.yaml"), first_yaml_block(&chapter)).expect("yaml");

    let mut session = Session::new(tmp.path())
        .path_first(&bins)
        .env("RUST_LOG", "warn")
        .env_remove("KUBECONFIG");
    for (i, step) in steps.iter().enumerate() {
        session.push_line(&format!("echo {MARKER} {i}"));
        session.push_command(&step.command);
    }
    session.push_line(&format!("echo {MARKER} end"));
    let out = session
        .run_with(|c| {
            mni_tests::clean_cargo_env(c);
        })
        .expect("bash runs");
    assert!(out.success(), "script:\n{}\n{out}", session.script());
    assert!(out.stragglers.is_empty(), "{out}");
    let (stdout, stderr) = (out.stdout, out.stderr);

    // Split stdout at the markers: segment i is what step i printed.
    let mut segments: Vec<Vec<String>> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with(MARKER) {
            segments.push(Vec::new());
        } else if let Some(segment) = segments.last_mut() {
            segment.push(normalize(line));
        }
    }
    for (i, step) in steps.iter().enumerate() {
        let printed = segments.get(i).cloned().unwrap_or_default();
        let mut rest = printed.iter();
        for expected in step.expected.iter().map(|l| normalize(l)) {
            assert!(
                rest.any(|line| *line == expected),
                "`{}` should print {expected:?} (in the chapter's order); it printed:\n{}\nstderr:\n{stderr}",
                step.command,
                printed.join("\n")
            );
        }
    }
}
