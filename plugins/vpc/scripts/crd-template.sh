#!/usr/bin/env bash
# Regenerates templates/vpc/v1/operator/config/crd/bases/virtualprivateclouds.yaml.hbs from the
# Rust type the VirtualPrivateCloud template generates. Run it after changing
# templates/vpc/v1/operator/src/api/group_version/virtual_private_cloud.rs.hbs (or mni-core's
# Condition): the generated project's tests/manifests.rs fails until the CRD YAML matches.
#
# It scaffolds the service under an unusual name (`zqx` in `zz.test`), prints its CRDs with the
# operator's `crd` subcommand and turns the names back into template variables.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
out=$root/templates/vpc/v1/operator/config/crd/bases/virtualprivateclouds.yaml.hbs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build -q -p mni-scaffold
mkdir "$work/zqx"
cd "$work/zqx"
"${CARGO_TARGET_DIR:-$root/target}/debug/mni-scaffold" --plugins vpc/v1 init --domain zz.test --mni-path "$root" >/dev/null
"${CARGO_TARGET_DIR:-$root/target}/debug/mni-scaffold" new service zqx >/dev/null
cp "$root/Cargo.lock" .
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target} cargo run -q --offline -p zqx-operator -- crd >crds.yaml

header='# What `{{operator_crate}} crd` prints (tests/manifests.rs checks it); regenerate with
# `cargo run -q -p {{operator_crate}} -- crd` after changing the types under src/api/.'
# The operator prints the service kind, then VirtualPrivateCloud, separated by `---`.
awk -v dir="$work" '/^---$/ { n++; next } { print > (dir "/crd" n ".yaml") }' crds.yaml
{
  printf '%s\n' "$header"
  sed -e 's/zqx\.zz\.test/{{full_group}}/g' "$work/crd1.yaml"
} >"$out"
if grep -qi zqx "$out"; then
  echo "a name was left in $out:" >&2
  grep -ni zqx "$out" >&2
  exit 1
fi
echo "regenerated $out"
