//! Computer systems: listing and finding them, power (`ComputerSystem.Reset` and waiting for the
//! resulting state), and the one-time boot override. Also the chassis and managers collections.
//!
//! A system is named by its id (`1`, a UUID) or its path (`/redfish/v1/Systems/1`). Power actions
//! are asynchronous on real hardware (and in sushy-emulator's fake driver): the BMC answers 204
//! at once and the state changes seconds later, so [`Client::wait_for_power`] polls for it.

use std::fmt;
use std::time::Duration;

use crate::client::{Client, Error};
use crate::model::{Boot, Chassis, Collection, ComputerSystem, Manager, PowerState};

/// `ResetType` values of `ComputerSystem.Reset` (DSP0268).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResetType {
    /// Turn on.
    On,
    /// Turn off at once.
    ForceOff,
    /// Ask the OS to shut down.
    GracefulShutdown,
    /// Ask the OS to restart.
    GracefulRestart,
    /// Restart at once.
    ForceRestart,
    /// Non-maskable interrupt.
    Nmi,
    /// Turn on at once.
    ForceOn,
    /// Press the power button.
    PushPowerButton,
    /// Off, then on.
    PowerCycle,
    /// Another value, passed as is.
    Other(String),
}

impl ResetType {
    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            Self::On => "On",
            Self::ForceOff => "ForceOff",
            Self::GracefulShutdown => "GracefulShutdown",
            Self::GracefulRestart => "GracefulRestart",
            Self::ForceRestart => "ForceRestart",
            Self::Nmi => "Nmi",
            Self::ForceOn => "ForceOn",
            Self::PushPowerButton => "PushPowerButton",
            Self::PowerCycle => "PowerCycle",
            Self::Other(s) => s,
        }
    }
}

impl fmt::Display for ResetType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A boot override: where the system boots next, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootOverride {
    /// `Pxe`, `Cd`, `Hdd`, `UefiHttp`, `None`, …
    pub target: String,
    /// `Once` (the default), `Continuous` or `Disabled`.
    pub enabled: String,
    /// `UEFI` or `Legacy`, if it should change.
    pub mode: Option<String>,
}

impl BootOverride {
    /// Boot once from `target`, then return to the normal order.
    pub fn once(target: impl Into<String>) -> Self {
        Self {
            target: target.into(),
            enabled: "Once".into(),
            mode: None,
        }
    }
}

