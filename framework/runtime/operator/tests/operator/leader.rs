//! Leader election: one of two managers reconciles; when it stops (cleanly or by crashing) the
//! other takes over, and no reconcile of one overlaps a reconcile of the other.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use kube::api::PostParams;
use mni_operator::{Action, Context, LeaderElection, Reconciler, RunningManager};
use tokio::time::Instant;

use crate::support::{Env, Widget, http_get, manager, wait_for, widget};

/// (manager, start, end) of every reconcile.
type Intervals = Arc<Mutex<Vec<(&'static str, Instant, Instant)>>>;

/// Reconciles slowly and often, recording when it ran.
struct Recording {
    who: &'static str,
    intervals: Intervals,
}

impl Reconciler for Recording {
    type K = Widget;
    type Error = std::convert::Infallible;

    fn name(&self) -> &str {
        "recording"
    }

    async fn reconcile(
        &self,
        _w: Arc<Widget>,
        _ctx: &Context<Widget>,
    ) -> Result<Action, Self::Error> {
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(40)).await;
        self.intervals
            .lock()
            .unwrap()
            .push((self.who, start, Instant::now()));
        Ok(Action::requeue(Duration::from_millis(60)))
    }
}

const LEASE: Duration = Duration::from_millis(1500);

async fn candidate(env: &Env, who: &'static str, intervals: &Intervals) -> RunningManager {
    manager(env.client.clone())
        .with_controller(Recording {
            who,
            intervals: intervals.clone(),
        })
        .with_leader_election(
            LeaderElection::new("recording-lock", "default")
                .with_identity(who)
                .with_lease_duration(LEASE)
                .with_renew_deadline(Duration::from_millis(1000))
                .with_retry_period(Duration::from_millis(100)),
        )
        .build()
        .start()
        .await
        .expect("manager starts")
}

fn count(intervals: &Intervals, who: &str) -> usize {
    intervals
        .lock()
        .unwrap()
        .iter()
        .filter(|i| i.0 == who)
        .count()
}

fn first_after(intervals: &Intervals, who: &str, after: Instant) -> Option<Instant> {
    intervals
        .lock()
        .unwrap()
        .iter()
        .filter(|i| i.0 == who && i.1 >= after)
        .map(|i| i.1)
        .min()
}

fn assert_no_overlap(intervals: &Intervals) {
    let all = intervals.lock().unwrap().clone();
    for a in all.iter().filter(|i| i.0 == "a") {
        for b in all.iter().filter(|i| i.0 == "b") {
            assert!(
                a.2 <= b.1 || b.2 <= a.1,
                "a reconcile of a overlapped one of b"
            );
        }
    }
}

#[tokio::test]
async fn a_standby_takes_over_when_the_leader_shuts_down() {
    let env = Env::start().await;
    let intervals: Intervals = Arc::default();
    let a = candidate(&env, "a", &intervals).await;
    env.widgets()
        .create(&PostParams::default(), &widget("w", &[]))
        .await
        .expect("create");
    wait_for("a to reconcile", || async {
        (count(&intervals, "a") > 2).then_some(())
    })
    .await;
    let b = candidate(&env, "b", &intervals).await;
    tokio::time::sleep(LEASE + Duration::from_millis(300)).await;
    assert_eq!(count(&intervals, "b"), 0, "the standby must not reconcile");
    let (_, metrics) = http_get(b.metrics_address().unwrap(), "/metrics")
        .await
        .expect("metrics");
    assert!(
        metrics.contains("leader_election_master_status{name=\"recording-lock\"} 0"),
        "{metrics}"
    );
    let (ready, _) = http_get(b.health_probe_address().unwrap(), "/readyz")
        .await
        .expect("readyz");
    assert_eq!(ready, 200, "a standby is ready");

    let stopped = Instant::now();
    a.shutdown().await.expect("the leader stops cleanly");
    wait_for("b to take over", || async {
        first_after(&intervals, "b", stopped)
    })
    .await;
    let took = first_after(&intervals, "b", stopped).unwrap() - stopped;
    assert!(
        took < LEASE,
        "a released lease is taken at the next retry, took {took:?}"
    );
    let (_, metrics) = http_get(b.metrics_address().unwrap(), "/metrics")
        .await
        .expect("metrics");
    assert!(
        metrics.contains("leader_election_master_status{name=\"recording-lock\"} 1"),
        "{metrics}"
    );
    b.shutdown().await.expect("clean shutdown");
    assert_no_overlap(&intervals);
}

#[tokio::test]
async fn a_standby_takes_over_within_the_lease_duration_when_the_leader_crashes() {
    let env = Env::start().await;
    let intervals: Intervals = Arc::default();
    let a = candidate(&env, "a", &intervals).await;
    env.widgets()
        .create(&PostParams::default(), &widget("w", &[]))
        .await
        .expect("create");
    wait_for("a to reconcile", || async {
        (count(&intervals, "a") > 2).then_some(())
    })
    .await;
    let b = candidate(&env, "b", &intervals).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let crashed = Instant::now();
    a.abort();
    wait_for("b to take over", || async {
        first_after(&intervals, "b", crashed)
    })
    .await;
    let took = first_after(&intervals, "b", crashed).unwrap() - crashed;
    // b saw the last renewal at most one retry period before the crash; caches then sync.
    assert!(took < LEASE + Duration::from_millis(1500), "took {took:?}");
    assert!(
        took > Duration::from_millis(800),
        "an unreleased lease is waited out, took {took:?}"
    );
    b.shutdown().await.expect("clean shutdown");
    assert_no_overlap(&intervals);
}

#[tokio::test]
async fn losing_the_lease_stops_reconciling_at_once() {
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use mni_operator::{Error, LeaderElectionError};

    let env = Env::start().await;
    let intervals: Intervals = Arc::default();
    let a = candidate(&env, "a", &intervals).await;
    env.widgets()
        .create(&PostParams::default(), &widget("w", &[]))
        .await
        .expect("create");
    wait_for("a to reconcile", || async {
        (count(&intervals, "a") > 2).then_some(())
    })
    .await;
    // Someone else takes the Lease, as after a network partition.
    let leases: kube::Api<Lease> = kube::Api::namespaced(env.client.clone(), "default");
    wait_for("the lease to be taken over", || async {
        let mut lease = leases.get("recording-lock").await.ok()?;
        let spec = lease.spec.as_mut()?;
        spec.holder_identity = Some("intruder".into());
        spec.renew_time = Some(MicroTime(jiff::Timestamp::now()));
        leases
            .replace("recording-lock", &PostParams::default(), &lease)
            .await
            .ok()
    })
    .await;
    let stolen = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(5), a.wait())
        .await
        .expect("the manager stops");
    let stopped = Instant::now();
    assert!(
        matches!(
            result,
            Err(Error::LeaderElection(LeaderElectionError::Lost { .. }))
        ),
        "{result:?}"
    );
    assert!(
        stopped - stolen < Duration::from_millis(800),
        "noticed at the next renewal, took {:?}",
        stopped - stolen
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        first_after(&intervals, "a", stopped).is_none(),
        "no reconcile starts after leadership is lost"
    );
}
