"""Clue-RAG's method registration and its evaluation builder.

Importing this module is cheap: :func:`build` imports the index and Q-Iter on first call.

Examples
--------
>>> CLUE.name, sorted(CLUE.inputs), CLUE.presets
('clue', ['passages'], ('default', 'paper'))
>>> opts = CLUE.parse_options({"D": "2", "alpha": 0.5, "chunk_vectors": "encode"})
>>> opts.query_params.D, opts.index_params.alpha, opts.index_params.chunk_vectors
(2, 0.5, 'encode')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.registry import STORE_OBJECTS, MethodRegistration
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.params import ClueIndexParams, ClueQueryParams

if TYPE_CHECKING:
    from graphrag_integrations.methods.clue.qiter import QIter

__all__ = ["CLUE", "REGISTRATIONS", "build"]


def build(
    embedder: Any,
    *,
    passages: Sequence[Passage],
    index_params: ClueIndexParams | None = None,
    query_params: ClueQueryParams | None = None,
    show_progress: bool = False,
    llm: Any = None,
    index_llm: Any = None,
    reranker: Any = None,
    vector_index: Any = None,
    graph_store: Any = None,
) -> QIter:
    """Build a Clue index over ``passages`` and return its Q-Iter retriever.

    Parameters
    ----------
    embedder : Embedder
        Shared embedder (the index's ``embedding``).
    passages : sequence of Passage
        The corpus.
    index_params, query_params : ClueIndexParams, ClueQueryParams, optional
        Index and Q-Iter options (``None``: defaults).
    show_progress : bool
        Progress bars while indexing.
    llm : object with ``complete``, optional
        Q-Iter's query-entity extractor.
    index_llm : optional
        The index's LLM for knowledge-unit extraction (needed when ``alpha > 0``).
    reranker : Reranker or str, optional
        Q-Iter's path and chunk scorer (default: the fused scorer).
    vector_index, graph_store : optional
        Where the index's vectors and graph live (as for
        :class:`~graphrag_integrations.methods.clue.index.ClueIndex`).

    Examples
    --------
    >>> from graphrag_integrations.testing import FakeEmbedder
    >>> corpus = [Passage("p1", "Paris\\nParis is the capital of France.", "p1")]
    >>> qiter = build(FakeEmbedder(), passages=corpus, query_params=ClueQueryParams(D=1, N=1))
    >>> qiter.D, qiter.retrieve("capital of France")[0].id
    (1, 'p1')
    """
    from graphrag_integrations.methods.clue.index import ClueIndex

    index = ClueIndex.from_passages(
        list(passages),
        embedding=embedder,
        index_params=index_params,
        query_params=query_params,
        llm=index_llm,
        query_llm=llm,
        reranker=reranker,
        vector_index=vector_index,
        graph_store=graph_store,
        show_progress=show_progress,
    )
    return index.as_retriever()


CLUE = MethodRegistration(
    name="clue",
    index_class="graphrag_integrations.methods.clue.index:ClueIndex",
    builder="graphrag_integrations.methods.clue.registration:build",
    index_params=ClueIndexParams,
    query_params=ClueQueryParams,
    inputs=frozenset({"passages"}),
    objects={
        "llm": "Q-Iter's query-entity LLM (default: spaCy NER)",
        "index_llm": "the index's knowledge-unit LLM, needed when alpha > 0",
        "reranker": "Reranker or cross-encoder name scoring paths and chunks",
        **STORE_OBJECTS,
    },
    named_objects=frozenset({"llm", "index_llm", "reranker", "graph_store"}),
    description="Clue-RAG: chunk / knowledge-unit / entity graph with Q-Iter beam search",
)

#: What :mod:`graphrag_integrations.evaluation.registry` reads from this module.
REGISTRATIONS: tuple[MethodRegistration, ...] = (CLUE,)
