//! No input panics: mutated RBAC objects (wrong types, missing fields, odd strings) are fed to
//! the authorizer, the aggregation helper and the message builders.

use crate::common;

use common::*;
use mni_rbac::{
    Attributes, Authorizer, UserInfo, aggregated_cluster_role_rules, bootstrap_policy,
    forbidden_status,
};
use serde_json::{Value, json};

/// A tiny deterministic generator (no extra dependencies).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn odd_value(rng: &mut Lcg) -> Value {
    match rng.next(9) {
        0 => Value::Null,
        1 => json!(7),
        2 => json!("*"),
        3 => json!(""),
        4 => json!(["*", 1]),
        5 => json!({}),
        6 => json!([{}]),
        7 => json!("ünï\u{0}\"<&>"),
        _ => json!(true),
    }
}

/// Replaces a random field (at some depth) of `v` with an odd value.
fn mutate(v: &mut Value, rng: &mut Lcg, depth: usize) {
    match v {
        Value::Object(map) if !map.is_empty() && depth < 4 => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.next(keys.len())];
            if rng.next(3) == 0 {
                map.insert(key.clone(), odd_value(rng));
            } else if let Some(child) = map.get_mut(key) {
                mutate(child, rng, depth + 1);
            }
        }
        Value::Array(items) if !items.is_empty() && depth < 4 => {
            let i = rng.next(items.len());
            mutate(&mut items[i], rng, depth + 1);
        }
        other => *other = odd_value(rng),
    }
}

#[test]
fn mutated_objects_never_panic() {
    let base_roles = vec![
        role("ns", "r", vec![rule(&["get"], &[""], &["pods"])]),
        role(
            "ns",
            "r2",
            vec![named_rule(&["get"], &["*"], &["*/scale"], &["x"])],
        ),
    ];
    let mut base_cluster_roles: Vec<Value> = bootstrap_policy()
        .into_iter()
        .filter(|o| o["kind"] == "ClusterRole")
        .collect();
    base_cluster_roles.push(cluster_role("c", vec![url_rule(&["get"], &["/x*"])]));
    let base_rbs = vec![
        role_binding("ns", "rb", "Role", "r", vec![subject("User", "u")]),
        role_binding(
            "ns",
            "rb2",
            "ClusterRole",
            "view",
            vec![sa_subject("", "sa")],
        ),
    ];
    let base_crbs = vec![cluster_role_binding(
        "crb",
        "c",
        vec![subject("Group", "g")],
    )];
    let users = [
        UserInfo::new("u", ["g"]),
        UserInfo::service_account("ns", "sa"),
        UserInfo::new("", Vec::<String>::new()),
    ];
    let mut rng = Lcg(42);
    for _ in 0..300 {
        let mut sets = [
            base_roles.clone(),
            base_cluster_roles.clone(),
            base_rbs.clone(),
            base_crbs.clone(),
        ];
        for _ in 0..3 {
            let set = &mut sets[rng.next(4)];
            let i = rng.next(set.len());
            mutate(&mut set[i], &mut rng, 0);
        }
        let a = Authorizer::new(&sets[0], &sets[1], &sets[2], &sets[3]);
        let _ = aggregated_cluster_role_rules(&sets[1]);
        for user in &users {
            for attrs in [
                ns_req(user, "get", "ns", "", "pods").named("p"),
                ns_req(user, "update", "ns", "apps", "deployments").subresource("scale"),
                cluster_req(user, "list", "", "nodes"),
                path_req(user, "get", "/xyz"),
                Attributes::default(),
            ] {
                let d = a.authorize(&attrs);
                let _ = forbidden_status(&attrs, &d.reason);
            }
            let _ = a.rules_for(user, "ns").to_status();
        }
    }
}
