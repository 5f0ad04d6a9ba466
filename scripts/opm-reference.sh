#!/usr/bin/env bash
# Builds the reference catalog validator of the OLM verdict comparison: `opm` from
# operator-registry, pinned by the build module framework/tools/opm-reference (Go, from the Go
# module proxy). The binary goes to .mni/opm-reference/bin (or $MNI_OPM_REFERENCE_DIR/bin); a
# second run that finds it built from the same go.mod/go.sum does nothing. Prints the directory of
# the binary on its last line. Then run the comparison with
#   scripts/opm-verdicts.sh   (or: MNI_OPM=<dir>/opm cargo test -p mni-scaffold --test cli olm::opm)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
MODULE="$ROOT/framework/tools/opm-reference"
DIR="${MNI_OPM_REFERENCE_DIR:-$ROOT/.mni/opm-reference}"
BIN="$DIR/bin"
export GOPATH="${GOPATH:-$DIR/go}"
export GOCACHE="${GOCACHE:-$DIR/go/cache}"
export GOFLAGS="-mod=mod"
# Without cgo: containers/image verifies signatures with Go openpgp (the build tag below)
# instead of gpgme, and the deprecated SQLite index formats are unavailable (validate does not
# use them).
export CGO_ENABLED="${CGO_ENABLED:-0}"

if ! command -v go >/dev/null 2>&1; then
  echo "opm-reference: Go is not installed (opm is built from Go modules)" >&2
  exit 1
fi
stamp="$(cat "$MODULE/go.mod" "$MODULE/go.sum" | sha256sum | cut -d' ' -f1)"
if [[ -x "$BIN/opm" && "$(cat "$BIN/.stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "opm-reference: already built" >&2
  echo "$BIN"
  exit 0
fi
mkdir -p "$BIN"
rm -f "$BIN/.stamp"
start=$SECONDS
cd "$MODULE"
echo "opm-reference: building opm (several minutes the first time)" >&2
nice -n 10 go build -trimpath -tags "json1 containers_image_openpgp" -ldflags "-s -w" -o "$BIN/opm" \
  github.com/operator-framework/operator-registry/cmd/opm
stamp="$(cat "$MODULE/go.mod" "$MODULE/go.sum" | sha256sum | cut -d' ' -f1)"
echo "$stamp" > "$BIN/.stamp"
echo "opm-reference: built in $((SECONDS - start)) s" >&2
echo "$BIN"
