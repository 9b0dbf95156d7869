#!/usr/bin/env bash
# The main job: set-up, then index the bundled sample corpus with ClueIndex and answer its
# questions with Q-Iter on offline defaults (retrieved passages and paths shown).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh
VENV="${VENV:-.venv}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False TOKENIZERS_PARALLELISM=false
exec "$VENV/bin/python" examples/quickstart.py "$@"
