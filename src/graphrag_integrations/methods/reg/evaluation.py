"""Evaluation-registry entry for ReG (``"reg": "...methods.reg.evaluation:build"``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from graphrag_integrations.core.embeddings import Embedder
from graphrag_integrations.core.types import Passage, Retriever
from graphrag_integrations.methods.reg.params import ReorganisationParams, RetrieverParams


def _split(options: dict[str, Any], cls: type[Any]) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: options.pop(k) for k in list(options) if k in names})


def build(
    passages: list[Passage] | Sequence[Passage],
    embedder: Embedder,
    *,
    show_progress: bool = False,
    **options: Any,
) -> Retriever:
    """A :class:`RegIndex` whose KG is extracted from ``passages`` by the core NLP.

    Options named like a :class:`RetrieverParams` or :class:`ReorganisationParams` field go
    there; ``triples`` (a sequence of ``(h, r, t)``) builds from triples instead of the
    passages; ``scorer_dir`` loads a persisted, trained index's scorer; the rest go to
    :class:`RegIndex` (``k``, ``spacy_model``).

    Examples
    --------
    >>> import zlib, numpy as np
    >>> class Toy:
    ...     model_name, dimension = "toy", 8
    ...     def embed(self, texts, *, show_progress=False):
    ...         m = np.ones((len(texts), 8), np.float32)
    ...         return m / np.sqrt(8)
    ...     def embed_query(self, text):
    ...         return self.embed([text])[0]
    >>> r = build([], Toy(), triples=[("A", "r", "B")], max_length=1)
    >>> r.retrieve("[A]")[0].text
    'A -> [r] -> B'
    """
    from graphrag_integrations.methods.reg.index import RegIndex

    opts = dict(options)
    retriever = _split(opts, RetrieverParams)
    reorganisation = _split(opts, ReorganisationParams)
    triples = opts.pop("triples", None)
    scorer_dir = opts.pop("scorer_dir", None)
    common = {
        "embedding": embedder,
        "retriever": retriever,
        "reorganisation": reorganisation,
        "show_progress": show_progress,
        **opts,
    }
    if triples is not None:
        index = RegIndex.from_triples(triples, **common)
    else:
        index = RegIndex.from_passages(list(passages), **common)
    if scorer_dir is not None:
        index.scorer = RegIndex.load(scorer_dir, embedding=embedder).scorer
    return index
