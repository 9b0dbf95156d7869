"""Evaluation-registry entry for Clue-RAG (``"clue": "...methods.clue.evaluation:build"``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphrag_integrations.core.embeddings import Embedder
from graphrag_integrations.core.types import Passage, Retriever

#: Options for :class:`ClueIndex` (``llm`` goes to Q-Iter's query-entity extraction; an
#: index-side LLM needs ``alpha`` > 0 and is passed as ``index_llm``).
INDEX_OPTIONS = frozenset(
    {
        "spacy_model",
        "title_prefix",
        "link_title",
        "excluded_labels",
        "alpha",
        "selection_value",
        "chunk_vectors",
        "k",
        "vector_index",
    }
)


def build(
    passages: list[Passage] | Sequence[Passage],
    embedder: Embedder,
    *,
    show_progress: bool = False,
    **options: Any,
) -> Retriever:
    """Build a Clue index over ``passages`` and return its Q-Iter retriever.

    Options named in :data:`INDEX_OPTIONS` go to :class:`ClueIndex`; the rest to
    :class:`QIter` (``K``, ``D``, ``M``, ``N``, ``reranker``, ``llm``, ablation switches...);
    ``preset="paper"`` selects :meth:`QIter.paper`.

    Examples
    --------
    >>> retriever = build(passages, embedder, D=2)  # doctest: +SKIP
    >>> retriever.retrieve("Who managed Nottingham Forest?", k=5)  # doctest: +SKIP
    """
    from graphrag_integrations.methods.clue.index import ClueIndex
    from graphrag_integrations.methods.clue.qiter import QIter

    index_opts = {k: v for k, v in options.items() if k in INDEX_OPTIONS}
    qiter_opts = {k: v for k, v in options.items() if k not in INDEX_OPTIONS}
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
