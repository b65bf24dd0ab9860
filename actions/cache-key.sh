#!/usr/bin/env bash
# The actions/cache key and path for actions/install.sh's downloads: one cache per runner OS and
# architecture, Python version and content of the two locks, so a changed lock starts a new one.
# Environment: PROMOTER_PYTHON_VERSION (the action's python-version input); writes key= and
# path= to GITHUB_OUTPUT.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
locks="$(cat "$here/requirements.lock" "$here/uv.lock" | sha256sum | cut -c1-20)"
python="${PROMOTER_PYTHON_VERSION:-system}"
{
  echo "key=promoter-install-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-py${python//[^0-9A-Za-z.]/_}-$locks"
  # under HOME, not RUNNER_TEMP: a self-hosted runner keeps it between jobs even without the cache
  echo "path=$HOME/.cache/promoter-install"
} >>"$GITHUB_OUTPUT"
