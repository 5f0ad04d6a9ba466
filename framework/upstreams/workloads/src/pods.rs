//! The fake kubelet: for the pods the scheduler bound to the simulated node, writes the
//! status a kubelet would (`Running`, IPs, conditions, container statuses), or a crash loop when the
//! failure-injection annotation asks for one. Containers of pods that do not restart
//! `Always` and have a run duration (a Job's pods, or the run-duration annotation) exit when
//! it is over: `Succeeded` with exit code 0, or `Failed` with 1 when asked to fail
//! (`OnFailure` pods asked to fail crash-loop instead, as kubelet restarts them).
//!
//! Pods bound to another node are left alone. The status is a pure function of the pod, its
//! owners' annotations and the time, with timestamps carried over from the previous status,
//! so a second pass writes nothing.

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, HostIP, Pod, PodCondition, PodIP, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;

use crate::cache::Snapshot;
use crate::ops::{self, Outcome};
use crate::scope::Scope;
use crate::util::{self, Behaviour};
use futures::future::BoxFuture;

/// Errors of the pod simulation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// Writing the pod failed.
    #[error(transparent)]
    Write(#[from] ops::Error),
    /// The pod network is full.
    #[error("no free pod IP in 10.244.0.0/16")]
    NoAddress,
}

/// The status keys the fake kubelet owns.
const MANAGED: &[&str] = &[
    "phase",
    "conditions",
    "hostIP",
    "hostIPs",
    "podIP",
    "podIPs",
    "startTime",
    "containerStatuses",
    "initContainerStatuses",
    "qosClass",
];

/// Allocates pod IPs from 10.244.0.0/16, remembering them per pod uid.
#[derive(Debug, Default)]
pub(crate) struct IpPool {
    by_uid: HashMap<String, u32>,
    used: HashSet<u32>,
    cursor: u32,
}

const POD_NET: u32 = u32::from_be_bytes([10, 244, 0, 0]);

impl IpPool {
    /// Forgets pods that are gone and learns the addresses of pods already running.
    pub(crate) fn refresh(&mut self, snap: &Snapshot) {
        let live: HashMap<&str, Option<&str>> = snap
            .pods
            .iter()
            .filter_map(|p| {
                let ip = p.status.as_ref().and_then(|s| s.pod_ip.as_deref());
                Some((p.metadata.uid.as_deref()?, ip))
            })
            .collect();
        self.by_uid.retain(|uid, _| live.contains_key(uid.as_str()));
        for (uid, ip) in live {
            let Some(ip) = ip.and_then(|i| i.parse::<Ipv4Addr>().ok()) else {
                continue;
            };
            let off = u32::from(ip).wrapping_sub(POD_NET);
            if off < 0x1_0000 {
                self.by_uid.entry(uid.to_string()).or_insert(off);
            }
        }
        self.used = self.by_uid.values().copied().collect();
    }

    /// The address of the pod with `uid`, allocating one if needed.
    fn get(&mut self, uid: &str) -> Option<Ipv4Addr> {
        if let Some(off) = self.by_uid.get(uid) {
            return Some(Ipv4Addr::from(POD_NET + off));
        }
        for _ in 0..0x1_0000 {
            self.cursor = (self.cursor + 1) % 0x1_0000;
            let off = self.cursor;
            if off & 0xff == 0 || off & 0xff == 0xff || off < 2 || self.used.contains(&off) {
                continue;
            }
            self.used.insert(off);
            self.by_uid.insert(uid.to_string(), off);
            return Some(Ipv4Addr::from(POD_NET + off));
        }
        None
    }
}

/// Where the fake kubelet runs.
pub(crate) struct Node<'a> {
    /// The node name pods are bound to.
    pub(crate) name: &'a str,
    /// The node's address (`hostIP`).
    pub(crate) ip: &'a str,
}

/// Runs every pod of the simulated node that is in `scope`.
pub(crate) async fn sync(
    client: &kube::Client,
    node: &Node<'_>,
    snap: &Snapshot,
    scope: &Scope,
    pool: &mut IpPool,
    now: Timestamp,
    out: &mut Outcome,
) {
    pool.refresh(snap);
    let shared = Mutex::new(std::mem::take(pool));
    let ips = &shared;
    let todo = snap.pods.iter().filter(|pod| {
        let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
        scope.pod(pod.metadata.uid.as_deref())
            && bound == Some(node.name)
            && pod.metadata.deletion_timestamp.is_none()
    });
    let todo: Vec<BoxFuture<'_, Outcome>> = todo
        .map(|pod| -> BoxFuture<'_, Outcome> {
            Box::pin(async move {
                let mut out = Outcome::default();
                if let Err(e) = sync_one(client, node, snap, ips, pod, now, &mut out).await {
                    let name = pod.metadata.name.as_deref().unwrap_or_default();
                    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
                    out.failed(&format!("pod {ns}/{name}"), &e);
                }
                if out.retry {
                    out.redo.add_pod(pod.metadata.uid.as_deref());
                }
                out
            })
        })
        .collect();
    ops::each(todo, out).await;
    *pool = shared.into_inner().unwrap_or_else(PoisonError::into_inner);
}

