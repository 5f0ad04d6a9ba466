#!/usr/bin/env bash
# Builds every golden project under tests/golden/ (what mni-scaffold generates; see
# tests/src/lib.rs) and runs its own tests, offline, with the workspace's lock file and target
# directory so dependencies compile once. Also checks the generated Rust is rustfmt-clean.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
for dir in tests/golden/*/; do
  dir=${dir%/}
  echo "== $dir"
  find "$dir" -name '*.rs' -not -path '*/target/*' -print0 | xargs -0 rustfmt --check --edition 2024
  cp Cargo.lock "$dir/Cargo.lock"
  CARGO_TARGET_DIR="$root/target" cargo test --offline --workspace --manifest-path "$dir/Cargo.toml"
done
