"""Import and model-load times (machine-dependent, so printed here rather than asserted in tests).

* ``import graphrag_integrations`` in a fresh interpreter (``--repeats`` times; min / median
  / max wall-clock seconds) and which heavy libraries it loaded (must be none; the test suite
  asserts that part, ``tests/unit/test_imports.py``);
* first and second load of each offline model in one process: the MiniLM embedder (two
  ``SentenceTransformerEmbedder`` instances, each loading its own weights; the first also pays
  the torch import), the spaCy pipeline (``SpacyNLP``; the second instance shares the cached
  pipeline) and, with ``--llm``, SmolLM2 (``TransformersLLM.load_seconds``, from the converted
  cache in ``~/.cache/graphrag_integrations``).

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \\
        python benchmarks/bench_import.py [--repeats 5] [--llm]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

HEAVY: tuple[str, ...] = ("torch", "transformers", "sentence_transformers", "spacy", "chromadb")
HEAVY += ("langchain_core", "llama_index", "bm25s", "networkx", "pytest")

_IMPORT = (
    "import json, sys, time; t = time.perf_counter(); import graphrag_integrations; "
    "dt = time.perf_counter() - t; "
    f"print(json.dumps([dt, [m for m in {list(HEAVY)!r} if m in sys.modules]]))"
)


def import_times(repeats: int) -> tuple[list[float], list[str]]:
    """Seconds of each fresh-interpreter import, and the heavy libraries the last one loaded."""
    times: list[float] = []
    heavy: list[str] = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", _IMPORT], capture_output=True, text=True, check=True
        )
        seconds, heavy = json.loads(out.stdout)
        times.append(float(seconds))
    return times, heavy


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def embedder_loads() -> tuple[float, float]:
    from graphrag_integrations.core.encoders.embeddings import SentenceTransformerEmbedder

    first = timed(lambda: SentenceTransformerEmbedder(workers=1).embed(["warm up"]))
    second = timed(lambda: SentenceTransformerEmbedder(workers=1).embed(["warm up"]))
    return first, second


def spacy_loads() -> tuple[float, float]:
    from graphrag_integrations.core.text.nlp import SpacyNLP

    first = timed(lambda: SpacyNLP().parse("Obama visited Paris."))
    second = timed(lambda: SpacyNLP().parse("Obama visited Paris."))
    return first, second


def llm_loads() -> tuple[float, float]:
    from graphrag_integrations.core.llm import TransformersLLM

    seconds = []
    for _ in range(2):
        llm = TransformersLLM()
        llm.complete("Say hi.", max_tokens=2)
        assert llm.load_seconds is not None
        seconds.append(llm.load_seconds)
    return seconds[0], seconds[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeats", type=int, default=5, help="fresh-interpreter imports to time")
    ap.add_argument("--llm", action="store_true", help="also time SmolLM2 loads (slow)")
    args = ap.parse_args(argv)

    times, heavy = import_times(args.repeats)
    print(
        f"import graphrag_integrations: min {min(times):.3f}s, median "
        f"{statistics.median(times):.3f}s, max {max(times):.3f}s over {len(times)} runs; "
        f"heavy libraries loaded: {heavy or 'none'}"
    )
    loads = {"embedder (all-MiniLM-L6-v2)": embedder_loads, "spaCy pipeline": spacy_loads}
    if args.llm:
        loads["SmolLM2-135M-Instruct"] = llm_loads
    for name, measure in loads.items():
        first, second = measure()
        print(f"{name}: first load {first:.2f}s, second load {second:.2f}s")
    return 0 if not heavy else 1


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    raise SystemExit(main())
