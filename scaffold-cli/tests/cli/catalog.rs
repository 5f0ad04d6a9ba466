//! Plugin catalogs: publish into a temporary catalog (a directory, or served over HTTP by a
//! thread in the test), `plugins install|list|verify|remove|search`, using an installed plugin
//! by key, and every refusal: tampering, wrong checksums, malformed indexes, incompatible
//! releases, environment variables not allowed.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::PrivateKeyDer;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

use crate::{Project, create_crew_api, sample_path, tree};

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A catalog directory: artefacts under `files/`, and `index.json`.
struct Catalog {
    dir: TempDir,
    entries: Vec<Value>,
}

impl Catalog {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
            entries: Vec::new(),
        }
    }

    /// Publishes `bytes` as `name/version` (supports mNi >=0.1 and project version 3), with
    /// `tweak` applied to the entry; rewrites index.json.
    fn publish(
        mut self,
        name: &str,
        version: &str,
        bytes: &[u8],
        tweak: impl FnOnce(&mut Value),
    ) -> Self {
        let rel = format!("files/{name}-{version}");
        let path = self.dir.path().join(&rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir files");
        fs::write(&path, bytes).expect("write artefact");
        let mut entry = json!({
            "name": name,
            "version": version,
            "description": format!("{name} docs generator"),
            "source": format!("https://example.com/{name}"),
            "supports": {"projectVersions": ["3"], "mni": ">=0.1"},
            "artifacts": [{"target": "any", "url": rel, "sha256": sha256(bytes)}],
        });
        tweak(&mut entry);
        self.entries.push(entry);
        self.write_index();
        self
    }

    fn write_index(&self) {
        let index = json!({"apiVersion": "catalog.mni.dev/v1", "plugins": self.entries});
        fs::write(
            self.dir.path().join("index.json"),
            serde_json::to_string_pretty(&index).expect("json"),
        )
        .expect("write index");
    }

    fn path(&self) -> String {
        self.dir.path().display().to_string()
    }
}

fn sample() -> Vec<u8> {
    fs::read(sample_path()).expect("read the sample plugin")
}

fn plugins_dir(p: &Project) -> PathBuf {
    p.tmp.path().join("plugins")
}

fn installed_exe(p: &Project, name: &str, version: &str) -> PathBuf {
    plugins_dir(p).join(name).join(version).join(name)
}

#[test]
fn install_use_verify_tamper_remove() {
    let cat = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |_| {});
    let sum = sha256(&sample());
    let p = Project::new();

    let out = p
        .run(&["plugins", "search", "docs", "--catalog", &cat.path()])
        .ok();
    assert!(out.starts_with("KEY "), "{out}");
    assert!(
        out.contains("apidocs.mni.dev/v1  >=0.1  3        https://example.com/apidocs.mni.dev  apidocs.mni.dev docs generator\n"),
        "{out}"
    );
    let out = p
        .run(&["plugins", "install", "apidocs", "--catalog", &cat.path()])
        .ok();
    assert!(
        out.starts_with("installed apidocs.mni.dev/v1 from "),
        "{out}"
    );
    assert!(out.contains(&format!("  sha256 {sum}\n")), "{out}");
    assert!(installed_exe(&p, "apidocs.mni.dev", "v1").is_file());
    // Installing again needs --force.
    p.run(&["plugins", "install", "apidocs", "--catalog", &cat.path()])
        .fails(2, &["apidocs.mni.dev/v1 is already installed", "--force"]);
    p.run(&[
        "plugins",
        "install",
        "apidocs",
        "--catalog",
        &cat.path(),
        "--force",
    ])
    .ok();

    let list = p.run(&["plugins", "list"]).ok();
    assert!(list.contains("apidocs.mni.dev/v1"), "{list}");
    assert!(list.contains("\nInstalled from a catalog:\nKEY "), "{list}");
    assert!(
        list.contains(&format!(
            "apidocs.mni.dev/v1  v1       https://example.com/apidocs.mni.dev  {sum}\n"
        )),
        "{list}"
    );

    // Found by key exactly like a hand-installed plugin.
    p.run(&[
        "--plugins",
        "rust.mni.dev/v1,apidocs.mni.dev/v1",
        "init",
        "--domain",
        "acme.io",
    ])
    .ok();
    let out = p
        .run(&create_crew_api("Captain", &["--doc-title", "Skipper"]))
        .ok();
    assert!(out.contains("   create docs/captain.md\n"), "{out}");
    assert!(p.read("docs/captain.md").starts_with("# Skipper"));

    let out = p.run(&["plugins", "verify"]).ok();
    assert_eq!(out, format!("ok    apidocs.mni.dev/v1  sha256:{sum}\n"));
    let out = p.run(&["plugins", "describe", "apidocs"]).ok();
    assert!(
        out.contains(&format!(
            "\n  installed from a catalog: https://example.com/apidocs.mni.dev, sha256 {sum}\n"
        )),
        "{out}"
    );

    // Tampered: verify fails, and the plugin is refused before it runs.
    let exe = installed_exe(&p, "apidocs.mni.dev", "v1");
    let mut tampered = sample();
    tampered.extend_from_slice(b"\n# tampered\n");
    fs::write(&exe, &tampered).expect("tamper");
    let run = p.run(&["plugins", "verify"]);
    assert!(
        run.stdout.starts_with("FAIL  apidocs.mni.dev/v1: "),
        "{run:#?}"
    );
    run.fails(
        1,
        &[
            "1 installed plugin(s) failed verification",
            &format!("installed as {sum}"),
        ],
    );
    let before = p.tree();
    p.run(&create_crew_api("Ship", &[])).fails(
        1,
        &[
            "external plugin apidocs.mni.dev/v1 was refused",
            &format!("but it was installed with {sum}"),
        ],
    );
    assert_eq!(p.tree(), before);

    let out = p.run(&["plugins", "remove", "apidocs"]).ok();
    assert_eq!(out, "removed apidocs.mni.dev/v1\n");
    assert!(!plugins_dir(&p).join("apidocs.mni.dev").exists());
    p.run(&["plugins", "remove", "apidocs"])
        .fails(2, &["no installed plugin matches \"apidocs\""]);
    assert!(!p.run(&["plugins", "list"]).ok().contains("apidocs"));
}

