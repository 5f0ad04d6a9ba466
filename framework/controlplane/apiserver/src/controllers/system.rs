//! The objects kube-apiserver keeps about itself, created at start-up when missing: one local
//! `APIService` per group version it serves (as the aggregator's `autoregister` controller
//! makes them, labelled `kube-aggregator.kubernetes.io/automanaged: onstart`, `Available`
//! with reason `Local`), API Priority and Fairness' mandatory `exempt` and `catch-all`
//! FlowSchemas and PriorityLevelConfigurations, and the `default/kubernetes` Service (the
//! service range's first address, port 443 named `https`) with the Endpoints and EndpointSlice
//! that point at the server, rewritten when the server's address changes, as kube-apiserver's
//! endpoint reconciler keeps them.

use serde_json::{Value, json};

use crate::error::ApiResult;
use crate::object;
use crate::request::Target;
use crate::state::{State, WriteOptions};

/// `(group, groupPriorityMinimum, versionPriority)` as kube-apiserver orders its groups; other
/// groups (custom resources) get 1000 and 100.
const PRIORITIES: &[(&str, i64, i64)] = &[
    ("", 18000, 1),
    ("apps", 17800, 15),
    ("events.k8s.io", 17750, 15),
    ("authentication.k8s.io", 17700, 15),
    ("authorization.k8s.io", 17600, 15),
    ("autoscaling", 17500, 15),
    ("batch", 17400, 15),
    ("certificates.k8s.io", 17300, 15),
    ("networking.k8s.io", 17200, 15),
    ("policy", 17100, 15),
    ("rbac.authorization.k8s.io", 17000, 15),
    ("storage.k8s.io", 16800, 15),
    ("apiextensions.k8s.io", 16700, 15),
    ("admissionregistration.k8s.io", 16700, 15),
    ("scheduling.k8s.io", 16600, 15),
    ("coordination.k8s.io", 16500, 15),
    ("node.k8s.io", 16300, 15),
    ("discovery.k8s.io", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", 16100, 21),
    ("apiregistration.k8s.io", 18000, 15),
];

/// The local APIService for one served group version.
fn api_service(group: &str, version: &str) -> Value {
    let (group_priority, mut version_priority) = PRIORITIES
        .iter()
        .find(|(g, _, _)| *g == group)
        .map_or((1000, 100), |(_, g, v)| (*g, *v));
    if group == "autoscaling" && version == "v2" {
        version_priority = 30;
    }
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {
            "name": format!("{version}.{group}"),
            "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
        },
        "spec": {
            "group": group,
            "version": version,
            "groupPriorityMinimum": group_priority,
            "versionPriority": version_priority,
        },
    })
}

/// The rule that matches every request.
fn everything() -> Value {
    json!({
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "clusterScope": true, "namespaces": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    })
}

/// API Priority and Fairness' mandatory configuration.
fn flow_control() -> Vec<(&'static str, Value)> {
    let auto = json!({"apf.kubernetes.io/autoupdate-spec": "true"});
    let mut exempt_rule = everything();
    exempt_rule["subjects"] = json!([{"kind": "Group", "group": {"name": "system:masters"}}]);
    let mut catch_all_rule = everything();
    catch_all_rule["subjects"] = json!([
        {"kind": "Group", "group": {"name": "system:unauthenticated"}},
        {"kind": "Group", "group": {"name": "system:authenticated"}},
    ]);
    vec![
        (
            "prioritylevelconfigurations",
            json!({
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "kind": "PriorityLevelConfiguration",
                "metadata": {"name": "exempt", "annotations": auto},
                "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
            }),
        ),
        (
            "prioritylevelconfigurations",
            json!({
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "kind": "PriorityLevelConfiguration",
                "metadata": {"name": "catch-all", "annotations": auto},
                "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                    "lendablePercent": 0, "limitResponse": {"type": "Reject"}}},
            }),
        ),
        (
            "flowschemas",
            json!({
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "kind": "FlowSchema",
                "metadata": {"name": "exempt", "annotations": auto},
                "spec": {"priorityLevelConfiguration": {"name": "exempt"},
                    "matchingPrecedence": 1, "rules": [exempt_rule]},
            }),
        ),
        (
            "flowschemas",
            json!({
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                "kind": "FlowSchema",
                "metadata": {"name": "catch-all", "annotations": auto},
                "spec": {"priorityLevelConfiguration": {"name": "catch-all"},
                    "matchingPrecedence": 10000, "distinguisherMethod": {"type": "ByUser"},
                    "rules": [catch_all_rule]},
            }),
        ),
    ]
}

/// The `kubernetes` Service's address: the first of the service range (10.96.0.0/12), which
/// the cluster-IP allocator never hands out.
const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

