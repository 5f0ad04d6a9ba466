//! `mni-scaffold delete` and `upgrade` on the golden projects: the history replays each one byte
//! for byte, create followed by delete leaves it byte-identical, changed files are refused or
//! merged, and an upgrade to a newer plugin version keeps the user's edits.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use mni_scaffold::history::History;
use mni_tests::{
    GOLDEN, first_difference, golden_dir, mni_scaffold, read_tree, sample_plugins, scaffold_env,
};

type Tree = BTreeMap<String, Vec<u8>>;

/// `VERB api --group G --version V --kind K` (`create` or `delete`).
fn api<'a>(verb: &'a str, group: &'a str, version: &'a str, kind: &'a str) -> Vec<&'a str> {
    vec![
        verb,
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ]
}

/// Writes `tree` under `dir`.
fn write_tree(dir: &Path, tree: &Tree) {
    for (path, bytes) in tree {
        let target = dir.join(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(target, bytes).unwrap();
    }
}

/// A copy of golden `name` in a temporary directory named like the golden.
fn copy_of(name: &str) -> (tempfile::TempDir, std::path::PathBuf, Tree) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    let tree = read_tree(&golden_dir(name)).unwrap();
    write_tree(&dir, &tree);
    (tmp, dir, tree)
}

fn assert_same(dir: &Path, expected: &Tree, what: &str) {
    let now = read_tree(dir).unwrap();
    if let Some(diff) = first_difference(&now, expected) {
        panic!("{what}: {diff}");
    }
}

#[test]
fn every_golden_replays_from_its_history_byte_for_byte() {
    let plugins = sample_plugins().unwrap();
    let env = scaffold_env(plugins.path(), &[]);
    for golden in GOLDEN {
        let committed = golden_dir(golden.name);
        let history = History::require(&committed).unwrap();
        assert_eq!(
            history.commands.len(),
            golden.commands.len(),
            "{}",
            golden.name
        );
        let tmp = tempfile::tempdir().unwrap();
        history
            .replay(tmp.path(), &committed, &env, None)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.name));
        assert_same(
            tmp.path(),
            &read_tree(&committed).unwrap(),
            &format!("{} replayed", golden.name),
        );
    }
}

#[test]
fn create_then_delete_leaves_every_golden_byte_identical() {
    let plugins = sample_plugins().unwrap();
    let env = scaffold_env(plugins.path(), &[]);
    for golden in GOLDEN {
        let (_tmp, dir, before) = copy_of(golden.name);
        let mut create = api("create", "probe", "v1", "Probe");
        // Projects without a root crate take the API into one of their services.
        let service = match golden.name {
            "vpc" => Some("network"),
            "vm" => Some("compute"),
            "baremetal" => Some("metal"),
            _ => None,
        };
        create.extend(service.iter().flat_map(|s| ["--service", s]));
        mni_scaffold(&dir, &create, &env).unwrap_or_else(|e| panic!("{}: {e:?}", golden.name));
        assert!(read_tree(&dir).unwrap() != before, "{}", golden.name);
        let delete = api("delete", "probe", "v1", "Probe");
        let out =
            mni_scaffold(&dir, &delete, &env).unwrap_or_else(|e| panic!("{}: {e:?}", golden.name));
        assert!(out.contains("delete"), "{out}");
        assert_same(
            &dir,
            &before,
            &format!("{}: create api, delete api", golden.name),
        );
    }
    // A service, in the project that has service crates.
    let (_tmp, dir, before) = copy_of("multi-api");
    mni_scaffold(&dir, &["new", "service", "extra"], &env).unwrap();
    mni_scaffold(&dir, &["delete", "service", "extra"], &env).unwrap();
    assert_same(&dir, &before, "multi-api: new service, delete service");
    // Webhooks for a kind that has none, beside the kinds that have some.
    let (_tmp, dir, before) = copy_of("multi-api");
    let mut webhook = api("create", "ships", "v1", "Ship");
    webhook[1] = "webhook";
    webhook.extend(["--defaulting", "--programmatic-validation"]);
    mni_scaffold(&dir, &webhook, &env).unwrap();
    assert!(read_tree(&dir).unwrap() != before);
    let mut delete = api("delete", "ships", "v1", "Ship");
    delete[1] = "webhook";
    mni_scaffold(&dir, &delete, &env).unwrap();
    assert_same(&dir, &before, "multi-api: create webhook, delete webhook");
}

