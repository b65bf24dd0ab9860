#!/usr/bin/env bash
# Installs the promoter of this checkout into a virtualenv of its own, for the composite actions:
# the dependencies from the hash-checked lock beside this script (requirements.lock), then the
# promoter itself with no build isolation and no index (its build backend is in the lock): a job
# resolves nothing and downloads only locked files.
#
# The installer is uv: the runner's own when it has one, else the locked uv (uv.lock) installed
# from PyPI with pip. PROMOTER_INSTALLER=pip uses pip alone (slower), =uv insists on uv. Every
# download is kept in PROMOTER_PACKAGE_CACHE, which the actions keep between jobs with
# actions/cache, keyed on the two locks.
#
# Environment: PROMOTER_PYTHON (the interpreter; default python3), RUNNER_TEMP (where the
# virtualenv goes), GITHUB_OUTPUT (receives promoter=<path of the promoter command>).
# actions/render and actions/promote of one checkout in one job share one virtualenv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
python="${PROMOTER_PYTHON:-python3}"
temp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
venv="$temp/promoter-$(printf '%s' "$root" | sha256sum | cut -c1-16)"
installer="${PROMOTER_INSTALLER:-auto}"
if [ -n "${PROMOTER_PACKAGE_CACHE:-}" ]; then
  export UV_CACHE_DIR="$PROMOTER_PACKAGE_CACHE/uv" PIP_CACHE_DIR="$PROMOTER_PACKAGE_CACHE/pip"
fi
pip_install=(-m pip install --quiet --disable-pip-version-check)

# The runner's uv, else the locked one from PyPI; nothing when that fails and pip may do it.
find_uv() {
  if command -v uv >/dev/null 2>&1; then
    command -v uv
    return
  fi
  local tools
  # in the package cache when there is one: a warm job then runs no pip at all
  tools="${PROMOTER_PACKAGE_CACHE:-$temp}/uv-$(sha256sum <"$here/uv.lock" | cut -c1-16)"
  if [ ! -x "$tools/bin/uv" ]; then
    "$python" "${pip_install[@]}" --require-hashes --no-deps --target "$tools" -r "$here/uv.lock" >&2 ||
      return 0
  fi
  echo "$tools/bin/uv"
}

if [ ! -x "$venv/bin/promoter" ]; then
  started=$SECONDS
  uv=""
  case "$installer" in
    auto | uv) uv="$(find_uv)" ;;
    pip) ;;
    *)
      echo "::error title=promoter::PROMOTER_INSTALLER must be auto, uv or pip, not $installer" >&2
      exit 2
      ;;
  esac
  if [ -n "$uv" ]; then
    "$uv" venv --quiet --python "$python" "$venv"
    "$uv" pip install --quiet --python "$venv/bin/python" --require-hashes --no-deps -r "$here/requirements.lock"
    "$uv" pip install --quiet --python "$venv/bin/python" --no-deps --no-build-isolation --no-index "$root"
  elif [ "$installer" = uv ]; then
    echo "::error title=promoter::no uv on PATH, and installing it from PyPI failed" >&2
    exit 1
  else
    "$python" -m venv "$venv"
    "$venv/bin/python" "${pip_install[@]}" --require-hashes --no-deps -r "$here/requirements.lock"
    "$venv/bin/python" "${pip_install[@]}" --no-deps --no-build-isolation --no-index "$root"
  fi
  how=pip
  if [ -n "$uv" ]; then how=uv; fi
  echo "installed the promoter and its locked dependencies with $how in $((SECONDS - started))s"
fi
"$venv/bin/promoter" --version
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "promoter=$venv/bin/promoter" >>"$GITHUB_OUTPUT"
fi
