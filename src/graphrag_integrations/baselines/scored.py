"""Ranking for the baselines that score every passage of the corpus at once.

:class:`ScoredPassages` turns a ``scores(query)`` vector (corpus order) into ranked
:class:`~graphrag_integrations.core.types.RetrievedPassage` lists, with and without a
metadata filter; the dense and BM25 baselines share it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.filters import MetadataFilter, filter_mask, masked_top_k
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k


class ScoredPassages:
    """Mixin: ``_retrieve`` / ``_retrieve_filtered`` from the subclass's ``scores(query)``.

    The subclass holds ``passages`` (corpus order, as ``scores`` returns them), ``method``
    (recorded in each explanation) and ``default_k``.
    """

    passages: list[Passage]
    method: ClassVar[str]
    default_k: int

    def scores(self, query: str) -> FloatMatrix:
        """One score per passage of :attr:`passages` (corpus order)."""
        raise NotImplementedError

    def _hits(self, scores: FloatMatrix, rows: Iterable[int]) -> list[RetrievedPassage]:
        return [
            RetrievedPassage(self.passages[i], float(scores[i]), {"method": self.method})
            for i in rows
        ]

    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        k = check_k(k, self.default_k)
        scores = self.scores(query)
        return self._hits(scores, top_k(scores, k))

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter
    ) -> list[RetrievedPassage]:
        """Exact: only the matching passages compete (their scores masked before ranking)."""
        scores = self.scores(query)
        return self._hits(scores, masked_top_k(scores, filter_mask(where, self.passages), k))
