// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! `ServerReconciler` against an in-process control plane (`mni-testkit`) with the Metal3
//! simulator, running as the operator's own ServiceAccount with the rules of
//! `config/rbac/role.yaml`, and a real Redfish BMC: `sushy-emulator` with fake systems
//! (`mni_testkit::redfish`, installed by mNi's `scripts/sushy-emulator.sh`). What the tests
//! check about power is read back from the emulator over Redfish, not from Kubernetes.
//!
//! The emulator applies a power action 1–11 s after accepting it, like real hardware; the
//! waits only bound how long that may take.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::await_condition;
use mni_metal3::v1alpha1::BareMetalHost;
use mni_operator::{Manager, READY, RunningManager};
use mni_redfish::PowerState;
use mni_testkit::redfish::Emulator;
use mni_testkit::{TestEnv, get_controlled, wait_deleted, wait_for, wait_for_condition};
use serde_json::{Value, json};

use metal_operator::api::metal_v1alpha1::REBOOT_ANNOTATION;
use metal_operator::api::metal_v1alpha1::REBOOT_REFUSED;
use metal_operator::api::metal_v1alpha1::REBOOTED;
use metal_operator::api::metal_v1alpha1::REBOOTING;
use metal_operator::api::metal_v1alpha1::RebootMode;
use metal_operator::api::metal_v1alpha1::RebootRequest;
use metal_operator::api::metal_v1alpha1::Server;
use metal_operator::api::metal_v1alpha1::ServerSpec;
use metal_operator::controllers::server::ServerReconciler;
use metal_operator::controllers::server::upstream::SERVER_LABEL;

const NAMESPACE: &str = "default";
const USER: &str = "admin";
const PASSWORD: &str = "s3cret";

/// How long Metal3 and the BMC may take for one step (power actions land 1–11 s late).
const STEP: Duration = Duration::from_secs(90);

async fn start_env() -> TestEnv {
    TestEnv::builder()
        .with_crds(metal_operator::api::crds())
        .with_metal3(true)
        .start()
        .await
        .expect("control plane starts")
}

/// The Server controller, as `src/main.rs` registers it.
async fn start_manager(env: &TestEnv) -> RunningManager {
    let client = env.crate_operator_client(env!("CARGO_MANIFEST_DIR"), env!("CARGO_PKG_NAME"));
    Manager::builder(client.await.expect("the operator's client"))
        .with_controller(ServerReconciler)
        .start_for_tests()
        .await
        .expect("manager starts")
}

async fn emulator(systems: usize) -> Emulator {
    Emulator::builder()
        .systems(systems)
        .auth(USER, PASSWORD)
        .start()
        .await
        .expect("sushy-emulator starts (install it with scripts/sushy-emulator.sh)")
}