async fn sync_one(
    client: &kube::Client,
    node: &Node<'_>,
    snap: &Snapshot,
    pool: &Mutex<IpPool>,
    pod: &Pod,
    now: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return Ok(());
    }
    let host_network = pod.spec.as_ref().and_then(|s| s.host_network) == Some(true);
    let ip = if host_network {
        node.ip.to_string()
    } else {
        let uid = pod.metadata.uid.as_deref().unwrap_or(name);
        let ip = pool.lock().unwrap_or_else(PoisonError::into_inner).get(uid);
        ip.ok_or(Error::NoAddress)?.to_string()
    };
    let behaviour = behaviour(pod, snap);
    let (desired, wake) = desired_status(pod, behaviour, node.ip, &ip, now);
    if let Some(w) = wake {
        out.wake_at(w);
    }
    if pod.status.as_ref() != Some(&desired) {
        let body = ops::status_patch(&desired, MANAGED)?;
        ops::patch(&api, name, &body, true, out).await?;
    }
    Ok(())
}

/// The failure-injection settings of a pod: its own annotations, then its controller's,
/// then the controller's controller (a ReplicaSet's Deployment).
pub(crate) fn behaviour(pod: &Pod, snap: &Snapshot) -> Behaviour {
    let mut b = Behaviour::default();
    let mut delay_set = false;
    b.absorb(pod.metadata.annotations.as_ref(), &mut delay_set);
    let Some(owner) = util::controller_of(&pod.metadata) else {
        return b;
    };
    match owner.kind.as_str() {
        "ReplicaSet" => {
            if let Some(rs) = snap.replica_set(&owner.uid) {
                b.absorb(rs.metadata.annotations.as_ref(), &mut delay_set);
                if let Some(d) = util::controller_of(&rs.metadata)
                    .filter(|r| r.kind == "Deployment")
                    .and_then(|r| snap.deployment(&r.uid))
                {
                    b.absorb(d.metadata.annotations.as_ref(), &mut delay_set);
                }
            }
        }
        "StatefulSet" => {
            if let Some(s) = snap.stateful_set(&owner.uid) {
                b.absorb(s.metadata.annotations.as_ref(), &mut delay_set);
            }
        }
        "DaemonSet" => {
            if let Some(s) = snap.daemon_set(&owner.uid) {
                b.absorb(s.metadata.annotations.as_ref(), &mut delay_set);
            }
        }
        "Job" => {
            if let Some(j) = snap.job(&owner.uid) {
                b.absorb(j.metadata.annotations.as_ref(), &mut delay_set);
            }
            b.run_for.get_or_insert(crate::DEFAULT_JOB_RUN);
        }
        _ => {}
    }
    b
}

/// kubelet's crash-loop back-off: 10 s doubling up to 5 min. Returns the number of
/// restarts after `elapsed`, the current back-off and when the next restart happens.
fn crash_loop(elapsed: Duration) -> (i32, u64, Duration) {
    let mut at = Duration::ZERO;
    let mut backoff = 10u64;
    let mut restarts = 1i32;
    loop {
        let next = at + Duration::from_secs(backoff);
        if next > elapsed {
            return (restarts, backoff, next);
        }
        if backoff >= 300 {
            let more = (elapsed - next).as_secs() / 300;
            let restarts = restarts
                .saturating_add(1)
                .saturating_add(i32::try_from(more).unwrap_or(i32::MAX));
            let next = next + Duration::from_secs(300 * (more + 1));
            return (restarts, 300, next);
        }
        at = next;
        restarts = restarts.saturating_add(1);
        backoff = (backoff * 2).min(300);
    }
}

fn time(t: Timestamp) -> Time {
    Time(t)
}

