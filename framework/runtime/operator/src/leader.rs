//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection` does it.
//!
//! A candidate takes the Lease when it is free or its holder has not renewed it for a whole
//! lease duration (measured on the candidate's own clock from when it last saw the record
//! change, so clock skew between replicas does not matter), and every write carries the
//! resourceVersion it read, so two candidates can never both win. The leader renews every
//! retry period; when it cannot renew within the renew deadline, or sees another holder, it has
//! lost. Because the renew deadline is shorter than the lease duration, the old leader stops
//! before any standby may take over. On a clean shutdown the leader releases the Lease so a
//! standby takes over at its next retry.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::MicroTime,
};
use kube::{
    Api, Client,
    api::{ObjectMeta, PostParams},
};
use tokio::time::{Instant, sleep, timeout};

/// Errors of leader election.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaderElectionError {
    /// The leader could not renew its Lease in time, or another candidate holds it now; the
    /// manager stops reconciling at once and returns this, like controller-runtime exits.
    #[error(
        "lost leadership of Lease {namespace}/{name} (identity {identity}); stopped reconciling"
    )]
    Lost {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: String,
        /// This candidate's identity.
        identity: String,
    },
    /// The timing is inconsistent: it must hold `retry_period < renew_deadline < lease_duration`.
    #[error(
        "leader election timing: need retry period ({retry:?}) < renew deadline ({renew:?}) < lease duration ({lease:?})"
    )]
    Timing {
        /// The lease duration.
        lease: Duration,
        /// The renew deadline.
        renew: Duration,
        /// The retry period.
        retry: Duration,
    },
}

/// Where and how to elect a leader (controller-runtime's defaults: 15 s lease, 10 s renew
/// deadline, 2 s retry period).
#[derive(Clone, Debug)]
#[must_use]
pub struct LeaderElection {
    name: String,
    namespace: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
}

impl LeaderElection {
    /// Elects on Lease `name` in `namespace`, with a unique identity (`<hostname>_<uuid>`).
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        let host = std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "operator".to_string());
        Self {
            name: name.into(),
            namespace: namespace.into(),
            identity: format!("{host}_{}", uuid::Uuid::new_v4()),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Sets this candidate's identity (must differ between replicas).
    pub fn with_identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// How long a standby waits after the last renewal before taking over.
    pub fn with_lease_duration(mut self, duration: Duration) -> Self {
        self.lease_duration = duration;
        self
    }

    /// How long the leader keeps trying to renew before it gives up leadership.
    pub fn with_renew_deadline(mut self, deadline: Duration) -> Self {
        self.renew_deadline = deadline;
        self
    }

    /// How often candidates try to acquire and the leader renews.
    pub fn with_retry_period(mut self, period: Duration) -> Self {
        self.retry_period = period;
        self
    }

    /// The Lease's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Lease's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// This candidate's identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub(crate) fn validate(&self) -> Result<(), LeaderElectionError> {
        if self.retry_period < self.renew_deadline && self.renew_deadline < self.lease_duration {
            Ok(())
        } else {
            Err(LeaderElectionError::Timing {
                lease: self.lease_duration,
                renew: self.renew_deadline,
                retry: self.retry_period,
            })
        }
    }
}

/// What a candidate last saw of the Lease, and when (on its own clock).
struct Observed {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    at: Instant,
}

/// One candidate's state machine.
pub(crate) struct Elector {
    api: Api<Lease>,
    config: LeaderElection,
    observed: Option<Observed>,
}

/// Whether an attempt to acquire or renew won the Lease.
enum Attempt {
    Won,
    HeldByOther,
    Failed,
}

impl Elector {
    pub(crate) fn new(client: Client, config: LeaderElection) -> Self {
        Self {
            api: Api::namespaced(client, &config.namespace),
            config,
            observed: None,
        }
    }

    /// Waits until this candidate holds the Lease.
    pub(crate) async fn acquire(&mut self) {
        loop {
            if let Attempt::Won = self.attempt().await {
                tracing::info!(lease = %self.config.name, identity = %self.config.identity, "acquired leadership");
                return;
            }
            sleep(self.config.retry_period).await;
        }
    }

