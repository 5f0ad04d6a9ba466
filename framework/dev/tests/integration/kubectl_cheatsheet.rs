//! The kubectl Quick Reference ("cheat sheet"), run against `mni-dev up` as a user would type
//! it: every command of it that needs no kubelet (no logs, exec, attach, cp, port-forward, top),
//! in the order the page shows them, through `bash` so pipes and quoting are the user's.
//! Failures are collected, so one run lists every command that does not work.

use crate::support;

use std::path::Path;
use std::process::Command;

use support::dev::Dev;

/// One cheat-sheet line: the shell command and text its output must contain ("" when success
/// is all it shows).
struct Step {
    command: &'static str,
    expect: &'static str,
}

const fn step(command: &'static str, expect: &'static str) -> Step {
    Step { command, expect }
}

/// Manifests the commands read, written into the working directory first.
const FILES: &[(&str, &str)] = &[
    (
        "my-manifest.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: frontend\n  labels: {app: frontend}\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: frontend}\n  template:\n    metadata:\n      labels: {app: frontend}\n    spec:\n      containers:\n      - name: www\n        image: nginx:1.27\n        livenessProbe:\n          httpGet: {path: /, port: 80}\n",
    ),
    (
        "dir/cm-a.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-a\n  labels: {name: myLabel}\ndata:\n  ca.crt: PEM\n",
    ),
    (
        "dir/svc-a.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-a\n  labels: {name: myLabel}\nspec:\n  selector: {app: a}\n  ports:\n  - port: 80\n",
    ),
    (
        "foo.yaml",
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: foo\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: foo}\n  template:\n    metadata:\n      labels: {app: foo}\n    spec:\n      containers:\n      - name: foo\n        image: busybox:1.36\n",
    ),
    (
        "pod.json",
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "valid-pod", "labels": {"name": "myLabel"}}, "spec": {"containers": [{"name": "kubernetes-serve-hostname", "image": "registry.k8s.io/serve_hostname"}]}}"#,
    ),
];

