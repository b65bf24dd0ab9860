#!/usr/bin/env bash
# Times actions/install.sh as a job on a fresh runner meets it (docs/performance.md): a copy of
# this checkout's tracked files, an empty RUNNER_TEMP, and a package cache that is empty (cold:
# the first job after the lock changed) or filled by an earlier job (warm: actions/cache hit).
# Usage: bash scripts/measure-action-install.sh [auto|uv|pip|legacy] [runs]   (needs PyPI)
# (legacy: the actions' install before the locks, pip with build isolation, for comparison)
set -euo pipefail

installer="${1:-auto}"
runs="${2:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/promoter"
git ls-files -z --cached --others --exclude-standard | tar -c --null -T - -f - | tar -x -C "$work/promoter" -f -
# no uv on PATH: as on a runner image without one (auto and uv then install the locked uv)
path="$(printf '%s' "$PATH" | tr ':' '\n' | while read -r dir; do [ -x "$dir/uv" ] || printf '%s:' "$dir"; done)"

# legacy: what the actions did before the locks, for comparison (pip, build isolation, resolving)
legacy() {
  python3 -m venv "$RUNNER_TEMP/venv"
  "$RUNNER_TEMP/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/promoter"
}

job() {
  local temp="$work/job-$1"
  mkdir -p "$temp"
  local started ended
  started=$(date +%s.%N)
  if [ "$installer" = legacy ]; then
    (RUNNER_TEMP="$temp" PIP_CACHE_DIR="$work/cache-$2" legacy) >"$temp.log" 2>&1 || { cat "$temp.log" >&2; exit 1; }
  else
    PATH="$path" RUNNER_TEMP="$temp" PROMOTER_INSTALLER="$installer" PROMOTER_PACKAGE_CACHE="$work/cache-$2" \
      bash "$work/promoter/actions/install.sh" >"$temp.log" 2>&1 || { cat "$temp.log" >&2; exit 1; }
  fi
  ended=$(date +%s.%N)
  rm -rf "$temp"
  printf '%.1f' "$(echo "$ended - $started" | bc)"
}

for i in $(seq "$runs"); do
  cold=$(job "cold-$i" "$i")
  warm=$(job "warm-$i" "$i")
  echo "installer=$installer run=$i cold=${cold}s warm=${warm}s"
done
