#!/usr/bin/env bash
# Installs the Redfish emulator of OpenStack and Metal3's CI, `sushy-emulator` from the pinned
# `sushy-tools` package, in a virtualenv where mni-redfish's test harness
# (framework/upstreams/redfish/src/testing.rs) finds it. Does nothing when it is there already.
# Called by scripts/test.sh.
set -euo pipefail
SUSHY_TOOLS="${XDG_CACHE_HOME:-$HOME/.cache}/mni/sushy-tools-2.2.0"
if ! "$SUSHY_TOOLS/bin/python" -c 'import sushy_tools, bcrypt' >/dev/null 2>&1; then
  rm -rf "$SUSHY_TOOLS"
  if ! python3 -m venv "$SUSHY_TOOLS" >/dev/null 2>&1; then
    # Debian's python3 makes virtualenvs only with python3-venv.
    apt-get update -qq && apt-get install -y -qq python3 python3-venv
    rm -rf "$SUSHY_TOOLS"
    python3 -m venv "$SUSHY_TOOLS"
  fi
  # sushy-tools brings bcrypt, with which the harness also hashes its htpasswd entries.
  "$SUSHY_TOOLS/bin/pip" install --quiet --disable-pip-version-check 'sushy-tools==2.2.0'
fi
