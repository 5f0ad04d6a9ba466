#!/usr/bin/env bash
# Runs operators' API-level tests against a real kube-apiserver instead of the embedded one: the
# VPC reference service's operator and backend, and the generated service of the multi-api golden
# project (service/v1's operator and backend, plus the project's root operator). Each test's
# TestEnv starts its own kube-apiserver and etcd (MNI_TESTKIT_KUBE_APISERVER, as envtest starts
# them); the simulators (workloads, Kube-OVN) run against it as they run against mni-dev. Builds
# the reference first (scripts/kube-reference.sh: about 23 minutes on 2 busy cores the first time,
# nothing later). Not part of scripts/test.sh, for that build's cost; run it before resolving
# issue 17. Prints one line per crate and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
BIN="$(scripts/kube-reference.sh | tail -n 1)"
export MNI_TESTKIT_KUBE_APISERVER="$BIN"
# Each test starts a kube-apiserver (about 1 GB of memory at start-up): two at a time.
threads="${MNI_REFERENCE_TEST_THREADS:-2}"
status=0
for spec in \
  services/vpc:network-operator \
  services/vpc:network-backend \
  tests/golden/multi-api:fleet \
  tests/golden/multi-api:ledger-operator \
  tests/golden/multi-api:ledger-backend; do
  dir=${spec%%:*}
  package=${spec#*:}
  cp Cargo.lock "$dir/Cargo.lock"
  # As in scripts/golden.sh: committed sources are older than builds of same-named crates.
  find "$dir" -path "$dir/target" -prune -o -type f -not -name Cargo.lock -print0 | xargs -0 touch
  echo "== $package ($dir) against kube-apiserver $("$BIN/kube-apiserver" --version 2>/dev/null | awk '{print $2}')"
  if ! CARGO_TARGET_DIR="$root/target" cargo test --offline --manifest-path "$dir/Cargo.toml" \
    -p "$package" --no-fail-fast -- --test-threads="$threads"; then
    status=1
  fi
done
exit "$status"
