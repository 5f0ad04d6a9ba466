//! mni-redfish against the real `sushy-emulator` (fake driver), started per test by
//! `mni_redfish::testing::Emulator`. Needs `scripts/sushy-emulator.sh` to have run; without it
//! every test fails saying so.

use std::time::Duration;

use anyhow::Result;
use mni_redfish::testing::{Emulator, ImageServer};
use mni_redfish::{
    AuthMethod, BmcAddress, BootOverride, Client, Error, InsertMedia, PowerState, ResetType,
    TlsVerification,
};

/// The fake driver applies a power action 1–11 s after accepting it; this is only the bound
/// after which the test gives up.
const POWER_TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn service_root_systems_managers_and_chassis_are_listed() -> Result<()> {
    let emulator = Emulator::builder().systems(3).start().await?;
    let bmc = emulator.client().connect().await?;
    assert!(bmc.service_root().redfish_version.is_some());
    assert!(
        !bmc.has_session(),
        "sushy-emulator offers no SessionService"
    );

    let paths = bmc.system_paths().await?;
    let expected: Vec<String> = emulator
        .systems()
        .iter()
        .map(|s| format!("/redfish/v1/Systems/{}", s.uuid))
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(sorted, expected);
    let systems = bmc.systems().await?;
    assert_eq!(systems.len(), 3);
    assert!(!bmc.managers().await?.is_empty());
    assert!(!bmc.chassis().await?.is_empty());
    assert!(matches!(
        bmc.default_system().await,
        Err(Error::AmbiguousSystem { count: 3 })
    ));
    Ok(())
}

#[tokio::test]
async fn a_metal3_address_names_the_default_system() -> Result<()> {
    let emulator = Emulator::builder().systems(2).start().await?;
    let address = BmcAddress::parse(&emulator.bmc_address(1))?;
    let bmc = Client::for_address(&address).connect().await?;
    let system = bmc.default_system().await?;
    assert_eq!(system.id, emulator.systems()[1].uuid);
    assert_eq!(system.name.as_deref(), Some("fake-1"));
    let system = emulator
        .client_for_system(0)
        .connect()
        .await?
        .default_system()
        .await?;
    assert_eq!(system.id, emulator.systems()[0].uuid);
    Ok(())
}

