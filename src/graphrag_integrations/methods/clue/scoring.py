"""Scorers for Q-Iter's beam (paths of knowledge units) and its final chunk re-ranking.

The paper scores ``R(q, ⊕(sorted path))`` and ``R(q, chunk)`` with a cross-encoder. Offline
we only have a bi-encoder, which alone is a weak judge, so the default is
:class:`FusedScorer`: ``(1 - w) * cosine + w * normalised BM25``. Both halves come from data
cached in the :class:`~graphrag_integrations.methods.clue.graph.ClueGraph`: the cosine of a
path is taken against the re-normalised mean of its cached unit vectors (``path_vector=
"mean"``, no encoding at query time) or, paper-style, against the encoding of the joined text
(``path_vector="encode"``); the BM25 of a path treats it as one document whose term counts and
length are the sums over its units, with the unit collection's idf and the average length of
``len(path)`` units. BM25 is divided by its supremum for the query (``Σ idf · (k1 + 1)``) so it
lies in ``[0, 1)`` like a cosine and the fusion does not depend on the candidate batch.

Any object following the core ``Reranker`` protocol (``model_name``, ``score(query, texts)``,
e.g. a cross-encoder) can replace it through :class:`RerankerScorer`, which joins the path
units in canonical (dictionary) order, as in the paper.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix, normalize_rows
from graphrag_integrations.core.encoders.rerank import Reranker
from graphrag_integrations.methods.clue.graph import tokenize
from graphrag_integrations.methods.clue.view import QIterView, TermStatistics

Path = tuple[int, ...]
"""A path: unit rows of the graph, in canonical order."""


@dataclass(frozen=True)
class Query:
    """A question with its vector and tokens, computed once per retrieval."""

    text: str
    vector: FloatMatrix
    tokens: tuple[str, ...]


class PathScorer(Protocol):
    """What Q-Iter needs: scores for unit paths and for chunks, given graph rows."""

    name: str

    def score_paths(self, query: Query, paths: Sequence[Path]) -> np.ndarray: ...

    def score_passages(self, query: Query, rows: Sequence[int]) -> np.ndarray: ...


def canonical_order(graph: QIterView, units: Sequence[int]) -> Path:
    """Sort unit rows by their text ("dictionary sorting", Algorithm 3 line 12), then graph
    order."""
    return graph.canonical_path(units)


def joined_text(graph: QIterView, path: Path) -> str:
    """``⊕(S)``: the path's unit texts joined by a space, in the given (canonical) order."""
    return " ".join(graph.unit_text(r) for r in path)