#[test]
fn wrong_checksum_writes_nothing() {
    let cat = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |e| {
        e["artifacts"][0]["sha256"] = json!(sha256(b"something else"));
    });
    let p = Project::new();
    p.run(&[
        "plugins",
        "install",
        "apidocs.mni.dev/v1",
        "--catalog",
        &cat.path(),
    ])
    .fails(
        1,
        &[
            "refusing to install apidocs.mni.dev/v1",
            &format!("has SHA-256 {}", sha256(&sample())),
            &format!("the catalog lists {}", sha256(b"something else")),
            "nothing was written",
        ],
    );
    assert!(tree(&plugins_dir(&p)).is_empty());
}

#[test]
fn malformed_indexes_are_refused_naming_the_entry() {
    let p = Project::new();
    let install =
        |cat: &Catalog| p.run(&["plugins", "install", "apidocs", "--catalog", &cat.path()]);
    let dup = Catalog::new()
        .publish("apidocs.mni.dev", "v1", &sample(), |_| {})
        .publish("apidocs.mni.dev", "v1", b"other", |_| {});
    install(&dup).fails(
        1,
        &["index.json: plugins[1] duplicates plugins[0]: apidocs.mni.dev/v1 is listed twice"],
    );
    let no_sha = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |e| {
        e["artifacts"][0]
            .as_object_mut()
            .expect("artefact")
            .remove("sha256");
    });
    install(&no_sha).fails(
        1,
        &["index.json: plugins[0] (apidocs.mni.dev/v1): missing field `sha256`"],
    );
    let bad_version = Catalog::new().publish("apidocs.mni.dev", "1.0", &sample(), |_| {});
    install(&bad_version).fails(
        1,
        &["plugins[0] (apidocs.mni.dev/1.0): field \"name\"/\"version\""],
    );
    let bad_sha = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |e| {
        e["artifacts"][0]["sha256"] = json!("ABC");
    });
    install(&bad_sha).fails(
        1,
        &["field \"artifacts[0].sha256\": \"ABC\" is not 64 lowercase hex digits"],
    );
    p.run(&["plugins", "search", "--catalog", "/nonexistent/catalog"])
        .fails(1, &["cannot read /nonexistent/catalog"]);
    p.run(&["plugins", "search"])
        .fails(2, &["no catalog: pass --catalog PATH|URL, set MNI_CATALOG"]);
    assert!(tree(&plugins_dir(&p)).is_empty());
}

