#!/usr/bin/env bash
# The whole test gate: set-up from nothing, lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-peers
.venv/bin/ruff check fabriccfg tests benchmarks
.venv/bin/mypy
.venv/bin/pytest -n 2 "$@"
