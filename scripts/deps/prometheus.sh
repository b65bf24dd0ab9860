#!/usr/bin/env bash
# Debian's prometheus package, for the prometheus gate's tests against a real server.
# Idempotent: does nothing when the binary is already on PATH.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "scripts/deps/prometheus.sh: prometheus is missing; run as root (apt-get install prometheus)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends keeps out the exporters and the web UI packages; the tests need the server only.
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package's maintainer scripts may start a system service on :9090; the tests start their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  systemctl stop prometheus || true
fi
command -v prometheus >/dev/null