#[test]
fn incompatible_releases_are_refused_saying_what_is_needed() {
    let p = Project::new();
    let newer = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |e| {
        e["supports"]["mni"] = json!(">=99.0");
    });
    p.run(&["plugins", "install", "apidocs", "--catalog", &newer.path()]).fails(
        2,
        &["cannot install apidocs: apidocs.mni.dev/v1 needs mNi >=99.0; this mni-scaffold is mNi "],
    );
    let project = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |e| {
        e["supports"]["projectVersions"] = json!(["4"]);
    });
    p.run(&["plugins", "install", "apidocs", "--catalog", &project.path()]).fails(
        2,
        &["apidocs.mni.dev/v1 supports project versions 4; this mni-scaffold writes project version 3"],
    );
    let native = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |e| {
        e["artifacts"][0]["target"] = json!("riscv32-unknown-none-elf");
    });
    p.run(&["plugins", "install", "apidocs", "--catalog", &native.path()])
        .fails(
            2,
            &[
                "has no artifact for ",
                "(targets: riscv32-unknown-none-elf)",
            ],
        );
    assert!(tree(&plugins_dir(&p)).is_empty());

    // The newest compatible release wins; an incompatible newer one is skipped.
    let both = Catalog::new()
        .publish("apidocs.mni.dev", "v1", &sample(), |_| {})
        .publish("apidocs.mni.dev", "v2", &sample(), |e| {
            e["supports"]["mni"] = json!(">=99.0");
        });
    let out = p
        .run(&["plugins", "search", "--catalog", &both.path()])
        .ok();
    assert!(out.contains("docs generator (incompatible)\n"), "{out}");
    let out = p
        .run(&["plugins", "install", "apidocs", "--catalog", &both.path()])
        .ok();
    assert!(out.starts_with("installed apidocs.mni.dev/v1 "), "{out}");
}

/// A plugin that answers every request with `env.txt` listing the variables it received.
const ENV_PLUGIN: &str = "#!/bin/sh\ncat >/dev/null\nnames=$(env | cut -d= -f1 | sort | tr '\\n' ' ')\nprintf '{\"apiVersion\":\"v1alpha1\",\"command\":\"edit\",\"universe\":{\"env.txt\":\"%s\"}}\\n' \"$names\"\n";

#[test]
fn environment_allow_list() {
    let cat = Catalog::new().publish("envdump.acme.io", "v1", ENV_PLUGIN.as_bytes(), |e| {
        e["env"] = json!(["ACME_TOKEN"]);
    });
    let p = Project::new();
    // The user config allows one more, by name; the catalog comes from the config too.
    let config = p.tmp.path().join(".config/mni/scaffold.yaml");
    fs::create_dir_all(config.parent().expect("parent")).expect("mkdir config");
    fs::write(
        &config,
        format!(
            "catalog: {}\nplugins:\n  envdump.acme.io:\n    env: [USER_ALLOWED]\n",
            cat.path()
        ),
    )
    .expect("write config");
    let out = p.run(&["plugins", "install", "envdump"]).ok();
    assert!(out.contains("  env    ACME_TOKEN\n"), "{out}");
    p.run(&["init", "--domain", "acme.io"]).ok();
    p.run_env(
        &["edit", "--plugins", "rust,envdump"],
        &[
            ("ACME_TOKEN", "t"),
            ("USER_ALLOWED", "u"),
            ("NOT_ALLOWED", "n"),
            ("LANG", "C"),
        ],
    )
    .ok();
    let names: Vec<String> = p
        .read("env.txt")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    for name in ["ACME_TOKEN", "USER_ALLOWED", "PATH", "HOME", "LANG"] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    for name in ["NOT_ALLOWED", "MNI_TEST_SECRET", "MNI_PLUGINS_PATH"] {
        assert!(!names.iter().any(|n| n == name), "{name} leaked: {names:?}");
    }
    // A malformed user config is refused naming the field.
    fs::write(
        &config,
        "plugins:\n  envdump.acme.io:\n    env: [\"NOT A NAME\"]\n",
    )
    .expect("write");
    p.run(&["edit", "--plugins", "rust,envdump"]).fails(
        2,
        &["scaffold.yaml: field \"plugins.envdump.acme.io.env[0]\""],
    );
}

