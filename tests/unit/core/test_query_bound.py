"""The shared query bound (core.validation.check_query) and the per-index max_query_chars."""

from __future__ import annotations

import logging

import pytest

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.core.validation import MAX_QUERY_CHARS, bound_text, check_query


def test_a_long_query_is_cut_at_a_word_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    query = "alpha beta gamma " * 1000
    with caplog.at_level(logging.WARNING):
        cut = check_query(query, 100, owner="MyIndex")
    assert len(cut) <= 100 and query.startswith(cut) and not cut.endswith(" ")
    assert cut.split()[-1] in {"alpha", "beta", "gamma"}  # no word cut in two
    [record] = caplog.records
    assert record.getMessage() == (
        "query of 16,999 characters cut to its first 95 (MyIndex.max_query_chars): "
        "the rest is ignored"
    )


def test_a_query_within_the_bound_is_kept_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    query = "x" * MAX_QUERY_CHARS
    with caplog.at_level(logging.WARNING):
        assert check_query(f"  {query}  ") == query
        assert check_query("y" * (MAX_QUERY_CHARS + 1), None) == "y" * (MAX_QUERY_CHARS + 1)
    assert not caplog.records


def test_one_word_longer_than_the_bound_is_cut_inside_it() -> None:
    assert bound_text("z" * 50, 10) == "z" * 10


def test_max_query_chars_is_set_per_index(caplog: pytest.LogCaptureFixture) -> None:
    """An index's own bound applies (a query past it is answered as its prefix)."""
    index = BM25Retriever.from_documents(["Paris is in France.", "Rome is in Italy."])
    query = "Where is Rome? " + "Paris " * 50
    assert index.retrieve(query, k=1)[0].text.startswith("Paris")  # within the core's bound
    index.max_query_chars = 16  # "Where is Rome? P": the cut word goes
    with caplog.at_level(logging.WARNING):
        hits = index.retrieve(query, k=1)
    assert hits[0].text.startswith("Rome")
    assert "cut to its first 14 (BM25Retriever.max_query_chars)" in caplog.text
