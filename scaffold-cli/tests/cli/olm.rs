//! `olm bundle`, `olm catalog` and `olm validate` on a scaffolded project: regeneration keeps
//! hand edits, and bad input is refused with an error naming the thing, writing nothing.

use std::fs;

use crate::{Project, create_crew_api};

/// A project with one API, `crew/v1 Captain`.
fn project() -> Project {
    let p = Project::new();
    p.run(&["init", "--domain", "example.com", "--project-name", "demo"])
        .ok();
    p.run(&create_crew_api("Captain", &[])).ok();
    p
}

const CSV: &str = "bundle/manifests/demo.clusterserviceversion.yaml";

#[test]
fn regenerating_keeps_hand_edits_and_sets_replaces() {
    let p = project();
    let out = p.run(&["olm", "bundle", "--version", "0.1.0"]).ok();
    assert!(
        out.contains("wrote   bundle/manifests/demo.clusterserviceversion.yaml"),
        "{out}"
    );
    for path in [
        "bundle/manifests/crew.example.com_captains.yaml",
        "bundle/metadata/annotations.yaml",
        "bundle/metadata/dependencies.yaml",
        "bundle/bundle.Containerfile",
        "bundle/.mni-generated/manifests/demo.clusterserviceversion.yaml",
    ] {
        assert!(p.root().join(path).is_file(), "{path}");
    }
    let csv = p.read(CSV);
    assert!(csv.contains("name: demo.v0.1.0"), "{csv}");
    assert!(csv.contains("strategy: deployment"), "{csv}");
    assert!(csv.contains("clusterPermissions:"), "{csv}");
    assert!(csv.contains("alm-examples:"), "{csv}");
    assert!(!csv.contains("replaces:"), "{csv}");
    let annotations = p.read("bundle/metadata/annotations.yaml");
    assert!(annotations.contains("operators.operatorframework.io.bundle.package.v1: demo"));
    let containerfile = p.read("bundle/bundle.Containerfile");
    assert!(
        containerfile.contains("LABEL operators.operatorframework.io.bundle.channels.v1=alpha")
    );

    // The user rewrites the description and adds a keyword; the project gains a kind.
    let edited = csv
        .replace(
            "description: The demo service operator, scaffolded with mNi.",
            "description: Captains, by hand.",
        )
        .replace("  keywords:\n  - mni\n", "  keywords:\n  - mni\n  - crew\n");
    assert_ne!(edited, csv);
    fs::write(p.root().join(CSV), &edited).expect("edit");
    p.run(&create_crew_api("Mate", &[])).ok();

    let out = p.run(&["olm", "bundle", "--version", "0.2.0"]).ok();
    assert!(
        out.contains("bundle/manifests/crew.example.com_mates.yaml"),
        "{out}"
    );
    let csv = p.read(CSV);
    assert!(csv.contains("description: Captains, by hand."), "{csv}");
    assert!(csv.contains("  - crew\n"), "{csv}");
    assert!(csv.contains("kind: Mate"), "{csv}");
    assert!(csv.contains("name: demo.v0.2.0"), "{csv}");
    assert!(csv.contains("replaces: demo.v0.1.0"), "{csv}");

    // A second run of the same version changes nothing.
    let before = p.tree();
    p.run(&["olm", "bundle", "--version", "0.2.0"]).ok();
    assert_eq!(p.tree(), before);
}

