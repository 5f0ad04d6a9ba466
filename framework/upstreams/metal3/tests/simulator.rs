//! The Metal3 simulator against a real mNi API server (`mni_testkit::TestEnv::with_metal3`)
//! and a real Redfish BMC: `sushy-emulator` with fake systems (`mni_redfish::testing`,
//! installed by `scripts/sushy-emulator.sh`). What the hosts say is checked against what the
//! emulator says over Redfish.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use mni_metal3::v1alpha1::{
    BareMetalHost, ErrorType, HOST_FINALIZER, HardwareData, OperationalStatus, ProvisioningState,
};
use mni_redfish::PowerState;
use mni_redfish::testing::Emulator;
use mni_testkit::{TestEnv, wait_deleted, wait_for};
use serde_json::{Value, json};

/// The emulator applies power actions 1–11 s after accepting them; this only bounds the wait.
const TIMEOUT: Duration = Duration::from_secs(90);
const NS: &str = "default";
const USER: &str = "admin";
const PASSWORD: &str = "s3cret";

async fn env() -> anyhow::Result<TestEnv> {
    Ok(TestEnv::builder().with_metal3(true).start().await?)
}

async fn secret(
    client: &Client,
    name: &str,
    username: &str,
    password: Option<&str>,
) -> anyhow::Result<()> {
    let mut data = json!({"username": username});
    if let Some(password) = password {
        data["password"] = password.into();
    }
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name},
        "type": "Opaque",
        "stringData": data,
    }))?;
    Api::<Secret>::namespaced(client.clone(), NS)
        .create(&PostParams::default(), &secret)
        .await?;
    Ok(())
}

async fn host(client: &Client, name: &str, spec: Value) -> anyhow::Result<BareMetalHost> {
    let host: BareMetalHost = serde_json::from_value(json!({
        "apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
        "metadata": {"name": name},
        "spec": spec,
    }))?;
    Ok(hosts(client).create(&PostParams::default(), &host).await?)
}

fn hosts(client: &Client) -> Api<BareMetalHost> {
    Api::namespaced(client.clone(), NS)
}

fn state(host: &BareMetalHost) -> Option<ProvisioningState> {
    host.status.as_ref().and_then(|s| s.state())
}

async fn wait_state(
    client: &Client,
    name: &str,
    wanted: ProvisioningState,
) -> anyhow::Result<BareMetalHost> {
    Ok(wait_for(&hosts(client), name, |h| state(h) == Some(wanted), TIMEOUT).await?)
}

async fn wait_error(client: &Client, name: &str) -> anyhow::Result<BareMetalHost> {
    Ok(wait_for(
        &hosts(client),
        name,
        |h| h.status.as_ref().is_some_and(|s| s.error_type.is_some()),
        TIMEOUT,
    )
    .await?)
}

/// What the emulator says the system's power is, over Redfish.
async fn bmc_power(emulator: &Emulator, index: usize) -> anyhow::Result<Option<PowerState>> {
    let bmc = emulator.client().connect().await?;
    Ok(bmc.power_state(&emulator.systems()[index].uuid).await?)
}

