"""Option scoring: the shared prompt cache against re-reading the prompt for every option.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_score_continuations.py [--paths 45] [--options 8] [--model NAME]

The prompt imitates ReG's refinement prompt (``--paths`` numbered relation paths) and the
options are ``ans: Path i``. ``TransformersLLM.score_continuations`` (prompt encoded once, its
key/value cache shared) is timed in CPU seconds against one right-padded batch in which every
row reads ``prompt + option`` (the method before the shared cache), and the largest score
difference is printed (the two compute the same log-probabilities).
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", type=int, default=45)
    ap.add_argument("--options", type=int, default=8)
    ap.add_argument("--model", default=None, help="default: the offline SmolLM2-135M-Instruct")
    ap.add_argument("--dtype", default=None, choices=("float32", "bfloat16"))
    args = ap.parse_args()
    import torch

    from graphrag_integrations.core.llm import TransformersLLM

    torch.set_num_threads(1)
    llm = TransformersLLM(args.model, dtype=args.dtype)
    prompt = " ".join(
        f"Path {i}: film {i} -> [directed_by] -> person {i} -> [starred_actors] -> actor {i}."
        for i in range(args.paths)
    )
    options = [f"ans: Path {i}" for i in range(args.options)]
    ids = [int(t) for t in llm.encode_prompt(prompt)["input_ids"][0].tolist()]
    start = time.process_time()
    shared = llm.score_continuations(prompt, options, batch_size=len(options))
    shared_s = time.process_time() - start

    conts = [llm.encode_continuation(o) for o in options]
    longest = max(len(c) for c in conts)
    rows = torch.full((len(conts), len(ids) + longest), llm.pad_token_id, dtype=torch.long)
    mask = torch.zeros_like(rows)
    for i, cont in enumerate(conts):
        rows[i, : len(ids)] = torch.tensor(ids)
        rows[i, len(ids) : len(ids) + len(cont)] = torch.tensor(cont)
        mask[i, : len(ids) + len(cont)] = 1
    start = time.process_time()
    with torch.inference_mode():
        logits = llm.model(input_ids=rows, attention_mask=mask, logits_to_keep=longest + 1).logits
        logprobs = torch.log_softmax(logits[:, :longest].float(), dim=-1)
    reread_s = time.process_time() - start
    reread = [
        float(sum(logprobs[i, t, tok] for t, tok in enumerate(cont)))
        for i, cont in enumerate(conts)
    ]
    print(
        json.dumps(
            {
                "model": llm.model_name,
                "prompt_tokens": len(ids),
                "options": len(options),
                "cpu_s_shared_prompt_cache": round(shared_s, 2),
                "cpu_s_prompt_per_option": round(reread_s, 2),
                "speed_up": round(reread_s / shared_s, 2) if shared_s else None,
                "max_abs_score_difference": max(
                    abs(a - b) for a, b in zip(shared, reread, strict=True)
                ),
            }
        )
    )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
