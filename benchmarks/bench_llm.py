"""Batched vs one-at-a-time greedy generation with the local LLM (``TransformersLLM``).

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_llm.py --batch-sizes 1 4 8 16 --threads 1 2

Prompts: MuSiQue-100 corpus passages (``musique-100/corpus.json``) packed until the prompt
reaches ``--prompt-tokens`` tokens, asking for questions about them (QCG-RAG-style query
generation), so each run generates up to ``--max-tokens`` tokens. Batch size 1 calls
:meth:`TransformersLLM.complete` on ``--single`` prompts one at a time; batch size ``b``
calls :meth:`TransformersLLM.complete_batch` once on ``b`` prompts. Tokens/s counts generated
tokens (each row up to its eos; the padding of finished rows is compute, not output;
``--ignore-eos`` makes every row run to ``--max-tokens``). CPU
seconds (``time.process_time``) are reported next to wall time because the machine may be
shared; the ratios are against batch size 1 at the same thread count.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from graphrag_integrations.core.llm import LLMResult, TransformersLLM

INSTRUCTION = (
    "Read the passages below and write ten different questions that they answer, one per line.\n\n"
)


def build_prompts(llm: TransformersLLM, corpus: Path, n: int, prompt_tokens: int) -> list[str]:
    """``n`` prompts of about ``prompt_tokens`` tokens each, from consecutive passages."""
    passages = json.loads(corpus.read_text(encoding="utf-8"))
    prompts: list[str] = []
    i = 0
    while len(prompts) < n:
        text = INSTRUCTION
        while int(llm.encode_prompt(text)["input_ids"].shape[1]) < prompt_tokens:
            p = passages[i % len(passages)]
            text += f"{p['title']}: {p['text']}\n"
            i += 1
        prompts.append(text)
    return prompts


def timed(fn: object, *args: object, **kwargs: object) -> tuple[list[LLMResult], float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)  # type: ignore[operator]
    results = out if isinstance(out, list) else [out]
    return results, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="benchmark root")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 8, 16])
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--single", type=int, default=4, help="prompts run one at a time")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--prompt-tokens", type=int, default=300)
    ap.add_argument("--model", default=None, help="default: SmolLM2-135M-Instruct (offline)")
    ap.add_argument(
        "--ignore-eos",
        action="store_true",
        help="generate exactly --max-tokens per prompt (fixed-length throughput)",
    )
    args = ap.parse_args()

    import torch

    llm = TransformersLLM(args.model, max_new_tokens=args.max_tokens)
    if args.ignore_eos:  # pad with the real pad id; no eos means every row runs to the limit
        pad = llm.pad_token_id
        llm.model.generation_config.pad_token_id = pad
        llm.model.generation_config.eos_token_id = None
    n = max([*args.batch_sizes, args.single])
    prompts = build_prompts(llm, args.data / "musique-100" / "corpus.json", n, args.prompt_tokens)
    lengths = [int(llm.encode_prompt(p)["input_ids"].shape[1]) for p in prompts]
    print(
        f"model {llm.model_name}, load {llm.load_seconds:.1f}s; prompt tokens {min(lengths)}-"
        f"{max(lengths)}; max_tokens {args.max_tokens}; greedy"
    )
    print(
        "| threads | batch | prompts | new tokens | wall s | tok/s | x vs 1 | CPU s | CPU ms/tok |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    llm.complete_batch(prompts[:2], max_tokens=4)  # warm-up
    for threads in args.threads:
        torch.set_num_threads(threads)
        base: float | None = None
        singles: list[LLMResult] = []
        for b in args.batch_sizes:
            if b == 1:
                wall = cpu = 0.0
                for p in prompts[: args.single]:
                    res, w, c = timed(llm.complete, p)
                    singles += res
                    wall, cpu = wall + w, cpu + c
                results, count = singles, args.single
            else:
                results, wall, cpu = timed(llm.complete_batch, prompts[:b])
                count = b
            tokens = sum(r.completion_tokens for r in results)
            rate = tokens / wall
            base = rate if b == 1 else base
            ratio = f"{rate / base:.2f}" if base else "-"
            same = ""
            if b > 1 and singles:
                k = min(len(singles), b)
                same = f"  (first {k} equal to one-at-a-time: "
                same += (
                    f"{sum(a.text == s.text for a, s in zip(results, singles, strict=False))}/{k})"
                )
            print(
                f"| {threads} | {b} | {count} | {tokens} | {wall:.1f} | {rate:.1f} | {ratio} | "
                f"{cpu:.1f} | {1000 * cpu / tokens:.1f} |{same}"
            )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
