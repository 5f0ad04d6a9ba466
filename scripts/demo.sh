#!/usr/bin/env bash
# The main job on the embedded default: start mni-dev, drive it with kubectl, stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p mni-apiserver --bin mni-dev
data=.mni/dev
mkdir -p "$data"
export KUBECONFIG=$PWD/$data/kubeconfig
log=$(mktemp)
"${CARGO_TARGET_DIR:-target}/debug/mni-dev" up --listen 127.0.0.1:0 --data-dir "$data" --kubeconfig "$KUBECONFIG" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q ready "$log" && break; sleep 0.1; done
if ! grep -q ready "$log"; then
  echo "mni-dev did not become ready:" >&2
  cat "$log" >&2
  exit 1
fi
cat "$log"
set -x
kubectl get namespaces
kubectl apply -f book/src/examples/crontab-crd.yaml
kubectl wait --for=condition=Established crd/crontabs.stable.example.com --timeout=30s
kubectl apply -f book/src/examples/crontab.yaml
kubectl get crontabs
kubectl delete -f book/src/examples/crontab.yaml
kubectl create deployment demo-web --image=nginx:1.27 --replicas=2
kubectl rollout status deployment/demo-web --timeout=60s
kubectl get deployments,pods
kubectl delete deployment demo-web
