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
  # Cargo identifies a workspace member by its name and its path relative to the workspace, so
  # another project with a crate of the same name at the same relative path (the book's
  # chapters build such projects into the same target directory) looks like this one, and
  # committed sources are older than that build: touch them, so that Cargo rebuilds them.
  find "$dir" -path "$dir/target" -prune -o -type f -not -name Cargo.lock -print0 | xargs -0 touch
  CARGO_TARGET_DIR="$root/target" cargo test --offline --workspace --manifest-path "$dir/Cargo.toml"
done
