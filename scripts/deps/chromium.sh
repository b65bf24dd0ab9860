#!/usr/bin/env bash
# Debian's chromium and its chromedriver, for the hub's pages tested in a real headless browser
# (tests/hub/test_pages.py drives them with Selenium; no browser is downloaded).
# Idempotent: does nothing when both are on PATH.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if ! apt-cache show chromium-driver >/dev/null 2>&1; then
  $sudo apt-get update -qq
fi
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
command -v chromium chromedriver
