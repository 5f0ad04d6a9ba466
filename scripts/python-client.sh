#!/usr/bin/env bash
# Installs the official Python Kubernetes client, pinned, in a virtualenv where
# framework/dev/tests/integration/python_client.rs finds it (a virtualenv leaves the machine's Python
# packages as they are). Does nothing when it is there already. Called by scripts/test.sh.
set -euo pipefail
PYTHON_CLIENT="${XDG_CACHE_HOME:-$HOME/.cache}/mni/python-kubernetes-37.0.2"
if ! "$PYTHON_CLIENT/bin/python" -c 'import kubernetes' >/dev/null 2>&1; then
  rm -rf "$PYTHON_CLIENT"
  if ! python3 -m venv "$PYTHON_CLIENT" >/dev/null 2>&1; then
    # Debian's python3 makes virtualenvs only with python3-venv.
    apt-get update -qq && apt-get install -y -qq python3 python3-venv
    rm -rf "$PYTHON_CLIENT"
    python3 -m venv "$PYTHON_CLIENT"
  fi
  "$PYTHON_CLIENT/bin/pip" install --quiet --disable-pip-version-check 'kubernetes==37.0.2'
fi
