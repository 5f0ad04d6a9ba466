#!/usr/bin/env bash
# Regenerates templates/service/v1/operator/config/crd/bases/{service,domain}.yaml.hbs from the
# Rust types the other templates generate. Run it after changing a type template under
# templates/service/v1/operator/src/api/ (or mni-core's WorkloadSpec or Condition): the
# generated project's tests/manifests.rs fails until the CRD YAML matches the code again.
#
# It scaffolds a service with an unusual name (`zqx` in `zz.test`), prints its CRDs with the
# operator's `crd` subcommand and turns every name back into its template variable.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
out=$root/templates/service/v1/operator/config/crd/bases
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build -q -p mni-scaffold
mkdir "$work/zqx"
cd "$work/zqx"
"$root/target/debug/mni-scaffold" init --domain zz.test >/dev/null
"$root/target/debug/mni-scaffold" new service zqx >/dev/null
cp "$root/Cargo.lock" .
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target} cargo run -q --offline -p zqx-operator -- crd >crds.yaml

header='# What `{{operator_crate}} crd` prints (tests/manifests.rs checks it); regenerate with
# `cargo run -q -p {{operator_crate}} -- crd` after changing the types under src/api/.'
templatize() {
  sed -e 's/zqxaccounts\.zqx\.zz\.test/{{domain_plural}}.{{full_group}}/g' \
    -e 's/zqxes\.zqx\.zz\.test/{{resource_plural}}.{{full_group}}/g' \
    -e 's/zqx\.zz\.test/{{full_group}}/g' \
    -e 's/zqx-backend/{{backend_crate}}/g' \
    -e 's/zqx-frontend/{{frontend_crate}}/g' \
    -e 's/^\(    kind\|        title\): ZqxAccount$/\1: "{{domain_kind}}"/' \
    -e 's/^\(    kind\|        title\): Zqx$/\1: "{{kind}}"/' \
    -e 's/^    singular: zqxaccount$/    singular: "{{domain_kind_lower}}"/' \
    -e 's/^    singular: zqx$/    singular: "{{kind_lower}}"/' \
    -e 's/ZqxAccount/{{domain_kind}}/g' \
    -e 's/zqxaccounts/{{domain_plural}}/g' \
    -e 's/zqxes/{{resource_plural}}/g' \
    -e 's/Zqx/{{kind}}/g' \
    -e 's/the zqx service/the {{name}} service/g'
}
# The operator prints the service kind first, then the domain kind, separated by `---`.
awk -v dir="$work" '/^---$/ { n++; next } { print > (dir "/crd" n ".yaml") }' crds.yaml
for pair in "crd.yaml service" "crd1.yaml domain"; do
  set -- $pair
  { printf '%s\n' "$header"; templatize <"$work/$1"; } >"$out/$2.yaml.hbs"
  if grep -qi zqx "$out/$2.yaml.hbs"; then
    echo "a name was left in $out/$2.yaml.hbs:" >&2
    grep -ni zqx "$out/$2.yaml.hbs" >&2
    exit 1
  fi
done
echo "regenerated $out/service.yaml.hbs and $out/domain.yaml.hbs"