#[tokio::test]
async fn a_host_registers_and_is_inspected_from_redfish_into_available() -> anyhow::Result<()> {
    let emulator = Emulator::builder()
        .systems(2)
        .nics_per_system(2)
        .auth(USER, PASSWORD)
        .start()
        .await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc-1", USER, Some(PASSWORD)).await?;
    let fake = &emulator.systems()[1];
    host(
        &client,
        "server-1",
        json!({
            "online": false,
            "bootMACAddress": fake.macs[1].to_uppercase(),
            "bmc": {"address": emulator.bmc_address(1), "credentialsName": "bmc-1"},
        }),
    )
    .await?;
    let host = wait_state(&client, "server-1", ProvisioningState::Available).await?;
    let status = host.status.clone().unwrap();
    assert_eq!(status.operational_status, OperationalStatus::Ok);
    assert_eq!(status.error_type, None);
    assert_eq!(status.error_message, "");
    assert!(!status.powered_on);
    assert_eq!(status.provisioning.id, host.uid().unwrap());
    assert!(host.finalizers().iter().any(|f| f == HOST_FINALIZER));
    let good = status.good_credentials.clone().expect("goodCredentials");
    assert_eq!(good.credentials.unwrap().name.as_deref(), Some("bmc-1"));
    let history = status.operation_history.clone().expect("operationHistory");
    assert!(history.register.unwrap().end.is_some());
    assert!(history.inspect.unwrap().end.is_some());

    // The hardware is what the BMC says.
    let hardware = status.hardware.clone().expect("status.hardware");
    let inventory = emulator
        .client()
        .connect()
        .await?
        .inventory(&fake.uuid)
        .await?;
    let macs: Vec<String> = hardware.nics.iter().filter_map(|n| n.mac.clone()).collect();
    assert_eq!(macs, fake.macs);
    assert_eq!(
        hardware.nics.iter().map(|n| n.pxe).collect::<Vec<_>>(),
        [Some(false), Some(true)]
    );
    let vendor = hardware.system_vendor.clone().unwrap();
    assert_eq!(vendor.manufacturer, inventory.manufacturer);
    assert_eq!(vendor.product_name, inventory.model);
    assert_eq!(
        hardware.ram_mebibytes,
        inventory.memory_gib.map(|g| (g * 1024.0).round() as i64)
    );
    // sushy-emulator's fake driver reports no processors or memory; what it reports is
    // carried over.
    assert_eq!(
        hardware.cpu.as_ref().and_then(|c| c.count),
        inventory.cpu_count.map(i64::from)
    );

    // HardwareData: same name, same hardware, owned by the host.
    let data = Api::<HardwareData>::namespaced(client.clone(), NS)
        .get("server-1")
        .await?;
    assert_eq!(data.spec.hardware.as_ref(), Some(&hardware));
    let owner = &data.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("BareMetalHost", host.uid().unwrap().as_str())
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn provisioning_boots_the_host_and_online_false_powers_it_off_in_redfish()
-> anyhow::Result<()> {
    let emulator = Emulator::builder().auth(USER, PASSWORD).start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    host(
        &client,
        "server",
        json!({
            "online": true,
            "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"},
            "image": {
                "url": "http://images.example/ubuntu.qcow2",
                "checksum": "http://images.example/ubuntu.qcow2.sha256sum",
                "checksumType": "sha256",
                "format": "qcow2",
            },
            "rootDeviceHints": {"deviceName": "/dev/sda"},
        }),
    )
    .await?;
    let host = wait_state(&client, "server", ProvisioningState::Provisioned).await?;
    let status = host.status.clone().unwrap();
    assert_eq!(status.provisioning.image, host.spec.image);
    assert_eq!(
        status
            .provisioning
            .root_device_hints
            .and_then(|h| h.device_name)
            .as_deref(),
        Some("/dev/sda")
    );
    assert!(
        status
            .operation_history
            .unwrap()
            .provision
            .unwrap()
            .end
            .is_some()
    );
    // Provisioned means the BMC reported the host on, after a one-time network boot.
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::On));
    let boot = emulator
        .client()
        .connect()
        .await?
        .boot(&emulator.systems()[0].uuid)
        .await?;
    assert_eq!(boot.boot_source_override_target.as_deref(), Some("Pxe"));
    let host = wait_for(
        &hosts(&client),
        "server",
        |h| h.status.as_ref().is_some_and(|s| s.powered_on),
        TIMEOUT,
    )
    .await?;
    assert_eq!(state(&host), Some(ProvisioningState::Provisioned));

    // online: false → ComputerSystem.Reset ForceOff, observed before poweredOn turns false.
    hosts(&client)
        .patch(
            "server",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"online": false}})),
        )
        .await?;
    let host = wait_for(
        &hosts(&client),
        "server",
        |h| h.status.as_ref().is_some_and(|s| !s.powered_on),
        TIMEOUT,
    )
    .await?;
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    assert_eq!(state(&host), Some(ProvisioningState::Provisioned));

    // Removing the image deprovisions: back to available, powered off, nothing provisioned.
    hosts(&client)
        .patch(
            "server",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"image": null}})),
        )
        .await?;
    let host = wait_state(&client, "server", ProvisioningState::Available).await?;
    let status = host.status.unwrap();
    assert_eq!(status.provisioning.image, None);
    assert!(
        status
            .operation_history
            .unwrap()
            .deprovision
            .unwrap()
            .end
            .is_some()
    );
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn wrong_credentials_give_a_registration_error() -> anyhow::Result<()> {
    let emulator = Emulator::builder().auth(USER, PASSWORD).start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some("wrong")).await?;
    host(
        &client,
        "server",
        json!({"online": true, "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"}}),
    )
    .await?;
    let host = wait_error(&client, "server").await?;
    let status = host.status.clone().unwrap();
    assert_eq!(status.error_type, Some(ErrorType::Registration));
    assert_eq!(status.operational_status, OperationalStatus::Error);
    assert_eq!(state(&host), Some(ProvisioningState::Registering));
    assert!(
        status.error_message.contains("refused the credentials"),
        "{}",
        status.error_message
    );
    assert!(status.error_count >= 1);
    assert!(status.good_credentials.is_none());
    let tried = status.tried_credentials.clone().expect("triedCredentials");
    assert_eq!(tried.credentials.unwrap().name.as_deref(), Some("bmc"));
    // The system stays as it was.
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));

    // Fixing the Secret registers the host.
    Api::<Secret>::namespaced(client.clone(), NS)
        .patch(
            "bmc",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": PASSWORD}})),
        )
        .await?;
    let host = wait_state(&client, "server", ProvisioningState::Available).await?;
    let status = host.status.unwrap();
    assert_eq!((status.error_type, status.error_count), (None, 0));
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn unreachable_or_unusable_bmcs_give_registration_errors() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    secret(&client, "no-password", USER, None).await?;
    // A loopback port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let cases = [
        (
            "unreachable",
            format!("redfish+http://127.0.0.1:{port}/redfish/v1/Systems/1"),
            "bmc",
            "unreachable",
        ),
        (
            "ipmi",
            "ipmi://192.168.122.1:6233".to_owned(),
            "bmc",
            "only Redfish",
        ),
        (
            "missing-secret",
            format!("redfish+http://127.0.0.1:{port}/redfish/v1/Systems/1"),
            "absent",
            "not found",
        ),
        (
            "no-password",
            format!("redfish+http://127.0.0.1:{port}/redfish/v1/Systems/1"),
            "no-password",
            "'password'",
        ),
    ];
    for (name, address, credentials, _) in &cases {
        host(
            &client,
            name,
            json!({"online": true, "bmc": {"address": address, "credentialsName": credentials}}),
        )
        .await?;
    }
    for (name, _, _, message) in &cases {
        let host = wait_error(&client, name).await?;
        let status = host.status.clone().unwrap();
        assert_eq!(status.error_type, Some(ErrorType::Registration), "{name}");
        assert_eq!(
            status.operational_status,
            OperationalStatus::Error,
            "{name}"
        );
        assert_eq!(state(&host), Some(ProvisioningState::Registering), "{name}");
        assert!(
            status.error_message.contains(message),
            "{name}: {}",
            status.error_message
        );
    }
    // No BMC details at all: unmanaged and discovered, not an error.
    host(
        &client,
        "bare",
        json!({"online": false, "bmc": {"address": "", "credentialsName": ""}}),
    )
    .await?;
    let bare = wait_state(&client, "bare", ProvisioningState::Unmanaged).await?;
    assert_eq!(
        bare.status.unwrap().operational_status,
        OperationalStatus::Discovered
    );
    // A host that never registered is released at once on deletion.
    hosts(&client)
        .delete("unreachable", &DeleteParams::default())
        .await?;
    wait_deleted(&hosts(&client), "unreachable", TIMEOUT).await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn deleting_a_provisioned_host_deprovisions_and_powers_it_off_first() -> anyhow::Result<()> {
    let emulator = Emulator::builder().start().await?;
    let env = env().await?;
    let client = env.client();
    // No auth on this BMC: any credentials do.
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    host(
        &client,
        "server",
        json!({
            "online": true,
            "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"},
            "image": {"url": "http://images.example/a.raw", "checksum": "abc", "checksumType": "md5", "format": "raw"},
        }),
    )
    .await?;
    wait_state(&client, "server", ProvisioningState::Provisioned).await?;
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::On));
    hosts(&client)
        .delete("server", &DeleteParams::default())
        .await?;
    let host = wait_for(
        &hosts(&client),
        "server",
        |h| {
            matches!(
                state(h),
                Some(
                    ProvisioningState::Deprovisioning
                        | ProvisioningState::PoweringOffBeforeDelete
                        | ProvisioningState::Deleting
                )
            )
        },
        TIMEOUT,
    )
    .await?;
    assert!(host.metadata.deletion_timestamp.is_some());
    wait_deleted(&hosts(&client), "server", TIMEOUT).await?;
    // The finalizer went only after the BMC reported the host off.
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    assert!(
        Api::<HardwareData>::namespaced(client.clone(), NS)
            .get_opt("server")
            .await?
            .is_none()
    );
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn an_externally_provisioned_host_is_not_inspected_but_its_power_is_managed()
-> anyhow::Result<()> {
    let emulator = Emulator::builder().start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    host(
        &client,
        "server",
        json!({
            "online": true,
            "externallyProvisioned": true,
            "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"},
        }),
    )
    .await?;
    wait_state(&client, "server", ProvisioningState::ExternallyProvisioned).await?;
    let host = wait_for(
        &hosts(&client),
        "server",
        |h| h.status.as_ref().is_some_and(|s| s.powered_on),
        TIMEOUT,
    )
    .await?;
    assert!(host.status.unwrap().hardware.is_none());
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::On));
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn a_virtual_media_bmc_boots_the_image_from_the_virtual_cd() -> anyhow::Result<()> {
    let emulator = Emulator::builder().start().await?;
    let images = mni_redfish::testing::ImageServer::start(b"not really an ISO".to_vec()).await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    let address = emulator
        .bmc_address(0)
        .replacen("redfish+", "redfish-virtualmedia+", 1);
    let url = images.url("live.iso");
    host(
        &client,
        "server",
        json!({
            "online": true,
            "bmc": {"address": address, "credentialsName": "bmc"},
            "image": {"url": url, "format": "live-iso"},
        }),
    )
    .await?;
    wait_state(&client, "server", ProvisioningState::Provisioned).await?;
    let bmc = emulator.client().connect().await?;
    let system = &emulator.systems()[0].uuid;
    let cd = bmc.virtual_media_drive(system, "Cd").await?;
    // A live ISO stays in the drive; the host booted from it.
    assert_eq!(cd.inserted, Some(true));
    assert_eq!(cd.image.as_deref(), Some(url.as_str()));
    assert_eq!(
        bmc.boot(system)
            .await?
            .boot_source_override_target
            .as_deref(),
        Some("Cd")
    );
    assert_eq!(bmc.power_state(system).await?, Some(PowerState::On));
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn tls_is_verified_unless_disabled_like_metal3() -> anyhow::Result<()> {
    let emulator = Emulator::builder().tls().start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    assert!(emulator.bmc_address(0).starts_with("redfish+https://"));
    for (name, disable) in [("verified", false), ("unverified", true)] {
        host(
            &client,
            name,
            json!({
                "online": false,
                "bmc": {
                    "address": emulator.bmc_address(0),
                    "credentialsName": "bmc",
                    "disableCertificateVerification": disable,
                },
            }),
        )
        .await?;
    }
    // The emulator's certificate comes from a CA the system does not trust.
    let verified = wait_error(&client, "verified").await?;
    let status = verified.status.unwrap();
    assert_eq!(status.error_type, Some(ErrorType::Registration));
    assert!(
        status.error_message.contains("TLS handshake"),
        "{}",
        status.error_message
    );
    wait_state(&client, "unverified", ProvisioningState::Available).await?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn the_simulator_installs_its_crds_when_absent() -> anyhow::Result<()> {
    let env = TestEnv::builder().start().await?;
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(env.client());
    assert!(crds.get_opt("baremetalhosts.metal3.io").await?.is_none());
    let sim = mni_metal3::simulator::Simulator::new(env.client());
    sim.install_crds().await?;
    // A second time is harmless: existing CRDs are left as they are.
    sim.install_crds().await?;
    for name in ["baremetalhosts.metal3.io", "hardwaredata.metal3.io"] {
        assert!(crds.get_opt(name).await?.is_some(), "{name}");
    }
    env.shutdown().await;
    Ok(())
}

/// The book's flow with kubectl (which sends tokens only over TLS) against an HTTPS server,
/// as `mni-dev up --simulate-upstream metal3` serves: apply a host, wait for `provisioned`,
/// read the printer columns, power it off, delete it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_provisions_powers_off_and_deletes_a_host() -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    let emulator = Emulator::builder().start().await?;
    let tmp = tempfile::tempdir()?;
    let identity = mni_apiserver::tls::TlsIdentity::load_or_create(&tmp.path().join("pki"), None)?;
    let server = mni_apiserver::Server::builder()
        .with_tls(identity)
        .start()
        .await?;
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(
        serde_yaml::from_str(&server.kubeconfig())?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    let client = Client::try_from(config)?;
    let simulator = mni_metal3::simulator::Simulator::new(client.clone())
        .with_power_poll_interval(Duration::from_millis(100));
    simulator.install_crds().await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let sim = tokio::spawn(simulator.with_crd_install(false).run(async {
        let _ = stopped.await;
    }));

    let kubectl = |args: &[&str], stdin: Option<&str>| -> anyhow::Result<String> {
        let mut child = Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", &kubeconfig)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut input = child.stdin.take().expect("piped");
        input.write_all(stdin.unwrap_or_default().as_bytes())?;
        drop(input);
        let out = child.wait_with_output()?;
        anyhow::ensure!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let address = emulator.bmc_address(0);
    let manifest = format!(
        r#"apiVersion: v1
kind: Secret
metadata:
  name: server-0-bmc
type: Opaque
stringData:
  username: admin
  password: password
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: server-0
spec:
  online: true
  bootMACAddress: "{mac}"
  bmc:
    address: {address}
    credentialsName: server-0-bmc
  image:
    url: http://images.example/ubuntu-24.04.qcow2
    checksum: http://images.example/ubuntu-24.04.qcow2.sha256sum
    checksumType: sha256
    format: qcow2
"#,
        mac = emulator.systems()[0].macs[0],
    );
    kubectl(&["apply", "-f", "-"], Some(&manifest))?;
    let waited = kubectl(
        &[
            "wait",
            "bmh/server-0",
            "--for=jsonpath={.status.provisioning.state}=provisioned",
            "--timeout=90s",
        ],
        None,
    )?;
    assert!(waited.contains("condition met"), "{waited}");
    let table = kubectl(&["get", "bmh", "-o", "wide"], None)?;
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "NAME", "STATUS", "STATE", "CONSUMER", "BMC", "ONLINE", "ERROR", "AGE"
        ],
        "{table}"
    );
    let row: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        row[..5],
        ["server-0", "OK", "provisioned", address.as_str(), "true"],
        "{table}"
    );
    let narrow = kubectl(&["get", "bmh"], None)?;
    assert!(
        !narrow.contains("STATUS") && narrow.contains("STATE"),
        "{narrow}"
    );
    let data = kubectl(
        &[
            "get",
            "hd",
            "server-0",
            "-o",
            "jsonpath={.spec.hardware.nics[0].mac}",
        ],
        None,
    )?;
    assert_eq!(data, emulator.systems()[0].macs[0]);

    kubectl(
        &[
            "patch",
            "bmh",
            "server-0",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"online":false}}"#,
        ],
        None,
    )?;
    kubectl(
        &[
            "wait",
            "bmh/server-0",
            "--for=jsonpath={.status.poweredOn}=false",
            "--timeout=90s",
        ],
        None,
    )?;
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    // kubectl delete waits until the finalizer is gone: after the deprovisioning.
    kubectl(&["delete", "bmh", "server-0", "--timeout=90s"], None)?;
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    assert!(
        kubectl(&["get", "bmh", "-o", "name"], None)?
            .trim()
            .is_empty()
    );

    let _ = stop.send(());
    sim.await??;
    server.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn annotations_skip_inspection_and_detach_a_host_whose_bmc_is_gone() -> anyhow::Result<()> {
    let emulator = Emulator::builder().systems(2).start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    let uninspected: BareMetalHost = serde_json::from_value(json!({
        "apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
        "metadata": {"name": "uninspected", "annotations": {"inspect.metal3.io": "disabled"}},
        "spec": {"online": false, "bmc": {"address": emulator.bmc_address(1), "credentialsName": "bmc"}},
    }))?;
    hosts(&client)
        .create(&PostParams::default(), &uninspected)
        .await?;
    host(
        &client,
        "server",
        json!({
            "online": true,
            "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"},
            "image": {"url": "http://images.example/a.raw", "format": "raw"},
        }),
    )
    .await?;
    let host = wait_state(&client, "uninspected", ProvisioningState::Available).await?;
    assert!(host.status.unwrap().hardware.is_none());
    wait_state(&client, "server", ProvisioningState::Provisioned).await?;

    // The BMC goes away: the provisioned host cannot be re-registered, and deleting it
    // would wait for a deprovisioning that cannot happen.
    drop(emulator);
    hosts(&client)
        .patch(
            "server",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"online": false}})),
        )
        .await?;
    let host = wait_error(&client, "server").await?;
    assert_eq!(
        host.status.unwrap().error_type,
        Some(ErrorType::ProvisionedRegistration)
    );
    hosts(&client)
        .delete("server", &DeleteParams::default())
        .await?;
    let host = hosts(&client).get("server").await?;
    assert!(host.finalizers().iter().any(|f| f == HOST_FINALIZER));
    // Detaching it lets it go.
    hosts(&client)
        .patch(
            "server",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {"baremetalhost.metal3.io/detached": ""}}}),
            ),
        )
        .await?;
    wait_deleted(&hosts(&client), "server", TIMEOUT).await?;
    env.shutdown().await;
    Ok(())
}

