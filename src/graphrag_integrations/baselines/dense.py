"""Dense top-k retrieval: the baseline every method is measured against.

Exact cosine search over L2-normalised embeddings held in memory (no approximate index), so
its figures are reproducible.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.baselines.params import DenseQueryParams
from graphrag_integrations.baselines.scored import ScoredPassages
from graphrag_integrations.core.documents import DecodeErrors, LoadReport
from graphrag_integrations.core.embeddings import Embedder, FloatMatrix, as_embedder
from graphrag_integrations.core.index_base import (
    DEFAULT_SPLITTER,
    BaseIndex,
    CheckpointDir,
    DocumentPaths,
    build_from_documents,
    check_query,
    document_ids,
    drop_indexed,
)
from graphrag_integrations.core.params import NoParams, resolve_params
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    check_embedder,
    check_manifest,
    read_manifest,
    read_passages,
    read_vectors,
    reading_index,
    write_manifest,
    write_passages,
)
from graphrag_integrations.core.query_binding import QueryParamsField
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError, IndexMismatchError

logger = logging.getLogger(__name__)


class DenseRetriever(ScoredPassages, FrameworkSurface, BaseIndex):
    """Exact dense retrieval with any :class:`~graphrag_integrations.core.embeddings.Embedder`.

    Parameters
    ----------
    passages : sequence of Passage
        The corpus, one vector each.
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        Normalised by :func:`~graphrag_integrations.core.embeddings.as_embedder`; ``None`` is
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
        self.index_params, self.query_params = resolve_params(
            NoParams,
            DenseQueryParams,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
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
        *,
        embedding: Any = None,
        index_params: NoParams | None = None,
        query_params: DenseQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
        splitter: Any = DEFAULT_SPLITTER,
        chunking: bool | None = True,
        errors: DecodeErrors = "strict",
        report: LoadReport | None = None,
        path: DocumentPaths = None,
        pattern: str | None = None,
        checkpoint_dir: CheckpointDir = None,
        checkpoint_every: int | None = None,
    ) -> DenseRetriever:
        """Embed documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        The index arguments are the constructor's; ``splitter`` / ``chunking`` and the load
        options (``errors``, ``report``, ``path``, ``pattern``) and ``checkpoint_dir`` /
        ``checkpoint_every`` are those of :meth:`BaseIndex.from_documents`.
        """
        return build_from_documents(
            cls,
            documents,
            splitter=splitter,
            chunking=chunking,
            errors=errors,
            report=report,
            path=path,
            pattern=pattern,
            embedding=embedding,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
            show_progress=show_progress,
        )

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], **kwargs: Any) -> DenseRetriever:
        """Build from already chunked passages."""
        if not passages:
            raise EmptyCorpusError("no passages to index")
        return cls(passages, **kwargs)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Embed and append ``passages``."""
        vecs = self.embedder.embed([p.text for p in passages], show_progress=self.show_progress)
        self._matrix = vecs if self._matrix.size == 0 else np.vstack([self._matrix, vecs])
        self.passages.extend(passages)

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Cut, embed and add documents; returns the ids of the documents added.

        Documents already indexed (same id) are skipped with a warning; ``options`` (load
        and chunking options) go to :meth:`~BaseIndex.document_passages`.
        """
        indexed = {p.doc_id for p in self.passages}
        passages = drop_indexed(self.document_passages(documents, options), indexed)
        if passages:
            self.add_passages(passages)
        return document_ids(passages)

    def doc_ids(self) -> list[str]:
        """The ids of the documents indexed, sorted."""
        return sorted(document_ids(self.passages))

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
        q = self.embedder.embed_query(check_query(query))
        return self._matrix @ q

    # -- persistence ----------------------------------------------------------------------
    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the index to directory ``path`` atomically.

        The directory holds ``manifest.json`` (method, ``k``, embedding model and dimension),
        ``vectors.npy`` and ``passages.json``; an existing index there is replaced only once
        the new one is complete.

        Raises
        ------
        TypeError
            If passage metadata is not JSON-serialisable (nothing is written).
        IndexExistsError
            If ``path`` is a non-empty folder that is not a dense index and ``overwrite`` is
            false (see :func:`~graphrag_integrations.core.persistence.atomic_directory`).
        """
        dimension = int(self._matrix.shape[1]) if self._matrix.size else None
        with atomic_directory(path, overwrite=overwrite, method=self.method) as tmp:
            write_passages(tmp, self.passages)
            np.save(tmp / "vectors.npy", self._matrix, allow_pickle=False)
            write_manifest(
                tmp,
                Manifest(
                    method=self.method,
                    parameters={"k": self.default_k, "passages": len(self.passages)},
                    models={"embedding": self.embedder.model_name},
                    embedding_dimension=dimension,
                ),
            )

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> DenseRetriever:
        """Load an index written by :meth:`persist`.

        Parameters
        ----------
        path : str or Path
            The index directory.
        **kwargs
            Constructor arguments. ``embedding`` defaults to the model name recorded in the
            manifest (loaded with sentence-transformers; pass the same embedding object for
            other providers); ``query_params`` defaults to the recorded ``k``.

        Raises
        ------
        IndexNotFoundError
            If ``path`` holds no index.
        IndexMismatchError
            If the index was written by another method, with another embedding model, in a
            newer format, or its files are incomplete or inconsistent.
        """
        with reading_index(path) as src:
            manifest = check_manifest(read_manifest(src), method=cls.method)
            given = kwargs.get("embedding") is not None
            if not given:
                if manifest.embedding_model is None:
                    raise IndexMismatchError(f"{src}: manifest records no embedding model")
                logger.info(
                    "loading %s with the recorded embedding model %r", src, manifest.embedding_model
                )
                kwargs["embedding"] = manifest.embedding_model
            recorded_k = manifest.parameters.get("k")
            if isinstance(recorded_k, int) and "preset" not in kwargs:
                kwargs.setdefault("query_params", DenseQueryParams(k=recorded_k))
            obj = cls(**kwargs)
            if given:  # model name and dimension (the recorded model has the recorded dimension)
                check_embedder(manifest, obj.embedder, source=src)
            else:
                check_manifest(manifest, method=cls.method, embedding_model=obj.embedder.model_name)
            passages = read_passages(src)
            matrix = read_vectors(src / "vectors.npy")
            expected = (len(passages), manifest.embedding_dimension) if passages else (0, 0)
            if matrix.shape != expected:
                raise IndexMismatchError(
                    f"{src}: vectors.npy has shape {matrix.shape}, expected {expected} "
                    f"({len(passages)} passages, dimension {manifest.embedding_dimension})"
                )
            obj.passages = passages
            obj._matrix = np.asarray(matrix, dtype=np.float32)
            return obj
