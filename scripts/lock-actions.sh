#!/usr/bin/env bash
# Regenerates the actions' install locks (docs/github-actions.md) with uv: actions/requirements.lock
# from pyproject.toml's dependencies and the build backend (actions/build.in), and actions/uv.lock
# for the uv the lock names (UV_VERSION=x.y.z to move it). Every distribution is pinned with its
# hashes, for Python 3.11 and later on every platform. Usage: UV=path/to/uv scripts/lock-actions.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
uv="${UV:-uv}"
version="${UV_VERSION:-$(sed -n 's/^uv==\([0-9.]*\).*/\1/p' actions/uv.lock)}"
compile=("$uv" pip compile --quiet --generate-hashes --universal --python-version 3.11 --no-header)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"${compile[@]}" pyproject.toml actions/build.in -o "$work/requirements.lock"
echo "uv==$version" >"$work/uv.in"
"${compile[@]}" "$work/uv.in" -o "$work/uv.lock"
{
  echo "# The promoter's dependencies for the composite actions' install (actions/install.sh), pinned with"
  echo "# their hashes: pyproject.toml's dependencies and the build backend (actions/build.in), resolved"
  echo "# for Python 3.11 and later on every platform. Regenerate with \`make actions-lock\` after changing"
  echo "# either, and commit both."
  echo ""
  cat "$work/requirements.lock"
} >actions/requirements.lock
{
  echo "# uv, pinned with its hashes: actions/install.sh installs it from PyPI with pip when the runner has"
  echo "# no uv of its own, then installs the promoter with it. Regenerate with \`make actions-lock\`."
  echo ""
  grep -v "^    # via" "$work/uv.lock"
} >actions/uv.lock
echo "actions/requirements.lock and actions/uv.lock regenerated (uv $version)"
