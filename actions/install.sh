#!/usr/bin/env bash
# Installs the promoter of this action's own version into a virtualenv of its own, for the
# composite actions: the dependencies from the hash-checked lock beside this script
# (requirements.lock), then the promoter itself, with --no-deps:
#  - the action is exactly a release (GitHub's tarball of a `uses:` carries .git_archival.txt,
#    whose describe-name is then a bare vX.Y.Z; a git checkout sitting on tag vX.Y.Z; or
#    GITHUB_ACTION_REF is vX.Y.Z): promoter==X.Y.Z,
#    a wheel from the package index (PyPI; PIP_INDEX_URL, UV_INDEX_URL or UV_DEFAULT_INDEX name
#    another). An index without that version is an error, never another version.
#  - anything else (a SHA between releases, a branch, a git checkout off a release tag),
#    or PROMOTER_INSTALL_FROM=checkout (a reviewed copy that must run its own files): this
#    checkout, built with no build isolation and no index (its build backend and setuptools-scm
#    are in the lock).
# Either way a job resolves nothing and downloads only locked files and the release's wheel.
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
# no bytecode compiled up front (uv compiles none either): a job imports a fraction of what it
# installs, and Python compiles that on first import
pip_install=(install --quiet --disable-pip-version-check --no-compile)
index="${UV_DEFAULT_INDEX:-${UV_INDEX_URL:-${PIP_INDEX_URL:-https://pypi.org/simple}}}"
shown_index="$(printf '%s' "$index" | sed -E 's#://[^/@]*@#://#')" # for the log: no user or token
release_tag='^v([0-9]+\.[0-9]+\.[0-9]+((a|b|rc)[0-9]+)?)$'

# Sets release to X.Y.Z when this action is exactly release vX.Y.Z, else why to what it is.
# The archival file first: `uses: ...@v1` follows the major tag, and GITHUB_ACTION_REF is then v1
# (and the runner leaves it empty in a composite action's steps: actions/runner#2473).
find_release() {
  local describe="" node="" checkout=""
  release="" why=""
  case "${PROMOTER_INSTALL_FROM:-auto}" in
    auto) ;;
    checkout)
      why="PROMOTER_INSTALL_FROM=checkout"
      return
      ;;
    *)
      echo "::error title=promoter::PROMOTER_INSTALL_FROM must be auto or checkout, not $PROMOTER_INSTALL_FROM" >&2
      exit 2
      ;;
  esac
  if [ -f "$root/.git_archival.txt" ]; then
    describe="$(sed -n 's/^describe-name: //p' "$root/.git_archival.txt")"
    node="$(sed -n 's/^node: //p' "$root/.git_archival.txt")"
  fi
  if [ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$root" && pwd -P)" ]; then
    # a git checkout (the reusable workflow's, with its tags): its own tag, if it sits on one
    checkout=yes
    describe="$(git -C "$root" describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null || true)"
  fi
  if [[ "$describe" =~ $release_tag ]] || [[ "${GITHUB_ACTION_REF:-}" =~ $release_tag ]]; then
    release="${BASH_REMATCH[1]}"
  elif [[ "$node" =~ ^[0-9a-f]{40,64}$ ]]; then # substituted: a tarball of a commit after a release
    why="not a release: ${describe:-no release tag before this commit}"
  elif [ -n "$checkout" ]; then
    why="not a release: a git checkout at $(git -C "$root" describe --tags --always --match 'v[0-9]*.[0-9]*.[0-9]*')"
  else # a copy of the files alone
    why="not a release: no version in .git_archival.txt"
  fi
}

# The release's wheel from the package index, with the installer's arguments before it.
install_release() {
  if ! "$@" --no-deps --only-binary :all: --index-url "$index" "promoter==$release"; then
    echo "::error title=promoter::could not install promoter $release, this action's release, from the package index $shown_index: not published there yet, or the index cannot be reached" >&2
    exit 1
  fi
}

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
    "$python" -m pip "${pip_install[@]}" --require-hashes --no-deps --target "$tools" -r "$here/uv.lock" >&2 ||
      return 0
  fi
  echo "$tools/bin/uv"
}

find_release
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
    if [ -n "$release" ]; then
      install_release "$uv" pip install --quiet --python "$venv/bin/python"
    else
      "$uv" pip install --quiet --python "$venv/bin/python" --no-deps --no-build-isolation --no-index "$root"
    fi
  elif [ "$installer" = uv ]; then
    echo "::error title=promoter::no uv on PATH, and installing it from PyPI failed" >&2
    exit 1
  else
    # A pip that installs into another interpreter (22.3 and later) fills a virtualenv made
    # without a pip of its own: ensurepip's unpacking and compiling took longer than the install.
    if "$python" -m pip --python "$python" --version >/dev/null 2>&1; then
      "$python" -m venv --without-pip "$venv"
      into=("$python" -m pip --python "$venv/bin/python" "${pip_install[@]}")
    else
      "$python" -m venv "$venv"
      into=("$venv/bin/python" -m pip "${pip_install[@]}")
    fi
    "${into[@]}" --require-hashes --no-deps -r "$here/requirements.lock"
    if [ -n "$release" ]; then
      install_release "${into[@]}"
    else
      "${into[@]}" --no-deps --no-build-isolation --no-index "$root"
    fi
  fi
  how=pip
  if [ -n "$uv" ]; then how=uv; fi
  version="$("$venv/bin/python" -I -c 'from importlib.metadata import version; print(version("promoter"))')"
  if [ -n "$release" ]; then
    from="the package index ($shown_index)"
  else
    from="the action's checkout ($why)"
  fi
  echo "installed promoter $version from $from; its locked dependencies with $how, in $((SECONDS - started))s"
fi
"$venv/bin/promoter" --version
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "promoter=$venv/bin/promoter" >>"$GITHUB_OUTPUT"
fi