/// Sets (`Some`) or removes (`None`) an annotation of host `name`.
async fn annotate(
    client: &Client,
    name: &str,
    key: &str,
    value: Option<&str>,
) -> anyhow::Result<()> {
    hosts(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {key: value}}})),
        )
        .await?;
    Ok(())
}

/// Polls the BMC's power state (over Redfish) and host `name` until `done` says the host is
/// where it should be; returns every power state the BMC reported, without repeats.
async fn watch_power(
    client: &Client,
    emulator: &Emulator,
    name: &str,
    done: impl Fn(&BareMetalHost) -> bool,
) -> anyhow::Result<Vec<PowerState>> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut seen: Vec<PowerState> = Vec::new();
    loop {
        if let Some(power) = bmc_power(emulator, 0).await?
            && seen.last() != Some(&power)
        {
            seen.push(power);
        }
        if done(&hosts(client).get(name).await?) {
            return Ok(seen);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "host {name} not done after {TIMEOUT:?}; the BMC reported {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn has_annotation(host: &BareMetalHost, key: &str) -> bool {
    host.annotations().contains_key(key)
}

#[tokio::test]
async fn the_reboot_annotation_powers_the_host_off_and_on_in_redfish_then_goes()
-> anyhow::Result<()> {
    let emulator = Emulator::builder().start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    host(
        &client,
        "server",
        json!({
            "online": true,
            "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"},
            "image": {"url": "http://images.example/a.raw", "format": "raw"},
        }),
    )
    .await?;
    wait_state(&client, "server", ProvisioningState::Provisioned).await?;
    wait_for(
        &hosts(&client),
        "server",
        |h| h.status.as_ref().is_some_and(|s| s.powered_on),
        TIMEOUT,
    )
    .await?;

    // Hard, then soft (no value: GracefulShutdown, which the emulator honours): each time the
    // BMC goes off, then on, and only then is the annotation removed.
    for value in [r#"{"mode":"hard"}"#, ""] {
        annotate(&client, "server", "reboot.metal3.io", Some(value)).await?;
        let seen = watch_power(&client, &emulator, "server", |h| {
            !has_annotation(h, "reboot.metal3.io")
        })
        .await?;
        assert_eq!(seen.first(), Some(&PowerState::On), "{value:?}: {seen:?}");
        assert!(seen.contains(&PowerState::Off), "{value:?}: {seen:?}");
        assert_eq!(seen.last(), Some(&PowerState::On), "{value:?}: {seen:?}");
        assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::On));
        let host = wait_for(
            &hosts(&client),
            "server",
            |h| h.status.as_ref().is_some_and(|s| s.powered_on),
            TIMEOUT,
        )
        .await?;
        assert_eq!(state(&host), Some(ProvisioningState::Provisioned));
        assert_eq!(host.status.unwrap().error_type, None);
    }

    // A suffixed annotation keeps the host off until it is removed, even with the plain one.
    annotate(&client, "server", "reboot.metal3.io/maintenance", Some("")).await?;
    annotate(&client, "server", "reboot.metal3.io", Some("")).await?;
    let host = wait_for(
        &hosts(&client),
        "server",
        |h| h.status.as_ref().is_some_and(|s| !s.powered_on),
        TIMEOUT,
    )
    .await?;
    assert!(has_annotation(&host, "reboot.metal3.io"));
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    // Longer than the emulator takes to apply a reset: still off.
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    let host = hosts(&client).get("server").await?;
    assert!(has_annotation(&host, "reboot.metal3.io"));
    annotate(&client, "server", "reboot.metal3.io/maintenance", None).await?;
    let host = wait_for(
        &hosts(&client),
        "server",
        |h| {
            h.status.as_ref().is_some_and(|s| s.powered_on)
                && !has_annotation(h, "reboot.metal3.io")
        },
        TIMEOUT,
    )
    .await?;
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::On));
    assert_eq!(state(&host), Some(ProvisioningState::Provisioned));
    env.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn the_reboot_annotation_is_left_alone_on_a_host_that_is_not_provisioned()
-> anyhow::Result<()> {
    let emulator = Emulator::builder().start().await?;
    let env = env().await?;
    let client = env.client();
    secret(&client, "bmc", USER, Some(PASSWORD)).await?;
    host(
        &client,
        "server",
        json!({
            "online": false,
            "bmc": {"address": emulator.bmc_address(0), "credentialsName": "bmc"},
        }),
    )
    .await?;
    wait_state(&client, "server", ProvisioningState::Available).await?;
    annotate(
        &client,
        "server",
        "reboot.metal3.io",
        Some(r#"{"mode":"hard"}"#),
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let host = hosts(&client).get("server").await?;
    assert!(has_annotation(&host, "reboot.metal3.io"));
    assert_eq!(state(&host), Some(ProvisioningState::Available));
    assert_eq!(bmc_power(&emulator, 0).await?, Some(PowerState::Off));
    env.shutdown().await;
    Ok(())
}