/// The `default/kubernetes` Service and the Endpoints and EndpointSlice behind it, pointing at
/// `address` (`IP:PORT`, an unspecified IP read as loopback).
fn kubernetes_service(address: &str) -> Option<[(&'static str, &'static str, Value); 3]> {
    let addr: std::net::SocketAddr = address.parse().ok()?;
    let ip = if addr.ip().is_unspecified() {
        std::net::IpAddr::from([127, 0, 0, 1])
    } else {
        addr.ip()
    };
    let (ip, port) = (ip.to_string(), addr.port());
    let family = if addr.is_ipv4() { "IPv4" } else { "IPv6" };
    let labels = json!({"component": "apiserver", "provider": "kubernetes"});
    let meta = |extra: Value| {
        let mut meta = json!({"name": "kubernetes", "namespace": "default", "labels": labels});
        if let (Some(m), Some(e)) = (meta["labels"].as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        meta
    };
    Some([
        (
            "",
            "services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(json!({})),
                "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP,
                    "sessionAffinity": "None",
                    "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]}}),
        ),
        (
            "",
            "endpoints",
            json!({"apiVersion": "v1", "kind": "Endpoints",
                "metadata": meta(json!({"endpointslice.kubernetes.io/skip-mirror": "true"})),
                "subsets": [{"addresses": [{"ip": ip}],
                    "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]}),
        ),
        (
            "discovery.k8s.io",
            "endpointslices",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": meta(json!({"kubernetes.io/service-name": "kubernetes"})),
                "addressType": family,
                "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}),
        ),
    ])
}

/// Creates the `kubernetes` Service, Endpoints and EndpointSlice, or rewrites the last two when
/// they point elsewhere (the server restarted on another port).
async fn ensure_kubernetes_service(state: &State) -> ApiResult<()> {
    let Some(objects) = kubernetes_service(&state.address()) else {
        return Ok(());
    };
    for (group, plural, obj) in objects {
        let Some(info) = state.registry().get(group, "v1", plural) else {
            continue;
        };
        let Some(current) = state.stored(&info.key(Some("default"), "kubernetes")) else {
            ensure(state, (group, "v1", plural), obj, None).await?;
            continue;
        };
        let current = object::from_stored(&current)?;
        let fields = ["subsets", "endpoints", "ports"];
        if plural == "services" || fields.iter().all(|f| current.get(*f) == obj.get(*f)) {
            continue;
        }
        let target = Target {
            info,
            namespace: Some("default".into()),
            name: Some("kubernetes".into()),
            subresource: None,
        };
        let opts = WriteOptions::internal("kube-apiserver");
        state
            .update(&target, &opts, false, |cur| {
                let mut next = cur.clone();
                for f in fields {
                    if let Some(v) = obj.get(f) {
                        next[f] = v.clone();
                    }
                }
                Ok(next)
            })
            .await?;
    }
    Ok(())
}

/// Creates `obj` (in `group/version/plural`, in its `metadata.namespace` if any) unless it
/// exists, then sets its status to `status` when given.
async fn ensure(
    state: &State,
    (group, version, plural): (&str, &str, &str),
    obj: Value,
    status: Option<Value>,
) -> ApiResult<()> {
    let Some(info) = state.registry().get(group, version, plural) else {
        return Ok(());
    };
    let name = object::name(&obj).to_string();
    let namespace = obj["metadata"]["namespace"].as_str().map(str::to_string);
    if state
        .stored(&info.key(namespace.as_deref(), &name))
        .is_some()
    {
        return Ok(());
    }
    let opts = WriteOptions::internal("kube-apiserver");
    let target = Target {
        info: info.clone(),
        namespace: namespace.clone(),
        name: None,
        subresource: None,
    };
    match state.create(&target, obj, &opts, false).await {
        Ok(_) => {}
        Err(e) if e.code == 409 => return Ok(()),
        Err(e) => return Err(e),
    }
    if let Some(status) = status {
        let target = Target {
            info,
            namespace,
            name: Some(name),
            subresource: Some("status".into()),
        };
        state
            .update(&target, &opts, false, |cur| {
                let mut next = cur.clone();
                next["status"] = status.clone();
                Ok(next)
            })
            .await?;
    }
    Ok(())
}

/// Creates the missing system objects.
pub(super) async fn bootstrap(state: &State) -> ApiResult<()> {
    let served: Vec<(String, Vec<String>)> = state.registry().groups().to_vec();
    let available = json!({"conditions": [{
        "type": "Available", "status": "True", "reason": "Local",
        "message": "Local APIServices are always available",
        "lastTransitionTime": object::now(),
    }]});
    for (group, versions) in served {
        for version in versions {
            ensure(
                state,
                ("apiregistration.k8s.io", "v1", "apiservices"),
                api_service(&group, &version),
                Some(available.clone()),
            )
            .await?;
        }
    }
    for (plural, obj) in flow_control() {
        ensure(
            state,
            ("flowcontrol.apiserver.k8s.io", "v1", plural),
            obj,
            None,
        )
        .await?;
    }
    ensure_kubernetes_service(state).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_services_are_named_version_dot_group() {
        let core = api_service("", "v1");
        assert_eq!(core["metadata"]["name"], "v1.");
        assert_eq!(core["spec"]["groupPriorityMinimum"], 18000);
        let crd = api_service("stable.example.com", "v1");
        assert_eq!(crd["metadata"]["name"], "v1.stable.example.com");
        assert_eq!(crd["spec"]["versionPriority"], 100);
    }

    #[test]
    fn the_kubernetes_service_points_at_the_servers_address() {
        let [(_, _, svc), (_, _, endpoints), (_, _, slice)] =
            kubernetes_service("0.0.0.0:6443").expect("an address");
        assert_eq!(svc["spec"]["clusterIP"], KUBERNETES_SERVICE_IP);
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], 6443);
        assert_eq!(endpoints["subsets"][0]["addresses"][0]["ip"], "127.0.0.1");
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(
            slice["metadata"]["labels"]["kubernetes.io/service-name"],
            "kubernetes"
        );
        let [_, _, (_, _, v6)] = kubernetes_service("[::1]:7000").expect("an address");
        assert_eq!(v6["addressType"], "IPv6");
        assert_eq!(v6["endpoints"][0]["addresses"][0], "::1");
        assert!(kubernetes_service("not an address").is_none());
    }
}
