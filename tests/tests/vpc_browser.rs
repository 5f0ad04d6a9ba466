//! The reference VPC service's web UI in a real browser: the committed `services/vpc` project
//! is built, `mni-dev` runs with the simulated Kube-OVN upstream (`--simulate-upstream
//! kube-ovn`), the network operator runs as its ServiceAccount and makes the sample
//! VirtualPrivateCloud Ready in namespace `tenant-a`; the backend runs there as the
//! ServiceAccount the sample Network made for it, and the frontend proxies to it. Headless
//! Chromium shows the sample VPC with its subnets' free IPs and its NAT gateway's EIPs; a VPC is
//! created by typing into the form, shows up Ready with its free IPs, and is deleted with its
//! Delete button, which removes it from the API server and its Kube-OVN objects with it. A
//! screenshot is saved under `target/artifacts/`.
//!
//! Chromium must be installed (`apt-get install -y chromium`): without it the test fails,
//! saying so.

mod service_support;

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use service_support::chromium::{self, Chromium};
use service_support::{CONVERGE, Cluster, Operator, Project, eventually, eventually_value};

/// The committed project, relative to the repository.
const PROJECT: &str = "services/vpc";
/// The network service's operator crate in it (the project is one service, laid out flat).
const OPERATOR_DIR: &str = "operator";
const OPERATOR: &str = "network-operator";
const BACKEND: &str = "network-backend";
const FRONTEND: &str = "network-frontend";
/// The namespace the VPCs live in.
const TENANT: &str = "tenant-a";
/// The sample VirtualPrivateCloud.
const SAMPLE: &str = "virtualprivatecloud-sample";

/// The rows of the page's table: name, subnets (one text per subnet), NAT EIPs, Ready, message.
const ROWS: &str = "[...document.querySelectorAll('#items tbody tr')].map(tr => ({\
    name: tr.dataset.name,\
    subnets: Object.fromEntries([...tr.querySelectorAll('li.subnet')]\
        .map(li => [li.dataset.name, li.textContent])),\
    eips: tr.querySelector('td.eips').textContent,\
    ready: tr.querySelector('td.status').textContent,\
    message: tr.querySelector('td.message').textContent}))";

/// Where the screenshot goes: `target/artifacts/`, next to Cargo's `target/tmp`.
fn screenshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("artifacts/vpc-frontend.png")
}

fn step(started: Instant, what: &str) {
    println!("[{:>6.1?}] {what}", started.elapsed());
}

/// The row of VPC `name` in `rows` (from [`ROWS`]).
fn row<'a>(rows: &'a Value, name: &str) -> Option<&'a Value> {
    rows.as_array()?.iter().find(|r| r["name"] == name)
}

/// Whether `eips` (the NAT EIPs cell) lists EIPs `egress` and `ingress`, each with an address
/// from the simulated external network 172.19.0.0/24.
fn eips_assigned(eips: &str) -> bool {
    let parts: Vec<&str> = eips.split(", ").collect();
    parts.len() == 2
        && ["egress", "ingress"]
            .iter()
            .zip(&parts)
            .all(|(name, part)| {
                part.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(" 172.19.0."))
                    .and_then(|host| host.parse::<u8>().ok())
                    .is_some()
            })
}

/// What the page's error box says.
fn error_box(page: &mut chromium::Page<'_>) -> Value {
    page.eval("document.getElementById('error') && document.getElementById('error').textContent")
}

