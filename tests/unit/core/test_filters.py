"""The metadata filter language (core.retrieval.filters) and its converters, against brute force."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from graphrag_integrations.core.retrieval.filters import (
    AllOf,
    Comparison,
    NoneOf,
    parse_filter,
    passage_metadata,
    retrieve_filtered,
    retrieve_with_filter,
)
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.errors import InvalidArgumentError

#: Records of every shape a filter meets: missing keys, None, bool next to int, floats,
#: strings, lists.
RECORDS: list[dict[str, Any]] = [
    {"year": 1999, "lang": "en", "flag": True, "tags": ["war", "film"], "title": "Kismet"},
    {"year": 2000, "lang": "fr", "flag": False, "tags": ["film"], "title": "Amelie"},
    {"year": 2001.5, "lang": "EN", "flag": 1, "tags": [], "title": "kismet again"},
    {"year": 2003, "flag": 0, "title": "Zorro"},
    {"year": "2001", "lang": None, "tags": ["war"]},
    {"lang": "de", "year": True},
    {},
]


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# (LangChain dict filter, brute-force predicate written out by hand)
DICT_CASES: list[tuple[dict[str, Any], Callable[[dict[str, Any]], bool]]] = [
    ({"lang": "en"}, lambda r: r.get("lang") == "en"),
    ({"lang": {"$eq": "en"}}, lambda r: r.get("lang") == "en"),
    ({"lang": {"$ne": "en"}}, lambda r: r.get("lang") is not None and r["lang"] != "en"),
    ({"year": {"$gt": 2000}}, lambda r: _num(r.get("year")) and r["year"] > 2000),
    ({"year": {"$gte": 2000}}, lambda r: _num(r.get("year")) and r["year"] >= 2000),
    ({"year": {"$lt": 2001}}, lambda r: _num(r.get("year")) and r["year"] < 2001),
    ({"year": {"$lte": 2000}}, lambda r: _num(r.get("year")) and r["year"] <= 2000),
    (
        {"year": {"$gte": 2000, "$lt": 2003}},
        lambda r: _num(r.get("year")) and 2000 <= r["year"] < 2003,
    ),
    ({"title": {"$gt": "L"}}, lambda r: isinstance(r.get("title"), str) and r["title"] > "L"),
    ({"lang": {"$in": ["en", "de"]}}, lambda r: r.get("lang") in ("en", "de")),
    ({"lang": {"$nin": ["en", "de"]}}, lambda r: r.get("lang") not in (None, "en", "de")),
    # bool is not a number: flag 1 / 0 are not True / False, year True is not 1
    ({"flag": True}, lambda r: r.get("flag") is True),
    ({"flag": 1}, lambda r: _num(r.get("flag")) and r["flag"] == 1),
    ({"year": {"$in": [1, 2000]}}, lambda r: _num(r.get("year")) and r["year"] in (1, 2000)),
    ({"tags": {"$contains": "war"}}, lambda r: "war" in (r.get("tags") or [])),
    ({"title": {"$contains": "ism"}}, lambda r: "ism" in (r.get("title") or "")),
    ({"lang": "en", "flag": True}, lambda r: r.get("lang") == "en" and r.get("flag") is True),
    (
        {"$or": [{"lang": "fr"}, {"year": {"$gt": 2002}}]},
        lambda r: r.get("lang") == "fr" or (_num(r.get("year")) and r["year"] > 2002),
    ),
    (
        {"$and": [{"tags": {"$contains": "film"}}, {"$or": [{"lang": "en"}, {"lang": "fr"}]}]},
        lambda r: "film" in (r.get("tags") or []) and r.get("lang") in ("en", "fr"),
    ),
    ({"missing": 1}, lambda r: False),
    ({"missing": {"$ne": 1}}, lambda r: False),  # an unknown key matches nothing
    ({}, lambda r: True),
]


@pytest.mark.parametrize(("where", "expected"), DICT_CASES, ids=[repr(c[0]) for c in DICT_CASES])
def test_dict_filters_equal_brute_force(
    where: dict[str, Any], expected: Callable[[dict[str, Any]], bool]
) -> None:
    flt = parse_filter(where)
    assert flt is not None
    got = [i for i, r in enumerate(RECORDS) if flt.matches(r)]
    assert got == [i for i, r in enumerate(RECORDS) if expected(r)]


def test_text_list_and_not_operators() -> None:
    def ids(flt: Any) -> list[int]:
        return [i for i, r in enumerate(RECORDS) if flt.matches(r)]

    assert ids(Comparison("title", "text_match", "ism")) == [0, 2]
    assert ids(Comparison("title", "text_match", "Kism")) == [0]
    assert ids(Comparison("title", "text_match_insensitive", "KISMET")) == [0, 2]
    assert ids(Comparison("tags", "any", ["war", "x"])) == [0, 4]
    assert ids(Comparison("tags", "all", ["war", "film"])) == [0]
    assert ids(NoneOf((Comparison("lang", "eq", "en"),))) == [1, 2, 3, 4, 5, 6]


BAD_FILTERS: list[tuple[Any, str]] = [
    ({"year": {"$around": 2000}}, r"unknown filter operator '\$around'"),
    ({"$not": {"a": 1}}, r"unknown filter operator '\$not' at the top level"),
    ({"year": {}}, "has no operator"),
    ({"year": {"$in": []}}, "non-empty list"),
    ({"year": {"$in": "ab"}}, "non-empty list"),
    ({"year": {"$gt": [1]}}, "must be a str, int, float or bool"),
    ({"year": {"$eq": None}}, "must be a str, int, float or bool"),
    ({"year": float("nan")}, "must be a str, int, float or bool"),
    ({"year": {"a": 1}}, "unknown filter operator 'a'"),
    ({"$and": []}, "non-empty list"),
    ({"$or": {"a": 1}}, "non-empty list"),
    ({"$or": ["a"]}, "must be a dict"),
    ({"": 1}, "non-empty strings"),
    ([("a", 1)], "must be a dict"),
    ("lang == en", "must be a dict"),
]


@pytest.mark.parametrize(("where", "message"), BAD_FILTERS, ids=[repr(b[0]) for b in BAD_FILTERS])
def test_bad_filters_raise_a_clear_value_error(where: Any, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message) as info:
        parse_filter(where)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("a", "is_empty", 1), "unknown filter operator 'is_empty'"),
        (("a", "text_match", 3), "must be a string"),
        (("a", "any", "war"), "non-empty list"),
        (("", "eq", 1), "non-empty string"),
    ],
)
def test_bad_comparisons(args: tuple[str, str, Any], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        Comparison(*args)


def test_trees_pass_through_and_lists_become_tuples() -> None:
    tree = AllOf((Comparison("a", "in", [1, 2]),))  # type: ignore[arg-type]
    assert parse_filter(tree) is tree
    assert tree.filters[0].value == (1, 2)


def test_passage_metadata_adds_the_ids() -> None:
    p = Passage("p1", "text", "d1", {"doc_id": "spoofed", "lang": "en"})
    assert passage_metadata(p) == {"doc_id": "d1", "lang": "en", "passage_id": "p1"}


# -- the growing budget ----------------------------------------------------------------------
CORPUS = [Passage(f"p{i}", f"text {i}", f"d{i}", {"n": i}) for i in range(40)]


class Ranked:
    """A retriever returning the corpus in order, recording the budgets asked for."""

    def __init__(self, cap: int | None = None) -> None:
        self.budgets: list[int] = []
        self.cap = cap

    def __call__(self, query: str, k: int) -> list[RetrievedPassage]:
        self.budgets.append(k)
        pool = CORPUS if self.cap is None else CORPUS[: self.cap]
        return [RetrievedPassage(p, 1.0 / (1 + i)) for i, p in enumerate(pool[:k])]


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize(
    "where",
    [{"n": {"$gte": 30}}, {"n": {"$in": [3, 17, 39]}}, {"n": {"$lt": 5}}, {"n": 99}],
    ids=repr,
)
def test_retrieve_filtered_equals_filtering_the_full_ranking(k: int, where: dict[str, Any]) -> None:
    flt = parse_filter(where)
    assert flt is not None
    ranked = Ranked()
    got = retrieve_filtered(ranked, "q", k, flt)
    brute = [p.id for p in CORPUS if flt.matches(passage_metadata(p))][:k]
    assert [h.id for h in got] == brute
    assert ranked.budgets[0] == k
    assert all(b2 == 4 * b1 for b1, b2 in zip(ranked.budgets, ranked.budgets[1:], strict=False))


def test_retrieve_filtered_stops_when_the_index_is_exhausted() -> None:
    ranked = Ranked(cap=10)  # returns at most 10 even for a larger budget
    flt = parse_filter({"n": 99})
    assert flt is not None
    assert retrieve_filtered(ranked, "q", 2, flt) == []
    assert ranked.budgets == [2, 8, 32]


def test_retrieve_with_filter_refuses_a_retriever_without_filter() -> None:
    class Plain:
        def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
            raise AssertionError("must not run")

        async def aretrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
            raise AssertionError("must not run")

    flt = parse_filter({"a": 1})
    with pytest.raises(InvalidArgumentError, match="does not support metadata filters"):
        retrieve_with_filter(Plain(), "q", 2, flt)
