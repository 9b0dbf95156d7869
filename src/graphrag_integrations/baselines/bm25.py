"""Sparse BM25 retrieval (``bm25s``): the lexical baseline every method is measured against.

Tokenisation and scoring are the core's
:class:`~graphrag_integrations.core.retrieval.lexical.BM25Scorer`
(``bm25s.tokenize`` defaults plus English stopwords, no stemming; ``bm25s.BM25`` defaults:
Lucene variant, ``k1=1.5``, ``b=0.75``).

``bm25s`` builds a static sparse matrix and has no incremental add, so :meth:`insert` and
:meth:`delete` re-tokenise the whole corpus and rebuild the matrix (linear in the corpus size;
about a second per 10k short passages on one CPU core).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.baselines.corpus import CorpusIndex
from graphrag_integrations.baselines.params import BM25QueryParams
from graphrag_integrations.baselines.scored import ScoredPassages
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.base import build_from_documents
from graphrag_integrations.core.index.build_options import IndexOptions
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.params import NoParams
from graphrag_integrations.core.persistence import Manifest, read_passages, write_passages
from graphrag_integrations.core.retrieval.lexical import MATRIX_DIR as _MATRIX_DIR
from graphrag_integrations.core.retrieval.lexical import STOPWORDS, BM25Scorer, tokenize
from graphrag_integrations.core.types import Passage
from graphrag_integrations.core.validation import check_query
from graphrag_integrations.errors import IndexMismatchError

__all__ = ["STOPWORDS", "BM25Retriever", "PassageTokenizer", "TokenizedPassages", "tokenize"]

logger = logging.getLogger(__name__)


@dataclass
class TokenizedPassages:
    """A prepared batch of a BM25 build: the passages and their tokens (row per passage)."""

    passages: list[Passage]
    tokens: list[list[str]]


@dataclass
class PassageTokenizer:
    """The per-passage half of a BM25 build: ``preparer(passages) -> TokenizedPassages``.

    Examples
    --------
    >>> PassageTokenizer()([Passage("p1", "The capital of France is Paris.", "d")]).tokens
    [['capital', 'france', 'paris']]
    """

    def __call__(self, passages: Sequence[Passage]) -> TokenizedPassages:
        batch = list(passages)
        return TokenizedPassages(batch, tokenize([p.text for p in batch]) if batch else [])


class BM25Retriever(ScoredPassages, FrameworkSurface, CorpusIndex):
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
        self.index_params, self.query_params = self.resolved_params(
            index_params, query_params, preset
        )
        self.passages: list[Passage] = list(passages)
        #: The tokens of each passage (row-aligned; ``None`` until needed after a load).
        self._tokens: list[list[str]] | None = None
        self._scorer = BM25Scorer()
        self._reindex()

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls, documents: Iterable[Any], **options: Unpack[IndexOptions[NoParams, BM25QueryParams]]
    ) -> BM25Retriever:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        ``options``: the constructor's arguments and the chunking, load, checkpoint and
        executor options every index takes
        (:class:`~graphrag_integrations.core.index.build_options.IndexOptions`).
        An executor runs the tokenisation.
        """
        return build_from_documents(cls, documents, options)

    def _reindex(self) -> None:
        """Rebuild the BM25 matrix from :attr:`passages` (bm25s has no incremental add)."""
        self._tokens = tokenize([p.text for p in self.passages])
        self._scorer = BM25Scorer(tokens=self._tokens)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Append ``passages`` and rebuild the matrix (``insert`` calls it: the whole BM25 matrix
        is rebuilt, see the module notes): the :meth:`merge` of their preparation."""
        self.merge([PassageTokenizer()(passages)])

    def preparer(self) -> PassageTokenizer:
        """The per-passage half of the build (picklable: what an executor runs)."""
        return PassageTokenizer()

    def merge(self, prepared: Sequence[TokenizedPassages]) -> None:
        """Append prepared batches (passages and their tokens, input order) and rebuild the
        matrix once."""
        parts = [p for p in prepared if p.passages]
        if not parts:
            return
        if self._tokens is None:  # a loaded index: its passages are tokenised once, here
            self._tokens = tokenize([p.text for p in self.passages])
        self.passages.extend(p for part in parts for p in part.passages)
        self._tokens.extend(t for part in parts for t in part.tokens)
        self._scorer = BM25Scorer(tokens=self._tokens)

    def delete(self, doc_id: str) -> bool:
        """Remove every passage of ``doc_id`` and rebuild the whole BM25 matrix; ``False`` (and a
        warning) if no passage has this id."""
        kept = [p for p in self.passages if p.doc_id != doc_id]
        if len(kept) == len(self.passages):
            return self._unknown_document(doc_id)
        if self._tokens is None:
            self.passages = kept
            self._reindex()
            return True
        pairs = zip(self.passages, self._tokens, strict=True)
        self._tokens = [t for p, t in pairs if p.doc_id != doc_id]
        self.passages = kept
        self._scorer = BM25Scorer(tokens=self._tokens)
        return True

    # -- retrieval ------------------------------------------------------------------------
    def scores(self, query: str) -> FloatMatrix:
        """BM25 score of ``query`` against every passage (corpus order)."""
        return self._scorer.scores(check_query(query))

    # -- persistence (hooks of BaseIndex.persist / load) ----------------------------------
    def manifest(self) -> Manifest:
        """``k``, the passage count and the stopwords (the directory also holds
        ``passages.json`` and the BM25 matrix in ``bm25s`` format)."""
        return Manifest(
            method=self.method,
            parameters={
                "k": self.default_k,
                "passages": len(self.passages),
                "stopwords": STOPWORDS,
            },
        )

    def _write_files(self, directory: Path) -> None:
        write_passages(directory, self.passages)
        self._scorer.save(directory / _MATRIX_DIR)

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        self.passages = read_passages(src)
        if len(self.passages) != manifest.parameters.get("passages"):
            raise IndexMismatchError(
                f"{src}: manifest lists {manifest.parameters.get('passages')} passages, "
                f"found {len(self.passages)}"
            )
        self._tokens = None
        self._scorer = BM25Scorer.load(src / _MATRIX_DIR, len(self.passages))
