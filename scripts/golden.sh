#!/usr/bin/env bash
# Builds every golden project under tests/golden/ and every reference service under services/
# (what mni-scaffold generates; see tests/src/lib.rs) and runs its own tests, offline, with the
# workspace's lock file and target directory so dependencies compile once. Also checks the
# generated Rust is rustfmt-clean. Pass directories to check only those.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ "$#" -gt 0 ]; then
  dirs=("$@")
else
  dirs=(tests/golden/*/ services/*/)
fi
for dir in "${dirs[@]}"; do
  dir=${dir%/}
  [ -f "$dir/Cargo.toml" ] || continue
  echo "== $dir"
  find "$dir" -name '*.rs' -not -path '*/target/*' -print0 | xargs -0 rustfmt --check --edition 2024
  cp Cargo.lock "$dir/Cargo.lock"
  CARGO_TARGET_DIR="$root/target" cargo test --offline --workspace --manifest-path "$dir/Cargo.toml"
done
