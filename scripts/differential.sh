#!/usr/bin/env bash
# The differential suite: a real kube-apiserver (of the Kubernetes version mni-dev reports, with
# etcd) and mni-dev side by side, sent the same requests — the HTTP table, watches, discovery and
# kubectl's commands — with the answers compared after normalising what legitimately differs.
# Builds the reference first (scripts/kube-reference.sh: about 23 minutes on 2 busy cores the first
# time, nothing later), then mni-dev and the suite. Prints the number of requests compared, the
# number of differences and the list; the full report goes to .mni/kube-reference/differential.md
# (or the path given as the first argument). Not part of scripts/test.sh, for the build's cost.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(scripts/kube-reference.sh | tail -n 1)"
cargo build --quiet -p mni-dev -p mni-kube-reference
TARGET="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$TARGET/debug/kube-differential" --bin-dir "$BIN" --mni-dev "$TARGET/debug/mni-dev" \
  --report "${1:-.mni/kube-reference/differential.md}"