async fn credentials(env: &TestEnv, name: &str, password: &str) {
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": name },
        "stringData": { "username": USER, "password": password },
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(env.client(), NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .expect("create the credentials Secret");
}

/// A Server for the emulator's `index`-th system, with `edit` merged into its spec.
fn server(emulator: &Emulator, index: usize, secret: &str, edit: Value) -> Server {
    let mut spec = json!({
        "bmc": { "address": emulator.bmc_address(index), "credentialsName": secret },
        "bootMACAddress": emulator.systems()[index].macs[0],
        "online": false,
    });
    if let (Some(spec), Value::Object(edit)) = (spec.as_object_mut(), edit) {
        spec.extend(edit);
    }
    let spec: ServerSpec = serde_json::from_value(spec).expect("a spec");
    Server::new(&format!("server-{index}"), spec)
}

/// What the emulator says the `index`-th system's power is, over Redfish.
async fn bmc_power(emulator: &Emulator, index: usize) -> Option<PowerState> {
    let bmc = emulator.client().connect().await.expect("Redfish");
    bmc.power_state(&emulator.systems()[index].uuid)
        .await
        .expect("power state")
}

fn state(obj: &Server) -> Option<&str> {
    obj.status.as_ref().and_then(|s| s.state.as_deref())
}

fn power(obj: &Server) -> Option<&str> {
    obj.status.as_ref().and_then(|s| s.power.as_deref())
}

fn condition(obj: &Server, type_: &str) -> (String, String) {
    obj.status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == type_))
        .map(|c| (c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

async fn set_online(api: &Api<Server>, name: &str, online: bool) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({ "spec": { "online": online } })),
    )
    .await
    .expect("patch online");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_is_preflighted_inspected_and_powered_through_redfish() {
    let bmc = emulator(1).await;
    let env = start_env().await;
    let manager = start_manager(&env).await;
    credentials(&env, "bmc", PASSWORD).await;
    let api = Api::<Server>::namespaced(env.client(), NAMESPACE);
    let hosts = Api::<BareMetalHost>::namespaced(env.client(), NAMESPACE);
    let labels = json!({ "hostLabels": { "cluster.x-k8s.io/role": "worker", "rack": "r1" } });
    let obj = api
        .create(&PostParams::default(), &server(&bmc, 0, "bmc", labels))
        .await
        .expect("create the Server");

    // Pre-flighted, registered, inspected: available and off, with the BMC's hardware.
    let ready = wait_for(
        &api,
        "server-0",
        |s| state(s) == Some("available") && condition(s, READY).0 == "Available",
        STEP,
    )
    .await
    .expect("available");
    let status = ready.status.clone().expect("status");
    assert_eq!(status.power.as_deref(), Some("Off"));
    let hardware = status.hardware.expect("hardware from inspection");
    // sushy-emulator's fake driver reports a vendor and NICs, no processors or memory.
    assert!(hardware.manufacturer.is_some(), "{hardware:?}");
    assert!(
        hardware
            .nics
            .iter()
            .any(|n| n.mac.as_deref() == Some(bmc.systems()[0].macs[0].as_str())),
        "{hardware:?}"
    );
    assert!(status.preflight.is_some());

    // The host and its Secret: owned, labelled for the Server and for host selectors.
    let host: BareMetalHost = get_controlled(&hosts, "server-0", &obj)
        .await
        .expect("the BareMetalHost, controlled by the Server");
    assert_eq!(host.labels()[SERVER_LABEL], "server-0");
    assert_eq!(host.labels()["cluster.x-k8s.io/role"], "worker");
    let bmc_secret = host.spec.bmc.clone().expect("bmc").credentials_name;
    assert_eq!(bmc_secret, "server-0-bmc");
    let secrets = Api::<Secret>::namespaced(env.client(), NAMESPACE);
    let copy: Secret = get_controlled(&secrets, &bmc_secret, &obj)
        .await
        .expect("the BMC Secret, controlled by the Server");
    assert_eq!(copy.labels()["environment.metal3.io"], "baremetal");

    // Power on: the emulator says On over Redfish, then the Server does.
    set_online(&api, "server-0", true).await;
    wait_for(
        &api,
        "server-0",
        |s| power(s) == Some("On") && condition(s, READY).0 == "Available",
        STEP,
    )
    .await
    .expect("powered on");
    assert_eq!(bmc_power(&bmc, 0).await, Some(PowerState::On));

    // And off again.
    set_online(&api, "server-0", false).await;
    wait_for(
        &api,
        "server-0",
        |s| power(s) == Some("Off") && condition(s, READY).0 == "Available",
        STEP,
    )
    .await
    .expect("powered off");
    assert_eq!(bmc_power(&bmc, 0).await, Some(PowerState::Off));
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_is_provisioned_and_deprovisioned_and_powered_off_before_it_goes() {
    let bmc = emulator(1).await;
    let env = start_env().await;
    let manager = start_manager(&env).await;
    credentials(&env, "bmc", PASSWORD).await;
    let api = Api::<Server>::namespaced(env.client(), NAMESPACE);
    let hosts = Api::<BareMetalHost>::namespaced(env.client(), NAMESPACE);
    let image = json!({
        "online": true,
        "image": {
            "url": "http://images.example.com/os.qcow2",
            "checksum": "http://images.example.com/os.qcow2.sha256sum",
            "checksumType": "sha256",
            "format": "qcow2",
        },
    });
    api.create(&PostParams::default(), &server(&bmc, 0, "bmc", image))
        .await
        .expect("create the Server");
    let provisioned = wait_for_condition(&api, "server-0", READY, "True", STEP * 2)
        .await
        .expect("provisioned");
    assert_eq!(state(&provisioned), Some("provisioned"));
    assert_eq!(power(&provisioned), Some("On"));
    assert_eq!(
        provisioned
            .status
            .as_ref()
            .and_then(|s| s.provisioned_image.as_deref()),
        Some("http://images.example.com/os.qcow2")
    );
    assert_eq!(bmc_power(&bmc, 0).await, Some(PowerState::On));

    // Deleting it: the finalizer keeps the host until Metal3 has deprovisioned it and
    // powered it off; only then is the host deleted. A watch sees every state the host passes.
    let deprovisioned = tokio::spawn(await_condition(
        hosts.clone(),
        "server-0",
        |h: Option<&BareMetalHost>| {
            h.is_some_and(|h| {
                h.metadata.deletion_timestamp.is_none()
                    && h.spec.image.is_none()
                    && !h.spec.online
                    && h.status
                        .as_ref()
                        .is_some_and(|s| s.provisioning.state == "available" && !s.powered_on)
            })
        },
    ));
    api.delete("server-0", &DeleteParams::default())
        .await
        .expect("delete");
    tokio::time::timeout(STEP * 2, deprovisioned)
        .await
        .expect("deprovisioned and off before the host is deleted")
        .expect("the watch task")
        .expect("the watch");
    wait_deleted(&api, "server-0", STEP)
        .await
        .expect("the Server goes");
    assert!(hosts.get_opt("server-0").await.expect("get").is_none());
    let secrets = Api::<Secret>::namespaced(env.client(), NAMESPACE);
    assert!(
        secrets
            .get_opt("server-0-bmc")
            .await
            .expect("get")
            .is_none()
    );
    assert!(
        secrets.get_opt("bmc").await.expect("get").is_some(),
        "the tenant's Secret stays"
    );
    assert_eq!(bmc_power(&bmc, 0).await, Some(PowerState::Off));
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_an_unreachable_bmc_and_a_wrong_mac_are_clear_conditions() {
    let bmc = emulator(3).await;
    let env = start_env().await;
    let manager = start_manager(&env).await;
    credentials(&env, "bmc", PASSWORD).await;
    credentials(&env, "wrong", "not-the-password").await;
    let api = Api::<Server>::namespaced(env.client(), NAMESPACE);
    let hosts = Api::<BareMetalHost>::namespaced(env.client(), NAMESPACE);

    // Nothing listens on a port just closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let unreachable = json!({ "bmc": {
        "address": format!("redfish+http://127.0.0.1:{closed}/redfish/v1/Systems/1"),
        "credentialsName": "bmc",
    } });
    let cases = [
        (
            server(&bmc, 0, "wrong", json!({})),
            "BMCCredentialsRejected",
            "bmc.credentialsName: pre-flight of BMC",
        ),
        (
            server(&bmc, 1, "bmc", unreachable),
            "BMCUnreachable",
            "is unreachable",
        ),
        (
            server(
                &bmc,
                2,
                "bmc",
                json!({ "bootMACAddress": "52:54:00:ff:ff:ff" }),
            ),
            "BootMACMismatch",
            "bootMACAddress: system",
        ),
    ];
    for (obj, _, _) in &cases {
        api.create(&PostParams::default(), obj)
            .await
            .expect("create");
    }
    for (obj, reason, message) in &cases {
        let name = obj.name_any();
        let degraded = wait_for_condition(&api, &name, "Degraded", "True", STEP)
            .await
            .expect(reason);
        let (got, text) = condition(&degraded, "Degraded");
        assert_eq!(got, *reason, "{name}: {text}");
        assert!(text.contains(message), "{name}: {text}");
        assert!(
            hosts.get_opt(&name).await.expect("get").is_none(),
            "{name}: no host"
        );
    }
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}

