//! `new service NAME --template DIR`: community templates through cargo-generate, with the
//! sample template of `plugins/cargo-generate-sample`.

use std::path::{Path, PathBuf};

use crate::{Project, tree};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/cargo-generate-sample")
}

fn new_service(name: &str, defines: &[&str]) -> Vec<String> {
    let mut args = vec![
        "new".to_owned(),
        "service".to_owned(),
        name.to_owned(),
        "--template".to_owned(),
        sample().display().to_string(),
    ];
    for d in defines {
        args.extend(["--define".to_owned(), (*d).to_owned()]);
    }
    args
}

fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn instantiates_the_sample_into_the_project() {
    let p = Project::new();
    p.run(&["init", "--domain", "acme.io"]).ok();
    let args = new_service(
        "billing",
        &[
            "owner=ACME Inc.",
            "port=9090",
            "description=Bills customers",
        ],
    );
    let out = p.run(&refs(&args)).ok();
    for line in [
        "   create services/billing/Cargo.toml\n",
        "   create services/billing/README.md\n",
        "   create services/billing/src/main.rs\n",
        "   update Cargo.toml\n",
        "   update PROJECT\n",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    assert!(out.contains("`new service` with --template "), "{out}");
    let main = p.read("services/billing/src/main.rs");
    syn::parse_file(&main).expect("the generated Rust parses");
    assert!(main.contains("const PORT: u16 = 9090;"), "{main}");
    assert!(main.starts_with("//! billing: Bills customers\n"), "{main}");
    assert!(
        main.contains("println!(\"billing listening on {}\""),
        "{main}"
    );
    let cargo = p.read("services/billing/Cargo.toml");
    assert!(cargo.contains("name = \"billing\"\n"), "{cargo}");
    assert!(
        p.read("services/billing/README.md")
            .contains("Owner: ACME Inc.;")
    );
    // cargo-generate's own config does not end up in the service.
    assert!(
        !p.root()
            .join("services/billing/cargo-generate.toml")
            .exists()
    );
    assert!(p.read("Cargo.toml").contains("\"services/billing\","));

    let project = p.read("PROJECT");
    assert!(
        project.contains(
            "- crates:\n    crate: services/billing\n  name: billing\n  plugin: cargo-generate.mni.dev/v1\n"
        ),
        "{project}"
    );
    assert!(
        project.contains(&format!(
            "  cargo-generate.mni.dev/v1:\n    services:\n      billing:\n        template: {}\n        defines:\n          description: Bills customers\n          owner: ACME Inc.\n          port: '9090'\n",
            sample().display()
        )),
        "{project}"
    );

    // The same again: the service exists, nothing changes.
    let before = p.tree();
    p.run(&refs(&args))
        .fails(2, &["service \"billing\" already exists in PROJECT"]);
    assert_eq!(p.tree(), before);
}

#[test]
fn dry_run_and_a_fresh_directory() {
    let p = Project::new();
    let args = new_service("billing", &["owner=me"]);
    let mut dry = vec!["--dry-run"];
    dry.extend(refs(&args));
    let out = p.run(&dry).ok();
    assert!(out.contains("nothing was written"), "{out}");
    assert!(
        out.contains("+++ b/services/billing/src/main.rs\n"),
        "{out}"
    );
    assert!(out.contains("+const PORT: u16 = 8080;\n"), "{out}");
    assert!(p.tree().is_empty());
    // Without PROJECT: the chain's init and the template land in one commit.
    let out = p.run(&refs(&args)).ok();
    assert!(out.contains("   create PROJECT\n"), "{out}");
    assert!(
        out.contains("   create services/billing/src/main.rs\n"),
        "{out}"
    );
    assert!(p.read("PROJECT").contains("name: billing"));
}

#[test]
fn bad_templates_and_values_are_bad_input() {
    let p = Project::new();
    p.run(&["init"]).ok();
    let before = p.tree();
    let check = |args: Vec<String>, needles: &[&str]| {
        p.run(&refs(&args)).fails(2, needles);
        assert_eq!(p.tree(), before, "{args:?} changed the tree");
    };
    check(
        new_service("billing", &[]),
        &["placeholder `owner` has no default; pass --define owner=VALUE"],
    );
    check(
        new_service("billing", &["owner=me", "port=eighty"]),
        &["--define port=eighty: not a valid value for placeholder `port` of --template"],
    );
    check(
        new_service("billing", &["owner"]),
        &["--define \"owner\": expected KEY=VALUE"],
    );
    check(
        vec![
            "new".into(),
            "service".into(),
            "billing".into(),
            "--template".into(),
            "no/such/dir".into(),
        ],
        &["--template ", "no/such/dir: no such directory"],
    );
    let file = p.root().join("PROJECT").display().to_string();
    check(
        vec![
            "new".into(),
            "service".into(),
            "billing".into(),
            "--template".into(),
            file,
        ],
        &["PROJECT: not a directory"],
    );
    let empty = tempfile::tempdir().unwrap();
    check(
        vec![
            "new".into(),
            "service".into(),
            "billing".into(),
            "--template".into(),
            empty.path().display().to_string(),
        ],
        &["the template produced no files"],
    );
    // --define belongs to --template.
    let run = p.run(&["new", "service", "billing", "--define", "a=b"]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("--template <DIR>"), "{run:#?}");
    // A file the template would create exists already.
    let p = p.file("services/billing/README.md", "mine\n");
    let before = tree(&p.root());
    p.run(&refs(&new_service("billing", &["owner=me"]))).fails(
        2,
        &["services/billing/README.md already exists; pass --force to overwrite it"],
    );
    assert_eq!(tree(&p.root()), before);
}

#[test]
fn cargo_generate_needs_a_user_name() {
    let p = Project::new();
    p.run(&["init"]).ok();
    let before = p.tree();
    p.run_env(&refs(&new_service("billing", &["owner=me"])), &[])
        .fails(
            1,
            &["cargo-generate needs a user name for the template's `authors` value: set $USER or $CARGO_NAME"],
        );
    assert_eq!(p.tree(), before);
    p.run_env(
        &refs(&new_service("billing", &["owner=me"])),
        &[("CARGO_NAME", "ACME")],
    )
    .ok();
}
