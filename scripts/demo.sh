#!/usr/bin/env bash
# The main job on the embedded default: scaffold a service with mni-scaffold and watch it become
# Ready on the embedded control plane (mni-dev), driven with kubectl.
#
#   1. build mni-scaffold and mni-dev;
#   2. scaffold a project with one service, `billing` (operator + backend + frontend), into
#      .mni/demo/project;
#   3. build the billing operator (sharing this workspace's target directory and lock file);
#   4. start mni-dev, install the service's CRDs and least-privilege RBAC
#      (`kubectl apply -k .../config/default`);
#   5. run the operator as its own ServiceAccount (a token from `kubectl create token`), create a
#      `Billing` installation and wait until it is Ready: frontend and backend Deployments
#      available (the workload simulator plays the kubelet), Services, ConfigMap, NetworkPolicy.
#
# On 2 cores the first run takes about 5 minutes, nearly all of it compiling; later runs take
# seconds. Set MNI_DEMO_DIR to scaffold somewhere else.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${MNI_DEMO_DIR:-$root/.mni/demo}
target=${CARGO_TARGET_DIR:-$root/target}
step() { printf '\n==> %s\n' "$*"; }

step "Building mni-scaffold and mni-dev"
# --workspace: features resolved for the whole workspace, as the test suite's build resolves
# them (tests/Cargo.toml keeps the two equal), so after the tests nothing is rebuilt here.
cargo build --workspace --bin mni-scaffold --bin mni-dev
export PATH=$target/debug:$PATH

step "Scaffolding a project with a service: mni-scaffold init, mni-scaffold new service billing"
rm -rf "$work"
mkdir -p "$work/project"
cd "$work/project"
mni-scaffold init --domain example.com --project-name demo | tail -n 1
mni-scaffold new service billing | tail -n 1
cp "$root/Cargo.lock" Cargo.lock

step "Building the billing operator"
CARGO_TARGET_DIR=$target cargo build -p billing-operator

step "Starting the embedded control plane"
export KUBECONFIG=$work/kubeconfig
mni-dev up --listen 127.0.0.1:0 --data-dir "$work/dev" --kubeconfig "$KUBECONFIG" >"$work/mni-dev.log" 2>&1 &
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q ready "$work/mni-dev.log" && break; sleep 0.1; done
if ! grep -q ready "$work/mni-dev.log"; then
  echo "mni-dev did not become ready:" >&2
  cat "$work/mni-dev.log" >&2
  exit 1
fi
cat "$work/mni-dev.log"

step "Installing the service's CRDs, RBAC and manifests"
kubectl apply -k services/billing/operator/config/default

step "Running the operator as its ServiceAccount billing-operator-system/billing-operator-controller-manager"
token=$(kubectl -n billing-operator-system create token billing-operator-controller-manager --duration=1h)
cp "$KUBECONFIG" "$work/operator.kubeconfig"
kubectl --kubeconfig "$work/operator.kubeconfig" config set-credentials operator --token="$token" >/dev/null
kubectl --kubeconfig "$work/operator.kubeconfig" config set-context --current --user=operator >/dev/null
KUBECONFIG=$work/operator.kubeconfig "$target/debug/billing-operator" \
  --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 >"$work/operator.log" 2>&1 &
pids+=($!)

step "Creating a Billing installation and waiting until it is Ready"
kubectl apply -f services/billing/operator/config/samples/billing_v1alpha1_billing.yaml
if ! kubectl wait billing/billing-sample --for=condition=Ready --timeout=120s; then
  echo "the Billing did not become Ready; operator log:" >&2
  cat "$work/operator.log" >&2
  exit 1
fi
kubectl get billings
kubectl get deployments,services,configmaps,networkpolicies,serviceaccounts,roles,rolebindings \
  -l app.kubernetes.io/instance=billing-sample
kubectl get billing billing-sample -o jsonpath='{range .status.conditions[*]}{.type}={.status} ({.reason}): {.message}{"\n"}{end}'

step "Done: the billing service is Ready. The project is in $work/project."
