"""Hybrid extraction with a real local LLM: what ``alpha`` sends to it and what it costs.

Builds a ``ClueIndex`` over the first ``--passages`` passages of the bundled sample corpus with
``alpha`` > 0 and the offline SmolLM2-135M-Instruct (or ``--llm NAME_OR_PATH``), then prints
``ClueIndex.extraction_report()``: chunks and tokens given to the LLM, sentence fallbacks and
the client's token accounting, plus the knowledge units the LLM produced for one chunk::

    HF_HUB_OFFLINE=1 python benchmarks/clue_alpha_llm.py --passages 6 --alpha 0.5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from quickstart import titled_documents  # noqa: E402

from graphrag_integrations.core.llm import LLMClient, TransformersLLM  # noqa: E402
from graphrag_integrations.methods.clue.index import ClueIndex  # noqa: E402
from graphrag_integrations.methods.clue.params import ClueIndexParams  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "examples" / "data" / "sample_corpus")
    ap.add_argument("--passages", type=int, default=6)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--llm", default=None, help="hub name, HF folder or GGUF (default SmolLM2)")
    ap.add_argument("--max-new-tokens", type=int, default=160)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is faster here)")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    docs = titled_documents(args.corpus)[: args.passages]
    client = LLMClient(TransformersLLM(args.llm, max_new_tokens=args.max_new_tokens))
    t0 = time.perf_counter()
    index = ClueIndex.from_documents(
        docs, index_params=ClueIndexParams(alpha=args.alpha), llm=client
    )
    seconds = time.perf_counter() - t0
    report = index.extraction_report()
    print(json.dumps({**report, "build_s": round(seconds, 1)}, indent=2))
    llm_units = [u for u in index.graph.units if u.source == "llm"]
    if llm_units:
        first = llm_units[0].passage_id
        print("\nknowledge units the LLM wrote for one chunk:")
        for unit in (u for u in llm_units if u.passage_id == first):
            print("  -", unit.text)


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
