//! Rollout arithmetic, after kube's `rolling.go` and `recreate.go`: how big each
//! ReplicaSet of a Deployment should be this pass. Pure functions over [`Rs`].

use k8s_openapi::api::apps::v1::Deployment;

use super::Rs;
use crate::util;

/// kube's `ResolveFenceposts`: (max surge, max unavailable) for a rolling update.
pub(super) fn fenceposts(d: &Deployment) -> (i32, i32) {
    let replicas = d.spec.replicas.unwrap_or(1);
    let strategy = d.spec.strategy.as_ref();
    if strategy.and_then(|s| s.type_.as_deref()) == Some("Recreate") {
        return (0, 0);
    }
    let ru = strategy.and_then(|s| s.rolling_update.as_ref());
    let surge = util::scaled_value(ru.and_then(|r| r.max_surge.as_ref()), "25%", replicas, true);
    let mut unavailable = util::scaled_value(
        ru.and_then(|r| r.max_unavailable.as_ref()),
        "25%",
        replicas,
        false,
    );
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    (surge, unavailable.min(replicas).max(0))
}

/// kube's reconcileNewReplicaSet; true when the new ReplicaSet changes size.
pub(super) fn plan_new(rss: &mut [Rs], new: Option<usize>, replicas: i32, surge: i32) -> bool {
    let Some(i) = new else { return false };
    let cur = rss[i].want;
    if cur == replicas {
        return false;
    }
    if cur > replicas {
        rss[i].want = replicas;
        return true;
    }
    let total: i32 = rss.iter().map(|r| r.want).sum();
    let up = (replicas + surge - total).min(replicas - cur);
    if up <= 0 {
        return false;
    }
    rss[i].want = cur + up;
    true
}

/// kube's reconcileOldReplicaSets: drop unhealthy old replicas, then scale old ReplicaSets
/// down while at least `replicas - max_unavailable` pods stay available.
pub(super) fn plan_old(rss: &mut [Rs], new: Option<usize>, replicas: i32, max_unavailable: i32) {
    let is_old = |i: usize| Some(i) != new;
    let old_count: i32 = (0..rss.len())
        .filter(|i| is_old(*i))
        .map(|i| rss[i].want)
        .sum();
    if old_count == 0 {
        return;
    }
    let all: i32 = rss.iter().map(|r| r.want).sum();
    let min_available = replicas - max_unavailable;
    let new_unavailable = new.map_or(0, |i| rss[i].want - rss[i].available());
    let max_down = all - min_available - new_unavailable;
    if max_down <= 0 {
        return;
    }
    let old: Vec<usize> = (0..rss.len()).filter(|i| is_old(*i)).collect();
    let mut done = 0;
    for &i in &old {
        if done >= max_down {
            break;
        }
        let unhealthy = rss[i].want - rss[i].available();
        if rss[i].want == 0 || unhealthy <= 0 {
            continue;
        }
        let down = (max_down - done).min(unhealthy);
        rss[i].want -= down;
        done += down;
    }
    let available: i32 = rss.iter().map(Rs::available).sum();
    if available <= min_available {
        return;
    }
    let budget = available - min_available;
    let mut done = 0;
    for &i in &old {
        if done >= budget {
            break;
        }
        let down = rss[i].want.min(budget - done);
        rss[i].want -= down;
        done += down;
    }
}

/// The Recreate strategy: old ReplicaSets to zero, then (once their pods are gone) the new
/// one to full size.
pub(super) fn plan_recreate(
    rss: &mut [Rs],
    new: Option<usize>,
    replicas: i32,
    old_pods_running: bool,
) {
    let mut scaled = false;
    for (i, r) in rss.iter_mut().enumerate() {
        if Some(i) != new && r.want > 0 {
            r.want = 0;
            scaled = true;
        }
    }
    if !scaled
        && !old_pods_running
        && let Some(i) = new
    {
        rss[i].want = replicas;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};

    use super::*;

    fn rs(spec: i32, available: i32) -> Rs {
        let obj = ReplicaSet {
            spec: ReplicaSetSpec {
                replicas: Some(spec),
                ..Default::default()
            },
            status: Some(ReplicaSetStatus {
                replicas: spec,
                available_replicas: Some(available),
                ..Default::default()
            }),
            ..Default::default()
        };
        Rs {
            obj: Arc::new(obj),
            want: spec,
        }
    }

    #[test]
    fn new_replica_set_grows_within_the_surge() {
        // 4 replicas, surge 1: old 4 + new 0 -> new 1.
        let mut rss = vec![rs(4, 4), rs(0, 0)];
        assert!(plan_new(&mut rss, Some(1), 4, 1));
        assert_eq!(rss[1].want, 1);
        // At the surge limit nothing grows.
        assert!(!plan_new(&mut rss, Some(1), 4, 1));
    }

    #[test]
    fn old_replica_sets_shrink_while_enough_stay_available() {
        // 4 replicas, max unavailable 1: old 4 available, new 1 not yet available.
        let mut rss = vec![rs(4, 4), rs(1, 0)];
        plan_old(&mut rss, Some(1), 4, 1);
        assert_eq!(rss[0].want, 3);
        // Once the new pod is available, another old one goes.
        let mut rss = vec![rs(3, 3), rs(2, 1)];
        plan_old(&mut rss, Some(1), 4, 1);
        assert_eq!(rss[0].want, 2);
    }

    #[test]
    fn unhealthy_old_replicas_go_first() {
        // 3 replicas, max unavailable 1; no pod is available anywhere: the budget
        // (all 4 - min 2 - new unavailable 1 = 1) goes to unhealthy old replicas.
        let mut rss = vec![rs(3, 0), rs(1, 0)];
        plan_old(&mut rss, Some(1), 3, 1);
        assert_eq!(rss[0].want, 2);
    }

    #[test]
    fn recreate_waits_for_old_pods() {
        let mut rss = vec![rs(2, 2), rs(0, 0)];
        plan_recreate(&mut rss, Some(1), 2, true);
        assert_eq!((rss[0].want, rss[1].want), (0, 0));
        let mut rss = vec![rs(0, 0), rs(0, 0)];
        plan_recreate(&mut rss, Some(1), 2, false);
        assert_eq!(rss[1].want, 2);
    }

    #[test]
    fn fenceposts_round_like_kube() {
        let mut d = Deployment::default();
        d.spec.replicas = Some(3);
        assert_eq!(fenceposts(&d), (1, 0));
        d.spec.replicas = Some(10);
        assert_eq!(fenceposts(&d), (3, 2));
    }
}
