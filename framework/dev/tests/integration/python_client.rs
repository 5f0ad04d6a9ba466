//! The official Python client (`kubernetes` on PyPI) against `mni-dev up`: its models, built
//! without `api_version` and `kind` as users build them, are created and replaced, because the
//! server takes both from the request path as kube-apiserver does; custom objects must name
//! their kind, as kube-apiserver requires. And every stored built-in kind of the API server's
//! fidelity table goes through the client's DynamicClient: discovery, create, read, each patch
//! type, server-side apply and delete.
//!
//! The client is pinned ([`CLIENT`]) and installed by `scripts/python-client.sh` (which
//! `scripts/test.sh` runs) in a virtualenv under `~/.cache/mni/`; `MNI_PYTHON` names another
//! interpreter that has it. Without it the test fails, saying how to install it.

use crate::support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use support::dev::Dev;

/// The pinned client version (as `scripts/python-client.sh` installs it).
const CLIENT: &str = "37.0.2";

/// The virtualenv `scripts/python-client.sh` makes: `~/.cache/mni/python-kubernetes-CLIENT`.
fn venv() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .expect("HOME or XDG_CACHE_HOME is set");
    cache
        .join("mni")
        .join(format!("python-kubernetes-{CLIENT}"))
}

/// The Python interpreter with the client: `MNI_PYTHON`, or the one of [`venv`].
fn python() -> PathBuf {
    std::env::var_os("MNI_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| venv().join("bin").join("python"))
}

/// Runs the fixture `script` (under tests/fixtures) with the client against a fresh `mni-dev
/// up`, passing the kubeconfig and `args`; the JSON object it prints. Fails, saying how to
/// install it, when the pinned client is missing.
fn run_script(script: &str, args: &[&std::path::Path]) -> Value {
    let python = python();
    let probe = Command::new(&python)
        .args(["-c", "import kubernetes; print(kubernetes.__version__)"])
        .output();
    let installed = probe
        .as_ref()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    assert!(
        installed.as_deref() == Some(CLIENT),
        "the official Python client {CLIENT} is needed at {}: run scripts/python-client.sh, or `python3 -m venv \
         {venv} && {venv}/bin/pip install kubernetes=={CLIENT}` (or set MNI_PYTHON); found: {}",
        python.display(),
        match &probe {
            Ok(o) => format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => e.to_string(),
        },
        venv = venv().display(),
    );

    let tmp = tempfile::tempdir().expect("tempdir");
    let _dev = Dev::up(tmp.path());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(script);
    let out = Command::new(&python)
        .arg(&script)
        .arg(tmp.path().join("kubeconfig"))
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{} printed no JSON ({e}): {}",
            script.display(),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(r["client"], CLIENT);
    r
}

#[test]
fn python_client_models_without_api_version_and_kind() {
    let r = run_script("python_client.py", &[]);

    // Created and answered with the kind taken from the path.
    let typed = |key: &str, api_version: &str, kind: &str| {
        assert_eq!(r[key]["apiVersion"], api_version, "{key}: {r}");
        assert_eq!(r[key]["kind"], kind, "{key}: {r}");
    };
    typed("namespace", "v1", "Namespace");
    typed("configmap", "v1", "ConfigMap");
    assert_eq!(r["configmap"]["data"]["mode"], "fast");
    typed("replaced", "v1", "ConfigMap");
    assert_eq!(r["replaced"]["data"]["mode"], "slow");
    assert_eq!(r["read"]["mode"], "slow");
    typed("lease", "coordination.k8s.io/v1", "Lease");
    assert_eq!(r["lease"]["holder"], "me");
    typed("crd", "apiextensions.k8s.io/v1", "CustomResourceDefinition");

    // A model naming another version is refused, as kube-apiserver refuses it, and not stored.
    assert_eq!(r["mismatch"]["status"], 400, "{r}");
    assert_eq!(
        r["mismatch"]["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: no kind \"ConfigMap\" is \
         registered for version \"apps/v1\" in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\""
    );
    assert_eq!(r["mismatch_stored"]["status"], 404, "{r}");

    // Custom objects are decoded unstructured: their kind is required.
    assert_eq!(r["custom_without_kind"]["status"], 400, "{r}");
    let message = r["custom_without_kind"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.starts_with(
            "Widget in version \"v1\" cannot be handled as a Widget: Object 'Kind' is missing in '"
        ),
        "{message}"
    );
    assert_eq!(r["custom_without_api_version"]["status"], 400, "{r}");
    assert_eq!(
        r["custom_without_api_version"]["message"],
        "the API version in the data () does not match the expected API version (example.com/v1)"
    );
    assert_eq!(r["custom"]["kind"], "Widget");
    assert_eq!(r["custom"]["size"], 2);
}

/// The API server's fidelity table (one minimal object of every stored built-in kind, shared
/// with its own tests) through the client's DynamicClient: each kind is found in discovery,
/// created, read, patched with a merge patch, a JSON patch and a strategic merge patch, applied
/// server-side, read again with every change there, deleted and gone.
#[test]
fn python_client_drives_every_stored_kind() {
    let cases = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../controlplane/apiserver/tests/fixtures/kinds.json");
    let table: Vec<Value> =
        serde_json::from_slice(&std::fs::read(&cases).expect("the fidelity table")).expect("json");
    let r = run_script("python_kinds.py", &[&cases]);
    let kinds = r["kinds"].as_object().expect("kinds");
    assert_eq!(kinds.len(), table.len(), "{r}");
    let mut failures = Vec::new();
    for case in &table {
        let kind = case["kind"].as_str().expect("kind");
        let steps = &kinds[kind];
        for step in [
            "create",
            "get",
            "merge",
            "json",
            "strategic",
            "apply",
            "reread",
            "delete",
        ] {
            if steps[step] != 200 {
                failures.push(format!("{kind} {step}: {}", steps[step]));
            }
        }
        if steps["gone"] != 404 {
            failures.push(format!(
                "{kind}: still there after delete ({})",
                steps["gone"]
            ));
        }
        let labels = serde_json::json!([
            "python.mni.dev/step-apply",
            "python.mni.dev/step-merge",
            "python.mni.dev/step-strategic"
        ]);
        if steps["labels"] != labels || steps["annotated"] != "yes" {
            failures.push(format!(
                "{kind}: patches not all kept: labels {}, annotation {}",
                steps["labels"], steps["annotated"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} kinds: {failures:#?}",
        failures.len(),
        table.len()
    );
}
