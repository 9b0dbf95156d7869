"""``python -m graphrag_integrations.evaluation.qcg_query_sets generate|snapshot DATASET ...``.

The command line of :mod:`graphrag_integrations.evaluation.qcg_query_sets` (its docstring
describes the commands; ``--help`` lists the options).
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_integrations.evaluation.qcg_query_sets.hotpotqa import (
    generate_hotpotqa,
    snapshot_hotpotqa,
)
from graphrag_integrations.evaluation.qcg_query_sets.lihuaworld import (
    generate_lihuaworld,
    snapshot_lihuaworld,
)

if TYPE_CHECKING:
    from graphrag_integrations.methods.qcg.generation import Doc2QueryGenerator

_MODULE = "graphrag_integrations.evaluation.qcg_query_sets"
#: The corpora this tool builds query sets for.
DATASETS = ("hotpotqa-100", "lihuaworld")


def _smollm2_generator(args: argparse.Namespace) -> Doc2QueryGenerator:
    """SmolLM2-135M-Instruct (greedy, 1 torch thread) behind a cached client."""
    import torch

    from graphrag_integrations.core.llm import LLMClient, TransformersLLM
    from graphrag_integrations.methods.qcg.generation import SMALL_MODEL_PROMPT, Doc2QueryGenerator

    torch.set_num_threads(1)
    llm = TransformersLLM(max_new_tokens=args.max_tokens, dtype=args.dtype)
    client = LLMClient(llm, cache_dir=args.cache, batch_size=args.batch_size, max_retries=1)
    _ = llm.tokenizer  # load outside the timed batches
    return Doc2QueryGenerator(
        client, M=args.M, template=SMALL_MODEL_PROMPT, max_tokens=args.max_tokens
    )


_GENERATE_DEFAULTS = {  # dataset: (end, group, cache, output stem)
    "hotpotqa-100": (100, 2, "cache", "hotpotqa100"),
    "lihuaworld": (None, 8, "cache_lihua", "lihua"),
}
_ARTEFACTS = {"hotpotqa-100": "hotpotqa100", "lihuaworld": "lihuaworld"}


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=f"python -m {_MODULE}",
        description="Build the committed QCG query sets (docs/lab/qcg.md, Building query sets).",
    )
    commands = ap.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="resumable Doc2Query generation")
    snap = commands.add_parser("snapshot", help="merge sets into the committed artefact")
    gen_sets = gen.add_subparsers(dest="dataset", required=True)
    snap_sets = snap.add_subparsers(dest="dataset", required=True)
    for name in DATASETS:
        end, group, cache, stem = _GENERATE_DEFAULTS[name]
        g = gen_sets.add_parser(name)
        g.add_argument("--data", type=Path, default=Path("../shared/data"))
        g.add_argument("--start", type=int, default=0)
        g.add_argument("--end", type=int, default=end)
        g.add_argument("--group", type=int, default=group)
        g.add_argument("--M", type=int, default=5)
        g.add_argument("--max-tokens", type=int, default=128)
        g.add_argument("--batch-size", type=int, default=8)
        g.add_argument("--cache", default=f"runs/qcg/{cache}")
        g.add_argument("--out", type=Path, default=Path(f"runs/qcg/{stem}.jsonl.gz"))
        g.add_argument("--seed", type=Path, action="append", default=[])
        g.add_argument(
            "--dtype",
            choices=("float32", "bfloat16"),
            default="bfloat16",
            help="model precision (bfloat16: ~2.8x faster prompt reading on AVX-512 BF16 CPUs)",
        )
        if name == "lihuaworld":
            g.add_argument("--chunking", default="1200/100")
        artefact = _ARTEFACTS[name]
        s = snap_sets.add_parser(name)
        s.add_argument("sets", type=Path, nargs="+")
        s.add_argument("--data", type=Path, default=Path("../shared/data"))
        s.add_argument(
            "--out",
            type=Path,
            default=Path(f"src/graphrag_integrations/data/qcg/{artefact}.jsonl.gz"),
        )
        s.add_argument("--questions", type=Path, default=Path(f"runs/qcg/{artefact}_covered.json"))
        s.add_argument(
            "--usage-log",
            type=Path,
            action="append",
            default=[],
            help="generation logs whose per-batch JSON rows are summed into the recorded usage "
            "(every run that paid for the set's replies, e.g. one resumed on the same cache)",
        )
    return ap


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``generate <dataset>`` or ``snapshot <dataset>`` (``--help`` lists the options).

    Parameters
    ----------
    argv
        The arguments (default: ``sys.argv[1:]``).
    """
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.command == "snapshot":
        snapshot = snapshot_hotpotqa if args.dataset == "hotpotqa-100" else snapshot_lihuaworld
        try:
            extra = snapshot(
                args.sets, args.data, args.out, args.questions, usage_logs=args.usage_log
            )
        except ValueError as exc:
            raise SystemExit(f"error: {exc}") from None
        hidden = ("questions_done", "chats_done")
        print(json.dumps({k: v for k, v in extra.items() if k not in hidden}, indent=1))
        return
    run_info = {
        "max_tokens": args.max_tokens,
        "template": "SMALL_MODEL_PROMPT",
        "decoding": f"greedy, SmolLM2-135M-Instruct {args.dtype} CPU, 1 torch thread",
    }
    generator = _smollm2_generator(args)
    common: dict[str, Any] = {"start": args.start, "end": args.end, "group": args.group}
    try:
        if args.dataset == "hotpotqa-100":
            generate_hotpotqa(
                generator, args.data, args.out, seeds=args.seed, run_info=run_info, **common
            )
        else:
            generate_lihuaworld(
                generator,
                args.data,
                args.out,
                chunking=args.chunking,
                seeds=args.seed,
                run_info=run_info,
                **common,
            )
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    main()
