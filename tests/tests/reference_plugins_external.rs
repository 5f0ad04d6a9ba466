//! The reference service plugins are no more privileged than a community plugin: each is built
//! as an external plugin binary (`mni-plugin-vpc`, `-vm`, `-baremetal`: the plugin served by
//! `mni-plugin-sdk`), published to a local catalog with its sha256, installed by name with
//! `mni-scaffold plugins install`, run in place of the built-in (`MNI_REPLACE_BUILTINS`) through
//! the external-plugin protocol and sandbox — and the service it scaffolds is byte-identical to
//! the committed one, which the built-in plugin generates (the golden drift test).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use mni_tests::{
    GOLDEN, clean_cargo_env, first_difference, generate_with_plugins, golden_dir, read_tree,
    repo_root,
};
use sha2::{Digest, Sha256};

/// `(golden project, plugin name, binary)`.
const REFERENCE: &[(&str, &str, &str)] = &[
    ("vpc", "vpc.mni.dev", "mni-plugin-vpc"),
    ("vm", "vm.mni.dev", "mni-plugin-vm"),
    ("baremetal", "baremetal.mni.dev", "mni-plugin-baremetal"),
];

/// The workspace's target directory, where the outer build puts everything.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| repo_root().join("target"), PathBuf::from)
}

/// Builds the plugin binaries and copies them into `catalog/`, with an `index.json` naming each
/// by its sha256, as a publisher would.
fn publish(catalog: &Path) {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    clean_cargo_env(&mut cargo)
        .arg("build")
        .args(
            REFERENCE
                .iter()
                .flat_map(|(golden, _, _)| ["-p".to_owned(), format!("mni-plugin-{golden}")]),
        )
        .arg("--bins")
        .current_dir(repo_root())
        .env("CARGO_TARGET_DIR", target_dir());
    let out = cargo.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo build of the plugin binaries: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::create_dir_all(catalog).expect("catalog dir");
    let host = format!(
        "{}-unknown-{}-gnu",
        std::env::consts::ARCH,
        std::env::consts::OS
    );
    let mut entries = Vec::new();
    for (_, name, bin) in REFERENCE {
        let bytes = std::fs::read(target_dir().join("debug").join(bin)).expect("built binary");
        std::fs::write(catalog.join(bin), &bytes).expect("publish binary");
        let sha256: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        entries.push(serde_json::json!({
            "name": name,
            "version": "v1",
            "description": format!("the reference {name} service plugin, as an external binary"),
            "source": format!("https://github.com/mni-cloud/mni/tree/main/plugins/{bin}"),
            "supports": {"projectVersions": ["3"], "mni": ">=0.1"},
            "artifacts": [{"target": host, "url": bin, "sha256": sha256}],
            "env": [],
        }));
    }
    let index = serde_json::json!({"apiVersion": "catalog.mni.dev/v1", "plugins": entries});
    std::fs::write(
        catalog.join("index.json"),
        serde_json::to_string_pretty(&index).expect("json"),
    )
    .expect("write index");
}

/// `mni-scaffold ARGS` in-process with `MNI_PLUGINS_PATH=plugins`; its stdout.
fn scaffold(plugins: &Path, args: &[&str]) -> String {
    let vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k == "PATH" || k == "HOME" || k == "LANG")
        .chain([("MNI_PLUGINS_PATH".into(), plugins.as_os_str().to_owned())])
        .collect();
    let env = mni_scaffold::Environment::from_vars(vars);
    let mut argv: Vec<OsString> = vec!["mni-scaffold".into()];
    argv.extend(args.iter().map(OsString::from));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    mni_scaffold::parse(argv, &env)
        .and_then(|cli| mni_scaffold::run(cli, &env, &mut out, &mut err))
        .unwrap_or_else(|e| {
            panic!(
                "mni-scaffold {}: {e}\n{}",
                args.join(" "),
                String::from_utf8_lossy(&err)
            )
        });
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn reference_plugins_installed_from_a_catalog_generate_the_committed_services() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let catalog = tmp.path().join("catalog");
    let plugins = tmp.path().join("plugins");
    publish(&catalog);
    let catalog_arg = catalog.to_str().expect("utf-8 path");
    for (_, name, _) in REFERENCE {
        scaffold(
            &plugins,
            &["plugins", "install", name, "--catalog", catalog_arg],
        );
    }
    let listed = scaffold(&plugins, &["plugins", "list"]);
    for (_, name, _) in REFERENCE {
        assert!(listed.contains(&format!("{name}/v1")), "{listed}");
    }
    scaffold(&plugins, &["plugins", "verify"]);

    let replace = REFERENCE
        .iter()
        .map(|(_, name, _)| format!("{name}/v1"))
        .collect::<Vec<_>>()
        .join(",");
    for (golden_name, name, _) in REFERENCE {
        let golden = GOLDEN
            .iter()
            .find(|g| g.name == *golden_name)
            .expect("a golden project");
        let fresh = tmp.path().join("projects").join(golden_name);
        generate_with_plugins(
            golden,
            &fresh,
            &plugins,
            &[("MNI_REPLACE_BUILTINS", &replace)],
        )
        .unwrap_or_else(|e| panic!("{name} installed: {e}"));
        let generated = read_tree(&fresh).expect("read generated tree");
        let committed = read_tree(&golden_dir(golden_name)).expect("read committed tree");
        if let Some(diff) = first_difference(&generated, &committed) {
            panic!("{name}/v1 installed from a catalog: {diff}");
        }
    }
}
