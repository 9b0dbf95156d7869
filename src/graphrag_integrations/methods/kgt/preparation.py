"""The per-passage half of a KG-Translator (ParseKG) build: parse, hyperedges, vectors.

:class:`KGTPreparer` parses a batch of passages with spaCy (one parse per passage), turns
each parse into ParseKG hyperedges (:func:`~.parsekg.hyperedges`) and, unless passage vectors
are ``"lazy"``, embeds the passages while the parse runs in a background thread. It never
reads the index, so an executor can run it on workers (a pickled copy loads its models there);
``ParseKGTranslatorRetriever.merge`` adds every prepared batch to the store at once, in input
order, and refreshes the constraint indexes once. ``add_passages`` is that merge of this
preparation.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix
from graphrag_integrations.core.text.chunking import split_title
from graphrag_integrations.core.text.nlp import ParsedText, SpacyNLP
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.params import KGTIndexParams
from graphrag_integrations.methods.kgt.parsekg import Hyperedge, hyperedges

__all__ = ["KGTPreparer", "PreparedHyperedges"]


@dataclass
class PreparedHyperedges:
    """What a batch of passages adds to a KG-Translator index (picklable).

    ``vectors`` maps passage id -> vector (empty with lazy passage vectors); ``timings`` holds
    the ``nlp`` and ``embedding`` seconds (overlapping) and ``total``.
    """

    passages: list[Passage]
    edges: list[Hyperedge]
    vectors: dict[str, FloatMatrix]
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class KGTPreparer:
    """Prepare batches of passages for a KG-Translator index (see the module notes)."""

    embedder: Embedder
    parser: SpacyNLP
    params: KGTIndexParams
    show_progress: bool = False

    def __call__(self, passages: Sequence[Passage]) -> PreparedHyperedges:
        """Hyperedges and vectors of ``passages`` (distinct, not indexed yet)."""
        new = list(passages)
        t0 = time.perf_counter()
        bodies = [split_title(p)[1] for p in new]
        vectors: dict[str, FloatMatrix] = {}
        t_embed = 0.0
        if self.params.passage_vectors == "lazy":
            parsed, t_nlp = self._timed_parse(bodies)
        else:
            with ThreadPoolExecutor(1, thread_name_prefix="kgt-parse") as pool:
                parsing = pool.submit(self._timed_parse, bodies)
                matrix = self.embedder.embed(
                    [p.text for p in new], show_progress=self.show_progress
                )
                vectors = {p.id: matrix[i] for i, p in enumerate(new)}
                t_embed = time.perf_counter() - t0
                parsed, t_nlp = parsing.result()
        params = self.params
        edges = [
            e
            for p, doc in zip(new, parsed, strict=True)
            for e in hyperedges(
                p, doc, excluded_head_labels=params.excluded_head_labels, mask=params.mask
            )
        ]
        return PreparedHyperedges(
            new,
            edges,
            vectors,
            {"nlp": t_nlp, "embedding": t_embed, "total": time.perf_counter() - t0},
        )

    def _timed_parse(self, bodies: Sequence[str]) -> tuple[list[ParsedText], float]:
        start = time.perf_counter()
        parsed = self.parser.parse_many(bodies, show_progress=self.show_progress)
        return parsed, time.perf_counter() - start
