//! Scaffold-marker inserts through a real load → insert → commit cycle.

use mni_machinery::{Insert, InsertOutcome, MarkerError, commit, insert};

use crate::Fixture;

const MAIN: &str = "//! The operator.\n\nmod api;\n// +mni:scaffold:mods\n\nfn main() {\n    let controllers: Vec<&str> = vec![\n        // a user comment that must survive\n        // +mni:scaffold:controllers\n    ];\n    println!(\"{controllers:?}\");\n}\n";
const WORKSPACE: &str =
    "[workspace]\nmembers = [\n    \"operator\",\n    # +mni:scaffold:members\n]\n";

fn project() -> Fixture {
    Fixture::new()
        .file("src/main.rs", MAIN)
        .file("Cargo.toml", WORKSPACE)
        .file("src/api.rs", "")
}

fn scaffold_billing(fx: &Fixture, controller: &str) -> mni_machinery::CommitReport {
    let mut u = fx.universe();
    insert(
        &mut u,
        "src/main.rs",
        &Insert::new("mods", "billing", "pub   mod billing;"),
    )
    .unwrap();
    insert(
        &mut u,
        "src/main.rs",
        &Insert::new("controllers", "billing", controller),
    )
    .unwrap();
    insert(
        &mut u,
        "Cargo.toml",
        &Insert::new("members", "billing", "\"services/billing\","),
    )
    .unwrap();
    u.write(
        "src/billing.rs",
        "pub fn controller() {}\n",
        mni_plugin::IfExists::Skip,
    )
    .unwrap();
    commit(fx.root(), &u).unwrap()
}

#[test]
fn double_insert_is_byte_identical() {
    let fx = project();
    let first = scaffold_billing(&fx, "\"billing\",");
    assert_eq!(
        first
            .paths(mni_machinery::Action::Update)
            .collect::<Vec<_>>(),
        ["Cargo.toml", "src/main.rs"]
    );
    let after_first = fx.tree();
    let second = scaffold_billing(&fx, "\"billing\",");
    assert_eq!(fx.tree(), after_first);
    // Every file the scaffold looked at is reported unchanged: none updated, none skipped.
    assert_eq!(
        second.entries,
        [
            ("Cargo.toml".to_owned(), mni_machinery::Action::Unchanged),
            (
                "src/billing.rs".to_owned(),
                mni_machinery::Action::Unchanged
            ),
            ("src/main.rs".to_owned(), mni_machinery::Action::Unchanged),
        ]
    );
    let main = fx.read("src/main.rs");
    assert!(main.contains("        // a user comment that must survive\n        // +mni:fragment:controllers:billing\n        \"billing\",\n        // +mni:fragment-end:controllers:billing\n        // +mni:scaffold:controllers\n"), "{main}");
    assert!(main.contains("mod api;\n// +mni:fragment:mods:billing\npub mod billing;\n// +mni:fragment-end:mods:billing\n// +mni:scaffold:mods\n"), "{main}");
}

#[test]
fn changed_fragment_replaces_the_old_one() {
    let fx = project();
    scaffold_billing(&fx, "\"billing\",");
    scaffold_billing(&fx, "\"billing-v2\",");
    let main = fx.read("src/main.rs");
    assert_eq!(main.matches("+mni:fragment:controllers:billing").count(), 1);
    assert!(main.contains("\"billing-v2\","));
    assert!(!main.contains("\"billing\","));
    assert_eq!(fx.read("Cargo.toml").matches("services/billing").count(), 1);
}

#[test]
fn bad_rust_insert_is_refused_and_nothing_is_written() {
    let fx = project();
    let before = fx.tree();
    let mut u = fx.universe();
    // Inside a macro call (`vec![...]`) syn only sees balanced tokens, so use an item marker.
    let err = insert(
        &mut u,
        "src/main.rs",
        &Insert::new("mods", "bad", "pub mod ;"),
    )
    .unwrap_err();
    assert!(matches!(err, MarkerError::RustAfter(..)));
    let msg = err.to_string();
    assert!(msg.starts_with("src/main.rs:"), "{msg}");
    assert!(
        msg.contains("Rust syntax error") && msg.contains("nothing was changed"),
        "{msg}"
    );
    assert_eq!(u.touched().count(), 0);
    commit(fx.root(), &u).unwrap();
    assert_eq!(fx.tree(), before);
}

#[test]
fn insert_reports_outcomes() {
    let fx = project();
    let mut u = fx.universe();
    let ins = Insert::new("mods", "x", "mod x;");
    assert_eq!(
        insert(&mut u, "src/main.rs", &ins).unwrap(),
        InsertOutcome::Inserted
    );
    assert_eq!(
        insert(&mut u, "src/main.rs", &ins).unwrap(),
        InsertOutcome::Unchanged
    );
    assert_eq!(
        insert(&mut u, "src/main.rs", &Insert::new("mods", "x", "mod y;")).unwrap(),
        InsertOutcome::Replaced
    );
    assert!(matches!(
        insert(&mut u, "missing.rs", &ins),
        Err(MarkerError::Universe(_))
    ));
}