    /// Keeps renewing the Lease; returns once leadership is lost.
    pub(crate) async fn hold(&mut self) -> LeaderElectionError {
        let mut last_renewal = Instant::now();
        loop {
            sleep(self.config.retry_period).await;
            match self.attempt().await {
                Attempt::Won => last_renewal = Instant::now(),
                Attempt::HeldByOther => break,
                Attempt::Failed if last_renewal.elapsed() >= self.config.renew_deadline => break,
                Attempt::Failed => {}
            }
        }
        tracing::warn!(lease = %self.config.name, identity = %self.config.identity, "lost leadership");
        LeaderElectionError::Lost {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            identity: self.config.identity.clone(),
        }
    }

    /// Gives the Lease up if this candidate holds it, so a standby need not wait it out.
    pub(crate) async fn release(&mut self) {
        let Ok(Some(mut lease)) = self.api.get_opt(&self.config.name).await else {
            return;
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => tracing::info!(lease = %self.config.name, "released leadership"),
            Err(error) => {
                tracing::warn!(lease = %self.config.name, %error, "could not release leadership")
            }
        }
    }

    async fn attempt(&mut self) -> Attempt {
        // A hung request must not keep a leader that cannot renew.
        match timeout(self.config.renew_deadline, self.try_acquire_or_renew()).await {
            Ok(Ok(attempt)) => attempt,
            Ok(Err(error)) => {
                tracing::debug!(lease = %self.config.name, %error, "lease request failed");
                Attempt::Failed
            }
            Err(_) => Attempt::Failed,
        }
    }

    async fn try_acquire_or_renew(&mut self) -> Result<Attempt, kube::Error> {
        let now = MicroTime(Timestamp::now());
        let seconds = i32::try_from(self.config.lease_duration.as_secs_f64().ceil() as i64)
            .unwrap_or(i32::MAX)
            .max(1);
        let me = self.config.identity.clone();
        let Some(mut lease) = self.api.get_opt(&self.config.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(me.clone()),
                    lease_duration_seconds: Some(seconds),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now.clone()),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return Ok(
                match self.api.create(&PostParams::default(), &lease).await {
                    Ok(_) => {
                        self.observe(Some(me), Some(now));
                        Attempt::Won
                    }
                    Err(kube::Error::Api(s)) if s.code == 409 => Attempt::HeldByOther,
                    Err(e) => return Err(e),
                },
            );
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        self.observe(holder.clone(), spec.renew_time.clone());
        let held_by_other = holder.as_ref().is_some_and(|h| *h != me);
        let expired = self
            .observed
            .as_ref()
            .is_none_or(|o| o.at.elapsed() >= self.config.lease_duration);
        if held_by_other && !expired {
            return Ok(Attempt::HeldByOther);
        }
        if holder.as_deref() != Some(me.as_str()) {
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.holder_identity = Some(me.clone());
        spec.lease_duration_seconds = Some(seconds);
        spec.renew_time = Some(now.clone());
        // The read resourceVersion travels with the write: a concurrent winner makes this a 409.
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => {
                self.observe(Some(me), Some(now));
                Ok(Attempt::Won)
            }
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(Attempt::Failed),
            Err(e) => Err(e),
        }
    }

    /// Notes the Lease record; the observation time moves only when the record changed.
    fn observe(&mut self, holder: Option<String>, renew_time: Option<MicroTime>) {
        let same = self
            .observed
            .as_ref()
            .is_some_and(|o| o.holder == holder && o.renew_time == renew_time);
        if !same {
            self.observed = Some(Observed {
                holder,
                renew_time,
                at: Instant::now(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_controller_runtime_and_validate() {
        let le = LeaderElection::new("lock", "ns");
        assert_eq!(le.lease_duration, Duration::from_secs(15));
        assert_eq!(le.renew_deadline, Duration::from_secs(10));
        assert_eq!(le.retry_period, Duration::from_secs(2));
        assert!(le.validate().is_ok());
        assert_ne!(le.identity(), LeaderElection::new("lock", "ns").identity());
        let bad = le.with_renew_deadline(Duration::from_secs(20));
        assert!(matches!(
            bad.validate(),
            Err(LeaderElectionError::Timing { .. })
        ));
    }
}
