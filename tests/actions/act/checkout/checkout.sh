#!/usr/bin/env bash
# actions/checkout, standing in: see ../README.md.
set -euo pipefail
source="$ACT_STAND_IN_GIT/$INPUT_REPOSITORY"
[ -e "$source" ] || { echo "::error::no stand-in repository for $INPUT_REPOSITORY at $source" >&2; exit 1; }
ref="$INPUT_REF"
if [ -z "$ref" ] && [ "$INPUT_REPOSITORY" = "$GITHUB_REPOSITORY" ]; then
  ref="$GITHUB_SHA"
fi
dest="$GITHUB_WORKSPACE/$INPUT_PATH"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
# what the workspace held (act copies the directory it runs in) goes, as on a fresh runner
find "$dest" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
git clone --quiet --no-checkout "$source" "$dest"
git -C "$dest" checkout --quiet --detach "${ref:-origin/HEAD}"
git -C "$dest" remote set-url origin "$GITHUB_SERVER_URL/$INPUT_REPOSITORY"
echo "checked out $INPUT_REPOSITORY at $(git -C "$dest" rev-parse HEAD) into $dest"
if [ -n "${ACT_STAND_IN_INSTALL:-}" ] && [ -f "$dest/actions/install.sh" ]; then
  ln -s "$ACT_STAND_IN_INSTALL" "$RUNNER_TEMP/promoter-$(printf '%s' "$dest" | sha256sum | cut -c1-16)"
fi