#[test]
fn installed_plugins_stay_sandboxed() {
    let escape = "#!/bin/sh\ncat >/dev/null\necho '{\"apiVersion\":\"v1alpha1\",\"command\":\"edit\",\"universe\":{\"../escape.txt\":\"hi\"}}'\n";
    let cat = Catalog::new().publish("escape.acme.io", "v1", escape.as_bytes(), |_| {});
    let p = Project::new();
    p.run(&["plugins", "install", "escape", "--catalog", &cat.path()])
        .ok();
    p.run(&["init"]).ok();
    let before = p.tree();
    p.run(&["edit", "--plugins", "rust,escape"]).fails(
        1,
        &["external plugin escape.acme.io/v1 was refused: path \"../escape.txt\" contains '..'"],
    );
    assert_eq!(p.tree(), before);
    assert!(!p.root().join("../escape.txt").exists());
}

/// Answers one HTTP/1.0 request on `stream` from the files in `dir`; `/redirect/<path>`
/// answers 302 to `/<path>`.
fn answer(stream: &mut (impl Read + Write), dir: &Path) {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
    let response = if let Some(rest) = path.strip_prefix("/redirect/") {
        format!("HTTP/1.0 302 Found\r\nLocation: /{rest}\r\n\r\n").into_bytes()
    } else {
        match fs::read(dir.join(path.trim_start_matches('/'))) {
            Ok(body) => {
                let mut r = format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                    .into_bytes();
                r.extend(body);
                r
            }
            Err(_) => b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
        }
    };
    let _ = stream.write_all(&response);
    let _ = stream.flush();
}

/// Serves `dir` over HTTP/1.0 from a thread; returns the base URL.
fn serve(dir: &Path) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            answer(&mut stream, &dir);
        }
    });
    format!("http://{addr}")
}

/// Serves `dir` over HTTPS with a new self-signed certificate for 127.0.0.1; returns the base
/// URL and the certificate (PEM).
fn serve_tls(dir: &Path) -> (String, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).expect("cert");
    let pem = certified.cert.pem();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocols")
    .with_no_client_auth()
    .with_single_cert(
        vec![certified.cert.der().clone()],
        PrivateKeyDer::try_from(certified.signing_key.serialize_der()).expect("key"),
    )
    .expect("server config");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let conn = rustls::ServerConnection::new(config.clone()).expect("conn");
            let mut tls = rustls::StreamOwned::new(conn, stream);
            answer(&mut tls, &dir);
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (format!("https://{addr}"), pem)
}

#[test]
fn http_catalog() {
    let cat = Catalog::new()
        .publish("apidocs.mni.dev", "v1", &sample(), |e| {
            // Through a redirect, as release hosts do.
            e["artifacts"][0]["url"] = json!("/redirect/files/apidocs.mni.dev-v1");
        })
        .publish("broken.acme.io", "v1", b"#!/bin/sh\n", |e| {
            e["artifacts"][0]["sha256"] = json!(sha256(b"not this"));
        });
    let url = serve(cat.dir.path());
    let p = Project::new();
    let out = p.run(&["plugins", "search", "--catalog", &url]).ok();
    assert!(out.contains("apidocs.mni.dev/v1 "), "{out}");
    let out = p
        .run_env(&["plugins", "install", "apidocs"], &[("MNI_CATALOG", &url)])
        .ok();
    assert!(
        out.starts_with(&format!(
            "installed apidocs.mni.dev/v1 from {url}/redirect/files/apidocs.mni.dev-v1\n"
        )),
        "{out}"
    );
    p.run(&["plugins", "verify", "apidocs"]).ok();
    p.run(&[
        "plugins",
        "install",
        "broken",
        "--catalog",
        &format!("{url}/index.json"),
    ])
    .fails(1, &["refusing to install broken.acme.io/v1"]);
    assert!(!plugins_dir(&p).join("broken.acme.io").exists());
    p.run(&["plugins", "search", "--catalog", &format!("{url}/missing/")])
        .fails(
            1,
            &[&format!("cannot fetch {url}/missing/index.json: HTTP 404")],
        );
}

/// The sample catalog (`plugins/external-sample/catalog`, used by the book) lists the sample
/// with its current checksum.
#[test]
fn sample_catalog_matches_the_sample() {
    let index = sample_path().with_file_name("catalog/index.json");
    let index: Value =
        serde_json::from_str(&fs::read_to_string(&index).expect("read")).expect("json");
    let listed = index["plugins"][0]["artifacts"][0]["sha256"].as_str();
    let actual = sha256(&sample());
    assert_eq!(
        listed,
        Some(actual.as_str()),
        "the sample changed: set its sha256 in plugins/external-sample/catalog/index.json to {actual}"
    );
}

