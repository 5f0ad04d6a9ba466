//! End to end, on the embedded control plane: what `mni-scaffold new service billing` generates
//! builds, and its operator, run as its own ServiceAccount, installs and runs the service.
//!
//! The steps, as a user would take them with kubectl: scaffold and `cargo build` the project;
//! start `mni-dev`; `kubectl apply -k` the operator's `config/default` (CRDs, ServiceAccount,
//! RBAC); run the operator with a token of its ServiceAccount, so RBAC is enforced; apply the
//! sample `Billing`; check every child exists, owned by it; wait until it is Ready; scale the
//! frontend (and see a hand-made change undone); change a backend setting and see the backend
//! roll; make the backend crash-loop through the simulator and see `Degraded`; heal it;
//! restart the operator (once with a change made while it was down, once with nothing to do)
//! and check it writes only what changed; run the backend as the ServiceAccount the operator
//! made for it and use its HTTP API; delete the `Billing` and see every child collected.

mod service_support;

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::{Value, json};

use service_support::{BACKEND, CONVERGE, Cluster, Operator, Project, SERVICE_DIR, eventually};

/// The sample installation in `config/samples`.
const SAMPLE: &str = "billing-sample";

/// Every object the operator makes for the sample, as `kubectl get` arguments.
const CHILDREN: &[&str] = &[
    "serviceaccount/billing-sample-backend",
    "role.rbac.authorization.k8s.io/billing-sample-backend",
    "rolebinding.rbac.authorization.k8s.io/billing-sample-backend",
    "configmap/billing-sample-backend-settings",
    "deployment.apps/billing-sample-frontend",
    "deployment.apps/billing-sample-backend",
    "service/billing-sample-frontend",
    "service/billing-sample-backend",
    "networkpolicy.networking.k8s.io/billing-sample-backend",
];

/// What a write would change: resourceVersion, generation and managedFields of every child and
/// of the `Billing`, by `kind/name`.
type Snapshot = BTreeMap<String, (Value, Value, Value)>;

fn snapshot(cluster: &Cluster) -> Snapshot {
    let mut args: Vec<&str> = CHILDREN.to_vec();
    args.push("billing/billing-sample");
    let list = cluster.get_json(&args);
    list["items"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|o| {
            let meta = &o["metadata"];
            let key = format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default()
            );
            let value = (
                meta["resourceVersion"].clone(),
                meta["generation"].clone(),
                meta["managedFields"].clone(),
            );
            (key, value)
        })
        .collect()
}