#[test]
fn deleting_an_earlier_api_equals_never_having_created_it() {
    let plugins = sample_plugins().unwrap();
    let env = scaffold_env(plugins.path(), &[]);
    let golden = GOLDEN.iter().find(|g| g.name == "multi-api").unwrap();
    let (_tmp, dir, _) = copy_of(golden.name);
    let history = History::require(&dir).unwrap();
    // The first `create api` of the golden, with more commands after it.
    let first = history
        .commands
        .iter()
        .position(|c| c.first().map(String::as_str) == Some("create"))
        .unwrap();
    assert!(first + 1 < history.commands.len());
    let flag = |n: &str| {
        history.commands[first]
            .iter()
            .find_map(|a| a.strip_prefix(&format!("--{n}="))?.to_owned().into())
            .unwrap()
    };
    let (group, version, kind): (String, String, String) =
        (flag("group"), flag("version"), flag("kind"));
    mni_scaffold(&dir, &api("delete", &group, &version, &kind), &env).unwrap();
    // The same project scaffolded without that command, from scratch.
    let mut without = history.clone();
    without.commands.remove(first);
    let fresh = tempfile::tempdir().unwrap();
    without.replay(fresh.path(), &dir, &env, None).unwrap();
    assert_same(
        &dir,
        &read_tree(fresh.path()).unwrap(),
        "delete of the first api",
    );
}

#[test]
fn delete_refuses_changed_files_unless_forced_and_merges_the_rest() {
    let plugins = sample_plugins().unwrap();
    let env = scaffold_env(plugins.path(), &[]);
    let (_tmp, dir, before) = copy_of("plain-operator");
    let create = api("create", "probe", "v1", "Probe");
    mni_scaffold(&dir, &create, &env).unwrap();
    let created = read_tree(&dir).unwrap();
    // A file the create added, and one it edited at a marker, both changed by the user.
    let added = created
        .keys()
        .find(|p| !before.contains_key(*p) && p.ends_with("probe.rs"))
        .expect("create api adds a probe.rs")
        .clone();
    let edited = created
        .keys()
        .find(|p| before.get(*p).is_some_and(|b| b != &created[*p]) && p.ends_with(".rs"))
        .expect("create api edits a Rust file at a marker")
        .clone();
    fs::write(dir.join(&added), "// the user's now\n").unwrap();
    let mut text = fs::read_to_string(dir.join(&edited)).unwrap();
    text.insert_str(0, "// kept by delete --force\n");
    fs::write(dir.join(&edited), &text).unwrap();
    let changed = read_tree(&dir).unwrap();

    let delete = api("delete", "probe", "v1", "Probe");
    let (code, message) = mni_scaffold(&dir, &delete, &env).unwrap_err();
    assert_eq!(code, 2, "{message}");
    assert!(
        message.contains(&added) && message.contains(&edited),
        "{message}"
    );
    assert!(message.contains("--force"), "{message}");
    assert_same(&dir, &changed, "a refused delete writes nothing");

    // --dry-run shows the plan and the diff and writes nothing.
    let mut dry = vec!["--dry-run", "--force"];
    dry.extend(&delete);
    let out = mni_scaffold(&dir, &dry, &env).unwrap();
    assert!(out.contains(&format!("delete {added}")), "{out}");
    assert!(out.contains("+++ /dev/null"), "{out}");
    assert_same(&dir, &changed, "--dry-run");

    let mut forced = vec!["--force"];
    forced.extend(&delete);
    mni_scaffold(&dir, &forced, &env).unwrap();
    assert!(!dir.join(&added).exists());
    let merged = fs::read_to_string(dir.join(&edited)).unwrap();
    assert_eq!(
        merged,
        format!(
            "// kept by delete --force\n{}",
            String::from_utf8_lossy(&before[&edited])
        ),
        "the user's line stays, the create's lines go"
    );
}

