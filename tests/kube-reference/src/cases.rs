//! The table of requests: each [`Step`] is sent to both servers in order, so later steps see
//! what earlier ones created. Everything happens in the namespace [`NS`] and under the CRD
//! group `diff.mni.dev`, so the two servers start from the same state.

use http::Method;
use serde_json::{Value, json};

use crate::exchange::{APPLY, Call, JSON_PATCH, MERGE, STRATEGIC, TABLE};

/// The namespace every namespaced step uses.
pub const NS: &str = "differential";

/// One step of the table.
#[derive(Debug, Clone)]
pub enum Step {
    /// One request; its answers are compared.
    Http {
        /// What it checks.
        name: &'static str,
        /// The request.
        call: Call,
    },
    /// A request that prepares a later step, not compared (waiting for a CRD to be served).
    Until {
        /// What it waits for.
        name: &'static str,
        /// Repeated until it answers 2xx.
        call: Call,
    },
    /// A watch on a collection while `calls` run; the event sequences are compared.
    Watch {
        /// What it checks.
        name: &'static str,
        /// The collection path.
        collection: String,
        /// The writes made during the watch.
        calls: Vec<Call>,
        /// How many events to wait for.
        expected: usize,
    },
}

fn core(resource: &str) -> String {
    format!("/api/v1/namespaces/{NS}/{resource}")
}

fn apps(resource: &str) -> String {
    format!("/apis/apps/v1/namespaces/{NS}/{resource}")
}

fn batch(resource: &str) -> String {
    format!("/apis/batch/v1/namespaces/{NS}/{resource}")
}

fn widgets() -> String {
    format!("/apis/diff.mni.dev/v1/namespaces/{NS}/widgets")
}

fn http(name: &'static str, call: Call) -> Step {
    Step::Http { name, call }
}

fn get(name: &'static str, path: impl Into<String>) -> Step {
    http(name, Call::new(Method::GET, path))
}

fn post(name: &'static str, path: impl Into<String>, body: Value) -> Step {
    http(name, Call::new(Method::POST, path).json(&body))
}

fn put(name: &'static str, path: impl Into<String>, body: Value) -> Step {
    http(name, Call::new(Method::PUT, path).json(&body))
}

fn patch(name: &'static str, path: impl Into<String>, kind: &'static str, body: &str) -> Step {
    http(name, Call::new(Method::PATCH, path).raw(kind, body))
}

fn delete(name: &'static str, path: impl Into<String>) -> Step {
    http(name, Call::new(Method::DELETE, path))
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "diff"}}, "data": {"a": "1"}})
}

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [
                    {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
                    {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "3600"]}
                ]}
            }
        }
    })
}

fn job(name: &str, restart: &str) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 2,
            "template": {"spec": {
                "restartPolicy": restart,
                "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}]
            }}
        }
    })
}

fn service(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}
    })
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.diff.mni.dev"},
        "spec": {
            "group": "diff.mni.dev",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget",
                      "listKind": "WidgetList", "shortNames": ["wdg"], "categories": ["all"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                                "replicas": {"type": "integer"},
                                "tags": {"type": "array", "items": {"type": "string"},
                                         "x-kubernetes-list-type": "set"}
                            },
                            "x-kubernetes-validations": [
                                {"rule": "self.size != 7", "message": "size 7 is unlucky"}
                            ]
                        },
                        "status": {"type": "object", "properties": {
                            "replicas": {"type": "integer"},
                            "phase": {"type": "string"}
                        }}
                    }
                }}
            }]
        }
    })
}

fn widget(name: &str, size: i64) -> Value {
    json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget",
           "metadata": {"name": name}, "spec": {"size": size}})
}

