//! The happy paths: init, idempotence, dry runs, new service, plugins and completion.

use crate::{Project, create_crew_api, run_in, tree};

#[test]
fn init_creates_project_and_readme() {
    let p = Project::new();
    let out = p
        .run(&["init", "--domain", "acme.io", "--owner", "ACME"])
        .ok();
    assert!(out.contains("   create PROJECT\n"), "{out}");
    assert!(out.contains("   create README.md\n"), "{out}");
    assert!(out.contains("   create src/main.rs\n"), "{out}");
    assert!(out.contains("   create config/rbac/role.yaml\n"), "{out}");
    // config/crd and config/samples come with the first kind: empty, they would not render.
    assert!(!out.contains("config/crd/"), "{out}");
    assert!(
        out.contains("`init` with rust-operator.mni.dev/v1: create 26"),
        "{out}"
    );
    let project = p.read("PROJECT");
    assert!(project.contains("domain: acme.io\n"), "{project}");
    assert!(project.contains("projectName: demo\n"), "{project}");
    assert!(
        project.contains("layout:\n- rust-operator.mni.dev/v1\n"),
        "{project}"
    );
    assert!(project.contains("owner: ACME"), "{project}");
    assert!(p.read("README.md").starts_with("# demo\n"));
}

#[test]
fn init_twice_changes_nothing() {
    let p = Project::new();
    p.run(&["init", "--license", "apache2"]).ok();
    let before = p.tree();
    let out = p.run(&["init"]).ok();
    assert_eq!(p.tree(), before);
    // Every file the command writes is reported, and reported unchanged (not skipped).
    let (files, summary) = out.trim_end().rsplit_once('\n').expect("a report");
    assert!(
        files.lines().count() > 1 && files.lines().all(|l| l.starts_with("unchanged ")),
        "{out}"
    );
    assert!(files.contains("unchanged PROJECT"), "{out}");
    assert!(summary.contains("create 0, update 0, skip 0"), "{out}");
}

#[test]
fn a_generated_file_that_exists_is_bad_input_naming_force() {
    let p = Project::new();
    p.run(&["init", "--domain", "acme.io"]).ok();
    let api = create_crew_api("Captain", &[]);
    let first = p.run(&api).ok();
    assert!(first.contains("   update src/main.rs\n"), "{first}");
    // A file the plugin generates, but which is already there: bad input naming it.
    let p = Project::new();
    p.run(&["init", "--domain", "acme.io"]).ok();
    let created: Vec<String> = first
        .lines()
        .filter_map(|l| l.strip_prefix("   create "))
        .map(str::to_owned)
        .collect();
    let victim = created.first().expect("create api creates files");
    let p = p.file(victim, "mine\n");
    let before = p.tree();
    p.run(&api).fails(
        2,
        &[&format!(
            "{victim} already exists; pass --force to overwrite it"
        )],
    );
    assert_eq!(p.tree(), before);
}

#[test]
fn dry_run_writes_nothing_and_prints_a_diff() {
    let p = Project::new();
    let out = p.run(&["--dry-run", "init"]).ok();
    assert!(out.contains("nothing was written"), "{out}");
    assert!(out.contains("--- /dev/null\n+++ b/PROJECT\n"), "{out}");
    assert!(out.contains("+domain: my.domain\n"), "{out}");
    assert!(p.tree().is_empty());

    // A directory that does not exist is not left behind either.
    let missing = p.root().join("new/deeper");
    let plugins = p.root().join("no-plugins");
    run_in(
        &missing,
        &plugins,
        &["--dry-run", "new", "service", "billing"],
    )
    .ok();
    assert!(tree(&p.root()).is_empty());

    p.run(&["init"]).ok();
    let before = p.tree();
    let out = p.run(&["--dry-run", "new", "service", "billing"]).ok();
    assert!(
        out.contains("+++ b/services/billing/operator/README.md"),
        "{out}"
    );
    assert!(out.contains("--- a/PROJECT\n+++ b/PROJECT\n"), "{out}");
    assert_eq!(p.tree(), before);
}

#[test]
fn new_service_creates_the_project_when_needed() {
    let p = Project::new();
    let out = p.run(&["new", "service", "billing"]).ok();
    assert!(
        out.contains("create PROJECT")
            && out.contains("create services/billing/operator/src/main.rs")
    );
    assert!(
        p.read("Cargo.toml")
            .contains("\"services/billing/operator\",")
    );
    let project = p.read("PROJECT");
    assert!(
        project.contains(
            "services:\n- crates:\n    backend: services/billing/backend\n    \
             frontend: services/billing/frontend\n    operator: services/billing/operator\n"
        ),
        "{project}"
    );
    let out = p.run(&["new", "service", "ledger"]).ok();
    assert!(out.contains("   update PROJECT\n"), "{out}");
    assert!(p.read("PROJECT").contains("name: ledger"));

    // Into a directory that does not exist yet.
    let fresh = p.root().join("fresh");
    run_in(
        &fresh,
        &p.root().join("none"),
        &["new", "service", "billing"],
    )
    .ok();
    assert!(fresh.join("PROJECT").is_file());
}

