#!/usr/bin/env bash
# Builds the reference control plane of the differential suite: a real kube-apiserver of the
# Kubernetes version mni-dev reports and a current etcd, from the pinned build module
# framework/tools/kube-reference (Go, from the Go module proxy). The binaries go to
# .mni/kube-reference/bin (or $MNI_KUBE_REFERENCE_DIR/bin); a second run that finds them built
# from the same go.mod/go.sum does nothing. Prints the directory of the binaries on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
MODULE="$ROOT/framework/tools/kube-reference"
DIR="${MNI_KUBE_REFERENCE_DIR:-$ROOT/.mni/kube-reference}"
BIN="$DIR/bin"
# The Go caches live beside the binaries unless the caller chose its own.
export GOPATH="${GOPATH:-$DIR/go}"
export GOCACHE="${GOCACHE:-$DIR/go/cache}"
export GOFLAGS="-mod=mod"
export CGO_ENABLED=0

if ! command -v go >/dev/null 2>&1; then
  echo "kube-reference: Go is not installed (the reference is built from Go modules)" >&2
  exit 1
fi
stamp="$(cat "$MODULE/go.mod" "$MODULE/go.sum" "$MODULE/etcd/main.go" | sha256sum | cut -d' ' -f1)"
if [[ -x "$BIN/kube-apiserver" && -x "$BIN/etcd" && "$(cat "$BIN/.stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "kube-reference: already built"
  echo "$BIN"
  exit 0
fi
mkdir -p "$BIN"
rm -f "$BIN/.stamp"
start=$SECONDS
cd "$MODULE"
echo "kube-reference: building kube-apiserver and etcd (several minutes the first time)" >&2
nice -n 10 go build -trimpath -ldflags "-s -w \
  -X k8s.io/component-base/version.gitVersion=v1.37.2 \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=37 \
  -X k8s.io/client-go/pkg/version.gitVersion=v1.37.2" \
  -o "$BIN/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
nice -n 10 go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" ./etcd
echo "$stamp" > "$BIN/.stamp"
echo "kube-reference: built in $((SECONDS - start)) s" >&2
echo "$BIN"
