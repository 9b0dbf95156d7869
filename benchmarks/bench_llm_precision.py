"""float32 vs bfloat16 (vs ``dtype="auto"``) for the local LM on this CPU: prefill and decode.

Run (from the repository root)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=src \\
        python benchmarks/bench_llm_precision.py [--prompt-tokens 300] [--steps 20] \\
        [--batch-sizes 1 15] [--repeats 2]

For each precision, SmolLM2-135M-Instruct (the offline default) reads a random prompt of
``--prompt-tokens`` tokens (prefill, one row), then ``--batch-sizes`` rows continue it for
``--steps`` one-token decoding steps on its key/value cache (15 = KG-Translator's MuSiQue
relation search: 3 entities x 5 beams). CPU (process) seconds, best of ``--repeats``; the
header says which CPU flags were found and what ``dtype="auto"`` resolves to here.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from graphrag_integrations.core.llm import TransformersLLM, preferred_dtype
from graphrag_integrations.core.llm.precision import BF16_CPU_FLAGS, cpu_flags


def measure(llm: TransformersLLM, prompt_tokens: int, steps: int, batch: int) -> dict[str, float]:
    """CPU seconds of one prefill of ``prompt_tokens`` (one row) and of ``steps`` decoding
    steps of ``batch`` rows continuing it (the prompt's cache repeated, as beam search does)."""
    model = llm.model
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(100, 10_000, (1, prompt_tokens), generator=gen)
    with torch.inference_mode():
        model(ids[:, :8])  # warm-up
        c0 = time.process_time()
        out = model(ids, use_cache=True)
        prefill = time.process_time() - c0
        cache = out.past_key_values
        cache.batch_repeat_interleave(batch)
        last = ids[:, -1:].repeat(batch, 1)
        c0 = time.process_time()
        for _ in range(steps):
            out = model(last, past_key_values=cache, use_cache=True)
            cache = out.past_key_values
        decode = time.process_time() - c0
    return {"prefill_cpu_s": prefill, "decode_cpu_s": decode}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--prompt-tokens", type=int, default=300)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 15])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    flags = cpu_flags() or frozenset()
    print(
        json.dumps(
            {
                "bf16_flags": sorted(flags & BF16_CPU_FLAGS),
                "avx512f": "avx512f" in flags,
                "torch_capability": torch.backends.cpu.get_cpu_capability(),
                "auto": preferred_dtype("cpu"),
                "load_average": os.getloadavg(),
            }
        ),
        flush=True,
    )
    print("| dtype | rows | prefill CPU s (1 row) | decode CPU s / step |")
    print("|---|---:|---:|---:|")
    for dtype in a.dtypes:
        llm = TransformersLLM(dtype=dtype)
        for batch in a.batch_sizes:
            runs = [measure(llm, a.prompt_tokens, a.steps, batch) for _ in range(a.repeats)]
            prefill = min(r["prefill_cpu_s"] for r in runs)
            decode = min(r["decode_cpu_s"] for r in runs) / a.steps
            print(f"| {dtype} | {batch} | {prefill:.3f} | {decode:.4f} |", flush=True)
    print(json.dumps({"load_average": os.getloadavg()}))


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
