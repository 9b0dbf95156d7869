"""Compliance cases of ``retrieve`` / ``aretrieve``: empty queries, ``k`` (valid and not),
and JSON-serialisable explanations."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.errors import (
    EmptyQueryError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)
from graphrag_integrations.testing.compliance.base import ComplianceBase, ranking
from graphrag_integrations.testing.compliance.corpus import CORPUS, QUERIES

#: ``k`` values every ``retrieve`` must refuse, with the error each must raise.
INVALID_K: tuple[tuple[object, type[Exception]], ...] = (
    (0, InvalidArgumentError),
    (-1, InvalidArgumentError),
    ("3", InvalidArgumentTypeError),
    (2.0, InvalidArgumentTypeError),
    (True, InvalidArgumentTypeError),
)


class QueryCases(ComplianceBase):
    """Empty queries raise; ``k`` is honoured and an invalid one refused (sync and async);
    ``aretrieve`` equals ``retrieve``; explanations are JSON."""

    @pytest.mark.parametrize("query", ["", "   ", "\n\t"])
    def test_empty_query_raises(self, index: BaseIndex, query: str) -> None:
        with pytest.raises(EmptyQueryError):
            index.retrieve(query)

    @pytest.mark.asyncio
    @pytest.mark.parametrize("query", ["", "  "])
    async def test_empty_query_raises_async(self, index: BaseIndex, query: str) -> None:
        with pytest.raises(EmptyQueryError):
            await index.aretrieve(query)

    def test_k_is_honoured(self, index: BaseIndex) -> None:
        assert len(CORPUS) > index.default_k, "the corpus must be larger than the default k"
        query = QUERIES[1].query
        one, three = index.retrieve(query, k=1), index.retrieve(query, k=3)
        assert len(one) == 1
        assert len(three) == 3
        assert one[0].id == three[0].id
        assert len({h.id for h in three}) == 3
        assert len(index.retrieve(query)) == index.default_k
        assert len(index.retrieve(query, k=None)) == index.default_k

    @pytest.mark.parametrize(("k", "error"), INVALID_K, ids=[repr(k) for k, _ in INVALID_K])
    def test_invalid_k_raises(self, index: BaseIndex, k: Any, error: type[Exception]) -> None:
        with pytest.raises(error, match="k must be an integer >= 1"):
            index.retrieve(QUERIES[0].query, k=k)

    @pytest.mark.asyncio
    @pytest.mark.parametrize(
        ("k", "error"), INVALID_K[::2], ids=[repr(k) for k, _ in INVALID_K[::2]]
    )
    async def test_invalid_k_raises_async(
        self, index: BaseIndex, k: Any, error: type[Exception]
    ) -> None:
        with pytest.raises(error, match="k must be an integer >= 1"):
            await index.aretrieve(QUERIES[0].query, k=k)

    @pytest.mark.asyncio
    async def test_aretrieve_equals_retrieve(self, index: BaseIndex) -> None:
        for probe in QUERIES:
            expected = ranking(index.retrieve(probe.query, k=3))
            got = ranking(await index.aretrieve(probe.query, k=3))
            assert [i for i, _ in got] == [i for i, _ in expected]
            assert [s for _, s in got] == pytest.approx([s for _, s in expected])

    def test_explanations_are_json_serialisable(self, index: BaseIndex) -> None:
        for probe in QUERIES:
            for hit in index.retrieve(probe.query, k=3):
                assert isinstance(hit.score, float)
                text = json.dumps(hit.explanation, allow_nan=False)
                assert json.loads(text) == json.loads(json.dumps(dict(hit.explanation)))
                assert hit.explanation.get("method") in (index.method, None)