def bm25_normalised(
    query_terms: Sequence[str],
    counts: Counter[str],
    length: float,
    stats: TermStatistics,
    avg_length: float,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> float:
    """BM25 of one bag of words divided by its supremum ``Σ idf(t) · (k1 + 1)`` (in [0, 1)).

    Examples
    --------
    >>> from graphrag_integrations.methods.clue.graph import TermStats
    >>> stats = TermStats.build([["a", "b"], ["b", "c"]])
    >>> bm25_normalised(["a"], Counter(["a", "b"]), 2, stats, 2.0) > 0
    True
    >>> bm25_normalised(["z"], Counter(["a"]), 1, stats, 2.0)
    0.0
    """
    terms = dict.fromkeys(query_terms)
    top = 0.0
    total = 0.0
    norm = k1 * (1.0 - b + b * length / avg_length) if avg_length > 0 else k1
    for t in terms:
        idf = stats.idf(t)
        top += idf * (k1 + 1.0)
        tf = counts.get(t, 0)
        if tf:
            total += idf * tf * (k1 + 1.0) / (tf + norm)
    return total / top if top > 0 else 0.0


def bm25_rows(
    idf: np.ndarray,
    tf: np.ndarray,
    lengths: np.ndarray,
    avg_lengths: np.ndarray | float,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> np.ndarray:
    """:func:`bm25_normalised` of many bags at once: ``tf`` holds the counts of the distinct
    query terms (columns, idf ``idf``) in each bag (rows) of length ``lengths``.

    Examples
    --------
    >>> from graphrag_integrations.methods.clue.graph import TermStats
    >>> stats = TermStats.build([["a", "b"], ["b", "c"]])
    >>> idf = np.array([stats.idf("a")])
    >>> got = bm25_rows(idf, np.array([[1.0]]), np.array([2.0]), 2.0)
    >>> bool(abs(got[0] - bm25_normalised(["a"], Counter(["a", "b"]), 2, stats, 2.0)) < 1e-12)
    True
    """
    top = float(idf.sum()) * (k1 + 1.0)
    if top <= 0 or tf.size == 0:
        return np.zeros(len(tf), dtype=np.float64)
    avg = np.broadcast_to(np.asarray(avg_lengths, dtype=np.float64), lengths.shape)
    safe = np.where(avg > 0, avg, 1.0)
    norm = np.where(avg > 0, k1 * (1.0 - b + b * lengths / safe), k1)
    gain = tf * (k1 + 1.0) / (tf + norm[:, None])
    return np.asarray((gain @ idf) / top, dtype=np.float64)


@runtime_checkable
class TermCountsView(Protocol):
    """A view that reads query-term counts of many rows at once (the flat ``ClueGraph``);
    other views give them from each row's bag of words."""

    def unit_term_counts(
        self, rows: Sequence[int], terms: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def passage_term_counts(
        self, rows: Sequence[int] | None, terms: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]: ...


def _from_bags(
    bags: Sequence[tuple[Counter[str], int]], terms: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    tf = np.array([[bag.get(t, 0) for t in terms] for bag, _ in bags], dtype=np.float64)
    lengths = np.array([length for _, length in bags], dtype=np.float64)
    return tf.reshape(len(bags), len(terms)), lengths


def unit_term_counts(
    graph: QIterView, rows: Sequence[int], terms: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of ``terms`` in units ``rows`` and the units' lengths, from any view."""
    if isinstance(graph, TermCountsView):
        return graph.unit_term_counts(rows, terms)
    return _from_bags([graph.unit_bag(r) for r in rows], terms)


def passage_term_counts(
    graph: QIterView, rows: Sequence[int], terms: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of ``terms`` in chunks ``rows`` and the chunks' lengths, from any view."""
    if isinstance(graph, TermCountsView):
        return graph.passage_term_counts(rows, terms)
    return _from_bags([graph.passage_bag(r) for r in rows], terms)


def query_idf(query: Query, stats: TermStatistics) -> tuple[list[str], np.ndarray]:
    """The distinct query terms and their idf in ``stats``."""
    terms = list(dict.fromkeys(query.tokens))
    return terms, np.array([stats.idf(t) for t in terms], dtype=np.float64)


class FusedScorer:
    """Offline default: cosine on cached vectors fused with normalised BM25.

    Parameters
    ----------
    graph : ClueGraph or QIterView
        Supplies the cached vectors and the term statistics.
    embedder : Embedder
        Used only for texts not in the graph (:meth:`score`) and for ``path_vector="encode"``.
    lexical_weight : float
        ``w`` in ``(1 - w) * cosine + w * bm25``; 0 gives the bi-encoder alone.
    path_vector : {"mean", "encode"}
        How a path's vector is obtained (see the module docstring).

    Examples
    --------
    With the offline default embedder (MiniLM) and an empty graph (no idf statistics yet):

    >>> from graphrag_integrations.core.encoders.embeddings import as_embedder
    >>> from graphrag_integrations.methods.clue.graph import ClueGraph
    >>> scorer = FusedScorer(ClueGraph(), as_embedder(None))
    >>> texts = ["Hamlet was written by Shakespeare.", "Paris is the capital of France."]
    >>> scores = scorer.score("Who wrote Hamlet?", texts)
    >>> scores.shape, bool(scores[0] > scores[1])
    ((2,), True)
    """

    def __init__(
        self,
        graph: QIterView,
        embedder: Embedder,
        *,
        lexical_weight: float = 0.5,
        path_vector: Literal["mean", "encode"] = "mean",
    ) -> None:
        if not 0.0 <= lexical_weight <= 1.0:
            raise ValueError(f"lexical_weight must be in [0, 1], got {lexical_weight}")
        if path_vector not in ("mean", "encode"):
            raise ValueError(f"path_vector must be 'mean' or 'encode', got {path_vector!r}")
        self.graph = graph
        self.embedder = embedder
        self.lexical_weight = lexical_weight
        self.path_vector = path_vector
        self.model_name = f"fused({embedder.model_name}+bm25,w={lexical_weight})"
        self.name = self.model_name

    # -- core Reranker protocol -----------------------------------------------------------
    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Score arbitrary texts (embeds them; idf from the graph's unit collection)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        q = self.embedder.embed_query(query)
        cos = self.embedder.embed(list(texts)) @ q
        stats = self.graph.unit_terms
        terms = tokenize(query)
        lex = [
            bm25_normalised(terms, Counter(toks), len(toks), stats, stats.avg_length)
            for toks in (tokenize(t) for t in texts)
        ]
        return self._fuse(cos, np.array(lex))

    # -- cached fast paths ----------------------------------------------------------------
    def score_paths(self, query: Query, paths: Sequence[Path]) -> np.ndarray:
        if not paths:
            return np.zeros(0, dtype=np.float32)
        g = self.graph
        if self.path_vector == "encode":
            vecs = self.embedder.embed([joined_text(g, p) for p in paths])
        else:
            vecs = normalize_rows(np.stack([g.unit_vectors(list(p)).sum(axis=0) for p in paths]))
        cos = vecs @ query.vector
        if self.lexical_weight == 0.0:
            return cos.astype(np.float32)
        stats = g.unit_terms
        terms, idf = query_idf(query, stats)
        units = list(dict.fromkeys(r for p in paths for r in p))
        column = {r: j for j, r in enumerate(units)}
        tf, lengths = unit_term_counts(g, units, terms)
        member = np.zeros((len(paths), len(units)), dtype=np.float64)
        for i, p in enumerate(paths):
            member[i, [column[r] for r in p]] = 1.0
        sizes = np.array([len(p) for p in paths], dtype=np.float64)
        lex = bm25_rows(idf, member @ tf, member @ lengths, stats.avg_length * sizes)
        return self._fuse(cos, lex)

    def score_passages(self, query: Query, rows: Sequence[int]) -> np.ndarray:
        if not rows:
            return np.zeros(0, dtype=np.float32)
        g = self.graph
        cos = g.passage_vectors(list(rows)) @ query.vector
        if self.lexical_weight == 0.0:
            return cos.astype(np.float32)
        stats = g.passage_terms
        terms, idf = query_idf(query, stats)
        tf, lengths = passage_term_counts(g, rows, terms)
        return self._fuse(cos, bm25_rows(idf, tf, lengths, stats.avg_length))

    def _fuse(self, cos: np.ndarray, lex: np.ndarray) -> np.ndarray:
        w = self.lexical_weight
        return ((1.0 - w) * cos + w * lex).astype(np.float32)


class RerankerScorer:
    """Adapter running any core ``Reranker`` (e.g. a cross-encoder) over paths and chunks.

    Parameters
    ----------
    graph : ClueGraph or QIterView
        Supplies unit and chunk texts.
    reranker : Reranker
        ``score(query, texts)``; called once per depth and once for the final chunks.

    Examples
    --------
    Any object with ``model_name`` and ``score(query, texts)`` is a ``Reranker`` (e.g.
    ``core.encoders.rerank.CrossEncoderReranker("BAAI/bge-reranker-base")``):

    >>> class Overlap:
    ...     model_name = "overlap"
    ...     def score(self, query, texts):
    ...         words = set(query.split())
    ...         return np.array([len(words & set(t.split())) for t in texts], dtype=np.float32)
    >>> from graphrag_integrations.methods.clue.graph import ClueGraph
    >>> scorer = RerankerScorer(ClueGraph(), Overlap())
    >>> scorer.name
    'overlap'
    >>> scorer.score_paths(Query("q", np.zeros(3, dtype=np.float32), ("q",)), []).shape
    (0,)
    """

    def __init__(self, graph: QIterView, reranker: Reranker) -> None:
        self.graph = graph
        self.reranker = reranker
        self.name = reranker.model_name

    def score_paths(self, query: Query, paths: Sequence[Path]) -> np.ndarray:
        if not paths:
            return np.zeros(0, dtype=np.float32)
        texts = [joined_text(self.graph, p) for p in paths]
        return np.asarray(self.reranker.score(query.text, texts), dtype=np.float32)

    def score_passages(self, query: Query, rows: Sequence[int]) -> np.ndarray:
        if not rows:
            return np.zeros(0, dtype=np.float32)
        g = self.graph
        texts = [g.passage(r).text for r in rows]
        return np.asarray(self.reranker.score(query.text, texts), dtype=np.float32)