#[test]
fn bad_bundle_input_is_named_and_writes_nothing() {
    let p = project();
    let before = p.tree();
    let missing = p.run(&["olm", "bundle"]);
    assert_eq!(missing.code, 2, "{missing:#?}");
    assert!(missing.stderr.contains("--version"), "{missing:#?}");
    p.run(&["olm", "bundle", "--version", "1.2"])
        .fails(2, &["--version \"1.2\"", "semantic version"]);
    p.run(&[
        "olm",
        "bundle",
        "--version",
        "0.1.0",
        "--channels",
        "alpha",
        "--default-channel",
        "stable",
    ])
    .fails(2, &["--default-channel \"stable\""]);
    assert_eq!(p.tree(), before);

    // A CSV that no longer owns a CRD the bundle ships is refused, bundle untouched.
    p.run(&["olm", "bundle", "--version", "0.1.0"]).ok();
    let csv = p.read(CSV);
    let start = csv.find("    owned:\n").expect("owned");
    let end = csv[start..].find("  install:").expect("install") + start;
    fs::write(
        p.root().join(CSV),
        format!("{}    owned: []\n{}", &csv[..start], &csv[end..]),
    )
    .expect("edit");
    let before = p.tree();
    p.run(&["olm", "bundle", "--version", "0.2.0"]).fails(
        2,
        &[
            "captains.crew.example.com",
            "spec.customresourcedefinitions.owned",
        ],
    );
    p.run(&["olm", "catalog", "bundle", "-o", "catalog"])
        .fails(2, &["demo.v0.1.0", "captains.crew.example.com"]);
    assert_eq!(p.tree(), before);
}

#[test]
fn a_catalog_of_two_versions_validates() {
    let p = project();
    p.run(&["olm", "bundle", "--version", "0.1.0", "-o", "bundles/0.1.0"])
        .ok();
    p.run(&[
        "olm",
        "bundle",
        "--version",
        "0.2.0",
        "--replaces",
        "demo.v0.1.0",
        "-o",
        "bundles/0.2.0",
    ])
    .ok();
    let out = p
        .run(&[
            "olm",
            "catalog",
            "bundles/0.1.0",
            "bundles/0.2.0",
            "-o",
            "catalog",
        ])
        .ok();
    assert!(
        out.contains("1 package(s), 1 channel(s), 2 bundle(s)"),
        "{out}"
    );
    let text = p.read("catalog/demo/catalog.yaml");
    assert!(text.contains("defaultChannel: alpha"), "{text}");
    assert!(text.contains("replaces: demo.v0.1.0"), "{text}");
    assert!(text.contains("type: olm.bundle.object"), "{text}");
    assert!(text.contains("type: olm.gvk"), "{text}");
    p.run(&["olm", "validate", "catalog"]).ok();

    // The newer bundle alone replaces one not given: mNi refuses the catalog and writes
    // nothing; with opm's rules only (which tolerate that edge at a channel's tail) it is built.
    let before = p.tree();
    p.run(&["olm", "catalog", "bundles/0.2.0", "-o", "newest"])
        .fails(
            2,
            &["replaces \"demo.v0.1.0\", which is not in the catalog"],
        );
    assert_eq!(p.tree(), before);
    let out = p
        .run(&[
            "olm",
            "catalog",
            "--opm-rules-only",
            "bundles/0.2.0",
            "-o",
            "newest",
        ])
        .ok();
    assert!(
        out.contains("1 package(s), 1 channel(s), 1 bundle(s)"),
        "{out}"
    );
    p.run(&["olm", "validate", "--opm-rules-only", "newest"])
        .ok();
}

/// Writes a one-package catalog whose channel is `entries` (YAML), with bundles `versions`.
fn catalog_with(p: &Project, entries: &str, versions: &[&str]) {
    let mut text = format!(
        "schema: olm.package\nname: demo\ndefaultChannel: alpha\n---\nschema: olm.channel\npackage: demo\nname: alpha\nentries:\n{entries}"
    );
    for v in versions {
        text.push_str(&format!(
            "---\nschema: olm.bundle\nname: demo.v{v}\npackage: demo\nimage: example.com/demo-bundle:v{v}\nproperties:\n- type: olm.package\n  value: {{packageName: demo, version: {v}}}\n"
        ));
    }
    fs::create_dir_all(p.root().join("bad")).expect("mkdir");
    fs::write(p.root().join("bad/catalog.yaml"), text).expect("write");
}

