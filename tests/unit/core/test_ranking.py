"""core.retrieval.ranking.top_k: order, ties and bounds against a sort-based reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphrag_integrations.core.retrieval.ranking import top_k


def test_top_k_ties_and_bounds() -> None:
    scores = np.array([0.5, 0.9, 0.9, 0.1, 0.9], dtype=np.float32)
    assert top_k(scores, 2) == [1, 2]
    assert top_k(scores, 4) == [1, 2, 4, 0]
    assert top_k(scores, 10) == [1, 2, 4, 0, 3]
    assert top_k(scores, 0) == []
    assert top_k(scores, -1) == []
    assert top_k(np.zeros(0, dtype=np.float32), 3) == []


@given(
    st.lists(st.integers(min_value=0, max_value=5), max_size=40),
    st.integers(min_value=0, max_value=45),
)
def test_top_k_equals_a_stable_descending_sort(values: list[int], k: int) -> None:
    # few distinct values: many ties, which argpartition alone would order arbitrarily
    scores = np.asarray(values, dtype=np.float64) / 5.0
    expected = sorted(range(len(values)), key=lambda i: (-scores[i], i))[:k]
    assert top_k(scores, k) == expected
