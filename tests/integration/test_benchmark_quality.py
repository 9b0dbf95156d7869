"""Benchmark-sized quality checks on the real development data (slow; run in CI).

The data root comes from ``--data-dir DIR``, ``$GRAPHRAG_DATA_DIR`` or ``../shared/data``
beside the repository (the ``data_dir`` fixture of ``tests/conftest.py``); without one the
tests are skipped and the skip reason says how to run them, e.g.::

    pytest tests/integration/test_benchmark_quality.py -m slow --data-dir /work/shared/data

They assert the product's claim - Q-Iter beats dense retrieval with the same embedder on
multi-hop questions - with a margin well inside what the docs report, so noise in an
unrelated change does not flip them, while a regression in the method does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.evaluation.datasets import load_dataset
from graphrag_integrations.evaluation.harness import run_eval
from tests.conftest import dataset_dir


@pytest.mark.slow
def test_qiter_beats_dense_on_hotpotqa(data_dir: Path) -> None:
    dataset = load_dataset(dataset_dir(data_dir, "hotpotqa-100"))
    report = run_eval(dataset, ["dense", "clue"], show_progress=False).to_json()
    dense, clue = report["results"]["dense"], report["results"]["clue"]
    assert report["passages"] == 994 and report["questions"] == 100
    assert dense["R@5"] == pytest.approx(78.5, abs=1.0)  # the documented baseline
    assert clue["R@5"] >= dense["R@5"] + 5.0
    assert clue["R@2"] > dense["R@2"]
    # Q-Iter's p50 is 5-9x dense's (both embed the question; docs/lab/clue.md): a bound relative to
    # dense in the same run holds on a loaded machine too (an absolute 1 s bound failed at load
    # average 13, 1,067 ms) and still catches a slowdown of Q-Iter alone
    assert clue["latency_p50_ms"] < 25.0 * max(dense["latency_p50_ms"], 5.0)