#[test]
fn bad_catalogs_are_named() {
    let p = Project::new();
    // A replaces cycle: no head.
    catalog_with(
        &p,
        "- {name: demo.v0.1.0, replaces: demo.v0.2.0}\n- {name: demo.v0.2.0, replaces: demo.v0.1.0}\n",
        &["0.1.0", "0.2.0"],
    );
    p.run(&["olm", "validate", "bad"]).fails(
        2,
        &[
            "package \"demo\", channel \"alpha\"",
            "no channel head",
            "cycle",
        ],
    );
    // An upgrade edge to a bundle that does not exist: mNi refuses it, opm tolerates it.
    catalog_with(
        &p,
        "- {name: demo.v0.2.0, replaces: demo.v0.1.0}\n",
        &["0.2.0"],
    );
    p.run(&["olm", "validate", "bad"]).fails(
        2,
        &[
            "[mni]",
            "bundle \"demo.v0.2.0\" replaces \"demo.v0.1.0\"",
            "not in the catalog",
        ],
    );
    p.run(&["olm", "validate", "--opm-rules-only", "bad"]).ok();
    // Two heads.
    catalog_with(
        &p,
        "- {name: demo.v0.1.0}\n- {name: demo.v0.2.0}\n",
        &["0.1.0", "0.2.0"],
    );
    p.run(&["olm", "validate", "bad"]).fails(
        2,
        &["multiple channel heads found in graph: demo.v0.1.0, demo.v0.2.0"],
    );
}

/// The opm binary of `scripts/opm-reference.sh`: `$MNI_OPM`, else the script's default place.
fn opm() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("MNI_OPM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.mni/opm-reference/bin/opm")
        });
    path.is_file().then_some(path)
}

/// Opt-in: `opm validate` and `mni-scaffold olm validate --opm-rules-only` give the same verdict
/// on the committed reference catalog and on every catalog under `plugins/olm/tests/catalogs/`;
/// `mni-scaffold olm validate` (with mNi's own checks) is recorded beside them. With
/// `MNI_OPM_REPORT=<file>` the comparison is written there as markdown
/// (`scripts/opm-verdicts.sh` writes `plugins/olm/tests/opm-verdicts.md`).
#[test]
fn opm_gives_the_same_verdicts() {
    let Some(opm) = opm() else {
        eprintln!(
            "skipped: no opm binary (build it with scripts/opm-reference.sh, or set MNI_OPM)"
        );
        return;
    };
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repo = repo.canonicalize().expect("checkout");
    let mut cases = vec![(
        "services/catalog/catalog".to_owned(),
        repo.join("services/catalog/catalog"),
    )];
    let fixtures = repo.join("plugins/olm/tests/catalogs");
    let mut names: Vec<_> = fs::read_dir(&fixtures)
        .expect("fixtures")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        cases.push((
            format!("plugins/olm/tests/catalogs/{name}"),
            fixtures.join(&name),
        ));
    }
    let verdict = |ok: bool| if ok { "pass" } else { "fail" };
    let mut table = String::from(
        "| catalog | opm validate | olm validate --opm-rules-only | olm validate |\n|---|---|---|---|\n",
    );
    let mut disagreements = Vec::new();
    let p = Project::new();
    for (name, dir) in &cases {
        let reference = std::process::Command::new(&opm)
            .arg("validate")
            .arg(dir)
            .output()
            .expect("run opm");
        let dir = dir.to_str().expect("utf-8");
        let opm_rules = p.run(&["olm", "validate", "--opm-rules-only", dir]);
        let all = p.run(&["olm", "validate", dir]);
        let (o, m, a) = (
            reference.status.success(),
            opm_rules.code == 0,
            all.code == 0,
        );
        table.push_str(&format!(
            "| `{name}` | {} | {} | {} |\n",
            verdict(o),
            verdict(m),
            verdict(a)
        ));
        if o != m {
            disagreements.push(format!(
                "{name}: opm {} ({}), mni {} ({})",
                verdict(o),
                String::from_utf8_lossy(&reference.stderr).trim(),
                verdict(m),
                opm_rules.stderr.trim()
            ));
        }
    }
    println!("{table}");
    if let Some(report) = std::env::var_os("MNI_OPM_REPORT") {
        let version = std::process::Command::new("go")
            .args([
                "list",
                "-m",
                "-f",
                "{{.Version}}",
                "github.com/operator-framework/operator-registry",
            ])
            .current_dir(repo.join("framework/tools/opm-reference"))
            .env("GOFLAGS", "-mod=mod")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "(see framework/tools/opm-reference/go.mod)".into());
        let text = format!(
            "# OLM catalog validation: mni-scaffold against opm\n\nopm from operator-registry {version} (built by scripts/opm-reference.sh). Regenerate with `scripts/opm-verdicts.sh`.\n\n- catalogs compared: {}\n- verdicts that differ (opm vs `--opm-rules-only`): {}\n\n`olm validate` without `--opm-rules-only` adds mNi's own checks (labelled `[mni]`): a `replaces` naming a bundle the catalog lacks, an unparsable `skipRange`, unsatisfied `olm.gvk.required` / `olm.package.required`.\n\n{table}",
            cases.len(),
            disagreements.len()
        );
        fs::write(report, text).expect("write report");
    }
    assert!(
        disagreements.is_empty(),
        "verdicts differ:\n{}",
        disagreements.join("\n")
    );
}

