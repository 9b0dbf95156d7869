"""Compliance cases for bounded query work: a very long question costs what a question of the
index's ``max_query_chars`` costs.

:class:`QueryBoundCases` is one of the mixins of
:class:`~graphrag_integrations.testing.compliance.IndexComplianceTests`, so every index runs
it. A question of :data:`LONG_QUESTION_CHARS` characters (a probe of the corpus followed by
filler) must be cut once, in the shared query check
(:func:`~graphrag_integrations.core.validation.check_query`, applied by
``BaseIndex.retrieve``), to at most the index's ``max_query_chars`` (one warning), and the
answer must be the answer to the cut question: nothing past the bound reaches the method.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import QUERIES

#: Length of the long question of the case (characters).
LONG_QUESTION_CHARS = 50_000
#: What follows the probe in the long question (repeated).
FILLER = "and please also consider every other detail mentioned in this very long request "


def long_question(question: str, length: int = LONG_QUESTION_CHARS) -> str:
    """``question`` followed by :data:`FILLER` up to ``length`` characters.

    Examples
    --------
    >>> q = long_question("Where is Rome?", 200)
    >>> len(q), q[:14]
    (200, 'Where is Rome?')
    """
    text = question + " " + FILLER * (length // len(FILLER) + 1)
    return text[:length]


class QueryBoundCases(ComplianceBase):
    """The bound on the query an index processes."""

    def test_a_very_long_question_is_cut_once(
        self, index: Any, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A 50,000-character question: the method gets at most ``max_query_chars`` of it
        (a prefix), one warning says so, and the answer equals the answer to that prefix."""
        question = long_question(QUERIES[0].query)
        seen: list[str] = []
        method = index._retrieve

        def recording(query: str, k: int) -> Any:
            seen.append(query)
            return method(query, k)

        index._retrieve = recording  # the method's own retrieval, as BaseIndex.retrieve calls it
        try:
            with caplog.at_level(logging.WARNING):
                hits = index.retrieve(question, k=3)
        finally:
            del index._retrieve
        assert seen, "BaseIndex.retrieve did not reach the method's _retrieve"
        bound = index.max_query_chars
        assert all(len(q) <= bound and question.startswith(q) for q in seen), [len(q) for q in seen]
        cuts = [r for r in caplog.records if "max_query_chars" in r.getMessage()]
        assert len(cuts) == 1, [r.getMessage() for r in cuts]
        assert "\n" not in cuts[0].getMessage()
        assert 1 <= len(hits) <= 3
        again = index.retrieve(seen[0], k=3)
        assert [h.id for h in hits] == [h.id for h in again]
        assert [h.score for h in hits] == pytest.approx([h.score for h in again], abs=1e-5)
