"""Dense top-k retrieval: the baseline every method is measured against.

Exact cosine search over L2-normalised embeddings held in memory (no approximate index), so
its figures are reproducible.
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
from graphrag_integrations.baselines.corpus import CorpusIndex
from graphrag_integrations.baselines.params import DenseQueryParams
from graphrag_integrations.baselines.scored import ScoredPassages
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.index.base import build_from_documents
from graphrag_integrations.core.index.build_options import EmbeddingIndexOptions
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.params import NoParams
from graphrag_integrations.core.persistence import (
    Manifest,
    read_passages,
    read_vectors,
    write_passages,
)
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.validation import check_query
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

#: The passage vectors in an index directory.
VECTORS_FILE = "vectors.npy"


@dataclass
class EmbeddedPassages:
    """A prepared batch of a dense build: the passages and their vectors (row per passage)."""

    passages: list[Passage]
    vectors: FloatMatrix


@dataclass
class PassageEmbedder:
    """The per-passage half of a dense build: ``preparer(passages) -> EmbeddedPassages``.

    Examples
    --------
    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> PassageEmbedder(FakeEmbedder(8))([Passage("p1", "Paris.", "d")]).vectors.shape
    (1, 8)
    """

    embedder: Embedder
    show_progress: bool = False

    def __call__(self, passages: Sequence[Passage]) -> EmbeddedPassages:
        texts = [p.text for p in passages]
        return EmbeddedPassages(
            list(passages), self.embedder.embed(texts, show_progress=self.show_progress)
        )


class DenseRetriever(ScoredPassages, FrameworkSurface, CorpusIndex):
    """Exact dense retrieval with any
    :class:`~graphrag_integrations.core.encoders.embeddings.Embedder`.

    Parameters
    ----------
    passages : sequence of Passage
        The corpus, one vector each.
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        Normalised by :func:`~graphrag_integrations.core.encoders.embeddings.as_embedder`; ``None``
        is
        the offline all-MiniLM-L6-v2.
    index_params : NoParams, optional
        No index-time options.
    query_params : DenseQueryParams, optional
        ``k``: results when ``retrieve`` gets none.
    preset : str, optional
        ``"default"`` (instead of the params objects).
    show_progress : bool or None
        Progress bars; ``None`` (default): on for batches of at least
        :data:`~graphrag_integrations.core.progress.PROGRESS_MIN_PASSAGES` passages.

    Examples
    --------
    With a model-free embedder (``embedding=None`` would load the offline MiniLM):

    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> docs = ["Paris is in France.", "Rome is in Italy."]
    >>> r = DenseRetriever.from_documents(docs, embedding=FakeEmbedder())
    >>> [(hit.text, round(hit.score, 3)) for hit in r.retrieve("Where is Rome?", k=1)]
    [('Rome is in Italy.', 0.866)]
    >>> r.delete(r.passages[0].doc_id), r.delete("unknown-id")
    (True, False)
    """

    method = "dense"
    corpus_wide_scores = False  # cosines only: a filtered query equals an index of its matches
    query_params = QueryParamsField(DenseQueryParams)
    k_param = "k"

    def __init__(
        self,
        passages: Sequence[Passage] = (),
        embedding: Any = None,
        *,
        index_params: NoParams | None = None,
        query_params: DenseQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
    ) -> None:
        self.index_params, self.query_params = self.resolved_params(
            index_params, query_params, preset
        )
        self.embedder: Embedder = as_embedder(embedding)
        self.show_progress = show_progress
        self.passages: list[Passage] = []
        self._matrix: FloatMatrix = np.zeros((0, 0), dtype=np.float32)
        if passages:
            self.add_passages(passages)

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        documents: Iterable[Any],
        **options: Unpack[EmbeddingIndexOptions[NoParams, DenseQueryParams]],
    ) -> DenseRetriever:
        """Embed documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        ``options``: the constructor's arguments and the chunking, load, checkpoint and
        executor options every index takes
        (:class:`~graphrag_integrations.core.index.build_options.EmbeddingIndexOptions`).
        """
        return build_from_documents(cls, documents, options)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Embed and append ``passages``: the :meth:`merge` of their preparation."""
        self.merge([PassageEmbedder(self.embedder, self.show_progress)(passages)])

    def preparer(self) -> PassageEmbedder:
        """The per-passage half of the build (picklable: what an executor runs)."""
        return PassageEmbedder(self.embedder)

    def merge(self, prepared: Sequence[EmbeddedPassages]) -> None:
        """Append prepared batches (passages and their vectors, input order)."""
        parts = [p for p in prepared if p.passages]
        if not parts:
            return
        vecs = parts[0].vectors if len(parts) == 1 else np.vstack([p.vectors for p in parts])
        self._matrix = vecs if self._matrix.size == 0 else np.vstack([self._matrix, vecs])
        self.passages.extend(p for part in parts for p in part.passages)

    def delete(self, doc_id: str) -> bool:
        """Remove every passage (and vector) of ``doc_id``; ``False`` (and a warning) if none."""
        keep = [i for i, p in enumerate(self.passages) if p.doc_id != doc_id]
        if len(keep) == len(self.passages):
            return self._unknown_document(doc_id)
        self.passages = [self.passages[i] for i in keep]
        self._matrix = self._matrix[keep] if keep else np.zeros((0, 0), dtype=np.float32)
        return True

    # -- retrieval ------------------------------------------------------------------------
    def scores(self, query: str) -> FloatMatrix:
        """Cosine similarity of ``query`` to every passage (corpus order)."""
        if not self.passages:
            return np.zeros((0,), dtype=np.float32)
        return self.vector_scores(self.embedder.embed_query(check_query(query)))

    def vector_scores(self, vector: FloatMatrix) -> FloatMatrix:
        """Cosine similarity of an embedded query (shape ``(dimension,)``) to every passage."""
        if not self.passages:
            return np.zeros((0,), dtype=np.float32)
        return self._matrix @ vector

    # -- persistence (hooks of BaseIndex.persist / load) ----------------------------------
    def manifest(self) -> Manifest:
        """``k``, the passage count, the embedding model and dimension.

        The directory holds ``manifest.json``, ``vectors.npy`` and ``passages.json``
        (passage metadata must be JSON-serialisable: ``persist`` raises ``TypeError`` and
        writes nothing otherwise).
        """
        return Manifest(
            method=self.method,
            parameters={"k": self.default_k, "passages": len(self.passages)},
            models={"embedding": self.embedder.model_name},
            embedding_dimension=int(self._matrix.shape[1]) if self._matrix.size else None,
        )

    def _write_files(self, directory: Path) -> None:
        write_passages(directory, self.passages)
        np.save(directory / VECTORS_FILE, self._matrix, allow_pickle=False)

    @classmethod
    def _from_manifest(
        cls, src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> DenseRetriever:
        """``embedding`` defaults to the recorded model name (loaded with
        sentence-transformers; pass the same embedding object for other providers), ``k``
        to the recorded one."""
        recorded = options.get("embedding") is None
        if recorded:
            if manifest.embedding_model is None:
                raise IndexMismatchError(f"{src}: manifest records no embedding model")
            logger.info(
                "loading %s with the recorded embedding model %r", src, manifest.embedding_model
            )
            options["embedding"] = manifest.embedding_model
        index = super()._from_manifest(src, manifest, options)
        index.__dict__["_recorded_embedder"] = recorded
        return index

    def _check_embedder(self, src: Path, manifest: Manifest) -> None:
        # the recorded model has the recorded dimension: no need to load it now
        if not self.__dict__.pop("_recorded_embedder", False):
            super()._check_embedder(src, manifest)

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        passages = read_passages(src)
        matrix = read_vectors(src / VECTORS_FILE)
        expected = (len(passages), manifest.embedding_dimension) if passages else (0, 0)
        if matrix.shape != expected:
            raise IndexMismatchError(
                f"{src}: {VECTORS_FILE} has shape {matrix.shape}, expected {expected} "
                f"({len(passages)} passages, dimension {manifest.embedding_dimension})"
            )
        self.passages = passages
        self._matrix = np.asarray(matrix, dtype=np.float32)
