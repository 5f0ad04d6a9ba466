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
# The public crates: the operator runtime (framework/runtime/*, with mni-redfish, whose test
# harness mni-testkit re-exports), the plugin contract and the plugin SDK.
# In rounds: rustdoc links to another crate's pages only if they exist when it runs, and cargo
# doc --no-deps documents the crates of one run in any order, so a crate comes after those it
# re-exports or links to (mni-core before mni-operator, mni-redfish before mni-testkit,
# mni-plugin before the SDK). The `testing` features (the test harnesses of mni-redfish and
# mni-web) are documented too.
cargo doc --no-deps --quiet -p mni-core -p mni-plugin >&2
cargo doc --no-deps --quiet -p mni-redfish --features testing >&2
cargo doc --no-deps --quiet -p mni-operator >&2
cargo doc --no-deps --quiet -p mni-web --features testing >&2
cargo doc --no-deps --quiet -p mni-testkit -p mni-plugin-sdk >&2
rm -rf "$site"
"$mdbook" build book --dest-dir "$site" >&2
# The whole doc directory: rustdoc links between the crates it documented there, and to its
# shared files (static.files/, src/, search index) next to them.
cp -R "$target/doc" "$site/api"
# rustdoc makes no index page for several crates, yet its help and settings pages link to one.
{
  echo '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>API reference</title></head><body>'
  echo '<h1>API reference</h1><ul>'
  for dir in "$site"/api/*/; do
    crate="$(basename "$dir")"
    if [ -f "$dir/index.html" ] && [ "$crate" != src ]; then
      echo "<li><a href=\"$crate/index.html\">$crate</a></li>"
    fi
  done
  echo '</ul><p><a href="../api.html">Back to the developer portal</a></p></body></html>'
} > "$site/api/index.html"
echo "$site"
if [ "$command" = serve ]; then
  port="${PORT:-3000}"
  echo "serving the developer portal on http://127.0.0.1:$port/ (Ctrl-C stops)" >&2
  exec python3 -m http.server --bind 127.0.0.1 --directory "$site" "$port"
fi