fn last_segment(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

/// Checks a value against `@Redfish.AllowableValues`, when the BMC offers them.
pub(crate) fn check_allowed(
    action: &str,
    value: &str,
    allowed: Option<&[String]>,
) -> Result<(), Error> {
    match allowed {
        Some(allowed) if !allowed.iter().any(|a| a == value) => Err(Error::ActionNotAllowed {
            action: action.into(),
            value: value.into(),
            allowed: allowed.to_vec(),
        }),
        _ => Ok(()),
    }
}

impl Client {
    /// The paths of all systems (`/redfish/v1/Systems/…`).
    pub async fn system_paths(&self) -> Result<Vec<String>, Error> {
        let collection: Collection = self.get(&self.systems_path()).await?;
        Ok(collection.members.into_iter().map(|l| l.odata_id).collect())
    }

    /// All systems, read one by one.
    pub async fn systems(&self) -> Result<Vec<ComputerSystem>, Error> {
        let mut systems = Vec::new();
        for path in self.system_paths().await? {
            systems.push(self.get(&path).await?);
        }
        Ok(systems)
    }

    /// The path of a system given by id or path.
    pub fn system_path_of(&self, system: &str) -> String {
        if system.starts_with('/') {
            system.trim_end_matches('/').to_owned()
        } else {
            format!("{}/{system}", self.systems_path().trim_end_matches('/'))
        }
    }

    /// One system, by id or path. A 404 is [`Error::UnknownSystem`], listing the known ids.
    pub async fn system(&self, system: &str) -> Result<ComputerSystem, Error> {
        let path = self.system_path_of(system);
        match self.get(&path).await {
            Err(Error::UnexpectedResponse { status, .. })
                if status == http::StatusCode::NOT_FOUND =>
            {
                let known = self
                    .system_paths()
                    .await
                    .map(|paths| paths.iter().map(|p| last_segment(p).to_owned()).collect())
                    .unwrap_or_default();
                Err(Error::UnknownSystem {
                    id: system.to_owned(),
                    known,
                })
            }
            other => other,
        }
    }

    /// The system the client was built for: the BMC address's path, else the BMC's only system.
    pub async fn default_system(&self) -> Result<ComputerSystem, Error> {
        if let Some(path) = self.configured_system_path() {
            return self.system(path).await;
        }
        let paths = self.system_paths().await?;
        match paths.as_slice() {
            [only] => self.get(only).await,
            _ => Err(Error::AmbiguousSystem { count: paths.len() }),
        }
    }

    /// All managers (BMCs).
    pub async fn managers(&self) -> Result<Vec<Manager>, Error> {
        let path = self
            .service_root()
            .managers
            .as_ref()
            .map_or("/redfish/v1/Managers", |l| &l.odata_id)
            .to_owned();
        let collection: Collection = self.get(&path).await?;
        let mut managers = Vec::new();
        for link in collection.members {
            managers.push(self.get(&link.odata_id).await?);
        }
        Ok(managers)
    }

    /// All chassis.
    pub async fn chassis(&self) -> Result<Vec<Chassis>, Error> {
        let path = self
            .service_root()
            .chassis
            .as_ref()
            .map_or("/redfish/v1/Chassis", |l| &l.odata_id)
            .to_owned();
        let collection: Collection = self.get(&path).await?;
        let mut chassis = Vec::new();
        for link in collection.members {
            chassis.push(self.get(&link.odata_id).await?);
        }
        Ok(chassis)
    }

    /// The system's power state as the BMC reports it now.
    pub async fn power_state(&self, system: &str) -> Result<Option<PowerState>, Error> {
        Ok(self.system(system).await?.power_state)
    }

    /// The reset types the system allows (`ResetType@Redfish.AllowableValues`), if it says.
    pub async fn allowed_reset_types(&self, system: &str) -> Result<Option<Vec<String>>, Error> {
        let system = self.system(system).await?;
        Ok(system.actions.reset.and_then(|r| r.allowable_values))
    }

    /// Posts `ComputerSystem.Reset`. A value outside the system's allowable values is refused
    /// before anything is sent ([`Error::ActionNotAllowed`]). The BMC may apply it later: use
    /// [`Client::wait_for_power`] to observe the result.
    pub async fn reset(&self, system: &str, reset: ResetType) -> Result<(), Error> {
        let resource = self.system(system).await?;
        let action = resource.actions.reset.ok_or_else(|| Error::NotSupported {
            resource: resource.odata_id.clone(),
            feature: "ComputerSystem.Reset".into(),
        })?;
        check_allowed(
            "ComputerSystem.Reset",
            reset.as_str(),
            action.allowable_values.as_deref(),
        )?;
        let target = if action.target.is_empty() {
            format!("{}/Actions/ComputerSystem.Reset", resource.odata_id)
        } else {
            action.target
        };
        self.post_action(&target, serde_json::json!({"ResetType": reset.as_str()}))
            .await
    }

    /// Polls the system until it reports `wanted`, or fails with [`Error::PowerTimeout`] after
    /// `timeout`. Returns at once when the state is already `wanted`.
    pub async fn wait_for_power(
        &self,
        system: &str,
        wanted: PowerState,
        timeout: Duration,
    ) -> Result<(), Error> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut interval = Duration::from_millis(200);
        loop {
            let state = self.power_state(system).await?;
            if state.as_ref() == Some(&wanted) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(Error::PowerTimeout {
                    system: self.system_path_of(system),
                    wanted: wanted.to_string(),
                    last: state.map_or_else(|| "unknown".into(), |s| s.to_string()),
                    timeout,
                });
            }
            tokio::time::sleep(interval).await;
            interval = (interval * 2).min(Duration::from_secs(2));
        }
    }

    /// The system's boot settings.
    pub async fn boot(&self, system: &str) -> Result<Boot, Error> {
        Ok(self.system(system).await?.boot)
    }

    /// Sets the boot override with a `PATCH` of `Boot`. A target outside
    /// `BootSourceOverrideTarget@Redfish.AllowableValues` is refused before anything is sent.
    pub async fn set_boot_override(&self, system: &str, boot: &BootOverride) -> Result<(), Error> {
        let resource = self.system(system).await?;
        check_allowed(
            "Boot.BootSourceOverrideTarget",
            &boot.target,
            resource
                .boot
                .boot_source_override_target_allowable_values
                .as_deref(),
        )?;
        let mut patch = serde_json::json!({
            "BootSourceOverrideTarget": boot.target,
            "BootSourceOverrideEnabled": boot.enabled,
        });
        if let Some(mode) = &boot.mode {
            patch["BootSourceOverrideMode"] = mode.clone().into();
        }
        self.patch(&resource.odata_id, serde_json::json!({"Boot": patch}))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowable_values_are_checked_when_offered() {
        let allowed = vec!["On".to_owned(), "ForceOff".to_owned()];
        assert!(check_allowed("ComputerSystem.Reset", "On", Some(&allowed)).is_ok());
        assert!(check_allowed("ComputerSystem.Reset", "Nmi", None).is_ok());
        match check_allowed("ComputerSystem.Reset", "Nmi", Some(&allowed)) {
            Err(Error::ActionNotAllowed { value, allowed, .. }) => {
                assert_eq!(value, "Nmi");
                assert_eq!(allowed, ["On", "ForceOff"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reset_types_and_ids() {
        assert_eq!(ResetType::GracefulShutdown.to_string(), "GracefulShutdown");
        assert_eq!(ResetType::Other("Suspend".into()).as_str(), "Suspend");
        assert_eq!(last_segment("/redfish/v1/Systems/abc/"), "abc");
        assert_eq!(BootOverride::once("Pxe").enabled, "Once");
    }
}
