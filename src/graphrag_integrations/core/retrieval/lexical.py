"""BM25 scoring over a list of texts (``bm25s``), shared by the BM25 baseline and the methods.

Tokenisation is ``bm25s.tokenize`` with its defaults (lower-casing, the ``\\b\\w\\w+\\b`` token
pattern) plus English stopwords and **no stemming**; scoring is ``bm25s.BM25`` with its
defaults (Lucene variant, ``k1=1.5``, ``b=0.75``).

``bm25s`` builds a static sparse matrix and has no incremental add: a corpus that changes is
scored by a new :class:`BM25Scorer` (linear in the corpus size; about a second per 10k short
passages on one CPU core).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix

__all__ = ["MATRIX_DIR", "STOPWORDS", "BM25Scorer", "tokenize"]

logger = logging.getLogger(__name__)

#: Stopword list handed to ``bm25s.tokenize``.
STOPWORDS = "en"
#: Folder name of a saved ``bm25s`` matrix inside an index directory.
MATRIX_DIR = "bm25s"


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Tokenise ``texts`` the way the index and the queries are tokenised.

    Examples
    --------
    >>> tokenize(["The capital of France is Paris."])
    [['capital', 'france', 'paris']]
    """
    import bm25s

    tokens = bm25s.tokenize(
        list(texts), stopwords=STOPWORDS, stemmer=None, return_ids=False, show_progress=False
    )
    return [list(t) for t in tokens]


class BM25Scorer:
    """The BM25 matrix of a fixed list of texts; scores a query against every text.

    Parameters
    ----------
    texts : sequence of str
        The corpus; row ``i`` of :meth:`scores` is ``texts[i]``.
    tokens : sequence of list of str, optional
        The corpus already tokenised by :func:`tokenize` (instead of ``texts``).

    Examples
    --------
    >>> scorer = BM25Scorer(["Paris is in France.", "Rome is in Italy."])
    >>> [round(float(x), 3) for x in scorer.scores("Where is Rome?")]
    [0.0, 0.277]
    >>> BM25Scorer([]).scores("Rome").tolist()
    []
    """

    def __init__(
        self, texts: Sequence[str] = (), *, tokens: Sequence[list[str]] | None = None
    ) -> None:
        corpus = list(tokens) if tokens is not None else tokenize(list(texts)) if texts else []
        self.size = len(corpus)
        self._bm25: Any = None
        if corpus:
            import bm25s

            bm25 = bm25s.BM25()
            bm25.index(corpus, show_progress=False)
            self._bm25 = bm25

    def __len__(self) -> int:
        return self.size

    def scores(self, query: str) -> FloatMatrix:
        """BM25 score of ``query`` against every text (corpus order; zeros for a query made
        only of stopwords or unknown words, an empty vector for an empty corpus)."""
        if self._bm25 is None:
            return np.zeros((0,), dtype=np.float32)
        tokens = tokenize([query])[0]
        if not tokens:
            logger.debug("query %r has only stopwords; every BM25 score is 0", query)
            return np.zeros((self.size,), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)

    def save(self, directory: str | Path) -> None:
        """Write the matrix (``bm25s`` format) into ``directory`` (nothing for an empty
        corpus); the caller records :attr:`size` to read it back."""
        if self._bm25 is not None:
            self._bm25.save(str(directory), show_progress=False)

    @classmethod
    def load(cls, directory: str | Path, size: int) -> BM25Scorer:
        """Read a matrix written by :meth:`save` for a corpus of ``size`` texts."""
        scorer = cls()
        scorer.size = size
        if size:
            import bm25s

            scorer._bm25 = bm25s.BM25.load(str(directory), show_progress=False)
        return scorer