/// The `Billing`'s condition `type_`: (status, message).
fn condition(cluster: &Cluster, type_: &str) -> (String, String) {
    let billing = cluster.get_json(&["billing", SAMPLE]);
    let c = billing["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .unwrap_or_else(|| panic!("no {type_} condition: {billing}"));
    (
        c["status"].as_str().unwrap_or_default().to_owned(),
        c["message"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Waits until the `Billing` has observed `generation` and is Ready.
fn wait_ready(cluster: &Cluster, generation: i64) {
    let object = format!("billing/{SAMPLE}");
    cluster.wait(
        &object,
        &format!("jsonpath={{.status.observedGeneration}}={generation}"),
    );
    cluster.wait(&object, "condition=Ready");
}

fn step(started: Instant, what: &str) {
    println!("[{:>6.1?}] {what}", started.elapsed());
}

#[test]
fn billing_service_runs_end_to_end_on_mni_dev() {
    let started = Instant::now();
    step(
        started,
        "scaffold (init, new service billing) and cargo build",
    );
    let project = Project::build();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cluster = Cluster::start(tmp.path());

    step(
        started,
        "kubectl apply -k config/default: CRDs, RBAC, manifests",
    );
    let config = project.path(&format!("{SERVICE_DIR}/operator/config/default"));
    let applied = cluster.kubectl(&["apply", "-k", config.to_str().expect("UTF-8 path")]);
    for expected in [
        "customresourcedefinition.apiextensions.k8s.io/billings.billing.example.com created",
        "customresourcedefinition.apiextensions.k8s.io/billingaccounts.billing.example.com created",
        "serviceaccount/billing-operator-controller-manager created",
        "clusterrole.rbac.authorization.k8s.io/billing-operator-manager-role created",
        "clusterrolebinding.rbac.authorization.k8s.io/billing-operator-manager-rolebinding created",
    ] {
        assert!(
            applied.contains(expected),
            "missing {expected:?}:\n{applied}"
        );
    }

    step(started, "run the operator as its ServiceAccount");
    let operator_kubeconfig = cluster.service_account_kubeconfig(
        "billing-operator-system",
        "billing-operator-controller-manager",
        "operator.kubeconfig",
    );
    let as_operator = |args: &[&str]| {
        let mut all = vec!["--kubeconfig", operator_kubeconfig.to_str().expect("UTF-8")];
        all.extend_from_slice(args);
        cluster.try_kubectl(&all)
    };
    let whoami = as_operator(&["auth", "whoami"]).expect("kubectl auth whoami");
    assert!(
        whoami.contains(
            "system:serviceaccount:billing-operator-system:billing-operator-controller-manager"
        ),
        "{whoami}"
    );
    // RBAC is enforced: what the manager role does not grant is refused.
    let forbidden =
        as_operator(&["get", "secrets"]).expect_err("the operator may not read secrets");
    assert!(forbidden.contains("Forbidden"), "{forbidden}");
    let mut operator = Operator::start(&project, &operator_kubeconfig);

    step(started, "kubectl apply the sample Billing");
    let sample = project.path(&format!(
        "{SERVICE_DIR}/operator/config/samples/billing_v1alpha1_billing.yaml"
    ));
    cluster.kubectl(&["apply", "-f", sample.to_str().expect("UTF-8 path")]);
    let billing = cluster.get_json(&["billing", SAMPLE]);
    let uid = billing["metadata"]["uid"].clone();

    step(started, "every child exists, controlled by the Billing");
    eventually("every child of the Billing", CONVERGE, || {
        let mut args = vec!["get", "--ignore-not-found", "-o", "name"];
        args.extend_from_slice(CHILDREN);
        let found = cluster.try_kubectl(&args)?;
        let count = found.lines().count();
        if count == CHILDREN.len() {
            Ok(())
        } else {
            Err(format!("{count} of {}: {found}", CHILDREN.len()))
        }
    });
    for child in CHILDREN {
        let object = cluster.get_json(&[child]);
        let owners = &object["metadata"]["ownerReferences"];
        let expected = json!([{
            "apiVersion": "billing.example.com/v1alpha1",
            "kind": "Billing",
            "name": SAMPLE,
            "uid": uid,
            "controller": true,
            "blockOwnerDeletion": true,
        }]);
        assert_eq!(owners, &expected, "{child}'s ownerReferences");
    }
    // The backend's Role grants CRUD on BillingAccounts and nothing else.
    let role = cluster.get_json(&["role", "billing-sample-backend"]);
    assert_eq!(
        role["rules"],
        json!([{
            "apiGroups": ["billing.example.com"],
            "resources": ["billingaccounts"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        }])
    );
    // Restricted Pod Security profile on both workloads.
    for workload in ["frontend", "backend"] {
        let deployment = cluster.get_json(&["deployment", &format!("billing-sample-{workload}")]);
        let pod = &deployment["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], json!(true));
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            json!("RuntimeDefault")
        );
        let container = &pod["containers"][0]["securityContext"];
        assert_eq!(container["allowPrivilegeEscalation"], json!(false));
        assert_eq!(container["readOnlyRootFilesystem"], json!(true));
        assert_eq!(container["capabilities"]["drop"], json!(["ALL"]));
    }

    step(
        started,
        "the simulated workloads become available; the Billing is Ready",
    );
    for workload in ["frontend", "backend"] {
        cluster.wait(
            &format!("deployment/billing-sample-{workload}"),
            "condition=Available",
        );
    }
    wait_ready(&cluster, 1);
    let (_, message) = condition(&cluster, "Ready");
    assert!(message.contains("available"), "{message}");
    assert_eq!(condition(&cluster, "Degraded").0, "False");

    step(
        started,
        "scale the frontend in the Billing: its Deployment follows",
    );
    cluster.kubectl(&[
        "patch",
        "billing",
        SAMPLE,
        "--type=merge",
        "-p",
        r#"{"spec":{"frontend":{"replicas":3}}}"#,
    ]);
    cluster.wait(
        "deployment/billing-sample-frontend",
        "jsonpath={.spec.replicas}=3",
    );
    cluster.wait(
        "deployment/billing-sample-frontend",
        "jsonpath={.status.availableReplicas}=3",
    );
    wait_ready(&cluster, 2);
    cluster.wait(
        &format!("billing/{SAMPLE}"),
        "jsonpath={.status.frontend.readyReplicas}=3",
    );

    step(
        started,
        "scale the frontend's Deployment by hand: the operator takes it back",
    );
    cluster.kubectl(&[
        "scale",
        "deployment/billing-sample-frontend",
        "--replicas=1",
    ]);
    cluster.wait(
        "deployment/billing-sample-frontend",
        "jsonpath={.spec.replicas}=3",
    );

    step(
        started,
        "change a backend setting: the ConfigMap follows, the backend rolls (checksum)",
    );
    let checksum = |cluster: &Cluster| {
        cluster.kubectl(&[
            "get",
            "deployment/billing-sample-backend",
            "-o",
            r"jsonpath={.spec.template.metadata.annotations.billing\.example\.com/settings-checksum}",
        ])
    };
    let old_checksum = checksum(&cluster);
    assert!(
        !old_checksum.is_empty(),
        "the backend's template has a checksum"
    );
    cluster.kubectl(&[
        "patch",
        "billing",
        SAMPLE,
        "--type=merge",
        "-p",
        r#"{"spec":{"settings":{"RUST_LOG":"debug"}}}"#,
    ]);
    cluster.wait(
        "configmap/billing-sample-backend-settings",
        "jsonpath={.data.RUST_LOG}=debug",
    );
    wait_ready(&cluster, 3);
    assert_ne!(checksum(&cluster), old_checksum, "the backend rolls");
    let timeout = format!("--timeout={}s", CONVERGE.as_secs());
    cluster.kubectl(&[
        "rollout",
        "status",
        "deployment/billing-sample-backend",
        &timeout,
    ]);
    wait_ready(&cluster, 3);

    step(
        started,
        "the backend crash-loops (simulate.mni.dev/fail): Degraded names it",
    );
    cluster.kubectl(&[
        "annotate",
        "deployment/billing-sample-backend",
        "simulate.mni.dev/fail=true",
    ]);
    cluster.wait(&format!("billing/{SAMPLE}"), "condition=Degraded");
    let (_, degraded) = condition(&cluster, "Degraded");
    assert!(degraded.starts_with("backend: "), "{degraded}");
    assert!(!degraded.contains("frontend"), "{degraded}");
    let (ready, why) = condition(&cluster, "Ready");
    assert_eq!(ready, "False", "{why}");
    assert!(why.contains("backend"), "{why}");

    step(started, "heal the backend: Ready again");
    cluster.kubectl(&[
        "annotate",
        "deployment/billing-sample-backend",
        "simulate.mni.dev/fail-",
    ]);
    cluster.wait(&format!("billing/{SAMPLE}"), "condition=Degraded=false");
    wait_ready(&cluster, 3);

    step(
        started,
        "restart the operator with a change made while it was down",
    );
    cluster.settle();
    let before = snapshot(&cluster);
    assert_eq!(before.len(), CHILDREN.len() + 1, "{before:?}");
    operator.assert_running();
    operator.kill();
    cluster.kubectl(&[
        "patch",
        "billing",
        SAMPLE,
        "--type=merge",
        "-p",
        r#"{"spec":{"backend":{"replicas":2}}}"#,
    ]);
    let mut operator = Operator::start(&project, &operator_kubeconfig);
    wait_ready(&cluster, 4);
    cluster.wait(
        "deployment/billing-sample-backend",
        "jsonpath={.status.availableReplicas}=2",
    );
    wait_ready(&cluster, 4);
    cluster.settle();
    let after = snapshot(&cluster);
    for (key, was) in &before {
        let now = &after[key];
        match key.as_str() {
            // The change: one new generation, and the status that reports it.
            "Deployment/billing-sample-backend" => assert_eq!(
                now.1.as_i64(),
                was.1.as_i64().map(|g| g + 1),
                "{key}: one spec change"
            ),
            "Billing/billing-sample" => {}
            _ => assert_eq!(now, was, "{key} was written though nothing of it changed"),
        }
    }

    step(
        started,
        "restart the operator with nothing to do: no write at all",
    );
    let revision = cluster.settle();
    let before = snapshot(&cluster);
    operator.assert_running();
    operator.kill();
    let mut operator = Operator::start(&project, &operator_kubeconfig);
    let reconciled =
        r#"controller_runtime_reconcile_total{controller="billing-controller",result="success"}"#;
    eventually(
        "the restarted operator to reconcile the Billing",
        CONVERGE,
        || match operator.metric(reconciled) {
            n if n >= 1.0 => Ok(()),
            n => Err(format!("{reconciled} {n}")),
        },
    );
    // The simulated node renews its heartbeat Lease every 10 s: those writes are not the
    // operator's.
    let settled = cluster.settle();
    let written = settled.parse::<u64>().expect("a numeric revision")
        - revision.parse::<u64>().expect("a numeric revision");
    assert_eq!(
        written,
        cluster.node_heartbeats(&revision, &settled),
        "the cluster was written after a restart with nothing to do:\n{}",
        operator.output()
    );
    assert_eq!(snapshot(&cluster), before);
    let errors = r#"controller_runtime_reconcile_errors_total{controller="billing-controller"}"#;
    assert_eq!(operator.metric(errors), 0.0, "{}", operator.output());

    step(
        started,
        "the backend, as its own ServiceAccount, serves BillingAccounts over HTTP",
    );
    let backend_kubeconfig = cluster.service_account_kubeconfig(
        "default",
        "billing-sample-backend",
        "backend.kubeconfig",
    );
    let (mut backend, url) = service_support::start_server(
        &project,
        BACKEND,
        &["--namespace", "default"],
        Some(&backend_kubeconfig),
    );
    let collection = format!("{url}/api/v1/billingaccounts");
    let acme =
        json!({ "name": "acme", "spec": { "displayName": "ACME Inc.", "description": "e2e" } });
    let (status, body) = service_support::http("POST", &collection, Some(&acme));
    assert_eq!(status, 201, "{body}");
    let created: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(created["name"], "acme");
    assert_eq!(created["spec"]["displayName"], "ACME Inc.");
    let (status, body) = service_support::http("POST", &collection, Some(&acme));
    assert_eq!(status, 409, "a second create conflicts: {body}");
    let error: Value = serde_json::from_str(&body).expect("errors are JSON");
    assert_eq!(error["error"]["reason"], "AlreadyExists", "{body}");
    // The API server is the source of truth: kubectl sees what the backend created.
    let display = cluster.kubectl(&[
        "get",
        "billingaccount",
        "acme",
        "-o",
        "jsonpath={.spec.displayName}",
    ]);
    assert_eq!(display, "ACME Inc.");
    // The list shows it with the status the operator's BillingAccount controller sets.
    eventually("acme listed as Ready by the backend", CONVERGE, || {
        let (status, body) = service_support::http("GET", &collection, None);
        let list: Value =
            serde_json::from_str(&body).map_err(|e| format!("{status} {body}: {e}"))?;
        let ready = list["items"].as_array().into_iter().flatten().any(|item| {
            item["name"] == "acme"
                && item["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
        if status == 200 && ready {
            Ok(())
        } else {
            Err(format!("{status} {body}"))
        }
    });
    let item = format!("{collection}/acme");
    let (status, body) = service_support::http("DELETE", &item, None);
    assert_eq!(status, 204, "{body}");
    let (status, body) = service_support::http("GET", &item, None);
    assert_eq!(status, 404, "{body}");
    let (status, body) = service_support::http("GET", &collection, None);
    assert_eq!((status, body.as_str()), (200, r#"{"items":[]}"#));
    backend.assert_running();

    step(
        started,
        "delete the Billing: every child is garbage-collected",
    );
    cluster.kubectl(&["delete", "billing", SAMPLE, "--wait=true", &timeout]);
    eventually("the Billing's children to be collected", CONVERGE, || {
        let mut args = vec!["get", "--ignore-not-found", "-o", "name"];
        args.extend_from_slice(CHILDREN);
        let left = cluster.try_kubectl(&args)?;
        let pods = cluster.try_kubectl(&[
            "get",
            "replicasets,pods",
            "-l",
            "app.kubernetes.io/instance=billing-sample",
            "-o",
            "name",
        ])?;
        if left.trim().is_empty() && pods.trim().is_empty() {
            Ok(())
        } else {
            Err(format!("still there:\n{left}{pods}"))
        }
    });
    // The backend's ServiceAccount went with the installation, and so did its access: the
    // API server no longer accepts its token, and the backend answers with a JSON error.
    let (status, body) = service_support::http("GET", &collection, None);
    assert!(status >= 400, "{status} {body}");
    let error: Value = serde_json::from_str(&body).expect("errors are JSON");
    assert!(error["error"]["message"].is_string(), "{body}");

    operator.assert_running();
    cluster.assert_running();
    backend.terminate();
    step(started, "done");
}