/// A condition that keeps its transition time while its status stays the same.
fn condition(
    old: Option<&PodStatus>,
    type_: &str,
    ok: bool,
    reason: Option<&str>,
    message: Option<String>,
    now: Timestamp,
) -> PodCondition {
    let status = if ok { "True" } else { "False" };
    let prev = old
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_));
    let since = prev
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| time(now));
    PodCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        last_transition_time: Some(since),
        reason: if ok { None } else { reason.map(str::to_string) },
        message: if ok { None } else { message },
        ..Default::default()
    }
}

fn qos_class(containers: &[Container]) -> &'static str {
    let mut any = false;
    let mut guaranteed = true;
    for c in containers {
        let res = c.resources.as_ref();
        let req = res.and_then(|r| r.requests.as_ref());
        let lim = res.and_then(|r| r.limits.as_ref());
        any |= req.is_some_and(|m| !m.is_empty()) || lim.is_some_and(|m| !m.is_empty());
        for k in ["cpu", "memory"] {
            let l = lim.and_then(|m| m.get(k));
            let r = req.and_then(|m| m.get(k)).or(l);
            guaranteed &= l.is_some() && r == l;
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// The status the fake kubelet wants for `pod`, and when it next changes by itself.
fn desired_status(
    pod: &Pod,
    b: Behaviour,
    host_ip: &str,
    ip: &str,
    now: Timestamp,
) -> (PodStatus, Option<Timestamp>) {
    let old = pod.status.as_ref();
    let start = old.and_then(|s| s.start_time.as_ref()).map_or(now, |t| t.0);
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let spec = pod.spec.clone().unwrap_or_default();
    let mut wake = None;
    let ready_at = util::add(start, b.ready_delay);
    let policy = spec.restart_policy.as_deref().unwrap_or("Always");
    // Containers that exit: not restarted `Always`, nor asked to fail under `OnFailure`
    // (kubelet restarts those in place: a crash loop).
    let exits = policy == "Never" || (policy == "OnFailure" && !b.fail);
    // When the containers of a pod that does not restart exit, and with which code.
    let exit = b
        .run_for
        .filter(|_| exits)
        .map(|d| (util::add(start, d), i32::from(b.fail)));
    let exited = exit.filter(|(at, _)| *at <= now);
    if let Some((at, _)) = exit.filter(|(at, _)| *at > now) {
        wake = Some(at);
    }
    let old_statuses = old.and_then(|s| s.container_statuses.as_ref());
    let mut statuses = Vec::new();
    let mut unready = Vec::new();
    for c in &spec.containers {
        let prev = old_statuses.and_then(|v| v.iter().find(|s| s.name == c.name));
        let prev_restarts = prev.map_or(0, |s| s.restart_count);
        let image_id = format!(
            "{}@sha256:{}",
            c.image.as_deref().unwrap_or_default(),
            util::fake_digest(c.image.as_deref().unwrap_or_default())
        );
        let mut st = ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            image_id,
            ..Default::default()
        };
        if let Some((finished, code)) = exited {
            let started_at = prev
                .and_then(|s| s.state.as_ref())
                .and_then(|s| s.running.as_ref())
                .and_then(|r| r.started_at.clone())
                .unwrap_or_else(|| time(start));
            let cid = format!(
                "containerd://{}",
                util::fake_digest(&format!("{uid}/{}/{prev_restarts}", c.name))
            );
            st.container_id = Some(cid.clone());
            st.restart_count = prev_restarts;
            st.started = Some(false);
            st.state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    container_id: Some(cid),
                    exit_code: code,
                    reason: Some(if code == 0 { "Completed" } else { "Error" }.into()),
                    started_at: Some(started_at),
                    finished_at: Some(time(finished)),
                    ..Default::default()
                }),
                ..Default::default()
            });
            unready.push(c.name.clone());
        } else if b.fail {
            let (restarts, backoff, next) = crash_loop(util::elapsed(start, now));
            let restarts = restarts.max(prev_restarts);
            wake = util::earliest(wake, Some(util::add(start, next)));
            let finished = prev
                .and_then(|s| s.last_state.as_ref())
                .and_then(|s| s.terminated.as_ref())
                .filter(|_| prev_restarts == restarts)
                .map_or(now, |t| t.finished_at.as_ref().map_or(now, |f| f.0));
            let cid = format!(
                "containerd://{}",
                util::fake_digest(&format!("{uid}/{}/{restarts}", c.name))
            );
            st.container_id = Some(cid.clone());
            st.restart_count = restarts;
            st.ready = false;
            st.started = Some(false);
            st.state = Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("CrashLoopBackOff".into()),
                    message: Some(format!(
                        "back-off {backoff}s restarting failed container={} pod={name}_{ns}({uid})",
                        c.name
                    )),
                }),
                ..Default::default()
            });
            st.last_state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    container_id: Some(cid),
                    exit_code: 1,
                    reason: Some("Error".into()),
                    started_at: Some(time(finished)),
                    finished_at: Some(time(finished)),
                    ..Default::default()
                }),
                ..Default::default()
            });
            unready.push(c.name.clone());
        } else {
            let started_at = prev
                .and_then(|s| s.state.as_ref())
                .and_then(|s| s.running.as_ref())
                .and_then(|r| r.started_at.clone())
                .unwrap_or_else(|| time(now));
            st.container_id = Some(format!(
                "containerd://{}",
                util::fake_digest(&format!("{uid}/{}/{prev_restarts}", c.name))
            ));
            st.restart_count = prev_restarts;
            st.started = Some(true);
            st.state = Some(ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(started_at),
                }),
                ..Default::default()
            });
            st.last_state = prev
                .and_then(|s| s.last_state.clone())
                .filter(|s| s.terminated.is_some());
            st.ready = ready_at <= now;
            if !st.ready {
                wake = util::earliest(wake, Some(ready_at));
                unready.push(c.name.clone());
            }
        }
        statuses.push(st);
    }
    let init: Option<Vec<ContainerStatus>> = spec.init_containers.as_ref().map(|ics| {
        ics.iter()
            .map(|c| ContainerStatus {
                name: c.name.clone(),
                image: c.image.clone().unwrap_or_default(),
                image_id: format!(
                    "{}@sha256:{}",
                    c.image.as_deref().unwrap_or_default(),
                    util::fake_digest(c.image.as_deref().unwrap_or_default())
                ),
                container_id: Some(format!(
                    "containerd://{}",
                    util::fake_digest(&format!("{uid}/{}", c.name))
                )),
                ready: true,
                started: Some(false),
                state: Some(ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        exit_code: 0,
                        reason: Some("Completed".into()),
                        started_at: Some(time(start)),
                        finished_at: Some(time(start)),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect()
    });
    let ready = unready.is_empty();
    let phase = match exited {
        Some((_, 0)) => "Succeeded",
        Some(_) => "Failed",
        None => "Running",
    };
    // kubelet's reason for a pod whose containers all completed.
    let not_ready_reason = if phase == "Succeeded" {
        "PodCompleted"
    } else {
        "ContainersNotReady"
    };
    let msg = (phase != "Succeeded")
        .then(|| format!("containers with unready status: [{}]", unready.join(" ")));
    let conditions = vec![
        condition(old, "PodReadyToStartContainers", true, None, None, now),
        condition(old, "Initialized", true, None, None, now),
        condition(
            old,
            "Ready",
            ready,
            Some(not_ready_reason),
            msg.clone(),
            now,
        ),
        condition(
            old,
            "ContainersReady",
            ready,
            Some(not_ready_reason),
            msg,
            now,
        ),
        condition(old, "PodScheduled", true, None, None, now),
    ];
    let mut status = old.cloned().unwrap_or_default();
    status.phase = Some(phase.into());
    status.conditions = Some(conditions);
    status.host_ip = Some(host_ip.to_string());
    status.host_ips = Some(vec![HostIP {
        ip: host_ip.to_string(),
    }]);
    status.pod_ip = Some(ip.to_string());
    status.pod_ips = Some(vec![PodIP { ip: ip.to_string() }]);
    status.start_time = Some(time(start));
    status.container_statuses = Some(statuses);
    status.init_container_statuses = init;
    status.qos_class = Some(qos_class(&spec.containers).to_string());
    (status, wake)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_loop_backs_off_like_kubelet() {
        assert_eq!(crash_loop(Duration::ZERO).0, 1);
        assert_eq!(crash_loop(Duration::from_secs(10)).0, 2);
        assert_eq!(crash_loop(Duration::from_secs(29)).0, 2);
        assert_eq!(crash_loop(Duration::from_secs(30)).0, 3);
        let (r, b, _) = crash_loop(Duration::from_secs(3600));
        assert!(r > 6 && b == 300);
    }

    #[test]
    fn ip_pool_skips_network_and_broadcast() {
        let mut pool = IpPool::default();
        let a = pool.get("a");
        assert_eq!(a, Some(Ipv4Addr::new(10, 244, 0, 2)));
        assert_eq!(pool.get("a"), a);
        assert_ne!(pool.get("b"), a);
    }
}