fn reboot_phase(obj: &Server) -> Option<&str> {
    obj.status
        .as_ref()
        .and_then(|s| s.reboot.as_ref())
        .map(|r| r.phase.as_str())
}

/// Asks for a reboot as the backend does: the request annotation, with a new id.
async fn request_reboot(api: &Api<Server>, name: &str, value: &str) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({ "metadata": { "annotations": { REBOOT_ANNOTATION: value } } })),
    )
    .await
    .expect("annotate the Server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reboot_powers_the_server_off_and_on_in_redfish_and_is_refused_when_not_provisioned() {
    let bmc = emulator(2).await;
    let env = start_env().await;
    let manager = start_manager(&env).await;
    credentials(&env, "bmc", PASSWORD).await;
    let api = Api::<Server>::namespaced(env.client(), NAMESPACE);
    let hosts = Api::<BareMetalHost>::namespaced(env.client(), NAMESPACE);
    let image = json!({
        "online": true,
        "image": {
            "url": "http://images.example.com/os.raw",
            "checksum": "http://images.example.com/os.raw.md5sum",
            "checksumType": "md5",
            "format": "raw",
        },
    });
    api.create(&PostParams::default(), &server(&bmc, 0, "bmc", image))
        .await
        .expect("create the provisioned Server");
    api.create(&PostParams::default(), &server(&bmc, 1, "bmc", json!({})))
        .await
        .expect("create the available Server");
    wait_for(
        &api,
        "server-0",
        |s| state(s) == Some("provisioned") && condition(s, READY).0 == "Provisioned",
        STEP * 2,
    )
    .await
    .expect("provisioned and on");
    assert_eq!(bmc_power(&bmc, 0).await, Some(PowerState::On));

    // A hard reboot: the operator hands it to Metal3, the BMC goes off and on again (read
    // over Redfish while it happens), and the status says when it completed.
    let request = RebootRequest::now(Some(RebootMode::Hard));
    let value = serde_json::to_string(&request).expect("JSON");
    request_reboot(&api, "server-0", &value).await;
    let host = wait_for(
        &hosts,
        "server-0",
        |h| h.annotations().contains_key("reboot.metal3.io"),
        STEP,
    )
    .await
    .expect("handed to Metal3");
    assert_eq!(host.annotations()["reboot.metal3.io"], r#"{"mode":"hard"}"#);
    let rebooting = wait_for(&api, "server-0", |s| reboot_phase(s).is_some(), STEP)
        .await
        .expect("status.reboot");
    if reboot_phase(&rebooting) == Some(REBOOTING) {
        assert_eq!(condition(&rebooting, READY).0, REBOOTING);
    }
    let deadline = tokio::time::Instant::now() + STEP * 2;
    let mut seen: Vec<PowerState> = Vec::new();
    let done = loop {
        if let Some(power) = bmc_power(&bmc, 0).await
            && seen.last() != Some(&power)
        {
            seen.push(power);
        }
        let obj = api.get("server-0").await.expect("get");
        if reboot_phase(&obj) == Some(REBOOTED) {
            break obj;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no completed reboot; the BMC reported {seen:?}, the status is {:?}",
            obj.status
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(seen.first(), Some(&PowerState::On), "{seen:?}");
    assert!(seen.contains(&PowerState::Off), "{seen:?}");
    assert_eq!(seen.last(), Some(&PowerState::On), "{seen:?}");
    assert_eq!(bmc_power(&bmc, 0).await, Some(PowerState::On));
    let reboot = done.status.clone().and_then(|s| s.reboot).expect("reboot");
    assert_eq!(reboot.id, request.id);
    assert_eq!(reboot.mode, Some(RebootMode::Hard));
    assert!(
        reboot.started_at.is_some() && reboot.completed_at.is_some(),
        "{reboot:?}"
    );
    let host = hosts.get("server-0").await.expect("the host");
    assert!(!host.annotations().contains_key("reboot.metal3.io"));
    wait_for(
        &api,
        "server-0",
        |s| condition(s, READY).0 == "Provisioned" && power(s) == Some("On"),
        STEP,
    )
    .await
    .expect("ready again");
    // The same request again does nothing: it is done.
    request_reboot(&api, "server-0", &value).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let host = hosts.get("server-0").await.expect("the host");
    assert!(!host.annotations().contains_key("reboot.metal3.io"));

    // A mode Metal3 does not know, and a server that is not provisioned: refused, saying why.
    request_reboot(&api, "server-1", r#"{"id":"x","mode":"gentle"}"#).await;
    let refused = wait_for(
        &api,
        "server-1",
        |s| reboot_phase(s) == Some(REBOOT_REFUSED),
        STEP,
    )
    .await
    .expect("refused");
    let message = refused
        .status
        .and_then(|s| s.reboot)
        .and_then(|r| r.message);
    assert!(
        message.as_deref().is_some_and(|m| m.contains("gentle")),
        "{message:?}"
    );
    wait_for(&api, "server-1", |s| state(s) == Some("available"), STEP)
        .await
        .expect("available");
    request_reboot(&api, "server-1", r#"{"id":"y","mode":"soft"}"#).await;
    let refused = wait_for(
        &api,
        "server-1",
        |s| {
            s.status
                .as_ref()
                .and_then(|s| s.reboot.as_ref())
                .is_some_and(|r| r.id == "y" && r.phase == REBOOT_REFUSED)
        },
        STEP,
    )
    .await
    .expect("refused");
    let message = refused
        .status
        .and_then(|s| s.reboot)
        .and_then(|r| r.message);
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("state: the server is available")),
        "{message:?}"
    );
    let host = hosts.get("server-1").await.expect("the host");
    assert!(!host.annotations().contains_key("reboot.metal3.io"));
    assert_eq!(bmc_power(&bmc, 1).await, Some(PowerState::Off));
    manager.shutdown().await.expect("the manager stops");
    env.shutdown().await;
}
