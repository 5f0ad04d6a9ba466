//! The reference VM service's web UI in a real browser: the committed `services/vm` project
//! built, its operator running on `mni-dev` with KubeVirt simulated as its ServiceAccount, the
//! backend as the ServiceAccount the operator made for it, the frontend in front — then, in
//! headless Chromium, an instance created from the form runs with an address, stops and starts
//! with its buttons (the page refreshes itself) and is deleted with its Delete button.

mod service_support;

use std::time::Instant;

use serde_json::{Value, json};

use service_support::chromium::{self, Chromium};
use service_support::{CONVERGE, Cluster, Operator, Project, eventually, eventually_value};

const PROJECT: &str = "services/vm";
const OPERATOR: &str = "compute-operator";
const BACKEND: &str = "compute-backend";
const FRONTEND: &str = "compute-frontend";
const TENANT: &str = "tenant-a";

const ROWS: &str = "[...document.querySelectorAll('#items tbody tr')].map(tr => ({\
    name: tr.dataset.name,\
    type: tr.querySelector('td.type').textContent,\
    phase: tr.querySelector('td.phase').textContent,\
    ip: tr.querySelector('td.ip').textContent,\
    ready: tr.querySelector('td.status').textContent}))";

fn step(started: Instant, what: &str) {
    println!("[{:>6.1?}] {what}", started.elapsed());
}

fn row(rows: &Value, name: &str) -> Option<Value> {
    rows.as_array()?.iter().find(|r| r["name"] == name).cloned()
}

/// Waits until the page lists `name` in phase `phase`; returns its row.
fn wait_row(page: &mut chromium::Page<'_>, name: &str, phase: &str) -> Value {
    eventually_value(&format!("{name} to be listed as {phase}"), CONVERGE, || {
        let rows = page.eval(ROWS);
        match row(&rows, name) {
            Some(r) if r["phase"] == phase => Ok(r),
            _ => Err(rows.to_string()),
        }
    })
}

#[test]
fn vm_frontend_creates_stops_starts_and_deletes_in_chromium() {
    let started = Instant::now();
    // Before building anything: without Chromium there is nothing to test.
    chromium::executable();

    step(
        started,
        "build services/vm, install it on mni-dev with KubeVirt",
    );
    let project = Project::build_committed(PROJECT, OPERATOR, BACKEND, FRONTEND);
    let tmp = tempfile::tempdir().expect("tempdir");
    let cluster = Cluster::start_with(tmp.path(), &["--simulate-upstream", "kubevirt"]);
    let config = project.path("operator/config/default");
    cluster.kubectl(&["apply", "-k", config.to_str().expect("UTF-8 path")]);
    let operator_kubeconfig = cluster.service_account_kubeconfig(
        "compute-operator-system",
        "compute-operator-controller-manager",
        "operator.kubeconfig",
    );
    let mut operator = Operator::start(&project, &operator_kubeconfig);
    cluster.kubectl(&["create", "namespace", TENANT]);
    let sample = project.path("operator/config/samples/compute_v1alpha1_compute.yaml");
    let sample = sample.to_str().expect("UTF-8 path");
    cluster.kubectl(&["-n", TENANT, "apply", "-f", sample]);
    let timeout = format!("--timeout={}s", CONVERGE.as_secs());
    let ready = "--for=condition=Ready";
    cluster.kubectl(&[
        "-n",
        TENANT,
        "wait",
        "compute/compute-sample",
        ready,
        &timeout,
    ]);

    step(
        started,
        "start the backend (as its ServiceAccount) and the frontend",
    );
    let backend_kubeconfig =
        cluster.service_account_kubeconfig(TENANT, "compute-sample-backend", "backend.kubeconfig");
    let (_backend, backend_url) = service_support::start_server(
        &project,
        BACKEND,
        &["--namespace", TENANT],
        Some(&backend_kubeconfig),
    );
    let (_frontend, frontend_url) =
        service_support::start_server(&project, FRONTEND, &["--backend-url", &backend_url], None);

    step(started, "open the frontend, fill in the form, click Create");
    let mut browser = Chromium::launch();
    let mut page = browser.open(&frontend_url);
    assert_eq!(
        page.eval("document.title"),
        json!("Compute — Virtual machines")
    );
    page.type_into("#create-form input[name=name]", "lab");
    page.type_into(
        "#create-form input[name=image]",
        "quay.io/containerdisks/fedora:41",
    );
    page.click("#create-form button[type=submit]");
    let lab = wait_row(&mut page, "lab", "Running");
    assert_eq!(lab["type"], "s1.small");
    assert_eq!(lab["ready"], "True");
    assert!(
        lab["ip"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.246.")),
        "{lab}"
    );

    step(started, "Stop, then Start");
    page.click("#items tbody tr[data-name=lab] button.stop");
    let stopped = wait_row(&mut page, "lab", "Stopped");
    assert_eq!(stopped["ip"], "");
    page.click("#items tbody tr[data-name=lab] button.start");
    wait_row(&mut page, "lab", "Running");
    let strategy = cluster.kubectl(&[
        "-n",
        TENANT,
        "get",
        "inst",
        "lab",
        "-o",
        "jsonpath={.spec.runStrategy}",
    ]);
    assert_eq!(strategy, "Always");

    step(started, "Delete");
    page.click("#items tbody tr[data-name=lab] button.delete");
    eventually("lab to leave the list", CONVERGE, || {
        let rows = page.eval(ROWS);
        match row(&rows, "lab") {
            None => Ok(()),
            Some(r) => Err(r.to_string()),
        }
    });
    eventually("lab's VirtualMachine to go", CONVERGE, || {
        match cluster.try_kubectl(&[
            "-n",
            TENANT,
            "get",
            "vm",
            "lab",
            "--ignore-not-found",
            "-o",
            "name",
        ]) {
            Ok(out) if out.trim().is_empty() => Ok(()),
            Ok(out) => Err(out),
            Err(e) => Err(e),
        }
    });
    browser.close();
    operator.assert_running();
    step(started, "done");
}
