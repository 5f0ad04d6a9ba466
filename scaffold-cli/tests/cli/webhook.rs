//! `create webhook` and `delete webhook`: what is generated and recorded, every refused input
//! (naming the flag, writing nothing), and a delete that leaves the project as it was.

use crate::{Project, create_api};

/// The arguments of `create webhook` for `crew/v1` `kind`, followed by `extra`.
fn create_webhook<'a>(kind: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "create",
        "webhook",
        "--group",
        "crew",
        "--version",
        "v1",
        "--kind",
        kind,
    ];
    args.extend_from_slice(extra);
    args
}

/// A project with kind `crew/v1` Captain.
fn project() -> Project {
    let p = Project::new();
    p.run(&["init", "--domain", "acme.io"]).ok();
    p.run(&create_api("crew", "v1", "Captain")).ok();
    p
}

#[test]
fn create_webhook_generates_code_config_and_records_it() {
    let p = project();
    let out = p
        .run(&create_webhook(
            "Captain",
            &["--defaulting", "--programmatic-validation"],
        ))
        .ok();
    for line in [
        "   create src/webhooks/mod.rs\n",
        "   create src/webhooks/crew_v1_captain.rs\n",
        "   create tests/captain_webhook.rs\n",
        "   update src/lib.rs\n",
        "   update src/main.rs\n",
        "   update Cargo.toml\n",
        "   create config/webhook/manifests.yaml\n",
        "   create config/webhook/service.yaml\n",
        "   create config/certmanager/certificate-webhook.yaml\n",
        "   create config/default/manager_webhook_patch.yaml\n",
        "   update config/default/kustomization.yaml\n",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }
    assert!(
        out.contains("`create webhook` with rust-operator.mni.dev/v1"),
        "{out}"
    );

    let code = p.read("src/webhooks/crew_v1_captain.rs");
    assert!(
        code.contains("impl Defaulter<Captain> for CaptainCustomDefaulter"),
        "{code}"
    );
    assert!(
        code.contains("impl Validator<Captain> for CaptainCustomValidator"),
        "{code}"
    );
    assert!(code.contains("TODO(user)"), "{code}");
    assert!(
        code.contains(
            "    server\n        .with_defaulter(CaptainCustomDefaulter)\n        .with_validator(CaptainCustomValidator)\n"
        ),
        "{code}"
    );
    let server = p.read("src/webhooks/mod.rs");
    assert!(
        server.contains("let server = crew_v1_captain::register(server);"),
        "{server}"
    );
    assert!(
        p.read("src/main.rs")
            .contains("let manager = webhooks::register(manager);")
    );
    assert!(p.read("src/lib.rs").contains("pub mod webhooks;"));
    assert!(
        p.read("Cargo.toml")
            .contains("mni-webhook = { workspace = true }")
    );

    let manifests = p.read("config/webhook/manifests.yaml");
    assert!(
        manifests.contains("path: /mutate-crew-acme-io-v1-captain"),
        "{manifests}"
    );
    assert!(
        manifests.contains("path: /validate-crew-acme-io-v1-captain"),
        "{manifests}"
    );
    assert!(manifests.contains("name: vcaptain-v1.kb.io"), "{manifests}");
    let default = p.read("config/default/kustomization.yaml");
    for needle in [
        "- ../webhook",
        "- ../certmanager",
        "manager_webhook_patch.yaml",
    ] {
        assert!(default.contains(needle), "{needle}: {default}");
    }
    assert!(
        default.contains("[cert-manager.io/inject-ca-from]"),
        "{default}"
    );

    let project = p.read("PROJECT");
    assert!(
        project.contains(
            "  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n"
        ),
        "{project}"
    );
    let history = p.read(".mni-scaffold.yaml");
    assert!(history.contains("  - webhook\n"), "{history}");
    assert!(
        history.contains("  - --programmatic-validation=true\n"),
        "{history}"
    );
}

#[test]
fn webhooks_of_two_kinds_compose() {
    let p = project();
    p.run(&create_api("crew", "v1", "Mate")).ok();
    p.run(&create_webhook("Captain", &["--defaulting"])).ok();
    p.run(&create_webhook("Mate", &["--programmatic-validation"]))
        .ok();
    let server = p.read("src/webhooks/mod.rs");
    assert!(server.contains("pub mod crew_v1_captain;"), "{server}");
    assert!(server.contains("pub mod crew_v1_mate;"), "{server}");
    assert_eq!(
        p.read("src/main.rs").matches("webhooks::register").count(),
        1
    );
    let default = p.read("config/default/kustomization.yaml");
    assert_eq!(default.matches("- ../webhook\n").count(), 1, "{default}");
    let manifests = p.read("config/webhook/manifests.yaml");
    assert!(
        manifests.contains("/mutate-crew-acme-io-v1-captain"),
        "{manifests}"
    );
    assert!(
        manifests.contains("/validate-crew-acme-io-v1-mate"),
        "{manifests}"
    );
}

