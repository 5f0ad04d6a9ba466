//! The scheduler (kube-scheduler's role, for the nodes this simulator runs): binds each
//! pending pod (no `spec.nodeName`, `schedulerName` empty or `default-scheduler`) to a node
//! that fits it, by writing `spec.nodeName`. A node fits when
//!
//! - its labels satisfy the pod's `nodeSelector` and required node affinity,
//! - the pod tolerates every `NoSchedule`/`NoExecute` taint (and the node is not cordoned),
//! - the pod's requests (the larger of its containers' sum and its largest init container,
//!   plus `overhead`) fit in `allocatable` beside the requests of the pods already bound
//!   there and not finished, and one more pod fits under `allocatable.pods`.
//!
//! A pod that fits nowhere stays `Pending` with `PodScheduled=False` / `Unschedulable` and a
//! `FailedScheduling` Warning event worded as kube-scheduler's (`0/1 nodes are available:
//! 1 Insufficient memory. preemption: …`); it is tried again on the next pass that sees it and
//! at least every [`RETRY_UNSCHEDULABLE`].
//!
//! Only the simulator's own node is a candidate: nodes registered by simulated upstreams
//! (`mni-dev-kubevirt`) run no kubelet, so a pod bound there would never start.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Node, NodeSelectorRequirement, Pod, PodCondition, PodSpec, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Api;
use mni_formats::quantity::Quantity;
use serde_json::json;

use crate::cache::Snapshot;
use crate::ops::{self, Outcome};
use crate::scope::Scope;
use crate::util;

/// How often an unschedulable pod is tried again when nothing else wakes it.
pub(crate) const RETRY_UNSCHEDULABLE: Duration = Duration::from_secs(10);

/// The scheduler's name, as pods name it and events report it.
const SCHEDULER: &str = "default-scheduler";

/// Resources sum per name, in nano-units.
type Resources = BTreeMap<String, i128>;

fn parse(q: &K8sQuantity) -> i128 {
    q.0.parse::<Quantity>().map_or(0, |q| q.nanos())
}

/// What `spec` asks of a node: kube-scheduler's effective request.
pub(crate) fn pod_requests(spec: &PodSpec) -> Resources {
    let mut sum = Resources::new();
    for c in &spec.containers {
        let res = c.resources.as_ref();
        // A container with limits but no requests requests its limits.
        let req = res
            .and_then(|r| r.requests.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(
                res.and_then(|r| r.limits.clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(k, _)| {
                        res.and_then(|r| r.requests.as_ref())
                            .is_none_or(|m| !m.contains_key(k))
                    }),
            );
        for (k, v) in req {
            *sum.entry(k).or_default() += parse(&v);
        }
    }
    for c in spec.init_containers.iter().flatten() {
        for (k, v) in c
            .resources
            .as_ref()
            .and_then(|r| r.requests.clone())
            .unwrap_or_default()
        {
            let v = parse(&v);
            let e = sum.entry(k).or_default();
            *e = (*e).max(v);
        }
    }
    for (k, v) in spec.overhead.clone().unwrap_or_default() {
        *sum.entry(k).or_default() += parse(&v);
    }
    sum
}

/// Why `node` does not fit `pod`, in kube-scheduler's words; empty when it fits.
/// `used` holds the requests of the pods already on the node and `count` their number.
pub(crate) fn misfits(pod: &PodSpec, node: &Node, used: &Resources, count: usize) -> Vec<String> {
    let mut why = Vec::new();
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let spec = node.spec.clone().unwrap_or_default();
    if spec.unschedulable == Some(true)
        && !tolerated(
            pod.tolerations.as_deref(),
            &Taint {
                key: "node.kubernetes.io/unschedulable".into(),
                effect: "NoSchedule".into(),
                ..Default::default()
            },
        )
    {
        why.push("1 node(s) were unschedulable".to_string());
    }
    if !selected(
        pod,
        node.metadata.name.as_deref().unwrap_or_default(),
        &labels,
    ) {
        why.push("1 node(s) didn't match Pod's node affinity/selector".to_string());
    }
    for taint in spec.taints.iter().flatten() {
        if matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerated(pod.tolerations.as_deref(), taint)
        {
            why.push(format!(
                "1 node(s) had untolerated taint {{{}: {}}}",
                taint.key,
                taint.value.as_deref().unwrap_or_default()
            ));
            break;
        }
    }
    let alloc = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.clone())
        .unwrap_or_default();
    if let Some(max) = alloc.get("pods").map(parse)
        && i128::try_from(count + 1).unwrap_or(i128::MAX) * 1_000_000_000 > max
    {
        why.push("1 Too many pods".to_string());
    }
    for (k, want) in pod_requests(pod) {
        if want == 0 {
            continue;
        }
        let have = alloc.get(&k).map_or(0, parse);
        if used.get(&k).copied().unwrap_or(0) + want > have {
            why.push(format!("1 Insufficient {k}"));
        }
    }
    why
}

