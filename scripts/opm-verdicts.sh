#!/usr/bin/env bash
# Opt-in: builds opm (scripts/opm-reference.sh) and checks that `mni-scaffold olm validate
# --opm-rules-only` gives opm's verdict on the reference catalog and on the broken catalogs of
# plugins/olm/tests/catalogs/, writing the comparison to plugins/olm/tests/opm-verdicts.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(scripts/opm-reference.sh | tail -n 1)"
MNI_OPM="$bin/opm" MNI_OPM_REPORT="$PWD/plugins/olm/tests/opm-verdicts.md" \
  cargo test -p mni-scaffold --test cli olm::opm_gives_the_same_verdicts -- --nocapture
