"""Sparse BM25 retrieval (``bm25s``): the lexical baseline every method is measured against.

Tokenisation and scoring are the core's :class:`~graphrag_integrations.core.lexical.BM25Scorer`
(``bm25s.tokenize`` defaults plus English stopwords, no stemming; ``bm25s.BM25`` defaults:
Lucene variant, ``k1=1.5``, ``b=0.75``).

``bm25s`` builds a static sparse matrix and has no incremental add, so :meth:`insert` and
:meth:`delete` re-tokenise the whole corpus and rebuild the matrix (linear in the corpus size;
about a second per 10k short passages on one CPU core).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.baselines.params import BM25QueryParams
from graphrag_integrations.baselines.scored import ScoredPassages
from graphrag_integrations.core.documents import DecodeErrors, LoadReport
from graphrag_integrations.core.embeddings import FloatMatrix
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
from graphrag_integrations.core.lexical import MATRIX_DIR as _MATRIX_DIR
from graphrag_integrations.core.lexical import STOPWORDS, BM25Scorer, tokenize
from graphrag_integrations.core.params import NoParams, resolve_params
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    check_manifest,
    read_manifest,
    read_passages,
    reading_index,
    write_manifest,
    write_passages,
)
from graphrag_integrations.core.query_binding import QueryParamsField
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError, IndexMismatchError

__all__ = ["STOPWORDS", "BM25Retriever", "tokenize"]

logger = logging.getLogger(__name__)

_MANIFEST = "manifest.json"
_PASSAGES = "passages.json"


class BM25Retriever(ScoredPassages, FrameworkSurface, BaseIndex):
    """BM25 retrieval over in-memory passages.

    Parameters
    ----------
    passages : sequence of Passage
        The corpus.
    index_params : NoParams, optional
        No index-time options (``bm25s`` defaults).
    query_params : BM25QueryParams, optional
        ``k``: results when ``retrieve`` gets none.
    preset : str, optional
        ``"default"`` (instead of the params objects).

    Notes
    -----
    Scores are BM25 scores (unbounded, ``>= 0``); ties are broken by corpus order. A query
    made only of stopwords or out-of-vocabulary words scores 0 everywhere, and the first
    ``k`` passages in corpus order are returned with score 0.

    Examples
    --------
    >>> r = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    >>> r.retrieve("Where is Rome?", k=1)[0].text
    'Rome is in Italy.'
    """

    method = "bm25"
    query_params = QueryParamsField(BM25QueryParams)
    k_param = "k"

    def __init__(
        self,
        passages: Sequence[Passage] = (),
        *,
        index_params: NoParams | None = None,
        query_params: BM25QueryParams | None = None,
        preset: str | None = None,
    ) -> None:
        self.index_params, self.query_params = resolve_params(
            NoParams,
            BM25QueryParams,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
        )
        self.passages: list[Passage] = list(passages)
        self._scorer = BM25Scorer()
        self._reindex()

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        documents: Iterable[Any],
        *,
        index_params: NoParams | None = None,
        query_params: BM25QueryParams | None = None,
        preset: str | None = None,
        splitter: Any = DEFAULT_SPLITTER,
        chunking: bool | None = True,
        errors: DecodeErrors = "strict",
        report: LoadReport | None = None,
        path: DocumentPaths = None,
        pattern: str | None = None,
        checkpoint_dir: CheckpointDir = None,
        checkpoint_every: int | None = None,
    ) -> BM25Retriever:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        The index arguments are the constructor's; ``splitter`` / ``chunking``, the load
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
            index_params=index_params,
            query_params=query_params,
            preset=preset,
        )

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], **kwargs: Any) -> BM25Retriever:
        """Build from already chunked passages (what the evaluation harness uses)."""
        if not passages:
            raise EmptyCorpusError("no passages to index")
        return cls(passages, **kwargs)

    def _reindex(self) -> None:
        """Rebuild the BM25 matrix from :attr:`passages` (bm25s has no incremental add)."""
        self._scorer = BM25Scorer([p.text for p in self.passages])

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Append ``passages`` and rebuild the matrix."""
        self.passages.extend(passages)
        self._reindex()

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Add documents and rebuild the whole BM25 matrix (see the module notes); returns the
        ids of the documents added (documents already indexed are skipped with a warning).
        ``options`` (load and chunking options) go to :meth:`~BaseIndex.document_passages`."""
        indexed = {p.doc_id for p in self.passages}
        passages = drop_indexed(self.document_passages(documents, options), indexed)
        if passages:
            self.add_passages(passages)
        return document_ids(passages)

    def doc_ids(self) -> list[str]:
        """The ids of the documents indexed, sorted."""
        return sorted(document_ids(self.passages))

    def delete(self, doc_id: str) -> bool:
        """Remove every passage of ``doc_id`` and rebuild the whole BM25 matrix; ``False`` (and a
        warning) if no passage has this id."""
        kept = [p for p in self.passages if p.doc_id != doc_id]
        if len(kept) == len(self.passages):
            return self._unknown_document(doc_id)
        self.passages = kept
        self._reindex()
        return True

    # -- retrieval ------------------------------------------------------------------------
    def scores(self, query: str) -> FloatMatrix:
        """BM25 score of ``query`` against every passage (corpus order)."""
        return self._scorer.scores(check_query(query))

    # -- persistence ----------------------------------------------------------------------
    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write passages, the BM25 matrix (``bm25s`` format) and a manifest to ``path``
        atomically (an existing index there is replaced only once the new one is complete).

        Raises
        ------
        IndexExistsError
            If ``path`` is a non-empty folder that is not a BM25 index and ``overwrite`` is
            false (see :func:`~graphrag_integrations.core.persistence.atomic_directory`).
        """
        with atomic_directory(path, overwrite=overwrite, method=self.method) as tmp:
            write_passages(tmp, self.passages)
            self._scorer.save(tmp / _MATRIX_DIR)
            write_manifest(
                tmp,
                Manifest(
                    method=self.method,
                    parameters={
                        "k": self.default_k,
                        "passages": len(self.passages),
                        "stopwords": STOPWORDS,
                    },
                ),
            )

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> BM25Retriever:
        """Load an index written by :meth:`persist`.

        Raises
        ------
        IndexNotFoundError
            If ``path`` holds no manifest.
        CorruptIndexError
            Naming the file, if a file is missing, truncated or altered.
        IndexMismatchError
            If the manifest is another method's, or the passage count does not match.
        """
        with reading_index(path) as src:
            manifest = check_manifest(read_manifest(src), method=cls.method)
            recorded_k = manifest.parameters.get("k")
            if isinstance(recorded_k, int) and "preset" not in kwargs:
                kwargs.setdefault("query_params", BM25QueryParams(k=recorded_k))
            obj = cls(**kwargs)
            obj.passages = read_passages(src)
            if len(obj.passages) != manifest.parameters.get("passages"):
                raise IndexMismatchError(
                    f"{src}: manifest lists {manifest.parameters.get('passages')} passages, "
                    f"found {len(obj.passages)}"
                )
            obj._scorer = BM25Scorer.load(src / _MATRIX_DIR, len(obj.passages))
            return obj
