#!/usr/bin/env bash
# Installs mdBook, pinned, from crates.io into .mni/tools/bin (project-local, so the machine's
# cargo bin directory is left as it is) and prints its path. Does nothing but print when that
# version is there already. Called by scripts/book.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
MDBOOK_VERSION=0.5.4
TOOLS="$PWD/.mni/tools"
if [ "$("$TOOLS/bin/mdbook" --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
  echo "installing mdbook $MDBOOK_VERSION into $TOOLS (once; a few minutes on 2 cores)" >&2
  # Its own build directory: mdBook's dependencies are no part of the workspace's target.
  CARGO_TARGET_DIR="$TOOLS/build" cargo install mdbook --version "$MDBOOK_VERSION" --locked \
    --root "$TOOLS" --quiet >&2
  rm -rf "$TOOLS/build"
fi
echo "$TOOLS/bin/mdbook"
