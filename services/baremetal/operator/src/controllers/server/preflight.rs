// Copyright The mNi authors.
// SPDX-License-Identifier: Apache-2.0

//! The BMC pre-flight: before a server is handed to Metal3, the operator talks Redfish to its
//! BMC (`mni-redfish`) and checks that it answers, that it takes the credentials and that its
//! system has the boot MAC. What failed becomes the reason of a `Degraded` condition, with a
//! message that says where:
//!
//! | Failure | Reason |
//! |---|---|
//! | nothing answers, TLS fails, time-out | `BMCUnreachable` |
//! | 401 | `BMCCredentialsRejected` |
//! | no such system, several and none named | `BMCSystemNotFound` |
//! | the system has no NIC with the boot MAC | `BootMACMismatch` |
//! | any other answer | `BMCPreflightFailed` |
//!
//! Non-Redfish addresses (`ipmi://`) are not pre-flighted; Metal3 registers them itself.

use std::time::Duration;

use mni_redfish::{BmcAddress, Client, Error};

/// How long each Redfish request of the pre-flight may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// `Degraded` reason: nothing answers at the BMC address.
pub const BMC_UNREACHABLE: &str = "BMCUnreachable";

/// `Degraded` reason: the BMC refused the credentials.
pub const BMC_CREDENTIALS_REJECTED: &str = "BMCCredentialsRejected";

/// `Degraded` reason: the BMC has no such system.
pub const BMC_SYSTEM_NOT_FOUND: &str = "BMCSystemNotFound";

/// `Degraded` reason: the system has no NIC with the boot MAC.
pub const BOOT_MAC_MISMATCH: &str = "BootMACMismatch";

/// `Degraded` reason: the BMC answered something else.
pub const BMC_PREFLIGHT_FAILED: &str = "BMCPreflightFailed";

/// A failed pre-flight: the reason and the message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: {message}")]
pub struct PreflightError {
    /// One of the reasons above.
    pub reason: &'static str,
    /// What failed, and where.
    pub message: String,
}

/// What the pre-flight needs: where, who and what to look for.
#[derive(Clone, Debug)]
pub struct Preflight<'a> {
    /// The parsed Redfish address.
    pub address: &'a BmcAddress,
    /// The user name of the credentials Secret.
    pub username: &'a str,
    /// The password of the credentials Secret.
    pub password: &'a str,
    /// Verify the BMC's certificate.
    pub verify_certificates: bool,
    /// The boot MAC, as the spec has it.
    pub boot_mac: &'a str,
}

impl Preflight<'_> {
    /// Runs the pre-flight; `Ok` with the system's id when every check passed.
    pub async fn run(&self) -> Result<String, PreflightError> {
        let address = self.address.to_string();
        let bmc = Client::for_address(self.address)
            .credentials(self.username, self.password)
            .verify_certificates(self.verify_certificates)
            .timeout(TIMEOUT)
            .connect()
            .await
            .map_err(|e| classify(&address, &e))?;
        let result = self.check(&bmc, &address).await;
        // The session goes either way; a failed logout changes nothing of the result.
        let _ = bmc.logout().await;
        result
    }

    async fn check(&self, bmc: &Client, address: &str) -> Result<String, PreflightError> {
        let system = bmc
            .default_system()
            .await
            .map_err(|e| classify(address, &e))?;
        let inventory = bmc
            .inventory(&system.odata_id)
            .await
            .map_err(|e| classify(address, &e))?;
        let macs = inventory.mac_addresses();
        let wanted = self.boot_mac.to_ascii_lowercase();
        if macs.iter().any(|m| m.to_ascii_lowercase() == wanted) {
            return Ok(system.id.clone());
        }
        Err(PreflightError {
            reason: BOOT_MAC_MISMATCH,
            message: format!(
                "bootMACAddress: system {} of BMC {address} has no NIC with MAC {} (its NICs: {})",
                system.id,
                self.boot_mac,
                if macs.is_empty() {
                    "none reported".to_owned()
                } else {
                    macs.join(", ")
                }
            ),
        })
    }
}

/// The reason and message of a Redfish error.
fn classify(address: &str, error: &Error) -> PreflightError {
    let reason = match error {
        Error::Unreachable { .. } | Error::Tls { .. } | Error::Timeout { .. } => BMC_UNREACHABLE,
        Error::Unauthorized { .. } => BMC_CREDENTIALS_REJECTED,
        Error::UnknownSystem { .. } | Error::AmbiguousSystem { .. } => BMC_SYSTEM_NOT_FOUND,
        _ => BMC_PREFLIGHT_FAILED,
    };
    let field = match reason {
        BMC_CREDENTIALS_REJECTED => "bmc.credentialsName",
        _ => "bmc.address",
    };
    PreflightError {
        reason,
        message: format!("{field}: pre-flight of BMC {address} failed: {error}"),
    }
}