/// The Quick Reference, section by section (kubernetes.io/docs/reference/kubectl/quick-reference).
const STEPS: &[Step] = &[
    // Kubectl context and configuration
    step("kubectl config view", "current-context"),
    step("kubectl config view -o jsonpath='{.users[].name}'", ""),
    step("kubectl config get-contexts", "CURRENT"),
    step("kubectl config current-context", ""),
    step(
        "kubectl config set-context --current --namespace=default",
        "Context",
    ),
    step("kubectl cluster-info", "running at"),
    step("kubectl version", "Server Version"),
    step("kubectl api-versions", "batch/v1"),
    // Creating objects
    step(
        "kubectl apply -f ./my-manifest.yaml",
        "deployment.apps/frontend created",
    ),
    step("kubectl apply -f ./dir", "configmap/cm-a created"),
    step(
        "kubectl create deployment nginx --image=nginx",
        "deployment.apps/nginx created",
    ),
    step("kubectl explain pods", "KIND:"),
    step(
        "cat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: Pod\nmetadata:\n  name: busybox-sleep\nspec:\n  containers:\n  - name: busybox\n    image: busybox:1.28\n    args:\n    - sleep\n    - \"1000000\"\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: busybox-sleep-less\nspec:\n  containers:\n  - name: busybox\n    image: busybox:1.28\n    args:\n    - sleep\n    - \"1000\"\nEOF",
        "pod/busybox-sleep-less created",
    ),
    step(
        "cat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: Secret\nmetadata:\n  name: mysecret\ntype: Opaque\ndata:\n  password: $(echo -n \"s33msi4\" | base64 -w0)\n  username: $(echo -n \"jane\" | base64 -w0)\nEOF",
        "secret/mysecret created",
    ),
    step("kubectl create -f ./pod.json", "pod/valid-pod created"),
    step(
        "kubectl create job hello --image=busybox:1.28 -- echo \"Hello World\"",
        "job.batch/hello created",
    ),
    step(
        "kubectl create cronjob hello --image=busybox:1.28 --schedule=\"*/1 * * * *\" -- echo \"Hello World\"",
        "cronjob.batch/hello created",
    ),
    step(
        "kubectl create configmap myconfig --from-literal=ca.crt=PEM",
        "configmap/myconfig created",
    ),
    step(
        "kubectl create secret docker-registry my-secret --docker-server=r.example.com --docker-username=u --docker-password=p",
        "secret/my-secret created",
    ),
    step(
        "kubectl create namespace mynamespace",
        "namespace/mynamespace created",
    ),
    // Viewing and finding resources
    step("kubectl get services", "kubernetes"),
    step(
        "kubectl get endpointslices -l kubernetes.io/service-name=kubernetes -o jsonpath='{.items[0].ports[0].name}'",
        "https",
    ),
    step("kubectl get pods --all-namespaces", "NAMESPACE"),
    step("kubectl get pods -o wide", "busybox-sleep"),
    step("kubectl get deployment nginx", "nginx"),
    step("kubectl get pods", "valid-pod"),
    step(
        "kubectl get pod valid-pod -o yaml",
        "kubernetes-serve-hostname",
    ),
    step("kubectl describe nodes", "Name:"),
    step("kubectl describe pods valid-pod", "Containers:"),
    step("kubectl get services --sort-by=.metadata.name", "svc-a"),
    step(
        "kubectl get pods --sort-by='.status.containerStatuses[0].restartCount'",
        "valid-pod",
    ),
    step("kubectl get pv --sort-by=.spec.capacity.storage", ""),
    step(
        "kubectl get pods --selector=name=myLabel -o jsonpath='{.items[*].metadata.labels.name}'",
        "myLabel",
    ),
    step(
        "kubectl get configmap myconfig -o jsonpath='{.data.ca\\.crt}'",
        "PEM",
    ),
    step(
        "kubectl get secret my-secret -o jsonpath='{.data.\\.dockerconfigjson}' | base64 --decode",
        "r.example.com",
    ),
    step(
        "kubectl get node --selector='!node-role.kubernetes.io/control-plane'",
        "",
    ),
    step("kubectl get pods --field-selector=status.phase=Running", ""),
    step(
        "kubectl get nodes -o jsonpath='{.items[*].status.addresses[?(@.type==\"InternalIP\")].address}'",
        "",
    ),
    step("kubectl get pods --show-labels", "name=myLabel"),
    step(
        "JSONPATH='{range .items[*]}{@.metadata.name}:{range @.status.conditions[*]}{@.type}={@.status};{end}{end}' && kubectl get nodes -o jsonpath=\"$JSONPATH\" | grep \"Ready=True\"",
        "Ready=True",
    ),
    step(
        "kubectl get secret my-secret -o go-template='{{range $k,$v := .data}}{{\"### \"}}{{$k}}{{\"\\n\"}}{{$v|base64decode}}{{\"\\n\\n\"}}{{end}}'",
        "### .dockerconfigjson",
    ),
    step(
        "kubectl get pods -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)[\"items\"]))'",
        "",
    ),
    step(
        "kubectl get events --sort-by=.metadata.creationTimestamp",
        "",
    ),
    step("kubectl events --types=Warning", ""),
    step("kubectl diff -f ./my-manifest.yaml; test $? -le 1", ""),
    step(
        "kubectl get nodes -o json | python3 -c 'import json,sys; [print(n[\"metadata\"][\"name\"]) for n in json.load(sys.stdin)[\"items\"]]'",
        "",
    ),
    step(
        "kubectl get pods -o custom-columns='NAME:.metadata.name,IMAGE:.spec.containers[*].image'",
        "IMAGE",
    ),
    step(
        "kubectl get pods --all-namespaces -o jsonpath='{range .items[*].status.initContainerStatuses[*]}{.containerID}{\"\\n\"}{end}'",
        "",
    ),
    step(
        "kubectl get cm --all-namespaces -o custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name",
        "myconfig",
    ),
    // Updating resources
    step(
        "kubectl set image deployment/frontend www=nginx:1.28",
        "image updated",
    ),
    step("kubectl rollout history deployment/frontend", "REVISION"),
    step("kubectl rollout undo deployment/frontend", "rolled back"),
    step(
        "kubectl rollout undo deployment/frontend --to-revision=2",
        "rolled back",
    ),
    step(
        "kubectl rollout status -w deployment/frontend --timeout=120s",
        "successfully rolled out",
    ),
    step("kubectl rollout restart deployment/frontend", "restarted"),
    step("cat pod.json | kubectl replace --force -f -", "replaced"),
    step(
        "kubectl expose deployment nginx --port=80 --target-port=8000",
        "service/nginx exposed",
    ),
    step(
        "kubectl get pod valid-pod -o yaml | sed 's/\\(image: registry.k8s.io\\/serve_hostname\\).*$/\\1:v4/' | kubectl replace -f -",
        "replaced",
    ),
    step("kubectl label pods valid-pod new-label=awesome", "labeled"),
    step("kubectl label pods valid-pod new-label-", "unlabeled"),
    step(
        "kubectl label pods valid-pod new-label=new-value --overwrite",
        "labeled",
    ),
    step(
        "kubectl annotate pods valid-pod icon-url=http://goo.gl/XXBTWq",
        "annotated",
    ),
    step("kubectl annotate pods valid-pod icon-url-", "annotated"),
    step(
        "kubectl autoscale deployment frontend --min=2 --max=10",
        "autoscaled",
    ),
    // Patching resources
    step(
        "kubectl patch pod valid-pod -p '{\"spec\":{\"containers\":[{\"name\":\"kubernetes-serve-hostname\",\"image\":\"new-image\"}]}}'",
        "patched",
    ),
    step(
        "kubectl patch pod valid-pod --type='json' -p='[{\"op\": \"replace\", \"path\": \"/spec/containers/0/image\", \"value\":\"newer-image\"}]'",
        "patched",
    ),
    step(
        "kubectl patch deployment frontend --type json -p='[{\"op\": \"remove\", \"path\": \"/spec/template/spec/containers/0/livenessProbe\"}]'",
        "patched",
    ),
    step(
        "kubectl patch sa default --type='json' -p='[{\"op\": \"add\", \"path\": \"/secrets\", \"value\": [{\"name\": \"whatever\"}]}]'",
        "patched",
    ),
    step(
        "kubectl patch deployment nginx --subresource='scale' --type='merge' -p '{\"spec\":{\"replicas\":2}}'",
        "patched",
    ),
    // Editing resources
    step(
        "KUBE_EDITOR=\"sed -i s/port:\\ 80/port:\\ 8080/\" kubectl edit svc/svc-a",
        "edited",
    ),
    // Scaling resources
    step(
        "kubectl scale --replicas=3 rs/foo || (kubectl apply -f foo.yaml && kubectl scale --replicas=3 rs/foo)",
        "scaled",
    ),
    step("kubectl scale --replicas=2 -f foo.yaml", "scaled"),
    step(
        "kubectl scale --current-replicas=2 --replicas=3 deployment/nginx",
        "scaled",
    ),
    step(
        "kubectl scale --replicas=5 deployment/nginx deployment/frontend",
        "scaled",
    ),
    // Deleting resources
    step("kubectl delete -f ./pod.json", "deleted"),
    step("kubectl delete pod busybox-sleep --now", "deleted"),
    step(
        "kubectl run baz --image=nginx && kubectl run foo --image=nginx && kubectl create service clusterip baz --tcp=80 && kubectl create service clusterip foo --tcp=80",
        "service/foo created",
    ),
    step(
        "kubectl delete pod,service baz foo",
        "service \"foo\" deleted",
    ),
    step("kubectl delete pods,services -l name=myLabel", ""),
    step("kubectl -n mynamespace delete pod,svc --all", ""),
    step(
        "kubectl get pods --no-headers=true | awk '/busybox/{print $1}' | xargs -r kubectl delete pod",
        "",
    ),
    // Interacting with nodes and cluster
    step(
        "kubectl cordon $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')",
        "cordoned",
    ),
    step(
        "kubectl drain $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}') --ignore-daemonsets --delete-emptydir-data --force --timeout=120s",
        "drained",
    ),
    step(
        "kubectl uncordon $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')",
        "uncordoned",
    ),
    step(
        "kubectl taint nodes $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}') dedicated=special-user:NoSchedule",
        "tainted",
    ),
    step(
        "kubectl taint nodes $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}') dedicated-",
        "untainted",
    ),
    step(
        "kubectl auth can-i create deployments --namespace default",
        "yes",
    ),
    step(
        "kubectl wait --for=condition=Available deployment/nginx --timeout=120s",
        "condition met",
    ),
    step(
        "kubectl patch node $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}') -p '{\"spec\":{\"unschedulable\":true}}'",
        "patched",
    ),
    step(
        "kubectl uncordon $(kubectl get nodes -o jsonpath='{.items[0].metadata.name}')",
        "uncordoned",
    ),
    // Resource types
    step("kubectl api-resources", "deployments"),
    step("kubectl api-resources --namespaced=true", "pods"),
    step("kubectl api-resources --namespaced=false", "nodes"),
    step("kubectl api-resources -o name", "pods"),
    step("kubectl api-resources -o wide", "VERBS"),
    step("kubectl api-resources --verbs=list,get", "pods"),
    step("kubectl api-resources --api-group=apps", "deployments"),
    // Pruning (apply --prune with an allowlist)
    step(
        "kubectl apply --prune -l name=myLabel --prune-allowlist=core/v1/ConfigMap -f ./dir",
        "configmap/cm-a",
    ),
    step(
        "rm dir/cm-a.yaml && kubectl apply --prune -l name=myLabel --prune-allowlist=core/v1/ConfigMap -f ./dir",
        "configmap/cm-a pruned",
    ),
];

fn run(dev_dir: &Path, work: &Path, command: &str) -> (bool, String, String) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -o pipefail\n{command}"))
        .current_dir(work)
        .env("KUBECONFIG", dev_dir.join("kubeconfig"))
        .env("KUBECACHEDIR", dev_dir.join("cache"))
        .output()
        .expect("bash runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_kubelet_free_command_of_the_kubectl_quick_reference_works() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dev = Dev::up(tmp.path());
    let work = tmp.path().join("work");
    for (path, text) in FILES {
        let path = work.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let mut failures = Vec::new();
    for step in STEPS {
        let (ok, stdout, stderr) = run(tmp.path(), &work, step.command);
        if !ok || !stdout.contains(step.expect) {
            failures.push(format!(
                "$ {}\n  exit ok: {ok}; expected {:?} in stdout\n  stdout: {}\n  stderr: {}",
                step.command,
                step.expect,
                stdout.trim(),
                stderr.trim()
            ));
        }
    }
    drop(dev);
    assert!(
        failures.is_empty(),
        "{} of {} commands failed:\n{}",
        failures.len(),
        STEPS.len(),
        failures.join("\n")
    );
}