#[test]
fn bad_flags_are_named() {
    let p = project();
    let before = p.tree();
    p.run(&[
        "olm",
        "bundle",
        "--version",
        "0.1.0",
        "--depends-on",
        "mni-vpc",
    ])
    .fails(2, &["--depends-on mni-vpc", "PACKAGE=RANGE"]);
    p.run(&[
        "olm",
        "bundle",
        "--version",
        "0.1.0",
        "--depends-on",
        "mni-vpc=>=0.1",
    ])
    .fails(2, &["dependency on mni-vpc", "\"0.1\""]);
    p.run(&[
        "olm",
        "bundle",
        "--version",
        "0.1.0",
        "--skip-range",
        "<0.1",
    ])
    .fails(2, &["--skip-range"]);
    p.run(&["--dry-run", "olm", "bundle", "--version", "0.1.0"])
        .fails(2, &["--dry-run", "-o"]);
    assert_eq!(p.tree(), before);
}

#[test]
fn release_fields_follow_the_command_line_and_overlaps_are_reported() {
    let p = project();
    p.run(&["olm", "bundle", "--version", "0.1.0"]).ok();
    // A hand-edited version, and a maturity the generator will not change.
    let csv = p
        .read(CSV)
        .replace("  version: 0.1.0\n", "  version: 0.1.1\n")
        .replace("maturity: alpha", "maturity: stable");
    fs::write(p.root().join(CSV), csv).expect("edit");
    let out = p
        .run(&[
            "olm",
            "bundle",
            "--version",
            "0.2.0",
            "--replaces",
            "demo.v0.1.0",
        ])
        .ok();
    assert!(!out.contains("kept your edit"), "{out}");
    let csv = p.read(CSV);
    assert!(csv.contains("  version: 0.2.0\n"), "{csv}");
    assert!(csv.contains("maturity: stable"), "{csv}");

    // Both sides change the description: the user's stays, and the command says so.
    let csv = csv.replace(
        "description: The demo service operator, scaffolded with mNi.",
        "description: Mine.",
    );
    fs::write(p.root().join(CSV), csv).expect("edit");
    let project = p.read("PROJECT").replacen(
        "plugins:\n",
        "plugins:\n  olm.mni.dev/v1:\n    description: From PROJECT.\n",
        1,
    );
    fs::write(p.root().join("PROJECT"), project).expect("edit PROJECT");
    let out = p.run(&["olm", "bundle", "--version", "0.2.0"]).ok();
    assert!(
        out.contains("kept your edit (the generator changed it too): bundle/manifests/demo.clusterserviceversion.yaml: .spec.description"),
        "{out}"
    );
    assert!(p.read(CSV).contains("description: Mine."));
}
