"""Evaluation-registry entry for Clue-RAG (``"clue": "...methods.clue.evaluation:build"``)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from graphrag_integrations.core.embeddings import Embedder
from graphrag_integrations.core.types import Passage, Retriever

#: :class:`ClueIndex` parameters ``build`` does not take from its options: the embedder is
#: its own argument, ``llm`` is Q-Iter's (query entities; an index-side LLM for ``alpha`` > 0
#: is passed as ``index_llm``).
NOT_INDEX_OPTIONS = frozenset({"embedding", "llm", "show_progress"})


def build(
    passages: list[Passage] | Sequence[Passage],
    embedder: Embedder,
    *,
    show_progress: bool = False,
    **options: Any,
) -> Retriever:
    """Build a Clue index over ``passages`` and return its Q-Iter retriever.

    Options named like a :class:`ClueIndex` parameter (except :data:`NOT_INDEX_OPTIONS`) go
    to the index, ``index_llm`` as its ``llm``; the rest to :class:`QIter` (``K``, ``D``,
    ``M``, ``N``, ``reranker``, ``llm``, ablation switches...);
    ``preset="paper"`` selects :meth:`QIter.paper`.

    Examples
    --------
    >>> retriever = build(passages, embedder, D=2)  # doctest: +SKIP
    >>> retriever.retrieve("Who managed Nottingham Forest?", k=5)  # doctest: +SKIP
    """
    from graphrag_integrations.methods.clue.index import ClueIndex
    from graphrag_integrations.methods.clue.qiter import QIter

    index_params = set(inspect.signature(ClueIndex).parameters) - NOT_INDEX_OPTIONS
    index_opts = {k: v for k, v in options.items() if k in index_params}
    qiter_opts = {k: v for k, v in options.items() if k not in index_params}
    if "index_llm" in qiter_opts:
        index_opts["llm"] = qiter_opts.pop("index_llm")
    preset = qiter_opts.pop("preset", None)
    if preset not in (None, "paper"):
        raise ValueError(f"unknown Q-Iter preset {preset!r} (expected 'paper' or none)")
    index = ClueIndex.from_passages(
        list(passages), embedding=embedder, show_progress=show_progress, **index_opts
    )
    if preset == "paper":
        return QIter.paper(index, **qiter_opts)
    return QIter(index, **qiter_opts)