#[test]
fn vpc_frontend_lists_creates_and_deletes_in_chromium() {
    let started = Instant::now();
    // Before building anything: without Chromium there is nothing to test.
    chromium::executable();

    step(
        started,
        "build services/vpc, install it on mni-dev with Kube-OVN",
    );
    let project = Project::build_committed(PROJECT, OPERATOR, BACKEND, FRONTEND);
    let tmp = tempfile::tempdir().expect("tempdir");
    let cluster = Cluster::start_with(tmp.path(), &["--simulate-upstream", "kube-ovn"]);
    let config = project.path(&format!("{OPERATOR_DIR}/config/default"));
    cluster.kubectl(&["apply", "-k", config.to_str().expect("UTF-8 path")]);
    let operator_kubeconfig = cluster.service_account_kubeconfig(
        "network-operator-system",
        "network-operator-controller-manager",
        "operator.kubeconfig",
    );
    let mut operator = Operator::start(&project, &operator_kubeconfig);
    cluster.kubectl(&["create", "namespace", TENANT]);
    for (sample, object) in [
        ("network_v1alpha1_network.yaml", "network/network-sample"),
        (
            "network_v1alpha1_virtualprivatecloud.yaml",
            "tvpc/virtualprivatecloud-sample",
        ),
    ] {
        let path = project.path(&format!("{OPERATOR_DIR}/config/samples/{sample}"));
        cluster.kubectl(&[
            "-n",
            TENANT,
            "apply",
            "-f",
            path.to_str().expect("UTF-8 path"),
        ]);
        let timeout = format!("--timeout={}s", CONVERGE.as_secs());
        cluster.kubectl(&[
            "-n",
            TENANT,
            "wait",
            object,
            "--for=condition=Ready",
            &timeout,
        ]);
    }

    step(
        started,
        "start the backend (as its ServiceAccount) and the frontend",
    );
    let backend_kubeconfig =
        cluster.service_account_kubeconfig(TENANT, "network-sample-backend", "backend.kubeconfig");
    let (_backend, backend_url) = service_support::start_server(
        &project,
        BACKEND,
        &["--namespace", TENANT],
        Some(&backend_kubeconfig),
    );
    let (_frontend, frontend_url) =
        service_support::start_server(&project, FRONTEND, &["--backend-url", &backend_url], None);

    step(started, "open the frontend in headless Chromium");
    let mut browser = Chromium::launch();
    let mut page = browser.open(&frontend_url);
    let sample = eventually_value(
        "the sample VPC to be listed, Ready, with its free IPs and EIPs",
        CONVERGE,
        || {
            let rows = page.eval(ROWS);
            match row(&rows, SAMPLE) {
                Some(r)
                    if r["ready"] == "True"
                        && !r["subnets"].to_string().contains("pending")
                        && eips_assigned(r["eips"].as_str().unwrap_or_default()) =>
                {
                    Ok(r.clone())
                }
                _ => Err(format!("rows {rows}, error box {}", error_box(&mut page))),
            }
        },
    );
    assert_eq!(
        page.eval("document.title"),
        json!("Network — Virtual private clouds")
    );
    let subnets = sample["subnets"].as_object().expect("subnets by name");
    assert_eq!(
        subnets.keys().collect::<Vec<_>>(),
        ["web", "db"],
        "the sample's subnets, in its order: {sample}"
    );
    let web = subnets["web"].as_str().expect("text");
    assert!(
        web.starts_with("web 10.0.1.0/24,fd00:10:1::/64: 245 IPv4, ") && web.ends_with(" free"),
        "web subnet shown as {web:?}"
    );
    assert_eq!(subnets["db"], "db 10.0.2.0/24: 253 IPv4 free");
    println!("sample VPC as shown: {sample}");

    step(started, "fill in the form and click Create");
    page.type_into("#create-form input[name=name]", "lab");
    page.type_into("#create-form input[name=subnet]", "lan");
    page.type_into("#create-form input[name=cidrBlock]", "10.20.0.0/24");
    page.click("#create-form button[type=submit]");

    step(started, "the new VPC is listed, Ready, with its free IPs");
    let lab = eventually_value("lab listed as Ready with its free IPs", CONVERGE, || {
        let rows = page.eval(ROWS);
        match row(&rows, "lab") {
            Some(r) if r["ready"] == "True" && !r["subnets"].to_string().contains("pending") => {
                Ok(r.clone())
            }
            _ => Err(format!("rows {rows}, error box {}", error_box(&mut page))),
        }
    });
    assert_eq!(
        lab["subnets"],
        json!({"lan": "lan 10.20.0.0/24: 253 IPv4 free"})
    );
    assert_eq!(lab["eips"], "—", "no NAT gateway was asked for");
    assert_eq!(
        page.eval("document.getElementById('error').hidden"),
        json!(true)
    );
    assert_eq!(
        page.eval("document.querySelector('#create-form input[name=name]').value"),
        json!(""),
        "the form is cleared after a create"
    );
    // It went through the backend to the API server, and the operator made Kube-OVN objects.
    let cidr = cluster.kubectl(&[
        "-n",
        TENANT,
        "get",
        "tvpc",
        "lab",
        "-o",
        "jsonpath={.spec.subnets[0].cidrBlock}",
    ]);
    assert_eq!(cidr, "10.20.0.0/24");
    let owned_subnets = |cluster: &Cluster| {
        cluster.try_kubectl(&[
            "get",
            "subnets.kubeovn.io",
            "-l",
            "network.mni.dev/owner-name=lab",
            "-o",
            "name",
        ])
    };
    let before = owned_subnets(&cluster).expect("list Kube-OVN subnets");
    assert!(!before.trim().is_empty(), "lab has Kube-OVN subnets");

    let path = screenshot_path();
    page.screenshot(&path);
    println!("screenshot of the frontend: {}", path.display());

    step(started, "delete it with its Delete button");
    page.click("#items tbody tr[data-name=lab] button.delete");
    eventually("lab to leave the list", CONVERGE, || {
        let rows = page.eval(ROWS);
        match row(&rows, "lab") {
            None if row(&rows, SAMPLE).is_some() => Ok(()),
            _ => Err(rows.to_string()),
        }
    });
    eventually(
        "lab to be deleted from the API server",
        CONVERGE,
        || match cluster.try_kubectl(&[
            "-n",
            TENANT,
            "get",
            "tvpc",
            "lab",
            "--ignore-not-found",
            "-o",
            "name",
        ]) {
            Ok(out) if out.trim().is_empty() => Ok(()),
            Ok(out) => Err(out),
            Err(e) => Err(e),
        },
    );
    eventually(
        "lab's Kube-OVN subnets to be deleted",
        CONVERGE,
        || match owned_subnets(&cluster) {
            Ok(out) if out.trim().is_empty() => Ok(()),
            Ok(out) => Err(out),
            Err(e) => Err(e),
        },
    );

    browser.close();
    operator.assert_running();
    step(started, "done");
}
