"""How close a reduced-precision local LM stays to float32: next-token agreement on passages.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_llm_fidelity.py --dataset ../shared/data/musique-100 \\
        --passages 8 --dtypes int8 int8-mixed int8-smooth [--model PATH]

For the first ``--passages`` passages of the dataset (at most ``--tokens`` tokens each), every
position's arg-max next token of each precision is compared with float32's (the agreement),
and the mean absolute difference of the log-probability of the passage's true next token is
reported (nats). The default model is the offline SmolLM2-135M-Instruct.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    import torch

    from graphrag_integrations.core.llm import TransformersLLM
    from graphrag_integrations.evaluation.datasets import load_dataset

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", default="../shared/data/musique-100")
    ap.add_argument("--passages", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--model", default=None, help="model name or path (default: offline SmolLM2)")
    ap.add_argument("--dtypes", nargs="+", default=["int8", "int8-mixed", "int8-smooth"])
    a = ap.parse_args(argv)
    texts = [p.text for p in load_dataset(Path(a.dataset)).passages[: a.passages]]

    def log_probs(llm: TransformersLLM) -> list[tuple[torch.Tensor, torch.Tensor]]:
        out = []
        with torch.inference_mode():
            for text in texts:
                ids = llm.tokenizer(text, return_tensors="pt")["input_ids"][:, : a.tokens]
                logits = llm.model(input_ids=ids).logits[0].float()
                out.append((torch.log_softmax(logits, -1), ids[0]))
        return out

    reference = log_probs(TransformersLLM(a.model, dtype="float32"))
    rows = {}
    for dtype in a.dtypes:
        start = time.process_time()
        llm = TransformersLLM(a.model, dtype=dtype)
        _ = llm.model
        load_s = time.process_time() - start
        agree = total = 0
        diff = 0.0
        for (ref, ids), (got, _) in zip(reference, log_probs(llm), strict=True):
            agree += int((ref.argmax(-1) == got.argmax(-1)).sum())
            total += int(ref.shape[0])
            true_next = ids[1:]
            rows_idx = torch.arange(len(true_next))
            diff += float((ref[rows_idx, true_next] - got[rows_idx, true_next]).abs().sum())
        rows[dtype] = {
            "agreement": round(agree / total, 3),
            "mean_abs_logprob_diff": round(diff / max(total - len(texts), 1), 3),
            "load_cpu_s": round(load_s, 1),
        }
        print(dtype, rows[dtype], flush=True)
    print(json.dumps({"passages": len(texts), "tokens": a.tokens, "results": rows}))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
