"""Resumable query-set generation over a corpus, document by document (closed prefixes).

:func:`generate_by_document` sends the chunks of a corpus to a Doc2Query generator a few
documents at a time, in the given document order (LiHuaWorld: chat-time order), and rewrites
the query set after every batch with the documents it now covers completely
(``extra[done_key]``). A crash loses at most one batch (and the LLM cache keeps what that
batch had finished); a rerun skips every chunk the query set already holds, so any prefix of
a run is a *closed* sub-corpus an evaluation can use honestly
(:mod:`graphrag_integrations.evaluation.lihuaworld_run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.core.batching import batches
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.qcg.prompts import QAPair
from graphrag_integrations.methods.qcg.query_set import QuerySet

__all__ = ["covered_documents", "generate_by_document"]


def covered_documents(passages: Sequence[Passage], query_set: QuerySet) -> list[str]:
    """Documents (``doc_id``, first-seen order) every chunk of which the query set holds.

    A chunk whose generation gave no pair counts as covered (the generator has been through
    it; the set stores an empty list).

    Examples
    --------
    >>> qs = QuerySet({}, model="m", prompt_hash="0" * 16, M=1)
    >>> qs.update([("a0", []), ("b0", [QAPair("q?", "a")])])
    >>> chunks = [Passage("a-0", "a0", "a"), Passage("b-0", "b0", "b"), Passage("b-1", "b1", "b")]
    >>> covered_documents(chunks, qs)
    ['a']
    """
    status: dict[str, bool] = {}
    for p in passages:
        status[p.doc_id] = status.get(p.doc_id, True) and query_set.get(p.text) is not None
    return [doc for doc, ok in status.items() if ok]


def generate_by_document(
    passages: Sequence[Passage],
    query_set: QuerySet,
    generate: Callable[[list[str]], list[list[QAPair]]],
    *,
    group: int = 8,
    out: str | Path | None = None,
    done_key: str = "chats_done",
    corpus: Sequence[Passage] | None = None,
    on_batch: Callable[[dict[str, Any]], None] | None = None,
) -> QuerySet:
    """Generate the pairs ``query_set`` lacks, ``group`` documents at a time.

    Parameters
    ----------
    passages : sequence of Passage
        The chunks, in the order their documents are to be processed (documents contiguous).
    query_set : QuerySet
        Updated in place (seeded sets and earlier runs: their chunks are skipped).
    generate : callable
        ``chunk texts -> pairs per chunk`` (:meth:`Doc2QueryGenerator.generate`).
    group : int
        Documents per batch (the query set is rewritten after each).
    out : path, optional
        Where the query set is saved after every batch.
    done_key : str
        ``extra`` key listing the documents of ``corpus`` covered completely.
    corpus : sequence of Passage, optional
        The whole corpus, when ``passages`` is a slice of it (parallel runs): coverage is
        computed over it (default: ``passages``).
    on_batch : callable, optional
        Called after each batch (after the save) with ``{"documents", "chunks", "seconds",
        "covered"}``.

    Returns
    -------
    QuerySet
        ``query_set``.

    Examples
    --------
    >>> chunks = [Passage(f"{d}-0", f"text {d}", d) for d in "abc"]
    >>> qs = QuerySet({}, model="m", prompt_hash="0" * 16, M=1)
    >>> calls = []
    >>> def fake(texts):
    ...     calls.append(texts)
    ...     return [[QAPair(f"What is {t}?", t)] for t in texts]
    >>> _ = generate_by_document(chunks, qs, fake, group=2)
    >>> calls, qs.extra["chats_done"]
    ([['text a', 'text b'], ['text c']], ['a', 'b', 'c'])
    """
    if group < 1:
        raise ValueError(f"group must be >= 1, got {group}")
    docs: dict[str, list[Passage]] = {}
    for p in passages:
        docs.setdefault(p.doc_id, []).append(p)
    order = list(docs)
    whole = passages if corpus is None else corpus
    query_set.extra[done_key] = covered_documents(whole, query_set)
    for batch in batches(order, group):
        texts = list(
            dict.fromkeys(p.text for d in batch for p in docs[d] if query_set.get(p.text) is None)
        )
        if not texts:
            continue
        t0 = time.perf_counter()
        query_set.update(zip(texts, generate(texts), strict=True))
        took = time.perf_counter() - t0
        query_set.extra[done_key] = covered_documents(whole, query_set)
        if out is not None:
            query_set.save(out)
        if on_batch is not None:
            on_batch(
                {
                    "documents": batch,
                    "chunks": len(texts),
                    "seconds": took,
                    "covered": len(query_set.extra[done_key]),
                }
            )
    return query_set