/// Whether the node's labels satisfy the pod's node selector and required node affinity.
fn selected(pod: &PodSpec, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
    let by_selector = pod
        .node_selector
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let terms = pod
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|s| s.node_selector_terms.clone());
    // Terms are ORed, the expressions of one term ANDed.
    let by_affinity = terms.is_none_or(|terms| {
        terms.iter().any(|t| {
            t.match_expressions
                .iter()
                .flatten()
                .all(|r| requirement(r, labels))
                && t.match_fields.iter().flatten().all(|r| {
                    let name = [("metadata.name".to_string(), node_name.to_string())].into();
                    requirement(r, &name)
                })
        })
    });
    by_selector && by_affinity
}

fn requirement(r: &NodeSelectorRequirement, labels: &BTreeMap<String, String>) -> bool {
    let v = labels.get(&r.key);
    let values = r.values.clone().unwrap_or_default();
    match r.operator.as_str() {
        "In" => v.is_some_and(|v| values.contains(v)),
        "NotIn" => v.is_none_or(|v| !values.contains(v)),
        "Exists" => v.is_some(),
        "DoesNotExist" => v.is_none(),
        "Gt" | "Lt" => {
            let (Some(have), Some(want)) = (
                v.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|v| v.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if r.operator == "Gt" {
                have > want
            } else {
                have < want
            }
        }
        _ => false,
    }
}

/// Whether one of `tolerations` tolerates `taint`.
fn tolerated(tolerations: Option<&[Toleration]>, taint: &Taint) -> bool {
    tolerations.into_iter().flatten().any(|t| {
        let effect_ok = t
            .effect
            .as_deref()
            .is_none_or(|e| e.is_empty() || e == taint.effect);
        let key_ok = t
            .key
            .as_deref()
            .is_none_or(|k| k.is_empty() || k == taint.key);
        let value_ok = match t.operator.as_deref().unwrap_or("Equal") {
            "Exists" => true,
            _ => {
                t.value.as_deref().unwrap_or_default() == taint.value.as_deref().unwrap_or_default()
            }
        };
        // An empty key with `Exists` tolerates everything.
        effect_ok && key_ok && value_ok
    })
}

/// kube-scheduler's message for a pod that fits none of `total` nodes.
pub(crate) fn message(total: usize, reasons: &[String]) -> String {
    let mut reasons = reasons.to_vec();
    reasons.sort();
    let body = if reasons.is_empty() {
        String::new()
    } else {
        format!(" {}.", reasons.join(", "))
    };
    let only_resources = !reasons.is_empty()
        && reasons
            .iter()
            .all(|r| r.starts_with("1 Insufficient") || r == "1 Too many pods");
    let preemption = if only_resources {
        format!("{total} No preemption victims found for incoming pod")
    } else {
        format!("{total} Preemption is not helpful for scheduling")
    };
    format!(
        "0/{total} nodes are available:{body} preemption: 0/{total} nodes are available: {preemption}."
    )
}

/// Binds the pending pods in `scope` to `node_name` when they fit it.
///
/// When `node_name` is not registered (a simulator of one namespace registers none), pods are
/// bound without checks, as before the scheduler existed.
pub(crate) async fn sync(
    client: &kube::Client,
    node_name: &str,
    requires_node: bool,
    snap: &Snapshot,
    scope: &Scope,
    now: Timestamp,
    out: &mut Outcome,
) {
    let pending: Vec<&Pod> = snap
        .pods
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| {
            let spec = p.spec.as_ref();
            scope.pod(p.metadata.uid.as_deref())
                && p.metadata.deletion_timestamp.is_none()
                && spec
                    .and_then(|s| s.node_name.as_deref())
                    .is_none_or(str::is_empty)
                && spec
                    .and_then(|s| s.scheduler_name.as_deref())
                    .is_none_or(|n| n.is_empty() || n == SCHEDULER)
        })
        .collect();
    if pending.is_empty() {
        return;
    }
    let nodes: Api<Node> = Api::all(client.clone());
    let node = match nodes.get_opt(node_name).await {
        Ok(n) => n,
        Err(e) => {
            out.failed(&format!("node {node_name}"), &e);
            return;
        }
    };
    if node.is_none() && requires_node {
        // Registration is under way; try again soon.
        out.retry = true;
        for p in pending {
            out.redo.add_pod(p.metadata.uid.as_deref());
        }
        return;
    }
    // What the pods already bound to the node request (finished pods hold nothing).
    let mut used = Resources::new();
    let mut count = 0usize;
    for p in &snap.pods {
        let Some(spec) = p.spec.as_ref() else {
            continue;
        };
        if spec.node_name.as_deref() != Some(node_name) || !util::is_active(p) {
            continue;
        }
        count += 1;
        for (k, v) in pod_requests(spec) {
            *used.entry(k).or_default() += v;
        }
    }
    for pod in pending {
        let spec = pod.spec.clone().unwrap_or_default();
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let api: Api<Pod> = Api::namespaced(client.clone(), ns);
        let why = node
            .as_ref()
            .map(|n| misfits(&spec, n, &used, count))
            .unwrap_or_default();
        if why.is_empty() {
            let body = json!({"spec": {"nodeName": node_name}});
            match ops::patch(&api, name, &body, false, out).await {
                Ok(Some(_)) => {
                    count += 1;
                    for (k, v) in pod_requests(&spec) {
                        *used.entry(k).or_default() += v;
                    }
                }
                Ok(None) => {}
                Err(e) => out.failed(&format!("pod {ns}/{name}"), &e),
            }
            continue;
        }
        let msg = message(1, &why);
        out.wake_at(util::add(now, RETRY_UNSCHEDULABLE));
        let current = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled"));
        if current.is_some_and(|c| c.status == "False" && c.message.as_deref() == Some(&msg)) {
            continue;
        }
        let cond = PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("Unschedulable".into()),
            message: Some(msg.clone()),
            last_transition_time: Some(Time(now)),
            ..Default::default()
        };
        let mut conditions: Vec<PodCondition> = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        conditions.retain(|c| c.type_ != "PodScheduled");
        conditions.push(cond);
        let body = json!({"status": {"phase": "Pending", "conditions": conditions}});
        match ops::patch(&api, name, &body, true, out).await {
            Ok(Some(_)) => {
                ops::warn(
                    client,
                    &pod.metadata,
                    ("v1", "Pod"),
                    "FailedScheduling",
                    &msg,
                    SCHEDULER,
                )
                .await;
            }
            Ok(None) => {}
            Err(e) => out.failed(&format!("pod {ns}/{name}"), &e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: serde_json::Value) -> Node {
        serde_json::from_value(yaml).expect("node")
    }

    fn pod(yaml: serde_json::Value) -> PodSpec {
        serde_json::from_value(yaml).expect("pod spec")
    }

    fn small_node() -> Node {
        node(json!({
            "metadata": {"name": "n", "labels": {"disk": "ssd"}},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "2", "memory": "1Gi", "pods": "2"}}
        }))
    }

    #[test]
    fn requests_add_up_and_init_containers_take_the_max() {
        let spec = pod(json!({
            "containers": [
                {"name": "a", "resources": {"requests": {"memory": "100Mi", "cpu": "100m"}}},
                {"name": "b", "resources": {"limits": {"memory": "50Mi"}}}
            ],
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}}]
        }));
        let r = pod_requests(&spec);
        assert_eq!(r["memory"], 150 * 1024 * 1024 * 1_000_000_000);
        assert_eq!(r["cpu"], 1_000_000_000);
    }

    #[test]
    fn misfits_are_worded_as_kube_scheduler() {
        let tolerant = json!([{"key": "dedicated", "operator": "Exists"}]);
        let fits = pod(json!({"containers": [{"name": "a"}], "tolerations": tolerant}));
        assert!(misfits(&fits, &small_node(), &Resources::new(), 0).is_empty());
        let big = pod(json!({
            "containers": [{"name": "a", "resources": {"requests": {"memory": "2Gi"}}}],
            "tolerations": tolerant
        }));
        let why = misfits(&big, &small_node(), &Resources::new(), 0);
        assert_eq!(why, ["1 Insufficient memory"]);
        assert_eq!(
            message(1, &why),
            "0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes are \
             available: 1 No preemption victims found for incoming pod."
        );
        let untolerant =
            pod(json!({"containers": [{"name": "a"}], "nodeSelector": {"disk": "hdd"}}));
        let why = misfits(&untolerant, &small_node(), &Resources::new(), 2);
        assert_eq!(
            message(1, &why),
            "0/1 nodes are available: 1 Too many pods, 1 node(s) didn't match Pod's node \
             affinity/selector, 1 node(s) had untolerated taint {dedicated: db}. preemption: \
             0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn node_affinity_expressions_select_nodes() {
        let labels: BTreeMap<String, String> = [("zone".to_string(), "a".to_string())].into();
        let spec = |op: &str, values: &[&str]| {
            pod(
                json!({"containers": [{"name": "a"}], "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": op, "values": values}]}
                ]}}}}),
            )
        };
        assert!(selected(&spec("In", &["a", "b"]), "n", &labels));
        assert!(!selected(&spec("NotIn", &["a"]), "n", &labels));
        assert!(selected(&spec("Exists", &[]), "n", &labels));
        assert!(!selected(&spec("DoesNotExist", &[]), "n", &labels));
    }
}
