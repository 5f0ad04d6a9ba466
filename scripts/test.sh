#!/usr/bin/env bash
# Runs the whole test suite: every crate's unit, integration and doc tests, the kubectl suites
# the book's commands, and the golden projects' own builds and tests. One shared target
# directory for everything.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Python client test needs the official client (installed once, in a virtualenv).
scripts/python-client.sh
# mni-redfish's tests (and later the bare-metal service's) run the real Redfish emulator,
# sushy-emulator, installed once in a virtualenv.
scripts/sushy-emulator.sh
# The developer portal's test (tests/tests/portal.rs) builds the book with mdBook, installed
# from crates.io once into .mni/tools.
scripts/mdbook.sh > /dev/null
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
  cargo test --workspace --doc
else
  cargo test --workspace --no-fail-fast
fi
# What the scaffold plugins generate builds, is formatted and passes its own tests.
scripts/golden.sh
# Every benchmark once, in smoke mode (tiny sizes, the builds above): a bench whose requests
# fail breaks the suite the day it breaks. `cargo xtask bench` (no flag) takes the figures.
cargo xtask bench --smoke > /dev/null
