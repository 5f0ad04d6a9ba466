#!/usr/bin/env bash
# The developer portal: the book (book/), the rustdoc API reference of the public crates and the
# plugin catalog, as one static site.
#
#   scripts/book.sh          builds it into $MNI_BOOK_DIR (default: target/book, under
#                            $CARGO_TARGET_DIR when that is set) and prints the directory
#   scripts/book.sh serve    builds it, then serves it on http://127.0.0.1:${PORT:-3000}/
#
# mdBook is installed from crates.io once (scripts/mdbook.sh). The API reference is `cargo doc`
# of the runtime's crates, the plugin contract and the plugin SDK, copied to the site's api/
# directory, where book/src/api.md links to it; book/catalog.py, an mdBook preprocessor, writes
# the plugin catalog's table at build time. tests/tests/portal.rs checks the site's links and
# drives it in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
command="${1:-build}"
case "$command" in
  build | serve) ;;
  *)
    echo "usage: scripts/book.sh [build|serve]" >&2
    exit 2
    ;;
esac
mdbook="$(scripts/mdbook.sh)"
target="${CARGO_TARGET_DIR:-$PWD/target}"
site="${MNI_BOOK_DIR:-$target/book}"
case "$site" in
  /*) ;;
  *) site="$PWD/$site" ;;
esac
# The public crates: the operator runtime (framework/runtime/*), the plugin contract and the SDK.
packages=()
for crate in mni-operator mni-core mni-web mni-testkit mni-plugin mni-plugin-sdk; do
  packages+=(-p "$crate")
done
cargo doc --no-deps --quiet "${packages[@]}" >&2
rm -rf "$site"
"$mdbook" build book --dest-dir "$site" >&2
# The whole doc directory: rustdoc links between the crates it documented there, and to its
# shared files (static.files/, src/, search index) next to them.
cp -R "$target/doc" "$site/api"
echo "$site"
if [ "$command" = serve ]; then
  port="${PORT:-3000}"
  echo "serving the developer portal on http://127.0.0.1:$port/ (Ctrl-C stops)" >&2
  exec python3 -m http.server --bind 127.0.0.1 --directory "$site" "$port"
fi
