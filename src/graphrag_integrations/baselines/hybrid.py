"""Hybrid retrieval: dense and BM25 scores fused per query (the core
:class:`~graphrag_integrations.core.retrieval.fusion.ScoreFusion`).

Candidates are the union of the dense top-``k * candidate_factor`` and the BM25
top-``k * candidate_factor`` (default factor 4). Two fusions are offered:

``"minmax"`` (default)
    Each retriever's scores are min-max normalised over the candidate set (the dense scores
    of all candidates, then the BM25 scores of all candidates, each mapped to ``[0, 1]``; a
    constant list maps to 0), and the fused score is
    ``weight * dense_norm + (1 - weight) * bm25_norm``.
``"rrf"``
    Reciprocal rank fusion: ``weight / (rrf_k + rank_dense) + (1 - weight) / (rrf_k + rank_bm25)``
    with 1-based ranks in each retriever's full ranking and ``rrf_k = 60``.

Ties are broken by corpus order, so results are deterministic.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from typing_extensions import Unpack

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.baselines.bm25 import (
    BM25Retriever,
    PassageTokenizer,
    TokenizedPassages,
)
from graphrag_integrations.baselines.corpus import CorpusIndex
from graphrag_integrations.baselines.dense import (
    DenseRetriever,
    EmbeddedPassages,
    PassageEmbedder,
)
from graphrag_integrations.baselines.params import BM25QueryParams, HybridQueryParams
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.base import build_from_documents
from graphrag_integrations.core.index.build_options import EmbeddingIndexOptions
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.params import NoParams
from graphrag_integrations.core.persistence import (
    Manifest,
)
from graphrag_integrations.core.retrieval.filters import MetadataFilter, filter_mask
from graphrag_integrations.core.retrieval.fusion import Fusion, ScoreFusion, minmax, ranks
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_k, check_query
from graphrag_integrations.errors import EmptyCorpusError, IndexMismatchError

__all__ = ["Fusion", "HybridPreparer", "HybridRetriever", "minmax", "ranks"]

logger = logging.getLogger(__name__)


@dataclass
class HybridPreparer:
    """The per-passage half of a hybrid build: both sides' preparers on the same batch.

    Examples
    --------
    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> prep = HybridPreparer(PassageEmbedder(FakeEmbedder(8)), PassageTokenizer())
    >>> dense, sparse = prep([Passage("p1", "Rome is in Italy.", "d")])
    >>> dense.vectors.shape, sparse.tokens
    ((1, 8), [['rome', 'italy']])
    """

    dense: PassageEmbedder
    sparse: PassageTokenizer

    def __call__(self, passages: Sequence[Passage]) -> tuple[EmbeddedPassages, TokenizedPassages]:
        return self.dense(passages), self.sparse(passages)


class HybridRetriever(FrameworkSurface, CorpusIndex):
    """Dense + BM25 score fusion over one shared corpus.

    Parameters
    ----------
    dense : DenseRetriever
        Dense side (its ``scores(query)`` gives every cosine score).
    bm25 : BM25Retriever
        Sparse side, over the same passages in the same order.
    index_params : NoParams, optional
        No index-time options.
    query_params : HybridQueryParams, optional
        ``weight`` (of the dense side in ``[0, 1]``; BM25 gets ``1 - weight``), ``fusion``
        (``"minmax"`` or ``"rrf"``, see the module docstring), ``candidate_factor`` (each
        side contributes its top ``k * candidate_factor`` candidates), ``rrf_k`` (rank
        offset of reciprocal rank fusion), ``k`` (results when ``retrieve`` gets none).
    preset : str, optional
        ``"default"`` (instead of the params objects).

    Raises
    ------
    IndexMismatchError
        If the two retrievers do not hold the same passages in the same order.
    ValueError
        On a weight outside ``[0, 1]``, an unknown fusion or a non-positive factor.

    Examples
    --------
    With a model-free embedder (``embedding=None`` would load the offline MiniLM):

    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> docs = ["Paris is in France.", "Rome is in Italy."]
    >>> hybrid = HybridRetriever.from_documents(docs, embedding=FakeEmbedder())
    >>> top = hybrid.retrieve("Where is Paris?", k=1)[0]
    >>> top.text, top.explanation
    ('Paris is in France.', {'method': 'hybrid', 'fusion': 'minmax', 'weight': 0.5})
    """

    method = "hybrid"
    query_params = QueryParamsField(HybridQueryParams)
    k_param = "k"

    def __init__(
        self,
        dense: DenseRetriever,
        bm25: BM25Retriever,
        *,
        index_params: NoParams | None = None,
        query_params: HybridQueryParams | None = None,
        preset: str | None = None,
    ) -> None:
        self.index_params, self.query_params = self.resolved_params(
            index_params, query_params, preset
        )
        self.dense = dense
        self.bm25 = bm25
        self._check_aligned()

    @property
    def scoring(self) -> ScoreFusion:
        """The fusion of :attr:`query_params` (a bound retriever's during its queries)."""
        p = self.query_params
        return ScoreFusion(p.weight, p.fusion, p.candidate_factor, p.rrf_k)

    def _check_aligned(self) -> None:
        dense_ids = [p.id for p in self.dense.passages]
        bm25_ids = [p.id for p in self.bm25.passages]
        if dense_ids != bm25_ids:
            raise IndexMismatchError(
                "dense and BM25 retrievers hold different passages "
                f"({len(dense_ids)} vs {len(bm25_ids)}); build both from the same corpus"
            )

    @property
    def weight(self) -> float:
        """Weight of the dense side."""
        return self.scoring.weight

    @property
    def fusion(self) -> Fusion:
        """``"minmax"`` or ``"rrf"``."""
        return self.scoring.fusion

    @property
    def candidate_factor(self) -> int:
        """Each side contributes its top ``k * candidate_factor`` candidates."""
        return self.scoring.candidate_factor

    @property
    def rrf_k(self) -> int:
        """Rank offset of reciprocal rank fusion."""
        return self.scoring.rrf_k

    @property
    def passages(self) -> list[Passage]:  # type: ignore[override]  # read-only: the sides' list
        """The shared corpus (the dense side's list)."""
        return self.dense.passages

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        documents: Iterable[Any],
        **options: Unpack[EmbeddingIndexOptions[NoParams, HybridQueryParams]],
    ) -> HybridRetriever:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks,
        on both sides.

        ``options``: the arguments of :meth:`from_passages` (``embedding`` as in
        :class:`DenseRetriever`) and the chunking, load, checkpoint and executor options
        every index takes
        (:class:`~graphrag_integrations.core.index.build_options.EmbeddingIndexOptions`).
        An executor runs the per-passage work of both sides.
        """
        return build_from_documents(cls, documents, options)

    @classmethod
    def from_passages(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        passages: Sequence[Passage],
        embedding: Any = None,
        *,
        index_params: NoParams | None = None,
        query_params: HybridQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
    ) -> HybridRetriever:
        """Build both sides over ``passages`` (``embedding`` as in :class:`DenseRetriever`)."""
        if not passages:
            raise EmptyCorpusError("no passages to index")
        dense = DenseRetriever(passages, embedding, show_progress=show_progress)
        return cls.from_dense(
            dense, index_params=index_params, query_params=query_params, preset=preset
        )

    @classmethod
    def from_dense(
        cls,
        dense: DenseRetriever,
        *,
        index_params: NoParams | None = None,
        query_params: HybridQueryParams | None = None,
        preset: str | None = None,
    ) -> HybridRetriever:
        """Add a BM25 side to an existing dense retriever (its passages are not re-embedded)."""
        bm25 = BM25Retriever(dense.passages, query_params=BM25QueryParams(k=dense.default_k))
        return cls(dense, bm25, index_params=index_params, query_params=query_params, preset=preset)

    @classmethod
    def for_build(
        cls,
        embedding: Any = None,
        *,
        index_params: NoParams | None = None,
        query_params: HybridQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
    ) -> HybridRetriever:
        """An empty index (``embedding`` as in :class:`DenseRetriever`): what a build through an
        executor merges into."""
        dense = DenseRetriever((), embedding, show_progress=show_progress)
        return cls.from_dense(
            dense, index_params=index_params, query_params=query_params, preset=preset
        )

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Add ``passages`` to both sides (``insert`` calls it)."""
        self.dense.add_passages(passages)
        self.bm25.add_passages(passages)

    def preparer(self) -> HybridPreparer:
        """The per-passage half of the build, both sides (picklable: what an executor runs)."""
        return HybridPreparer(self.dense.preparer(), self.bm25.preparer())

    def merge(self, prepared: Sequence[tuple[EmbeddedPassages, TokenizedPassages]]) -> None:
        """Append prepared batches (input order) to both sides."""
        self.dense.merge([dense for dense, _ in prepared])
        self.bm25.merge([sparse for _, sparse in prepared])

    def delete(self, doc_id: str) -> bool:
        """Remove ``doc_id`` from both sides; ``False`` (and one warning) if it is unknown."""
        if all(p.doc_id != doc_id for p in self.passages):
            return self._unknown_document(doc_id)
        self.dense.delete(doc_id)
        self.bm25.delete(doc_id)
        return True

    # -- retrieval ------------------------------------------------------------------------
    def fused_scores(
        self, query: str, k: int, where: MetadataFilter | None = None
    ) -> tuple[list[int], FloatMatrix]:
        """Candidate indices (corpus order) and their fused scores for a top-``k`` query.

        With ``where``, only the matching passages are candidates (both sides are ranked
        among them, so the fusion is the one of the filtered corpus).
        """
        query = check_query(query)
        scoring = self.scoring
        dense = self.dense.scores(query)
        sparse = self.bm25.scores(query)
        if dense.size == 0:
            return [], np.zeros((0,), dtype=np.float32)
        if where is None:
            cands = scoring.candidates(dense, sparse, k)
        else:
            mask = filter_mask(where, self.passages)
            cands = scoring.candidates(dense, sparse, k, mask)
            if not cands:
                return [], np.zeros((0,), dtype=np.float32)
            dense, sparse = scoring.restrict(dense, sparse, mask)  # RRF ranks stay exact
        fused = scoring.fuse(dense, sparse, cands)
        return cands, np.asarray(fused, dtype=np.float32)

    def _retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        return self._retrieve_filtered(query, check_k(k, self.default_k), None)

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter | None
    ) -> list[RetrievedPassage]:
        """Exact: the candidates of both sides come from the matching passages only."""
        cands, fused = self.fused_scores(query, k, where)
        # top_k_indices breaks ties by position, and candidates are in corpus order
        best = top_k(fused, k)
        explanation = {"method": self.method, "fusion": self.fusion, "weight": self.weight}
        return [
            RetrievedPassage(self.passages[cands[j]], float(fused[j]), dict(explanation))
            for j in best
        ]

    # -- persistence (hooks of BaseIndex.persist / load) ----------------------------------
    def manifest(self) -> Manifest:
        """The fusion settings; both sides are persisted as indexes of their own
        (``dense/``, ``bm25/``; the manifest's checksums cover their files too)."""
        return Manifest(
            method=self.method,
            parameters={
                "k": self.default_k,
                "weight": self.weight,
                "fusion": self.fusion,
                "candidate_factor": self.candidate_factor,
                "rrf_k": self.rrf_k,
            },
            models={"embedding": self.dense.embedder.model_name},
        )

    def _write_files(self, directory: Path) -> None:
        self.dense.persist(directory / "dense")
        self.bm25.persist(directory / "bm25")

    @classmethod
    def _from_manifest(
        cls, src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> HybridRetriever:
        """Both sides loaded (``embedding=`` goes to the dense side, which checks its model
        and dimension), the recorded fusion settings unless ``options`` gives them."""
        dense = DenseRetriever.load(src / "dense", embedding=options.pop("embedding", None))
        bm25 = BM25Retriever.load(src / "bm25")
        if "query_params" not in options and "preset" not in options:
            options["query_params"] = HybridQueryParams.from_options(manifest.parameters)
        return cls(dense, bm25, **options)

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        return None  # both sides were read by _from_manifest
