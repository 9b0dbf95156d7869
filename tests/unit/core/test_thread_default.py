"""The library's thread default (core.threads.default_thread_limit): applied before the
package's first model load, in a fresh interpreter each (torch's pools are per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphrag_integrations.core.threads import default_thread_limit
from graphrag_integrations.errors import InvalidArgumentError

ROOT = Path(__file__).resolve().parents[3]
#: Loads the default embedder through the package (no thread setting of its own) and reports
#: the counts torch and the environment hold afterwards.
PROBE = """
import json, os, torch
before = torch.get_num_threads()
from graphrag_integrations.core.encoders.embeddings import as_embedder
as_embedder(None).embed_query("warm up")
print(json.dumps({"before": before, "after": torch.get_num_threads(),
                  "omp": os.environ.get("OMP_NUM_THREADS")}))
"""


def _probe(switch: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.pop("GRAPHRAG_INTEGRATIONS_THREADS", None)
    if switch is not None:
        env["GRAPHRAG_INTEGRATIONS_THREADS"] = switch
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.mark.slow  # three interpreters loading torch and MiniLM
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores to tell the counts apart")
def test_a_library_user_gets_the_thread_default_and_the_switch() -> None:
    fixed = _probe("1")
    assert int(str(fixed["before"])) >= 2  # torch's own: one per core
    assert (fixed["after"], fixed["omp"]) == (1, "1")
    auto = _probe(None)  # the free cores at load time: between 1 and the cores
    assert auto["omp"] == str(auto["after"]) and 1 <= int(str(auto["after"])) <= os.cpu_count()
    off = _probe("off")  # torch keeps its own count
    assert off["after"] == off["before"] and off["omp"] is None


def test_a_bad_switch_is_one_line() -> None:
    with pytest.raises(
        InvalidArgumentError, match=r"^GRAPHRAG_INTEGRATIONS_THREADS must be 'auto', 'off'"
    ):
        default_thread_limit(environ={"GRAPHRAG_INTEGRATIONS_THREADS": "many"})
