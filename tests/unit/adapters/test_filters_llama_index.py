"""LlamaIndex MetadataFilters -> core filters, against LlamaIndex's own evaluator."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from graphrag_integrations.adapters.llama_index import as_filter, from_metadata_filters
from graphrag_integrations.core.retrieval.filters import Comparison
from graphrag_integrations.errors import InvalidArgumentError

# every record has every key (LlamaIndex lets a missing key match NE / NIN, the core does not)
RECORDS: list[dict[str, Any]] = [
    {"year": 1999, "lang": "en", "tags": ["war", "film"], "title": "Kismet"},
    {"year": 2000, "lang": "fr", "tags": ["film"], "title": "Amelie"},
    {"year": 2001, "lang": "de", "tags": ["war"], "title": "kismet again"},
    {"year": 2003, "lang": "en", "tags": ["doc"], "title": "Zorro"},
]

OPERATOR_CASES: list[MetadataFilter] = [
    MetadataFilter(key="lang", value="en", operator=FilterOperator.EQ),
    MetadataFilter(key="lang", value="en", operator=FilterOperator.NE),
    MetadataFilter(key="year", value=2000, operator=FilterOperator.GT),
    MetadataFilter(key="year", value=2000, operator=FilterOperator.GTE),
    MetadataFilter(key="year", value=2001, operator=FilterOperator.LT),
    MetadataFilter(key="year", value=2001, operator=FilterOperator.LTE),
    MetadataFilter(key="lang", value=["en", "de"], operator=FilterOperator.IN),
    MetadataFilter(key="lang", value=["en", "de"], operator=FilterOperator.NIN),
    MetadataFilter(key="tags", value="war", operator=FilterOperator.CONTAINS),
    MetadataFilter(key="tags", value=["war", "doc"], operator=FilterOperator.ANY),
    MetadataFilter(key="tags", value=["war", "film"], operator=FilterOperator.ALL),
    MetadataFilter(key="title", value="ism", operator=FilterOperator.TEXT_MATCH),
    MetadataFilter(key="title", value="KISMET", operator=FilterOperator.TEXT_MATCH_INSENSITIVE),
]


def _reference(filters: MetadataFilters) -> list[int]:
    keep = build_metadata_filter_fn(lambda i: RECORDS[int(i)], filters)
    return [i for i in range(len(RECORDS)) if keep(str(i))]


@pytest.mark.parametrize("mf", OPERATOR_CASES, ids=[str(m.operator.value) for m in OPERATOR_CASES])
@pytest.mark.parametrize("condition", [FilterCondition.AND, FilterCondition.NOT])
def test_each_operator_agrees_with_llama_index(mf: MetadataFilter, condition: Any) -> None:
    filters = MetadataFilters(filters=[mf], condition=condition)
    ours = from_metadata_filters(filters)
    got = [i for i, r in enumerate(RECORDS) if ours.matches(r)]
    assert got == _reference(filters)
    assert 0 < len(got) < len(RECORDS)  # the case discriminates


@pytest.mark.parametrize("condition", [FilterCondition.AND, FilterCondition.OR])
def test_conditions_agree_with_llama_index(condition: Any) -> None:
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="year", value=2000, operator=FilterOperator.GTE),
            MetadataFilter(key="lang", value="en"),
        ],
        condition=condition,
    )
    ours = from_metadata_filters(filters)
    assert [i for i, r in enumerate(RECORDS) if ours.matches(r)] == _reference(filters)


def test_nested_metadata_filters() -> None:
    # year >= 2000 AND (lang == en OR tags contains film): LlamaIndex's simple evaluator
    # refuses nesting, so the expected rows are written out
    nested = MetadataFilters(
        filters=[
            MetadataFilter(key="year", value=2000, operator=FilterOperator.GTE),
            MetadataFilters(
                filters=[
                    MetadataFilter(key="lang", value="en"),
                    MetadataFilter(key="tags", value="film", operator=FilterOperator.CONTAINS),
                ],
                condition=FilterCondition.OR,
            ),
        ]
    )
    ours = from_metadata_filters(nested)
    assert [i for i, r in enumerate(RECORDS) if ours.matches(r)] == [1, 3]


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        (
            MetadataFilters(filters=[MetadataFilter(key="a", value=1, operator="is_empty")]),
            "'is_empty' .* not supported",
        ),
        (MetadataFilters(filters=[]), "at least one filter"),
        (MetadataFilters(filters=[MetadataFilter(key="a", value=None)]), "must be a str"),
        (MetadataFilters(filters=[MetadataFilter(key="a", value=[1, 2])]), "must be a str"),
    ],
)
def test_unsupported_filters_raise(filters: MetadataFilters, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        from_metadata_filters(filters)


def test_as_filter_takes_every_form() -> None:
    assert as_filter(None) is None
    assert as_filter({"lang": "en"}) == Comparison("lang", "eq", "en")
    tree = Comparison("lang", "eq", "en")
    assert as_filter(tree) is tree
    assert as_filter(MetadataFilter(key="lang", value="en")) == tree
    with pytest.raises(InvalidArgumentError, match="filters must be"):
        as_filter("lang=en")


def test_the_core_names_the_converter_for_llama_index_filters() -> None:
    from graphrag_integrations.core.retrieval.filters import parse_filter

    with pytest.raises(InvalidArgumentError, match="from_metadata_filters"):
        parse_filter(MetadataFilters(filters=[MetadataFilter(key="a", value=1)]))  # type: ignore[arg-type]