/// HTTPS verifies the server: a certificate the system does not trust is refused, and one it
/// trusts (here through `SSL_CERT_FILE`) works.
#[test]
fn https_catalog_verifies_the_server() {
    let cat = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |_| {});
    let (url, pem) = serve_tls(cat.dir.path());
    let p = Project::new();
    let err = p
        .run(&["plugins", "install", "apidocs", "--catalog", &url])
        .fails(1, &[&format!("cannot fetch {url}/index.json: ")]);
    assert!(
        err.contains("certificate") || err.contains("root certificates"),
        "{err}"
    );
    assert!(tree(&plugins_dir(&p)).is_empty());
    let ca = p.tmp.path().join("ca.pem");
    fs::write(&ca, pem).expect("write ca");
    let ca = ca.display().to_string();
    let out = p
        .run_env(
            &["plugins", "install", "apidocs", "--catalog", &url],
            &[("SSL_CERT_FILE", &ca)],
        )
        .ok();
    assert!(
        out.starts_with(&format!("installed apidocs.mni.dev/v1 from {url}/files/")),
        "{out}"
    );
    p.run(&["plugins", "verify"]).ok();
}

/// Without `MNI_PLUGINS_PATH`, installs go to `$HOME/.config/mni/plugins/NAME/VERSION/NAME`
/// (`$XDG_CONFIG_HOME/mni/plugins/…` when that is set), where discovery finds them.
#[test]
fn installs_under_the_user_config_directory() {
    let cat = Catalog::new().publish("apidocs.mni.dev", "v1", &sample(), |_| {});
    let home = tempfile::tempdir().expect("home");
    let run = |args: &[&str], xdg: Option<&Path>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mni-scaffold"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path());
        if let Some(xdg) = xdg {
            cmd.env("XDG_CONFIG_HOME", xdg);
        }
        let out = cmd.output().expect("run mni-scaffold");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    run(
        &["plugins", "install", "apidocs", "--catalog", &cat.path()],
        None,
    );
    let exe = home
        .path()
        .join(".config/mni/plugins/apidocs.mni.dev/v1/apidocs.mni.dev");
    assert!(exe.is_file());
    assert!(exe.with_file_name("install.json").is_file());
    assert!(run(&["plugins", "list"], None).contains("\nInstalled from a catalog:\n"));
    let xdg = home.path().join("xdg");
    run(
        &["plugins", "install", "apidocs", "--catalog", &cat.path()],
        Some(&xdg),
    );
    assert!(
        xdg.join("mni/plugins/apidocs.mni.dev/v1/apidocs.mni.dev")
            .is_file()
    );
}

/// A native artefact: the Rust port of the sample, published for the host's target triple
/// beside an artefact for another target (which must not be picked), installed and used.
#[test]
fn native_artifact_for_the_host_target() {
    use crate::plugins_new::{cargo, repo};
    cargo(
        &repo(),
        &["build", "--offline", "--workspace", "--bin", "apidocs"],
    );
    let binary = fs::read(repo().join("target/debug/apidocs")).expect("the built sample");
    let host = format!(
        "{}-unknown-{}-gnu",
        std::env::consts::ARCH,
        std::env::consts::OS
    );
    let cat = Catalog::new().publish("apidocs.mni.dev", "v1", &binary, |e| {
        e["artifacts"][0]["target"] = json!(host);
        let other = json!({"target": "riscv64gc-unknown-none-elf", "url": "nowhere", "sha256": "0".repeat(64)});
        e["artifacts"].as_array_mut().expect("artefacts").insert(0, other);
    });
    let p = Project::new();
    let out = p
        .run(&["plugins", "install", "apidocs", "--catalog", &cat.path()])
        .ok();
    assert!(
        out.contains(&format!("  sha256 {}\n", sha256(&binary))),
        "{out}"
    );
    let record = fs::read_to_string(
        installed_exe(&p, "apidocs.mni.dev", "v1").with_file_name("install.json"),
    )
    .expect("record");
    assert!(
        record.contains(&format!("\"target\": \"{host}\"")),
        "{record}"
    );
    p.run(&[
        "--plugins",
        "rust,apidocs.mni.dev/v1",
        "init",
        "--domain",
        "acme.io",
    ])
    .ok();
    let out = p.run(&create_crew_api("Captain", &[])).ok();
    assert!(out.contains("   create docs/captain.md\n"), "{out}");
}
