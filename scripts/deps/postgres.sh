#!/usr/bin/env bash
# Debian's PostgreSQL 15 server, for the hub's tests on a real PostgreSQL (tests/support/hub_support.py
# starts its own server, as user postgres, on 127.0.0.1 with a socket dir of its own).
# Idempotent: does nothing when initdb is already there. The package's own cluster is stopped:
# the tests never use it.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if ! apt-cache show postgresql-15 >/dev/null 2>&1; then
  $sudo apt-get update -qq
fi
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
if command -v pg_ctlcluster >/dev/null 2>&1; then
  $sudo pg_ctlcluster 15 main stop >/dev/null 2>&1 || true
fi
ls /usr/lib/postgresql/*/bin/initdb