#[test]
fn bad_input_names_the_flag_and_writes_nothing() {
    let p = project();
    let before = p.tree();
    for (args, needles) in [
        (
            create_webhook("Captain", &[]),
            &["--defaulting", "--programmatic-validation", "--conversion"][..],
        ),
        (
            create_webhook("Purser", &["--defaulting"]),
            &["--kind", "crew/v1, Kind=Purser", "create api"][..],
        ),
        (
            vec![
                "create",
                "webhook",
                "--group",
                "navy",
                "--version",
                "v1",
                "--kind",
                "Captain",
                "--defaulting",
            ],
            &["--kind", "navy/v1, Kind=Captain"][..],
        ),
        (
            create_webhook("Captain", &["--defaulting", "--spoke", "v2"]),
            &["--spoke", "only with --conversion"][..],
        ),
        (
            create_webhook("Captain", &["--conversion"]),
            &["--conversion", "--spoke"][..],
        ),
        (
            create_webhook("Captain", &["--conversion", "--spoke", "v3"]),
            &["--spoke", "crew/v3, Kind=Captain"][..],
        ),
        (
            create_webhook("Captain", &["--defaulting", "--service", "billing"]),
            &["--service", "billing"][..],
        ),
        (
            create_webhook("captain", &["--defaulting"]),
            &["--kind"][..],
        ),
    ] {
        p.run(&args).fails(2, needles);
        assert_eq!(p.tree(), before, "{args:?} wrote something");
    }

    p.run(&create_webhook("Captain", &["--defaulting"])).ok();
    let before = p.tree();
    p.run(&create_webhook("Captain", &["--programmatic-validation"]))
        .fails(
            2,
            &[
                "--kind",
                "already has webhooks (defaulting)",
                "delete webhook",
            ],
        );
    assert_eq!(p.tree(), before);
}

#[test]
fn conversion_patches_the_crd_and_generates_hub_and_spokes() {
    let p = project();
    // A second version of the kind: `create api` writes one CRD per version, so it overwrites
    // v1's (merging the versions into one CRD is left to the user).
    let mut v2 = create_api("crew", "v2", "Captain").to_vec();
    v2.extend(["--controller=false", "--force"]);
    p.run(&v2).ok();
    p.run(&create_webhook(
        "Captain",
        &["--conversion", "--spoke", "v2"],
    ))
    .ok();
    let code = p.read("src/webhooks/crew_v1_captain.rs");
    assert!(
        code.contains("impl mni_webhook::Hub for Captain {}"),
        "{code}"
    );
    assert!(
        code.contains("impl mni_webhook::Spoke<Captain> for crate::api::crew_v2::Captain"),
        "{code}"
    );
    assert!(
        code.contains("    server.with_conversion(conversion())\n"),
        "{code}"
    );
    let patch = p.read("config/crd/patches/webhook_in_captains.yaml");
    assert!(patch.contains("strategy: Webhook"), "{patch}");
    assert!(patch.contains("path: /convert"), "{patch}");
    let crd = p.read("config/crd/kustomization.yaml");
    assert!(
        crd.contains("- path: patches/webhook_in_captains.yaml"),
        "{crd}"
    );
    assert!(p.read("PROJECT").contains("    conversion: true\n"));
}

#[test]
fn delete_webhook_restores_the_project() {
    let p = project();
    let before = p.tree();
    p.run(&create_webhook(
        "Captain",
        &["--defaulting", "--programmatic-validation"],
    ))
    .ok();
    let out = p
        .run(&[
            "delete",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
        ])
        .ok();
    assert!(
        out.contains("   delete src/webhooks/crew_v1_captain.rs\n"),
        "{out}"
    );
    assert!(
        out.contains("`delete webhook crew/v1, Kind=Captain`"),
        "{out}"
    );
    let after = p.tree();
    // Empty directories the webhook files were in may stay.
    let files = |t: &std::collections::BTreeMap<String, Vec<u8>>| {
        t.iter()
            .filter(|(_, v)| v.as_slice() != b"/")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(files(&after), files(&before));

    p.run(&[
        "delete",
        "webhook",
        "--group",
        "crew",
        "--version",
        "v1",
        "--kind",
        "Captain",
    ])
    .fails(2, &["--kind", "crew/v1, Kind=Captain has no webhooks"]);
}
