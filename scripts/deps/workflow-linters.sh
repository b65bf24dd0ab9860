#!/usr/bin/env bash
# Installs ShellCheck for the workflow linters (actionlint runs it on every `run:`; the tests run it on
# the composite actions' scripts). actionlint, zizmor and check-jsonschema come from PyPI
# through pyproject's test extra. Idempotent: does nothing when shellcheck is there.
set -euo pipefail
if command -v shellcheck >/dev/null 2>&1; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if ! apt-cache show shellcheck >/dev/null 2>&1; then
  $sudo apt-get update -qq
fi
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends shellcheck >/dev/null
shellcheck --version | head -2
