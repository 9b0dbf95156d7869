"""Vectorised BM25 of Q-Iter's fused scorer: term counts from the sparse matrix and from the
bags of words, and bm25_rows against the scalar bm25_normalised."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.methods.clue.graph import TermStats
from graphrag_integrations.methods.clue.scoring import bm25_normalised, bm25_rows

WORDS = ["alpha", "beta", "gamma", "delta", "eps"]
texts_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=20
)


@settings(max_examples=60, deadline=None)
@given(texts=texts_strategy, data=st.data())
def test_term_counts_equal_the_bags(texts: list[str], data: st.DataObject) -> None:
    stats = TermStats.from_texts(texts)
    rows = data.draw(st.lists(st.integers(0, len(texts) - 1), max_size=10))
    terms = data.draw(st.lists(st.sampled_from([*WORDS, "missing"]), max_size=4, unique=True))
    expected = [[stats.counts[r].get(t, 0) for t in terms] for r in rows]
    assert stats.term_counts(rows, terms).tolist() == expected
    everything = [[stats.counts[r].get(t, 0) for t in terms] for r in range(len(texts))]
    assert stats.term_counts(None, terms).tolist() == everything
    plain = TermStats.build([t.split() for t in texts])  # no matrix: counted from the bags
    assert plain.term_counts(rows, terms).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(texts=texts_strategy, data=st.data())
def test_bm25_rows_equal_bm25_normalised(texts: list[str], data: st.DataObject) -> None:
    stats = TermStats.from_texts(texts)
    query = data.draw(st.lists(st.sampled_from([*WORDS, "missing"]), min_size=1, max_size=5))
    terms = list(dict.fromkeys(query))
    idf = np.array([stats.idf(t) for t in terms])
    rows = list(range(len(texts)))
    got = bm25_rows(idf, stats.term_counts(rows, terms), stats.lengths, stats.avg_length)
    for row in rows:
        bag: Counter[str] = stats.counts[row]
        want = bm25_normalised(query, bag, stats.lengths[row], stats, stats.avg_length)
        assert abs(got[row] - want) < 1e-12
