//! The reference bare-metal service end to end and in a real browser: the committed
//! `services/baremetal` project built, its operator running on `mni-dev` with Metal3 simulated
//! as its own ServiceAccount (RBAC enforced), the backend as the ServiceAccount the operator
//! made for it, the frontend in front, and a real Redfish BMC (`sushy-emulator`, installed by
//! `scripts/sushy-emulator.sh`) — then, in headless Chromium, a server registered from the
//! form becomes `available`, powers on with its button (read back from the BMC over Redfish),
//! is provisioned and deprovisioned with its buttons (the page refreshes itself), and is
//! deleted with its Delete button, powered off before its host goes.

mod service_support;

use std::time::Instant;

use mni_redfish::PowerState;
use mni_redfish::testing::Emulator;
use serde_json::{Value, json};

use service_support::chromium::{self, Chromium};
use service_support::{CONVERGE, Cluster, Operator, Project, eventually, eventually_value};

const PROJECT: &str = "services/baremetal";
const OPERATOR: &str = "metal-operator";
const BACKEND: &str = "metal-backend";
const FRONTEND: &str = "metal-frontend";
const TENANT: &str = "tenant-a";

const ROWS: &str = "[...document.querySelectorAll('#items tbody tr')].map(tr => ({\
    name: tr.dataset.name,\
    state: tr.querySelector('td.state').textContent,\
    power: tr.querySelector('td.power').textContent,\
    model: tr.querySelector('td.model').textContent,\
    nics: tr.querySelector('td.nics').textContent,\
    ready: tr.querySelector('td.status').textContent}))";

fn step(started: Instant, what: &str) {
    println!("[{:>6.1?}] {what}", started.elapsed());
}

fn row(rows: &Value, name: &str) -> Option<Value> {
    rows.as_array()?.iter().find(|r| r["name"] == name).cloned()
}

/// Waits until the page lists `name` with `field` equal to `value`; returns its row.
fn wait_row(page: &mut chromium::Page<'_>, name: &str, field: &str, value: &str) -> Value {
    eventually_value(
        &format!("{name} to be listed with {field} {value}"),
        CONVERGE,
        || {
            let rows = page.eval(ROWS);
            match row(&rows, name) {
                Some(r) if r[field] == value => Ok(r),
                _ => Err(rows.to_string()),
            }
        },
    )
}

/// What the emulator says the system's power is, over Redfish.
fn bmc_power(runtime: &tokio::runtime::Runtime, bmc: &Emulator) -> Option<PowerState> {
    runtime.block_on(async {
        let client = bmc.client().connect().await.expect("Redfish");
        client
            .power_state(&bmc.systems()[0].uuid)
            .await
            .expect("power state")
    })
}

