//! Atomic commit, dry run, git-ignore and symlink handling on real directories.

use std::fs;

use mni_machinery::{Action, CommitError, PlanError, ValidationError, commit, plan, validate};
use mni_plugin::IfExists;

use crate::Fixture;

#[test]
fn commit_is_all_or_nothing_when_a_directory_blocks_a_file() {
    let fx = Fixture::new()
        .file("a.txt", "old a\n")
        .file("keep/me.txt", "me\n");
    let before = fx.tree();
    let mut u = fx.universe();
    u.write("a.txt", "new a\n", IfExists::Overwrite).unwrap();
    u.write("b/new.txt", "b\n", IfExists::Error).unwrap();
    u.write("z.txt", "z\n", IfExists::Error).unwrap();
    let p = plan(fx.root(), &u).unwrap();
    // Something puts a directory where the last file goes after planning: the switch phase
    // fails part-way, after a.txt and b/new.txt are in place, and must roll them back.
    fs::create_dir_all(fx.root().join("z.txt/inside")).unwrap();
    let blocked = fx.tree();
    let err = p.apply().unwrap_err();
    assert!(
        matches!(err, CommitError::Conflict { ref path, .. } if path == "z.txt"),
        "{err}"
    );
    assert_eq!(fx.tree(), blocked);
    fs::remove_dir_all(fx.root().join("z.txt")).unwrap();
    assert_eq!(fx.tree(), before);
}

#[test]
fn a_blocking_directory_found_at_plan_time_writes_nothing() {
    let fx = Fixture::new()
        .file("a.txt", "old\n")
        .file("src/main.rs/oops", "x");
    let before = fx.tree();
    let mut u = fx.universe();
    u.write("a.txt", "new\n", IfExists::Overwrite).unwrap();
    u.write("src/main.rs", "fn main() {}\n", IfExists::Error)
        .unwrap();
    let err = commit(fx.root(), &u).unwrap_err();
    assert_eq!(
        err.to_string(),
        "src/main.rs: directory src/main.rs is in the way"
    );
    assert!(matches!(err, CommitError::Plan(PlanError::InTheWay { .. })));
    assert_eq!(fx.tree(), before);
}

#[test]
fn dry_run_writes_nothing() {
    let fx = Fixture::new().file("Cargo.toml", "[workspace]\nmembers = []\n");
    let before = fx.tree();
    let mut u = fx.universe();
    u.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"a\"]\n",
        IfExists::Overwrite,
    )
    .unwrap();
    u.write("a/src/lib.rs", "pub fn a() {}\n", IfExists::Error)
        .unwrap();
    validate(fx.root(), &u).unwrap();
    let p = plan(fx.root(), &u).unwrap();
    assert_eq!(
        p.report().to_string(),
        "   update Cargo.toml\n   create a/src/lib.rs\n"
    );
    assert_eq!(
        p.diff(),
        "--- a/Cargo.toml\n+++ b/Cargo.toml\n@@ -1,2 +1,2 @@\n [workspace]\n-members = []\n+members = [\"a\"]\n\
--- /dev/null\n+++ b/a/src/lib.rs\n@@ -0,0 +1 @@\n+pub fn a() {}\n"
    );
    assert_eq!(fx.tree(), before);
    let report = p.apply().unwrap();
    assert_eq!(
        report.paths(Action::Create).collect::<Vec<_>>(),
        ["a/src/lib.rs"]
    );
    assert_eq!(fx.read("a/src/lib.rs"), "pub fn a() {}\n");
    assert!(!fx.root().join(mni_machinery::STATE_DIR).exists());
}

#[test]
fn gitignored_files_are_left_out_but_still_protected() {
    let fx = Fixture::new()
        .file(".gitignore", "/secrets/\n*.local\n")
        .file("secrets/token", "s3cr3t")
        .file("settings.local", "mine")
        .file("target/debug/build.log", "x")
        .file("src/lib.rs", "");
    let u = fx.universe();
    let paths: Vec<&str> = u.iter().map(|(p, _)| p).collect();
    assert_eq!(paths, [".gitignore", "src/lib.rs"]);
    let mut u = u;
    u.write("settings.local", "generated", IfExists::Error)
        .unwrap();
    let err = commit(fx.root(), &u).unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings.local already exists; pass --force to overwrite it"
    );
    assert_eq!(fx.read("settings.local"), "mine");
}

#[cfg(unix)]
#[test]
fn symlink_escapes_are_rejected() {
    let outside = tempfile::tempdir().unwrap();
    let fx = Fixture::new()
        .file("src/lib.rs", "")
        .file(".git/HEAD", "ref: refs/heads/main\n");
    std::os::unix::fs::symlink(outside.path(), fx.root().join("escape")).unwrap();
    std::os::unix::fs::symlink(fx.root().join(".git"), fx.root().join("gitdir")).unwrap();
    std::os::unix::fs::symlink(fx.root().join("src"), fx.root().join("inside")).unwrap();
    let before = fx.tree();
    let mut u = fx.universe();
    u.write("escape/evil.txt", "x", IfExists::Error).unwrap();
    u.write("gitdir/hooks/pre-commit", "x", IfExists::Error)
        .unwrap();
    u.write("inside/ok.rs", "", IfExists::Error).unwrap();
    let err = commit(fx.root(), &u).unwrap_err();
    let CommitError::Validation(ValidationError::Many(problems)) = &err else {
        panic!("{err}")
    };
    assert_eq!(problems.len(), 2, "{err}");
    assert!(
        problems[0]
            .to_string()
            .starts_with("escape/evil.txt: goes through symbolic link escape to "),
        "{err}"
    );
    assert!(
        problems[1]
            .to_string()
            .starts_with("gitdir/hooks/pre-commit: goes through symbolic link gitdir"),
        "{err}"
    );
    assert_eq!(fx.tree(), before);
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
}