/// The whole table, in order.
#[allow(clippy::too_many_lines)]
pub fn steps() -> Vec<Step> {
    let cm = core("configmaps");
    let cm1 = format!("{cm}/cm1");
    let secrets = core("secrets");
    let services = core("services");
    let deploys = apps("deployments");
    let jobs = batch("jobs");
    let mut s = vec![
        // Namespaces.
        post("namespace: create", "/api/v1/namespaces",
             json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})),
        get("namespace: get", format!("/api/v1/namespaces/{NS}")),
        post("namespace: create again (409)", "/api/v1/namespaces",
             json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})),
        post("namespace: invalid name (422)", "/api/v1/namespaces",
             json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_Name"}})),
        get("namespace: get missing (404)", "/api/v1/namespaces/no-such-namespace"),
        // ConfigMaps: create and read.
        post("configmap: create", cm.clone(), configmap("cm1")),
        get("configmap: get", cm1.clone()),
        get("configmap: get missing (404)", format!("{cm}/missing")),
        post("configmap: create again (409)", cm.clone(), configmap("cm1")),
        post("configmap: invalid name (422)", cm.clone(), configmap("CM_1")),
        post("configmap: no name (422)", cm.clone(),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})),
        post("configmap: generateName", cm.clone(),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}})),
        post("configmap: kind disagrees with the path (400)", cm.clone(),
             json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "wrongkind"}})),
        post("configmap: apiVersion disagrees with the path (400)", cm.clone(),
             json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "wrongversion"}})),
        post("configmap: no apiVersion and kind (taken from the path)", cm.clone(),
             json!({"metadata": {"name": "bare"}, "data": {"k": "v"}})),
        post("configmap: namespace disagrees with the path (400)", cm.clone(),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "default"}})),
        post("configmap: data value not a string (400)", cm.clone(),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "num"}, "data": {"a": 1}})),
        post("configmap: invalid data key (422)", cm.clone(),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "badkey"}, "data": {"a b": "1"}})),
        post("configmap: dry run", format!("{cm}?dryRun=All"), configmap("dry")),
        get("configmap: dry run stored nothing (404)", format!("{cm}/dry")),
        post("configmap: unknown field, Strict (400)", format!("{cm}?fieldValidation=Strict"),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "strict"}, "bogus": 1})),
        post("configmap: unknown field, Warn", format!("{cm}?fieldValidation=Warn"),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warn"}, "bogus": 1})),
        post("configmap: unknown field, Ignore", format!("{cm}?fieldValidation=Ignore"),
             json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignore"}, "bogus": 1})),
        post("configmap: bad fieldValidation value (400)", format!("{cm}?fieldValidation=Sometimes"),
             configmap("badvalidation")),
        post("configmap: malformed JSON (400)", cm.clone(), json!("not an object")),
        // ConfigMaps: patches.
        patch("configmap: merge patch", cm1.clone(), MERGE, r#"{"data":{"b":"2"}}"#),
        patch("configmap: strategic merge patch", cm1.clone(), STRATEGIC,
              r#"{"metadata":{"labels":{"tier":"one"}},"data":{"c":"3"}}"#),
        patch("configmap: JSON patch", cm1.clone(), JSON_PATCH,
              r#"[{"op":"add","path":"/data/d","value":"4"},{"op":"remove","path":"/data/a"}]"#),
        patch("configmap: JSON patch, failed test (422)", cm1.clone(), JSON_PATCH,
              r#"[{"op":"test","path":"/data/b","value":"nope"}]"#),
        patch("configmap: JSON patch, bad path (422)", cm1.clone(), JSON_PATCH,
              r#"[{"op":"remove","path":"/data/zzz"}]"#),
        patch("configmap: malformed merge patch (400)", cm1.clone(), MERGE, "{not json"),
        patch("configmap: patch missing object (404)", format!("{cm}/missing"), MERGE, r#"{"data":{"x":"1"}}"#),
        patch("configmap: apply creates", format!("{cm}/applied?fieldManager=alice"), APPLY,
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  owner: alice\n"),
        patch("configmap: apply, conflict with another manager (409)", format!("{cm}/applied?fieldManager=bob"), APPLY,
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  owner: bob\n"),
        patch("configmap: apply, forced", format!("{cm}/applied?fieldManager=bob&force=true"), APPLY,
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  owner: bob\n"),
        patch("configmap: apply without fieldManager (422)", format!("{cm}/applied"), APPLY,
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"),
        patch("configmap: apply, name disagrees with the path (400)", format!("{cm}/applied?fieldManager=alice"), APPLY,
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n"),
        patch("configmap: unsupported patch type (415)", cm1.clone(), "application/xml", "<x/>"),
        // ConfigMaps: updates.
        put("configmap: update with a stale resourceVersion (409)", cm1.clone(),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm1", "resourceVersion": "1"}, "data": {"z": "1"}})),
        put("configmap: unconditional update", cm1.clone(),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm1", "labels": {"app": "diff"}}, "data": {"z": "1"}})),
        put("configmap: update, name disagrees with the path (400)", cm1.clone(),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}})),
        put("configmap: update of a missing object (404)", format!("{cm}/nothere"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nothere", "resourceVersion": "5"}})),
        // ConfigMaps: lists and tables.
        get("configmap: list by label", format!("{cm}?labelSelector=app%3Ddiff")),
        get("configmap: list by field", format!("{cm}?fieldSelector=metadata.name%3Dcm1")),
        get("configmap: list, unsupported field selector (400)", format!("{cm}?fieldSelector=data.a%3D1")),
        get("configmap: list, bad label selector (400)", format!("{cm}?labelSelector=a%3D%3D%3Db")),
        get("configmap: list, limit 1", format!("{cm}?limit=1")),
        http("configmap: get as Table", Call::new(Method::GET, cm1.clone()).accept(TABLE)),
        http("configmap: list as Table", Call::new(Method::GET, format!("{cm}?labelSelector=app%3Ddiff")).accept(TABLE)),
        get("configmap: list across namespaces", "/api/v1/configmaps?labelSelector=app%3Ddiff"),
        // ConfigMaps: deletes.
        http("configmap: delete, dry run", Call::new(Method::DELETE, format!("{cm1}?dryRun=All"))),
        http("configmap: delete, uid precondition fails (409)", Call::new(Method::DELETE, cm1.clone())
            .json(&json!({"kind": "DeleteOptions", "apiVersion": "v1",
                          "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}))),
        delete("configmap: delete", cm1.clone()),
        delete("configmap: delete again (404)", cm1.clone()),
        http("configmap: delete collection by label", Call::new(Method::DELETE, format!("{cm}?labelSelector=app%3Ddiff"))),
        post("configmap: create in a missing namespace (404)", "/api/v1/namespaces/no-such-namespace/configmaps",
             configmap("x")),
        // Secrets.
        post("secret: create with stringData", secrets.clone(),
             json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"},
                    "stringData": {"password": "hunter2"}, "data": {"user": "YWRtaW4="}})),
        get("secret: get", format!("{secrets}/s1")),
        post("secret: TLS secret without its keys (422)", secrets.clone(),
             json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"},
                    "type": "kubernetes.io/tls", "data": {}})),
        post("secret: data not base64 (400)", secrets.clone(),
             json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "notb64"},
                    "data": {"x": "%%%"}})),
        patch("secret: merge patch", format!("{secrets}/s1"), MERGE, r#"{"stringData":{"extra":"x"}}"#),
        put("secret: type is immutable (422)", format!("{secrets}/s1"),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"},
                   "type": "kubernetes.io/basic-auth", "data": {"username": "YQ=="}})),
        delete("secret: delete", format!("{secrets}/s1")),
        // Services.
        post("service: create ClusterIP", services.clone(), service("web")),
        get("service: get", format!("{services}/web")),
        post("service: no ports (422)", services.clone(),
             json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "noports"}, "spec": {}})),
        post("service: port out of range (422)", services.clone(),
             json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "badport"},
                    "spec": {"ports": [{"port": 70000}]}})),
        post("service: headless", services.clone(),
             json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless"},
                    "spec": {"clusterIP": "None", "selector": {"app": "x"}, "ports": [{"port": 80}]}})),
        post("service: NodePort", services.clone(),
             json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np"},
                    "spec": {"type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 80}]}})),
        patch("service: strategic patch merges ports by port", format!("{services}/web"), STRATEGIC,
              r#"{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}"#),
        patch("service: clusterIP is immutable (422)", format!("{services}/web"), MERGE,
              r#"{"spec":{"clusterIP":"10.96.0.250"}}"#),
        http("service: list as Table", Call::new(Method::GET, services.clone()).accept(TABLE)),
        delete("service: delete", format!("{services}/web")),
        // Deployments.
        post("deployment: create", deploys.clone(), deployment("web")),
        get("deployment: get", format!("{deploys}/web")),
        post("deployment: selector does not match the template (422)", deploys.clone(), {
            let mut d = deployment("mismatch");
            d["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
            d
        }),
        post("deployment: no containers (422)", deploys.clone(), {
            let mut d = deployment("empty");
            d["spec"]["template"]["spec"]["containers"] = json!([]);
            d
        }),
        post("deployment: negative replicas (422)", deploys.clone(), {
            let mut d = deployment("negative");
            d["spec"]["replicas"] = json!(-1);
            d
        }),
        patch("deployment: strategic patch of one container by name", format!("{deploys}/web"), STRATEGIC,
              r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}"#),
        patch("deployment: strategic patch, $patch delete", format!("{deploys}/web"), STRATEGIC,
              r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}"#),
        patch("deployment: merge patch replaces the containers list", format!("{deploys}/web"), MERGE,
              r#"{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"nginx:1.29"}]}}}}"#),
        get("deployment: get scale", format!("{deploys}/web/scale")),
        put("deployment: update scale", format!("{deploys}/web/scale"),
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                   "metadata": {"name": "web", "namespace": NS}, "spec": {"replicas": 3}})),
        patch("deployment: patch scale", format!("{deploys}/web/scale"), MERGE, r#"{"spec":{"replicas":4}}"#),
        patch("deployment: apply", format!("{deploys}/applied?fieldManager=alice"), APPLY,
              &serde_json::to_string(&deployment("applied")).unwrap_or_default()),
        get("deployment: get status", format!("{deploys}/web/status")),
        http("deployment: list as Table", Call::new(Method::GET, deploys.clone()).accept(TABLE)),
        delete("deployment: delete", format!("{deploys}/web")),
        // Jobs.
        post("job: create", jobs.clone(), job("once", "Never")),
        get("job: get", format!("{jobs}/once")),
        post("job: restartPolicy Always (422)", jobs.clone(), job("always", "Always")),
        patch("job: template is immutable (422)", format!("{jobs}/once"), STRATEGIC,
              r#"{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"busybox:1.37"}]}}}}"#),
        patch("job: suspend", format!("{jobs}/once"), MERGE, r#"{"spec":{"suspend":true}}"#),
        http("job: delete in the background", Call::new(Method::DELETE, format!("{jobs}/once?propagationPolicy=Background"))),
        // A CRD and its custom resources.
        post("crd: create", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd()),
        Step::Until {
            name: "crd: served",
            call: Call::new(Method::GET, widgets()),
        },
        get("crd: get", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.diff.mni.dev"),
        post("crd: not structural (422)", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
            let mut c = crd();
            c["metadata"]["name"] = json!("gadgets.diff.mni.dev");
            c["spec"]["names"] = json!({"kind": "Gadget", "plural": "gadgets"});
            c["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object",
                "properties": {"spec": {"properties": {"x": {"type": "string"}}}}});
            c
        }),
        post("widget: create (defaults applied)", widgets(), widget("w1", 3)),
        get("widget: get", format!("{}/w1", widgets())),
        post("widget: no apiVersion and kind", widgets(), json!({"metadata": {"name": "bare"}, "spec": {"size": 1}})),
        post("widget: kind disagrees with the path (400)", widgets(),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Gadget", "metadata": {"name": "x"}, "spec": {"size": 1}})),
        post("widget: over the maximum (422)", widgets(), widget("big", 11)),
        post("widget: wrong type (422)", widgets(),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget", "metadata": {"name": "str"}, "spec": {"size": "three"}})),
        post("widget: required field missing (422)", widgets(),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget", "metadata": {"name": "nosize"}, "spec": {}})),
        post("widget: CEL rule (422)", widgets(), widget("seven", 7)),
        post("widget: not in the enum (422)", widgets(),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget", "metadata": {"name": "green"},
                    "spec": {"size": 1, "color": "green"}})),
        post("widget: unknown field pruned, with a warning", widgets(),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget", "metadata": {"name": "pruned"},
                    "spec": {"size": 1, "extra": true}})),
        post("widget: unknown field, Strict (400)", format!("{}?fieldValidation=Strict", widgets()),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget", "metadata": {"name": "strict"},
                    "spec": {"size": 1, "extra": true}})),
        post("widget: duplicate in a set list (422)", widgets(),
             json!({"apiVersion": "diff.mni.dev/v1", "kind": "Widget", "metadata": {"name": "dup"},
                    "spec": {"size": 1, "tags": ["a", "a"]}})),
        patch("widget: merge patch", format!("{}/w1", widgets()), MERGE, r#"{"spec":{"size":4}}"#),
        patch("widget: JSON patch", format!("{}/w1", widgets()), JSON_PATCH,
              r#"[{"op":"replace","path":"/spec/color","value":"blue"}]"#),
        patch("widget: strategic merge patch is refused (415)", format!("{}/w1", widgets()), STRATEGIC,
              r#"{"spec":{"size":5}}"#),
        patch("widget: apply", format!("{}/w2?fieldManager=alice", widgets()), APPLY,
              "apiVersion: diff.mni.dev/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: 2\n  tags: [x]\n"),
        patch("widget: status through the main resource is ignored", format!("{}/w1", widgets()), MERGE,
              r#"{"status":{"phase":"Ignored"}}"#),
        patch("widget: status subresource", format!("{}/w1/status", widgets()), MERGE,
              r#"{"status":{"phase":"Ready","replicas":1}}"#),
        get("widget: scale", format!("{}/w1/scale", widgets())),
        patch("widget: patch scale", format!("{}/w1/scale", widgets()), MERGE, r#"{"spec":{"replicas":2}}"#),
        get("widget: list", widgets()),
        http("widget: list as Table (printer columns)", Call::new(Method::GET, widgets()).accept(TABLE)),
        delete("widget: delete", format!("{}/w1", widgets())),
        get("widget: get deleted (404)", format!("{}/w1", widgets())),
        // Watches.
        Step::Watch {
            name: "watch: configmaps created, patched, deleted",
            collection: format!("{cm}?labelSelector=watch%3Dyes"),
            calls: vec![
                Call::new(Method::POST, cm.clone()).json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "watched", "labels": {"watch": "yes"}}, "data": {"n": "1"}})),
                Call::new(Method::PATCH, format!("{cm}/watched")).raw(MERGE, r#"{"data":{"n":"2"}}"#),
                Call::new(Method::PATCH, format!("{cm}/watched")).raw(MERGE, r#"{"metadata":{"labels":{"watch":"no"}}}"#),
                Call::new(Method::PATCH, format!("{cm}/watched")).raw(MERGE, r#"{"metadata":{"labels":{"watch":"yes"}}}"#),
                Call::new(Method::DELETE, format!("{cm}/watched")),
            ],
            expected: 5,
        },
        Step::Watch {
            name: "watch: widgets",
            collection: widgets(),
            calls: vec![
                Call::new(Method::POST, widgets()).json(&widget("watched", 2)),
                Call::new(Method::PATCH, format!("{}/watched/status", widgets())).raw(MERGE, r#"{"status":{"phase":"Up"}}"#),
                Call::new(Method::DELETE, format!("{}/watched", widgets())),
            ],
            expected: 3,
        },
        // Tidy up, compared too.
        delete("crd: delete", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.diff.mni.dev"),
    ];
    s.push(delete(
        "namespace: delete",
        format!("/api/v1/namespaces/{NS}"),
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_have_unique_names() {
        let mut names = std::collections::BTreeSet::new();
        for step in steps() {
            let name = match step {
                Step::Http { name, .. } | Step::Until { name, .. } | Step::Watch { name, .. } => {
                    name
                }
            };
            assert!(names.insert(name), "two steps named {name:?}");
        }
        assert!(names.len() > 100, "{} steps", names.len());
    }
}