#[tokio::test]
async fn inventory_reports_the_fake_systems_macs() -> Result<()> {
    let emulator = Emulator::builder()
        .systems(2)
        .nics_per_system(2)
        .start()
        .await?;
    let bmc = emulator.client().connect().await?;
    for fake in emulator.systems() {
        let inventory = bmc.inventory(&fake.uuid).await?;
        assert_eq!(inventory.mac_addresses(), fake.macs);
        assert_eq!(inventory.uuid.as_deref(), Some(fake.uuid.as_str()));
        assert_eq!(inventory.name.as_deref(), Some(fake.name.as_str()));
        assert_eq!(inventory.manufacturer.as_deref(), Some("Sushy Emulator"));
        assert_eq!(inventory.power_state, Some(PowerState::Off));
        // The fake driver implements no processors, memory or storage: the inventory says so
        // instead of failing.
        for section in ["Processors", "Memory", "Storage"] {
            assert!(
                inventory.unavailable.iter().any(|u| u.starts_with(section)),
                "{section} in {:?}",
                inventory.unavailable
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn power_off_then_on_is_observed() -> Result<()> {
    let emulator = Emulator::builder().powered_on().start().await?;
    let bmc = emulator.client().connect().await?;
    let system = &emulator.systems()[0].uuid;
    assert_eq!(bmc.power_state(system).await?, Some(PowerState::On));

    bmc.reset(system, ResetType::ForceOff).await?;
    bmc.wait_for_power(system, PowerState::Off, POWER_TIMEOUT)
        .await?;
    bmc.reset(system, ResetType::On).await?;
    bmc.wait_for_power(system, PowerState::On, POWER_TIMEOUT)
        .await?;
    assert_eq!(bmc.power_state(system).await?, Some(PowerState::On));
    Ok(())
}

#[tokio::test]
async fn boot_override_is_set_and_read_back() -> Result<()> {
    let emulator = Emulator::builder().start().await?;
    let bmc = emulator.client().connect().await?;
    let system = &emulator.systems()[0].uuid;
    for target in ["Pxe", "Cd", "Hdd"] {
        bmc.set_boot_override(system, &BootOverride::once(target))
            .await?;
        assert_eq!(
            bmc.boot(system)
                .await?
                .boot_source_override_target
                .as_deref(),
            Some(target)
        );
    }
    match bmc
        .set_boot_override(system, &BootOverride::once("Floppy"))
        .await
    {
        Err(Error::ActionNotAllowed {
            action, allowed, ..
        }) => {
            assert_eq!(action, "Boot.BootSourceOverrideTarget");
            assert!(allowed.contains(&"Pxe".to_owned()), "{allowed:?}");
        }
        other => panic!("expected ActionNotAllowed, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn virtual_media_is_inserted_and_ejected() -> Result<()> {
    let emulator = Emulator::builder().start().await?;
    let images = ImageServer::start(b"not really an ISO".to_vec()).await?;
    let bmc = emulator.client().connect().await?;
    let system = &emulator.systems()[0].uuid;
    let drives = bmc.virtual_media(system).await?;
    assert!(drives.iter().any(|d| d.id == "Cd"), "{drives:?}");

    let url = images.url("boot.iso");
    bmc.insert_media(system, "Cd", &InsertMedia::image(&url))
        .await?;
    let cd = bmc.virtual_media_drive(system, "Cd").await?;
    assert_eq!(cd.inserted, Some(true));
    assert_eq!(cd.image.as_deref(), Some(url.as_str()));

    bmc.eject_media(system, "Cd").await?;
    let cd = bmc.virtual_media_drive(system, "CD").await?;
    assert_eq!(cd.inserted, Some(false));

    match bmc.virtual_media_drive(system, "Usb").await {
        Err(Error::NotSupported { feature, .. }) => assert!(feature.contains("Cd"), "{feature}"),
        other => panic!("expected NotSupported, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn credentials_are_checked() -> Result<()> {
    let emulator = Emulator::builder().auth("admin", "s3cret").start().await?;
    let bmc = emulator.client().connect().await?;
    assert_eq!(bmc.system_paths().await?.len(), 1);

    let wrong = Client::builder(emulator.base_url())
        .credentials("admin", "wrong")
        .auth_method(AuthMethod::Basic)
        .connect()
        .await;
    match wrong {
        Err(Error::Unauthorized { username, url, .. }) => {
            assert_eq!(username.as_deref(), Some("admin"));
            assert!(url.ends_with("/redfish/v1/Systems"), "{url}");
        }
        other => panic!("expected Unauthorized, got {other:?}"),
    }
    // sushy-emulator has no SessionService: Auto falls back to basic auth (above), Session
    // says why it cannot.
    match emulator
        .client()
        .auth_method(AuthMethod::Session)
        .connect()
        .await
    {
        Err(Error::NotSupported { feature, .. }) => {
            assert!(feature.contains("sessions"), "{feature}")
        }
        other => panic!("expected NotSupported, got {other:?}"),
    }
    // Without credentials the service root answers, the systems do not.
    let anonymous = Client::builder(emulator.base_url()).connect().await?;
    assert!(matches!(
        anonymous.system_paths().await,
        Err(Error::Unauthorized { username: None, .. })
    ));
    Ok(())
}

#[tokio::test]
async fn an_unreachable_bmc_names_the_address() -> Result<()> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let address = format!("http://127.0.0.1:{port}");
    match Client::builder(&address).connect().await {
        Err(err @ Error::Unreachable { .. }) => {
            assert!(err.to_string().contains(&address), "{err}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn an_unknown_system_is_named() -> Result<()> {
    let emulator = Emulator::builder().start().await?;
    let bmc = emulator.client().connect().await?;
    for result in [
        bmc.system("no-such-system").await.map(drop),
        bmc.reset("no-such-system", ResetType::On).await,
    ] {
        match result {
            Err(Error::UnknownSystem { id, known }) => {
                assert_eq!(id, "no-such-system");
                assert_eq!(known, [emulator.systems()[0].uuid.clone()]);
            }
            other => panic!("expected UnknownSystem, got {other:?}"),
        }
    }
    Ok(())
}

#[tokio::test]
async fn reset_values_are_checked_against_the_allowable_values() -> Result<()> {
    let emulator = Emulator::builder().start().await?;
    let bmc = emulator.client().connect().await?;
    let system = &emulator.systems()[0].uuid;
    let allowed = bmc.allowed_reset_types(system).await?.unwrap_or_default();
    assert!(allowed.contains(&"ForceOff".to_owned()), "{allowed:?}");

    match bmc
        .reset(system, ResetType::Other("Hibernate".into()))
        .await
    {
        Err(Error::ActionNotAllowed {
            action,
            value,
            allowed: got,
        }) => {
            assert_eq!(action, "ComputerSystem.Reset");
            assert_eq!(value, "Hibernate");
            assert_eq!(got, allowed);
        }
        other => panic!("expected ActionNotAllowed, got {other:?}"),
    }
    // Allowed by the list, refused by the fake driver: the BMC's own message comes through.
    match bmc.reset(system, ResetType::Nmi).await {
        Err(Error::UnexpectedResponse {
            status, message, ..
        }) => {
            assert_eq!(status.as_u16(), 501);
            assert!(message.contains("Nmi is not supported"), "{message}");
        }
        other => panic!("expected UnexpectedResponse, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn tls_is_verified_unless_turned_off() -> Result<()> {
    let emulator = Emulator::builder()
        .auth("admin", "pw")
        .tls()
        .start()
        .await?;
    let ca = emulator.ca_pem().expect("TLS emulator has a CA").to_owned();
    let builder = || Client::builder(emulator.base_url()).credentials("admin", "pw");

    // The system's trust store does not know the emulator's CA.
    match builder().connect().await {
        Err(err @ Error::Tls { .. }) => {
            assert!(err.to_string().contains(&emulator.base_url()), "{err}");
        }
        other => panic!("expected a TLS error, got {other:?}"),
    }
    let with_ca = builder().ca_pem(ca.as_bytes()).connect().await?;
    assert_eq!(with_ca.system_paths().await?.len(), 1);
    let unverified = builder().tls(TlsVerification::Disabled).connect().await?;
    assert_eq!(unverified.system_paths().await?.len(), 1);
    // A plain HTTP client against the HTTPS port does not get through either.
    let plain = Client::builder(format!("http://127.0.0.1:{}", emulator.port()))
        .timeout(Duration::from_secs(10))
        .connect()
        .await;
    assert!(plain.is_err(), "{plain:?}");
    Ok(())
}