#[test]
fn delete_of_what_was_never_created_names_the_argument() {
    let plugins = sample_plugins().unwrap();
    let env = scaffold_env(plugins.path(), &[]);
    let (_tmp, dir, before) = copy_of("vpc");
    let (code, message) =
        mni_scaffold(&dir, &api("delete", "nope", "v1", "Nope"), &env).unwrap_err();
    assert_eq!(code, 2);
    assert!(
        message.starts_with("--kind: no resource nope/v1, Kind=Nope"),
        "{message}"
    );
    let (code, message) = mni_scaffold(&dir, &["delete", "service", "nope"], &env).unwrap_err();
    assert_eq!(code, 2);
    assert!(
        message.starts_with("NAME: no service \"nope\""),
        "{message}"
    );
    // The VPC service's kinds came with `new service`, not `create api`.
    let (code, message) =
        mni_scaffold(&dir, &api("delete", "network", "v1alpha1", "Network"), &env).unwrap_err();
    assert_eq!(code, 2);
    assert!(message.contains("new service network"), "{message}");
    assert_same(&dir, &before, "refusals write nothing");
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn upgrade_to_a_newer_plugin_version_keeps_the_users_edits() {
    // apidocs.mni.dev/v1 made the project; its author releases v2, which words the scope line
    // differently and adds a line to every page.
    let plugins = sample_plugins().unwrap();
    let v1 = plugins.path().join("apidocs.mni.dev/v1/apidocs.mni.dev");
    let v2_dir = plugins.path().join("apidocs.mni.dev/v2");
    fs::create_dir_all(&v2_dir).unwrap();
    let source = fs::read_to_string(&v1).unwrap();
    let v2 = source
        .replace(
            "- Scope: {scope}\\n",
            "- Scope: {scope} (see `kubectl api-resources`)\\n",
        )
        .replace(
            "- API version: `{full_group}/{version}`\\n",
            "- API version: `{full_group}/{version}`\\n- Generated by apidocs v2\\n",
        );
    assert_ne!(
        v2, source,
        "the sample plugin's page template changed; update this test"
    );
    let v2_path = v2_dir.join("apidocs.mni.dev");
    fs::write(&v2_path, v2).unwrap();
    fs::set_permissions(&v2_path, fs::metadata(&v1).unwrap().permissions()).unwrap();
    let env = scaffold_env(plugins.path(), &[]);

    let (_tmp, dir, _) = copy_of("external-plugin");
    mni_scaffold(&dir, &api("create", "crew", "v1", "Mate"), &env).unwrap();
    let before = read_tree(&dir).unwrap();
    // Outside git, or with uncommitted changes, upgrade refuses (unless --force).
    let (code, message) = mni_scaffold(&dir, &["upgrade"], &env).unwrap_err();
    assert_eq!(code, 2, "{message}");
    assert!(message.contains("not in a git work tree"), "{message}");
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "scaffolded with apidocs v1"]);

    // The user's edits: one page's scope line (the line v2 changes too), another page's
    // title, and a Rust file v2 does not touch.
    let pages: Vec<&String> = before
        .keys()
        .filter(|p| p.starts_with("docs/") && *p != "docs/index.md")
        .collect();
    assert!(pages.len() >= 2, "{pages:?}");
    let (conflicting, clean) = (pages[0].clone(), pages[1].clone());
    let edit = |path: &str, f: &dyn Fn(&str) -> String| {
        let text = fs::read_to_string(dir.join(path)).unwrap();
        fs::write(dir.join(path), f(&text)).unwrap();
    };
    edit(&conflicting, &|t| {
        t.replace("- Scope: ", "- Scope (edited by hand): ")
    });
    edit(&clean, &|t| t.replacen("# ", "# The ", 1));
    edit("src/main.rs", &|t| format!("{t}// the user's own line\n"));
    fs::write(dir.join("NOTES.md"), "mine\n").unwrap();
    let (code, message) = mni_scaffold(&dir, &["upgrade"], &env).unwrap_err();
    assert_eq!(code, 2, "{message}");
    assert!(
        message.contains("uncommitted changes") && message.contains("NOTES.md"),
        "{message}"
    );
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "my edits"]);
    let edited = read_tree(&dir).unwrap();

    let dry = mni_scaffold(&dir, &["--dry-run", "upgrade"], &env).unwrap();
    assert!(
        dry.contains("apidocs.mni.dev/v1 → apidocs.mni.dev/v2"),
        "{dry}"
    );
    assert!(dry.contains("+- Generated by apidocs v2"), "{dry}");
    assert_same(&dir, &edited, "--dry-run writes nothing");

    let out = mni_scaffold(&dir, &["upgrade"], &env).unwrap();
    assert!(
        out.contains("conflicts (") && out.contains(&conflicting),
        "{out}"
    );
    let read = |p: &str| fs::read_to_string(dir.join(p)).unwrap();
    // The clean merge: the user's title and v2's new line.
    let page = read(&clean);
    assert!(
        page.starts_with("# The ") && page.contains("- Generated by apidocs v2"),
        "{page}"
    );
    assert!(page.contains("(see `kubectl api-resources`)"), "{page}");
    // The conflict: both versions of the line, marked; nothing of the user's lost.
    let page = read(&conflicting);
    assert!(
        page.contains("<<<<<<<") && page.contains(">>>>>>>"),
        "{page}"
    );
    assert!(page.contains("- Scope (edited by hand): "), "{page}");
    assert!(page.contains("(see `kubectl api-resources`)"), "{page}");
    // Untouched by v2: the user's Rust line and own file stay as they were.
    assert_eq!(read("src/main.rs").as_bytes(), &edited["src/main.rs"][..]);
    assert_eq!(read("NOTES.md"), "mine\n");
    // The project now records v2, so the next upgrade starts from it.
    assert!(
        read("PROJECT").contains("apidocs.mni.dev/v2"),
        "{}",
        read("PROJECT")
    );
    assert!(read(".mni-scaffold.yaml").contains("apidocs.mni.dev/v2"));
    // git shows exactly what changed, so the merge can be reviewed or undone.
    let status = git(&dir, &["status", "--porcelain"]);
    assert!(
        status.contains(&conflicting) && status.contains(&clean),
        "{status}"
    );
    assert!(!status.contains("src/main.rs"), "{status}");
}
