#!/usr/bin/env bash
# Set up fabriccfg from nothing: Debian peers used by tests (when root + apt), a venv, the package.
# Usage: scripts/setup.sh [--with-peers]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin"   # opensm and snmpd live in sbin
if [[ "${1:-}" == "--with-peers" ]]; then
  need=()
  command -v opensm >/dev/null 2>&1 || need+=(opensm)
  command -v snmpd >/dev/null 2>&1 || need+=(snmpd)
  command -v snmpbulkwalk >/dev/null 2>&1 || need+=(snmp)
  command -v promtool >/dev/null 2>&1 || need+=(prometheus)
  command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)   # verifies the documented watch units
  # ibsim backend of the mock (docs/mock.md): the simulator, its preload library (the multiarch
  # directory differs by architecture) and the real diagnostics
  command -v ibsim >/dev/null 2>&1 && compgen -G "/usr/lib/*/umad2sim/libumad2sim.so" >/dev/null \
    || need+=(ibsim-utils)
  command -v ibnetdiscover >/dev/null 2>&1 || need+=(infiniband-diags)
  if ((${#need[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
      echo "installing Debian peers: ${need[*]}"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
      # the packaged daemons are started by the tests themselves, on loopback only
      for svc in snmpd prometheus opensm; do
        (systemctl stop "$svc" || service "$svc" stop) >/dev/null 2>&1 || true
      done
    else
      echo "not root or no apt-get: tests needing ${need[*]} will be skipped" >&2
    fi
  fi
fi
PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
extras="test"
# compat: the editable install is a plain path in a .pth file, which type checkers follow (mypy does
# not run setuptools' import-hook finder), so a user script type-checks against the installed package
.venv/bin/python -m pip install -q -e ".[${extras}]" --config-settings editable_mode=compat