#[test]
fn baremetal_frontend_registers_powers_provisions_and_deletes_in_chromium() {
    let started = Instant::now();
    // Before building anything: without Chromium there is nothing to test.
    chromium::executable();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let bmc = runtime
        .block_on(Emulator::builder().systems(1).start())
        .expect("sushy-emulator starts (install it with scripts/sushy-emulator.sh)");

    step(
        started,
        "build services/baremetal, install it on mni-dev with Metal3",
    );
    let project = Project::build_committed(PROJECT, OPERATOR, BACKEND, FRONTEND);
    let tmp = tempfile::tempdir().expect("tempdir");
    let cluster = Cluster::start_with(tmp.path(), &["--simulate-upstream", "metal3"]);
    let config = project.path("operator/config/default");
    cluster.kubectl(&["apply", "-k", config.to_str().expect("UTF-8 path")]);
    let operator_kubeconfig = cluster.service_account_kubeconfig(
        "metal-operator-system",
        "metal-operator-controller-manager",
        "operator.kubeconfig",
    );
    let mut operator = Operator::start(&project, &operator_kubeconfig);
    cluster.kubectl(&["create", "namespace", TENANT]);
    let sample = project.path("operator/config/samples/metal_v1alpha1_metal.yaml");
    let sample = sample.to_str().expect("UTF-8 path");
    cluster.kubectl(&["-n", TENANT, "apply", "-f", sample]);
    let timeout = format!("--timeout={}s", CONVERGE.as_secs());
    let ready = "--for=condition=Ready";
    cluster.kubectl(&["-n", TENANT, "wait", "metal/metal-sample", ready, &timeout]);
    cluster.kubectl(&[
        "-n",
        TENANT,
        "create",
        "secret",
        "generic",
        "rack-bmc",
        "--from-literal=username=admin",
        "--from-literal=password=password",
    ]);

    step(
        started,
        "start the backend (as its ServiceAccount) and the frontend",
    );
    let backend_kubeconfig =
        cluster.service_account_kubeconfig(TENANT, "metal-sample-backend", "backend.kubeconfig");
    let (_backend, backend_url) = service_support::start_server(
        &project,
        BACKEND,
        &["--namespace", TENANT],
        Some(&backend_kubeconfig),
    );
    let (_frontend, frontend_url) =
        service_support::start_server(&project, FRONTEND, &["--backend-url", &backend_url], None);

    step(
        started,
        "open the frontend, register a server from the form",
    );
    let mut browser = Chromium::launch();
    let mut page = browser.open(&frontend_url);
    // Navigation does not wait for the page: wait for its title.
    eventually("the page to load", CONVERGE, || {
        let title = page.eval("document.title");
        if title == json!("Metal — Bare-metal servers") {
            Ok(())
        } else {
            Err(title.to_string())
        }
    });
    let mac = bmc.systems()[0].macs[0].clone();
    page.type_into("#create-form input[name=name]", "lab");
    page.type_into("#create-form input[name=address]", &bmc.bmc_address(0));
    page.type_into("#create-form input[name=credentials]", "rack-bmc");
    page.type_into("#create-form input[name=mac]", &mac);
    page.click("#create-form button[type=submit]");
    let lab = wait_row(&mut page, "lab", "ready", "True");
    assert_eq!(lab["state"], "available", "{lab}");
    assert_eq!(lab["power"], "Off", "{lab}");
    assert!(
        lab["nics"].as_str().is_some_and(|n| n.contains(&mac)),
        "{lab}"
    );

    step(started, "Power on: the BMC says On");
    page.click("#items tbody tr[data-name=lab] button.power-on");
    wait_row(&mut page, "lab", "power", "On");
    assert_eq!(bmc_power(&runtime, &bmc), Some(PowerState::On));

    step(started, "Provision, then Deprovision");
    page.type_into(
        "#image-form input[name=url]",
        "http://images.example.com/os.qcow2",
    );
    page.type_into("#image-form input[name=checksum]", "abc123");
    page.click("#items tbody tr[data-name=lab] button.provision");
    wait_row(&mut page, "lab", "state", "provisioned");
    page.click("#items tbody tr[data-name=lab] button.deprovision");
    wait_row(&mut page, "lab", "state", "available");
    // Deprovisioning powers the server off, and Metal3 powers it on again (online): wait until
    // the BMC has applied that too. sushy-emulator applies each action 1–11 s late, so an
    // action still pending could land after a later one.
    wait_row(&mut page, "lab", "ready", "True");

    step(started, "Delete: powered off before the host goes");
    page.click("#items tbody tr[data-name=lab] button.delete");
    eventually("lab to leave the list", CONVERGE, || {
        let rows = page.eval(ROWS);
        match row(&rows, "lab") {
            None => Ok(()),
            Some(r) => Err(r.to_string()),
        }
    });
    eventually("lab's BareMetalHost to go", CONVERGE, || {
        match cluster.try_kubectl(&[
            "-n",
            TENANT,
            "get",
            "bmh",
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
    assert_eq!(bmc_power(&runtime, &bmc), Some(PowerState::Off));
    browser.close();
    operator.assert_running();
    step(started, "done");
}
