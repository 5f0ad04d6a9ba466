//! Rendering templates into a Universe, pinned with insta snapshots.

use mni_machinery::{TemplateError, TemplateFile, Templates};
use mni_plugin::{IfExists, Universe};
use serde_json::json;

const CARGO: &str =
    "[package]\nname = \"{{kebab name}}-operator\"\nversion = \"0.1.0\"\nedition = \"2024\"\n";
const MAIN: &str = "//! The {{name}} operator: reconciles `{{kind}}` objects ({{plural kind}}.{{group}}.{{domain}}).\n\n\
const CRD_NAME: &str = \"{{plural kind}}.{{group}}.{{domain}}\";\nconst {{upper_snake kind}}_FINALIZER: &str = \"{{group}}.{{domain}}/finalizer\";\n\n\
fn reconcile_{{snake kind}}() {}\n\nfn main() {\n    let _ = (CRD_NAME, {{upper_snake kind}}_FINALIZER);\n    reconcile_{{snake kind}}();\n    // +mni:scaffold:controllers\n}\n";

fn templates() -> Templates {
    let mut t = Templates::new();
    t.register("service/v1/Cargo.toml.hbs", CARGO).unwrap();
    t.register("service/v1/src/main.rs.hbs", MAIN).unwrap();
    t
}

fn files() -> Vec<TemplateFile> {
    vec![
        TemplateFile::new(
            "service/v1/Cargo.toml.hbs",
            "services/{{kebab name}}/Cargo.toml",
        ),
        TemplateFile::new(
            "service/v1/src/main.rs.hbs",
            "services/{{kebab name}}/src/main.rs",
        )
        .if_exists(IfExists::Skip),
    ]
}

#[test]
fn renders_a_service() {
    let data =
        json!({"name": "BareMetal", "kind": "NetworkPolicy", "group": "net", "domain": "mni.dev"});
    let mut u = Universe::new();
    templates().scaffold(&mut u, &files(), &data).unwrap();
    mni_machinery::validate(std::path::Path::new("."), &u).unwrap();
    insta::assert_snapshot!(
        "cargo_toml",
        u.get("services/bare-metal/Cargo.toml").unwrap()
    );
    insta::assert_snapshot!("main_rs", u.get("services/bare-metal/src/main.rs").unwrap());
}

#[test]
fn missing_variable_names_template_and_variable() {
    let mut u = Universe::new();
    let err = templates()
        .scaffold(
            &mut u,
            &files()[1..],
            &json!({"name": "x", "kind": "Vm", "group": "g"}),
        )
        .unwrap_err();
    assert!(matches!(err, TemplateError::MissingVariable { .. }));
    assert_eq!(
        err.to_string(),
        "template service/v1/src/main.rs.hbs:1: missing variable `domain`"
    );
}
