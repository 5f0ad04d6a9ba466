//! The scaffolded service's web UI in a real browser: headless Chromium loads the frontend,
//! which proxies to the backend, which runs against `mni-dev` as the ServiceAccount the
//! operator made for it; a BillingAccount is created by typing into the form and clicking
//! Create, shows up in the list with the Ready status the operator gives it, and is deleted
//! with its Delete button. A screenshot is saved under `target/artifacts/`.
//!
//! Chromium is driven through its DevTools protocol (see `service_support/chromium.rs`). It
//! must be installed (`apt-get install -y chromium`; CI's `.ci/run` does): without it the test
//! fails, saying so.

mod service_support;

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use service_support::chromium::{self, Chromium};
use service_support::{
    BACKEND, CONVERGE, Cluster, FRONTEND, Operator, Project, SERVICE_DIR, eventually,
    eventually_value,
};

/// The rows of the page's table: name, display name, Ready, message.
const ROWS: &str = "[...document.querySelectorAll('#items tbody tr')]\
    .map(tr => [...tr.cells].slice(0, 4).map(td => td.textContent))";

/// Where the screenshot goes: `target/artifacts/`, next to Cargo's `target/tmp`.
fn screenshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("artifacts/service-frontend.png")
}

fn step(started: Instant, what: &str) {
    println!("[{:>6.1?}] {what}", started.elapsed());
}

#[test]
fn billing_frontend_creates_and_lists_in_chromium() {
    let started = Instant::now();
    // Before building anything: without Chromium there is nothing to test.
    chromium::executable();

    step(started, "scaffold, build, install the service on mni-dev");
    let project = Project::build();
    let tmp = tempfile::tempdir().expect("tempdir");
    let cluster = Cluster::start(tmp.path());
    let config = project.path(&format!("{SERVICE_DIR}/operator/config/default"));
    cluster.kubectl(&["apply", "-k", config.to_str().expect("UTF-8 path")]);
    let operator_kubeconfig = cluster.service_account_kubeconfig(
        "billing-operator-system",
        "billing-operator-controller-manager",
        "operator.kubeconfig",
    );
    let mut operator = Operator::start(&project, &operator_kubeconfig);
    let sample = project.path(&format!(
        "{SERVICE_DIR}/operator/config/samples/billing_v1alpha1_billing.yaml"
    ));
    cluster.kubectl(&["apply", "-f", sample.to_str().expect("UTF-8 path")]);
    cluster.wait("billing/billing-sample", "condition=Ready");

    step(
        started,
        "start the backend (as its ServiceAccount) and the frontend",
    );
    let backend_kubeconfig = cluster.service_account_kubeconfig(
        "default",
        "billing-sample-backend",
        "backend.kubeconfig",
    );
    let (_backend, backend_url) = service_support::start_server(
        &project,
        BACKEND,
        &["--namespace", "default"],
        Some(&backend_kubeconfig),
    );
    let (_frontend, frontend_url) =
        service_support::start_server(&project, FRONTEND, &["--backend-url", &backend_url], None);

    step(started, "open the frontend in headless Chromium");
    let mut browser = Chromium::launch();
    let mut page = browser.open(&frontend_url);
    // Loaded, and the first refresh through /api found no BillingAccount.
    eventually("the page to load and list nothing", CONVERGE, || {
        let shown = page.eval(
            "document.readyState === 'complete' \
             && !!document.getElementById('empty') && !document.getElementById('empty').hidden",
        );
        if shown == json!(true) {
            Ok(())
        } else {
            Err(format!(
                "{}",
                page.eval("document.body && document.body.innerText")
            ))
        }
    });
    assert_eq!(
        page.eval("document.title"),
        json!("Billing — BillingAccounts")
    );

    step(started, "fill in the form and click Create");
    page.type_into("#create-form input[name=name]", "acme");
    page.type_into("#create-form input[name=displayName]", "ACME Inc.");
    page.type_into("#create-form input[name=description]", "Made in Chromium");
    page.click("#create-form button[type=submit]");

    step(started, "the new BillingAccount is listed, Ready");
    let row = eventually_value("acme listed as Ready", CONVERGE, || {
        let rows = page.eval(ROWS);
        let acme = rows
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r[0] == "acme")
            .cloned();
        match acme {
            Some(row) if row[2] == "True" => Ok(row),
            _ => Err(format!(
                "rows {rows}, error box {:?}",
                page.eval("document.getElementById('error').textContent")
            )),
        }
    });
    assert_eq!(
        row,
        json!(["acme", "ACME Inc.", "True", "ACME Inc. is ready"])
    );
    assert_eq!(
        page.eval("document.getElementById('error').hidden"),
        json!(true)
    );
    assert_eq!(
        page.eval("document.querySelector('#create-form input[name=name]').value"),
        json!(""),
        "the form is cleared after a create"
    );
    // It went through the backend to the API server.
    let description = cluster.kubectl(&[
        "get",
        "billingaccount",
        "acme",
        "-o",
        "jsonpath={.spec.description}",
    ]);
    assert_eq!(description, "Made in Chromium");

    let path = screenshot_path();
    page.screenshot(&path);
    println!("screenshot of the frontend: {}", path.display());

    step(started, "delete it with its Delete button");
    page.click("#items tbody tr[data-name=acme] button.delete");
    eventually("acme to leave the list", CONVERGE, || {
        match page.eval(ROWS) {
            Value::Array(rows) if rows.is_empty() => Ok(()),
            rows => Err(rows.to_string()),
        }
    });
    eventually(
        "acme to be deleted from the API server",
        CONVERGE,
        || match cluster.try_kubectl(&[
            "get",
            "billingaccount",
            "acme",
            "--ignore-not-found",
            "-o",
            "name",
        ]) {
            Ok(out) if out.trim().is_empty() => Ok(()),
            Ok(out) => Err(out),
            Err(e) => Err(e),
        },
    );

    browser.close();
    operator.assert_running();
    step(started, "done");
}