#[test]
fn plugins_list_describe_and_completion() {
    let p = Project::new().sample();
    let list = p.run(&["plugins", "list"]).ok();
    assert!(
        list.contains(
            "rust-operator.mni.dev/v1 (default)  built-in  init, new service, create api"
        ),
        "{list}"
    );
    assert!(list.contains("apidocs.mni.dev/v1"), "{list}");
    assert!(
        list.lines().any(|l| l.starts_with("vpc.mni.dev/v1 ")
            && l.ends_with("built-in  init, new service, create api")),
        "{list}"
    );
    let rust = p.run(&["plugins", "describe", "rust.mni.dev/v1"]).ok();
    assert!(
        rust.contains("--domain string (default \"my.domain\")"),
        "{rust}"
    );
    let ext = p.run(&["plugins", "describe", "apidocs/v1"]).ok();
    assert!(ext.contains("create api\n  Adds docs/<kind>.md"), "{ext}");
    assert!(ext.contains("--kind string  kind, PascalCase"), "{ext}");
    let bash = p.run(&["completion", "bash"]).ok();
    assert!(bash.contains("mni-scaffold"), "{bash}");
}

#[test]
fn existing_files_need_force() {
    let p = Project::new().file("services/billing/operator/README.md", "mine\n");
    p.run(&["init"]).ok();
    let before = p.tree();
    p.run(&["new", "service", "billing"]).fails(
        2,
        &["services/billing/operator/README.md already exists; pass --force to overwrite it"],
    );
    assert_eq!(p.tree(), before);
    let out = p.run(&["--force", "new", "service", "billing"]).ok();
    assert!(
        out.contains("   update services/billing/operator/README.md\n"),
        "{out}"
    );
    assert!(
        p.read("services/billing/operator/README.md")
            .starts_with("# billing\n")
    );
}

#[test]
fn unknown_project_fields_survive() {
    let p = Project::new().file(
        "PROJECT",
        "# mine\ndomain: acme.io\nmultigroup: true\nprojectName: demo\nversion: '3'\n",
    );
    p.run(&["--plugins", "rust/v1", "init"]).ok();
    p.run(&["new", "service", "billing"]).ok();
    let project = p.read("PROJECT");
    assert!(project.starts_with("# mine\n"), "{project}");
    assert!(project.contains("multigroup: true\n"), "{project}");
    assert!(
        project.contains("layout:\n- rust.mni.dev/v1\n"),
        "{project}"
    );
}

#[test]
fn upgrade_replays_the_old_tree_with_another_binary() {
    // `--from-binary` runs an mni-scaffold as a process, once per recorded command, to get
    // what was generated; here the same build stands in for an older one, so nothing changes.
    let p = Project::new();
    p.run(&["init", "--domain", "acme.io"]).ok();
    p.run(&create_crew_api("Captain", &[])).ok();
    let before = p.tree();
    let bin = env!("CARGO_BIN_EXE_mni-scaffold");
    let out = p.run(&["--force", "upgrade", "--from-binary", bin]).ok();
    assert!(
        out.contains("`upgrade`: create 0, update 0, delete 0"),
        "{out}"
    );
    assert_eq!(p.tree(), before);
    // A binary that cannot replay the history is named with the command it failed on.
    p.run(&["--force", "upgrade", "--from-binary", "/bin/false"])
        .fails(
            1,
            &["replaying `mni-scaffold --plugins", "init --domain=acme.io"],
        );
    assert_eq!(p.tree(), before);
}

#[test]
fn history_records_each_command_that_changed_something() {
    let p = Project::new();
    p.run(&["init", "--domain", "acme.io", "--owner", "ACME"])
        .ok();
    p.run(&["init"]).ok();
    p.run(&[&["--dry-run"][..], &create_crew_api("Mate", &[])].concat())
        .ok();
    p.run(&create_crew_api("Captain", &["--namespaced", "false"]))
        .ok();
    let history = p.read(".mni-scaffold.yaml");
    assert_eq!(history.matches("\n- - ").count(), 2, "{history}");
    assert!(history.contains("- --owner=ACME\n"), "{history}");
    assert!(
        history.contains("- --kind=Captain\n  - --namespaced=false\n"),
        "{history}"
    );
    assert!(
        !history.contains("Mate"),
        "a dry run records nothing: {history}"
    );
    // A history that does not parse is bad input naming the file.
    std::fs::write(p.root().join(".mni-scaffold.yaml"), "commands: {}\n").unwrap();
    p.run(&create_crew_api("Bosun", &[]))
        .fails(2, &[".mni-scaffold.yaml", "commands"]);
}
